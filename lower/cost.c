/* The cost module (lower/cost.h): budgets, and the learned cost model's features and its prediction through the model linked in. */
#include "lower/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Budgets (cost.h). */

/* cost_padding_pays for f, whose leaves lie from depth min to max. */
static bool padding_pays(const HForest *f, uint32_t min, uint32_t max)
{
	/*
	 * Padding shallow leaves of a deep forest grows it exponentially. Allow four times
	 * the nodes, or PAD_BUDGET nodes of trees at most PAD_BUDGET_DEPTH deep whatever the
	 * growth (deeper trees could grow a thousandfold): the array layout (chosen under
	 * the same bounds) stores complete trees anyway, so there padding costs no memory,
	 * and branch-free interleaved walks beat early exits, even where padding grows a
	 * forest to several times its nodes (measured: docs/performance-notes.md, Padding
	 * budget).
	 */
	return min != max && max <= 16 && f->num_features > 0 && cost_nodes_affordable(hir_nodes_padded_to(f, max), f->num_nodes, max);
}

bool cost_padding_pays(const HForest *f)
{
	uint32_t min, max;
	hir_leaf_depth_range(f, &min, &max);
	return padding_pays(f, min, max);
}

bool cost_walks_even(const HForest *f)
{
	uint32_t min, max;
	hir_leaf_depth_range(f, &min, &max);
	return min == max || padding_pays(f, min, max);
}

bool cost_nodes_affordable(uint64_t nodes, uint64_t unpadded, uint32_t depth)
{
	return nodes <= 4 * unpadded + 1024 || (nodes <= PAD_BUDGET && depth <= PAD_BUDGET_DEPTH);
}

bool cost_depth_groups_pay(const HForest *f, const uint32_t *ends, uint32_t n)
{
	uint64_t steps, nodes;
	uint32_t deepest;
	if (!hir_depth_groups_size(f, ends, n, &steps, &nodes, &deepest))
		return false;
	/*
	 * A twentieth of the steps saved, within the nodes cost_nodes_affordable allows the
	 * forest as it is (four times them, or PAD_BUDGET nodes of shallow trees): never a
	 * budget of the trees stored complete, which grows as 2^depth (100 LightGBM trees of
	 * 31 leaves, 12-16 deep, padded to 55 MB of nodes and a compile of many seconds within
 * it; measured: docs/performance-notes.md, Depth groups).
	 * The walks of unpadded trees test for a leaf at every step; padding all trees to
	 * the deepest removes the tests, and depth groups remove them without walking the
	 * shallow trees to the deepest's depth. A group pays even when it saves a small part
	 * of the steps, at every batch size (measured: docs/performance-notes.md, Depth
	 * groups).
	 */
	return 20 * steps <= 19 * (uint64_t)f->num_trees * deepest && cost_nodes_affordable(nodes, f->num_nodes, deepest);
}

/* The widest rows whose keys are i64: 8 cache lines of them; 16 for a row alone. */
#define WHOLE_KEYS_MAX_FEATURES 64
#define LONE_WHOLE_KEYS_MAX_FEATURES 128

/*
 * (From the splits alone, before a layout: rep_lay_out_columns's columns where NaN reads
 * as 0 wherever the splits allow it. Where some block of the schedule keeps NaN from
 * reading as 0 (MModule.nan_as_zero), a layout may take twice the columns counted here,
 * and its keys twice the stack planned.)
 */
uint32_t cost_key_columns(const HForest *f)
{
	bool left = false, right = false, zero = true;
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		const HNode *n = &f->nodes[i];
		if (n->feature == HIR_LEAF)
			continue;
		if (n->missing != HMISSING_NAN || n->compare == HCMP_IN)
			return f->num_features;
		left |= n->default_left;
		right |= !n->default_left;
		zero = zero && n->default_left == hir_zero_goes_left(f, n);
	}
	return left && right && !zero ? 2 * f->num_features : f->num_features;
}

/*
 * Keys need a bounded block that fits on the stack (rep_emit_row_key). A step compares
 * an i64 key with the node's record whole, one instruction fewer than taking the key out
 * of the record, but i64 keys take twice the memory, which wider rows' walks pay for
 * more than they gain: rows of up to 54 features gain by i64 keys, rows of 90 or more
 * lose. A lone row's block (a row at a time: splitSize's few half) takes i64 keys up to
 * LONE_WHOLE_KEYS_MAX_FEATURES, 1 KiB of them; much wider rows lose, as their scan writes
 * 16 KiB a row (measured: docs/performance-notes.md, Keys: i64 or i32).
 */
bool cost_whole_keys_fit(uint32_t columns, int64_t rows)
{
	uint32_t widest = rows == 1 ? LONE_WHOLE_KEYS_MAX_FEATURES : WHOLE_KEYS_MAX_FEATURES;
	return columns <= widest && (uint64_t)rows * columns * sizeof(uint64_t) <= COST_KEYS_MAX_BYTES;
}

bool cost_keys_fit(uint32_t columns, int64_t rows) { return (uint64_t)rows * columns * sizeof(uint32_t) <= COST_KEYS_MAX_BYTES; }

int64_t cost_keys_max_rows(uint32_t columns) { return columns ? COST_KEYS_MAX_BYTES / (columns * (int64_t)sizeof(uint32_t)) : 0; }

/*
 * Walks read keys in tiles (RepLayout.tile_words) for rows of more features than this:
 * half the bytes of i64 keys row by row, and the lines the tops read are the walks'.
 * With fewer, a step that compares an i64 key whole (no shift) is worth more. Since
 * tiles are transposed in registers (transpose_keys), rows of 28 features gain by tiles
 * too; rows of 13 still lose, rows of 16 neither gain nor lose (measured:
 * docs/performance-notes.md, Keys in tiles).
 */
#define TILE_WORDS_MIN_FEATURES 16

bool cost_keys_in_tiles(const HForest *f) { return f->num_features > TILE_WORDS_MIN_FEATURES; }

int64_t cost_tiled_rows(int64_t span) { return (span + TOP_LANES - 1) / TOP_LANES * TOP_LANES; }

bool cost_tiles_fit(uint32_t columns, int64_t span) { return span > 0 && cost_keys_fit(columns, cost_tiled_rows(span)); }

bool cost_tiled_keys_fit(const HForest *f, uint32_t columns, int64_t rows)
{
	return cost_keys_in_tiles(f) && cost_tiles_fit(columns, rows); /* (the keys row by row, of no more rows, fit too) */
}

/*
 * A tree outgrows L1 where its nodes take more than L1_BYTES, a key record (8 bytes) a
 * node as the sparse layout keeps them: a walk's steps past the first levels then find
 * their nodes in L2 and beyond (the corpus's scikit-learn forests grown to purity, of
 * 14,000 to 40,000 nodes a tree; XGBoost's depth 12, of 3,400, is near the bound).
 */
#define L1_BYTES (32u << 10)
#define RECORD_BYTES 8

bool cost_walks_wait_on_memory(const HForest *f)
{
	return f->num_trees && (uint64_t)f->num_nodes / f->num_trees * RECORD_BYTES > L1_BYTES;
}

uint64_t cost_oblivious_bytes(const HForest *f)
{
	uint64_t leaf = f->leaf_type == HTYPE_F64 ? 8 : 4, total = 0;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint32_t depth = hir_tree_depth(f, t);
		total += 8ull * depth + (leaf * f->trees[t].width << (depth < 32 ? depth : 32));
	}
	return total;
}

typedef struct FeatureThreshold {
	int32_t feature;
	double value;
} FeatureThreshold;

static int by_feature_threshold(const void *pa, const void *pb)
{
	const FeatureThreshold *a = pa, *b = pb;
	if (a->feature != b->feature)
		return a->feature < b->feature ? -1 : 1;
	return a->value < b->value ? -1 : a->value > b->value;
}

/* The deepest symmetric trees whose walks read bins: a byte holds a leaf index of up to 8 levels. */
#define BYTE_TOPS_DEPTH 8
/*
 * The deepest trees whose leaves come from byte planes (cost_leaf_planes): a depth-8
 * tree's leaves are 16 tables a plane, 64 pshufb and 60 blends for 32 rows, slower than
 * its keys' walk; depth 7's 8 tables a plane (32 pshufb, 28 blends) are faster
 * (docs/performance-notes.md, Symmetric trees with AVX2: leaves from byte planes).
 */
#define PLANE_DEPTH 7
/* The most outputs of trees with leaf vectors whose walks read bins: the reduce unrolls a plane gather an output. */
#define BYTE_TOPS_OUTPUTS 32

bool cost_leaf_planes(uint32_t depth) { return depth <= PLANE_DEPTH; }

bool cost_byte_tops(const HForest *f, MTops tops)
{
	uint32_t depth = f->num_trees ? hir_tree_depth(f, 0) : 0, run = 0;
	FeatureThreshold *splits;
	uint64_t n = 0;
	bool ok = tops == MTOPS_PAIRS && depth >= 1 && depth <= BYTE_TOPS_DEPTH && f->leaf_type == HTYPE_F32 &&
	          f->threshold_type == HTYPE_F32 && hir_forest_symmetric(f);
	for (uint32_t t = 0; t < f->num_trees && ok; t++)
		ok = hir_tree_depth(f, t) == depth && f->trees[t].width == f->trees[0].width && f->trees[t].width <= BYTE_TOPS_OUTPUTS;
	if (!ok)
		return false;
	splits = xmalloc((size_t)f->num_trees * depth * sizeof *splits);
	for (uint32_t t = 0; t < f->num_trees && ok; t++) { /* a level's splits alike: the leftmost path's */
		const HNode *nodes = hir_tree_nodes(f, t);
		for (uint32_t i = 0; nodes[i].feature != HIR_LEAF && ok; i = nodes[i].left) {
			ok = nodes[i].compare != HCMP_IN;
			splits[n++] = (FeatureThreshold){nodes[i].feature, nodes[i].value};
		}
	}
	qsort(splits, n, sizeof *splits, by_feature_threshold);
	for (uint64_t i = 0; i < n && ok; i++) {
		bool same_feature = i && splits[i].feature == splits[i - 1].feature;
		if (!same_feature || splits[i].value != splits[i - 1].value)
			run = same_feature ? run + 1 : 1;
		ok = run <= 255;
	}
	free(splits);
	return ok;
}

/* The most stack one ifComplete's copy of its rows with NaN read as 0 may take (RepLayout.nan_reads_zero): 256 rows of 64 doubles. */
#define ZERO_ROWS_MAX_BYTES (128 * 1024)

bool cost_zero_rows_fit(const HForest *f, int64_t rows, size_t row_size)
{
	return (uint64_t)rows * f->num_features * row_size <= ZERO_ROWS_MAX_BYTES;
}


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

/* Whether every leaf of f has a cover (the training rows that reached it), which then weighs it. */
static bool leaves_covered(const HForest *f)
{
	bool covered = true;
	for (uint64_t i = 0; i < f->num_nodes && covered; i++)
		covered = f->nodes[i].feature != HIR_LEAF || f->nodes[i].cover > 0;
	return covered;
}

/*
 * Walk tree t from its root: each leaf's depth and weight (its cover where `covered`, else
 * 1) to leaf(ctx, ...), and (unless NULL) the splits at each depth below COST_DEPTHS into
 * splits_at. *stack (*cap entries) is the walk's, grown as needed.
 */
static void tree_leaves(const HForest *f, uint32_t t, bool covered, uint32_t **stack, size_t *cap, uint64_t *splits_at,
                        void (*leaf)(void *ctx, uint32_t depth, double w), void *ctx)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t top = 0;
	GROW(*stack, 2 * (size_t)f->trees[t].num_nodes + 2, *cap);
	(*stack)[top++] = 0; /* node */
	(*stack)[top++] = 0; /* its depth */
	while (top) {
		uint32_t depth = (*stack)[--top], id = (*stack)[--top];
		if (nodes[id].feature == HIR_LEAF) {
			leaf(ctx, depth, covered ? nodes[id].cover : 1);
			continue;
		}
		if (splits_at && depth < COST_DEPTHS)
			splits_at[depth]++;
		(*stack)[top++] = nodes[id].left;
		(*stack)[top++] = depth + 1;
		(*stack)[top++] = nodes[id].right;
		(*stack)[top++] = depth + 1;
	}
}

typedef struct Moments {
	double sum, squares, weight;
} Moments;

static void add_moments(void *ctx, uint32_t depth, double w)
{
	Moments *m = ctx;
	m->sum += w * depth;
	m->squares += w * depth * depth;
	m->weight += w;
}

/* The leaves' weighted depths over every tree into *mean and *sd, and (unless NULL) the splits at each depth below COST_DEPTHS into splits_at. */
static void walk_depths(const HForest *f, double *mean, double *sd, uint64_t *splits_at)
{
	Moments m = {0, 0, 0};
	uint32_t *stack = NULL;
	size_t cap = 0;
	bool covered = leaves_covered(f);
	for (uint32_t t = 0; t < f->num_trees; t++)
		tree_leaves(f, t, covered, &stack, &cap, splits_at, add_moments, &m);
	free(stack);
	*mean = m.weight > 0 ? m.sum / m.weight : 0;
	*sd = m.weight > 0 && m.squares / m.weight > *mean * *mean ? sqrt(m.squares / m.weight - *mean * *mean) : 0;
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
	c->oblivious = f->num_trees && hir_forest_symmetric(f);
	c->walks_even = f->num_trees && cost_walks_even(f);
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

/*
 * Whether walks of `lanes` rows side by side, past `peel` straight steps, finish together
 * (one loop stepping every lane until all are on their leaves) rather than each lane in a
 * loop of its own (lower/lower_walks.c). A lane's own loop is a chain: each step waits
 * for its record's load and its key's (about CYCLES_CHAIN_STEP), and its exit, after a
 * different number of steps each time, is mispredicted (CYCLES_EXIT); lanes together
 * take their steps at the rate a core issues them (CYCLES_LANE_STEP a lane, its leaf test
 * included) for as many rounds as the deepest lane needs, and pay one exit. Each tree's
 * leaves, weighted by their cover, give F(d) = P(D <= d) for a lane's walk of D steps,
 * and F(d)^lanes for the deepest of the lanes': the steps past peel are the sums past it
 * of 1 - F(d) (a lane's) and 1 - F(d)^lanes (the rounds together).
 *
 * Together is taken where it costs under three quarters of the lanes' own loops. On
 * LightGBM's 255 leaves on covtype's 54 features (a walk's mean 11.5 steps, a fifth past
 * its 16 straight ones) it ran 1.25-1.58x faster; near the bound (lgb-leaves255 and
 * xgb-lossguide, a walk in 46 past 13 steps; scikit-learn's forests grown to purity,
 * whose steps wait on L2 and L3, which the model does not see) it ran as fast or slower
 * (docs/performance-notes.md, Rows' walks finished together). The schedule asks it
 * again at 3 straight steps fewer, which pay where walks finish together
 * (lower/hir_choose_schedule.c, rows_peel).
 */
#define CYCLES_CHAIN_STEP 13
#define CYCLES_EXIT 20
#define CYCLES_LANE_STEP 2

typedef struct DepthWeights {
	double *at; /* weight of the leaves at each depth, to `deepest` */
	uint32_t deepest;
	double total;
} DepthWeights;

static void add_depth_weight(void *ctx, uint32_t depth, double w)
{
	DepthWeights *d = ctx;
	d->at[depth] += w;
	d->total += w;
	d->deepest = depth > d->deepest ? depth : d->deepest;
}

bool cost_finish_together(const HForest *f, uint32_t peel, uint32_t lanes)
{
	double alone = 0, together = 0;
	uint32_t *stack = NULL;
	size_t cap = 0, weights_cap = 0;
	bool covered = leaves_covered(f);
	DepthWeights d = {NULL, 0, 0};
	for (uint32_t t = 0; t < f->num_trees; t++) {
		double below = 0; /* P(D <= depth) */
		GROW(d.at, (size_t)f->trees[t].num_nodes + 1, weights_cap);
		memset(d.at, 0, ((size_t)f->trees[t].num_nodes + 1) * sizeof *d.at);
		d.deepest = 0;
		d.total = 0;
		tree_leaves(f, t, covered, &stack, &cap, NULL, add_depth_weight, &d);
		for (uint32_t depth = 0; depth <= d.deepest && d.total > 0; depth++) {
			double deeper, deepest; /* P(D > depth), P(max D > depth) */
			below += d.at[depth] / d.total;
			if (depth < peel)
				continue;
			deeper = below < 1 ? 1 - below : 0;
			deepest = below < 1 ? 1 - pow(below, lanes) : 0;
			alone += lanes * deeper * CYCLES_CHAIN_STEP + (depth == peel ? lanes * deeper * CYCLES_EXIT : 0);
			together += lanes * deepest * CYCLES_LANE_STEP + (depth == peel ? deepest * CYCLES_EXIT : 0);
		}
	}
	free(stack);
	free(d.at);
	return together * 4 < alone * 3;
}

/*
 * cost_pad_rows. A tile of rows side by side costs as many rows walked one at a time as
 * its walks gain by their lanes. Node by node: 6-8 where the walks are even (16 steps
 * in parallel chains against one chain of dependent loads), 8-12 where they are not (a
 * tile's lanes step on to the deepest's leaf, a lone row stops at its own); the higher
 * ends taken, as a tile one row short of paying costs more than rows one short. By leaf
 * masks: 2-3 against rows a time in the many rows' code, 4-6 against lone rows' code (a
 * row's walk of a tree node by node against 16 rows' splits in one vector); where the
 * splits test category sets, 2 (their lone rows wait on a load a step). Past L2 (nodes
 * as the sparse layout keeps them) a lone row's steps wait on L2 and L3 as a tile's do,
 * 11-15: never. Measured on 25 forests trained as the corpus trains them, batches of 1
 * to 40 rows (docs/performance-notes.md, Padded tiles). Symmetric trees of one output,
 * whose tops take every level (at most 8) for 16 rows at once with no walk, 2-3,
 * whatever their bytes; deeper ones, stepping on past the tops, 5. Not those of leaf
 * vectors: a tile reads every class's leaves of every tree, a lone row one vector a
 * tree, and a call of 3-12 rows ran 1.6-6 times slower padded (CatBoost models of 10
 * classes: docs/performance-notes.md, Padded tiles of symmetric trees).
 */
#define PAD_ROWS_EVEN 8
#define PAD_ROWS_UNEVEN 11
#define PAD_ROWS_MASKS 3
#define PAD_ROWS_MASKS_LONE 5
#define PAD_ROWS_SETS 2
#define PAD_ROWS_LEVELS 3
#define PAD_ROWS_LEVELS_DEEP 5
#define PAD_LEVELS_TOPS 8
#define PAD_NODE_BYTES 16
#define PAD_L2_BYTES (2u << 20)

uint32_t cost_pad_rows(const HForest *f, bool masks, bool levels, bool lone)
{
	uint32_t shallowest, deepest;
	if (levels && f->num_outputs == 1) {
		hir_leaf_depth_range(f, &shallowest, &deepest);
		return deepest <= PAD_LEVELS_TOPS ? PAD_ROWS_LEVELS : PAD_ROWS_LEVELS_DEEP;
	}
	if ((uint64_t)f->num_nodes * PAD_NODE_BYTES > PAD_L2_BYTES)
		return TOP_LANES;
	if (masks)
		return f->num_sets ? PAD_ROWS_SETS : lone ? PAD_ROWS_MASKS_LONE : PAD_ROWS_MASKS;
	return cost_walks_even(f) ? PAD_ROWS_EVEN : PAD_ROWS_UNEVEN;
}
