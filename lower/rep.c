/* The table of representations. Adding one: write lower/rep_NAME.c and list it here. */
#include "lower/lower.h"
#include "lower/rep.h"

#include <stdlib.h>
#include <string.h>

static const LRepresentation *const representations[] = {
	&rep_array,
	&rep_sparse,
};

const char *const lower_representation_names[] = {
	"array",
	"sparse",
	NULL,
};

const LRepresentation *rep_find(const char *name)
{
	for (size_t i = 0; i < COUNT_OF(representations); i++)
		if (strcmp(representations[i]->name, name) == 0)
			return representations[i];
	return NULL;
}

const LRepresentation *rep_choose(const HForest *f)
{
	/* array spends 2^(depth+1) - 1 slots on a tree; take it unless that wastes most of them. */
	uint64_t slots = 0;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		uint32_t depth = hir_tree_depth(f, t);
		if (depth > 24)
			return &rep_sparse;
		slots += (2ull << depth) - 1;
	}
	return slots <= 4 * f->num_nodes + 64 ? &rep_array : &rep_sparse;
}

bool rep_check_features(const HForest *f, const char *rep_name, Error *e)
{
	if (f->num_features >= REP_MAX_FEATURES)
		return error_set(e, "%s representation: %u features, at most %u fit", rep_name, f->num_features, REP_MAX_FEATURES - 1);
	return true;
}

/* The missing rule of split n. */
static RepMissing split_missing(const HNode *n) { return n->default_left ? REP_MISSING_LEFT : REP_MISSING_RIGHT; }

int32_t rep_split_word(const HNode *n)
{
	return (int32_t)((uint32_t)n->feature << REP_WORD_FEATURE_SHIFT | (uint32_t)split_missing(n) << REP_WORD_MISSING_SHIFT |
	                 (n->compare & REP_WORD_COMPARE_MASK));
}

void rep_note_splits(const HForest *f, RepLayout *layout)
{
	layout->compares = layout->missing_rules = 0;
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		const HNode *n = &f->nodes[i];
		if (n->feature == HIR_LEAF)
			continue;
		layout->compares |= (uint8_t)(1u << n->compare);
		layout->missing_rules |= (uint8_t)(1u << split_missing(n));
	}
}

uint32_t rep_buffer_address(LBuilder *b, uint32_t index)
{
	uint32_t v = lir_emit(b, LOP_BUFFER, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
	b->fn->insts[v].imm = index;
	return v;
}

void rep_prefetch_slots(LBuilder *b, uint32_t starts, uint32_t tree, const uint32_t *buffers, const LType *types, uint32_t n)
{
	uint32_t one = lir_const_int(b, LTYPE_I64, 1), next = lir_emit(b, LOP_ADD, LTYPE_I64, tree, one, LIR_NONE);
	uint32_t first = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, starts, tree, LIR_NONE));
	uint32_t end = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_LOAD, LTYPE_I32, starts, next, LIR_NONE));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t line = lir_const_int(b, LTYPE_I64, (int64_t)(REP_CACHE_LINE / lir_type_size(types[i])));
		uint32_t slot = lir_begin(b, LOP_FOR, first, end, line);
		lir_emit(b, LOP_PREFETCH, types[i], buffers[i], slot, LIR_NONE);
		lir_end(b);
	}
}

void rep_decode_word(LBuilder *b, uint32_t word, RepNode *n)
{
	uint32_t zero = lir_const_int(b, LTYPE_I32, 0), shift = lir_const_int(b, LTYPE_I32, REP_WORD_FEATURE_SHIFT);
	n->is_leaf = lir_cmp(b, LOP_ICMP, LCMP_SLT, word, zero);
	n->feature = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_ASHR, LTYPE_I32, word, shift, LIR_NONE));
	n->word = word;
}

/* i1: whether bits `mask` of n's word are not all clear. */
static uint32_t word_bits_set(LBuilder *b, const RepNode *n, uint32_t mask)
{
	uint32_t bits = lir_emit(b, LOP_AND, LTYPE_I32, n->word, lir_const_int(b, LTYPE_I32, mask), LIR_NONE);
	return lir_cmp(b, LOP_ICMP, LCMP_NE, bits, lir_const_int(b, LTYPE_I32, 0));
}

/* i1: the row goes right at n by the comparison alone (x not NaN): the negation of `x compare t`. */
static uint32_t compare_right(const RepLayout *layout, LBuilder *b, const RepNode *n, uint32_t x)
{
	/*
	 * x < t goes left, so right is the ordered x >= t; x <= t goes left, so right is
	 * x > t. One kind in the whole forest (XGBoost's <, LightGBM's <=) is one compare;
	 * a forest that mixes them picks per node by the word's comparison bits, both
	 * compares reading the same operands (one ucomiss on x86).
	 */
	uint32_t ge = LIR_NONE, gt = LIR_NONE;
	if (layout->compares & ~(1u << HCMP_LT | 1u << HCMP_LE))
		die("rep: a comparison without a decoding");
	if (layout->compares != 1u << HCMP_LE)
		ge = lir_cmp(b, LOP_FCMP, LCMP_OGE, x, n->threshold);
	if (layout->compares & 1u << HCMP_LE)
		gt = lir_cmp(b, LOP_FCMP, LCMP_OGT, x, n->threshold);
	if (ge == LIR_NONE || gt == LIR_NONE)
		return ge == LIR_NONE ? gt : ge;
	return lir_emit(b, LOP_SELECT, LTYPE_I1, word_bits_set(b, n, REP_WORD_COMPARE_MASK), gt, ge);
}

/* i1: where x is missing (NaN), whether the row goes right at n. */
static uint32_t missing_right(const RepLayout *layout, LBuilder *b, const RepNode *n)
{
	/* Rules whose codes differ in the low bit only: the bit is "goes left". */
	if (layout->missing_rules & ~(1u << REP_MISSING_RIGHT | 1u << REP_MISSING_LEFT))
		die("rep: a missing rule without a decoding");
	/*
	 * Even where the whole forest sends missing values one way, the bit is read: with a
	 * constant here LLVM 16 folds the two tests into one unordered compare, and the walk
	 * came out 25% slower on higgs (1.88 against 1.50 us for one row).
	 */
	uint32_t left = word_bits_set(b, n, 1u << REP_WORD_MISSING_SHIFT), no = lir_const_int(b, LTYPE_I1, 0);
	return lir_emit(b, LOP_SELECT, LTYPE_I1, left, no, lir_const_int(b, LTYPE_I1, 1));
}

uint32_t rep_goes_right(const RepLayout *layout, LBuilder *b, const RepNode *n, const RepRow *row, bool leaf_stays)
{
	uint32_t feature = n->feature, x, missing, right;
	if (leaf_stays) /* a leaf's word reads as feature -1 */
		feature = lir_emit(b, LOP_SELECT, LTYPE_I64, n->is_leaf, lir_const_int(b, LTYPE_I64, 0), feature);
	x = lir_emit(b, LOP_LOAD, LTYPE_F32, row->base, lir_emit(b, LOP_ADD, LTYPE_I64, row->start, feature, LIR_NONE), LIR_NONE);
	if (layout->threshold_type == LTYPE_F64)
		x = lir_cast(b, LCAST_FPEXT, LTYPE_F64, x);
	right = compare_right(layout, b, n, x);
	/* Thresholds are never NaN, so "x is NaN" is the unordered test of the compare's own operands. */
	missing = lir_cmp(b, LOP_FCMP, LCMP_UNO, x, n->threshold);
	return lir_emit(b, LOP_SELECT, LTYPE_I1, missing, missing_right(layout, b, n), right);
}

uint32_t rep_step_result(LBuilder *b, const RepNode *n, uint32_t node, uint32_t child, bool leaf_stays)
{
	return leaf_stays ? lir_emit(b, LOP_SELECT, LTYPE_I64, n->is_leaf, node, child) : child;
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
	layout->state = NULL;
}
