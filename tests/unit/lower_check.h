/* Helpers of the lowering's unit tests. */
#ifndef GROVE_TESTS_LOWER_CHECK_H
#define GROVE_TESTS_LOWER_CHECK_H

#include "lower/lower.h"

/*
 * m lowered to LIR for the host with representation rep in place of the one
 * lower_hir_to_mir chose (NULL: that one), its blocks planned for it (mir_plan_blocks)
 * as a compile does.
 */
static inline LModule *lower_as(MModule *m, const char *rep, Error *e)
{
	const char *chosen = m->representation;
	LModule *l;
	if (rep)
		m->representation = rep;
	mir_plan_blocks(m, false);
	l = lower_mir_to_lir(m, e);
	m->representation = chosen;
	return l;
}

#endif
