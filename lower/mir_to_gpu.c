/*
 * MIR -> LIR for GPUs: kernels (lower_mir_to_gpu). The whole MIR function runs on every
 * thread of a launch; a loop mapped to a GPU dimension (gpuDimension) is spread over it as a
 * grid-stride loop (the thread's coordinate times the step is its first iteration, the
 * extent times the step its stride), so that any launch computes every iteration once.
 * Code outside the loops that bind every dimension runs alike on the threads that
 * differ only in the dimensions not yet bound (GpuScope.mask). There it is lowered in
 * phases (gpu_list):
 *   - a loop mapped to a dimension is spread over it;
 *   - a batch loop with no mapped loop inside is spread over all the unbound dimensions
 *     (rows are independent: MIR never reduces across them);
 *   - other loops (over trees) run alike on those threads, their bodies in phases;
 *   - init and reduceDimension are shared out element by element;
 *   - anything else (a walk, a transform) runs on the first of those threads only.
 * Threads of a block meet at a BARRIER between phases; threads of different blocks
 * cannot, so at the top a phase whose threads differ in a grid dimension ends a kernel
 * (the next phase is the next kernel), and elsewhere that is an error. Buffers declared
 * where only block dimensions are unbound live in shared memory; those of all rows in
 * the workspace, as on the host.
 */
#include "lower/lowering.h"

#include <stdio.h>
#include <stdlib.h>

/* Lanes of a warp as SHUFFLE sees them (GROVE_WARP in rt/artifact.h). */
#define GROVE_WARP_LANES 32
/* Threads per block for a block loop whose trip count depends on the rows. */
#define GPU_DEFAULT_BLOCK 128
/* Threads per block and rows per block of a kernel with no mapped loop: its batch loops spread over the grid. */
#define GPU_SPREAD_BLOCK 256
#define GPU_MAX_BLOCK_THREADS 1024
#define GPU_MAX_SHARED (48u << 10)

/* Record the first GPU-specific error; lowering goes on harmlessly and the module is dropped. */

static uint32_t gpu_index(Lowering *l, LGpuIndex which)
{
	uint32_t v = lir_emit(&l->b, LOP_GPU_INDEX, LTYPE_I64, LIR_NONE, LIR_NONE, LIR_NONE);
	l->b.fn->insts[v].sub = (uint8_t)which;
	return v;
}

/* The thread's coordinate in HGpuDim d and d's extent. */
static void gpu_coordinate(Lowering *l, unsigned d, uint32_t *index, uint32_t *extent)
{
	bool grid = d <= HGPU_GRID_Z;
	unsigned axis = grid ? d - HGPU_GRID_X : d - HGPU_BLOCK_X;
	*index = gpu_index(l, (LGpuIndex)((grid ? LGPU_BLOCK_X : LGPU_THREAD_X) + axis));
	*extent = gpu_index(l, (LGpuIndex)((grid ? LGPU_GRID_DIM_X : LGPU_BLOCK_DIM_X) + axis));
}

/* The thread's number among the threads that differ in the dimensions of mask (the block's fastest), and how many they are. */
static void gpu_flat(Lowering *l, unsigned mask, uint32_t *index, uint32_t *extent)
{
	static const uint8_t order[] = {HGPU_BLOCK_X, HGPU_BLOCK_Y, HGPU_BLOCK_Z, HGPU_GRID_X, HGPU_GRID_Y, HGPU_GRID_Z};
	*index = const_i64(l, 0);
	*extent = const_i64(l, 1);
	for (size_t k = 0; k < COUNT_OF(order); k++) {
		uint32_t at, size, scaled;
		if (!(mask & dim_bit(order[k])))
			continue;
		gpu_coordinate(l, order[k], &at, &size);
		scaled = emit2(l, LOP_MUL, LTYPE_I64, at, *extent);
		*index = emit2(l, LOP_ADD, LTYPE_I64, *index, scaled);
		*extent = emit2(l, LOP_MUL, LTYPE_I64, *extent, size);
	}
}

/* Begin a loop over [begin, end) by step spread over the threads that differ in mask: each takes every extent-th iteration. */
static uint32_t gpu_begin_spread(Lowering *l, uint32_t begin, uint32_t end, int64_t step, unsigned mask)
{
	uint32_t index, extent, by = const_i64(l, step), first, stride;
	gpu_flat(l, mask, &index, &extent);
	first = emit2(l, LOP_MUL, LTYPE_I64, index, by);
	first = emit2(l, LOP_ADD, LTYPE_I64, begin, first);
	stride = emit2(l, LOP_MUL, LTYPE_I64, extent, by);
	if (l->gpu.active != LIR_NONE) /* an idle thread of a lockstep loop takes no iteration */
		end = lir_emit(&l->b, LOP_SELECT, LTYPE_I64, l->gpu.active, end, begin);
	return lir_begin(&l->b, LOP_FOR, first, end, stride);
}

/* Whether a loop of the list first.. (or inside one) is mapped to a GPU dimension. */
static bool contains_gpu(const MModule *m, uint32_t first)
{
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next)
		if ((m->insts[id].op == MOP_FOR || m->insts[id].op == MOP_IF_COMPLETE) &&
		    (m->insts[id].gpu_dim || contains_gpu(m, m->insts[id].body)))
			return true;
	return false;
}

/* An error about inst, placed at its gpuDimension, its loop or (else) its buffer ("init of buffer m1"). */
static void fail_inst(Lowering *l, const MInst *inst, const char *what)
{
	if (inst->op == MOP_FOR)
		lower_fail_at(l, inst->var, inst->gpu_dim ? HDIR_GPU_DIMENSION : -1, "%s", what);
	else
		lower_fail(l, "schedule: %s of buffer m%u: %s", mir_op_name((MOp)inst->op), inst->buf, what);
}

/*
 * The threads of a block meet here (between phases); where they cannot, an error.
 * block_only: what came before wrote memory of the block's own (a cached copy), so
 * blocks running this code alike need not be ordered.
 */
static void gpu_meet(Lowering *l, const MInst *before, bool block_only)
{
	if ((l->gpu.mask & GPU_GRID_BITS) && !block_only)
		fail_inst(l, before, "what follows it needs what it wrote, and the threads running them are in different blocks, which only a new kernel can order; map the loops around it to GPU dimensions, or move it out of them");
	else if (l->gpu.varying && l->gpu.uneven >= 0)
		lower_fail_at(l, l->gpu.uneven, -1, "its bounds differ between the threads of a block (they depend on a row a thread takes), and the threads must meet inside it; map the loops between to GPU dimensions, or reorder them");
	else if (l->gpu.varying)
		fail_inst(l, before, "the threads of a block must meet after it, inside a loop that runs a different number of times on each thread; map the loops between to GPU dimensions, or reorder them");
	else if (l->gpu.block_threads > 1)
		lir_emit(&l->b, LOP_BARRIER, LTYPE_VOID, LIR_NONE, LIR_NONE, LIR_NONE);
}

static void gpu_barrier(Lowering *l, const MInst *before) { gpu_meet(l, before, false); }

/*
 * Shared memory for a buffer of `size` margins declared inside a loop spread over block
 * dimensions (a lockstep loop): one copy per thread coordinate in those dimensions, this
 * thread's group taking its own.
 */
static uint32_t gpu_block_copy(Lowering *l, int64_t size)
{
	unsigned bound = l->gpu.bound & GPU_BLOCK_BITS;
	int64_t copies = 1;
	uint32_t array, index, extent, at;
	for (unsigned k = 0; k < 3; k++)
		if (bound & dim_bit(HGPU_BLOCK_X + k))
			copies *= l->gpu.launch->block[k].count;
	array = lir_local_array(&l->b, l->acc_type, size * copies, LSPACE_BLOCK);
	gpu_flat(l, bound, &index, &extent);
	at = emit2(l, LOP_MUL, LTYPE_I64, index, const_i64(l, size));
	return lir_index(&l->b, array, at, l->acc_type);
}

static LSpace gpu_buffer_space(Lowering *l, uint32_t b)
{
	const MBuffer *buf = &l->m->buffers[b];
	uint64_t bytes = (uint64_t)buf->rows * buf->copies * buf->outputs * lir_type_size(l->acc_type);
	for (unsigned k = 0; k < 3; k++) /* a copy per thread of the lockstep loops around */
		if (l->gpu.bound & dim_bit(HGPU_BLOCK_X + k))
			bytes *= (uint64_t)l->gpu.launch->block[k].count;
	if (!l->gpu.mask)
		return LSPACE_PRIVATE;
	if (l->gpu.mask & GPU_GRID_BITS)
		lower_fail(l, "schedule: buffer m%u would be shared by the threads of several blocks; map the loops around it to GPU dimensions, or move the loop mapped to a grid dimension inside it out of the loops over rows (its buffers then hold all rows, in global memory)", b);
	if (l->gpu.block_threads <= 1)
		return LSPACE_PRIVATE;
	if (bytes > GPU_MAX_SHARED)
		lower_fail(l, "schedule: buffer m%u (%u copies of %lld rows x %u margins) needs %llu bytes of a block's shared memory, more than %u; use smaller tiles",
		         b, buf->copies, (long long)buf->rows, buf->outputs, (unsigned long long)bytes, GPU_MAX_SHARED);
	return LSPACE_BLOCK;
}

/* A representation's copy into a block's shared memory, spread over the block's threads that run the cached loop's body together. */
static uint32_t gpu_spread_copy(void *ctx, uint32_t n)
{
	Lowering *l = ctx;
	return gpu_begin_spread(l, const_i64(l, 0), n, 1, l->gpu.mask & GPU_BLOCK_BITS);
}

/*
 * cache(v) of a tree loop on a GPU: at the start of each iteration, the representation
 * copies the iteration's trees (at most `count`, the step of v) into shared memory, the
 * block's threads sharing the copy; they meet, walk the trees reading the copy (the
 * tree hook yields handles into it), and meet again before the next iteration
 * overwrites it.
 */
static void gpu_cache_trees(Lowering *l, const MInst *inst, int64_t count)
{
	const LRepresentation *rep = l->rep;
	RepSpread spread = {gpu_spread_copy, l};
	uint64_t bytes, used = lir_block_memory(l->b.fn, NULL), left = used < GPU_MAX_SHARED ? GPU_MAX_SHARED - used : 0;
	/*
	 * Inside a loop over rows whose rounds the block's threads take together, one row each
	 * (GpuScope.alike: Tahoe's shared forest, cache(t0) inside the thread's loop of rows),
	 * the threads share the copy and its meetings; only those with a row walk.
	 */
	bool lockstep = l->gpu.alike && !l->gpu.varying && !(l->gpu.mask & GPU_BLOCK_BITS), alike = l->gpu.alike;
	unsigned mask = l->gpu.mask;
	uint32_t active = l->gpu.active;

	if (count > l->f->num_trees) /* a group is never larger than the forest */
		count = l->f->num_trees;
	bytes = rep->cache_bytes ? rep->cache_bytes(&l->layout, (uint32_t)count) : 0;
	if (!rep->cache_begin)
		lower_fail_at(l, inst->var, HDIR_CACHE, "the %s representation cannot copy trees into shared memory; use --representation array or reorg", rep->name);
	else if (!lockstep && (!(l->gpu.mask & GPU_BLOCK_BITS) || l->gpu.varying || (l->gpu.bound & GPU_BLOCK_BITS)))
		lower_fail_at(l, inst->var, HDIR_CACHE, "on a GPU, cache a tree loop whose iterations the threads of a block share (such as a tile of trees around a loop over rows spread over block.x): the trees of an iteration are copied into their shared memory");
	else if (bytes > left) /* the buffers around it take their part first */
		lower_fail_at(l, inst->var, HDIR_CACHE, "%lld trees take %llu bytes in the %s representation, more than the %llu left to them of a block's %u bytes of shared memory; cache fewer trees",
		         (long long)count, (unsigned long long)bytes, rep->name, (unsigned long long)left, GPU_MAX_SHARED);
	else if (l->gpu.trees_cached)
		lower_fail_at(l, inst->var, HDIR_CACHE, "a loop around it caches its trees already");
	if (l->failed) {
		lower_list(l, inst->body);
		return;
	}
	if (lockstep) { /* every thread of the block copies its share, then only those with a row walk */
		l->gpu.mask = l->gpu.bound & GPU_BLOCK_BITS;
		l->gpu.active = LIR_NONE;
	}
	rep->cache_begin(&l->layout, &l->b, lower_index(l, &l->scope.trees, 0), (uint32_t)count, LSPACE_BLOCK, &spread);
	l->gpu.mask = mask;
	l->gpu.active = active;
	gpu_meet(l, inst, true);
	l->gpu.trees_cached = true;
	l->gpu.alike = false;
	if (lockstep)
		lir_begin(&l->b, LOP_IF, active, LIR_NONE, LIR_NONE);
	lower_list(l, inst->body);
	if (lockstep)
		lir_end(&l->b);
	l->gpu.alike = alike;
	gpu_meet(l, inst, true);
	l->gpu.trees_cached = false;
	rep->cache_end(&l->layout);
}

uint32_t gpu_row_stride(uint32_t features) { return features % 2 == 0 ? features + 1 : features; }

/*
 * cache(v) on a GPU: at the start of each iteration of v, the threads that run its body
 * together (a block, or part of one) copy the rows the iteration covers into shared
 * memory (coalesced: consecutive threads, consecutive values) and meet; the walks in
 * the body read the copy; the threads meet again before the next iteration overwrites
 * it. count: the rows one iteration covers. Rows of an even number of features lie one
 * element further apart in the copy (Lowering.row_cache_pad): threads of a warp walking
 * consecutive rows then read one feature from 32 banks, not from 32 / gcd(features, 32).
 */
static void gpu_cache(Lowering *l, const MInst *inst, int64_t count)
{
	int64_t features = l->f->num_features, pad = gpu_row_stride(l->f->num_features) - features;
	int64_t bytes = count * (features + pad) * (int64_t)lir_type_size(l->row_type);
	uint32_t first, size, copy, j, x, at;

	if (inst->loop & MLOOP_PREFETCH) {
		lower_fail_at(l, inst->var, HDIR_CACHE, "prefetch is for CPUs; on a GPU, cache copies the iteration's rows or trees into shared memory");
		return;
	}
	if (inst->loop & MLOOP_TREES) {
		gpu_cache_trees(l, inst, count);
		return;
	}
	if (!(l->gpu.mask & GPU_BLOCK_BITS) || l->gpu.varying || (l->gpu.bound & GPU_BLOCK_BITS))
		lower_fail_at(l, inst->var, HDIR_CACHE, "on a GPU, cache a loop whose iterations the threads of a block share (such as a tile of rows spread over a grid dimension): the rows of an iteration are copied into their shared memory");
	else if (bytes > GPU_MAX_SHARED)
		lower_fail_at(l, inst->var, HDIR_CACHE, "%lld rows of %u features (%lld elements apart) take %lld bytes, more than the %u of a block's shared memory; cache fewer rows",
		         (long long)count, l->f->num_features, (long long)(features + pad), (long long)bytes, GPU_MAX_SHARED);
	else if (l->row_cache != LIR_NONE)
		lower_fail_at(l, inst->var, HDIR_CACHE, "a loop around it caches its rows already");
	if (l->failed) {
		lower_list(l, inst->body);
		return;
	}
	size = lower_cached_elements(l, count, &first);
	copy = lir_local_array(&l->b, l->row_type, count * (features + pad) > 0 ? count * (features + pad) : 1, LSPACE_BLOCK);
	/* Each block fills its own copy: the copy is spread over the block's threads only. */
	j = gpu_begin_spread(l, const_i64(l, 0), size, 1, l->gpu.mask & GPU_BLOCK_BITS);
	x = emit2(l, LOP_MUL, LTYPE_I64, first, const_i64(l, features));
	x = emit2(l, LOP_LOAD, l->row_type, l->rows, emit2(l, LOP_ADD, LTYPE_I64, x, j));
	at = pad ? emit2(l, LOP_ADD, LTYPE_I64, j, emit2(l, LOP_SDIV, LTYPE_I64, j, const_i64(l, features))) : j;
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, copy, at, x);
	lir_end(&l->b);
	gpu_meet(l, inst, true);
	l->row_cache = copy;
	l->row_cache_first = first;
	l->row_cache_pad = pad;
	lower_list(l, inst->body);
	gpu_meet(l, inst, true);
	l->row_cache = LIR_NONE;
	l->row_cache_pad = 0;
}

/*
 * Whether loop inst, spread over the block dimensions left, is to run as a lockstep loop
 * whose threads each take a row (GpuScope.alike): a tree loop inside caches trees, which
 * the block's threads copy and meet around together, and no lockstep loop is around.
 */
static bool gpu_takes_alike(const Lowering *l, const MInst *inst)
{
	return l->gpu.active == LIR_NONE && mir_some(l->m, inst->body, lower_caches_trees);
}

/*
 * Whether value id (being built) may differ between the threads of a block, as the LIR
 * verifier judges it (lir_varies_itself, and what is computed from such values). Past a
 * depth it answers yes.
 */
static bool gpu_varies(const Lowering *l, uint32_t id, unsigned depth)
{
	const LInst *in = &l->b.fn->insts[id];
	const uint32_t ops[3] = {in->a, in->b, in->c};
	if (depth > 48 || lir_varies_itself(in))
		return true;
	for (uint32_t k = 0; k < lir_op_operands((LOp)in->op); k++)
		if (gpu_varies(l, ops[k], depth + 1))
			return true;
	return false;
}

/*
 * A loop spread over block dimensions whose body other threads of the block share in
 * phases (mask has dimensions left), or (spread 0) a loop of a thread's own inside the
 * rounds of one, whose body the block's threads meet in: every thread runs the same
 * number of rounds, one iteration each per round, those past the end idle through the
 * round (GpuScope.active), so that the block's threads can still meet between the
 * body's phases. Where the bounds differ between the threads (uneven: a tile of rows inside
 * a thread's row of tiles), the rounds are those of the loop's most iterations, max_trips.
 */
static void gpu_lockstep(Lowering *l, const MInst *inst, uint32_t begin, uint32_t end, const HRange *r, unsigned spread,
                         bool uneven)
{
	unsigned mask = l->gpu.mask;
	bool alike = !(mask & ~spread), outer_alike = l->gpu.alike;
	int64_t step = r->step;
	uint32_t outer = l->gpu.active, index, extent, by = const_i64(l, step), trips, rounds, round, i, active, value, zero, one;
	gpu_flat(l, spread, &index, &extent);
	trips = emit2(l, LOP_SUB, LTYPE_I64, end, begin);
	trips = emit2(l, LOP_ADD, LTYPE_I64, trips, const_i64(l, step - 1));
	trips = emit2(l, LOP_SDIV, LTYPE_I64, trips, by);
	rounds = emit2(l, LOP_SUB, LTYPE_I64, extent, const_i64(l, 1));
	rounds = emit2(l, LOP_ADD, LTYPE_I64, uneven ? const_i64(l, r->max_trips) : trips, rounds);
	rounds = emit2(l, LOP_SDIV, LTYPE_I64, rounds, extent);
	zero = const_i64(l, 0);
	one = const_i64(l, 1);
	round = lir_begin(&l->b, LOP_FOR, zero, rounds, one);
	i = emit2(l, LOP_MUL, LTYPE_I64, round, extent);
	i = emit2(l, LOP_ADD, LTYPE_I64, i, index);
	active = lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, i, trips);
	if (outer != LIR_NONE)
		active = emit2(l, LOP_AND, LTYPE_I1, active, outer);
	value = emit2(l, LOP_MUL, LTYPE_I64, i, by);
	value = emit2(l, LOP_ADD, LTYPE_I64, begin, value);
	if (alike) { /* an idle thread reads the last iteration's rows and writes nothing (gpu_lower_list) */
		uint32_t last = emit2(l, LOP_SUB, LTYPE_I64, trips, one);
		last = emit2(l, LOP_MUL, LTYPE_I64, last, by);
		last = emit2(l, LOP_ADD, LTYPE_I64, begin, last);
		value = lir_emit(&l->b, LOP_SELECT, LTYPE_I64, active, value, last);
		l->gpu.alike = true;
	}
	l->gpu.active = active;
	l->gpu.mask = mask & ~spread;
	l->gpu.bound |= spread;
	lower_body(l, inst, value, step, 0, LIR_NONE);
	l->gpu.mask = mask;
	l->gpu.bound &= ~spread;
	l->gpu.active = outer;
	l->gpu.alike = outer_alike;
	lir_end(&l->b);
}

/* Entering loop inst, whose bounds differ between the threads of a block where uneven says so. */
static void gpu_uneven_begin(Lowering *l, const MInst *inst, bool uneven)
{
	if (uneven && !l->gpu.varying)
		l->gpu.uneven = inst->var;
	l->gpu.varying = l->gpu.varying || uneven;
}

/*
 * A loop on a GPU: spread over its dimension, or over every unbound one (a batch loop
 * with no mapped loop inside), or run alike by the threads (the others). Returns false
 * for a loop in code that one thread runs, which lowers as on the host.
 */
static bool gpu_for(Lowering *l, const MInst *inst)
{
	unsigned mask = l->gpu.mask, spread = 0;
	bool varying = l->gpu.varying, uneven, own;
	int32_t outer_uneven = l->gpu.uneven;
	HRange r;
	uint32_t begin, end, loop;

	if (inst->parallel && !inst->gpu_dim)
		lower_fail_at(l, inst->var, HDIR_PARALLEL, "parallel is for CPUs; on a GPU, map the loop to a grid or block dimension with gpuDimension");
	if (inst->gpu_dim && (l->gpu.bound & dim_bit(inst->gpu_dim)))
		lower_fail_at(l, inst->var, HDIR_GPU_DIMENSION, "a loop around it is spread over %s already (a batch loop with no mapped loop inside is spread over every dimension left); map that loop, or move this one out of it",
		              hir_gpu_dim_name((HGpuDim)inst->gpu_dim));
	/* A thread's own loop of rows inside the rounds of a lockstep loop (GpuScope.alike), whose body the block meets in. */
	own = !mask && !inst->gpu_dim && l->gpu.alike && !(inst->loop & (MLOOP_TREES | MLOOP_SPECIALIZE)) && inst->interleave <= 1 &&
	      mir_some(l->m, inst->body, lower_caches_trees);
	if (!mask && !inst->gpu_dim && !own)
		return false;
	if (inst->gpu_dim)
		spread = dim_bit(inst->gpu_dim);
	else if (!(inst->loop & MLOOP_TREES) && !contains_gpu(l->m, inst->body))
		spread = mask;
	if (inst->interleave > 1 || (spread && inst->loop & MLOOP_SPECIALIZE))
		lower_fail_at(l, inst->var, inst->gpu_dim ? HDIR_GPU_DIMENSION : -1, "a loop that GPU threads spread or run alike cannot be %s; put the directive on a loop that one thread runs",
		              inst->interleave > 1 ? "interleaved" : "specialized");
	if (inst->loop & MLOOP_SPECIALIZE)
		return false; /* its copies run alike, their bodies in phases */
	mir_loop_range(l->m, inst->var, &r);
	begin = lower_expr(l, &r, r.begin, 0);
	end = lower_expr(l, &r, r.end, 0);
	/* (trips differing between a block's threads: they cannot meet inside, but in rounds of the most trips) */
	uneven = gpu_varies(l, begin, 0) || gpu_varies(l, end, 0);
	if (own && uneven && r.max_trips >= 0) {
		gpu_lockstep(l, inst, begin, end, &r, 0, true);
	} else if (own || !spread) { /* (!spread: run alike by the threads, its body in phases) */
		gpu_uneven_begin(l, inst, uneven);
		lower_loop(l, inst, begin, end, const_i64(l, r.step), 0, false);
		l->gpu.varying = varying;
		l->gpu.uneven = outer_uneven;
	} else if ((spread & GPU_BLOCK_BITS) && ((mask & ~spread) || gpu_takes_alike(l, inst)) && !varying &&
	           (!uneven || r.max_trips >= 0)) {
		gpu_lockstep(l, inst, begin, end, &r, spread, uneven);
	} else {
		loop = gpu_begin_spread(l, begin, end, r.step, spread);
		l->gpu.mask = mask & ~spread;
		l->gpu.bound |= spread;
		gpu_uneven_begin(l, inst, uneven);
		l->gpu.varying = l->gpu.varying || (spread & GPU_BLOCK_BITS) != 0;
		lower_body(l, inst, loop, r.step, 0, LIR_NONE);
		lir_end(&l->b);
		l->gpu.mask = mask;
		l->gpu.bound &= ~spread;
		l->gpu.varying = varying;
		l->gpu.uneven = outer_uneven;
	}
	return true;
}

/* init shared out: the threads take rows (of every copy) in turn. */
static void gpu_init(Lowering *l, uint32_t b)
{
	const MBuffer *buf = &l->m->buffers[b];
	const Storage *st = &l->storage[b];
	uint32_t rows = emit2(l, LOP_MUL, LTYPE_I64, st->rows, const_i64(l, buf->copies));
	uint32_t row = gpu_begin_spread(l, const_i64(l, 0), rows, 1, l->gpu.mask);
	for (uint32_t c = 0; c < buf->outputs; c++) {
		uint32_t at = buffer_element(l, b, row, const_i64(l, c)), value;
		at = emit2(l, LOP_ADD, LTYPE_I64, st->offset, at);
		value = lir_const_float(&l->b, l->acc_type, buf->zero ? aggregate_identity(l->f) : margin_start(l->f, c));
		lir_emit(&l->b, LOP_STORE, LTYPE_VOID, st->base[0], at, value);
	}
	lir_end(&l->b);
}

static uint32_t gpu_get(Lowering *l, uint32_t cell) { return lir_emit(&l->b, LOP_GET, l->acc_type, cell, LIR_NONE, LIR_NONE); }

/*
 * MSTRATEGY_SHUFFLE: reduceDimension by a tree of warp shuffles. For each element in turn,
 * the block's threads fold the copies in strides of the block's size, each warp folds
 * its lanes' values with shuffles (16, 8, 4, 2, 1 lanes down; a lane whose partner is
 * past the block keeps its value), the first lane of each warp leaves the warp's value
 * in shared memory, and after a barrier the first thread folds those into the buffer.
 */
static void gpu_shuffle_fold(Lowering *l, const MInst *inst)
{
	const MBuffer *src = &l->m->buffers[inst->src];
	const Storage *from = &l->storage[inst->src];
	LOp op = reduce_lop(inst->reduce_op);
	uint32_t dst = l->storage[inst->buf].base[0];
	FoldSpan f = fold_span(l, inst, 0);
	uint32_t tid, threads, lane, warp, warps, zero = const_i64(l, 0), one = const_i64(l, 1), j, acc, c, at, v, first;
	uint32_t partial = lir_local_array(&l->b, l->acc_type, (GPU_MAX_BLOCK_THREADS + GROVE_WARP_LANES - 1) / GROVE_WARP_LANES, LSPACE_BLOCK);
	gpu_flat(l, l->gpu.mask, &tid, &threads);
	lane = emit2(l, LOP_AND, LTYPE_I64, tid, const_i64(l, GROVE_WARP_LANES - 1));
	warp = emit2(l, LOP_SDIV, LTYPE_I64, tid, const_i64(l, GROVE_WARP_LANES));
	warps = emit2(l, LOP_ADD, LTYPE_I64, threads, const_i64(l, GROVE_WARP_LANES - 1));
	warps = emit2(l, LOP_SDIV, LTYPE_I64, warps, const_i64(l, GROVE_WARP_LANES));
	j = lir_begin(&l->b, LOP_FOR, zero, f.count, one);
	acc = lir_emit(&l->b, LOP_VAR, l->acc_type, lir_const_float(&l->b, l->acc_type, aggregate_identity(l->f)), LIR_NONE, LIR_NONE);
	c = lir_begin(&l->b, LOP_FOR, tid, const_i64(l, src->copies), threads);
	v = emit2(l, LOP_LOAD, l->acc_type, from->base[0], emit2(l, LOP_ADD, LTYPE_I64, fold_copy(l, &f, from->offset, c), j));
	emit2(l, LOP_SET, LTYPE_VOID, acc, emit2(l, op, l->acc_type, gpu_get(l, acc), v));
	lir_end(&l->b);
	v = gpu_get(l, acc);
	for (int delta = GROVE_WARP_LANES / 2; delta >= 1; delta /= 2) {
		uint32_t other = lir_emit(&l->b, LOP_SHUFFLE, l->acc_type, v, lir_const_int(&l->b, LTYPE_I32, delta), LIR_NONE);
		uint32_t partner = emit2(l, LOP_ADD, LTYPE_I64, lane, const_i64(l, delta)), inside, exists;
		inside = lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, partner, const_i64(l, GROVE_WARP_LANES));
		partner = emit2(l, LOP_ADD, LTYPE_I64, tid, const_i64(l, delta));
		exists = lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, partner, threads);
		inside = emit2(l, LOP_AND, LTYPE_I1, inside, exists);
		other = emit2(l, op, l->acc_type, v, other);
		v = lir_emit(&l->b, LOP_SELECT, l->acc_type, inside, other, v);
	}
	lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_EQ, lane, zero), LIR_NONE, LIR_NONE);
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, partial, warp, v);
	lir_end(&l->b);
	gpu_barrier(l, inst);
	lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_EQ, tid, zero), LIR_NONE, LIR_NONE);
	at = emit2(l, LOP_ADD, LTYPE_I64, f.dst_at, j);
	first = emit2(l, LOP_LOAD, l->acc_type, dst, at);
	acc = lir_emit(&l->b, LOP_VAR, l->acc_type, first, LIR_NONE, LIR_NONE);
	c = lir_begin(&l->b, LOP_FOR, zero, warps, one);
	v = emit2(l, LOP_LOAD, l->acc_type, partial, c);
	emit2(l, LOP_SET, LTYPE_VOID, acc, emit2(l, op, l->acc_type, gpu_get(l, acc), v));
	lir_end(&l->b);
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, dst, at, gpu_get(l, acc));
	lir_end(&l->b);
	gpu_barrier(l, inst);
	lir_end(&l->b);
}

/* reduceDimension shared out: each thread folds every copy of its elements, copy by copy (the sums of the host's order). */
static void gpu_reduce_dim(Lowering *l, const MInst *inst)
{
	if (inst->strategy == MSTRATEGY_SHUFFLE && l->gpu.block_threads > 1 &&
	    !(l->gpu.mask & GPU_GRID_BITS) && !(l->gpu.bound & GPU_BLOCK_BITS) && !l->gpu.varying) {
		gpu_shuffle_fold(l, inst);
		return;
	}

	const MBuffer *src = &l->m->buffers[inst->src];
	const Storage *from = &l->storage[inst->src];
	FoldSpan f = fold_span(l, inst, 0);
	uint32_t j = gpu_begin_spread(l, const_i64(l, 0), f.count, 1, l->gpu.mask);
	uint32_t d = emit2(l, LOP_ADD, LTYPE_I64, f.dst_at, j);
	uint32_t acc = lir_emit(&l->b, LOP_VAR, l->acc_type, emit2(l, LOP_LOAD, l->acc_type, l->storage[inst->buf].base[0], d), LIR_NONE, LIR_NONE);
	uint32_t zero = const_i64(l, 0), copies = const_i64(l, src->copies), one = const_i64(l, 1);
	uint32_t copy = lir_begin(&l->b, LOP_FOR, zero, copies, one);
	uint32_t x = emit2(l, LOP_LOAD, l->acc_type, from->base[0], emit2(l, LOP_ADD, LTYPE_I64, fold_copy(l, &f, from->offset, copy), j)), sum;
	sum = emit2(l, reduce_lop(inst->reduce_op), l->acc_type, lir_emit(&l->b, LOP_GET, l->acc_type, acc, LIR_NONE, LIR_NONE), x);
	emit2(l, LOP_SET, LTYPE_VOID, acc, sum);
	lir_end(&l->b);
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->storage[inst->buf].base[0], d, lir_emit(&l->b, LOP_GET, l->acc_type, acc, LIR_NONE, LIR_NONE));
	lir_end(&l->b);
}

/* Instructions [first, stop) with no loop spread inside, on the first of the threads that run this code alike. */
static void gpu_single(Lowering *l, uint32_t first, uint32_t stop)
{
	uint32_t index, extent, zero, first_thread;
	unsigned mask = l->gpu.mask;
	gpu_flat(l, mask, &index, &extent);
	zero = const_i64(l, 0);
	first_thread = lir_cmp(&l->b, LOP_ICMP, LCMP_EQ, index, zero);
	if (l->gpu.active != LIR_NONE)
		first_thread = emit2(l, LOP_AND, LTYPE_I1, first_thread, l->gpu.active);
	lir_begin(&l->b, LOP_IF, first_thread, LIR_NONE, LIR_NONE);
	l->gpu.mask = 0;
	for (uint32_t id = first; id != stop; id = l->m->insts[id].next)
		lower_inst(l, id);
	l->gpu.mask = mask;
	lir_end(&l->b);
}

/* Whether instruction id runs on one thread where threads run alike (it holds no loop and no buffer). */
static bool is_single(const MModule *m, uint32_t id)
{
	uint8_t op = m->insts[id].op;
	return op == MOP_GET_TREE || op == MOP_WALK || op == MOP_REDUCE || op == MOP_TRANSFORM;
}

/* The end of the phase that begins at id: the instruction after it. */
static uint32_t phase_stop(const MModule *m, uint32_t id)
{
	if (!is_single(m, id))
		return m->insts[id].next;
	while (id != MIR_NONE && is_single(m, id))
		id = m->insts[id].next;
	return id;
}

/* One phase [first, stop) of code that threads run alike. */
static void gpu_phase(Lowering *l, uint32_t first, uint32_t stop)
{
	const MInst *inst = &l->m->insts[first];
	switch ((MOp)inst->op) {
	case MOP_INIT: gpu_init(l, inst->buf); break;
	case MOP_REDUCE_DIM: gpu_reduce_dim(l, inst); break;
	case MOP_FOR: lower_for(l, inst); break;
	case MOP_IF_COMPLETE: lower_list(l, inst->body); break; /* the copy that tests for missing values serves every row */
	default: gpu_single(l, first, stop); break;
	}
}

/*
 * The instructions [first, stop) of code that threads run alike, in phases with the
 * block's threads meeting between them, and after the last where the list is a loop
 * body whose next iteration could otherwise overwrite what a slower thread still reads.
 */
static void gpu_list(Lowering *l, uint32_t first, uint32_t stop, bool loop_body)
{
	uint32_t phases = 0, last = MIR_NONE;
	bool shared = false;
	for (uint32_t id = first; id != stop;) {
		uint32_t end;
		if (l->m->insts[id].op == MOP_BUFFER) {
			lower_buffer(l, l->m->insts[id].buf);
			shared |= l->gpu.block_threads > 1;
			id = l->m->insts[id].next;
			continue;
		}
		if (phases++)
			gpu_barrier(l, &l->m->insts[last]);
		end = phase_stop(l->m, id);
		gpu_phase(l, id, end);
		last = id;
		id = end;
	}
	if (loop_body && (phases > 1 || (shared && phases)))
		gpu_barrier(l, &l->m->insts[last]);
}

/* Widen launch extent *d to cover a loop of range r mapped to it (blocks have fixed sizes). */
static void widen(LDim *d, const HRange *r, bool block)
{
	LDim want = {.count = r->max_trips > 0 ? r->max_trips : block ? GPU_DEFAULT_BLOCK : 0, .rows_per = 0};
	if (!want.count)
		want.rows_per = r->step; /* a loop over the batch: a block per step */
	if (want.rows_per && (!d->rows_per || want.rows_per < d->rows_per))
		*d = want;
	else if (!want.rows_per && !d->rows_per && want.count > d->count)
		d->count = want.count;
}

/* The extents the loops mapped in [first, stop) ask for. */
static void gpu_scan(const Lowering *l, uint32_t first, uint32_t stop, LLaunch *launch, bool *mapped)
{
	for (uint32_t id = first; id != stop; id = l->m->insts[id].next) {
		const MInst *inst = &l->m->insts[id];
		if (inst->op == MOP_FOR && inst->gpu_dim) {
			HRange r;
			bool block = inst->gpu_dim >= HGPU_BLOCK_X;
			mir_loop_range(l->m, inst->var, &r);
			widen(block ? &launch->block[inst->gpu_dim - HGPU_BLOCK_X] : &launch->grid[inst->gpu_dim - HGPU_GRID_X], &r, block);
			*mapped = true;
		}
		if (inst->op == MOP_FOR || inst->op == MOP_IF_COMPLETE)
			gpu_scan(l, inst->body, MIR_NONE, launch, mapped);
	}
}

/* The launch of the kernel fn running phase [first, stop); sets the threads that start it alike. */
static void gpu_launch(Lowering *l, uint32_t first, uint32_t stop, LFunc *fn)
{
	LLaunch *launch = &fn->launch;
	bool mapped = false;
	int64_t threads = 1;
	for (int k = 0; k < 3; k++)
		launch->grid[k] = launch->block[k] = (LDim){.count = 1};
	gpu_scan(l, first, stop, launch, &mapped);
	if (!mapped) {
		/* Nothing mapped: the batch loops spread over a grid of blocks of GPU_SPREAD_BLOCK threads. */
		launch->grid[0] = (LDim){.rows_per = GPU_SPREAD_BLOCK};
		launch->block[0] = (LDim){.count = GPU_SPREAD_BLOCK};
	}
	l->gpu.mask = 0;
	for (int k = 0; k < 3; k++) {
		threads *= launch->block[k].count;
		if (launch->grid[k].rows_per || launch->grid[k].count > 1)
			l->gpu.mask |= dim_bit(HGPU_GRID_X + (unsigned)k);
		if (launch->block[k].count > 1)
			l->gpu.mask |= dim_bit(HGPU_BLOCK_X + (unsigned)k);
	}
	if (threads > GPU_MAX_BLOCK_THREADS)
		lower_fail(l, "schedule: the loops mapped to block dimensions ask for %lld x %lld x %lld = %lld threads per block, at most %d; tile them",
		         (long long)launch->block[0].count, (long long)launch->block[1].count, (long long)launch->block[2].count,
		         (long long)threads, GPU_MAX_BLOCK_THREADS);
	l->gpu.block_threads = (uint32_t)(threads > GPU_MAX_BLOCK_THREADS ? GPU_MAX_BLOCK_THREADS : threads);
	l->gpu.varying = l->gpu.alike = false;
	l->gpu.uneven = -1;
	l->gpu.bound = 0;
	l->gpu.active = LIR_NONE;
	l->gpu.launch = launch;
}

/* A kernel's shared memory altogether (buffers, copies of rows and trees) must fit a block's. */
static void gpu_check_shared(Lowering *l, const LFunc *fn)
{
	uint64_t bytes = lir_block_memory(fn, NULL);
	if (bytes > GPU_MAX_SHARED)
		lower_fail(l, "schedule: kernel %s needs %llu bytes of a block's shared memory altogether (its buffers and the rows or trees it caches), more than %u; use smaller tiles or cache less",
		         fn->name, (unsigned long long)bytes, GPU_MAX_SHARED);
}

/*
 * The kernels of an entry: the top-level list in phases, each phase a kernel of its
 * own (kernels run one after the other, which orders phases whose threads are in
 * different blocks). Each kernel declares the top-level buffers before its phase again.
 */
static void gpu_entry(Lowering *l, const char *name, LType row_type)
{
	const MModule *m = l->m;
	uint32_t *decls = xmalloc(((size_t)m->num_insts + 1) * sizeof *decls), num_decls = 0, kernels = 0;
	for (uint32_t id = m->body; id != MIR_NONE;) {
		char kernel[64];
		uint32_t end;
		LFunc *fn;
		if (m->insts[id].op == MOP_BUFFER) {
			decls[num_decls++] = id;
			id = m->insts[id].next;
			continue;
		}
		end = phase_stop(m, id);
		snprintf(kernel, sizeof kernel, "%s_k%u", name, kernels++);
		fn = begin_function(l, kernel, row_type, true);
		gpu_launch(l, id, end, fn);
		for (uint32_t d = 0; d < num_decls; d++)
			lower_buffer(l, m->insts[decls[d]].buf);
		gpu_phase(l, id, end);
		gpu_check_shared(l, fn);
		id = end;
	}
	free(decls);
}

/* Whether inst caches trees or holds a loop that does. */
static bool holds_cached_trees(const MModule *m, const MInst *inst)
{
	return lower_caches_trees(m, inst) || mir_some(m, inst->body, lower_caches_trees);
}

/* A list that threads run alike (GpuScope.mask): in phases; one thread's lowers as on the host. */
static bool gpu_lower_list(Lowering *l, uint32_t first)
{
	if (l->gpu.mask) {
		gpu_list(l, first, MIR_NONE, true);
		return true;
	}
	if (!l->gpu.alike)
		return false;
	/* A thread's row among the block's taken together (GpuScope.alike): an idle thread writes nothing, but meets. */
	for (uint32_t id = first; id != MIR_NONE; id = l->m->insts[id].next) {
		const MInst *inst = &l->m->insts[id];
		bool guard = inst->op != MOP_BUFFER && !holds_cached_trees(l->m, inst);
		if (guard)
			lir_begin(&l->b, LOP_IF, l->gpu.active, LIR_NONE, LIR_NONE);
		lower_inst(l, id);
		if (guard)
			lir_end(&l->b);
	}
	return true;
}

static const LowerHooks gpu_hooks = {
	.entry = gpu_entry,
	.loop = gpu_for,
	.cache = gpu_cache,
	.list = gpu_lower_list,
	.buffer_space = gpu_buffer_space,
	.block_copy = gpu_block_copy,
};

LModule *lower_mir_to_gpu(const MModule *m, Error *e) { return lower_module_with(m, &gpu_hooks, e); }
