/*
 * LightGBM text models -> HIR.
 *
 * What Booster.save_model writes (LightGBM 2.x to 4.x), and what of it prediction needs:
 *
 *   tree                          the first line
 *   key=value lines               num_class, num_tree_per_iteration, max_feature_idx,
 *                                 objective (name and parameters: "binary sigmoid:1"),
 *                                 average_output (a key alone), feature_names, ...
 *   Tree=N, then key=value lines  num_leaves, num_cat, split_feature, threshold,
 *                                 decision_type, left_child, right_child, leaf_value,
 *                                 cat_boundaries, cat_threshold, is_linear, ...
 *   end of trees                  then importances, parameters: nothing prediction uses
 *
 * Where a file could be read two ways it is refused: a key the reader uses given twice
 * (in the header or a tree; LightGBM takes the last copy, other readers the first), an
 * objective parameter given twice, and tree_sizes that disagree with the trees present
 * (LightGBM reads as many trees as tree_sizes lists, each at the offset the sizes before
 * it give, not the Tree= sections the file holds).
 *
 * A tree's splits are nodes 0 .. num_leaves-2 (0 is the root) and its leaves ~0 .. ~(num_leaves-1)
 * (a child < 0 is leaf ~child). HIR keeps split i as node i and puts leaf k at node
 * num_leaves-1+k. Tree t adds to output t % num_tree_per_iteration.
 *
 * LightGBM compares and sums doubles, so thresholds and leaves are kept as the text's
 * doubles. Before a row reaches the trees, LightGBM's prediction API drops every value
 * with |x| <= kZeroThreshold (1e-35f) from the row, so the tree sees 0 there; a
 * numerical split `x <= t` then decides as below (tree.h, NumericalDecision):
 *
 *   missing type (decision_type bits 2-3)   which x go the default way (bit 1: left)
 *     None (0)   none: NaN is compared as 0  -> HIR "nan", default_left = (0 <= t)
 *     Zero (1)   NaN and |x| <= 1e-35f       -> HIR "zero"
 *     NaN  (2)   NaN                          -> HIR "nan"
 *
 * and the zeroing is folded into the threshold: only a t in [-kZeroThreshold,
 * kZeroThreshold) decides differently for an x that becomes 0 than for x itself, and
 * for such t the split is `x <= kZeroThreshold` (t >= 0) or `x < -kZeroThreshold` (t < 0).
 *
 * A categorical split (bit 0) sends x left when its category (x truncated to an int)
 * is in the split's bitset, cat_threshold[cat_boundaries[k] .. cat_boundaries[k+1]) with
 * k = threshold; NaN, negative categories and categories past the bitset go right,
 * whatever the missing type (LightGBM 3.3 and later say so; 2.x-3.2 get the same on
 * x86-64, where (int)NaN is INT_MIN).
 */
#include "front/front.h"
#include "front/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest forest the reader accepts: HIR indexes a tree's nodes with 32 bits. */
#define MAX_LEAVES (INT32_C(1) << 30)
#define MAX_OUTPUTS 65536

/* How an objective turns margins into predictions (ConvertOutput of its class in LightGBM). */
typedef enum ObjectiveKind {
	OBJECTIVE_RAW,      /* identity */
	OBJECTIVE_SQRT,     /* identity, or signed square with the `sqrt` parameter */
	OBJECTIVE_SIGMOID,  /* sigmoid with the `sigmoid:` parameter */
	OBJECTIVE_SOFTMAX,  /* softmax over num_class: outputs */
	OBJECTIVE_OVA,      /* sigmoid per class, with `num_class:` and `sigmoid:` */
	OBJECTIVE_LOGISTIC, /* sigmoid with scale 1 */
	OBJECTIVE_EXP,      /* exp */
	OBJECTIVE_SOFTPLUS, /* log1p(exp) */
} ObjectiveKind;

typedef struct Objective {
	const char *name;
	ObjectiveKind kind;
} Objective;

/* Every name LightGBM's ParseObjectiveAlias and CreateObjectiveFunction accept. */
static const Objective objectives[] = {
	{"regression", OBJECTIVE_SQRT}, {"regression_l2", OBJECTIVE_SQRT}, {"mean_squared_error", OBJECTIVE_SQRT},
	{"mse", OBJECTIVE_SQRT}, {"l2", OBJECTIVE_SQRT}, {"l2_root", OBJECTIVE_SQRT},
	{"root_mean_squared_error", OBJECTIVE_SQRT}, {"rmse", OBJECTIVE_SQRT},
	{"regression_l1", OBJECTIVE_SQRT}, {"mean_absolute_error", OBJECTIVE_SQRT}, {"l1", OBJECTIVE_SQRT},
	{"mae", OBJECTIVE_SQRT}, {"quantile", OBJECTIVE_SQRT}, {"fair", OBJECTIVE_SQRT},
	{"mape", OBJECTIVE_SQRT}, {"mean_absolute_percentage_error", OBJECTIVE_SQRT},
	{"huber", OBJECTIVE_RAW}, /* LightGBM drops `sqrt` when it loads a huber model */
	{"binary", OBJECTIVE_SIGMOID},
	{"multiclass", OBJECTIVE_SOFTMAX}, {"softmax", OBJECTIVE_SOFTMAX},
	{"multiclassova", OBJECTIVE_OVA}, {"multiclass_ova", OBJECTIVE_OVA}, {"ova", OBJECTIVE_OVA}, {"ovr", OBJECTIVE_OVA},
	{"cross_entropy", OBJECTIVE_LOGISTIC}, {"xentropy", OBJECTIVE_LOGISTIC},
	{"poisson", OBJECTIVE_EXP}, {"gamma", OBJECTIVE_EXP}, {"tweedie", OBJECTIVE_EXP},
	{"lambdarank", OBJECTIVE_RAW}, {"rank_xendcg", OBJECTIVE_RAW}, {"xendcg", OBJECTIVE_RAW},
	{"xe_ndcg", OBJECTIVE_RAW}, {"xe_ndcg_mart", OBJECTIVE_RAW}, {"xendcg_mart", OBJECTIVE_RAW},
	{"custom", OBJECTIVE_RAW}, {"none", OBJECTIVE_RAW}, {"null", OBJECTIVE_RAW}, {"na", OBJECTIVE_RAW},
	{"cross_entropy_lambda", OBJECTIVE_SOFTPLUS}, {"xentlambda", OBJECTIVE_SOFTPLUS},
};

/* A piece of the text: a line, a value, a token. */
typedef struct Text {
	const char *p;
	size_t length;
} Text;

/* The header keys the reader uses. */
#define HEADER_KEYS(X)                                                                             \
	X(NUM_CLASS, "num_class") X(NUM_TREE_PER_ITERATION, "num_tree_per_iteration")                   \
	X(LABEL_INDEX, "label_index") X(MAX_FEATURE_IDX, "max_feature_idx") X(OBJECTIVE, "objective")   \
	X(AVERAGE_OUTPUT, "average_output") X(FEATURE_NAMES, "feature_names") X(FEATURE_INFOS, "feature_infos")  \
	X(TREE_SIZES, "tree_sizes")

/* The tree keys the reader uses. */
#define TREE_KEYS(X)                                                                                       \
	X(NUM_LEAVES, "num_leaves") X(NUM_CAT, "num_cat") X(SPLIT_FEATURE, "split_feature")                    \
	X(THRESHOLD, "threshold") X(DECISION_TYPE, "decision_type") X(LEFT_CHILD, "left_child")                \
	X(RIGHT_CHILD, "right_child") X(LEAF_VALUE, "leaf_value") X(CAT_BOUNDARIES, "cat_boundaries")          \
	X(CAT_THRESHOLD, "cat_threshold") X(IS_LINEAR, "is_linear") X(INTERNAL_COUNT, "internal_count")          \
	X(LEAF_COUNT, "leaf_count")

enum {
#define X(name, text) HEADER_##name,
	HEADER_KEYS(X)
#undef X
	HEADER_COUNT
};

enum {
#define X(name, text) TREE_##name,
	TREE_KEYS(X)
#undef X
	TREE_COUNT
};

static const char *const header_keys[] = {
#define X(name, text) text,
	HEADER_KEYS(X)
#undef X
};

static const char *const tree_keys[] = {
#define X(name, text) text,
	TREE_KEYS(X)
#undef X
};

/* The values of a section's known keys; p is NULL for a key the section lacks. */
typedef struct Fields {
	Text value[(int)TREE_COUNT > (int)HEADER_COUNT ? (int)TREE_COUNT : (int)HEADER_COUNT];
} Fields;

/* A space-separated array of a tree: the values of one key, read one by one. */
typedef struct Array {
	const char *key;
	const char *p, *end;
	uint64_t index;
} Array;

typedef struct Reader {
	const char *name;
	const char *p, *end; /* the text not read yet */
	Error *e;
	int64_t tree;        /* the tree being read, for messages; -1 in the header */
	uint8_t *has_parent; /* scratch: per HIR node */
	size_t has_parent_cap;
	uint32_t *stack;     /* scratch: per HIR node */
	size_t stack_cap;
	uint32_t *boundaries; /* scratch: cat_boundaries */
	size_t boundaries_cap;
	Text tree_sizes;      /* the header's tree_sizes (p NULL: none) */
	const char *first_tree; /* the first Tree= line */
	uint64_t *starts;     /* each tree's offset: its Tree= line's from the first's */
	size_t starts_cap;
} Reader;

/* Fill e with "name: Tree=N: " (no tree in the header) and the message; returns false. */
static bool fail(Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(Reader *r, const char *fmt, ...)
{
	char tree[32] = "";
	va_list ap;
	if (r->tree >= 0)
		snprintf(tree, sizeof tree, "Tree=%lld: ", (long long)r->tree);
	va_start(ap, fmt);
	front_fail(r->e, r->name, tree, fmt, ap);
	va_end(ap);
	return false;
}

/* Whether t is exactly the string s. */
static bool text_is(Text t, const char *s) { return strlen(s) == t.length && memcmp(t.p, s, t.length) == 0; }

/* Whether t starts with the string s. */
static bool text_starts(Text t, const char *s) { return strlen(s) <= t.length && memcmp(t.p, s, strlen(s)) == 0; }

/* At most the first 40 bytes of t, for messages: printf("%.*s", SHOWN(t)). */
#define SHOWN(t) (int)((t).length < 40 ? (t).length : 40), (t).p

/* The next line (without its "\n" or "\r\n"); false at the end of the text. */
static bool next_line(Reader *r, Text *line)
{
	const char *q;
	if (r->p == r->end)
		return false;
	q = memchr(r->p, '\n', (size_t)(r->end - r->p));
	line->p = r->p;
	line->length = (size_t)((q ? q : r->end) - r->p);
	r->p = q ? q + 1 : r->end;
	if (line->length && line->p[line->length - 1] == '\r')
		line->length--;
	return true;
}

/* Split "key=value" (or a key alone) at the first '='. */
static void split_key(Text line, Text *key, Text *value)
{
	const char *eq = memchr(line.p, '=', line.length);
	key->p = line.p;
	key->length = eq ? (size_t)(eq - line.p) : line.length;
	value->p = eq ? eq + 1 : line.p + line.length;
	value->length = eq ? line.length - key->length - 1 : 0;
}

/*
 * Record line's value if its key is one of keys[0 .. count); other keys are ignored. A
 * key recorded already is an error: LightGBM takes its last copy, other readers the first.
 */
static bool record_new_field(Reader *r, Text line, const char *const *keys, size_t count, Fields *fields)
{
	Text key, value;
	split_key(line, &key, &value);
	for (size_t k = 0; k < count; k++)
		if (text_is(key, keys[k])) {
			if (fields->value[k].p)
				return fail(r, "%s: the key appears twice (LightGBM takes the last copy, other readers the first)",
				            keys[k]);
			fields->value[k] = value;
		}
	return true;
}

/* The next space-separated token of [*p, end); false when there is none. */
static bool next_token(const char **p, const char *end, Text *token)
{
	const char *q = *p;
	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	if (q == end)
		return false;
	token->p = q;
	while (q < end && *q != ' ' && *q != '\t')
		q++;
	token->length = (size_t)(q - token->p);
	*p = q;
	return true;
}

/* How many tokens value holds. */
static uint64_t count_tokens(Text value)
{
	const char *p = value.p;
	uint64_t n = 0;
	Text token;
	while (next_token(&p, value.p + value.length, &token))
		n++;
	return n;
}

/*
 * The feature names (value: as many tokens as f has features) into f, unless they are
 * LightGBM's own Column_0, Column_1, ...: a model trained on unnamed columns names none.
 */
static void read_feature_names(Text value, HForest *f)
{
	const char *p = value.p;
	char generated[32];
	bool named = false;
	Text token;
	f->feature_names = xcalloc(f->num_features, sizeof *f->feature_names);
	for (uint32_t i = 0; i < f->num_features && next_token(&p, value.p + value.length, &token); i++) {
		f->feature_names[i] = xmalloc(token.length + 1);
		memcpy(f->feature_names[i], token.p, token.length);
		f->feature_names[i][token.length] = 0;
		snprintf(generated, sizeof generated, "Column_%u", i);
		named |= strcmp(f->feature_names[i], generated) != 0;
	}
	if (!named) {
		strings_free(f->feature_names, f->num_features);
		f->feature_names = NULL;
	}
}

/* t without a leading sign that is followed by a digit (inf and nan included). */
static Text magnitude(Text t)
{
	if (t.length > 1 && (t.p[0] == '-' || t.p[0] == '+') && ((t.p[1] >= '0' && t.p[1] <= '9') || t.p[1] == 'i' || t.p[1] == 'n'))
		return (Text){t.p + 1, t.length - 1};
	return t;
}

/* A number as LightGBM writes one: decimal digits (JSON syntax, with an optional '+'), inf or nan. */
static bool parse_double(Text t, double *out)
{
	Text m = magnitude(t);
	if (text_is(m, "inf") || text_is(m, "nan"))
		*out = m.p[0] == 'n' ? NAN : INFINITY;
	else if (m.length && m.p[0] >= '0' && m.p[0] <= '9' && json_text_is_number(m.p, m.length))
		*out = json_text_double(m.p, m.length);
	else
		return false;
	if (m.p != t.p && t.p[0] == '-')
		*out = -*out;
	return true;
}

/* t as an integer ([+-]digits); false if it is not one or does not fit. */
static bool integer_value(Text t, int64_t *out)
{
	Text m = magnitude(t);
	if (!(m.length && m.p[0] >= '0' && m.p[0] <= '9' && json_text_int64(m.p, m.length, out)))
		return false;
	if (m.p != t.p && t.p[0] == '-')
		*out = -*out;
	return true;
}

/* An integer in [min, max] from a whole value or token; `what` names it in messages. */
static bool parse_integer(Reader *r, Text t, const char *what, int64_t min, int64_t max, int64_t *out)
{
	if (!integer_value(t, out))
		return fail(r, "%s: expected an integer, found '%.*s'", what, SHOWN(t));
	if (*out < min || *out > max)
		return fail(r, "%s: %lld is out of range [%lld, %lld]", what, (long long)*out, (long long)min, (long long)max);
	return true;
}

/* The integer value of a key that must be present. */
static bool field_integer(Reader *r, const Fields *fields, int key, const char *const *keys, int64_t min, int64_t max,
                          int64_t *out)
{
	if (!fields->value[key].p)
		return fail(r, "missing key '%s'", keys[key]);
	return parse_integer(r, fields->value[key], keys[key], min, max, out);
}

/* Start reading tree array `key`, which must hold `count` values. */
static bool array_open(Reader *r, const Fields *fields, int key, uint64_t count, const char *count_is, Array *a)
{
	Text value = fields->value[key];
	uint64_t found;
	if (!value.p)
		return fail(r, "missing key '%s'", tree_keys[key]);
	found = count_tokens(value);
	if (found != count)
		return fail(r, "%s: %llu values, but %s needs %llu", tree_keys[key], (unsigned long long)found, count_is,
		            (unsigned long long)count);
	a->key = tree_keys[key];
	a->p = value.p;
	a->end = value.p + value.length;
	a->index = 0;
	return true;
}

/* The next value of a as an integer in [min, max]. */
static bool array_integer(Reader *r, Array *a, int64_t min, int64_t max, int64_t *out)
{
	char what[64];
	Text token;
	next_token(&a->p, a->end, &token); /* array_open counted them */
	if (integer_value(token, out) && *out >= min && *out <= max) {
		a->index++;
		return true;
	}
	snprintf(what, sizeof what, "%s[%llu]", a->key, (unsigned long long)a->index);
	return parse_integer(r, token, what, min, max, out);
}

/* The next value of a as a double (NaN is an error; infinities are left to the caller). */
static bool array_double(Reader *r, Array *a, double *out)
{
	Text token;
	next_token(&a->p, a->end, &token);
	if (!parse_double(token, out))
		return fail(r, "%s[%llu]: expected a number, found '%.*s'", a->key, (unsigned long long)a->index, SHOWN(token));
	if (isnan(*out))
		return fail(r, "%s[%llu]: NaN", a->key, (unsigned long long)a->index);
	a->index++;
	return true;
}

/*
 * The threshold that `x <= t` needs so that x decides as LightGBM's zeroed x does: an x
 * with |x| <= kZeroThreshold is compared as 0 (see the top of the file).
 */
static double zeroed_threshold(double t)
{
	const double zero = HIR_ZERO_THRESHOLD;
	if (t < -zero || t >= zero)
		return t;
	return t >= 0 ? zero : nextafter(-zero, -INFINITY);
}

/* Read the objective line (name, then parameters, each at most once) into f's transform and sigmoid scale. */
static bool read_objective(Reader *r, Text line, HForest *f)
{
	const Objective *objective = NULL;
	const char *p = line.p, *end = line.p + line.length;
	bool signed_square = false, has_sigmoid = false, has_classes = false;
	int64_t classes = 0;
	double sigmoid = 0;
	Text name, token;

	if (!next_token(&p, end, &name))
		return fail(r, "objective: empty");
	for (size_t i = 0; i < COUNT_OF(objectives) && !objective; i++)
		if (text_is(name, objectives[i].name))
			objective = &objectives[i];
	if (!objective)
		return fail(r, "objective: unknown objective '%.*s'", SHOWN(name));
	while (next_token(&p, end, &token)) {
		Text key, value;
		const char *colon = memchr(token.p, ':', token.length);
		if (!colon) {
			signed_square |= text_is(token, "sqrt");
			continue;
		}
		key = (Text){token.p, (size_t)(colon - token.p)};
		value = (Text){colon + 1, token.length - key.length - 1};
		if ((text_is(key, "sigmoid") && has_sigmoid) || (text_is(key, "num_class") && has_classes))
			return fail(r, "objective: parameter '%.*s' is given twice (LightGBM takes the last, other readers the first)",
			            SHOWN(key));
		if (text_is(key, "sigmoid")) {
			if (!parse_double(value, &sigmoid) || !(sigmoid > 0) || !isfinite(sigmoid))
				return fail(r, "objective: sigmoid:%.*s is not a positive number", SHOWN(value));
			has_sigmoid = true;
		} else if (text_is(key, "num_class")) {
			if (!parse_integer(r, value, "objective: num_class", 1, MAX_OUTPUTS, &classes))
				return false;
			has_classes = true;
		}
	}
	switch (objective->kind) {
	case OBJECTIVE_RAW: f->transform = HTRANSFORM_IDENTITY; break;
	case OBJECTIVE_SQRT: f->transform = signed_square ? HTRANSFORM_SIGNED_SQUARE : HTRANSFORM_IDENTITY; break;
	case OBJECTIVE_LOGISTIC: f->transform = HTRANSFORM_SIGMOID; break;
	case OBJECTIVE_EXP: f->transform = HTRANSFORM_EXP; break;
	case OBJECTIVE_SOFTPLUS: f->transform = HTRANSFORM_SOFTPLUS; break;
	case OBJECTIVE_SIGMOID:
	case OBJECTIVE_OVA:
	case OBJECTIVE_SOFTMAX:
		if (objective->kind != OBJECTIVE_SOFTMAX && !has_sigmoid)
			return fail(r, "objective: '%.*s' without its sigmoid: parameter", SHOWN(name));
		if (objective->kind != OBJECTIVE_SIGMOID && !has_classes)
			return fail(r, "objective: '%.*s' without its num_class: parameter", SHOWN(name));
		if (has_classes && classes != f->num_outputs)
			return fail(r, "objective: num_class:%lld, but the model has %u outputs", (long long)classes, f->num_outputs);
		f->transform = objective->kind == OBJECTIVE_SOFTMAX ? HTRANSFORM_SOFTMAX : HTRANSFORM_SIGMOID;
		f->sigmoid_alpha = objective->kind == OBJECTIVE_SOFTMAX ? 1.0 : sigmoid;
		break;
	}
	return true;
}

/* Read the header lines up to the first tree; returns the new forest, or NULL. */
static HForest *read_header(Reader *r)
{
	Fields fields = {0};
	int64_t num_class, per_iteration, label, max_feature;
	uint64_t names, infos;
	Text line;
	HForest *f;

	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
	if (!next_line(r, &line) || !text_is(line, "tree"))
		return fail(r, "expected a LightGBM text model (its first line is 'tree')"), NULL;
	for (const char *start = r->p; next_line(r, &line); start = r->p) {
		if (text_starts(line, "Tree=") || text_is(line, "end of trees")) {
			r->p = start; /* read again by read_trees */
			break;
		}
		if (!record_new_field(r, line, header_keys, HEADER_COUNT, &fields))
			return NULL;
	}
	r->tree_sizes = fields.value[HEADER_TREE_SIZES];
	if (!field_integer(r, &fields, HEADER_NUM_CLASS, header_keys, 1, MAX_OUTPUTS, &num_class) ||
	    !field_integer(r, &fields, HEADER_LABEL_INDEX, header_keys, INT32_MIN, INT32_MAX, &label) ||
	    !field_integer(r, &fields, HEADER_MAX_FEATURE_IDX, header_keys, 0, INT32_MAX - 1, &max_feature))
		return NULL;
	per_iteration = num_class; /* LightGBM's default when the key is absent */
	if (fields.value[HEADER_NUM_TREE_PER_ITERATION].p &&
	    !field_integer(r, &fields, HEADER_NUM_TREE_PER_ITERATION, header_keys, 1, MAX_OUTPUTS, &per_iteration))
		return NULL;
	if (per_iteration != num_class)
		return fail(r, "num_tree_per_iteration: %lld, but num_class is %lld (LightGBM writes them equal)",
		            (long long)per_iteration, (long long)num_class), NULL;
	if (!fields.value[HEADER_FEATURE_NAMES].p || !fields.value[HEADER_FEATURE_INFOS].p)
		return fail(r, "missing key '%s'", fields.value[HEADER_FEATURE_NAMES].p ? "feature_infos" : "feature_names"), NULL;
	names = count_tokens(fields.value[HEADER_FEATURE_NAMES]);
	infos = count_tokens(fields.value[HEADER_FEATURE_INFOS]);
	if (names != (uint64_t)max_feature + 1 || infos != (uint64_t)max_feature + 1)
		return fail(r, "%s: %llu values, but max_feature_idx=%lld needs %lld", names != (uint64_t)max_feature + 1 ?
		            "feature_names" : "feature_infos", (unsigned long long)(names != (uint64_t)max_feature + 1 ? names : infos),
		            (long long)max_feature, (long long)max_feature + 1), NULL;

	f = hir_forest_new(r->name, (uint32_t)max_feature + 1, (uint32_t)num_class);
	f->threshold_type = HTYPE_F64;
	f->leaf_type = HTYPE_F64;
	f->category_rule = HCATEGORY_TRUNCATE;
	read_feature_names(fields.value[HEADER_FEATURE_NAMES], f);
	if (fields.value[HEADER_AVERAGE_OUTPUT].p)
		f->aggregate = HAGGREGATE_AVERAGE;
	if (fields.value[HEADER_OBJECTIVE].p && !read_objective(r, fields.value[HEADER_OBJECTIVE], f)) {
		hir_forest_free(f);
		return NULL;
	}
	return f;
}

/* A child of split i (`key` names its array): leaf ~c or split c; returns its HIR node in *node. */
static bool read_child(Reader *r, Array *a, uint32_t num_leaves, uint32_t *node)
{
	int64_t c;
	uint64_t i = a->index;
	if (!array_integer(r, a, INT32_MIN, INT32_MAX, &c))
		return false;
	if (c < 0 && ~c >= num_leaves)
		return fail(r, "%s[%llu]: leaf ~%lld out of range (the tree has %u leaves)", a->key, (unsigned long long)i,
		            (long long)~c, num_leaves);
	if (c >= (int64_t)num_leaves - 1)
		return fail(r, "%s[%llu]: index %lld out of range (the tree has %u splits)", a->key, (unsigned long long)i,
		            (long long)c, num_leaves - 1);
	if (c == 0)
		return fail(r, "%s[%llu]: the root (split 0) cannot be a child", a->key, (unsigned long long)i);
	*node = c < 0 ? num_leaves - 1 + (uint32_t)~c : (uint32_t)c;
	if (r->has_parent[*node])
		return fail(r, "%s[%llu]: %s %lld already has a parent (a cycle or a shared subtree)", a->key,
		            (unsigned long long)i, c < 0 ? "leaf" : "split", (long long)(c < 0 ? ~c : c));
	r->has_parent[*node] = 1;
	return true;
}

/* Check that every node of the tree is reached from the root (each has one parent already). */
static bool check_reachable(Reader *r, const HNode *nodes, uint32_t num_nodes)
{
	uint32_t top = 0, reached = 0;
	GROW(r->stack, num_nodes, r->stack_cap);
	memset(r->has_parent, 0, num_nodes);
	r->stack[top++] = 0;
	while (top) {
		uint32_t id = r->stack[--top];
		r->has_parent[id] = 1;
		reached++;
		if (nodes[id].feature != HIR_LEAF) {
			r->stack[top++] = nodes[id].left;
			r->stack[top++] = nodes[id].right;
		}
	}
	for (uint32_t id = 0; reached < num_nodes && id < num_nodes; id++)
		if (!r->has_parent[id])
			return fail(r, "split %u is not reachable from the root (the splits form a cycle)", id);
	return true;
}

/* Read the category bitsets of a tree as HIR sets; the tree's set k is f's set *first + k. */
static bool read_sets(Reader *r, HForest *f, const Fields *fields, uint32_t num_cat, uint32_t *first)
{
	Array a;
	int64_t v;
	*first = f->num_sets;
	if (num_cat == 0)
		return true;
	if (!array_open(r, fields, TREE_CAT_BOUNDARIES, (uint64_t)num_cat + 1, "num_cat + 1", &a))
		return false;
	GROW(r->boundaries, (size_t)num_cat + 1, r->boundaries_cap);
	for (uint32_t k = 0; k <= num_cat; k++) {
		uint64_t i = a.index;
		if (!array_integer(r, &a, 0, INT32_MAX, &v))
			return false;
		if (k == 0 && v != 0)
			return fail(r, "cat_boundaries[0]: %lld, expected 0", (long long)v);
		if (k > 0 && v < r->boundaries[k - 1])
			return fail(r, "cat_boundaries[%llu]: %lld is less than the boundary before it (%u)", (unsigned long long)i,
			            (long long)v, r->boundaries[k - 1]);
		r->boundaries[k] = (uint32_t)v;
	}
	if (!array_open(r, fields, TREE_CAT_THRESHOLD, r->boundaries[num_cat], "cat_boundaries' last value", &a))
		return false;
	for (uint32_t k = 0; k < num_cat; k++) {
		uint32_t *words;
		hir_set_add(f, r->boundaries[k + 1] - r->boundaries[k], &words);
		for (uint32_t w = 0; w < r->boundaries[k + 1] - r->boundaries[k]; w++) {
			if (!array_integer(r, &a, 0, UINT32_MAX, &v))
				return false;
			words[w] = (uint32_t)v;
		}
	}
	return true;
}

/* Fill split i from the next value of each split array. */
static bool read_split(Reader *r, HForest *f, Array *arrays, bool has_decision_type, uint32_t num_leaves, uint32_t num_cat,
                       uint32_t first_set, HNode *node)
{
	Array *feature = &arrays[0], *threshold = &arrays[1], *decision = &arrays[2], *left = &arrays[3], *right = &arrays[4];
	uint64_t i = feature->index;
	int64_t index, type = 0;
	double t;

	if (!array_integer(r, feature, 0, INT32_MAX, &index))
		return false;
	if (index >= f->num_features)
		return fail(r, "split_feature[%llu]: feature %lld out of range (max_feature_idx is %u)", (unsigned long long)i,
		            (long long)index, f->num_features - 1);
	if (!array_double(r, threshold, &t) || (has_decision_type && !array_integer(r, decision, 0, 15, &type)) ||
	    !read_child(r, left, num_leaves, &node->left) || !read_child(r, right, num_leaves, &node->right))
		return false;
	node->feature = (int32_t)index;
	node->missing = HMISSING_NAN;
	if (type & 1) { /* categorical: NaN goes right, whatever the missing type */
		if (t != floor(t) || t < 0 || t >= num_cat)
			return fail(r, "threshold[%llu]: category bitset %.17g out of range (the tree has num_cat=%u)",
			            (unsigned long long)i, t, num_cat);
		node->compare = HCMP_IN;
		node->set = first_set + (uint32_t)t;
		node->default_left = 0;
		return true;
	}
	node->compare = HCMP_LE;
	node->value = zeroed_threshold(t);
	if (type >> 2 == 3)
		return fail(r, "decision_type[%llu]: %lld has missing type 3, which LightGBM does not have", (unsigned long long)i,
		            (long long)type);
	if (type >> 2 == 0) /* None: NaN is compared as 0 */
		node->default_left = 0.0 <= node->value;
	else
		node->default_left = (type & 2) != 0;
	if (type >> 2 == 1)
		node->missing = HMISSING_ZERO;
	return true;
}

/* Read the key=value lines of a tree section, up to a blank line or the next section. */
static bool read_tree_fields(Reader *r, Fields *fields)
{
	Text line;
	memset(fields, 0, sizeof *fields);
	for (const char *start = r->p;; start = r->p) {
		if (!next_line(r, &line))
			return fail(r, "the file ends inside this tree (it is cut short)");
		if (line.length == 0)
			return true;
		if (text_starts(line, "Tree=") || text_is(line, "end of trees")) {
			r->p = start; /* read again by read_trees */
			return true;
		}
		if (!memchr(line.p, '=', line.length))
			return fail(r, "expected key=value, found '%.*s'", SHOWN(line));
		if (!record_new_field(r, line, tree_keys, TREE_COUNT, fields))
			return false;
	}
}

/*
 * The node statistics a model may have (internal_count per split, leaf_count per leaf,
 * nodes[splits + k] being leaf k): how many training rows reached each node, for tiling.
 */
static bool read_counts(Reader *r, const Fields *fields, HNode *nodes, uint32_t splits)
{
	static const int keys[] = {TREE_INTERNAL_COUNT, TREE_LEAF_COUNT};
	for (size_t k = 0; k < COUNT_OF(keys); k++) {
		uint32_t first = k ? splits : 0, count = k ? splits + 1 : splits;
		Array a;
		double v;
		if (!fields->value[keys[k]].p || !count)
			continue;
		if (!array_open(r, fields, keys[k], count, k ? "num_leaves" : "num_leaves - 1", &a))
			return false;
		for (uint32_t i = 0; i < count; i++) {
			if (!array_double(r, &a, &v))
				return false;
			nodes[first + i].cover = isfinite(v) ? (float)v : 0.0f;
		}
	}
	return true;
}

/* Read one tree section (after its Tree= line) into f. */
static bool read_tree(Reader *r, HForest *f, uint32_t output)
{
	Fields fields;
	int64_t num_leaves, num_cat, linear = 0;
	uint32_t leaves, splits, first_set = 0;
	Array leaf, arrays[5];
	HNode *nodes;
	double v;

	if (!read_tree_fields(r, &fields) ||
	    !field_integer(r, &fields, TREE_NUM_LEAVES, tree_keys, 1, MAX_LEAVES, &num_leaves) ||
	    !field_integer(r, &fields, TREE_NUM_CAT, tree_keys, 0, MAX_LEAVES, &num_cat) ||
	    (fields.value[TREE_IS_LINEAR].p && !field_integer(r, &fields, TREE_IS_LINEAR, tree_keys, 0, 1, &linear)))
		return false;
	if (linear)
		return fail(r, "is_linear=1: linear trees (linear_tree=true) are not supported: HIR has no linear leaves");
	leaves = (uint32_t)num_leaves;
	splits = leaves - 1;
	if (!array_open(r, &fields, TREE_LEAF_VALUE, leaves, "num_leaves", &leaf))
		return false;
	if (splits > 0) { /* LightGBM reads no split or category arrays for a single leaf */
		static const int keys[] = {TREE_SPLIT_FEATURE, TREE_THRESHOLD, TREE_DECISION_TYPE, TREE_LEFT_CHILD, TREE_RIGHT_CHILD};
		for (size_t k = 0; k < COUNT_OF(keys); k++)
			if ((keys[k] != TREE_DECISION_TYPE || fields.value[keys[k]].p) &&
			    !array_open(r, &fields, keys[k], splits, "num_leaves - 1", &arrays[k]))
				return false;
		if (!read_sets(r, f, &fields, (uint32_t)num_cat, &first_set))
			return false;
	}
	nodes = hir_tree_add(f, 2 * splits + 1, output);
	GROW(r->has_parent, 2 * (size_t)splits + 1, r->has_parent_cap);
	memset(r->has_parent, 0, 2 * (size_t)splits + 1);
	for (uint32_t i = 0; i < splits; i++)
		if (!read_split(r, f, arrays, fields.value[TREE_DECISION_TYPE].p != NULL, leaves, (uint32_t)num_cat, first_set, &nodes[i]))
			return false;
	for (uint32_t k = 0; k < leaves; k++) {
		HNode *node = &nodes[splits + k];
		if (!array_double(r, &leaf, &v))
			return false;
		if (!isfinite(v))
			return fail(r, "leaf_value[%u]: %g (a leaf must be finite)", k, v);
		node->feature = HIR_LEAF;
		node->value = v;
	}
	return read_counts(r, &fields, nodes, splits) && check_reachable(r, nodes, 2 * splits + 1);
}

/*
 * Whether the header's tree_sizes, where it has any, name the trees grove read: LightGBM
 * reads one tree per size, tree i at the first Tree= line plus the sizes before i (the
 * last size moves nothing), and the Tree= sections the file holds otherwise. Checked
 * after the trees, whose own errors come first.
 */
static bool check_tree_sizes(Reader *r, uint32_t num_trees)
{
	const char *p = r->tree_sizes.p, *end;
	uint64_t count = p ? count_tokens(r->tree_sizes) : 0, offset = 0;
	Text token;
	if (!count) /* none, or empty: LightGBM reads the Tree= sections one after another, as grove does */
		return true;
	end = p + r->tree_sizes.length;
	if (count != num_trees)
		return fail(r, "tree_sizes: %llu sizes, but the file has %u trees (LightGBM reads as many trees as tree_sizes "
		            "lists)", (unsigned long long)count, num_trees);
	for (uint32_t t = 0; t + 1 < num_trees; t++) {
		int64_t size;
		next_token(&p, end, &token);
		if (!integer_value(token, &size) || size < 0)
			return fail(r, "tree_sizes[%u]: expected a size in bytes, found '%.*s'", t, SHOWN(token));
		offset += (uint64_t)size;
		if (offset != r->starts[t + 1])
			return fail(r, "tree_sizes: Tree=%u starts %llu bytes after Tree=0, but tree_sizes puts it at %llu (LightGBM "
			            "reads each tree where tree_sizes says it starts)", t + 1, (unsigned long long)r->starts[t + 1],
			            (unsigned long long)offset);
	}
	return true;
}

/* Read the Tree= sections up to "end of trees". */
static bool read_trees(Reader *r, HForest *f)
{
	Text line;
	for (;;) {
		int64_t number;
		if (!next_line(r, &line)) {
			if (f->num_trees)
				return fail(r, "the file ends after this tree without an 'end of trees' line (it is cut short)");
			return fail(r, "the file ends without an 'end of trees' line (it is cut short)");
		}
		if (line.length == 0)
			continue;
		if (text_is(line, "end of trees"))
			break;
		if (!text_starts(line, "Tree="))
			return fail(r, "expected 'Tree=%u' or 'end of trees', found '%.*s'", f->num_trees, SHOWN(line));
		r->tree = f->num_trees;
		if (!json_text_int64(line.p + 5, line.length - 5, &number) || number != f->num_trees)
			return fail(r, "found '%.*s' (LightGBM numbers its trees in order)", SHOWN(line));
		if (!f->num_trees)
			r->first_tree = line.p;
		GROW(r->starts, (size_t)f->num_trees + 1, r->starts_cap);
		r->starts[f->num_trees] = (uint64_t)(line.p - r->first_tree);
		if (!read_tree(r, f, f->num_trees % f->num_outputs))
			return false;
	}
	r->tree = -1;
	if (!check_tree_sizes(r, f->num_trees))
		return false;
	if (f->num_trees % f->num_outputs)
		return fail(r, "%u trees, which is not a whole number of iterations of num_tree_per_iteration=%u trees", f->num_trees,
		            f->num_outputs);
	if (f->aggregate == HAGGREGATE_AVERAGE) {
		if (f->num_trees == 0)
			return fail(r, "average_output with no trees");
		f->average_count = f->num_trees / f->num_outputs;
	}
	return true;
}

HForest *front_read_lightgbm(const char *name, const char *text, size_t len, bool mapped, Error *e)
{
	Reader r = {.name = name, .p = text, .end = text + len, .e = e, .tree = -1};
	HForest *f = read_header(&r);
	bool ok = f && read_trees(&r, f) && front_lightgbm_categories(f, name, text, (size_t)(r.p - text), len, e);
	(void)mapped; /* the text stays in memory until the end */
	if (ok && !hir_verify(f, e)) {
		error_prefix(e, name);
		ok = false;
	}
	if (!ok) {
		hir_forest_free(f);
		f = NULL;
	}
	free(r.has_parent);
	free(r.stack);
	free(r.boundaries);
	free(r.starts);
	return f;
}
