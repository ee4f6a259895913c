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
 * docs/performance-notes.md, Children in the records). Forests of at most 256 features
 * that fit the caches go further (RepLayout.child_word): each split's children are
 * placed where the offset's low byte is the feature (place_by_feature), and the word is
 * that offset whole, which a step adds with no shift (docs/performance-notes.md, Words
 * that are offsets).
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
	/* child_word's copy (add_word_copy; LIR_NONE: none): its key records, roots, leaves' values by its slots, tops' slots */
	uint32_t word_key_buffer, word_root_buffer, word_leaf_buffer, top_slot_buffer;
	uint32_t words, values, children, roots, keys, leaves; /* their addresses in the function being built */
	uint32_t word_keys, word_roots, word_leaves, top_slots;
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
 * A tree's top of `span` slots in level order (slot h's children at 2h + 1 and 2h + 2):
 * heap[h] the node at slot h, a leaf above the top's last level in every slot below it
 * (copy[h]: one of those copies).
 */
static void top_heap(const HNode *nodes, uint32_t span, uint32_t *heap, bool *copy)
{
	heap[0] = 0;
	copy[0] = false;
	for (uint32_t h = 0; 2 * h + 1 < span; h++) {
		const HNode *n = &nodes[heap[h]];
		bool leaf = n->feature == HIR_LEAF;
		heap[2 * h + 1] = leaf ? heap[h] : n->left;
		heap[2 * h + 2] = leaf ? heap[h] : n->right;
		copy[2 * h + 1] = copy[2 * h + 2] = leaf;
	}
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
	top_heap(nodes, span, heap, copy);
	for (uint32_t h = 0; h < span; h++) {
		if (2 * h + 1 < span || copy[h]) /* (a split of the top's last level, or a leaf there, is reached below) */
			store_node(f, layout, &nodes[heap[h]], first + h, first + 2 * h + 1, words, values, leaves, children);
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
 * Slots where each split's left child lies at an offset whose low byte is the split's
 * feature (RepLayout.child_word): the children of a split of feature f at slot s take
 * the first free pair c, c + 1 with c = s + f (mod 256), as a double-array trie places a
 * node's children by its base and their labels. The hotter child is placed first, depth
 * first (store_tree's order), so that the path most rows take lies near its splits. A
 * tree alone leaves most of its slots empty (its few hundred pairs fall unevenly on the
 * 256 residues: lgb-leaves255's trees of 509 nodes took 2400 slots each), so each tree
 * fills the holes the trees before it left in the last PLACE_BEHIND slots (after the tree
 * before's root, so that roots keep their order): 1.45 slots a node there, as with no
 * bound, and a tile of trees' nodes stay within a few tens of KB. Holes read as leaves
 * and are never reached; the prefetches of whole trees, which read from a tree's root
 * to the next one's, miss the parts of it placed further on.
 *
 * next[c]: where a free pair of c's residue may lie, at or after c (c itself: not yet
 * known to be taken), chains 256 slots apart compressed as they are followed, so that a
 * tree's placement takes about linear time.
 */
#define PLACE_BEHIND 4096
/*
 * The most slots the copy may take: three a node and PLACE_SPARE, for small forests whose
 * few trees have few holes of others to fill (tests/models/lossguide_words.x3, 6 trees of
 * 255 leaves: 2.85 slots a node). Forests split on few features take more (a split's
 * children lie a multiple of 256 slots past s + f: 37 slots a node for 8 trees of one
 * feature, 19 levels deep), and keep store_tree's copy alone.
 */
#define PLACE_SPARE 4096

typedef struct Placement {
	uint8_t *used;
	uint32_t *next;
	uint64_t cap;
} Placement;

/* The slots' buffers (store_node's). */
typedef struct Slots {
	int32_t *words, *children;
	void *values;
	double *leaves;
} Slots;

/* The first free pair c, c + 1 at or after `at` in its residue; UINT64_MAX: none below cap. */
static uint64_t free_pair(Placement *p, uint64_t at)
{
	uint64_t c = at;
	for (;;) {
		if (c + 1 >= p->cap)
			return UINT64_MAX;
		if (p->next[c] != c)
			c = p->next[c];
		else if (p->used[c] || p->used[c + 1])
			c = p->next[c] = (uint32_t)(c + 256);
		else
			break;
	}
	for (uint64_t x = at, n; x != c; x = n) { /* (the chain passed: every slot on it now points at c) */
		n = p->next[x];
		p->next[x] = (uint32_t)c;
	}
	return c;
}

/*
 * Place tree t from slot first on (child_word), its root in the first free slot (*root),
 * storing its reachable nodes (slot_of: their slots), and
 * its top of `levels` levels (RepLayout.top_levels; 0: none) in level order, a leaf
 * above the top's last level in every slot below it (store_tree's), into top[] as the
 * nodes' slots. Returns the slot after the tree's last, or 0 where it did not fit below
 * p->cap. order: scratch of the tree's size; to: the buffers.
 */
static uint64_t place_by_feature(const HForest *f, const RepLayout *layout, uint32_t t, Placement *p, uint64_t first,
                                 uint64_t *slot_of, uint32_t levels, int32_t *top, uint32_t *order, const Slots *to, uint64_t *root)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t heap[2u << REP_TOP_LEVELS], span = levels ? (2u << levels) - 1 : 0, top_n = 0;
	bool copy[2u << REP_TOP_LEVELS];
	uint64_t end;
	*root = first;
	while (*root < p->cap && p->used[*root])
		++*root;
	if (*root >= p->cap)
		return 0;
	end = *root + 1;
	p->used[*root] = 1;
	slot_of[0] = *root;
	order[top_n++] = 0;
	while (top_n) {
		const HNode *n = &nodes[order[--top_n]];
		uint64_t s = slot_of[n - nodes], c;
		bool left_hot;
		if (n->feature == HIR_LEAF) {
			store_node(f, layout, n, s, 0, to->words, to->values, to->leaves, to->children);
			continue;
		}
		c = free_pair(p, first + ((s + rep_key_word(layout, (uint32_t)rep_split_word(n)) - first) & 255));
		if (c == UINT64_MAX)
			return 0;
		store_node(f, layout, n, s, c, to->words, to->values, to->leaves, to->children);
		p->used[c] = p->used[c + 1] = 1;
		slot_of[n->left] = c;
		slot_of[n->right] = c + 1;
		end = c + 2 > end ? c + 2 : end;
		left_hot = nodes[n->left].cover >= nodes[n->right].cover;
		order[top_n++] = left_hot ? n->right : n->left;
		order[top_n++] = left_hot ? n->left : n->right;
	}
	top_heap(nodes, span, heap, copy);
	for (uint32_t h = 0; h < span; h++)
		top[h] = (int32_t)slot_of[heap[h]];
	return end;
}

/*
 * Whether f's forest can take child_word's slots: keys whose leaves stay, split words of
 * the feature or its column alone (rep_bare_key_words) of at most 256 columns, on a CPU,
 * and at most CHILD_WORD_MAX_NODES nodes: the forests whose steps run from L1 and L2 (forests grown to
 * purity wait on L3 whatever their steps' instructions, and their hot paths stay on
 * their lines in store_tree's order). Whether the slots fit (PLACE_SPARE) is known only
 * once they are placed.
 */
#define CHILD_WORD_MAX_NODES (1u << 20)

static bool child_word_fits(const LModule *m, const RepLayout *layout, uint64_t nodes)
{
	/* (bare words: the steps read nothing of the word but its feature) */
	return !m->gpu && layout->keys && layout->leaves_stay && layout->feature_mask == 0xffu &&
	       nodes <= CHILD_WORD_MAX_NODES && rep_bare_key_words(layout);
}

/*
 * Store f's trees in child_word's slots (place_by_feature) from slot 0, *total of them,
 * the slots' buffers of cap entries (words -1, leaves, in the holes); the tops' slots
 * into top_slots (2 << levels a tree). false where the trees did not fit below cap (the
 * layout then keeps no such copy).
 */
static bool store_by_feature(const HForest *f, const RepLayout *layout, int32_t *words, void *values, double *leaves,
                             int32_t *children, int32_t *roots, uint64_t cap, uint32_t levels, int32_t *top_slots, uint64_t *total)
{
	Placement p = {.used = xcalloc(cap, 1), .next = xmalloc(cap * sizeof *p.next), .cap = cap};
	Slots to = {.words = words, .children = children, .values = values, .leaves = leaves};
	uint32_t max_nodes = 1, *order;
	uint64_t *slot_of, at = 0;
	for (uint32_t t = 0; t < f->num_trees; t++)
		max_nodes = f->trees[t].num_nodes > max_nodes ? f->trees[t].num_nodes : max_nodes;
	order = xmalloc(max_nodes * sizeof *order);
	slot_of = xmalloc(max_nodes * sizeof *slot_of);
	for (uint64_t c = 0; c < cap; c++) {
		p.next[c] = (uint32_t)c;
		words[c] = -1;
	}
	for (uint32_t t = 0; t < f->num_trees && at < cap; t++) {
		/* (from the last PLACE_BEHIND slots before the trees' end, after the tree before's root) */
		uint64_t root, low = at > PLACE_BEHIND ? at - PLACE_BEHIND : 0, end;
		int32_t *top = top_slots ? top_slots + ((size_t)t << (levels + 1)) : NULL;
		if (t && low <= (uint64_t)roots[t - 1])
			low = (uint64_t)roots[t - 1] + 1;
		end = place_by_feature(f, layout, t, &p, low, slot_of, levels, top, order, &to, &root);
		roots[t] = (int32_t)root;
		at = !end ? cap : end > at ? end : at;
	}
	free(order);
	free(slot_of);
	free(p.used);
	free(p.next);
	*total = at;
	return at < cap;
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

/*
 * The key copy's records (rep_key_records), the offsets to the left children above the
 * features from bit shift (RepLayout.child_shift; 0: none), or, where whole, as the split
 * words (child_word's).
 */
static int32_t *key_records(const RepLayout *layout, const int32_t *words, const float *values, const int32_t *children,
                            uint64_t n, uint8_t shift, bool whole)
{
	int32_t *records = rep_key_records(layout, words, values, n);
	for (uint64_t i = 0; shift && i < n; i++)
		if (words[i] != -1)
			records[2 * i] = (int32_t)((uint32_t)records[2 * i] | (uint32_t)(children[i] - (int64_t)i) << shift);
	for (uint64_t i = 0; whole && i < n; i++) /* (the offset's low byte is the feature: store_by_feature) */
		if (words[i] != -1)
			records[2 * i] = (int32_t)(uint32_t)((uint64_t)children[i] - i);
	return records;
}

/* The tops (RepLayout.top_levels) of the key copy's records: each tree's first slots, the top's splits and copied leaves. */
static void add_tops(const HForest *f, LModule *m, const RepLayout *layout, SparseState *s, const int32_t *roots,
                     const int32_t *top_slots, const int32_t *records)
{
	uint32_t per = (1u << layout->top_levels) - 1;
	int32_t *tops;
	if (!layout->top_levels)
		return;
	tops = xmalloc((size_t)f->num_trees * per * 2 * sizeof *tops);
	for (uint32_t t = 0; t < f->num_trees; t++)
		for (uint32_t slot = 0; slot < per; slot++) {
			/* (child_word's tops: their slots in top_slots, 2 << top_levels a tree) */
			int64_t at = top_slots ? top_slots[((size_t)t << (layout->top_levels + 1)) + slot] : (int64_t)roots[t] + slot;
			const int32_t *record = records + 2 * at;
			tops[((size_t)t * per + slot) * 2] = (int32_t)(((uint32_t)record[0] & layout->feature_mask) * layout->key_lanes);
			tops[((size_t)t * per + slot) * 2 + 1] = record[1];
		}
	rep_tops_lay_out(m, layout, &s->tops, "sparse", f->num_trees, tops);
}

/*
 * child_word's copy of f's nodes (RepLayout.child_word), for the walks of rows side by
 * side where f takes it (child_word_fits, store_by_feature): its key records (returned,
 * *slots of them), its roots, the leaves' values by its slots and its tops' slots
 * (*top_slots, where the layout has tops). Lone rows walk store_tree's order, whose
 * hot paths lie on consecutive lines: their steps wait on each load, and those of
 * child_word's slots, a few lines apart, made them slower (docs/performance-notes.md,
 * Words that are offsets). NULL where f does not take the copy.
 */
static int32_t *add_word_copy(const HForest *f, LModule *m, RepLayout *layout, SparseState *s, uint64_t bound, bool own_leaves,
                              uint64_t *slots, int32_t **top_slots)
{
	uint64_t cap = 3 * bound + PLACE_SPARE; /* (the trees' slots and holes: place_by_feature) */
	LType type = layout->threshold_type;
	int32_t *roots, *words, *children, *records;
	double *leaves;
	void *values;
	if (!child_word_fits(m, layout, bound) || cap > INT32_MAX)
		return NULL;
	roots = xmalloc(((size_t)f->num_trees + 1) * sizeof *roots);
	words = xmalloc(cap * sizeof *words);
	children = xcalloc(cap, sizeof *children);
	values = xcalloc(cap, lir_type_size(type));
	leaves = own_leaves ? xcalloc(cap, sizeof *leaves) : NULL;
	*top_slots = layout->top_levels ? xcalloc((size_t)f->num_trees << (layout->top_levels + 1), sizeof **top_slots) : NULL;
	records = store_by_feature(f, layout, words, values, leaves, children, roots, cap, layout->top_levels, *top_slots, slots)
	              ? key_records(layout, words, values, children, *slots, 0, true)
	              : NULL;
	free(words);
	free(children);
	if (!records) {
		free(roots);
		free(values);
		free(leaves);
		free(*top_slots);
		*top_slots = NULL;
		return NULL;
	}
	roots[f->num_trees] = (int32_t)*slots;
	layout->child_word = true;
	s->word_root_buffer = lir_buffer_add(m, "sparse.word_roots", LTYPE_I32, f->num_trees + 1, roots);
	if (leaves) {
		s->word_leaf_buffer = lir_buffer_add(m, "sparse.word_leaves", LTYPE_F64, *slots, leaves);
		free(values);
	} else {
		s->word_leaf_buffer = lir_buffer_add(m, "sparse.word_values", type, *slots, values);
	}
	return records;
}

static bool lay_out_in_order(const HForest *f, LModule *m, RepLayout *layout, SparseOrder in, const char *name, Error *e)
{
	LType type;
	uint64_t total = 0, max_nodes = 1, *queue;
	int32_t *roots, *words, *children;
	uint32_t *order, *slots;
	uint64_t bound;
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
	layout->blocks = layout->tile_words = layout->child_word = false; /* (child_word: add_word_copy's, a layout again) */
	layout->keys = layout->keys && rep_keys_fit(layout);
	rep_lay_out_columns(f, layout);
	layout->leaves_stay = layout->keys && rep_keys_stay(layout); /* (store_tree) */
	/*
	 * Tops where leaves stay (a top's level below a leaf reaches its copies): complete
	 * levels in every tree's first slots.
	 */
	hir_leaf_depth_range(f, &shallowest, &deepest);
	if (!layout->leaves_stay || (uint64_t)layout->key_columns * layout->key_lanes > REP_WORD_FEATURE_MASK)
		layout->top_levels = 0;
	else if (layout->top_levels)
		layout->top_levels = rep_top_levels(layout, deepest);
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
	bound = total;
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
	s->key_buffer = s->leaf_buffer = s->word_key_buffer = s->word_root_buffer = s->word_leaf_buffer = s->top_slot_buffer = LIR_NONE;
	layout->child_shift = layout->keys ? child_shift(layout, words, children, total) : 0;
	if (layout->keys) {
		int32_t *records = key_records(layout, words, values, children, total, layout->child_shift, false), *top_slots = NULL;
		uint64_t word_slots = 0;
		int32_t *word_records = in == ORDER_DEPTH_FIRST ? add_word_copy(f, m, layout, s, bound, own_leaves, &word_slots, &top_slots) : NULL;
		for (uint64_t i = 0; layout->child_shift && i < total; i++)
			s->offsets_masked |= (uint32_t)records[2 * i] >> REP_WORD_COMPARE_SHIFT != 0;
		/* the tops of the walks of rows side by side: child_word's where it has them */
		add_tops(f, m, layout, s, roots, top_slots, word_records ? word_records : records);
		s->key_buffer = lir_buffer_add(m, "sparse.keys", LTYPE_I32, 2 * total, records);
		if (word_records)
			s->word_key_buffer = lir_buffer_add(m, "sparse.word_keys", LTYPE_I32, 2 * word_slots, word_records);
		if (top_slots)
			s->top_slot_buffer = lir_buffer_add(m, "sparse.top_slots", LTYPE_I32,
			                                    (uint64_t)f->num_trees << (layout->top_levels + 1), top_slots);
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
	s->word_keys = s->word_key_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->word_key_buffer);
	s->word_roots = s->word_root_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->word_root_buffer);
	s->word_leaves = s->word_leaf_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->word_leaf_buffer);
	s->top_slots = s->top_slot_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->top_slot_buffer);
	rep_masks_begin(&s->masks, b);
	if (layout->top_levels)
		rep_tops_begin(&s->tops, b);
}

/* A tree's handle is its root slot; nodes are absolute slots. */
static uint32_t sparse_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool side_by_side)
{
	(void)side_by_side;
	SparseState *s = layout->state;
	uint32_t roots = rep_walks_words(layout) ? s->word_roots : s->roots;
	return lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, roots, tree, LIR_NONE));
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
		return rep_load_record(layout, b, rep_walks_words(layout) ? s->word_keys : s->keys, node);
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
	if (rep_walks_words(layout)) { /* the word is the offset: 32-bit slots, wrapping */
		uint32_t slot = lir_cast(b, LCAST_TRUNC, LTYPE_I32, node);
		slot = rep_step_sum(layout, b, slot, fields->word, fields, row, leaf_stays);
		return rep_step_result(b, fields, node, lir_cast(b, LCAST_ZEXT, LTYPE_I64, slot), leaf_stays);
	}
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
	if (rep_walks_words(layout)) /* (child_word's copy: a tree's nodes mostly from its root to the next one's) */
		rep_prefetch_slots(b, s->word_roots, tree, &s->word_keys, keyed_types, 1, whole);
	else if (layout->walk_keys) /* (the children too, where the records do not hold them) */
		rep_prefetch_slots(b, s->roots, tree, keyed, keyed_types, layout->child_shift ? 1 : COUNT_OF(keyed), whole);
	else
		rep_prefetch_slots(b, s->roots, tree, buffers, types, COUNT_OF(buffers), whole);
}

static uint32_t sparse_leaf_value(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	SparseState *s = layout->state;
	(void)tree;
	if (s->leaves != LIR_NONE) /* (child_word's copy keeps its leaves' values as the layout does, by its slots) */
		return lir_emit(b, LOP_LOAD, LTYPE_F64, rep_walks_words(layout) ? s->word_leaves : s->leaves, node, LIR_NONE);
	return rep_load_leaf(layout, b, rep_walks_words(layout) ? s->word_leaves : s->values, node);
}

/* The top's slots numbered from 1 (rep_tops_take) are the tree's from its root: slot root + i - 1. */
static uint32_t sparse_top_nodes(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t levels, uint32_t lanes, uint32_t tile)
{
	SparseState *s = layout->state;
	uint32_t slots = rep_tops_take(&s->tops, layout, b, tree, levels, lanes, tile), root;
	if (s->top_slots != LIR_NONE) { /* child_word's: the top's last level's slots, a table picked by each lane's place */
		uint32_t first = lir_emit(b, LOP_SHL, LTYPE_I64, tree, lir_const_int(b, LTYPE_I64, layout->top_levels + 1), LIR_NONE);
		first = lir_emit(b, LOP_ADD, LTYPE_I64, first, lir_const_int(b, LTYPE_I64, (1 << levels) - 1), LIR_NONE);
		slots = lir_emit_vector(b, LOP_SUB, LTYPE_I32, (uint8_t)lanes, slots, rep_vector_const(b, lanes, 1 << levels), LIR_NONE);
		root = lir_emit_vector(b, LOP_GATHER, LTYPE_I32, (uint8_t)lanes, s->top_slots, first, slots);
		b->fn->insts[root].imm = 1 << levels;
		return root;
	}
	root = lir_emit(b, LOP_LOAD, LTYPE_I32, s->roots, tree, LIR_NONE);
	root = lir_emit(b, LOP_SUB, LTYPE_I32, root, lir_const_int(b, LTYPE_I32, 1), LIR_NONE);
	root = lir_emit_vector(b, LOP_SPLAT, LTYPE_I32, (uint8_t)lanes, root, LIR_NONE, LIR_NONE);
	return lir_emit_vector(b, LOP_ADD, LTYPE_I32, (uint8_t)lanes, slots, root, LIR_NONE);
}

static uint32_t sparse_tile_apply(RepLayout *layout, LBuilder *b, uint32_t tree)
{
	return layout->leaf_masks ? rep_masks_apply(&((SparseState *)layout->state)->masks, b, tree) : LIR_NONE;
}

static uint32_t sparse_walk_tile(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t lanes, uint32_t tile)
{
	return rep_masks_walk(&((SparseState *)layout->state)->masks, layout, b, tree, lanes, tile);
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
