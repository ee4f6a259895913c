/*
 * HIR pass: tree tiling (tileTrees; Treebeard, ../shared/seeds/000_*.txt §4). A tile is
 * a connected group of up to `size` splits that a walk step evaluates at once: one
 * vector compare of the row's features against the tile's thresholds, whose bits pick
 * the exit the row leaves the tile by (representation `tiled`, lower/rep_tiled.c). A
 * walk of depth d then takes about d / log2(size + 1) steps instead of d.
 *
 * Uniform tiling grows each tile from its root in level order until it holds `size`
 * splits; the splits just below a full tile start tiles of their own, and leaves are
 * never in a tile. On a complete tree (hir_pad) tiles of 2^k - 1 splits are complete
 * subtrees of k levels, so every walk takes the same number of steps. The pass only
 * marks where tiles start (HNode.tile); a representation finds a tile's members as the
 * unmarked splits below its root.
 */
#include "lower/lower.h"

#include <stdlib.h>

void hir_tile_trees(HForest *f, uint32_t size)
{
	uint32_t max_nodes = 1, *roots, *members;
	if (size < 1 || size > HIR_MAX_TILE)
		die("hir_tile_trees: tiles of %u splits", size);
	for (uint32_t t = 0; t < f->num_trees; t++)
		max_nodes = f->trees[t].num_nodes > max_nodes ? f->trees[t].num_nodes : max_nodes;
	roots = xmalloc(max_nodes * sizeof *roots);
	members = xmalloc(max_nodes * sizeof *members);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		HNode *nodes = hir_tree_nodes(f, t);
		uint32_t top = 0;
		for (uint32_t i = 0; i < f->trees[t].num_nodes; i++)
			nodes[i].tile = 0;
		if (nodes[0].feature != HIR_LEAF)
			roots[top++] = 0;
		while (top) {
			/* The tile of roots[top]: its splits in level order, up to size; the splits left out start tiles. */
			uint32_t count = 0, head = 0;
			members[count++] = roots[--top];
			nodes[members[0]].tile = 1;
			while (head < count) {
				const HNode *n = &nodes[members[head++]];
				uint32_t children[2] = {n->left, n->right};
				for (int k = 0; k < 2; k++) {
					if (nodes[children[k]].feature == HIR_LEAF)
						continue;
					if (count < size)
						members[count++] = children[k];
					else
						roots[top++] = children[k];
				}
			}
		}
	}
	free(roots);
	free(members);
	f->tile_size = (uint8_t)size;
}
