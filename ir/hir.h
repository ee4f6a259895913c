/*
 * HIR: the forest as the model format describes it, plus the schedule that says how
 * the batch x tree iteration space is walked.
 *
 * All nodes of a forest live in one array; a tree is a contiguous range of it and
 * refers to its nodes by 32-bit index relative to the tree's first node. Node 0 of a
 * tree is its root, so 0 never names a child and marks "no child" on leaves.
 * Thresholds and leaf values are stored as double, which holds float32 values exactly;
 * `threshold_type` and `leaf_type` record the precision the source format uses, and
 * code generation compares and accumulates in that precision.
 *
 * What the readers of the formats need beyond `x < t`: every comparison (ONNX), which
 * values count as missing (LightGBM), category sets (all three), leaves that add to
 * several margins (ONNX, XGBoost's multi-output trees), how leaves combine (ONNX's
 * aggregate functions), and the transforms of each library's objectives.
 */
#ifndef GROVE_IR_HIR_H
#define GROVE_IR_HIR_H

#include <stdio.h>
#include <string.h>

#include "ir/common.h"
#include "ir/schedule.h"

/*
 * The test a split makes: the row goes left when `x OP threshold` holds, and right
 * otherwise. IN tests membership of x's category in the split's category set (see
 * HCategoryRule); its threshold is unused.
 */
#define HIR_COMPARES(X) \
	X(LT, "<")      \
	X(LE, "<=")     \
	X(GT, ">")      \
	X(GE, ">=")     \
	X(EQ, "==")     \
	X(NE, "!=")     \
	X(IN, "in")

typedef enum HCompare {
#define X(name, text) HCMP_##name,
	HIR_COMPARES(X)
#undef X
	HCMP_COUNT
} HCompare;

/*
 * Which values of x a split treats as missing; a missing x goes where default_left
 * says, without being compared. NaN is always missing: a format whose rule sends NaN
 * through the comparison as some value v (LightGBM's missing type None compares NaN as
 * 0) is read as NAN with default_left set to the side v goes to.
 */
#define HIR_MISSINGS(X)                                                             \
	X(NAN, "nan")   /* NaN only */                                                \
	X(ZERO, "zero") /* NaN, and |x| <= HIR_ZERO_THRESHOLD: LightGBM's missing type Zero */

typedef enum HMissing {
#define X(name, text) HMISSING_##name,
	HIR_MISSINGS(X)
#undef X
	HMISSING_COUNT
} HMissing;

/* LightGBM's kZeroThreshold (a float): |x| at most this is zero for HMISSING_ZERO. */
#define HIR_ZERO_THRESHOLD ((double)1e-35f)

/*
 * How a non-missing x becomes a category for an IN split. Category c is in a set when
 * bit c % 32 of word c / 32 of the set is 1; a category past the set's last word is not
 * in it. Each format has its own rule for the x that are not small non-negative
 * integers, and the forest records which one its IN splits follow.
 */
#define HIR_CATEGORY_RULES(X)                                                                        \
	X(TRUNCATE, "truncate") /* c = x truncated toward 0; none when c < 0 (LightGBM: -0.5 is 0) */      \
	X(NONNEGATIVE, "nonnegative") /* none when x < 0; else c = x truncated (XGBoost: -0.5 is none) */  \
	X(EXACT, "exact")       /* none unless x is an integer >= 0; c = x (ONNX's BRANCH_MEMBER) */

typedef enum HCategoryRule {
#define X(name, text) HCATEGORY_##name,
	HIR_CATEGORY_RULES(X)
#undef X
	HCATEGORY_COUNT
} HCategoryRule;

/*
 * How the leaves a row reaches combine into its margins. Margin o of a row is
 * base_score[o] + A(values the row's leaves add to o), where A is
 *   SUM      their sum, in tree order
 *   AVERAGE  their sum divided by HForest.average_count
 *   MIN/MAX  their least / greatest value, or 0 when no leaf adds to o
 * (ONNX-ML's aggregate_function; LightGBM's average_output is AVERAGE). A tree adds to
 * every output in its range; the entry of a leaf vector for an output that leaf does
 * not add to holds the aggregate's identity: 0 for SUM and AVERAGE, +inf for MIN,
 * -inf for MAX (the only infinite leaf values there are).
 */
#define HIR_AGGREGATES(X)          \
	X(SUM, "sum")              \
	X(AVERAGE, "average")      \
	X(MIN, "min")              \
	X(MAX, "max")

typedef enum HAggregate {
#define X(name, text) HAGGREGATE_##name,
	HIR_AGGREGATES(X)
#undef X
	HAGGREGATE_COUNT
} HAggregate;

/* What turns the per-output margins of a row into its prediction. */
#define HIR_TRANSFORMS(X)                                                                    \
	X(IDENTITY, "identity") /* prediction = margin */                                    \
	X(SIGMOID, "sigmoid")   /* 1 / (1 + exp(-sigmoid_alpha * margin)) per output */      \
	X(SOFTMAX, "softmax")   /* exp(m_i - max) / sum exp(m_j - max) */                    \
	X(ARGMAX, "argmax")     /* index of the largest margin, 1 output */                  \
	X(EXP, "exp")           /* exp(margin) per output */                                 \
	X(SIGNED_SQUARE, "signed_square") /* sign(m) * m * m: LightGBM's regression sqrt */ \
	X(SOFTMAX_ZERO, "softmax_zero") /* softmax, margins within 1e-7 of 0 scaled by exp(-max) \
	                                   instead and left out of the sum (onnxruntime's) */       \
	X(PROBIT, "probit")     /* sqrt(2) * erfinv(2m - 1), as onnxruntime computes it */          \
	X(ISOLATION, "isolation") /* -2^-m: an isolation forest's score of its mean path length over \
	                             the expected one (scikit-learn's score_samples) */                 \
	X(STEP, "step")         /* 1 where margin > 0, else 0, per output (XGBoost's binary:hinge) */        \
	X(SOFTPLUS, "softplus") /* log(1 + e^m) per output (LightGBM's cross_entropy_lambda) */

typedef enum HTransform {
#define X(name, text) HTRANSFORM_##name,
	HIR_TRANSFORMS(X)
#undef X
	HTRANSFORM_COUNT
} HTransform;

/*
 * Two predictions from one margin, as binary classifiers in ONNX give them: after the
 * transform makes p of the margin, the row's predictions are [q, p], with q
 *   COMPLEMENT  1 - p (with SIGMOID: sigmoid(-alpha * margin), the same without cancellation)
 *   NEGATE      -p
 *   MIRROR      T(-m), T being the transform: the model's margins are [-m, m] (so are its
 *               raw margins, and labels read them), as in a two-class model whose every
 *               leaf adds v to one class and -v to the other (CatBoost's in ONNX)
 * NONE: one prediction per margin, as everywhere else.
 */
#define HIR_BINARIES(X)                  \
	X(NONE, "none")                  \
	X(COMPLEMENT, "complement")      \
	X(NEGATE, "negate")              \
	X(MIRROR, "mirror")

typedef enum HBinary {
#define X(name, text) HBINARY_##name,
	HIR_BINARIES(X)
#undef X
	HBINARY_COUNT
} HBinary;

typedef enum HType {
	HTYPE_F32,
	HTYPE_F64,
} HType;

enum {
	HIR_LEAF = -1, /* HNode.feature of a leaf */
	HIR_NONE = -1, /* "no such index variable" */
};

typedef struct HNode {
	double value;          /* threshold of a split other than IN; output of a leaf of a width-1 tree */
	uint32_t left, right;  /* children, relative to the tree's first node; 0 on leaves */
	int32_t feature;       /* feature a split tests; HIR_LEAF on leaves */
	union {
		uint32_t set;      /* IN splits: index of the split's category set in HForest.sets */
		uint32_t vector;   /* leaves of a tree of width w > 1: its values are leaf_values[vector .. vector + w) */
	};
	uint8_t default_left;  /* a missing feature goes left */
	uint8_t compare;       /* HCompare */
	uint8_t missing;       /* HMissing: which values are missing */
	uint8_t tile;          /* in a tiled forest (HForest.tile_size), this split starts a tile */
	float cover;           /* the weight of training rows that reached the node (XGBoost's sum_hessian, LightGBM's
	                          counts; 0 where the model has none): what probability-based tiling follows */
} HNode;

typedef struct HTree {
	uint64_t first_node;   /* index of the root in HForest.nodes */
	uint32_t num_nodes;
	uint32_t output;       /* the first margin (class / target) the tree adds to */
	uint32_t width;        /* how many: margins output .. output + width - 1 (1 for most models) */
	/*
	 * The shallowest and deepest leaf's depth + 1, in splits ([0]) and in tiles ([1]),
	 * kept by the depth queries below (many passes ask for them, and each answer walks the
	 * tree); 0: not known. Zeroed HTrees know nothing; a pass that changes a kept tree's
	 * shape or tiles in place calls hir_tree_reshaped.
	 */
	uint32_t depths[2][2];
} HTree;

/* A category set: words[first .. first + num_words) of HForest.set_words. */
typedef struct HSet {
	uint64_t first;
	uint32_t num_words;
} HSet;

/*
 * Class labels (ONNX classifiers): a row's label is labels[k] for its class k. With
 * `margin` < 0, k is the first margin that is largest; otherwise k is 1 when that
 * margin is greater than `threshold` and 0 when not (two classes). Labels are int64
 * values, or strings where `strings` is not NULL.
 */
typedef struct HLabels {
	uint32_t count;        /* 0: the model has no labels */
	int64_t *ints;         /* count values (NULL with strings) */
	char **strings;        /* count strings, or NULL */
	int32_t margin;        /* the margin two-class labels test, or -1 for the largest */
	double threshold;
} HLabels;

typedef struct HForest {
	char *name;            /* where it came from, for messages */
	HNode *nodes;
	uint64_t num_nodes, nodes_cap;
	HTree *trees;
	uint32_t num_trees;
	size_t trees_cap;
	uint32_t num_features;
	char **feature_names;  /* num_features column names, or NULL when the model names none */
	CategoryValues category_values; /* the values of its categorical columns, where the model names them */
	uint32_t num_outputs;  /* margins per row: classes, or 1 */
	double *base_score;    /* num_outputs margins every row starts from */
	HAggregate aggregate;  /* how leaves combine into margins */
	uint32_t average_count; /* AVERAGE divides the sum by this (not 0) */
	HTransform transform;
	double sigmoid_alpha;  /* SIGMOID's scale of the margin (1 but for LightGBM's `sigmoid:`) */
	HBinary binary;        /* with one margin, two predictions (an ONNX binary classifier) */
	HLabels labels;
	HType threshold_type;  /* precision of split comparisons */
	bool rows_float;       /* rows are rounded to float32 before they are compared, whatever the thresholds'
	                          precision (scikit-learn casts them): no entry takes rows of doubles as they are */
	HType leaf_type;       /* precision of leaf values and their sum */
	HCategoryRule category_rule; /* how IN splits map x to a category */
	HSet *sets;            /* category sets of IN splits */
	uint32_t num_sets;
	size_t sets_cap;
	uint32_t *set_words;
	uint64_t num_set_words;
	size_t set_words_cap;
	double *leaf_values;   /* values of the leaves of trees wider than 1 */
	uint64_t num_leaf_values;
	size_t leaf_values_cap;
	/*
	 * The tiling of hir_tile_trees (0: none). A tile is a split marked `tile` and the
	 * splits below it down to the next marked ones, at most tile_size; a walk step
	 * evaluates a tile, leaves being tiles of their own.
	 */
	uint8_t tile_size;
	HSchedule schedule;
} HForest;

/* A new empty forest with num_outputs zero base scores and the plain schedule `batch { tree }` (reset it once the trees are in). */
HForest *hir_forest_new(const char *name, uint32_t num_features, uint32_t num_outputs);
/* A deep copy of f (its schedule included). */
HForest *hir_forest_copy(const HForest *f);
/* Free a forest and everything it owns. */
void hir_forest_free(HForest *f);
/* Append a tree of num_nodes zeroed nodes adding to `output` (width 1); returns its nodes (valid until the next append). */
HNode *hir_tree_add(HForest *f, uint32_t num_nodes, uint32_t output);
/* Append a category set of num_words zeroed words; returns its index (*words: the words, valid until the next append). */
uint32_t hir_set_add(HForest *f, uint32_t num_words, uint32_t **words);
/* Append n zeroed leaf values; returns the index of the first (*values: them, valid until the next append). */
uint64_t hir_leaf_values_add(HForest *f, uint64_t n, double **values);
/* Whether category c is in set s. */
bool hir_set_has(const HForest *f, uint32_t s, uint64_t c);
/* Whether split s of f sends x = 0 (and -0) left by its test (every category rule makes 0 category 0). */
bool hir_zero_goes_left(const HForest *f, const HNode *s);
/* The nodes of tree t. */
static inline HNode *hir_tree_nodes(const HForest *f, uint32_t t) { return f->nodes + f->trees[t].first_node; }

/* Splits of tree t: a binary tree has one fewer than leaves. */
static inline uint32_t hir_tree_splits(const HForest *f, uint32_t t) { return f->trees[t].num_nodes / 2; }
/* Splits of trees [first, end) (end past the last tree: to the last). */
uint64_t hir_trees_splits(const HForest *f, uint32_t first, uint32_t end);

/* Forget what the depth queries know of tree t: its nodes' children or tiles changed. */
static inline void hir_tree_reshaped(HForest *f, uint32_t t) { memset(f->trees[t].depths, 0, sizeof f->trees[t].depths); }

/* Depth of tree t: 0 for a single leaf. The tree must have passed hir_verify. */
uint32_t hir_tree_depth(const HForest *f, uint32_t t);

/* Whether splits a and b decide alike: the same feature, comparison, missing rule and way, threshold or set. */
bool hir_splits_alike(const HNode *a, const HNode *b);
/*
 * Whether tree t is symmetric (CatBoost's oblivious trees): its leaves all at one depth
 * (at most HIR_MAX_WALK_STEPS), each level's splits alike. Fills level[d] with a node of
 * level d (HIR_MAX_WALK_STEPS + 1 entries); queue is scratch of the tree's size.
 */
bool hir_tree_symmetric(const HForest *f, uint32_t t, uint32_t *level, uint32_t *queue);
/* Whether f has trees and every one is symmetric. */
bool hir_forest_symmetric(const HForest *f);
/* Whether every feature an IN split of f tests is tested by IN splits alone, none of them counting 0 missing. */
bool hir_categories_alone(const HForest *f);

/*
 * The depths of the shallowest and the deepest leaf in the whole forest (0, 0 with no
 * trees), in walk steps: splits, or in a tiled forest tiles, on the way to the leaf.
 */
void hir_leaf_depth_range(const HForest *f, uint32_t *min, uint32_t *max);
/* The same over trees [first, end) only (0, 0 when the range is empty). */
void hir_trees_leaf_depth_range(const HForest *f, uint32_t first, uint32_t end, uint32_t *min, uint32_t *max);

/*
 * Check structure: children in range, no cycles or shared nodes, features <
 * num_features, known comparisons and rules, sets and leaf vectors in range, finite
 * values, outputs in range.
 */
bool hir_verify(const HForest *f, Error *e);

/* Print the forest and its schedule as text (stable; used for golden tests). */
void hir_print(FILE *out, const HForest *f);

/* Names of the enum constants, for printers and messages. */
const char *hir_compare_name(HCompare c);
const char *hir_transform_name(HTransform t);
const char *hir_missing_name(HMissing m);
const char *hir_category_rule_name(HCategoryRule r);
const char *hir_aggregate_name(HAggregate a);
const char *hir_binary_name(HBinary b);
/* Predictions per row: num_outputs, 1 for ARGMAX, 2 for a binary expansion. */
uint32_t hir_num_predictions(const HForest *f);
/* Whether transform t makes each prediction of one margin alone (not SOFTMAX, SOFTMAX_ZERO or ARGMAX). */
bool hir_transform_elementwise(HTransform t);
/* Raw margins per row: num_outputs, 2 for a MIRROR expansion. */
uint32_t hir_num_margins(const HForest *f);
const char *hir_type_name(HType t);

#endif
