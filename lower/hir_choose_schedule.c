/*
 * The schedule a forest gets when the user gives none.
 *
 * Small forests: parallel(batch) over the plain nest batch { tree }: each row walks every tree, and
 * the whole model stays in a core's L2 cache. A model that does not fit there is
 * streamed from L3 (or memory) once per group of rows, which is what bounds large
 * forests. For those: tile(batch, rows, row, 64), tile(tree, trees, tree_in, T),
 * reorder(rows, trees, row, tree_in), parallel(rows): T trees' nodes stay in L2 while
 * the 64 rows of a tile walk them, and the rows' margins live in a 64-row scratch
 * array for the tile's whole life.
 */
#include "lower/lower.h"

/* A core's L2 cache (512 KiB on the AMD EPYC this was tuned on); a tile of trees fills half of it. */
#define L2_BYTES (512u << 10)
/* Rows of a row tile. */
#define ROW_TILE 64
/* Margins per row beyond which the row tile's scratch array would crowd the stack. */
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

void hir_choose_schedule(HForest *f, uint32_t tree_tile)
{
	static const char *const order[] = {"rows", "trees", "row", "tree_in"};
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
	if (tree_tile == 0 || tree_tile >= f->num_trees || f->num_outputs > MAX_TILED_OUTPUTS) {
		must(hir_schedule_mark(s, HDIR_PARALLEL, "batch", 0, &e), &e);
		return;
	}
	must(hir_schedule_tile(s, "batch", "rows", "row", ROW_TILE, &e), &e);
	must(hir_schedule_tile(s, "tree", "trees", "tree_in", tree_tile, &e), &e);
	must(hir_schedule_reorder(s, order, COUNT_OF(order), &e), &e);
	must(hir_schedule_mark(s, HDIR_PARALLEL, "rows", 0, &e), &e);
}
