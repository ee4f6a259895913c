/*
 * MIR pass: interleaving, i.e. unroll and jam of a row or a tree loop, where the
 * schedule asks for it with interleave(v).
 *
 * Rows. A row loop `for b1 { ...; for tree { walk; reduce }; ... }` walks one tree for
 * one row at a time, and each step of a walk waits for the load of the node before
 * it. Marking the loop `interleave k` asks the lowering to take k rows per iteration
 * and to emit each step of a walk for all k rows together, so k independent chains of
 * loads overlap. The rows after the last whole group of k run one at a time, so a
 * single row costs one walk per tree.
 *
 * Trees. Marking an innermost tree loop `interleave k` asks the lowering to walk k
 * trees of one row side by side, reducing their values in tree order (so sums round
 * exactly as before). Inside a loop interleaved over rows it runs tree after tree
 * (lanes do not multiply); it interleaves where rows go one at a time.
 */
#include "lower/lower.h"

void mir_interleave(MModule *m)
{
	for (uint32_t id = 0; id < m->num_insts; id++) {
		MInst *inst = &m->insts[id];
		HRange r;
		if (inst->op != MOP_FOR || !(m->forest->schedule.vars[inst->var].flags & HVAR_INTERLEAVE))
			continue;
		/*
		 * Only loops that walk: a loop of the variable that only transforms margins (the
		 * rows' output, after the tree loop) has no chain of loads to overlap, and its 16
		 * copies, each with its own branches, were an eighth of a kernel's code.
		 */
		if (!mir_walks(m, id))
			continue;
		/* hir_schedule_check made its trip count constant and at most MIR_MAX_INTERLEAVE. */
		mir_loop_range(m, inst->var, &r);
		inst->interleave = (uint8_t)r.max_trips;
	}
}
