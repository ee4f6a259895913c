/* Unit tests of the LightGBM text-model reader: what each field becomes in HIR. */
#include "front/front.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/check.h"

/* A header for 3 features, with `objective` (and `extra` lines) spliced in. */
static char *model_text(const char *objective, const char *extra, const char *trees)
{
	static const char format[] = "tree\nversion=v4\nnum_class=%s\nnum_tree_per_iteration=%s\nlabel_index=0\n"
	                             "max_feature_idx=2\n%s\nfeature_names=a b c\nfeature_infos=none none none\n%s\n"
	                             "%s\nend of trees\n\nparameters:\n[boosting: gbdt]\nend of parameters\n";
	const char *classes = strstr(objective, "num_class:2") ? "2" : "1";
	size_t n = strlen(format) + strlen(objective) + strlen(extra) + strlen(trees) + 8;
	char *text = malloc(n);
	snprintf(text, n, format, classes, classes, objective, extra, trees);
	return text;
}

/* Read a model built by model_text; NULL (and the message in e) on error. */
static HForest *read(const char *objective, const char *extra, const char *trees, Error *e)
{
	char *text = model_text(objective, extra, trees);
	HForest *f = front_read_lightgbm("m.txt", text, strlen(text), false, e);
	free(text);
	return f;
}

/* One tree of each split kind: numerical NaN-missing default left, categorical, numerical None-missing. */
static const char three_splits[] =
	"Tree=0\nnum_leaves=4\nnum_cat=1\nsplit_feature=0 1 2\nthreshold=0.5 0 -0.25\ndecision_type=10 9 0\n"
	"left_child=1 -1 -3\nright_child=2 -2 -4\nleaf_value=0.1 0.2 0.30000000000000004 -4e-300\n"
	"cat_boundaries=0 2\ncat_threshold=5 1\nis_linear=0\nshrinkage=1\n\n";

static void test_splits(void)
{
	Error e = {.message = {0}};
	HForest *f = read("objective=regression", "", three_splits, &e);
	const HNode *n;
	CHECK(f);
	if (!f) {
		fprintf(stderr, "%s\n", e.message);
		return;
	}
	CHECK(f->num_trees == 1 && f->trees[0].num_nodes == 7 && f->num_features == 3 && f->num_outputs == 1);
	CHECK(f->threshold_type == HTYPE_F64 && f->leaf_type == HTYPE_F64 && f->category_rule == HCATEGORY_TRUNCATE);
	CHECK(f->transform == HTRANSFORM_IDENTITY && f->aggregate == HAGGREGATE_SUM);
	n = hir_tree_nodes(f, 0);
	/* splits keep their numbers, leaf k is node 3 + k */
	CHECK(n[0].feature == 0 && n[0].compare == HCMP_LE && n[0].value == 0.5 && n[0].left == 1 && n[0].right == 2);
	CHECK(n[0].missing == HMISSING_NAN && n[0].default_left);
	CHECK(n[1].feature == 1 && n[1].compare == HCMP_IN && n[1].left == 3 && n[1].right == 4 && !n[1].default_left);
	CHECK(hir_set_has(f, n[1].set, 0) && !hir_set_has(f, n[1].set, 1) && hir_set_has(f, n[1].set, 2) &&
	      hir_set_has(f, n[1].set, 32) && !hir_set_has(f, n[1].set, 33) && !hir_set_has(f, n[1].set, 64));
	/* None: NaN is compared as 0, and 0 <= -0.25 is false */
	CHECK(n[2].compare == HCMP_LE && n[2].value == -0.25 && n[2].missing == HMISSING_NAN && !n[2].default_left);
	CHECK(n[2].left == 5 && n[2].right == 6);
	CHECK(n[3].feature == HIR_LEAF && n[3].value == 0.1 && n[5].value == 0.30000000000000004 && n[6].value == -4e-300);
	hir_forest_free(f);
}

/* The HIR threshold and missing rule of a one-split tree with this threshold and decision_type. */
static void read_split(const char *threshold, int decision_type, HNode *out)
{
	char tree[512];
	Error e = {.message = {0}};
	HForest *f;
	snprintf(tree, sizeof tree, "Tree=0\nnum_leaves=2\nnum_cat=0\nsplit_feature=1\nthreshold=%s\ndecision_type=%d\n"
	         "left_child=-1\nright_child=-2\nleaf_value=1 2\nshrinkage=1\n\n", threshold, decision_type);
	f = read("objective=regression", "", tree, &e);
	CHECK(f);
	if (!f) {
		fprintf(stderr, "%s\n", e.message);
		memset(out, 0, sizeof *out);
		return;
	}
	*out = hir_tree_nodes(f, 0)[0];
	hir_forest_free(f);
}

static void test_missing_and_zero(void)
{
	const double zero = (double)1e-35f;
	HNode n;
	read_split("1.5", 2 | 8, &n); /* NaN, default left */
	CHECK(n.missing == HMISSING_NAN && n.default_left && n.value == 1.5);
	read_split("1.5", 8, &n);
	CHECK(n.missing == HMISSING_NAN && !n.default_left);
	read_split("1.5", 4, &n); /* Zero, default right */
	CHECK(n.missing == HMISSING_ZERO && !n.default_left);
	read_split("-1.5", 0, &n); /* None: NaN is 0, which goes right of -1.5 */
	CHECK(n.missing == HMISSING_NAN && !n.default_left && n.value == -1.5);
	read_split("1.5", 2, &n); /* None ignores the default-left bit: 0 <= 1.5 */
	CHECK(n.missing == HMISSING_NAN && n.default_left);
	/* x with |x| <= 1e-35f is 0 to LightGBM: thresholds in [-1e-35f, 1e-35f) move */
	read_split("1.0000000180025095e-35", 8, &n);
	CHECK(n.value == zero);
	read_split("-1.0000000180025095e-35", 8, &n);
	CHECK(n.value == nextafter(-zero, -INFINITY) && n.value < -zero);
	read_split("0", 0, &n);
	CHECK(n.value == zero && n.default_left);
	read_split("-1e-36", 0, &n);
	CHECK(n.value < -zero && !n.default_left);
	read_split("2e-35", 8, &n);
	CHECK(n.value == 2e-35);
	read_split("-inf", 8, &n);
	CHECK(n.value == -INFINITY);
}

/* The transform and sigmoid scale of an objective line. */
static void check_objective(const char *objective, HTransform transform, double alpha)
{
	Error e = {.message = {0}};
	HForest *f = read(objective, "", "", &e);
	if (!f) {
		fprintf(stderr, "%s: %s\n", objective, e.message);
		failures++;
		return;
	}
	if (f->transform != transform || f->sigmoid_alpha != alpha) {
		fprintf(stderr, "%s: transform %s alpha %g\n", objective, hir_transform_name(f->transform), f->sigmoid_alpha);
		failures++;
	}
	hir_forest_free(f);
}

static void test_objectives(void)
{
	check_objective("objective=regression", HTRANSFORM_IDENTITY, 1);
	check_objective("objective=regression sqrt", HTRANSFORM_SIGNED_SQUARE, 1);
	check_objective("objective=quantile sqrt", HTRANSFORM_SIGNED_SQUARE, 1);
	check_objective("objective=huber sqrt", HTRANSFORM_IDENTITY, 1);
	check_objective("objective=binary sigmoid:1.7", HTRANSFORM_SIGMOID, 1.7);
	check_objective("objective=multiclass num_class:2", HTRANSFORM_SOFTMAX, 1);
	check_objective("objective=multiclassova num_class:2 sigmoid:2.5", HTRANSFORM_SIGMOID, 2.5);
	check_objective("objective=xentropy", HTRANSFORM_SIGMOID, 1);
	check_objective("objective=tweedie", HTRANSFORM_EXP, 1);
	check_objective("objective=rank_xendcg", HTRANSFORM_IDENTITY, 1);
	check_objective("objective=custom", HTRANSFORM_IDENTITY, 1);
	check_objective("", HTRANSFORM_IDENTITY, 1); /* no objective line: raw scores */
}

static void test_forest(void)
{
	static const char leaves[] = "Tree=0\nnum_leaves=1\nnum_cat=0\nleaf_value=0.5\nshrinkage=1\n\n\n"
	                             "Tree=1\nnum_leaves=1\nnum_cat=0\nsplit_feature=\nthreshold=\nleaf_value=-2\nis_linear=0\n\n";
	Error e = {.message = {0}};
	HForest *f = read("objective=multiclass num_class:2", "average_output", leaves, &e);
	CHECK(f);
	if (f) {
		CHECK(f->num_trees == 2 && f->num_outputs == 2 && f->trees[0].output == 0 && f->trees[1].output == 1);
		CHECK(f->aggregate == HAGGREGATE_AVERAGE && f->average_count == 1);
		CHECK(f->trees[1].num_nodes == 1 && hir_tree_nodes(f, 1)[0].feature == HIR_LEAF && hir_tree_nodes(f, 1)[0].value == -2);
		hir_forest_free(f);
	}

	/* Windows line ends read the same */
	char *text = model_text("objective=regression", "", three_splits), *crlf = malloc(2 * strlen(text) + 1), *q = crlf;
	for (const char *p = text; *p; p++) {
		if (*p == '\n')
			*q++ = '\r';
		*q++ = *p;
	}
	*q = '\0';
	f = front_read_lightgbm("m.txt", crlf, strlen(crlf), false, &e);
	CHECK(f && f->num_trees == 1 && hir_tree_nodes(f, 0)[6].value == -4e-300);
	hir_forest_free(f);
	free(text);
	free(crlf);

	/* messages name the file, the tree and the field */
	f = read("objective=regression", "", "Tree=0\nnum_leaves=3\nnum_cat=0\nsplit_feature=0 1\nthreshold=1 2\n"
	         "left_child=1 -1\nright_child=-3 -2\nleaf_value=1 2 3\n\nTree=1\nnum_leaves=2\nnum_cat=0\nsplit_feature=0\n"
	         "threshold=1\nleft_child=-1\nright_child=5\nleaf_value=1 2\n\n", &e);
	CHECK(!f && strcmp(e.message, "m.txt: Tree=1: right_child[0]: index 5 out of range (the tree has 1 splits)") == 0);
}

int main(void)
{
	test_splits();
	test_missing_and_zero();
	test_objectives();
	test_forest();
	if (failures) {
		fprintf(stderr, "front_lightgbm: %d failures\n", failures);
		return 1;
	}
	return 0;
}
