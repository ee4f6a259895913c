/*
 * XGBoost JSON models -> HIR.
 *
 * The parts of a model (XGBoost 1.x, 2.x, 3.x) that prediction needs:
 *
 *   learner.learner_model_param   num_feature, num_class, num_target, base_score
 *   learner.objective.name        the link (prediction transform) and how base_score maps to a margin
 *   learner.gradient_booster      gbtree: {model}; dart: {gbtree: {model}, weight_drop}
 *     model.trees[t]              left_children, right_children, split_indices,
 *                                 split_conditions, default_left, split_type, tree_param
 *     model.tree_info[t]          the output (class or target) tree t adds to
 *
 * A node is a leaf when its left child is -1; its value is then split_conditions[i].
 * Splits send a row left when x < threshold, and a missing x where default_left says.
 * XGBoost computes in float32, so every value is rounded to float once, from its text.
 */
#include "front/front.h"
#include "front/json.h"

#include <math.h>
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
	{"multi:softprob", HTRANSFORM_SOFTMAX, BASE_IDENTITY},
	{"multi:softmax", HTRANSFORM_ARGMAX, BASE_IDENTITY},
	{"count:poisson", HTRANSFORM_EXP, BASE_LOG},
	{"reg:gamma", HTRANSFORM_EXP, BASE_LOG},
	{"reg:tweedie", HTRANSFORM_EXP, BASE_LOG},
	{"rank:pairwise", HTRANSFORM_IDENTITY, BASE_IDENTITY},
	{"rank:ndcg", HTRANSFORM_IDENTITY, BASE_IDENTITY},
	{"rank:map", HTRANSFORM_IDENTITY, BASE_IDENTITY},
};

/* Objectives XGBoost has whose predictions HIR cannot express yet. */
static const char *const unsupported_objectives[] = {
	"binary:hinge", "survival:cox", "survival:aft", "reg:expectileerror",
};

/* The largest tree and forest the reader accepts (HIR indexes nodes with 32 bits). */
#define MAX_NODES_PER_TREE (UINT32_C(1) << 31)
#define MAX_OUTPUTS 65536

typedef struct Reader {
	const char *name;
	JsonDocument doc;
	Error *e;
} Reader;

/* Fill e with "name: " and the message; returns false. */
static bool fail(Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(Reader *r, const char *fmt, ...)
{
	char message[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	return error_set(r->e, "%s: %s", r->name, message);
}

/* Report that value v at `path` is not of the expected kind. */
static bool fail_type(Reader *r, const char *path, uint32_t v, const char *expected)
{
	return fail(r, "%s: expected %s, found %s", path, expected, json_type_name(json_type(&r->doc, v)));
}

/* Member `key` of the object at `path`, which must exist and (unless want is -1) have type want; 0 on error. */
static uint32_t need_member(Reader *r, uint32_t object, const char *path, const char *key, int want)
{
	char member_path[256];
	uint32_t v = json_member(&r->doc, object, key);
	if (v == JSON_MISSING) {
		if (*path)
			fail(r, "%s: missing member '%s'", path, key);
		else
			fail(r, "missing member '%s'", key);
		return 0;
	}
	if (want >= 0 && json_type(&r->doc, v) != (JsonType)want) {
		snprintf(member_path, sizeof member_path, "%s%s%s", path, *path ? "." : "", key);
		fail_type(r, member_path, v, json_type_name((JsonType)want));
		return 0;
	}
	return v;
}

/* An integer parameter: XGBoost writes them as strings ("28"), other writers as numbers. */
static bool read_integer(Reader *r, uint32_t v, const char *path, int64_t min, int64_t max, int64_t *out)
{
	const JsonValue *value = &r->doc.values[v];
	bool ok;
	if (value->type == JSON_NUMBER)
		ok = json_number_int64(&r->doc, v, out);
	else if (value->type == JSON_STRING && !value->escaped)
		ok = json_text_int64(r->doc.text + value->start, value->length, out);
	else
		return fail_type(r, path, v, "an integer");
	if (!ok)
		return fail(r, "%s: expected an integer, found '%.*s'", path, (int)(value->length < 40 ? value->length : 40),
		            r->doc.text + value->start);
	if (*out < min || *out > max)
		return fail(r, "%s: %lld is out of range [%lld, %lld]", path, (long long)*out, (long long)min, (long long)max);
	return true;
}

/* An integer parameter that may be absent (then it is `otherwise`). */
static bool read_optional_integer(Reader *r, uint32_t object, const char *path, const char *key, int64_t min,
                                  int64_t max, int64_t otherwise, int64_t *out)
{
	char member_path[256];
	uint32_t v = json_member(&r->doc, object, key);
	*out = otherwise;
	if (v == JSON_MISSING)
		return true;
	snprintf(member_path, sizeof member_path, "%s.%s", path, key);
	return read_integer(r, v, member_path, min, max, out);
}

/* Look up an objective by name. */
static const Objective *find_objective(const JsonDocument *doc, uint32_t v)
{
	for (size_t i = 0; i < COUNT_OF(objectives); i++)
		if (json_string_equals(doc, v, objectives[i].name))
			return &objectives[i];
	return NULL;
}

/* Map base score b to a margin as XGBoost does, in float32. */
static bool base_margin(Reader *r, const char *path, const Objective *objective, float b, float *margin)
{
	switch (objective->base_link) {
	case BASE_IDENTITY:
		*margin = b;
		return true;
	case BASE_LOGIT:
		if (!(b > 0.0f && b < 1.0f))
			return fail(r, "%s: %g is outside (0, 1), as %s needs", path, (double)b, objective->name);
		*margin = -logf(1.0f / b - 1.0f) + 0.0f; /* + 0: no "-0" for b = 0.5 */
		return true;
	case BASE_LOG:
		if (!(b > 0.0f))
			return fail(r, "%s: %g is not positive, as %s needs", path, (double)b, objective->name);
		*margin = logf(b);
		return true;
	}
	die("unknown base link %d", (int)objective->base_link);
}

/*
 * base_score: a number, or a string holding a number ("5E-1", XGBoost 1.x and 2.x) or
 * a bracketed list of one number per output ("[2.3E-1,1.1E-1,5E-1]", XGBoost 3.x).
 * One number applies to every output.
 */
static bool read_base_score(Reader *r, uint32_t v, const Objective *objective, HForest *f)
{
	static const char path[] = "learner.learner_model_param.base_score";
	char text[4096];
	const char *p, *end;
	size_t length;
	uint32_t count = 0;
	float first = 0;

	if (json_type(&r->doc, v) == JSON_NUMBER) {
		float margin;
		if (!base_margin(r, path, objective, json_number_float(&r->doc, v), &margin))
			return false;
		for (uint32_t o = 0; o < f->num_outputs; o++)
			f->base_score[o] = margin;
		return true;
	}
	if (json_type(&r->doc, v) != JSON_STRING)
		return fail_type(r, path, v, "a number or a string");
	length = json_string_copy(&r->doc, v, text, sizeof text);
	if (length >= sizeof text)
		return fail(r, "%s: too long (%zu bytes)", path, length);
	p = text;
	end = text + length;
	if (length >= 2 && text[0] == '[' && text[length - 1] == ']') {
		p++;
		end--;
	}
	for (;;) {
		const char *q = p;
		float value, margin;
		char where[sizeof path + 16];
		while (q < end && *q != ',')
			q++;
		while (p < q && *p == ' ')
			p++;
		if (!json_text_is_number(p, (size_t)(q - p)))
			return fail(r, "%s: expected a number or a list of numbers, found \"%s\"", path, text);
		if (count == f->num_outputs)
			return fail(r, "%s: more values than the model's %u outputs", path, f->num_outputs);
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
		return fail(r, "%s: %u values for %u outputs", path, count, f->num_outputs);
	}
	return true;
}

/* One of a tree's per-node arrays: present, an array, of num_nodes elements; starts *it on it. */
static bool tree_array(Reader *r, uint32_t tree, uint32_t t, const char *key, uint32_t num_nodes, JsonIterator *it)
{
	uint32_t v = json_member(&r->doc, tree, key);
	if (v == JSON_MISSING)
		return fail(r, "trees[%u]: missing member '%s'", t, key);
	if (json_type(&r->doc, v) != JSON_ARRAY)
		return fail(r, "trees[%u].%s: expected an array, found %s", t, key, json_type_name(json_type(&r->doc, v)));
	if (json_length(&r->doc, v) != num_nodes)
		return fail(r, "trees[%u].%s: %u elements, but tree_param.num_nodes is %u", t, key, json_length(&r->doc, v), num_nodes);
	json_iterate(&r->doc, v, it);
	return true;
}

/* Report that element i of tree array `key` is not what it should be. */
static bool fail_item(Reader *r, uint32_t t, const char *key, uint32_t i, const JsonItem *item, const char *expected)
{
	if (item->type == JSON_NUMBER)
		return fail(r, "trees[%u].%s[%u]: expected %s, found %.*s", t, key, i, expected, (int)(item->length < 40 ? item->length : 40),
		            item->text);
	return fail(r, "trees[%u].%s[%u]: expected %s, found %s", t, key, i, expected, json_type_name(item->type));
}

/* The next element of tree array `key` (element i) as an integer. */
static bool node_integer(Reader *r, JsonIterator *it, uint32_t t, const char *key, uint32_t i, int64_t *out)
{
	JsonItem item;
	if (json_iterator_int64(it, &item, out))
		return true;
	return fail_item(r, t, key, i, &item, "an integer");
}

/* A child index of split node i: a node of the tree other than the root. */
static bool check_child(Reader *r, int64_t child, uint32_t t, const char *key, uint32_t i, uint32_t num_nodes)
{
	if (child == 0)
		return fail(r, "trees[%u].%s[%u]: the root (node 0) cannot be a child", t, key, i);
	if (child < 0 || child >= num_nodes)
		return fail(r, "trees[%u].%s[%u]: index %lld out of range (the tree has %u nodes)", t, key, i, (long long)child,
		            num_nodes);
	return true;
}

/* The per-node arrays of a tree, walked together. */
typedef struct TreeArrays {
	JsonIterator left, right, feature, condition, default_left, split_type;
	bool has_split_type;
} TreeArrays;

/* Fill node i of tree t from the next element of each array. */
static bool read_node(Reader *r, HForest *f, TreeArrays *a, uint32_t t, uint32_t i, uint32_t n, HNode *node)
{
	int64_t left, right, feature, type = 0;
	JsonItem item;
	float value;

	if (!json_iterator_float(&a->condition, &item, &value))
		return fail_item(r, t, "split_conditions", i, &item, "a number");
	if (!node_integer(r, &a->left, t, "left_children", i, &left) || !node_integer(r, &a->right, t, "right_children", i, &right) ||
	    !node_integer(r, &a->feature, t, "split_indices", i, &feature) ||
	    (a->has_split_type && !node_integer(r, &a->split_type, t, "split_type", i, &type)))
		return false;
	json_iterator_next(&a->default_left, &item);
	if (left == -1) {
		if (right != -1)
			return fail(r, "trees[%u].right_children[%u]: a leaf (left child -1) has right child %lld", t, i, (long long)right);
		if (!isfinite(value))
			return fail(r, "trees[%u].split_conditions[%u]: leaf value is %s", t, i, isnan(value) ? "NaN" : "infinite");
		node->feature = HIR_LEAF;
		node->value = value;
		return true;
	}
	if (type != 0)
		return fail(r, "trees[%u].split_type[%u]: categorical splits are not supported yet", t, i);
	if (!check_child(r, left, t, "left_children", i, n) || !check_child(r, right, t, "right_children", i, n))
		return false;
	if (feature < 0 || feature >= f->num_features)
		return fail(r, "trees[%u].split_indices[%u]: feature %lld >= num_feature %u", t, i, (long long)feature, f->num_features);
	if (isnan(value))
		return fail(r, "trees[%u].split_conditions[%u]: threshold is NaN", t, i);
	if (item.type == JSON_TRUE || item.type == JSON_FALSE) {
		node->default_left = item.type == JSON_TRUE;
	} else {
		int64_t flag;
		if (!json_item_int64(&item, &flag) || (flag != 0 && flag != 1))
			return fail_item(r, t, "default_left", i, &item, "0, 1, true or false");
		node->default_left = (uint8_t)flag;
	}
	node->left = (uint32_t)left;
	node->right = (uint32_t)right;
	node->feature = (int32_t)feature;
	node->value = value;
	node->compare = HCMP_LT;
	return true;
}

/*
 * Read trees[t] into a new HIR tree adding to `output`. A DART tree's leaves are
 * scaled by its weight in float32, as XGBoost does when it predicts (it adds
 * leaf * weight_drop[t] to the margin).
 */
static bool read_tree(Reader *r, HForest *f, uint32_t tree, uint32_t t, uint32_t output, bool weighted, float weight)
{
	const JsonDocument *doc = &r->doc;
	uint32_t param, n, split_type;
	int64_t num_nodes, size_leaf_vector;
	char path[64];
	TreeArrays a;
	HNode *nodes;

	snprintf(path, sizeof path, "trees[%u]", t);
	if (json_type(doc, tree) != JSON_OBJECT)
		return fail_type(r, path, tree, "an object");
	if (!(param = need_member(r, tree, path, "tree_param", JSON_OBJECT)))
		return false;
	snprintf(path, sizeof path, "trees[%u].tree_param", t);
	if (!read_optional_integer(r, param, path, "size_leaf_vector", 0, INT32_MAX, 0, &size_leaf_vector))
		return false;
	if (size_leaf_vector > 1)
		return fail(r, "%s.size_leaf_vector: vector leaves not supported yet (size %lld)", path, (long long)size_leaf_vector);
	if (!(n = need_member(r, param, path, "num_nodes", -1)))
		return false;
	snprintf(path, sizeof path, "trees[%u].tree_param.num_nodes", t);
	if (!read_integer(r, n, path, 1, MAX_NODES_PER_TREE - 1, &num_nodes))
		return false;
	n = (uint32_t)num_nodes;
	if (!tree_array(r, tree, t, "left_children", n, &a.left) || !tree_array(r, tree, t, "right_children", n, &a.right) ||
	    !tree_array(r, tree, t, "split_indices", n, &a.feature) || !tree_array(r, tree, t, "split_conditions", n, &a.condition) ||
	    !tree_array(r, tree, t, "default_left", n, &a.default_left))
		return false;
	split_type = json_member(doc, tree, "split_type"); /* XGBoost 1.3 and later */
	a.has_split_type = split_type != JSON_MISSING;
	if (a.has_split_type && !tree_array(r, tree, t, "split_type", n, &a.split_type))
		return false;

	nodes = hir_tree_add(f, n, output);
	for (uint32_t i = 0; i < n; i++)
		if (!read_node(r, f, &a, t, i, n, &nodes[i]))
			return false;
	if (weighted)
		for (uint32_t i = 0; i < n; i++)
			if (nodes[i].feature == HIR_LEAF)
				nodes[i].value = (float)((float)nodes[i].value * weight);
	return true;
}

/* The booster's tree model object, and DART's weight_drop array (0 for gbtree). */
static bool read_booster(Reader *r, uint32_t learner, uint32_t *model, const char **model_path, uint32_t *weights)
{
	uint32_t booster, name, gbtree;
	char found[64];
	if (!(booster = need_member(r, learner, "learner", "gradient_booster", JSON_OBJECT)) ||
	    !(name = need_member(r, booster, "learner.gradient_booster", "name", JSON_STRING)))
		return false;
	*weights = 0;
	if (json_string_equals(&r->doc, name, "gbtree")) {
		*model_path = "learner.gradient_booster.model";
		return (*model = need_member(r, booster, "learner.gradient_booster", "model", JSON_OBJECT)) != 0;
	}
	if (json_string_equals(&r->doc, name, "dart")) {
		*model_path = "learner.gradient_booster.gbtree.model";
		return (gbtree = need_member(r, booster, "learner.gradient_booster", "gbtree", JSON_OBJECT)) &&
		       (*model = need_member(r, gbtree, "learner.gradient_booster.gbtree", "model", JSON_OBJECT)) &&
		       (*weights = need_member(r, booster, "learner.gradient_booster", "weight_drop", JSON_ARRAY));
	}
	json_string_copy(&r->doc, name, found, sizeof found);
	if (strcmp(found, "gblinear") == 0)
		return fail(r, "learner.gradient_booster.name: linear models (gblinear) are not supported");
	return fail(r, "learner.gradient_booster.name: unknown booster '%s' (expected gbtree or dart)", found);
}

/* A per-tree array at path.key: an array with one element per tree; starts *it on it. */
static bool per_tree_array(Reader *r, uint32_t array, const char *path, const char *key, uint32_t num_trees, JsonIterator *it)
{
	if (json_type(&r->doc, array) != JSON_ARRAY)
		return fail(r, "%s.%s: expected an array, found %s", path, key, json_type_name(json_type(&r->doc, array)));
	if (json_length(&r->doc, array) != num_trees)
		return fail(r, "%s.%s: %u elements for %u trees", path, key, json_length(&r->doc, array), num_trees);
	json_iterate(&r->doc, array, it);
	return true;
}

/* Read the trees of `model` into f. */
static bool read_trees(Reader *r, HForest *f, uint32_t model, const char *path, uint32_t weights)
{
	const JsonDocument *doc = &r->doc;
	uint32_t trees, info, param, num_trees;
	JsonIterator tree_it, info_it, weight_it;
	JsonItem tree, item;
	char param_path[128];

	if (!(trees = need_member(r, model, path, "trees", JSON_ARRAY)))
		return false;
	num_trees = json_length(doc, trees);
	if ((param = json_member(doc, model, "gbtree_model_param"))) {
		int64_t declared, size_leaf_vector;
		snprintf(param_path, sizeof param_path, "%s.gbtree_model_param", path);
		if (json_type(doc, param) != JSON_OBJECT)
			return fail_type(r, param_path, param, "an object");
		if (!read_optional_integer(r, param, param_path, "num_trees", 0, INT32_MAX, num_trees, &declared) ||
		    !read_optional_integer(r, param, param_path, "size_leaf_vector", 0, INT32_MAX, 0, &size_leaf_vector))
			return false;
		if (declared != num_trees)
			return fail(r, "%s.num_trees: %lld, but 'trees' has %u elements", param_path, (long long)declared, num_trees);
		if (size_leaf_vector > 1)
			return fail(r, "%s.size_leaf_vector: vector leaves not supported yet (size %lld)", param_path, (long long)size_leaf_vector);
	}
	info = json_member(doc, model, "tree_info");
	if (info && !per_tree_array(r, info, path, "tree_info", num_trees, &info_it))
		return false;
	if (!info && f->num_outputs > 1)
		return fail(r, "%s: missing member 'tree_info' (which output each tree adds to)", path);
	if (weights && !per_tree_array(r, weights, "learner.gradient_booster", "weight_drop", num_trees, &weight_it))
		return false;

	json_iterate(doc, trees, &tree_it);
	for (uint32_t t = 0; json_iterator_next(&tree_it, &tree); t++) {
		int64_t output = 0;
		float w = 1.0f;
		if (tree.type != JSON_OBJECT)
			return fail(r, "trees[%u]: expected an object, found %s", t, json_type_name(tree.type));
		if (info) {
			json_iterator_next(&info_it, &item);
			if (!json_item_int64(&item, &output))
				return fail(r, "tree_info[%u]: expected an integer, found %s", t, json_type_name(item.type));
			if (output < 0 || output >= f->num_outputs)
				return fail(r, "tree_info[%u]: output %lld out of range (the model has %u outputs)", t, (long long)output,
				            f->num_outputs);
		}
		if (weights) {
			json_iterator_next(&weight_it, &item);
			if (item.type != JSON_NUMBER)
				return fail(r, "learner.gradient_booster.weight_drop[%u]: expected a number, found %s", t, json_type_name(item.type));
			w = json_item_float(&item);
			if (!isfinite(w))
				return fail(r, "learner.gradient_booster.weight_drop[%u]: weight is not finite", t);
		}
		if (!read_tree(r, f, tree.value, t, (uint32_t)output, weights != 0, w))
			return false;
	}
	return true;
}

/* Read the model from the parsed document; NULL on error. */
static HForest *read_model(Reader *r)
{
	const JsonDocument *doc = &r->doc;
	uint32_t learner, param, objective, objective_name, features, base_score, model = 0, weights = 0;
	int64_t num_feature, num_class, num_target;
	const Objective *found;
	const char *model_path = NULL;
	HForest *f;
	char text[64];

	if (json_type(doc, 0) != JSON_OBJECT)
		return fail_type(r, "the top level", 0, "an object"), NULL;
	if (!(learner = need_member(r, 0, "", "learner", JSON_OBJECT)) ||
	    !(param = need_member(r, learner, "learner", "learner_model_param", JSON_OBJECT)) ||
	    !(objective = need_member(r, learner, "learner", "objective", JSON_OBJECT)) ||
	    !(objective_name = need_member(r, objective, "learner.objective", "name", JSON_STRING)))
		return NULL;
	if (!(found = find_objective(doc, objective_name))) {
		json_string_copy(doc, objective_name, text, sizeof text);
		for (size_t i = 0; i < COUNT_OF(unsupported_objectives); i++)
			if (strcmp(text, unsupported_objectives[i]) == 0)
				return fail(r, "learner.objective.name: objective '%s' is not supported yet", text), NULL;
		return fail(r, "learner.objective.name: unknown objective '%s'", text), NULL;
	}
	if (!(features = need_member(r, param, "learner.learner_model_param", "num_feature", -1)) ||
	    !read_integer(r, features, "learner.learner_model_param.num_feature", 0, INT32_MAX, &num_feature) ||
	    !read_optional_integer(r, param, "learner.learner_model_param", "num_class", 0, MAX_OUTPUTS, 0, &num_class) ||
	    !read_optional_integer(r, param, "learner.learner_model_param", "num_target", 1, MAX_OUTPUTS, 1, &num_target))
		return NULL;
	if (num_class > 1 && num_target > 1)
		return fail(r, "learner.learner_model_param: both num_class and num_target are above 1"), NULL;
	if (!read_booster(r, learner, &model, &model_path, &weights))
		return NULL;

	f = hir_forest_new(r->name, (uint32_t)num_feature, (uint32_t)(num_class > num_target ? num_class : num_target));
	f->transform = found->transform;
	f->threshold_type = HTYPE_F32;
	f->leaf_type = HTYPE_F32;
	base_score = json_member(doc, param, "base_score");
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
	if (!read_trees(r, f, model, model_path, weights))
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

HForest *front_read_xgboost_json(const char *name, const char *text, size_t len, Error *e)
{
	Reader r = {.name = name, .e = e};
	HForest *f = NULL;
	if (json_parse(&r.doc, name, text, len, e))
		f = read_model(&r);
	json_free(&r.doc);
	return f;
}
