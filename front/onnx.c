/*
 * ONNX-ML tree ensembles -> HIR.
 *
 * The model is a protobuf (onnx.proto), read in place by front/onnx_proto.c. Its graph
 * holds one ai.onnx.ml tree ensemble node:
 *
 *   TreeEnsembleRegressor, TreeEnsembleClassifier (opsets 1-3)
 *     nodes_treeids, nodes_nodeids     a node is named by (tree id, node id), any numbering
 *     nodes_modes                      BRANCH_LEQ/LT/GTE/GT/EQ/NEQ or LEAF
 *     nodes_featureids, nodes_values   the split: x[feature] MODE value (or nodes_values_as_tensor: doubles)
 *     nodes_truenodeids/falsenodeids   node ids of the children in the same tree
 *     nodes_missing_value_tracks_true  a NaN takes the true branch (1) or the false one (0, the default)
 *     target_* / class_*               treeids, nodeids, ids, weights: what each leaf adds to which output
 *     base_values, post_transform, aggregate_function (regressor), n_targets / classlabels_*
 *   TreeEnsemble (opset 5)
 *     tree_roots                       index of each tree's root in nodes_*
 *     nodes_* (interior nodes only)    modes (uint8 tensor; 6 = BRANCH_MEMBER), featureids, splits
 *                                      (tensor), truenodeids/falsenodeids with nodes_trueleafs/falseleafs
 *                                      saying whether they index nodes_* or leaf_*
 *     leaf_targetids, leaf_weights     one output and one value per leaf
 *     membership_values                the sets of BRANCH_MEMBER nodes, in node order, NaN between them
 *
 * The trees are front/onnx_trees.c's: the true branch is HIR's left child, every tree is
 * renumbered breadth-first from its root. Decisions follow the ONNX specification where onnxruntime departs from it
 * (docs/formats.md, ONNX-ML, lists where): NaN goes to the false branch of BRANCH_NEQ unless missing
 * values track true, LOGISTIC / SOFTMAX apply to single-target regressors too, and
 * BRANCH_MEMBER tests x, not trunc(x).
 *
 * A classifier keeps its labels and onnxruntime's rule for a row's class (read_labels).
 * The graph around the ensemble is front/onnx_graph.c's; attributes as numbers,
 * front/onnx_values.c's.
 */
#include "front/onnx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OUTPUTS 65536
/* post_transform names (opsets 1-3), in the order of opset 5's codes. */
static const struct {
	const char *name;
	HTransform transform;
} transforms[] = {
	{"NONE", HTRANSFORM_IDENTITY}, {"SOFTMAX", HTRANSFORM_SOFTMAX}, {"LOGISTIC", HTRANSFORM_SIGMOID},
	{"SOFTMAX_ZERO", HTRANSFORM_SOFTMAX_ZERO}, {"PROBIT", HTRANSFORM_PROBIT},
};

/* aggregate_function names (opsets 1-3), in the order of opset 5's codes. */
static const struct {
	const char *name;
	HAggregate aggregate;
} aggregates[] = {
	{"AVERAGE", HAGGREGATE_AVERAGE}, {"SUM", HAGGREGATE_SUM}, {"MIN", HAGGREGATE_MIN}, {"MAX", HAGGREGATE_MAX},
};

bool onnx_fail(Reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	front_fail(r->e, r->name, "", fmt, ap);
	va_end(ap);
	return false;
}

void onnx_reader_free(Reader *r)
{
	free(r->items);
	free(r->tree_ids);
	free(r->node_ids);
	free(r->weights);
	free(r->weight_items);
	free(r->roots);
	free(r->stamp);
	free(r->referenced);
	free(r->order);
	free(r->nodes);
	free(r->ints);
	free(r->doubles);
}

/* Index of `name` in table (of n entries with a .name first member, `stride` bytes apart), or -1. */
static int find_name(const void *table, size_t n, size_t stride, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(*(const char *const *)((const char *)table + i * stride), name) == 0)
			return (int)i;
	return -1;
}
#define FIND(table, name) find_name((table), COUNT_OF(table), sizeof(table)[0], (name))

/* aggregate_function and post_transform: strings in opsets 1-3, codes in opset 5. */
static bool read_aggregate_transform(Reader *r, bool classifier, HForest *f)
{
	char name[32];
	int k;
	if (r->v5) {
		int64_t a, t;
		if (!onnx_read_int(r, "aggregate_function", 0, COUNT_OF(aggregates) - 1, 1, &a) ||
		    !onnx_read_int(r, "post_transform", 0, COUNT_OF(transforms) - 1, 0, &t))
			return false;
		f->aggregate = aggregates[a].aggregate;
		f->transform = transforms[t].transform;
		return true;
	}
	if (!classifier) { /* classifiers always sum */
		if (!onnx_read_string(r, "aggregate_function", "SUM", name, sizeof name))
			return false;
		if ((k = FIND(aggregates, name)) < 0)
			return onnx_fail(r, "%s.aggregate_function: unknown function '%s' (expected AVERAGE, SUM, MIN or MAX)", r->op, name);
		f->aggregate = aggregates[k].aggregate;
	}
	if (!onnx_read_string(r, "post_transform", "NONE", name, sizeof name))
		return false;
	if ((k = FIND(transforms, name)) < 0)
		return onnx_fail(r, "%s.post_transform: unknown transform '%s' (expected NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT)",
		            r->op, name);
	f->transform = transforms[k].transform;
	return true;
}

/* base_values (or base_values_as_tensor): none, or one per output. */
static bool read_base_values(Reader *r, bool classifier, HForest *f)
{
	Values base;
	if (r->v5)
		return true;
	if (!onnx_read_values(r, "base_values", true, false, &base, NULL))
		return false;
	/* Two classes may have one base value, for class 0 (check_binary says what onnxruntime does with them). */
	if (base.present && base.count && base.count != f->num_outputs && !(classifier && f->num_outputs == 2 && base.count == 1))
		return onnx_fail(r, "%s.%s: %zu values for %u outputs", r->op, base.name, base.count, f->num_outputs);
	for (size_t o = 0; base.present && o < base.count; o++)
		f->base_score[o] = onnx_values_next(&base);
	return true;
}

/* The number of outputs: n_targets, or the classifier's labels. */
static bool read_num_outputs(Reader *r, bool classifier, uint32_t *num_outputs)
{
	const Attribute *ints = onnx_attribute(r, "classlabels_int64s"), *strings = onnx_attribute(r, "classlabels_strings");
	int64_t n;
	Values labels;
	PbRepeated items;
	size_t count;
	if (!classifier) {
		if (!onnx_read_int(r, "n_targets", 1, MAX_OUTPUTS, 1, &n))
			return false;
		*num_outputs = (uint32_t)n;
		return true;
	}
	if (ints && strings)
		return onnx_fail(r, "%s: both classlabels_int64s and classlabels_strings are given", r->op);
	if (!ints && !strings)
		return onnx_fail(r, "%s: missing attribute 'classlabels_int64s' or 'classlabels_strings'", r->op);
	if (ints ? !onnx_read_values(r, "classlabels_int64s", false, true, &labels, NULL) : !onnx_read_strings(r, strings, &items, &count))
		return false;
	if (ints && labels.kind != VALUES_INT64)
		return onnx_fail(r, "%s.classlabels_int64s: expected a list of ints", r->op);
	n = ints ? (int64_t)labels.count : (int64_t)count;
	if (n < 2 || n > MAX_OUTPUTS)
		return onnx_fail(r, "%s.%s: %lld classes (grove takes 2 to %d)", r->op, ints ? "classlabels_int64s" : "classlabels_strings",
		                 (long long)n, MAX_OUTPUTS);
	*num_outputs = (uint32_t)n;
	return true;
}

/*
 * Two classes whose weights all go to class 0 (how skl2onnx and onnxmltools write every
 * binary classifier) are onnxruntime's binary case: one score s, and predictions
 *   LOGISTIC                          [sigmoid(-s), sigmoid(s)]
 *   NONE, every weight >= 0           [1 - s, s]
 *   NONE, some weight < 0             [-s, s]
 *   PROBIT                            probit(s) alone
 * (SOFTMAX and SOFTMAX_ZERO of one score are ignored, as NONE.) onnxruntime also gives
 * [1 - s, s] for LOGISTIC with every weight >= 0, leaving the sigmoid out; grove applies
 * it, as the spec and the source library do. HIR: one margin and a binary expansion.
 * Otherwise two classes are two margins, unless some row can reach no class 1 weight or
 * there are two base values, where onnxruntime has encodings HIR cannot say.
 */
static bool read_binary(Reader *r, HForest *f, bool all_rows_touch)
{
	Values base;
	bool negative = r->negative;
	if (!r->class1) {
		f->num_outputs = 1;
		if (f->transform == HTRANSFORM_SOFTMAX || f->transform == HTRANSFORM_SOFTMAX_ZERO)
			f->transform = HTRANSFORM_IDENTITY;
		if (f->transform == HTRANSFORM_SIGMOID)
			f->binary = HBINARY_COMPLEMENT;
		else if (f->transform != HTRANSFORM_PROBIT)
			f->binary = negative ? HBINARY_NEGATE : HBINARY_COMPLEMENT;
		return true;
	}
	if (!onnx_read_values(r, "base_values", true, false, &base, NULL))
		return false;
	if (base.count == 2)
		return onnx_fail(r, "%s: two classes with base_values: onnxruntime outputs class 1 as base_values[1] plus the class 0 "
		            "score and class 0 as its negation, which grove cannot express yet", r->op);
	if (!all_rows_touch)
		return onnx_fail(r, "%s: two classes, and some rows may reach no leaf with a class 1 weight: onnxruntime then outputs "
		            "[-s, s] from the class 0 score s, which grove cannot express yet", r->op);
	return true;
}

/*
 * The classifier's labels, and how onnxruntime picks a row's: the first largest score
 * for more than two classes; for two, class 1 when the class 1 score is above 0, or, in
 * the binary case (one score s), when s is above 0.5 (every weight >= 0) or 0 (not).
 */
static bool read_labels(Reader *r, HForest *f)
{
	const Attribute *strings = onnx_attribute(r, "classlabels_strings");
	HLabels *labels = &f->labels;
	bool negative = r->negative;
	Values ints;
	PbRepeated items;
	size_t count;
	if (!strings) {
		if (!onnx_read_values(r, "classlabels_int64s", false, true, &ints, NULL))
			return false;
		labels->count = (uint32_t)ints.count;
		labels->ints = xmalloc(labels->count * sizeof *labels->ints);
		for (uint32_t k = 0; k < labels->count; k++)
			labels->ints[k] = onnx_values_next_int(&ints);
	} else {
		if (!onnx_read_strings(r, strings, &items, &count))
			return false;
		labels->count = (uint32_t)count;
		labels->strings = xcalloc(labels->count, sizeof *labels->strings);
		for (uint32_t k = 0; k < labels->count; k++) {
			PbBytes s = pb_repeated_next_bytes(&items);
			if (memchr(s.data, 0, s.len))
				return onnx_fail(r, "%s.classlabels_strings[%u]: a label holds a NUL byte", r->op, k);
			labels->strings[k] = xmalloc(s.len + 1);
			memcpy(labels->strings[k], s.data, s.len);
			labels->strings[k][s.len] = 0;
		}
	}
	labels->margin = labels->count > 2 ? -1 : f->num_outputs == 1 ? 0 : 1;
	labels->threshold = labels->count == 2 && f->num_outputs == 1 && !negative ? 0.5 : 0.0;
	return true;
}

HForest *onnx_read_ensemble(Reader *r, size_t file_size, uint32_t input_width, bool double_rows)
{
	bool classifier = strcmp(r->op, "TreeEnsembleClassifier") == 0, thresholds_double = false, weights_double = false;
	bool all_rows_touch;
	uint32_t num_outputs = 0, watch;
	HForest *f;

	r->v5 = strcmp(r->op, "TreeEnsemble") == 0;
	r->max_feature = -1;
	if (!read_num_outputs(r, classifier, &num_outputs))
		return NULL;
	watch = classifier && num_outputs == 2 ? 1 : UINT32_MAX;
	f = hir_forest_new(r->name, 0, num_outputs);
	if (!read_aggregate_transform(r, classifier, f) || !read_base_values(r, classifier, f))
		goto fail;
	if (!onnx_read_trees(r, f, num_outputs, watch, file_size, &all_rows_touch, &thresholds_double, &weights_double))
		goto fail;
	if (input_width && r->max_feature >= input_width) {
		onnx_fail(r, "%s: a split tests feature %lld, but the input has %u columns", r->op, (long long)r->max_feature, input_width);
		goto fail;
	}
	f->num_features = input_width ? input_width : (uint32_t)(r->max_feature + 1);
	/* onnxruntime keeps thresholds and sums in double when any of them are double (the *_as_tensor forms). */
	if (!r->v5 && (thresholds_double || weights_double))
		thresholds_double = weights_double = true;
	f->threshold_type = thresholds_double || double_rows ? HTYPE_F64 : HTYPE_F32;
	f->leaf_type = weights_double ? HTYPE_F64 : HTYPE_F32;
	if (classifier && num_outputs == 2 && !read_binary(r, f, all_rows_touch))
		goto fail;
	if (classifier && !read_labels(r, f))
		goto fail;
	f->average_count = r->num_trees ? r->num_trees : 1;
	if (!hir_verify(f, r->e)) {
		error_prefix(r->e, r->name);
		goto fail;
	}
	return f;
fail:
	hir_forest_free(f);
	return NULL;
}
