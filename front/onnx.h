/*
 * The ONNX reader's own interface between its two halves: front/onnx.c reads the tree
 * ensemble node into HIR, front/onnx_graph.c finds that node in the model's graph and
 * checks what surrounds it.
 */
#ifndef GROVE_FRONT_ONNX_H
#define GROVE_FRONT_ONNX_H

#include "front/front.h"

#include "front/protobuf.h"

/*
 * ONNX's messages (onnx.proto), as much of them as grove reads, parsed in place from
 * the file by front/onnx_proto.c: strings are spans of the file, and the long repeated
 * fields of attributes and tensors stay in the file until the reader walks them. A
 * field that protobuf would let two copies of (the last copy of a scalar winning, two
 * messages merged, the last of a oneof) is refused, so that no two readings of a file
 * are possible.
 */

/* AttributeProto.type's codes, each with the field that holds such a value. */
#define ONNX_ATTRIBUTE_TYPES(X) \
	X(FLOAT, 1, 2, "f") X(INT, 2, 3, "i") X(STRING, 3, 4, "s") X(TENSOR, 4, 5, "t") X(GRAPH, 5, 6, "g") \
	X(FLOATS, 6, 7, "floats") X(INTS, 7, 8, "ints") X(STRINGS, 8, 9, "strings") X(TENSORS, 9, 10, "tensors") \
	X(GRAPHS, 10, 11, "graphs") X(SPARSE_TENSOR, 11, 22, "sparse_tensor") X(SPARSE_TENSORS, 12, 23, "sparse_tensors") \
	X(TYPE_PROTO, 13, 14, "tp") X(TYPE_PROTOS, 14, 15, "type_protos")
#define ONNX_ATTRIBUTE_FIELD(name, code, field, text) ATTR_##name = field,
enum { ONNX_ATTRIBUTE_TYPES(ONNX_ATTRIBUTE_FIELD) };
#undef ONNX_ATTRIBUTE_FIELD

/* TensorProto.data_type codes grove reads. */
enum { ONNX_FLOAT = 1, ONNX_UINT8 = 2, ONNX_INT32 = 6, ONNX_INT64 = 7, ONNX_DOUBLE = 11 };

typedef struct Attribute {
	PbCursor message;  /* the AttributeProto, for its repeated fields */
	PbBytes name, s, t; /* s: STRING's bytes; t: TENSOR's TensorProto */
	int64_t i;
	uint32_t value;    /* the field holding its value (ATTR_*), from `type` or the one present; 0 for none */
	size_t count;      /* FLOATS, INTS, STRINGS: the number of elements */
} Attribute;

typedef struct Tensor {
	PbCursor message;  /* the TensorProto, for its repeated fields (dims, *_data) */
	PbBytes name, raw_data;
	int32_t data_type, data_location;
	bool has_raw_data;
	uint32_t data_fields; /* bit n: the tensor has field n, one of its data fields (float_data, ..., raw_data) */
} Tensor;

typedef struct Node {
	PbBytes name, op_type, domain;
	PbBytes *inputs, *outputs;
	size_t num_inputs, num_outputs;
	Attribute *attributes;
	size_t num_attributes;
} Node;

/* A graph input: its name, and what grove needs of its type. */
typedef struct ValueInfo {
	PbBytes name;
	bool tensor;       /* its type is a tensor type */
	int32_t elem_type; /* the tensor's element type (0: unset) */
	bool has_width;    /* the shape has two dimensions, the second a number: */
	int64_t width;
} ValueInfo;

/* A model's graph (ModelProto.graph), parsed by onnx_graph_parse; freed with onnx_graph_free. */
typedef struct Graph {
	const uint8_t *base; /* the file's first byte */
	bool present;        /* the model has a graph */
	Node *nodes;
	ValueInfo *inputs;
	PbBytes *outputs;    /* the outputs' names */
	Tensor *initializers;
	size_t num_nodes, num_inputs, num_outputs, num_initializers;
	size_t nodes_cap, inputs_cap, outputs_cap, initializers_cap, entries;
} Graph;

/*
 * The graph of the ModelProto bytes[0..len) into *g; false with e filled ("not an ONNX
 * model: the protobuf cannot be decoded: PLACE: at byte N: ..." or "PLACE: ...", PLACE
 * like graph.node[3].attribute[2]) for a bad encoding, an ambiguity, a graph past
 * grove's bounds, or a node with two attributes of one name.
 */
bool onnx_graph_parse(Graph *g, const uint8_t *bytes, size_t len, Error *e);
void onnx_graph_free(Graph *g);
/* The TensorProto bytes into *t (place names it in messages); false with e filled. */
bool onnx_tensor_parse(const uint8_t *base, PbBytes bytes, const char *place, Tensor *t, Error *e);
/*
 * Tensor t (named by place) must hold its data in one field: raw_data, or typed field
 * `field` (float_data, ...: the one for its type); false with e filled if it has others.
 */
bool onnx_tensor_check_data(const Tensor *t, uint32_t field, const char *place, Error *e);
/* The name of attribute type field `value` (ATTR_*), e.g. "ints". */
const char *onnx_attribute_field_name(uint32_t value);

/*
 * A tree node or leaf as the operator describes it. Opsets 1-3 have one item per
 * nodes_* entry (leaves included); opset 5 has the nodes_* entries, then one item per
 * leaf_* entry. Items are numbered within what the reader holds at once: one tree of
 * opsets 1-3 when their ids are in order (the common case), else the whole forest.
 */
typedef struct Item {
	double threshold;
	union {
		uint32_t child[2];         /* splits: the true and the false branch, as item indices */
		struct {
			uint32_t first_weight; /* leaves: what they add is weights[first_weight .. + num_weights) */
			uint32_t num_weights;
		};
	};
	int32_t feature;
	uint32_t set;                  /* BRANCH_MEMBER: its set in the forest */
	uint8_t mode;                  /* index in modes[] */
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
	const uint8_t *base;   /* the file's first byte */
	bool mapped;           /* the file is a read-only private mapping, whose pages the reader may drop (FrontReader) */
	Error *e;
	bool v5;               /* opset 5's TreeEnsemble */
	Item *items;
	size_t num_items, num_splits; /* opset 5: items past num_splits are leaves */
	size_t item_first;     /* opsets 1-3: the index in nodes_* of items[0] */
	int64_t tree_id;       /* opsets 1-3, one tree at a time: its id */
	int64_t *tree_ids, *node_ids; /* opsets 1-3, the whole forest at once: each item's ids */
	Weight *weights;
	size_t num_weights;
	uint32_t *weight_items; /* opsets 1-3, scratch: the item of each weight */
	size_t *roots;
	uint32_t num_trees;
	int64_t max_feature;
	bool class1, negative; /* some weight adds to output 1; some weight is negative */
	uint32_t *stamp;       /* per item: 1 + the last tree that reached it, 0 for none */
	uint8_t *referenced;   /* opsets 1-3, per item: some split's child */
	uint32_t *order;       /* scratch: a tree's items breadth first */
	HNode *nodes;          /* scratch: their HIR nodes */
	int64_t *ints;         /* opsets 1-3, trees in order, scratch: a tree's nodes_* integers */
	double *doubles;       /*   and thresholds */
	size_t ints_cap, doubles_cap, items_cap, weights_cap, weight_items_cap, stamp_cap, referenced_cap, order_cap, nodes_cap;
} Reader;

/* Fill r->e with "FILE: " and the message; returns false. */
bool onnx_fail(Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Free what the reader holds. */
void onnx_reader_free(Reader *r);

/* A numeric list attribute (ints, floats) or tensor (typed fields or raw little-endian bytes), read in order. */
typedef enum ValueKind { VALUES_INT64, VALUES_INT32, VALUES_UINT8, VALUES_FLOAT, VALUES_DOUBLE } ValueKind;

typedef struct Values {
	char name[64];        /* the attribute, for messages */
	bool present;         /* the model has it */
	size_t count;
	ValueKind kind;
	const uint8_t *bytes; /* raw data, or NULL for typed data: */
	PbRepeated items;
	size_t next;          /* the element onnx_values_next reads */
	const uint8_t *kept;  /* the file's pages from here on are kept (onnx_release) */
} Values;

/* The ensemble's attribute `name`, or NULL. */
const Attribute *onnx_attribute(const Reader *r, const char *name);
/*
 * Attribute `name` as numbers: a list of ints or floats, or a tensor. With as_tensor,
 * `name`_as_tensor (doubles) may stand for it instead (*is_double then says which).
 * Absent: an error if required, else v->present is false.
 */
bool onnx_read_values(Reader *r, const char *name, bool as_tensor, bool required, Values *v, bool *is_double);
/* The size of an element of raw data, by ValueKind. */
static const size_t onnx_kind_sizes[] = {8, 4, 1, 4, 8};

/* The next element of v (there must be one). */
static inline double onnx_values_next(Values *v)
{
	const uint8_t *p = v->bytes ? v->bytes + v->next * onnx_kind_sizes[v->kind] : NULL;
	uint64_t bits;
	uint32_t low;
	int64_t l;
	int32_t n;
	float f;
	double d;
	if (v->next++ >= v->count)
		die("reading past the %zu elements of %s", v->count, v->name);
	if (v->bytes) {
		switch (v->kind) {
		case VALUES_INT64: return memcpy(&l, p, 8), (double)l;
		case VALUES_INT32: return memcpy(&n, p, 4), n;
		case VALUES_UINT8: return *p;
		case VALUES_FLOAT: return memcpy(&f, p, 4), f;
		case VALUES_DOUBLE: return memcpy(&d, p, 8), d;
		}
	}
	bits = pb_repeated_next(&v->items);
	low = (uint32_t)bits;
	switch (v->kind) {
	case VALUES_INT64: return (double)(int64_t)bits;
	case VALUES_INT32:
	case VALUES_UINT8: return (int32_t)low; /* protobuf's int32: the low 32 bits of the varint */
	case VALUES_FLOAT: return memcpy(&f, &low, 4), f;
	case VALUES_DOUBLE: return memcpy(&d, &bits, 8), d;
	}
	die("unknown value kind %d", (int)v->kind);
}

/* The next element of an integer list (exact where onnx_values_next would round). */
static inline int64_t onnx_values_next_int(Values *v)
{
	int64_t l;
	if (v->kind != VALUES_INT64)
		return (int64_t)onnx_values_next(v);
	if (v->next >= v->count)
		die("reading past the %zu elements of %s", v->count, v->name);
	if (!v->bytes)
		return v->next++, (int64_t)pb_repeated_next(&v->items);
	memcpy(&l, v->bytes + 8 * v->next++, 8);
	return l;
}
/* The next n elements of v (there must be as many): onnx_values_next_int's into out, in one loop. */
void onnx_values_take_ints(Values *v, size_t n, int64_t *out);
/* The same as onnx_values_next's doubles. */
void onnx_values_take(Values *v, size_t n, double *out);
/* Integer attribute `name` (`otherwise` when absent), within [min, max]. */
bool onnx_read_int(Reader *r, const char *name, int64_t min, int64_t max, int64_t otherwise, int64_t *out);
/*
 * Done with the file's bytes from *kept to `at` (an iterator's position): if the file
 * is mapped, let the kernel drop their pages (in steps of a MiB), and move *kept.
 */
void onnx_release(const Reader *r, const uint8_t **kept, const uint8_t *at);
/* onnx_release behind v's next element. */
void onnx_values_release(const Reader *r, Values *v);
/* String attribute `name` (`otherwise` when absent) into buf. */
bool onnx_read_string(Reader *r, const char *name, const char *otherwise, char *buf, size_t size);
/* The strings of list attribute a: *count of them, read from *items. */
bool onnx_read_strings(Reader *r, const Attribute *a, PbRepeated *items, size_t *count);

/*
 * The ensemble's trees into f (its aggregate set), read as r->v5 says, each breadth
 * first from its root (front/onnx_trees.c). *all_rows_touch: some tree adds to output
 * `watch` from every leaf; *thresholds_double, *weights_double: the model gives them as
 * doubles. False with r->e filled on bad input.
 */
bool onnx_read_trees(Reader *r, HForest *f, uint32_t num_outputs, uint32_t watch, size_t file_size, bool *all_rows_touch,
                     bool *thresholds_double, bool *weights_double);

/*
 * The tree ensemble node r->node (r->name, r->op, r->base, r->e set; the rest zeroed)
 * into a forest reading rows of input_width columns (0: unknown), of doubles where
 * double_rows; NULL and r->e filled on bad input.
 */
HForest *onnx_read_ensemble(Reader *r, size_t file_size, uint32_t input_width, bool double_rows);

#endif
