/*
 * Leaf masks: the walks of TOP_LANES rows side by side of a tree of few leaves, every
 * split of the tree compared for all the rows at once (QuickScorer's exit leaf, over
 * the rows' tile of keys instead of a tree's top). Each row keeps a bit per leaf,
 * leaves numbered left to right, all set at first; a split the row goes right at clears
 * the leaves of its left subtree, and the row's leaf is its lowest bit left. A split is
 * then one vector load of its feature's keys for the rows, one compare and one masked
 * AND, in a loop over the tree's splits in memory: no chain of dependent loads, no
 * mispredicted branch, no lane waiting on the deepest, and code of one loop whatever
 * the trees. A tree pays for all its splits rather than one path, so this suits trees
 * with few leaves and long paths: those grown leaf-wise (LightGBM's 31 leaves, 6 to 20
 * deep), where walks node by node are chains of a dozen steps or more.
 *
 * The order of a tree's splits does not matter (the ANDs commute), so they come in four
 * groups, each a loop of its own:
 *   - the compares of keys. Those that send NaN's key in the tile (rep_nan_key) the
 *     other way than the split (NaN sent either way by the forest, its key
 *     REP_KEY_MISSING) read the same keys less one, which follow the tile's keys
 *     (RepLayout.mask_nan_keys: as columns of features past the forest's), where NaN's
 *     key wraps to the greatest, against their key less one, which decides every other
 *     key as before and NaN the other way;
 *   - IN splits (RepLayout.category_keys, the key a category) whose set is one word
 *     (categories below 32): that word shifted by each row's category;
 *   - the other IN splits whose set's words fit tables (rep_table_words): the word of
 *     each row's category picked from the set's first words by a permute or two (with
 *     RepLayout.set_features, by the word's index and shift in the copy's set columns);
 *   - the other IN splits: the same, each row's word loaded on its own.
 * An IN split sends NaN's category left where the split says (RepMasks.nan_sets).
 *
 * Per tree (i32 x 8): where each group's records start, the end of the last, its first
 * leaf in the leaf buffer, 1 where its rows walk so (at most LOWER_MASK_LEAVES leaves)
 * else 0, and 0. Per split (i32 x 4): its feature's element in the rows' tile of keys
 * (feature x RepLayout.key_lanes; its first set column's where it reads them); its key
 * (threshold_key, less one where it reads the keys less one; signed_bound's bound under
 * RepLayout.signed_masks), or an IN split's set offset; the mask that keeps every leaf
 * but its left subtree's; and for an IN split the category that goes left as NaN (-1:
 * none).
 * A split that reads the keys less one has its feature's element past the forest's
 * features' (feature + features). Leaves: their values (leaf_type) left to right, as
 * leaf_value gives them.
 */
#include "lower/lower.h"
#include "lower/rep.h"

#include <stdlib.h>
#include <string.h>

/* i32 per tree entry and per split record. */
#define TREE_FIELDS 8
#define SPLIT_FIELDS 4

/* Split groups, in the order of their loops. */
enum { GROUP_KEYS, GROUP_WORD_SETS, GROUP_SETS, GROUP_WIDE_SETS, GROUPS };
/* Fields of a tree's entry past the groups' starts and the last one's end. */
enum { TREE_LEAF0 = GROUPS + 1, TREE_FITS };
_Static_assert(TREE_FITS < TREE_FIELDS, "a tree's entry holds its fields");

bool rep_key_form(const RepLayout *layout, bool *t_below)
{
	uint8_t compares = layout->compares & (uint8_t)~(1u << HCMP_IN);
	*t_below = compares == 1u << HCMP_LT || compares == 1u << HCMP_LE;
	return *t_below || compares == 1u << HCMP_GT || compares == 1u << HCMP_GE || !compares;
}

/*
 * The key a split of threshold t keeps: rep_threshold_key's for the splits but IN (which
 * takes them all, IN splits too, into its one comparison), so that "goes right" is one
 * unsigned compare of keys.
 */
static uint32_t threshold_key(const RepLayout *layout, float t)
{
	uint8_t compares = layout->compares & (uint8_t)~(1u << HCMP_IN);
	return rep_key(t) + (compares == 1u << HCMP_GT) - (compares == 1u << HCMP_LT);
}

/* Whether a row of key x goes right at a split of key t (rep_key_form's decision, on constants). */
static bool key_right(bool t_below, uint32_t x, uint32_t t) { return t_below ? t < x : x < t; }

/*
 * Under RepLayout.signed_masks, a key split's record (fields 1 and 2: its key, the leaves it keeps) for one signed
 * compare of biased keys: rows of biased key x go left where x < bound (t_below: the biased key plus one) or
 * bound < x (the biased key less one). Where no key goes right (the greatest key, t_below; else the least), the
 * split keeps every leaf.
 */
static void signed_bound(bool t_below, int32_t *record)
{
	uint32_t biased = (uint32_t)record[1] ^ REP_KEY_BIAS;
	if (biased == (t_below ? (uint32_t)INT32_MAX : REP_KEY_BIAS)) /* the greatest key (t_below), the least */
		record[2] = -1;
	else
		record[1] = (int32_t)(t_below ? biased + 1 : biased - 1);
}

/* Where NaN goes at split n: right, where its rows' NaN reads as 0 where 0 goes. */
static bool nan_right(const RepLayout *layout, bool t_below, const HNode *n, uint32_t t)
{
	return layout->nan_reads_zero ? key_right(t_below, rep_key(0.0f), t) : !n->default_left;
}

/* The group of IN splits of set `set`, by its words but its last zeros: one, those the tables hold (rep_table_words), more. */
static uint8_t set_group(const HForest *f, const RepLayout *layout, uint32_t set)
{
	const HSet *hs = &f->sets[set];
	uint32_t words = hs->num_words;
	while (words && !f->set_words[hs->first + words - 1])
		words--;
	return words <= 1 ? GROUP_WORD_SETS : words <= rep_table_words(layout) ? GROUP_SETS : GROUP_WIDE_SETS;
}

/*
 * Tree t's split records into `records` (at most the tree's nodes), groups[i] record i's
 * group, and its leaves' values into leaves from *count on, in rep_depth_first's order.
 * False where a split fits no group. `order` is scratch of twice the tree's nodes.
 */
static bool number_tree(const HForest *f, const RepLayout *layout, uint32_t t, double *leaves, uint32_t *count,
                        int32_t *records, uint8_t *groups, uint32_t *num, uint32_t *order)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t *first = order + f->trees[t].num_nodes, tree_leaves = rep_depth_first(f, t, order, first);
	uint32_t nan = rep_nan_key(layout), nan_category = 32 * (layout->set_stride - 1) + 1; /* NaN's (rep_emit_category_key) */
	bool t_below;
	rep_key_form(layout, &t_below);
	for (uint32_t i = 0; i < 2 * tree_leaves - 1; i++) {
		const HNode *n = &nodes[order[i]];
		int32_t *record = records + SPLIT_FIELDS * *num;
		uint32_t key, lo, hi;
		bool right;
		if (n->feature == HIR_LEAF) {
			leaves[*count + first[order[i]]] = rep_slot_value(layout, f, n);
			continue;
		}
		/* the key of a threshold, or an IN split's set offset; the left subtree's leaves: up to the right one's first */
		key = n->compare == HCMP_IN ? (uint32_t)rep_slot_value(layout, f, n) : threshold_key(layout, (float)rep_slot_value(layout, f, n));
		right = nan_right(layout, t_below, n, key);
		lo = first[n->left];
		hi = first[n->right];
		record[0] = (int32_t)((uint32_t)n->feature * layout->key_lanes);
		record[1] = (int32_t)key;
		record[2] = (int32_t)~(uint32_t)(((1ull << hi) - 1) & ~((1ull << lo) - 1));
		record[3] = 0;
		if (n->compare == HCMP_IN) {
			groups[*num] = set_group(f, layout, n->set);
			record[3] = right || layout->nan_reads_zero ? -1 : (int32_t)nan_category; /* NaN's category goes left */
		} else if (key_right(t_below, nan, key) == right) {
			groups[*num] = GROUP_KEYS;
		} else if (key_right(t_below, nan - 1, key - 1) == right) {
			groups[*num] = GROUP_KEYS;
			record[0] = (int32_t)(((uint32_t)n->feature + f->num_features) * layout->key_lanes);
			record[1] = (int32_t)(key - 1);
		} else {
			return false;
		}
		if (n->compare != HCMP_IN && layout->signed_masks)
			signed_bound(t_below, record);
		(*num)++;
	}
	*count += tree_leaves;
	return true;
}

uint32_t rep_mask_key_columns(const RepLayout *layout)
{
	return (layout->mask_nan_keys && !layout->nan_columns ? 2 : 1) * layout->key_columns;
}

/*
 * RepLayout.set_features where they apply: the features IN splits of GROUP_SETS test, each two columns of the copy
 * past its keys, and such a split's record (splits, per tree from trees' entries) pointed at its feature's first.
 * The set columns take at most as many as the keys (the copy's stack), its elements stay within int32_t.
 */
static void lay_out_set_columns(const HForest *f, LModule *m, RepLayout *layout, const RepMasks *s, const int32_t *trees,
                                int32_t *splits)
{
	uint32_t base = rep_mask_key_columns(layout), count = 0, *column;
	int32_t *elements;
	if (!layout->signed_masks || s->nan_sets || !(s->groups >> GROUP_SETS & 1) || layout->set_stride > rep_table_words(layout))
		return;
	column = xmalloc(f->num_features * sizeof *column);
	memset(column, 0xff, f->num_features * sizeof *column);
	elements = xmalloc(f->num_features * sizeof *elements);
	for (uint32_t t = 0; t < f->num_trees; t++)
		for (int32_t i = trees[TREE_FIELDS * t + GROUP_SETS]; i < trees[TREE_FIELDS * t + GROUP_SETS + 1]; i++) {
			uint32_t feature = (uint32_t)splits[SPLIT_FIELDS * i] / layout->key_lanes;
			if (column[feature] == UINT32_MAX) {
				elements[count] = splits[SPLIT_FIELDS * i];
				column[feature] = count++;
			}
		}
	if (2ull * count > layout->key_columns || (base + 2ull * count) * layout->key_lanes > INT32_MAX) {
		free(column);
		free(elements);
		return;
	}
	for (uint32_t t = 0; t < f->num_trees; t++)
		for (int32_t i = trees[TREE_FIELDS * t + GROUP_SETS]; i < trees[TREE_FIELDS * t + GROUP_SETS + 1]; i++) {
			int32_t *record = splits + SPLIT_FIELDS * i;
			record[0] = (int32_t)((base + 2 * column[(uint32_t)record[0] / layout->key_lanes]) * layout->key_lanes);
		}
	free(column);
	layout->num_set_features = count;
	layout->set_features = lir_buffer_add(m, "masks.set_features", LTYPE_I32, count, elements);
}

/* Whether tree t's rows may walk by leaf masks: at most LOWER_MASK_LEAVES leaves. */
static bool few_leaves(const HForest *f, uint32_t t)
{
	const HNode *nodes = hir_tree_nodes(f, t);
	uint32_t leaves = 0;
	for (uint32_t i = 0; i < f->trees[t].num_nodes; i++)
		leaves += nodes[i].feature == HIR_LEAF;
	return leaves <= LOWER_MASK_LEAVES;
}

void rep_masks_lay_out(const HForest *f, LModule *m, RepLayout *layout, RepMasks *s)
{
	uint64_t num_splits = 0, max_nodes = 1;
	uint32_t count = 0, *order, fitting = 0;
	int32_t *trees, *splits, *records;
	uint8_t *groups;
	double *leaves;
	bool t_below;
	s->tree_buffer = s->split_buffer = s->leaf_buffer = LIR_NONE;
	layout->mask_nan_keys = s->nan_sets = false;
	layout->signed_masks = layout->vector_tops == MTOPS_PAIRS;
	layout->set_features = LIR_NONE;
	layout->num_set_features = 0;
	s->groups = 0;
	if (!layout->leaf_masks || !layout->keys || !layout->key_lanes || !rep_key_form(layout, &t_below) ||
	    2 * (uint64_t)f->num_features * layout->key_lanes > INT32_MAX) { /* (the keys less one past the features) */
		layout->leaf_masks = layout->signed_masks = false;
		return;
	}
	for (uint32_t t = 0; t < f->num_trees; t++) {
		if (few_leaves(f, t)) {
			num_splits += f->trees[t].num_nodes / 2;
			count += LOWER_MASK_LEAVES;
		}
		if (f->trees[t].num_nodes > max_nodes)
			max_nodes = f->trees[t].num_nodes;
	}
	trees = xcalloc((size_t)f->num_trees * TREE_FIELDS, sizeof *trees);
	splits = xcalloc(SPLIT_FIELDS * (num_splits ? num_splits : 1), sizeof *splits);
	records = xmalloc(SPLIT_FIELDS * max_nodes * sizeof *records);
	groups = xmalloc(max_nodes);
	leaves = xcalloc(count ? count : 1, sizeof *leaves);
	order = xmalloc(2 * max_nodes * sizeof *order);
	num_splits = 0;
	count = 0;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		int32_t *entry = trees + (size_t)t * TREE_FIELDS;
		uint32_t leaf0 = count, num = 0;
		if (!few_leaves(f, t) || !number_tree(f, layout, t, leaves, &count, records, groups, &num, order)) {
			count = leaf0;
			continue;
		}
		/* The records group by group, each group's start in the tree's entry. */
		for (uint8_t g = 0; g < GROUPS; g++) {
			entry[g] = (int32_t)num_splits;
			for (uint32_t i = 0; i < num; i++)
				if (groups[i] == g) {
					memcpy(splits + SPLIT_FIELDS * num_splits++, records + SPLIT_FIELDS * i, SPLIT_FIELDS * sizeof *records);
					s->nan_sets |= g >= GROUP_WORD_SETS && records[SPLIT_FIELDS * i + 3] != -1;
					layout->mask_nan_keys |= (uint32_t)records[SPLIT_FIELDS * i] >= f->num_features * layout->key_lanes &&
					                         g == GROUP_KEYS;
				}
			s->groups |= (uint8_t)(((uint64_t)entry[g] < num_splits) << g);
		}
		entry[GROUPS] = (int32_t)num_splits;
		entry[TREE_LEAF0] = (int32_t)leaf0;
		entry[TREE_FITS] = 1;
		fitting++;
	}
	free(order);
	free(records);
	free(groups);
	if (!fitting) {
		free(trees);
		free(splits);
		free(leaves);
		layout->leaf_masks = layout->mask_nan_keys = layout->signed_masks = false;
		return;
	}
	s->all = fitting == f->num_trees;
	lay_out_set_columns(f, m, layout, s, trees, splits);
	s->tree_buffer = lir_buffer_add(m, "masks.trees", LTYPE_I32, (uint64_t)f->num_trees * TREE_FIELDS, trees);
	s->split_buffer = lir_buffer_add(m, "masks.splits", LTYPE_I32, SPLIT_FIELDS * (num_splits ? num_splits : 1), splits);
	if (layout->leaf_type == LTYPE_F32) {
		float *narrow = xmalloc((count ? count : 1) * sizeof *narrow);
		for (uint32_t i = 0; i < count; i++)
			narrow[i] = (float)leaves[i];
		free(leaves);
		s->leaf_buffer = lir_buffer_add(m, "masks.leaves", LTYPE_F32, count ? count : 1, narrow);
	} else {
		s->leaf_buffer = lir_buffer_add(m, "masks.leaves", LTYPE_F64, count ? count : 1, leaves);
	}
}

void rep_masks_begin(RepMasks *s, LBuilder *b)
{
	bool none = s->tree_buffer == LIR_NONE;
	s->trees = none ? LIR_NONE : rep_buffer_address(b, s->tree_buffer);
	s->splits = none ? LIR_NONE : rep_buffer_address(b, s->split_buffer);
	s->leaves = none ? LIR_NONE : rep_buffer_address(b, s->leaf_buffer);
}

/* i32: field k of tree number `tree`'s entry (i64). */
static uint32_t tree_field(const RepMasks *s, LBuilder *b, uint32_t tree, int64_t k)
{
	uint32_t at = lir_emit(b, LOP_MUL, LTYPE_I64, tree, lir_const_int(b, LTYPE_I64, TREE_FIELDS), LIR_NONE);
	at = lir_emit(b, LOP_ADD, LTYPE_I64, at, lir_const_int(b, LTYPE_I64, k), LIR_NONE);
	return lir_emit(b, LOP_LOAD, LTYPE_I32, s->trees, at, LIR_NONE);
}

uint32_t rep_masks_apply(const RepMasks *s, LBuilder *b, uint32_t tree)
{
	if (s->all)
		return lir_const_int(b, LTYPE_I1, 1);
	return lir_cmp(b, LOP_ICMP, LCMP_NE, tree_field(s, b, tree, TREE_FITS), lir_const_int(b, LTYPE_I32, 0));
}

/* i32 of field k of split record i (i64), splat over n lanes where n > 1. */
static uint32_t split_field(const RepMasks *s, LBuilder *b, uint32_t i, int64_t k, uint8_t n)
{
	uint32_t at = lir_emit(b, LOP_MUL, LTYPE_I64, i, lir_const_int(b, LTYPE_I64, SPLIT_FIELDS), LIR_NONE), v;
	at = lir_emit(b, LOP_ADD, LTYPE_I64, at, lir_const_int(b, LTYPE_I64, k), LIR_NONE);
	v = lir_emit(b, LOP_LOAD, LTYPE_I32, s->splits, at, LIR_NONE);
	return n > 1 ? lir_emit_vector(b, LOP_SPLAT, LTYPE_I32, n, v, LIR_NONE, LIR_NONE) : v;
}

/*
 * i1 per lane: where the rows of category keys c (i32 lanes) go left at IN split i, whose set starts at `offset`
 * (their category's bit is set, or it is NaN's and NaN goes left). The set's words are its first `span` (set_group:
 * 1, or the tables' rep_table_words, where categories past them are in no such set), or all (span 0, each row's word
 * loaded on its own). The category's bit is tested by its sign once shifted there, which x86 reads whole (AVX2: a
 * shift or a compare of the sign; AVX-512: a compare into a mask register): no AND with 1 and negation. Under
 * RepLayout.signed_masks c is biased: a set of one word shifts by its low bits and bounds it signed, and so does a
 * set in tables, whose GATHER reads the word's index by its low bits, which the bias (2^31) leaves alone; sets in
 * memory take it unbiased. Where `places` is not LIR_NONE, c and places are a set split's set columns
 * (RepLayout.set_features): the word's index, the shift of the category's bit.
 */
static uint32_t category_left(const RepLayout *layout, const RepMasks *s, LBuilder *b, uint32_t i, uint32_t c,
                              uint32_t offset, uint8_t n, uint32_t span, uint32_t places)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	uint32_t word, shift, bit, zero = rep_vector_const(b, n, 0), left, nan, inside = LIR_NONE;
	bool biased = layout->signed_masks;
	if (places != LIR_NONE) { /* c and places: the copy's set columns (RepLayout.set_features) */
		word = rep_set_words(layout, b, n, offset, c, span, REP_INDEX_SIGN);
		bit = lir_emit_vector(b, LOP_SHL, LTYPE_I32, n, word, places, LIR_NONE);
		return lir_cmp(b, LOP_ICMP, LCMP_SLT, bit, zero);
	}
	if (biased && (!span || s->nan_sets)) { /* (a span past 1 is in tables: set_group, rep_table_words) */
		c = lir_emit_vector(b, LOP_ADD, LTYPE_I32, n, c, rep_vector_const(b, n, (int32_t)REP_KEY_BIAS), LIR_NONE);
		biased = false;
	}
	if (span && layout->set_stride > span) /* c's word may lie past the span */
		inside = biased ? lir_cmp(b, LOP_ICMP, LCMP_SLT, c, rep_vector_const(b, n, (int32_t)(32 * span ^ REP_KEY_BIAS)))
		                : lir_cmp(b, LOP_ICMP, LCMP_ULT, c, rep_vector_const(b, n, (int32_t)(32 * span)));
	if (span == 1) {
		word = lir_emit(b, LOP_LOAD, LTYPE_I32, layout->sets, offset, LIR_NONE);
		word = lir_emit_vector(b, LOP_SPLAT, LTYPE_I32, n, word, LIR_NONE, LIR_NONE);
	} else {
		word = lir_emit_vector(b, LOP_ASHR, LTYPE_I32, n, c, rep_vector_const(b, n, 5), LIR_NONE);
		if (inside != LIR_NONE)
			word = lir_emit_vector(b, LOP_SELECT, LTYPE_I32, n, inside, word, zero);
		word = rep_set_words(layout, b, n, offset, word, span, biased ? REP_INDEX_LOW : REP_INDEX_WHOLE);
	}
	/* The category's bit to the sign: the word shifted left by 31 less its place (~c & 31, one AND NOT). */
	shift = lir_emit_vector(b, LOP_SUB, LTYPE_I32, n, rep_vector_const(b, n, -1), c, LIR_NONE);
	shift = lir_emit_vector(b, LOP_AND, LTYPE_I32, n, shift, rep_vector_const(b, n, 31), LIR_NONE);
	bit = lir_emit_vector(b, LOP_SHL, LTYPE_I32, n, word, shift, LIR_NONE);
	if (inside != LIR_NONE)
		bit = lir_emit_vector(b, LOP_SELECT, LTYPE_I32, n, inside, bit, zero);
	left = lir_cmp(b, LOP_ICMP, LCMP_SLT, bit, zero);
	if (!s->nan_sets)
		return left;
	nan = lir_cmp(b, LOP_ICMP, LCMP_EQ, c, split_field(s, b, i, 3, n)); /* the category that goes left as NaN */
	return lir_emit_vector(b, LOP_OR, LTYPE_I1, n, nan, left, LIR_NONE);
}

uint32_t rep_masks_walk(const RepMasks *s, const RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t lanes,
                        uint32_t tile)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	uint8_t n = (uint8_t)lanes;
	uint32_t zero = lir_const_int(b, LTYPE_I64, 0), cell, candidates, lowest, exponent, leaf0;
	bool t_below;
	rep_key_form(layout, &t_below);
	cell = lir_local_array(b, LTYPE_I32, lanes, LSPACE_PRIVATE);
	b->fn->insts[cell].lanes = n;
	lir_emit_vector(b, LOP_STORE, LTYPE_VOID, n, cell, zero, rep_vector_const(b, lanes, -1));
	for (int64_t g = 0; g < GROUPS; g++) {
		uint32_t first, end, i, element, key, x, right = LIR_NONE, left = LIR_NONE, keep, old, kept;
		if (!(s->groups >> g & 1) || (g >= GROUP_WORD_SETS && !layout->category_keys))
			continue;
		first = lir_cast(b, LCAST_SEXT, LTYPE_I64, tree_field(s, b, tree, g));
		end = lir_cast(b, LCAST_SEXT, LTYPE_I64, tree_field(s, b, tree, g + 1));
		i = lir_begin(b, LOP_FOR, first, end, lir_const_int(b, LTYPE_I64, 1));
		element = split_field(s, b, i, 0, 1);
		element = lir_cast(b, LCAST_ZEXT, LTYPE_I64, element);
		key = split_field(s, b, i, 1, 1); /* (splat, a broadcast of it from memory) */
		x = lir_emit_vector(b, LOP_LOAD, LTYPE_I32, n, tile, element, LIR_NONE);
		if (g >= GROUP_WORD_SETS) {
			uint32_t places = LIR_NONE;
			if (g == GROUP_SETS && layout->num_set_features) {
				places = lir_emit(b, LOP_ADD, LTYPE_I64, element, lir_const_int(b, LTYPE_I64, layout->key_lanes), LIR_NONE);
				places = lir_emit_vector(b, LOP_LOAD, LTYPE_I32, n, tile, places, LIR_NONE);
			}
			key = lir_cast(b, LCAST_ZEXT, LTYPE_I64, key);
			left = category_left(layout, s, b, i, x, key, n, g == GROUP_WORD_SETS ? 1 : g == GROUP_WIDE_SETS ? 0
			                     : layout->set_stride < rep_table_words(layout) ? layout->set_stride : rep_table_words(layout),
			                     places);
		} else {
			key = lir_emit_vector(b, LOP_SPLAT, LTYPE_I32, n, key, LIR_NONE, LIR_NONE);
			if (layout->signed_masks) /* signed_bound's compare, for the leaves a left turn keeps: all */
				left = t_below ? lir_cmp(b, LOP_ICMP, LCMP_SLT, x, key) : lir_cmp(b, LOP_ICMP, LCMP_SLT, key, x);
			else
				right = rep_keys_go_right(layout, b, x, key);
		}
		keep = split_field(s, b, i, 2, n);
		old = lir_emit_vector(b, LOP_LOAD, LTYPE_I32, n, cell, zero, LIR_NONE);
		kept = lir_emit_vector(b, LOP_AND, LTYPE_I32, n, old, keep, LIR_NONE); /* the leaves a right turn keeps */
		kept = right != LIR_NONE ? lir_emit_vector(b, LOP_SELECT, LTYPE_I32, n, right, kept, old)
		                         : lir_emit_vector(b, LOP_SELECT, LTYPE_I32, n, left, old, kept);
		lir_emit_vector(b, LOP_STORE, LTYPE_VOID, n, cell, zero, kept);
		lir_end(b);
	}
	candidates = lir_emit_vector(b, LOP_LOAD, LTYPE_I32, n, cell, zero, LIR_NONE);
	/* The lowest candidate j by the exponent of the float of its bit alone (exact; the sign's bit off for j = 31). */
	lowest = lir_emit_vector(b, LOP_SUB, LTYPE_I32, n, rep_vector_const(b, lanes, 0), candidates, LIR_NONE);
	lowest = lir_emit_vector(b, LOP_AND, LTYPE_I32, n, candidates, lowest, LIR_NONE);
	exponent = lir_cast(b, LCAST_SITOFP, LTYPE_F32, lowest);
	exponent = lir_cast(b, LCAST_BITCAST, LTYPE_I32, exponent);
	exponent = lir_emit_vector(b, LOP_ASHR, LTYPE_I32, n, exponent, rep_vector_const(b, lanes, 23), LIR_NONE);
	exponent = lir_emit_vector(b, LOP_AND, LTYPE_I32, n, exponent, rep_vector_const(b, lanes, 0xff), LIR_NONE);
	exponent = lir_emit_vector(b, LOP_SUB, LTYPE_I32, n, exponent, rep_vector_const(b, lanes, 127), LIR_NONE);
	leaf0 = lir_cast(b, LCAST_SEXT, LTYPE_I64, tree_field(s, b, tree, TREE_LEAF0));
	return lir_emit_vector(b, LOP_GATHER, layout->leaf_type, n, s->leaves, leaf0, exponent);
}
