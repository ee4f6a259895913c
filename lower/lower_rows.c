/*
 * Rows on the host's stack: cache(v)'s copy of the rows a batch loop's iteration
 * covers, and the lanes of rows side by side that may run past the batch's last row
 * where they read that copy.
 */
#include "lower/lowering.h"

#include <stdlib.h>

void lower_cache_consecutive(Lowering *l, const MInst *inst)
{
	const char *what = inst->loop & MLOOP_TREES ? "tree" : "row";
	if (l->m->loops[inst->var].rows == MIR_ROWS_ALL) /* (hir_to_mir) */
		lower_fail_at(l, inst->var, HDIR_CACHE, "an iteration's %ss are not consecutive: a loop inside takes every step-th %s (a tile's inner loop outside its outer one); cache a loop whose iterations cover consecutive %ss",
		              what, what, what);
}

uint32_t lower_cached_elements(Lowering *l, int64_t count, uint32_t *first)
{
	uint32_t last, elems;
	*first = lower_index(l, &l->scope.rows, 0);
	last = emit2(l, LOP_ADD, LTYPE_I64, *first, const_i64(l, count));
	last = emit2(l, LOP_MIN, LTYPE_I64, last, l->rows_end);
	elems = emit2(l, LOP_SUB, LTYPE_I64, last, *first);
	return emit2(l, LOP_MUL, LTYPE_I64, elems, const_i64(l, l->f->num_features));
}

uint32_t lower_rows_array(Lowering *l, LType type, int64_t rows, int64_t width, LSpace space)
{
	int64_t elements = rows * width;
	return lir_local_array(&l->b, type, elements > 0 ? elements : 1, space);
}

void lower_category_keys(Lowering *l, uint32_t first, uint32_t end)
{
	const HForest *f = l->f;
	bool *categories = xcalloc(f->num_features ? f->num_features : 1, sizeof *categories); /* per feature: IN splits test it */
	uint32_t at, from, x, key;
	for (uint64_t i = 0; i < f->num_nodes; i++)
		if (f->nodes[i].feature != HIR_LEAF && f->nodes[i].compare == HCMP_IN)
			categories[f->nodes[i].feature] = true;
	at = lir_begin(&l->b, LOP_FOR, first, end, const_i64(l, f->num_features));
	from = emit2(l, LOP_SUB, LTYPE_I64, at, first);
	for (uint32_t j = 0; j < f->num_features; j++) {
		if (!categories[j])
			continue;
		x = emit2(l, LOP_LOAD, l->row_type, l->rows, emit2(l, LOP_ADD, LTYPE_I64, at, const_i64(l, j)));
		key = rep_emit_category_key(&l->layout, &l->b, l->block.key_type, x);
		lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->block.key_rows, emit2(l, LOP_ADD, LTYPE_I64, from, const_i64(l, j)), key);
	}
	lir_end(&l->b);
	free(categories);
}

/* i64: where element `at` (i64: o x features + f) of rows as they come lies in a copy column by column of `rows` rows. */
static uint32_t column_at(Lowering *l, uint32_t at, int64_t rows)
{
	uint32_t width = const_i64(l, l->f->num_features), o, f, to;
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	o = emit2(l, LOP_SDIV, LTYPE_I64, at, width);
	f = emit2(l, LOP_MUL, LTYPE_I64, o, width);
	f = emit2(l, LOP_SUB, LTYPE_I64, at, f);
	to = emit2(l, LOP_MUL, LTYPE_I64, f, const_i64(l, rows));
	return emit2(l, LOP_ADD, LTYPE_I64, to, o);
}

/*
 * cache(v) of a batch loop on the host: each iteration copies the `count` rows it
 * covers to the stack, one pass in order, and its walks read the copy. A walk reads a
 * row's features in no order the hardware prefetcher follows, so rows that come from
 * memory are each fetched a line at a time at the latency of memory; the copy streams
 * them instead. Where NaN reads as 0 (RepLayout.nan_reads_zero) the copy makes it 0.
 *
 * Where rows walk side by side in vectors (RepLayout.lanes), the copy is column by
 * column (Lowering.row_cache_rows): the lanes' values of a feature are then one load,
 * where rows as they come take one per lane. It has MIR_WALK_LANES - 1 rows more, and
 * as many after the batch's last row are zeros, for lanes past the end
 * (lower_lanes_past_end).
 */
void lower_copy_rows(Lowering *l, const MInst *inst, int64_t count)
{
	int64_t bytes = count * (int64_t)l->f->num_features * (int64_t)lir_type_size(l->row_type);
	int64_t rows = l->layout.lanes ? count + MIR_WALK_LANES - 1 : count;
	uint32_t width = const_i64(l, l->f->num_features), first, from, copy, elems, zero, one, at, x;
	if (bytes > LOWER_ROW_CACHE_BYTES)
		lower_fail_at(l, inst->var, HDIR_CACHE, "%lld rows of %u features take %lld bytes, more than the %u a copy on a thread's stack may take; cache fewer rows",
		           (long long)count, l->f->num_features, (long long)bytes, LOWER_ROW_CACHE_BYTES);
	else if (l->row_cache != LIR_NONE)
		lower_fail_at(l, inst->var, HDIR_CACHE, "a loop around it caches its rows already");
	if (l->failed)
		return;
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	elems = lower_cached_elements(l, count, &first);
	from = emit2(l, LOP_MUL, LTYPE_I64, first, width);
	copy = lower_rows_array(l, l->row_type, rows, l->f->num_features, LSPACE_PRIVATE);
	zero = const_i64(l, 0);
	one = const_i64(l, 1);
	at = lir_begin(&l->b, LOP_FOR, zero, elems, one);
	x = emit2(l, LOP_ADD, LTYPE_I64, from, at);
	x = emit2(l, LOP_LOAD, l->row_type, l->rows, x);
	if (l->layout.nan_reads_zero) {
		uint32_t nan = lir_cmp(&l->b, LOP_FCMP, LCMP_UNO, x, x), zero_x = lir_const_float(&l->b, l->row_type, 0.0);
		x = lir_emit(&l->b, LOP_SELECT, l->row_type, nan, zero_x, x);
	}
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, copy, l->layout.lanes ? column_at(l, at, rows) : at, x);
	lir_end(&l->b);
	if (l->layout.lanes) { /* lanes from the last row on reach MIR_WALK_LANES - 1 rows past it */
		uint32_t end = emit2(l, LOP_ADD, LTYPE_I64, elems, const_i64(l, (MIR_WALK_LANES - 1) * (int64_t)l->f->num_features));
		end = emit2(l, LOP_MIN, LTYPE_I64, end, const_i64(l, rows * l->f->num_features));
		at = lir_begin(&l->b, LOP_FOR, elems, end, one);
		x = lir_const_float(&l->b, l->row_type, 0.0);
		lir_emit(&l->b, LOP_STORE, LTYPE_VOID, copy, column_at(l, at, rows), x);
		lir_end(&l->b);
	}
	l->row_cache = copy;
	l->row_cache_first = first;
	l->row_cache_rows = l->layout.lanes ? rows : 0;
}

/*
 * cache(v, prefetch) of a batch loop on the host (the papers' CPU cache): each iteration
 * prefetches the lines of the `count` rows it covers, in order, before its walks, which
 * read the rows where they are. The lines come at once rather than each at a walk's
 * first read of it, and nothing is copied.
 */
void lower_prefetch_rows(Lowering *l, int64_t count)
{
	int64_t per_line = 64 / (int64_t)lir_type_size(l->row_type);
	uint32_t first, end, last, past, at;
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	end = lower_cached_elements(l, count, &first);
	first = emit2(l, LOP_MUL, LTYPE_I64, first, const_i64(l, l->f->num_features));
	end = emit2(l, LOP_ADD, LTYPE_I64, first, end);
	last = emit2(l, LOP_SUB, LTYPE_I64, end, const_i64(l, 1));
	past = emit2(l, LOP_ADD, LTYPE_I64, end, const_i64(l, per_line - 1)); /* a line less than past: the last one's too */
	at = lir_begin(&l->b, LOP_FOR, first, past, const_i64(l, per_line));
	at = emit2(l, LOP_MIN, LTYPE_I64, at, last);
	lir_emit(&l->b, LOP_PREFETCH, l->row_type, l->rows, at, LIR_NONE);
	lir_end(&l->b);
}

/*
 * Whether the list first writes only buffers on the stack (whose rows reach past every
 * lane: hir_to_mir), and rows' transforms where `transforms` (lower_padded_row).
 */
static bool writes_only_stack(const MModule *m, uint32_t first, bool transforms)
{
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		const MInst *inst = &m->insts[id];
		switch ((MOp)inst->op) {
		case MOP_FOR:
			if (!writes_only_stack(m, inst->body, transforms))
				return false;
			break;
		case MOP_TRANSFORM:
			if (!transforms)
				return false;
			break;
		case MOP_GET_TREE:
		case MOP_WALK: break;
		case MOP_BUFFER:
		case MOP_INIT:
		case MOP_REDUCE:
			if (m->buffers[inst->buf].rows == MIR_ROWS_ALL)
				return false;
			break;
		default: return false;
		}
	}
	return true;
}

bool lower_lanes_past_end(const Lowering *l, const MInst *loop)
{
	return l->row_cache != LIR_NONE && l->row_cache_rows && l->block.key_rows == LIR_NONE && writes_only_stack(l->m, loop->body, false);
}

/* Whether rows padded to a multiple of `lanes` fill tiles of TOP_LANES rows: lanes dividing it, or a multiple of it. */
static bool tiles_lanes(int64_t lanes) { return TOP_LANES % lanes == 0 || lanes % TOP_LANES == 0; }

/* Whether every walk in the list first (and the lists inside) has lane 0's row at a tile's start (lower_walk_at_tile). */
static bool walks_at_tile(const Lowering *l, uint32_t first)
{
	for (uint32_t id = first; id != MIR_NONE; id = l->m->insts[id].next) {
		const MInst *inst = &l->m->insts[id];
		if ((inst->op == MOP_FOR && !walks_at_tile(l, inst->body)) || (inst->op == MOP_WALK && !lower_walk_at_tile(l, inst)))
			return false;
	}
	return true;
}

/*
 * Whether lanes of rows may transform their rows in a padded run (lower_padded_row):
 * symmetric trees of one output. Walks node by node of forests left without tiles of
 * trees, the only others whose rows' lanes transform, are small and short, their rows
 * one at a time nearly as fast as a tile's, and padded they were slower as often as
 * faster (measured: docs/performance-notes.md, Padded tiles of symmetric trees).
 */
static bool lanes_transform(const Lowering *l) { return l->f->num_outputs == 1 && l->rep->levels; }

uint32_t lower_lanes_run(Lowering *l, const MInst *loop, uint32_t begin, uint32_t end, int64_t span, bool past)
{
	/* Padded keys (BlockScope.key_padded, made only on the host) past the rows, to a multiple of lanes (tiles_lanes). */
	bool padded = !past && span == loop->interleave && l->block.key_padded && tiles_lanes(span) &&
	              walks_at_tile(l, loop->body) && writes_only_stack(l->m, loop->body, lanes_transform(l));
	bool short_run = padded && l->pad_rows < span; /* (a run of fewer rows than lanes) */
	uint32_t left;
	if (past)
		return lir_const_int(&l->b, LTYPE_I1, 1);
	left = emit2(l, LOP_SUB, LTYPE_I64, end, begin);
	if (short_run)
		l->lanes_left = left;
	return lir_cmp(&l->b, LOP_ICMP, padded ? LCMP_SGE : LCMP_EQ, left, const_i64(l, short_run ? l->pad_rows : span));
}

uint32_t lower_padded_row(Lowering *l, uint32_t lane, uint32_t row, uint32_t *scratch)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	uint32_t real = lir_cmp(&l->b, LOP_ICMP, LCMP_SGT, l->lanes_left, const_i64(l, lane));
	if (*scratch == LIR_NONE)
		*scratch = lir_local_array(&l->b, LTYPE_F64, 2, LSPACE_PRIVATE);
	l->out = lir_emit(&l->b, LOP_SELECT, LTYPE_PTR, real, l->out, *scratch);
	return lir_emit(&l->b, LOP_SELECT, LTYPE_I64, real, row, const_i64(l, 0));
}

static int64_t rows_lanes(const MModule *m, uint32_t first, bool transforms)
{
	int64_t most = 1, inner;
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		const MInst *inst = &m->insts[id];
		if (inst->op != MOP_FOR)
			continue;
		if (!(inst->loop & MLOOP_TREES) && inst->interleave > most && tiles_lanes(inst->interleave) &&
		    writes_only_stack(m, inst->body, transforms))
			most = inst->interleave;
		inner = rows_lanes(m, inst->body, transforms);
		most = inner > most ? inner : most;
	}
	return most;
}

int64_t lower_rows_lanes(const Lowering *l, uint32_t first) { return rows_lanes(l->m, first, lanes_transform(l)); }
