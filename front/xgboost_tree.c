/*
 * One XGBoost tree -> one HIR tree: its nodes, its categorical splits, its vector leaves.
 *
 * Categorical splits (split_type[i] = 1; XGBoost 1.6+ with enable_categorical): the
 * node's categories are categories[categories_segments[k] ..][.. categories_sizes[k]]
 * where categories_nodes[k] = i (the list is in node order). XGBoost's Decision
 * (src/common/categorical.h) sends x LEFT when it is not a valid category (x < 0 or
 * x >= 2^24), when its bit lies past the node's bitset, or when category (int)x is not
 * in the set; only a category in the set goes RIGHT; a missing x goes to the default
 * child (src/predictor/predict_fn.h, before any decision). HIR's `in` goes left on
 * membership, so the children and default_left are swapped, and the forest's category
 * rule is HCATEGORY_NONNEGATIVE. Categories must lie in [0, 2^24), which keeps every
 * set below XGBoost's invalid range.
 *
 * Vector leaves (multi_strategy="multi_output_tree": tree_param.size_leaf_vector = the
 * number of outputs, every leaf adds a vector to all of them): XGBoost 3.2 and later
 * write the leaves' vectors in leaf_weights, leaf k's at [k * size, (k + 1) * size),
 * and a leaf's right_children entry holds its k; XGBoost 2.0-3.1 write one vector per
 * node in base_weights, a leaf's at [i * size, (i + 1) * size).
 */
#include "front/xgboost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One past the largest category XGBoost accepts (OutOfRangeCat() in categorical.h). */
#define MAX_CATEGORY (1 << 24)
/* Where the length of the per-node arrays comes from, for messages. */
#define NUM_NODES "tree_param.num_nodes"
/* node->set of a categorical split whose set is not read yet. */
#define SET_PENDING UINT32_MAX

/* A tree being read. */
typedef struct TreeReader {
	XgboostReader *r;
	HForest *f;
	uint32_t value;  /* the tree's object in the document */
	uint32_t t;      /* its index in trees */
	uint32_t n;      /* its nodes */
	uint32_t width;  /* values per leaf */
	bool leaf_index; /* vector leaves: a leaf's right child holds its index in leaf_weights */
} TreeReader;

/* The per-node arrays of a tree, walked together. */
typedef struct TreeArrays {
	DocIterator left, right, feature, condition, default_left, split_type, cover;
	bool has_split_type, has_cover;
} TreeArrays;

/*
 * Array `key` of the tree: present, an array, of `count` elements (any count if count is
 * -1; `source` says where the count comes from); starts *it on it.
 */
static bool tree_array(TreeReader *tr, const char *key, int64_t count, const char *source, DocIterator *it)
{
	XgboostReader *r = tr->r;
	uint32_t v = doc_member(&r->doc, tr->value, key);
	if (v == DOC_MISSING)
		return xgboost_fail(r, "trees[%u]: missing member '%s'", tr->t, key);
	if (doc_type(&r->doc, v) != DOC_ARRAY)
		return xgboost_fail(r, "trees[%u].%s: expected an array, found %s", tr->t, key, doc_type_name(doc_type(&r->doc, v)));
	if (count >= 0 && doc_length(&r->doc, v) != (uint64_t)count)
		return xgboost_fail(r, "trees[%u].%s: %llu elements, but %s is %lld", tr->t, key,
		                    (unsigned long long)doc_length(&r->doc, v), source, (long long)count);
	doc_iterate(&r->doc, v, it);
	return true;
}

/* Report that element i of tree array `key` is not what it should be. */
static bool fail_item(TreeReader *tr, const char *key, uint64_t i, const DocItem *item, const char *expected)
{
	char found[64];
	doc_item_describe(item, found, sizeof found);
	return xgboost_fail(tr->r, "trees[%u].%s[%llu]: expected %s, found %s", tr->t, key, (unsigned long long)i, expected, found);
}

/* The next element of tree array `key` (element i) as an integer. */
static inline bool next_integer(TreeReader *tr, DocIterator *it, const char *key, uint64_t i, int64_t *out)
{
	DocItem item;
	if (doc_next_int64(it, &item, out))
		return true;
	return fail_item(tr, key, i, &item, "an integer");
}

/* The next element of tree array `key` (element i) as a float. */
static inline bool next_float(TreeReader *tr, DocIterator *it, const char *key, uint64_t i, float *out)
{
	DocItem item;
	if (doc_next_float(it, &item, out))
		return true;
	return fail_item(tr, key, i, &item, "a number");
}

/* A child index of split node i: a node of the tree other than the root. */
static bool check_child(TreeReader *tr, int64_t child, const char *key, uint32_t i)
{
	if (child == 0)
		return xgboost_fail(tr->r, "trees[%u].%s[%u]: the root (node 0) cannot be a child", tr->t, key, i);
	if (child < 0 || child >= tr->n)
		return xgboost_fail(tr->r, "trees[%u].%s[%u]: index %lld out of range (the tree has %u nodes)", tr->t, key, i,
		                    (long long)child, tr->n);
	return true;
}

/* A leaf (node i, whose left child is -1 and right child `right`, value `value`). */
static bool read_leaf(TreeReader *tr, uint32_t i, int64_t right, float value, HNode *node)
{
	node->feature = HIR_LEAF;
	if (tr->leaf_index) { /* its right child is its index in leaf_weights, checked with them */
		if (right < 0 || right > UINT32_MAX)
			return xgboost_fail(tr->r, "trees[%u].right_children[%u]: leaf index %lld out of range", tr->t, i, (long long)right);
		node->vector = (uint32_t)right;
		return true;
	}
	if (right != -1)
		return xgboost_fail(tr->r, "trees[%u].right_children[%u]: a leaf (left child -1) has right child %lld", tr->t, i,
		                    (long long)right);
	if (tr->width == 1 && !isfinite(value))
		return xgboost_fail(tr->r, "trees[%u].split_conditions[%u]: leaf value is %s", tr->t, i, isnan(value) ? "NaN" : "infinite");
	node->value = value;
	return true;
}

/* Fill node i from the next element of each array. */
static bool read_node(TreeReader *tr, TreeArrays *a, uint32_t i, HNode *node)
{
	XgboostReader *r = tr->r;
	int64_t left, right, feature, type = 0, flag;
	DocItem item;
	float value;

	if (!next_float(tr, &a->condition, "split_conditions", i, &value) ||
	    !next_integer(tr, &a->left, "left_children", i, &left) || !next_integer(tr, &a->right, "right_children", i, &right) ||
	    !next_integer(tr, &a->feature, "split_indices", i, &feature) ||
	    (a->has_split_type && !next_integer(tr, &a->split_type, "split_type", i, &type)) ||
	    (a->has_cover && !next_float(tr, &a->cover, "sum_hessian", i, &node->cover)))
		return false;
	if (!isfinite(node->cover))
		node->cover = 0; /* statistics only: tiling reads them, predictions do not */
	doc_next(&a->default_left, &item);
	if (left == -1)
		return read_leaf(tr, i, right, value, node);
	if (!check_child(tr, left, "left_children", i) || !check_child(tr, right, "right_children", i))
		return false;
	if (feature < 0 || feature >= tr->f->num_features)
		return xgboost_fail(r, "trees[%u].split_indices[%u]: feature %lld >= num_feature %u", tr->t, i, (long long)feature,
		                    tr->f->num_features);
	if (item.type == DOC_TRUE || item.type == DOC_FALSE)
		flag = item.type == DOC_TRUE;
	else if (!doc_item_int64(&item, &flag) || (flag != 0 && flag != 1))
		return fail_item(tr, "default_left", i, &item, "0, 1, true or false");
	node->feature = (int32_t)feature;
	if (type == 1) { /* categorical: in the set goes right in XGBoost, left in HIR */
		node->compare = HCMP_IN;
		node->set = SET_PENDING;
		node->left = (uint32_t)right;
		node->right = (uint32_t)left;
		node->default_left = (uint8_t)!flag;
		return true;
	}
	if (type != 0)
		return xgboost_fail(r, "trees[%u].split_type[%u]: unknown split type %lld (0: numerical, 1: categorical)", tr->t, i,
		                    (long long)type);
	if (isnan(value))
		return xgboost_fail(r, "trees[%u].split_conditions[%u]: threshold is NaN", tr->t, i);
	node->left = (uint32_t)left;
	node->right = (uint32_t)right;
	node->default_left = (uint8_t)flag;
	node->value = value;
	node->compare = HCMP_LT;
	return true;
}

/* The categories of every categorical split, as a list (checked to lie in [0, MAX_CATEGORY)); *count of them. */
static uint32_t *read_category_list(TreeReader *tr, uint64_t *count)
{
	DocIterator it;
	uint32_t *list;
	int64_t c;
	if (!tree_array(tr, "categories", -1, NULL, &it))
		return NULL;
	*count = it.remaining;
	list = xmalloc((it.remaining ? it.remaining : 1) * sizeof *list); /* no more than the file's bytes */
	for (uint64_t j = 0; j < *count; j++) {
		if (!next_integer(tr, &it, "categories", j, &c))
			goto fail;
		if (c < 0 || c >= MAX_CATEGORY) {
			xgboost_fail(tr->r, "trees[%u].categories[%llu]: category %lld is %s", tr->t, (unsigned long long)j, (long long)c,
			             c < 0 ? "negative" : "too large (XGBoost's categories are below 16777216)");
			goto fail;
		}
		list[j] = (uint32_t)c;
	}
	return list;
fail:
	free(list);
	return NULL;
}

/* Give categorical split `node` (node i, k-th in categories_nodes) the set categories[begin, begin + size). */
static bool add_set(TreeReader *tr, HNode *node, const uint32_t *categories, int64_t begin, int64_t size)
{
	uint32_t max = 0, *words;
	for (int64_t j = begin; j < begin + size; j++)
		max = categories[j] > max ? categories[j] : max;
	if (max / 32 + 1 > tr->r->set_words_left)
		return xgboost_fail(tr->r, "trees[%u]: the category sets need more memory than a model of this size can (category %u)",
		                    tr->t, max);
	tr->r->set_words_left -= max / 32 + 1;
	node->set = hir_set_add(tr->f, max / 32 + 1, &words);
	for (int64_t j = begin; j < begin + size; j++)
		words[categories[j] / 32] |= UINT32_C(1) << (categories[j] % 32);
	return true;
}

/* Read the category sets of the tree's categorical splits (nodes[i].set == SET_PENDING). */
static bool read_categories(TreeReader *tr, HNode *nodes)
{
	DocIterator node_it, segment_it, size_it;
	uint64_t num_categories = 0, k = 0;
	uint32_t *categories;
	int64_t previous = -1;
	bool ok = true;

	if (!tree_array(tr, "categories_nodes", -1, NULL, &node_it) ||
	    !tree_array(tr, "categories_segments", (int64_t)node_it.remaining, "the length of categories_nodes", &segment_it) ||
	    !tree_array(tr, "categories_sizes", (int64_t)node_it.remaining, "the length of categories_nodes", &size_it) ||
	    !(categories = read_category_list(tr, &num_categories)))
		return false;
	for (; ok && node_it.remaining; k++) {
		int64_t i, begin, size;
		if (!next_integer(tr, &node_it, "categories_nodes", k, &i) || !next_integer(tr, &segment_it, "categories_segments", k, &begin) ||
		    !next_integer(tr, &size_it, "categories_sizes", k, &size))
			ok = false;
		else if (i <= previous || i >= tr->n)
			ok = xgboost_fail(tr->r, "trees[%u].categories_nodes[%llu]: node %lld %s", tr->t, (unsigned long long)k, (long long)i,
			                  i >= tr->n ? "out of range" : "out of order (the list is in increasing node order)");
		else if (nodes[i].feature == HIR_LEAF || nodes[i].compare != HCMP_IN)
			ok = xgboost_fail(tr->r, "trees[%u].categories_nodes[%llu]: node %lld is not a categorical split", tr->t,
			                  (unsigned long long)k, (long long)i);
		else if (size < 1 || begin < 0 || (uint64_t)begin > num_categories || (uint64_t)size > num_categories - (uint64_t)begin)
			ok = xgboost_fail(tr->r, "trees[%u].categories_segments[%llu]: segment of %lld categories from %lld is out of range "
			                  "(categories has %llu)", tr->t, (unsigned long long)k, (long long)size, (long long)begin,
			                  (unsigned long long)num_categories);
		else
			ok = add_set(tr, &nodes[i], categories, begin, size);
		previous = i;
	}
	free(categories);
	for (uint32_t i = 0; ok && i < tr->n; i++)
		if (nodes[i].feature != HIR_LEAF && nodes[i].compare == HCMP_IN && nodes[i].set == SET_PENDING)
			return xgboost_fail(tr->r, "trees[%u].split_type[%u]: a categorical split that categories_nodes does not list", tr->t, i);
	return ok;
}

/* Append `count` values of float array `key` to the forest's leaf values; *first: where they start. */
static bool read_leaf_values(TreeReader *tr, const char *key, int64_t count, uint32_t *first)
{
	DocIterator it;
	double *values;
	float v;
	if (!tree_array(tr, key, count, "leaves x size_leaf_vector", &it))
		return false;
	if (it.remaining > UINT32_MAX - tr->f->num_leaf_values)
		return xgboost_fail(tr->r, "trees[%u].%s: more leaf values than the model can hold", tr->t, key);
	*first = (uint32_t)hir_leaf_values_add(tr->f, it.remaining, &values);
	for (uint64_t j = 0; it.remaining; j++) {
		if (!next_float(tr, &it, key, j, &v))
			return false;
		values[j] = v;
	}
	return true;
}

/*
 * Give the leaves of a tree of width > 1 their vectors: from leaf_weights (XGBoost 3.2+,
 * node->vector holding the leaf's index) or from base_weights (one vector per node).
 */
static bool read_leaf_vectors(TreeReader *tr, HNode *nodes)
{
	uint32_t first, w = tr->width;
	uint64_t num_leaves;
	if (tr->leaf_index) {
		uint32_t v = doc_member(&tr->r->doc, tr->value, "leaf_weights");
		num_leaves = doc_type(&tr->r->doc, v) == DOC_ARRAY ? doc_length(&tr->r->doc, v) / w : 0;
		if (!read_leaf_values(tr, "leaf_weights", (int64_t)(num_leaves * w), &first))
			return false;
		for (uint32_t i = 0; i < tr->n; i++) {
			if (nodes[i].feature != HIR_LEAF)
				continue;
			if (nodes[i].vector >= num_leaves)
				return xgboost_fail(tr->r, "trees[%u].right_children[%u]: leaf index %u out of range (leaf_weights holds %llu leaves)",
				                    tr->t, i, nodes[i].vector, (unsigned long long)num_leaves);
			nodes[i].vector = first + nodes[i].vector * w;
		}
		return true;
	}
	if (!read_leaf_values(tr, "base_weights", (int64_t)tr->n * w, &first))
		return false;
	for (uint32_t i = 0; i < tr->n; i++)
		if (nodes[i].feature == HIR_LEAF)
			nodes[i].vector = first + i * w;
	return true;
}

/* The leaf width of the tree (tree_param.size_leaf_vector, 0 and 1 meaning 1), checked against the forest. */
static bool read_width(TreeReader *tr, uint32_t param, uint32_t output)
{
	char path[64];
	int64_t size;
	snprintf(path, sizeof path, "trees[%u].tree_param", tr->t);
	if (!xgboost_optional_integer(tr->r, param, path, "size_leaf_vector", 0, XGBOOST_MAX_OUTPUTS, 0, &size))
		return false;
	tr->width = size > 1 ? (uint32_t)size : 1;
	if (tr->width > 1 && (tr->width != tr->f->num_outputs || output != 0))
		return xgboost_fail(tr->r, "%s.size_leaf_vector: leaves of %u values, but the model has %u outputs%s", path, tr->width,
		                    tr->f->num_outputs, output ? " (and the tree adds to output > 0)" : "");
	tr->leaf_index = tr->width > 1 && doc_member(&tr->r->doc, tr->value, "leaf_weights") != DOC_MISSING;
	return true;
}

bool xgboost_read_tree(XgboostReader *r, HForest *f, uint32_t tree, uint32_t t, uint32_t output, bool weighted, float weight)
{
	TreeReader tr = {.r = r, .f = f, .value = tree, .t = t};
	uint32_t param, n;
	int64_t num_nodes;
	char path[64];
	TreeArrays a;
	HNode *nodes;
	bool categorical = false;

	snprintf(path, sizeof path, "trees[%u]", t);
	if (doc_type(&r->doc, tree) != DOC_OBJECT)
		return xgboost_fail_type(r, path, tree, "an object");
	if (!(param = xgboost_member(r, tree, path, "tree_param", DOC_OBJECT)) || !read_width(&tr, param, output))
		return false;
	snprintf(path, sizeof path, "trees[%u].tree_param", t);
	if (!(n = xgboost_member(r, param, path, "num_nodes", -1)))
		return false;
	snprintf(path, sizeof path, "trees[%u].tree_param.num_nodes", t);
	if (!xgboost_integer(r, n, path, 1, XGBOOST_MAX_NODES_PER_TREE - 1, &num_nodes))
		return false;
	tr.n = (uint32_t)num_nodes;
	if (!tree_array(&tr, "left_children", num_nodes, NUM_NODES, &a.left) ||
	    !tree_array(&tr, "right_children", num_nodes, NUM_NODES, &a.right) ||
	    !tree_array(&tr, "split_indices", num_nodes, NUM_NODES, &a.feature) ||
	    !tree_array(&tr, "split_conditions", num_nodes, NUM_NODES, &a.condition) ||
	    !tree_array(&tr, "default_left", num_nodes, NUM_NODES, &a.default_left))
		return false;
	a.has_split_type = doc_member(&r->doc, tree, "split_type") != DOC_MISSING; /* XGBoost 1.3 and later */
	if (a.has_split_type && !tree_array(&tr, "split_type", num_nodes, NUM_NODES, &a.split_type))
		return false;
	a.has_cover = doc_member(&r->doc, tree, "sum_hessian") != DOC_MISSING; /* node statistics, for tiling */
	if (a.has_cover && !tree_array(&tr, "sum_hessian", num_nodes, NUM_NODES, &a.cover))
		return false;

	nodes = hir_tree_add(f, tr.n, output);
	f->trees[f->num_trees - 1].width = tr.width;
	for (uint32_t i = 0; i < tr.n; i++) {
		if (!read_node(&tr, &a, i, &nodes[i]))
			return false;
		categorical |= nodes[i].feature != HIR_LEAF && nodes[i].compare == HCMP_IN;
	}
	if (categorical) {
		f->category_rule = HCATEGORY_NONNEGATIVE;
		if (!read_categories(&tr, nodes))
			return false;
	}
	if (tr.width > 1) {
		uint32_t first = (uint32_t)f->num_leaf_values;
		if (!read_leaf_vectors(&tr, nodes))
			return false;
		if (weighted)
			for (uint64_t j = first; j < f->num_leaf_values; j++)
				f->leaf_values[j] = (float)((float)f->leaf_values[j] * weight);
	} else if (weighted) {
		for (uint32_t i = 0; i < tr.n; i++)
			if (nodes[i].feature == HIR_LEAF)
				nodes[i].value = (float)((float)nodes[i].value * weight);
	}
	return true;
}
