/* The learned cost model's features (lower/cost.h), and its prediction through the model linked in. */
#include "lower/cost.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const forest_names[COST_FOREST_FEATURES] = {
	"trees_log2", "features_log2", "margins_log2", "splits_log2", "tree_width", "depth_max", "depth_min",
	"leaf_depth_mean", "leaf_depth_sd", "array_kib_log2", "category_splits", "set_words_log2", "oblivious",
	"walks_even", "f64_thresholds", "row_bytes_log2",
	"fill_0", "fill_1", "fill_2", "fill_3", "fill_4", "fill_5", "fill_6", "fill_7", "fill_8", "fill_9", "fill_10",
	"fill_11", "fill_12", "fill_13", "fill_14", "fill_15",
};
static const char *const machine_names[COST_MACHINE_FEATURES] = {
	"batch_log2", "threads", "vector_bits", "l2_kib_log2", "l3_kib_log2",
};
static const char *const derived_names[COST_DERIVED_FEATURES] = {"tile_kib_log2", "row_block_kib_log2"};

const char *cost_feature_name(uint32_t i)
{
	if (i < COST_FOREST_FEATURES)
		return forest_names[i];
	i -= COST_FOREST_FEATURES;
	if (i < COST_MACHINE_FEATURES)
		return machine_names[i];
	i -= COST_MACHINE_FEATURES;
	if (i < HKNOB_COUNT)
		return hir_knobs[i].name;
	i -= HKNOB_COUNT;
	return i < COST_DERIVED_FEATURES ? derived_names[i] : NULL;
}

static float log2p(double x) { return (float)log2(1 + x); }

/*
 * Walk every tree from its root: the leaves' weighted depths into *mean and *sd, and
 * (unless NULL) the splits at each depth below COST_DEPTHS into splits_at.
 */
static void walk_depths(const HForest *f, double *mean, double *sd, uint64_t *splits_at)
{
	double sum = 0, squares = 0, weight = 0;
	uint32_t *stack = NULL;
	size_t cap = 0;
	bool covered = true;
	for (uint64_t i = 0; i < f->num_nodes && covered; i++)
		covered = f->nodes[i].feature != HIR_LEAF || f->nodes[i].cover > 0;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		const HNode *nodes = hir_tree_nodes(f, t);
		uint32_t top = 0;
		GROW(stack, 2 * (size_t)f->trees[t].num_nodes + 2, cap);
		stack[top++] = 0; /* node */
		stack[top++] = 0; /* its depth */
		while (top) {
			uint32_t depth = stack[--top], id = stack[--top];
			double w = covered ? nodes[id].cover : 1;
			if (nodes[id].feature == HIR_LEAF) {
				sum += w * depth;
				squares += w * depth * depth;
				weight += w;
				continue;
			}
			if (splits_at && depth < COST_DEPTHS)
				splits_at[depth]++;
			stack[top++] = nodes[id].left;
			stack[top++] = depth + 1;
			stack[top++] = nodes[id].right;
			stack[top++] = depth + 1;
		}
	}
	free(stack);
	*mean = weight > 0 ? sum / weight : 0;
	*sd = weight > 0 && squares / weight > *mean * *mean ? sqrt(squares / weight - *mean * *mean) : 0;
}

void cost_leaf_depths(const HForest *f, double *mean, double *sd)
{
	walk_depths(f, mean, sd, NULL);
}

void cost_forest(const HForest *f, CostForest *c)
{
	uint64_t splits = hir_trees_splits(f, 0, f->num_trees), categories = 0, splits_at[COST_DEPTHS] = {0};
	uint32_t width = 1, shallowest = UINT32_MAX, deepest = 0;
	double mean, sd, bytes = 0;
	float *x = c->x;
	walk_depths(f, &mean, &sd, splits_at);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint32_t depth = hir_tree_depth(f, t);
		/* as the array layout stores a tree: complete to its depth, 8 bytes a slot (12 a node past depth 24) */
		bytes += depth > 24 ? (double)f->trees[t].num_nodes * 12 : 8 * ((2.0 * (1ull << depth)) - 1);
		shallowest = depth < shallowest ? depth : shallowest;
		deepest = depth > deepest ? depth : deepest;
		width = f->trees[t].width > width ? f->trees[t].width : width;
	}
	for (uint64_t i = 0; i < f->num_nodes; i++)
		categories += f->nodes[i].feature != HIR_LEAF && f->nodes[i].compare == HCMP_IN;
	c->forest = f;
	c->shallowest = f->num_trees ? shallowest : 0;
	c->deepest = deepest;
	c->splits = splits;
	c->oblivious = f->num_trees && lower_forest_oblivious(f);
	c->walks_even = f->num_trees && lower_walks_even(f);
	c->tree_bytes = f->num_trees ? bytes / f->num_trees : 0;
	c->row_bytes = (double)(f->num_features ? f->num_features : 1) * (f->threshold_type == HTYPE_F64 ? 8 : 4);
	x[0] = log2p(f->num_trees);
	x[1] = log2p(f->num_features);
	x[2] = log2p(f->num_outputs);
	x[3] = log2p((double)splits);
	x[4] = (float)width;
	x[5] = (float)deepest;
	x[6] = (float)c->shallowest;
	x[7] = (float)mean;
	x[8] = (float)sd;
	x[9] = log2p(bytes / 1024);
	x[10] = splits ? (float)((double)categories / (double)splits) : 0;
	x[11] = log2p((double)f->num_set_words);
	x[12] = c->oblivious;
	x[13] = c->walks_even;
	x[14] = f->threshold_type == HTYPE_F64;
	x[15] = log2p(c->row_bytes);
	for (uint32_t d = 0; d < COST_DEPTHS; d++)
		x[16 + d] = f->num_trees ? (float)((double)splits_at[d] / ((double)f->num_trees * (double)(1ull << d))) : 0;
}

void cost_machine_host(CostMachine *m, size_t batch, uint32_t threads)
{
	long l2 = -1, l3 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
	l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
	l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
	*m = (CostMachine){.batch = batch, .threads = threads ? threads : 1, .vector_bits = 128,
	                   .l2_bytes = l2 > 0 ? (uint64_t)l2 : 0, .l3_bytes = l3 > 0 ? (uint64_t)l3 : 0};
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	m->vector_bits = __builtin_cpu_supports("avx512f") ? 512 : __builtin_cpu_supports("avx2") ? 256 : 128;
#endif
}

void cost_features(const CostForest *c, const CostMachine *m, const HScheduleKnobs *k, float *x)
{
	const HForest *f = c->forest;
	HScheduleKnobs n = *k;
	float *machine = x + COST_FOREST_FEATURES, *knobs = machine + COST_MACHINE_FEATURES, *derived = knobs + HKNOB_COUNT;
	bool tiles = n.tree_tile && n.tree_tile < f->num_trees;
	hir_knobs_normal(&n);
	for (uint32_t i = 0; i < COST_FOREST_FEATURES; i++)
		x[i] = c->x[i];
	machine[0] = log2p((double)m->batch);
	machine[1] = (float)m->threads;
	machine[2] = (float)m->vector_bits;
	machine[3] = log2p((double)m->l2_bytes / 1024);
	machine[4] = log2p((double)m->l3_bytes / 1024);
	for (int i = 0; i < HKNOB_COUNT; i++)
		knobs[i] = (float)hir_knob_get(&n, i);
	derived[0] = log2p((tiles ? n.tree_tile : f->num_trees) * c->tree_bytes / 1024);
	derived[1] = log2p((tiles ? n.row_tile : n.rows ? n.rows : 1) * c->row_bytes / 1024);
}

bool cost_predict(const float *x, size_t n, float *out)
{
	if (!cost_model_trained())
		return false;
	cost_model_predict(x, n, out);
	return true;
}
