/*
 * Buffers and reductions: a MIR buffer's storage (a local array, a copy per lane inside
 * a loop interleaved over rows, or the caller's workspace for buffers of all rows), its
 * elements' addresses, init, and the reductions into it (reduce, reduceDim).
 */
#include "lower/lowering.h"

/* i1: whether lane `lane` runs (LoopScope.masked); LIR_NONE where it always does. */
static uint32_t lane_live(Lowering *l, uint32_t lane)
{
	if (l->scope.masked == LIR_NONE)
		return LIR_NONE;
	return lir_cmp(&l->b, LOP_ICMP, LCMP_SGE, const_i64(l, lane * l->scope.lane_step), l->scope.masked);
}

/* The output a tree adds to, as i64. */
static uint32_t tree_output(Lowering *l, uint32_t tree_index)
{
	if (l->f->num_outputs == 1)
		return const_i64(l, 0);
	return lir_cast(&l->b, LCAST_SEXT, LTYPE_I64, emit2(l, LOP_LOAD, LTYPE_I32, l->tree_outputs, tree_index));
}

/* The address of buffer b's storage in lane `lane`. */
uint32_t lower_storage_base(Lowering *l, uint32_t b, uint32_t lane)
{
	const Storage *st = &l->storage[b];
	return st->base[st->per_lane ? lane : 0];
}

/* The element of buffer b for row (a full row index; NULL for the buffer's row 0) and output c (i64), in lane `lane`. */
uint32_t buffer_slot(Lowering *l, uint32_t b, uint32_t lane, const MIndex *row, uint32_t c)
{
	const MBuffer *buf = &l->m->buffers[b];
	const Storage *st = &l->storage[b];
	uint32_t at = row ? lower_index_except(l, row, &buf->base, lane) : const_i64(l, 0);
	if (buf->copy_var != HIR_NONE) {
		/* The copy of iteration (value - begin) / step of the loop it was privatised along. */
		HRange r;
		uint32_t copy;
		mir_loop_range(l->m, buf->copy_var, &r);
		copy = lower_var_value(l, buf->copy_var, lane);
		copy = emit2(l, LOP_SUB, LTYPE_I64, copy, lower_expr(l, &r, r.begin, lane));
		if (r.step != 1)
			copy = emit2(l, LOP_SDIV, LTYPE_I64, copy, const_i64(l, r.step));
		at = emit2(l, LOP_ADD, LTYPE_I64, emit2(l, LOP_MUL, LTYPE_I64, copy, st->rows), at);
	}
	return emit2(l, LOP_ADD, LTYPE_I64, st->offset, buffer_element(l, b, at, c));
}

/*
 * reduceDimension inst: the rows its fold adds, those of the narrower of the copy and its
 * target (a copy of a tile's rows into a buffer of all N rows, or a copy of all N rows in
 * global memory into a tile's buffer); where the wider holds all N rows and the narrower
 * a tile's, up to the batch's end.
 */
FoldSpan fold_span(Lowering *l, const MInst *inst, uint32_t lane)
{
	const MBuffer *src = &l->m->buffers[inst->src], *dst = &l->m->buffers[inst->buf];
	bool copy_narrower = src->rows != MIR_ROWS_ALL || dst->rows == MIR_ROWS_ALL;
	const MBuffer *narrow = copy_narrower ? src : dst, *wide = copy_narrower ? dst : src;
	uint32_t outputs = const_i64(l, src->outputs);
	FoldSpan f = {.src_at = LIR_NONE};
	f.dst_at = buffer_slot(l, inst->buf, lane, copy_narrower ? &src->base : NULL, const_i64(l, 0));
	f.n = emit2(l, LOP_MUL, LTYPE_I64, l->storage[inst->src].rows, outputs);
	f.count = copy_narrower ? f.n : emit2(l, LOP_MUL, LTYPE_I64, l->storage[inst->buf].rows, outputs);
	if (!copy_narrower)
		f.src_at = emit2(l, LOP_MUL, LTYPE_I64, lower_index_except(l, &dst->base, &src->base, lane), outputs);
	if (wide->rows == MIR_ROWS_ALL && narrow->rows != MIR_ROWS_ALL) {
		uint32_t left = emit2(l, LOP_SUB, LTYPE_I64, l->num_rows, lower_index(l, &narrow->base, lane));
		left = emit2(l, LOP_MIN, LTYPE_I64, l->storage[copy_narrower ? inst->src : inst->buf].rows, left);
		f.count = emit2(l, LOP_MUL, LTYPE_I64, left, outputs);
	}
	return f;
}

/* Where the fold f's rows begin in copy `copy` (i64), in the copies' storage from offset. */
uint32_t fold_copy(Lowering *l, const FoldSpan *f, uint32_t offset, uint32_t copy)
{
	uint32_t at = emit2(l, LOP_MUL, LTYPE_I64, copy, f->n);
	if (f->src_at != LIR_NONE)
		at = emit2(l, LOP_ADD, LTYPE_I64, at, f->src_at);
	return emit2(l, LOP_ADD, LTYPE_I64, offset, at);
}

uint32_t buffer_element(Lowering *l, uint32_t b, uint32_t row, uint32_t c)
{
	const Storage *st = &l->storage[b];
	if (st->by_output)
		return emit2(l, LOP_ADD, LTYPE_I64, emit2(l, LOP_MUL, LTYPE_I64, c, st->rows), row);
	return emit2(l, LOP_ADD, LTYPE_I64, emit2(l, LOP_MUL, LTYPE_I64, row, const_i64(l, l->m->buffers[b].outputs)), c);
}

/* Whether some buffer of m privatises buffer b (its copies fold into b element by element). */
static bool privatised(const MModule *m, uint32_t b)
{
	for (uint32_t i = 0; i < m->num_buffers; i++)
		if (m->buffers[i].of == b)
			return true;
	return false;
}

/*
 * Whether f's trees add leaf vectors (several outputs a leaf) that the reduce takes a
 * row's vector at a time rather than output by output from tables (lower_reduce_outputs:
 * the representation's leaf_tables, for its deepest trees, or walks from bins).
 */
static bool vectors_by_row(const Lowering *l)
{
	uint32_t widest = 0, shallowest, deepest;
	for (uint32_t t = 0; t < l->f->num_trees; t++)
		widest = l->f->trees[t].width > widest ? l->f->trees[t].width : widest;
	if (widest < 2)
		return false;
	hir_leaf_depth_range(l->f, &shallowest, &deepest);
	return !l->layout.byte_tops && (!l->rep->leaf_tables || !l->rep->leaf_tables(&l->layout, deepest, true));
}

/* buffer: give MIR buffer b its storage (a copy per lane inside a loop interleaved over rows). */
void lower_buffer(Lowering *l, uint32_t b)
{
	const MBuffer *buf = &l->m->buffers[b];
	Storage *st = &l->storage[b];
	uint64_t per_row = (uint64_t)buf->copies * buf->outputs;
	uint32_t lanes = l->scope.lanes_are_trees ? 1 : l->scope.lanes;

	st->per_lane = lanes > 1;
	/*
	 * Margins output by output: a tree adds to one output of each row, so the rows walked
	 * side by side add to neighbouring elements (one or two cache lines, and vector adds)
	 * rather than to one line each, a row's outputs apart. A lone row's trees then add to
	 * a line each, which costs a lone row about as much as it saves (measured:
	 * docs/performance-notes.md, Margins output by output; docs/schedules.md: Reductions).
	 * Not for buffers with copies or privatised by copies, which fold element by element,
	 * nor where trees add leaf vectors a row at a time (vectors_by_row): a row's vector
	 * then adds to its outputs side by side (CatBoost's depth 8 of 10 classes 2.25 ->
	 * 1.77 µs a row at 4096 rows), nor where trees walk by leaf masks (RepLayout.leaf_masks:
	 * LightGBM's multiclass defaults 8-15% faster row by row, where XGBoost's node walks
	 * of 100 classes were 2-6% slower; measured: docs/performance-notes.md, Leaf vectors
	 * a row at a time).
	 */
	st->by_output = buf->outputs > 1 && buf->copy_var == HIR_NONE && buf->of == MIR_NONE && !privatised(l->m, b) &&
	                !vectors_by_row(l) && !l->layout.leaf_masks;
	if (buf->rows == MIR_ROWS_ALL) {
		/* hir_to_mir and mir_interleave put no buffer of all rows inside an interleaved loop. */
		if (st->per_lane)
			die("mir_to_lir: a buffer of all rows inside an interleaved loop");
		/* A body lowered twice (ifComplete) declares its buffers twice: they keep their first place. */
		if (!st->workspace_at) {
			st->workspace_at = l->workspace_elems + 1;
			l->workspace_elems += per_row;
		}
		st->base[0] = l->workspace;
		st->rows = l->num_rows;
		st->offset = emit2(l, LOP_MUL, LTYPE_I64, l->num_rows, const_i64(l, (int64_t)st->workspace_at - 1));
		return;
	}
	LSpace space = l->gpu.on ? l->gpu.hooks->buffer_space(l, b) : buf->space == MSPACE_SHARED ? LSPACE_SHARED : LSPACE_PRIVATE;
	int64_t size = (int64_t)(per_row * (uint64_t)buf->rows);
	for (uint32_t r = 0; r < lanes; r++) {
		if (space == LSPACE_BLOCK && (l->gpu.bound & GPU_BLOCK_BITS)) {
			st->base[r] = l->gpu.hooks->block_copy(l, size);
			continue;
		}
		st->base[r] = lir_local_array(&l->b, l->acc_type, size, space);
	}
	st->rows = const_i64(l, buf->rows);
	st->offset = const_i64(l, 0);
}

/* Outputs init writes one by one; more are written by a loop. */
#define INIT_UNROLLED 16

/* init: every row of every copy of buffer b gets its starting margins (or the identity). */
void lower_init(Lowering *l, uint32_t b)
{
	const MBuffer *buf = &l->m->buffers[b];
	const Storage *st = &l->storage[b];
	bool one = buf->rows == 1 && buf->copies == 1;
	for (uint32_t r = 0; r < (st->per_lane ? l->scope.lanes : 1); r++) {
		uint32_t row = const_i64(l, 0), base = lower_storage_base(l, b, r);
		if (!one) {
			uint32_t rows = emit2(l, LOP_MUL, LTYPE_I64, st->rows, const_i64(l, buf->copies));
			uint32_t from = const_i64(l, 0), by = const_i64(l, 1);
			/*
			 * A buffer of a tile of rows: only those before the batch's end, which are all
			 * that walks and transforms touch, which spares a short batch the rest
			 * (measured: docs/performance-notes.md, Buffers of a tile of rows).
			 */
			if (buf->copies == 1 && buf->rows != MIR_ROWS_ALL && buf->base.num_terms && !st->per_lane) {
				uint32_t left = emit2(l, LOP_SUB, LTYPE_I64, l->rows_end, lower_index(l, &buf->base, 0));
				rows = emit2(l, LOP_MIN, LTYPE_I64, rows, left);
			}
			row = lir_begin(&l->b, LOP_FOR, from, rows, by);
		}
		/* A few outputs written one by one, more by a loop: code grows with the lanes, not lanes x outputs. */
		bool looped = buf->outputs > INIT_UNROLLED;
		uint32_t first = looped ? lir_begin(&l->b, LOP_FOR, const_i64(l, 0), const_i64(l, buf->outputs), const_i64(l, 1)) : LIR_NONE;
		for (uint32_t c = 0; c < (looped ? 1 : buf->outputs); c++) {
			uint32_t at = buffer_element(l, b, row, looped ? first : const_i64(l, c)), value;
			at = emit2(l, LOP_ADD, LTYPE_I64, st->offset, at);
			/* The base score is data (loaded), so models that differ only in it share their code (target/cache.c). */
			if (buf->zero || l->f->aggregate != HAGGREGATE_SUM)
				value = lir_const_float(&l->b, l->acc_type, aggregate_identity(l->f));
			else
				value = emit2(l, LOP_LOAD, l->acc_type, l->base_scores, looped ? first : const_i64(l, c));
			lir_emit(&l->b, LOP_STORE, LTYPE_VOID, base, at, value);
		}
		if (looped)
			lir_end(&l->b);
		if (!one)
			lir_end(&l->b);
	}
}

/* The LIR operation of reduction operator op: fadd, fmin or fmax. */
LOp reduce_lop(uint8_t op) { return op == MREDUCE_MIN ? LOP_FMIN : op == MREDUCE_MAX ? LOP_FMAX : LOP_FADD; }

/*
 * base[at] op= value, as strategy says, where live (i1; LIR_NONE: always). A plain
 * reduction keeps base[at] with a select rather than a branch: LLVM would sink a walk
 * whose value only a branch uses into it, and the lanes' walks would run one after
 * another instead of side by side.
 */
static void reduce_into(Lowering *l, const MInst *inst, uint32_t base, uint32_t at, uint32_t value, uint32_t live)
{
	uint32_t old;
	if (inst->strategy == MSTRATEGY_ATOMIC) {
		uint32_t atomic;
		if (live != LIR_NONE)
			lir_begin(&l->b, LOP_IF, live, LIR_NONE, LIR_NONE);
		atomic = lir_emit(&l->b, LOP_ATOMIC, LTYPE_VOID, base, at, value);
		l->b.fn->insts[atomic].sub = inst->reduce_op == MREDUCE_MIN ? LATOMIC_MIN : inst->reduce_op == MREDUCE_MAX ? LATOMIC_MAX : LATOMIC_ADD;
		if (live != LIR_NONE)
			lir_end(&l->b);
		return;
	}
	old = emit2(l, LOP_LOAD, l->acc_type, base, at);
	value = emit2(l, reduce_lop(inst->reduce_op), l->acc_type, old, value);
	if (live != LIR_NONE)
		value = lir_emit(&l->b, LOP_SELECT, l->acc_type, live, value, old);
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, base, at, value);
}

/* Whether reduce inst may add its lanes' values as one vector into consecutive elements (reduce_vector, reduce_outputs). */
static bool lanes_reduce_whole(const Lowering *l, const MInst *inst)
{
	const Storage *st = &l->storage[inst->buf];
	const MBuffer *buf = &l->m->buffers[inst->buf];
	return l->scope.masked == LIR_NONE && !l->scope.lanes_are_trees && inst->strategy != MSTRATEGY_ATOMIC &&
	       inst->reduce_op == MREDUCE_SUM && !st->per_lane && buf->copy_var == HIR_NONE && l->scope.lane_step == 1 &&
	       mir_index_has(&inst->row, l->scope.lane_var) && (st->by_output || buf->outputs == 1);
}

/* The lanes' margins, consecutive from slot `at` of storage st (lane 0's), += v, a vector. */
static void add_lanes(Lowering *l, const Storage *st, uint32_t at, uint32_t v)
{
	uint8_t lanes = (uint8_t)l->scope.lanes;
	uint32_t old = lir_emit_vector(&l->b, LOP_LOAD, l->acc_type, lanes, st->base[0], at, LIR_NONE);
	v = lir_emit_vector(&l->b, LOP_FADD, l->acc_type, lanes, old, v, LIR_NONE);
	lir_emit_vector(&l->b, LOP_STORE, LTYPE_VOID, lanes, st->base[0], at, v);
}

/*
 * A reduce whose lanes' values are one vector (a code walk of rows side by side) into
 * consecutive elements (the lanes' rows one after another, one output a row or the
 * buffer output by output): one vector load, add and store, each lane's sum as its own.
 */
static bool reduce_vector(Lowering *l, const MInst *inst)
{
	uint32_t v = l->lanes_value[inst->b];
	if (v == LIR_NONE || l->tree_widths != LIR_NONE || !lanes_reduce_whole(l, inst))
		return false;
	add_lanes(l, &l->storage[inst->buf], buffer_slot(l, inst->buf, 0, &inst->row, tree_output(l, l->tree_index[lane_slot(inst->a, 0)])), v);
	return true;
}

/* The width of every tree of f where they have one, else 0. */
static uint32_t forest_width(const HForest *f)
{
	for (uint32_t t = 1; t < f->num_trees; t++)
		if (f->trees[t].width != f->trees[0].width)
			return 0;
	return f->num_trees ? f->trees[0].width : 0;
}

/*
 * The reduce takes a walk's leaves output by output (reduce_outputs) where every tree has
 * the same width, of at most UNROLLED_OUTPUTS: the outputs one after another, from the
 * lanes' nodes loaded once. LLVM makes a table's picks permutes only where they and the
 * nodes lie in one block (in a loop over the outputs, the nodes hoisted out of it, it
 * took each lane apart).
 */
#define UNROLLED_OUTPUTS 256

bool lower_reduce_outputs(const Lowering *l, uint32_t walk, uint32_t levels)
{
	const MInst *inst = NULL;
	uint32_t width;
	if (l->tree_widths == LIR_NONE || (levels && (!l->rep->leaf_tables || !l->rep->leaf_tables(&l->layout, levels, true))) ||
	    l->acc_type != l->layout.leaf_type || (width = forest_width(l->f)) < 2 || width > UNROLLED_OUTPUTS)
		return false;
	for (uint32_t id = l->m->insts[walk].next; id != MIR_NONE && !inst; id = l->m->insts[id].next)
		if (l->m->insts[id].op == MOP_REDUCE && l->m->insts[id].b == walk)
			inst = &l->m->insts[id];
	return inst && (!levels || lanes_reduce_whole(l, inst)); /* (walks from bins: their lanes apart where not whole) */
}

/*
 * A reduce of a walk whose reduce takes its leaves output by output (TopLeaves): for each
 * element k of the trees' vectors, the lanes' k-th elements as one vector (leaf_values,
 * bin_leaves) into output c + k of their rows, at once where the lanes' margins lie side
 * by side (lanes_reduce_whole), else lane by lane.
 */
static void reduce_outputs(Lowering *l, const MInst *inst)
{
	const TopLeaves *t = &l->top_leaves[inst->b];
	uint32_t tree = l->tree_index[lane_slot(inst->a, 0)], c = tree_output(l, tree), width = forest_width(l->f), at, v, nodes;
	uint32_t values[MIR_MAX_INTERLEAVE];
	bool whole = lanes_reduce_whole(l, inst);
	nodes = lir_emit_vector(&l->b, LOP_LOAD, t->bins ? LTYPE_I8 : LTYPE_I32, (uint8_t)l->scope.lanes, t->nodes, const_i64(l, 0),
	                        LIR_NONE);
	for (uint32_t k = 0; k < width; k++) {
		v = t->bins ? l->rep->bin_leaves(&l->layout, &l->b, t->tree, nodes, k)
		            : l->rep->leaf_values(&l->layout, &l->b, t->tree, t->levels, l->scope.lanes, nodes, const_i64(l, k));
		at = k ? emit2(l, LOP_ADD, LTYPE_I64, c, const_i64(l, k)) : c;
		if (whole) {
			add_lanes(l, &l->storage[inst->buf], buffer_slot(l, inst->buf, 0, &inst->row, at), v);
			continue;
		}
		lower_lanes_apart(l, v, l->scope.lanes, values);
		for (uint32_t r = 0; r < l->scope.lanes; r++)
			reduce_into(l, inst, lower_storage_base(l, inst->buf, r), buffer_slot(l, inst->buf, r, &inst->row, at), values[r],
			            lane_live(l, r));
	}
}

/*
 * Elements a leaf vector adds at a time to its row's margins (lower_reduce): a scalar add
 * an element took a 10,000-target forest's whole time (measured: docs/performance-notes.md,
 * Leaf vectors a span at a time).
 */
#define SPAN_LANES 16

/* dst[dst_at + j] op= src[src_at + j] for j in [begin, end), `lanes` elements at a time. */
static void add_span(Lowering *l, uint8_t op, uint32_t dst, uint32_t dst_at, uint32_t src, uint32_t src_at, uint32_t begin,
                     uint32_t end, uint8_t lanes)
{
	uint32_t j = lir_begin(&l->b, LOP_FOR, begin, end, const_i64(l, lanes));
	uint32_t d = emit2(l, LOP_ADD, LTYPE_I64, dst_at, j), s = emit2(l, LOP_ADD, LTYPE_I64, src_at, j);
	uint32_t x = lir_emit_vector(&l->b, LOP_LOAD, l->acc_type, lanes, dst, d, LIR_NONE);
	uint32_t y = lir_emit_vector(&l->b, LOP_LOAD, l->acc_type, lanes, src, s, LIR_NONE);
	lir_emit_vector(&l->b, LOP_STORE, LTYPE_VOID, lanes, dst, d, lir_emit_vector(&l->b, reduce_lop(op), l->acc_type, lanes, x, y, LIR_NONE));
	lir_end(&l->b);
}

/*
 * The leaf vectors' width where every tree's is the same (CatBoost's classes), else 0: a
 * row adds its tree's vector as one vector of that many lanes, not in a loop of runtime
 * trips (with AVX2, where its leaves are not in tables, a CatBoost classifier of 10
 * classes took 4.86 -> 1.61 µs a row at 4096 rows: docs/performance-notes.md, Leaf
 * vectors a row at a time).
 */
static uint32_t shared_width(const HForest *f)
{
	uint32_t width = f->num_trees ? f->trees[0].width : 0;
	for (uint32_t t = 1; t < f->num_trees && width; t++)
		width = f->trees[t].width == width ? width : 0;
	return width;
}

bool lower_stride_one(const Lowering *l, uint32_t stride)
{
	return stride == LIR_NONE || (l->b.fn->insts[stride].op == LOP_CONST && l->b.fn->insts[stride].imm == 1);
}

/*
 * reduce: combine each lane's leaf into its row's margins for the tree's outputs, in
 * lane order (tree order when the lanes are trees: sums round as XGBoost's); a masked
 * lane adds nothing. Where trees have leaf vectors, a leaf's value is the index of its
 * vector.
 */
void lower_reduce(Lowering *l, const MInst *inst)
{
	if (l->top_leaves[inst->b].nodes != LIR_NONE) {
		reduce_outputs(l, inst);
		return;
	}
	if (reduce_vector(l, inst))
		return;
	uint32_t shared = l->tree_widths != LIR_NONE ? shared_width(l->f) : 0;
	for (uint32_t r = 0; r < l->scope.lanes; r++) {
		uint32_t tree = l->tree_index[lane_slot(inst->a, r)], c = tree_output(l, tree), base = lower_storage_base(l, inst->buf, r);
		uint32_t value = l->value[lane_slot(inst->b, r)], live = lane_live(l, r), width, first, k;
		if (l->tree_widths == LIR_NONE) {
			reduce_into(l, inst, base, buffer_slot(l, inst->buf, r, &inst->row, c), value, live);
			continue;
		}
		width = lir_cast(&l->b, LCAST_SEXT, LTYPE_I64, emit2(l, LOP_LOAD, LTYPE_I32, l->tree_widths, tree));
		if (live != LIR_NONE) /* a masked lane's vector is empty */
			width = lir_emit(&l->b, LOP_SELECT, LTYPE_I64, live, width, const_i64(l, 0));
		first = lir_cast(&l->b, LCAST_FPTOSI, LTYPE_I64, value);
		const Storage *st = &l->storage[inst->buf];
		if (lower_stride_one(l, st->by_output ? st->rows : LIR_NONE) && inst->strategy != MSTRATEGY_ATOMIC && !l->gpu.on) {
			/* the vector into the row's consecutive margins, SPAN_LANES elements at a time, then the rest */
			uint32_t at = buffer_slot(l, inst->buf, r, &inst->row, c), whole = emit2(l, LOP_AND, LTYPE_I64, width, const_i64(l, -SPAN_LANES));
			if (shared > 1 && shared < SPAN_LANES && live == LIR_NONE) { /* one vector of the width every tree has */
				add_span(l, inst->reduce_op, base, at, l->layout.vectors, first, const_i64(l, 0), const_i64(l, shared),
				         (uint8_t)shared);
				continue;
			}
			add_span(l, inst->reduce_op, base, at, l->layout.vectors, first, const_i64(l, 0), whole, SPAN_LANES);
			add_span(l, inst->reduce_op, base, at, l->layout.vectors, first, whole, width, 1);
			continue;
		}
		k = const_i64(l, 0);
		k = lir_begin(&l->b, LOP_FOR, k, width, const_i64(l, 1));
		value = emit2(l, LOP_LOAD, l->acc_type, l->layout.vectors, emit2(l, LOP_ADD, LTYPE_I64, first, k));
		reduce_into(l, inst, base, buffer_slot(l, inst->buf, r, &inst->row, emit2(l, LOP_ADD, LTYPE_I64, c, k)), value, LIR_NONE);
		lir_end(&l->b);
	}
}

/* reduceDimension: fold the copies of the privatised buffer into its target, copy by copy (a fixed order: the same sums every run); per lane where the buffers are. */
void lower_reduce_dim(Lowering *l, const MInst *inst)
{
	const MBuffer *src = &l->m->buffers[inst->src];
	const Storage *from = &l->storage[inst->src];
	for (uint32_t r = 0; r < (from->per_lane ? l->scope.lanes : 1); r++) {
		uint32_t dst_base = lower_storage_base(l, inst->buf, r), src_base = lower_storage_base(l, inst->src, r);
		FoldSpan f = fold_span(l, inst, r);
		uint32_t zero = const_i64(l, 0), copies = const_i64(l, src->copies), one = const_i64(l, 1);
		uint32_t copy = lir_begin(&l->b, LOP_FOR, zero, copies, one);
		uint32_t src_at = fold_copy(l, &f, from->offset, copy);
		if (inst->strategy == MSTRATEGY_VECTOR && inst->vector > 1) {
			uint32_t width = const_i64(l, inst->vector);
			uint32_t whole = emit2(l, LOP_MUL, LTYPE_I64, emit2(l, LOP_SDIV, LTYPE_I64, f.count, width), width);
			add_span(l, inst->reduce_op, dst_base, f.dst_at, src_base, src_at, zero, whole, (uint8_t)inst->vector);
			add_span(l, inst->reduce_op, dst_base, f.dst_at, src_base, src_at, whole, f.count, 1);
		} else {
			add_span(l, inst->reduce_op, dst_base, f.dst_at, src_base, src_at, zero, f.count, 1);
		}
		lir_end(&l->b);
	}
}
