/*
 * MIR pass: row interleaving. A row loop `for batch { init; for tree { walk; reduce };
 * transform }` walks one tree for one row at a time, and each step of a walk waits for
 * the load of the node before it. Marking the loop `interleave k` asks the lowering to
 * take k rows per iteration and to emit each step of a walk for all k rows together
 * (unroll and jam), so k independent chains of loads overlap. The rows after the last
 * whole group of k run one at a time, so a single row costs one walk per tree.
 */
#include "lower/lower.h"

/* Whether var is a term of index. */
static bool has_term(const MIndex *index, int32_t var)
{
	for (uint32_t i = 0; i < index->num_terms; i++)
		if (index->terms[i] == var)
			return true;
	return false;
}

/* Whether every row index in the list (and nested lists) includes var, and no row loop is nested. */
static bool rows_only(const MModule *m, uint32_t first, int32_t var)
{
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		const MInst *inst = &m->insts[id];
		switch ((MOp)inst->op) {
		case MOP_FOR:
			if (!m->forest->schedule.vars[inst->var].over_trees || !rows_only(m, inst->body, var))
				return false;
			break;
		case MOP_INIT:
		case MOP_WALK:
		case MOP_REDUCE:
		case MOP_TRANSFORM:
			if (!has_term(&inst->row, var))
				return false;
			break;
		case MOP_GET_TREE:
			break;
		}
	}
	return true;
}

void mir_interleave_rows(MModule *m, uint32_t rows)
{
	if (rows > MIR_MAX_INTERLEAVE)
		rows = MIR_MAX_INTERLEAVE;
	for (uint32_t id = 0; id < m->num_insts; id++) {
		MInst *inst = &m->insts[id];
		const HIndexVar *v;
		if (inst->op != MOP_FOR)
			continue;
		v = &m->forest->schedule.vars[inst->var];
		if (!v->over_trees && v->kind != HVAR_TILE_OUTER && rows_only(m, inst->body, inst->var))
			inst->interleave = (uint8_t)rows;
	}
}
