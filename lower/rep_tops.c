/*
 * Tops (LRepresentation.top_nodes) read from a buffer of every tree's top splits: what the
 * array and sparse layouts share. Each tree's top is a complete tree of levels (up to
 * REP_TOP_LEVELS) in level order, slot 1 its root, slot s's children 2s and 2s + 1; the
 * layout keeps per split the element of its feature in the rows' tile of keys
 * (RepLayout.key_lanes times the feature) and its key.
 */
#include "lower/rep.h"

#include <stdio.h>

/*
 * The candidates a row keeps where it goes right at slot `slot` of a top of `levels`
 * levels: all but those below the slot's left child.
 */
static int32_t top_mask(uint32_t levels, uint32_t slot)
{
	uint32_t depth = 31 - (uint32_t)__builtin_clz(slot), width = 1u << (levels - depth);
	uint32_t left = (slot - (1u << depth)) * width, half = width / 2;
	return (int32_t)~(((1u << half) - 1) << left);
}

void rep_tops_lay_out(LModule *m, const RepLayout *layout, RepTops *t, const char *prefix, uint32_t num_trees, int32_t *tops)
{
	char name[64];
	t->per = (1u << layout->top_levels) - 1;
	snprintf(name, sizeof name, "%s.tops", prefix);
	t->top_buffer = lir_buffer_add(m, name, LTYPE_I32, (uint64_t)num_trees * t->per * 2, tops);
	t->mask_buffer = LIR_NONE;
	if (layout->vector_tops == MTOPS_WIDE) {
		uint32_t count = (REP_TOP_LEVELS + 1) << REP_TOP_LEVELS;
		int32_t *masks = xcalloc(count, sizeof *masks);
		for (uint32_t levels = 2; levels <= layout->top_levels; levels++)
			for (uint32_t slot = 1; slot < 1u << levels; slot++)
				masks[levels << REP_TOP_LEVELS | slot] = top_mask(levels, slot);
		snprintf(name, sizeof name, "%s.top_masks", prefix);
		t->mask_buffer = lir_buffer_add(m, name, LTYPE_I32, count, masks);
	}
}

void rep_tops_begin(RepTops *t, LBuilder *b)
{
	t->tops = rep_buffer_address(b, t->top_buffer);
	t->masks = t->mask_buffer == LIR_NONE ? LIR_NONE : rep_buffer_address(b, t->mask_buffer);
}

/* top_mask(levels, slot) in `lanes` lanes, from the masks buffer (RepLayout.vector_tops MTOPS_WIDE). */
static uint32_t top_mask_loaded(LBuilder *b, const RepTops *t, uint32_t levels, uint32_t slot, uint32_t lanes)
{
	uint32_t at = lir_const_int(b, LTYPE_I64, levels << REP_TOP_LEVELS | slot);
	uint32_t mask = lir_emit(b, LOP_LOAD, LTYPE_I32, t->masks, at, LIR_NONE);
	return lir_emit_vector(b, LOP_SPLAT, LTYPE_I32, (uint8_t)lanes, mask, LIR_NONE, LIR_NONE);
}

uint32_t rep_tops_take(const RepTops *t, RepLayout *layout, LBuilder *b, uint32_t tree, uint32_t levels, uint32_t lanes,
                       uint32_t tile)
{
	uint32_t first = lir_emit(b, LOP_MUL, LTYPE_I64, tree, lir_const_int(b, LTYPE_I64, t->per), LIR_NONE);
	uint32_t candidates = rep_vector_const(b, lanes, -1), lowest, exponent; /* bit j: the row may leave at slot 2^levels + j */
	for (uint32_t slot = 1; slot < 1u << levels; slot++) {
		/*
		 * The split's element and key read at once (an i64, the element in its low half) and
		 * split by a shift: loads are what the walks of 16 rows side by side are shortest of
		 * (measured: docs/performance-notes.md, Elements in the tops).
		 */
		uint32_t at_slot = lir_emit(b, LOP_ADD, LTYPE_I64, first, lir_const_int(b, LTYPE_I64, slot - 1), LIR_NONE);
		uint32_t both = lir_emit(b, LOP_LOAD, LTYPE_I64, t->tops, at_slot, LIR_NONE);
		uint32_t element = lir_cast(b, LCAST_ZEXT, LTYPE_I64, lir_cast(b, LCAST_TRUNC, LTYPE_I32, both));
		uint32_t key = rep_high_key(b, both);
		uint32_t x = lir_emit_vector(b, LOP_LOAD, LTYPE_I32, (uint8_t)lanes, tile, element, LIR_NONE);
		uint32_t right = rep_keys_go_right(layout, b, x, lir_emit_vector(b, LOP_SPLAT, LTYPE_I32, (uint8_t)lanes, key, LIR_NONE, LIR_NONE));
		uint32_t mask = t->masks == LIR_NONE ? rep_vector_const(b, lanes, top_mask(levels, slot)) : top_mask_loaded(b, t, levels, slot, lanes);
		uint32_t keep = lir_emit_vector(b, LOP_AND, LTYPE_I32, (uint8_t)lanes, candidates, mask, LIR_NONE);
		candidates = lir_emit_vector(b, LOP_SELECT, LTYPE_I32, (uint8_t)lanes, right, keep, candidates);
	}
	/*
	 * The lowest candidate j (at most 2^levels - 1) by the exponent of the float of its bit
	 * alone (exact): 127 + j. Five operations, where a vector count of trailing zeros is a
	 * dozen on CPUs without one; it pays with AVX2 and AVX-512 alike (measured:
	 * docs/performance-notes.md, The lowest candidate).
	 */
	lowest = lir_emit_vector(b, LOP_SUB, LTYPE_I32, (uint8_t)lanes, rep_vector_const(b, lanes, 0), candidates, LIR_NONE);
	lowest = lir_emit_vector(b, LOP_AND, LTYPE_I32, (uint8_t)lanes, candidates, lowest, LIR_NONE);
	exponent = lir_cast(b, LCAST_BITCAST, LTYPE_I32, lir_cast(b, LCAST_SITOFP, LTYPE_F32, lowest));
	exponent = lir_emit_vector(b, LOP_ASHR, LTYPE_I32, (uint8_t)lanes, exponent, rep_vector_const(b, lanes, 23), LIR_NONE);
	return lir_emit_vector(b, LOP_ADD, LTYPE_I32, (uint8_t)lanes, exponent, rep_vector_const(b, lanes, (1 << levels) - 127), LIR_NONE);
}
