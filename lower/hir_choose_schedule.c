/*
 * The schedules grove writes itself, with the schedule language's directives (so
 * `grove dump --level hir` shows them): a small family described by HScheduleKnobs,
 * from which the heuristic picks one without timing anything, the cost model may pick
 * a better one (lower/cost_search.c: grove compile --learned), and `grove tune` searches
 * by timing candidates.
 *
 * Every row walks every tree, R rows at a time with their walks interleaved, and where
 * rows go one at a time (a single-row prediction, the last rows of a batch) K trees of
 * the row interleaved instead:
 *
 *   tile(batch, b0, b1, R); tile(tree, t0, t1, K)
 *   parallel(b0); interleave(b1); interleave(t1)
 *
 * With a tree tile (the heuristic's choice for all but the smallest forests: a tile
 * of T trees stays in the L1 and L2 caches while a tile of B rows walks it, and large
 * forests are streamed from L3 or memory once per tile of rows), tiles of B rows walk
 * tiles of T trees; the rows' margins live in a B-row buffer on the stack for the
 * tile's whole life:
 *
 *   tile(batch, b0, b1, B); tile(b1, b2, b3, R)
 *   tile(tree, t0, t1, T); tile(t1, t2, t3, K)
 *   reorder(b0, t0, b2, b3, t2, t3)
 *   parallel(b0); interleave(b3); interleave(t3)
 *
 * Either way the parallel loop may instead be the outermost tree loop (one prediction
 * split across cores by trees, the margins privatised per thread), or none; and the
 * walk loop may be unrolled to the forest's depth (unrollWalk) or get its first steps
 * peeled (peelWalk). A representation may be named (representation(r)); the code
 * representation's walks need their trees known, so every tree loop is specialized,
 * and trees are not interleaved (each would copy every tree's code, and branches do not
 * overlap the way loads do); rows interleaved walk trees of few leaves in vectors, with
 * no branch (lower/rep_code.c: HIR_CODE_LANES of them, where lanes_pay, each tile of rows
 * copied column by column, cache(b0); grove tune tries them for any forest; where the
 * CPU takes 16 rows' tops, those past HIR_CODE_SPLITS walk the sparse layout by leaf
 * masks instead, masks_pay). Trees may be
 * tiled (tileTrees, walked by the tiled representation). A representation that walks blocks of trees (bitvector)
 * gets blocks of 16 interleaved trees, a row at a time.
 *
 * For GPUs, SilvanForge's template schedule and its pruning heuristic
 * (lower/hir_gpu_schedule.c): the heuristic's first candidate is the default, `grove
 * tune --target` ranks the others.
 */
#include "lower/cost.h"
#include "lower/lower.h"
#include "lower/rep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Bytes of nodes a tile of trees takes: at least TILE_BYTES, and half the row tile's
 * rows where those are larger (a tile of trees reads its rows again, so wide rows want
 * more trees per tile). Tiles of rows walking tiles of trees beat every row walking
 * every tree on the real models, even for models that fit in L2; the smallest tiles of
 * trees did best for narrow rows, larger ones for rows of 90 features (measured:
 * docs/performance-notes.md, Tiles of trees). A tile holds at least the trees a row
 * going alone walks side by side (--interleave-trees, 8), and a whole number of groups
 * of them, the rest of a tile walking one tree at a time, which lone rows pay for. The
 * rows counted are float rows, those of predict, even for forests that also have
 * predict_f64 (LightGBM's double thresholds): sized by double rows, LightGBM models got
 * tiles of 16 trees, against 8 by float rows, which cost float rows far more than it
 * gained double rows.
 */
#define TILE_BYTES (16u << 10)
/*
 * Rows of a row tile: ROW_TILE, halved (down to MIN_ROW_TILE) while their features take
 * more than ROW_TILE_BYTES, so that a row tile stays in L2 while tiles of trees walk it,
 * or while their keys would not fit the stack (cost_keys_fit: rows' keys less one
 * double them, and a block without keys walks floats: docs/performance-notes.md, Keys
 * less one in columns of their own);
 * wide rows walk best in tiles of fewer rows. Rows of HIR_CACHE_ROW_BYTES or more, which
 * the schedule copies (cache(b0)), take MIN_ROW_TILE rows, a copy about the L1's size,
 * as fast as `grove tune`'s best (measured: docs/performance-notes.md, Row tiles).
 */
#define ROW_TILE 256
#define MIN_ROW_TILE 16
/*
 * Forests whose trees take more than L2_BYTES come from L3 again for each tile of rows:
 * tiles of BIG_ROW_TILE rows, where their keys fit as i64, walk each tile of trees for
 * four times as many rows (a parallel loop's blocks shrink back where the batch would
 * leave threads idle: lower_loop). Where the walks read keys in tiles
 * (cost_tiled_keys_fit) and those of half as many rows fit, tiles of that many (measured:
 * docs/performance-notes.md, Big row tiles), but not where that would cost the i64 keys
 * a tile of ROW_TILE rows has: a step that compares its key whole paid more than twice
 * the rows (measured: docs/performance-notes.md, Keys less one in columns of their own).
 */
#define BIG_ROW_TILE 1024
#define L2_BYTES (2u << 20)
/*
 * Such forests, walked by tiles of at least ROW_TILE rows, prefetch each tile of trees a
 * tile ahead (cache_trees: cache(t0); lower/mir_to_lir.c: prefetch_next_trees): a
 * tile's rows reach nearly every line of its trees, whose first walks would otherwise
 * wait on L3 a line at a time; the gain is largest when another tenant loads memory.
 * Forests that fit L2 lose by it, and so do tiles of too few rows for their trees, which
 * reach a part of each: a tile prefetches only where it has CACHE_ROWS_A_LINE rows or
 * more for each line of a tree's nodes (NODE_BYTES each), which deep trees (XGBoost's
 * depth 12, forests grown to purity) have not (measured: docs/performance-notes.md,
 * Prefetching the next tile of trees).
 */
#define CACHE_ROWS_A_LINE 4
#define NODE_BYTES 8
/* Bytes a lone row's walk reads a node of uneven trees by, as the sparse layout keeps them: a record and a leaf's value. */
#define SPARSE_NODE_BYTES 16
#define ROW_TILE_BYTES (192u << 10)
/*
 * Bytes of margins a row tile's buffer may take on a thread's stack: 256 rows of 64 double
 * margins, or of 128 float ones. Forests of more margins walk tiles of trees in row tiles
 * of fewer rows, down to MIN_ROW_TILE; beyond, every tree a row at a time. (Walking all
 * their trees for each block of rows reads them from L3 a block at a time: at 16 margins a
 * row, syn-letters' 26 classes walked all 2600 trees row by row, far slower than in tiles
 * of trees; xgb-100class's 10,000 trees, 100 classes, in blocks of 16 rows, slower than
 * tiles of 256 rows: measured: docs/performance-notes.md, Margins a row tile holds.)
 */
#define TILE_MARGIN_BYTES (128u << 10)
/*
 * A row tile keeps its margins output by output, and the transform of more than this
 * many a row runs a row at a time, strided (softmax: its exponentials one by one): the
 * heuristic tiles such forests only where their trees outgrow L2 (xgb-1000class's 1000
 * small trees ran 3× slower in tiles of 32 rows than 16 rows at a time: measured:
 * docs/performance-notes.md, Margins a row tile holds).
 */
#define WIDE_MARGINS 64

const char *const hir_parallel_names[] = {"rows", "trees", "none"};

/*
 * Symmetric trees (the oblivious layout's) walk one tree at a time, 16 rows taking all
 * its levels as a top (a vector compare a level): the rows of a vector (fewer in a last
 * one, padded) take a tree in a few instructions more than one row's walk would. Since
 * their leaves are permuted from whole tables (every line of a tree's leaves read for 16
 * rows), tiles of trees pay where they keep a tile in L1: a tile takes the trees whose
 * levels and leaves fill it (trees_a_tile), not complete trees' nodes (a depth-8 tree
 * takes 1 KiB of float leaves, not 4 KiB of nodes). Tiled, the rows too few for a padded
 * tile go alone apart, every tree in turn untiled (few_trees 1): a lone row's walks of a
 * tile's trees were slower (measured: docs/performance-notes.md, Symmetric trees of
 * depth 7 and 8, and Symmetric trees' tiles in L1). With AVX2, where cost_byte_tops holds,
 * 32 rows take a tree from their bins (RepLayout.byte_tops), in half the time of 16 rows'
 * tops (measured: docs/performance-notes.md, Symmetric trees with AVX2: leaves from byte
 * planes).
 */

/* Bytes tree t takes in memory, as the array layout stores it (a complete tree, 8 bytes a slot). */
static uint64_t tree_bytes(const HForest *f, uint32_t t)
{
	uint32_t depth = hir_tree_depth(f, t);
	return depth > 24 ? (uint64_t)f->trees[t].num_nodes * 12 : 8 * ((2ull << depth) - 1);
}

/*
 * Bytes of the leaf vectors of f's trees of several outputs (CatBoost's and scikit-learn's
 * classifiers), which lie apart from the nodes and which a tile of trees reads as well: a
 * tile counts them beside its nodes (measured: docs/performance-notes.md, Tiles of trees
 * with leaf vectors).
 */
static uint64_t leaf_vector_bytes(const HForest *f)
{
	uint64_t bytes = 0;
	for (uint32_t t = 0; t < f->num_trees; t++)
		if (f->trees[t].width > 1)
			bytes += (uint64_t)(f->trees[t].num_nodes + 1) / 2 * f->trees[t].width * (f->leaf_type == HTYPE_F64 ? 8 : 4);
	return bytes;
}

/*
 * Tiles of the code schedule the heuristic writes: each tree's code runs over a tile of
 * rows while it is in the instruction cache, and each tile of trees is a function of its
 * own (lower_specialized) of at most CODE_TILE_SPLITS splits, CODE_TREE_TILE trees.
 * LLVM's time grows faster than a function's code: more trees a function compile
 * longer and predict no faster (measured: docs/performance-notes.md, Code tiles).
 */
#define CODE_ROW_TILE 256
#define CODE_TREE_TILE 8
#define CODE_TILE_SPLITS HIR_CODE_SPLITS

/* Trees per tile of the code schedule: the most, up to CODE_TREE_TILE, whose every tile keeps to CODE_TILE_SPLITS; 0: no tiles. */
static uint32_t code_tree_tile(const HForest *f)
{
	uint32_t k = CODE_TREE_TILE;
	if (f->num_trees < 2 || (f->num_trees <= k && hir_trees_splits(f, 0, f->num_trees) <= CODE_TILE_SPLITS))
		return 0;
	for (bool fits = false; k > 1 && !fits; k -= !fits) {
		fits = true;
		for (uint32_t first = 0; first < f->num_trees && fits; first += k)
			fits = hir_trees_splits(f, first, first + k) <= CODE_TILE_SPLITS;
	}
	return k;
}

/* Whether some tree of f splits (a walk takes a step). */
static bool some_split(const HForest *f)
{
	uint32_t shallowest, deepest;
	hir_leaf_depth_range(f, &shallowest, &deepest);
	return deepest > 0;
}

/* The knob value naming the first representation of trait `trait`. */
static uint8_t knob_of(unsigned trait)
{
	uint8_t r = 0;
	while (lower_representation_name(r) && !(lower_representation_traits(r) & trait))
		r++;
	return (uint8_t)(r + 1);
}

/* The knob value naming representation `name`. */
static uint8_t knob_named(const char *name)
{
	return (uint8_t)(lower_representation_index(name) + 1);
}

/* Bytes of one row's margins. */
static uint64_t row_margin_bytes(const HForest *f)
{
	return (uint64_t)hir_num_margins(f) * (f->leaf_type == HTYPE_F64 ? sizeof(double) : sizeof(float));
}

/* Whether k's schedule tiles the trees (else rows walk every tree). */
static bool tiles_trees(const HForest *f, const HScheduleKnobs *k)
{
	uint64_t rows = k->row_tile > MIN_ROW_TILE ? k->row_tile : MIN_ROW_TILE;
	return k->tree_tile != 0 && k->tree_tile < f->num_trees && rows * row_margin_bytes(f) <= TILE_MARGIN_BYTES;
}

/*
 * Whether k's symmetric trees read bins in runs of 32 rows and load their leaves one by
 * one (no planes: cost_leaf_planes): a padded run of 32 and its bins cost calls of up to
 * 16 rows more than a tile of 16 rows' tops of their keys, which splitSize's few half then
 * walks (3 to 16 rows 1.4 to 1.5 times faster; measured: docs/performance-notes.md,
 * Symmetric trees with AVX2: depth 8 from bins).
 */
static bool few_rows_side_by_side(const HForest *f, const HScheduleKnobs *k)
{
	return k->representation == knob_of(LREP_LEVELS) && k->rows == BYTE_TOP_LANES && f->num_trees &&
	       !cost_leaf_planes(hir_tree_depth(f, 0));
}

/* Whether the heuristic compiles f into code: small forests, and forests with category sets up to a bound (lower.h). */
static bool code_pays(const HForest *f)
{
	uint64_t splits = (f->num_nodes - f->num_trees) / 2;
	return splits <= HIR_CODE_SPLITS || (f->num_sets && splits <= HIR_CODE_CATEGORY_SPLITS);
}

/* Whether every tree of f has at most `most` leaves, of one output, and some is deeper than a complete tree of as many. */
static bool few_leaves_grown_deep(const HForest *f, uint32_t most)
{
	uint32_t deep = 0;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint32_t leaves = (f->trees[t].num_nodes + 1) / 2, complete = 0;
		if (leaves > most || f->trees[t].width != 1)
			return false;
		while ((1u << complete) < leaves)
			complete++;
		deep += hir_tree_depth(f, t) > complete;
	}
	return deep > 0;
}

/*
 * Whether the heuristic walks f's rows side by side in vectors, as code (rep_code.c):
 * trees of at most CODE_LANES_LEAVES leaves of one output, some deeper than a complete
 * tree of as many (grown leaf-wise, as LightGBM's defaults and XGBoost's lossguide
 * grow them), at most HIR_CODE_LANES_SPLITS splits in all, or HIR_CODE_CATEGORY_SPLITS
 * with category sets (compiled into code anyway). Such a walk pays every split of the
 * tree, for 8 rows at once, with no branch to mispredict: it beats code a row at a time
 * on unbalanced trees, and loses to arrays on complete ones, whose walks side by side
 * take few steps each (docs/representations.md). Batches of fewer rows than a vector
 * holds walk code a row at a time instead (hir_apply_knobs), where the forest is tiled:
 * a vector costs about as much for one row as for 8, code a row at a time about an
 * eighth of that a row on such trees (batches of 7 rows run about as fast either way).
 */
#define CODE_LANES_LEAVES 32
static bool lanes_pay(const HForest *f)
{
	return f->num_nodes - f->num_trees <= 2ull * (f->num_sets ? HIR_CODE_CATEGORY_SPLITS : HIR_CODE_LANES_SPLITS) &&
	       few_leaves_grown_deep(f, CODE_LANES_LEAVES);
}

/*
 * Whether the heuristic leaves f to the sparse layout's leaf masks (lower/rep_masks.c)
 * rather than code: where the CPU takes 16 rows' keys in vectors (tops), forests past
 * HIR_CODE_SPLITS whose every tree has at most LOWER_MASK_LEAVES leaves of one output,
 * deep ones among them (the forests lanes_pay takes, and those of category sets of such
 * trees, where no feature is both a category and a number: their rows' keys hold the
 * category, RepLayout.category_keys). Masks walk them about as fast as code in vectors,
 * in a loop over each tree's splits in memory whose compile does not grow with the
 * splits, where code's does; lone rows walk node by node, slower than code a row at a
 * time (docs/representations.md: Leaf masks; docs/performance-notes.md, Code or array).
 */
static bool masks_pay(const HForest *f, MTops tops)
{
	return tops && (f->num_nodes - f->num_trees) / 2 > HIR_CODE_SPLITS && (!f->num_sets || hir_categories_alone(f)) &&
	       few_leaves_grown_deep(f, LOWER_MASK_LEAVES);
}

/* Whether k's code schedule specializes its tree loops: at most HIR_MAX_SPECIALIZE tiles (or trees, untiled). */
static bool code_fits(const HForest *f, const HScheduleKnobs *k)
{
	return (tiles_trees(f, k) ? (f->num_trees + k->tree_tile - 1) / k->tree_tile : f->num_trees) <= HIR_MAX_SPECIALIZE;
}

/* The step of the outermost tree loop of k's schedule: its tree tile, or the trees a lone row walks side by side. */
static uint32_t tree_step(const HForest *f, const HScheduleKnobs *k)
{
	return tiles_trees(f, k) ? k->tree_tile : f->num_trees < 2 || k->trees < 1 ? 1 : k->trees;
}

/* Rows an iteration of the outermost row loop of k's schedule covers. */
static uint32_t outer_rows(const HForest *f, const HScheduleKnobs *k)
{
	unsigned traits = k->representation ? lower_representation_traits(k->representation - 1u) : 0;
	return tiles_trees(f, k) ? k->row_tile : traits & LREP_BLOCKS ? 1 : k->rows;
}

/* Bytes of a row of f of values of value_size bytes (a row of none counts as one value). */
static uint64_t row_bytes_of(const HForest *f, size_t value_size)
{
	return (uint64_t)(f->num_features ? f->num_features : 1) * value_size;
}

/* Bytes of f's widest rows: the doubles of predict_f64 where thresholds are double, else floats. */
static uint64_t widest_row_bytes(const HForest *f)
{
	return row_bytes_of(f, f->threshold_type == HTYPE_F64 ? sizeof(double) : sizeof(float));
}

/*
 * A batch of fewer rows than are interleaved has only lone rows, which walk trees side
 * by side, and walks them best a row at a time: each row's keys at a fixed place on the
 * stack, its margin in a register, FEW_TREES_MIN to FEW_TREES_MAX trees side by side
 * (the most that stay in x86's registers: 10 indices, the trees' base, two
 * temporaries and the prefetches'), as many as leave the fewest groups (the last
 * group walks as many lanes as the others); 10 trees side by side beat 8, and both beat
 * grove's tiles, for one row. Each row walks all the trees: forests larger than L2 come
 * from L3 again for each row, where tiles of rows walking tiles of trees take them once,
 * so only single rows go apart: already batches of 3 rows lose by it (measured:
 * docs/performance-notes.md, Lone rows). Forests grown to purity, whose steps wait on
 * L2 and L3 (`deep`: walk_peel's deepest), walk FEW_DEEP_MIN to FEW_DEEP_MAX trees side
 * by side instead: more misses in flight outweigh the spills (docs/performance-notes.md,
 * Lone rows of forests grown to purity).
 */
#define FEW_TREES_MIN 8
#define FEW_TREES_MAX 10
#define FEW_DEEP_MIN 14
#define FEW_DEEP_MAX 16

static uint8_t few_trees(const HForest *f, bool deep)
{
	uint32_t least = deep ? FEW_DEEP_MIN : FEW_TREES_MIN, most = deep ? FEW_DEEP_MAX : FEW_TREES_MAX, best = least;
	for (uint32_t n = least + 1; n <= most; n++)
		if ((f->num_trees + n - 1) / n < (f->num_trees + best - 1) / best)
			best = n;
	return (uint8_t)best;
}

/*
 * Steps a walk takes straight (peelWalk) where f's leaves have several depths and no
 * padding evens them (deep trees: a random forest grown in full, LightGBM's of many
 * leaves), from the mean depth at which walks end, each leaf weighted by the training
 * rows that reached it (its cover, where every leaf has one). A walk ending sooner
 * stays on its leaf for the steps left; one going deeper loops on, and the loop's exit,
 * taken after a different number of steps each time, is mispredicted. A straight step
 * that stays on a leaf costs little next to that exit (nothing but the step itself where
 * leaves stay, the sparse layout's key walks): boosted trees of means up to about 6
 * (LightGBM's default 31 leaves) take the mean and 5 steps, which pays where 16 rows
 * walk 8 trees each side by side and costs lone rows a little (they walk fewer walks
 * at once, so each straight step weighs more). Deeper means take 13 (255 leaves,
 * LightGBM's num_leaves=255 and XGBoost's lossguide: 11 and 15 were slower, batches of
 * 64 and 2000 rows alike), lone rows at most 11 (13 was slower for them), and the
 * deepest (forests grown to purity, whose trees are far larger than the caches) the
 * mean and 3 (the mean and 1 was slower on scikit-learn's three forests of the corpus,
 * and 5 on its classifier: docs/performance-notes.md, Straight steps of forests grown to
 * purity), lone rows too (a step's miss costs more than the loop's exit: a peel past
 * PEEL_DEEP is this rule's, uncapped for lone rows). Forests with category sets take no
 * straight steps: each pays a category test beside its compare, and a leaf's too, where
 * loops stop at leaves.
 */
#define PEEL_PAST_SHALLOW 5
#define PEEL_PAST_DEEP 3
#define PEEL_DEEP 13
#define PEEL_LONE 11

static uint8_t walk_peel(const HForest *f)
{
	double mean, sd, peel;
	cost_leaf_depths(f, &mean, &sd);
	if (mean <= 0 || f->num_sets)
		return 0;
	peel = mean + PEEL_PAST_SHALLOW < PEEL_DEEP ? mean + PEEL_PAST_SHALLOW
	       : mean + PEEL_PAST_DEEP > PEEL_DEEP ? mean + PEEL_PAST_DEEP : PEEL_DEEP;
	return (uint8_t)(peel < HIR_MAX_WALK_STEPS ? peel : HIR_MAX_WALK_STEPS);
}

/*
 * The straight steps of `rows` rows side by side: the knob's, or PEEL_TOGETHER_LESS fewer
 * where their walks finish together after those (cost_finish_together): there the steps
 * past the straight ones come in blocks, each taken only while some row still walks
 * (lower/lower_walks.c, finish_together), so that a group whose rows all ended early
 * stops, and a step in a block costs little more than a straight one: 3 fewer were
 * 1-15% faster on LightGBM's and XGBoost's models of 255 leaves. Not where the trees
 * outgrow L2 (forests grown to purity), whose steps wait on L2 and L3, which the cost
 * does not see: there scikit-learn's two regressors ran 2-8% slower
 * (docs/performance-notes.md, Rows' walks finished together).
 */
#define PEEL_TOGETHER_LESS 3

static uint8_t rows_peel(const HForest *f, const HScheduleKnobs *k, uint32_t rows)
{
	if (rows < 2 || k->peel <= PEEL_TOGETHER_LESS || (uint64_t)f->num_nodes * NODE_BYTES > L2_BYTES ||
	    !cost_finish_together(f, k->peel - PEEL_TOGETHER_LESS, rows))
		return k->peel;
	return k->peel - PEEL_TOGETHER_LESS;
}

bool hir_rows_cache_fits(const HForest *f, const HScheduleKnobs *k)
{
	return outer_rows(f, k) > 1 && outer_rows(f, k) * widest_row_bytes(f) <= LOWER_ROW_CACHE_BYTES;
}

bool hir_trees_cache_applies(const HForest *f, const HScheduleKnobs *k)
{
	unsigned traits = k->representation ? lower_representation_traits(k->representation - 1u) : 0;
	return tiles_trees(f, k) && !(traits & LREP_CODE);
}

/* Trees a tile of trees takes for tiles of row_tile rows, the forest's trees taking `bytes`. */
static uint64_t trees_a_tile(const HForest *f, uint64_t bytes, uint32_t row_tile)
{
	uint64_t rows_bytes = (uint64_t)row_tile * row_bytes_of(f, sizeof(float));
	uint64_t tile = rows_bytes / 2 > TILE_BYTES ? rows_bytes / 2 : TILE_BYTES;
	return f->num_trees ? tile / (bytes / f->num_trees + 1) : 0;
}

void hir_choose_knobs(const HForest *f, uint32_t tree_tile, uint32_t rows, uint32_t trees, const char *named,
                      MTops tops, HScheduleKnobs *k)
{
	unsigned traits = lower_representation_named_traits(named);
	bool pick = !named, code = traits & LREP_CODE, levels = traits & LREP_LEVELS;
	bool masks = pick && rows >= TOP_LANES && masks_pay(f, tops);
	uint64_t total = 0;
	uint64_t row_bytes = widest_row_bytes(f); /* the widest rows a walk reads */
	bool auto_tile = tree_tile == HIR_TILE_AUTO;
	bool copied = row_bytes >= HIR_CACHE_ROW_BYTES; /* rows the schedule copies (cache(b0)) */
	uint32_t row_tile = copied ? MIN_ROW_TILE : ROW_TILE, columns = cost_key_columns(f);
	while (row_tile > MIN_ROW_TILE && (row_tile * row_bytes > ROW_TILE_BYTES || !cost_keys_fit(columns, row_tile)))
		row_tile /= 2; /* (a tile whose keys do not fit the stack walks floats) */
	for (uint32_t t = 0; t < f->num_trees; t++)
		total += tree_bytes(f, t);
	if (!copied && total > L2_BYTES && cost_whole_keys_fit(columns, BIG_ROW_TILE))
		row_tile = BIG_ROW_TILE;
	else if (!copied && total > L2_BYTES && cost_tiled_keys_fit(f, columns, BIG_ROW_TILE / 2) &&
	         (cost_whole_keys_fit(columns, BIG_ROW_TILE / 2) || !cost_whole_keys_fit(columns, row_tile)))
		row_tile = BIG_ROW_TILE / 2;
	while (row_tile > MIN_ROW_TILE && row_tile * row_margin_bytes(f) > TILE_MARGIN_BYTES)
		row_tile /= 2;
	if (tree_tile == HIR_TILE_AUTO) {
		uint64_t per_tile = trees_a_tile(f, total + leaf_vector_bytes(f), row_tile);
		if (trees > 1) /* a row going alone walks `trees` trees of its tile side by side: whole groups of them */
			per_tile = (per_tile + trees / 2) / trees * trees;
		if (per_tile < trees)
			per_tile = trees;
		tree_tile = per_tile < 1 ? 1 : per_tile > MIR_WALK_LANES ? MIR_WALK_LANES : (uint32_t)per_tile;
		if (f->num_trees < 2 || tree_tile >= f->num_trees || (hir_num_margins(f) > WIDE_MARGINS && total <= L2_BYTES))
			tree_tile = 0;
	}
	*k = (HScheduleKnobs){.rows = rows, .trees = trees, .tree_tile = tree_tile, .row_tile = row_tile,
	                      .parallel = HPARALLEL_ROWS};
	HScheduleKnobs as_code = {.rows = 1, .trees = 1, .tree_tile = code_tree_tile(f), .row_tile = CODE_ROW_TILE,
	                          .parallel = HPARALLEL_ROWS, .representation = code ? knob_named(named) : knob_of(LREP_CODE)};
	bool lanes = pick && rows > 1 && !masks && lanes_pay(f);
	if (f->num_trees && (code || (pick && !masks && (code_pays(f) || lanes) && code_fits(f, &as_code)))) {
		*k = as_code;
		if (lanes) { /* rows side by side in vectors, each a column of a copy of its tile's rows (lower_copy_rows) */
			k->rows = HIR_CODE_LANES;
			while (k->row_tile > MIN_ROW_TILE && !hir_rows_cache_fits(f, k))
				k->row_tile /= 2;
			k->cache_rows = hir_rows_cache_fits(f, k);
			k->few_trees = (uint8_t)k->tree_tile;
			k->few_rows = HIR_CODE_LANES;
		}
	} else if (f->num_trees && (levels || (pick && hir_forest_symmetric(f) && cost_walks_even(f) && some_split(f)))) {
		/* symmetric trees (CatBoost's): a split per level, the walks unrolled to the depth and no walk's loads wait */
		k->representation = knob_of(LREP_LEVELS);
		k->unroll = 1;
		k->trees = 1;
		if (rows == TOP_LANES && cost_byte_tops(f, tops)) /* their walks read bins (RepLayout.byte_tops) */
			k->rows = BYTE_TOP_LANES;
		if (auto_tile && k->tree_tile) { /* of the bytes the layout takes; its trees walk one after another, not side by side */
			uint64_t per_tile = trees_a_tile(f, cost_oblivious_bytes(f), row_tile);
			per_tile = per_tile < trees ? trees : per_tile; /* (no fewer than a lone row's trees side by side) */
			k->tree_tile = per_tile >= f->num_trees ? 0 : (uint32_t)per_tile;
		}
		uint32_t padded = cost_pad_rows(f, false, true, true);
		if (pick && k->tree_tile && rows > 1 && padded < TOP_LANES) {
			k->few_trees = 1; /* lone rows below a padded tile's rows walk every tree in turn, untiled */
			k->few_rows = (uint8_t)(few_rows_side_by_side(f, k) ? TOP_LANES + 1 : padded);
		}
	} else if (f->num_trees > 1) { /* depth groups where a few deep trees would make padding all of them costly */
		uint32_t ends[HIR_MAX_DEPTH_GROUPS], n = hir_depth_groups(f, HIR_MAX_DEPTH_GROUPS, tree_step(f, k), ends);
		if (cost_depth_groups_pay(f, ends, n))
			k->depth_groups = HIR_MAX_DEPTH_GROUPS;
	}
	/* uneven trees, not padded in groups: walked as the sparse layout stores them, with straight steps */
	bool uneven = !k->representation && !k->depth_groups && f->num_trees && !cost_walks_even(f);
	if (uneven)
		k->peel = walk_peel(f);
	k->cache_rows = k->cache_rows || (copied && hir_rows_cache_fits(f, k));
	k->cache_trees = total > L2_BYTES && k->row_tile >= ROW_TILE && hir_trees_cache_applies(f, k) &&
	                 (uint64_t)k->row_tile * REP_CACHE_LINE >= CACHE_ROWS_A_LINE * NODE_BYTES * (f->num_nodes / f->num_trees);
	/* (a representation the caller names may compile trees into code, which walks no trees side by side) */
	if (pick && k->tree_tile && !k->representation && rows > 1) {
		uint64_t walked = uneven ? (uint64_t)f->num_nodes * SPARSE_NODE_BYTES : total; /* (the sparse layout's bytes) */
		k->few_trees = few_trees(f, k->peel > PEEL_DEEP);
		k->few_rows = walked > L2_BYTES ? 2 : (uint8_t)cost_pad_rows(f, masks, false, true);
	}
	if (masks)
		k->representation = knob_named("sparse");
}

/* tile(var, outer, inner, size); interleave(inner): size iterations of var side by side (nothing for size 1). */
static const char *interleave_tile(HSchedule *s, const char *var, const char *outer, const char *inner, uint32_t size,
                                   bool *ok, Error *e)
{
	if (size <= 1 || !*ok)
		return var;
	*ok = hir_schedule_tile(s, var, outer, inner, size, e) && hir_schedule_mark(s, HDIR_INTERLEAVE, inner, 0, e);
	return outer;
}

/* Depth groups as hir_depth_groups chooses them: where each ends (one past its last tree) and its deepest tree's depth. */
typedef struct GroupEnds {
	uint32_t n; /* 1: the trees make one group */
	uint32_t ends[HIR_MAX_DEPTH_GROUPS], depth[HIR_MAX_DEPTH_GROUPS];
} GroupEnds;

/* k's depth groups, ending at multiples of `step` trees (the split loop's). */
static GroupEnds group_ends(const HForest *f, const HScheduleKnobs *k, uint32_t step)
{
	GroupEnds g = {.n = 1};
	uint32_t *depth;
	if (k->depth_groups < 2 || (g.n = hir_depth_groups(f, k->depth_groups, step, g.ends)) < 2)
		return g;
	depth = hir_sorted_depths(f);
	for (uint32_t i = 0; i < g.n; i++)
		g.depth[i] = depth[g.ends[i] - 1];
	free(depth);
	return g;
}

/* A depth group of a schedule grove writes: its outermost tree loop, the loop holding its walk, its walks' depth. */
typedef struct DepthGroup {
	char outer[HIR_MAX_NAME], walk[HIR_MAX_NAME];
	uint32_t depth;
} DepthGroup;

/* The name split(loop, ..., half, ...) gives the copy of `name` under half: half itself where name is loop. */
static void half_name(char *out, const char *half, const char *name, const char *loop)
{
	char copy[HIR_MAX_NAME];
	snprintf(copy, sizeof copy, strcmp(name, loop) ? "%s.%.40s" : "%s", half, name);
	memcpy(out, copy, sizeof copy);
}

/*
 * Depth groups (k->depth_groups): sortTrees(depth), then the outermost tree loop split
 * at the group ends hir_depth_groups chooses (in steps of `step` trees, that loop's),
 * each group's walks unrolled to its deepest tree:
 *
 *   sortTrees(depth); split(t0, g0, r0, A); split(r0, g1, r1, B); ...
 *   unrollWalk(g0.t3, 4); unrollWalk(g1.r0.t3, 6); unrollWalk(r1.r0.t3, 8)
 *
 * at the ends of `at` (group_ends). Fills groups (the last group is the last remainder);
 * returns how many, 0 where the trees make one group.
 */
static uint32_t depth_groups(HForest *f, const GroupEnds *at, const char *trees_outer, const char *walk, uint32_t step,
                             DepthGroup *groups, bool *ok, Error *e)
{
	uint32_t n = at->n, begin = 0;
	char rest[HIR_MAX_NAME], rest_walk[HIR_MAX_NAME];
	if (n < 2)
		return 0;
	*ok = hir_schedule_sort_trees(&f->schedule, "depth", e);
	snprintf(rest, sizeof rest, "%s", trees_outer);
	snprintf(rest_walk, sizeof rest_walk, "%s", walk);
	for (uint32_t g = 0; g < n && *ok; g++) {
		DepthGroup *d = &groups[g];
		char second[HIR_MAX_NAME];
		d->depth = at->depth[g];
		if (g == n - 1) { /* the last remainder */
			memcpy(d->outer, rest, sizeof rest);
			memcpy(d->walk, rest_walk, sizeof rest_walk);
			break;
		}
		snprintf(d->outer, sizeof d->outer, "g%u", g);
		snprintf(second, sizeof second, "r%u", g);
		*ok = hir_schedule_split(&f->schedule, rest, d->outer, second, (at->ends[g] - begin) / step, e);
		half_name(d->walk, d->outer, rest_walk, rest);
		half_name(rest_walk, second, rest_walk, rest);
		memcpy(rest, second, sizeof second);
		begin = at->ends[g];
	}
	return *ok ? n : 0;
}

/*
 * Trees side by side in a depth group of n trees of the lone rows' half, where the knob
 * asks `want`: of want - 2 to want + 2 (or of n, for fewer trees), the size that leaves
 * the fewest lanes masked in the group's last tile (a masked lane walks as a tree does),
 * then the nearest to want, then the fewest tiles. One row of year_prediction_msd in two
 * groups (16 and 84 trees, tiles of 8 for the first), one core, us: tiles of 10 0.44 (6
 * lanes masked), 11 0.43 (4), 12 0.40 (none); one group of 100 trees in tiles of 10, 0.43.
 */
static uint32_t few_group_tile(uint32_t n, uint32_t want)
{
	uint32_t best = 0, least = want > 2 ? want - 2 : 1;
	uint64_t best_key = UINT64_MAX;
	for (uint32_t w = n && n < least ? n : least; w <= want + 2 && w <= MIR_WALK_LANES; w++) {
		uint64_t tiles = (n + w - 1) / w, masked = tiles * w - n, off = w > want ? w - want : want - w;
		uint64_t key = masked << 48 | off << 40 | tiles; /* in that order (tiles < 2^32) */
		if (key < best_key)
			best = w, best_key = key;
	}
	return best;
}

/*
 * The lone rows' half in depth groups: its tree loop split where the other half's is
 * (the ends of `at`), each group's walks side by side in tiles of its own size
 * (few_group_tile) and unrolled to the group's depth (as depth_groups does the other's):
 *
 *   split(few.tree, fg0, fr0, A); tile(fg0, fa0, fb0, W0); interleave(fb0); cache(fa0);
 *   unrollWalk(fb0, D0); ... the last group in fr<n-2>.
 *
 * Returns false (writing nothing) where the trees make one group.
 */
static bool few_groups(HForest *f, const HScheduleKnobs *k, const GroupEnds *at, bool *ok, Error *e)
{
	uint32_t n = at->n, begin = 0;
	char rest[HIR_MAX_NAME] = "few.tree";
	if (n < 2)
		return false;
	for (uint32_t g = 0; g < n && *ok; g++) {
		char group[HIR_MAX_NAME], second[HIR_MAX_NAME], outer[HIR_MAX_NAME], inner[HIR_MAX_NAME];
		const char *walk;
		snprintf(group, sizeof group, "%s", rest);
		if (g < n - 1) {
			snprintf(group, sizeof group, "fg%u", g);
			snprintf(second, sizeof second, "fr%u", g);
			*ok = hir_schedule_split(&f->schedule, rest, group, second, at->ends[g] - begin, e);
			memcpy(rest, second, sizeof second);
		}
		snprintf(outer, sizeof outer, "fa%u", g);
		snprintf(inner, sizeof inner, "fb%u", g);
		walk = interleave_tile(&f->schedule, group, outer, inner, few_group_tile(at->ends[g] - begin, k->few_trees), ok, e);
		if (strcmp(walk, group)) {
			*ok = *ok && hir_schedule_mark(&f->schedule, HDIR_CACHE, outer, 0, e);
			walk = inner;
		}
		if (at->depth[g] > 0) /* (a group of single leaves walks no step) */
			*ok = *ok && hir_schedule_mark(&f->schedule, HDIR_UNROLL_WALK, walk, at->depth[g], e);
		begin = at->ends[g];
	}
	return true;
}

bool hir_apply_knobs(HForest *f, const HScheduleKnobs *k, Error *e)
{
	HSchedule *s = &f->schedule;
	const char *rows_outer, *trees_outer, *walk; /* the outermost row and tree loops, and the loop holding the walk */
	unsigned traits = k->representation ? lower_representation_traits(k->representation - 1u) : 0;
	bool code = traits & LREP_CODE, ok = true;
	uint32_t trees = f->num_trees < 2 || code ? 1 : k->trees, rows = k->rows, shallowest, depth, groups;
	DepthGroup groups_of[HIR_MAX_DEPTH_GROUPS];
	GroupEnds ends = code ? (GroupEnds){.n = 1} : group_ends(f, k, tree_step(f, k)); /* both halves split at them */
	/*
	 * batches of lone rows apart (few_trees), where the trees are tiled and walked a split
	 * a step in one depth group, or as code of rows side by side (a row at a time apart)
	 */
	bool few = k->few_trees && k->few_rows > 1 && k->few_rows <= rows && tiles_trees(f, k) &&
	           !(traits & LREP_BLOCKS) && !k->tile_trees;

	if (traits & LREP_BLOCKS) { /* blocks as large as interleaving makes them, a row at a time */
		trees = f->num_trees < MIR_WALK_LANES ? 1 : MIR_WALK_LANES;
		rows = 1;
	}
	hir_schedule_init(s, f->num_trees);
	hir_leaf_depth_range(f, &shallowest, &depth);
	if (k->representation && !(k->tile_trees && !(traits & LREP_TILES)))
		ok = hir_schedule_representation(s, lower_representation_name(k->representation - 1u), e);
	if (k->tile_trees && !code) /* tiles take the representation that walks them: the tiling wins over another */
		ok = ok && hir_schedule_tile_trees(s, "uniform", k->tile_trees, e);
	if (!tiles_trees(f, k)) {
		rows_outer = interleave_tile(s, "batch", "b0", "b1", rows, &ok, e);
		trees_outer = interleave_tile(s, "tree", "t0", "t1", trees, &ok, e);
		walk = trees > 1 ? "t1" : "tree";
	} else {
		const char *order[6] = {"b0", "t0"}, *batch = "batch", *tree = "tree";
		uint32_t n = 2;
		rows_outer = "b0";
		trees_outer = "t0";
		if (few) {
			/*
			 * splitSize(batch, few, many, few_rows); tile(few.tree, f0, f1, few_trees);
			 * interleave(f1); cache(f0): batches of lone rows, each tile of trees prefetching
			 * the next one's roots (lower/mir_to_lir.c: prefetch_next_trees)
			 */
			ok = ok && hir_schedule_split_size(s, "batch", "few", "many", k->few_rows, e);
			if (code) {
				/* tile(few.tree, f0, f1, few_trees); reorder(f0, few, f1): each tile's code over the lone rows */
				const char *lone[] = {"f0", "few", "f1"};
				ok = ok && hir_schedule_tile(s, "few.tree", "f0", "f1", k->few_trees, e) && hir_schedule_reorder(s, lone, 3, e) &&
				     hir_schedule_mark(s, HDIR_SPECIALIZE, "f0", 0, e) && hir_schedule_mark(s, HDIR_SPECIALIZE, "f1", 0, e);
			} else if (!few_groups(f, k, &ends, &ok, e)) {
				const char *lone = k->few_trees > 1 ? "f1" : "few.tree"; /* (few_trees 1: the trees untiled) */
				if (few_rows_side_by_side(f, k)) /* tile(few, r0, r1, 16); interleave(r1) */
					interleave_tile(s, "few", "r0", "r1", TOP_LANES, &ok, e);
				interleave_tile(s, "few.tree", "f0", "f1", k->few_trees, &ok, e);
				if (k->few_trees > 1)
					ok = ok && hir_schedule_mark(s, HDIR_CACHE, "f0", 0, e);
				if (k->peel) /* (lone rows walk fewer walks at once: at most PEEL_LONE straight steps, but the deepest's) */
					ok = ok && hir_schedule_mark(s, HDIR_PEEL_WALK, lone,
					                             k->peel > PEEL_DEEP || k->peel < PEEL_LONE ? k->peel : PEEL_LONE, e);
				if (k->unroll)
					ok = ok && hir_schedule_mark(s, HDIR_UNROLL_WALK, lone, depth, e);
			}
			batch = "many";
			tree = "many.tree";
		}
		ok = ok && hir_schedule_tile(s, batch, "b0", "b1", k->row_tile, e) && hir_schedule_tile(s, tree, "t0", "t1", k->tree_tile, e);
		order[n++] = interleave_tile(s, "b1", "b2", "b3", rows, &ok, e);
		if (rows > 1)
			order[n++] = "b3";
		order[n++] = walk = interleave_tile(s, "t1", "t2", "t3", trees, &ok, e);
		if (trees > 1)
			order[n++] = walk = "t3";
		ok = ok && hir_schedule_reorder(s, order, n, e);
	}
	if (code) {
		ok = ok && hir_schedule_mark(s, HDIR_SPECIALIZE, trees_outer, 0, e);
		if (strcmp(walk, trees_outer))
			ok = ok && hir_schedule_mark(s, HDIR_SPECIALIZE, walk, 0, e);
	}
	if (k->parallel == HPARALLEL_ROWS)
		ok = ok && hir_schedule_mark(s, HDIR_PARALLEL, rows_outer, 0, e);
	if (k->cache_rows && hir_rows_cache_fits(f, k))
		ok = ok && hir_schedule_mark(s, HDIR_CACHE, rows_outer, 0, e);
	groups = ok ? depth_groups(f, &ends, trees_outer, walk, tree_step(f, k), groups_of, &ok, e) : 0;
	if (!groups) { /* the whole forest, one group */
		snprintf(groups_of[0].outer, sizeof groups_of[0].outer, "%s", trees_outer);
		snprintf(groups_of[0].walk, sizeof groups_of[0].walk, "%s", walk);
		groups_of[0].depth = k->unroll ? depth : 0;
		groups = 1;
	}
	for (uint32_t g = 0; g < groups; g++) {
		if (k->parallel == HPARALLEL_TREES)
			ok = ok && hir_schedule_mark(s, HDIR_PARALLEL, groups_of[g].outer, 0, e);
		if (k->cache_trees && hir_trees_cache_applies(f, k))
			ok = ok && hir_schedule_mark(s, HDIR_CACHE, groups_of[g].outer, 0, e);
		if (groups_of[g].depth > 0)
			ok = ok && hir_schedule_mark(s, HDIR_UNROLL_WALK, groups_of[g].walk, groups_of[g].depth, e);
		if (k->peel)
			ok = ok && hir_schedule_mark(s, HDIR_PEEL_WALK, groups_of[g].walk, rows_peel(f, k, rows), e);
	}
	return ok && hir_schedule_check(s, e);
}

bool hir_choose_schedule(HForest *f, uint32_t tree_tile, uint32_t rows, uint32_t trees, const char *named, MTops tops,
                         Error *e)
{
	HScheduleKnobs k;
	Error why;
	hir_choose_knobs(f, tree_tile, rows, trees, named, tops, &k);
	if (hir_apply_knobs(f, &k, &why))
		return true;
	if (!named) /* the heuristic's own choice: a bug */
		die("default schedule: %s", why.message);
	return error_set(e, "representation %s: the schedule grove writes for it does not apply to this forest (%s); name a "
	                    "schedule, or another representation", named, why.message);
}
