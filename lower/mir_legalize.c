/*
 * MIR pass: reduction legalization (see lower.h).
 *
 * A reduction writes one element of its buffer per (copy, row, output); iterations of a
 * loop whose variable is not in that index write the same elements. When such a loop
 * is parallel and inside the buffer's scope, its iterations would race. The pass finds
 * the outermost such loop of some reduction and, unless the loop asks for atomics,
 * privatises the buffer along it:
 *
 *   buffer m1: <copies> copies along P x (m0's rows)      declared before P
 *   init m1 = 0
 *   parallel for P { ... reduce m1[copy(P), ...] ... }     every write to m0 in P retargeted
 *   reduceDimension m0 += m1 over P                         after P
 *
 * m0's rows, or where batch loops lie between m0's declaration and P, the rows of one
 * iteration of the innermost of them (a reduction's rows in the copy: its rows of m0);
 * on a GPU, the copies along a loop over a block's threads without sharedReduce are of
 * all N rows, in global memory. reduceDimension is itself a reduction into m0, writing
 * the copy's rows, and is checked like any other, so nested parallel loops (trees inside
 * trees, a tile of rows around parallel trees, trees over a GPU block's threads inside
 * trees over the grid: the paper's hierarchical reduction) are legalized by repeating
 * until nothing conflicts. Then GPU kernels keep partial sums in registers (accumulate),
 * and buffers on the stack that parallel loops write become SHARED.
 */
#include "lower/lower.h"

#include <stdlib.h>
#include <string.h>

/* Privatisations one module may need at most (each adds a buffer). */
#define MAX_ROUNDS 64

/* A loop on the path being searched, and where it is linked. */
typedef struct Frame {
	uint32_t loop;  /* the FOR */
	uint32_t owner; /* the FOR whose body lists it (MIR_NONE: the function body) */
	uint32_t prev;  /* the instruction before it in that list (MIR_NONE: it is first) */
} Frame;

typedef struct Legalizer {
	MModule *m;
	Frame stack[HIR_MAX_VARS];
	uint32_t depth;
	uint32_t *decl_depth; /* per buffer: loops around its declaration */
	uint32_t buf, at;     /* the conflict found: a buffer, and the depth of the loop to privatise along */
	bool refused;         /* search found a directive it would have to ignore; e says which */
	Error *e;
} Legalizer;

/* Whether the element reduction x writes depends on var. */
static bool writes_along(const MModule *m, const MInst *x, int32_t var)
{
	return m->buffers[x->buf].copy_var == var || (x->op == MOP_REDUCE && mir_index_has(&x->row, var)) ||
	       (x->op == MOP_REDUCE_DIM && mir_index_has(&m->buffers[x->src].base, var));
}

static bool is_reduction(const MInst *x) { return x->op == MOP_REDUCE || x->op == MOP_REDUCE_DIM; }

/*
 * Whether a parallel loop inside the one at depth `atomic`, whose atomics reduction x now
 * takes, asks for copies of x's buffer (sharedReduce, vectorReduce) that would never be
 * made: refused (Legalizer.refused), for no directive is dropped without a word.
 */
static bool ignored_inside(Legalizer *g, const MInst *x, uint32_t atomic)
{
	const HSchedule *s = &g->m->forest->schedule;
	for (uint32_t d = atomic + 1; d < g->depth; d++) {
		const MInst *loop = &g->m->insts[g->stack[d].loop];
		uint8_t reduce = s->vars[loop->var].reduce;
		char where[700], around[700];
		if (!loop->parallel || writes_along(g->m, x, loop->var) || (reduce != HREDUCE_SHARED && reduce != HREDUCE_VECTOR))
			continue;
		hir_schedule_where(s, g->m->insts[g->stack[atomic].loop].var, HDIR_ATOMIC_REDUCE, around, sizeof around);
		error_set(g->e, "%s: the reductions inside go to their margins with atomics already (%s, around it): no copies to fold; drop one of the two",
		          hir_schedule_where(s, loop->var, reduce == HREDUCE_SHARED ? HDIR_SHARED_REDUCE : HDIR_VECTOR_REDUCE, where, sizeof where),
		          around);
		g->refused = true;
		return true;
	}
	return false;
}

/*
 * Search the list first (the body of owner) for a reduction that conflicts with a
 * parallel loop; record it and return true. Reductions whose conflicting loop asks
 * for atomics become atomic on the way.
 */
static bool search(Legalizer *g, uint32_t owner, uint32_t first)
{
	MModule *m = g->m;
	uint32_t prev = MIR_NONE;
	for (uint32_t id = first; id != MIR_NONE; prev = id, id = m->insts[id].next) {
		MInst *x = &m->insts[id];
		if (x->op == MOP_BUFFER)
			g->decl_depth[x->buf] = g->depth;
		if (x->op == MOP_FOR) {
			g->stack[g->depth++] = (Frame){id, owner, prev};
			if (search(g, id, x->body))
				return true;
			g->depth--;
		}
		if (!is_reduction(x) || x->strategy == MSTRATEGY_ATOMIC)
			continue;
		for (uint32_t d = g->decl_depth[x->buf]; d < g->depth; d++) {
			const MInst *loop = &m->insts[g->stack[d].loop];
			if (!loop->parallel || writes_along(m, x, loop->var))
				continue;
			if (m->forest->schedule.vars[loop->var].reduce == HREDUCE_ATOMIC) {
				x->strategy = MSTRATEGY_ATOMIC; /* covers the loops inside this one too */
				if (ignored_inside(g, x, d))
					return true;
				break;
			}
			g->buf = x->buf;
			g->at = d;
			return true;
		}
	}
	return false;
}

/* Point the reductions into buffer from inside the list first at buffer to. */
static void retarget(MModule *m, uint32_t first, uint32_t from, uint32_t to)
{
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		MInst *x = &m->insts[id];
		if (x->op == MOP_FOR)
			retarget(m, x->body, from, to);
		else if (is_reduction(x) && x->buf == from) {
			x->buf = to;
			if (x->op == MOP_REDUCE_DIM)
				m->buffers[x->src].of = to;
		}
	}
}

/*
 * Narrow copy (of g->buf) to the rows one iteration of the loop at g->at writes: those
 * of the innermost batch loop between the buffer's declaration and it, from the batch
 * variables bound there. A buffer of all N rows privatised along a loop inside a tile
 * of rows (trees over a block's threads inside trees over the grid) then takes that
 * tile's rows alone, where the threads of a block share it.
 */
static void narrow_rows(Legalizer *g, MBuffer *copy)
{
	const MModule *m = g->m;
	MIndex base = copy->base;
	int64_t rows = 0;
	for (uint32_t d = g->decl_depth[g->buf]; d < g->at; d++) {
		const MInst *loop = &m->insts[g->stack[d].loop];
		if (loop->loop & MLOOP_TREES)
			continue;
		if (base.num_terms == MIR_MAX_TERMS)
			return;
		base.terms[base.num_terms++] = (int8_t)loop->var;
		rows = m->loops[loop->var].rows;
	}
	if (rows && rows != MIR_ROWS_ALL && (copy->rows == MIR_ROWS_ALL || rows < copy->rows)) {
		copy->base = base;
		copy->rows = rows;
	}
}

/*
 * A GPU block's copies without sharedReduce live in global memory (SilvanForge's
 * meaning): a copy of all N rows, declared before everything, each block writing its
 * rows. That holds only where the loops around hold no tree loop, whose iterations would
 * share the copy (and add into it again); false (g->e says so) there.
 */
static bool make_global(Legalizer *g, MBuffer *copy)
{
	const MModule *m = g->m;
	const HSchedule *s = &m->forest->schedule;
	int32_t var = m->insts[g->stack[g->at].loop].var;
	for (uint32_t d = 0; d < g->at; d++) {
		const MInst *loop = &m->insts[g->stack[d].loop];
		char where[700];
		if (loop->loop & MLOOP_TREES)
			return error_set(g->e, "%s: the copies of the margins along '%s' would live in global memory (no sharedReduce(%s)), shared by the iterations of tree loop '%s' around it; keep them in shared memory with sharedReduce(%s)",
			                 hir_schedule_where(s, var, HDIR_GPU_DIMENSION, where, sizeof where), s->vars[var].name,
			                 s->vars[var].name, s->vars[loop->var].name, s->vars[var].name);
	}
	copy->base = (MIndex){0};
	copy->rows = MIR_ROWS_ALL;
	return true;
}

/* The elements of one copy a fold of copy into target adds: the narrower's rows x outputs (0: not known before it runs). */
static int64_t fold_size(const MBuffer *copy, const MBuffer *target)
{
	int64_t rows = copy->rows == MIR_ROWS_ALL ? target->rows : copy->rows;
	return rows == MIR_ROWS_ALL ? 0 : rows * copy->outputs;
}

/* Whether a loop around the one at g->at runs over a GPU block's threads (which then cannot all meet to fold). */
static bool inside_block(const Legalizer *g)
{
	for (uint32_t d = 0; d < g->at; d++)
		if (g->m->insts[g->stack[d].loop].gpu_dim >= HGPU_BLOCK_X)
			return true;
	return false;
}

/* Privatise buffer g->buf along the loop at g->stack[g->at]. */
static bool privatise(Legalizer *g)
{
	MModule *m = g->m;
	Frame f = g->stack[g->at];
	int32_t var = m->insts[f.loop].var;
	const HIndexVar *v = &m->forest->schedule.vars[var];
	bool block = m->insts[f.loop].gpu_dim >= HGPU_BLOCK_X, global = block && v->reduce != HREDUCE_SHARED;
	MBuffer copy = m->buffers[g->buf];
	uint32_t decl, init, fold, b;
	int64_t elements;
	HRange r;
	char where[700];

	mir_loop_range(m, var, &r);
	if (r.max_trips < 1)
		return error_set(g->e, "%s: the reductions inside need a copy of their buffer per iteration, and the loop's trip count is not known before it runs",
		                 hir_schedule_where(&m->forest->schedule, var, HDIR_PARALLEL, where, sizeof where));
	copy.copy_var = var;
	copy.copies = (uint32_t)r.max_trips;
	copy.zero = 1;
	copy.of = g->buf;
	if (!global)
		narrow_rows(g, &copy);
	else if (!make_global(g, &copy))
		return false;
	copy.space = copy.rows == MIR_ROWS_ALL ? MSPACE_WORKSPACE : MSPACE_SHARED;
	b = mir_buffer_add(m, &copy);

	decl = mir_new(m, MOP_BUFFER);
	m->insts[decl].buf = b;
	init = mir_new(m, MOP_INIT);
	m->insts[init].buf = b;
	mir_link_after(m, global ? MIR_NONE : f.owner, global ? MIR_NONE : f.prev, decl);
	mir_link_after(m, global ? MIR_NONE : f.owner, decl, init);
	fold = mir_new(m, MOP_REDUCE_DIM);
	m->insts[fold].buf = g->buf;
	m->insts[fold].src = b;
	m->insts[fold].reduce_op = mir_reduce_op(m->forest);
	elements = fold_size(&copy, &m->buffers[g->buf]);
	if (v->reduce == HREDUCE_VECTOR) {
		m->insts[fold].strategy = MSTRATEGY_VECTOR;
		m->insts[fold].vector = v->vector_width;
	} else if (block && elements && elements < copy.copies && !inside_block(g)) {
		/* too few sums for the block's threads to take one each: the paper's divide and conquer */
		m->insts[fold].strategy = MSTRATEGY_SHUFFLE;
	}
	mir_link_after(m, f.owner, f.loop, fold);
	retarget(m, m->insts[f.loop].body, g->buf, b);
	return true;
}

/* Most margins a row's partial sums in registers hold (more would live in a thread's local memory). */
#define ACCUMULATE_OUTPUTS 8

/*
 * Whether the list first holds only sequential tree loops, ifCompletes, tree reads and
 * walks, and reductions into global memory (a buffer of all N rows of few margins), all
 * at one row: *buf and *row take the first reduction's.
 */
static bool sums_one_row(const MModule *m, uint32_t first, uint32_t *buf, const MIndex **row)
{
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		const MInst *x = &m->insts[id];
		switch ((MOp)x->op) {
		case MOP_FOR:
			if (!(x->loop & MLOOP_TREES) || x->parallel || !sums_one_row(m, x->body, buf, row))
				return false;
			break;
		case MOP_IF_COMPLETE:
			if (!sums_one_row(m, x->body, buf, row))
				return false;
			break;
		case MOP_GET_TREE:
		case MOP_WALK:
			break;
		case MOP_REDUCE:
			if (x->strategy != MSTRATEGY_PLAIN || m->buffers[x->buf].space != MSPACE_WORKSPACE ||
			    m->buffers[x->buf].outputs > ACCUMULATE_OUTPUTS || (*buf != MIR_NONE && *buf != x->buf))
				return false;
			if (*row && ((*row)->num_terms != x->row.num_terms ||
			             memcmp((*row)->terms, x->row.terms, x->row.num_terms * sizeof *x->row.terms)))
				return false;
			*buf = x->buf;
			*row = &x->row;
			break;
		default:
			return false;
		}
	}
	return true;
}

/*
 * GPU kernels: partial sums in registers, as Tahoe's threads keep them. The outermost
 * loops over trees that a thread runs one after another, inside the loops that fix the
 * row, whose reductions all add into global memory at that row, add into a buffer of
 * the row's margins of the thread's own instead (declared before the loop, folded into
 * the global one after it): one read and write of global memory per row and loop, not
 * one per tree.
 */
static void accumulate(MModule *m, uint32_t owner, uint32_t first)
{
	for (uint32_t prev = MIR_NONE, id = first; id != MIR_NONE; prev = id, id = m->insts[id].next) {
		MInst *x = &m->insts[id];
		uint32_t buf = MIR_NONE, b, decl, init, fold;
		const MIndex *row = NULL;
		MBuffer sums;
		if (x->op == MOP_IF_COMPLETE || (x->op == MOP_FOR && !((x->loop & MLOOP_TREES) && !x->parallel))) {
			accumulate(m, id, x->body);
			continue;
		}
		if (x->op != MOP_FOR || !sums_one_row(m, x->body, &buf, &row) || buf == MIR_NONE)
			continue;
		sums = (MBuffer){.type = m->buffers[buf].type, .space = MSPACE_LOCAL, .zero = 1, .base = *row, .rows = 1,
		                 .copy_var = HIR_NONE, .copies = 1, .outputs = m->buffers[buf].outputs, .of = buf};
		b = mir_buffer_add(m, &sums);
		decl = mir_new(m, MOP_BUFFER);
		m->insts[decl].buf = b;
		init = mir_new(m, MOP_INIT);
		m->insts[init].buf = b;
		mir_link_after(m, owner, prev, decl);
		mir_link_after(m, owner, decl, init);
		fold = mir_new(m, MOP_REDUCE_DIM);
		m->insts[fold].buf = buf;
		m->insts[fold].src = b;
		m->insts[fold].reduce_op = mir_reduce_op(m->forest);
		mir_link_after(m, owner, id, fold);
		retarget(m, m->insts[id].body, buf, b);
		id = fold; /* (the loop goes on after the fold) */
	}
}

/* Whether some loop of the list first (or inside it) is mapped to a GPU dimension. */
static bool on_gpu(const MModule *m, uint32_t first)
{
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		const MInst *x = &m->insts[id];
		if ((x->op == MOP_FOR && (x->gpu_dim || on_gpu(m, x->body))) || (x->op == MOP_IF_COMPLETE && on_gpu(m, x->body)))
			return true;
	}
	return false;
}

/* Make stack buffers that parallel loops write SHARED; reject workspace buffers inside parallel loops. */
static bool assign_spaces(Legalizer *g, uint32_t first)
{
	MModule *m = g->m;
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		MInst *x = &m->insts[id];
		if (x->op == MOP_FOR) {
			bool ok;
			g->stack[g->depth++] = (Frame){id, MIR_NONE, MIR_NONE};
			ok = assign_spaces(g, x->body);
			g->depth--;
			if (!ok)
				return false;
		}
		if (x->op == MOP_BUFFER) {
			g->decl_depth[x->buf] = g->depth;
			for (uint32_t d = 0; d < g->depth && m->buffers[x->buf].space == MSPACE_WORKSPACE; d++) {
				int32_t var = m->insts[g->stack[d].loop].var;
				char where[700];
				if (m->insts[g->stack[d].loop].parallel)
					return error_set(g->e, "%s: each iteration would need its own buffer of all N rows (margins, or copies privatising a parallel loop inside it), which the workspace does not provide; tile the batch loop outside this loop, or use atomicReduce",
					                 hir_schedule_where(&m->forest->schedule, var, HDIR_PARALLEL, where, sizeof where));
			}
		}
		if (is_reduction(x) && m->buffers[x->buf].space == MSPACE_LOCAL)
			for (uint32_t d = g->decl_depth[x->buf]; d < g->depth; d++)
				if (m->insts[g->stack[d].loop].parallel)
					m->buffers[x->buf].space = MSPACE_SHARED;
	}
	return true;
}

bool mir_legalize_reductions(MModule *m, Error *e)
{
	Legalizer g = {.m = m, .e = e};
	bool ok = true;
	for (uint32_t round = 0; ok; round++) {
		free(g.decl_depth);
		g.decl_depth = xcalloc(m->num_buffers + 1, sizeof *g.decl_depth);
		g.depth = 0;
		if (!search(&g, MIR_NONE, m->body))
			break;
		if (g.refused) {
			ok = false;
			break;
		}
		if (round == MAX_ROUNDS) {
			ok = error_set(e, "schedule: reductions need more than %d privatised buffers", MAX_ROUNDS);
			break;
		}
		ok = privatise(&g);
	}
	if (ok && on_gpu(m, m->body))
		accumulate(m, MIR_NONE, m->body);
	if (ok) {
		g.depth = 0;
		ok = assign_spaces(&g, m->body);
	}
	free(g.decl_depth);
	return ok && mir_verify(m, e);
}
