/* The category sets of a layout in memory (rep_lay_out_sets, lower/rep.h): counted, or padded to one stride. */
#include "lower/rep.h"

#include <assert.h>
#include <string.h>

/*
 * Category sets are padded to the widest set's words where that takes at most
 * PADDED_SETS_ROOM times the words of the sets as laid out with their counts, plus
 * PADDED_SETS_SLACK: a forest with one feature of many categories among features of few
 * keeps its counts. 32 x MAX_SET_STRIDE categories are exact in a float.
 */
#define PADDED_SETS_ROOM 4
#define PADDED_SETS_SLACK (1u << 14)
#define MAX_SET_STRIDE (1u << 19)

void rep_lay_out_sets(const HForest *f, LModule *m, RepLayout *layout, uint64_t limit)
{
	uint64_t total = 0, widest = 0, padded;
	int32_t *words;
	for (uint32_t s = 0; s < f->num_sets; s++)
		widest = f->sets[s].num_words > widest ? f->sets[s].num_words : widest;
	widest += layout->category_keys;
	padded = widest * f->num_sets;
	layout->set_stride = widest && widest <= MAX_SET_STRIDE && padded < limit &&
	                             padded <= PADDED_SETS_ROOM * (f->num_set_words + f->num_sets) + PADDED_SETS_SLACK
	                         ? (uint32_t)widest
	                         : 0;
	layout->category_keys = layout->category_keys && layout->set_stride;
	layout->set_offsets = xmalloc(((size_t)f->num_sets + 1) * sizeof *layout->set_offsets);
	for (uint32_t s = 0; s < f->num_sets; s++) {
		layout->set_offsets[s] = total;
		total += layout->set_stride ? layout->set_stride : 1 + (uint64_t)f->sets[s].num_words;
	}
	total += f->num_sets && rep_table_words(layout) ? REP_SET_TABLE_WORDS : 0; /* (rep_table_words) */
	words = xcalloc(total ? total : 1, sizeof *words);
	for (uint32_t s = 0; s < f->num_sets; s++) {
		const HSet *set = &f->sets[s];
		uint64_t first = layout->set_offsets[s] + (layout->set_stride ? 0 : 1);
		if (!layout->set_stride)
			words[layout->set_offsets[s]] = (int32_t)set->num_words;
		memcpy(words + first, f->set_words + set->first, (size_t)set->num_words * sizeof *words);
	}
	layout->set_buffer = lir_buffer_add(m, "category_sets", LTYPE_I32, total, words);
}

/* The bytes of a GATHER's table (ir/lir.h), which the CPU permutes lanes from: AVX2's 32, AVX-512's 64; 0: none. */
static uint32_t table_bytes(const RepLayout *layout)
{
	return layout->vector_tops == MTOPS_WIDE ? 64 : layout->vector_tops == MTOPS_PAIRS ? 32 : 0;
}

uint32_t rep_table_words(const RepLayout *layout) { return 2 * table_bytes(layout) / 4; }

uint32_t rep_tables(const RepLayout *layout, LType type, uint32_t span)
{
	uint32_t per = table_bytes(layout) / lir_type_size(type);
	return per ? (span + per - 1) / per : 0;
}

uint32_t rep_table_gather(const RepLayout *layout, LBuilder *b, LType type, uint8_t lanes, uint32_t buffer, uint32_t offset,
                          uint32_t index, uint32_t span, uint32_t most, RepIndex form)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	uint32_t per = table_bytes(layout) / lir_type_size(type), tables = rep_tables(layout, type, span);
	if (!span || !tables || tables > most || tables > REP_TABLES_MOST)
		return LIR_NONE;
	if (tables % 2 == 0 && table_bytes(layout) == 64 && per == lanes) { /* AVX-512: two tables a permute (LIR GATHER) */
		per *= 2;
		tables /= 2;
	}
	return rep_gather_tables(b, type, lanes, buffer, offset, index, tables, per, form);
}

/* A constant of `lanes` lanes of the index type t (i32 or i8), each v (wrapped). */
static uint32_t index_const(LBuilder *b, LType t, uint8_t lanes, uint32_t v)
{
	return rep_splat(b, t, lanes, t == LTYPE_I8 ? (int64_t)(int8_t)v : (int64_t)(int32_t)v, 0.0);
}

uint32_t rep_gather_tables(LBuilder *b, LType type, uint8_t lanes, uint32_t buffer, uint32_t offset, uint32_t index,
                           uint32_t tables, uint32_t per, RepIndex form)
{
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	LType t = (LType)b->fn->insts[index].type;
	uint32_t picked[REP_TABLES_MOST], at, bit, high;
	for (uint32_t k = 0; k < tables; k++) {
		at = k ? lir_emit(b, LOP_ADD, LTYPE_I64, offset, lir_const_int(b, LTYPE_I64, (int64_t)k * per), LIR_NONE) : offset;
		picked[k] = lir_emit_vector(b, LOP_GATHER, type, lanes, buffer, at, index);
		b->fn->insts[picked[k]].imm = per;
		b->fn->insts[picked[k]].sub = tables > 1 || form != REP_INDEX_WHOLE; /* (x86's permutes read the low bits alone) */
	}
	assert(form != REP_INDEX_SIGN || tables <= 2);
	/* A tree of selects by the index's bits above a table's. */
	for (uint32_t width = 1; width < tables; width *= 2) {
		if (form == REP_INDEX_SIGN) {
			high = lir_cmp(b, LOP_ICMP, LCMP_SLT, index, index_const(b, t, lanes, 0));
		} else {
			bit = index_const(b, t, lanes, per * width);
			bit = lir_emit_vector(b, LOP_AND, t, lanes, index, bit, LIR_NONE);
			high = lir_cmp(b, LOP_ICMP, LCMP_NE, bit, index_const(b, t, lanes, 0));
		}
		for (uint32_t k = 0; k + width < tables; k += 2 * width)
			picked[k] = lir_emit_vector(b, LOP_SELECT, type, lanes, high, picked[k + width], picked[k]);
	}
	return picked[0];
}

uint32_t rep_set_words(const RepLayout *layout, LBuilder *b, uint8_t lanes, uint32_t offset, uint32_t index, uint32_t span,
                       RepIndex form)
{
	uint32_t words = rep_table_gather(layout, b, LTYPE_I32, lanes, layout->sets, offset, index, span, 2, form);
	assert(words != LIR_NONE || form == REP_INDEX_WHOLE); /* (a GATHER from memory reads the index whole) */
	return words != LIR_NONE ? words : lir_emit_vector(b, LOP_GATHER, LTYPE_I32, lanes, layout->sets, offset, index);
}
