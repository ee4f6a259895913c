/*
 * The ONNX reader's own interface between its two halves: front/onnx.c reads the tree
 * ensemble node into HIR, front/onnx_graph.c finds that node in the model's graph and
 * checks what surrounds it.
 */
#ifndef GROVE_FRONT_ONNX_H
#define GROVE_FRONT_ONNX_H

#include "front/front.h"

#include "onnx/onnx.pb-c.h"

typedef Onnx__AttributeProto Attribute;
typedef Onnx__NodeProto Node;
typedef Onnx__TensorProto Tensor;

/*
 * A tree node or leaf as the operator describes it. Opsets 1-3 have one item per
 * nodes_* entry (leaves included); opset 5 has the nodes_* entries, then one item per
 * leaf_* entry.
 */
typedef struct Item {
	int64_t tree, id;      /* opsets 1-3: the node's tree id and node id */
	double threshold;
	size_t child[2];       /* the true and the false branch, as item indices */
	size_t first_weight;   /* leaves: what they add is weights[first_weight .. + num_weights) */
	uint32_t num_weights;
	int32_t feature;
	uint32_t set;          /* BRANCH_MEMBER: its set in the forest */
	uint8_t mode;          /* index in modes[] */
	uint8_t missing_true;
} Item;

typedef struct Weight {
	uint32_t target;
	double value;
} Weight;

typedef struct Reader {
	const char *name;      /* the file, for messages */
	const char *op;        /* the ensemble's op type, prefixed to attribute names in messages */
	const Node *node;
	Error *e;
	bool v5;               /* opset 5's TreeEnsemble */
	Item *items;
	size_t num_items, num_splits; /* opset 5: items past num_splits are leaves */
	Weight *weights;
	size_t num_weights;
	size_t *roots;
	uint32_t num_trees;
	int64_t max_feature;
	uint32_t *stamp;       /* per item: 1 + the last tree that reached it, 0 for none */
	size_t *order;         /* scratch: a tree's items breadth first */
	HNode *nodes;          /* scratch: their HIR nodes */
	size_t order_cap, nodes_cap;
} Reader;

/* Fill r->e with "FILE: " and the message; returns false. */
bool onnx_fail(Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s, or "" for a missing protobuf string. */
static inline const char *onnx_text(const char *s) { return s ? s : ""; }

/*
 * The tree ensemble node r->node (r->name, r->op, r->e set; the rest zeroed) into a
 * forest reading rows of input_width columns (0: unknown), of doubles where double_rows;
 * NULL and r->e filled on bad input.
 */
HForest *onnx_read_ensemble(Reader *r, size_t file_size, uint32_t input_width, bool double_rows);

#endif
