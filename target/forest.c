/*
 * libgrovec's forest building (rt/grove_compile.h): a GroveForest is an HForest that the
 * caller fills tree by tree from arrays, each tree checked as it comes (the readers'
 * rules: children in range and reached once, features in range, finite values), then
 * compiled through the pipeline from its schedule on.
 */
#include "rt/grove_compile.h"
#include "target/compile.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct GroveForest {
	HForest *f;
};

static bool argument(GroveError *err, GroveStatus status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool argument(GroveError *err, GroveStatus status, const char *fmt, ...)
{
	va_list ap;
	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof err->message, fmt, ap);
		va_end(ap);
		err->status = status;
	}
	return false;
}

/* The index of name in the table of n names that name(i) gives, or n. */
static uint32_t named(const char *name, uint32_t n, const char *(*name_of)(uint32_t))
{
	uint32_t i = 0;
	while (i < n && strcmp(name_of(i), name))
		i++;
	return i;
}

static const char *transform_name(uint32_t i) { return hir_transform_name((HTransform)i); }
static const char *category_rule_name(uint32_t i) { return hir_category_rule_name((HCategoryRule)i); }

GroveForest *grove_forest_new(const GroveForestOptions *o, GroveError *err)
{
	uint32_t transform = HTRANSFORM_IDENTITY, rule = HCATEGORY_EXACT;
	GroveForest *forest;
	HForest *f;
	if (!o || o->num_features == 0 || o->num_outputs == 0 || o->num_outputs > 65536)
		return argument(err, GROVE_ERROR_ARGUMENT, "grove_forest_new: %s", !o ? "options is NULL"
		                : "a forest needs at least one feature and 1 to 65536 outputs"), NULL;
	if (o->transform && (transform = named(o->transform, HTRANSFORM_COUNT, transform_name)) == HTRANSFORM_COUNT)
		return argument(err, GROVE_ERROR_ARGUMENT, "grove_forest_new: unknown transform '%s'", o->transform), NULL;
	if (o->category_rule && (rule = named(o->category_rule, HCATEGORY_COUNT, category_rule_name)) == HCATEGORY_COUNT)
		return argument(err, GROVE_ERROR_ARGUMENT, "grove_forest_new: unknown category rule '%s'", o->category_rule),
		       NULL;
	if (o->binary && (o->num_outputs != 1 || !hir_transform_elementwise((HTransform)transform)))
		return argument(err, GROVE_ERROR_ARGUMENT, "grove_forest_new: binary needs one output and a transform of it "
		                                           "alone (identity, sigmoid, ...)"), NULL;
	for (uint32_t k = 0; o->base_score && k < o->num_outputs; k++)
		if (!isfinite(o->base_score[k]))
			return argument(err, GROVE_ERROR_ARGUMENT, "grove_forest_new: base_score[%u] is not finite", k), NULL;
	f = hir_forest_new("forest", o->num_features, o->num_outputs);
	f->transform = (HTransform)transform;
	f->category_rule = (HCategoryRule)rule;
	f->binary = o->binary ? HBINARY_COMPLEMENT : HBINARY_NONE;
	f->aggregate = o->average ? HAGGREGATE_AVERAGE : HAGGREGATE_SUM;
	f->threshold_type = f->leaf_type = o->double_thresholds ? HTYPE_F64 : HTYPE_F32;
	f->rows_float = o->rows_float != 0;
	for (uint32_t k = 0; o->base_score && k < o->num_outputs; k++)
		f->base_score[k] = o->base_score[k];
	forest = xmalloc(sizeof *forest);
	forest->f = f;
	return forest;
}

/* Check the tree's arrays: children in range and each reached once from node 0, features in range, finite values. */
static bool check_tree(const HForest *f, const GroveTreeArrays *t, uint32_t width, GroveError *err)
{
	uint32_t n = t->num_nodes, index = f->num_trees, top = 0, *stack;
	uint8_t *seen;
	bool ok = true;
	if (!t->left || !t->right || !t->feature || !t->threshold || !t->value || n == 0 || n >= 1u << 31)
		return argument(err, GROVE_ERROR_ARGUMENT, "grove_forest_add_tree: tree %u: %s", index,
		                n == 0 || n >= 1u << 31 ? "1 to 2^31 - 1 nodes expected" : "an array is NULL");
	if (t->output >= f->num_outputs || width > f->num_outputs - t->output)
		return argument(err, GROVE_ERROR_ARGUMENT, "grove_forest_add_tree: tree %u: outputs %u to %llu, the forest has %u",
		                index, t->output, (unsigned long long)t->output + width - 1, f->num_outputs);
	seen = xcalloc(n, 1);
	stack = xmalloc(n * sizeof *stack);
	stack[top++] = 0;
	seen[0] = 1;
	while (top && ok) {
		uint32_t i = stack[--top];
		if (t->left[i] < 0) {
			for (uint32_t k = 0; k < width && ok; k++)
				if (!isfinite(t->value[(uint64_t)i * width + k]))
					ok = argument(err, GROVE_ERROR_FORMAT, "tree %u node %u: value %u is not finite", index, i, k);
			continue;
		}
		if (t->feature[i] < 0 || t->feature[i] >= f->num_features) {
			ok = argument(err, GROVE_ERROR_FORMAT, "tree %u node %u: the feature is out of range", index, i);
			break;
		}
		if (t->category_set && t->category_set[i] >= 0 ? t->category_set[i] >= f->num_sets : isnan(t->threshold[i])) {
			ok = argument(err, GROVE_ERROR_FORMAT, "tree %u node %u: %s", index, i,
			              t->category_set && t->category_set[i] >= 0 ? "the category set is out of range"
			                                                         : "the threshold is NaN");
			break;
		}
		for (int side = 0; side < 2 && ok; side++) {
			long long child = side ? t->right[i] : t->left[i];
			if (child <= 0 || child >= n || seen[child])
				ok = argument(err, GROVE_ERROR_FORMAT, "tree %u node %u: %s child %lld %s", index, i, side ? "right" : "left",
				              child, child <= 0 || child >= n ? "is out of range" : "is reached twice");
			else
				seen[stack[top++] = (uint32_t)child] = 1;
		}
	}
	free(seen);
	free(stack);
	return ok;
}

GroveStatus grove_forest_add_tree(GroveForest *forest, const GroveTreeArrays *t, GroveError *err)
{
	HForest *f = forest ? forest->f : NULL;
	uint32_t width = t && t->width ? t->width : 1;
	uint64_t first = 0;
	double *vectors = NULL;
	HNode *nodes;
	if (!f || !t)
		return argument(err, GROVE_ERROR_ARGUMENT, "grove_forest_add_tree: %s is NULL", f ? "tree" : "forest"),
		       GROVE_ERROR_ARGUMENT;
	if (!check_tree(f, t, width, err))
		return err ? err->status : GROVE_ERROR_FORMAT;
	if (width > 1)
		first = hir_leaf_values_add(f, (uint64_t)t->num_nodes * width, &vectors);
	nodes = hir_tree_add(f, t->num_nodes, t->output);
	f->trees[f->num_trees - 1].width = width;
	for (uint32_t i = 0; i < t->num_nodes; i++) {
		HNode *n = &nodes[i];
		if (t->left[i] < 0) {
			n->feature = HIR_LEAF;
			for (uint32_t k = 0; k < width; k++) { /* (float leaves kept as floats) */
				double v = f->leaf_type == HTYPE_F32 ? (double)(float)t->value[(uint64_t)i * width + k]
				                                     : t->value[(uint64_t)i * width + k];
				*(width == 1 ? &n->value : &vectors[(uint64_t)i * width + k]) = v;
			}
			n->vector = width > 1 ? (uint32_t)(first + (uint64_t)i * width) : 0;
			continue;
		}
		n->feature = (int32_t)t->feature[i];
		if (t->category_set && t->category_set[i] >= 0) {
			n->compare = HCMP_IN;
			n->set = (uint32_t)t->category_set[i];
		} else {
			n->compare = HCMP_LE;
			n->value = f->threshold_type == HTYPE_F32 ? (double)(float)t->threshold[i] : t->threshold[i];
		}
		n->missing = HMISSING_NAN;
		n->default_left = t->missing_left && t->missing_left[i];
		n->left = (uint32_t)t->left[i];
		n->right = (uint32_t)t->right[i];
	}
	if (f->aggregate == HAGGREGATE_AVERAGE)
		f->average_count = f->num_trees;
	return GROVE_OK;
}

GroveStatus grove_forest_add_set(GroveForest *forest, const unsigned *words, unsigned num_words, long long *index,
                                 GroveError *err)
{
	uint32_t *copy;
	if (!forest || !index || (!words && num_words))
		return argument(err, GROVE_ERROR_ARGUMENT, "grove_forest_add_set: %s is NULL", !forest ? "forest" : !index ? "index"
		                                                                                            : "words"),
		       GROVE_ERROR_ARGUMENT;
	if (num_words > 1u << 16 || forest->f->num_sets >= 1u << 24)
		return argument(err, GROVE_ERROR_ARGUMENT, "grove_forest_add_set: %s", num_words > 1u << 16
		                ? "a set of more than 2^16 words (2^21 categories)" : "more than 2^24 sets"), GROVE_ERROR_ARGUMENT;
	*index = hir_set_add(forest->f, num_words, &copy);
	if (num_words)
		memcpy(copy, words, num_words * sizeof *copy);
	return GROVE_OK;
}

GroveStatus grove_compile_forest(const GroveForest *forest, const char *out_path, const GroveCompileOptions *options,
                                 GroveError *err)
{
	if (!forest || !forest->f->num_trees)
		return argument(err, GROVE_ERROR_ARGUMENT, "grove_compile_forest: %s", forest ? "the forest has no trees"
		                                                                           : "forest is NULL"), GROVE_ERROR_ARGUMENT;
	return pipeline_compile(NULL, forest->f, out_path, options, err);
}

void grove_forest_free(GroveForest *forest)
{
	if (forest)
		hir_forest_free(forest->f);
	free(forest);
}
