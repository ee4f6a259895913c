/* The table of representations. Adding one: write lower/rep_NAME.c and list it here. */
#include "lower/cost.h"
#include "lower/lower.h"
#include "lower/rep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const LRepresentation *const representations[] = {
	&rep_array,
	&rep_sparse,
	&rep_reorg,
	&rep_code,
	&rep_tiled,
	&rep_tiled_array,
	&rep_bitvector,
	&rep_oblivious,
	&rep_branchfree,
	&rep_breadth_first,
	&rep_layered,
};

const char *lower_representation_name(size_t i) { return i < COUNT_OF(representations) ? representations[i]->name : NULL; }

/* The representations' names, ", " between them, in buf (n bytes); returns buf. */
static const char *representation_names(char *buf, size_t n)
{
	return names_join(buf, n, lower_representation_name, ", ", NULL);
}

/* The LREP_* bits of r (0 for NULL). */
static unsigned traits_of(const LRepresentation *r)
{
	return !r ? 0 : (r->walk ? LREP_CODE : 0) | (r->tiles ? LREP_TILES : 0) | (r->walk_trees ? LREP_BLOCKS : 0) |
	                (r->levels ? LREP_LEVELS : 0) | (r->named_only ? LREP_NAMED : 0);
}

unsigned lower_representation_traits(uint32_t i) { return traits_of(i < COUNT_OF(representations) ? representations[i] : NULL); }

unsigned lower_representation_named_traits(const char *name) { return traits_of(name ? rep_find(name) : NULL); }

const LRepresentation *rep_find(const char *name)
{
	size_t i = lower_representation_index(name);
	return i < COUNT_OF(representations) ? representations[i] : NULL;
}

const LRepresentation *rep_choose(const HForest *f)
{
	/* array spends 2^(depth+1) - 1 slots on a tree; take it unless that wastes most of them (cost_nodes_affordable). */
	uint64_t slots = 0;
	uint32_t deepest = 0;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint32_t depth = hir_tree_depth(f, t);
		if (depth > 24)
			return &rep_sparse;
		slots += (2ull << depth) - 1;
		deepest = depth > deepest ? depth : deepest;
	}
	return cost_nodes_affordable(slots, f->num_nodes, deepest) ? &rep_array : &rep_sparse;
}

const LRepresentation *rep_for(const HForest *f, const char *representation, Error *e)
{
	const HSchedule *s = &f->schedule;
	const LRepresentation *rep;
	char where[300], names[200];
	if (s->representation[0]) { /* representation(name): the schedule's choice, unless the caller's differs */
		hir_schedule_pos(s, s->representation_at, where, sizeof where);
		if (representation && strcmp(representation, s->representation))
			return error_set(e, "%srepresentation(%s): the representation asked for is %s", where, s->representation,
			                 representation), NULL;
		representation = s->representation;
		if (!rep_find(representation))
			return error_set(e, "%srepresentation(%s): unknown representation (expected one of %s)", where, representation,
			                 representation_names(names, sizeof names)), NULL;
	}
	if (f->tile_size && !representation)
		representation = "tiled"; /* tileTrees: the representation that walks tiles */
	rep = representation ? rep_find(representation) : rep_choose(f);
	if (!rep)
		return error_set(e, "unknown representation '%s' (expected one of %s)", representation,
		                 representation_names(names, sizeof names)), NULL;
	if (f->tile_size && !rep->tiles) {
		hir_schedule_pos(s, s->tile_size_at, where, sizeof where);
		return error_set(e, "%stileTrees(%s, %u): the %s representation walks a split a step; tiles need "
		                    "representation(tiled) or representation(tiled_array)",
		                 where, s->tiling == HTILING_PROBABILITY ? "probability" : "uniform", f->tile_size, rep->name), NULL;
	}
	return rep;
}

/* The missing rule of split n. */
static RepMissing split_missing(const HNode *n)
{
	return (RepMissing)((n->missing == HMISSING_ZERO ? REP_MISSING_ZERO_RIGHT : REP_MISSING_RIGHT) | (n->default_left ? 1 : 0));
}

int32_t rep_split_word(const HNode *n)
{
	return (int32_t)((uint32_t)split_missing(n) << REP_WORD_MISSING_SHIFT |
	                 (n->compare & REP_WORD_COMPARE_MASK) << REP_WORD_COMPARE_SHIFT | (uint32_t)n->feature);
}

/*
 * Where some tree is wider than 1, every leaf is a vector: lay the forest's leaf values
 * out with the values of width-1 leaves appended, and note each leaf's first index.
 */
static void lay_out_vectors(const HForest *f, LModule *m, RepLayout *layout)
{
	LType type = layout->leaf_type;
	uint64_t total = f->num_leaf_values;
	void *values;
	layout->leaf_vectors = xcalloc(f->num_nodes + 1, sizeof *layout->leaf_vectors);
	for (uint32_t t = 0; t < f->num_trees; t++)
		for (uint32_t i = 0; i < f->trees[t].num_nodes; i++) {
			const HNode *n = &hir_tree_nodes(f, t)[i];
			if (n->feature == HIR_LEAF)
				layout->leaf_vectors[n - f->nodes] = f->trees[t].width > 1 ? n->vector : total++;
		}
	values = xcalloc(total ? total : 1, lir_type_size(type));
	for (uint64_t i = 0; i < f->num_leaf_values; i++)
		rep_store_value(values, type, i, f->leaf_values[i]);
	for (uint64_t i = 0; i < f->num_nodes; i++)
		if (f->nodes[i].feature == HIR_LEAF && layout->leaf_vectors[i] >= f->num_leaf_values)
			rep_store_value(values, type, layout->leaf_vectors[i], f->nodes[i].value);
	layout->vector_buffer = lir_buffer_add(m, "leaf_vectors", type, total, values);
}

/* Whether some tree of f adds to several outputs. */
static bool has_vectors(const HForest *f)
{
	for (uint32_t t = 0; t < f->num_trees; t++)
		if (f->trees[t].width > 1)
			return true;
	return false;
}

/* Whether the splits' one comparison decides a missing value as their one rule says (RepLayout.missing_by_compare). */
static bool missing_by_compare(uint8_t compares, uint8_t rules)
{
	bool one_compare = compares && !(compares & (compares - 1u));
	if (rules != 1u << REP_MISSING_LEFT && rules != 1u << REP_MISSING_RIGHT)
		return false;
	return one_compare && compares & lower_nan_deciding_forms(rules == 1u << REP_MISSING_LEFT);
}

/* Above every other key where the compare sends NaN the rule's way from there (> and <=). */
uint32_t rep_nan_key(const RepLayout *layout)
{
	if (layout->nan_reads_zero)
		return rep_key(0.0f);
	return layout->missing_by_compare && layout->compares & (1u << HCMP_GT | 1u << HCMP_LE) ? ~0u : REP_KEY_MISSING;
}

bool rep_lay_out_forest(const HForest *f, LModule *m, const char *rep_name, RepLayout *layout, Error *e)
{
	/* Set offsets and vector indices live in value slots: exact in a float up to 2^24, in a double up to 2^53. */
	uint64_t limit;
	bool sets, vectors = has_vectors(f);
	if (f->num_features >= REP_MAX_FEATURES)
		return error_set(e, "%s representation: %u features, at most %u fit", rep_name, f->num_features, REP_MAX_FEATURES - 1);
	layout->threshold_type = rep_value_type(f);
	layout->leaf_type = f->leaf_type == HTYPE_F32 ? LTYPE_F32 : LTYPE_F64;
	layout->category_rule = f->category_rule;
	layout->compares = layout->missing_rules = 0;
	layout->feature_mask = f->num_features <= 1u << 8 ? 0xffu : f->num_features <= 1u << 16 ? 0xffffu : REP_WORD_FEATURE_MASK;
	layout->nan_columns = false;
	layout->key_columns = f->num_features;
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		const HNode *n = &f->nodes[i];
		if (n->feature == HIR_LEAF)
			continue;
		layout->compares |= (uint8_t)(1u << n->compare);
		layout->missing_rules |= (uint8_t)(1u << split_missing(n));
		/* NaN goes where 0 goes, and only NaN is missing. */
		layout->nan_reads_zero = layout->nan_reads_zero && n->missing == HMISSING_NAN && n->default_left == hir_zero_goes_left(f, n);
	}
	layout->missing_by_compare = missing_by_compare(layout->compares, layout->missing_rules);
	/* Rows are scanned and copied only where that spares the steps a test: not where the compare decides NaN already. */
	layout->nan_reads_zero = layout->nan_reads_zero && layout->compares && !layout->missing_by_compare;
	layout->set_buffer = layout->vector_buffer = LIR_NONE;
	layout->set_stride = 0;
	layout->set_offsets = layout->leaf_vectors = NULL;
	limit = layout->threshold_type == LTYPE_F32 ? 1ull << 24 : 1ull << 53;
	sets = layout->compares & 1u << HCMP_IN;
	if (sets && f->num_set_words + f->num_sets >= limit)
		return error_set(e, "%s representation: the category sets take %llu words, at most %llu fit", rep_name,
		                 (unsigned long long)(f->num_set_words + f->num_sets), (unsigned long long)limit - 1);
	if (vectors && f->num_leaf_values + f->num_nodes >= limit)
		return error_set(e, "%s representation: the leaf vectors take up to %llu values, at most %llu fit", rep_name,
		                 (unsigned long long)(f->num_leaf_values + f->num_nodes), (unsigned long long)limit - 1);
	layout->category_keys = sets && layout->keys && hir_categories_alone(f);
	if (sets)
		rep_lay_out_sets(f, m, layout, limit);
	if (vectors)
		lay_out_vectors(f, m, layout);
	return true;
}

void rep_begin_forest(RepLayout *layout, LBuilder *b)
{
	layout->sets = layout->set_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, layout->set_buffer);
	layout->vectors = layout->vector_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, layout->vector_buffer);
}

double rep_slot_value(const RepLayout *layout, const HForest *f, const HNode *n)
{
	if (n->feature == HIR_LEAF)
		return layout->leaf_vectors ? (double)layout->leaf_vectors[n - f->nodes] : n->value;
	return n->compare == HCMP_IN ? (double)layout->set_offsets[n->set] : n->value;
}

uint32_t rep_buffer_address(LBuilder *b, uint32_t index)
{
	uint32_t v = lir_emit(b, LOP_BUFFER, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
	b->fn->insts[v].imm = index;
	return v;
}

void rep_prefetch_slots(LBuilder *b, uint32_t starts, uint32_t tree, const uint32_t *buffers, const LType *types, uint32_t n,
                        bool whole)
{
	uint32_t one = lir_const_int(b, LTYPE_I64, 1), next = lir_emit(b, LOP_ADD, LTYPE_I64, tree, one, LIR_NONE);
	uint32_t first = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, starts, tree, LIR_NONE)), end;
	if (!whole) {
		for (uint32_t i = 0; i < n; i++)
			lir_emit(b, LOP_PREFETCH, types[i], buffers[i], first, LIR_NONE);
		return;
	}
	end = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, starts, next, LIR_NONE));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t line = lir_const_int(b, LTYPE_I64, (int64_t)(REP_CACHE_LINE / lir_type_size(types[i])));
		uint32_t slot = lir_begin(b, LOP_FOR, first, end, line);
		lir_emit(b, LOP_PREFETCH, types[i], buffers[i], slot, LIR_NONE);
		lir_end(b);
	}
}

void rep_decode_word(const RepLayout *layout, LBuilder *b, uint32_t word, RepNode *n)
{
	/* A word of a key copy for tiles holds feature * key_lanes (rep_tile_word): the whole field, not feature_mask's bits. */
	uint32_t feature_mask = layout->walk_keys && layout->tile_words ? REP_WORD_FEATURE_MASK : layout->feature_mask;
	bool stays = layout->walk_keys && layout->leaves_stay; /* a leaf's record steps to itself: no test */
	uint32_t zero = stays ? LIR_NONE : lir_const_int(b, LTYPE_I32, 0), mask = lir_const_int(b, LTYPE_I32, (int64_t)feature_mask);
	/* a word of the key copy (rep_key_word) that holds nothing but the feature */
	bool bare = layout->walk_keys && rep_bare_key_words(layout) && !layout->child_shift && !rep_walks_words(layout);
	n->is_leaf = stays ? LIR_NONE : lir_cmp(b, LOP_ICMP, LCMP_SLT, word, zero);
	n->feature = lir_cast(b, LCAST_ZEXT, LTYPE_I64, bare ? word : lir_emit(b, LOP_AND, LTYPE_I32, word, mask, LIR_NONE));
	n->word = word;
	n->record = LIR_NONE;
}

/* i1: whether bits `mask` of n's word are not all clear. */
static uint32_t word_bits_set(LBuilder *b, const RepNode *n, uint32_t mask)
{
	uint32_t bits = lir_emit(b, LOP_AND, LTYPE_I32, n->word, lir_const_int(b, LTYPE_I32, mask), LIR_NONE);
	return lir_cmp(b, LOP_ICMP, LCMP_NE, bits, lir_const_int(b, LTYPE_I32, 0));
}

static uint32_t and1(LBuilder *b, uint32_t x, uint32_t y) { return lir_emit(b, LOP_AND, LTYPE_I1, x, y, LIR_NONE); }
static uint32_t not1(LBuilder *b, uint32_t x)
{
	uint32_t no = lir_const_int(b, LTYPE_I1, 0), yes = lir_const_int(b, LTYPE_I1, 1);
	return lir_emit(b, LOP_SELECT, LTYPE_I1, x, no, yes);
}

/*
 * i1: whether x (not missing) is in the category set of IN split n, x's category
 * following the layout's rule. is_in says whether n is an IN split at all: the slot of
 * any other node (or a leaf, where leaf_stays) holds no set offset, so its loads are
 * steered to offset 0, which every set buffer has. Padded sets bound the category by
 * their stride and need no count.
 */
static uint32_t category_in(const RepLayout *layout, LBuilder *b, const RepNode *n, uint32_t x, uint32_t is_in)
{
	/* Emitted one instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	double end = layout->set_stride ? 32.0 * layout->set_stride : 2147483648.0;
	uint32_t zero = lir_const_float(b, layout->threshold_type, 0.0), zero64 = lir_const_int(b, LTYPE_I64, 0), ok, c,
	         offset, count, word_index, slot, word, shift, bit;
	ok = rep_category_of(layout, b, x, end, zero, &c);
	offset = lir_cast(b, LCAST_FPTOSI, LTYPE_I64, n->threshold);
	offset = lir_emit(b, LOP_SELECT, LTYPE_I64, is_in, offset, zero64);
	word_index = lir_emit(b, LOP_ASHR, LTYPE_I64, c, lir_const_int(b, LTYPE_I64, 5), LIR_NONE);
	if (layout->set_stride) {
		slot = lir_emit(b, LOP_ADD, LTYPE_I64, offset, word_index, LIR_NONE);
	} else {
		count = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, layout->sets, offset, LIR_NONE));
		ok = and1(b, ok, lir_cmp(b, LOP_ICMP, LCMP_SLT, word_index, count));
		slot = lir_emit(b, LOP_ADD, LTYPE_I64, word_index, lir_const_int(b, LTYPE_I64, 1), LIR_NONE);
		slot = lir_emit(b, LOP_ADD, LTYPE_I64, offset, slot, LIR_NONE);
		slot = lir_emit(b, LOP_SELECT, LTYPE_I64, ok, slot, offset);
	}
	word = lir_emit(b, LOP_LOAD, LTYPE_I32, layout->sets, slot, LIR_NONE);
	shift = lir_emit(b, LOP_AND, LTYPE_I64, c, lir_const_int(b, LTYPE_I64, 31), LIR_NONE);
	shift = lir_cast(b, LCAST_TRUNC, LTYPE_I32, shift);
	bit = lir_emit(b, LOP_SHL, LTYPE_I32, lir_const_int(b, LTYPE_I32, 1), shift, LIR_NONE);
	bit = lir_emit(b, LOP_AND, LTYPE_I32, word, bit, LIR_NONE);
	return and1(b, ok, lir_cmp(b, LOP_ICMP, LCMP_NE, bit, lir_const_int(b, LTYPE_I32, 0)));
}

void rep_tests_missing(RepLayout *layout) { layout->missing_by_compare = layout->nan_reads_zero = false; }

/*
 * Per ordering kind, the carry form of a step's decision (compare_decision): its float
 * compare (LCMP_EQ, 0: none) and whether it holds going left; keys: whether t is the
 * lesser side.
 */
static const struct CarryForm {
	LCmp compare;
	bool left, t_below;
} carry_form[] = {
	[HCMP_LT] = {LCMP_ULT_F, true, true},   /* left: x < t, and NaN, which goes left where it comes; keys: right, x > key - 1 */
	[HCMP_LE] = {LCMP_UGT_F, false, true},  /* right: x > t, and NaN, which goes right or never comes */
	[HCMP_GT] = {LCMP_UGT_F, true, false},  /* keys: right, x < key + 1 */
	[HCMP_GE] = {LCMP_ULT_F, false, false},
};

/* The carry form of a forest whose splits all make one comparison that has one, else NULL. */
static const struct CarryForm *one_carry_form(const RepLayout *layout)
{
	for (uint32_t k = 0; k < COUNT_OF(carry_form); k++)
		if (layout->compares == 1u << k && carry_form[k].compare)
			return &carry_form[k];
	return NULL;
}

uint32_t rep_threshold_key(const RepLayout *layout, float t)
{
	/* One kind, < or >: the key before or after, so that every kind's "goes right" is an unsigned less-than (compare_decision). */
	if (layout->compares == 1u << HCMP_LT)
		return rep_key(t) - 1;
	if (layout->compares == 1u << HCMP_GT)
		return rep_key(t) + 1;
	return rep_key(t);
}

uint32_t rep_key(float x)
{
	uint32_t bits, magnitude;
	memcpy(&bits, &x, sizeof bits);
	magnitude = bits & 0x7fffffffu;
	if (magnitude > 0x7f800000u)
		return REP_KEY_MISSING;
	return (bits >> 31 ? 0u - magnitude : magnitude) + 0x80000000u;
}

static uint32_t emit_key(const RepLayout *layout, LBuilder *b, uint32_t bits, uint32_t nan)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	uint32_t magnitude = lir_emit(b, LOP_AND, LTYPE_I32, bits, lir_const_int(b, LTYPE_I32, 0x7fffffff), LIR_NONE);
	uint32_t negative = lir_cmp(b, LOP_ICMP, LCMP_SLT, bits, lir_const_int(b, LTYPE_I32, 0));
	uint32_t negated = lir_emit(b, LOP_SUB, LTYPE_I32, lir_const_int(b, LTYPE_I32, 0), magnitude, LIR_NONE);
	uint32_t key = lir_emit(b, LOP_SELECT, LTYPE_I32, negative, negated, magnitude);
	key = lir_emit(b, LOP_ADD, LTYPE_I32, key, lir_const_int(b, LTYPE_I32, INT32_MIN), LIR_NONE);
	if (nan != LIR_NONE)
		key = lir_emit(b, LOP_SELECT, LTYPE_I32, nan, lir_const_int(b, LTYPE_I32, (int32_t)rep_nan_key(layout)), key);
	return key;
}

uint32_t rep_emit_row_key(const RepLayout *layout, LBuilder *b, LType type, uint32_t bits, uint32_t nan)
{
	/* The low half: where the row's key is the lesser side (x < key), one that ties must not compare below the record. */
	const struct CarryForm *form = one_carry_form(layout);
	bool x_below = form && !form->t_below;
	uint32_t key = emit_key(layout, b, bits, nan), shift;
	if (type == LTYPE_I32)
		return key;
	key = lir_cast(b, LCAST_ZEXT, LTYPE_I64, key);
	shift = lir_const_int(b, LTYPE_I64, 32);
	key = lir_emit(b, LOP_SHL, LTYPE_I64, key, shift, LIR_NONE);
	return x_below ? lir_emit(b, LOP_OR, LTYPE_I64, key, lir_const_int(b, LTYPE_I64, 0xffffffff), LIR_NONE) : key;
}

bool rep_keys_fit(const RepLayout *layout)
{
	return layout->threshold_type == LTYPE_F32 && (!(layout->compares & 1u << HCMP_IN) || layout->category_keys) &&
	       !(layout->missing_rules & (1u << REP_MISSING_ZERO_RIGHT | 1u << REP_MISSING_ZERO_LEFT));
}

bool rep_float_thresholds(const HForest *f, const RepLayout *layout)
{
	return f->threshold_type == HTYPE_F32 && !(layout->compares & 1u << HCMP_IN && f->num_set_words + f->num_sets >= 1u << 24);
}

bool rep_keys_stay(const RepLayout *layout)
{
	return one_carry_form(layout) &&
	       ((rep_bare_key_words(layout) && (layout->missing_by_compare || layout->nan_reads_zero)) || layout->nan_columns);
}

int32_t *rep_key_records(const RepLayout *layout, const int32_t *words, const float *thresholds, uint64_t n)
{
	int32_t *records = xmalloc(2 * (n ? n : 1) * sizeof *records);
	/* A leaf that stays reads feature 0 against the key that sends no row right: all ones where t < x goes right, else 0. */
	int32_t leaf_word = layout->leaves_stay ? 0 : -1, leaf_key = layout->leaves_stay && one_carry_form(layout)->t_below ? -1 : 0;
	for (uint64_t i = 0; i < n; i++) {
		records[2 * i] = words[i] == -1 ? leaf_word : (int32_t)rep_key_word(layout, (uint32_t)words[i]);
		records[2 * i + 1] = words[i] == -1 ? leaf_key : (int32_t)rep_split_key(layout, (uint32_t)words[i], thresholds[i]);
	}
	return records;
}

RepNode rep_load_record(const RepLayout *layout, LBuilder *b, uint32_t records, uint32_t at)
{
	RepNode n;
	uint32_t both = lir_emit(b, LOP_LOAD, LTYPE_I64, records, at, LIR_NONE); /* the word in its low half (little-endian) */
	rep_decode_word(layout, b, lir_cast(b, LCAST_TRUNC, LTYPE_I32, both), &n);
	n.threshold = rep_high_key(b, both);
	n.record = both;
	return n;
}

uint32_t rep_splat(LBuilder *b, LType t, uint32_t lanes, int64_t imm, double fimm)
{
	uint32_t id = lir_emit_vector(b, LOP_CONST, t, (uint8_t)lanes, LIR_NONE, LIR_NONE, LIR_NONE);
	b->fn->insts[id].imm = imm;
	b->fn->insts[id].fimm = fimm;
	return id;
}

uint32_t rep_vector_const(LBuilder *b, uint32_t lanes, int32_t v) { return rep_splat(b, LTYPE_I32, lanes, v, 0.0); }

uint32_t rep_high_key(LBuilder *b, uint32_t x)
{
	uint32_t high = lir_emit(b, LOP_ASHR, LTYPE_I64, x, lir_const_int(b, LTYPE_I64, 32), LIR_NONE);
	return lir_cast(b, LCAST_TRUNC, LTYPE_I32, high);
}

/* i1: unsigned x < y (i32), or its negation. */
static uint32_t key_below(LBuilder *b, uint32_t x, uint32_t y, bool negate)
{
	uint32_t below = lir_cmp(b, LOP_ICMP, LCMP_ULT, x, y);
	return negate ? not1(b, below) : below;
}

/* i1: where x and t are keys, the negation of `x compare t` (x not missing). */
static uint32_t key_compare_right(LBuilder *b, HCompare compare, uint32_t x, uint32_t t)
{
	switch (compare) {
	case HCMP_LT: return key_below(b, x, t, true);
	case HCMP_LE: return key_below(b, t, x, false);
	case HCMP_GT: return key_below(b, t, x, true);
	case HCMP_GE: return key_below(b, x, t, false);
	case HCMP_EQ: return lir_cmp(b, LOP_ICMP, LCMP_NE, x, t);
	case HCMP_NE: return lir_cmp(b, LOP_ICMP, LCMP_EQ, x, t);
	default: die("rep: keys compare no category sets");
	}
}

/* i1: whether n is an IN split (its word's comparison). */
static uint32_t word_is_in(LBuilder *b, const RepNode *n)
{
	uint32_t code = lir_emit(b, LOP_AND, LTYPE_I32, n->word,
	                         lir_const_int(b, LTYPE_I32, (int32_t)(REP_WORD_COMPARE_MASK << REP_WORD_COMPARE_SHIFT)), LIR_NONE);
	return lir_cmp(b, LOP_ICMP, LCMP_EQ, code, lir_const_int(b, LTYPE_I32, HCMP_IN << REP_WORD_COMPARE_SHIFT));
}

/*
 * The decision of a step: holds (i1) where the row goes right at the split, or left
 * where left. carry: holds is one compare that is a strict less-than, true on NaN
 * (x86's carry flag after the compare: a child index takes it with one adc or sbb).
 */
typedef struct RepDecision {
	uint32_t holds;
	bool left;
	bool carry;
} RepDecision;

/*
 * The decision of split n by its test alone (x not missing). x and t_key are keys where
 * t_key is not LIR_NONE. nan_free: no NaN reaches the compare, or one that does goes
 * right.
 *
 * A forest of one comparison kind gets the form of the test that is a strict less-than
 * true on NaN: d->carry, x86's carry flag after its compare, which a step of a complete
 * tree adds into the child index with one adc (rep_complete_step). That is "goes right"
 * for <= and >=, "goes left" for < and >, where NaN either goes left or never comes.
 */
static RepDecision compare_decision(const RepLayout *layout, LBuilder *b, const RepNode *n, uint32_t x, uint32_t t_key,
                                    bool nan_free)
{
	/* The ordered compare that holds when `x OP t` does not (neither is NaN here). */
	static const LCmp right_when[] = {
		[HCMP_LT] = LCMP_OGE, [HCMP_LE] = LCMP_OGT, [HCMP_GT] = LCMP_OLE,
		[HCMP_GE] = LCMP_OLT, [HCMP_EQ] = LCMP_ONE, [HCMP_NE] = LCMP_OEQ,
	};
	uint32_t right = LIR_NONE, code = LIR_NONE;
	bool whole = t_key != LIR_NONE && lir_type(b->fn, x) == LTYPE_I64; /* x is a row's key as rep_emit_row_key makes it */
	const struct CarryForm *form = one_carry_form(layout);
	/*
	 * Keys are biased (rep_threshold_key) so that every kind's holds going right. An i64
	 * row key compares with the node's record whole (both keys in the high half): one
	 * load and compare, and no shift to take the key out of the record.
	 */
	if (form && t_key != LIR_NONE) {
		uint32_t t = whole ? n->record : t_key;
		uint32_t holds = form->t_below ? lir_cmp(b, LOP_ICMP, LCMP_ULT, t, x) : lir_cmp(b, LOP_ICMP, LCMP_ULT, x, t);
		return (RepDecision){holds, false, true};
	}
	if (form && (form->left || nan_free))
		return (RepDecision){lir_cmp(b, LOP_FCMP, form->compare, x, n->threshold), form->left, true};
	/*
	 * Otherwise (several kinds, another kind, or <= and >= where NaN reaches the compare
	 * and goes left): each kind's answer, picked by the word's comparison bits where
	 * there are several. The compares read the same operands (one ucomiss on x86), and
	 * the category test is paid only by forests that have IN splits.
	 */
	if (whole)
		x = rep_high_key(b, x);
	for (uint32_t k = 0; k < HCMP_COUNT; k++) {
		uint32_t kind_right;
		if (!(layout->compares & 1u << k))
			continue;
		if (code == LIR_NONE && layout->compares != 1u << k)
			code = lir_emit(b, LOP_AND, LTYPE_I32, n->word,
			                lir_const_int(b, LTYPE_I32, (int32_t)(REP_WORD_COMPARE_MASK << REP_WORD_COMPARE_SHIFT)), LIR_NONE);
		if (k == HCMP_IN) {
			/* A leaf's word (-1) has comparison bits 7, which no kind has. */
			uint32_t is_in = code == LIR_NONE ? not1(b, n->is_leaf)
			                                  : lir_cmp(b, LOP_ICMP, LCMP_EQ, code, lir_const_int(b, LTYPE_I32, HCMP_IN << REP_WORD_COMPARE_SHIFT));
			kind_right = t_key != LIR_NONE ? rep_key_category_right(layout, b, n, x, t_key, is_in, nan_free)
			                               : not1(b, category_in(layout, b, n, x, is_in));
		} else {
			kind_right = t_key != LIR_NONE ? key_compare_right(b, (HCompare)k, x, t_key)
			                               : lir_cmp(b, LOP_FCMP, right_when[k], x, n->threshold);
		}
		right = right == LIR_NONE ? kind_right
		                          : lir_emit(b, LOP_SELECT, LTYPE_I1,
		                                     lir_cmp(b, LOP_ICMP, LCMP_EQ, code, lir_const_int(b, LTYPE_I32, (int32_t)(k << REP_WORD_COMPARE_SHIFT))),
		                                     kind_right, right);
	}
	if (right == LIR_NONE)
		die("rep: a forest without splits has no step");
	return (RepDecision){right, false, false};
}

/* i1: whether x (a key where keys) counts as missing at n: NaN, and where n's rule says so, zero. */
static uint32_t is_missing(const RepLayout *layout, LBuilder *b, const RepNode *n, uint32_t x, bool keys)
{
	LType t = layout->threshold_type;
	uint32_t missing;
	if (keys) { /* (a category's key, which may equal NaN's, decides missing values itself: key_category_right) */
		missing = lir_cmp(b, LOP_ICMP, LCMP_EQ, x, lir_const_int(b, LTYPE_I32, (int32_t)rep_nan_key(layout)));
		return layout->compares & 1u << HCMP_IN ? and1(b, missing, not1(b, word_is_in(b, n))) : missing;
	}
	/* Thresholds (and set offsets) are never NaN, so "x is NaN" is the unordered test of the compare's own operands. */
	missing = lir_cmp(b, LOP_FCMP, LCMP_UNO, x, n->threshold);
	if (layout->missing_rules & (1u << REP_MISSING_ZERO_RIGHT | 1u << REP_MISSING_ZERO_LEFT)) {
		uint32_t up = lir_cmp(b, LOP_FCMP, LCMP_OLE, x, lir_const_float(b, t, HIR_ZERO_THRESHOLD));
		uint32_t down = lir_cmp(b, LOP_FCMP, LCMP_OGE, x, lir_const_float(b, t, -HIR_ZERO_THRESHOLD));
		uint32_t rule = word_bits_set(b, n, 2u << REP_WORD_MISSING_SHIFT);
		missing = lir_emit(b, LOP_OR, LTYPE_I1, missing, and1(b, rule, and1(b, up, down)), LIR_NONE);
	}
	return missing;
}

uint32_t rep_missing_right(const RepLayout *layout, LBuilder *b, const RepNode *n)
{
	if (layout->walk_keys && rep_bare_key_words(layout)) { /* the word has no rule: the forest's one */
		if (layout->missing_rules & (layout->missing_rules - 1))
			die("rep: a step of keys whose words hold no missing rule asks for one");
		return lir_const_int(b, LTYPE_I1, !(layout->missing_rules & 1u << REP_MISSING_LEFT));
	}
	/* Read even where the forest has one rule: with a constant, LLVM 16 folds a float walk's two tests into a slower one. */
	return not1(b, word_bits_set(b, n, 1u << REP_WORD_MISSING_SHIFT));
}

bool rep_keys_decide(const RepLayout *layout, const RepRow *row)
{
	return one_carry_form(layout) && (row->type == LTYPE_I64 || row->type == LTYPE_I32) &&
	       (row->complete || layout->missing_by_compare || layout->nan_reads_zero || layout->nan_columns);
}

uint32_t rep_keys_go_right(const RepLayout *layout, LBuilder *b, uint32_t x, uint32_t t)
{
	bool t_below; /* compare_decision's carry form on keys alone: a record compared whole decides as its key does */
	rep_key_form(layout, &t_below); /* (ties by the row key's low half) */
	if (layout->signed_tiles && b->fn->insts[x].lanes > 1) /* a tile's keys, biased */
		return t_below ? lir_cmp(b, LOP_ICMP, LCMP_SLT, t, x) : lir_cmp(b, LOP_ICMP, LCMP_SLT, x, t);
	return t_below ? lir_cmp(b, LOP_ICMP, LCMP_ULT, t, x) : lir_cmp(b, LOP_ICMP, LCMP_ULT, x, t);
}

/* The i1 that holds where d sends the row right. */
static uint32_t rep_right(LBuilder *b, RepDecision d)
{
	return d.left ? not1(b, d.holds) : d.holds;
}

/* The decision of a step at split n (rep_goes_right's, in the form compare_decision chose). */
static RepDecision rep_decide(const RepLayout *layout, LBuilder *b, const RepNode *n, const RepRow *row, bool leaf_stays)
{
	uint32_t feature = n->feature, x, t_key = LIR_NONE, missing, right, toward;
	bool keys = row->type == LTYPE_I64 || row->type == LTYPE_I32, whole = row->type == LTYPE_I64;
	bool nan_free = row->complete || layout->nan_reads_zero ||
	                (layout->missing_by_compare && layout->missing_rules == 1u << REP_MISSING_RIGHT);
	RepDecision d;
	if (leaf_stays && n->is_leaf != LIR_NONE) /* a leaf's word reads as a feature past every row's end */
		feature = lir_emit(b, LOP_SELECT, LTYPE_I64, n->is_leaf, lir_const_int(b, LTYPE_I64, 0), feature);
	x = lir_emit(b, LOP_LOAD, row->type, row->base, rep_row_at(b, row, feature, false), LIR_NONE);
	if (keys) /* the node's threshold is its key (the representation's key copy) */
		t_key = n->threshold;
	else if (row->type != layout->threshold_type)
		x = lir_cast(b, row->type == LTYPE_F32 ? LCAST_FPEXT : LCAST_FPTRUNC, layout->threshold_type, x);
	d = compare_decision(layout, b, n, x, t_key, nan_free);
	if (row->complete || layout->missing_by_compare || layout->nan_reads_zero || (keys && layout->nan_columns))
		return d;
	missing = is_missing(layout, b, n, whole ? rep_high_key(b, x) : x, keys);
	right = rep_right(b, d);
	toward = rep_missing_right(layout, b, n);
	return (RepDecision){lir_emit(b, LOP_SELECT, LTYPE_I1, missing, toward, right), false, false};
}

uint32_t rep_goes_right(const RepLayout *layout, LBuilder *b, const RepNode *n, const RepRow *row, bool leaf_stays)
{
	return rep_right(b, rep_decide(layout, b, n, row, leaf_stays));
}

/* i1: whether x (layout's threshold type; any value, NaN too) is in set `set` of f, by the forest's category rule, with the set's words known. */
static uint32_t constant_category_in(const RepLayout *layout, LBuilder *b, const HForest *f, uint32_t set, uint32_t x)
{
	/* Emitted one instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	const HSet *s = &f->sets[set];
	const uint32_t *words = f->set_words + s->first;
	LType t = layout->threshold_type;
	uint32_t end = 0, ok, below, c, bit, word, slot;
	for (uint32_t w = 0; w < s->num_words; w++) /* one past the set's greatest category */
		if (words[w])
			end = 32 * w + 32 - (uint32_t)__builtin_clz(words[w]);
	if (!end)
		return lir_const_int(b, LTYPE_I1, 0);
	/* c is a category below end: from 0 (truncating from -1 where the rule says so) up; NaN fails both. */
	ok = layout->category_rule == HCATEGORY_TRUNCATE ? lir_cmp(b, LOP_FCMP, LCMP_OGT, x, lir_const_float(b, t, -1.0))
	                                                 : lir_cmp(b, LOP_FCMP, LCMP_OGE, x, lir_const_float(b, t, 0.0));
	below = lir_cmp(b, LOP_FCMP, LCMP_OLT, x, lir_const_float(b, t, end));
	ok = and1(b, ok, below);
	c = lir_cast(b, LCAST_FPTOSI, LTYPE_I64, lir_emit(b, LOP_SELECT, t, ok, x, lir_const_float(b, t, 0.0)));
	if (layout->category_rule == HCATEGORY_EXACT)
		ok = and1(b, ok, lir_cmp(b, LOP_FCMP, LCMP_OEQ, lir_cast(b, LCAST_SITOFP, t, c), x));
	if (end <= 64) { /* the set is an immediate: one bit test */
		uint64_t mask = words[0] | (s->num_words > 1 ? (uint64_t)words[1] << 32 : 0);
		bit = lir_emit(b, LOP_SHL, LTYPE_I64, lir_const_int(b, LTYPE_I64, 1), c, LIR_NONE);
		bit = lir_emit(b, LOP_AND, LTYPE_I64, bit, lir_const_int(b, LTYPE_I64, (int64_t)mask), LIR_NONE);
		return and1(b, ok, lir_cmp(b, LOP_ICMP, LCMP_NE, bit, lir_const_int(b, LTYPE_I64, 0)));
	}
	/* Else its word from the set buffer (after the set's count where sets have counts), c below end keeping the load inside the set (end as a float may round up). */
	below = lir_cmp(b, LOP_ICMP, LCMP_SLT, c, lir_const_int(b, LTYPE_I64, end));
	ok = and1(b, ok, below);
	c = lir_emit(b, LOP_SELECT, LTYPE_I64, below, c, lir_const_int(b, LTYPE_I64, 0));
	slot = lir_emit(b, LOP_ASHR, LTYPE_I64, c, lir_const_int(b, LTYPE_I64, 5), LIR_NONE);
	slot = lir_emit(b, LOP_ADD, LTYPE_I64, slot, lir_const_int(b, LTYPE_I64, (int64_t)layout->set_offsets[set] + !layout->set_stride), LIR_NONE);
	word = lir_emit(b, LOP_LOAD, LTYPE_I32, layout->sets, slot, LIR_NONE);
	bit = lir_cast(b, LCAST_TRUNC, LTYPE_I32, lir_emit(b, LOP_AND, LTYPE_I64, c, lir_const_int(b, LTYPE_I64, 31), LIR_NONE));
	bit = lir_emit(b, LOP_SHL, LTYPE_I32, lir_const_int(b, LTYPE_I32, 1), bit, LIR_NONE);
	bit = lir_emit(b, LOP_AND, LTYPE_I32, word, bit, LIR_NONE);
	return and1(b, ok, lir_cmp(b, LOP_ICMP, LCMP_NE, bit, lir_const_int(b, LTYPE_I32, 0)));
}

LCmp rep_right_compare(HCompare compare, bool nan_right)
{
	/* Per comparison: ordered (NaN goes left) and unordered (NaN goes right). */
	static const LCmp right_when[][2] = {
		[HCMP_LT] = {LCMP_OGE, LCMP_UGE_F}, [HCMP_LE] = {LCMP_OGT, LCMP_UGT_F},
		[HCMP_GT] = {LCMP_OLE, LCMP_ULE_F}, [HCMP_GE] = {LCMP_OLT, LCMP_ULT_F},
		[HCMP_EQ] = {LCMP_ONE, LCMP_COUNT}, [HCMP_NE] = {LCMP_OEQ, LCMP_COUNT},
	};
	return right_when[compare][nan_right];
}

uint32_t rep_row_at(LBuilder *b, const RepRow *row, uint32_t feature, bool known)
{
	uint32_t step;
	if (known)
		return lir_emit(b, LOP_ADD, LTYPE_I64, row->start, lir_const_int(b, LTYPE_I64, feature * row->feature_step), LIR_NONE);
	if (row->feature_step != 1) {
		step = lir_const_int(b, LTYPE_I64, row->feature_step);
		feature = lir_emit(b, LOP_MUL, LTYPE_I64, feature, step, LIR_NONE);
	}
	return lir_emit(b, LOP_ADD, LTYPE_I64, row->start, feature, LIR_NONE);
}

uint32_t rep_split_goes_right(const RepLayout *layout, LBuilder *b, const HForest *f, const HNode *n, const RepRow *row)
{
	LType t = layout->threshold_type;
	uint32_t at = rep_row_at(b, row, (uint32_t)n->feature, true);
	uint32_t x = lir_emit(b, LOP_LOAD, row->type, row->base, at, LIR_NONE), right, missing, up, down;
	/* NaN can come (the rows are neither complete nor read with NaN as 0); where, it goes right unless the split says left. */
	bool nan_comes = !row->complete && !layout->nan_reads_zero, nan_right = !n->default_left, zero = n->missing == HMISSING_ZERO;
	if (row->type != t)
		x = lir_cast(b, row->type == LTYPE_F32 ? LCAST_FPEXT : LCAST_FPTRUNC, t, x);
	if (n->compare == HCMP_IN) /* NaN is in no set: it goes right */
		right = not1(b, constant_category_in(layout, b, f, n->set, x));
	else if (rep_right_compare(n->compare, true) != LCMP_COUNT && !zero) /* one compare decides NaN too */
		return lir_cmp(b, LOP_FCMP, rep_right_compare(n->compare, nan_comes && nan_right), x, lir_const_float(b, t, n->value));
	else
		right = lir_cmp(b, LOP_FCMP, rep_right_compare(n->compare, false), x, lir_const_float(b, t, n->value));
	if (!nan_comes || (n->compare == HCMP_IN && nan_right && !zero))
		return right;
	missing = lir_cmp(b, LOP_FCMP, LCMP_UNO, x, x);
	if (zero) {
		up = lir_cmp(b, LOP_FCMP, LCMP_OLE, x, lir_const_float(b, t, HIR_ZERO_THRESHOLD));
		down = lir_cmp(b, LOP_FCMP, LCMP_OGE, x, lir_const_float(b, t, -HIR_ZERO_THRESHOLD));
		missing = lir_emit(b, LOP_OR, LTYPE_I1, missing, and1(b, up, down), LIR_NONE);
	}
	return lir_emit(b, LOP_SELECT, LTYPE_I1, missing, lir_const_int(b, LTYPE_I1, nan_right), right);
}

uint32_t rep_leaf_test(const RepLayout *layout, LBuilder *b, const RepNode *n)
{
	if (n->is_leaf != LIR_NONE)
		return n->is_leaf;
	return layout->child_shift || rep_walks_words(layout) ? lir_cmp(b, LOP_ICMP, LCMP_EQ, n->word, lir_const_int(b, LTYPE_I32, 0))
	                                                : LIR_NONE;
}

uint32_t rep_step_result(LBuilder *b, const RepNode *n, uint32_t node, uint32_t child, bool leaf_stays)
{
	return leaf_stays && n->is_leaf != LIR_NONE ? lir_emit(b, LOP_SELECT, LTYPE_I64, n->is_leaf, node, child) : child;
}

uint32_t rep_step_sum(RepLayout *layout, LBuilder *b, uint32_t node, uint32_t addend, const RepNode *fields,
                      const RepRow *row, bool leaf_stays)
{
	RepDecision d = rep_decide(layout, b, fields, row, leaf_stays);
	bool twice = addend == node; /* 2i: a shift, and 2i + 1 an or */
	LType t = lir_type(b->fn, node);
	uint32_t one, sum, taken;
	if (d.carry && !d.left) /* node + addend + right: one adc */
		return lir_emit(b, LOP_ADDC, t, node, addend, d.holds);
	one = lir_const_int(b, t, 1);
	sum = twice ? lir_emit(b, LOP_SHL, t, node, one, LIR_NONE) : lir_emit(b, LOP_ADD, t, node, addend, LIR_NONE);
	taken = lir_cast(b, LCAST_ZEXT, t, d.holds);
	if (d.left) /* + 1 - left: an lea and an sbb where the decision is the carry */
		return lir_emit(b, LOP_SUB, t, lir_emit(b, twice ? LOP_OR : LOP_ADD, t, sum, one, LIR_NONE), taken, LIR_NONE);
	return lir_emit(b, LOP_ADD, t, sum, taken, LIR_NONE);
}

uint32_t rep_complete_step(RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t node, const RepNode *fields,
                           const RepRow *row, bool leaf_stays)
{
	(void)tree;
	return rep_step_result(b, fields, node, rep_step_sum(layout, b, node, node, fields, row, leaf_stays), leaf_stays);
}

LType rep_value_type(const HForest *f)
{
	return f->threshold_type == HTYPE_F32 && f->leaf_type == HTYPE_F32 ? LTYPE_F32 : LTYPE_F64;
}

void rep_store_value(void *values, LType type, uint64_t at, double v)
{
	if (type == LTYPE_F32)
		((float *)values)[at] = (float)v;
	else
		((double *)values)[at] = v;
}

uint32_t rep_load_leaf(const RepLayout *layout, LBuilder *b, uint32_t values, uint32_t slot)
{
	uint32_t value = lir_emit(b, LOP_LOAD, layout->threshold_type, values, slot, LIR_NONE);
	if (layout->leaf_type != layout->threshold_type)
		value = lir_cast(b, LCAST_FPTRUNC, layout->leaf_type, value);
	return value;
}

void rep_free_state(RepLayout *layout)
{
	free(layout->state);
	free(layout->set_offsets);
	free(layout->leaf_vectors);
	layout->state = NULL;
	layout->set_offsets = layout->leaf_vectors = NULL;
}
