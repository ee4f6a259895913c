/*
 * HIR passes: pad trees so that no leaf is shallower than a depth D.
 *
 * A leaf at depth d < D becomes a split on feature 0 whose two children both carry
 * the leaf's value, repeated down to depth D, so whichever way a row goes it reaches
 * the old value after D steps and predictions do not change. Walks then take D steps
 * without leaf tests (see mir_unroll_walks), at the cost of 2^(D-d+1) - 2 new nodes
 * per such leaf. hir_pad pads the whole forest to its largest depth when that pays;
 * hir_pad_unrolled_walks pads the trees each unrollWalk(v, D) of the schedule reaches.
 *
 * Depth groups: where a few deep trees would make padding the whole forest costly,
 * sortTrees(depth) has hir_sort_trees order the trees by depth, the schedule splits the
 * tree loop into groups of similar depth, and each group's unrollWalk pads it to its
 * own depth only.
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

uint64_t hir_nodes_padded_to(const HForest *f, uint32_t depth)
{
	uint32_t *stack = NULL;
	uint64_t total = 0;
	size_t cap = 0;
	for (uint32_t t = 0; t < f->num_trees; t++)
		total += padded_tree_nodes(f, t, depth, &stack, &cap);
	free(stack);
	return total;
}

uint64_t hir_padded_nodes(const HForest *f)
{
	uint32_t min, max;
	hir_leaf_depth_range(f, &min, &max);
	return hir_nodes_padded_to(f, max);
}

/*
 * The split padding puts in place of a leaf: it sends the row either way to the same
 * value, so only its form matters. It is f's first split but for the feature and the
 * threshold, so that a forest using one kind of comparison, missing rule and where NaN
 * goes against where 0 goes (which representations lower with a single compare, and
 * rows whose NaN reads as 0) still does. An ordering split's threshold is 1 or -1,
 * whichever sends 0 the first split's way: floats whose neighbours are normal, so that
 * hir_float_forest can rewrite its comparison either way.
 */
static HNode padding_split(const HForest *f)
{
	HNode split = {.value = 1, .feature = 0, .default_left = 1, .compare = HCMP_LT};
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		if (f->nodes[i].feature != HIR_LEAF) {
			split = f->nodes[i];
			split.feature = 0;
			split.left = split.right = 0;
			split.tile = 0;
			split.cover = 0;
			if (split.compare <= HCMP_GE)
				split.value = (split.compare <= HCMP_LE) == hir_zero_goes_left(f, &f->nodes[i]) ? 1 : -1;
			break;
		}
	}
	return split;
}

uint64_t hir_pad_trees(HForest *f, uint32_t first, uint32_t end, uint32_t depth, uint64_t max_nodes)
{
	uint32_t min, max, *stack = NULL;
	size_t cap = 0;
	uint64_t total = 0, *sizes;
	HNode *nodes, split = padding_split(f);
	HTree *trees = f->trees;

	hir_trees_leaf_depth_range(f, first, end, &min, &max);
	if (first >= end || min >= depth)
		return 0;
	sizes = xmalloc(((size_t)f->num_trees + 1) * sizeof *sizes);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		sizes[t] = t >= first && t < end ? padded_tree_nodes(f, t, depth, &stack, &cap) : trees[t].num_nodes;
		total += sizes[t];
	}
	if (total > max_nodes) {
		free(stack);
		free(sizes);
		return total;
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
		hir_tree_reshaped(f, t);
		total += count;
	}
	free(stack);
	free(sizes);
	free(f->nodes);
	f->nodes = nodes;
	f->num_nodes = f->nodes_cap = total;
	return 0;
}

/* A tree and its depth, for sorting. */
typedef struct TreeDepth {
	uint32_t tree, depth;
} TreeDepth;

static int by_depth(const void *a, const void *b)
{
	const TreeDepth *x = a, *y = b;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->tree < y->tree ? -1 : x->tree > y->tree;
}

/* f's trees in the order sortTrees(depth) gives them (num_trees entries, freed by the caller). */
static TreeDepth *sorted_trees(const HForest *f)
{
	TreeDepth *order = xmalloc(((size_t)f->num_trees + 1) * sizeof *order);
	for (uint32_t t = 0; t < f->num_trees; t++)
		order[t] = (TreeDepth){t, hir_tree_depth(f, t)};
	qsort(order, f->num_trees, sizeof *order, by_depth);
	return order;
}

uint32_t *hir_sorted_depths(const HForest *f)
{
	TreeDepth *order = sorted_trees(f);
	uint32_t *depths = xmalloc(((size_t)f->num_trees + 1) * sizeof *depths);
	for (uint32_t t = 0; t < f->num_trees; t++)
		depths[t] = order[t].depth;
	free(order);
	return depths;
}

uint32_t hir_depth_groups(const HForest *f, uint32_t groups, uint32_t unit, uint32_t *ends)
{
	/* Candidate ends: 0, the multiples of unit around each change of depth, the last tree. */
	uint32_t n = f->num_trees, *depth = hir_sorted_depths(f), *at = xmalloc((2 * (size_t)n + 2) * sizeof *at), count = 0;
	uint64_t best[HIR_MAX_DEPTH_GROUPS + 1][2 * 64 + 2];
	uint32_t from[HIR_MAX_DEPTH_GROUPS + 1][2 * 64 + 2], made = 1, last;
	unit = unit ? unit : 1;
	groups = groups < 1 ? 1 : groups > HIR_MAX_DEPTH_GROUPS ? HIR_MAX_DEPTH_GROUPS : groups;
	at[count++] = 0;
	for (uint32_t t = 1; t < n && count < 2 * 64; t++) {
		if (depth[t] == depth[t - 1])
			continue;
		if (t / unit * unit > at[count - 1])
			at[count++] = t / unit * unit;
		if ((t + unit - 1) / unit * unit > at[count - 1] && (t + unit - 1) / unit * unit < n)
			at[count++] = (t + unit - 1) / unit * unit;
	}
	if (n > at[count - 1])
		at[count++] = n;
	/* best[g][j]: fewest steps for trees [0, at[j]) in g groups; each group costs its trees times its deepest. */
	for (uint32_t j = 0; j < count; j++)
		best[1][j] = (uint64_t)at[j] * (at[j] ? depth[at[j] - 1] : 0), from[1][j] = 0;
	for (uint32_t g = 2; g <= groups; g++)
		for (uint32_t j = 0; j < count; j++) {
			best[g][j] = best[g - 1][j], from[g][j] = j; /* an empty last group: fewer groups */
			for (uint32_t i = 1; i < j; i++) {
				uint64_t steps = best[g - 1][i] + (uint64_t)(at[j] - at[i]) * depth[at[j] - 1];
				if (steps < best[g][j])
					best[g][j] = steps, from[g][j] = i;
			}
		}
	/* Walk back from the last tree. */
	last = count - 1;
	ends[0] = n;
	for (uint32_t g = groups; g > 1; g--) {
		uint32_t i = from[g][last];
		if (i != last) {
			memmove(ends + 1, ends, made * sizeof *ends);
			ends[0] = at[i];
			made++;
			last = i;
		}
	}
	free(at);
	free(depth);
	return made;
}

bool hir_depth_groups_size(const HForest *f, const uint32_t *ends, uint32_t n, uint64_t *steps, uint64_t *nodes,
                           uint32_t *deepest)
{
	TreeDepth *order = sorted_trees(f);
	uint32_t *stack = NULL, begin = 0;
	size_t cap = 0;
	*steps = *nodes = 0;
	*deepest = f->num_trees ? order[f->num_trees - 1].depth : 0;
	if (n < 2 || *deepest > 16) {
		free(order);
		return false;
	}
	for (uint32_t g = 0; g < n; g++) {
		uint32_t depth = order[ends[g] - 1].depth;
		*steps += (uint64_t)(ends[g] - begin) * depth;
		for (uint32_t t = begin; t < ends[g]; t++)
			*nodes += padded_tree_nodes(f, order[t].tree, depth, &stack, &cap);
		begin = ends[g];
	}
	free(stack);
	free(order);
	return true;
}

void hir_sort_trees(HForest *f)
{
	TreeDepth *order = sorted_trees(f);
	HTree *trees = xmalloc(((size_t)f->num_trees + 1) * sizeof *trees);
	for (uint32_t t = 0; t < f->num_trees; t++)
		trees[t] = f->trees[order[t].tree];
	memcpy(f->trees, trees, (size_t)f->num_trees * sizeof *trees);
	free(trees);
	free(order);
}

void hir_pad(HForest *f)
{
	uint32_t min, max;
	hir_leaf_depth_range(f, &min, &max);
	hir_pad_trees(f, 0, f->num_trees, max, UINT64_MAX); /* cost_padding_pays bounds it */
}

bool hir_pad_unrolled_walks(HForest *f, Error *e)
{
	const HSchedule *s = &f->schedule;
	uint64_t most = (uint64_t)PAD_MAX_GROWTH * f->num_nodes;
	most = most > PAD_MAX_NODES ? most : PAD_MAX_NODES;
	for (uint32_t v = 0; v < s->num_vars; v++) {
		uint32_t first, end, min, max, depth;
		uint64_t would;
		char where[700], trees[40];
		if (!s->vars[v].has_loop || !s->vars[v].unroll_walk)
			continue;
		hir_schedule_tree_span(s, (int32_t)v, &first, &end);
		hir_trees_leaf_depth_range(f, first, end, &min, &max);
		/* Deeper than the deepest leaf would add steps, not remove tests. */
		depth = s->vars[v].unroll_walk < max ? s->vars[v].unroll_walk : max;
		if (!(would = hir_pad_trees(f, first, end, depth, most)))
			continue;
		if (end - first == 1)
			snprintf(trees, sizeof trees, "tree %u", first);
		else
			snprintf(trees, sizeof trees, "trees %u to %u", first, end - 1);
		return error_set(e, "%s: padding %s so that no leaf is shallower than %u would make the forest %llu nodes, more "
		                    "than %llu; unroll less deep, or walk the deep trees apart (sortTrees(depth) and a split)",
		                 hir_schedule_where(s, (int32_t)v, HDIR_UNROLL_WALK, where, sizeof where), trees, depth,
		                 (unsigned long long)would, (unsigned long long)most);
	}
	return true;
}
