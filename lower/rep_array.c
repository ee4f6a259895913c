/*
 * The array representation (Treebeard's): every tree is stored as a complete binary
 * tree of its depth in level order, so the children of slot i are 2i+1 and 2i+2 and
 * no child links are stored. Two parallel buffers hold a word and a value per slot:
 *
 *   word  (i32)  the node word (rep.h): feature, comparison, missing rule; -1 on leaves and unused slots
 *   value        threshold on splits; leaf value on leaves
 *
 * and a third holds each tree's first slot (and, last, the end of the last tree). A tree of depth d takes 2^(d+1) - 1 slots
 * whatever its node count, so deep sparse trees are expensive here.
 */
#include "lower/rep.h"

#include <stdlib.h>
#include <string.h>

/* Trees deeper than this would need more than 2^25 slots each. */
#define ARRAY_MAX_DEPTH 24

typedef struct ArrayState {
	uint32_t word_buffer, value_buffer, offset_buffer;
	uint32_t words, values, offsets; /* their addresses in the function being built */
} ArrayState;

/* Store tree t into words/values starting at slot `first`. */
static void store_tree(const HForest *f, const RepLayout *layout, uint32_t t, int32_t *words, void *values, uint64_t first,
                       uint64_t *stack)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t top = 0;
	stack[top++] = 0; /* node */
	stack[top++] = 0; /* slot within the tree */
	while (top) {
		uint64_t slot = stack[--top], id = stack[--top];
		const HNode *n = &nodes[id];
		uint64_t at = first + slot;
		rep_store_value(values, layout->threshold_type, at, rep_slot_value(layout, f, n));
		if (n->feature == HIR_LEAF) {
			words[at] = -1;
			continue;
		}
		words[at] = rep_split_word(n);
		stack[top++] = n->left;
		stack[top++] = 2 * slot + 1;
		stack[top++] = n->right;
		stack[top++] = 2 * slot + 2;
	}
}

static bool array_lay_out(const HForest *f, LModule *m, RepLayout *layout, Error *e)
{
	LType type;
	int32_t *offsets = xmalloc(((size_t)f->num_trees + 1) * sizeof *offsets), *words;
	uint64_t total = 0, max_nodes = 1, *stack;
	void *values;
	ArrayState *s;

	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint32_t depth = hir_tree_depth(f, t);
		if (depth > ARRAY_MAX_DEPTH) {
			free(offsets);
			return error_set(e, "array representation: tree %u has depth %u, at most %d fit", t, depth, ARRAY_MAX_DEPTH);
		}
		offsets[t] = (int32_t)total;
		total += (2ull << depth) - 1;
		if (total > INT32_MAX) {
			free(offsets);
			return error_set(e, "array representation: the forest needs more than 2^31 slots (tree %u of depth %u)", t, depth);
		}
		if (f->trees[t].num_nodes > max_nodes)
			max_nodes = f->trees[t].num_nodes;
	}
	if (!rep_lay_out_forest(f, m, "array", layout, e)) {
		free(offsets);
		return false;
	}
	type = layout->threshold_type;
	words = xmalloc((total ? total : 1) * sizeof *words);
	values = xcalloc(total ? total : 1, lir_type_size(type));
	memset(words, 0xff, (total ? total : 1) * sizeof *words); /* unused slots read as leaves */
	stack = xmalloc(4 * max_nodes * sizeof *stack);
	offsets[f->num_trees] = (int32_t)total; /* where the last tree ends */
	for (uint32_t t = 0; t < f->num_trees; t++)
		store_tree(f, layout, t, words, values, (uint64_t)offsets[t], stack);
	free(stack);

	s = xcalloc(1, sizeof *s);
	s->word_buffer = lir_buffer_add(m, "array.words", LTYPE_I32, total, words);
	s->value_buffer = lir_buffer_add(m, "array.values", type, total, values);
	s->offset_buffer = lir_buffer_add(m, "array.tree_offsets", LTYPE_I32, f->num_trees + 1, offsets);
	layout->state = s;
	return true;
}

static void array_begin_function(RepLayout *layout, LBuilder *b)
{
	ArrayState *s = layout->state;
	rep_begin_forest(layout, b);
	s->words = rep_buffer_address(b, s->word_buffer);
	s->values = rep_buffer_address(b, s->value_buffer);
	s->offsets = rep_buffer_address(b, s->offset_buffer);
}

static uint32_t array_tree(RepLayout *layout, LBuilder *b, uint32_t tree)
{
	ArrayState *s = layout->state;
	uint32_t offset = lir_emit(b, LOP_LOAD, LTYPE_I32, s->offsets, tree, LIR_NONE);
	return lir_cast(b, LCAST_SEXT, LTYPE_I64, offset);
}

static uint32_t array_root(RepLayout *layout, LBuilder *b, uint32_t tree)
{
	(void)layout;
	(void)tree;
	return lir_const_int(b, LTYPE_I64, 0);
}

static RepNode array_load_node(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	ArrayState *s = layout->state;
	uint32_t slot = lir_emit(b, LOP_ADD, LTYPE_I64, tree, node, LIR_NONE);
	RepNode n;
	rep_decode_word(b, lir_emit(b, LOP_LOAD, LTYPE_I32, s->words, slot, LIR_NONE), &n);
	n.threshold = lir_emit(b, LOP_LOAD, layout->threshold_type, s->values, slot, LIR_NONE);
	return n;
}

/* The children of slot i are 2i+1 and 2i+2 (a leaf's lie outside the tree: it stays where leaf_stays). */
static uint32_t array_step(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node, const RepNode *fields,
                           const RepRow *row, bool leaf_stays)
{
	uint32_t right = rep_goes_right(layout, b, fields, row, leaf_stays);
	uint32_t one = lir_const_int(b, LTYPE_I64, 1);
	uint32_t twice = lir_emit(b, LOP_SHL, LTYPE_I64, node, one, LIR_NONE);
	uint32_t left = lir_emit(b, LOP_ADD, LTYPE_I64, twice, one, LIR_NONE);
	uint32_t child = lir_emit(b, LOP_ADD, LTYPE_I64, left, lir_cast(b, LCAST_ZEXT, LTYPE_I64, right), LIR_NONE);
	(void)tree;
	return rep_step_result(b, fields, node, child, leaf_stays);
}

static void array_prefetch_tree(RepLayout *layout, LBuilder *b, uint32_t tree)
{
	ArrayState *s = layout->state;
	uint32_t buffers[] = {s->words, s->values};
	LType types[] = {LTYPE_I32, layout->threshold_type};
	rep_prefetch_slots(b, s->offsets, tree, buffers, types, COUNT_OF(buffers));
}

static uint32_t array_leaf_value(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	ArrayState *s = layout->state;
	return rep_load_leaf(layout, b, s->values, lir_emit(b, LOP_ADD, LTYPE_I64, tree, node, LIR_NONE));
}

const LRepresentation rep_array = {
	.name = "array",
	.lay_out = array_lay_out,
	.free = rep_free_state,
	.begin_function = array_begin_function,
	.tree = array_tree,
	.root = array_root,
	.load_node = array_load_node,
	.step = array_step,
	.prefetch_tree = array_prefetch_tree,
	.leaf_value = array_leaf_value,
};
