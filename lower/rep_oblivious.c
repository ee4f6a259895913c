/*
 * The oblivious representation, for symmetric trees (CatBoost's): every split of a
 * level of a tree is the same split, and every leaf lies at the tree's depth D. A tree
 * is then D level records and 2^D leaves:
 *
 *   word  (i32)  per level: the node word (rep.h) of the level's split
 *   value        per level: its threshold (the set's offset for IN splits)
 *   key   (i64)  per level, where the walks read rows' keys: key word and threshold key
 *                (as the sparse layout's key copy)
 *   leaf         per tree, its 2^D leaf values, left to right
 *
 * with each tree's first level and its leaves' base; where the walks of 16 rows take
 * tops (RepLayout.top_levels: rows' keys in tiles), a record per level of the element
 * of its feature in a tile and its key, and a top is a vector compare per level, the
 * rows' nodes doubled and the compares' bits added (all the levels of CatBoost's
 * depth-6 trees). A walk's node is its index in the
 * complete tree (the root 1, children 2i and 2i + 1, leaves 2^D to 2^(D+1) - 1), but
 * a step reads the split of its level, not of its node: the loads of a walk do not wait
 * on its compares, and the rows walked side by side share them. Walks must know the
 * level of each step (RepLayout.step_level): every walk of such a forest is unrolled
 * to its trees' depth (the heuristic's schedule: unrollWalk), the lowering refusing
 * others, and a tree shallower than the walk is padded by the same split at each new
 * level (hir_pad), which keeps it symmetric.
 */
#include "lower/cost.h"
#include "lower/lower.h"
#include "lower/rep.h"

#include <stdlib.h>
#include <string.h>

/* The most levels a top takes (lower/lower_tops.c tags a top by its levels, fewer than 16). */
#define OBLIVIOUS_TOP_LEVELS 8
/*
 * Leaves of a tree in at most this many tables (oblivious_leaf_values): 256 floats with
 * AVX-512 (16 tables of 16, permuted two at a time: rep_table_gather), else 4 tables (32
 * floats with AVX2, 32 doubles with AVX-512, whose 16 lanes take two vectors a table).
 * Past them the rows load their leaves one by one. With AVX-512, a depth-8 tree's 16
 * tables of floats took 0.498 against 0.576 µs a row (CatBoost depth 8, 4096 rows; one
 * table at a time they were slower, 0.674 against 0.625); 8 tables of a depth-6 tree's
 * doubles 0.91 against 0.27, and with AVX2 8 tables of its floats 0.853 against 0.562
 * (the VM's Intel Xeon, 2026-12-06, one core; docs/performance-notes.md, Symmetric trees
 * of depth 7 and 8, and two tables a permute).
 */
#define OBLIVIOUS_LEAF_TABLES_WIDE 16
#define OBLIVIOUS_LEAF_TABLES 4
/* Elements past the last tree's leaves, so that a table read whole from its first leaf stays in the buffer. */
#define OBLIVIOUS_LEAF_PAD 16

typedef struct ObliviousState {
	uint32_t word_buffer, value_buffer, key_buffer, top_buffer, leaf_buffer, level_buffer, base_buffer; /* (LIR_NONE: none) */
	uint32_t table_buffer, table_base_buffer; /* trees with leaf vectors: output by output (LIR_NONE: none) */
	uint32_t bin_key_buffer, bin_start_buffer, byte_top_buffer, plane_buffer; /* RepLayout.byte_tops: lay_out_bins */
	uint32_t words, values, keys, tops, leaves, levels, bases, tables, table_bases; /* their addresses in the function being built */
	uint32_t bin_keys, bin_starts, byte_tops, planes;
	uint32_t depth;                           /* every tree's depth, where they share one (else 0) */
	uint32_t width;                           /* every tree's width (outputs) where planes are laid out */
} ObliviousState;

/*
 * Where tree `tree` (i64) starts in a buffer of `each` elements a tree, less `less`
 * (i64): computed where every tree has one depth (ObliviousState.depth, and `each` its
 * elements), else loaded from `starts` (i32 a tree). Computed, a top's loads do not
 * wait on a load of the tree's start.
 */
static uint32_t tree_start(const ObliviousState *s, LBuilder *b, uint32_t starts, uint32_t tree, int64_t each, int64_t less)
{
	uint32_t at;
	if (!s->depth) {
		at = lir_emit(b, LOP_LOAD, LTYPE_I32, starts, tree, LIR_NONE);
		return lir_cast(b, LCAST_SEXT, LTYPE_I64, at);
	}
	at = lir_emit(b, LOP_MUL, LTYPE_I64, tree, lir_const_int(b, LTYPE_I64, each), LIR_NONE);
	return less ? lir_emit(b, LOP_SUB, LTYPE_I64, at, lir_const_int(b, LTYPE_I64, less), LIR_NONE) : at;
}

/*
 * The leaves of symmetric tree t of depth `depth`, left to right (breadth first, left
 * before right: every leaf at that depth, they are the last 2^depth nodes queued): a
 * pointer into queue (of room for the tree's nodes).
 */
static const uint32_t *leaves_left_to_right(const HForest *f, uint32_t t, uint32_t depth, uint32_t *queue)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t head = 0, tail = 0;
	queue[tail++] = 0;
	while (head < tail) {
		const HNode *n = &nodes[queue[head++]];
		if (n->feature != HIR_LEAF) {
			queue[tail++] = n->left;
			queue[tail++] = n->right;
		}
	}
	return queue + tail - (1u << depth);
}

/*
 * Where trees have leaf vectors (RepLayout.vector_buffer), their elements again, tree by
 * tree and output by output: output k of the tree's leaf j at tables[table_bases[t] +
 * k x 2^D + j], so that a top's leaves take each output as one table (leaf_values).
 */
static void lay_out_tables(const HForest *f, LModule *m, RepLayout *layout, ObliviousState *s)
{
	uint64_t total = 0, at = 0, most = 1;
	int32_t *bases = xmalloc(((size_t)f->num_trees + 1) * sizeof *bases);
	uint32_t *queue;
	void *tables;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		total += (uint64_t)f->trees[t].width << hir_tree_depth(f, t);
		most = f->trees[t].num_nodes > most ? f->trees[t].num_nodes : most;
	}
	if (total > INT32_MAX) { /* beyond an i32 offset: no tables, and the reduce adds the vectors element by element */
		free(bases);
		return;
	}
	tables = xcalloc(total + OBLIVIOUS_LEAF_PAD, lir_type_size(layout->leaf_type));
	queue = xmalloc(most * sizeof *queue);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		const HNode *nodes = hir_tree_nodes(f, t);
		uint32_t depth = hir_tree_depth(f, t);
		const uint32_t *leaf = leaves_left_to_right(f, t, depth, queue); /* (as oblivious_lay_out orders them) */
		bases[t] = (int32_t)at;
		for (uint32_t j = 0; j < 1u << depth; j++) {
			const HNode *n = &nodes[leaf[j]];
			for (uint32_t k = 0; k < f->trees[t].width; k++)
				rep_store_value(tables, layout->leaf_type, at + ((uint64_t)k << depth) + j,
				                f->trees[t].width > 1 ? f->leaf_values[n->vector + k] : n->value);
		}
		at += (uint64_t)f->trees[t].width << depth;
	}
	bases[f->num_trees] = (int32_t)at;
	free(queue);
	s->table_buffer = lir_buffer_add(m, "oblivious.leaf_tables", layout->leaf_type, total + OBLIVIOUS_LEAF_PAD, tables);
	s->table_base_buffer = lir_buffer_add(m, "oblivious.table_bases", LTYPE_I32, f->num_trees + 1, bases);
}

/* A level's feature and tile key, ordered by feature, then key (signed: RepLayout.signed_tiles), then level. */
typedef struct LevelKey {
	uint32_t feature, level;
	int32_t key;
} LevelKey;

static int by_feature_key(const void *pa, const void *pb)
{
	const LevelKey *a = pa, *b = pb;
	if (a->feature != b->feature)
		return a->feature < b->feature ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->level < b->level ? -1 : a->level > b->level;
}

/* Bytes a plane of a tree's leaves takes (RepLayout.byte_tops): its leaves, in tables of 16. */
static uint32_t plane_bytes(const ObliviousState *s) { return s->depth < 4 ? 16 : 1u << s->depth; }

/*
 * RepLayout.byte_tops: every feature's distinct tile keys of its splits (bin_keys, from
 * bin_starts[f]), what a level compares its rows' bins with (byte_tops: per level where
 * its feature's bins lie in a group's and, less 128, how many of the feature's keys a row
 * goes right of where it goes right of the level's, in each byte of an i32), and, where
 * planes pay (cost_leaf_planes), each tree's leaves in 4 planes of
 * bytes an output (planes: byte p of output k of leaf j at ((tree x width + k) x 4 + p) x
 * plane_bytes + j, every tree of one width: cost_byte_tops). A row
 * goes right of a key below its own where the keys' form is t_below (rep_key_form), of
 * those above it otherwise: the count passes the level's where it goes right of the
 * level's key too.
 */
static void lay_out_bins(const HForest *f, LModule *m, const RepLayout *layout, ObliviousState *s, const int32_t *words,
                         const float *values, const float *leaves, uint64_t levels, bool t_below)
{
	LevelKey *order = xmalloc((levels ? levels : 1) * sizeof *order);
	int32_t *keys = xmalloc((levels ? levels : 1) * sizeof *keys), *starts = xcalloc(f->num_features + 1, sizeof *starts);
	int32_t *tops = xmalloc(2 * (levels ? levels : 1) * sizeof *tops);
	uint32_t plane = plane_bytes(s), n = 0, width = f->num_trees ? f->trees[0].width : 1;
	uint32_t *queue = xmalloc(((size_t)(2u << s->depth) + 1) * sizeof *queue);
	uint8_t *planes = layout->bins_in_order ? NULL : xcalloc((size_t)f->num_trees * width * 4 * plane, 1);
	for (uint64_t i = 0; i < levels; i++)
		order[i] = (LevelKey){(uint32_t)words[i] & REP_WORD_FEATURE_MASK, (uint32_t)i,
		                      (int32_t)rep_tile_key(layout, rep_threshold_key(layout, values[i]))};
	qsort(order, levels, sizeof *order, by_feature_key);
	for (uint64_t i = 0, first = 0; i < levels; i++) {
		if (!i || order[i].feature != order[i - 1].feature)
			first = n;
		if (!i || order[i].feature != order[i - 1].feature || order[i].key != order[i - 1].key)
			keys[n++] = order[i].key;
		starts[order[i].feature + 1] = (int32_t)n;
		tops[2 * order[i].level] = (int32_t)order[i].feature; /* (times BYTE_TOP_LANES below) */
		tops[2 * order[i].level + 1] = (int32_t)(n - 1 - first); /* the keys below, for now */
	}
	for (uint32_t k = 1; k <= f->num_features; k++) /* (features without splits: no keys) */
		starts[k] = starts[k] > starts[k - 1] ? starts[k] : starts[k - 1];
	for (uint64_t i = 0; i < levels; i++) {
		uint32_t feature = (uint32_t)tops[2 * i], below = (uint32_t)tops[2 * i + 1];
		uint32_t count = (uint32_t)(starts[feature + 1] - starts[feature]);
		tops[2 * i] = (int32_t)(feature * BYTE_TOP_LANES); /* the feature's bins in a group's */
		tops[2 * i + 1] = (int32_t)(0x01010101u * (uint8_t)((t_below ? below : count - 1 - below) - 128)); /* (in every byte) */
	}
	for (uint32_t t = 0; t < f->num_trees && planes; t++) {
		/* a leaf's vector from its node, in the order oblivious_lay_out gives `leaves` (their indices where width > 1) */
		const uint32_t *leaf = width > 1 ? leaves_left_to_right(f, t, s->depth, queue) : NULL;
		const HNode *nodes = hir_tree_nodes(f, t);
		for (uint32_t k = 0; k < width; k++)
			for (uint32_t j = 0; j < 1u << s->depth; j++) {
				float value = leaf ? (float)f->leaf_values[nodes[leaf[j]].vector + k] : leaves[((size_t)t << s->depth) + j];
				uint32_t bits;
				memcpy(&bits, &value, sizeof bits);
				for (uint32_t p = 0; p < 4; p++)
					planes[(((size_t)t * width + k) * 4 + p) * plane + j] = (uint8_t)(bits >> 8 * p);
			}
	}
	free(queue);
	s->width = width;
	s->bin_key_buffer = lir_buffer_add(m, "oblivious.bin_keys", LTYPE_I32, n ? n : 1, keys);
	s->bin_start_buffer = lir_buffer_add(m, "oblivious.bin_starts", LTYPE_I32, f->num_features + 1, starts);
	s->byte_top_buffer = lir_buffer_add(m, "oblivious.byte_tops", LTYPE_I32, 2 * (levels ? levels : 1), tops);
	if (planes)
		s->plane_buffer = lir_buffer_add(m, "oblivious.leaf_planes", LTYPE_I8, (uint64_t)f->num_trees * width * 4 * plane, planes);
	free(order);
}

static bool oblivious_lay_out(const HForest *f, LModule *m, RepLayout *layout, Error *e)
{
	uint32_t level[HIR_MAX_WALK_STEPS + 1], *queue, *depths;
	uint64_t levels = 0, leaves = 0, most = 1;
	uint32_t shallowest = UINT32_MAX, deepest = 0;
	bool t_below;
	int32_t *words, *starts, *bases;
	void *values, *leaf_values;
	ObliviousState *s;

	if (!rep_lay_out_forest(f, m, "oblivious", layout, e))
		return false;
	/* The leaves are apart: float thresholds stay floats (which keys take) under double leaves (CatBoost's). */
	if (!m->gpu && rep_float_thresholds(f, layout))
		layout->threshold_type = LTYPE_F32;
	for (uint32_t t = 0; t < f->num_trees; t++)
		most = f->trees[t].num_nodes > most ? f->trees[t].num_nodes : most;
	queue = xmalloc(most * sizeof *queue);
	depths = xmalloc(((size_t)f->num_trees + 1) * sizeof *depths);
	for (uint32_t t = 0; t < f->num_trees; t++) {
		if (!hir_tree_symmetric(f, t, level, queue)) {
			free(queue);
			free(depths);
			return error_set(e, "oblivious representation: tree %u is not symmetric (its leaves at one depth, each "
			                    "level's splits alike); use array or sparse", t);
		}
		depths[t] = hir_tree_depth(f, t);
		shallowest = depths[t] < shallowest ? depths[t] : shallowest;
		deepest = depths[t] > deepest ? depths[t] : deepest;
		levels += depths[t];
		leaves += 1ull << depths[t];
	}
	if (leaves > INT32_MAX) {
		free(queue);
		free(depths);
		return error_set(e, "oblivious representation: more than 2^31 leaves");
	}
	words = xmalloc((levels ? levels : 1) * sizeof *words);
	values = xcalloc(levels ? levels : 1, lir_type_size(layout->threshold_type));
	leaf_values = xcalloc(leaves + OBLIVIOUS_LEAF_PAD, lir_type_size(layout->leaf_type));
	starts = xmalloc(((size_t)f->num_trees + 1) * sizeof *starts);
	bases = xmalloc(((size_t)f->num_trees + 1) * sizeof *bases);
	levels = leaves = 0;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		const HNode *nodes = hir_tree_nodes(f, t);
		const uint32_t *leaf;
		hir_tree_symmetric(f, t, level, queue);
		starts[t] = (int32_t)levels;
		bases[t] = (int32_t)(leaves - (1ull << depths[t])); /* leaf node i (from 2^D) at bases[t] + i */
		for (uint32_t d = 0; d < depths[t]; d++, levels++) {
			words[levels] = rep_split_word(&nodes[level[d]]);
			rep_store_value(values, layout->threshold_type, levels, rep_slot_value(layout, f, &nodes[level[d]]));
		}
		leaf = leaves_left_to_right(f, t, depths[t], queue);
		for (uint32_t j = 0; j < 1u << depths[t]; j++)
			rep_store_value(leaf_values, layout->leaf_type, leaves++, rep_slot_value(layout, f, &nodes[leaf[j]]));
	}
	starts[f->num_trees] = (int32_t)levels;
	bases[f->num_trees] = (int32_t)leaves;
	free(queue);

	s = xcalloc(1, sizeof *s);
	s->depth = shallowest == deepest ? deepest : 0;
	free(depths);
	s->key_buffer = s->top_buffer = s->table_buffer = s->table_base_buffer = LIR_NONE;
	s->bin_key_buffer = s->bin_start_buffer = s->byte_top_buffer = s->plane_buffer = LIR_NONE;
	/* Steps read levels, not nodes: no blocks or tiles of words (those read the array layout's nodes). */
	layout->blocks = layout->tile_words = layout->packed_leaves = false;
	layout->signed_tiles = layout->vector_tops == MTOPS_PAIRS && !(layout->compares & 1u << HCMP_IN);
	layout->keys = layout->keys && rep_keys_fit(layout);
	if (layout->keys)
		s->key_buffer = lir_buffer_add(m, "oblivious.keys", LTYPE_I32, 2 * levels, rep_key_records(layout, words, values, levels));
	/* Tops of as many levels as every tree has (and a top takes), at least two; their features' elements in a tile. */
	layout->top_levels = layout->keys && layout->top_levels && shallowest >= 2 &&
	                     (uint64_t)f->num_features * layout->key_lanes <= REP_WORD_FEATURE_MASK
	                     ? (uint8_t)(shallowest < OBLIVIOUS_TOP_LEVELS ? shallowest : OBLIVIOUS_TOP_LEVELS) : 0;
	if (layout->top_levels) {
		int32_t *tops = xmalloc(2 * (levels ? levels : 1) * sizeof *tops);
		for (uint64_t i = 0; i < levels; i++) {
			tops[2 * i] = (int32_t)(((uint32_t)words[i] & REP_WORD_FEATURE_MASK) * layout->key_lanes);
			tops[2 * i + 1] = (int32_t)rep_tile_key(layout, rep_threshold_key(layout, ((const float *)values)[i]));
		}
		s->top_buffer = lir_buffer_add(m, "oblivious.tops", LTYPE_I32, 2 * levels, tops);
	} else {
		layout->key_lanes = 0;
	}
	s->word_buffer = lir_buffer_add(m, "oblivious.words", LTYPE_I32, levels, words);
	s->value_buffer = lir_buffer_add(m, "oblivious.values", layout->threshold_type, levels, values);
	s->leaf_buffer = lir_buffer_add(m, "oblivious.leaves", layout->leaf_type, leaves + OBLIVIOUS_LEAF_PAD, leaf_values);
	s->level_buffer = lir_buffer_add(m, "oblivious.levels", LTYPE_I32, f->num_trees + 1, starts);
	s->base_buffer = lir_buffer_add(m, "oblivious.leaf_bases", LTYPE_I32, f->num_trees + 1, bases);
	if (layout->vector_buffer != LIR_NONE && layout->top_levels)
		lay_out_tables(f, m, layout, s);
	/* (trees too deep for planes load their leaves one by one: vectors' from their tables) */
	layout->bins_in_order = !cost_leaf_planes(s->depth);
	layout->byte_tops = layout->byte_tops && layout->top_levels && layout->signed_tiles && s->depth && layout->leaf_type == LTYPE_F32 &&
	                    layout->threshold_type == LTYPE_F32 && cost_byte_tops(f, layout->vector_tops) &&
	                    (!layout->bins_in_order || f->trees[0].width == 1 || s->table_buffer != LIR_NONE) && rep_key_form(layout, &t_below);
	if (layout->byte_tops)
		lay_out_bins(f, m, layout, s, words, values, leaf_values, levels, t_below);
	layout->state = s;
	return true;
}

static void oblivious_begin_function(RepLayout *layout, LBuilder *b)
{
	ObliviousState *s = layout->state;
	rep_begin_forest(layout, b);
	s->words = rep_buffer_address(b, s->word_buffer);
	s->values = rep_buffer_address(b, s->value_buffer);
	s->keys = s->key_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->key_buffer);
	s->tops = s->top_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->top_buffer);
	s->leaves = rep_buffer_address(b, s->leaf_buffer);
	s->levels = rep_buffer_address(b, s->level_buffer);
	s->bases = rep_buffer_address(b, s->base_buffer);
	s->tables = s->table_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->table_buffer);
	s->table_bases = s->table_base_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->table_base_buffer);
	if (s->bin_key_buffer != LIR_NONE) {
		s->bin_keys = rep_buffer_address(b, s->bin_key_buffer);
		s->bin_starts = rep_buffer_address(b, s->bin_start_buffer);
		s->byte_tops = rep_buffer_address(b, s->byte_top_buffer);
		s->planes = s->plane_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, s->plane_buffer);
	}
}

/* A tree's handle is its number: its levels and its leaves are found from it. */
static uint32_t oblivious_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool side_by_side)
{
	(void)layout;
	(void)b;
	(void)side_by_side;
	return tree;
}

static uint32_t oblivious_root(RepLayout *layout, LBuilder *b, uint32_t tree)
{
	(void)layout;
	(void)tree;
	return lir_const_int(b, LTYPE_I64, 1);
}

/* The split of the level of the step being lowered, whatever the node. */
static RepNode oblivious_load_node(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	ObliviousState *s = layout->state;
	uint32_t first, at;
	RepNode n;
	(void)node;
	if (layout->step_level < 0)
		die("oblivious representation: a step of a walk not unrolled (RepLayout.step_level)");
	first = tree_start(s, b, s->levels, tree, s->depth, 0);
	at = lir_emit(b, LOP_ADD, LTYPE_I64, first, lir_const_int(b, LTYPE_I64, layout->step_level), LIR_NONE);
	if (layout->walk_keys)
		return rep_load_record(layout, b, s->keys, at);
	rep_decode_word(layout, b, lir_emit(b, LOP_LOAD, LTYPE_I32, s->words, at, LIR_NONE), &n);
	n.threshold = lir_emit(b, LOP_LOAD, layout->threshold_type, s->values, at, LIR_NONE);
	return n;
}

/*
 * The first `levels` steps of `lanes` rows at once: per level, one vector compare of the
 * rows' keys in the tile, and the rows' nodes doubled less the compare's mask (-1 where
 * the row goes right). A top taken in place (RepLayout.top_in_place) sets the level's
 * bit of 2^levels where the row goes right instead: one masked OR a level with AVX-512,
 * where the mask's conversion to a vector and two more instructions were slower there
 * (measured: docs/performance-notes.md, Symmetric trees' tops in place); taken ahead it
 * was not. The level's element and key load apart: the key's splat is then a
 * broadcast from memory, a load, where a splat of a register takes the shuffle port the
 * compares and the leaves' permutes wait on (measured: docs/performance-notes.md,
 * Symmetric trees: keys broadcast from memory).
 */
static uint32_t oblivious_top_nodes(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t levels, uint32_t lanes,
                                    uint32_t tile)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	ObliviousState *s = layout->state;
	uint32_t first = tree_start(s, b, s->levels, tree, s->depth, 0);
	uint32_t node = rep_vector_const(b, lanes, layout->top_in_place ? 1 << levels : 1);
	uint32_t minus = rep_vector_const(b, lanes, -1), zero = rep_vector_const(b, lanes, 0);
	for (uint32_t level = 0; level < levels; level++) {
		uint32_t at = lir_emit(b, LOP_ADD, LTYPE_I64, first, lir_const_int(b, LTYPE_I64, level), LIR_NONE);
		uint32_t pair = lir_emit(b, LOP_ADD, LTYPE_I64, at, at, LIR_NONE), element, key, x, right;
		element = lir_emit(b, LOP_LOAD, LTYPE_I32, s->tops, pair, LIR_NONE);
		element = lir_cast(b, LCAST_ZEXT, LTYPE_I64, element);
		pair = lir_emit(b, LOP_ADD, LTYPE_I64, pair, lir_const_int(b, LTYPE_I64, 1), LIR_NONE);
		key = lir_emit(b, LOP_LOAD, LTYPE_I32, s->tops, pair, LIR_NONE);
		key = lir_emit_vector(b, LOP_SPLAT, LTYPE_I32, (uint8_t)lanes, key, LIR_NONE, LIR_NONE);
		x = lir_emit_vector(b, LOP_LOAD, LTYPE_I32, (uint8_t)lanes, tile, element, LIR_NONE);
		right = rep_keys_go_right(layout, b, x, key);
		if (layout->top_in_place) {
			x = rep_vector_const(b, lanes, 1 << (levels - 1 - level));
			x = lir_emit_vector(b, LOP_OR, LTYPE_I32, (uint8_t)lanes, node, x, LIR_NONE);
			node = lir_emit_vector(b, LOP_SELECT, LTYPE_I32, (uint8_t)lanes, right, x, node);
			continue;
		}
		right = lir_emit_vector(b, LOP_SELECT, LTYPE_I32, (uint8_t)lanes, right, minus, zero);
		node = lir_emit_vector(b, LOP_ADD, LTYPE_I32, (uint8_t)lanes, node, node, LIR_NONE);
		node = lir_emit_vector(b, LOP_SUB, LTYPE_I32, (uint8_t)lanes, node, right, LIR_NONE);
	}
	return node;
}

/* The leaf at node of the complete tree, read from the tree's leaves (one address a tree, which its walks share). */
static uint32_t oblivious_leaf_value(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node)
{
	ObliviousState *s = layout->state;
	uint32_t base = tree_start(s, b, s->bases, tree, 1ll << s->depth, 1ll << s->depth);
	return lir_emit(b, LOP_LOAD, layout->leaf_type, lir_index(b, s->leaves, base, layout->leaf_type), node, LIR_NONE);
}

static uint32_t leaf_tables_most(const RepLayout *layout)
{
	bool floats = lir_type_size(layout->leaf_type) == 4;
	return layout->vector_tops == MTOPS_WIDE && floats ? OBLIVIOUS_LEAF_TABLES_WIDE : OBLIVIOUS_LEAF_TABLES;
}

/*
 * Where the first of tree number `tree`'s 2^levels leaves lies: in `leaves` (output
 * LIR_NONE), or its vectors' element `output` (i64) in `tables`.
 */
static uint32_t leaves_first(ObliviousState *s, LBuilder *b, uint32_t tree, uint32_t levels, uint32_t output)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	uint32_t first, shift;
	if (output == LIR_NONE) { /* leaf node 2^levels + j at bases[tree] + 2^levels + j */
		first = tree_start(s, b, s->bases, tree, 1ll << s->depth, 1ll << s->depth);
		return lir_emit(b, LOP_ADD, LTYPE_I64, first, lir_const_int(b, LTYPE_I64, 1ll << levels), LIR_NONE);
	}
	/* leaf j's element `output` at table_bases[tree] + output x 2^levels + j */
	first = lir_emit(b, LOP_LOAD, LTYPE_I32, s->table_bases, tree, LIR_NONE);
	first = lir_cast(b, LCAST_SEXT, LTYPE_I64, first);
	shift = lir_emit(b, LOP_SHL, LTYPE_I64, output, lir_const_int(b, LTYPE_I64, levels), LIR_NONE);
	return lir_emit(b, LOP_ADD, LTYPE_I64, first, shift, LIR_NONE);
}

/*
 * The leaves of `lanes` rows after a top of every level: one load of the tree's 2^levels
 * leaves in tables and permutes, where a walk node by node loads a leaf a row.
 */
static uint32_t oblivious_leaf_values(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t levels, uint32_t lanes,
                                      uint32_t nodes, uint32_t output)
{
	ObliviousState *s = layout->state;
	uint32_t first = leaves_first(s, b, tree, levels, output), index = nodes;
	/* Several tables read the index's bits below 2^levels alone, where nodes and the leaf's index agree. */
	RepIndex form = rep_tables(layout, layout->leaf_type, 1u << levels) > 1 ? REP_INDEX_LOW : REP_INDEX_WHOLE;
	if (form == REP_INDEX_WHOLE)
		index = lir_emit_vector(b, LOP_SUB, LTYPE_I32, (uint8_t)lanes, nodes, rep_vector_const(b, lanes, 1 << levels), LIR_NONE);
	return rep_table_gather(layout, b, layout->leaf_type, (uint8_t)lanes, output == LIR_NONE ? s->leaves : s->tables, first,
	                        index, 1u << levels, leaf_tables_most(layout), form);
}

static bool oblivious_leaf_tables(const RepLayout *layout, uint32_t levels, bool outputs)
{
	const ObliviousState *s = layout->state;
	uint32_t tables = rep_tables(layout, layout->leaf_type, 1u << levels);
	return (!outputs || s->table_buffer != LIR_NONE) && tables && tables <= leaf_tables_most(layout);
}

/*
 * The bins of TOP_LANES rows (RepLayout.byte_tops): a count of the feature's keys each row
 * goes right of, from -128. The counts stay i32 through the loop, a compare and a subtract
 * a key and vector: the least of each and 127 (which it never passes) keeps LLVM from
 * narrowing the loop's sums to bytes, which took three packs a key.
 */
static uint32_t oblivious_bins_of(RepLayout *layout, LBuilder *b, uint32_t feature, uint32_t keys)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	ObliviousState *s = layout->state;
	uint32_t count = lir_local_array(b, LTYPE_I32, TOP_LANES, LSPACE_PRIVATE), zero = lir_const_int(b, LTYPE_I64, 0), from, to,
	         j, key, right, one, sum, most;
	b->fn->insts[count].lanes = TOP_LANES;
	lir_emit_vector(b, LOP_STORE, LTYPE_VOID, TOP_LANES, count, zero, rep_vector_const(b, TOP_LANES, -128));
	from = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, s->bin_starts, feature, LIR_NONE));
	to = lir_emit(b, LOP_ADD, LTYPE_I64, feature, lir_const_int(b, LTYPE_I64, 1), LIR_NONE);
	to = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, s->bin_starts, to, LIR_NONE));
	j = lir_begin(b, LOP_FOR, from, to, lir_const_int(b, LTYPE_I64, 1));
	key = lir_emit(b, LOP_LOAD, LTYPE_I32, s->bin_keys, j, LIR_NONE);
	key = lir_emit_vector(b, LOP_SPLAT, LTYPE_I32, TOP_LANES, key, LIR_NONE, LIR_NONE);
	right = rep_keys_go_right(layout, b, keys, key);
	one = rep_vector_const(b, TOP_LANES, 1);
	right = lir_emit_vector(b, LOP_SELECT, LTYPE_I32, TOP_LANES, right, one, rep_vector_const(b, TOP_LANES, 0));
	sum = lir_emit_vector(b, LOP_LOAD, LTYPE_I32, TOP_LANES, count, zero, LIR_NONE);
	sum = lir_emit_vector(b, LOP_ADD, LTYPE_I32, TOP_LANES, sum, right, LIR_NONE);
	lir_emit_vector(b, LOP_STORE, LTYPE_VOID, TOP_LANES, count, zero, sum);
	lir_end(b);
	sum = lir_emit_vector(b, LOP_LOAD, LTYPE_I32, TOP_LANES, count, zero, LIR_NONE);
	most = rep_vector_const(b, TOP_LANES, 127);
	right = lir_cmp(b, LOP_ICMP, LCMP_SLT, sum, most);
	sum = lir_emit_vector(b, LOP_SELECT, LTYPE_I32, TOP_LANES, right, sum, most);
	return lir_cast(b, LCAST_TRUNC, LTYPE_I8, sum);
}

/* i8 lanes of BYTE_TOP_LANES, each v. */
static uint32_t bytes_const(LBuilder *b, int64_t v) { return rep_splat(b, LTYPE_I8, BYTE_TOP_LANES, v, 0.0); }

/*
 * The walks of tree number `tree` of BYTE_TOP_LANES rows from their bins: per level a
 * compare of the rows' bins of its feature with its count, the level's bit of the rows'
 * leaf indices set where they go right.
 */
static uint32_t oblivious_walk_bins(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t bins)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	ObliviousState *s = layout->state;
	uint32_t first = tree_start(s, b, s->levels, tree, s->depth, 0), node = bytes_const(b, 0), at, pair, element, count, x,
	         right, bit;
	for (uint32_t level = 0; level < s->depth; level++) {
		at = lir_emit(b, LOP_ADD, LTYPE_I64, first, lir_const_int(b, LTYPE_I64, level), LIR_NONE);
		pair = lir_emit(b, LOP_ADD, LTYPE_I64, at, at, LIR_NONE);
		element = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, s->byte_tops, pair, LIR_NONE));
		pair = lir_emit(b, LOP_ADD, LTYPE_I64, pair, lir_const_int(b, LTYPE_I64, 1), LIR_NONE);
		count = lir_emit(b, LOP_LOAD, LTYPE_I32, s->byte_tops, pair, LIR_NONE); /* (a broadcast of 4 bytes: one load) */
		count = lir_emit_vector(b, LOP_SPLAT, LTYPE_I32, BYTE_TOP_LANES / 4, count, LIR_NONE, LIR_NONE);
		count = lir_cast(b, LCAST_BITCAST, LTYPE_I8, count);
		b->fn->insts[count].lanes = BYTE_TOP_LANES;
		x = lir_emit_vector(b, LOP_LOAD, LTYPE_I8, BYTE_TOP_LANES, bins, element, LIR_NONE);
		right = lir_cmp(b, LOP_ICMP, LCMP_SGT, x, count);
		/* the level's bit set where the row goes right (doubling the index, LLVM shifts words and masks bytes) */
		bit = bytes_const(b, 1 << (s->depth - 1 - level));
		right = lir_emit_vector(b, LOP_SELECT, LTYPE_I8, BYTE_TOP_LANES, right, bit, bytes_const(b, 0));
		node = lir_emit_vector(b, LOP_OR, LTYPE_I8, BYTE_TOP_LANES, node, right, LIR_NONE);
	}
	return node;
}

/*
 * The leaves (output `output` of their vectors) of BYTE_TOP_LANES rows of leaf indices
 * `node` in tree number `tree`: their 4 bytes each from the tree's planes, and the floats
 * they make by two rounds of zips in halves (byte p of a row's leaf before byte p + 1; the
 * bins' order, RepLayout.byte_tops, gives the rows in order). Without planes (bins in
 * order), a leaf a row, loaded by its index byte.
 */
static uint32_t oblivious_bin_leaves(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node, uint32_t output)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	ObliviousState *s = layout->state;
	uint32_t plane = plane_bytes(s), at, x, base, planes[4], zips[4], leaves, zero = lir_const_int(b, LTYPE_I64, 0);
	if (layout->bins_in_order) {
		at = leaves_first(s, b, tree, s->depth, s->width > 1 ? lir_const_int(b, LTYPE_I64, output) : LIR_NONE);
		x = s->width > 1 ? s->tables : s->leaves;
		return lir_emit_vector(b, LOP_GATHER, LTYPE_F32, BYTE_TOP_LANES, x, at, node);
	}
	base = lir_emit(b, LOP_MUL, LTYPE_I64, tree, lir_const_int(b, LTYPE_I64, 4 * (int64_t)plane * s->width), LIR_NONE);
	if (output)
		base = lir_emit(b, LOP_ADD, LTYPE_I64, base, lir_const_int(b, LTYPE_I64, 4 * (int64_t)plane * output), LIR_NONE);
	for (uint32_t p = 0; p < 4; p++) {
		at = lir_emit(b, LOP_ADD, LTYPE_I64, base, lir_const_int(b, LTYPE_I64, p * (int64_t)plane), LIR_NONE);
		planes[p] = rep_gather_tables(b, LTYPE_I8, BYTE_TOP_LANES, s->planes, at, node, plane / 16, 16, REP_INDEX_WHOLE); /* (tables of pshufb) */
	}
	for (uint32_t h = 0; h < 2; h++) { /* in each half, its first 8 lanes (h 0) or last: bytes 0 and 2, 1 and 3 */
		zips[2 * h] = lir_emit_vector(b, LOP_ZIP, LTYPE_I8, BYTE_TOP_LANES, planes[0], planes[2], LIR_NONE);
		zips[2 * h + 1] = lir_emit_vector(b, LOP_ZIP, LTYPE_I8, BYTE_TOP_LANES, planes[1], planes[3], LIR_NONE);
		b->fn->insts[zips[2 * h]].sub = b->fn->insts[zips[2 * h + 1]].sub = (uint8_t)(2 + h);
	}
	leaves = lir_local_array(b, LTYPE_F32, BYTE_TOP_LANES, LSPACE_PRIVATE);
	b->fn->insts[leaves].lanes = BYTE_TOP_LANES;
	for (uint32_t k = 0; k < 4; k++) { /* rows 8k to 8k + 7 (bins_order): their 4 bytes in order */
		x = lir_emit_vector(b, LOP_ZIP, LTYPE_I8, BYTE_TOP_LANES, zips[k / 2 * 2], zips[k / 2 * 2 + 1], LIR_NONE);
		b->fn->insts[x].sub = (uint8_t)(2 + k % 2);
		x = lir_cast(b, LCAST_BITCAST, LTYPE_F32, x);
		b->fn->insts[x].lanes = BYTE_TOP_LANES / 4;
		lir_emit_vector(b, LOP_STORE, LTYPE_VOID, BYTE_TOP_LANES / 4, leaves, lir_const_int(b, LTYPE_I64, 8 * (int64_t)k), x);
	}
	return lir_emit_vector(b, LOP_LOAD, LTYPE_F32, BYTE_TOP_LANES, leaves, zero, LIR_NONE);
}

static void oblivious_prefetch_tree(RepLayout *layout, LBuilder *b, uint32_t tree, bool whole)
{
	ObliviousState *s = layout->state;
	uint32_t levels[] = {s->words, s->values}, keyed[] = {s->keys}, leaves[] = {s->leaves};
	LType types[] = {LTYPE_I32, layout->threshold_type}, keyed_types[] = {LTYPE_I64}, leaf_types[] = {layout->leaf_type};
	if (layout->walk_keys)
		rep_prefetch_slots(b, s->levels, tree, keyed, keyed_types, COUNT_OF(keyed), whole);
	else
		rep_prefetch_slots(b, s->levels, tree, levels, types, COUNT_OF(levels), whole);
	if (whole)
		rep_prefetch_slots(b, s->bases, tree, leaves, leaf_types, COUNT_OF(leaves), true);
}

const LRepresentation rep_oblivious = {
	.name = "oblivious",
	.lay_out = oblivious_lay_out,
	.free = rep_free_state,
	.begin_function = oblivious_begin_function,
	.tree = oblivious_tree,
	.root = oblivious_root,
	.load_node = oblivious_load_node,
	.step = rep_complete_step,
	.prefetch_tree = oblivious_prefetch_tree,
	.leaf_value = oblivious_leaf_value,
	.top_nodes = oblivious_top_nodes,
	.bins_of = oblivious_bins_of,
	.walk_bins = oblivious_walk_bins,
	.bin_leaves = oblivious_bin_leaves,
	.leaf_values = oblivious_leaf_values,
	.leaf_tables = oblivious_leaf_tables,
	.keys = true,
	.levels = true,
};
