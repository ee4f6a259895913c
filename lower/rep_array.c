/*
 * The array representation (Treebeard's): every tree is stored as a complete binary
 * tree of its depth in level order from slot 1, so the children of slot i are 2i and
 * 2i+1 (one adc on x86: rep_complete_step) and no child links are stored; slot 0 is
 * unused. A slot is one record of the `nodes` buffer, its word and its value side by
 * side so that a step reads one cache line:
 *
 *   word  (i32)  the node word (rep.h): feature, comparison, missing rule; -1 on leaves and unused slots
 *   value        threshold on splits; leaf value on leaves (f32, or f64 after 4 bytes of padding)
 *
 * The buffer is typed i32 (the value's bits stored as they are): a record is RECORD
 * i32 elements, the value of slot s the element 2s + 1 of its own type. Where leaves
 * are doubles and thresholds floats (the float twin of a double forest that
 * hir_float_forest makes, or such an ONNX model), records hold float values, so a walk
 * reads 8-byte records, and a leaf's double is read apart (not on GPUs, whose cache(t)
 * copies records alone):
 *  - where every leaf of the forest has one depth (as after hir_pad), in its own slot:
 *    every walk then takes exactly that many steps and reads no leaf's word, so the
 *    double fills the record;
 *  - else after every record, slot s's at double element `slots + s`.
 * Where every walk ends on a leaf at its tree's one leaf depth d without testing for it
 * (RepLayout.packed_leaves), a tree keeps records for its splits alone, slots 0 to
 * 2^d - 1, and then its leaves' values packed, leaf slot s's at value element 2^d + s:
 * a depth-8 tree of f32 values takes 3 KiB instead of 4, and its leaves 1 KiB of lines.
 * A second buffer
 * holds where each tree's records start (in i32 elements), and, last, where the last
 * tree ends. A tree's handle is the address of its slot 0, so a step indexes from it
 * with the slot alone. A tree of depth d takes 2^(d+1) slots whatever its node count,
 * so deep sparse trees are expensive here, and trees of a line or more start on a line
 * (place_tree).
 *
 * cache(v) of a tree loop on a GPU copies a group's records, contiguous in the buffer,
 * into shared memory as they are; the handles then point into the copy.
 *
 * Where the lowering asks for keys (rep.h) and the splits can compare them, a second
 * buffer, `keys`, holds the node buffer again with each split's threshold replaced by
 * its key; while RepLayout.walk_keys is set, handles point into it and load_node yields
 * the key. Leaves are copied as they are, so a walk of keys ends on its leaf's value.
 * Where rows' keys are in tiles (RepLayout.tile_words), its split words hold their
 * features times RepLayout.key_lanes, each feature's element in a tile.
 *
 * A third, `blocks`, holds the keys again for the walks of lone rows (RepLayout.one_row),
 * each tree cut into blocks of three levels, one cache line each (add_blocks).
 */
#include "lower/rep.h"

#include <stdlib.h>
#include <string.h>

/* Trees deeper than this would need more than 2^25 slots each. */
#define ARRAY_MAX_DEPTH 24
/*
 * The most bytes of records (and leaves' doubles) a forest's complete trees may take:
 * 2.5 times the array of 100,000 trees of depth 8. Deep trees of a few nodes would pad
 * to gigabytes here, past what a shared library's data can hold (its relocations reach
 * 2 GiB); the sparse layout stores their nodes alone.
 */
#define ARRAY_MAX_BYTES (1ull << 30)
/*
 * The largest forest (in bytes of the records a walk reads) that gets a key copy (rep.h).
 * Where every walk reads keys, the float records are not emitted (target/llvm_host.c), so
 * the copy costs the compile its building and saves it the float records' emission,
 * which shortens the compile for a little more memory. A step reads a record of keys
 * with one load, which makes lone rows and batches faster on large forests (measured:
 * docs/performance-notes.md, Key copies). Past it (100,000 trees), the copy would take
 * more memory than the compile may.
 */
#define ARRAY_MAX_KEY_COPY (1u << 24)

/*
 * The most bytes a key copy in blocks may take (add_blocks): about an L2. A lone row of
 * a larger forest reads it from L3, whose latency the complete layout's prefetches hide
 * better on some, and its copy would double the artifact and lengthen the compile
 * (measured: docs/performance-notes.md, Blocks of keys).
 */
#define ARRAY_MAX_BLOCKS (2u << 20)

typedef struct ArrayState {
	uint32_t node_buffer, offset_buffer, key_buffer; /* key_buffer: LIR_NONE without keys */
	RepTops tops;            /* with RepLayout.top_levels: every tree's top splits, its slots 1 to 2^levels - 1 */
	uint32_t nodes, offsets, keys; /* their addresses in the function being built */
	uint32_t record;         /* i32 elements per record: 2 (f32 values) or 4 (f64) */
	int64_t stride;          /* i32 elements per tree where all trees take the same (a padded forest), else 0 */
	bool own_leaves;         /* leaves are doubles read apart from the float records */
	bool gpu;                /* laid out for a GPU's kernels */
	bool packed;             /* RepLayout.packed_leaves: records for splits alone, the leaves' values after them */
	uint64_t leaf_slots;     /* the slots before their region; 0: each in its own slot */
	uint32_t block_buffer;   /* the key copy in blocks (add_blocks), LIR_NONE: none */
	uint32_t blocks;         /* its address in the function being built */
	int64_t block_stride;    /* i32 elements per tree in it: the deepest tree's blocks */
	uint32_t copy;           /* GPU cache(t): the shared-memory copy of a group's records, or LIR_NONE */
	uint32_t copy_start;     /* i64: where the group's records start in nodes */
	uint32_t num_trees;
	int32_t tree_offsets[];  /* the offset buffer's contents (num_trees + 1), for the copy's size */
} ArrayState;

/*
 * Store tree t into the records from slot `first`; leaf values into leaves (doubles, by
 * slot) where not NULL, else packed after 2^packed records where packed >= 0.
 */
static void store_tree(const HForest *f, const RepLayout *layout, uint32_t t, int32_t *records, uint32_t record,
                       uint64_t first, double *leaves, int32_t packed, uint64_t *stack)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t top = 0;
	stack[top++] = 0; /* node */
	stack[top++] = 1; /* slot within the tree */
	while (top) {
		uint64_t slot = stack[--top], id = stack[--top];
		const HNode *n = &nodes[id];
		int32_t *at = records + (first + slot) * record;
		/* The value is element 1 of the record seen as values of its type, or a leaf's in leaves. */
		if (n->feature == HIR_LEAF && leaves)
			leaves[first + slot] = rep_slot_value(layout, f, n);
		else if (n->feature == HIR_LEAF && packed >= 0)
			rep_store_value(records + first * record, layout->threshold_type, (1ull << packed) + slot, rep_slot_value(layout, f, n));
		else
			rep_store_value(at, layout->threshold_type, 1, rep_slot_value(layout, f, n));
		if (n->feature == HIR_LEAF) {
			if (packed < 0)
				at[0] = -1;
			continue;
		}
		at[0] = rep_split_word(n);
		stack[top++] = n->left;
		stack[top++] = 2 * slot;
		stack[top++] = n->right;
		stack[top++] = 2 * slot + 1;
	}
}

/*
 * Move the doubles of the leaves (all at depth `depth`) from leaves into their slots of
 * records, whose words no walk reads: a step two levels above prefetches the line a leaf
 * then shares with its siblings, where a region apart was a line more per tree and row
 * (measured: docs/performance-notes.md, Leaves in their slots).
 */
static void leaves_into_slots(const HForest *f, const int32_t *offsets, uint32_t depth, const double *leaves,
                              int32_t *records, uint32_t record)
{
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint64_t first = (uint64_t)offsets[t] / record;
		for (uint64_t slot = first + (1ull << depth); slot < first + (2ull << depth); slot++)
			memcpy(records + slot * record, &leaves[slot], sizeof *leaves);
	}
}

/*
 * Where a tree of depth d goes (its leaves packed or not), its records starting at slot
 * *start or after: a tree of a line or more (64 bytes) starts on a line, so that slots
 * 4i to 4i+3, which a walk prefetches together, share one line (and its top three
 * levels, slots 1 to 7, the first). Trees of two lines or more, a power of two, would then all start in the same
 * few cache sets (every depth-8 tree of 4-byte values in one of the L1's 64 sets, whose
 * 12 ways hold 12 trees' top levels): a line is left free after each. *start moves past
 * the tree. Lone rows gain by the placement, and lose far more without the free line
 * (measured: docs/performance-notes.md, Placing trees on lines).
 */
static uint64_t place_tree(uint64_t *start, uint32_t depth, uint32_t record, bool packed)
{
	uint64_t line = REP_CACHE_LINE / (record * sizeof(int32_t)), at = *start;
	uint64_t slots = packed ? (1ull << depth) + ((1ull << depth) + 1) / 2 : 2ull << depth; /* a value: half a record */
	if (slots >= line)
		at += (line - at % line) % line;
	*start = at + slots + (slots > line ? line : 0);
	return at;
}

/*
 * The tops buffer of a key copy (keys, as laid out at s->tree_offsets): the top levels
 * that are splits in every tree, up to rep_top_levels (rep_tops_lay_out), each
 * split's feature's element in the rows' tile of keys (RepLayout.key_lanes times the
 * feature) and its key. The element stored saves a top its 15 multiplies (measured:
 * docs/performance-notes.md, Elements in the tops).
 */
static void add_tops(const HForest *f, LModule *m, RepLayout *layout, ArrayState *s, const int32_t *keys)
{
	uint32_t shallowest, deepest, per;
	int32_t *tops;
	if (!layout->top_levels)
		return;
	hir_leaf_depth_range(f, &shallowest, &deepest);
	layout->top_levels = rep_top_levels(layout, shallowest);
	if ((uint64_t)layout->key_columns * layout->key_lanes > REP_WORD_FEATURE_MASK || !f->num_trees)
		layout->top_levels = 0;
	if (!layout->top_levels)
		return;
	per = (1u << layout->top_levels) - 1;
	tops = xmalloc((size_t)f->num_trees * per * 2 * sizeof *tops);
	for (uint32_t t = 0; t < f->num_trees; t++)
		for (uint32_t slot = 1; slot <= per; slot++) {
			const int32_t *record = keys + s->tree_offsets[t] + (int64_t)slot * s->record;
			tops[((size_t)t * per + slot - 1) * 2] = (int32_t)(((uint32_t)record[0] & REP_WORD_FEATURE_MASK) * layout->key_lanes);
			tops[((size_t)t * per + slot - 1) * 2 + 1] = record[1];
		}
	rep_tops_lay_out(m, layout, &s->tops, "array", f->num_trees, tops);
}

/*
 * The slots of a tree in blocks: levels 3k to 3k + 2 of the tree in blocks of 8 slots
 * (64 bytes of key records, a cache line), each a complete tree of three levels from its
 * slot 1 (slot 0 unused); the blocks in level order from block 0, the children of
 * block c at 8c + 1 to 8c + 8. Slot s = 8c + i of block c, node i: its children are s +
 * i + {0, 1} within the block (i < 4), and else 8 (s + i + {0, 1}) - 55, slot 1 of
 * block 8c + 1 + 2 (i - 4) + {0, 1} (array_step). A lone row's walk reads a line every
 * three levels where the complete layout reads one a level below the third. Blocks
 * prefetch nothing (prefetching the children's blocks a step ahead was slower); they are
 * faster than the complete layout for narrow rows and slightly slower for rows of 90
 * features (measured: docs/performance-notes.md, Blocks of keys). What is left is the
 * wait for each block below, from L2. (LLVM keeps both 8 (s + i + c) and the child of a
 * step into a block below, which doubles the walks' spills; nodes offset by level so
 * that the child is 8 (s + i + c) alone halved them and ran as fast.)
 */
static uint64_t block_slot(uint64_t slot)
{
	uint32_t level = 63 - (uint32_t)__builtin_clzll(slot), top = 0;
	uint64_t block = 0;
	for (; level - top >= 3; top += 3)
		block = 8 * block + 1 + ((slot >> (level - top - 3)) & 7);
	return 8 * block + ((slot & ((1ull << (level - top)) - 1)) | 1ull << (level - top));
}

/* Slots in blocks of a tree of depth d, 8 per block in ceil((d + 1) / 3) levels of blocks. */
static uint64_t block_slots(uint32_t depth)
{
	uint64_t blocks = 0, level = 1;
	for (uint32_t top = 0; top <= depth; top += 3, level *= 8)
		blocks += level;
	return 8 * blocks;
}

/*
 * The key copy in blocks, where lone rows walk the keys (RepLayout.blocks), its trees in
 * blocks add at most a quarter to their slots (depths 2, 5, 8, 11 and so on, whose levels
 * fill their blocks), some tree is 5 deep, and the copy fits ARRAY_MAX_BLOCKS. Trees are
 * a stride apart, the deepest's blocks (those of depth groups, each padded to its own
 * depth, leave the blocks below theirs unused): trees side by side are then one address
 * plus constants (array_tree), where offsets loaded from a table made lone rows slower
 * (measured: docs/performance-notes.md, Blocks of keys).
 */
static void add_blocks(const HForest *f, LModule *m, RepLayout *layout, ArrayState *s, const int32_t *keys)
{
	uint64_t used = 0, complete = 0, total;
	uint32_t deepest = 0;
	int32_t *blocks;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint32_t depth = hir_tree_depth(f, t);
		deepest = depth > deepest ? depth : deepest;
		used += block_slots(depth);
		complete += 2ull << depth;
	}
	total = block_slots(deepest) * f->num_trees * s->record;
	layout->blocks = layout->blocks && !m->gpu && s->record == 2 && !(s->own_leaves && s->leaf_slots) && deepest >= 5 &&
	                 4 * used <= 5 * complete;
	if (!layout->blocks || total * sizeof *blocks > ARRAY_MAX_BLOCKS) {
		layout->blocks = false;
		return;
	}
	blocks = xmalloc(total * sizeof *blocks);
	for (uint64_t i = 0; i < total; i += s->record) { /* unused slots read as leaves */
		blocks[i] = -1;
		blocks[i + 1] = 0;
	}
	s->block_stride = (int64_t)(block_slots(deepest) * s->record);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint32_t depth = hir_tree_depth(f, t);
		for (uint64_t slot = 1; slot < 2ull << depth; slot++) {
			int32_t *to = blocks + (uint64_t)t * s->block_stride + block_slot(slot) * s->record;
			if (s->packed && slot >= 1ull << depth) /* a leaf's record again: no word, its value */
				to[1] = keys[s->tree_offsets[t] + (1ull << depth) + slot];
			else
				memcpy(to, keys + s->tree_offsets[t] + slot * s->record, s->record * sizeof *blocks);
		}
	}
	s->block_buffer = lir_buffer_add(m, "array.blocks", LTYPE_I32, total, blocks);
}

/* The slots of tree t that hold records: its splits' and, unless packed, its leaves'. */
static uint64_t record_slots(const HForest *f, uint32_t t, bool packed)
{
	return (packed ? 1ull : 2ull) << hir_tree_depth(f, t);
}

static bool array_lay_out(const HForest *f, LModule *m, RepLayout *layout, Error *e)
{
	int32_t *offsets = xmalloc(((size_t)f->num_trees + 1) * sizeof *offsets), *records;
	uint64_t total = 0, max_nodes = 1, elements, *stack;
	uint32_t record, shallowest = 0, deepest = 1;
	double *leaves = NULL;
	ArrayState *s;
	bool own_leaves, in_slots, packed;

	if (!rep_lay_out_forest(f, m, "array", layout, e)) {
		free(offsets);
		return false;
	}
	/* Float thresholds, double leaves: values of floats, the leaves apart. */
	own_leaves = f->leaf_type == HTYPE_F64 && !m->gpu && rep_float_thresholds(f, layout);
	if (own_leaves)
		layout->threshold_type = LTYPE_F32;
	record = layout->threshold_type == LTYPE_F32 ? 2 : 4;
	packed = layout->packed_leaves && !own_leaves && !m->gpu;
	for (uint32_t t = 0; t < f->num_trees && packed; t++) {
		hir_trees_leaf_depth_range(f, t, t + 1, &shallowest, &deepest);
		packed = shallowest == deepest;
	}
	layout->packed_leaves = packed;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint32_t depth = hir_tree_depth(f, t);
		if (depth > ARRAY_MAX_DEPTH) {
			free(offsets);
			return error_set(e, "array representation: tree %u has depth %u, at most %d fit", t, depth, ARRAY_MAX_DEPTH);
		}
		offsets[t] = (int32_t)(place_tree(&total, depth, record, packed) * record);
		if (total * (record + (own_leaves ? 2 : 0)) * sizeof *records > ARRAY_MAX_BYTES) {
			free(offsets);
			return error_set(e, "array representation: the trees, each stored complete to its depth, take more than %llu "
			                    "MiB by tree %u (of depth %u); use the sparse representation",
			                 ARRAY_MAX_BYTES >> 20, t, depth);
		}
		if (f->trees[t].num_nodes > max_nodes)
			max_nodes = f->trees[t].num_nodes;
	}
	if (own_leaves)
		hir_leaf_depth_range(f, &shallowest, &deepest);
	in_slots = own_leaves && shallowest == deepest;
	/* The leaves' region: a double (two i32 elements) per slot after the records. */
	elements = (total ? total : 1) * (record + (own_leaves && !in_slots ? 2 : 0));
	layout->keys = layout->keys && rep_keys_fit(layout) && total * record * sizeof *records <= ARRAY_MAX_KEY_COPY;
	rep_lay_out_columns(f, layout);
	records = xcalloc(elements, sizeof *records);
	for (uint64_t i = 0; i < total; i++) /* unused slots read as leaves */
		records[i * record] = -1;
	if (own_leaves)
		leaves = in_slots ? xcalloc(total, sizeof *leaves) : (double *)(records + total * record);
	stack = xmalloc(4 * max_nodes * sizeof *stack);
	offsets[f->num_trees] = (int32_t)(total * record); /* where the last tree ends */
	for (uint32_t t = 0; t < f->num_trees; t++)
		store_tree(f, layout, t, records, record, (uint64_t)offsets[t] / record, leaves,
		           packed ? (int32_t)hir_tree_depth(f, t) : -1, stack);
	free(stack);

	s = xcalloc(1, sizeof *s + ((size_t)f->num_trees + 1) * sizeof *offsets);
	memcpy(s->tree_offsets, offsets, ((size_t)f->num_trees + 1) * sizeof *offsets);
	s->num_trees = f->num_trees;
	s->record = record;
	s->own_leaves = own_leaves;
	s->gpu = m->gpu;
	s->packed = packed;
	s->leaf_slots = in_slots ? 0 : total;
	s->stride = f->num_trees && offsets[0] == 0 ? offsets[1] : 0; /* tree t at t x stride */
	for (uint32_t t = 1; t < f->num_trees; t++)
		if (offsets[t + 1] - offsets[t] != s->stride)
			s->stride = 0;
	s->key_buffer = s->block_buffer = LIR_NONE;
	if (layout->keys) { /* the whole buffer again, each split's threshold as its key (records of f32 values) */
		int32_t *keys = xmalloc(elements * sizeof *keys);
		memcpy(keys, records, elements * sizeof *keys);
		for (uint32_t t = 0; t < f->num_trees; t++) {
			uint64_t first = (uint64_t)offsets[t] / record, end = first + record_slots(f, t, packed);
			for (uint64_t i = first; i < end; i++) { /* the records, not packed leaves */
				float threshold;
				memcpy(&threshold, &keys[i * record + 1], sizeof threshold);
				if (keys[i * record] == -1)
					continue;
				keys[i * record + 1] = (int32_t)rep_split_key(layout, (uint32_t)keys[i * record], threshold);
				keys[i * record] = (int32_t)rep_key_word(layout, (uint32_t)keys[i * record]);
			}
		}
		if (in_slots)
			leaves_into_slots(f, offsets, deepest, leaves, keys, record);
		add_tops(f, m, layout, s, keys);
		add_blocks(f, m, layout, s, keys);
		if (!layout->top_levels)
			layout->key_lanes = 0; /* rows' keys in tiles serve the tops */
		layout->tile_words = layout->tile_words && layout->key_lanes;
		for (uint32_t t = 0; t < f->num_trees && layout->tile_words; t++) {
			uint64_t first = (uint64_t)offsets[t] / record, end = first + record_slots(f, t, packed);
			for (uint64_t i = first; i < end; i++) /* splits: leaves in slots hold a double's bits by now */
				if (records[i * record] != -1)
					keys[i * record] = (int32_t)rep_tile_word(layout, (uint32_t)keys[i * record]);
		}
		s->key_buffer = lir_buffer_add(m, "array.keys", LTYPE_I32, elements, keys);
	} else {
		layout->top_levels = layout->key_lanes = 0; /* tops are read from the key copy */
		layout->blocks = layout->tile_words = false;
	}
	if (in_slots) {
		leaves_into_slots(f, offsets, deepest, leaves, records, record);
		free(leaves);
	}
	s->node_buffer = lir_buffer_add(m, "array.nodes", LTYPE_I32, elements, records);
	s->offset_buffer = lir_buffer_add(m, "array.tree_offsets", LTYPE_I32, f->num_trees + 1, offsets);
	layout->state = s;
	return true;
}

static void array_begin_function(RepLayout *layout, LBuilder *b)
{
	ArrayState *s = layout->state;
	rep_begin_forest(layout, b);
	s->nodes = rep_buffer_address(b, s->node_buffer);
	s->offsets = rep_buffer_address(b, s->offset_buffer);
	s->keys = s->key_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->key_buffer);
	if (layout->top_levels)
		rep_tops_begin(&s->tops, b);
	s->blocks = s->block_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->block_buffer);
	s->copy = LIR_NONE;
}

static uint32_t array_top_nodes(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t levels, uint32_t lanes,
                                uint32_t tile)
{
	return rep_tops_take(&((ArrayState *)layout->state)->tops, layout, b, tree, levels, lanes, tile);
}

/* Whether the walks being lowered read the key copy in blocks: a lone row's walks of keys, where there is one. */
static bool walks_blocks(const RepLayout *layout)
{
	const ArrayState *s = layout->state;
	return layout->walk_keys && layout->one_row && s->block_buffer != LIR_NONE && s->copy == LIR_NONE;
}

/* A tree's handle: the address of its root record (in the group's copy while there is one). */
static uint32_t array_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool side_by_side)
{
	ArrayState *s = layout->state;
	uint32_t offset;
	if (walks_blocks(layout))
		return lir_index(b, s->blocks, lir_emit(b, LOP_MUL, LTYPE_I64, tree, lir_const_int(b, LTYPE_I64, s->block_stride), LIR_NONE),
		                 LTYPE_I32);
	/*
	 * Trees of one size walked side by side: their offsets computed, not loaded, the
	 * roots of trees t0 + k are one address plus constants, which LLVM folds into the
	 * loads' displacements instead of holding a root per tree in a register. Not for a
	 * tree that rows walk side by side, whose one root costs one register either way
	 * (computed there too, batches ran slower; measured: docs/performance-notes.md, Trees'
	 * offsets computed). On a GPU always: the load is one more dependent memory request
	 * (measured: docs/performance-notes.md, GPU nodes and roots).
	 */
	if (s->stride && ((side_by_side && s->copy == LIR_NONE) || s->gpu))
		offset = lir_emit(b, LOP_MUL, LTYPE_I64, tree, lir_const_int(b, LTYPE_I64, s->stride), LIR_NONE);
	else
		offset = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, s->offsets, tree, LIR_NONE));
	if (s->copy != LIR_NONE)
		return lir_index(b, s->copy, lir_emit(b, LOP_SUB, LTYPE_I64, offset, s->copy_start, LIR_NONE), LTYPE_I32);
	return lir_index(b, layout->walk_keys ? s->keys : s->nodes, offset, LTYPE_I32);
}

static uint32_t array_root(RepLayout *layout, LBuilder *b, uint32_t tree)
{
	(void)layout;
	(void)tree;
	return lir_const_int(b, LTYPE_I64, 1);
}

/* Element i of node's record, in units of the element's type: the word is element 0 of i32s, the value element 1 of values. */
static uint32_t record_element(LBuilder *b, uint32_t node, uint32_t per_record, uint32_t i)
{
	uint32_t at = lir_emit(b, LOP_MUL, LTYPE_I64, node, lir_const_int(b, LTYPE_I64, per_record), LIR_NONE);
	return i ? lir_emit(b, LOP_ADD, LTYPE_I64, at, lir_const_int(b, LTYPE_I64, i), LIR_NONE) : at;
}

/*
 * The child in blocks where the walk reads them (block_slot): within the block, or in a
 * block below from a node of the block's last level (of level 3k + 2 where the walk
 * knows it, else where the node's place in its block says so).
 */
static uint32_t array_step(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node, const RepNode *fields,
                           const RepRow *row, bool leaf_stays)
{
	uint32_t local, sum, below, child;
	if (!walks_blocks(layout))
		return rep_complete_step(layout, b, tree, node, fields, row, leaf_stays);
	local = lir_emit(b, LOP_AND, LTYPE_I64, node, lir_const_int(b, LTYPE_I64, 7), LIR_NONE);
	sum = rep_step_sum(layout, b, node, local, fields, row, leaf_stays);
	if (layout->step_level >= 0 && layout->step_level % 3 != 2) /* a known level above the block's last */
		return rep_step_result(b, fields, node, sum, leaf_stays);
	below = lir_emit(b, LOP_SHL, LTYPE_I64, sum, lir_const_int(b, LTYPE_I64, 3), LIR_NONE);
	below = lir_emit(b, LOP_ADD, LTYPE_I64, below, lir_const_int(b, LTYPE_I64, -55), LIR_NONE);
	child = layout->step_level >= 0 ? below
	                                : lir_emit(b, LOP_SELECT, LTYPE_I64, lir_cmp(b, LOP_ICMP, LCMP_SGE, local, lir_const_int(b, LTYPE_I64, 4)), below, sum);
	return rep_step_result(b, fields, node, child, leaf_stays);
}

static RepNode array_load_node(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	ArrayState *s = layout->state;
	RepNode n;
	if (layout->walk_keys)
		return rep_load_record(layout, b, tree, node);
	rep_decode_word(layout, b, lir_emit(b, LOP_LOAD, LTYPE_I32, tree, record_element(b, node, s->record, 0), LIR_NONE), &n);
	n.threshold = lir_emit(b, LOP_LOAD, layout->threshold_type, tree, record_element(b, node, 2, 1), LIR_NONE);
	return n;
}

/* Not whole: the root's record, from the tree's handle (its offset computed, not loaded, where trees take one size). */
static void array_prefetch_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool whole)
{
	ArrayState *s = layout->state;
	uint32_t buffers[] = {layout->walk_keys ? s->keys : s->nodes};
	LType types[] = {LTYPE_I32};
	uint32_t handle;
	if (whole) {
		rep_prefetch_slots(b, s->offsets, tree, buffers, types, COUNT_OF(buffers), true);
		return;
	}
	handle = array_tree(layout, b, tree, true); /* one emitting call a statement: the LIR's numbering */
	lir_emit(b, LOP_PREFETCH, LTYPE_I32, handle, record_element(b, array_root(layout, b, tree), s->record, 0), LIR_NONE);
}

/* Where the value of leaf slot `node` lies (s->packed), in values from the tree's handle. */
static uint32_t packed_leaf_element(const RepLayout *layout, LBuilder *b, uint32_t node)
{
	if (layout->leaf_level < 0)
		die("array representation: a walk of packed leaves without their depth (RepLayout.leaf_level)");
	return lir_emit(b, LOP_ADD, LTYPE_I64, node, lir_const_int(b, LTYPE_I64, 1ll << layout->leaf_level), LIR_NONE);
}

/* Where the double of leaf slot `node` lies (own_leaves), in doubles from the tree's handle. */
static uint32_t own_leaf_element(const ArrayState *s, LBuilder *b, uint32_t node)
{
	if (!s->leaf_slots)
		return node;
	return lir_emit(b, LOP_ADD, LTYPE_I64, node, lir_const_int(b, LTYPE_I64, (int64_t)s->leaf_slots), LIR_NONE);
}

/*
 * The four grandchildren of slot s are the slots 4s to 4s + 3, side by side: 32 bytes of
 * f32 records in one line, which one prefetch brings in (64 of f64 records, a line).
 * Where leaves have a region apart, a walk reads its leaves there and none of their
 * records, and their doubles are prefetched only for a block of one row: in a tile of
 * rows, a prefetch into that region, 8 x slots bytes past the records, made LLVM keep a
 * register per tree of the 8 walked side by side (spilled) instead of one base with
 * displacements, which made one row slower; a block of one row (its keys at a fixed
 * place, without a base register) walks faster with it (measured:
 * docs/performance-notes.md, Prefetching leaves' doubles).
 */
static void array_prefetch_below(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node, bool leaves)
{
	ArrayState *s = layout->state;
	uint32_t first;
	bool apart = leaves && s->own_leaves && s->leaf_slots; /* else the leaves' doubles are in their records' line */
	if ((apart && !layout->one_row) || walks_blocks(layout)) /* blocks: prefetches made lone rows slower */
		return;
	first = lir_emit(b, LOP_MUL, LTYPE_I64, node, lir_const_int(b, LTYPE_I64, 4), LIR_NONE);
	if (leaves && s->packed) {
		lir_emit(b, LOP_PREFETCH, layout->threshold_type, tree, packed_leaf_element(layout, b, first), LIR_NONE);
		return;
	}
	if (apart) {
		lir_emit(b, LOP_PREFETCH, LTYPE_F64, tree, own_leaf_element(s, b, first), LIR_NONE);
		return;
	}
	lir_emit(b, LOP_PREFETCH, LTYPE_I32, tree, record_element(b, first, s->record, 0), LIR_NONE);
}

static uint32_t array_leaf_value(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	ArrayState *s = layout->state;
	/* A record and a leaf's double are both 8 bytes: the leaf is as far from its record as the region from the records (or in it). */
	if (s->own_leaves)
		return lir_emit(b, LOP_LOAD, LTYPE_F64, tree, own_leaf_element(s, b, node), LIR_NONE);
	if (s->packed && !walks_blocks(layout)) /* the blocks keep leaves' records */
		return rep_load_leaf(layout, b, tree, packed_leaf_element(layout, b, node));
	return rep_load_leaf(layout, b, tree, record_element(b, node, 2, 1));
}

/* A group's records are contiguous: the copy of `count` trees is as large as the largest run of `count` trees. */
static uint64_t array_cache_bytes(const RepLayout *layout, uint32_t count)
{
	const ArrayState *s = layout->state;
	uint64_t most = 0;
	for (uint32_t t = 0; t < s->num_trees; t++) {
		uint32_t end = count < s->num_trees - t ? t + count : s->num_trees;
		uint64_t size = (uint64_t)(s->tree_offsets[end] - s->tree_offsets[t]);
		most = size > most ? size : most;
	}
	return most * sizeof(int32_t);
}

static void array_cache_begin(RepLayout *layout, LBuilder *b, uint32_t first, uint32_t count, LSpace space, const RepSpread *spread)
{
	ArrayState *s = layout->state;
	uint64_t elements = array_cache_bytes(layout, count) / sizeof(int32_t);
	uint32_t last = lir_emit(b, LOP_ADD, LTYPE_I64, first, lir_const_int(b, LTYPE_I64, count), LIR_NONE), end, k, word;
	/* f64 values are read in place: a copy of 8-byte elements keeps them aligned. */
	s->copy = s->record == 4 ? lir_local_array(b, LTYPE_I64, (int64_t)(elements + 1) / 2, space)
	                         : lir_local_array(b, LTYPE_I32, (int64_t)elements, space);
	last = lir_emit(b, LOP_MIN, LTYPE_I64, last, lir_const_int(b, LTYPE_I64, s->num_trees), LIR_NONE);
	s->copy_start = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, s->offsets, first, LIR_NONE));
	end = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, s->offsets, last, LIR_NONE));
	k = spread->begin(spread->ctx, lir_emit(b, LOP_SUB, LTYPE_I64, end, s->copy_start, LIR_NONE));
	word = lir_emit(b, LOP_LOAD, LTYPE_I32, s->nodes, lir_emit(b, LOP_ADD, LTYPE_I64, s->copy_start, k, LIR_NONE), LIR_NONE);
	lir_emit(b, LOP_STORE, LTYPE_VOID, s->copy, k, word);
	lir_end(b);
}

static void array_cache_end(RepLayout *layout)
{
	ArrayState *s = layout->state;
	s->copy = LIR_NONE;
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
	.prefetch_below = array_prefetch_below,
	.leaf_value = array_leaf_value,
	.cache_bytes = array_cache_bytes,
	.cache_begin = array_cache_begin,
	.cache_end = array_cache_end,
	.top_nodes = array_top_nodes,
	.keys = true,
};
