/*
 * MIR pass: what each ifComplete's block makes of its rows before its walks
 * (MInst.block), and whether NaN may read as 0 (MModule.nan_as_zero). The lowering
 * makes what is planned where the layout can take it (lower/lower_keys.c); the plan is
 * the part that depends on the MIR, the forest's size and the CPU alone.
 *
 * On the host, for a representation with a key copy of its nodes (LRepresentation.keys),
 * a bounded block converts its float rows to keys that compare as integers: i64 (a
 * threshold's key and its rank) where those fit the stack, else i32 where they do. Keys
 * that fit in tiles of TOP_LANES rows give the walks of TOP_LANES rows or more their tops
 * (or leaf masks) where the CPU takes tops in vectors. A block walked TOP_LANES rows side
 * by side prefetches the rows of the next block. NaN reads as 0 where every block's rows
 * can be copied on the stack, on the host, for a representation that lowers ifComplete
 * twice (the copy replaces the second version).
 */
#include "lower/cost.h"
#include "lower/lower.h"
#include "lower/rep.h"

/* A loop over rows that walks TOP_LANES of them side by side. */
static bool row_lanes(const MModule *m, const MInst *inst)
{
	(void)m;
	return inst->op == MOP_FOR && inst->interleave == TOP_LANES && !(inst->loop & MLOOP_TREES);
}

/* The block of ifComplete inst, whose rows have `columns` keys (cost_key_columns). */
static uint8_t plan_block(const MModule *m, const LRepresentation *rep, const MInst *inst, uint32_t columns)
{
	uint8_t block;
	bool fits;
	if (!rep->keys || inst->span == MIR_ROWS_ALL)
		return 0;
	if (cost_whole_keys_fit(columns, inst->span))
		block = MBLOCK_KEYS | MBLOCK_WHOLE;
	else if (cost_keys_fit(columns, inst->span))
		block = MBLOCK_KEYS;
	else
		return 0;
	fits = cost_tiles_fit(columns, inst->span);
	if (fits)
		block |= MBLOCK_TILES;
	if (inst->span < TOP_LANES)
		return block;
	if (fits && m->vector_tops != MTOPS_NONE && (rep->top_nodes || rep->walk_tile))
		block |= MBLOCK_TOPS;
	if (mir_some(m, inst->body, row_lanes))
		block |= MBLOCK_NEXT;
	return block;
}

/* Whether every ifComplete in the list from id (and the lists inside) is a bounded block whose rows of row_size bytes a value fit a copy on the stack. */
static bool all_copy_rows(const MModule *m, uint32_t id, size_t row_size)
{
	for (; id != MIR_NONE; id = m->insts[id].next) {
		const MInst *inst = &m->insts[id];
		if (inst->op == MOP_IF_COMPLETE && (inst->span == MIR_ROWS_ALL || !cost_zero_rows_fit(m->forest, inst->span, row_size)))
			return false;
		if (!all_copy_rows(m, inst->body, row_size))
			return false;
	}
	return true;
}

void mir_plan_blocks(MModule *m, bool gpu)
{
	const LRepresentation *rep = rep_find(m->representation);
	bool plans = !gpu && rep; /* blocks are planned on the host, for a known representation */
	uint32_t columns = plans ? cost_key_columns(m->forest) : 0;
	m->nan_as_zero = 0;
	for (uint32_t id = 0; id < m->num_insts; id++)
		if (m->insts[id].op == MOP_IF_COMPLETE)
			m->insts[id].block = plans ? plan_block(m, rep, &m->insts[id], columns) : 0;
	if (!plans || rep->one_version)
		return;
	if (all_copy_rows(m, m->body, sizeof(float)))
		m->nan_as_zero |= MZERO_FLOATS;
	if (all_copy_rows(m, m->body, sizeof(double)))
		m->nan_as_zero |= MZERO_DOUBLES;
}

int64_t mir_keyless_block(const MModule *m, uint32_t *columns)
{
	const LRepresentation *rep = rep_find(m->representation);
	int64_t rows = 0;
	if (!rep || !rep->keys)
		return 0;
	/* plan_block leaves a bounded block of a key copy without keys only where they would not fit */
	for (uint32_t id = 0; id < m->num_insts; id++) {
		const MInst *inst = &m->insts[id];
		if (inst->op == MOP_IF_COMPLETE && inst->span != MIR_ROWS_ALL && !(inst->block & MBLOCK_KEYS) && inst->span > rows)
			rows = inst->span;
	}
	if (rows)
		*columns = cost_key_columns(m->forest);
	return rows;
}
