/*
 * The representation interface: how a forest is laid out in memory and how code
 * reaches its nodes. lower_mir_to_lir walks trees only through these hooks, so a new
 * layout (sparse, reorg, tiled, code-in-instructions) is a new LRepresentation and
 * an entry in lower/representations.c, with no change to the lowering.
 *
 * Values are LIR values (instruction indices) built with the LBuilder passed in. A
 * tree handle is whatever value the representation needs to find a tree (an offset,
 * a pointer); a node is an i64 value the representation defines.
 */
#ifndef GROVE_LOWER_REP_H
#define GROVE_LOWER_REP_H

#include "ir/hir.h"
#include "ir/lir.h"

/* The fields of a node the walk needs, as LIR values. */
typedef struct RepNode {
	uint32_t is_leaf;      /* i1 */
	uint32_t feature;      /* i64: column of the row to test (meaningless on leaves) */
	uint32_t threshold;    /* RepLayout.threshold_type */
	uint32_t default_left; /* i1: a missing value goes left */
} RepNode;

/* What a layout tells the lowering about itself. */
typedef struct RepLayout {
	void *state;           /* the representation's own data */
	LType threshold_type;  /* type of RepNode.threshold */
	LType leaf_type;       /* type of leaf values */
} RepLayout;

typedef struct LRepresentation {
	const char *name;
	/* Lay f out into buffers of m; fill layout. Returns false and fills e if f cannot be laid out this way. */
	bool (*lay_out)(const HForest *f, LModule *m, RepLayout *layout, Error *e);
	/* Free layout->state. */
	void (*free)(RepLayout *layout);
	/* Emit, at the start of the function, whatever the other hooks share (buffer addresses). */
	void (*begin_function)(RepLayout *layout, LBuilder *b);
	/* Emit code yielding the handle of tree number `tree` (i64). */
	uint32_t (*tree)(RepLayout *layout, LBuilder *b, uint32_t tree);
	/* Emit code yielding the root node of a tree. */
	uint32_t (*root)(RepLayout *layout, LBuilder *b, uint32_t tree);
	/* Emit code loading node's fields. */
	RepNode (*load_node)(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node);
	/* Emit code yielding the child of node taken when go_right (i1) is false (left) or true (right). */
	uint32_t (*child)(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node, uint32_t go_right);
	/* Emit code yielding the value of a leaf node (of layout->leaf_type). */
	uint32_t (*leaf_value)(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node);
} LRepresentation;

/* The array representation: each tree a complete binary tree in level order, children at 2i+1, 2i+2. */
extern const LRepresentation rep_array;
/* The sparse representation: nodes stored once each, a split holding the index of its left child. */
extern const LRepresentation rep_sparse;

/* The representation named name, or NULL. */
const LRepresentation *rep_find(const char *name);
/* The representation to use for f when none is asked for. */
const LRepresentation *rep_choose(const HForest *f);

/* Helpers shared by representations. */

/* The node word of a split: feature << 1 | default_left (leaves store -1). */
static inline int32_t rep_split_word(const HNode *n) { return (int32_t)((uint32_t)n->feature << 1 | (n->default_left ? 1u : 0u)); }
/* The type of a buffer holding both f's thresholds and leaf values. */
LType rep_value_type(const HForest *f);
/* values[at] = v, values being of type (F32 or F64). */
void rep_store_value(void *values, LType type, uint64_t at, double v);
/* Emit the load of the leaf value at values[slot], converted to layout->leaf_type. */
uint32_t rep_load_leaf(const RepLayout *layout, LBuilder *b, uint32_t values, uint32_t slot);
/* Check that f's features fit in a node word. */
bool rep_check_features(const HForest *f, const char *rep_name, Error *e);
/* The free hook of representations whose state is one malloc'ed block. */
void rep_free_state(RepLayout *layout);
/* Emit the address of module buffer number index. */
uint32_t rep_buffer_address(LBuilder *b, uint32_t index);
/* Emit the decoding of a node word into n's is_leaf, feature and default_left. */
void rep_decode_word(LBuilder *b, uint32_t word, RepNode *n);

#endif
