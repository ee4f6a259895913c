/*
 * HIR passes: pad trees so that no leaf is shallower than a depth D.
 *
 * A leaf at depth d < D becomes a split on feature 0 whose two children both carry
 * the leaf's value, repeated down to depth D, so whichever way a row goes it reaches
 * the old value after D steps and predictions do not change. Walks then take D steps
 * without leaf tests (see mir_unroll_walks), at the cost of 2^(D-d+1) - 2 new nodes
 * per such leaf. hir_pad pads the whole forest to its largest depth when that pays;
 * hir_pad_unrolled_walks pads the trees each unrollWalk(v, D) of the schedule reaches.
 */
#include "lower/lower.h"

#include <stdlib.h>
#include <string.h>

/* Nodes tree t has after padding to depth `depth`; *stack is scratch of *cap entries. */
static uint64_t padded_tree_nodes(const HForest *f, uint32_t t, uint32_t depth, uint32_t **stack, size_t *cap)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint64_t count = f->trees[t].num_nodes; /* kept as they are, reachable or not */
	uint32_t top = 0, *s;
	GROW(*stack, 2 * (size_t)f->trees[t].num_nodes + 2, *cap);
	s = *stack;
	s[top++] = 0;
	s[top++] = 0;
	while (top) {
		uint32_t d = s[--top], id = s[--top];
		if (nodes[id].feature == HIR_LEAF) {
			if (d < depth)
				count += (2ull << (depth - d)) - 2;
			continue;
		}
		s[top++] = nodes[id].left;
		s[top++] = d + 1;
		s[top++] = nodes[id].right;
		s[top++] = d + 1;
	}
	return count;
}

uint64_t hir_padded_nodes(const HForest *f)
{
	uint32_t min, max, *stack = NULL;
	uint64_t total = 0;
	size_t cap = 0;
	hir_leaf_depth_range(f, &min, &max);
	for (uint32_t t = 0; t < f->num_trees; t++)
		total += padded_tree_nodes(f, t, max, &stack, &cap);
	free(stack);
	return total;
}

bool lower_padding_pays(const HForest *f)
{
	uint32_t min, max;
	hir_leaf_depth_range(f, &min, &max);
	/*
	 * Padding shallow leaves of a deep forest grows it exponentially. Allow four times
	 * the nodes: the array layout (chosen under the same bound) stores complete trees
	 * anyway, so there padding costs no memory, and branch-free interleaved walks beat
	 * early exits (a 1000-tree depth-8 forest: 24.8 -> 13.9 us/row at 4096 rows).
	 */
	return min != max && max <= 16 && f->num_features > 0 && hir_padded_nodes(f) <= 4 * f->num_nodes + 1024;
}

/*
 * The split padding puts in place of a leaf: it sends the row either way to the same
 * value, so only its form matters. It copies the comparison, missing rule and category
 * set of f's first split, so that a forest using one kind (which representations lower
 * with a single compare) still uses one.
 */
static HNode padding_split(const HForest *f)
{
	HNode split = {.feature = 0, .default_left = 1, .compare = HCMP_LT};
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		if (f->nodes[i].feature != HIR_LEAF) {
			split.default_left = f->nodes[i].default_left;
			split.compare = f->nodes[i].compare;
			split.missing = f->nodes[i].missing;
			split.set = f->nodes[i].set;
			break;
		}
	}
	return split;
}

void hir_pad_trees(HForest *f, uint32_t first, uint32_t end, uint32_t depth)
{
	uint32_t min, max, *stack = NULL;
	size_t cap = 0;
	uint64_t total = 0, *sizes;
	HNode *nodes, split = padding_split(f);
	HTree *trees = f->trees;

	hir_trees_leaf_depth_range(f, first, end, &min, &max);
	if (first >= end || min >= depth)
		return;
	sizes = xmalloc(((size_t)f->num_trees + 1) * sizeof *sizes);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		sizes[t] = t >= first && t < end ? padded_tree_nodes(f, t, depth, &stack, &cap) : trees[t].num_nodes;
		total += sizes[t];
	}
	nodes = xmalloc((total ? total : 1) * sizeof *nodes);
	total = 0;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		HNode *tree = nodes + total;
		uint32_t count = trees[t].num_nodes, top = 0;
		memcpy(tree, f->nodes + trees[t].first_node, count * sizeof *tree);
		GROW(stack, 2 * sizes[t] + 2, cap);
		if (t >= first && t < end) {
			stack[top++] = 0;
			stack[top++] = 0;
		}
		while (top) {
			uint32_t d = stack[--top], id = stack[--top];
			HNode *n = &tree[id];
			if (n->feature == HIR_LEAF) {
				if (d >= depth)
					continue;
				/* Turn the leaf into a split whose children are both copies of it. */
				HNode leaf = *n;
				tree[count] = leaf;
				tree[count + 1] = leaf;
				*n = split;
				n->left = count;
				n->right = count + 1;
				count += 2;
			}
			stack[top++] = n->left;
			stack[top++] = d + 1;
			stack[top++] = n->right;
			stack[top++] = d + 1;
		}
		trees[t].first_node = total;
		trees[t].num_nodes = count;
		total += count;
	}
	free(stack);
	free(sizes);
	free(f->nodes);
	f->nodes = nodes;
	f->num_nodes = f->nodes_cap = total;
}

void hir_pad(HForest *f)
{
	uint32_t min, max;
	hir_leaf_depth_range(f, &min, &max);
	hir_pad_trees(f, 0, f->num_trees, max);
}

void hir_pad_unrolled_walks(HForest *f)
{
	const HSchedule *s = &f->schedule;
	for (uint32_t v = 0; v < s->num_vars; v++) {
		uint32_t first, end, min, max;
		if (!s->vars[v].has_loop || !s->vars[v].unroll_walk)
			continue;
		hir_schedule_tree_span(s, (int32_t)v, &first, &end);
		hir_trees_leaf_depth_range(f, first, end, &min, &max);
		/* Deeper than the deepest leaf would add steps, not remove tests. */
		hir_pad_trees(f, first, end, s->vars[v].unroll_walk < max ? s->vars[v].unroll_walk : max);
	}
}
