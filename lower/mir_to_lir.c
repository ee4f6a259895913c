/*
 * MIR -> LIR: loops become FOR / PARALLEL_FOR over i64 offsets, walks become a LOOP
 * over the representation's node hooks, buffers become storage, reductions loads and
 * stores (or atomic adds) on it, and the post-transform scalar code (lower/mir_transform.c).
 *
 * The entry function is
 *   predict(ptr rows, i64 nrows, ptr out, i32 flags, ptr workspace)
 * and forests that compare in double have a second, predict_f64, whose rows are doubles.
 * A buffer of a bounded number of rows is a LOCAL_ARRAY of the code that declares it
 * (SHARED when parallel loops inside write it), so a prediction whose schedule keeps
 * its margins in tiles allocates nothing. A buffer of all N rows lives in the caller's
 * workspace (LModule.workspace_per_row), at an offset of N times the per-row size of
 * the workspace buffers before it. Elements are addressed [copy][row][output].
 *
 * Interleaved loops run `lanes` rows (or trees) per iteration: every operation inside
 * is emitted once per lane, lane r seeing the interleaved variable's value plus r
 * steps. A buffer declared inside a loop interleaved over rows has a copy per lane.
 *
 * This file holds the module driver, the loops and the dispatch of instructions; walks
 * are lowered in lower/lower_walks.c, buffers and reductions in lower/lower_buffers.c,
 * ifComplete and the keys it makes in lower/lower_keys.c.
 */
#include "lower/cost.h"
#include "lower/lowering.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Walks handed to a thread at once by a parallel loop, at least; smaller loops stay on the caller. */
#define BATCH_GRAIN 64


/* The first error of the lowering, about var's directive (-1: its loop; var -1: no place). */
__attribute__((format(printf, 4, 0))) static void fail_v(Lowering *l, int32_t var, int32_t directive, const char *fmt, va_list ap)
{
	char what[1024];
	if (l->failed)
		return;
	vsnprintf(what, sizeof what, fmt, ap);
	error_set(l->e, "%s", what);
	l->e->place = var < 0 ? 0 : (uint32_t)var + 1;
	l->e->place_directive = directive;
	l->failed = true;
}

void lower_fail(Lowering *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fail_v(l, -1, -1, fmt, ap);
	va_end(ap);
}

void lower_fail_at(Lowering *l, int32_t var, int32_t directive, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fail_v(l, var, directive, fmt, ap);
	va_end(ap);
}

/* What combines with a margin to leave it as it is: +inf for min, -inf for max, else 0. */
double aggregate_identity(const HForest *f)
{
	return f->aggregate == HAGGREGATE_MIN ? INFINITY : f->aggregate == HAGGREGATE_MAX ? -INFINITY : 0.0;
}

/* Where margin c starts: the base score for sums (which XGBoost adds first), else the identity (the base is added last). */
double margin_start(const HForest *f, uint32_t c)
{
	return f->aggregate == HAGGREGATE_SUM ? f->base_score[c] : aggregate_identity(f);
}

/* The value of var in lane `lane`: the interleaved variable's lanes step from its value. */
uint32_t lower_var_value(Lowering *l, int32_t var, uint32_t lane)
{
	uint32_t v = l->var_value[var];
	if (lane && var == l->scope.lane_var)
		v = emit2(l, LOP_ADD, LTYPE_I64, v, const_i64(l, lane * l->scope.lane_step));
	return v;
}

/* The i64 sum of the index variables of index (0 if none) in lane `lane`, leaving out those of skip. */
uint32_t lower_index_except(Lowering *l, const MIndex *index, const MIndex *skip, uint32_t lane)
{
	uint32_t sum = LIR_NONE;
	int64_t known = 0; /* the sum of the terms that are constants (specialized loops) */
	for (uint32_t i = 0; i < index->num_terms; i++) {
		int32_t var = index->terms[i];
		uint32_t v;
		if (skip && mir_index_has(skip, var))
			continue;
		if (l->is_const[var]) {
			known += l->const_value[var];
			continue;
		}
		v = lower_var_value(l, var, lane);
		sum = sum == LIR_NONE ? v : emit2(l, LOP_ADD, LTYPE_I64, sum, v);
	}
	if (sum == LIR_NONE)
		return const_i64(l, known);
	return known ? emit2(l, LOP_ADD, LTYPE_I64, sum, const_i64(l, known)) : sum;
}

/* The row (or tree) number index stands for in lane `lane`. */
uint32_t lower_index(Lowering *l, const MIndex *index, uint32_t lane) { return lower_index_except(l, index, NULL, lane); }

/* Emit node x of a loop range expression (mir_loop_range) as an i64. */
uint32_t lower_expr(Lowering *l, const HRange *r, uint8_t x, uint32_t lane)
{
	const HExpr *n = &r->nodes[x];
	switch ((HExprOp)n->op) {
	case HEXPR_CONST: return const_i64(l, n->value);
	case HEXPR_ROWS: return l->rows_end;
	case HEXPR_VAR: return lower_var_value(l, n->var, lane);
	case HEXPR_ADD:
	case HEXPR_SUB:
	case HEXPR_MIN:
	case HEXPR_BELOW: {
		/* Operands in order (one declaration each): the numbering must not depend on the C compiler. */
		uint32_t a = lower_expr(l, r, n->a, lane);
		uint32_t b = lower_expr(l, r, n->b, lane);
		uint32_t below;
		if (n->op != HEXPR_BELOW)
			return emit2(l, n->op == HEXPR_ADD ? LOP_ADD : n->op == HEXPR_SUB ? LOP_SUB : LOP_MIN, LTYPE_I64, a, b);
		below = lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, a, b);
		return lir_emit(&l->b, LOP_SELECT, LTYPE_I64, below, a, const_i64(l, 0));
	}
	}
	die("bad range expression");
}


/*
 * cache(v) of a tree loop on the host: at the start of an iteration of v, prefetch the
 * `count` trees after this iteration's first: their nodes where rows walk them in a
 * block, else (one row at a time) the line each walk reads first, for a lone row's walk
 * prefetches its path two levels ahead (lower_node_walks) but waits for its root. A lone
 * row gains by its first lines; prefetching its whole trees costs it several times what
 * it saves.
 *
 * The rows of a block reach most lines of the trees they walk only where they are many:
 * a bounded block (ifComplete) of fewer than CACHE_TREES_MIN_ROWS rows prefetches none,
 * and the test is made at run time where the batch may end inside the block; few rows
 * prefetching whole trees lose (measured: docs/performance-notes.md, Prefetching the
 * next trees).
 */
#define CACHE_TREES_MIN_ROWS 128

static void prefetch_next_trees(Lowering *l, int64_t count, bool whole)
{
	bool block = whole && l->block.first != LIR_NONE;
	uint32_t first, span, one, tree, next, limit;
	if (!l->rep->prefetch_tree) {
		lower_fail(l, "cache of a tree loop: the %s representation keeps no trees in memory to prefetch", l->rep->name);
		return;
	}
	if (block && l->block.span < CACHE_TREES_MIN_ROWS)
		return;
	if (block) { /* the block's rows: min(first + span, end) - first */
		uint32_t rows = emit2(l, LOP_ADD, LTYPE_I64, l->block.first, const_i64(l, l->block.span));
		rows = emit2(l, LOP_MIN, LTYPE_I64, rows, l->rows_end);
		rows = emit2(l, LOP_SUB, LTYPE_I64, rows, l->block.first);
		lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_SGE, rows, const_i64(l, CACHE_TREES_MIN_ROWS)), LIR_NONE,
		          LIR_NONE);
	}
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	first = lower_index(l, &l->scope.trees, 0);
	span = const_i64(l, count);
	one = const_i64(l, 1);
	next = emit2(l, LOP_ADD, LTYPE_I64, first, span);
	limit = const_i64(l, l->f->num_trees);
	if (whole) {
		uint32_t last = emit2(l, LOP_MIN, LTYPE_I64, emit2(l, LOP_ADD, LTYPE_I64, next, span), limit);
		tree = lir_begin(&l->b, LOP_FOR, next, last, one);
	} else { /* where count trees follow (not before the last tile): a loop of count that LLVM unrolls into the tile's code */
		uint32_t end = emit2(l, LOP_ADD, LTYPE_I64, next, span), k;
		lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_SLE, end, limit), LIR_NONE, LIR_NONE);
		k = lir_begin(&l->b, LOP_FOR, const_i64(l, 0), span, one);
		tree = emit2(l, LOP_ADD, LTYPE_I64, next, k);
	}
	l->layout.walk_keys = l->block.key_rows != LIR_NONE; /* the walks read the key copy of the nodes */
	l->rep->prefetch_tree(&l->layout, &l->b, tree, whole);
	l->layout.walk_keys = false;
	lir_end(&l->b);
	if (!whole || block)
		lir_end(&l->b);
}

/* Whether the list first holds a loop over rows (directly or deeper). */
static bool batch_loop_in(const MModule *m, uint32_t first)
{
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next)
		if (m->insts[id].op == MOP_FOR &&
		    (!(m->insts[id].loop & MLOOP_TREES) || batch_loop_in(m, m->insts[id].body)))
			return true;
	return false;
}

/* Whether inst is a tree loop around batch loops: each of its iterations walks many rows. */
static bool over_rows_in_trees(const Lowering *l, const MInst *inst)
{
	return (inst->loop & MLOOP_TREES) && batch_loop_in(l->m, inst->body);
}

void lower_body(Lowering *l, const MInst *inst, uint32_t value, int64_t rows, uint32_t lanes, uint32_t masked)
{
	bool trees = inst->loop & MLOOP_TREES;
	LoopScope outer = l->scope;

	l->var_value[inst->var] = value;
	if (lanes) {
		l->scope.lanes = lanes;
		l->scope.lane_var = inst->var;
		l->scope.lanes_are_trees = trees;
		l->scope.lane_step = rows / lanes;
		l->scope.masked = masked;
	}
	if (trees)
		l->scope.trees.terms[l->scope.trees.num_terms++] = (int8_t)inst->var;
	else
		l->scope.rows.terms[l->scope.rows.num_terms++] = (int8_t)inst->var;
	if (inst->loop & (MLOOP_CACHE | MLOOP_PREFETCH))
		lower_cache_consecutive(l, inst);
	if ((inst->loop & MLOOP_CACHE) && l->gpu.on) {
		l->gpu.hooks->cache(l, inst, rows); /* lowers the body between the copy and the threads' last meeting */
	} else {
		uint32_t outer_cache = l->row_cache;
		int64_t outer_rows = l->row_cache_rows;
		if ((inst->loop & MLOOP_CACHE) && trees)
			prefetch_next_trees(l, rows, batch_loop_in(l->m, inst->body) || !lower_walks_lone_row(l));
		else if (inst->loop & MLOOP_PREFETCH)
			lower_prefetch_rows(l, rows);
		else if (inst->loop & MLOOP_CACHE)
			lower_copy_rows(l, inst, rows);
		lower_list(l, inst->body);
		l->row_cache = outer_cache;
		l->row_cache_rows = outer_rows;
	}
	l->scope = outer;
}

/*
 * A parallel loop over blocks of more rows than parallel_min_block takes smaller blocks
 * where the batch would leave threads without one: ceil(rows / threads) rounded up to
 * BLOCK_ROUND, at least parallel_min_block, at most the schedule's tile. Large tiles pay
 * where a forest's trees come from L3 for every block (measured:
 * docs/performance-notes.md, Parallel blocks), but a batch of 512 rows would be one block
 * of 1024 for one thread.
 */
#define PARALLEL_MIN_BLOCK 256
#define BLOCK_ROUND 16
/*
 * A block's walks (rows x trees) must outweigh the wake of a passive thread: blocks take
 * at least PARALLEL_MIN_WALKS / trees rows, rounded up to BLOCK_ROUND, at most
 * PARALLEL_MIN_BLOCK. A forest of 100 trees loses by splitting even 256 rows into two
 * blocks; forests of 1000 trees or more gain by splitting small batches into blocks of
 * PARALLEL_MIN_WALKS / trees rows; at 800 trees, 32 rows a block, it is about even
 * (measured: docs/performance-notes.md, Parallel blocks).
 */
#define PARALLEL_MIN_WALKS (256 * 100)

static int64_t parallel_min_block(const Lowering *l)
{
	int64_t rows = PARALLEL_MIN_WALKS / (l->f->num_trees ? l->f->num_trees : 1);
	rows = (rows + BLOCK_ROUND - 1) / BLOCK_ROUND * BLOCK_ROUND;
	return rows < BLOCK_ROUND ? BLOCK_ROUND : rows > PARALLEL_MIN_BLOCK ? PARALLEL_MIN_BLOCK : rows;
}

/* The rows of a block of the parallel loop over [begin, end) whose tile is `tile` rows (an i64 value), run by `threads` (i64). */
static uint32_t block_rows(Lowering *l, uint32_t begin, uint32_t end, int64_t tile, uint32_t threads)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	uint32_t least, rows;
	rows = emit2(l, LOP_SUB, LTYPE_I64, end, begin);
	rows = emit2(l, LOP_ADD, LTYPE_I64, rows, threads);
	rows = emit2(l, LOP_SUB, LTYPE_I64, rows, const_i64(l, 1));
	rows = emit2(l, LOP_SDIV, LTYPE_I64, rows, threads);
	rows = emit2(l, LOP_ADD, LTYPE_I64, rows, const_i64(l, BLOCK_ROUND - 1));
	rows = emit2(l, LOP_AND, LTYPE_I64, rows, const_i64(l, -BLOCK_ROUND));
	least = const_i64(l, parallel_min_block(l));
	rows = lir_emit(&l->b, LOP_SELECT, LTYPE_I64, lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, rows, least), least, rows);
	return emit2(l, LOP_MIN, LTYPE_I64, rows, const_i64(l, tile));
}

/*
 * Whether every walk in the list from id (and the lists inside) ends on a leaf without
 * testing for one: exact, every step safe (RepLayout.packed_leaves).
 */
static bool walks_end_on_leaves(const MModule *m, uint32_t id)
{
	for (; id != MIR_NONE; id = m->insts[id].next) {
		const MInst *inst = &m->insts[id];
		if ((inst->op == MOP_WALK && (!inst->exact || inst->peel_safe < inst->peel)) || !walks_end_on_leaves(m, inst->body))
			return false;
	}
	return true;
}

static bool interleaves_rows(const MModule *m, const MInst *inst)
{
	(void)m;
	return inst->op == MOP_FOR && inst->interleave > 1 && !(inst->loop & MLOOP_TREES);
}

/* Whether inst is a walk that may loop past its straight steps (not unrolled to its trees' depth). */
static bool walks_unevenly(const MModule *m, const MInst *inst) { (void)m; return inst->op == MOP_WALK && !inst->exact; }

static bool walks(const MModule *m, const MInst *inst) { (void)m; return inst->op == MOP_WALK; }

/* One loop of inst's variable over [begin, end) by step (a constant), each iteration's body in `lanes` lanes (0: not interleaved). */
void lower_loop(Lowering *l, const MInst *inst, uint32_t begin, uint32_t end, uint32_t step, uint32_t lanes, bool parallel)
{
	int64_t rows = l->b.fn->insts[step].imm; /* rows (or trees) per iteration, at most */
	/* (blocks shrink where an iteration's rows are its step's, consecutive: not a tile's outer loop inside its inner one) */
	bool over_rows = !(inst->loop & MLOOP_TREES), consecutive = l->m->loops[inst->var].rows == rows;
	bool shrinks = parallel && rows > parallel_min_block(l) && over_rows && consecutive;
	/* iterations of `rows` walks each; a tree loop over batch loops walks the batch in each */
	int64_t grain = over_rows_in_trees(l, inst) ? 1 : (BATCH_GRAIN + rows - 1) / rows;
	/*
	 * Where its blocks make keys, the walks of each prefetch the rows of the next its thread
	 * likely takes (prefetch_next_rows): threads that take one iteration at a time take
	 * them in turn; taking several, the next is mostly the one after.
	 */
	bool ahead = over_rows && mir_some(l->m, inst->body, lower_keys_block), turns = parallel && grain == 1;
	uint32_t outer_end = l->rows_end, loop, outer_tops, outer_stride = l->loop_stride, threads = LIR_NONE, first = LIR_NONE;
	int64_t outer_rows = l->loop_rows;
	if (parallel && (shrinks || (ahead && turns)))
		threads = lir_emit(&l->b, LOP_THREADS, LTYPE_I64, LIR_NONE, LIR_NONE, LIR_NONE);
	if (shrinks) {
		step = block_rows(l, begin, end, rows, threads);
		if (l->scope.rows.num_terms) /* the loop's variable counts from the enclosing row loops' row */
			first = lower_index(l, &l->scope.rows, 0);
	}
	if (ahead) {
		l->loop_stride = turns ? emit2(l, LOP_MUL, LTYPE_I64, step, threads) : step;
		l->loop_rows = rows;
	}
	loop = lir_begin(&l->b, parallel ? LOP_PARALLEL_FOR : LOP_FOR, begin, end, step);
	if (parallel)
		l->b.fn->insts[loop].imm = grain;
	if (shrinks) { /* the block's rows end at its end: loops over ranges the tile bounds cover the block */
		uint32_t block_end = emit2(l, LOP_ADD, LTYPE_I64, loop, step);
		if (first != LIR_NONE)
			block_end = emit2(l, LOP_ADD, LTYPE_I64, first, block_end);
		l->rows_end = emit2(l, LOP_MIN, LTYPE_I64, block_end, outer_end);
	}
	outer_tops = l->block.top_nodes;
	if (parallel) /* the tops a tree ahead are the iteration's own (lower_tops) */
		l->block.top_nodes = LIR_NONE;
	lower_body(l, inst, loop, rows, lanes, LIR_NONE);
	l->block.top_nodes = outer_tops;
	l->rows_end = outer_end;
	l->loop_stride = outer_stride;
	l->loop_rows = outer_rows;
	lir_end(&l->b);
}

/* The largest power of two up to BYTE_TOP_LANES that divides v; what divides values divided by a and by b. */
static uint8_t align_of(int64_t v) { return (uint8_t)(v % BYTE_TOP_LANES == 0 ? BYTE_TOP_LANES : v & -v); }
static uint8_t align_both(uint8_t a, uint8_t b) { return a < b ? a : b; }

uint8_t lower_var_align(const Lowering *l, int32_t var) { return l->is_const[var] ? align_of(l->const_value[var]) : l->var_align[var]; }

/* What divides node x of a range expression wherever it is evaluated (Lowering.var_align). */
static uint8_t expr_align(const Lowering *l, const HRange *r, uint8_t x)
{
	const HExpr *n = &r->nodes[x];
	switch ((HExprOp)n->op) {
	case HEXPR_CONST: return align_of(n->value);
	case HEXPR_ROWS: return 1;
	case HEXPR_VAR: return lower_var_align(l, n->var);
	case HEXPR_BELOW: return expr_align(l, r, n->a); /* a or 0 */
	case HEXPR_ADD:
	case HEXPR_SUB:
	case HEXPR_MIN: return align_both(expr_align(l, r, n->a), expr_align(l, r, n->b));
	}
	return 1;
}

/* The value of node x of a range expression when the loops it uses are specialized; false if it is known only at run time. */
static bool eval_expr(const Lowering *l, const HRange *r, uint8_t x, int64_t *value)
{
	const HExpr *n = &r->nodes[x];
	int64_t a, b;
	switch ((HExprOp)n->op) {
	case HEXPR_CONST: *value = n->value; return true;
	case HEXPR_ROWS: return false;
	case HEXPR_VAR: *value = l->const_value[n->var]; return l->is_const[n->var];
	case HEXPR_ADD:
	case HEXPR_SUB:
	case HEXPR_MIN:
	case HEXPR_BELOW:
		if (!eval_expr(l, r, n->a, &a) || !eval_expr(l, r, n->b, &b))
			return false;
		*value = n->op == HEXPR_ADD ? a + b : n->op == HEXPR_SUB ? a - b : n->op == HEXPR_BELOW ? (a < b ? a : 0) : a < b ? a : b;
		return true;
	}
	return false;
}

/*
 * specialize: one copy of the body per iteration, the variable a constant in each.
 * Where the bounds are not constants (they use loops that are not specialized), each
 * copy runs under a test that its iteration is in the range. Where the trees are code
 * and the loop's walks reach more than HIR_CODE_SPLITS splits, each iteration of the
 * outermost such tree loop compiles as a function of its own, with its own
 * LOWER_CODE_FUNCTION_SPLITS, and the functions compile in parallel (a call costs
 * nothing next to a tile of trees' walks, even a lone row's; one function of all the
 * trees takes LLVM longer than its size). (Fewer splits stay one function: a small
 * forest ran slower apart, perhaps because a function of its own cannot know that the
 * rows it reads are not the margins it writes; measured: docs/performance-notes.md,
 * Functions apart.)
 */
static void lower_specialized(Lowering *l, const MInst *inst, const HRange *r)
{
	int64_t begin, end;
	bool const_begin = eval_expr(l, r, r->begin, &begin), const_end = eval_expr(l, r, r->end, &end);
	bool apart = l->rep->walk && !l->gpu.on && !l->code_apart, outer_apart = l->code_apart;
	uint64_t splits = l->code_splits;
	uint32_t lowest = 0, past = 0;
	if (apart) {
		mir_loop_trees(l->m, inst->var, &lowest, &past);
		apart = hir_trees_splits(l->f, lowest, past) > HIR_CODE_SPLITS;
	}
	for (int64_t i = 0; i < r->max_trips; i++) {
		int64_t value = begin + i * r->step;
		uint32_t branch = LIR_NONE;
		if (const_begin && const_end && value >= end)
			break;
		l->is_const[inst->var] = const_begin;
		l->const_value[inst->var] = value;
		l->var_align[inst->var] = align_both(expr_align(l, r, r->begin), align_of(i * r->step));
		if (const_begin) {
			l->var_value[inst->var] = const_i64(l, value);
		} else {
			uint32_t first = lower_expr(l, r, r->begin, 0);
			l->var_value[inst->var] = emit2(l, LOP_ADD, LTYPE_I64, first, const_i64(l, i * r->step));
		}
		if (!const_begin || !const_end)
			branch = lir_begin(&l->b, LOP_IF,
			                   lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, l->var_value[inst->var], lower_expr(l, r, r->end, 0)),
			                   LIR_NONE, LIR_NONE);
		else if (apart)
			branch = lir_begin(&l->b, LOP_IF, lir_const_int(&l->b, LTYPE_I1, 1), LIR_NONE, LIR_NONE);
		if (apart) /* (code_apart: one level of such functions) */
			l->b.fn->insts[branch].imm = LIR_IF_APART_BODY, l->code_splits = 0, l->code_apart = true;
		lower_list(l, inst->body);
		if (branch != LIR_NONE)
			lir_end(&l->b);
	}
	l->code_splits = splits, l->code_apart = outer_apart;
	l->is_const[inst->var] = false;
}


void lower_for(Lowering *l, const MInst *inst)
{
	HRange r;
	uint32_t begin, end, step;

	if (l->gpu.on && l->gpu.hooks->loop(l, inst))
		return;
	mir_loop_range(l->m, inst->var, &r);
	if (inst->loop & MLOOP_SPECIALIZE) {
		lower_specialized(l, inst, &r);
		return;
	}
	begin = lower_expr(l, &r, r.begin, 0);
	end = lower_expr(l, &r, r.end, 0);
	step = const_i64(l, r.step);
	l->var_align[inst->var] = align_both(expr_align(l, &r, r.begin), align_of(r.step));
	if (inst->interleave > 1 && (inst->loop & MLOOP_TREES) && l->scope.lanes <= 1) {
		/*
		 * Trees (interleaved only where rows run one at a time: lanes do not multiply).
		 * interleave is the most iterations the loop runs (mir_interleave); the last
		 * group of the forest (or of a tile of trees) may run fewer. It runs side by side
		 * all the same, as the group that ends where it ends, its first lanes (trees the
		 * group before added) masked off: they walk and add nothing, and the lanes still
		 * address their trees at constant distances (one at a time, the last trees cost
		 * a lone row more; measured: docs/performance-notes.md, Functions apart). The
		 * masked lanes' trees must be among those the loop's walks can reach (its depth
		 * group: mir_unroll_walks took the walks' straight steps from their depths);
		 * where there are not that many before the end (a group of fewer trees than the
		 * lanes), the trees run one at a time.
		 */
		int64_t span = inst->interleave * r.step;
		uint32_t lowest = 0, past = 0, first, masked, tree, branch;
		mir_loop_trees(l->m, inst->var, &lowest, &past);
		if (r.step > 1) { /* an outer tile loop reordered inside its inner one: the lanes end where a step past its last value is */
			uint32_t trips = emit2(l, LOP_SUB, LTYPE_I64, end, begin);
			trips = emit2(l, LOP_ADD, LTYPE_I64, trips, const_i64(l, r.step - 1));
			trips = emit2(l, LOP_SDIV, LTYPE_I64, trips, step);
			trips = emit2(l, LOP_MUL, LTYPE_I64, trips, step);
			end = emit2(l, LOP_ADD, LTYPE_I64, begin, trips);
		}
		/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
		first = emit2(l, LOP_SUB, LTYPE_I64, end, const_i64(l, span));
		masked = emit2(l, LOP_SUB, LTYPE_I64, end, begin);
		masked = emit2(l, LOP_SUB, LTYPE_I64, const_i64(l, span), masked);
		tree = emit2(l, LOP_ADD, LTYPE_I64, lower_index(l, &l->scope.trees, 0), first);
		branch = lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_SGE, tree, const_i64(l, lowest)), LIR_NONE, LIR_NONE);
		lower_body(l, inst, first, span, inst->interleave, masked);
		lir_else(&l->b, branch);
		lower_loop(l, inst, begin, end, step, 1, false);
		lir_end(&l->b);
	} else if (inst->interleave > 1 && !(inst->loop & MLOOP_TREES)) {
		/*
		 * Rows: when the loop runs all its interleave iterations, they run side by side;
		 * else (the last tile of rows) one at a time, each walking its trees as the tree
		 * loops inside say; or side by side all the same where lanes past the last row
		 * read zeros and write only rows of their own (lower_lanes_past_end), or read
		 * copies of a row's keys where enough rows are left for it (lower_lanes_run).
		 */
		int64_t span = inst->interleave * r.step;
		bool past = r.step == 1 && lower_lanes_past_end(l, inst), apart = l->walks_apart;
		uint32_t branch;
		uint8_t aligned = l->var_align[inst->var];
		l->var_align[inst->var] = expr_align(l, &r, r.begin); /* lane 0's row; the lanes follow it */
		branch = lir_begin(&l->b, LOP_IF, lower_lanes_run(l, inst, begin, end, span, past), LIR_NONE, LIR_NONE);
		/*
		 * Where no ifComplete splits the walks into halves that compile in parallel (its
		 * walks are the same either way), the side-by-side walks are one function, the
		 * last tile's lone rows another, and the rest of the function a third; the call
		 * costs nothing next to 16 rows' walks or a lone row's. (With a few half apart
		 * too, splitSize's, the lone rows apart shortened the first compile, the parts
		 * being even, and cost batches little: docs/performance-notes.md, Functions
		 * apart.)
		 */
		if (apart)
			l->b.fn->insts[branch].imm = LIR_IF_APART;
		l->walks_apart = false;
		lower_body(l, inst, begin, span, inst->interleave, LIR_NONE);
		l->lanes_left = LIR_NONE;
		l->var_align[inst->var] = aligned;
		l->walks_apart = apart;
		if (!past) {
			lir_else(&l->b, branch);
			lower_loop(l, inst, begin, end, step, 1, false);
		}
		lir_end(&l->b);
	} else if ((inst->loop & MLOOP_FEW_ROWS) && !inst->parallel && !l->gpu.on && !l->code_apart && mir_some(l->m, inst->body, walks)) {
		/* splitSize's half for few rows: a function of its own, compiled beside the rest (its walks are another copy) */
		uint32_t branch = lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, begin, end), LIR_NONE, LIR_NONE);
		l->b.fn->insts[branch].imm = LIR_IF_APART_BODY;
		lower_loop(l, inst, begin, end, step, 0, false);
		lir_end(&l->b);
	} else {
		lower_loop(l, inst, begin, end, step, 0, inst->parallel && !l->gpu.on);
	}
}

/* One MIR instruction, in code that one thread runs (on a GPU: GpuScope.mask 0). */
void lower_inst(Lowering *l, uint32_t id)
{
	const MInst *inst = &l->m->insts[id];
	switch ((MOp)inst->op) {
	case MOP_FOR:
		lower_for(l, inst);
		break;
	case MOP_BUFFER:
		lower_buffer(l, inst->buf);
		break;
	case MOP_INIT:
		lower_init(l, inst->buf);
		break;
	case MOP_GET_TREE:
		for (uint32_t r = 0; r < l->scope.lanes; r++) {
			size_t at = lane_slot(id, r), lane0 = lane_slot(id, 0);
			bool same = r && !l->scope.lanes_are_trees; /* row lanes share the tree */
			l->tree_index[at] = same ? l->tree_index[lane0] : lower_index(l, &inst->tree, r);
			l->value[at] = same ? l->value[lane0]
			                    : l->rep->tree(&l->layout, &l->b, l->tree_index[at], lower_trees_side_by_side(l));
		}
		break;
	case MOP_WALK:
		lower_walk(l, id);
		break;
	case MOP_REDUCE:
		lower_reduce(l, inst);
		break;
	case MOP_REDUCE_DIM:
		lower_reduce_dim(l, inst);
		break;
	case MOP_IF_COMPLETE:
		lower_if_complete(l, inst);
		break;
	case MOP_TRANSFORM:
		for (uint32_t r = 0, scratch = LIR_NONE; r < l->scope.lanes; r++) {
			uint32_t out = l->out, row;
			l->acc = lower_storage_base(l, inst->buf, r);
			l->acc_offset = buffer_slot(l, inst->buf, r, &inst->row, const_i64(l, 0));
			l->acc_stride = l->storage[inst->buf].by_output ? l->storage[inst->buf].rows : LIR_NONE;
			row = lower_index(l, &inst->row, r);
			if (r && l->lanes_left != LIR_NONE) /* a lane that may lie past a padded run's rows (lower_lanes_run) */
				row = lower_padded_row(l, r, row, &scratch);
			lower_transform(l, row);
			l->out = out;
		}
		break;
	}
}


void lower_list(Lowering *l, uint32_t first)
{
	if (l->gpu.on && l->gpu.hooks->list(l, first))
		return;
	for (uint32_t id = first; id != MIR_NONE; id = l->m->insts[id].next)
		lower_inst(l, id);
}

/* A per-tree i32 buffer: each tree's first output (widths false) or its width. */
static uint32_t add_tree_buffer(LModule *module, const HForest *f, bool widths)
{
	int32_t *values = xmalloc(((size_t)f->num_trees + 1) * sizeof *values);
	for (uint32_t t = 0; t < f->num_trees; t++)
		values[t] = (int32_t)(widths ? f->trees[t].width : f->trees[t].output);
	return lir_buffer_add(module, widths ? "tree_widths" : "tree_outputs", LTYPE_I32, f->num_trees, values);
}

/* The base scores: where sums start, or what other aggregates add when the margins are finished. */
static uint32_t add_base_buffer(LModule *module, const HForest *f, LType type)
{
	void *values = xcalloc(f->num_outputs, lir_type_size(type));
	for (uint32_t c = 0; c < f->num_outputs; c++)
		rep_store_value(values, type, c, f->base_score[c]);
	return lir_buffer_add(module, "base_scores", type, f->num_outputs, values);
}

/* A new function `name` (a kernel: kernel true) whose rows are of row_type, with its parameters and the representation's prologue. */
LFunc *begin_function(Lowering *l, const char *name, LType row_type, bool kernel)
{
	const HForest *f = l->f;
	LFunc *fn = kernel ? lir_func_add(l->module, name, lir_kernel_params, LIR_KERNEL_PARAMS)
	                   : lir_func_add(l->module, name, lir_predict_params, LIR_PREDICT_PARAMS);
	uint32_t flags, one, zero;

	fn->kind = kernel ? LFUNC_KERNEL : LFUNC_HOST;
	fn->entry = row_type == LTYPE_F64;
	lir_builder_init(&l->b, fn);
	l->row_type = row_type;
	l->rows = lir_emit(&l->b, LOP_PARAM, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
	l->num_rows = lir_emit(&l->b, LOP_PARAM, LTYPE_I64, LIR_NONE, LIR_NONE, LIR_NONE);
	fn->insts[l->num_rows].imm = 1;
	l->rows_end = l->num_rows;
	l->out = lir_emit(&l->b, LOP_PARAM, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
	fn->insts[l->out].imm = 2;
	flags = lir_emit(&l->b, LOP_PARAM, LTYPE_I32, LIR_NONE, LIR_NONE, LIR_NONE);
	l->workspace = lir_emit(&l->b, LOP_PARAM, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
	one = lir_const_int(&l->b, LTYPE_I32, 1);
	zero = lir_const_int(&l->b, LTYPE_I32, 0);
	fn->insts[flags].imm = 3;
	fn->insts[l->workspace].imm = 4;
	l->margin = lir_cmp(&l->b, LOP_ICMP, LCMP_NE, emit2(l, LOP_AND, LTYPE_I32, flags, one), zero);
	if (f->labels.count) {
		uint32_t two = lir_const_int(&l->b, LTYPE_I32, 2);
		l->label = lir_cmp(&l->b, LOP_ICMP, LCMP_NE, emit2(l, LOP_AND, LTYPE_I32, flags, two), zero);
	}
	l->tree_outputs = f->num_outputs > 1 ? rep_buffer_address(&l->b, l->output_buffer) : LIR_NONE;
	l->tree_widths = l->layout.vector_buffer != LIR_NONE ? rep_buffer_address(&l->b, l->width_buffer) : LIR_NONE;
	l->base_scores = rep_buffer_address(&l->b, l->base_buffer);
	l->rep->begin_function(&l->layout, &l->b);
	l->code_splits = 0;
	l->scope = (LoopScope){.lanes = 1, .lane_var = HIR_NONE, .masked = LIR_NONE};
	return fn;
}

/* Build the entry `name` (the host function, or a GPU module's kernels), whose rows are of row_type: the body of the MIR module once more. */
static uint32_t lower_entry(Lowering *l, const char *name, LType row_type)
{
	const MModule *m = l->m;
	l->workspace_elems = 0;
	l->pad_rows = cost_pad_rows(l->f, l->layout.leaf_masks, l->rep->levels, false);
	l->storage = xcalloc(m->num_buffers + 1, sizeof *l->storage);
	l->value = xmalloc(((size_t)m->num_insts + 1) * MIR_MAX_INTERLEAVE * sizeof *l->value);
	l->tree_index = xmalloc(((size_t)m->num_insts + 1) * MIR_MAX_INTERLEAVE * sizeof *l->tree_index);
	l->lanes_value = xmalloc(((size_t)m->num_insts + 1) * sizeof *l->lanes_value);
	l->top_leaves = xmalloc(((size_t)m->num_insts + 1) * sizeof *l->top_leaves);
	for (uint32_t i = 0; i <= m->num_insts; i++) {
		l->lanes_value[i] = LIR_NONE;
		l->top_leaves[i].nodes = LIR_NONE;
	}
	if (l->gpu.on) {
		l->gpu.hooks->entry(l, name, row_type);
	} else {
		begin_function(l, name, row_type, false);
		lower_list(l, m->body);
	}
	free(l->value);
	free(l->lanes_value);
	free(l->top_leaves);
	free(l->tree_index);
	free(l->storage);
	return l->module->num_funcs - 1;
}

LModule *lower_module_with(const MModule *m, const LowerHooks *hooks, Error *e)
{
	bool gpu = hooks != NULL;
	const HForest *f = m->forest;
	Lowering l = {.m = m, .f = f, .e = e, .gpu = {.on = gpu, .hooks = hooks}};
	HForest *walked;
	bool ok, packable; /* every walk ends on its leaves untested (RepLayout.packed_leaves) */
	bool widen;        /* predict widens its rows and calls predict_f64 (lower/convert_rows.c) */

	if (!m->representation || !(l.rep = rep_find(m->representation)))
		return error_set(e, "MIR: the module names no known representation (%s)", m->representation ? m->representation : "none"), NULL;
	if (l.rep->levels && mir_some(m, m->body, walks_unevenly))
		return error_set(e, "the %s representation reads a split per level: its walks must be unrolled to the trees' "
		                    "depth (unrollWalk)", l.rep->name), NULL;
	if (!lower_check_buffers(m, e))
		return NULL;
	l.module = lir_module_new();
	l.module->gpu = gpu;
	l.module->code = l.rep->walk != NULL;
	l.module->waits = !gpu && cost_walks_wait_on_memory(f);
	/*
	 * A forest that compares in double has an entry for double rows too (rounded to float,
	 * a value between a threshold and its float would change side), but one body where it
	 * can (convert_rows.c): code a row at a time for double rows, float rows widened; others
	 * for float rows (in vectors, twice the lanes), double rows narrowed.
	 */
	l.layout.lanes = !gpu && l.rep->walk_lanes && mir_some(m, m->body, interleaves_rows);
	widen = !gpu && l.module->code && f->threshold_type == HTYPE_F64 && !l.layout.lanes && !f->rows_float;
	/* predict's rows are floats: it walks the forest's float twin, if it has one (and has a body of its own). */
	walked = gpu || widen ? NULL : hir_float_forest(f);
	/* A key copy of the nodes where some walks may read keys; lay_out keeps it where the splits can compare them. */
	l.layout.keys = !gpu && l.rep->keys && mir_some(m, m->body, lower_makes_keys);
	l.layout.blocks = l.layout.keys && mir_some(m, m->body, lower_makes_lone_keys);
	l.layout.step_level = l.layout.leaf_level = -1;
	l.layout.packed_leaves = packable = !gpu && walks_end_on_leaves(m, m->body);
	l.layout.top_levels = l.layout.keys && l.rep->top_nodes && mir_some(m, m->body, lower_takes_tops); /* (lower_tops) */
	l.layout.leaf_masks = l.layout.keys && l.rep->walk_tile && mir_some(m, m->body, lower_takes_tops);
	l.layout.byte_tops = l.layout.top_levels && l.rep->walk_bins && mir_some(m, m->body, lower_walks_bytes);
	l.layout.key_lanes = l.layout.top_levels || l.layout.leaf_masks ? TOP_LANES : 0;
	l.layout.tile_words = cost_keys_in_tiles(f);
	l.layout.vector_tops = m->vector_tops;
	/* The first layout serves the double entry too where there is no float twin. */
	l.layout.nan_reads_zero = m->nan_as_zero & (walked || f->threshold_type == HTYPE_F32 ? MZERO_FLOATS : MZERO_DOUBLES);
	if (!l.rep->lay_out(walked ? walked : f, l.module, &l.layout, e)) {
		hir_forest_free(walked);
		lir_module_free(l.module);
		return NULL;
	}
	l.acc_type = l.layout.leaf_type;
	lower_describe_module(l.module, f);
	if (f->num_outputs > 1)
		l.output_buffer = add_tree_buffer(l.module, f, false);
	if (l.layout.vector_buffer != LIR_NONE)
		l.width_buffer = add_tree_buffer(l.module, f, true);
	l.base_buffer = add_base_buffer(l.module, f, l.acc_type);

	l.lanes_left = l.row_cache = l.block.first = l.block.next = l.loop_stride = l.block.key_rows = l.block.key_tiles = l.block.mask_tiles = l.block.top_nodes = l.block.zero_rows = l.block.bins = LIR_NONE;
	if (widen) {
		l.module->predict_f64 = lower_entry(&l, "predict_f64", LTYPE_F64);
		lower_widening_entry(l.module, l.workspace_elems * lir_type_size(l.acc_type));
	} else {
		NarrowCuts *narrowing = walked && !f->rows_float ? lower_narrowing(f) : NULL;
		l.module->predict = lower_entry(&l, "predict", LTYPE_F32);
		hir_forest_free(walked);
		if (f->threshold_type == HTYPE_F64 && !narrowing && !f->rows_float) {
			if (walked) {
				l.rep->free(&l.layout);
				l.layout.keys = l.layout.blocks = false;
				l.layout.top_levels = l.layout.key_lanes = 0;
				l.layout.tile_words = l.layout.leaf_masks = false;
				l.layout.packed_leaves = packable; /* lay_out cleared it where the float twin did not pack */
				l.layout.nan_reads_zero = m->nan_as_zero & MZERO_DOUBLES;
				if (!l.rep->lay_out(f, l.module, &l.layout, e)) {
					lir_module_free(l.module);
					return NULL;
				}
			}
			l.module->predict_f64 = lower_entry(&l, "predict_f64", LTYPE_F64);
		}
		l.module->workspace_per_row = l.workspace_elems * lir_type_size(l.acc_type);
		if (narrowing)
			lower_narrowing_entry(l.module, narrowing, l.module->workspace_per_row);
		lower_narrowing_free(narrowing);
	}
	l.rep->free(&l.layout);
	if (gpu) {
		l.module->predict = LIR_NONE;
		l.module->predict_f64 = LIR_NONE;
		for (uint32_t k = 0; k < l.module->num_funcs && !l.failed; k++)
			lower_gpu_ints(l.module, l.module->funcs[k]);
	}

	ok = !l.failed && (gpu || lower_check_stack(l.module, e)) && lir_verify(l.module, e);
	if (!ok) {
		lir_module_free(l.module);
		return NULL;
	}
	return l.module;
}

LModule *lower_mir_to_lir(const MModule *m, Error *e) { return lower_module_with(m, NULL, e); }
