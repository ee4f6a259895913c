/*
 * The schedules grove writes itself, with the schedule language's directives (so
 * `grove dump --level hir` shows them): a small family described by HScheduleKnobs,
 * from which the heuristic picks one without timing anything and `grove tune` searches
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
 * peeled (peelWalk).
 */
#include "lower/lower.h"

#include <stdio.h>

/*
 * Bytes of nodes a tile of trees takes: 16 rows walking 16 depth-8 trees (64 KiB as the
 * array layout stores them) in tiles of 256 rows ran 1.15-1.35x faster on the real
 * models than every row walking every tree, even for models that fit in L2 (AMD EPYC,
 * 32 KiB L1 data, 512 KiB L2 per core).
 */
#define TILE_BYTES (64u << 10)
/* Rows of a row tile. */
#define ROW_TILE 256
/* Margins per row beyond which the row tile's buffer would crowd the stack. */
#define MAX_TILED_OUTPUTS 16

const char *const hir_parallel_names[] = {"rows", "trees", "none"};

/* Bytes tree t takes in memory, as the array layout stores it (a complete tree, 8 bytes a slot). */
static uint64_t tree_bytes(const HForest *f, uint32_t t)
{
	uint32_t depth = hir_tree_depth(f, t);
	return depth > 24 ? (uint64_t)f->trees[t].num_nodes * 12 : 8 * ((2ull << depth) - 1);
}

void hir_choose_knobs(const HForest *f, uint32_t tree_tile, uint32_t rows, uint32_t trees, HScheduleKnobs *k)
{
	uint64_t total = 0;
	for (uint32_t t = 0; t < f->num_trees; t++)
		total += tree_bytes(f, t);
	if (tree_tile == HIR_TILE_AUTO) {
		uint64_t per_tile = f->num_trees ? TILE_BYTES / (total / f->num_trees + 1) : 0;
		tree_tile = per_tile < 1 ? 1 : per_tile > MIR_MAX_INTERLEAVE ? MIR_MAX_INTERLEAVE : (uint32_t)per_tile;
		if (f->num_trees < 2 || tree_tile >= f->num_trees)
			tree_tile = 0;
	}
	*k = (HScheduleKnobs){.rows = rows, .trees = trees, .tree_tile = tree_tile, .row_tile = ROW_TILE,
	                      .parallel = HPARALLEL_ROWS};
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

bool hir_apply_knobs(HForest *f, const HScheduleKnobs *k, Error *e)
{
	HSchedule *s = &f->schedule;
	const char *rows_outer, *trees_outer, *walk; /* the outermost row and tree loops, and the loop holding the walk */
	uint32_t trees = f->num_trees < 2 ? 1 : k->trees, depth = 0;
	bool ok = true;

	hir_schedule_init(s, f->num_trees);
	if (k->tree_tile == 0 || k->tree_tile >= f->num_trees || f->num_outputs > MAX_TILED_OUTPUTS) {
		rows_outer = interleave_tile(s, "batch", "b0", "b1", k->rows, &ok, e);
		trees_outer = interleave_tile(s, "tree", "t0", "t1", trees, &ok, e);
		walk = trees > 1 ? "t1" : "tree";
	} else {
		const char *order[6] = {"b0", "t0"};
		uint32_t n = 2;
		rows_outer = "b0";
		trees_outer = "t0";
		ok = hir_schedule_tile(s, "batch", "b0", "b1", k->row_tile, e) && hir_schedule_tile(s, "tree", "t0", "t1", k->tree_tile, e);
		order[n++] = interleave_tile(s, "b1", "b2", "b3", k->rows, &ok, e);
		if (k->rows > 1)
			order[n++] = "b3";
		order[n++] = walk = interleave_tile(s, "t1", "t2", "t3", trees, &ok, e);
		if (trees > 1)
			order[n++] = walk = "t3";
		ok = ok && hir_schedule_reorder(s, order, n, e);
	}
	if (k->parallel != HPARALLEL_NONE)
		ok = ok && hir_schedule_mark(s, HDIR_PARALLEL, k->parallel == HPARALLEL_ROWS ? rows_outer : trees_outer, 0, e);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint32_t d = hir_tree_depth(f, t);
		depth = d > depth ? d : depth;
	}
	if (k->unroll && depth > 0)
		ok = ok && hir_schedule_mark(s, HDIR_UNROLL_WALK, walk, depth, e);
	if (k->peel)
		ok = ok && hir_schedule_mark(s, HDIR_PEEL_WALK, walk, k->peel, e);
	return ok && hir_schedule_check(s, e);
}

void hir_choose_schedule(HForest *f, uint32_t tree_tile, uint32_t rows, uint32_t trees)
{
	HScheduleKnobs k;
	Error e;
	hir_choose_knobs(f, tree_tile, rows, trees, &k);
	if (!hir_apply_knobs(f, &k, &e))
		die("default schedule: %s", e.message);
}

/*
 * The GPU's default (SilvanForge's basic schedule): blocks of GPU_ROWS_PER_BLOCK rows,
 * one thread per row walking every tree, each tree's walk unrolled when padding pays.
 */
#define GPU_ROWS_PER_BLOCK 128
void hir_choose_gpu_schedule(HForest *f)
{
	HSchedule *s = &f->schedule;
	Error e;
	hir_schedule_init(s, f->num_trees);
	if (!hir_schedule_tile(s, "batch", "b0", "b1", GPU_ROWS_PER_BLOCK, &e) || !hir_schedule_gpu_dimension(s, "b0", "grid.x", &e) ||
	    !hir_schedule_gpu_dimension(s, "b1", "block.x", &e) || !hir_schedule_check(s, &e))
		die("default GPU schedule: %s", e.message);
}

int hir_knobs_describe(const HScheduleKnobs *k, char *buf, size_t size)
{
	return snprintf(buf, size, "rows %u trees %u tree_tile %u row_tile %u parallel %s unroll %u peel %u", k->rows, k->trees,
	                k->tree_tile, k->tree_tile ? k->row_tile : 0, hir_parallel_names[k->parallel], k->unroll, k->peel);
}
