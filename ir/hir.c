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

const char *hir_compare_name(HCompare c) { return c < COUNT_OF(compare_names) ? compare_names[c] : "?"; }
const char *hir_transform_name(HTransform t) { return t < COUNT_OF(transform_names) ? transform_names[t] : "?"; }
const char *hir_type_name(HType t) { return t == HTYPE_F64 ? "f64" : "f32"; }

HForest *hir_forest_new(const char *name, uint32_t num_features, uint32_t num_outputs)
{
	HForest *f = xcalloc(1, sizeof *f);
	f->name = xstrdup(name ? name : "model");
	f->num_features = num_features;
	f->num_outputs = num_outputs;
	f->base_score = xcalloc(num_outputs ? num_outputs : 1, sizeof *f->base_score);
	f->transform = HTRANSFORM_IDENTITY;
	f->threshold_type = HTYPE_F32;
	f->leaf_type = HTYPE_F32;
	hir_schedule_init(&f->schedule, 0);
	return f;
}

void hir_forest_free(HForest *f)
{
	if (!f)
		return;
	free(f->name);
	free(f->nodes);
	free(f->trees);
	free(f->base_score);
	free(f);
}

HNode *hir_tree_add(HForest *f, uint32_t num_nodes, uint32_t output)
{
	HTree *t;
	GROW(f->trees, (size_t)f->num_trees + 1, f->trees_cap);
	GROW(f->nodes, f->num_nodes + num_nodes, f->nodes_cap);
	t = &f->trees[f->num_trees++];
	t->first_node = f->num_nodes;
	t->num_nodes = num_nodes;
	t->output = output;
	memset(f->nodes + f->num_nodes, 0, num_nodes * sizeof *f->nodes);
	f->num_nodes += num_nodes;
	if (f->schedule.num_log == 0) /* the plain schedule follows the forest until directives are applied */
		f->schedule.num_trees = f->num_trees;
	return f->nodes + t->first_node;
}

/* The depths of the shallowest and deepest leaves of tree t; *stack is scratch space of *cap entries. */
static void leaf_depths(const HForest *f, uint32_t t, uint32_t **stack, size_t *cap, uint32_t *min, uint32_t *max)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t top = 0, *s;
	GROW(*stack, 2 * (size_t)f->trees[t].num_nodes + 2, *cap);
	s = *stack;
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
		s[top++] = nodes[id].left;
		s[top++] = depth + 1;
		s[top++] = nodes[id].right;
		s[top++] = depth + 1;
	}
}

uint32_t hir_tree_depth(const HForest *f, uint32_t t)
{
	uint32_t *stack = NULL, min, max;
	size_t cap = 0;
	leaf_depths(f, t, &stack, &cap, &min, &max);
	free(stack);
	return max;
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
		leaf_depths(f, t, &stack, &cap, &tree_min, &tree_max);
		*min = tree_min < *min ? tree_min : *min;
		*max = tree_max > *max ? tree_max : *max;
	}
	free(stack);
}

/* Walk tree t from its root, checking that every reachable node is reached once. */
static bool verify_tree(const HForest *f, uint32_t t, uint8_t *seen, uint32_t *stack, Error *e)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t n = f->trees[t].num_nodes, top = 0;

	if (n == 0)
		return error_set(e, "tree %u: no nodes", t);
	if (f->trees[t].output >= f->num_outputs)
		return error_set(e, "tree %u: output %u out of range (the model has %u)", t, f->trees[t].output, f->num_outputs);
	memset(seen, 0, n);
	stack[top++] = 0;
	seen[0] = 1;
	while (top) {
		uint32_t id = stack[--top];
		const HNode *node = &nodes[id];
		/* An infinite threshold is a legal split (everything goes one way); NaN never is. */
		if (isnan(node->value) || (node->feature == HIR_LEAF && isinf(node->value)))
			return error_set(e, "tree %u node %u: %s is %s", t, id, node->feature == HIR_LEAF ? "leaf value" : "threshold",
			                 isnan(node->value) ? "NaN" : "infinite");
		if (node->feature == HIR_LEAF)
			continue;
		if (node->feature < 0 || (uint32_t)node->feature >= f->num_features)
			return error_set(e, "tree %u node %u: feature %d out of range (the model has %u)", t, id, node->feature, f->num_features);
		if (node->compare > HCMP_LE)
			return error_set(e, "tree %u node %u: unknown comparison %u", t, id, node->compare);
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

void hir_print(FILE *out, const HForest *f)
{
	fprintf(out, "forest features=%u outputs=%u trees=%u transform=%s threshold=%s leaf=%s\n", f->num_features,
	        f->num_outputs, f->num_trees, hir_transform_name(f->transform), hir_type_name(f->threshold_type),
	        hir_type_name(f->leaf_type));
	fputs("base_score", out);
	for (uint32_t o = 0; o < f->num_outputs; o++) {
		fputc(' ', out);
		print_value(out, f->base_score[o], f->leaf_type);
	}
	fputc('\n', out);
	print_schedule(out, &f->schedule);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		const HNode *nodes = hir_tree_nodes(f, t);
		fprintf(out, "tree %u output=%u nodes=%u {\n", t, f->trees[t].output, f->trees[t].num_nodes);
		for (uint32_t i = 0; i < f->trees[t].num_nodes; i++) {
			const HNode *n = &nodes[i];
			fprintf(out, "  %u: ", i);
			if (n->feature == HIR_LEAF) {
				fputs("leaf ", out);
				print_value(out, n->value, f->leaf_type);
			} else {
				fprintf(out, "x[%d] %s ", n->feature, hir_compare_name((HCompare)n->compare));
				print_value(out, n->value, f->threshold_type);
				fprintf(out, " ? %u : %u, missing %s", n->left, n->right, n->default_left ? "left" : "right");
			}
			fputc('\n', out);
		}
		fputs("}\n", out);
	}
}
