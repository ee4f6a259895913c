/*
 * The sparse representation: every reachable node stored once, per tree depth first
 * along its hot path (store_tree), the two children of a split in adjacent slots. Per slot:
 *
 *   word  (i32)  the node word (rep.h): feature, comparison, missing rule; -1 on leaves
 *   value        threshold on splits; leaf value on leaves
 *   child (i32)  slot of the left child (the right one follows it); on leaves 0, or the
 *                leaf's own slot where a leaf's key record stays (RepLayout.leaves_stay)
 *
 * and each tree's root slot (and, last, the end of the last tree). Memory is linear in the node count whatever the depth,
 * at the price of one more load per step than the array representation. The same records
 * in FIL's other orders are the breadth_first and layered representations (SparseOrder).
 *
 * Float thresholds with double leaves (LightGBM's, and any forest's float twin for
 * float rows: lower/hir_narrow.c) keep values of floats, the leaves' doubles in a
 * buffer of their own (slot-indexed), as the array layout's own leaves do. Where the
 * walks read rows' keys (RepLayout.keys, rep_keys_fit), a key copy holds per slot the
 * record a step reads with one 8-byte load: the key word (rep_key_word) in its low half,
 * the threshold's key in its high half (-1 and 0 on leaves). A step of keys is then a
 * load of the record, an integer compare with the row's key and the child's load, in
 * place of the word's, the threshold's and a float compare with its missing-value test:
 * the walks of deep trees (LightGBM's leaf-wise ones, forests grown to purity), which
 * the array layout would store complete, take the key path the array layout has. Where
 * every split's left child lies few enough slots after it (RepLayout.child_shift), the
 * record's word holds that offset above the feature, and a step adds it to its slot in
 * place of loading the child: two loads a step, not three (measured:
 * docs/performance-notes.md, Children in the records).
 *
 * With keys in tiles (RepLayout.leaf_masks), TOP_LANES rows side by side walk each tree
 * of at most 32 leaves by leaf masks (lower/rep_masks.c) instead, every split compared
 * for all of them at once: LightGBM's 31 leaves grown 6 to 20 deep are chains of a dozen
 * steps or more node by node, a loop of 30 vector compares so.
 */
#include "lower/rep.h"

#include <stdlib.h>

typedef struct SparseState {
	uint32_t word_buffer, value_buffer, child_buffer, root_buffer, key_buffer, leaf_buffer; /* (the last two LIR_NONE: none) */
	uint32_t words, values, children, roots, keys, leaves; /* their addresses in the function being built */
	bool offsets_masked; /* with child_shift, some key word has bits set above the offsets (a flip, a rule) */
	RepMasks masks;
	RepTops tops;        /* with RepLayout.top_levels */
} SparseState;

/* Node n's record at slot `at`, a split's left child at slot `child` (leaves' values into leaves where not NULL). */
static void store_node(const HForest *f, const RepLayout *layout, const HNode *n, uint64_t at, uint64_t child, int32_t *words,
                       void *values, double *leaves, int32_t *children)
{
	if (n->feature == HIR_LEAF && leaves)
		leaves[at] = rep_slot_value(layout, f, n);
	else
		rep_store_value(values, layout->threshold_type, at, rep_slot_value(layout, f, n));
	words[at] = n->feature == HIR_LEAF ? -1 : (int32_t)rep_split_word(n);
	/* where leaves stay, a leaf is its own left child */
	children[at] = n->feature != HIR_LEAF ? (int32_t)child : layout->leaves_stay ? (int32_t)at : 0;
}

/*
 * Store tree t from slot first (leaves' values into leaves where not NULL); returns the
 * slot after its last node. Its top of `levels` levels (RepLayout.top_levels; 0: none)
 * comes first, complete in level order: slot i's children at 2i + 1 and 2i + 2, a leaf
 * above the top's last level copied into every slot below it (its walks stay on it).
 * Below the top, a split's children take the next two free slots when it is reached,
 * depth first, the child more rows reach (cover) first: the path most rows take lies in
 * consecutive slots, four levels of records a cache line (a walk of a deep tree stored
 * breadth first would touch a line a level). `order` is scratch of the tree's size: the
 * stack of nodes to reach.
 */
static uint64_t store_tree(const HForest *f, const RepLayout *layout, uint32_t t, int32_t *words, void *values,
                           double *leaves, int32_t *children, uint64_t first, uint32_t levels, uint32_t *order, uint32_t *slots)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t heap[2u << REP_TOP_LEVELS], span = (2u << levels) - 1, top = 0; /* the top's nodes, its slots */
	bool copy[2u << REP_TOP_LEVELS];
	uint64_t next = first + span;
	heap[0] = 0;
	copy[0] = false;
	for (uint32_t h = 0; h < span; h++) {
		const HNode *n = &nodes[heap[h]];
		bool leaf = n->feature == HIR_LEAF, inner = 2 * h + 1 < span;
		if (inner) {
			heap[2 * h + 1] = leaf ? heap[h] : n->left;
			heap[2 * h + 2] = leaf ? heap[h] : n->right;
			copy[2 * h + 1] = copy[2 * h + 2] = leaf;
		}
		if (inner || copy[h]) /* (a split of the top's last level, or a leaf there, is reached below) */
			store_node(f, layout, n, first + h, first + 2 * h + 1, words, values, leaves, children);
		else
			slots[heap[h]] = h;
	}
	for (uint32_t h = span; h-- > span / 2;) /* the last level's, the first on top */
		if (!copy[h])
			order[top++] = heap[h];
	while (top) {
		uint32_t id = order[--top];
		const HNode *n = &nodes[id];
		bool left_hot;
		store_node(f, layout, n, first + slots[id], next, words, values, leaves, children);
		if (n->feature == HIR_LEAF)
			continue;
		slots[n->left] = (uint32_t)(next - first);
		slots[n->right] = (uint32_t)(next - first + 1);
		next += 2;
		/* the hotter child on top, reached next (the left one where the model keeps no cover, or they tie) */
		left_hot = nodes[n->left].cover >= nodes[n->right].cover;
		order[top++] = left_hot ? n->right : n->left;
		order[top++] = left_hot ? n->left : n->right;
	}
	return next;
}

/*
 * FIL's orders of a forest's records (its tree_layout), all with a split's children in
 * adjacent slots: depth first along the hot path (store_tree, the sparse representation),
 * breadth first tree by tree, or layered (FIL's layered_children_together: every tree's
 * root, then each tree's second level, and so on), where the threads walking consecutive
 * trees read nearby slots at each level.
 */
typedef enum SparseOrder { ORDER_DEPTH_FIRST, ORDER_BREADTH_FIRST, ORDER_LAYERED } SparseOrder;

/*
 * Store trees [t0, t1) from slot first breadth first, their levels interleaved: a
 * node's slot is its place in the queue of nodes to reach, which starts with the roots.
 * queue: scratch of the trees' node count ((tree << 32) | node). Returns the slot after the last.
 */
static uint64_t store_breadth_first(const HForest *f, const RepLayout *layout, uint32_t t0, uint32_t t1, int32_t *words,
                                    void *values, double *leaves, int32_t *children, int32_t *roots, uint64_t first,
                                    uint64_t *queue)
{
	uint64_t end = 0;
	for (uint32_t t = t0; t < t1; t++) {
		roots[t] = (int32_t)(first + end);
		queue[end++] = (uint64_t)t << 32;
	}
	for (uint64_t i = 0; i < end; i++) {
		uint32_t t = (uint32_t)(queue[i] >> 32);
		const HNode *nodes = hir_tree_nodes(f, t), *n = &nodes[(uint32_t)queue[i]];
		store_node(f, layout, n, first + i, first + end, words, values, leaves, children);
		if (n->feature != HIR_LEAF) {
			queue[end++] = (uint64_t)t << 32 | n->left;
			queue[end++] = (uint64_t)t << 32 | n->right;
		}
	}
	return first + end;
}

/* Whether the splits send NaN either way, none reading it as 0, with one comparison but IN (RepLayout.nan_flips). */
static bool flips_fit(const RepLayout *layout)
{
	bool t_below;
	return layout->missing_rules == (1u << REP_MISSING_LEFT | 1u << REP_MISSING_RIGHT) && !layout->nan_reads_zero &&
	       !(layout->compares & 1u << HCMP_IN) && layout->compares && rep_key_form(layout, &t_below);
}

/*
 * The bit from which the key copy's split words can hold the offsets from each split to
 * its left child (RepLayout.child_shift): the feature's width, where every offset fits
 * below REP_WORD_COMPARE_SHIFT; else 0.
 */
static uint8_t child_shift(const RepLayout *layout, const int32_t *words, const int32_t *children, uint64_t n)
{
	uint8_t shift = (uint8_t)__builtin_popcount(layout->feature_mask);
	if (shift >= REP_WORD_COMPARE_SHIFT)
		return 0;
	for (uint64_t i = 0; i < n; i++) /* (a left child lies after its split) */
		if (words[i] != -1 && ((uint64_t)children[i] - i) >> (REP_WORD_COMPARE_SHIFT - shift))
			return 0;
	return shift;
}

/* The key copy's records (rep_key_records), with RepLayout.nan_flips's flips and child_shift's offsets where they are set. */
static int32_t *key_records(const RepLayout *layout, const int32_t *words, const float *values, const int32_t *children,
                            uint64_t n)
{
	int32_t *records = rep_key_records(layout, words, values, n);
	uint32_t missing = REP_WORD_MISSING_MASK << REP_WORD_MISSING_SHIFT;
	bool t_below;
	rep_key_form(layout, &t_below);
	for (uint64_t i = 0; layout->nan_flips && i < n; i++) {
		/* REP_KEY_MISSING goes left where the split's key is the lesser side (t_below), right elsewhere */
		bool flip = ((uint32_t)words[i] >> REP_WORD_MISSING_SHIFT & 1) != t_below;
		if (words[i] == -1) /* a leaf */
			continue;
		records[2 * i] = (int32_t)(((uint32_t)records[2 * i] & ~missing) | (uint32_t)flip << REP_WORD_MISSING_SHIFT);
		records[2 * i + 1] = (int32_t)((uint32_t)records[2 * i + 1] - flip); /* keys are unsigned */
	}
	for (uint64_t i = 0; layout->child_shift && i < n; i++)
		if (words[i] != -1)
			records[2 * i] = (int32_t)((uint32_t)records[2 * i] | (uint32_t)(children[i] - (int64_t)i) << layout->child_shift);
	return records;
}

/* The tops (RepLayout.top_levels) of the key copy's records: each tree's first slots, the top's splits and copied leaves. */
static void add_tops(const HForest *f, LModule *m, const RepLayout *layout, SparseState *s, const int32_t *roots,
                     const int32_t *records)
{
	uint32_t per = (1u << layout->top_levels) - 1;
	int32_t *tops;
	if (!layout->top_levels)
		return;
	tops = xmalloc((size_t)f->num_trees * per * 2 * sizeof *tops);
	for (uint32_t t = 0; t < f->num_trees; t++)
		for (uint32_t slot = 0; slot < per; slot++) {
			const int32_t *record = records + 2 * ((int64_t)roots[t] + slot);
			tops[((size_t)t * per + slot) * 2] = (int32_t)(((uint32_t)record[0] & layout->feature_mask) * layout->key_lanes);
			tops[((size_t)t * per + slot) * 2 + 1] = record[1];
		}
	rep_tops_lay_out(m, layout, &s->tops, "sparse", f->num_trees, tops);
}

static bool lay_out_in_order(const HForest *f, LModule *m, RepLayout *layout, SparseOrder in, const char *name, Error *e)
{
	LType type;
	uint64_t total = 0, max_nodes = 1, *queue;
	int32_t *roots, *words, *children;
	uint32_t *order, *slots;
	void *values;
	double *leaves;
	SparseState *s;
	bool own_leaves;
	uint32_t shallowest, deepest, span;

	if (!rep_lay_out_forest(f, m, name, layout, e))
		return false;
	/* Float thresholds, double leaves: values of floats, the leaves apart. */
	own_leaves = f->leaf_type == HTYPE_F64 && !m->gpu && rep_float_thresholds(f, layout);
	if (own_leaves)
		layout->threshold_type = LTYPE_F32;
	type = layout->threshold_type;
	/* No blocks or split words for tiles: those read the array layout's complete trees. Tiles of keys for tops and leaf masks. */
	layout->blocks = layout->tile_words = false;
	layout->keys = layout->keys && rep_keys_fit(layout);
	layout->nan_flips = layout->keys && flips_fit(layout);
	layout->leaves_stay = layout->keys && rep_keys_stay(layout); /* (store_tree) */
	/*
	 * Tops where leaves stay (a top's level below a leaf reaches its copies) and keys decide
	 * NaN as the tiles hold it (no flips): complete levels in every tree's first slots.
	 */
	hir_leaf_depth_range(f, &shallowest, &deepest);
	if (!layout->leaves_stay || layout->nan_flips || (uint64_t)f->num_features * layout->key_lanes > REP_WORD_FEATURE_MASK)
		layout->top_levels = 0;
	else if (layout->top_levels)
		layout->top_levels = (uint8_t)(deepest < REP_TOP_LEVELS ? deepest : REP_TOP_LEVELS);
	if (layout->top_levels < 2 || !f->num_trees || in != ORDER_DEPTH_FIRST) /* (tops: a tree's first slots) */
		layout->top_levels = 0;
	span = layout->top_levels ? (2u << layout->top_levels) - 1 : 0;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		total += f->trees[t].num_nodes + span; /* an upper bound: unreachable nodes are dropped, a top's leaves copied */
		if (f->trees[t].num_nodes > max_nodes)
			max_nodes = f->trees[t].num_nodes;
	}
	if (total > INT32_MAX)
		return error_set(e, "%s representation: the forest has more than 2^31 nodes", name);
	roots = xmalloc(((size_t)f->num_trees + 1) * sizeof *roots);
	words = xmalloc((total ? total : 1) * sizeof *words);
	children = xmalloc((total ? total : 1) * sizeof *children);
	values = xcalloc(total ? total : 1, lir_type_size(type));
	leaves = own_leaves ? xcalloc(total ? total : 1, sizeof *leaves) : NULL;
	/* scratch: depth first a tree's stack and slots, breadth first the queue of a tree's nodes (layered: all trees') */
	order = in == ORDER_DEPTH_FIRST ? xmalloc(max_nodes * sizeof *order) : NULL;
	slots = in == ORDER_DEPTH_FIRST ? xmalloc(max_nodes * sizeof *slots) : NULL;
	queue = in != ORDER_DEPTH_FIRST ? xmalloc((in == ORDER_LAYERED ? total + 1 : max_nodes) * sizeof *queue) : NULL;
	total = in == ORDER_LAYERED ? store_breadth_first(f, layout, 0, f->num_trees, words, values, leaves, children, roots, 0, queue) : 0;
	for (uint32_t t = 0; t < f->num_trees && in != ORDER_LAYERED; t++) {
		roots[t] = (int32_t)total;
		total = in == ORDER_DEPTH_FIRST
		            ? store_tree(f, layout, t, words, values, leaves, children, total, layout->top_levels, order, slots)
		            : store_breadth_first(f, layout, t, t + 1, words, values, leaves, children, roots, total, queue);
	}
	free(order);
	free(slots);
	free(queue);
	/*
	 * Where the last tree ends (a tree's slots run from its root to the next one's, which
	 * prefetches of whole trees read); layered trees are not contiguous: their roots alone.
	 */
	roots[f->num_trees] = in == ORDER_LAYERED ? (int32_t)f->num_trees : (int32_t)total;

	s = xcalloc(1, sizeof *s);
	s->key_buffer = s->leaf_buffer = LIR_NONE;
	layout->child_shift = layout->keys ? child_shift(layout, words, children, total) : 0;
	if (layout->keys) {
		int32_t *records = key_records(layout, words, values, children, total);
		for (uint64_t i = 0; layout->child_shift && i < total; i++)
			s->offsets_masked |= (uint32_t)records[2 * i] >> REP_WORD_COMPARE_SHIFT != 0;
		add_tops(f, m, layout, s, roots, records);
		s->key_buffer = lir_buffer_add(m, "sparse.keys", LTYPE_I32, 2 * total, records);
	}
	if (leaves)
		s->leaf_buffer = lir_buffer_add(m, "sparse.leaves", LTYPE_F64, total, leaves);
	s->word_buffer = lir_buffer_add(m, "sparse.words", LTYPE_I32, total, words);
	s->value_buffer = lir_buffer_add(m, "sparse.values", type, total, values);
	s->child_buffer = lir_buffer_add(m, "sparse.children", LTYPE_I32, total, children);
	s->root_buffer = lir_buffer_add(m, "sparse.roots", LTYPE_I32, f->num_trees + 1, roots);
	rep_masks_lay_out(f, m, layout, &s->masks);
	if (!layout->leaf_masks && !layout->top_levels)
		layout->key_lanes = 0;
	layout->state = s;
	return true;
}

static bool sparse_lay_out(const HForest *f, LModule *m, RepLayout *layout, Error *e)
{
	return lay_out_in_order(f, m, layout, ORDER_DEPTH_FIRST, "sparse", e);
}

static bool breadth_first_lay_out(const HForest *f, LModule *m, RepLayout *layout, Error *e)
{
	return lay_out_in_order(f, m, layout, ORDER_BREADTH_FIRST, "breadth_first", e);
}

static bool layered_lay_out(const HForest *f, LModule *m, RepLayout *layout, Error *e)
{
	return lay_out_in_order(f, m, layout, ORDER_LAYERED, "layered", e);
}

static void sparse_begin_function(RepLayout *layout, LBuilder *b)
{
	SparseState *s = layout->state;
	rep_begin_forest(layout, b);
	s->words = rep_buffer_address(b, s->word_buffer);
	s->values = rep_buffer_address(b, s->value_buffer);
	s->children = rep_buffer_address(b, s->child_buffer);
	s->roots = rep_buffer_address(b, s->root_buffer);
	s->keys = s->key_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->key_buffer);
	s->leaves = s->leaf_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->leaf_buffer);
	rep_masks_begin(&s->masks, b);
	if (layout->top_levels)
		rep_tops_begin(&s->tops, b);
}

/* A tree's handle is its root slot; nodes are absolute slots. */
static uint32_t sparse_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool side_by_side)
{
	(void)side_by_side;
	SparseState *s = layout->state;
	return lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, s->roots, tree, LIR_NONE));
}

static uint32_t sparse_root(RepLayout *layout, LBuilder *b, uint32_t tree)
{
	(void)layout;
	(void)b;
	return tree;
}

static RepNode sparse_load_node(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	SparseState *s = layout->state;
	RepNode n;
	(void)tree;
	if (layout->walk_keys)
		return rep_load_record(layout, b, s->keys, node);
	rep_decode_word(layout, b, lir_emit(b, LOP_LOAD, LTYPE_I32, s->words, node, LIR_NONE), &n);
	n.threshold = lir_emit(b, LOP_LOAD, layout->threshold_type, s->values, node, LIR_NONE);
	return n;
}

/* A split's children sit at children[node] and the slot after it (a leaf's entry is in bounds). */
static uint32_t sparse_step(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node, const RepNode *fields,
                            const RepRow *row, bool leaf_stays)
{
	SparseState *s = layout->state;
	uint32_t right, left, child;
	(void)tree;
	if (layout->walk_keys && layout->child_shift) { /* the offset above the record's feature */
		uint32_t offset = lir_emit(b, LOP_ASHR, LTYPE_I32, fields->word, lir_const_int(b, LTYPE_I32, layout->child_shift), LIR_NONE);
		if (s->offsets_masked) {
			uint32_t mask = lir_const_int(b, LTYPE_I32, (1 << (REP_WORD_COMPARE_SHIFT - layout->child_shift)) - 1);
			offset = lir_emit(b, LOP_AND, LTYPE_I32, offset, mask, LIR_NONE);
		}
		offset = lir_cast(b, LCAST_ZEXT, LTYPE_I64, offset);
		return rep_step_result(b, fields, node, rep_step_sum(layout, b, node, offset, fields, row, leaf_stays), leaf_stays);
	}
	right = rep_goes_right(layout, b, fields, row, leaf_stays);
	left = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, s->children, node, LIR_NONE));
	child = lir_emit(b, LOP_ADD, LTYPE_I64, left, lir_cast(b, LCAST_ZEXT, LTYPE_I64, right), LIR_NONE);
	return rep_step_result(b, fields, node, child, leaf_stays);
}

static void sparse_prefetch_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool whole)
{
	SparseState *s = layout->state;
	uint32_t buffers[] = {s->words, s->values, s->children}, keyed[] = {s->keys, s->children};
	LType types[] = {LTYPE_I32, layout->threshold_type, LTYPE_I32}, keyed_types[] = {LTYPE_I64, LTYPE_I32};
	if (layout->walk_keys) /* (the children too, where the records do not hold them) */
		rep_prefetch_slots(b, s->roots, tree, keyed, keyed_types, layout->child_shift ? 1 : COUNT_OF(keyed), whole);
	else
		rep_prefetch_slots(b, s->roots, tree, buffers, types, COUNT_OF(buffers), whole);
}

static uint32_t sparse_leaf_value(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	SparseState *s = layout->state;
	(void)tree;
	if (s->leaves != LIR_NONE)
		return lir_emit(b, LOP_LOAD, LTYPE_F64, s->leaves, node, LIR_NONE);
	return rep_load_leaf(layout, b, s->values, node);
}

/* The top's slots numbered from 1 (rep_tops_take) are the tree's from its root: slot root + i - 1. */
static uint32_t sparse_top_nodes(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t levels, uint32_t lanes, uint32_t tile)
{
	SparseState *s = layout->state;
	uint32_t slots = rep_tops_take(&s->tops, layout, b, tree, levels, lanes, tile);
	uint32_t root = lir_emit(b, LOP_LOAD, LTYPE_I32, s->roots, tree, LIR_NONE);
	root = lir_emit(b, LOP_SUB, LTYPE_I32, root, lir_const_int(b, LTYPE_I32, 1), LIR_NONE);
	root = lir_emit_vector(b, LOP_SPLAT, LTYPE_I32, (uint8_t)lanes, root, LIR_NONE, LIR_NONE);
	return lir_emit_vector(b, LOP_ADD, LTYPE_I32, (uint8_t)lanes, slots, root, LIR_NONE);
}

static uint32_t sparse_tile_apply(RepLayout *layout, LBuilder *b, uint32_t tree)
{
	return layout->leaf_masks ? rep_masks_apply(&((SparseState *)layout->state)->masks, b, tree) : LIR_NONE;
}

static uint32_t sparse_walk_tile(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t lanes, uint32_t tile,
                                 uint32_t nan_tile)
{
	return rep_masks_walk(&((SparseState *)layout->state)->masks, layout, b, tree, lanes, tile, nan_tile);
}

/* Every order's records are walked alike. */
#define SPARSE_HOOKS \
	.free = rep_free_state, \
	.begin_function = sparse_begin_function, \
	.tree = sparse_tree, \
	.root = sparse_root, \
	.load_node = sparse_load_node, \
	.step = sparse_step, \
	.prefetch_tree = sparse_prefetch_tree, \
	.leaf_value = sparse_leaf_value, \
	.tile_apply = sparse_tile_apply, \
	.walk_tile = sparse_walk_tile, \
	.top_nodes = sparse_top_nodes, \
	.keys = true

const LRepresentation rep_sparse = {.name = "sparse", .lay_out = sparse_lay_out, SPARSE_HOOKS};
/* FIL's other orders, named only (the searches take sparse's: on a CPU the hot path's lines serve a walk best). */
const LRepresentation rep_breadth_first = {.name = "breadth_first", .lay_out = breadth_first_lay_out, SPARSE_HOOKS, .named_only = true};
const LRepresentation rep_layered = {.name = "layered", .lay_out = layered_lay_out, SPARSE_HOOKS, .named_only = true};
