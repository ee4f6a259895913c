/*
 * MIR pass: tree interleaving. Where rows run one at a time (a single-row prediction,
 * or the rows after the last whole group of an interleaved row loop), the walks of one
 * row through consecutive trees are independent, but each waits on its own chain of
 * node loads. Marking a tree loop `interleave k` asks the lowering to walk k trees
 * side by side there, reducing their values in tree order (so sums round exactly as
 * before). Where rows are interleaved the mark is ignored: lanes do not multiply.
 */
#include "lower/lower.h"

/* Whether the loop body is a tree's get, walk and reduce, all at tree indices that include var. */
static bool walks_only(const MModule *m, uint32_t first, int32_t var)
{
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		const MInst *inst = &m->insts[id];
		bool found = false;
		if (inst->op == MOP_FOR || inst->op == MOP_INIT || inst->op == MOP_TRANSFORM)
			return false;
		if (inst->op != MOP_GET_TREE)
			continue;
		for (uint32_t i = 0; i < inst->tree.num_terms; i++)
			found |= inst->tree.terms[i] == var;
		if (!found)
			return false;
	}
	return true;
}

void mir_interleave_trees(MModule *m, uint32_t trees)
{
	if (trees > MIR_MAX_INTERLEAVE)
		trees = MIR_MAX_INTERLEAVE;
	for (uint32_t id = 0; id < m->num_insts; id++) {
		MInst *inst = &m->insts[id];
		const HIndexVar *v;
		if (inst->op != MOP_FOR)
			continue;
		v = &m->forest->schedule.vars[inst->var];
		if (v->over_trees && v->kind != HVAR_TILE_OUTER && walks_only(m, inst->body, inst->var))
			inst->interleave = (uint8_t)trees;
	}
}
