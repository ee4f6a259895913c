/* Unit tests of the knobs' one description (lower/hir_knobs.c) and the cost model's features (lower/cost.c). */
#include "lower/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/check.h"

/* Every knob is reached by its entry alone, under its field's name, and written by hir_knobs_describe. */
static void test_knob_table(void)
{
	HScheduleKnobs k = {0};
	char text[512];
	for (int i = 0; i < HKNOB_COUNT; i++) {
		CHECK(hir_knobs[i].name && (hir_knobs[i].size == 1 || hir_knobs[i].size == 4));
		hir_knob_set(&k, i, 1 + (uint32_t)i % 2);
		for (int j = 0; j < i; j++)
			CHECK(strcmp(hir_knobs[i].name, hir_knobs[j].name) != 0);
	}
	for (int i = 0; i < HKNOB_COUNT; i++)
		CHECK(hir_knob_get(&k, i) == 1 + (uint32_t)i % 2);
	CHECK(k.rows == 1 && k.trees == 2 && k.tree_tile == 1 && k.row_tile == 2 && k.parallel == 1 && k.unroll == 2 &&
	      k.peel == 1 && k.representation == 2 && k.depth_groups == 1 && k.tile_trees == 2 && k.cache_rows == 1 &&
	      k.cache_trees == 2 && k.few_trees == 1 && k.few_rows == 2);
	k.tree_tile = 8, k.row_tile = 64;
	hir_knobs_describe(&k, text, sizeof text);
	for (int i = 0; i < HKNOB_COUNT; i++)
		CHECK(strstr(text, hir_knobs[i].name) != NULL);
	CHECK(strstr(text, "parallel trees") && strstr(text, "row_tile 64") && strstr(text, "depth_groups 0"));
	CHECK(strstr(text, lower_representation_name(1)) != NULL);
	/* knobs that choose nothing: row_tile without tree tiles, few_rows without few_trees, one depth group */
	HScheduleKnobs a = {.rows = 8, .row_tile = 16, .few_rows = 4, .depth_groups = 1}, b = {.rows = 8};
	CHECK(hir_knobs_same(&a, &b));
	a.tree_tile = 4, b.tree_tile = 4;
	CHECK(!hir_knobs_same(&a, &b));
}

/* A tree of n nodes into f from (feature, left, right) triples, leaves where feature is HIR_LEAF; cover from covers. */
static void add_tree(HForest *f, uint32_t n, const int32_t (*shape)[3], const float *covers)
{
	HNode *nodes = hir_tree_add(f, n, 0);
	for (uint32_t i = 0; i < n; i++)
		nodes[i] = (HNode){.value = 0.5, .feature = shape[i][0], .left = (uint32_t)shape[i][1],
		                   .right = (uint32_t)shape[i][2], .cover = covers ? covers[i] : 0};
}

static const int32_t complete2[7][3] = {{0, 1, 2}, {1, 3, 4}, {1, 5, 6}, {HIR_LEAF, 0, 0}, {HIR_LEAF, 0, 0},
                                        {HIR_LEAF, 0, 0}, {HIR_LEAF, 0, 0}};
/* A chain: each split's left child a leaf, down to depth 3. */
static const int32_t chain3[7][3] = {{0, 1, 2}, {HIR_LEAF, 0, 0}, {1, 3, 4}, {HIR_LEAF, 0, 0}, {0, 5, 6},
                                     {HIR_LEAF, 0, 0}, {HIR_LEAF, 0, 0}};

static void test_forest_features(void)
{
	HForest *f = hir_forest_new("unit", 3, 1);
	CostForest c;
	double mean, sd;
	add_tree(f, 7, complete2, NULL);
	add_tree(f, 7, chain3, NULL);
	cost_forest(f, &c);
	/* leaves at 2, 2, 2, 2 and 1, 2, 3, 3: mean 17/8 */
	cost_leaf_depths(f, &mean, &sd);
	CHECK(fabs(mean - 17.0 / 8) < 1e-12 && sd > 0.5 && sd < 0.6);
	CHECK(c.x[5] == 3 && c.x[6] == 2);                /* depth_max, depth_min */
	CHECK(c.x[16] == 1 && c.x[17] == 0.75f);          /* fill_0: 2 of 2 roots; fill_1: 3 of 4 */
	CHECK(c.x[18] == 0.125f && c.x[19] == 0);         /* fill_2: the chain's last split, 1 of 8 */
	CHECK(fabs(c.tree_bytes - 8 * (7 + 15) / 2.0) < 1e-9 && c.row_bytes == 12);
	CHECK(!strcmp(cost_feature_name(5), "depth_max") && !strcmp(cost_feature_name(16), "fill_0"));
	hir_forest_free(f);

	/* covers weight the leaves: the chain's shallow leaf takes 9 of 10 rows */
	static const float covers[7] = {10, 9, 1, 0.5f, 0.5f, 0.25f, 0.25f};
	f = hir_forest_new("unit", 2, 1);
	add_tree(f, 7, chain3, covers);
	cost_leaf_depths(f, &mean, &sd);
	CHECK(fabs(mean - (9 * 1 + 0.5 * 2 + 0.25 * 3 + 0.25 * 3) / 10) < 1e-6);
	hir_forest_free(f);
}

/* Rows side by side finish together where most lanes walk past the straight steps, not where few do. */
static void test_finish_together(void)
{
	/* a chain of 7 splits whose rows nearly all reach its deepest leaves */
	static const int32_t chain7[15][3] = {{0, 1, 2},         {HIR_LEAF, 0, 0}, {0, 3, 4},  {HIR_LEAF, 0, 0}, {0, 5, 6},
	                                      {HIR_LEAF, 0, 0},  {0, 7, 8},        {HIR_LEAF, 0, 0}, {0, 9, 10}, {HIR_LEAF, 0, 0},
	                                      {0, 11, 12},       {HIR_LEAF, 0, 0}, {0, 13, 14}, {HIR_LEAF, 0, 0}, {HIR_LEAF, 0, 0}};
	static const float deep[15] = {100, 1, 99, 1, 98, 1, 97, 1, 96, 1, 95, 1, 94, 47, 47};
	/* chain3 whose rows nearly all stop at its first leaf */
	static const float shallow[7] = {100, 99, 1, 0.5f, 0.5f, 0.25f, 0.25f};
	HForest *f = hir_forest_new("unit", 1, 1);
	add_tree(f, 15, chain7, deep);
	CHECK(cost_finish_together(f, 2, 16));
	CHECK(!cost_finish_together(f, 7, 16)); /* no walk goes past 7 steps */
	hir_forest_free(f);
	f = hir_forest_new("unit", 1, 1);
	add_tree(f, 7, chain3, shallow);
	CHECK(!cost_finish_together(f, 1, 16));
	CHECK(cost_finish_together(f, 0, 16)); /* every walk takes a step past none */
	hir_forest_free(f);
}

/* The features of a schedule: the forest's, the machine's, every knob at its place, and the bytes they imply. */
static void test_schedule_features(void)
{
	HForest *f = hir_forest_new("unit", 3, 1);
	CostForest c;
	CostMachine m = {.batch = 1023, .threads = 4, .vector_bits = 256, .l2_bytes = 1 << 20, .l3_bytes = 32 << 20};
	HScheduleKnobs k = {.rows = 8, .trees = 2, .tree_tile = 1, .row_tile = 64, .peel = 3, .few_rows = 5};
	float x[COST_FEATURES];
	uint32_t knobs = COST_FOREST_FEATURES + COST_MACHINE_FEATURES;
	for (int t = 0; t < 4; t++)
		add_tree(f, 7, complete2, NULL);
	cost_forest(f, &c);
	cost_features(&c, &m, &k, x);
	CHECK(!memcmp(x, c.x, sizeof c.x));
	CHECK(x[COST_FOREST_FEATURES] == 10 && x[COST_FOREST_FEATURES + 1] == 4 && x[COST_FOREST_FEATURES + 2] == 256);
	CHECK(x[knobs + HKNOB_ROWS] == 8 && x[knobs + HKNOB_ROW_TILE] == 64 && x[knobs + HKNOB_PEEL] == 3);
	CHECK(x[knobs + HKNOB_FEW_ROWS] == 0); /* normal form: no few_trees */
	for (uint32_t i = 0; i < COST_FEATURES; i++)
		CHECK(cost_feature_name(i) != NULL && isfinite(x[i]));
	CHECK(cost_feature_name(COST_FEATURES) == NULL);
	/* a tile of one tree of 7 slots (56 bytes), blocks of 64 rows of 12 bytes */
	CHECK(fabsf(x[COST_FEATURES - 2] - (float)log2(1 + 56 / 1024.0)) < 1e-6f);
	CHECK(fabsf(x[COST_FEATURES - 1] - (float)log2(1 + 64 * 12 / 1024.0)) < 1e-6f);
	/* a prediction where grove has a model, finite */
	float p = NAN;
	CHECK(cost_predict(x, 1, &p) == cost_model_trained());
	CHECK(!cost_model_trained() || isfinite(p));
	hir_forest_free(f);
}

/* A chain of `splits` splits, each split's right child a leaf. */
static void add_chain(HForest *f, uint32_t splits)
{
	HNode *nodes = hir_tree_add(f, 2 * splits + 1, 0);
	for (uint32_t i = 0; i < splits; i++) {
		nodes[2 * i] = (HNode){.value = 0.5, .feature = 0, .left = 2 * i + 2, .right = 2 * i + 1};
		nodes[2 * i + 1] = (HNode){.value = 1, .feature = HIR_LEAF};
	}
	nodes[2 * splits] = (HNode){.value = 2, .feature = HIR_LEAF};
}

/* Walks wait on memory where the average tree's records (8 bytes a node) outgrow L1's 32 KiB, not before. */
static void test_walks_wait(void)
{
	HForest *f = hir_forest_new("unit", 1, 1);
	add_chain(f, 2048); /* 4097 nodes: 32,776 bytes */
	CHECK(cost_walks_wait_on_memory(f));
	add_chain(f, 2047); /* 4095 nodes: the average is 4096 */
	CHECK(!cost_walks_wait_on_memory(f));
	hir_forest_free(f);
	f = hir_forest_new("unit", 1, 1);
	CHECK(!cost_walks_wait_on_memory(f)); /* no trees */
	add_tree(f, 7, complete2, NULL);
	CHECK(!cost_walks_wait_on_memory(f));
	hir_forest_free(f);
}

int main(void)
{
	test_knob_table();
	test_forest_features();
	test_finish_together();
	test_schedule_features();
	test_walks_wait();
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures != 0;
}
