/*
 * MIR pass: walk unrolling. No leaf is shallower than the forest's shallowest leaf,
 * so that many steps of every walk need no leaf test (peeling); when all leaves sit
 * at one depth (as after hir_pad) the peeled steps are the whole walk (unrolling).
 */
#include "lower/lower.h"

void mir_unroll_walks(MModule *m)
{
	uint32_t min, max;
	hir_leaf_depth_range(m->forest, &min, &max);
	for (uint32_t id = 0; id < m->num_insts; id++) {
		MInst *inst = &m->insts[id];
		if (inst->op != MOP_WALK)
			continue;
		inst->peel = inst->peel_safe = (uint16_t)min;
		inst->exact = min == max;
	}
}
