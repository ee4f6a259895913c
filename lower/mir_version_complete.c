/*
 * MIR pass: versioning on complete rows. Every step of a walk tests whether the row's
 * feature is missing (NaN, and for LightGBM's zero-as-missing splits values near zero)
 * and picks the side the split sends missing values to: on XGBoost's models half of a
 * step's instructions. Most rows hold no missing value at all, so the walks of a group
 * of rows are wrapped in `ifComplete rows[first, +span)`, whose lowering scans those
 * rows once and runs a copy of the walks that skips the missing-value tests when none
 * is missing, the usual walks otherwise. Predictions are the same either way.
 *
 * The group is the rows one iteration of the innermost batch loop around the walks
 * covers (the rows its step spans), so the scan is paid once for every tree those rows
 * walk: a tile of rows, a group of interleaved rows, or, where a tree loop runs outside
 * every batch loop, the whole batch. Interleaved batch loops are not split: their
 * iterations run together, and the group is the loop around them.
 */
#include "lower/lower.h"

/* Whether instruction id goes in an ifComplete: it walks, or it takes a walk's tree or value. */
static bool wrapped(const MModule *m, uint32_t id)
{
	MOp op = (MOp)m->insts[id].op;
	return op == MOP_GET_TREE || op == MOP_REDUCE || mir_walks(m, id);
}

/* Whether instruction id is a batch loop that groups rows more finely (its iterations do not run together). */
static bool finer_batch_loop(const MModule *m, uint32_t id)
{
	const MInst *inst = &m->insts[id];
	return inst->op == MOP_FOR && !(inst->loop & MLOOP_TREES) && inst->interleave <= 1;
}

/*
 * Wrap each run of instructions of the body of owner (MIR_NONE: the function) that
 * walk rows of the group [rows, rows + span) in an ifComplete of that group; go down
 * the batch loops that group rows more finely.
 */
static void version_list(MModule *m, uint32_t owner, MIndex rows, int64_t span)
{
	uint32_t prev = MIR_NONE, id = owner == MIR_NONE ? m->body : m->insts[owner].body;
	while (id != MIR_NONE) {
		uint32_t last = id, after, v;
		if (finer_batch_loop(m, id) && mir_walks(m, id) && rows.num_terms < MIR_MAX_TERMS) {
			MIndex inner = rows;
			inner.terms[inner.num_terms++] = (int8_t)m->insts[id].var;
			version_list(m, id, inner, m->loops[m->insts[id].var].rows);
		}
		if (!wrapped(m, id) || finer_batch_loop(m, id)) {
			prev = id;
			id = m->insts[id].next;
			continue;
		}
		while (m->insts[last].next != MIR_NONE && wrapped(m, m->insts[last].next) && !finer_batch_loop(m, m->insts[last].next))
			last = m->insts[last].next;
		after = m->insts[last].next;
		v = mir_new(m, MOP_IF_COMPLETE);
		m->insts[v].row = rows;
		m->insts[v].span = span;
		m->insts[v].body = id;
		m->insts[last].next = MIR_NONE;
		mir_link_after(m, owner, prev, v);
		m->insts[v].next = after;
		prev = v;
		id = after;
	}
}

void mir_version_complete(MModule *m)
{
	version_list(m, MIR_NONE, (MIndex){0}, MIR_ROWS_ALL);
}
