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
	if (f->num_features >= (1u << 30))
		return error_set(e, "%s representation: %u features, at most %u fit", rep_name, f->num_features, (1u << 30) - 1);
	return true;
}

uint32_t rep_buffer_address(LBuilder *b, uint32_t index)
{
	uint32_t v = lir_emit(b, LOP_BUFFER, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
	b->fn->insts[v].imm = index;
	return v;
}

void rep_decode_word(LBuilder *b, uint32_t word, RepNode *n)
{
	uint32_t zero = lir_const_int(b, LTYPE_I32, 0), one = lir_const_int(b, LTYPE_I32, 1);
	n->is_leaf = lir_cmp(b, LOP_ICMP, LCMP_SLT, word, zero);
	n->feature = lir_cast(b, LCAST_SEXT, LTYPE_I64, lir_emit(b, LOP_ASHR, LTYPE_I32, word, one, LIR_NONE));
	n->default_left = lir_cmp(b, LOP_ICMP, LCMP_NE, lir_emit(b, LOP_AND, LTYPE_I32, word, one, LIR_NONE), zero);
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
