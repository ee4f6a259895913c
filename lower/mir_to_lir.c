/*
 * MIR -> LIR: loops become FOR / PARALLEL_FOR over i64 offsets, walks become a LOOP
 * over the representation's node hooks, reductions become loads and stores on the
 * row's accumulator, and the post-transform is expanded into scalar code.
 *
 * The entry function is
 *   predict(ptr rows, i64 nrows, ptr out, i32 flags, ptr workspace)
 * Margins accumulate in LOCAL_ARRAYs, private to the thread that owns the rows, so
 * predicting allocates nothing: one per row, created by its INIT, when every batch
 * loop encloses every tree loop (hir_to_mir then puts INIT, the tree loops and
 * TRANSFORM in one body); or one per tile of rows, created at the top of the tile's
 * outer loop, when the tree loops sit between the halves of a row tile. Schedules
 * with a tree loop outside every batch loop would need a result buffer and are not
 * lowered yet.
 */
#include "lower/lower.h"
#include "lower/rep.h"

#include <stdlib.h>

/* Rows handed to a thread at once by a parallel batch loop; smaller batches stay on the caller. */
#define BATCH_GRAIN 64

/* What the loops around the code being lowered set; each loop restores its outer scope when it ends. */
typedef struct LoopScope {
	uint32_t lanes;             /* rows (or trees) handled together by the enclosing interleaved loop (1 if none) */
	int32_t lane_var;           /* that loop's variable (or HIR_NONE): lane r's row (or tree) is the index + r */
	bool lanes_are_trees;       /* lane_var is a tree variable: the lanes are trees of one row */
	int64_t lane_step;          /* lane r's value is the loop value + r * lane_step */
	uint32_t tile_acc;          /* the accumulator of a tile of rows, or LIR_NONE */
	int32_t tile_var;           /* the row's offset within the tile (its row is tile_var's value) */
} LoopScope;

typedef struct Lowering {
	const MModule *m;
	const HForest *f;
	const LRepresentation *rep;
	RepLayout layout;
	LModule *module;
	LBuilder b;
	LType acc_type;             /* type of margins while they accumulate */
	uint32_t rows, num_rows, out, margin; /* function parameters; margin is i1 */
	uint32_t tree_outputs;      /* address of the per-tree output buffer, or LIR_NONE */
	uint32_t output_buffer;     /* its index */
	uint32_t acc, acc_offset;   /* the current row's margins: acc[acc_offset + c] (select_lane) */
	uint32_t lane_acc[MIR_MAX_INTERLEAVE]; /* per-row accumulators (when scope.tile_acc is LIR_NONE) */
	LoopScope scope;            /* what the enclosing loops set */
	uint32_t var_value[HIR_MAX_VARS];
	uint32_t *value;            /* per MIR instruction and lane: its LIR value (value[id * MIR_MAX_INTERLEAVE + lane]) */
	uint32_t *tree_index;       /* per GET_TREE and lane: the tree number (i64), indexed as value */
	Error *e;
} Lowering;

static uint32_t const_i64(Lowering *l, int64_t v) { return lir_const_int(&l->b, LTYPE_I64, v); }
static uint32_t emit2(Lowering *l, LOp op, LType type, uint32_t x, uint32_t y) { return lir_emit(&l->b, op, type, x, y, LIR_NONE); }

/* The i64 sum of the index variables of index. */
static uint32_t lower_index(Lowering *l, const MIndex *index)
{
	uint32_t sum = l->var_value[index->terms[0]];
	for (uint32_t i = 1; i < index->num_terms; i++)
		sum = emit2(l, LOP_ADD, LTYPE_I64, sum, l->var_value[index->terms[i]]);
	return sum;
}

/* The row (trees: false) or tree (trees: true) of lane `lane` at index: the lanes step along one of them. */
static uint32_t lane_index(Lowering *l, const MIndex *index, uint32_t lane, bool trees)
{
	uint32_t v = lower_index(l, index);
	return lane && l->scope.lanes_are_trees == trees ? emit2(l, LOP_ADD, LTYPE_I64, v, const_i64(l, lane * l->scope.lane_step)) : v;
}

/* Where lane's entry for MIR instruction id sits in value[] and tree_index[]. */
static size_t lane_slot(uint32_t id, uint32_t lane) { return (size_t)id * MIR_MAX_INTERLEAVE + lane; }

/* Make lane's row the current one for load_acc and the stores to its margins. */
static void select_lane(Lowering *l, uint32_t lane)
{
	uint32_t row;
	if (l->scope.lanes_are_trees)
		lane = 0; /* tree lanes share their row */
	if (l->scope.tile_acc == LIR_NONE) {
		l->acc = l->lane_acc[lane];
		l->acc_offset = const_i64(l, 0);
		return;
	}
	row = l->var_value[l->scope.tile_var];
	if (lane && l->scope.tile_var == l->scope.lane_var)
		row = emit2(l, LOP_ADD, LTYPE_I64, row, const_i64(l, lane * l->scope.lane_step));
	l->acc = l->scope.tile_acc;
	l->acc_offset = emit2(l, LOP_MUL, LTYPE_I64, row, const_i64(l, l->f->num_outputs));
}

/* The loop over a tile's rows that initialises their margins, if first is the start of a tile's body; else NULL. */
static const MInst *tile_init_loop(Lowering *l, uint32_t first)
{
	const MInst *inst = first != MIR_NONE ? &l->m->insts[first] : NULL;
	if (!inst || inst->op != MOP_FOR || inst->body == MIR_NONE || l->m->insts[inst->body].op != MOP_INIT ||
	    l->m->insts[inst->body].next != MIR_NONE) /* a loop holding only the init: not a row's whole life */
		return NULL;
	return inst;
}

/* Emit node x of a loop range expression (hir_schedule_range) as an i64. */
static uint32_t lower_expr(Lowering *l, const HRange *r, uint8_t x)
{
	const HExpr *n = &r->nodes[x];
	switch ((HExprOp)n->op) {
	case HEXPR_CONST: return const_i64(l, n->value);
	case HEXPR_ROWS: return l->num_rows;
	case HEXPR_VAR: return l->var_value[n->var];
	case HEXPR_ADD: return emit2(l, LOP_ADD, LTYPE_I64, lower_expr(l, r, n->a), lower_expr(l, r, n->b));
	case HEXPR_SUB: return emit2(l, LOP_SUB, LTYPE_I64, lower_expr(l, r, n->a), lower_expr(l, r, n->b));
	case HEXPR_MIN: return emit2(l, LOP_MIN, LTYPE_I64, lower_expr(l, r, n->a), lower_expr(l, r, n->b));
	}
	die("bad range expression");
}

static void lower_list(Lowering *l, uint32_t first);

/* One loop of inst's variable over [begin, end) by step, its body lowered for `lanes` rows per iteration. */
static void lower_loop(Lowering *l, const MInst *inst, uint32_t begin, uint32_t end, uint32_t step, uint32_t lanes,
                       bool interleaved, bool parallel)
{
	const HIndexVar *v = &l->f->schedule.vars[inst->var];
	uint32_t loop = lir_begin(&l->b, parallel ? LOP_PARALLEL_FOR : LOP_FOR, begin, end, step);
	uint32_t rows = (uint32_t)l->b.fn->insts[step].imm; /* rows per iteration: the step, a constant */
	const MInst *init = tile_init_loop(l, inst->body);
	LoopScope outer = l->scope;
	HRange r;

	if (parallel)
		l->b.fn->insts[loop].imm = (BATCH_GRAIN + rows - 1) / rows; /* iterations of `rows` rows each */
	l->var_value[inst->var] = loop;
	if (interleaved) {
		l->scope.lanes = lanes;
		l->scope.lane_var = inst->var;
		l->scope.lanes_are_trees = v->over_trees;
		l->scope.lane_step = rows / lanes;
	}
	if (init) {
		/* The body is a tile's life: its rows' margins share one scratch array. */
		l->scope.tile_var = init->var;
		l->scope.tile_acc = lir_emit(&l->b, LOP_LOCAL_ARRAY, l->acc_type, LIR_NONE, LIR_NONE, LIR_NONE);
		hir_schedule_range(&l->f->schedule, init->var, &r);
		l->b.fn->insts[l->scope.tile_acc].imm = r.max_trips * r.step * l->f->num_outputs;
	}
	lower_list(l, inst->body);
	l->scope = outer;
	lir_end(&l->b);
}

static void lower_for(Lowering *l, const MInst *inst)
{
	const HIndexVar *v = &l->f->schedule.vars[inst->var];
	HRange r;
	uint32_t begin, end, step;

	hir_schedule_range(&l->f->schedule, inst->var, &r);
	begin = lower_expr(l, &r, r.begin);
	end = lower_expr(l, &r, r.end);
	step = const_i64(l, r.step);
	/* Trees are interleaved only where rows run one at a time: lanes do not multiply. */
	if (inst->interleave > 1 && !(v->over_trees && l->scope.lanes > 1)) {
		/* Whole groups of k, then the rest one at a time (rows: on the calling thread). */
		uint32_t group = const_i64(l, inst->interleave * r.step);
		bool from_zero = r.nodes[r.begin].op == HEXPR_CONST && r.nodes[r.begin].value == 0;
		uint32_t span = from_zero ? end : emit2(l, LOP_SUB, LTYPE_I64, end, begin);
		uint32_t groups_end = emit2(l, LOP_MUL, LTYPE_I64, emit2(l, LOP_SDIV, LTYPE_I64, span, group), group);
		if (!from_zero)
			groups_end = emit2(l, LOP_ADD, LTYPE_I64, begin, groups_end);
		lower_loop(l, inst, begin, groups_end, group, inst->interleave, true, inst->parallel);
		lower_loop(l, inst, groups_end, end, step, 1, true, false);
	} else {
		lower_loop(l, inst, begin, end, step, 1, false, inst->parallel);
	}
}

/* One step of a walk from node for row: the representation tests the split and yields the child (a leaf stays where leaf_stays). */
static uint32_t lower_step(Lowering *l, uint32_t tree, uint32_t node, const RepRow *row, const RepNode *fields, bool leaf_stays)
{
	return l->rep->step(&l->layout, &l->b, tree, node, fields, row, leaf_stays);
}

/*
 * walk: follow the tree from its root to a leaf for the row of every lane; sets the
 * walk's value per lane to the leaf's value. The lanes' steps are emitted side by side
 * so that their loads overlap.
 */
static void lower_walk(Lowering *l, uint32_t id)
{
	const LRepresentation *rep = l->rep;
	const MInst *walk = &l->m->insts[id];
	uint32_t node[MIR_MAX_INTERLEAVE], tree[MIR_MAX_INTERLEAVE], cell;
	RepRow row[MIR_MAX_INTERLEAVE];
	RepNode fields;

	for (uint32_t r = 0; r < l->scope.lanes; r++) {
		uint32_t index = lane_index(l, &walk->row, r, false);
		tree[r] = l->value[lane_slot(walk->a, r)];
		row[r] = (RepRow){.base = l->rows, .start = emit2(l, LOP_MUL, LTYPE_I64, index, const_i64(l, l->f->num_features))};
		node[r] = r && !l->scope.lanes_are_trees ? node[0] : rep->root(&l->layout, &l->b, tree[r]);
	}
	/* Peeled steps: no test. The first peel_safe start on splits; later ones may start on a leaf and stay there. */
	for (uint32_t i = 0; i < walk->peel; i++) {
		for (uint32_t r = 0; r < l->scope.lanes; r++) {
			fields = rep->load_node(&l->layout, &l->b, tree[r], node[r]);
			node[r] = lower_step(l, tree[r], node[r], &row[r], &fields, i >= walk->peel_safe);
		}
	}
	for (uint32_t r = 0; r < l->scope.lanes && !walk->exact; r++) {
		cell = lir_emit(&l->b, LOP_VAR, LTYPE_I64, node[r], LIR_NONE, LIR_NONE);
		lir_begin(&l->b, LOP_LOOP, LIR_NONE, LIR_NONE, LIR_NONE);
		node[r] = lir_emit(&l->b, LOP_GET, LTYPE_I64, cell, LIR_NONE, LIR_NONE);
		fields = rep->load_node(&l->layout, &l->b, tree[r], node[r]);
		lir_emit(&l->b, LOP_BREAK_IF, LTYPE_VOID, fields.is_leaf, LIR_NONE, LIR_NONE);
		emit2(l, LOP_SET, LTYPE_VOID, cell, lower_step(l, tree[r], node[r], &row[r], &fields, false));
		lir_end(&l->b);
		node[r] = lir_emit(&l->b, LOP_GET, LTYPE_I64, cell, LIR_NONE, LIR_NONE);
	}
	for (uint32_t r = 0; r < l->scope.lanes; r++)
		l->value[lane_slot(id, r)] = rep->leaf_value(&l->layout, &l->b, tree[r], node[r]);
}

/* The output a tree adds to, as i64. */
static uint32_t tree_output(Lowering *l, uint32_t tree_index)
{
	if (l->f->num_outputs == 1)
		return const_i64(l, 0);
	return lir_cast(&l->b, LCAST_SEXT, LTYPE_I64, emit2(l, LOP_LOAD, LTYPE_I32, l->tree_outputs, tree_index));
}

/* Store value (acc_type) as float into out[index]. */
static void store_output(Lowering *l, uint32_t index, uint32_t value)
{
	if (lir_type(l->b.fn, value) != LTYPE_F32)
		value = lir_cast(&l->b, LCAST_FPTRUNC, LTYPE_F32, value);
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->out, index, value);
}

/* The index of margin c of the current row in l->acc. */
static uint32_t acc_index(Lowering *l, uint32_t c) { return emit2(l, LOP_ADD, LTYPE_I64, l->acc_offset, c); }

/* acc[c] for c in a loop being built. */
static uint32_t load_acc(Lowering *l, uint32_t c) { return emit2(l, LOP_LOAD, l->acc_type, l->acc, acc_index(l, c)); }

/* for c in [from, outputs): body. Returns the loop value; caller ends it. */
static uint32_t begin_outputs(Lowering *l, int64_t from)
{
	uint32_t begin = const_i64(l, from), end = const_i64(l, l->f->num_outputs), step = const_i64(l, 1);
	return lir_begin(&l->b, LOP_FOR, begin, end, step);
}

/* Emit: for each margin c, out[out_start + c] = f(acc[c]) where f is identity, sigmoid or exp. */
static void lower_elementwise(Lowering *l, uint32_t out_start, HTransform t)
{
	uint32_t c = begin_outputs(l, 0), m = load_acc(l, c);
	if (t == HTRANSFORM_SIGMOID) {
		uint32_t one = lir_const_float(&l->b, l->acc_type, 1.0);
		uint32_t e = lir_emit(&l->b, LOP_EXP, l->acc_type, lir_emit(&l->b, LOP_FNEG, l->acc_type, m, LIR_NONE, LIR_NONE), LIR_NONE, LIR_NONE);
		m = emit2(l, LOP_FDIV, l->acc_type, one, emit2(l, LOP_FADD, l->acc_type, one, e));
	} else if (t == HTRANSFORM_EXP) {
		m = lir_emit(&l->b, LOP_EXP, l->acc_type, m, LIR_NONE, LIR_NONE);
	}
	store_output(l, emit2(l, LOP_ADD, LTYPE_I64, out_start, c), m);
	lir_end(&l->b);
}

/* Emit the largest margin (and with index_of, its first index) into fresh cells. */
static void lower_max(Lowering *l, uint32_t *max_cell, uint32_t *index_cell)
{
	uint32_t c, m, greater;
	*max_cell = lir_emit(&l->b, LOP_VAR, l->acc_type, load_acc(l, const_i64(l, 0)), LIR_NONE, LIR_NONE);
	*index_cell = lir_emit(&l->b, LOP_VAR, LTYPE_I64, const_i64(l, 0), LIR_NONE, LIR_NONE);
	c = begin_outputs(l, 1);
	m = load_acc(l, c);
	greater = lir_cmp(&l->b, LOP_FCMP, LCMP_OGT, m, lir_emit(&l->b, LOP_GET, l->acc_type, *max_cell, LIR_NONE, LIR_NONE));
	emit2(l, LOP_SET, LTYPE_VOID, *max_cell, lir_emit(&l->b, LOP_SELECT, l->acc_type, greater, m, lir_emit(&l->b, LOP_GET, l->acc_type, *max_cell, LIR_NONE, LIR_NONE)));
	emit2(l, LOP_SET, LTYPE_VOID, *index_cell, lir_emit(&l->b, LOP_SELECT, LTYPE_I64, greater, c, lir_emit(&l->b, LOP_GET, LTYPE_I64, *index_cell, LIR_NONE, LIR_NONE)));
	lir_end(&l->b);
}

/* Softmax as XGBoost computes it: subtract the max, exponentiate, divide by the sum (summed in double). */
static void lower_softmax(Lowering *l, uint32_t out_start)
{
	uint32_t max_cell, index_cell, max, sum, c, e, total, index;
	lower_max(l, &max_cell, &index_cell);
	max = lir_emit(&l->b, LOP_GET, l->acc_type, max_cell, LIR_NONE, LIR_NONE);
	sum = lir_emit(&l->b, LOP_VAR, LTYPE_F64, lir_const_float(&l->b, LTYPE_F64, 0.0), LIR_NONE, LIR_NONE);
	c = begin_outputs(l, 0);
	e = lir_emit(&l->b, LOP_EXP, l->acc_type, emit2(l, LOP_FSUB, l->acc_type, load_acc(l, c), max), LIR_NONE, LIR_NONE);
	if (l->acc_type != LTYPE_F64)
		e = lir_cast(&l->b, LCAST_FPEXT, LTYPE_F64, e);
	emit2(l, LOP_SET, LTYPE_VOID, sum, emit2(l, LOP_FADD, LTYPE_F64, lir_emit(&l->b, LOP_GET, LTYPE_F64, sum, LIR_NONE, LIR_NONE), e));
	lir_end(&l->b);
	total = lir_emit(&l->b, LOP_GET, LTYPE_F64, sum, LIR_NONE, LIR_NONE);
	if (l->acc_type != LTYPE_F64)
		total = lir_cast(&l->b, LCAST_FPTRUNC, l->acc_type, total);
	/*
	 * The exponentials are computed again rather than stored back into the margins:
	 * storing and reloading them through a 64-row tile's scratch array came out wrong
	 * after LLVM 16's loop vectorizer (column 0 kept its margin; found by
	 * tests/schedules/xgboost.sched on multi_softprob3, bisected to LoopVectorizePass;
	 * whether our IR or LLVM is at fault is not settled).
	 */
	c = begin_outputs(l, 0);
	index = emit2(l, LOP_ADD, LTYPE_I64, out_start, c);
	e = lir_emit(&l->b, LOP_EXP, l->acc_type, emit2(l, LOP_FSUB, l->acc_type, load_acc(l, c), max), LIR_NONE, LIR_NONE);
	store_output(l, index, emit2(l, LOP_FDIV, l->acc_type, e, total));
	lir_end(&l->b);
}

/* transform: write the row's predictions (or, when margin is set, its raw margins). */
static void lower_transform(Lowering *l, uint32_t row)
{
	HTransform t = l->f->transform;
	uint32_t margins_start = emit2(l, LOP_MUL, LTYPE_I64, row, const_i64(l, l->f->num_outputs));
	uint32_t branch;

	if (t == HTRANSFORM_IDENTITY) {
		lower_elementwise(l, margins_start, t);
		return;
	}
	branch = lir_begin(&l->b, LOP_IF, l->margin, LIR_NONE, LIR_NONE);
	lower_elementwise(l, margins_start, HTRANSFORM_IDENTITY);
	lir_else(&l->b, branch);
	switch (t) {
	case HTRANSFORM_SIGMOID:
	case HTRANSFORM_EXP:
		lower_elementwise(l, margins_start, t);
		break;
	case HTRANSFORM_SOFTMAX:
		lower_softmax(l, margins_start);
		break;
	case HTRANSFORM_ARGMAX: {
		uint32_t max_cell, index_cell, index;
		lower_max(l, &max_cell, &index_cell);
		index = lir_emit(&l->b, LOP_GET, LTYPE_I64, index_cell, LIR_NONE, LIR_NONE);
		store_output(l, row, lir_cast(&l->b, LCAST_SITOFP, LTYPE_F32, index));
		break;
	}
	case HTRANSFORM_IDENTITY:
		break;
	}
	lir_end(&l->b);
}

static void lower_list(Lowering *l, uint32_t first)
{
	for (uint32_t id = first; id != MIR_NONE; id = l->m->insts[id].next) {
		const MInst *inst = &l->m->insts[id];
		switch ((MOp)inst->op) {
		case MOP_FOR:
			lower_for(l, inst);
			break;
		case MOP_INIT:
			for (uint32_t r = 0; r < l->scope.lanes; r++) {
				if (l->scope.tile_acc == LIR_NONE) {
					l->lane_acc[r] = lir_emit(&l->b, LOP_LOCAL_ARRAY, l->acc_type, LIR_NONE, LIR_NONE, LIR_NONE);
					l->b.fn->insts[l->lane_acc[r]].imm = l->f->num_outputs;
				}
				select_lane(l, r);
				for (uint32_t c = 0; c < l->f->num_outputs; c++) {
					uint32_t index = acc_index(l, const_i64(l, c));
					uint32_t base = lir_const_float(&l->b, l->acc_type, l->f->base_score[c]);
					lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->acc, index, base);
				}
			}
			break;
		case MOP_GET_TREE:
			for (uint32_t r = 0; r < l->scope.lanes; r++) {
				size_t at = lane_slot(id, r), lane0 = lane_slot(id, 0);
				bool same = r && !l->scope.lanes_are_trees; /* row lanes share the tree */
				l->tree_index[at] = same ? l->tree_index[lane0] : lane_index(l, &inst->tree, r, true);
				l->value[at] = same ? l->value[lane0] : l->rep->tree(&l->layout, &l->b, l->tree_index[at]);
			}
			break;
		case MOP_WALK:
			lower_walk(l, id);
			break;
		case MOP_REDUCE:
			/* In lane order, which is tree order when the lanes are trees: sums round as XGBoost's. */
			for (uint32_t r = 0; r < l->scope.lanes; r++) {
				uint32_t c = tree_output(l, l->tree_index[lane_slot(inst->a, r)]), sum;
				select_lane(l, r);
				sum = emit2(l, LOP_FADD, l->acc_type, load_acc(l, c), l->value[lane_slot(inst->b, r)]);
				lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->acc, acc_index(l, c), sum);
			}
			break;
		case MOP_TRANSFORM:
			for (uint32_t r = 0; r < l->scope.lanes; r++) {
				select_lane(l, r);
				lower_transform(l, lane_index(l, &inst->row, r, false));
			}
			break;
		}
	}
}

/* The per-tree output buffer: which margin each tree adds to. */
static uint32_t add_output_buffer(LModule *module, const HForest *f)
{
	int32_t *outputs = xmalloc(((size_t)f->num_trees + 1) * sizeof *outputs);
	for (uint32_t t = 0; t < f->num_trees; t++)
		outputs[t] = (int32_t)f->trees[t].output;
	return lir_buffer_add(module, "tree_outputs", LTYPE_I32, f->num_trees, outputs);
}

LModule *lower_mir_to_lir(const MModule *m, const char *representation, Error *e)
{
	static const LType params[] = {LTYPE_PTR, LTYPE_I64, LTYPE_PTR, LTYPE_I32, LTYPE_PTR};
	const HForest *f = m->forest;
	Lowering l = {.m = m, .f = f, .e = e, .tree_outputs = LIR_NONE};
	LFunc *fn;
	bool ok;

	l.rep = representation ? rep_find(representation) : rep_choose(f);
	if (!l.rep)
		return error_set(e, "unknown representation '%s'", representation), NULL;
	if (m->body == MIR_NONE || m->insts[m->body].op != MOP_FOR || m->insts[m->body].next != MIR_NONE)
		return error_set(e, "schedule: a tree loop outside a batch loop is not supported yet"), NULL;
	l.module = lir_module_new();
	if (!l.rep->lay_out(f, l.module, &l.layout, e)) {
		lir_module_free(l.module);
		return NULL;
	}
	l.acc_type = l.layout.leaf_type;
	l.module->num_features = f->num_features;
	l.module->num_margins = f->num_outputs;
	l.module->num_outputs = f->transform == HTRANSFORM_ARGMAX ? 1 : f->num_outputs;
	l.module->transform = f->transform;
	if (f->num_outputs > 1)
		l.output_buffer = add_output_buffer(l.module, f);

	fn = lir_func_add(l.module, "predict", params, COUNT_OF(params));
	l.module->predict = l.module->num_funcs - 1;
	lir_builder_init(&l.b, fn);
	l.rows = lir_emit(&l.b, LOP_PARAM, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
	l.num_rows = lir_emit(&l.b, LOP_PARAM, LTYPE_I64, LIR_NONE, LIR_NONE, LIR_NONE);
	fn->insts[l.num_rows].imm = 1;
	l.out = lir_emit(&l.b, LOP_PARAM, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
	fn->insts[l.out].imm = 2;
	{
		uint32_t flags = lir_emit(&l.b, LOP_PARAM, LTYPE_I32, LIR_NONE, LIR_NONE, LIR_NONE);
		uint32_t workspace = lir_emit(&l.b, LOP_PARAM, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE); /* unused: no scratch */
		uint32_t one = lir_const_int(&l.b, LTYPE_I32, 1), zero = lir_const_int(&l.b, LTYPE_I32, 0);
		fn->insts[flags].imm = 3;
		fn->insts[workspace].imm = 4;
		l.margin = lir_cmp(&l.b, LOP_ICMP, LCMP_NE, emit2(&l, LOP_AND, LTYPE_I32, flags, one), zero);
	}
	if (f->num_outputs > 1) {
		l.tree_outputs = lir_emit(&l.b, LOP_BUFFER, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
		fn->insts[l.tree_outputs].imm = l.output_buffer;
	}
	l.rep->begin_function(&l.layout, &l.b);

	l.scope = (LoopScope){.lanes = 1, .lane_var = HIR_NONE, .tile_acc = LIR_NONE, .tile_var = HIR_NONE};
	l.value = xmalloc(((size_t)m->num_insts + 1) * MIR_MAX_INTERLEAVE * sizeof *l.value);
	l.tree_index = xmalloc(((size_t)m->num_insts + 1) * MIR_MAX_INTERLEAVE * sizeof *l.tree_index);
	lower_list(&l, m->body);
	free(l.value);
	free(l.tree_index);
	l.rep->free(&l.layout);

	ok = lir_verify(l.module, e);
	if (!ok) {
		lir_module_free(l.module);
		return NULL;
	}
	return l.module;
}
