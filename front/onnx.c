/*
 * ONNX-ML tree ensembles -> HIR.
 *
 * The model is a protobuf (onnx.proto, decoded by the code protoc-c generates at build
 * time). Its graph holds one ai.onnx.ml tree ensemble node:
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
 * The true branch is HIR's left child. Every tree is renumbered breadth-first from its
 * root. A leaf that adds to several outputs makes its tree a leaf-vector tree spanning
 * them. Decisions follow the ONNX specification where onnxruntime departs from it
 * (README.md lists where): NaN goes to the false branch of BRANCH_NEQ unless missing
 * values track true, LOGISTIC / SOFTMAX apply to single-target regressors too, and
 * BRANCH_MEMBER tests x, not trunc(x).
 *
 * A classifier keeps its labels and onnxruntime's rule for a row's class (read_labels).
 * The graph around the ensemble is front/onnx_graph.c's.
 */
#include "front/onnx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OUTPUTS 65536
#define MAX_CATEGORY (UINT32_C(1) << 20) /* BRANCH_MEMBER sets hold categories below this */
#define MAX_NODES_PER_TREE (UINT32_C(1) << 31)

/* Node modes, in the order of opset 5's codes; LEAF is opsets 1-3's leaf mode. */
enum { MODE_MEMBER = 6, MODE_LEAF = 7 };
static const struct {
	const char *name;
	HCompare compare;
} modes[] = {
	{"BRANCH_LEQ", HCMP_LE}, {"BRANCH_LT", HCMP_LT}, {"BRANCH_GTE", HCMP_GE}, {"BRANCH_GT", HCMP_GT},
	{"BRANCH_EQ", HCMP_EQ}, {"BRANCH_NEQ", HCMP_NE}, {"BRANCH_MEMBER", HCMP_IN}, {"LEAF", HCMP_COUNT},
};

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

/* A numeric list attribute (ints, floats) or tensor (typed field or raw little-endian bytes). */
typedef enum ValueKind { VALUES_INT64, VALUES_INT32, VALUES_UINT8, VALUES_FLOAT, VALUES_DOUBLE } ValueKind;

typedef struct Values {
	const char *name;     /* the attribute, for messages; NULL when the model has none */
	size_t count;
	ValueKind kind;
	const uint8_t *bytes; /* raw data, or NULL for typed data */
	const void *data;
} Values;


/* The ensemble's attribute `name`, or NULL. */
static const Attribute *attribute(const Reader *r, const char *name)
{
	for (size_t i = 0; i < r->node->n_attribute; i++)
		if (strcmp(onnx_text(r->node->attribute[i]->name), name) == 0)
			return r->node->attribute[i];
	return NULL;
}

static double values_get(const Values *v, size_t i)
{
	static const size_t sizes[] = {8, 4, 1, 4, 8};
	if (v->bytes) {
		const uint8_t *p = v->bytes + i * sizes[v->kind];
		int64_t l;
		int32_t n;
		float f;
		double d;
		switch (v->kind) {
		case VALUES_INT64: return memcpy(&l, p, 8), (double)l;
		case VALUES_INT32: return memcpy(&n, p, 4), n;
		case VALUES_UINT8: return *p;
		case VALUES_FLOAT: return memcpy(&f, p, 4), f;
		case VALUES_DOUBLE: return memcpy(&d, p, 8), d;
		}
	}
	switch (v->kind) {
	case VALUES_INT64: return (double)((const int64_t *)v->data)[i];
	case VALUES_INT32:
	case VALUES_UINT8: return ((const int32_t *)v->data)[i];
	case VALUES_FLOAT: return ((const float *)v->data)[i];
	case VALUES_DOUBLE: return ((const double *)v->data)[i];
	}
	die("unknown value kind %d", (int)v->kind);
}

/* Element i of an integer list attribute (exact where values_get would round). */
static int64_t values_int(const Values *v, size_t i)
{
	int64_t l;
	if (v->kind != VALUES_INT64)
		return (int64_t)values_get(v, i);
	if (!v->bytes)
		return ((const int64_t *)v->data)[i];
	memcpy(&l, v->bytes + 8 * i, 8);
	return l;
}

/* A tensor attribute's values: float, double, uint8, int32 or int64, typed or raw. */
static bool read_tensor(Reader *r, const Attribute *a, Values *v)
{
	static const struct {
		int type;
		ValueKind kind;
		size_t size;
	} types[] = {
		{ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, VALUES_FLOAT, 4}, {ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, VALUES_DOUBLE, 8},
		{ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, VALUES_UINT8, 1}, {ONNX__TENSOR_PROTO__DATA_TYPE__INT32, VALUES_INT32, 4},
		{ONNX__TENSOR_PROTO__DATA_TYPE__INT64, VALUES_INT64, 8},
	};
	const Tensor *t = a->t;
	size_t k = 0, typed, count = 1;
	if (!t)
		return onnx_fail(r, "%s.%s: expected a tensor", r->op, a->name);
	while (k < COUNT_OF(types) && types[k].type != t->data_type)
		k++;
	if (k == COUNT_OF(types))
		return onnx_fail(r, "%s.%s: tensor of element type %d (expected float, double or an integer type)", r->op, a->name,
		            (int)t->data_type);
	if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return onnx_fail(r, "%s.%s: the tensor's data is in an external file, which grove does not read", r->op, a->name);
	v->kind = types[k].kind;
	switch (v->kind) {
	case VALUES_FLOAT: typed = t->n_float_data, v->data = t->float_data; break;
	case VALUES_DOUBLE: typed = t->n_double_data, v->data = t->double_data; break;
	case VALUES_INT64: typed = t->n_int64_data, v->data = t->int64_data; break;
	default: typed = t->n_int32_data, v->data = t->int32_data; break;
	}
	for (size_t d = 0; d < t->n_dims; d++) {
		if (t->dims[d] < 0 || (t->dims[d] && count > SIZE_MAX / (size_t)t->dims[d]))
			return onnx_fail(r, "%s.%s: dimension %zu is %lld", r->op, a->name, d, (long long)t->dims[d]);
		count *= (size_t)t->dims[d];
	}
	if (t->has_raw_data) {
		if (t->raw_data.len % types[k].size || (t->n_dims && t->raw_data.len / types[k].size != count))
			return onnx_fail(r, "%s.%s: %zu bytes of raw data for %zu elements of %zu bytes", r->op, a->name, t->raw_data.len,
			            count, types[k].size);
		v->bytes = t->raw_data.data;
		v->count = t->raw_data.len / types[k].size;
	} else {
		if (t->n_dims && typed != count)
			return onnx_fail(r, "%s.%s: %zu elements, but the tensor's shape holds %zu", r->op, a->name, typed, count);
		v->count = typed;
	}
	return true;
}

/*
 * Attribute `name` as numbers: a list of ints or floats, or a tensor. With as_tensor,
 * `name`_as_tensor (doubles) may stand for it instead (*is_double then says which).
 */
static bool read_values(Reader *r, const char *name, bool as_tensor, bool required, Values *v, bool *is_double)
{
	char tensor_name[64];
	const Attribute *a = attribute(r, name), *t = NULL;
	memset(v, 0, sizeof *v);
	if (as_tensor) {
		snprintf(tensor_name, sizeof tensor_name, "%s_as_tensor", name);
		t = attribute(r, tensor_name);
		if (a && t)
			return onnx_fail(r, "%s: both %s and %s are given", r->op, name, tensor_name);
		if (t)
			a = t;
	}
	if (!a)
		return required ? onnx_fail(r, "%s: missing attribute '%s'", r->op, name) : true;
	v->name = a->name;
	if (a->t || (a->has_type && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)) {
		if (!read_tensor(r, a, v))
			return false;
	} else if (a->n_floats || (a->has_type && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS)) {
		v->kind = VALUES_FLOAT, v->data = a->floats, v->count = a->n_floats;
	} else {
		v->kind = VALUES_INT64, v->data = a->ints, v->count = a->n_ints;
	}
	if (is_double)
		*is_double = v->kind == VALUES_DOUBLE;
	return true;
}

/* Integer attribute `name` (`otherwise` when absent). */
static bool read_int(Reader *r, const char *name, int64_t min, int64_t max, int64_t otherwise, int64_t *out)
{
	const Attribute *a = attribute(r, name);
	*out = otherwise;
	if (!a)
		return true;
	if (!a->has_i)
		return onnx_fail(r, "%s.%s: expected an integer", r->op, name);
	*out = a->i;
	if (*out < min || *out > max)
		return onnx_fail(r, "%s.%s: %lld is out of range [%lld, %lld]", r->op, name, (long long)*out, (long long)min, (long long)max);
	return true;
}

/* String attribute `name` (`otherwise` when absent) into buf. */
static bool read_string(Reader *r, const char *name, const char *otherwise, char *buf, size_t size)
{
	const Attribute *a = attribute(r, name);
	if (!a) {
		snprintf(buf, size, "%s", otherwise);
		return true;
	}
	if (!a->has_s)
		return onnx_fail(r, "%s.%s: expected a string", r->op, name);
	snprintf(buf, size, "%.*s", (int)(a->s.len < size ? a->s.len : size - 1), (const char *)a->s.data);
	return true;
}

/* Values v must have as many elements as `like` (absent optional ones are skipped). */
static bool same_length(Reader *r, const Values *v, const Values *like)
{
	if (v->name && v->count != like->count)
		return onnx_fail(r, "%s.%s: %zu elements, but %s has %zu", r->op, v->name, v->count, like->name, like->count);
	return true;
}

/* Where item i comes from, for messages. */
static const char *item_place(const Reader *r, size_t i, char *buf, size_t size)
{
	if (!r->v5)
		snprintf(buf, size, "tree %lld node %lld (nodes_nodeids[%zu])", (long long)r->items[i].tree,
		         (long long)r->items[i].id, i);
	else if (i < r->num_splits)
		snprintf(buf, size, "nodes_featureids[%zu]", i);
	else
		snprintf(buf, size, "leaf_weights[%zu]", i - r->num_splits);
	return buf;
}

/* Fill the split fields of item i from element i of the nodes_* arrays (mode already set). */
static bool read_split(Reader *r, size_t i, const Values *features, const Values *thresholds, const Values *missing)
{
	Item *it = &r->items[i];
	int64_t feature = values_int(features, i), track = missing->name ? values_int(missing, i) : 0;
	if (feature < 0 || feature > INT32_MAX)
		return onnx_fail(r, "%s.nodes_featureids[%zu]: feature %lld out of range", r->op, i, (long long)feature);
	if (track != 0 && track != 1)
		return onnx_fail(r, "%s.nodes_missing_value_tracks_true[%zu]: %lld (expected 0 or 1)", r->op, i, (long long)track);
	it->feature = (int32_t)feature;
	it->missing_true = (uint8_t)track;
	it->threshold = values_get(thresholds, i);
	if (it->mode != MODE_MEMBER && isnan(it->threshold))
		return onnx_fail(r, "%s.%s[%zu]: threshold is NaN", r->op, thresholds->name, i);
	if (feature > r->max_feature)
		r->max_feature = feature;
	return true;
}

/* A (tree id, node id) key of opsets 1-3, and the item it names. */
typedef struct Key {
	int64_t tree, id;
	size_t item;
} Key;

static int key_compare(const void *a, const void *b)
{
	const Key *x = a, *y = b;
	if (x->tree != y->tree)
		return x->tree < y->tree ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->item < y->item ? -1 : x->item > y->item;
}

/* The item named (tree, id), or SIZE_MAX. */
static size_t key_find(const Key *keys, size_t n, int64_t tree, int64_t id)
{
	Key want = {tree, id, 0};
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (key_compare(&keys[mid], &want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && keys[lo].tree == tree && keys[lo].id == id ? keys[lo].item : SIZE_MAX;
}

/* Opsets 1-3: the leaves' weights (prefix "target_" or "class_"), each to an output below num_outputs. */
static bool read_weights_v3(Reader *r, const char *prefix, uint32_t num_outputs, const Key *keys, bool *is_double)
{
	char names[4][32];
	Values tree_ids, node_ids, ids, values;
	Key *order;
	snprintf(names[0], sizeof names[0], "%streeids", prefix);
	snprintf(names[1], sizeof names[1], "%snodeids", prefix);
	snprintf(names[2], sizeof names[2], "%sids", prefix);
	snprintf(names[3], sizeof names[3], "%sweights", prefix);
	if (!read_values(r, names[0], false, true, &tree_ids, NULL) || !read_values(r, names[1], false, true, &node_ids, NULL) ||
	    !read_values(r, names[2], false, true, &ids, NULL) || !read_values(r, names[3], true, true, &values, is_double) ||
	    !same_length(r, &node_ids, &tree_ids) || !same_length(r, &ids, &tree_ids) || !same_length(r, &values, &tree_ids))
		return false;
	r->num_weights = tree_ids.count;
	r->weights = xcalloc(r->num_weights ? r->num_weights : 1, sizeof *r->weights);
	order = xcalloc(r->num_weights ? r->num_weights : 1, sizeof *order);
	for (size_t j = 0; j < r->num_weights; j++) {
		int64_t tree = values_int(&tree_ids, j), id = values_int(&node_ids, j), target = values_int(&ids, j);
		size_t u = key_find(keys, r->num_items, tree, id);
		double w = values_get(&values, j);
		bool ok = false;
		if (u == SIZE_MAX)
			onnx_fail(r, "%s.%s[%zu]: tree %lld has no node %lld", r->op, names[1], j, (long long)tree, (long long)id);
		else if (r->items[u].mode != MODE_LEAF)
			onnx_fail(r, "%s.%s[%zu]: node %lld of tree %lld is not a leaf", r->op, names[1], j, (long long)id, (long long)tree);
		else if (target < 0 || target >= num_outputs)
			onnx_fail(r, "%s.%s[%zu]: %lld out of range (the model has %u outputs)", r->op, names[2], j, (long long)target, num_outputs);
		else if (!isfinite(w))
			onnx_fail(r, "%s.%s[%zu]: weight is %s", r->op, values.name, j, isnan(w) ? "NaN" : "infinite");
		else
			ok = true;
		if (!ok) {
			free(order);
			return false;
		}
		order[j] = (Key){(int64_t)u, (int64_t)j, 0};
		r->weights[j] = (Weight){(uint32_t)target, w};
	}
	/* Group the weights by leaf (keeping their order within a leaf). */
	qsort(order, r->num_weights, sizeof *order, key_compare);
	for (size_t j = 0; j < r->num_weights; j++) {
		Item *leaf = &r->items[order[j].tree];
		if (!leaf->num_weights++)
			leaf->first_weight = j;
	}
	{
		Weight *sorted = xcalloc(r->num_weights ? r->num_weights : 1, sizeof *sorted);
		for (size_t j = 0; j < r->num_weights; j++)
			sorted[j] = r->weights[order[j].id];
		free(r->weights);
		r->weights = sorted;
	}
	free(order);
	return true;
}

/* The child of split i named by element i of `ids` (a node id of the same tree), as an item index. */
static bool child_v3(Reader *r, const Key *keys, const Values *ids, size_t i, int side)
{
	int64_t id = values_int(ids, i);
	size_t u = key_find(keys, r->num_items, r->items[i].tree, id);
	if (u == SIZE_MAX)
		return onnx_fail(r, "%s.%s[%zu]: node id %lld is not in tree %lld", r->op, ids->name, i, (long long)id,
		            (long long)r->items[i].tree);
	r->items[i].child[side] = u;
	return true;
}

/* Opsets 1-3: the nodes, their children and each tree's root, then the leaves' weights. */
static bool read_items_v3(Reader *r, const char *prefix, uint32_t num_outputs, bool *thresholds_double, bool *weights_double)
{
	Values tree_ids, node_ids, features, thresholds, true_ids, false_ids, missing;
	const Attribute *mode_names = attribute(r, "nodes_modes");
	uint8_t *referenced = NULL;
	Key *keys = NULL;
	bool ok = false;

	if (!read_values(r, "nodes_treeids", false, true, &tree_ids, NULL) ||
	    !read_values(r, "nodes_nodeids", false, true, &node_ids, NULL) ||
	    !read_values(r, "nodes_featureids", false, true, &features, NULL) ||
	    !read_values(r, "nodes_values", true, true, &thresholds, thresholds_double) ||
	    !read_values(r, "nodes_truenodeids", false, true, &true_ids, NULL) ||
	    !read_values(r, "nodes_falsenodeids", false, true, &false_ids, NULL) ||
	    !read_values(r, "nodes_missing_value_tracks_true", false, false, &missing, NULL))
		return false;
	if (!mode_names)
		return onnx_fail(r, "%s: missing attribute 'nodes_modes'", r->op);
	if (!same_length(r, &node_ids, &tree_ids) || !same_length(r, &features, &tree_ids) ||
	    !same_length(r, &thresholds, &tree_ids) || !same_length(r, &true_ids, &tree_ids) ||
	    !same_length(r, &false_ids, &tree_ids) || !same_length(r, &missing, &tree_ids))
		return false;
	if (mode_names->n_strings != tree_ids.count)
		return onnx_fail(r, "%s.nodes_modes: %zu elements, but nodes_treeids has %zu", r->op, mode_names->n_strings, tree_ids.count);
	r->num_items = tree_ids.count;
	r->items = xcalloc(r->num_items ? r->num_items : 1, sizeof *r->items);
	keys = xcalloc(r->num_items ? r->num_items : 1, sizeof *keys);
	for (size_t i = 0; i < r->num_items; i++) {
		Item *it = &r->items[i];
		const ProtobufCBinaryData *s = &mode_names->strings[i];
		it->tree = values_int(&tree_ids, i);
		it->id = values_int(&node_ids, i);
		keys[i] = (Key){it->tree, it->id, i};
		it->mode = COUNT_OF(modes);
		for (uint8_t m = 0; m < COUNT_OF(modes); m++)
			if (m != MODE_MEMBER && strlen(modes[m].name) == s->len && memcmp(modes[m].name, s->data, s->len) == 0)
				it->mode = m;
		if (it->mode == COUNT_OF(modes)) {
			onnx_fail(r, "%s.nodes_modes[%zu]: unknown mode '%.*s'", r->op, i, (int)(s->len < 40 ? s->len : 40), (const char *)s->data);
			goto done;
		}
		if (it->mode != MODE_LEAF && !read_split(r, i, &features, &thresholds, &missing))
			goto done;
	}
	qsort(keys, r->num_items, sizeof *keys, key_compare);
	for (size_t k = 1; k < r->num_items; k++)
		if (keys[k].tree == keys[k - 1].tree && keys[k].id == keys[k - 1].id) {
			onnx_fail(r, "%s.nodes_nodeids[%zu]: tree %lld has node %lld twice (also at %zu)", r->op, keys[k].item,
			     (long long)keys[k].tree, (long long)keys[k].id, keys[k - 1].item);
			goto done;
		}
	referenced = xcalloc(r->num_items ? r->num_items : 1, 1);
	for (size_t i = 0; i < r->num_items; i++) {
		if (r->items[i].mode == MODE_LEAF)
			continue;
		if (!child_v3(r, keys, &true_ids, i, 0) || !child_v3(r, keys, &false_ids, i, 1))
			goto done;
		referenced[r->items[i].child[0]] = referenced[r->items[i].child[1]] = 1;
	}
	/* A tree's root is its one node that is no node's child; trees in order of their ids. */
	r->roots = xcalloc(r->num_items ? r->num_items : 1, sizeof *r->roots);
	for (size_t k = 0; k < r->num_items;) {
		size_t end = k, root = SIZE_MAX;
		while (end < r->num_items && keys[end].tree == keys[k].tree)
			end++;
		for (size_t j = k; j < end; j++) {
			if (referenced[keys[j].item])
				continue;
			if (root != SIZE_MAX) {
				onnx_fail(r, "%s: tree %lld has two roots, nodes %lld and %lld (nodes no other node points to)", r->op,
				     (long long)keys[k].tree, (long long)r->items[root].id, (long long)keys[j].id);
				goto done;
			}
			root = keys[j].item;
		}
		if (root == SIZE_MAX) {
			onnx_fail(r, "%s: tree %lld has no root (every node is another's child: a cycle)", r->op, (long long)keys[k].tree);
			goto done;
		}
		r->roots[r->num_trees++] = root;
		k = end;
	}
	ok = read_weights_v3(r, prefix, num_outputs, keys, weights_double);
done:
	free(keys);
	free(referenced);
	return ok;
}

/* Opset 5: element i of a child array, an index into nodes_* or (when `leaf` says so) leaf_*. */
static bool child_v5(Reader *r, const Values *ids, const Values *leafs, size_t i, int side)
{
	int64_t id = values_int(ids, i), is_leaf = values_int(leafs, i);
	size_t limit = is_leaf ? r->num_items - r->num_splits : r->num_splits;
	if (is_leaf != 0 && is_leaf != 1)
		return onnx_fail(r, "%s.%s[%zu]: %lld (expected 0 or 1)", r->op, leafs->name, i, (long long)is_leaf);
	if (id < 0 || (uint64_t)id >= limit)
		return onnx_fail(r, "%s.%s[%zu]: index %lld out of range (there are %zu %s)", r->op, ids->name, i, (long long)id, limit,
		            is_leaf ? "leaves" : "nodes");
	r->items[i].child[side] = (size_t)id + (is_leaf ? r->num_splits : 0);
	return true;
}

/* Opset 5: the BRANCH_MEMBER sets, in node order, NaN between them; category rule EXACT. */
static bool read_sets_v5(Reader *r, HForest *f, size_t file_size)
{
	Values members;
	size_t k = 0;
	uint64_t budget = 16 * (uint64_t)file_size + 65536; /* words of sets the file may ask for */
	if (!read_values(r, "membership_values", false, false, &members, NULL))
		return false;
	f->category_rule = HCATEGORY_EXACT;
	for (size_t i = 0; i < r->num_splits; i++) {
		size_t start = k;
		double largest = -1;
		uint32_t *words;
		if (r->items[i].mode != MODE_MEMBER)
			continue;
		if (k > members.count || (k == members.count && (k > 0 || !members.name)))
			return onnx_fail(r, "%s.membership_values: no set for the BRANCH_MEMBER node nodes_modes[%zu]", r->op, i);
		for (; k < members.count && !isnan(values_get(&members, k)); k++) {
			double c = values_get(&members, k);
			if (c < 0 || c != floor(c) || c >= MAX_CATEGORY)
				return onnx_fail(r, "%s.membership_values[%zu]: %g is not a category grove takes (an integer from 0 to %u)", r->op,
				            k, c, MAX_CATEGORY - 1);
			largest = c > largest ? c : largest;
		}
		{
			uint32_t num_words = largest < 0 ? 0 : (uint32_t)largest / 32 + 1;
			if (num_words > budget)
				return onnx_fail(r, "%s.membership_values: the sets need more memory than a file of this size justifies", r->op);
			budget -= num_words;
			r->items[i].set = hir_set_add(f, num_words, &words);
		}
		for (size_t j = start; j < k; j++) {
			uint32_t c = (uint32_t)values_get(&members, j);
			words[c / 32] |= UINT32_C(1) << (c % 32);
		}
		k++; /* the NaN */
	}
	if (k < members.count)
		return onnx_fail(r, "%s.membership_values[%zu]: more sets than BRANCH_MEMBER nodes", r->op, k);
	return true;
}

/* Opset 5: the interior nodes, the leaves (one weight each) and the roots. */
static bool read_items_v5(Reader *r, uint32_t num_outputs, HForest *f, size_t file_size, bool *thresholds_double, bool *weights_double)
{
	Values roots, features, modes_v, thresholds, true_ids, false_ids, true_leafs, false_leafs, missing, targets, weights;
	if (!read_values(r, "tree_roots", false, true, &roots, NULL) || !read_values(r, "nodes_featureids", false, true, &features, NULL) ||
	    !read_values(r, "nodes_modes", false, true, &modes_v, NULL) ||
	    !read_values(r, "nodes_splits", false, true, &thresholds, thresholds_double) ||
	    !read_values(r, "nodes_truenodeids", false, true, &true_ids, NULL) ||
	    !read_values(r, "nodes_falsenodeids", false, true, &false_ids, NULL) ||
	    !read_values(r, "nodes_trueleafs", false, true, &true_leafs, NULL) ||
	    !read_values(r, "nodes_falseleafs", false, true, &false_leafs, NULL) ||
	    !read_values(r, "nodes_missing_value_tracks_true", false, false, &missing, NULL) ||
	    !read_values(r, "leaf_targetids", false, true, &targets, NULL) ||
	    !read_values(r, "leaf_weights", false, true, &weights, weights_double))
		return false;
	if (!same_length(r, &modes_v, &features) || !same_length(r, &thresholds, &features) || !same_length(r, &true_ids, &features) ||
	    !same_length(r, &false_ids, &features) || !same_length(r, &true_leafs, &features) ||
	    !same_length(r, &false_leafs, &features) || !same_length(r, &missing, &features) || !same_length(r, &weights, &targets))
		return false;
	r->num_splits = features.count;
	r->num_items = features.count + targets.count;
	r->items = xcalloc(r->num_items ? r->num_items : 1, sizeof *r->items);
	r->num_weights = targets.count;
	r->weights = xcalloc(r->num_weights ? r->num_weights : 1, sizeof *r->weights);
	for (size_t i = 0; i < r->num_splits; i++) {
		int64_t mode = values_int(&modes_v, i);
		if (mode < 0 || mode > MODE_MEMBER)
			return onnx_fail(r, "%s.nodes_modes[%zu]: unknown mode %lld", r->op, i, (long long)mode);
		r->items[i].mode = (uint8_t)mode;
		if (!read_split(r, i, &features, &thresholds, &missing) || !child_v5(r, &true_ids, &true_leafs, i, 0) ||
		    !child_v5(r, &false_ids, &false_leafs, i, 1))
			return false;
	}
	for (size_t j = 0; j < r->num_weights; j++) {
		Item *leaf = &r->items[r->num_splits + j];
		int64_t target = values_int(&targets, j);
		double w = values_get(&weights, j);
		if (target < 0 || target >= num_outputs)
			return onnx_fail(r, "%s.leaf_targetids[%zu]: %lld out of range (the model has %u outputs)", r->op, j, (long long)target,
			            num_outputs);
		if (!isfinite(w))
			return onnx_fail(r, "%s.leaf_weights[%zu]: weight is %s", r->op, j, isnan(w) ? "NaN" : "infinite");
		leaf->mode = MODE_LEAF;
		leaf->first_weight = j;
		leaf->num_weights = 1;
		r->weights[j] = (Weight){(uint32_t)target, w};
	}
	r->roots = xcalloc(roots.count ? roots.count : 1, sizeof *r->roots);
	for (size_t t = 0; t < roots.count; t++) {
		int64_t root = values_int(&roots, t);
		if (root < 0 || (uint64_t)root >= r->num_splits)
			return onnx_fail(r, "%s.tree_roots[%zu]: index %lld out of range (there are %zu nodes)", r->op, t, (long long)root,
			            r->num_splits);
		r->roots[r->num_trees++] = (size_t)root;
	}
	return read_sets_v5(r, f, file_size);
}

/* Whether item u acts as a leaf: a leaf, or (opset 5) a node whose branches are the same leaf. */
static size_t as_leaf(const Reader *r, size_t u)
{
	const Item *it = &r->items[u];
	if (it->mode == MODE_LEAF)
		return u;
	if (r->v5 && it->child[0] == it->child[1] && r->items[it->child[0]].mode == MODE_LEAF)
		return it->child[0];
	return SIZE_MAX;
}

/* Combine weight w into a leaf's value v for output aggregate a. */
static double combine(HAggregate a, double v, double w)
{
	if (a == HAGGREGATE_MIN)
		return w < v ? w : v;
	if (a == HAGGREGATE_MAX)
		return w > v ? w : v;
	return v + w;
}

/*
 * Tree t of the model into f: its items breadth first from the root (a leaf may be
 * reached more than once; any other node twice is a cycle or a shared subtree), then
 * its leaves' values over the outputs they add to. *touches says whether every leaf
 * adds to output `watch`.
 */
static bool build_tree(Reader *r, HForest *f, uint32_t t, uint32_t watch, bool *touches)
{
	size_t count = 1;
	uint32_t lo = UINT32_MAX, hi = 0, width;
	double identity = f->aggregate == HAGGREGATE_MIN ? INFINITY : f->aggregate == HAGGREGATE_MAX ? -INFINITY : 0;
	HNode *nodes;
	char place[128];

	*touches = true;
	GROW(r->order, 1, r->order_cap);
	r->order[0] = r->roots[t];
	for (size_t i = 0; i < count; i++) {
		size_t u = r->order[i], leaf = as_leaf(r, u);
		const Item *it = &r->items[u];
		HNode *n;
		if (leaf != u && r->stamp[u])
			return onnx_fail(r, "%s: %s is reached twice (a cycle, or a node shared by two parents)", r->op,
			            item_place(r, u, place, sizeof place));
		r->stamp[u] = t + 1;
		GROW(r->nodes, count, r->nodes_cap);
		n = memset(&r->nodes[i], 0, sizeof *n);
		if (leaf != SIZE_MAX) {
			const Item *l = &r->items[leaf];
			bool seen = false;
			r->stamp[leaf] = t + 1;
			if (!l->num_weights)
				return onnx_fail(r, "%s: %s is a leaf without a weight", r->op, item_place(r, leaf, place, sizeof place));
			for (uint32_t k = 0; k < l->num_weights; k++) {
				uint32_t target = r->weights[l->first_weight + k].target;
				lo = target < lo ? target : lo;
				hi = target > hi ? target : hi;
				seen |= target == watch;
			}
			*touches &= seen;
			n->feature = HIR_LEAF;
			r->order[i] = leaf;
			continue;
		}
		if (count + 2 >= MAX_NODES_PER_TREE)
			return onnx_fail(r, "%s: tree %u has more than %u nodes", r->op, t, MAX_NODES_PER_TREE);
		n->feature = it->feature;
		n->value = it->threshold;
		n->compare = (uint8_t)modes[it->mode].compare;
		n->missing = HMISSING_NAN;
		n->default_left = it->missing_true;
		n->left = (uint32_t)count;
		n->right = (uint32_t)count + 1;
		if (it->mode == MODE_MEMBER)
			n->set = it->set;
		GROW(r->order, count + 2, r->order_cap);
		r->order[count++] = it->child[0];
		r->order[count++] = it->child[1];
	}

	width = hi - lo + 1;
	nodes = hir_tree_add(f, (uint32_t)count, lo);
	f->trees[f->num_trees - 1].width = width;
	memcpy(nodes, r->nodes, count * sizeof *nodes);
	for (size_t i = 0; i < count; i++) {
		const Item *l = &r->items[r->order[i]];
		double *values = &nodes[i].value;
		if (nodes[i].feature != HIR_LEAF)
			continue;
		if (width > 1) {
			nodes[i].vector = (uint32_t)hir_leaf_values_add(f, width, &values);
			if (f->num_leaf_values > UINT32_MAX)
				return onnx_fail(r, "%s: more than %u leaf values", r->op, UINT32_MAX);
		}
		for (uint32_t k = 0; k < width; k++)
			values[k] = identity;
		for (uint32_t k = 0; k < l->num_weights; k++) {
			const Weight *w = &r->weights[l->first_weight + k];
			values[w->target - lo] = combine(f->aggregate, values[w->target - lo], w->value);
		}
	}
	return true;
}

/*
 * All trees; then every item must belong to one. With two classes, a row whose leaves
 * add nothing to class 1 makes onnxruntime answer in its binary encoding, which HIR
 * cannot say: some tree must add to class 1 from every leaf (*all_rows_touch).
 */
static bool build_trees(Reader *r, HForest *f, uint32_t watch, bool *all_rows_touch)
{
	char place[128];
	r->stamp = xcalloc(r->num_items ? r->num_items : 1, sizeof *r->stamp);
	*all_rows_touch = false;
	for (uint32_t t = 0; t < r->num_trees; t++) {
		bool touches;
		if (!build_tree(r, f, t, watch, &touches))
			return false;
		*all_rows_touch |= touches;
	}
	for (size_t u = 0; u < r->num_items; u++)
		if (!r->stamp[u])
			return onnx_fail(r, "%s: %s is not reachable from any tree's root", r->op, item_place(r, u, place, sizeof place));
	return true;
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
		if (!read_int(r, "aggregate_function", 0, COUNT_OF(aggregates) - 1, 1, &a) ||
		    !read_int(r, "post_transform", 0, COUNT_OF(transforms) - 1, 0, &t))
			return false;
		f->aggregate = aggregates[a].aggregate;
		f->transform = transforms[t].transform;
		return true;
	}
	if (!classifier) { /* classifiers always sum */
		if (!read_string(r, "aggregate_function", "SUM", name, sizeof name))
			return false;
		if ((k = FIND(aggregates, name)) < 0)
			return onnx_fail(r, "%s.aggregate_function: unknown function '%s' (expected AVERAGE, SUM, MIN or MAX)", r->op, name);
		f->aggregate = aggregates[k].aggregate;
	}
	if (!read_string(r, "post_transform", "NONE", name, sizeof name))
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
	if (!read_values(r, "base_values", true, false, &base, NULL))
		return false;
	/* Two classes may have one base value, for class 0 (check_binary says what onnxruntime does with them). */
	if (base.name && base.count && base.count != f->num_outputs && !(classifier && f->num_outputs == 2 && base.count == 1))
		return onnx_fail(r, "%s.%s: %zu values for %u outputs", r->op, base.name, base.count, f->num_outputs);
	for (size_t o = 0; base.name && o < base.count; o++)
		f->base_score[o] = values_get(&base, o);
	return true;
}

/* The number of outputs: n_targets, or the classifier's labels. */
static bool read_num_outputs(Reader *r, bool classifier, uint32_t *num_outputs)
{
	const Attribute *ints = attribute(r, "classlabels_int64s"), *strings = attribute(r, "classlabels_strings");
	int64_t n;
	if (!classifier) {
		if (!read_int(r, "n_targets", 1, MAX_OUTPUTS, 1, &n))
			return false;
		*num_outputs = (uint32_t)n;
		return true;
	}
	if (ints && strings)
		return onnx_fail(r, "%s: both classlabels_int64s and classlabels_strings are given", r->op);
	if (!ints && !strings)
		return onnx_fail(r, "%s: missing attribute 'classlabels_int64s' or 'classlabels_strings'", r->op);
	n = ints ? (int64_t)ints->n_ints : (int64_t)strings->n_strings;
	if (n < 2 || n > MAX_OUTPUTS)
		return onnx_fail(r, "%s.%s: %lld classes (grove takes 2 to %d)", r->op, ints ? ints->name : strings->name, (long long)n,
		            MAX_OUTPUTS);
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
	bool class1 = false, negative = false;
	for (size_t j = 0; j < r->num_weights; j++) {
		class1 |= r->weights[j].target == 1;
		negative |= r->weights[j].value < 0;
	}
	if (!class1) {
		f->num_outputs = 1;
		if (f->transform == HTRANSFORM_SOFTMAX || f->transform == HTRANSFORM_SOFTMAX_ZERO)
			f->transform = HTRANSFORM_IDENTITY;
		if (f->transform == HTRANSFORM_SIGMOID)
			f->binary = HBINARY_COMPLEMENT;
		else if (f->transform != HTRANSFORM_PROBIT)
			f->binary = negative ? HBINARY_NEGATE : HBINARY_COMPLEMENT;
		return true;
	}
	if (!read_values(r, "base_values", true, false, &base, NULL))
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
	const Attribute *ints = attribute(r, "classlabels_int64s"), *strings = attribute(r, "classlabels_strings");
	HLabels *labels = &f->labels;
	bool negative = false;
	labels->count = (uint32_t)(ints ? ints->n_ints : strings->n_strings);
	if (ints) {
		labels->ints = xmalloc(labels->count * sizeof *labels->ints);
		memcpy(labels->ints, ints->ints, labels->count * sizeof *labels->ints);
	} else {
		labels->strings = xcalloc(labels->count, sizeof *labels->strings);
		for (uint32_t k = 0; k < labels->count; k++) {
			const ProtobufCBinaryData *s = &strings->strings[k];
			if (memchr(s->data, 0, s->len))
				return onnx_fail(r, "%s.classlabels_strings[%u]: a label holds a NUL byte", r->op, k);
			labels->strings[k] = xmalloc(s->len + 1);
			memcpy(labels->strings[k], s->data, s->len);
			labels->strings[k][s->len] = 0;
		}
	}
	for (size_t j = 0; j < r->num_weights; j++)
		negative |= r->weights[j].value < 0;
	labels->margin = labels->count > 2 ? -1 : f->num_outputs == 1 ? 0 : 1;
	labels->threshold = labels->count == 2 && f->num_outputs == 1 && !negative ? 0.5 : 0.0;
	return true;
}

HForest *onnx_read_ensemble(Reader *r, size_t file_size, uint32_t input_width, bool double_rows)
{
	bool classifier = strcmp(r->op, "TreeEnsembleClassifier") == 0, thresholds_double = false, weights_double = false;
	bool all_rows_touch;
	uint32_t num_outputs = 0;
	HForest *f;

	r->v5 = strcmp(r->op, "TreeEnsemble") == 0;
	r->max_feature = -1;
	if (!read_num_outputs(r, classifier, &num_outputs))
		return NULL;
	f = hir_forest_new(r->name, 0, num_outputs);
	if (!read_aggregate_transform(r, classifier, f) || !read_base_values(r, classifier, f))
		goto fail;
	if (r->v5 ? !read_items_v5(r, num_outputs, f, file_size, &thresholds_double, &weights_double)
	          : !read_items_v3(r, classifier ? "class_" : "target_", num_outputs, &thresholds_double, &weights_double))
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
	if (!build_trees(r, f, classifier && num_outputs == 2 ? 1 : UINT32_MAX, &all_rows_touch))
		goto fail;
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

