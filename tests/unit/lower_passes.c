/* Unit tests of the HIR verifier, the HIR -> MIR lowering and representation choice. */
#include "lower/cost.h"
#include "lower/lower.h"
#include "lower/rep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/check.h"
#include "tests/unit/lower_check.h"


/* A forest of num_trees trees that each split on feature 0 then 1 (depth 2, 7 nodes). */
static HForest *small_forest(uint32_t num_trees, uint32_t num_outputs)
{
	HForest *f = hir_forest_new("unit", 2, num_outputs);
	for (uint32_t t = 0; t < num_trees; t++) {
		HNode *n = hir_tree_add(f, 7, t % num_outputs);
		n[0] = (HNode){.value = 0.5, .left = 1, .right = 2, .feature = 0, .default_left = 1};
		n[1] = (HNode){.value = 0.25, .left = 3, .right = 4, .feature = 1};
		n[2] = (HNode){.value = 0.75, .left = 5, .right = 6, .feature = 1};
		for (int i = 3; i < 7; i++)
			n[i] = (HNode){.value = i, .feature = HIR_LEAF};
	}
	CHECK(hir_choose_schedule(f, 0, 8, 8, "array", MTOPS_NONE, NULL));
	return f;
}

/* hir_verify must reject f with a message containing text. */
static void expect_invalid(HForest *f, const char *text)
{
	Error e = {.message = {0}};
	bool ok = hir_verify(f, &e);
	CHECK(!ok);
	if (!ok && !strstr(e.message, text)) {
		fprintf(stderr, "expected '%s' in '%s'\n", text, e.message);
		failures++;
	}
}

static void test_verify(void)
{
	Error e;
	HForest *f = small_forest(2, 1);
	CHECK(hir_verify(f, &e));
	CHECK(hir_tree_depth(f, 0) == 2);

	hir_tree_nodes(f, 1)[2].left = 9;
	expect_invalid(f, "tree 1 node 2: left child 9 out of range");
	hir_tree_nodes(f, 1)[2].left = 1; /* node 1 now has two parents */
	expect_invalid(f, "reached twice");
	hir_tree_nodes(f, 1)[2].left = 0; /* back to the root: a cycle */
	expect_invalid(f, "out of range");
	hir_tree_nodes(f, 1)[2].left = 5;
	hir_tree_nodes(f, 1)[1].feature = 2;
	expect_invalid(f, "feature 2 out of range");
	hir_tree_nodes(f, 1)[1].feature = 1;
	hir_tree_nodes(f, 0)[4].value = 0.0 / 0.0;
	expect_invalid(f, "tree 0 node 4: leaf value is NaN");
	hir_tree_nodes(f, 0)[4].value = 1;
	f->trees[1].output = 1;
	expect_invalid(f, "output 1 out of range");
	f->trees[1].output = 0;
	CHECK(hir_verify(f, &e));
	hir_forest_free(f);
}

/* The instruction kinds of a list, in order, as a string of first letters of their names. */
static void shape(const MModule *m, uint32_t first, char *out)
{
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		const MInst *inst = &m->insts[id];
		*out++ = mir_op_name((MOp)inst->op)[0];
		if (inst->op == MOP_FOR) {
			*out++ = '(';
			shape(m, inst->body, out);
			out += strlen(out);
			*out++ = ')';
		}
	}
	*out = 0;
}

static void test_hir_to_mir(void)
{
	Error e;
	char text[128];
	HForest *f = small_forest(4, 2);
	MModule *m = lower_hir_to_mir(f, NULL, &e);
	CHECK(m != NULL);
	shape(m, m->body, text);
	/* the default: for b0 { for b1 { buffer; init; for t0 { for t1 { getTree; walk; reduce } }; transform } } */
	CHECK(strcmp(text, "f(f(bif(f(gwr))t))") == 0);
	CHECK(m->insts[m->body].parallel);
	mir_module_free(m);

	/* tile(batch, b0, b1, 8); reorder(b0, tree, b1): the tree loop sits between the batch loops. */
	HSchedule *s = &f->schedule;
	hir_schedule_init(s, f->num_trees);
	CHECK(hir_schedule_parse(s, "tile(batch, b0, b1, 8); reorder(b0, tree, b1)", "unit", &e));
	m = lower_hir_to_mir(f, NULL, &e);
	CHECK(m != NULL);
	shape(m, m->body, text);
	/* a tile of rows lives in one b0 iteration: its buffer is declared there, the transform gets a b1 loop */
	CHECK(strcmp(text, "f(bif(f(gwr))f(t))") == 0);
	{
		LModule *tiled = lower_as(m, NULL, &e);
		CHECK(tiled != NULL);
		lir_module_free(tiled);
	}
	mir_module_free(m);

	/* reorder(tree, b0, b1): the tree loop outside every batch loop; the margins of all rows live in the workspace */
	CHECK(hir_schedule_parse(s, "reorder(tree, b0, b1)", "unit", &e));
	m = lower_hir_to_mir(f, NULL, &e);
	CHECK(m != NULL);
	shape(m, m->body, text);
	CHECK(strcmp(text, "bif(f(f(gwr)))f(f(t))") == 0);
	CHECK(m->num_buffers == 1 && m->buffers[0].rows == MIR_ROWS_ALL && m->buffers[0].space == MSPACE_WORKSPACE);
	{
		LModule *outer = lower_as(m, NULL, &e);
		CHECK(outer != NULL && outer->workspace_per_row == f->num_outputs * sizeof(float) && outer->workspace_fixed == 0);
		lir_module_free(outer);
	}
	mir_module_free(m);

	/* b0, b1, tree: both batch loops enclose the tree loop, the row lives in one body */
	CHECK(hir_schedule_parse(s, "reorder(b0, b1, tree)", "unit", &e));
	m = lower_hir_to_mir(f, NULL, &e);
	CHECK(m != NULL);
	shape(m, m->body, text);
	CHECK(strcmp(text, "f(f(bif(gwr)t))") == 0);
	LModule *l = lower_as(m, "sparse", &e);
	CHECK(l != NULL);
	lir_module_free(l);
	mir_module_free(m);

	/*
	 * Halves of a batch split by size, the lone rows' tree loop outside their rows: each
	 * half its own margins, on the stack (the lone rows' 3, counted from row 0; the other's
	 * tile), not one buffer of all N rows for both.
	 */
	hir_schedule_init(s, f->num_trees);
	CHECK(hir_schedule_parse(s, "splitSize(batch, few, many, 4); reorder(few.tree, few); tile(many, b0, b1, 8); "
	                            "reorder(b0, many.tree, b1)", "unit", &e));
	m = lower_hir_to_mir(f, NULL, &e);
	CHECK(m != NULL);
	shape(m, m->body, text);
	CHECK(strcmp(text, "bif(f(gwr))f(t)f(bif(f(gwr))f(t))") == 0);
	CHECK(m->num_buffers == 2 && m->buffers[0].space == MSPACE_LOCAL && m->buffers[0].rows == 3 &&
	      m->buffers[0].base.num_terms == 0 && m->buffers[1].space == MSPACE_LOCAL && m->buffers[1].rows == 8);
	mir_module_free(m);

	/* a schedule made for another forest is rejected */
	s->num_trees++;
	CHECK(lower_hir_to_mir(f, NULL, &e) == NULL && strstr(e.message, "made for 5 trees, the forest has 4"));
	hir_forest_free(f);
}

static void test_representations(void)
{
	Error e;
	HForest *f = small_forest(3, 1);
	CHECK(rep_choose(f) == &rep_array); /* complete trees: no slot wasted */

	/* a chain of depth 30: array would need 2^31 slots per tree */
	HForest *deep = hir_forest_new("deep", 1, 1);
	HNode *n = hir_tree_add(deep, 61, 0);
	for (uint32_t i = 0; i < 30; i++) {
		n[2 * i] = (HNode){.value = i, .left = 2 * i + 1, .right = 2 * i + 2, .feature = 0};
		n[2 * i + 1] = (HNode){.value = -1.0 * i, .feature = HIR_LEAF};
	}
	n[60] = (HNode){.value = 100, .feature = HIR_LEAF};
	CHECK(hir_verify(deep, &e));
	CHECK(hir_tree_depth(deep, 0) == 30);
	CHECK(rep_choose(deep) == &rep_sparse);
	MModule *m = lower_hir_to_mir(deep, NULL, &e);
	CHECK(m && lower_as(m, "array", &e) == NULL && strstr(e.message, "depth 30"));
	LModule *l = m ? lower_as(m, NULL, &e) : NULL;
	CHECK(l != NULL && l->buffers[0].count == 61);
	lir_module_free(l);
	/* tiles of one split: the array flavour would need 2^31 slots, the child table one record per node */
	CHECK(m && lower_as(m, "tiled_array", &e) == NULL && strstr(e.message, "tree 0 is too deep in tiles"));
	l = m ? lower_as(m, "tiled", &e) : NULL;
	CHECK(l != NULL);
	lir_module_free(l);
	mir_module_free(m);
	CHECK(rep_find("array") == &rep_array && rep_find("sparse") == &rep_sparse && rep_find("nope") == NULL);
	hir_forest_free(deep);
	hir_forest_free(f);
}

/* hir_pad keeps every prediction and puts all leaves at one depth; mir_unroll_walks then drops the leaf tests. */
static void test_pad_and_unroll(void)
{
	Error e;
	uint32_t min, max;
	HForest *f = small_forest(2, 1);
	HNode *n = hir_tree_nodes(f, 1);
	n[2] = (HNode){.value = 42, .feature = HIR_LEAF}; /* tree 1: leaves at depths 1 and 2 */
	hir_tree_reshaped(f, 1);
	hir_leaf_depth_range(f, &min, &max);
	CHECK(min == 1 && max == 2);
	CHECK(hir_padded_nodes(f) == 16); /* tree 1 keeps its two unreachable nodes */
	CHECK(cost_padding_pays(f));
	hir_pad(f);
	CHECK(hir_verify(f, &e));
	CHECK(f->num_nodes == 16 && f->trees[1].num_nodes == 9);
	hir_leaf_depth_range(f, &min, &max);
	CHECK(min == 2 && max == 2);
	/* both children of the old leaf carry its value */
	n = hir_tree_nodes(f, 1);
	CHECK(n[2].feature == 0 && n[n[2].left].value == 42 && n[n[2].right].value == 42);

	MModule *m = lower_hir_to_mir(f, NULL, &e);
	CHECK(m != NULL);
	mir_unroll_walks(m);
	for (uint32_t id = 0; m && id < m->num_insts; id++)
		if (m->insts[id].op == MOP_WALK)
			CHECK(m->insts[id].exact && m->insts[id].peel == 2);
	mir_module_free(m);
	hir_forest_free(f);
}

/* The instruction of kind op that comes first in a depth-first walk of list first, or NULL. */
static const MInst *find_op(const MModule *m, uint32_t first, MOp op)
{
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		const MInst *found = m->insts[id].op == op ? &m->insts[id] : NULL;
		if (!found && m->insts[id].op == MOP_FOR)
			found = find_op(m, m->insts[id].body, op);
		if (found)
			return found;
	}
	return NULL;
}

/* Lower f under schedule text and legalize its reductions; NULL (and e filled) if either fails. */
static MModule *legalized(HForest *f, const char *text, Error *e)
{
	MModule *m;
	hir_schedule_init(&f->schedule, f->num_trees);
	if (!hir_schedule_parse(&f->schedule, text, "unit", e) || !(m = lower_hir_to_mir(f, NULL, e)))
		return NULL;
	if (!mir_legalize_reductions(m, e)) {
		mir_module_free(m);
		return NULL;
	}
	return m;
}

static void test_legalize(void)
{
	Error e = {.message = {0}};
	char text[128];
	HForest *f = small_forest(4, 1);
	MModule *m;

	/* Trees in parallel over all rows: one zeroed copy of the margins per tree, folded after the tree loop. */
	m = legalized(f, "reorder(tree, batch); parallel(tree)", &e);
	CHECK(m && m->num_buffers == 2);
	if (m) {
		const MBuffer *copy = &m->buffers[1];
		const MInst *reduce = find_op(m, m->body, MOP_REDUCE), *fold = find_op(m, m->body, MOP_REDUCE_DIM);
		shape(m, m->body, text);
		CHECK(strcmp(text, "bibif(f(gwr))rf(t)") == 0);
		CHECK(copy->of == 0 && copy->copies == 4 && copy->zero && copy->space == MSPACE_WORKSPACE && copy->rows == MIR_ROWS_ALL);
		CHECK(copy->copy_var == hir_schedule_find(&f->schedule, "tree"));
		CHECK(reduce && reduce->buf == 1 && reduce->strategy == MSTRATEGY_PLAIN);
		CHECK(fold && fold->buf == 0 && fold->src == 1 && fold->strategy == MSTRATEGY_PLAIN);
	}
	mir_module_free(m);

	/* Rows parallel, then trees parallel inside each tile, atomically: one shared buffer, atomic adds. */
	m = legalized(f, "tile(batch, b0, b1, 8); tile(tree, t0, t1, 2); reorder(b0, t0, b1, t1); parallel(b0); parallel(t0); atomicReduce(t0)", &e);
	CHECK(m && m->num_buffers == 1 && m->buffers[0].space == MSPACE_SHARED && m->buffers[0].rows == 8);
	if (m)
		CHECK(find_op(m, m->body, MOP_REDUCE)->strategy == MSTRATEGY_ATOMIC && !find_op(m, m->body, MOP_REDUCE_DIM));
	mir_module_free(m);

	/* Two nested parallel tree loops: the copies along t0 are privatised again along t1, inside t0, and folded twice. */
	m = legalized(f, "tile(batch, b0, b1, 8); tile(tree, t0, t1, 2); reorder(b0, t0, t1, b1); parallel(t0); parallel(t1); vectorReduce(t1, 4)", &e);
	CHECK(m && m->num_buffers == 3);
	if (m) {
		const MInst *fold = find_op(m, m->body, MOP_REDUCE_DIM);
		shape(m, m->body, text);
		CHECK(strcmp(text, "f(bibif(bif(f(gwr))r)rf(t))") == 0);
		CHECK(m->buffers[1].of == 0 && m->buffers[2].of == 1 && m->buffers[1].copies == 2 && m->buffers[2].copies == 2);
		CHECK(m->buffers[0].rows == 8 && m->buffers[2].rows == 8 && m->buffers[2].space == MSPACE_SHARED);
		/* the first fold found is the inner one, into t0's copy, 4 elements at a time */
		CHECK(fold && fold->buf == 1 && fold->src == 2 && fold->strategy == MSTRATEGY_VECTOR && fold->vector == 4);
	}
	mir_module_free(m);

	/* A copy's reduce inside atomics, which would make no copies, is refused, naming both directives. */
	CHECK(!legalized(f, "tile(batch, b0, b1, 8); tile(tree, t0, t1, 2); reorder(b0, t0, t1, b1); parallel(t0); parallel(t1); "
	                    "atomicReduce(t0); vectorReduce(t1, 4)", &e));
	CHECK(strstr(e.message, "vectorReduce(t1, 4): the reductions inside go to their margins with atomics already") &&
	      strstr(e.message, "atomicReduce(t0), around it"));

	/*
	 * Trees in parallel outside the rows and again inside each row (the paper's hierarchical reduction): the copies
	 * along t0 hold all N rows; t1's copies of them hold the row's margins alone, folded into its row of t0's copy.
	 */
	m = legalized(f, "tile(tree, t0, t1, 2); reorder(t0, batch, t1); parallel(t0); parallel(t1)", &e);
	CHECK(m && m->num_buffers == 3);
	if (m) {
		const MBuffer *outer = &m->buffers[1], *inner = &m->buffers[2];
		const MInst *fold = find_op(m, m->body, MOP_REDUCE_DIM);
		int32_t batch = hir_schedule_find(&f->schedule, "batch");
		shape(m, m->body, text);
		CHECK(strcmp(text, "bibif(f(bif(gwr)r))rf(t)") == 0);
		CHECK(outer->rows == MIR_ROWS_ALL && outer->space == MSPACE_WORKSPACE && outer->of == 0);
		CHECK(inner->of == 1 && inner->rows == 1 && inner->space == MSPACE_SHARED && inner->base.num_terms == 1 &&
		      inner->base.terms[0] == batch);
		CHECK(fold && fold->buf == 1 && fold->src == 2);
	}
	mir_module_free(m);

	/* A parallel loop whose every iteration would need copies of all N rows is refused, naming it. */
	CHECK(!legalized(f, "tile(tree, t0, t1, 2); reorder(t0, t1, batch); parallel(t0); parallel(t1)", &e));
	CHECK(strstr(e.message, "unit:1:48: parallel(t0): each iteration would need its own buffer of all N rows") != NULL);
	hir_forest_free(f);
}

/* Tree t of a chain forest: a chain of depth[t] splits on feature 0, its leaves valued t. */
static HForest *chain_forest(const uint32_t *depth, uint32_t num_trees)
{
	HForest *f = hir_forest_new("unit", 1, 1);
	for (uint32_t t = 0; t < num_trees; t++) {
		HNode *n = hir_tree_add(f, 2 * depth[t] + 1, 0);
		for (uint32_t d = 0; d < depth[t]; d++) {
			n[2 * d] = (HNode){.value = d, .left = 2 * d + 1, .right = 2 * d + 2, .feature = 0};
			n[2 * d + 1] = (HNode){.value = t, .feature = HIR_LEAF};
		}
		n[2 * depth[t]] = (HNode){.value = t, .feature = HIR_LEAF};
	}
	return f;
}

/* sortTrees(depth): trees by depth, stable; the groups hir_depth_groups chooses; when they pay. */
static void test_depth_groups(void)
{
	static const uint32_t depth[] = {8, 0, 3, 0, 8, 3, 0, 0};
	uint32_t ends[HIR_MAX_DEPTH_GROUPS], *sorted;
	HForest *f = chain_forest(depth, COUNT_OF(depth));
	Error e;
	CHECK(hir_verify(f, &e));
	sorted = hir_sorted_depths(f);
	hir_sort_trees(f);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		static const uint32_t value[] = {1, 3, 6, 7, 2, 5, 0, 4}; /* the model's order among trees of one depth */
		CHECK(hir_tree_depth(f, t) == sorted[t]);
		CHECK(hir_tree_nodes(f, t)[f->trees[t].num_nodes - 1].value == value[t]);
	}
	CHECK(hir_verify(f, &e));
	/* Depths 0 0 0 0 3 3 8 8. Steps: one group 8 * 8; groups 0, 3 and 8 deep: 0 + 2 * 3 + 2 * 8. */
	CHECK(hir_depth_groups(f, 1, 1, ends) == 1 && ends[0] == 8);
	CHECK(hir_depth_groups(f, 4, 1, ends) == 3 && ends[0] == 4 && ends[1] == 6 && ends[2] == 8);
	/* Two groups: 4 * 8 steps, against 6 * 3 + 2 * 8 when the depth-3 trees go with the shallow ones. */
	CHECK(hir_depth_groups(f, 2, 1, ends) == 2 && ends[0] == 4 && ends[1] == 8);
	/* In steps of 3 trees: ends at multiples of 3, or the last tree: 0 + 3 * 3 + 2 * 8. */
	CHECK(hir_depth_groups(f, 4, 3, ends) == 3 && ends[0] == 3 && ends[1] == 6 && ends[2] == 8);
	CHECK(hir_depth_groups(f, 4, 8, ends) == 1 && ends[0] == 8);
	CHECK(cost_depth_groups_pay(f, (uint32_t[]){4, 6, 8}, 3));
	CHECK(!cost_depth_groups_pay(f, (uint32_t[]){8}, 1));
	free(sorted);
	hir_forest_free(f);
	/*
	 * Groups never pad past cost_nodes_affordable of the forest as it is: chains of
	 * depth 14 after shallow ones (as LightGBM's leaf-wise trees) would each grow from
	 * 29 nodes to 2^15 - 1, within four times the trees stored complete but a
	 * thousandfold the forest.
	 */
	{
		uint32_t deep[24];
		for (uint32_t t = 0; t < 24; t++)
			deep[t] = t < 20 ? 4 : 14;
		f = chain_forest(deep, 24);
		CHECK(!cost_depth_groups_pay(f, (uint32_t[]){20, 24}, 2));
		hir_forest_free(f);
	}

	/*
	 * Padding: chains of depth 8 grow thirtyfold, within PAD_BUDGET (the array layout
	 * stores them complete anyway); chains of depth 12 would grow fivehundredfold.
	 */
	{
		uint32_t eight[8] = {8, 8, 8, 8, 8, 8, 8, 0}, twelve[8] = {12, 12, 12, 12, 12, 12, 12, 0};
		f = chain_forest(eight, 8);
		CHECK(cost_padding_pays(f) && rep_choose(f) == &rep_array);
		hir_forest_free(f);
		f = chain_forest(twelve, 8);
		CHECK(!cost_padding_pays(f) && rep_choose(f) == &rep_sparse);
		hir_forest_free(f);
	}
	/* The heuristic groups 24 single leaves and 8 chains of depth 8, not 32 chains of one depth. */
	{
		uint32_t mixed[32] = {0}, same[32];
		for (uint32_t t = 0; t < 32; t++)
			mixed[t] = t % 4 == 3 ? 8 : 0, same[t] = 8;
		f = chain_forest(mixed, 32);
		CHECK(hir_choose_schedule(f, HIR_TILE_AUTO, 16, 8, "array", MTOPS_NONE, NULL));
		CHECK(f->schedule.tree_order == HORDER_DEPTH);
		hir_forest_free(f);
		f = chain_forest(same, 32);
		CHECK(hir_choose_schedule(f, HIR_TILE_AUTO, 16, 8, "array", MTOPS_NONE, NULL));
		CHECK(f->schedule.tree_order == HORDER_MODEL);
		hir_forest_free(f);
	}
}

/* Tiles that start in tree t of f. */
static uint32_t tiles_of(const HForest *f, uint32_t t)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->trees[t].num_nodes; i++)
		n += hir_tree_nodes(f, t)[i].feature != HIR_LEAF && hir_tree_nodes(f, t)[i].tile;
	return n;
}

/* tileTrees: tiles grown in level order; walk steps count tiles; a pass that rebuilds trees keeps them whole. */
static void test_tile_trees(void)
{
	static const uint32_t chain[] = {8}, four[] = {4}, leaf[] = {0};
	uint32_t min, max;
	HForest *f = chain_forest(chain, 1);
	hir_tile_trees(f, 3, HTILING_UNIFORM); /* a chain of 8 splits: tiles of 3, 3 and 2 */
	CHECK(tiles_of(f, 0) == 3 && f->tile_size == 3);
	hir_leaf_depth_range(f, &min, &max);
	CHECK(min == 1 && max == 3);
	CHECK(hir_tree_depth(f, 0) == 8); /* still in splits */
	hir_forest_free(f);

	f = chain_forest(four, 1);
	hir_pad(f); /* complete: 15 splits */
	hir_tile_trees(f, 3, HTILING_UNIFORM); /* complete subtrees of two levels: the root's and four below */
	CHECK(tiles_of(f, 0) == 5);
	hir_leaf_depth_range(f, &min, &max);
	CHECK(min == 2 && max == 2);
	hir_tile_trees(f, 8, HTILING_UNIFORM); /* levels 0-2 and one split of level 3; the other seven splits of level 3 alone */
	CHECK(tiles_of(f, 0) == 8);
	hir_leaf_depth_range(f, &min, &max);
	CHECK(min == 1 && max == 2);
	hir_tile_trees(f, 1, HTILING_UNIFORM);
	hir_leaf_depth_range(f, &min, &max);
	CHECK(tiles_of(f, 0) == 15 && min == 4 && max == 4);
	hir_forest_free(f);

	/*
	 * Probability: a complete tree of depth 3 (node i's children 2i + 1, 2i + 2) whose
	 * rows mostly go left. Tiles of 3 take the root, its left child and that one's left
	 * child; uniform tiles take the root and both children.
	 */
	f = hir_forest_new("unit", 1, 1);
	{
		HNode *n = hir_tree_add(f, 15, 0);
		for (uint32_t i = 0; i < 15; i++) {
			uint32_t depth = i >= 7 ? 3 : i >= 3 ? 2 : i >= 1;
			bool left = i % 2 == 1;
			n[i] = i < 7 ? (HNode){.value = i, .left = 2 * i + 1, .right = 2 * i + 2, .feature = 0}
			             : (HNode){.value = i, .feature = HIR_LEAF};
			n[i].cover = (float)(left ? 100 >> depth : 10 >> depth);
		}
		hir_tile_trees(f, 3, HTILING_PROBABILITY);
		CHECK(n[0].tile && !n[1].tile && !n[3].tile && n[2].tile && n[4].tile);
		hir_leaf_depth_range(f, &min, &max);
		CHECK(min == 1 && max == 2); /* the likely path's leaves (below node 3) one tile away, the others two */
		hir_tile_trees(f, 3, HTILING_UNIFORM);
		CHECK(n[0].tile && !n[1].tile && !n[2].tile && n[3].tile && n[6].tile);
		for (uint32_t i = 0; i < 15; i++)
			n[i].cover = 0; /* no statistics: level order */
		hir_tile_trees(f, 3, HTILING_PROBABILITY);
		CHECK(n[0].tile && !n[1].tile && !n[2].tile && n[3].tile);
	}
	hir_forest_free(f);

	f = chain_forest(leaf, 1);
	hir_tile_trees(f, 4, HTILING_UNIFORM);
	hir_leaf_depth_range(f, &min, &max);
	CHECK(tiles_of(f, 0) == 0 && min == 0 && max == 0);
	hir_forest_free(f);
}

/* x compare t, as a split tests it. */
static bool compares(HCompare k, double x, double t)
{
	switch (k) {
	case HCMP_LT: return x < t;
	case HCMP_LE: return x <= t;
	case HCMP_GT: return x > t;
	case HCMP_GE: return x >= t;
	case HCMP_EQ: return x == t;
	case HCMP_NE: return x != t;
	default: return false;
	}
}

/*
 * n is f's float forest (hir_float_forest): float thresholds that decide as f's do for
 * every float x near each threshold, infinities and NaN included, each split in one of
 * the forms (1 << HCompare) wanted (0: any).
 */
static void check_float_forest(const HForest *f, const HForest *n, uint32_t splits, unsigned wanted)
{
	for (uint32_t i = 0; i < splits; i++) {
		const HNode *was = hir_tree_nodes(f, i), *now = hir_tree_nodes(n, i);
		float x = (float)was->value;
		CHECK(n->threshold_type == HTYPE_F32 && n->leaf_type == HTYPE_F64 && (double)(float)now->value == now->value);
		CHECK(!wanted || wanted & 1u << now->compare);
		x = nextafterf(nextafterf(x, -INFINITY), -INFINITY);
		for (int step = 0; step < 5; step++, x = nextafterf(x, INFINITY))
			CHECK(compares(was->compare, x, was->value) == compares(now->compare, x, (float)now->value));
		CHECK(compares(was->compare, INFINITY, was->value) == compares(now->compare, INFINITY, (float)now->value));
		CHECK(compares(was->compare, -INFINITY, was->value) == compares(now->compare, -INFINITY, (float)now->value));
		CHECK(compares(was->compare, NAN, was->value) == compares(now->compare, NAN, (float)now->value));
	}
}

/* A double forest of one-split trees, one per threshold and comparison kind; *splits says how many. */
static HForest *one_split_forest(const double *thresholds, size_t count, uint32_t *splits)
{
	static const HCompare kinds[] = {HCMP_LT, HCMP_LE, HCMP_GT, HCMP_GE};
	HForest *f = hir_forest_new("unit", 1, 1);
	*splits = 0;
	f->threshold_type = f->leaf_type = HTYPE_F64;
	for (size_t i = 0; i < count; i++)
		for (size_t k = 0; k < COUNT_OF(kinds); k++, ++*splits) {
			HNode *t = hir_tree_add(f, 3, 0);
			t[0] = (HNode){.value = thresholds[i], .left = 1, .right = 2, .feature = 0, .compare = kinds[k]};
			t[1] = (HNode){.value = 1, .feature = HIR_LEAF};
			t[2] = (HNode){.value = 2, .feature = HIR_LEAF};
		}
	return f;
}

/*
 * hir_float_forms of a double forest: each split in a wanted form, deciding as before for
 * every double x near its threshold, infinities and NaN included; f as it was where a
 * split cannot be rewritten (x <= inf has no double after inf).
 */
static void test_double_forms(const double *thresholds, size_t count)
{
	uint32_t splits;
	HForest *was = one_split_forest(thresholds, count, &splits), *f = hir_forest_copy(was);
	unsigned wanted = 1u << HCMP_LT | 1u << HCMP_GE;
	for (uint32_t i = 0; i < splits; i++) /* NaN both ways: the strict forms */
		hir_tree_nodes(was, i)->default_left = hir_tree_nodes(f, i)->default_left = (uint8_t)(i % 2);
	CHECK(hir_float_forms(f) && f->threshold_type == HTYPE_F64);
	for (uint32_t i = 0; i < splits; i++) {
		const HNode *a = hir_tree_nodes(was, i), *b = hir_tree_nodes(f, i);
		double x = nextafter(nextafter(a->value, -INFINITY), -INFINITY);
		CHECK(wanted & 1u << b->compare);
		for (int step = 0; step < 5; step++, x = nextafter(x, INFINITY))
			CHECK(compares(a->compare, x, a->value) == compares(b->compare, x, b->value));
		CHECK(compares(a->compare, INFINITY, a->value) == compares(b->compare, INFINITY, b->value));
		CHECK(compares(a->compare, -INFINITY, a->value) == compares(b->compare, -INFINITY, b->value));
		CHECK(compares(a->compare, NAN, a->value) == compares(b->compare, NAN, b->value));
	}
	/* Its float twin is the original's. */
	{
		HForest *twin = hir_float_forest(was), *now = hir_float_forest(f);
		CHECK(twin && now);
		for (uint32_t i = 0; twin && now && i < splits; i++)
			CHECK(hir_tree_nodes(twin, i)->compare == hir_tree_nodes(now, i)->compare &&
			      hir_tree_nodes(twin, i)->value == hir_tree_nodes(now, i)->value);
		hir_forest_free(twin);
		hir_forest_free(now);
	}
	hir_forest_free(f);
	hir_forest_free(was);
	f = one_split_forest((const double[]){1.0, INFINITY}, 2, &splits);
	CHECK(!hir_float_forms(f) && hir_tree_nodes(f, 0)->compare == HCMP_LT && hir_tree_nodes(f, 0)->value == 1.0);
	hir_forest_free(f);
}

/* hir_float_forest: for every float x near each threshold, the float threshold decides as the double one. */
static void test_float_forest(void)
{
	static const double thresholds[] = {0.1, -0.1, 3.0, 16777217.0, 1e-40, -1e-45, 1e300, -1e300, 3.4028235677973366e38,
	                                    0.0, 1.0000000180025095e-35, 2.5e-324};
	/*
	 * The forms: <= and >= where every split sends NaN right, < and > where every one
	 * sends it left (the compare then decides NaN from one flag), < and >= for a forest
	 * that sends it both ways (last: the checks below rewrite its float forest).
	 */
	static const struct {
		int left; /* default_left of every split, or -1: every other split's */
		unsigned wanted;
	} modes[] = {{0, 1u << HCMP_LE | 1u << HCMP_GE}, {1, 1u << HCMP_LT | 1u << HCMP_GT}, {-1, 1u << HCMP_LT | 1u << HCMP_GE}};
	uint32_t splits;
	HForest *f = one_split_forest(thresholds, COUNT_OF(thresholds), &splits), *n = NULL, *s;
	test_double_forms(thresholds, COUNT_OF(thresholds));
	CHECK((n = hir_float_forest(f)) != NULL);
	check_float_forest(f, n, splits, 0);
	for (size_t m = 0; m < COUNT_OF(modes); m++) {
		hir_forest_free(n);
		s = one_split_forest(thresholds, COUNT_OF(thresholds), &splits); /* every split changes its form, 0's to subnormals */
		for (uint32_t i = 0; i < splits; i++)
			hir_tree_nodes(s, i)->default_left = (uint8_t)(modes[m].left < 0 ? (int)(i % 2) : modes[m].left);
		CHECK((n = hir_float_forest(s)) != NULL);
		check_float_forest(s, n, splits, modes[m].wanted);
		hir_forest_free(s);
	}
	/* A float forest is rewritten too, and is left alone when it has nothing to rewrite. */
	CHECK(n && (s = hir_float_forest(n)) == NULL);
	if (n)
		hir_tree_nodes(n, 0)->compare = HCMP_LE;
	CHECK(n && (s = hir_float_forest(n)) != NULL && hir_tree_nodes(s, 0)->compare == HCMP_LT &&
	      hir_tree_nodes(s, 0)->value == nextafterf((float)hir_tree_nodes(n, 0)->value, INFINITY));
	hir_forest_free(s);
	hir_forest_free(n);
	/* Every representation lowers a double forest, with its float twin for float rows; an empty one too (a fuzz find). */
	for (uint32_t trees = 0; trees < 2; trees++) {
		HForest *g = hir_forest_copy(f);
		g->num_trees = trees;
		CHECK(hir_choose_schedule(g, 0, 8, 8, "array", MTOPS_NONE, NULL));
		for (size_t r = 0; lower_representation_name(r); r++) {
			const char *rep = lower_representation_name(r);
			Error e = {.message = {0}};
			MModule *m = lower_hir_to_mir(g, NULL, &e);
			LModule *lir = m ? lower_as(m, rep, &e) : NULL;
			/* (but code, whose tree loops this schedule does not specialize, and oblivious, whose walks it does not unroll) */
			if (!lir && !strstr(e.message, "specialize") && !strstr(e.message, "must be unrolled")) {
				fprintf(stderr, "%u trees, %s: %s\n", trees, rep, e.message);
				failures++;
			}
			lir_module_free(lir);
			mir_module_free(m);
		}
		hir_forest_free(g);
	}
	/* A forest of no features and no trees (a fuzz find, refused by the readers since): its rows' copies have an element. */
	{
		HForest *g = hir_forest_new("unit", 0, 1);
		Error e = {.message = {0}};
		MModule *m;
		LModule *lir = NULL;
		CHECK(hir_choose_schedule(g, 0, 16, 8, "array", MTOPS_NONE, NULL));
		if ((m = lower_hir_to_mir(g, NULL, &e)) && mir_legalize_reductions(m, &e)) {
			mir_unroll_walks(m);
			mir_interleave(m);
			mir_version_complete(m);
			lir = lower_as(m, "array", &e);
		}
		if (!lir)
			fprintf(stderr, "no features: %s\n", e.message);
		CHECK(lir != NULL);
		lir_module_free(lir);
		mir_module_free(m);
		hir_forest_free(g);
	}
	/* == against a double that no float equals has no float twin. */
	hir_tree_nodes(f, 0)->compare = HCMP_EQ;
	CHECK(hir_float_forest(f) == NULL);
	f->threshold_type = HTYPE_F32;
	CHECK(hir_float_forest(f) == NULL);
	hir_forest_free(f);
}

/* rep_key: keys order floats as the floats compare (-0 and +0 alike), and NaN's key lies below them all. */
static void test_keys(void)
{
	static const float special[] = {0.0f, -0.0f, 1e-45f, -1e-45f, 1.17549435e-38f, -1.17549435e-38f, 1.0f, -1.0f,
	                                3.40282347e38f, -3.40282347e38f, INFINITY, -INFINITY, 0.5f, -0.5f, 1e-40f, -1e-40f};
	float values[2048];
	uint32_t n = 0, seed = 12345, bad = 0;
	for (size_t i = 0; i < sizeof special / sizeof *special; i++)
		values[n++] = special[i];
	while (n < sizeof values / sizeof *values) { /* random bit patterns: every exponent, either sign */
		uint32_t bits;
		float x;
		seed = seed * 1664525u + 1013904223u;
		bits = seed;
		memcpy(&x, &bits, sizeof x);
		if (!isnan(x))
			values[n++] = x;
	}
	CHECK(rep_key(NAN) == REP_KEY_MISSING && rep_key(-NAN) == REP_KEY_MISSING);
	for (uint32_t i = 0; i < n; i++) {
		CHECK(rep_key(values[i]) > REP_KEY_MISSING);
		for (uint32_t j = 0; j < n; j++)
			bad += (values[i] < values[j]) != (rep_key(values[i]) < rep_key(values[j])) ||
			       (values[i] == values[j]) != (rep_key(values[i]) == rep_key(values[j]));
	}
	CHECK(bad == 0);
}

/* Whether inst of fn is a prefetch of the rows (the entry's first parameter). */
static bool prefetches_rows(const LFunc *fn, const LInst *inst)
{
	return inst->op == LOP_PREFETCH && fn->insts[inst->a].op == LOP_PARAM && fn->insts[inst->a].imm == 0;
}

/* Prefetches of trees (of anything but the rows) in the functions of l. */
static uint32_t prefetches(const LModule *l)
{
	uint32_t n = 0;
	for (uint32_t f = 0; l && f < l->num_funcs; f++)
		for (uint32_t i = 0; i < l->funcs[f]->num_insts; i++)
			n += l->funcs[f]->insts[i].op == LOP_PREFETCH && !prefetches_rows(l->funcs[f], &l->funcs[f]->insts[i]);
	return n;
}

/* Complete trees of this depth in the functions the tests below lower. */
#define COMPLETE_DEPTH 5

/* f's MIR after the passes a compile runs, its CPU's tops `tops` (NULL where lowering failed, a failed check). */
static MModule *mir_after_passes(const HForest *f, MTops tops)
{
	Error e = {.message = {0}};
	MModule *m = lower_hir_to_mir(f, NULL, &e);
	CHECK(m && mir_legalize_reductions(m, &e));
	if (!m)
		return NULL;
	m->vector_tops = tops;
	mir_unroll_walks(m);
	mir_interleave(m);
	mir_version_complete(m);
	return m;
}

/*
 * The MIR, after the passes, of num_trees complete trees of depth COMPLETE_DEPTH over
 * `features` features (leaves of leaf_type; the first tree's left child a leaf where
 * uneven) under the heuristic's schedule for batches of `rows` rows; *f is the forest,
 * for the caller to free with the MIR (NULL where lowering failed, a failed check).
 */
static MModule *complete_forest_mir(uint32_t num_trees, uint32_t features, uint32_t rows, HType leaf_type, bool uneven,
                                    HForest **f)
{
	enum { NODES = (2 << COMPLETE_DEPTH) - 1 };
	Error e = {.message = {0}};
	*f = hir_forest_new("complete", features, 1);
	(*f)->leaf_type = leaf_type;
	for (uint32_t t = 0; t < num_trees; t++) {
		HNode *n = hir_tree_add(*f, NODES, 0);
		for (uint32_t i = 0; i < NODES; i++)
			n[i] = i < NODES / 2 ? (HNode){.value = 0.1 * i + t, .left = 2 * i + 1, .right = 2 * i + 2,
			                               .feature = (i + t) % features}
			                     : (HNode){.value = i, .feature = HIR_LEAF};
		if (uneven && t == 0) /* the left subtree's nodes stay, unreached */
			n[1] = (HNode){.value = 1, .feature = HIR_LEAF};
	}
	CHECK(hir_choose_schedule(*f, 0, rows, 8, "array", MTOPS_NONE, NULL));
	CHECK(hir_pad_unrolled_walks(*f, &e));
	return mir_after_passes(*f, MTOPS_NONE);
}

/* complete_forest_mir of 2 features for batches of 16 rows. */
static MModule *complete_trees_mir(uint32_t num_trees, HType leaf_type, bool uneven, HForest **f)
{
	return complete_forest_mir(num_trees, 2, 16, leaf_type, uneven, f);
}

/* Elements of l's buffer of this name (0 where there is none). */
static uint64_t buffer_elements(const LModule *l, const char *name)
{
	for (uint32_t i = 0; l && i < l->num_buffers; i++)
		if (strcmp(l->buffers[i].name, name) == 0)
			return l->buffers[i].count;
	return 0;
}

/*
 * A lone row's walks in the array layout prefetch the grandchildren of each step's node
 * but the first step's (depth - 2 per walk of a complete tree). Float leaves are packed
 * after the splits' records (RepLayout.packed_leaves), a quarter less room. Double leaves
 * of trees whose leaves have one depth fill their records, which are prefetched the same;
 * where the depths differ they are a region of their own after the records, as large
 * again. The sparse layout, whose grandchildren are not side by side, prefetches nothing.
 */
static void test_prefetch_below(void)
{
	HForest *f, *g, *h;
	MModule *m = complete_trees_mir(16, HTYPE_F32, false, &f), *n = complete_trees_mir(16, HTYPE_F64, false, &g);
	MModule *u = complete_trees_mir(16, HTYPE_F64, true, &h);
	Error e = {.message = {0}};
	LModule *l;
	uint32_t records = 0;
	uint64_t elements = 0;
	if (m) {
		l = lower_as(m, "array", &e);
		records = prefetches(l);
		elements = buffer_elements(l, "array.nodes");
		CHECK(l && records > 0 && records % (COMPLETE_DEPTH - 2) == 0 && elements > 0);
		lir_module_free(l);
		l = lower_as(m, "sparse", &e);
		CHECK(l && prefetches(l) == 0);
		lir_module_free(l);
	}
	if (n) {
		l = lower_as(n, "array", &e);
		CHECK(l && prefetches(l) == records && buffer_elements(l, "array.nodes") > elements);
		elements = l ? buffer_elements(l, "array.nodes") : 0;
		lir_module_free(l);
	}
	if (u) {
		l = lower_as(u, "array", &e);
		CHECK(l && buffer_elements(l, "array.nodes") == 2 * elements);
		lir_module_free(l);
	}
	mir_module_free(m);
	mir_module_free(n);
	mir_module_free(u);
	hir_forest_free(f);
	hir_forest_free(g);
	hir_forest_free(h);
}

/* num_trees symmetric trees of the given depth: level d of each tests feature d against t + d. */
static HForest *symmetric_forest(uint32_t num_trees, uint32_t depth)
{
	HForest *f = hir_forest_new("unit", depth, 1);
	uint32_t n = (2u << depth) - 1;
	for (uint32_t t = 0; t < num_trees; t++) {
		HNode *nodes = hir_tree_add(f, n, 0);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t level = 31 - (uint32_t)__builtin_clz(i + 1);
			nodes[i] = i < n / 2 ? (HNode){.value = t + level, .left = 2 * i + 1, .right = 2 * i + 2, .feature = level}
			                     : (HNode){.value = i, .feature = HIR_LEAF};
		}
	}
	return f;
}

/*
 * Symmetric trees (each level's splits alike, the leaves at one depth) are CatBoost's:
 * stumps are; chains (leaves at every depth) and complete trees whose splits differ
 * along a level are not. A forest of 600 stumps gets the oblivious layout, walks
 * unrolled, one tree at a time, no lone rows apart and no tiles of trees (they fit L1);
 * 1000 trees of depth 6 (CatBoost's defaults, 256 KiB of leaves) and 600 of depth 10
 * (2.4 MiB) get tiles of trees, and their rows too few for a padded tile (3, and 5 where
 * walks step on past the tops) go apart, every tree in turn untiled.
 */
static void test_oblivious(void)
{
	uint32_t stumps[600], chains[600]; /* (more splits than the heuristic compiles into code) */
	HForest *f, *g, *h;
	MModule *m = complete_trees_mir(4, HTYPE_F32, false, &h);
	HScheduleKnobs k;
	for (uint32_t t = 0; t < 600; t++)
		stumps[t] = 1, chains[t] = 1 + t % 2;
	f = chain_forest(stumps, 600);
	g = chain_forest(chains, 600);
	CHECK(hir_forest_symmetric(f) && !hir_forest_symmetric(g) && !hir_forest_symmetric(h));
	hir_choose_knobs(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
	CHECK(k.representation && lower_representation_traits(k.representation - 1u) & LREP_LEVELS && k.unroll);
	CHECK(k.rows == 16 && k.trees == 1 && !k.tree_tile && !k.few_trees);
	{
		HForest *deep = symmetric_forest(600, 10), *defaults = symmetric_forest(1000, 6);
		hir_choose_knobs(defaults, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
		CHECK(k.trees == 1 && k.tree_tile > 1 && k.tree_tile < 1000 && k.few_trees == 1 && k.few_rows == 3);
		hir_forest_free(defaults);
		CHECK(hir_forest_symmetric(deep));
		hir_choose_knobs(deep, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
		CHECK(k.representation && lower_representation_traits(k.representation - 1u) & LREP_LEVELS);
		CHECK(k.trees == 1 && k.tree_tile > 1 && k.few_trees == 1 && k.few_rows == 5);
		hir_choose_knobs(deep, 0, 16, 8, NULL, MTOPS_NONE, &k); /* tiles asked for (none) stay as asked */
		CHECK(!k.tree_tile);
		hir_forest_free(deep);
	}
	hir_choose_knobs(g, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
	CHECK(!k.representation || !(lower_representation_traits(k.representation - 1u) & LREP_LEVELS));
	{
		Error e = {.message = {0}};
		LModule *l = m ? lower_as(m, "oblivious", &e) : NULL;
		CHECK(!l && strstr(e.message, "tree 0 is not symmetric"));
	}
	mir_module_free(m);
	hir_forest_free(f);
	hir_forest_free(g);
	hir_forest_free(h);
}

/* A two-class forest of stumps whose leaves add [a, -a] (leaf 1) and [b, -b] (leaf 2), base [c, -c]. */
static HForest *mirrored_forest(uint32_t num_trees, double a, double b, double c)
{
	HForest *f = hir_forest_new("mirrored", 1, 2);
	for (uint32_t t = 0; t < num_trees; t++) {
		double *v;
		uint64_t first = hir_leaf_values_add(f, 4, &v);
		HNode *n = hir_tree_add(f, 3, 0);
		v[0] = a, v[1] = -a, v[2] = b, v[3] = -b;
		f->trees[t].width = 2;
		n[0] = (HNode){.value = 0.5, .left = 1, .right = 2, .feature = 0};
		n[1] = (HNode){.vector = (uint32_t)first, .feature = HIR_LEAF};
		n[2] = (HNode){.vector = (uint32_t)first + 2, .feature = HIR_LEAF};
	}
	f->base_score[0] = c, f->base_score[1] = -c;
	f->transform = HTRANSFORM_SIGMOID;
	return f;
}

/*
 * Two margins each the other's negation become one (HBINARY_MIRROR), its leaves the
 * second margin's values; a forest that is not so, or whose aggregate or transform the
 * negation does not commute with, stays as it was.
 */
static void test_mirrored_margins(void)
{
	Error e = {.message = {0}};
	HForest *f = mirrored_forest(3, 0.25, -1.5, 0.125), *g = mirrored_forest(3, 0.25, -1.5, 0.125);
	HForest *h = mirrored_forest(3, 0.25, -1.5, 0.125), *k = mirrored_forest(3, 0.25, -1.5, 0.125);
	CHECK(hir_fold_mirrored_margins(f) && f->num_outputs == 1 && f->binary == HBINARY_MIRROR && !f->num_leaf_values);
	CHECK(f->trees[2].width == 1 && hir_tree_nodes(f, 2)[1].value == -0.25 && hir_tree_nodes(f, 2)[2].value == 1.5);
	CHECK(f->base_score[0] == -0.125 && hir_num_margins(f) == 2 && hir_num_predictions(f) == 2 && hir_verify(f, &e));
	g->leaf_values[5] = 1.25; /* tree 1's second leaf adds [-1.5, 1.25] */
	h->aggregate = HAGGREGATE_MAX;
	k->transform = HTRANSFORM_SOFTMAX;
	CHECK(!hir_fold_mirrored_margins(g) && !hir_fold_mirrored_margins(h) && !hir_fold_mirrored_margins(k));
	CHECK(g->num_outputs == 2 && g->binary == HBINARY_NONE && g->num_leaf_values == 12);
	hir_forest_free(f);
	hir_forest_free(g);
	hir_forest_free(h);
	hir_forest_free(k);
}

/* The element type of l's buffer of this name (LTYPE_VOID where there is none). */
static LType buffer_type(const LModule *l, const char *name)
{
	for (uint32_t i = 0; l && i < l->num_buffers; i++)
		if (strcmp(l->buffers[i].name, name) == 0)
			return l->buffers[i].elem;
	return LTYPE_VOID;
}

/* The data of l's buffer of this name (NULL where there is none). */
static const void *buffer_data(const LModule *l, const char *name)
{
	for (uint32_t i = 0; l && i < l->num_buffers; i++)
		if (strcmp(l->buffers[i].name, name) == 0)
			return l->buffers[i].data;
	return NULL;
}

/*
 * Leaves in the sparse layout's key copy: where every step's compare decides NaN alone
 * (one comparison kind, in the form that reads NaN's side off the compare), a leaf's
 * record reads feature 0 with the key that never goes right (all ones where the
 * record's key is the lesser side, else 0) and the leaf is its own left child, so a
 * step of keys stays on it; elsewhere (two kinds: a missing-value test of its own) the
 * record is -1, 0 and its child 0. The words keep -1 for the float walks either way.
 */
static uint32_t sparse_leaf_records(const LModule *l, bool stay)
{
	const int32_t *keys = buffer_data(l, "sparse.keys"), *words = buffer_data(l, "sparse.words");
	const int32_t *children = buffer_data(l, "sparse.children");
	uint32_t leaves = 0, bad = 0;
	for (uint64_t i = 0; keys && words && children && i < buffer_elements(l, "sparse.words"); i++) {
		if (words[i] != -1)
			continue;
		leaves++;
		bad += stay ? keys[2 * i] != 0 || (keys[2 * i + 1] != -1 && keys[2 * i + 1] != 0) || children[i] != (int32_t)i
		            : keys[2 * i] != -1 || keys[2 * i + 1] != 0 || children[i] != 0;
	}
	return bad ? 0 : leaves;
}

/*
 * The splits whose key record reads keys less one (RepLayout.nan_columns), 0 where one
 * does wrong: under < splits (NaN's key below all goes left) those that send NaN right,
 * in their feature's column past the row's keys, with their key less one; the words of
 * the float walks keep their feature and missing rule.
 */
static uint32_t sparse_columns(const LModule *l)
{
	const int32_t *keys = buffer_data(l, "sparse.keys"), *words = buffer_data(l, "sparse.words");
	const float *values = buffer_data(l, "sparse.values");
	/* (the key words' feature field, as wide as the columns need: offsets to children may lie above it) */
	uint32_t columns = 0, bad = 0, field = 2 * l->num_features <= 0x100 ? 0xffu : 2 * l->num_features <= 0x10000 ? 0xffffu : REP_WORD_FEATURE_MASK;
	for (uint64_t i = 0; keys && words && values && i < buffer_elements(l, "sparse.words"); i++) {
		uint32_t column = (uint32_t)keys[2 * i] & field;
		bool less = column >= l->num_features, right = !((uint32_t)words[i] >> REP_WORD_MISSING_SHIFT & 1);
		if (words[i] == -1)
			continue;
		columns += less;
		bad += less != right || column != ((uint32_t)words[i] & REP_WORD_FEATURE_MASK) + less * l->num_features ||
		       (uint32_t)keys[2 * i + 1] != rep_key(values[i]) - 1 - less;
	}
	return bad ? 0 : columns;
}

/*
 * The sparse layout keeps a key copy of its nodes (a record of two i32 a slot) where the
 * walks read rows' keys, and float thresholds with double leaves in a buffer of their
 * own. Rows too wide for keys on the stack read no key copy. Leaves stay where every
 * step decides NaN by its compare, columns of keys less one included (sparse_leaf_records,
 * sparse_columns).
 */
static void test_sparse_keys(void)
{
	HForest *f, *g, *h, *k;
	MModule *m = complete_trees_mir(16, HTYPE_F32, false, &f), *n = complete_trees_mir(16, HTYPE_F64, false, &g);
	MModule *wide = complete_forest_mir(16, 40000, 16, HTYPE_F32, false, &h), *left = complete_trees_mir(16, HTYPE_F32, true, &k);
	Error e = {.message = {0}};
	LModule *l;
	if (m) {
		l = lower_as(m, "sparse", &e);
		CHECK(l && buffer_elements(l, "sparse.keys") == 2 * buffer_elements(l, "sparse.words"));
		CHECK(l && buffer_elements(l, "sparse.leaves") == 0 && buffer_type(l, "sparse.values") == LTYPE_F32);
		CHECK(sparse_leaf_records(l, true) == 16u << COMPLETE_DEPTH);
		lir_module_free(l);
	}
	if (left) { /* NaN going left; tree 0's left child a leaf, its subtree's 16 leaves dropped */
		for (uint32_t i = 0; i < k->num_nodes; i++)
			k->nodes[i].default_left = true;
		l = lower_as(left, "sparse", &e);
		CHECK(sparse_leaf_records(l, true) == (16u << COMPLETE_DEPTH) - 15);
		lir_module_free(l);
		for (uint32_t i = 0; i < k->num_nodes; i += 2) /* NaN going either way: the columns of keys less one decide it */
			k->nodes[i].default_left = false;
		l = lower_as(left, "sparse", &e);
		CHECK(sparse_leaf_records(l, true) == (16u << COMPLETE_DEPTH) - 15);
		CHECK(sparse_columns(l) > 0);
		lir_module_free(l);
	}
	if (n) {
		l = lower_as(n, "sparse", &e);
		CHECK(l && buffer_elements(l, "sparse.keys") == 2 * buffer_elements(l, "sparse.words"));
		CHECK(l && buffer_elements(l, "sparse.leaves") == buffer_elements(l, "sparse.words"));
		CHECK(l && buffer_type(l, "sparse.values") == LTYPE_F32 && buffer_type(l, "sparse.leaves") == LTYPE_F64);
		lir_module_free(l);
	}
	if (wide) {
		l = lower_as(wide, "sparse", &e);
		CHECK(l && buffer_elements(l, "sparse.keys") == 0 && buffer_elements(l, "sparse.words") > 0);
		lir_module_free(l);
	}
	mir_module_free(m);
	mir_module_free(n);
	mir_module_free(wide);
	mir_module_free(left);
	hir_forest_free(f);
	hir_forest_free(g);
	hir_forest_free(h);
	hir_forest_free(k);
}

/*
 * Prefetches of rows (of the entry's first parameter) in l's entry: *count of them, and
 * whether every one is bounded (the index a min, at most the batch's last element).
 */
static bool row_prefetches(const LModule *l, uint32_t *count)
{
	const LFunc *fn = l ? l->funcs[l->predict] : NULL;
	bool bounded = true;
	*count = 0;
	for (uint32_t i = 0; fn && i < fn->num_insts; i++) {
		const LInst *inst = &fn->insts[i];
		if (prefetches_rows(fn, inst)) {
			++*count;
			bounded &= fn->insts[inst->b].op == LOP_MIN;
		}
	}
	return bounded;
}

/*
 * Blocks of rows whose scan makes keys: their walks of 16 rows side by side prefetch
 * the rows of the block the thread will likely scan next, spread over the block, each
 * walk (a tree's, for 16 rows) the fewest lines that cover the block, at most 4, never
 * past the batch's end. Batches walked a row at a time prefetch no rows.
 */
static void test_prefetch_next_rows(void)
{
	/* A walk's lines: 448 lines of 1600 walks; 1440 of 160 (9, at most 4); rows too wide for keys, none. */
	static const uint32_t trees[] = {100, 10, 100}, features[] = {28, 90, 2049}, lines[] = {1, 4, 0};
	for (size_t i = 0; i < COUNT_OF(trees); i++) {
		HForest *f;
		MModule *m = complete_forest_mir(trees[i], features[i], 16, HTYPE_F32, false, &f);
		Error e = {.message = {0}};
		LModule *l = m ? lower_as(m, "array", &e) : NULL;
		uint32_t count = 0;
		CHECK(l && row_prefetches(l, &count));
		CHECK(count == lines[i]); /* (the compares decide missing values: one version of the walks) */
		lir_module_free(l);
		mir_module_free(m);
		hir_forest_free(f);
	}
}

/* Instructions of op in l's entry. */
static uint32_t count_op(const LModule *l, LOp op)
{
	uint32_t n = 0;
	for (uint32_t i = 0; l && i < l->funcs[l->predict]->num_insts; i++)
		n += l->funcs[l->predict]->insts[i].op == op;
	return n;
}

/*
 * Where the CPU takes tops with 512-bit vectors, full tiles of keys take their features
 * 16 at a time by a transpose in registers: 16 vectors of a row's keys, four rounds of 8
 * pairs of zips (64), once in the code; rows of fewer than 16 features, or tops in pairs of
 * 256-bit vectors, copy the tiles key by key.
 */
static void test_transposed_tiles(void)
{
	static const uint32_t features[] = {40, 90, 8, 40};
	static const MTops tops[] = {MTOPS_WIDE, MTOPS_WIDE, MTOPS_WIDE, MTOPS_PAIRS};
	static const uint32_t zips[] = {64, 64, 0, 0};
	for (size_t i = 0; i < COUNT_OF(features); i++) {
		HForest *f;
		MModule *m = complete_forest_mir(100, features[i], 16, HTYPE_F32, false, &f);
		Error e = {.message = {0}};
		LModule *l;
		if (m)
			m->vector_tops = tops[i];
		l = m ? lower_as(m, "array", &e) : NULL;
		CHECK(l && count_op(l, LOP_ZIP) == zips[i]);
		lir_module_free(l);
		mir_module_free(m);
		hir_forest_free(f);
	}
}

/*
 * Packed leaves: 16 complete trees of depth 5 whose walks end on their leaves untested
 * take 32 records (8 bytes), their 32 float leaves (16 records' room) and a free line
 * (8 records) each; where one tree has a shallower leaf, every tree keeps its 64 records
 * and the free line.
 */
static void test_packed_leaves(void)
{
	HForest *f, *g;
	MModule *m = complete_trees_mir(16, HTYPE_F32, false, &f), *u = complete_trees_mir(16, HTYPE_F32, true, &g);
	Error e = {.message = {0}};
	LModule *l;
	if (m) {
		l = lower_as(m, "array", &e);
		CHECK(l && buffer_elements(l, "array.nodes") == 16 * (32 + 16 + 8) * 2);
		lir_module_free(l);
	}
	if (u) {
		l = lower_as(u, "array", &e);
		CHECK(l && buffer_elements(l, "array.nodes") == 16 * (64 + 8) * 2);
		lir_module_free(l);
	}
	mir_module_free(m);
	mir_module_free(u);
	hir_forest_free(f);
	hir_forest_free(g);
}

/* Instructions of the predict function of small_forest(trees, outputs) under the default schedule, or 0 where it fails to lower. */
static uint32_t predict_insts(uint32_t trees, uint32_t outputs)
{
	HForest *f = small_forest(trees, outputs);
	Error e;
	MModule *m = lower_hir_to_mir(f, NULL, &e);
	LModule *l = m && mir_legalize_reductions(m, &e) ? lower_as(m, "array", &e) : NULL;
	uint32_t n = l ? l->funcs[l->predict]->num_insts : 0;
	lir_module_free(l);
	mir_module_free(m);
	hir_forest_free(f);
	return n;
}

/*
 * Code grows with the trees and the lanes, not with the outputs: the margins of rows
 * walked side by side are set by a loop over the outputs (XGBoost's 1000 classes, 16
 * rows interleaved, were 16,000 stores in a row: 40 s of LLVM).
 */
static void test_many_outputs(void)
{
	uint32_t few = predict_insts(64, 64), many = predict_insts(64, 4096);
	CHECK(few > 0 && many > 0 && many < few + few / 8);
}

/* Whether the array layout of num_trees complete trees (leaves of leaf_type) keeps a key copy of its nodes. */
static bool keeps_keys(uint32_t num_trees, HType leaf_type)
{
	HForest *f;
	MModule *m = complete_trees_mir(num_trees, leaf_type, false, &f);
	Error e = {.message = {0}};
	LModule *l = m ? lower_as(m, "array", &e) : NULL;
	bool keys = false;
	CHECK(l != NULL);
	for (uint32_t i = 0; l && i < l->num_buffers; i++)
		keys |= strcmp(l->buffers[i].name, "array.keys") == 0;
	lir_module_free(l);
	mir_module_free(m);
	hir_forest_free(f);
	return keys;
}

/*
 * Walks compare keys where the records they read take at most 16 MiB: trees of depth 5
 * whose walks end on their leaves untested take 32 records of 8 bytes, their 32 float
 * leaves packed after them and a free line (448 bytes), so 37449 trees fit and 37450 do
 * not. Double leaves, which have a region of their own that walks only read at the end
 * and are not packed (64 records and a free line, 576 bytes), do not count: 29127 fit.
 */
static void test_key_copy_bound(void)
{
	CHECK(keeps_keys(1, HTYPE_F32));
	CHECK(keeps_keys(37449, HTYPE_F32));
	CHECK(!keeps_keys(37450, HTYPE_F32));
	CHECK(keeps_keys(29127, HTYPE_F64));
	CHECK(!keeps_keys(29128, HTYPE_F64));
}

/* How many cache directives f's schedule holds. */
static uint32_t caches(const HForest *f)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->schedule.num_log; i++)
		n += f->schedule.log[i].kind == HDIR_CACHE;
	return n;
}

/*
 * Rows are cached where the outermost row loop's copy of the widest rows fits in
 * LOWER_ROW_CACHE_BYTES: the knob asks, hir_apply_knobs writes cache(v) only then (the
 * tuner's candidates that do not fit are the ones without), and the heuristic sets it.
 */
static void test_rows_cache_fits(void)
{
	enum { FEATURES = 2049 }; /* 16 rows: 128 KiB of floats, more than 256 KiB of doubles */
	HScheduleKnobs k = {.rows = 16, .trees = 1, .parallel = HPARALLEL_ROWS, .cache_rows = 1};
	HForest *f = small_forest(4, 1), *wide = hir_forest_new("unit", FEATURES, 1);
	Error e;
	for (uint32_t t = 0; t < 4; t++)
		memcpy(hir_tree_add(wide, 7, 0), hir_tree_nodes(f, t), 7 * sizeof(HNode));
	CHECK(hir_rows_cache_fits(wide, &k));
	CHECK(hir_apply_knobs(wide, &k, &e) && caches(wide) == 1);
	k.rows = 1; /* one row: nothing to copy */
	CHECK(!hir_rows_cache_fits(wide, &k));
	CHECK(hir_apply_knobs(wide, &k, &e) && caches(wide) == 0);
	k = (HScheduleKnobs){.rows = 16, .trees = 1, .tree_tile = 2, .row_tile = 64, .parallel = HPARALLEL_ROWS, .cache_rows = 1};
	CHECK(!hir_rows_cache_fits(wide, &k)); /* tiles of 64 rows: 512 KiB */
	CHECK(hir_apply_knobs(wide, &k, &e) && caches(wide) == 0);
	wide->threshold_type = HTYPE_F64; /* predict_f64's rows are doubles */
	k = (HScheduleKnobs){.rows = 16, .trees = 1, .parallel = HPARALLEL_ROWS, .cache_rows = 1};
	CHECK(!hir_rows_cache_fits(wide, &k));
	hir_choose_knobs(wide, 0, 16, 1, "array", MTOPS_NONE, &k);
	CHECK(!k.cache_rows);
	wide->threshold_type = HTYPE_F32;
	hir_choose_knobs(wide, 0, 16, 1, "array", MTOPS_NONE, &k);
	CHECK(k.cache_rows);
	hir_forest_free(wide);
	hir_forest_free(f);
}

/*
 * Trees are prefetched a tile ahead (cache_trees: cache(t0)) where the heuristic tiles
 * a forest larger than L2 with tiles of many rows; hir_apply_knobs writes it only where
 * the trees are tiled.
 */
static void test_trees_cache(void)
{
	uint32_t depth[40];
	HForest *big, *small;
	HScheduleKnobs k;
	Error e;
	for (size_t t = 0; t < COUNT_OF(depth); t++)
		depth[t] = 12; /* 64 KiB a tree as the array lays it out: 2.5 MiB in all */
	big = chain_forest(depth, COUNT_OF(depth));
	small = chain_forest(depth, 4);
	hir_choose_knobs(big, HIR_TILE_AUTO, 16, 1, "array", MTOPS_NONE, &k);
	CHECK(k.cache_trees && hir_trees_cache_applies(big, &k));
	CHECK(hir_apply_knobs(big, &k, &e) && caches(big) == 1);
	CHECK(hir_schedule_find(&big->schedule, "t0") >= 0 &&
	      big->schedule.vars[hir_schedule_find(&big->schedule, "t0")].flags & HVAR_CACHE);
	k.tree_tile = 0; /* every row walks every tree: no tiles to prefetch */
	CHECK(!hir_trees_cache_applies(big, &k));
	CHECK(hir_apply_knobs(big, &k, &e) && caches(big) == 0);
	hir_choose_knobs(small, HIR_TILE_AUTO, 16, 1, "array", MTOPS_NONE, &k);
	CHECK(!k.cache_trees);
	hir_forest_free(big);
	for (size_t t = 0; t < COUNT_OF(depth); t++)
		depth[t] = t % 2 ? 13 : 4; /* trees of two depths (2.5 MiB in all): each depth group prefetches its own tiles */
	big = chain_forest(depth, COUNT_OF(depth));
	hir_choose_knobs(big, HIR_TILE_AUTO, 16, 1, "array", MTOPS_NONE, &k);
	k.depth_groups = HIR_MAX_DEPTH_GROUPS; /* (the heuristic peels these chains: padding them would outgrow them) */
	k.peel = 0;
	CHECK(k.cache_trees && hir_apply_knobs(big, &k, &e) && caches(big) == 2);
	CHECK(hir_schedule_find(&big->schedule, "g0") >= 0 &&
	      big->schedule.vars[hir_schedule_find(&big->schedule, "g0")].flags & HVAR_CACHE);
	hir_forest_free(big);
	hir_forest_free(small);
}

/* Whether f's schedule holds directive kind with value (any value where value < 0). */
static bool has_directive(const HForest *f, HDirectiveKind kind, int64_t value)
{
	for (uint32_t i = 0; i < f->schedule.num_log; i++)
		if (f->schedule.log[i].kind == kind && (value < 0 || f->schedule.log[i].value == value))
			return true;
	return false;
}

/* num_trees complete trees of depth 8 over 8 features. */
static HForest *deep_forest(uint32_t num_trees)
{
	HForest *f = hir_forest_new("unit", 8, 1);
	for (uint32_t t = 0; t < num_trees; t++) {
		HNode *n = hir_tree_add(f, 511, 0);
		for (uint32_t i = 0; i < 511; i++)
			n[i] = i < 255 ? (HNode){.value = i + t, .left = 2 * i + 1, .right = 2 * i + 2, .feature = i % 8}
			               : (HNode){.value = i, .feature = HIR_LEAF};
	}
	return f;
}

/*
 * grove's schedule walks batches of lone rows apart (splitSize): a row at a time, trees
 * side by side in the groups that leave the fewest (10 of 100 trees, 9 of 27); below the
 * rows from which a tile of 16 padded pays (cost_pad_rows: 8 where the walks are even,
 * 11 where not) where the trees fit in L2, single rows where they do not; not where the
 * caller names the representation.
 */
static void test_few_rows(void)
{
	static const uint32_t trees[] = {100, 27, 700}, few_trees[] = {10, 9, 10}, few_rows[] = {8, 8, 2};
	for (size_t i = 0; i < COUNT_OF(trees); i++) {
		HForest *f = deep_forest(trees[i]);
		HScheduleKnobs k;
		hir_choose_knobs(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
		CHECK(k.few_trees == few_trees[i] && k.few_rows == few_rows[i]);
		CHECK(hir_choose_schedule(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, NULL));
		CHECK(has_directive(f, HDIR_SPLIT_SIZE, few_rows[i]) && has_directive(f, HDIR_TILE, few_trees[i]));
		CHECK(hir_choose_schedule(f, HIR_TILE_AUTO, 16, 8, "array", MTOPS_NONE, NULL));
		CHECK(!has_directive(f, HDIR_SPLIT_SIZE, -1));
		hir_forest_free(f);
	}
	/* Uneven trees (chains 24 deep) count as the sparse layout stores them: 300 fit L2 (complete, not), 3000 do not. */
	static const uint32_t chains[] = {300, 3000}, chain_rows[] = {11, 2};
	static uint32_t depth[3000];
	for (uint32_t t = 0; t < 3000; t++)
		depth[t] = 24;
	for (size_t i = 0; i < COUNT_OF(chains); i++) {
		HForest *f = chain_forest(depth, chains[i]);
		HScheduleKnobs k;
		hir_choose_knobs(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
		CHECK(k.peel > 0 && k.few_trees > 1 && k.few_rows == chain_rows[i]);
		hir_forest_free(f);
	}
}

/*
 * A representation the user names: code gets the code schedule whatever the forest's
 * size (a tile of rows over each tree, the tree loops specialized), others the
 * heuristic's for records; left to the heuristic, only forests of at most
 * HIR_CODE_SPLITS splits become code.
 */
/* 100 complete trees of depth 8, but those t with shallow(t) of depth 5. */
static HForest *two_depth_forest(bool (*shallow)(uint32_t))
{
	HForest *f = hir_forest_new("unit", 8, 1);
	for (uint32_t t = 0; t < 100; t++) {
		uint32_t depth = shallow(t) ? 5 : 8, nodes = (2u << depth) - 1;
		HNode *n = hir_tree_add(f, nodes, 0);
		for (uint32_t i = 0; i < nodes; i++)
			n[i] = i < nodes / 2 ? (HNode){.value = i + t, .left = 2 * i + 1, .right = 2 * i + 2, .feature = i % 8}
			                     : (HNode){.value = i, .feature = HIR_LEAF};
	}
	return f;
}

static bool sixteen_shallow(uint32_t t) { return t % 6 == 0 && t < 96; }
static bool four_deep(uint32_t t) { return t % 25 != 7; }

/* The tile and unrollWalk of the lone rows' group loop `name` of f's schedule match size and depth. */
static bool few_group_is(const HForest *f, const char *name, uint32_t size, uint32_t depth)
{
	int32_t v = hir_schedule_find(&f->schedule, name);
	return v >= 0 && f->schedule.vars[v].size == size && f->schedule.vars[v].unroll_walk == depth;
}

/*
 * Depth groups reach the lone rows' half: 16 trees of depth 5 among 84 of depth 8 (as
 * year_prediction_msd's) make two groups in each half; the lone rows walk the first in
 * tiles of 8 trees, the second in tiles of 12 (no lane masked), each unrolled to its depth.
 * A group of fewer trees than a tile takes them all side by side (4 deep trees after 96).
 */
static void test_few_groups(void)
{
	HForest *f = two_depth_forest(sixteen_shallow);
	HScheduleKnobs k;
	Error e;
	hir_choose_knobs(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
	CHECK(k.depth_groups > 1 && k.few_trees == 10);
	CHECK(hir_apply_knobs(f, &k, &e));
	CHECK(few_group_is(f, "fb0", 8, 5) && few_group_is(f, "fb1", 12, 8));
	CHECK(hir_schedule_find(&f->schedule, "fb2") < 0 && f->schedule.tree_order == HORDER_DEPTH);
	hir_forest_free(f);
	f = two_depth_forest(four_deep);
	hir_choose_knobs(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
	CHECK(k.depth_groups > 1 && hir_apply_knobs(f, &k, &e));
	CHECK(few_group_is(f, "fb0", 12, 5) && few_group_is(f, "fb1", 4, 8)); /* 96 in 8 tiles of 12, not 12 of 8 */
	hir_forest_free(f);
}

/* f lowered to LIR under its schedule: the regions that compile as functions of their own (-1 where it fails). */
static int apart_regions(const HForest *f)
{
	Error e = {.message = {0}};
	MModule *m = lower_hir_to_mir(f, NULL, &e);
	LModule *l = m && mir_legalize_reductions(m, &e) ? lower_as(m, NULL, &e) : NULL;
	int n = l ? 0 : -1;
	for (uint32_t i = 0; l && i < l->funcs[l->predict]->num_insts; i++) {
		const LInst *inst = &l->funcs[l->predict]->insts[i];
		n += inst->op == LOP_IF && (inst->imm == LIR_IF_APART || inst->imm == LIR_IF_APART_BODY);
	}
	if (l)
		lir_module_free(l);
	if (m)
		mir_module_free(m);
	return n;
}

static void test_named_representation(void)
{
	HForest *big = deep_forest(4), *small = deep_forest(2); /* 1020 splits, 510 */
	HScheduleKnobs k;
	hir_choose_knobs(big, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
	CHECK(!k.representation && k.rows == 16);
	hir_choose_knobs(big, HIR_TILE_AUTO, 16, 8, "code", MTOPS_NONE, &k);
	CHECK(k.representation && (lower_representation_traits(k.representation - 1u) & LREP_CODE) && k.rows == 1 && k.trees == 1);
	CHECK(k.tree_tile == 2); /* tiles (functions) of at most HIR_CODE_SPLITS: two trees of 255 */
	CHECK(hir_choose_schedule(big, HIR_TILE_AUTO, 16, 8, "code", MTOPS_NONE, NULL));
	CHECK(has_directive(big, HDIR_SPECIALIZE, -1) && has_directive(big, HDIR_REPRESENTATION, -1));
	CHECK(apart_regions(big) == 2); /* each tile of 2 trees a function of its own */
	CHECK(hir_choose_schedule(small, HIR_TILE_AUTO, 16, 8, "code", MTOPS_NONE, NULL));
	CHECK(apart_regions(small) == 0); /* 510 splits: one function */
	hir_choose_knobs(small, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
	CHECK(k.representation && (lower_representation_traits(k.representation - 1u) & LREP_CODE) && !k.tree_tile);
	hir_choose_knobs(small, HIR_TILE_AUTO, 16, 8, "array", MTOPS_NONE, &k);
	CHECK(!k.representation && k.rows == 16);
	hir_forest_free(big);
	hir_forest_free(small);
}

/*
 * A forest that compares in double has one body: as code a row at a time, predict widens
 * its rows to double and calls predict_f64; in arrays, predict_f64 narrows its rows to
 * float keys and calls predict, which walks the float twin. Where two thresholds of a
 * feature lie between the same two floats, no key tells them apart, and arrays keep a
 * body per entry.
 */
static void test_converting_entries(void)
{
	static const char *const reps[] = {"code", "array"};
	for (int close = 0; close < 2; close++)
		for (size_t r = 0; r < COUNT_OF(reps); r++) {
			HForest *f = deep_forest(2);
			MModule *m;
			LModule *l;
			Error e;
			f->threshold_type = HTYPE_F64;
			for (uint64_t i = 0; i < f->num_nodes; i++)
				f->nodes[i].value += 0.1; /* thresholds a float cannot hold */
			if (close) /* the root's threshold and the double after it, on feature 0 */
				hir_tree_nodes(f, 1)[8].value = nextafter(hir_tree_nodes(f, 0)[0].value, INFINITY);
			CHECK(hir_choose_schedule(f, HIR_TILE_AUTO, 16, 8, reps[r], MTOPS_NONE, NULL));
			m = lower_hir_to_mir(f, NULL, &e);
			l = m ? lower_as(m, reps[r], &e) : NULL;
			CHECK(l && l->predict_f64 != LIR_NONE);
			if (l) {
				bool widens = r == 0, narrows = !close && r == 1;
				uint32_t caller = widens ? l->predict : l->predict_f64, callee = widens ? l->predict_f64 : l->predict;
				const LFunc *fn = l->funcs[caller];
				uint32_t calls = 0, trees = 0; /* reads of a buffer but narrowing's tables */
				for (uint32_t id = 0; id < fn->num_insts; id++) {
					const LInst *in = &fn->insts[id];
					calls += in->op == LOP_CALL && in->imm == callee;
					trees += in->op == LOP_BUFFER && strncmp(l->buffers[in->imm].name, "narrow_", 7) != 0;
				}
				if (widens || narrows)
					CHECK(calls == 1 && trees == 0 && l->workspace_fixed == 8 &&
					      l->workspace_per_row >= 8 * (widens ? sizeof(double) : sizeof(float)));
				else
					CHECK(calls == 0 && trees > 0);
			}
			lir_module_free(l);
			mir_module_free(m);
			hir_forest_free(f);
		}
}

/* A double forest of one-split trees on feature i % features, threshold thresholds[i], kind kinds[i % num_kinds]. */
static HForest *split_forest(const double *thresholds, size_t count, const HCompare *kinds, size_t num_kinds, uint32_t features)
{
	HForest *f = hir_forest_new("unit", features, 1);
	f->threshold_type = f->leaf_type = HTYPE_F64;
	for (size_t i = 0; i < count; i++) {
		HNode *t = hir_tree_add(f, 3, 0);
		t[0] = (HNode){.value = thresholds[i], .left = 1, .right = 2, .feature = (int32_t)(i % features),
		               .compare = (uint8_t)kinds[i % num_kinds]};
		t[1] = (HNode){.value = 1, .feature = HIR_LEAF};
		t[2] = (HNode){.value = 2, .feature = HIR_LEAF};
	}
	return f;
}

/*
 * Whether the keys of f's narrowing (lower_narrow_key, which predict_f64's conversion
 * computes) decide every split of f's float twin as f decides it on the doubles: those
 * two either side of each threshold and of the floats either side of it, and 0,
 * infinities and NaN.
 */
static bool narrows_exactly(const HForest *f)
{
	HForest *twin = hir_float_forest(f);
	NarrowCuts *t = lower_narrowing(f);
	bool ok = twin && t;
	for (uint32_t i = 0; ok && i < f->num_trees; i++) {
		double around[] = {hir_tree_nodes(f, i)->value, (float)hir_tree_nodes(f, i)->value, INFINITY, -INFINITY, NAN, 0.0, -0.0};
		for (size_t k = 0; k < COUNT_OF(around); k++)
			for (int side = 0; side < 2; side++) {
				double x = around[k];
				for (int step = 0; step < 2; step++)
					x = side ? nextafter(x, -INFINITY) : nextafterf((float)x, -INFINITY);
				for (int step = 0; step < 5; step++, x = side ? nextafter(x, INFINITY) : nextafterf((float)x, INFINITY))
					for (uint32_t j = 0; j < f->num_trees; j++) {
						const HNode *a = hir_tree_nodes(f, j), *b = hir_tree_nodes(twin, j);
						float key = lower_narrow_key(t, a->feature, x);
						ok = ok && compares(a->compare, x, a->value) == compares(b->compare, key, b->value) &&
						     isnan(x) == isnan(key);
					}
			}
	}
	lower_narrowing_free(t);
	hir_forest_free(twin);
	return ok;
}

/*
 * Category splits on a feature that ordered splits cut too (as padding's do): keys
 * give every double the category truncation gives it, and the same "no category"
 * below -1 (LightGBM's rule); a cut just below an integer, whose raised key would
 * cross into that category, refuses the narrowing.
 */
static void test_narrowed_categories(void)
{
	static const HCompare le = HCMP_LE;
	HForest *f = split_forest((const double[]){2.5, 0.1, -0.7}, 3, &le, 1, 1);
	uint32_t *words, set = hir_set_add(f, 1, &words);
	HNode *in = hir_tree_add(f, 3, 0);
	NarrowCuts *t = NULL;
	words[0] = 0x5;
	in[0] = (HNode){.left = 1, .right = 2, .feature = 0, .compare = HCMP_IN, .set = set};
	in[1] = (HNode){.value = 1, .feature = HIR_LEAF};
	in[2] = (HNode){.value = 2, .feature = HIR_LEAF};
	f->category_rule = HCATEGORY_TRUNCATE;
	CHECK(narrows_exactly(f) && (t = lower_narrowing(f)));
	for (int c = -3; t && c < 40; c++) {
		double x = nextafter(nextafter((double)c, -INFINITY), -INFINITY);
		for (int step = 0; step < 5; step++, x = nextafter(x, INFINITY)) {
			float key = lower_narrow_key(t, 0, x);
			CHECK((x > -1) == (key > -1) && (x <= -1 || (int64_t)x == (int64_t)key));
		}
	}
	lower_narrowing_free(t);
	hir_tree_nodes(f, 0)->value = 2.0 - 0x1p-30; /* x <= 2 - 2^-30: keys of (2 - 2^-30, 2) would become 2 */
	CHECK(!lower_narrowing(f));
	hir_forest_free(f);
}

/*
 * Narrowing, split by split (every kind, on thresholds that are floats, just past floats,
 * near 0, in the subnormals, beyond the floats' range), on 300 thresholds over three
 * features (a table of many keys), and its refusal where two thresholds of a feature
 * lie between the same two floats.
 */
static void test_narrowing(void)
{
	static const double thresholds[] = {1.0, 0.1, -0.1, 1.0 + 0x1p-40, 1.0 - 0x1p-40, 0.0, -0.0, 0x1p-149, -0x1p-149, 0x1p-160,
	                                    -0x1p-160, 0x1p-1074, 3.5e38, 1e300, -1e300, 16777217.0, 2.5, -1.0 - 0x1p-30};
	static const HCompare kinds[] = {HCMP_LT, HCMP_LE, HCMP_GT, HCMP_GE, HCMP_EQ, HCMP_NE};
	double many[300];
	HForest *f;
	for (size_t i = 0; i < COUNT_OF(thresholds); i++)
		for (size_t k = 0; k < COUNT_OF(kinds); k++) {
			if (kinds[k] >= HCMP_EQ && (double)(float)thresholds[i] != thresholds[i])
				continue; /* == a double no float equals: no float twin */
			f = split_forest(thresholds + i, 1, kinds + k, 1, 1);
			CHECK(narrows_exactly(f));
			hir_forest_free(f);
		}
	for (size_t i = 0; i < COUNT_OF(many); i++)
		many[i] = 0.37 * (double)i - 40.1;
	f = split_forest(many, COUNT_OF(many), kinds + 1, 1, 3);
	CHECK(narrows_exactly(f));
	hir_forest_free(f);
	f = split_forest((const double[]){-1e-300, 1e-300, 2.0}, 3, kinds + 1, 1, 1); /* keys raised to -0 and to 2^-149 */
	CHECK(narrows_exactly(f));
	hir_forest_free(f);
	f = split_forest((const double[]){0.1, 0.1}, 2, kinds, 2, 1); /* x < 0.1 and x <= 0.1 */
	CHECK(!lower_narrowing(f));
	hir_forest_free(f);
	test_narrowed_categories();
}

static void test_walk_peel(void)
{
	enum { SPLITS = 20, NODES = 2 * SPLITS + 1 };
	HForest *f = hir_forest_new("unit", 4, 1), *complete = deep_forest(4);
	HScheduleKnobs k;
	for (uint32_t t = 0; t < 2 * HIR_CODE_LANES_SPLITS / SPLITS; t++) { /* too many splits for code, in vectors or not */
		HNode *n = hir_tree_add(f, NODES, 0);
		for (uint32_t i = 0; i < SPLITS; i++) {
			n[2 * i] = (HNode){.value = i + t, .left = 2 * i + 1, .right = 2 * i + 2, .feature = i % 4, .cover = 1};
			n[2 * i + 1] = (HNode){.value = i, .feature = HIR_LEAF}; /* no cover */
		}
		n[NODES - 1] = (HNode){.value = -1, .feature = HIR_LEAF};
	}
	hir_choose_knobs(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
	CHECK(k.peel == 13); /* (1 + ... + 20 + 20) / 21 = 10.95: + 5 is past 13, + 1 is 11.95, short of it */
	for (uint64_t i = 0; i < f->num_nodes; i++) /* most rows end at depth 2: (100 * 2 + 228) / 120 = 3.57 */
		f->nodes[i].cover = f->nodes[i].feature != HIR_LEAF ? 0 : i % NODES == 3 ? 100 : 1;
	hir_choose_knobs(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
	CHECK(k.peel == 8); /* + 5 */
	CHECK(hir_choose_schedule(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, NULL));
	CHECK(has_directive(f, HDIR_PEEL_WALK, 8));
	for (uint64_t i = 0; i < f->num_nodes; i++) /* (100 * 8 + 222) / 120 = 8.52: + 5 past 13, + 1 short of it */
		f->nodes[i].cover = f->nodes[i].feature != HIR_LEAF ? 0 : i % NODES == 15 ? 100 : 1;
	hir_choose_knobs(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
	CHECK(k.peel == 13);
	CHECK(hir_choose_schedule(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, NULL));
	CHECK(has_directive(f, HDIR_PEEL_WALK, 13) && has_directive(f, HDIR_PEEL_WALK, 11)); /* batches; lone rows */
	hir_choose_knobs(complete, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k); /* one depth: every walk is straight */
	CHECK(k.peel == 0);
	hir_forest_free(f);
	hir_forest_free(complete);
}

/* IF regions of l's functions that compile apart (lower_specialized's, one per tile of trees that does). */
static uint32_t regions_apart(const LModule *l)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < l->num_funcs; i++)
		for (uint32_t j = 0; j < l->funcs[i]->num_insts; j++)
			n += l->funcs[i]->insts[j].op == LOP_IF && l->funcs[i]->insts[j].imm == LIR_IF_APART_BODY;
	return n;
}

/*
 * grove's schedule walks rows side by side in vectors, as code, for forests of at most
 * HIR_CODE_LANES_SPLITS splits whose trees have at most 32 leaves, some deeper than a
 * complete tree of as many (chains of 20 splits), each tile of rows copied (cache),
 * and up to HIR_CODE_CATEGORY_SPLITS where some split tests a category set; not
 * complete trees, not more splits, not where --interleave 1 asks rows one at a time.
 * Batches of fewer rows than a vector walk code a row at a time, each tile of trees
 * over them compiled apart (past HIR_CODE_SPLITS) as the other half's are. Where the
 * CPU takes 16 rows' tops (AVX2, AVX-512), such forests past HIR_CODE_SPLITS walk the
 * sparse layout by leaf masks instead.
 */
static void test_code_lanes(void)
{
	enum { SPLITS = 20, NODES = 2 * SPLITS + 1 };
	static const uint32_t trees[] = {10, HIR_CODE_LANES_SPLITS / SPLITS, HIR_CODE_LANES_SPLITS / SPLITS + 1,
	                                 HIR_CODE_LANES_SPLITS / SPLITS + 1};
	HScheduleKnobs k;
	for (size_t i = 0; i < sizeof trees / sizeof *trees; i++) {
		HForest *f = hir_forest_new("unit", 4, 1), *complete = hir_forest_new("unit", 4, 1);
		bool sets = i == 3, lanes = trees[i] * SPLITS <= HIR_CODE_LANES_SPLITS || sets;
		uint32_t *words, set = sets ? hir_set_add(f, 1, &words) : 0;
		if (sets)
			words[0] = 0x5;
		for (uint32_t t = 0; t < trees[i]; t++) {
			HNode *n = hir_tree_add(f, NODES, 0), *c;
			for (uint32_t j = 0; j < SPLITS; j++) {
				n[2 * j] = (HNode){.value = j + t, .left = 2 * j + 1, .right = 2 * j + 2, .feature = j % 3};
				if (sets && j == 0) /* feature 3 a category's alone, as the libraries' are */
					n[0] = (HNode){.left = 1, .right = 2, .feature = 3, .compare = HCMP_IN, .set = set};
				n[2 * j + 1] = (HNode){.value = j, .feature = HIR_LEAF};
			}
			n[NODES - 1] = (HNode){.value = -1, .feature = HIR_LEAF};
			c = hir_tree_add(complete, 31, 0); /* depth 4: 16 leaves */
			for (uint32_t j = 0; j < 31; j++)
				c[j] = j < 15 ? (HNode){.value = j + t, .left = 2 * j + 1, .right = 2 * j + 2, .feature = j % 4}
				              : (HNode){.value = j, .feature = HIR_LEAF};
		}
		hir_choose_knobs(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
		CHECK((k.rows == HIR_CODE_LANES && k.cache_rows && k.representation &&
		       lower_representation_traits(k.representation - 1u) & LREP_CODE) == lanes);
		CHECK(!lanes || (k.few_trees == k.tree_tile && k.few_rows == HIR_CODE_LANES));
		CHECK(!lanes || hir_choose_schedule(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, NULL));
		if (lanes && trees[i] * SPLITS > HIR_CODE_SPLITS) { /* the lone rows' tiles apart: one region more each */
			uint32_t regions[2] = {0, 0}, tiles = (trees[i] + k.tree_tile - 1) / k.tree_tile;
			CHECK(has_directive(f, HDIR_SPLIT_SIZE, HIR_CODE_LANES));
			for (int without = 0; without < 2; without++) {
				Error e;
				MModule *m;
				LModule *l;
				k.few_trees = without ? 0 : k.few_trees;
				CHECK(hir_apply_knobs(f, &k, &e));
				m = lower_hir_to_mir(f, NULL, &e);
				l = m ? lower_as(m, NULL, &e) : NULL;
				CHECK(l != NULL);
				regions[without] = l ? regions_apart(l) : 0;
				lir_module_free(l);
				mir_module_free(m);
			}
			CHECK(regions[0] == regions[1] + tiles);
		}
		hir_choose_knobs(f, HIR_TILE_AUTO, 1, 8, NULL, MTOPS_NONE, &k);
		CHECK(k.rows == 1);
		hir_choose_knobs(complete, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_NONE, &k);
		CHECK(k.rows != HIR_CODE_LANES || !k.representation ||
		      !(lower_representation_traits(k.representation - 1u) & LREP_CODE));
		/* Where the CPU takes tops, leaf masks in the sparse layout instead, past HIR_CODE_SPLITS, and they lower so. */
		hir_choose_knobs(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_PAIRS, &k);
		CHECK((k.rows == TOP_LANES && k.representation &&
		       !strcmp(lower_representation_name(k.representation - 1u), "sparse")) == (trees[i] * SPLITS > HIR_CODE_SPLITS));
		if (trees[i] * SPLITS > HIR_CODE_SPLITS) {
			Error e;
			MModule *m;
			LModule *l;
			CHECK(hir_choose_schedule(f, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_PAIRS, &e));
			hir_float_forms(f); /* (the compare forms x86 takes, as compiles do) */
			m = mir_after_passes(f, MTOPS_PAIRS);
			l = m ? lower_as(m, NULL, &e) : NULL;
			CHECK(buffer_elements(l, "masks.splits") > 0);
			lir_module_free(l);
			mir_module_free(m);
		}
		hir_choose_knobs(f, HIR_TILE_AUTO, 1, 8, NULL, MTOPS_PAIRS, &k);
		CHECK(k.rows == 1 && (!k.representation || strcmp(lower_representation_name(k.representation - 1u), "sparse")));
		hir_choose_knobs(complete, HIR_TILE_AUTO, 16, 8, NULL, MTOPS_WIDE, &k);
		CHECK(!k.representation || strcmp(lower_representation_name(k.representation - 1u), "sparse"));
		hir_forest_free(f);
		hir_forest_free(complete);
	}
}

int main(void)
{
	test_code_lanes();
	test_converting_entries();
	test_narrowing();
	test_walk_peel();
	test_few_rows();
	test_named_representation();
	test_few_groups();
	test_key_copy_bound();
	test_rows_cache_fits();
	test_trees_cache();
	test_prefetch_below();
	test_prefetch_next_rows();
	test_transposed_tiles();
	test_packed_leaves();
	test_keys();
	test_float_forest();
	test_depth_groups();
	test_many_outputs();
	test_sparse_keys();
	test_oblivious();
	test_mirrored_margins();
	test_tile_trees();
	test_legalize();
	test_pad_and_unroll();
	test_verify();
	test_hir_to_mir();
	test_representations();
	if (failures)
		fprintf(stderr, "%d checks failed\n", failures);
	return failures != 0;
}
