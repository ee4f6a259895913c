/*
 * The schedule a forest gets when the user gives none, written with the schedule
 * language's directives (so `grove dump --level hir` shows it).
 *
 * Forests that fit in a core's L2 cache: every row walks every tree, R rows at a time
 * with their walks interleaved, and where rows go one at a time (a single-row
 * prediction, the last rows of a batch) K trees of the row interleaved instead:
 *
 *   tile(batch, b0, b1, R); tile(tree, t0, t1, K)
 *   parallel(b0); interleave(b1); interleave(t1)
 *
 * A model that does not fit there is streamed from L3 (or memory) once per group of
 * rows, which is what bounds large forests. For those, tiles of 64 rows walk tiles of
 * T trees, T chosen so that a tile's nodes fill half of L2; the rows' margins live in
 * a 64-row buffer on the stack for the tile's whole life:
 *
 *   tile(batch, b0, b1, 64); tile(b1, b2, b3, R)
 *   tile(tree, t0, t1, T); tile(t1, t2, t3, K)
 *   reorder(b0, t0, b2, b3, t2, t3)
 *   parallel(b0); interleave(b3); interleave(t3)
 */
#include "lower/lower.h"

/* A core's L2 cache (512 KiB on the AMD EPYC this was tuned on); a tile of trees fills half of it. */
#define L2_BYTES (512u << 10)
/* Rows of a row tile. */
#define ROW_TILE 64
/* Margins per row beyond which the row tile's buffer would crowd the stack. */
#define MAX_TILED_OUTPUTS 16

/* Bytes tree t takes in memory, as the array layout stores it (a complete tree, 8 bytes a slot). */
static uint64_t tree_bytes(const HForest *f, uint32_t t)
{
	uint32_t depth = hir_tree_depth(f, t);
	return depth > 24 ? (uint64_t)f->trees[t].num_nodes * 12 : 8 * ((2ull << depth) - 1);
}

/* Apply a directive the heuristic writes; it is valid by construction. */
static void must(bool ok, const Error *e)
{
	if (!ok)
		die("default schedule: %s", e->message);
}

/* tile(var, outer, inner, size); interleave(inner): size iterations of var side by side (nothing for size 1). */
static const char *interleave_tile(HSchedule *s, const char *var, const char *outer, const char *inner, uint32_t size)
{
	Error e;
	if (size <= 1)
		return var;
	must(hir_schedule_tile(s, var, outer, inner, size, &e), &e);
	must(hir_schedule_mark(s, HDIR_INTERLEAVE, inner, 0, &e), &e);
	return outer;
}

/* interleave_tile, appending the loops that replace var to order[n..]; returns the new n. */
static uint32_t add_interleaved(HSchedule *s, const char *var, const char *outer, const char *inner, uint32_t size,
                                const char **order, uint32_t n)
{
	order[n++] = interleave_tile(s, var, outer, inner, size);
	if (size > 1)
		order[n++] = inner;
	return n;
}

void hir_choose_schedule(HForest *f, uint32_t tree_tile, uint32_t rows, uint32_t trees)
{
	HSchedule *s = &f->schedule;
	uint64_t total = 0;
	Error e;

	hir_schedule_init(s, f->num_trees);
	for (uint32_t t = 0; t < f->num_trees; t++)
		total += tree_bytes(f, t);
	if (tree_tile == HIR_TILE_AUTO) {
		if (total <= L2_BYTES || f->num_trees < 2)
			tree_tile = 0;
		else
			tree_tile = (uint32_t)(L2_BYTES / 2 / (total / f->num_trees + 1));
	}
	if (f->num_trees < 2)
		trees = 1;
	if (tree_tile == 0 || tree_tile >= f->num_trees || f->num_outputs > MAX_TILED_OUTPUTS) {
		const char *outer = interleave_tile(s, "batch", "b0", "b1", rows);
		interleave_tile(s, "tree", "t0", "t1", trees);
		must(hir_schedule_mark(s, HDIR_PARALLEL, outer, 0, &e), &e);
		return;
	}
	{
		const char *order[6] = {"b0", "t0"};
		uint32_t n = 2;
		must(hir_schedule_tile(s, "batch", "b0", "b1", ROW_TILE, &e), &e);
		must(hir_schedule_tile(s, "tree", "t0", "t1", tree_tile, &e), &e);
		n = add_interleaved(s, "b1", "b2", "b3", rows, order, n);
		n = add_interleaved(s, "t1", "t2", "t3", trees, order, n);
		must(hir_schedule_reorder(s, order, n, &e), &e);
		must(hir_schedule_mark(s, HDIR_PARALLEL, "b0", 0, &e), &e);
	}
}
