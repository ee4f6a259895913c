/*
 * Categories: the category a row's value is by the forest's rule (every IN split's
 * test), and walks of keys over category features (RepLayout.category_keys, lower/rep.h):
 * which forests take them, the category a row's key holds, and the step of an IN split,
 * which reads its set's word for that category where other steps compare keys.
 */
#include "lower/rep.h"

#include <stdlib.h>

uint32_t rep_category_of(const RepLayout *layout, LBuilder *b, uint32_t x, double end, uint32_t zero, uint32_t *c)
{
	/* Emitted one instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	LType t = layout->threshold_type;
	uint32_t ok, below;
	/* Categories from 0 up to end (exclusive); below, the rule decides where truncation starts. */
	ok = layout->category_rule == HCATEGORY_TRUNCATE ? lir_cmp(b, LOP_FCMP, LCMP_OGT, x, lir_const_float(b, t, -1.0))
	                                                 : lir_cmp(b, LOP_FCMP, LCMP_OGE, x, zero);
	below = lir_cmp(b, LOP_FCMP, LCMP_OLT, x, lir_const_float(b, t, end));
	ok = lir_emit(b, LOP_AND, LTYPE_I1, ok, below, LIR_NONE);
	*c = lir_cast(b, LCAST_FPTOSI, LTYPE_I64, lir_emit(b, LOP_SELECT, t, ok, x, zero));
	if (layout->category_rule == HCATEGORY_EXACT)
		ok = lir_emit(b, LOP_AND, LTYPE_I1, ok, lir_cmp(b, LOP_FCMP, LCMP_OEQ, lir_cast(b, LCAST_SITOFP, t, *c), x), LIR_NONE);
	return ok;
}

/* The categories of rep_emit_category_key's keys: the padded sets' but their last word's. */
static uint32_t key_categories(const RepLayout *layout) { return 32 * (layout->set_stride - 1); }

uint32_t rep_emit_category_key(const RepLayout *layout, LBuilder *b, LType type, uint32_t x)
{
	/* Emitted one instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	uint32_t categories = key_categories(layout), zero = lir_const_float(b, layout->threshold_type, 0.0), c, ok, key, nan;
	ok = rep_category_of(layout, b, x, categories, zero, &c);
	key = lir_cast(b, LCAST_TRUNC, LTYPE_I32, c);
	key = lir_emit(b, LOP_SELECT, LTYPE_I32, ok, key, lir_const_int(b, LTYPE_I32, categories));
	nan = lir_cmp(b, LOP_FCMP, LCMP_UNO, x, x);
	key = lir_emit(b, LOP_SELECT, LTYPE_I32, nan, lir_const_int(b, LTYPE_I32, layout->nan_reads_zero ? 0 : categories + 1), key);
	if (type == LTYPE_I32)
		return key;
	key = lir_cast(b, LCAST_ZEXT, LTYPE_I64, key);
	return lir_emit(b, LOP_SHL, LTYPE_I64, key, lir_const_int(b, LTYPE_I64, 32), LIR_NONE);
}

uint32_t rep_split_key(const RepLayout *layout, uint32_t word, float value)
{
	bool in = (word >> REP_WORD_COMPARE_SHIFT & REP_WORD_COMPARE_MASK) == HCMP_IN;
	/* (category_keys: the step reads the set there; keys are unsigned) */
	return in ? (uint32_t)value : rep_threshold_key(layout, value) - rep_reads_less_one(layout, word);
}


uint32_t rep_key_category_right(const RepLayout *layout, LBuilder *b, const RepNode *n, uint32_t c, uint32_t t,
                                uint32_t is_in, bool nan_free)
{
	/* Emitted one instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	uint32_t slot, offset, word, shift, bit, right, nan;
	slot = lir_cast(b, LCAST_ZEXT, LTYPE_I64, c);
	slot = lir_emit(b, LOP_ASHR, LTYPE_I64, slot, lir_const_int(b, LTYPE_I64, 5), LIR_NONE);
	offset = lir_cast(b, LCAST_ZEXT, LTYPE_I64, t);
	slot = lir_emit(b, LOP_ADD, LTYPE_I64, offset, slot, LIR_NONE);
	slot = lir_emit(b, LOP_SELECT, LTYPE_I64, is_in, slot, lir_const_int(b, LTYPE_I64, 0));
	word = lir_emit(b, LOP_LOAD, LTYPE_I32, layout->sets, slot, LIR_NONE);
	shift = lir_emit(b, LOP_AND, LTYPE_I32, c, lir_const_int(b, LTYPE_I32, 31), LIR_NONE);
	bit = lir_emit(b, LOP_SHL, LTYPE_I32, lir_const_int(b, LTYPE_I32, 1), shift, LIR_NONE);
	bit = lir_emit(b, LOP_AND, LTYPE_I32, word, bit, LIR_NONE);
	right = lir_cmp(b, LOP_ICMP, LCMP_EQ, bit, lir_const_int(b, LTYPE_I32, 0));
	if (nan_free)
		return right;
	nan = lir_cmp(b, LOP_ICMP, LCMP_EQ, c, lir_const_int(b, LTYPE_I32, (int32_t)key_categories(layout) + 1));
	return lir_emit(b, LOP_SELECT, LTYPE_I1, nan, rep_missing_right(layout, b, n), right);
}

