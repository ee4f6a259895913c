/*
 * HIR pass: tree tiling (tileTrees; Treebeard, ../shared/seeds/000_*.txt §4). A tile is
 * a connected group of up to `size` splits that a walk step evaluates at once: one
 * vector compare of the row's features against the tile's thresholds, whose bits pick
 * the exit the row leaves the tile by (representation `tiled`, lower/rep_tiled.c). A
 * walk of depth d then takes about d / log2(size + 1) steps instead of d.
 *
 * Uniform tiling grows each tile from its root in level order until it holds `size`
 * splits; the splits just below a full tile start tiles of their own, and leaves are
 * never in a tile. Probability-based tiling (Treebeard's) grows it by the split below
 * it that most training rows reached (HNode.cover), so that the paths rows take most
 * often cross fewer tiles; without node statistics it is uniform. On a complete tree (hir_pad) tiles of 2^k - 1 splits are complete
 * subtrees of k levels, so every walk takes the same number of steps. The pass only
 * marks where tiles start (HNode.tile); a representation finds a tile's members as the
 * unmarked splits below its root.
 */
#include "lower/lower.h"

#include <stdlib.h>
#include <string.h>

void hir_tile_trees(HForest *f, uint32_t size, HTiling tiling)
{
	uint32_t max_nodes = 1, *roots;
	if (size < 1 || size > HIR_MAX_TILE)
		die("hir_tile_trees: tiles of %u splits", size);
	for (uint32_t t = 0; t < f->num_trees; t++)
		max_nodes = f->trees[t].num_nodes > max_nodes ? f->trees[t].num_nodes : max_nodes;
	roots = xmalloc(max_nodes * sizeof *roots);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		HNode *nodes = hir_tree_nodes(f, t);
		uint32_t top = 0;
		for (uint32_t i = 0; i < f->trees[t].num_nodes; i++)
			nodes[i].tile = 0;
		hir_tree_reshaped(f, t);
		if (nodes[0].feature != HIR_LEAF)
			roots[top++] = 0;
		while (top) {
			/*
			 * The tile of roots[top]: splits taken from the frontier (the splits just below
			 * the tile, in the order they were met) up to size, the first one met (uniform:
			 * level order) or the one most rows reached; what is left of the frontier
			 * starts tiles.
			 */
			uint32_t frontier[HIR_MAX_TILE + 1], count = 0, members = 0;
			frontier[count++] = roots[--top];
			nodes[frontier[0]].tile = 1;
			while (count && members < size) {
				uint32_t pick = 0, id;
				const HNode *n;
				for (uint32_t k = 1; tiling == HTILING_PROBABILITY && k < count; k++)
					if (nodes[frontier[k]].cover > nodes[frontier[pick]].cover)
						pick = k;
				id = frontier[pick];
				memmove(frontier + pick, frontier + pick + 1, (count - pick - 1) * sizeof *frontier);
				count--;
				members++;
				n = &nodes[id];
				if (nodes[n->left].feature != HIR_LEAF)
					frontier[count++] = n->left;
				if (nodes[n->right].feature != HIR_LEAF)
					frontier[count++] = n->right;
			}
			for (uint32_t k = 0; k < count; k++)
				roots[top++] = frontier[k];
		}
	}
	free(roots);
	f->tile_size = (uint8_t)size;
}
