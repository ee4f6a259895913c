/*
 * MIR pass: interleaving, i.e. unroll and jam of a row or a tree loop.
 *
 * Rows. A row loop `for batch { init; for tree { walk; reduce }; transform }` walks one
 * tree for one row at a time, and each step of a walk waits for the load of the node
 * before it. Marking the loop `interleave k` asks the lowering to take k rows per
 * iteration and to emit each step of a walk for all k rows together, so k independent
 * chains of loads overlap. The rows after the last whole group of k run one at a time,
 * so a single row costs one walk per tree.
 *
 * Trees. Where rows run one at a time (a single-row prediction, or the rows after the
 * last whole group), the walks of one row through consecutive trees are independent.
 * Marking a tree loop `interleave k` asks the lowering to walk k trees side by side
 * there, reducing their values in tree order (so sums round exactly as before). Where
 * rows are interleaved the mark is ignored: lanes do not multiply.
 */
#include "lower/lower.h"

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
		case MOP_WALK:
		case MOP_REDUCE:
		case MOP_TRANSFORM:
			if (!mir_index_has(&inst->row, var))
				return false;
			break;
		case MOP_REDUCE_DIM: /* folds whole buffers: not per row */
			return false;
		case MOP_BUFFER: /* one per lane */
		case MOP_INIT:
		case MOP_GET_TREE:
			break;
		}
	}
	return true;
}

/* Whether the loop body is a tree's get, walk and reduce, all at tree indices that include var. */
static bool walks_only(const MModule *m, uint32_t first, int32_t var)
{
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		const MInst *inst = &m->insts[id];
		if (inst->op != MOP_GET_TREE && inst->op != MOP_WALK && inst->op != MOP_REDUCE)
			return false;
		if (inst->op == MOP_GET_TREE && !mir_index_has(&inst->tree, var))
			return false;
	}
	return true;
}

void mir_interleave(MModule *m, uint32_t rows, uint32_t trees)
{
	for (uint32_t id = 0; id < m->num_insts; id++) {
		MInst *inst = &m->insts[id];
		const HIndexVar *v;
		uint32_t k;
		if (inst->op != MOP_FOR)
			continue;
		v = &m->forest->schedule.vars[inst->var];
		if (v->kind == HVAR_TILE_OUTER)
			continue;
		if (v->over_trees ? !walks_only(m, inst->body, inst->var) : !rows_only(m, inst->body, inst->var))
			continue;
		k = v->over_trees ? trees : rows;
		inst->interleave = (uint8_t)(k > MIR_MAX_INTERLEAVE ? MIR_MAX_INTERLEAVE : k);
	}
}

void mir_interleave_directives(MModule *m)
{
	for (uint32_t id = 0; id < m->num_insts; id++) {
		MInst *inst = &m->insts[id];
		HRange r;
		if (inst->op != MOP_FOR || !(m->forest->schedule.vars[inst->var].flags & HVAR_INTERLEAVE))
			continue;
		/* hir_schedule_check made it innermost, with at most MIR_MAX_INTERLEAVE iterations. */
		hir_schedule_range(&m->forest->schedule, inst->var, &r);
		inst->interleave = (uint8_t)r.max_trips;
	}
}
