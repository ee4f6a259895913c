/* HIR: building, verifying and printing forests and their schedules. */
#include "ir/hir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const compare_names[] = {
#define X(name, text) text,
	HIR_COMPARES(X)
#undef X
};

static const char *const transform_names[] = {
#define X(name, text) text,
	HIR_TRANSFORMS(X)
#undef X
};

static const char *const missing_names[] = {
#define X(name, text) text,
	HIR_MISSINGS(X)
#undef X
};

static const char *const category_rule_names[] = {
#define X(name, text) text,
	HIR_CATEGORY_RULES(X)
#undef X
};

static const char *const aggregate_names[] = {
#define X(name, text) text,
	HIR_AGGREGATES(X)
#undef X
};

static const char *const binary_names[] = {
#define X(name, text) text,
	HIR_BINARIES(X)
#undef X
};

const char *hir_binary_name(HBinary b) { return b < COUNT_OF(binary_names) ? binary_names[b] : "?"; }

uint32_t hir_num_predictions(const HForest *f)
{
	return f->binary != HBINARY_NONE ? 2 : f->transform == HTRANSFORM_ARGMAX ? 1 : f->num_outputs;
}

bool hir_transform_elementwise(HTransform t)
{
	return t != HTRANSFORM_SOFTMAX && t != HTRANSFORM_SOFTMAX_ZERO && t != HTRANSFORM_ARGMAX && t < HTRANSFORM_COUNT;
}

uint32_t hir_num_margins(const HForest *f) { return f->binary == HBINARY_MIRROR ? 2 : f->num_outputs; }

const char *hir_compare_name(HCompare c) { return c < COUNT_OF(compare_names) ? compare_names[c] : "?"; }
const char *hir_transform_name(HTransform t) { return t < COUNT_OF(transform_names) ? transform_names[t] : "?"; }
const char *hir_missing_name(HMissing m) { return m < COUNT_OF(missing_names) ? missing_names[m] : "?"; }
const char *hir_category_rule_name(HCategoryRule r) { return r < COUNT_OF(category_rule_names) ? category_rule_names[r] : "?"; }
const char *hir_aggregate_name(HAggregate a) { return a < COUNT_OF(aggregate_names) ? aggregate_names[a] : "?"; }
const char *hir_type_name(HType t) { return t == HTYPE_F64 ? "f64" : "f32"; }

HForest *hir_forest_new(const char *name, uint32_t num_features, uint32_t num_outputs)
{
	HForest *f = xcalloc(1, sizeof *f);
	f->name = xstrdup(name ? name : "model");
	f->num_features = num_features;
	f->num_outputs = num_outputs;
	f->base_score = xcalloc(num_outputs ? num_outputs : 1, sizeof *f->base_score);
	f->aggregate = HAGGREGATE_SUM;
	f->average_count = 1;
	f->transform = HTRANSFORM_IDENTITY;
	f->sigmoid_alpha = 1.0;
	f->category_rule = HCATEGORY_NONNEGATIVE;
	f->threshold_type = HTYPE_F32;
	f->leaf_type = HTYPE_F32;
	hir_schedule_init(&f->schedule, 0);
	return f;
}

/* A malloc'ed copy of n elements of size elem at p (NULL when n is 0). */
static void *copy_array(const void *p, size_t n, size_t elem)
{
	return n ? memcpy(xmalloc(n * elem), p, n * elem) : NULL;
}

HForest *hir_forest_copy(const HForest *f)
{
	HForest *c = xmalloc(sizeof *c);
	*c = *f;
	c->name = xstrdup(f->name);
	c->nodes = copy_array(f->nodes, f->num_nodes, sizeof *f->nodes);
	c->trees = copy_array(f->trees, f->num_trees, sizeof *f->trees);
	c->base_score = copy_array(f->base_score, f->num_outputs ? f->num_outputs : 1, sizeof *f->base_score);
	c->sets = copy_array(f->sets, f->num_sets, sizeof *f->sets);
	c->set_words = copy_array(f->set_words, f->num_set_words, sizeof *f->set_words);
	c->leaf_values = copy_array(f->leaf_values, f->num_leaf_values, sizeof *f->leaf_values);
	c->labels.ints = copy_array(f->labels.ints, f->labels.ints ? f->labels.count : 0, sizeof *f->labels.ints);
	c->labels.strings = strings_copy(f->labels.strings, f->labels.count);
	c->feature_names = strings_copy(f->feature_names, f->num_features);
	c->category_values = category_values_copy(&f->category_values, f->num_features);
	c->nodes_cap = f->num_nodes;
	c->trees_cap = f->num_trees;
	c->sets_cap = f->num_sets;
	c->set_words_cap = f->num_set_words;
	c->leaf_values_cap = f->num_leaf_values;
	return c;
}

void hir_forest_free(HForest *f)
{
	if (!f)
		return;
	free(f->name);
	free(f->nodes);
	free(f->trees);
	free(f->base_score);
	free(f->sets);
	free(f->set_words);
	free(f->leaf_values);
	free(f->labels.ints);
	strings_free(f->labels.strings, f->labels.count);
	strings_free(f->feature_names, f->num_features);
	category_values_free(&f->category_values, f->num_features);
	free(f);
}

HNode *hir_tree_add(HForest *f, uint32_t num_nodes, uint32_t output)
{
	HTree *t;
	GROW(f->trees, (size_t)f->num_trees + 1, f->trees_cap);
	GROW(f->nodes, f->num_nodes + num_nodes, f->nodes_cap);
	t = &f->trees[f->num_trees++];
	*t = (HTree){.first_node = f->num_nodes, .num_nodes = num_nodes, .output = output, .width = 1}; /* (no depths known) */
	memset(f->nodes + f->num_nodes, 0, num_nodes * sizeof *f->nodes);
	f->num_nodes += num_nodes;
	if (f->schedule.num_log == 0) /* the plain schedule follows the forest until directives are applied */
		f->schedule.num_trees = f->num_trees;
	return f->nodes + t->first_node;
}

uint32_t hir_set_add(HForest *f, uint32_t num_words, uint32_t **words)
{
	HSet *set;
	GROW(f->sets, (size_t)f->num_sets + 1, f->sets_cap);
	GROW(f->set_words, f->num_set_words + num_words + 1, f->set_words_cap); /* + 1: allocated for an empty set too */
	set = &f->sets[f->num_sets];
	set->first = f->num_set_words;
	set->num_words = num_words;
	memset(f->set_words + set->first, 0, (size_t)num_words * sizeof *f->set_words);
	f->num_set_words += num_words;
	*words = f->set_words + set->first;
	return f->num_sets++;
}

uint64_t hir_leaf_values_add(HForest *f, uint64_t n, double **values)
{
	uint64_t first = f->num_leaf_values;
	GROW(f->leaf_values, first + n + 1, f->leaf_values_cap); /* + 1: allocated for n = 0 too */
	memset(f->leaf_values + first, 0, n * sizeof *f->leaf_values);
	f->num_leaf_values += n;
	*values = f->leaf_values + first;
	return first;
}

bool hir_set_has(const HForest *f, uint32_t s, uint64_t c)
{
	const HSet *set = &f->sets[s];
	return c / 32 < set->num_words && (f->set_words[set->first + c / 32] >> (c % 32) & 1);
}

bool hir_zero_goes_left(const HForest *f, const HNode *s)
{
	switch ((HCompare)s->compare) {
	case HCMP_LT: return 0.0 < s->value;
	case HCMP_LE: return 0.0 <= s->value;
	case HCMP_GT: return 0.0 > s->value;
	case HCMP_GE: return 0.0 >= s->value;
	case HCMP_EQ: return 0.0 == s->value;
	case HCMP_NE: return 0.0 != s->value;
	default: return hir_set_has(f, s->set, 0);
	}
}

/*
 * The shallowest and deepest leaf of tree t, in splits or (tiles) in the tiles of a
 * tiled forest; *stack is scratch space of *cap entries. Most trees list every node
 * before its children (the formats' own order, and the passes'): one pass in order
 * gives each child its depth then, sequentially (several passes walk every tree, and
 * the stack's walk took a noticeable part of a large forest's compile; measured:
 * docs/performance-notes.md, Leaf depths in one pass). Other trees are walked.
 */
static void walk_leaf_depths(const HForest *f, uint32_t t, bool tiles, uint32_t **stack, size_t *cap, uint32_t *min, uint32_t *max)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t n = f->trees[t].num_nodes, top = 0, *s, i;
	GROW(*stack, 2 * (size_t)n + 2, *cap);
	s = *stack;
	*min = UINT32_MAX;
	*max = 0;
	for (i = 1; i < n; i++) /* depths of nodes below the root: none reached yet */
		s[i] = UINT32_MAX;
	s[0] = 0;
	for (i = 0; i < n; i++) {
		uint32_t depth = s[i];
		if (depth == UINT32_MAX) /* in no tree (hir_verify refuses them) */
			continue;
		if (nodes[i].feature == HIR_LEAF) {
			*min = depth < *min ? depth : *min;
			*max = depth > *max ? depth : *max;
			continue;
		}
		if (nodes[i].left <= i || nodes[i].right <= i || nodes[i].left >= n || nodes[i].right >= n)
			break; /* a child listed first: walk the tree */
		depth += !tiles || !f->tile_size || nodes[i].tile;
		s[nodes[i].left] = s[nodes[i].right] = depth;
	}
	if (i == n)
		return;
	*min = UINT32_MAX;
	*max = 0;
	s[top++] = 0; /* (node, depth) pairs */
	s[top++] = 0;
	while (top) {
		uint32_t depth = s[--top], id = s[--top];
		if (nodes[id].feature == HIR_LEAF) {
			*min = depth < *min ? depth : *min;
			*max = depth > *max ? depth : *max;
			continue;
		}
		depth += !tiles || !f->tile_size || nodes[id].tile;
		s[top++] = nodes[id].left;
		s[top++] = depth;
		s[top++] = nodes[id].right;
		s[top++] = depth;
	}
}

#if defined(__SANITIZE_ADDRESS__)
#define CHECK_KEPT_DEPTHS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHECK_KEPT_DEPTHS 1
#endif
#endif

/*
 * leaf_depths, kept in the tree (HTree.depths). Builds with a sanitizer (the test suite's
 * ASan run) walk the tree again and check what was kept: a pass that reshaped a tree and
 * did not call hir_tree_reshaped is caught there.
 */
static void leaf_depths(const HForest *f, uint32_t t, bool tiles, uint32_t **stack, size_t *cap, uint32_t *min, uint32_t *max)
{
	uint32_t *kept = ((HTree *)&f->trees[t])->depths[tiles && f->tile_size]; /* a cache: the forest is the same */
	if (kept[1]) {
		*min = kept[0] - 1;
		*max = kept[1] - 1;
#ifdef CHECK_KEPT_DEPTHS
		uint32_t walked_min, walked_max;
		walk_leaf_depths(f, t, tiles, stack, cap, &walked_min, &walked_max);
		if (walked_min != *min || walked_max != *max)
			die("tree %u: kept leaf depths %u..%u, but they are %u..%u (a pass reshaped it without hir_tree_reshaped)", t, *min,
			    *max, walked_min, walked_max);
#endif
		return;
	}
	walk_leaf_depths(f, t, tiles, stack, cap, min, max);
	kept[0] = *min + 1; /* (UINT32_MAX, no leaf reached, wraps to 0 and back) */
	kept[1] = *max + 1;
}

uint64_t hir_trees_splits(const HForest *f, uint32_t first, uint32_t end)
{
	uint64_t splits = 0;
	for (uint32_t t = first; t < end && t < f->num_trees; t++)
		splits += hir_tree_splits(f, t);
	return splits;
}

uint32_t hir_tree_depth(const HForest *f, uint32_t t)
{
	uint32_t *stack = NULL, min, max;
	size_t cap = 0;
	leaf_depths(f, t, false, &stack, &cap, &min, &max);
	free(stack);
	return max;
}

bool hir_splits_alike(const HNode *a, const HNode *b)
{
	return a->feature == b->feature && a->compare == b->compare && a->missing == b->missing &&
	       a->default_left == b->default_left && (a->compare == HCMP_IN ? a->set == b->set : a->value == b->value);
}

bool hir_tree_symmetric(const HForest *f, uint32_t t, uint32_t *level, uint32_t *queue)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t head = 0, tail = 0, width = 1, depth = 0;
	queue[tail++] = 0;
	while (head < tail) { /* level by level: the level's nodes are queue[head, head + width) */
		const HNode *first = &nodes[queue[head]];
		for (uint32_t i = head; i < head + width; i++) {
			const HNode *n = &nodes[queue[i]];
			if ((n->feature == HIR_LEAF) != (first->feature == HIR_LEAF) || (n->feature != HIR_LEAF && !hir_splits_alike(n, first)))
				return false;
			if (n->feature != HIR_LEAF) {
				queue[tail++] = n->left;
				queue[tail++] = n->right;
			}
		}
		if (first->feature != HIR_LEAF)
			level[depth++] = queue[head];
		head += width;
		width *= 2;
		if (depth > HIR_MAX_WALK_STEPS)
			return false;
	}
	return true;
}

bool hir_forest_symmetric(const HForest *f)
{
	uint32_t level[HIR_MAX_WALK_STEPS + 1], *queue;
	uint64_t most = 1;
	bool all = f->num_trees > 0;
	for (uint32_t t = 0; t < f->num_trees; t++)
		most = f->trees[t].num_nodes > most ? f->trees[t].num_nodes : most;
	queue = xmalloc(most * sizeof *queue);
	for (uint32_t t = 0; t < f->num_trees && all; t++)
		all = hir_tree_symmetric(f, t, level, queue);
	free(queue);
	return all;
}

bool hir_categories_alone(const HForest *f)
{
	uint8_t *kinds = xcalloc(f->num_features ? f->num_features : 1, 1); /* per feature: bit 0 IN splits, bit 1 others */
	bool alone = true;
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		const HNode *n = &f->nodes[i];
		if (n->feature != HIR_LEAF)
			kinds[n->feature] |= n->compare == HCMP_IN ? 1 : 2;
		alone = alone && !(n->feature != HIR_LEAF && n->compare == HCMP_IN && n->missing == HMISSING_ZERO);
	}
	for (uint32_t j = 0; alone && j < f->num_features; j++)
		alone = kinds[j] != 3;
	free(kinds);
	return alone;
}

void hir_leaf_depth_range(const HForest *f, uint32_t *min, uint32_t *max)
{
	hir_trees_leaf_depth_range(f, 0, f->num_trees, min, max);
}

void hir_trees_leaf_depth_range(const HForest *f, uint32_t first, uint32_t end, uint32_t *min, uint32_t *max)
{
	uint32_t *stack = NULL, tree_min, tree_max;
	size_t cap = 0;
	*min = first < end ? UINT32_MAX : 0;
	*max = 0;
	for (uint32_t t = first; t < end; t++) {
		leaf_depths(f, t, true, &stack, &cap, &tree_min, &tree_max);
		*min = tree_min < *min ? tree_min : *min;
		*max = tree_max > *max ? tree_max : *max;
	}
	free(stack);
}

/* Check a leaf's value (or its vector's values) for tree t. */
static bool verify_leaf(const HForest *f, uint32_t t, uint32_t id, const HNode *node, Error *e)
{
	const HTree *tree = &f->trees[t];
	/* Only MIN and MAX have an infinite identity, which vectors use for "adds nothing". */
	double identity = f->aggregate == HAGGREGATE_MIN ? INFINITY : f->aggregate == HAGGREGATE_MAX ? -INFINITY : 0;
	if (tree->width == 1) {
		if (!isfinite(node->value))
			return error_set(e, "tree %u node %u: leaf value is %s", t, id, isnan(node->value) ? "NaN" : "infinite");
		return true;
	}
	if (node->vector > f->num_leaf_values || tree->width > f->num_leaf_values - node->vector)
		return error_set(e, "tree %u node %u: leaf vector %u..%u out of range (the model has %llu leaf values)", t, id,
		                 node->vector, node->vector + tree->width - 1, (unsigned long long)f->num_leaf_values);
	for (uint32_t k = 0; k < tree->width; k++) {
		double v = f->leaf_values[node->vector + k];
		if (!isfinite(v) && v != identity)
			return error_set(e, "tree %u node %u: leaf value %u is %s", t, id, k, isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf");
	}
	return true;
}

/* Check a split's test for tree t. */
static bool verify_split(const HForest *f, uint32_t t, uint32_t id, const HNode *node, Error *e)
{
	if (node->feature < 0 || (uint32_t)node->feature >= f->num_features)
		return error_set(e, "tree %u node %u: feature %d out of range (the model has %u)", t, id, node->feature, f->num_features);
	if (node->compare >= HCMP_COUNT)
		return error_set(e, "tree %u node %u: unknown comparison %u", t, id, node->compare);
	if (node->missing >= HMISSING_COUNT)
		return error_set(e, "tree %u node %u: unknown missing-value rule %u", t, id, node->missing);
	if (node->compare == HCMP_IN && node->set >= f->num_sets)
		return error_set(e, "tree %u node %u: category set %u out of range (the model has %u)", t, id, node->set, f->num_sets);
	/* An infinite threshold is a legal split (everything goes one way); NaN never is. */
	if (node->compare != HCMP_IN && isnan(node->value))
		return error_set(e, "tree %u node %u: threshold is NaN", t, id);
	return true;
}

/* Walk tree t from its root, checking that every reachable node is reached once. */
static bool verify_tree(const HForest *f, uint32_t t, uint8_t *seen, uint32_t *stack, Error *e)
{
	const HTree *tree = &f->trees[t];
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t n = tree->num_nodes, top = 0;

	if (n == 0)
		return error_set(e, "tree %u: no nodes", t);
	if (tree->width == 0)
		return error_set(e, "tree %u: adds to no outputs", t);
	if (tree->output >= f->num_outputs || tree->width > f->num_outputs - tree->output)
		return tree->width == 1 ? error_set(e, "tree %u: output %u out of range (the model has %u)", t, tree->output, f->num_outputs)
		                        : error_set(e, "tree %u: outputs %u to %llu out of range (the model has %u)", t, tree->output,
		                                    (unsigned long long)tree->output + tree->width - 1, f->num_outputs);
	memset(seen, 0, n);
	stack[top++] = 0;
	seen[0] = 1;
	while (top) {
		uint32_t id = stack[--top];
		const HNode *node = &nodes[id];
		if (node->feature == HIR_LEAF) {
			if (!verify_leaf(f, t, id, node, e))
				return false;
			continue;
		}
		if (!verify_split(f, t, id, node, e))
			return false;
		for (int side = 0; side < 2; side++) {
			uint32_t child = side ? node->right : node->left;
			if (child == 0 || child >= n)
				return error_set(e, "tree %u node %u: %s child %u out of range (the tree has %u nodes)", t, id, side ? "right" : "left", child, n);
			if (seen[child])
				return error_set(e, "tree %u node %u: node %u is reached twice (a cycle or a shared subtree)", t, id, child);
			seen[child] = 1;
			stack[top++] = child;
		}
	}
	return true;
}

bool hir_verify(const HForest *f, Error *e)
{
	uint32_t max_nodes = 1;
	uint8_t *seen;
	uint32_t *stack;
	bool ok = true;

	if (f->num_outputs == 0)
		return error_set(e, "model has no outputs");
	if (f->aggregate >= HAGGREGATE_COUNT || f->transform >= HTRANSFORM_COUNT || f->category_rule >= HCATEGORY_COUNT ||
	    f->binary >= HBINARY_COUNT)
		return error_set(e, "unknown aggregate, transform, category rule or binary expansion");
	if (f->binary != HBINARY_NONE &&
	    (f->num_outputs != 1 || !hir_transform_elementwise(f->transform)))
		return error_set(e, "a binary expansion needs one margin and a transform of each margin alone (not %s)",
		                 hir_transform_name(f->transform));
	if (f->aggregate == HAGGREGATE_AVERAGE && f->average_count == 0)
		return error_set(e, "average over 0 trees");
	if (f->labels.count && (!f->labels.ints == !f->labels.strings || f->labels.margin >= (int32_t)hir_num_margins(f) ||
	                        (f->labels.margin < 0 ? f->labels.count != f->num_outputs : f->labels.count != 2) ||
	                        isnan(f->labels.threshold)))
		return error_set(e, "class labels: %u labels do not fit the model's %u margins", f->labels.count, f->num_outputs);
	if (!isfinite(f->sigmoid_alpha))
		return error_set(e, "sigmoid scale is %g", f->sigmoid_alpha);
	for (uint32_t s = 0; s < f->num_sets; s++)
		if (f->sets[s].first > f->num_set_words || f->sets[s].num_words > f->num_set_words - f->sets[s].first)
			return error_set(e, "category set %u out of range", s);
	for (uint32_t o = 0; o < f->num_outputs; o++)
		if (!isfinite(f->base_score[o]))
			return error_set(e, "base score %u is %g", o, f->base_score[o]);
	for (uint32_t t = 0; t < f->num_trees; t++)
		if (f->trees[t].num_nodes > max_nodes)
			max_nodes = f->trees[t].num_nodes;
	seen = xmalloc(max_nodes);
	stack = xmalloc(max_nodes * sizeof *stack);
	for (uint32_t t = 0; ok && t < f->num_trees; t++)
		ok = verify_tree(f, t, seen, stack, e);
	free(seen);
	free(stack);
	return ok;
}

/* Print the schedule as the directives that build it from the two roots. */
static void print_schedule(FILE *out, const HSchedule *s)
{
	fputs("schedule {\n", out);
	hir_schedule_print(out, s, "  ");
	fputs("}\n", out);
}

/* Print a value at the precision it is kept in: shortest text that reads back exactly. */
static void print_value(FILE *out, double v, HType type)
{
	fprintf(out, type == HTYPE_F32 ? "%.9g" : "%.17g", v);
}

/* Print the categories of set s as {c1,c2,...}. */
static void print_set(FILE *out, const HForest *f, uint32_t s)
{
	const char *sep = "";
	fputc('{', out);
	for (uint64_t c = 0; c < (uint64_t)f->sets[s].num_words * 32; c++)
		if (hir_set_has(f, s, c)) {
			fprintf(out, "%s%llu", sep, (unsigned long long)c);
			sep = ",";
		}
	fputc('}', out);
}

/* Print node n of a tree of the given width. */
static void print_node(FILE *out, const HForest *f, const HNode *n, uint32_t width)
{
	if (n->feature == HIR_LEAF) {
		fputs("leaf ", out);
		if (width == 1) {
			print_value(out, n->value, f->leaf_type);
			return;
		}
		for (uint32_t k = 0; k < width; k++) {
			fputs(k ? "," : "[", out);
			print_value(out, f->leaf_values[n->vector + k], f->leaf_type);
		}
		fputc(']', out);
		return;
	}
	if (f->tile_size && n->tile)
		fputs("tile ", out);
	fprintf(out, "x[%d] %s ", n->feature, hir_compare_name((HCompare)n->compare));
	if (n->compare == HCMP_IN)
		print_set(out, f, n->set);
	else
		print_value(out, n->value, f->threshold_type);
	fprintf(out, " ? %u : %u, %s %s", n->left, n->right, n->missing == HMISSING_NAN ? "missing" : "zero or missing",
	        n->default_left ? "left" : "right");
}

/* Print text in double quotes after `before`, a quote or backslash escaped by a backslash, other control bytes as \xHH. */
static void print_string(FILE *out, const char *before, const char *text)
{
	fprintf(out, "%s\"", before);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
	fputc('"', out);
}

void hir_print(FILE *out, const HForest *f)
{
	fprintf(out, "forest features=%u outputs=%u trees=%u transform=%s threshold=%s leaf=%s", f->num_features,
	        f->num_outputs, f->num_trees, hir_transform_name(f->transform), hir_type_name(f->threshold_type),
	        hir_type_name(f->leaf_type));
	/* What most models leave at its default is printed only when set. */
	if (f->sigmoid_alpha != 1.0)
		fprintf(out, " sigmoid_alpha=%.17g", f->sigmoid_alpha);
	if (f->aggregate != HAGGREGATE_SUM)
		fprintf(out, " aggregate=%s", hir_aggregate_name(f->aggregate));
	if (f->aggregate == HAGGREGATE_AVERAGE)
		fprintf(out, "/%u", f->average_count);
	if (f->binary != HBINARY_NONE)
		fprintf(out, " binary=%s", hir_binary_name(f->binary));
	if (f->rows_float)
		fputs(" rows=f32", out);
	if (f->num_sets)
		fprintf(out, " categories=%s", hir_category_rule_name(f->category_rule));
	if (f->tile_size)
		fprintf(out, " tiles=%u", f->tile_size);
	if (f->labels.count) {
		fputs(" labels=", out);
		for (uint32_t k = 0; k < f->labels.count; k++) {
			fputs(k ? "," : "[", out);
			if (f->labels.strings)
				print_string(out, "", f->labels.strings[k]);
			else
				fprintf(out, "%lld", (long long)f->labels.ints[k]);
		}
		fputc(']', out);
		if (f->labels.margin >= 0)
			fprintf(out, " by margin %d > %.17g", f->labels.margin, f->labels.threshold);
	}
	if (f->feature_names) {
		fputs("\nfeature_names", out);
		for (uint32_t i = 0; i < f->num_features; i++)
			print_string(out, " ", f->feature_names[i]);
	}
	if (f->category_values.counts) {
		char *const *value = f->category_values.values;
		fprintf(out, "\ncategory_values unseen=%s", f->category_values.unseen_missing ? "missing" : "refused");
		for (uint32_t i = 0; i < f->num_features; i++) {
			if (f->category_values.counts[i])
				fprintf(out, " x[%u]", i);
			for (uint32_t k = 0; k < f->category_values.counts[i]; k++)
				print_string(out, " ", *value++);
		}
	}
	fputs("\nbase_score", out);
	for (uint32_t o = 0; o < f->num_outputs; o++) {
		fputc(' ', out);
		print_value(out, f->base_score[o], f->leaf_type);
	}
	fputc('\n', out);
	print_schedule(out, &f->schedule);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		const HTree *tree = &f->trees[t];
		fprintf(out, "tree %u output=%u", t, tree->output);
		if (tree->width > 1)
			fprintf(out, " width=%u", tree->width);
		fprintf(out, " nodes=%u {\n", tree->num_nodes);
		for (uint32_t i = 0; i < tree->num_nodes; i++) {
			fprintf(out, "  %u: ", i);
			print_node(out, f, &hir_tree_nodes(f, t)[i], tree->width);
			fputc('\n', out);
		}
		fputs("}\n", out);
	}
}
