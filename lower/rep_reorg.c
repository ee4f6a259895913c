/*
 * The reorg representation (RAPIDS FIL's dense layout): every tree is stored as a
 * complete binary tree of the forest's depth, root at slot 1, children of slot i at 2i and
 * 2i+1, and the trees are interleaved node-major: slot i of tree t is element
 * (i - 1) * num_trees + t,
 * so the roots of all trees come first, then all their left children, and so on. Two
 * buffers, one element per slot each:
 *
 *   words   (i32)  the node word (rep.h); -1 on leaves and unused slots
 *   values         threshold on splits, leaf value on leaves (f32 or f64)
 *
 * Fields in arrays of their own rather than records: threads of a warp walking
 * consecutive trees read consecutive elements, so each load of the warp is one
 * contiguous run (32 words: one 128-byte line) with no byte of another field or of
 * padding in it, an f64 value costs 8 bytes instead of a 16-byte record, and in a
 * shared-memory copy consecutive threads hit consecutive banks (8-byte records would
 * put two threads on each bank). A tree's handle is its column t; a node is its slot.
 *
 * Every tree takes 2^(depth+1) - 1 slots of the deepest tree's depth, so a forest with
 * one deep tree pays for it in every tree: lay_out refuses more than REORG_MAX_SLOTS.
 *
 * cache(v) of a tree loop on a GPU copies the group's columns, node-major as well, into
 * shared memory: slot i of the group's tree j at (i - 1) * count + j. While the copy is read,
 * the handle is j and the hooks index the copy with stride count instead of num_trees.
 */
#include "lower/rep.h"

#include <stdlib.h>

/* The most slots (trees x padded tree size) a forest may take: 128 MiB of f64 values. */
#define REORG_MAX_SLOTS (1ull << 24)

/* Where the hooks read nodes: the model's buffers, or a shared-memory copy of a group of trees. */
typedef struct ReorgSource {
	uint32_t words, values; /* addresses in the function being built */
	int64_t stride;         /* elements from a slot of a tree to the next slot of the same tree */
	uint32_t first;         /* i64: the first tree of the source (a copy's), or LIR_NONE: tree 0 */
} ReorgSource;

typedef struct ReorgState {
	uint32_t word_buffer, value_buffer;
	uint64_t slots;         /* per tree: 2^(depth+1) - 1 */
	uint32_t num_trees;
	ReorgSource model, copy;
	bool cached;            /* the hooks read copy */
} ReorgState;

static const ReorgSource *reorg_source(const RepLayout *layout)
{
	const ReorgState *s = layout->state;
	return s->cached ? &s->copy : &s->model;
}

/* Store tree t's nodes into column t. */
static void store_tree(const HForest *f, const RepLayout *layout, uint32_t t, int32_t *words, void *values, uint64_t *stack)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t top = 0;
	stack[top++] = 0; /* node */
	stack[top++] = 1; /* slot within the tree */
	while (top) {
		uint64_t slot = stack[--top], id = stack[--top];
		const HNode *n = &nodes[id];
		uint64_t at = (slot - 1) * f->num_trees + t;
		rep_store_value(values, layout->threshold_type, at, rep_slot_value(layout, f, n));
		if (n->feature == HIR_LEAF) {
			words[at] = -1;
			continue;
		}
		words[at] = rep_split_word(n);
		stack[top++] = n->left;
		stack[top++] = 2 * slot;
		stack[top++] = n->right;
		stack[top++] = 2 * slot + 1;
	}
}

static bool reorg_lay_out(const HForest *f, LModule *m, RepLayout *layout, Error *e)
{
	uint32_t depth = 0, deepest = 0, max_nodes = 1;
	uint64_t slots, total, *stack;
	int32_t *words;
	void *values;
	ReorgState *s;

	if (!rep_lay_out_forest(f, m, "reorg", layout, e))
		return false;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint32_t d = hir_tree_depth(f, t);
		if (d > depth) {
			depth = d;
			deepest = t;
		}
		if (f->trees[t].num_nodes > max_nodes)
			max_nodes = f->trees[t].num_nodes;
	}
	/* Checked before shifting: a depth past 62 would overflow the slot count. */
	slots = depth < 40 ? (2ull << depth) - 1 : REORG_MAX_SLOTS + 1;
	if (slots > REORG_MAX_SLOTS || slots * f->num_trees > REORG_MAX_SLOTS)
		return error_set(e, "reorg representation: tree %u has depth %u, and every one of the %u trees padded to it would take %llu slots, more than %llu; use the array or sparse representation",
		                 deepest, depth, f->num_trees, (unsigned long long)(slots * f->num_trees), REORG_MAX_SLOTS);
	total = slots * f->num_trees;
	words = xmalloc((total ? total : 1) * sizeof *words);
	values = xcalloc(total ? total : 1, lir_type_size(layout->threshold_type));
	for (uint64_t i = 0; i < total; i++) /* unused slots read as leaves */
		words[i] = -1;
	stack = xmalloc(4 * (uint64_t)max_nodes * sizeof *stack);
	for (uint32_t t = 0; t < f->num_trees; t++)
		store_tree(f, layout, t, words, values, stack);
	free(stack);

	s = xcalloc(1, sizeof *s);
	s->slots = slots;
	s->num_trees = f->num_trees;
	s->word_buffer = lir_buffer_add(m, "reorg.words", LTYPE_I32, total, words);
	s->value_buffer = lir_buffer_add(m, "reorg.values", layout->threshold_type, total, values);
	layout->state = s;
	return true;
}

static void reorg_begin_function(RepLayout *layout, LBuilder *b)
{
	ReorgState *s = layout->state;
	rep_begin_forest(layout, b);
	s->model = (ReorgSource){.words = rep_buffer_address(b, s->word_buffer), .values = rep_buffer_address(b, s->value_buffer),
	                         .stride = s->num_trees, .first = LIR_NONE};
	s->cached = false;
}

/* A tree's handle is its column in the source. */
static uint32_t reorg_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool side_by_side)
{
	(void)side_by_side;
	const ReorgSource *src = reorg_source(layout);
	return src->first == LIR_NONE ? tree : lir_emit(b, LOP_SUB, LTYPE_I64, tree, src->first, LIR_NONE);
}

static uint32_t reorg_root(RepLayout *layout, LBuilder *b, uint32_t tree)
{
	(void)layout;
	(void)tree;
	return lir_const_int(b, LTYPE_I64, 1);
}

/* The element of slot `node` (from 1) of the tree in column `tree`. */
static uint32_t reorg_element(const ReorgSource *src, LBuilder *b, uint32_t tree, uint32_t node)
{
	uint32_t row = lir_emit(b, LOP_MUL, LTYPE_I64, node, lir_const_int(b, LTYPE_I64, src->stride), LIR_NONE);
	row = lir_emit(b, LOP_ADD, LTYPE_I64, row, tree, LIR_NONE);
	return lir_emit(b, LOP_SUB, LTYPE_I64, row, lir_const_int(b, LTYPE_I64, src->stride), LIR_NONE);
}

static RepNode reorg_load_node(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	const ReorgSource *src = reorg_source(layout);
	uint32_t at = reorg_element(src, b, tree, node);
	RepNode n;
	rep_decode_word(layout, b, lir_emit(b, LOP_LOAD, LTYPE_I32, src->words, at, LIR_NONE), &n);
	n.threshold = lir_emit(b, LOP_LOAD, layout->threshold_type, src->values, at, LIR_NONE);
	return n;
}

static uint32_t reorg_leaf_value(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	const ReorgSource *src = reorg_source(layout);
	return rep_load_leaf(layout, b, src->values, reorg_element(src, b, tree, node));
}

/* A tree's slots are num_trees elements apart: one prefetch per slot (its root's alone where not whole) and field, each line shared with its neighbours. */
static void reorg_prefetch_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool whole)
{
	const ReorgState *s = layout->state;
	uint32_t one = lir_const_int(b, LTYPE_I64, 1), end = lir_const_int(b, LTYPE_I64, whole ? (int64_t)s->slots + 1 : 2);
	uint32_t slot = lir_begin(b, LOP_FOR, one, end, one);
	uint32_t at = reorg_element(&s->model, b, tree, slot);
	lir_emit(b, LOP_PREFETCH, LTYPE_I32, s->model.words, at, LIR_NONE);
	lir_emit(b, LOP_PREFETCH, layout->threshold_type, s->model.values, at, LIR_NONE);
	lir_end(b);
}

static uint64_t reorg_cache_bytes(const RepLayout *layout, uint32_t count)
{
	const ReorgState *s = layout->state;
	return (uint64_t)count * s->slots * (sizeof(int32_t) + lir_type_size(layout->threshold_type));
}

/*
 * Copy element k of a group's columns: slot i = k / count + 1 of its tree j = k % count,
 * consecutive k reading consecutive elements of the model (coalesced). Columns past the
 * last tree copy the last tree's, which no walk reads.
 */
static void reorg_copy_element(ReorgState *s, LBuilder *b, uint32_t first, uint32_t count, uint32_t k, LType value_type)
{
	uint32_t per = lir_const_int(b, LTYPE_I64, count), slot = lir_emit(b, LOP_SDIV, LTYPE_I64, k, per, LIR_NONE), j, tree, at;
	j = lir_emit(b, LOP_SUB, LTYPE_I64, k, lir_emit(b, LOP_MUL, LTYPE_I64, slot, per, LIR_NONE), LIR_NONE);
	tree = lir_emit(b, LOP_ADD, LTYPE_I64, first, j, LIR_NONE);
	tree = lir_emit(b, LOP_MIN, LTYPE_I64, tree, lir_const_int(b, LTYPE_I64, (int64_t)s->num_trees - 1), LIR_NONE);
	at = reorg_element(&s->model, b, tree, lir_emit(b, LOP_ADD, LTYPE_I64, slot, lir_const_int(b, LTYPE_I64, 1), LIR_NONE));
	lir_emit(b, LOP_STORE, LTYPE_VOID, s->copy.words, k, lir_emit(b, LOP_LOAD, LTYPE_I32, s->model.words, at, LIR_NONE));
	lir_emit(b, LOP_STORE, LTYPE_VOID, s->copy.values, k, lir_emit(b, LOP_LOAD, value_type, s->model.values, at, LIR_NONE));
}

static void reorg_cache_begin(RepLayout *layout, LBuilder *b, uint32_t first, uint32_t count, LSpace space, const RepSpread *spread)
{
	ReorgState *s = layout->state;
	int64_t elements = (int64_t)(count * s->slots);
	uint32_t k;
	s->copy = (ReorgSource){.words = lir_local_array(b, LTYPE_I32, elements, space),
	                        .values = lir_local_array(b, layout->threshold_type, elements, space), .stride = count, .first = first};
	k = spread->begin(spread->ctx, lir_const_int(b, LTYPE_I64, elements));
	reorg_copy_element(s, b, first, count, k, layout->threshold_type);
	lir_end(b);
	s->cached = true;
}

static void reorg_cache_end(RepLayout *layout)
{
	ReorgState *s = layout->state;
	s->cached = false;
}

const LRepresentation rep_reorg = {
	.name = "reorg",
	.lay_out = reorg_lay_out,
	.free = rep_free_state,
	.begin_function = reorg_begin_function,
	.tree = reorg_tree,
	.root = reorg_root,
	.load_node = reorg_load_node,
	.step = rep_complete_step,
	.prefetch_tree = reorg_prefetch_tree,
	.leaf_value = reorg_leaf_value,
	.cache_bytes = reorg_cache_bytes,
	.cache_begin = reorg_cache_begin,
	.cache_end = reorg_cache_end,
};
