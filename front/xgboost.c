/*
 * XGBoost models (JSON or UBJSON: one reader over the document interface) -> HIR.
 *
 * The parts of a model (XGBoost 1.x, 2.x, 3.x) that prediction needs:
 *
 *   learner.learner_model_param   num_feature, num_class, num_target, base_score
 *   learner.objective.name        the link (prediction transform) and how base_score maps to a margin
 *   learner.gradient_booster      gbtree: {model}; dart: {gbtree: {model}, weight_drop}
 *     model.trees[t]              left_children, right_children, split_indices,
 *                                 split_conditions, default_left, split_type, tree_param,
 *                                 categories*, base_weights / leaf_weights (vector leaves)
 *     model.tree_info[t]          the output (class or target) tree t adds to
 *
 * A node is a leaf when its left child is -1; its value is then split_conditions[i].
 * Splits send a row left when x < threshold, and a missing x where default_left says.
 * XGBoost computes in float32, so every value is rounded to float once (from its text
 * in JSON). Categorical splits and vector leaves: see xgboost_tree.c.
 */
#include "front/front.h"
#include "front/json.h"
#include "front/ubjson.h"
#include "front/xgboost.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* How an objective maps base_score (given in prediction space) to a margin: XGBoost's ProbToMargin. */
typedef enum BaseLink {
	BASE_IDENTITY,
	BASE_LOGIT, /* -log(1/b - 1) */
	BASE_LOG,   /* log(b) */
} BaseLink;

typedef struct Objective {
	const char *name;
	HTransform transform;
	BaseLink base_link;
} Objective;

static const Objective objectives[] = {
	{"reg:squarederror", HTRANSFORM_IDENTITY, BASE_IDENTITY},
	{"reg:linear", HTRANSFORM_IDENTITY, BASE_IDENTITY}, /* the old name of reg:squarederror */
	{"reg:squaredlogerror", HTRANSFORM_IDENTITY, BASE_IDENTITY},
	{"reg:pseudohubererror", HTRANSFORM_IDENTITY, BASE_IDENTITY},
	{"reg:absoluteerror", HTRANSFORM_IDENTITY, BASE_IDENTITY},
	{"reg:quantileerror", HTRANSFORM_IDENTITY, BASE_IDENTITY},
	{"reg:logistic", HTRANSFORM_SIGMOID, BASE_LOGIT},
	{"binary:logistic", HTRANSFORM_SIGMOID, BASE_LOGIT},
	{"binary:logitraw", HTRANSFORM_IDENTITY, BASE_IDENTITY}, /* its base_score is a margin already */
	{"binary:hinge", HTRANSFORM_STEP, BASE_IDENTITY},
	{"multi:softprob", HTRANSFORM_SOFTMAX, BASE_IDENTITY},
	{"multi:softmax", HTRANSFORM_ARGMAX, BASE_IDENTITY},
	{"count:poisson", HTRANSFORM_EXP, BASE_LOG},
	{"reg:gamma", HTRANSFORM_EXP, BASE_LOG},
	{"reg:tweedie", HTRANSFORM_EXP, BASE_LOG},
	{"survival:cox", HTRANSFORM_EXP, BASE_LOG},
	{"survival:aft", HTRANSFORM_EXP, BASE_LOG},
	{"rank:pairwise", HTRANSFORM_IDENTITY, BASE_IDENTITY},
	{"rank:ndcg", HTRANSFORM_IDENTITY, BASE_IDENTITY},
	{"rank:map", HTRANSFORM_IDENTITY, BASE_IDENTITY},
};

/* Objectives XGBoost has whose predictions HIR cannot express yet. */
static const char *const unsupported_objectives[] = {
	"reg:expectileerror",
};

/* Fill e with "name: " and the message; returns false. */
bool xgboost_fail(XgboostReader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	front_fail(r->e, r->name, "", fmt, ap);
	va_end(ap);
	return false;
}

bool xgboost_fail_type(XgboostReader *r, const char *path, uint32_t v, const char *expected)
{
	return xgboost_fail(r, "%s: expected %s, found %s", path, expected, doc_type_name(doc_type(&r->doc, v)));
}

uint32_t xgboost_member(XgboostReader *r, uint32_t object, const char *path, const char *key, int want)
{
	char member_path[256];
	uint32_t v = doc_member(&r->doc, object, key);
	if (v == DOC_MISSING) {
		if (*path)
			xgboost_fail(r, "%s: missing member '%s'", path, key);
		else
			xgboost_fail(r, "missing member '%s'", key);
		return 0;
	}
	if (want >= 0 && doc_type(&r->doc, v) != (DocType)want) {
		snprintf(member_path, sizeof member_path, "%s%s%s", path, *path ? "." : "", key);
		xgboost_fail_type(r, member_path, v, doc_type_name((DocType)want));
		return 0;
	}
	return v;
}

bool xgboost_integer(XgboostReader *r, uint32_t v, const char *path, int64_t min, int64_t max, int64_t *out)
{
	DocItem item = doc_item(&r->doc, v);
	char text[64];
	bool ok;
	if (item.type == DOC_NUMBER) {
		ok = doc_item_int64(&item, out);
	} else if (item.type == DOC_STRING) {
		size_t n = doc_string_copy(&r->doc, v, text, sizeof text);
		ok = n < sizeof text && json_text_int64(text, n, out);
	} else {
		return xgboost_fail_type(r, path, v, "an integer");
	}
	if (!ok) {
		doc_item_describe(&item, text, sizeof text);
		return xgboost_fail(r, "%s: expected an integer, found %s", path, text);
	}
	if (*out < min || *out > max)
		return xgboost_fail(r, "%s: %lld is out of range [%lld, %lld]", path, (long long)*out, (long long)min, (long long)max);
	return true;
}

bool xgboost_optional_integer(XgboostReader *r, uint32_t object, const char *path, const char *key, int64_t min,
                              int64_t max, int64_t otherwise, int64_t *out)
{
	char member_path[256];
	uint32_t v = doc_member(&r->doc, object, key);
	*out = otherwise;
	if (v == DOC_MISSING)
		return true;
	snprintf(member_path, sizeof member_path, "%s.%s", path, key);
	return xgboost_integer(r, v, member_path, min, max, out);
}

/* Look up an objective by name. */
static const Objective *find_objective(const Document *doc, uint32_t v)
{
	for (size_t i = 0; i < COUNT_OF(objectives); i++)
		if (doc_string_equals(doc, v, objectives[i].name))
			return &objectives[i];
	return NULL;
}

/* Map base score b to a margin as XGBoost does, in float32. */
static bool base_margin(XgboostReader *r, const char *path, const Objective *objective, float b, float *margin)
{
	switch (objective->base_link) {
	case BASE_IDENTITY:
		*margin = b;
		return true;
	case BASE_LOGIT:
		if (!(b > 0.0f && b < 1.0f))
			return xgboost_fail(r, "%s: %g is outside (0, 1), as %s needs", path, (double)b, objective->name);
		*margin = -logf(1.0f / b - 1.0f) + 0.0f; /* + 0: no "-0" for b = 0.5 */
		return true;
	case BASE_LOG:
		if (!(b > 0.0f))
			return xgboost_fail(r, "%s: %g is not positive, as %s needs", path, (double)b, objective->name);
		*margin = logf(b);
		return true;
	}
	die("unknown base link %d", (int)objective->base_link);
}

/*
 * base_score as a string: a number ("5E-1", XGBoost 1.x and 2.x) or a bracketed list
 * of one number per output ("[2.3E-1,1.1E-1,5E-1]", XGBoost 3.x: 8000 classes write
 * 100 KB of it). One number applies to every output.
 */
static bool read_base_list(XgboostReader *r, const char *path, const char *text, size_t length, const Objective *objective,
                           HForest *f)
{
	const char *p = text, *end = text + length;
	uint32_t count = 0;
	float first = 0;
	if (length >= 2 && text[0] == '[' && text[length - 1] == ']') {
		p++;
		end--;
	}
	for (;;) {
		const char *q = p;
		float value, margin;
		char where[96];
		while (q < end && *q != ',')
			q++;
		while (p < q && *p == ' ')
			p++;
		if (!json_text_is_number(p, (size_t)(q - p)))
			return xgboost_fail(r, "%s: expected a number or a list of numbers, found \"%.*s\"%s", path,
			                    (int)(q - p < 64 ? q - p : 64), p, count ? " in the list" : "");
		if (count == f->num_outputs)
			return xgboost_fail(r, "%s: more values than the model's %u outputs", path, f->num_outputs);
		value = json_text_float(p, (size_t)(q - p));
		snprintf(where, sizeof where, count || q < end ? "%s[%u]" : "%s", path, count);
		if (!base_margin(r, where, objective, value, &margin))
			return false;
		if (count == 0)
			first = margin;
		f->base_score[count++] = margin;
		if (q == end)
			break;
		p = q + 1;
	}
	if (count == 1) {
		for (uint32_t o = 1; o < f->num_outputs; o++)
			f->base_score[o] = first;
	} else if (count != f->num_outputs) {
		return xgboost_fail(r, "%s: %u values for %u outputs", path, count, f->num_outputs);
	}
	return true;
}

/* base_score: a number, or a string holding one or a list (read_base_list). */
static bool read_base_score(XgboostReader *r, uint32_t v, const Objective *objective, HForest *f)
{
	static const char path[] = "learner.learner_model_param.base_score";
	size_t cap, length;
	char *text;
	bool ok;

	if (doc_type(&r->doc, v) == DOC_NUMBER) {
		float margin;
		if (!base_margin(r, path, objective, doc_number_float(&r->doc, v), &margin))
			return false;
		for (uint32_t o = 0; o < f->num_outputs; o++)
			f->base_score[o] = margin;
		return true;
	}
	if (doc_type(&r->doc, v) != DOC_STRING)
		return xgboost_fail_type(r, path, v, "a number or a string");
	/* The string is in the model already: a copy of it costs no more than the model (unescaped text is no longer). */
	cap = doc_length(&r->doc, v) + 1;
	text = xmalloc(cap);
	length = doc_string_copy(&r->doc, v, text, cap);
	ok = read_base_list(r, path, text, length, objective, f);
	free(text);
	return ok;
}

/* The booster's tree model object, and DART's weight_drop array (0 for gbtree). */
static bool read_booster(XgboostReader *r, uint32_t learner, uint32_t *model, const char **model_path, uint32_t *weights)
{
	uint32_t booster, name, gbtree;
	char found[64];
	if (!(booster = xgboost_member(r, learner, "learner", "gradient_booster", DOC_OBJECT)) ||
	    !(name = xgboost_member(r, booster, "learner.gradient_booster", "name", DOC_STRING)))
		return false;
	*weights = 0;
	if (doc_string_equals(&r->doc, name, "gbtree")) {
		*model_path = "learner.gradient_booster.model";
		return (*model = xgboost_member(r, booster, "learner.gradient_booster", "model", DOC_OBJECT)) != 0;
	}
	if (doc_string_equals(&r->doc, name, "dart")) {
		*model_path = "learner.gradient_booster.gbtree.model";
		return (gbtree = xgboost_member(r, booster, "learner.gradient_booster", "gbtree", DOC_OBJECT)) &&
		       (*model = xgboost_member(r, gbtree, "learner.gradient_booster.gbtree", "model", DOC_OBJECT)) &&
		       (*weights = xgboost_member(r, booster, "learner.gradient_booster", "weight_drop", DOC_ARRAY));
	}
	doc_string_copy(&r->doc, name, found, sizeof found);
	if (strcmp(found, "gblinear") == 0)
		return xgboost_fail(r, "learner.gradient_booster.name: linear models (gblinear) are not supported");
	return xgboost_fail(r, "learner.gradient_booster.name: unknown booster '%s' (expected gbtree or dart)", found);
}

/* A per-tree array at path.key: an array with one element per tree; starts *it on it. */
static bool per_tree_array(XgboostReader *r, uint32_t array, const char *path, const char *key, uint32_t num_trees, DocIterator *it)
{
	if (doc_type(&r->doc, array) != DOC_ARRAY)
		return xgboost_fail(r, "%s.%s: expected an array, found %s", path, key, doc_type_name(doc_type(&r->doc, array)));
	if (doc_length(&r->doc, array) != num_trees)
		return xgboost_fail(r, "%s.%s: %llu elements for %u trees", path, key, (unsigned long long)doc_length(&r->doc, array),
		                    num_trees);
	doc_iterate(&r->doc, array, it);
	return true;
}

/* Read the trees of `model` into f. */
static bool read_trees(XgboostReader *r, HForest *f, uint32_t model, const char *path, uint32_t weights)
{
	const Document *doc = &r->doc;
	uint32_t trees, info, param, num_trees;
	DocIterator tree_it, info_it, weight_it;
	DocItem tree, item;
	char param_path[128];

	if (!(trees = xgboost_member(r, model, path, "trees", DOC_ARRAY)))
		return false;
	if (doc_length(doc, trees) > INT32_MAX)
		return xgboost_fail(r, "%s.trees: %llu trees (at most %d)", path, (unsigned long long)doc_length(doc, trees), INT32_MAX);
	num_trees = (uint32_t)doc_length(doc, trees);
	/* gbtree_model_param.size_leaf_vector is reserved; each tree's tree_param gives its own. */
	if ((param = doc_member(doc, model, "gbtree_model_param"))) {
		int64_t declared;
		snprintf(param_path, sizeof param_path, "%s.gbtree_model_param", path);
		if (doc_type(doc, param) != DOC_OBJECT)
			return xgboost_fail_type(r, param_path, param, "an object");
		if (!xgboost_optional_integer(r, param, param_path, "num_trees", 0, INT32_MAX, num_trees, &declared))
			return false;
		if (declared != num_trees)
			return xgboost_fail(r, "%s.num_trees: %lld, but 'trees' has %u elements", param_path, (long long)declared, num_trees);
	}
	info = doc_member(doc, model, "tree_info");
	if (info && !per_tree_array(r, info, path, "tree_info", num_trees, &info_it))
		return false;
	if (!info && f->num_outputs > 1)
		return xgboost_fail(r, "%s: missing member 'tree_info' (which output each tree adds to)", path);
	if (weights && !per_tree_array(r, weights, "learner.gradient_booster", "weight_drop", num_trees, &weight_it))
		return false;

	doc_iterate(doc, trees, &tree_it);
	for (uint32_t t = 0; doc_next(&tree_it, &tree); t++) {
		int64_t output = 0;
		float w = 1.0f;
		if (tree.type != DOC_OBJECT)
			return xgboost_fail(r, "trees[%u]: expected an object, found %s", t, doc_type_name(tree.type));
		if (info) {
			doc_next(&info_it, &item);
			if (!doc_item_int64(&item, &output))
				return xgboost_fail(r, "tree_info[%u]: expected an integer, found %s", t, doc_type_name(item.type));
			if (output < 0 || output >= f->num_outputs)
				return xgboost_fail(r, "tree_info[%u]: output %lld out of range (the model has %u outputs)", t, (long long)output,
				            f->num_outputs);
		}
		if (weights) {
			doc_next(&weight_it, &item);
			if (item.type != DOC_NUMBER)
				return xgboost_fail(r, "learner.gradient_booster.weight_drop[%u]: expected a number, found %s", t, doc_type_name(item.type));
			w = doc_item_float(&item);
			if (!isfinite(w))
				return xgboost_fail(r, "learner.gradient_booster.weight_drop[%u]: weight is not finite", t);
		}
		if (!xgboost_read_tree(r, f, tree.value, t, (uint32_t)output, weights != 0, w))
			return false;
		doc_release(&r->doc, r->doc.values[tree.value].start); /* trees are read in order */
	}
	return true;
}

/* learner.feature_names, when the model has them (an array of num_features strings; none when empty or absent). */
static bool read_feature_names(XgboostReader *r, uint32_t learner, HForest *f)
{
	static const char path[] = "learner.feature_names";
	uint32_t names = doc_member(&r->doc, learner, "feature_names");
	DocIterator it;
	DocItem item;
	char shown[64];
	if (!names || (doc_type(&r->doc, names) == DOC_ARRAY && doc_length(&r->doc, names) == 0))
		return true;
	if (doc_type(&r->doc, names) != DOC_ARRAY)
		return xgboost_fail_type(r, path, names, "an array of strings");
	if (doc_length(&r->doc, names) != f->num_features)
		return xgboost_fail(r, "%s: %llu names, but the model has %u features", path,
		                    (unsigned long long)doc_length(&r->doc, names), f->num_features);
	f->feature_names = xcalloc(f->num_features, sizeof *f->feature_names);
	doc_iterate(&r->doc, names, &it);
	for (uint32_t i = 0; doc_next(&it, &item); i++) {
		if (item.type != DOC_STRING) {
			doc_item_describe(&item, shown, sizeof shown);
			return xgboost_fail(r, "%s[%u]: expected a string, found %s", path, i, shown);
		}
		if (!(f->feature_names[i] = doc_item_string(&item)))
			return xgboost_fail(r, "%s[%u]: a name holds a NUL byte", path, i);
	}
	return true;
}

/* The most category values a model's lists hold, all columns together. */
#define XGBOOST_MAX_CATEGORY_VALUES (1u << 24)

/* Entry `column` of model.cats.enc: its values appended to *values (*count of them, *total in all). */
static bool read_category_list(XgboostReader *r, uint32_t entry, const char *path, uint32_t column, char ***values,
                               uint32_t *count, uint64_t *total)
{
	const Document *doc = &r->doc;
	uint32_t list = doc_member(doc, entry, "values"), offsets = doc_member(doc, entry, "offsets");
	uint64_t n, at = 0, length;
	int64_t v, start = 0, end;
	DocIterator it, cut;
	DocItem item;
	char *bytes;
	if (!list || doc_type(doc, list) != DOC_ARRAY)
		return xgboost_fail(r, "%s[%u].values: expected an array", path, column);
	length = doc_length(doc, list);
	n = doc_member(doc, entry, "type") ? length : offsets && doc_type(doc, offsets) == DOC_ARRAY && doc_length(doc, offsets)
	    ? doc_length(doc, offsets) - 1 : 0;
	if (!doc_member(doc, entry, "type") && length && !n)
		return xgboost_fail(r, "%s[%u]: text categories without offsets", path, column);
	if (*total + n > XGBOOST_MAX_CATEGORY_VALUES)
		return xgboost_fail(r, "%s: more than %u category values", path, XGBOOST_MAX_CATEGORY_VALUES);
	*count = (uint32_t)n;
	if (!n) /* a column of numbers */
		return true;
	*values = xrealloc(*values, (*total + n + 1) * sizeof **values);
	doc_iterate(doc, list, &it);
	if (doc_member(doc, entry, "type")) { /* numbers */
		for (uint64_t k = 0; doc_next(&it, &item); k++) {
			if (item.type != DOC_NUMBER || !isfinite(doc_item_double(&item)))
				return xgboost_fail(r, "%s[%u].values[%llu]: expected a finite number", path, column, (unsigned long long)k);
			(*values)[(*total)++] = front_number_text(doc_item_double(&item));
		}
		return true;
	}
	bytes = xmalloc(length + 1); /* strings: UTF-8 bytes, value k from offsets[k] to offsets[k + 1] */
	for (uint64_t k = 0; doc_next(&it, &item); k++)
		if (!doc_item_int64(&item, &v) || v < 1 || v > 255) {
			free(bytes);
			return xgboost_fail(r, "%s[%u].values[%llu]: expected a byte of text (1 to 255)", path, column,
			                    (unsigned long long)k);
		} else {
			bytes[at++] = (char)v;
		}
	doc_iterate(doc, offsets, &cut);
	for (uint64_t k = 0; doc_next(&cut, &item); k++, start = end) {
		if (!doc_item_int64(&item, &end) || end < start || (uint64_t)end > length || (k == 0 && end != 0) ||
		    (k == n && (uint64_t)end != length)) {
			free(bytes);
			return xgboost_fail(r, "%s[%u].offsets[%llu]: not an offset into values, in order from 0 to its end", path,
			                    column, (unsigned long long)k);
		}
		if (k) {
			char *text = xmalloc((size_t)(end - start) + 1);
			memcpy(text, bytes + start, (size_t)(end - start));
			text[end - start] = 0;
			(*values)[(*total)++] = text;
		}
	}
	free(bytes);
	return true;
}

/*
 * The category lists XGBoost saves with a model trained on a DataFrame with
 * enable_categorical (model.cats.enc: an entry per feature, empty for a column of
 * numbers), as f's category values; none where the model has no lists. XGBoost refuses
 * a value in no list.
 */
static bool read_categories(XgboostReader *r, uint32_t model, const char *model_path, HForest *f)
{
	const Document *doc = &r->doc;
	uint32_t cats = doc_member(doc, model, "cats"), enc = cats && doc_type(doc, cats) == DOC_OBJECT ? doc_member(doc, cats, "enc") : 0;
	uint32_t *counts;
	uint64_t total = 0;
	char **values = NULL, path[96];
	DocIterator it;
	DocItem item;
	if (!enc || (doc_type(doc, enc) == DOC_ARRAY && doc_length(doc, enc) == 0))
		return true;
	snprintf(path, sizeof path, "%s.cats.enc", model_path);
	if (doc_type(doc, enc) != DOC_ARRAY || doc_length(doc, enc) != f->num_features)
		return xgboost_fail(r, "%s: expected an array of an entry per feature (%u)", path, f->num_features);
	counts = xcalloc(f->num_features, sizeof *counts);
	doc_iterate(doc, enc, &it);
	for (uint32_t j = 0; doc_next(&it, &item); j++)
		if (item.type != DOC_OBJECT || !read_category_list(r, item.value, path, j, &values, &counts[j], &total)) {
			if (item.type != DOC_OBJECT)
				xgboost_fail(r, "%s[%u]: expected an object", path, j);
			strings_free(values, (uint32_t)total);
			free(counts);
			return false;
		}
	if (!total) {
		free(values);
		free(counts);
		return true;
	}
	f->category_values = (CategoryValues){.counts = counts, .values = values, .unseen_missing = false};
	return true;
}

/* Read the model from the parsed document; NULL on error. */
static HForest *read_model(XgboostReader *r)
{
	const Document *doc = &r->doc;
	uint32_t learner, param, objective, objective_name, features, base_score, model = 0, weights = 0;
	int64_t num_feature, num_class, num_target;
	const Objective *found;
	const char *model_path = NULL;
	HForest *f;
	char text[64];

	if (doc_type(doc, 0) != DOC_OBJECT)
		return xgboost_fail_type(r, "the top level", 0, "an object"), NULL;
	if (!(learner = xgboost_member(r, 0, "", "learner", DOC_OBJECT)) ||
	    !(param = xgboost_member(r, learner, "learner", "learner_model_param", DOC_OBJECT)) ||
	    !(objective = xgboost_member(r, learner, "learner", "objective", DOC_OBJECT)) ||
	    !(objective_name = xgboost_member(r, objective, "learner.objective", "name", DOC_STRING)))
		return NULL;
	if (!(found = find_objective(doc, objective_name))) {
		doc_string_copy(doc, objective_name, text, sizeof text);
		for (size_t i = 0; i < COUNT_OF(unsupported_objectives); i++)
			if (strcmp(text, unsupported_objectives[i]) == 0)
				return xgboost_fail(r, "learner.objective.name: objective '%s' is not supported yet", text), NULL;
		return xgboost_fail(r, "learner.objective.name: unknown objective '%s'", text), NULL;
	}
	if (!(features = xgboost_member(r, param, "learner.learner_model_param", "num_feature", -1)) ||
	    !xgboost_integer(r, features, "learner.learner_model_param.num_feature", 0, INT32_MAX, &num_feature) ||
	    !xgboost_optional_integer(r, param, "learner.learner_model_param", "num_class", 0, XGBOOST_MAX_OUTPUTS, 0, &num_class) ||
	    !xgboost_optional_integer(r, param, "learner.learner_model_param", "num_target", 1, XGBOOST_MAX_OUTPUTS, 1, &num_target))
		return NULL;
	if (num_class > 1 && num_target > 1)
		return xgboost_fail(r, "learner.learner_model_param: both num_class and num_target are above 1"), NULL;
	if (!read_booster(r, learner, &model, &model_path, &weights))
		return NULL;

	f = hir_forest_new(r->name, (uint32_t)num_feature, (uint32_t)(num_class > num_target ? num_class : num_target));
	f->transform = found->transform;
	f->threshold_type = HTYPE_F32;
	f->leaf_type = HTYPE_F32;
	base_score = doc_member(doc, param, "base_score");
	if (base_score) {
		if (!read_base_score(r, base_score, found, f))
			goto fail;
	} else {
		float margin; /* XGBoost's default, 0.5 */
		if (!base_margin(r, "learner.learner_model_param.base_score", found, 0.5f, &margin))
			goto fail;
		for (uint32_t o = 0; o < f->num_outputs; o++)
			f->base_score[o] = margin;
	}
	if (!read_feature_names(r, learner, f) || !read_categories(r, model, model_path, f) ||
	    !read_trees(r, f, model, model_path, weights))
		goto fail;
	if (!hir_verify(f, r->e)) {
		error_prefix(r->e, r->name);
		goto fail;
	}
	return f;
fail:
	hir_forest_free(f);
	return NULL;
}

/* Parse the file with `parse` (JSON or UBJSON) and read the model from the document. */
static HForest *read_document(const char *name, const char *bytes, size_t len, bool mapped, Error *e,
                              bool (*parse)(Document *, const char *, const char *, size_t, bool, Error *))
{
	/* Category sets: at most 64 words per byte of the file, and 16 MiB whatever its size. */
	XgboostReader r = {.name = name, .e = e, .set_words_left = ((uint64_t)len + 65536) * 64};
	HForest *f = NULL;
	if (parse(&r.doc, name, bytes, len, mapped, e) && doc_check_keys(&r.doc, parse == json_parse, e))
		f = read_model(&r);
	doc_free(&r.doc);
	return f;
}

HForest *front_read_xgboost_json(const char *name, const char *text, size_t len, bool mapped, Error *e)
{
	return read_document(name, text, len, mapped, e, json_parse);
}

HForest *front_read_xgboost_ubjson(const char *name, const char *bytes, size_t len, bool mapped, Error *e)
{
	return read_document(name, bytes, len, mapped, e, ubjson_parse);
}
