/* Helpers of the lowering's unit tests. */
#ifndef GROVE_TESTS_LOWER_CHECK_H
#define GROVE_TESTS_LOWER_CHECK_H

#include "lower/lower.h"

/* m lowered to LIR with representation rep in place of the one lower_hir_to_mir chose (NULL: that one). */
static inline LModule *lower_as(MModule *m, const char *rep, Error *e)
{
	const char *chosen = m->representation;
	LModule *l;
	if (rep)
		m->representation = rep;
	l = lower_mir_to_lir(m, e);
	m->representation = chosen;
	return l;
}

#endif
