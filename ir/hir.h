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
 */
#ifndef GROVE_IR_HIR_H
#define GROVE_IR_HIR_H

#include <stdio.h>

#include "ir/common.h"
#include "ir/schedule.h"

/* The comparison a split makes: the row goes left when `x OP threshold` holds. */
#define HIR_COMPARES(X) \
	X(LT, "<")      \
	X(LE, "<=")

typedef enum HCompare {
#define X(name, text) HCMP_##name,
	HIR_COMPARES(X)
#undef X
} HCompare;

/* What turns the per-output margins of a row into its prediction. */
#define HIR_TRANSFORMS(X)                                                   \
	X(IDENTITY, "identity") /* prediction = margin */                   \
	X(SIGMOID, "sigmoid")   /* 1 / (1 + exp(-margin)) per output */     \
	X(SOFTMAX, "softmax")   /* exp(m_i - max) / sum exp(m_j - max) */   \
	X(ARGMAX, "argmax")     /* index of the largest margin, 1 output */ \
	X(EXP, "exp")           /* exp(margin) per output */

typedef enum HTransform {
#define X(name, text) HTRANSFORM_##name,
	HIR_TRANSFORMS(X)
#undef X
} HTransform;

typedef enum HType {
	HTYPE_F32,
	HTYPE_F64,
} HType;

enum {
	HIR_LEAF = -1, /* HNode.feature of a leaf */
	HIR_NONE = -1, /* "no such index variable" */
};

typedef struct HNode {
	double value;          /* threshold of a split; output of a leaf */
	uint32_t left, right;  /* children, relative to the tree's first node; 0 on leaves */
	int32_t feature;       /* feature a split tests; HIR_LEAF on leaves */
	uint8_t default_left;  /* a missing (NaN) feature goes left */
	uint8_t compare;       /* HCompare */
	uint16_t unused;
} HNode;

typedef struct HTree {
	uint64_t first_node;   /* index of the root in HForest.nodes */
	uint32_t num_nodes;
	uint32_t output;       /* which margin (class / target) the tree adds to */
} HTree;

typedef struct HForest {
	char *name;            /* where it came from, for messages */
	HNode *nodes;
	uint64_t num_nodes, nodes_cap;
	HTree *trees;
	uint32_t num_trees;
	size_t trees_cap;
	uint32_t num_features;
	uint32_t num_outputs;  /* margins per row: classes, or 1 */
	double *base_score;    /* num_outputs margins every row starts from */
	HTransform transform;
	HType threshold_type;  /* precision of split comparisons */
	HType leaf_type;       /* precision of leaf values and their sum */
	HSchedule schedule;
} HForest;

/* A new empty forest with num_outputs zero base scores and the plain schedule `batch { tree }` (reset it once the trees are in). */
HForest *hir_forest_new(const char *name, uint32_t num_features, uint32_t num_outputs);
/* Free a forest and everything it owns. */
void hir_forest_free(HForest *f);
/* Append a tree of num_nodes zeroed nodes adding to `output`; returns its nodes (valid until the next append). */
HNode *hir_tree_add(HForest *f, uint32_t num_nodes, uint32_t output);
/* The nodes of tree t. */
static inline HNode *hir_tree_nodes(const HForest *f, uint32_t t) { return f->nodes + f->trees[t].first_node; }

/* Depth of tree t: 0 for a single leaf. The tree must have passed hir_verify. */
uint32_t hir_tree_depth(const HForest *f, uint32_t t);

/* The depths of the shallowest and the deepest leaf in the whole forest (0, 0 with no trees). */
void hir_leaf_depth_range(const HForest *f, uint32_t *min, uint32_t *max);
/* The same over trees [first, end) only (0, 0 when the range is empty). */
void hir_trees_leaf_depth_range(const HForest *f, uint32_t first, uint32_t end, uint32_t *min, uint32_t *max);

/* Check structure: children in range, no cycles or shared nodes, features < num_features, finite values, outputs in range. */
bool hir_verify(const HForest *f, Error *e);

/* Print the forest and its schedule as text (stable; used for golden tests). */
void hir_print(FILE *out, const HForest *f);

/* Names of the enum constants, for printers and messages. */
const char *hir_compare_name(HCompare c);
const char *hir_transform_name(HTransform t);
const char *hir_type_name(HType t);

#endif
