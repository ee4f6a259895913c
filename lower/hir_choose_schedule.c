/*
 * The schedule a forest gets when the user gives none.
 *
 * Small forests: parallel(batch), order(batch, tree): each row walks every tree, and
 * the whole model stays in a core's L2 cache. A model that does not fit there is
 * streamed from L3 (or memory) once per group of rows, which is what bounds large
 * forests. For those: tile(batch, rows, row, 64), tile(tree, trees, tree_in, T),
 * order(rows, trees, row, tree_in), parallel(rows): T trees' nodes stay in L2 while
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

void hir_choose_schedule(HForest *f, uint32_t tree_tile)
{
	HSchedule *s = &f->schedule;
	uint64_t total = 0;
	int32_t rows;

	hir_schedule_default(s);
	for (uint32_t t = 0; t < f->num_trees; t++)
		total += tree_bytes(f, t);
	if (tree_tile == HIR_TILE_AUTO) {
		if (total <= L2_BYTES || f->num_trees < 2)
			return;
		tree_tile = (uint32_t)(L2_BYTES / 2 / (total / f->num_trees + 1));
	}
	if (tree_tile == 0 || tree_tile >= f->num_trees || f->num_outputs > MAX_TILED_OUTPUTS)
		return;
	rows = hir_schedule_tile(s, hir_schedule_find(s, "batch"), "rows", "row", ROW_TILE);
	hir_schedule_tile(s, hir_schedule_find(s, "tree"), "trees", "tree_in", tree_tile);
	s->vars[hir_schedule_find(s, "batch")].flags = 0;
	s->vars[rows].flags |= HVAR_PARALLEL;
	/* order(rows, row, trees, tree_in) -> order(rows, trees, row, tree_in) */
	s->order[1] = hir_schedule_find(s, "trees");
	s->order[2] = hir_schedule_find(s, "row");
}
