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
 */
#include "lower/cost.h"
#include "lower/lowering.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Walks handed to a thread at once by a parallel loop, at least; smaller loops stay on the caller. */
#define BATCH_GRAIN 64


void lower_fail(Lowering *l, const char *fmt, ...)
{
	char what[1024];
	va_list ap;
	if (l->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	error_set(l->e, "%s", what);
	l->failed = true;
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

/* i1: whether lane `lane` runs (LoopScope.masked); LIR_NONE where it always does. */
static uint32_t lane_live(Lowering *l, uint32_t lane)
{
	if (l->scope.masked == LIR_NONE)
		return LIR_NONE;
	return lir_cmp(&l->b, LOP_ICMP, LCMP_SGE, const_i64(l, lane * l->scope.lane_step), l->scope.masked);
}

/* The value of var in lane `lane`: the interleaved variable's lanes step from its value. */
static uint32_t var_value(Lowering *l, int32_t var, uint32_t lane)
{
	uint32_t v = l->var_value[var];
	if (lane && var == l->scope.lane_var)
		v = emit2(l, LOP_ADD, LTYPE_I64, v, const_i64(l, lane * l->scope.lane_step));
	return v;
}

/* The i64 sum of the index variables of index (0 if none) in lane `lane`, leaving out those of skip. */
static uint32_t lower_index_except(Lowering *l, const MIndex *index, const MIndex *skip, uint32_t lane)
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
		v = var_value(l, var, lane);
		sum = sum == LIR_NONE ? v : emit2(l, LOP_ADD, LTYPE_I64, sum, v);
	}
	if (sum == LIR_NONE)
		return const_i64(l, known);
	return known ? emit2(l, LOP_ADD, LTYPE_I64, sum, const_i64(l, known)) : sum;
}

/* The row (or tree) number index stands for in lane `lane`. */
uint32_t lower_index(Lowering *l, const MIndex *index, uint32_t lane) { return lower_index_except(l, index, NULL, lane); }

/* Emit node x of a loop range expression (hir_schedule_range) as an i64. */
uint32_t lower_expr(Lowering *l, const HRange *r, uint8_t x, uint32_t lane)
{
	const HExpr *n = &r->nodes[x];
	switch ((HExprOp)n->op) {
	case HEXPR_CONST: return const_i64(l, n->value);
	case HEXPR_ROWS: return l->rows_end;
	case HEXPR_VAR: return var_value(l, n->var, lane);
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


/* Whether the walks being lowered are a lone row's: of trees side by side, or of one tree. */
static bool walks_lone_row(const Lowering *l) { return l->scope.lanes_are_trees || l->scope.lanes == 1; }

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
	bool block = whole && l->block_first != LIR_NONE;
	uint32_t first, span, one, tree, next, limit;
	if (!l->rep->prefetch_tree) {
		lower_fail(l, "cache of a tree loop: the %s representation keeps no trees in memory to prefetch", l->rep->name);
		return;
	}
	if (block && l->block_span < CACHE_TREES_MIN_ROWS)
		return;
	if (block) { /* the block's rows: min(first + span, end) - first */
		uint32_t rows = emit2(l, LOP_ADD, LTYPE_I64, l->block_first, const_i64(l, l->block_span));
		rows = emit2(l, LOP_MIN, LTYPE_I64, rows, l->rows_end);
		rows = emit2(l, LOP_SUB, LTYPE_I64, rows, l->block_first);
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
	l->layout.walk_keys = l->key_rows != LIR_NONE; /* the walks read the key copy of the nodes */
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
		    (!m->forest->schedule.vars[m->insts[id].var].over_trees || batch_loop_in(m, m->insts[id].body)))
			return true;
	return false;
}

/* Whether inst is a tree loop around batch loops: each of its iterations walks many rows. */
static bool over_rows_in_trees(const Lowering *l, const MInst *inst)
{
	return l->f->schedule.vars[inst->var].over_trees && batch_loop_in(l->m, inst->body);
}

void lower_body(Lowering *l, const MInst *inst, uint32_t value, int64_t rows, uint32_t lanes, uint32_t masked)
{
	const HIndexVar *v = &l->f->schedule.vars[inst->var];
	LoopScope outer = l->scope;

	l->var_value[inst->var] = value;
	if (lanes) {
		l->scope.lanes = lanes;
		l->scope.lane_var = inst->var;
		l->scope.lanes_are_trees = v->over_trees;
		l->scope.lane_step = rows / lanes;
		l->scope.masked = masked;
	}
	if (v->over_trees)
		l->scope.trees.terms[l->scope.trees.num_terms++] = (int8_t)inst->var;
	else
		l->scope.rows.terms[l->scope.rows.num_terms++] = (int8_t)inst->var;
	if ((v->flags & HVAR_CACHE) && l->gpu) {
		gpu_cache(l, inst, rows); /* lowers the body between the copy and the threads' last meeting */
	} else {
		uint32_t outer_cache = l->row_cache;
		int64_t outer_rows = l->row_cache_rows;
		if ((v->flags & HVAR_CACHE) && v->over_trees)
			prefetch_next_trees(l, rows, batch_loop_in(l->m, inst->body) || !walks_lone_row(l));
		else if (v->flags & HVAR_CACHE)
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

static bool some_inst(const MModule *m, uint32_t id, bool (*holds)(const MModule *, const MInst *));
static bool walks(const MModule *m, const MInst *inst) { (void)m; return inst->op == MOP_WALK; }
static bool keys_block(const MModule *m, const MInst *inst);

/* One loop of inst's variable over [begin, end) by step (a constant), each iteration's body in `lanes` lanes (0: not interleaved). */
void lower_loop(Lowering *l, const MInst *inst, uint32_t begin, uint32_t end, uint32_t step, uint32_t lanes, bool parallel)
{
	int64_t rows = l->b.fn->insts[step].imm; /* rows (or trees) per iteration, at most */
	bool over_rows = !l->f->schedule.vars[inst->var].over_trees, shrinks = parallel && rows > parallel_min_block(l) && over_rows;
	/* iterations of `rows` walks each; a tree loop over batch loops walks the batch in each */
	int64_t grain = over_rows_in_trees(l, inst) ? 1 : (BATCH_GRAIN + rows - 1) / rows;
	/*
	 * Where its blocks make keys, the walks of each prefetch the rows of the next its thread
	 * likely takes (prefetch_next_rows): threads that take one iteration at a time take
	 * them in turn; taking several, the next is mostly the one after.
	 */
	bool ahead = over_rows && !l->gpu && !l->rep->walk && some_inst(l->m, inst->body, keys_block), turns = parallel && grain == 1;
	uint32_t outer_end = l->rows_end, loop, outer_tops, outer_stride = l->loop_stride, threads = LIR_NONE;
	int64_t outer_rows = l->loop_rows;
	if (parallel && (shrinks || (ahead && turns)))
		threads = lir_emit(&l->b, LOP_THREADS, LTYPE_I64, LIR_NONE, LIR_NONE, LIR_NONE);
	if (shrinks)
		step = block_rows(l, begin, end, rows, threads);
	if (ahead) {
		l->loop_stride = turns ? emit2(l, LOP_MUL, LTYPE_I64, step, threads) : step;
		l->loop_rows = rows;
	}
	loop = lir_begin(&l->b, parallel ? LOP_PARALLEL_FOR : LOP_FOR, begin, end, step);
	if (parallel)
		l->b.fn->insts[loop].imm = grain;
	if (shrinks) { /* the block's rows end at its end: loops over ranges the tile bounds cover the block */
		uint32_t block_end = emit2(l, LOP_ADD, LTYPE_I64, loop, step);
		l->rows_end = emit2(l, LOP_MIN, LTYPE_I64, block_end, outer_end);
	}
	outer_tops = l->top_nodes;
	if (parallel) /* the tops a tree ahead are the iteration's own (lower_tops) */
		l->top_nodes = LIR_NONE;
	lower_body(l, inst, loop, rows, lanes, LIR_NONE);
	l->top_nodes = outer_tops;
	l->rows_end = outer_end;
	l->loop_stride = outer_stride;
	l->loop_rows = outer_rows;
	lir_end(&l->b);
}

bool lower_var_aligned(const Lowering *l, int32_t var)
{
	return l->is_const[var] ? l->const_value[var] % TOP_LANES == 0 : l->var_aligned[var];
}

/* Whether node x of a range expression is a multiple of TOP_LANES wherever it is evaluated (Lowering.var_aligned). */
static bool expr_aligned(const Lowering *l, const HRange *r, uint8_t x)
{
	const HExpr *n = &r->nodes[x];
	switch ((HExprOp)n->op) {
	case HEXPR_CONST: return n->value % TOP_LANES == 0;
	case HEXPR_ROWS: return false;
	case HEXPR_VAR: return lower_var_aligned(l, n->var);
	case HEXPR_BELOW: return expr_aligned(l, r, n->a); /* a or 0 */
	case HEXPR_ADD:
	case HEXPR_SUB:
	case HEXPR_MIN: return expr_aligned(l, r, n->a) && expr_aligned(l, r, n->b);
	}
	return false;
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
	bool apart = l->rep->walk && !l->gpu && !l->code_apart, outer_apart = l->code_apart;
	uint64_t splits = l->code_splits;
	uint32_t lowest = 0, past = 0;
	if (apart) {
		hir_schedule_tree_span(&l->f->schedule, inst->var, &lowest, &past);
		apart = hir_trees_splits(l->f, lowest, past) > HIR_CODE_SPLITS;
	}
	for (int64_t i = 0; i < r->max_trips; i++) {
		int64_t value = begin + i * r->step;
		uint32_t branch = LIR_NONE;
		if (const_begin && const_end && value >= end)
			break;
		l->is_const[inst->var] = const_begin;
		l->const_value[inst->var] = value;
		l->var_aligned[inst->var] = expr_aligned(l, r, r->begin) && (i * r->step) % TOP_LANES == 0;
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
	const HIndexVar *v = &l->f->schedule.vars[inst->var];
	HRange r;
	uint32_t begin, end, step;

	if (l->gpu && gpu_for(l, inst))
		return;
	hir_schedule_range(&l->f->schedule, inst->var, &r);
	if (v->flags & HVAR_SPECIALIZE) {
		lower_specialized(l, inst, &r);
		return;
	}
	begin = lower_expr(l, &r, r.begin, 0);
	end = lower_expr(l, &r, r.end, 0);
	step = const_i64(l, r.step);
	l->var_aligned[inst->var] = expr_aligned(l, &r, r.begin) && r.step % TOP_LANES == 0;
	if (inst->interleave > 1 && v->over_trees && l->scope.lanes <= 1) {
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
		hir_schedule_tree_span(&l->f->schedule, inst->var, &lowest, &past);
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
	} else if (inst->interleave > 1 && !v->over_trees) {
		/*
		 * Rows: when the loop runs all its interleave iterations, they run side by side;
		 * else (the last tile of rows) one at a time, each walking its trees as the tree
		 * loops inside say; or side by side all the same where lanes past the last row
		 * read zeros and write only rows of their own (lower_lanes_past_end).
		 */
		int64_t span = inst->interleave * r.step;
		bool past = r.step == 1 && lower_lanes_past_end(l, inst), apart = l->walks_apart, aligned;
		uint32_t full, branch;
		if (past) {
			full = lir_const_int(&l->b, LTYPE_I1, 1);
		} else {
			full = emit2(l, LOP_SUB, LTYPE_I64, end, begin);
			full = lir_cmp(&l->b, LOP_ICMP, LCMP_EQ, full, const_i64(l, span));
		}
		branch = lir_begin(&l->b, LOP_IF, full, LIR_NONE, LIR_NONE);
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
		aligned = l->var_aligned[inst->var];
		l->var_aligned[inst->var] = expr_aligned(l, &r, r.begin); /* lane 0's row; the lanes follow it */
		lower_body(l, inst, begin, span, inst->interleave, LIR_NONE);
		l->var_aligned[inst->var] = aligned;
		l->walks_apart = apart;
		if (!past) {
			lir_else(&l->b, branch);
			lower_loop(l, inst, begin, end, step, 1, false);
		}
		lir_end(&l->b);
	} else if (v->by_size && v->kind == HVAR_SPLIT_FIRST && !inst->parallel && !l->gpu && !l->code_apart && some_inst(l->m, inst->body, walks)) {
		/* splitSize's half for few rows: a function of its own, compiled beside the rest (its walks are another copy) */
		uint32_t branch = lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, begin, end), LIR_NONE, LIR_NONE);
		l->b.fn->insts[branch].imm = LIR_IF_APART_BODY;
		lower_loop(l, inst, begin, end, step, 0, false);
		lir_end(&l->b);
	} else {
		lower_loop(l, inst, begin, end, step, 0, inst->parallel && !l->gpu);
	}
}

/* Whether the lanes here are several trees of one row (the representation's tree hook lays their handles out for that). */
static bool trees_side_by_side(const Lowering *l) { return l->scope.lanes > 1 && l->scope.lanes_are_trees; }

/* One step of a walk from node for row: the representation tests the split and yields the child (a leaf stays where leaf_stays). */
static uint32_t lower_step(Lowering *l, uint32_t tree, uint32_t node, const RepRow *row, const RepNode *fields, bool leaf_stays)
{
	return l->rep->step(&l->layout, &l->b, tree, node, fields, row, leaf_stays);
}

/*
 * A walk of a tree known at compile time (a specialized tree loop) takes that tree's
 * own depths: as many straight steps as its shallowest leaf allows, and no loop when
 * they reach its deepest leaf.
 */
static void specialize_walk(Lowering *l, uint32_t tree_index, uint32_t *peel, uint32_t *safe, bool *exact)
{
	const LInst *t = &l->b.fn->insts[tree_index];
	uint32_t shallowest, deepest;
	if (t->op != LOP_CONST || t->imm < 0 || (uint64_t)t->imm >= l->f->num_trees)
		return;
	hir_trees_leaf_depth_range(l->f, (uint32_t)t->imm, (uint32_t)t->imm + 1, &shallowest, &deepest);
	if (*safe < shallowest)
		*safe = shallowest;
	if (*peel < shallowest)
		*peel = shallowest;
	if (*peel >= deepest) {
		*peel = deepest;
		*exact = true;
	}
}

/*
 * The row a walk reads in lane r (lowering.h). Lanes of interleaved rows address their
 * features from one pointer, lane 0's row, each at a constant offset: a feature's address
 * is then that pointer, the feature and a displacement, where per-lane row addresses
 * would each hold a register through the walk (16 lanes outnumber x86's registers, and
 * the walk spilled).
 * Keys in tiles: row o of the block at tile o / TOP_LANES, lane o % TOP_LANES, which the
 * lanes of rows that share a tile take from lane 0's as constants.
 */
RepRow lower_walk_row(Lowering *l, const MInst *walk, uint32_t r)
{
	bool row_lanes = !l->scope.lanes_are_trees && l->scope.lane_var != HIR_NONE && mir_index_has(&walk->row, l->scope.lane_var);
	/* Walks read the rows' keys where the ifComplete around made them. */
	bool keys = l->key_rows != LIR_NONE, tiled = l->key_tiled, shared = tiled && lower_lanes_share_tile(l, walk); /* (tiled: keys) */
	/* cache(v)'s copy column by column (Lowering.row_cache_rows): a row's features lie that many apart, its rows 1 */
	bool columns = !keys && l->row_cache != LIR_NONE && l->row_cache_rows;
	int64_t width = columns ? 1 : l->f->num_features, step = row_lanes ? (int64_t)r * l->scope.lane_step : 0;
	int64_t offset = !tiled ? step * width : shared ? step : 0;
	uint32_t index = lower_index(l, &walk->row, row_lanes && (!tiled || shared) ? 0 : r), start, lane = LIR_NONE;
	uint32_t buffer = keys ? l->key_rows : l->row_cache != LIR_NONE ? l->row_cache : l->zero_rows != LIR_NONE ? l->zero_rows : l->rows;
	RepRow row = {.type = keys ? l->key_type : l->row_type, .complete = l->complete, .feature_step = columns ? l->row_cache_rows : 1,
	              .row_step = tiled ? 1 : width};
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	if (keys || l->row_cache != LIR_NONE) /* the keys, or cache(v)'s copy of the rows: from their first row */
		index = emit2(l, LOP_SUB, LTYPE_I64, index, keys ? l->key_first : l->row_cache_first);
	if (tiled && !shared) { /* the tile's first row, and the lane */
		lane = emit2(l, LOP_AND, LTYPE_I64, index, const_i64(l, TOP_LANES - 1));
		index = emit2(l, LOP_SUB, LTYPE_I64, index, lane);
	}
	start = columns ? index : emit2(l, LOP_MUL, LTYPE_I64, index, const_i64(l, width));
	row.base = lir_index(&l->b, buffer, start, row.type);
	row.start = lane != LIR_NONE ? lane : const_i64(l, offset);
	return row;
}

/* The most lines of rows one walk of TOP_LANES rows prefetches (prefetch_next_rows). */
#define PREFETCH_ROWS_MAX_LINES 4

/*
 * A block's scan reads its rows in one pass, and rows that come from memory arrive
 * there at the rate a core streams them: half of syn-year's scan (90 features) waited
 * for them. So the walks of TOP_LANES rows side by side, each a tree's, prefetch the
 * lines of the block the thread will likely scan next (l->block_next), spread over the
 * block: walk number tree x groups + group takes k lines after the k x number before
 * it, k the fewest that cover the block with one set a walk (at most
 * PREFETCH_ROWS_MAX_LINES); walks whose lines lie past the next block or the batch take
 * none (narrow rows' walks spent time prefetching one line again, and a batch of one
 * block would prefetch its last line), and no line lies past the batch's end. The walks
 * of later trees than the lines need pay one test (computing each walk's line cost
 * more). A burst of them at the block's start cost more than it gained. Spread, they
 * pay for wide rows and leave narrow ones unchanged (measured: docs/performance-notes.md,
 * Prefetching the next rows).
 */
static void prefetch_next_rows(Lowering *l, const MInst *walk)
{
	int64_t width = l->f->num_features, per_line = 64 / (int64_t)lir_type_size(l->row_type);
	int64_t groups = (l->block_span + TOP_LANES - 1) / TOP_LANES, walks = groups * (int64_t)(l->f->num_trees ? l->f->num_trees : 1);
	int64_t lines = (l->block_span * width + per_line - 1) / per_line, k = (lines + walks - 1) / walks;
	uint32_t tree, group, line, first, end, at;
	if (lines == 0) /* (rows of no features) */
		return;
	if (k > PREFETCH_ROWS_MAX_LINES)
		k = PREFETCH_ROWS_MAX_LINES;
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	tree = l->tree_index[lane_slot(walk->a, 0)];
	lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, tree, const_i64(l, ((lines + k - 1) / k + groups - 1) / groups)),
	          LIR_NONE, LIR_NONE); /* (the first trees' walks: one test for the others) */
	end = emit2(l, LOP_ADD, LTYPE_I64, l->block_next, const_i64(l, l->block_span));
	end = emit2(l, LOP_MIN, LTYPE_I64, end, l->num_rows);
	end = emit2(l, LOP_MUL, LTYPE_I64, end, const_i64(l, width)); /* the next block's end, or the batch's */
	group = emit2(l, LOP_SUB, LTYPE_I64, lower_index(l, &walk->row, 0), l->block_first);
	group = emit2(l, LOP_SDIV, LTYPE_I64, group, const_i64(l, TOP_LANES));
	line = emit2(l, LOP_MUL, LTYPE_I64, tree, const_i64(l, groups));
	line = emit2(l, LOP_ADD, LTYPE_I64, line, group);
	line = emit2(l, LOP_MUL, LTYPE_I64, line, const_i64(l, k * per_line));
	first = emit2(l, LOP_MUL, LTYPE_I64, l->block_next, const_i64(l, width));
	first = emit2(l, LOP_ADD, LTYPE_I64, first, line);
	lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, first, end), LIR_NONE, LIR_NONE);
	end = emit2(l, LOP_SUB, LTYPE_I64, end, const_i64(l, 1));
	for (int64_t i = 0; i < k; i++) {
		at = emit2(l, LOP_ADD, LTYPE_I64, first, const_i64(l, i * per_line));
		at = emit2(l, LOP_MIN, LTYPE_I64, at, end);
		lir_emit(&l->b, LOP_PREFETCH, l->row_type, l->rows, at, LIR_NONE);
	}
	lir_end(&l->b);
	lir_end(&l->b);
}

/* RepLayout.leaf_level of a walk of `peel` steps, `safe` of them safe, exact or not. */
static int32_t leaf_level(const Lowering *l, uint32_t peel, uint32_t safe, bool exact)
{
	return l->layout.packed_leaves && exact && safe >= peel ? (int32_t)peel : -1;
}

/*
 * walk, node by node: follow the tree from its root to a leaf for the row of every lane;
 * sets the walk's value per lane to the leaf's value. The lanes' steps are emitted side
 * by side so that their loads overlap.
 *
 * A lone row's walk is a chain of dependent loads, and past the top levels of a forest
 * its nodes come from L2, or L3 for a thousand trees (the next row takes other paths):
 * each peeled step but the first (whose grandchildren share the root's cache line)
 * prefetches the nodes two levels below, so that the load two steps on finds them on its
 * way (measured: docs/performance-notes.md, A lone row's walk). Rows walked
 * side by side reuse a tree's nodes from L1, and the prefetches only cost them
 * instructions.
 *
 * Sixteen rows side by side after their top (lower_tops) are sixteen chains of steps,
 * a step a load of the record, a shift, a compare with the key in the tile and an adc:
 * with the two bases and two temporaries they want more than x86's 15 registers, and
 * LLVM keeps 5 or 6 on the stack. Every way of saving those spills cost more than they
 * do: the steps of lanes 0-7 then of 8-15 (fewer chains in flight), two chains to a
 * register, LLVM's other schedulers and allocators. Nor did the shift's removal pay:
 * keys in i64 tiles compared whole took twice the lines, and a record read as two i32
 * took one load more (measured: docs/performance-notes.md, Where a core's time goes, and
 * Sixteen chains of steps).
 */
static void lower_node_walks(Lowering *l, uint32_t id)
{
	const LRepresentation *rep = l->rep;
	const MInst *walk = &l->m->insts[id];
	uint32_t node[MIR_MAX_INTERLEAVE], tree[MIR_MAX_INTERLEAVE], cell, next, most = walk->peel;
	uint32_t peel[MIR_MAX_INTERLEAVE], safe[MIR_MAX_INTERLEAVE];
	bool exact[MIR_MAX_INTERLEAVE], stays;
	RepRow row[MIR_MAX_INTERLEAVE];
	RepNode fields;
	bool ahead = rep->prefetch_below && !l->gpu && walks_lone_row(l);

	for (uint32_t r = 0; r < l->scope.lanes; r++) {
		row[r] = lower_walk_row(l, walk, r);
		/* A walk of keys finds its tree in the key copy of the nodes: the tree's handle again, from its number. */
		l->layout.walk_keys = row[r].type == LTYPE_I64 || row[r].type == LTYPE_I32; /* alike in every lane */
		tree[r] = !l->layout.walk_keys ? l->value[lane_slot(walk->a, r)]
		                               : rep->tree(&l->layout, &l->b, l->tree_index[lane_slot(walk->a, r)], trees_side_by_side(l));
		node[r] = r && !l->scope.lanes_are_trees ? node[0] : rep->root(&l->layout, &l->b, tree[r]);
		peel[r] = walk->peel;
		safe[r] = walk->peel_safe;
		exact[r] = walk->exact;
		specialize_walk(l, l->tree_index[lane_slot(walk->a, r)], &peel[r], &safe[r], &exact[r]);
		most = peel[r] > most ? peel[r] : most;
	}
	if (l->block_next != LIR_NONE && l->scope.lanes == TOP_LANES && !l->scope.lanes_are_trees && l->scope.lane_step == 1)
		prefetch_next_rows(l, walk);
	/* Peeled steps: no test. The first `safe` start on splits; later ones may start on a leaf and stay there. */
	for (uint32_t i = lower_tops(l, walk, row, safe, node); i < most; i++) {
		for (uint32_t r = 0; r < l->scope.lanes; r++) {
			if (i >= peel[r])
				continue;
			l->layout.step_level = (int32_t)i;
			fields = rep->load_node(&l->layout, &l->b, tree[r], node[r]);
			if (ahead && i >= 1 && i + 2 <= peel[r]) {
				l->layout.leaf_level = leaf_level(l, peel[r], safe[r], exact[r]);
				rep->prefetch_below(&l->layout, &l->b, tree[r], node[r], exact[r] && i + 2 == peel[r]);
			}
			node[r] = lower_step(l, tree[r], node[r], &row[r], &fields, i >= safe[r]);
		}
	}
	l->layout.step_level = -1;
	for (uint32_t r = 0; r < l->scope.lanes; r++) {
		if (exact[r])
			continue;
		cell = lir_emit(&l->b, LOP_VAR, LTYPE_I64, node[r], LIR_NONE, LIR_NONE);
		lir_begin(&l->b, LOP_LOOP, LIR_NONE, LIR_NONE, LIR_NONE);
		node[r] = lir_emit(&l->b, LOP_GET, LTYPE_I64, cell, LIR_NONE, LIR_NONE);
		fields = rep->load_node(&l->layout, &l->b, tree[r], node[r]);
		stays = fields.is_leaf == LIR_NONE; /* a leaf steps to itself: the walk ends where it stays */
		if (!stays)
			lir_emit(&l->b, LOP_BREAK_IF, LTYPE_VOID, fields.is_leaf, LIR_NONE, LIR_NONE);
		next = lower_step(l, tree[r], node[r], &row[r], &fields, stays);
		if (stays)
			lir_emit(&l->b, LOP_BREAK_IF, LTYPE_VOID, lir_cmp(&l->b, LOP_ICMP, LCMP_EQ, next, node[r]), LIR_NONE, LIR_NONE);
		emit2(l, LOP_SET, LTYPE_VOID, cell, next);
		lir_end(&l->b);
		node[r] = lir_emit(&l->b, LOP_GET, LTYPE_I64, cell, LIR_NONE, LIR_NONE);
	}
	for (uint32_t r = 0; r < l->scope.lanes; r++) {
		l->layout.leaf_level = leaf_level(l, peel[r], safe[r], exact[r]);
		l->value[lane_slot(id, r)] = rep->leaf_value(&l->layout, &l->b, tree[r], node[r]);
	}
	l->layout.walk_keys = false;
	l->layout.leaf_level = -1;
}

/*
 * walk: the representation's whole walks (code); its walks of a block of trees (the
 * lanes are consecutive trees of one row) or of a tree by leaf masks (the lanes are rows
 * sharing a tile of keys), where they apply, and node by node elsewhere; or node by node.
 */
static void lower_walk(Lowering *l, uint32_t id)
{
	const LRepresentation *rep = l->rep;
	const MInst *walk = &l->m->insts[id];
	uint32_t lanes = l->scope.lanes, first, applies = LIR_NONE, tiles[2] = {LIR_NONE, LIR_NONE}, cells[MIR_MAX_INTERLEAVE],
	         values[MIR_MAX_INTERLEAVE], branch;
	RepRow row;

	if (rep->walk) {
		lower_code_walk(l, id);
		return;
	}
	l->lanes_value[id] = LIR_NONE;
	first = l->tree_index[lane_slot(walk->a, 0)];
	if (rep->walk_trees && l->scope.lanes_are_trees && lanes > 1 && l->scope.lane_step == 1) {
		applies = rep->trees_apply(&l->layout, &l->b, first, lanes);
		if (applies != LIR_NONE && l->scope.masked != LIR_NONE) /* a block of trees has no masked lanes */
			applies = emit2(l, LOP_AND, LTYPE_I1, applies, lir_cmp(&l->b, LOP_ICMP, LCMP_EQ, l->scope.masked, const_i64(l, 0)));
	} else if (rep->walk_tile) {
		applies = lower_tile_applies(l, walk, tiles);
	}
	if (applies == LIR_NONE) {
		lower_node_walks(l, id);
		return;
	}
	if (tiles[0] != LIR_NONE && l->b.fn->insts[applies].op == LOP_CONST) { /* every tree: no walk node by node */
		l->lanes_value[id] = lower_tile_walk(l, id, tiles, &l->value[lane_slot(id, 0)]);
		return;
	}
	for (uint32_t r = 0; r < lanes; r++)
		cells[r] = lir_emit(&l->b, LOP_VAR, l->layout.leaf_type, lir_const_float(&l->b, l->layout.leaf_type, 0.0), LIR_NONE, LIR_NONE);
	branch = lir_begin(&l->b, LOP_IF, applies, LIR_NONE, LIR_NONE);
	row = lower_walk_row(l, walk, 0);
	if (tiles[0] != LIR_NONE)
		lower_tile_walk(l, id, tiles, values);
	else
		rep->walk_trees(&l->layout, &l->b, first, lanes, &row, values);
	for (uint32_t r = 0; r < lanes; r++)
		emit2(l, LOP_SET, LTYPE_VOID, cells[r], values[r]);
	lir_else(&l->b, branch);
	lower_node_walks(l, id);
	for (uint32_t r = 0; r < lanes; r++)
		emit2(l, LOP_SET, LTYPE_VOID, cells[r], l->value[lane_slot(id, r)]);
	lir_end(&l->b);
	for (uint32_t r = 0; r < lanes; r++)
		l->value[lane_slot(id, r)] = lir_emit(&l->b, LOP_GET, l->layout.leaf_type, cells[r], LIR_NONE, LIR_NONE);
}

/* The output a tree adds to, as i64. */
static uint32_t tree_output(Lowering *l, uint32_t tree_index)
{
	if (l->f->num_outputs == 1)
		return const_i64(l, 0);
	return lir_cast(&l->b, LCAST_SEXT, LTYPE_I64, emit2(l, LOP_LOAD, LTYPE_I32, l->tree_outputs, tree_index));
}

/* The address of buffer b's storage in lane `lane`. */
static uint32_t storage_base(Lowering *l, uint32_t b, uint32_t lane)
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
		hir_schedule_range(&l->f->schedule, buf->copy_var, &r);
		copy = var_value(l, buf->copy_var, lane);
		copy = emit2(l, LOP_SUB, LTYPE_I64, copy, lower_expr(l, &r, r.begin, lane));
		if (r.step != 1)
			copy = emit2(l, LOP_SDIV, LTYPE_I64, copy, const_i64(l, r.step));
		at = emit2(l, LOP_ADD, LTYPE_I64, emit2(l, LOP_MUL, LTYPE_I64, copy, st->rows), at);
	}
	return emit2(l, LOP_ADD, LTYPE_I64, st->offset, buffer_element(l, b, at, c));
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
	 * Not for buffers with copies or privatised by copies, which fold element by element.
	 */
	st->by_output = buf->outputs > 1 && buf->copy_var == HIR_NONE && buf->of == MIR_NONE && !privatised(l->m, b);
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
	LSpace space = l->gpu ? gpu_buffer_space(l, b) : buf->space == MSPACE_SHARED ? LSPACE_SHARED : LSPACE_PRIVATE;
	int64_t size = (int64_t)(per_row * (uint64_t)buf->rows);
	for (uint32_t r = 0; r < lanes; r++) {
		if (space == LSPACE_BLOCK && (l->gpu_bound & GPU_BLOCK_BITS)) {
			st->base[r] = gpu_block_copy(l, size);
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
static void lower_init(Lowering *l, uint32_t b)
{
	const MBuffer *buf = &l->m->buffers[b];
	const Storage *st = &l->storage[b];
	bool one = buf->rows == 1 && buf->copies == 1;
	for (uint32_t r = 0; r < (st->per_lane ? l->scope.lanes : 1); r++) {
		uint32_t row = const_i64(l, 0), base = storage_base(l, b, r);
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
 * The type of the keys ifComplete inst converts its rows to (rep_emit_row_key), LTYPE_VOID
 * where it makes none: i64 where they fit (cost_whole_keys_fit), else i32 where those do.
 */
static LType key_type(const MModule *m, const MInst *inst)
{
	if (inst->op != MOP_IF_COMPLETE || inst->span == MIR_ROWS_ALL)
		return LTYPE_VOID;
	if (cost_whole_keys_fit(m->forest, inst->span))
		return LTYPE_I64;
	return cost_keys_fit(m->forest, inst->span) ? LTYPE_I32 : LTYPE_VOID;
}

/* Whether every ifComplete in the list from id (and the lists inside) names a bounded block whose copy fits on the stack (rows of row_size bytes a value). */
static bool all_copy_rows(const MModule *m, uint32_t id, size_t row_size)
{
	for (; id != MIR_NONE; id = m->insts[id].next) {
		const MInst *inst = &m->insts[id];
		if (inst->op == MOP_IF_COMPLETE && (inst->span == MIR_ROWS_ALL || !cost_zero_rows_fit(m->forest, inst->span, row_size)))
			return false;
		if (!all_copy_rows(m, inst->body, row_size))
			return false;
	}
	return true;
}

/* Whether an entry whose rows have row_size bytes a value may read their NaN as 0 (RepLayout.nan_reads_zero, which lay_out keeps where the splits allow). */
static bool may_zero_rows(const Lowering *l, size_t row_size)
{
	return !l->gpu && !l->rep->one_version && all_copy_rows(l->m, l->m->body, row_size);
}

/* Whether some instruction in the list from id (and the lists inside) is one that `holds`. */
static bool some_inst(const MModule *m, uint32_t id, bool (*holds)(const MModule *, const MInst *))
{
	for (; id != MIR_NONE; id = m->insts[id].next)
		if (holds(m, &m->insts[id]) || some_inst(m, m->insts[id].body, holds))
			return true;
	return false;
}

/* An ifComplete that makes keys for TOP_LANES rows or more. */
static bool keys_for_lanes(const MModule *m, const MInst *inst)
{
	return key_type(m, inst) != LTYPE_VOID && inst->span >= TOP_LANES;
}

/*
 * An ifComplete whose walks may take their tops at once (lower_tops), as far as its
 * block decides: it makes keys for TOP_LANES rows or more, and their tiles fit the stack.
 */
static bool takes_tops(const MModule *m, const MInst *inst)
{
	bool fits;
	cost_tiled_rows(m->forest, inst->span, &fits);
	return keys_for_lanes(m, inst) && fits;
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

/* An ifComplete that makes keys; one that makes them for one row. */
static bool makes_keys(const MModule *m, const MInst *inst) { return key_type(m, inst) != LTYPE_VOID; }
/* Whether inst is a walk that may loop past its straight steps (not unrolled to its trees' depth). */
static bool walks_unevenly(const MModule *m, const MInst *inst) { (void)m; return inst->op == MOP_WALK && !inst->exact; }
static bool makes_lone_keys(const MModule *m, const MInst *inst) { return makes_keys(m, inst) && inst->span == 1; }

/* A loop over rows that walks TOP_LANES of them side by side. */
static bool row_lanes(const MModule *m, const MInst *inst)
{
	return inst->op == MOP_FOR && inst->interleave == TOP_LANES && !m->forest->schedule.vars[inst->var].over_trees;
}

static bool interleaves_rows(const MModule *m, const MInst *inst)
{
	return inst->op == MOP_FOR && inst->interleave > 1 && !m->forest->schedule.vars[inst->var].over_trees;
}

/*
 * An ifComplete that makes keys for TOP_LANES rows or more and walks TOP_LANES of them
 * side by side: the walks that prefetch the rows of the next block (prefetch_next_rows).
 */
static bool keys_block(const MModule *m, const MInst *inst)
{
	return keys_for_lanes(m, inst) && some_inst(m, inst->body, row_lanes);
}

/*
 * Where the cell `any` says some value of the rows' elements [first, end) is NaN, copy
 * them with NaN read as 0 (RepLayout.nan_reads_zero). The walks inside then read
 * l->zero_rows, indexed as the rows: the copy where it was made, the rows otherwise.
 */
static void zero_missing_rows(Lowering *l, const MInst *inst, uint32_t first, uint32_t end, uint32_t any)
{
	LType t = l->row_type;
	uint32_t copy = lower_rows_array(l, t, inst->span, LSPACE_PRIVATE), at, x, nan, moved;
	lir_begin(&l->b, LOP_IF, lir_emit(&l->b, LOP_GET, LTYPE_I1, any, LIR_NONE, LIR_NONE), LIR_NONE, LIR_NONE);
	at = lir_begin(&l->b, LOP_FOR, first, end, const_i64(l, 1));
	x = emit2(l, LOP_LOAD, t, l->rows, at);
	nan = lir_cmp(&l->b, LOP_FCMP, LCMP_UNO, x, x);
	x = lir_emit(&l->b, LOP_SELECT, t, nan, lir_const_float(&l->b, t, 0.0), x);
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, copy, emit2(l, LOP_SUB, LTYPE_I64, at, first), x);
	lir_end(&l->b);
	lir_end(&l->b);
	moved = lir_index(&l->b, copy, emit2(l, LOP_SUB, LTYPE_I64, const_i64(l, 0), first), t);
	l->zero_rows = lir_emit(&l->b, LOP_SELECT, LTYPE_PTR, lir_emit(&l->b, LOP_GET, LTYPE_I1, any, LIR_NONE, LIR_NONE), moved, l->rows);
}

/* The key (i32) of element `at` from `from`, in l->key_rows. */
static uint32_t row_key_at(Lowering *l, uint32_t from, uint32_t at)
{
	uint32_t key = emit2(l, LOP_LOAD, l->key_type, from, at);
	return l->key_type == LTYPE_I64 ? rep_high_key(&l->b, key) : key;
}

/*
 * The keys of features [f0, f0 + TOP_LANES) (f0 i64) of a full tile's rows, whose keys
 * row by row start at `from`, into their tile at `to`: a vector of each row's keys
 * (their high halves where the keys are i64), transposed by four rounds of zips, each
 * pairing vector i with vector i + 8 (the rows' keys then lie by feature), and a vector
 * stored per feature.
 */
static void transpose_keys(Lowering *l, uint32_t from, uint32_t to, uint32_t f0)
{
	uint32_t v[TOP_LANES], w[TOP_LANES], shift = LIR_NONE;
	if (l->key_type == LTYPE_I64) {
		shift = lir_emit_vector(&l->b, LOP_CONST, LTYPE_I64, TOP_LANES, LIR_NONE, LIR_NONE, LIR_NONE);
		l->b.fn->insts[shift].imm = 32;
	}
	for (int64_t r = 0; r < TOP_LANES; r++) {
		uint32_t at = emit2(l, LOP_ADD, LTYPE_I64, f0, const_i64(l, r * l->f->num_features));
		v[r] = lir_emit_vector(&l->b, LOP_LOAD, l->key_type, TOP_LANES, from, at, LIR_NONE);
		if (shift != LIR_NONE) {
			v[r] = lir_emit_vector(&l->b, LOP_ASHR, LTYPE_I64, TOP_LANES, v[r], shift, LIR_NONE);
			v[r] = lir_cast(&l->b, LCAST_TRUNC, LTYPE_I32, v[r]);
		}
	}
	for (int k = 0; k < 4; k++) { /* log2(TOP_LANES) rounds */
		for (int i = 0; i < TOP_LANES / 2; i++) {
			w[2 * i] = lir_emit_vector(&l->b, LOP_ZIP, LTYPE_I32, TOP_LANES, v[i], v[i + TOP_LANES / 2], LIR_NONE);
			w[2 * i + 1] = lir_emit_vector(&l->b, LOP_ZIP, LTYPE_I32, TOP_LANES, v[i], v[i + TOP_LANES / 2], LIR_NONE);
			l->b.fn->insts[w[2 * i + 1]].sub = 1;
		}
		memcpy(v, w, sizeof v);
	}
	for (int64_t j = 0; j < TOP_LANES; j++) {
		uint32_t at = emit2(l, LOP_ADD, LTYPE_I64, f0, const_i64(l, j));
		at = emit2(l, LOP_MUL, LTYPE_I64, at, const_i64(l, TOP_LANES));
		lir_emit(&l->b, LOP_STORE, LTYPE_VOID, to, at, v[j]);
	}
}

/*
 * After the scan of a block of `rows` rows (keys row by row in l->key_rows): the keys
 * into `tiles` (RepLayout.key_lanes), TOP_LANES rows a tile, feature by feature, so that
 * the stores are consecutive (stored row by row in the scan, a row's keys were a line
 * apart each, and syn-year's scan took longer than its walks gained). A tile's rows are
 * a count LLVM does not know, the last tile's being fewer: it vectorises their loop,
 * where it unrolled a loop of 16 into a load and a store per key. Vectorised so, a key
 * still took a load and an insert, half the scan; where the tops take 512-bit vectors,
 * a full tile's features go 16 at a time by a transpose in registers (transpose_keys),
 * its region wide (LIR_IF_WIDE: split into 256-bit halves, the shuffles cost more than
 * the loads they saved). The rest go key by key (measured: docs/performance-notes.md,
 * Keys into tiles).
 */
static void tile_keys(Lowering *l, uint32_t rows, uint32_t tiles)
{
	int64_t width = l->f->num_features, transposed = width / TOP_LANES * TOP_LANES;
	uint32_t zero = const_i64(l, 0), one = const_i64(l, 1), lanes = const_i64(l, TOP_LANES), features = const_i64(l, width);
	uint32_t count, tile, from, to, f, r, at, key, first, rest = zero;
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's evaluation order. */
	count = emit2(l, LOP_ADD, LTYPE_I64, rows, const_i64(l, TOP_LANES - 1));
	count = emit2(l, LOP_SDIV, LTYPE_I64, count, lanes);
	tile = lir_begin(&l->b, LOP_FOR, zero, count, one);
	at = emit2(l, LOP_MUL, LTYPE_I64, tile, const_i64(l, TOP_LANES * width));
	first = emit2(l, LOP_MUL, LTYPE_I64, tile, lanes);
	count = emit2(l, LOP_SUB, LTYPE_I64, rows, first);
	count = emit2(l, LOP_MIN, LTYPE_I64, count, lanes); /* the tile's rows (a count LLVM does not know: it vectorises the loop) */
	from = lir_index(&l->b, l->key_rows, at, l->key_type);
	to = lir_index(&l->b, tiles, at, LTYPE_I32);
	if (l->m->vector_tops == MTOPS_WIDE && transposed) { /* a full tile's first features by blocks of 16 x 16, in registers */
		uint32_t full = lir_cmp(&l->b, LOP_ICMP, LCMP_EQ, count, lanes);
		rest = lir_emit(&l->b, LOP_SELECT, LTYPE_I64, full, const_i64(l, transposed), zero);
		uint32_t branch = lir_begin(&l->b, LOP_IF, full, LIR_NONE, LIR_NONE);
		l->b.fn->insts[branch].imm = LIR_IF_WIDE;
		f = lir_begin(&l->b, LOP_FOR, zero, const_i64(l, transposed), lanes);
		transpose_keys(l, from, to, f);
		lir_end(&l->b);
		lir_end(&l->b);
	}
	f = lir_begin(&l->b, LOP_FOR, rest, features, one);
	from = lir_index(&l->b, from, f, l->key_type);
	to = lir_index(&l->b, to, emit2(l, LOP_MUL, LTYPE_I64, f, lanes), LTYPE_I32);
	r = lir_begin(&l->b, LOP_FOR, zero, count, one);
	key = row_key_at(l, from, emit2(l, LOP_MUL, LTYPE_I64, r, features));
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, to, r, key);
	lir_end(&l->b);
	lir_end(&l->b);
	lir_end(&l->b);
}

/*
 * ifComplete: scan the rows it names for a missing value (NaN, and values within
 * HIR_ZERO_THRESHOLD of zero where some split counts them missing), then lower its body
 * twice: walks without missing-value tests where none is, the usual ones otherwise.
 * Where the compares decide missing values (RepLayout.missing_by_compare) the walks are
 * the same either way, and a lone row's gain nothing from the second copy: the body is
 * lowered once, after a scan that only makes keys.
 * Where NaN reads as 0 (RepLayout.nan_reads_zero) the body is lowered once too, after a
 * scan that makes keys (NaN's is 0's) and, where it finds a NaN, a copy of the rows.
 */
static void lower_if_complete(Lowering *l, const MInst *inst)
{
	LType t = l->row_type;
	bool zero = l->layout.missing_rules & (1u << REP_MISSING_ZERO_RIGHT | 1u << REP_MISSING_ZERO_LEFT);
	uint32_t first = inst->row.num_terms ? lower_index(l, &inst->row, 0) : const_i64(l, 0), end = l->rows_end, width,
	         any = LIR_NONE, at, x, missing, branch, end_row;
	/* Keys of float rows, where the layout has a key copy and they fit on the stack (wider rows' walks read floats). */
	LType key = l->layout.keys && t == LTYPE_F32 ? key_type(l->m, inst) : LTYPE_VOID;
	/*
	 * Keys in tiles (RepLayout.key_lanes) for the tops of walks of TOP_LANES rows, and for
	 * the walks themselves where the key copy's words are for tiles (tile_words), but for
	 * a lone row's that reads its copy in blocks. The scan makes keys row by row, then
	 * tiles them. Where the tiles would not fit the stack, the walks take no tops, and
	 * those that read tiles read the rows instead.
	 */
	bool fits;
	int64_t tile_rows = cost_tiled_rows(l->f, inst->span, &fits);
	bool tiled = key != LTYPE_VOID && l->layout.tile_words && !(inst->span == 1 && l->layout.blocks);
	bool tops = key != LTYPE_VOID && fits && inst->span >= TOP_LANES && l->layout.top_levels >= 2;
	bool masks = key != LTYPE_VOID && fits && inst->span >= TOP_LANES && l->layout.leaf_masks; /* (lower_tile_walk) */
	if (tiled)
		key = fits ? LTYPE_I32 : LTYPE_VOID;
	bool outer = l->complete, keys = key != LTYPE_VOID;
	/* The walks are the same either way; or a lone row's on the host, as fast with the missing-value tests as without. */
	bool once = l->layout.missing_by_compare || l->layout.nan_reads_zero || (inst->span == 1 && !l->gpu);
	bool zero_rows = l->layout.nan_reads_zero && l->row_cache == LIR_NONE; /* (a row cache around made NaN 0 already) */
	bool scan_any = !once || zero_rows;
	uint32_t outer_keys = l->key_rows, outer_first = l->key_first, outer_zero = l->zero_rows, first_row = first;
	uint32_t outer_block_first = l->block_first;
	int64_t outer_block_span = l->block_span;
	uint32_t outer_tops = l->top_nodes, outer_tags = l->top_tags, outer_tiles = l->key_tiles, tiles = LIR_NONE;
	uint32_t outer_tiles_nan = l->key_tiles_nan;
	const MIndex *outer_index = l->key_index;
	bool outer_tiled = l->key_tiled;
	LType outer_key_type = l->key_type;
	bool outer_one_row = l->layout.one_row, one_row;
	uint32_t outer_block_next = l->block_next;
	if (inst->span != MIR_ROWS_ALL) {
		l->block_first = first;
		l->block_span = inst->span;
		l->block_next = LIR_NONE;
	}
	if (key != LTYPE_VOID && !l->gpu && !l->rep->walk && keys_block(l->m, inst)) {
		/* the block of the thread's next iteration of the loop over blocks, or the one after this */
		bool loop = l->loop_stride != LIR_NONE && l->loop_rows == inst->span;
		l->block_next = emit2(l, LOP_ADD, LTYPE_I64, first, loop ? l->loop_stride : const_i64(l, inst->span));
	}
	if (l->rep->one_version) {
		lower_list(l, inst->body);
		l->block_first = outer_block_first;
		l->block_span = outer_block_span;
		l->block_next = outer_block_next;
		return;
	}
	if (keys || scan_any) {
		if (inst->span != MIR_ROWS_ALL)
			end = emit2(l, LOP_MIN, LTYPE_I64, emit2(l, LOP_ADD, LTYPE_I64, first, const_i64(l, inst->span)), l->rows_end);
		/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
		width = const_i64(l, l->f->num_features);
		if (scan_any)
			any = lir_emit(&l->b, LOP_VAR, LTYPE_I1, lir_const_int(&l->b, LTYPE_I1, 0), LIR_NONE, LIR_NONE);
		if (keys) { /* the rows' keys, which the scan writes, for the walks */
			l->layout.one_row = inst->span == 1;
			l->key_rows = lower_rows_array(l, key, inst->span, LSPACE_PRIVATE);
			l->key_first = first_row;
			l->key_index = &inst->row;
			l->key_type = key;
			l->key_tiled = false;
			l->key_tiles = l->key_tiles_nan = l->top_nodes = LIR_NONE;
		}
		if (keys && (tiled || tops || masks)) {
			tiles = lir_local_array(&l->b, LTYPE_I32, tile_rows * l->f->num_features, LSPACE_PRIVATE);
			/*
			 * Vectors of tiles and tops start a cache line: at LLVM's 16 bytes the stack's place
			 * decided it, which Linux shifts by a multiple of 16 bytes from run to run, and a
			 * top's 64 bytes were stored and read across two lines in three runs of four
			 * (measured: docs/performance-notes.md, Aligned tiles and tops).
			 */
			l->b.fn->insts[tiles].lanes = TOP_LANES;
		}
		if (tops) {
			l->top_nodes = lir_local_array(&l->b, LTYPE_I32, TOP_SLOTS * tile_rows, LSPACE_PRIVATE);
			l->b.fn->insts[l->top_nodes].lanes = TOP_LANES;
			l->top_tags = lir_local_array(&l->b, LTYPE_I64, TOP_SLOTS * tile_rows / TOP_LANES, LSPACE_PRIVATE);
		}
		end_row = end;
		first = emit2(l, LOP_MUL, LTYPE_I64, first, width);
		end = emit2(l, LOP_MUL, LTYPE_I64, end, width);
		/*
		 * A block of one row on the host, where it has its row: a loop of a count LLVM knows,
		 * vectorised whole (measured: docs/performance-notes.md, A block of one row).
		 */
		one_row = inst->span == 1 && !l->gpu;
		if (one_row) {
			uint32_t from, k;
			lir_begin(&l->b, LOP_IF, lir_cmp(&l->b, LOP_ICMP, LCMP_SLT, first, end), LIR_NONE, LIR_NONE);
			from = const_i64(l, 0);
			k = lir_begin(&l->b, LOP_FOR, from, width, const_i64(l, 1));
			at = emit2(l, LOP_ADD, LTYPE_I64, first, k);
		} else {
			at = lir_begin(&l->b, LOP_FOR, first, end, const_i64(l, 1));
		}
		x = emit2(l, LOP_LOAD, t, l->rows, at);
		missing = lir_cmp(&l->b, LOP_FCMP, LCMP_UNO, x, x);
		if (keys) {
			uint32_t bits = emit2(l, LOP_LOAD, LTYPE_I32, l->rows, at);
			uint32_t row_key = rep_emit_row_key(&l->layout, &l->b, key, bits, missing);
			lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->key_rows, emit2(l, LOP_SUB, LTYPE_I64, at, first), row_key);
		}
		if (zero) {
			uint32_t up = lir_cmp(&l->b, LOP_FCMP, LCMP_OLE, x, lir_const_float(&l->b, t, HIR_ZERO_THRESHOLD));
			uint32_t down = lir_cmp(&l->b, LOP_FCMP, LCMP_OGE, x, lir_const_float(&l->b, t, -HIR_ZERO_THRESHOLD));
			missing = emit2(l, LOP_OR, LTYPE_I1, missing, emit2(l, LOP_AND, LTYPE_I1, up, down));
		}
		if (scan_any)
			emit2(l, LOP_SET, LTYPE_VOID, any, emit2(l, LOP_OR, LTYPE_I1, lir_emit(&l->b, LOP_GET, LTYPE_I1, any, LIR_NONE, LIR_NONE), missing));
		lir_end(&l->b);
		if (one_row)
			lir_end(&l->b);
		if (keys && l->layout.category_keys)
			lower_category_keys(l, first, end);
		if (tiles != LIR_NONE) {
			uint32_t rows = emit2(l, LOP_SUB, LTYPE_I64, end_row, first_row);
			tile_keys(l, rows, tiles);
			l->key_tiles = tiles;
			if (masks && l->layout.mask_nan_keys)
				l->key_tiles_nan = lower_tiles_less_one(l, rows, tiles, tile_rows);
		}
		if (keys && tiled) {
			l->key_rows = tiles;
			l->key_type = LTYPE_I32;
			l->key_tiled = true;
		}
		if (tops) { /* no top taken yet */
			uint32_t none = const_i64(l, -1);
			at = lir_begin(&l->b, LOP_FOR, const_i64(l, 0), const_i64(l, TOP_SLOTS * tile_rows / TOP_LANES), const_i64(l, 1));
			lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->top_tags, at, none);
			lir_end(&l->b);
		}
		if (zero_rows)
			zero_missing_rows(l, inst, first, end, any);
	}
	if (once) {
		l->walks_apart = true;
		lower_list(l, inst->body);
		l->walks_apart = false;
	} else {
		branch = lir_begin(&l->b, LOP_IF, lir_emit(&l->b, LOP_GET, LTYPE_I1, any, LIR_NONE, LIR_NONE), LIR_NONE, LIR_NONE);
		l->b.fn->insts[branch].imm = LIR_IF_APART; /* the two versions are half the code each: they compile in parallel */
		lower_list(l, inst->body);
		lir_else(&l->b, branch);
		l->complete = true;
		lower_list(l, inst->body);
		l->complete = outer;
		lir_end(&l->b);
	}
	l->block_first = outer_block_first;
	l->block_span = outer_block_span;
	l->block_next = outer_block_next;
	l->key_rows = outer_keys;
	l->key_tiled = outer_tiled;
	l->key_tiles = outer_tiles;
	l->key_tiles_nan = outer_tiles_nan;
	l->key_index = outer_index;
	l->top_nodes = outer_tops;
	l->top_tags = outer_tags;
	l->layout.one_row = outer_one_row;
	l->key_first = outer_first;
	l->key_type = outer_key_type;
	l->zero_rows = outer_zero;
}

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

/*
 * A reduce whose lanes' values are one vector (a code walk of rows side by side) into
 * consecutive elements (the lanes' rows one after another, one output a row or the
 * buffer output by output): one vector load, add and store, each lane's sum as its own.
 */
static bool reduce_vector(Lowering *l, const MInst *inst)
{
	const Storage *st = &l->storage[inst->buf];
	const MBuffer *buf = &l->m->buffers[inst->buf];
	uint32_t lanes = l->scope.lanes, v = l->lanes_value[inst->b], at, old;
	if (v == LIR_NONE || l->tree_widths != LIR_NONE || l->scope.masked != LIR_NONE || l->scope.lanes_are_trees ||
	    inst->strategy == MSTRATEGY_ATOMIC || inst->reduce_op != MREDUCE_SUM || st->per_lane || buf->copy_var != HIR_NONE ||
	    l->scope.lane_step != 1 || !mir_index_has(&inst->row, l->scope.lane_var) || (!st->by_output && buf->outputs != 1))
		return false;
	at = buffer_slot(l, inst->buf, 0, &inst->row, tree_output(l, l->tree_index[lane_slot(inst->a, 0)]));
	old = lir_emit_vector(&l->b, LOP_LOAD, l->acc_type, (uint8_t)lanes, st->base[0], at, LIR_NONE);
	v = lir_emit_vector(&l->b, LOP_FADD, l->acc_type, (uint8_t)lanes, old, v, LIR_NONE);
	lir_emit_vector(&l->b, LOP_STORE, LTYPE_VOID, (uint8_t)lanes, st->base[0], at, v);
	return true;
}

/*
 * reduce: combine each lane's leaf into its row's margins for the tree's outputs, in
 * lane order (tree order when the lanes are trees: sums round as XGBoost's); a masked
 * lane adds nothing. Where trees have leaf vectors, a leaf's value is the index of its
 * vector.
 */
static void lower_reduce(Lowering *l, const MInst *inst)
{
	if (reduce_vector(l, inst))
		return;
	for (uint32_t r = 0; r < l->scope.lanes; r++) {
		uint32_t tree = l->tree_index[lane_slot(inst->a, r)], c = tree_output(l, tree), base = storage_base(l, inst->buf, r);
		uint32_t value = l->value[lane_slot(inst->b, r)], live = lane_live(l, r), width, first, k;
		if (l->tree_widths == LIR_NONE) {
			reduce_into(l, inst, base, buffer_slot(l, inst->buf, r, &inst->row, c), value, live);
			continue;
		}
		width = lir_cast(&l->b, LCAST_SEXT, LTYPE_I64, emit2(l, LOP_LOAD, LTYPE_I32, l->tree_widths, tree));
		if (live != LIR_NONE) /* a masked lane's vector is empty */
			width = lir_emit(&l->b, LOP_SELECT, LTYPE_I64, live, width, const_i64(l, 0));
		first = lir_cast(&l->b, LCAST_FPTOSI, LTYPE_I64, value);
		k = const_i64(l, 0);
		k = lir_begin(&l->b, LOP_FOR, k, width, const_i64(l, 1));
		value = emit2(l, LOP_LOAD, l->acc_type, l->layout.vectors, emit2(l, LOP_ADD, LTYPE_I64, first, k));
		reduce_into(l, inst, base, buffer_slot(l, inst->buf, r, &inst->row, emit2(l, LOP_ADD, LTYPE_I64, c, k)), value, LIR_NONE);
		lir_end(&l->b);
	}
}

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

/* reduceDimension: fold the copies of the privatised buffer into its target, copy by copy (a fixed order: the same sums every run); per lane where the buffers are. */
static void lower_reduce_dim(Lowering *l, const MInst *inst)
{
	const MBuffer *src = &l->m->buffers[inst->src];
	const Storage *from = &l->storage[inst->src];
	for (uint32_t r = 0; r < (from->per_lane ? l->scope.lanes : 1); r++) {
		uint32_t dst_base = storage_base(l, inst->buf, r), src_base = storage_base(l, inst->src, r);
		uint32_t dst_at = buffer_slot(l, inst->buf, r, NULL, const_i64(l, 0));
		uint32_t n = emit2(l, LOP_MUL, LTYPE_I64, from->rows, const_i64(l, src->outputs)); /* elements per copy */
		uint32_t zero = const_i64(l, 0), copies = const_i64(l, src->copies), one = const_i64(l, 1);
		uint32_t copy = lir_begin(&l->b, LOP_FOR, zero, copies, one);
		uint32_t src_at = emit2(l, LOP_ADD, LTYPE_I64, from->offset, emit2(l, LOP_MUL, LTYPE_I64, copy, n));
		if (inst->strategy == MSTRATEGY_VECTOR && inst->vector > 1) {
			uint32_t width = const_i64(l, inst->vector);
			uint32_t whole = emit2(l, LOP_MUL, LTYPE_I64, emit2(l, LOP_SDIV, LTYPE_I64, n, width), width);
			add_span(l, inst->reduce_op, dst_base, dst_at, src_base, src_at, zero, whole, (uint8_t)inst->vector);
			add_span(l, inst->reduce_op, dst_base, dst_at, src_base, src_at, whole, n, 1);
		} else {
			add_span(l, inst->reduce_op, dst_base, dst_at, src_base, src_at, zero, n, 1);
		}
		lir_end(&l->b);
	}
}

/* One MIR instruction, in code that one thread runs (on a GPU: gpu_mask 0). */
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
			                    : l->rep->tree(&l->layout, &l->b, l->tree_index[at], trees_side_by_side(l));
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
		for (uint32_t r = 0; r < l->scope.lanes; r++) {
			l->acc = storage_base(l, inst->buf, r);
			l->acc_offset = buffer_slot(l, inst->buf, r, &inst->row, const_i64(l, 0));
			l->acc_stride = l->storage[inst->buf].by_output ? l->storage[inst->buf].rows : LIR_NONE;
			lower_transform(l, lower_index(l, &inst->row, r));
		}
		break;
	}
}


void lower_list(Lowering *l, uint32_t first)
{
	if (l->gpu && l->gpu_mask) {
		gpu_list(l, first, MIR_NONE, true);
		return;
	}
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
	l->storage = xcalloc(m->num_buffers + 1, sizeof *l->storage);
	l->value = xmalloc(((size_t)m->num_insts + 1) * MIR_MAX_INTERLEAVE * sizeof *l->value);
	l->tree_index = xmalloc(((size_t)m->num_insts + 1) * MIR_MAX_INTERLEAVE * sizeof *l->tree_index);
	l->lanes_value = xmalloc(((size_t)m->num_insts + 1) * sizeof *l->lanes_value);
	for (uint32_t i = 0; i <= m->num_insts; i++)
		l->lanes_value[i] = LIR_NONE;
	if (l->gpu) {
		gpu_entry(l, name, row_type);
	} else {
		begin_function(l, name, row_type, false);
		lower_list(l, m->body);
	}
	free(l->value);
	free(l->lanes_value);
	free(l->tree_index);
	free(l->storage);
	return l->module->num_funcs - 1;
}

/* Directives the host lowering does not take (the GPU ones): an error naming the first one. */
static bool check_host(const HSchedule *s, Error *e)
{
	char where[700];
	for (uint32_t i = 0; i < s->num_vars; i++) {
		const HIndexVar *v = &s->vars[i];
		int32_t var = (int32_t)i;
		if (!v->has_loop)
			continue;
		if (v->gpu_dim)
			return error_set(e, "%s: the host target has no GPU grid or blocks (gpuDimension needs a GPU target)",
			                 hir_schedule_where(s, var, HDIR_GPU_DIMENSION, where, sizeof where));
		if (v->reduce == HREDUCE_SHARED)
			return error_set(e, "%s: the host target has no shared memory (sharedReduce needs a GPU target)",
			                 hir_schedule_where(s, var, HDIR_SHARED_REDUCE, where, sizeof where));
	}
	return true;
}

/* MIR -> LIR for the host (gpu false) or a GPU. */
static LModule *lower_module(const MModule *m, const char *representation, bool gpu, Error *e)
{
	const HForest *f = m->forest;
	Lowering l = {.m = m, .f = f, .e = e, .gpu = gpu};
	HForest *walked;
	bool ok, packable; /* every walk ends on its leaves untested (RepLayout.packed_leaves) */
	bool widen;        /* predict widens its rows and calls predict_f64 (lower/convert_rows.c) */

	if (!gpu && !check_host(&f->schedule, e))
		return NULL;
	if (!(l.rep = rep_for(f, representation, e)))
		return NULL;
	if (l.rep->levels && some_inst(m, m->body, walks_unevenly))
		return error_set(e, "the %s representation reads a split per level: its walks must be unrolled to the trees' "
		                    "depth (unrollWalk)", l.rep->name), NULL;
	if (!lower_check_buffers(m, e))
		return NULL;
	l.module = lir_module_new();
	l.module->gpu = gpu;
	l.module->code = l.rep->walk != NULL;
	/*
	 * A forest that compares in double has an entry for double rows too (rounded to float,
	 * a value between a threshold and its float would change side), but one body where it
	 * can (convert_rows.c): code a row at a time for double rows, float rows widened; others
	 * for float rows (in vectors, twice the lanes), double rows narrowed.
	 */
	l.layout.lanes = !gpu && l.rep->walk_lanes && some_inst(m, m->body, interleaves_rows);
	widen = !gpu && l.module->code && f->threshold_type == HTYPE_F64 && !l.layout.lanes && !f->rows_float;
	/* predict's rows are floats: it walks the forest's float twin, if it has one (and has a body of its own). */
	walked = gpu || widen ? NULL : hir_float_forest(f);
	/* A key copy of the nodes where some walks may read keys; lay_out keeps it where the splits can compare them. */
	l.layout.keys = !gpu && l.rep->keys && some_inst(m, m->body, makes_keys);
	l.layout.blocks = l.layout.keys && some_inst(m, m->body, makes_lone_keys);
	l.layout.step_level = l.layout.leaf_level = -1;
	l.layout.packed_leaves = packable = !gpu && walks_end_on_leaves(m, m->body);
	l.layout.top_levels = l.layout.keys && m->vector_tops && l.rep->top_nodes && some_inst(m, m->body, takes_tops); /* (lower_tops) */
	l.layout.leaf_masks = l.layout.keys && m->vector_tops && l.rep->walk_tile && some_inst(m, m->body, takes_tops);
	l.layout.key_lanes = l.layout.top_levels || l.layout.leaf_masks ? TOP_LANES : 0;
	l.layout.tile_words = cost_keys_in_tiles(f);
	l.layout.vector_tops = m->vector_tops;
	/* The first layout serves the double entry too where there is no float twin. */
	l.layout.nan_reads_zero = may_zero_rows(&l, walked || f->threshold_type == HTYPE_F32 ? sizeof(float) : sizeof(double));
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

	l.row_cache = l.block_first = l.block_next = l.loop_stride = l.key_rows = l.key_tiles = l.key_tiles_nan = l.top_nodes = l.zero_rows = LIR_NONE;
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
				l.layout.nan_reads_zero = may_zero_rows(&l, sizeof(double));
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
	}

	ok = !l.failed && (gpu || lower_check_stack(l.module, e)) && lir_verify(l.module, e);
	if (!ok) {
		lir_module_free(l.module);
		return NULL;
	}
	return l.module;
}

LModule *lower_mir_to_lir(const MModule *m, const char *representation, Error *e) { return lower_module(m, representation, false, e); }

LModule *lower_mir_to_gpu(const MModule *m, const char *representation, Error *e) { return lower_module(m, representation, true, e); }
