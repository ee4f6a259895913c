/*
 * CatBoost JSON models (`save_model(path, format="json")`) -> HIR.
 *
 * The parts prediction needs:
 *
 *   features_info.float_features[i]        feature_index, flat_feature_index (the row's column),
 *                                          nan_value_treatment (AsIs, AsFalse, AsTrue)
 *   features_info.categorical_features[i]  feature_index, flat_feature_index; "values", the hashes
 *                                          of its categories, where it is one-hot encoded
 *   oblivious_trees[t]                     splits (one per level, root first), leaf_values,
 *                                          leaf_weights (the training weight of each leaf)
 *   trees[t]                               in place of oblivious_trees, non-symmetric trees
 *                                          (read_node_tree)
 *   scale_and_bias                         [scale, [bias per output]]: margin = scale * sum + bias
 *   model_info.params.loss_function.type   the transform of the predictions
 *   model_info.class_params.class_names    a classifier's labels
 *
 * A tree is symmetric: level l tests splits[l] at every node, a true test adds 2^l to
 * the leaf's index (a row's leaf is sum over l of test_l << l), and leaf q adds
 * leaf_values[q * K .. q * K + K) to the K outputs. grove builds the complete tree,
 * a true test going right, so the leaf at position p from the left (the tests' bits,
 * root first, read as a binary number) holds leaf_values' entry for p with its bits
 * reversed.
 *
 * Tests: a float split is `x > border`, x and border rounded to float (CatBoost
 * quantizes float32 features); NaN is false but under AsTrue (nan_mode=Max). A one-hot
 * split is "the category's hash equals value", the hash being CatBoost's of the
 * category's text: grove's rows hold numbers, and CatBoost reads a numeric category as
 * its decimal text, so the reader finds the integer whose text has that hash (among
 * -99999 .. 999999) and tests x == that integer. Splits on CTRs (CatBoost's default
 * encoding of categorical features with more than one_hot_max_size values), text and
 * embedding features are refused.
 */
#include "front/front.h"
#include "front/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CATBOOST_MAX_DEPTH 16         /* CatBoost's own bound */
#define CATBOOST_MAX_OUTPUTS 65536
#define CATBOOST_MAX_COLUMN ((1 << 26) - 2) /* the most features the representations take, less one */
#define CATBOOST_CATEGORY_LOW (-99999) /* the integers a one-hot category's hash is looked up among */
#define CATBOOST_CATEGORY_HIGH 999999

typedef struct Reader {
	const char *name;
	Document doc;
	Error *e;
	uint32_t num_float, num_categorical;
	int64_t *float_column, *categorical_column; /* per feature_index: the row's column, -1 where not given */
	bool *nan_true;                             /* per float feature: NaN tests true (AsTrue) */
	struct Named {
		uint32_t column;
		char *name;
	} *named;                                   /* the features' feature_id, as many as the model gives */
	uint32_t num_named;
} Reader;

static bool fail(Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(Reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	front_fail(r->e, r->name, "", fmt, ap);
	va_end(ap);
	return false;
}

/* Member key of object v (at path) of type want (-1: any); 0 with an error where it is missing or of another type. */
static uint32_t member(Reader *r, uint32_t v, const char *path, const char *key, int want)
{
	uint32_t m = doc_member(&r->doc, v, key);
	if (!m)
		return fail(r, "%s: no member '%s'", path, key), 0;
	if (want >= 0 && doc_type(&r->doc, m) != (DocType)want)
		return fail(r, "%s.%s: expected %s, found %s", path, key, doc_type_name((DocType)want),
		            doc_type_name(doc_type(&r->doc, m))), 0;
	return m;
}

/* Integer member key of v in [min, max]. */
static bool integer(Reader *r, uint32_t v, const char *path, const char *key, int64_t min, int64_t max, int64_t *out)
{
	uint32_t m = member(r, v, path, key, DOC_NUMBER);
	if (!m)
		return false;
	if (!doc_number_int64(&r->doc, m, out) || *out < min || *out > max)
		return fail(r, "%s.%s: expected an integer in [%lld, %lld]", path, key, (long long)min, (long long)max);
	return true;
}

/* Number member key of v, finite. */
static bool number(Reader *r, uint32_t v, const char *path, const char *key, double *out)
{
	uint32_t m = member(r, v, path, key, DOC_NUMBER);
	if (!m)
		return false;
	*out = doc_number_double(&r->doc, m);
	if (!isfinite(*out))
		return fail(r, "%s.%s: not a finite number", path, key);
	return true;
}

/*
 * CityHash64 of CityHash 1.0 (CatBoost's util/digest/city.h), for texts of at most 8 bytes:
 * the decimal texts of the integers one-hot categories are looked up among.
 */
static uint64_t hash_len16(uint64_t u, uint64_t v)
{
	const uint64_t mul = 0x9ddfea08eb382d69ull;
	uint64_t a = (u ^ v) * mul, b;
	a ^= a >> 47;
	b = (v ^ a) * mul;
	b ^= b >> 47;
	return b * mul;
}

static uint64_t city_hash_short(const char *s, size_t len)
{
	const uint64_t k2 = 0x9ae16a3b2f90404full, k3 = 0xc949d7c7509e6557ull;
	if (len >= 4) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + len - 4, 4);
		return hash_len16(len + ((uint64_t)a << 3), b);
	}
	if (len > 0) {
		uint32_t y = (uint32_t)(uint8_t)s[0] + ((uint32_t)(uint8_t)s[len >> 1] << 8);
		uint32_t z = (uint32_t)len + ((uint32_t)(uint8_t)s[len - 1] << 2);
		uint64_t m = y * k2 ^ z * k3;
		return (m ^ (m >> 47)) * k2;
	}
	return k2;
}

/* CatBoost's hash of integer category c (CalcCatFeatureHash of its decimal text), as the int32 its JSON writes. */
static int32_t category_hash(int64_t c)
{
	char text[24];
	int n = snprintf(text, sizeof text, "%lld", (long long)c);
	return (int32_t)(uint32_t)city_hash_short(text, (size_t)n);
}

static int compare_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Keep string value id (if it is one, and not "", which CatBoost writes for a column without a name) as column's name. */
static void keep_name(Reader *r, uint32_t column, uint32_t id)
{
	DocItem x;
	if (!id || doc_type(&r->doc, id) != DOC_STRING || doc_length(&r->doc, id) == 0)
		return;
	r->named = xrealloc(r->named, ((size_t)r->num_named + 1) * sizeof *r->named);
	x = doc_item(&r->doc, id);
	r->named[r->num_named++] = (struct Named){column, doc_item_string(&x)};
}

/* The columns' names, where every column of f has one (and one only). */
static void take_names(Reader *r, HForest *f)
{
	char **names;
	if (r->num_named != f->num_features)
		return;
	names = xcalloc(f->num_features, sizeof *names);
	for (uint32_t i = 0; i < r->num_named; i++) {
		struct Named *n = &r->named[i];
		if (!n->name || names[n->column]) {
			free(names);
			return;
		}
		names[n->column] = n->name;
	}
	for (uint32_t i = 0; i < r->num_named; i++)
		r->named[i].name = NULL;
	f->feature_names = names;
}

/* features_info's float or categorical features: each one's column (and NaN rule); false with an error. */
static bool read_features(Reader *r, uint32_t info, const char *key, bool floats, uint32_t *count, int64_t **column,
                          int64_t *max_column)
{
	char path[96];
	uint32_t list = doc_member(&r->doc, info, key);
	DocIterator it;
	DocItem x;
	*count = 0;
	*column = NULL;
	if (!list)
		return true;
	if (doc_type(&r->doc, list) != DOC_ARRAY)
		return fail(r, "features_info.%s: expected an array", key);
	*count = (uint32_t)doc_length(&r->doc, list);
	*column = xmalloc(((size_t)*count + 1) * sizeof **column);
	if (floats)
		r->nan_true = xcalloc((size_t)*count + 1, sizeof *r->nan_true);
	for (uint32_t i = 0; i < *count; i++)
		(*column)[i] = -1;
	doc_iterate(&r->doc, list, &it);
	for (uint32_t i = 0; doc_next(&it, &x); i++) {
		uint32_t item = x.value, nan;
		int64_t index, flat;
		snprintf(path, sizeof path, "features_info.%s[%u]", key, i);
		if (x.type != DOC_OBJECT)
			return fail(r, "%s: expected an object", path);
		if (!integer(r, item, path, "feature_index", 0, (int64_t)*count - 1, &index) ||
		    !integer(r, item, path, "flat_feature_index", 0, CATBOOST_MAX_COLUMN, &flat))
			return false;
		if ((*column)[index] >= 0)
			return fail(r, "%s.feature_index: %lld is given twice", path, (long long)index);
		(*column)[index] = flat;
		keep_name(r, (uint32_t)flat, doc_member(&r->doc, item, "feature_id"));
		if (flat > *max_column)
			*max_column = flat;
		if (floats && (nan = doc_member(&r->doc, item, "nan_value_treatment"))) {
			if (doc_string_equals(&r->doc, nan, "AsTrue"))
				r->nan_true[index] = true;
			else if (!doc_string_equals(&r->doc, nan, "AsFalse") && !doc_string_equals(&r->doc, nan, "AsIs"))
				return fail(r, "%s.nan_value_treatment: expected AsIs, AsFalse or AsTrue", path);
		}
	}
	return true;
}

/* The names of the categorical features CatBoost does not one-hot encode (no "values"), for a CTR's message. */
static void ctr_features(Reader *r, uint32_t info, char *buf, size_t size)
{
	uint32_t list = doc_member(&r->doc, info, "categorical_features"), n = 0;
	size_t used = 0;
	DocIterator it;
	DocItem x;
	buf[0] = 0;
	doc_iterate(&r->doc, list, &it);
	for (uint64_t i = 0; doc_next(&it, &x) && used + 4 < size; i++) {
		uint32_t id = x.type == DOC_OBJECT ? doc_member(&r->doc, x.value, "feature_id") : 0;
		char name[64] = "";
		if (x.type != DOC_OBJECT || doc_member(&r->doc, x.value, "values"))
			continue;
		if (id && doc_type(&r->doc, id) == DOC_STRING)
			doc_string_copy(&r->doc, id, name, sizeof name);
		else
			snprintf(name, sizeof name, "#%llu", (unsigned long long)i);
		used += (size_t)snprintf(buf + used, size - used, "%s'%s'", n++ ? ", " : "", name);
	}
}

typedef struct Loss {
	const char *name;
	HTransform transform;
	bool classifier;
	bool binary; /* one margin, predict_proba's two columns [1 - p, p] */
} Loss;

#define IDENTITY(name) {name, HTRANSFORM_IDENTITY, false, false}

/* CatBoost's losses and what its predict gives for them (predict_proba for classifiers); RMSE first, the default. */
static const Loss losses[] = {
	IDENTITY("RMSE"),
	{"Logloss", HTRANSFORM_SIGMOID, true, true},
	{"CrossEntropy", HTRANSFORM_SIGMOID, true, true},
	{"MultiClass", HTRANSFORM_SOFTMAX, true, false},
	{"MultiClassOneVsAll", HTRANSFORM_SIGMOID, true, false},
	{"Poisson", HTRANSFORM_EXP, false, false},
	{"Tweedie", HTRANSFORM_EXP, false, false},
	IDENTITY("MAE"), IDENTITY("Quantile"), IDENTITY("MultiQuantile"), IDENTITY("LogLinQuantile"), IDENTITY("Expectile"),
	IDENTITY("MAPE"), IDENTITY("Huber"), IDENTITY("Lq"), IDENTITY("LogCosh"), IDENTITY("MultiRMSE"),
	IDENTITY("SurvivalAft"), IDENTITY("QueryRMSE"), IDENTITY("QuerySoftMax"), IDENTITY("PairLogit"),
	IDENTITY("PairLogitPairwise"), IDENTITY("YetiRank"), IDENTITY("YetiRankPairwise"), IDENTITY("StochasticFilter"),
	IDENTITY("StochasticRank"), IDENTITY("QueryCrossEntropy"), IDENTITY("GroupQuantile"),
};
#undef IDENTITY

/* model_info.params.loss_function.type's entry in losses (RMSE where the model names none); NULL with an error. */
static const Loss *read_loss(Reader *r, uint32_t top)
{
	uint32_t info = doc_member(&r->doc, top, "model_info"), params, loss, type;
	char name[64];
	if (!info || !(params = doc_member(&r->doc, info, "params")) || !(loss = doc_member(&r->doc, params, "loss_function")))
		return &losses[0]; /* RMSE */
	if (!(type = member(r, loss, "model_info.params.loss_function", "type", DOC_STRING)))
		return NULL;
	doc_string_copy(&r->doc, type, name, sizeof name);
	for (size_t i = 0; i < COUNT_OF(losses); i++)
		if (!strcmp(name, losses[i].name))
			return &losses[i];
	if (!strcmp(name, "RMSEWithUncertainty"))
		fail(r, "model_info.params.loss_function.type: RMSEWithUncertainty (a mean and a variance from one "
		        "forest, each transformed its own way) is not supported yet");
	else
		fail(r, "model_info.params.loss_function.type: unknown loss '%s'", name);
	return NULL;
}

/* model_info.class_params.class_names, for a classifier that has them; labels by margin (two classes) or the largest. */
static bool read_labels(Reader *r, uint32_t top, HForest *f)
{
	uint32_t info = doc_member(&r->doc, top, "model_info"), params, names;
	HLabels *labels = &f->labels;
	DocIterator it;
	DocItem x;
	uint64_t n;
	if (!info || !(params = doc_member(&r->doc, info, "class_params")) || !(names = doc_member(&r->doc, params, "class_names")))
		return true;
	if (doc_type(&r->doc, names) != DOC_ARRAY)
		return fail(r, "model_info.class_params.class_names: expected an array");
	if (!(n = doc_length(&r->doc, names))) /* CrossEntropy's targets are probabilities: no classes */
		return true;
	if (n != (f->num_outputs == 1 ? 2 : f->num_outputs))
		return fail(r, "model_info.class_params.class_names: %llu classes, but the trees have %u outputs",
		            (unsigned long long)n, f->num_outputs);
	labels->count = (uint32_t)n;
	labels->margin = n == 2 ? 0 : -1;
	labels->threshold = 0.0;
	doc_iterate(&r->doc, names, &it);
	for (uint32_t k = 0; doc_next(&it, &x); k++) {
		if (k == 0 && x.type == DOC_STRING)
			labels->strings = xcalloc(n, sizeof *labels->strings);
		else if (k == 0)
			labels->ints = xmalloc(n * sizeof *labels->ints);
		if (labels->strings ? x.type != DOC_STRING || !(labels->strings[k] = doc_item_string(&x))
		                    : !doc_item_int64(&x, &labels->ints[k]))
			return fail(r, "model_info.class_params.class_names[%u]: expected %s", k,
			            labels->strings ? "a string without NUL bytes" : "an integer");
	}
	return true;
}

/*
 * The integers of the one-hot categories: every hash the categorical features list in
 * "values", each with the integer among CATBOOST_CATEGORY_LOW .. HIGH whose text has it,
 * as hash << 32 | the integer's offset from the lowest, sorted (hashes no integer has
 * left out). One pass over the integers, each hash looked up among the listed.
 */
static int64_t *category_table(Reader *r, uint32_t info, size_t *n)
{
	uint32_t list = doc_member(&r->doc, info, "categorical_features");
	int64_t *listed = NULL, *table, v;
	size_t count = 0, cap = 0, found = 0;
	DocIterator features;
	DocItem feature;
	*n = 0;
	doc_iterate(&r->doc, list, &features);
	while (doc_next(&features, &feature)) {
		uint32_t values = feature.type == DOC_OBJECT ? doc_member(&r->doc, feature.value, "values") : 0;
		DocIterator it;
		DocItem x;
		doc_iterate(&r->doc, values, &it);
		while (values && doc_next_int64(&it, &x, &v))
			if (v >= INT32_MIN && v <= UINT32_MAX) {
				if (count == cap)
					listed = xrealloc(listed, (cap = cap ? 2 * cap : 64) * sizeof *listed);
				listed[count++] = (int64_t)(int32_t)(uint32_t)v;
			}
	}
	if (!count)
		return listed;
	qsort(listed, count, sizeof *listed, compare_int64);
	table = xmalloc(count * sizeof *table);
	for (int64_t c = CATBOOST_CATEGORY_LOW; c <= CATBOOST_CATEGORY_HIGH && found < count; c++) {
		int64_t h = category_hash(c);
		if (bsearch(&h, listed, count, sizeof *listed, compare_int64))
			table[found++] = h * ((int64_t)1 << 32) + (c - CATBOOST_CATEGORY_LOW);
	}
	free(listed);
	qsort(table, found, sizeof *table, compare_int64);
	*n = found;
	return table;
}

/* The integer whose hash is `hash`, from category_table's table; false if none. */
static bool category_of_hash(const int64_t *table, size_t n, int32_t hash, int64_t *c)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* the first entry of hash or above */
		size_t mid = lo + (hi - lo) / 2;
		if ((table[mid] >> 32) < hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || (table[lo] >> 32) != hash)
		return false;
	*c = (table[lo] & 0xffffffff) + CATBOOST_CATEGORY_LOW;
	return true;
}

/* One level's split (object s at path) as node fields: feature, compare, threshold, NaN's side. */
typedef struct Split {
	int32_t feature;
	uint8_t compare;
	bool nan_right;
	double value;
} Split;

static bool read_split(Reader *r, uint32_t info, uint32_t s, const char *path, int64_t **table, size_t *table_size,
                       Split *out)
{
	uint32_t type = member(r, s, path, "split_type", DOC_STRING);
	int64_t index, hash, c;
	char text[48], names[400];
	if (!type)
		return false;
	if (doc_string_equals(&r->doc, type, "FloatFeature")) {
		double border;
		if (!integer(r, s, path, "float_feature_index", 0, (int64_t)r->num_float - 1, &index) ||
		    !number(r, s, path, "border", &border))
			return false;
		if (r->float_column[index] < 0)
			return fail(r, "%s.float_feature_index: float feature %lld has no column", path, (long long)index);
		*out = (Split){(int32_t)r->float_column[index], HCMP_LE, r->nan_true[index], (double)(float)border};
		return true;
	}
	if (doc_string_equals(&r->doc, type, "OneHotFeature")) {
		if (!integer(r, s, path, "cat_feature_index", 0, (int64_t)r->num_categorical - 1, &index) ||
		    !integer(r, s, path, "value", INT32_MIN, UINT32_MAX, &hash))
			return false;
		if (r->categorical_column[index] < 0)
			return fail(r, "%s.cat_feature_index: categorical feature %lld has no column", path, (long long)index);
		if (!*table)
			*table = category_table(r, info, table_size);
		if (!category_of_hash(*table, *table_size, (int32_t)(uint32_t)hash, &c))
			return fail(r, "%s.value: category hash %lld is no integer's in [%d, %d] that the feature lists: grove's "
			               "rows hold numbers, and it reads a one-hot category that is such an integer (one trained "
			               "as text is not)",
			            path, (long long)hash, CATBOOST_CATEGORY_LOW, CATBOOST_CATEGORY_HIGH);
		*out = (Split){(int32_t)r->categorical_column[index], HCMP_NE, false, (double)c};
		return true;
	}
	doc_string_copy(&r->doc, type, text, sizeof text);
	if (!strcmp(text, "OnlineCtr")) {
		ctr_features(r, info, names, sizeof names);
		return fail(r, "%s: a split on a CTR (CatBoost's target statistics of the categorical features %s): grove "
		               "reads float and one-hot categorical features; train with one_hot_max_size above their "
		               "number of categories to have them one-hot",
		            path, names[0] ? names : "of the model");
	}
	return fail(r, "%s.split_type: '%s' is not supported (grove reads FloatFeature and OneHotFeature splits)", path, text);
}

/* The complete tree of oblivious_trees[t] (object tree), its leaves scaled by `scale`. */
static bool read_tree(Reader *r, HForest *f, uint32_t info, uint32_t tree, uint32_t t, double scale, int64_t **table,
                      size_t *table_size)
{
	char path[64], at[96];
	uint32_t splits, values, weights;
	uint32_t width = f->num_outputs;
	uint64_t depth, leaves, inner;
	Split level[CATBOOST_MAX_DEPTH];
	float *cover;
	double *leaf, *vectors = NULL;
	uint64_t first = 0;
	HNode *nodes;
	DocIterator it;
	DocItem x;
	snprintf(path, sizeof path, "oblivious_trees[%u]", t);
	if (!(splits = member(r, tree, path, "splits", DOC_ARRAY)) || !(values = member(r, tree, path, "leaf_values", DOC_ARRAY)))
		return false;
	depth = doc_length(&r->doc, splits);
	if (depth > CATBOOST_MAX_DEPTH)
		return fail(r, "%s.splits: %llu levels, more than CatBoost's %d", path, (unsigned long long)depth, CATBOOST_MAX_DEPTH);
	leaves = (uint64_t)1 << depth;
	inner = leaves - 1;
	if (doc_length(&r->doc, values) != leaves * width)
		return fail(r, "%s.leaf_values: %llu values, expected %llu (%llu leaves x %u outputs)", path,
		            (unsigned long long)doc_length(&r->doc, values), (unsigned long long)(leaves * width),
		            (unsigned long long)leaves, width);
	doc_iterate(&r->doc, splits, &it);
	for (uint32_t l = 0; doc_next(&it, &x); l++) {
		snprintf(at, sizeof at, "%s.splits[%u]", path, l);
		if (x.type != DOC_OBJECT)
			return fail(r, "%s: expected an object", at);
		if (!read_split(r, info, x.value, at, table, table_size, &level[l]))
			return false;
	}
	leaf = xmalloc(leaves * width * sizeof *leaf);
	cover = xcalloc(leaves, sizeof *cover);
	doc_iterate(&r->doc, values, &it);
	for (uint64_t i = 0; i < leaves * width; i++) {
		if (!doc_next(&it, &x) || x.type != DOC_NUMBER || !isfinite(leaf[i] = doc_item_double(&x) * scale)) {
			free(leaf), free(cover);
			return fail(r, "%s.leaf_values[%llu]: expected a finite number", path, (unsigned long long)i);
		}
	}
	weights = doc_member(&r->doc, tree, "leaf_weights");
	if (weights && doc_type(&r->doc, weights) == DOC_ARRAY && doc_length(&r->doc, weights) == leaves) {
		float w;
		doc_iterate(&r->doc, weights, &it);
		for (uint64_t q = 0; q < leaves && doc_next_float(&it, &x, &w); q++)
			cover[q] = isfinite(w) && w > 0 ? w : 0;
	}
	if (width > 1)
		first = hir_leaf_values_add(f, leaves * width, &vectors);
	nodes = hir_tree_add(f, (uint32_t)(inner + leaves), 0);
	f->trees[f->num_trees - 1].width = width;
	for (uint64_t i = 0; i < inner; i++) { /* node i of level l: children 2i + 1 (false) and 2i + 2 (true) */
		uint32_t l = 63 - (uint32_t)__builtin_clzll(i + 1);
		nodes[i].feature = level[l].feature;
		nodes[i].compare = level[l].compare;
		nodes[i].value = level[l].value;
		nodes[i].default_left = !level[l].nan_right;
		nodes[i].missing = HMISSING_NAN;
		nodes[i].left = (uint32_t)(2 * i + 1);
		nodes[i].right = (uint32_t)(2 * i + 2);
	}
	for (uint64_t p = 0; p < leaves; p++) { /* leaf p from the left takes CatBoost's leaf q, p's bits reversed */
		uint64_t q = 0;
		HNode *n = &nodes[inner + p];
		for (uint32_t l = 0; l < depth; l++)
			q |= ((p >> (depth - 1 - l)) & 1) << l;
		n->feature = HIR_LEAF;
		n->cover = cover[q];
		if (width == 1) {
			n->value = leaf[q];
		} else {
			n->vector = (uint32_t)(first + p * width);
			memcpy(&vectors[p * width], &leaf[q * width], width * sizeof *leaf);
		}
	}
	for (uint64_t i = inner; i-- > 0;) /* a split's cover: its children's */
		nodes[i].cover = nodes[2 * i + 1].cover + nodes[2 * i + 2].cover;
	free(leaf);
	free(cover);
	return true;
}

/*
 * Non-symmetric trees (grow_policy Depthwise or Lossguide): trees[t] is a node, a split
 * {"split": ..., "left": node, "right": node} (a true test goes right, as in oblivious
 * trees) or a leaf {"value": v, or [v per output], "weight": w}. count_nodes counts the
 * nodes and leaves (failing past CatBoost's depth); put_node fills them in preorder.
 */
static bool count_nodes(Reader *r, uint32_t node, const char *path, uint32_t depth, uint64_t *nodes, uint64_t *leaves)
{
	uint32_t left, right;
	if (doc_type(&r->doc, node) != DOC_OBJECT)
		return fail(r, "%s: expected an object", path);
	++*nodes;
	if (!doc_member(&r->doc, node, "split"))
		return ++*leaves, true;
	if (depth >= CATBOOST_MAX_DEPTH)
		return fail(r, "%s: deeper than CatBoost's %d levels", path, CATBOOST_MAX_DEPTH);
	if (!(left = member(r, node, path, "left", DOC_OBJECT)) || !(right = member(r, node, path, "right", DOC_OBJECT)))
		return false;
	return count_nodes(r, left, path, depth + 1, nodes, leaves) && count_nodes(r, right, path, depth + 1, nodes, leaves);
}

typedef struct Put {
	uint32_t info, width;
	double scale;
	int64_t **table;
	size_t *table_size;
	HNode *nodes;
	uint32_t next;     /* the next node's index */
	double *vectors;   /* with width > 1, the next leaf's vector */
	uint64_t vector;   /* its index among the forest's leaf values */
} Put;

static bool put_node(Reader *r, Put *p, uint32_t node, const char *path)
{
	uint32_t at = p->next++, split = doc_member(&r->doc, node, "split"), value = doc_member(&r->doc, node, "value");
	uint32_t weight = doc_member(&r->doc, node, "weight");
	HNode *n = &p->nodes[at];
	DocIterator it;
	DocItem x;
	Split s;
	if (split) {
		char where[96];
		snprintf(where, sizeof where, "%s.split", path);
		if (!read_split(r, p->info, split, where, p->table, p->table_size, &s))
			return false;
		*n = (HNode){.feature = s.feature, .compare = s.compare, .value = s.value, .default_left = !s.nan_right,
		             .missing = HMISSING_NAN, .left = p->next};
		if (!put_node(r, p, doc_member(&r->doc, node, "left"), path))
			return false;
		p->nodes[at].right = p->next;
		if (!put_node(r, p, doc_member(&r->doc, node, "right"), path))
			return false;
		p->nodes[at].cover = p->nodes[p->nodes[at].left].cover + p->nodes[p->nodes[at].right].cover;
		return true;
	}
	*n = (HNode){.feature = HIR_LEAF};
	if (weight && doc_type(&r->doc, weight) == DOC_NUMBER) {
		double w = doc_number_double(&r->doc, weight);
		n->cover = isfinite(w) && w > 0 && w < 3e38 ? (float)w : 0;
	}
	if (p->width == 1 && value && doc_type(&r->doc, value) == DOC_NUMBER)
		return isfinite(n->value = doc_number_double(&r->doc, value) * p->scale) ||
		       fail(r, "%s: a leaf's value: expected a finite number", path);
	if (p->width == 1 || !value || doc_type(&r->doc, value) != DOC_ARRAY || doc_length(&r->doc, value) != p->width)
		return fail(r, "%s: a leaf's value: expected %s", path, p->width == 1 ? "a number" : "an array of a number per output");
	n->vector = (uint32_t)p->vector;
	doc_iterate(&r->doc, value, &it);
	for (uint32_t o = 0; o < p->width; o++)
		if (!doc_next(&it, &x) || x.type != DOC_NUMBER || !isfinite(p->vectors[o] = doc_item_double(&x) * p->scale))
			return fail(r, "%s: a leaf's value[%u]: expected a finite number", path, o);
	p->vectors += p->width;
	p->vector += p->width;
	return true;
}

/* trees[t] (object tree), a non-symmetric tree, its leaves scaled by `scale`. */
static bool read_node_tree(Reader *r, HForest *f, uint32_t info, uint32_t tree, uint32_t t, double scale, int64_t **table,
                           size_t *table_size)
{
	char path[64];
	uint64_t nodes = 0, leaves = 0;
	Put p = {.info = info, .width = f->num_outputs, .scale = scale, .table = table, .table_size = table_size};
	snprintf(path, sizeof path, "trees[%u]", t);
	if (!count_nodes(r, tree, path, 0, &nodes, &leaves))
		return false;
	if (p.width > 1)
		p.vector = hir_leaf_values_add(f, leaves * p.width, &p.vectors);
	p.nodes = hir_tree_add(f, (uint32_t)nodes, 0);
	f->trees[f->num_trees - 1].width = p.width;
	return put_node(r, &p, tree, path);
}

static HForest *read_model(Reader *r)
{
	uint32_t info, trees, sb, bias = 0;
	bool symmetric;
	int64_t max_column = -1;
	uint64_t outputs = 1;
	double scale = 1.0;
	const Loss *loss;
	int64_t *table = NULL;
	size_t table_size = 0;
	HForest *f = NULL;
	DocIterator it;
	DocItem x;
	if (doc_type(&r->doc, 0) != DOC_OBJECT)
		return fail(r, "the top level: expected an object"), NULL;
	symmetric = !doc_member(&r->doc, 0, "trees");
	if (!(info = member(r, 0, "the top level", "features_info", DOC_OBJECT)) ||
	    !(trees = member(r, 0, "the top level", symmetric ? "oblivious_trees" : "trees", DOC_ARRAY)))
		return NULL;
	if (!read_features(r, info, "float_features", true, &r->num_float, &r->float_column, &max_column) ||
	    !read_features(r, info, "categorical_features", false, &r->num_categorical, &r->categorical_column, &max_column) ||
	    !(loss = read_loss(r, 0)))
		return NULL;
	if ((sb = doc_member(&r->doc, 0, "scale_and_bias"))) {
		DocItem first, second;
		doc_iterate(&r->doc, sb, &it);
		if (doc_type(&r->doc, sb) != DOC_ARRAY || doc_length(&r->doc, sb) != 2 || !doc_next(&it, &first) ||
		    first.type != DOC_NUMBER || !doc_next(&it, &second) || second.type != DOC_ARRAY)
			return fail(r, "scale_and_bias: expected [scale, [bias, ...]]"), NULL;
		scale = doc_item_double(&first);
		bias = second.value;
		outputs = doc_length(&r->doc, bias);
		if (!isfinite(scale) || outputs == 0 || outputs > CATBOOST_MAX_OUTPUTS)
			return fail(r, "scale_and_bias: a finite scale and 1 to %d biases expected", CATBOOST_MAX_OUTPUTS), NULL;
	}
	if (loss->binary && outputs != 1)
		return fail(r, "scale_and_bias: %s gives one output, the model has %llu", loss->name,
		            (unsigned long long)outputs), NULL;
	f = hir_forest_new(r->name, (uint32_t)(max_column + 1), (uint32_t)outputs);
	f->transform = loss->transform;
	f->binary = loss->binary ? HBINARY_COMPLEMENT : HBINARY_NONE;
	f->threshold_type = HTYPE_F32;
	f->leaf_type = HTYPE_F64; /* CatBoost adds its leaves in double */
	take_names(r, f);
	if (bias) {
		doc_iterate(&r->doc, bias, &it);
		for (uint32_t o = 0; o < outputs; o++)
			if (!doc_next(&it, &x) || x.type != DOC_NUMBER || !isfinite(f->base_score[o] = doc_item_double(&x))) {
				fail(r, "scale_and_bias[1][%u]: expected a finite number", o);
				goto fail;
			}
	}
	if (loss->classifier && !read_labels(r, 0, f))
		goto fail;
	doc_iterate(&r->doc, trees, &it);
	for (uint32_t t = 0; doc_next(&it, &x); t++) {
		if (x.type != DOC_OBJECT) {
			fail(r, "%s[%u]: expected an object", symmetric ? "oblivious_trees" : "trees", t);
			goto fail;
		}
		if (!(symmetric ? read_tree : read_node_tree)(r, f, info, x.value, t, scale, &table, &table_size))
			goto fail;
	}
	free(table);
	if (!hir_verify(f, r->e)) {
		error_prefix(r->e, r->name);
		hir_forest_free(f);
		return NULL;
	}
	return f;
fail:
	free(table);
	hir_forest_free(f);
	return NULL;
}

HForest *front_read_catboost(const char *name, const char *text, size_t len, bool mapped, Error *e)
{
	Reader r = {.name = name, .e = e};
	HForest *f = NULL;
	if (json_parse(&r.doc, name, text, len, mapped, e) && doc_check_keys(&r.doc, true, e))
		f = read_model(&r);
	doc_free(&r.doc);
	free(r.float_column);
	free(r.categorical_column);
	free(r.nan_true);
	for (uint32_t i = 0; i < r.num_named; i++)
		free(r.named[i].name);
	free(r.named);
	return f;
}
