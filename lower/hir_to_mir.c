/*
 * HIR -> MIR: build the loop nest the schedule describes.
 *
 * The loops follow the schedule's loop tree, which must be one chain of loops for now
 * (split makes sibling loops, which this lowering does not take yet: the schedule
 * language accepts them and the lowering says so). The innermost body gets the tree,
 * walks it for the row and reduces the walk's value into the row's result. Each row's
 * result is initialised with the base scores before its first tree and transformed
 * after its last one:
 *  - when every batch loop encloses every tree loop, in the body of the innermost
 *    batch loop (a row's whole life is one iteration);
 *  - when the batch loops outside the tree loops end with the outer half of a tile
 *    whose inner half is the only batch loop inside them, in loop nests over the inner
 *    half in the body of the outer one, before and after the tree loops (a tile of
 *    rows lives in one iteration: its results fit in a bounded scratch array);
 *  - otherwise in loop nests of their own before and after the main one.
 */
#include "lower/lower.h"

/* The loop chain of a schedule, outermost first. */
typedef struct Nest {
	const HSchedule *s;
	int32_t order[HIR_MAX_VARS];
	uint32_t num_order;
} Nest;

/* The sum of the variables among order[0..depth) that index trees (or rows). */
static MIndex index_of(const Nest *s, uint32_t depth, bool over_trees)
{
	MIndex index = {0};
	for (uint32_t i = 0; i < depth; i++) {
		int32_t v = s->order[i];
		if (s->s->vars[v].over_trees == over_trees)
			index.terms[index.num_terms++] = (int8_t)v;
	}
	return index;
}

/* Append a FOR over order[depth] to list l; returns it. */
static uint32_t add_loop(MModule *m, const Nest *s, MList *l, uint32_t depth)
{
	uint32_t loop = mir_append(m, l, MOP_FOR);
	m->insts[loop].var = s->order[depth];
	m->insts[loop].parallel = (s->s->vars[s->order[depth]].flags & HVAR_PARALLEL) != 0;
	return loop;
}

/* Emit loops order[depth..] around the tree walk into l. */
static void lower_nest(MModule *m, const Nest *s, MList *l, uint32_t depth, uint32_t row_loops_end)
{
	MList body = {MIR_NONE, MIR_NONE};
	uint32_t loop;

	if (depth == s->num_order) {
		uint32_t tree = mir_append(m, l, MOP_GET_TREE);
		uint32_t walk, reduce;
		m->insts[tree].tree = index_of(s, depth, true);
		walk = mir_append(m, l, MOP_WALK);
		m->insts[walk].a = tree;
		m->insts[walk].row = index_of(s, depth, false);
		reduce = mir_append(m, l, MOP_REDUCE);
		m->insts[reduce].a = tree;
		m->insts[reduce].b = walk;
		m->insts[reduce].row = index_of(s, depth, false);
		return;
	}
	loop = add_loop(m, s, l, depth);
	if (depth + 1 == row_loops_end) {
		/* The innermost batch loop enclosing all tree loops: the row's whole life is here. */
		uint32_t init = mir_append(m, &body, MOP_INIT), transform;
		m->insts[init].row = index_of(s, depth + 1, false);
		lower_nest(m, s, &body, depth + 1, row_loops_end);
		transform = mir_append(m, &body, MOP_TRANSFORM);
		m->insts[transform].row = index_of(s, depth + 1, false);
	} else {
		lower_nest(m, s, &body, depth + 1, row_loops_end);
	}
	m->insts[loop].body = body.first;
}

/* The row index of a loop over inner inside the batch loops among order[0..depth). */
static MIndex tile_row_index(const Nest *s, uint32_t depth, int32_t inner)
{
	MIndex index = index_of(s, depth, false);
	index.terms[index.num_terms++] = (int8_t)inner;
	return index;
}

/* Append `for inner { op result[tile row] }` to l. */
static void add_tile_row_op(MModule *m, const Nest *s, MList *l, uint32_t depth, int32_t inner, MOp op)
{
	MList body = {MIR_NONE, MIR_NONE};
	uint32_t loop = mir_append(m, l, MOP_FOR), inst = mir_append(m, &body, op);
	m->insts[loop].var = inner;
	m->insts[inst].row = tile_row_index(s, depth, inner);
	m->insts[loop].body = body.first;
}

/* Emit the batch loops order[depth..prefix_end) around init, the rest of the nest and transform for a tile of rows. */
static void lower_tile_nest(MModule *m, const Nest *s, MList *l, uint32_t depth, uint32_t prefix_end, int32_t inner)
{
	MList body = {MIR_NONE, MIR_NONE};
	uint32_t loop;
	if (depth == prefix_end) {
		add_tile_row_op(m, s, l, depth, inner, MOP_INIT);
		lower_nest(m, s, l, depth, UINT32_MAX);
		add_tile_row_op(m, s, l, depth, inner, MOP_TRANSFORM);
		return;
	}
	loop = add_loop(m, s, l, depth);
	lower_tile_nest(m, s, &body, depth + 1, prefix_end, inner);
	m->insts[loop].body = body.first;
}

/* The inner half of the tile whose outer half is order[prefix_end - 1], if it is the only later batch loop; else HIR_NONE. */
static int32_t row_tile_inner(const Nest *s, uint32_t prefix_end, uint32_t num_row_vars)
{
	const HIndexVar *outer;
	if (prefix_end == 0 || num_row_vars != prefix_end + 1)
		return HIR_NONE;
	outer = &s->s->vars[s->order[prefix_end - 1]];
	return outer->kind == HVAR_TILE_OUTER ? outer->partner : HIR_NONE;
}

/* Emit a nest of just the batch loops around a single per-row operation. */
static void lower_row_nest(MModule *m, const Nest *s, MList *l, MOp op)
{
	MList *list = l, bodies[HIR_MAX_VARS];
	uint32_t depth = 0, n = 0, inst;
	int32_t vars[HIR_MAX_VARS];

	for (uint32_t i = 0; i < s->num_order; i++)
		if (!s->s->vars[s->order[i]].over_trees)
			vars[n++] = s->order[i];
	for (uint32_t i = 0; i < n; i++) {
		uint32_t loop = mir_append(m, list, MOP_FOR);
		m->insts[loop].var = vars[i];
		m->insts[loop].parallel = (s->s->vars[vars[i]].flags & HVAR_PARALLEL) != 0;
		bodies[depth] = (MList){MIR_NONE, MIR_NONE};
		list = &bodies[depth++];
	}
	inst = mir_append(m, list, op);
	m->insts[inst].row.num_terms = (uint8_t)n;
	for (uint32_t i = 0; i < n; i++)
		m->insts[inst].row.terms[i] = (int8_t)vars[i];
	/* Link each loop to its body, innermost first. */
	for (uint32_t d = depth; d-- > 0;) {
		MList *outer = d ? &bodies[d - 1] : l;
		m->insts[outer->last].body = bodies[d].first;
	}
}

/* Directives this lowering does not take yet (or not on the host): an error naming the first one. */
static bool check_supported(const HSchedule *s, Error *e)
{
	static const HDirectiveKind unsupported[] = {HDIR_CACHE, HDIR_SPECIALIZE, HDIR_ATOMIC_REDUCE, HDIR_VECTOR_REDUCE};
	char where[700];
	for (uint32_t i = 0; i < s->num_vars; i++) {
		const HIndexVar *v = &s->vars[i];
		int32_t var = (int32_t)i;
		if (!v->has_loop)
			continue;
		if (v->gpu_dim)
			return error_set(e, "%s: the host target has no GPU grid or blocks (gpuDimension needs a GPU target)",
			                 hir_schedule_where(s, var, HDIR_GPU_DIMENSION, where, sizeof where));
		if (v->reduce == HREDUCE_SHARED)
			return error_set(e, "%s: the host target has no shared memory (sharedReduce needs a GPU target)",
			                 hir_schedule_where(s, var, HDIR_SHARED_REDUCE, where, sizeof where));
		if (v->over_trees && v->flags & HVAR_PARALLEL)
			return error_set(e, "%s: parallel tree loops need reduction legalization, which is not implemented yet",
			                 hir_schedule_where(s, var, HDIR_PARALLEL, where, sizeof where));
		if (v->next_sibling != HIR_NONE)
			return error_set(e, "schedule: '%s' and '%s' are sibling loops (made by split); split loops are not lowered yet",
			                 v->name, s->vars[v->next_sibling].name);
		for (uint32_t k = 0; k < COUNT_OF(unsupported); k++)
			if (hir_var_has_directive(v, unsupported[k]))
				return error_set(e, "%s: not implemented yet", hir_schedule_where(s, var, unsupported[k], where, sizeof where));
	}
	return true;
}

MModule *lower_hir_to_mir(const HForest *f, Error *e)
{
	Nest nest = {.s = &f->schedule}, *s = &nest;
	MModule *m;
	MList top = {MIR_NONE, MIR_NONE};
	uint32_t row_loops_end = 0, num_row_vars = 0;
	int32_t tile_inner;

	if (!hir_verify(f, e))
		return NULL;
	if (f->schedule.num_trees != f->num_trees)
		return error_set(e, "schedule: made for %u trees, the forest has %u", f->schedule.num_trees, f->num_trees), NULL;
	if (!hir_schedule_check(&f->schedule, e) || !check_supported(&f->schedule, e))
		return NULL;
	for (int32_t v = f->schedule.first_loop; v != HIR_NONE; v = f->schedule.vars[v].first_child)
		s->order[s->num_order++] = v;
	m = mir_module_new(f);
	/* How many loops, from the outside, iterate over rows only. */
	while (row_loops_end < s->num_order && !f->schedule.vars[s->order[row_loops_end]].over_trees)
		row_loops_end++;
	for (uint32_t i = 0; i < s->num_order; i++)
		num_row_vars += !f->schedule.vars[s->order[i]].over_trees;

	tile_inner = row_tile_inner(s, row_loops_end, num_row_vars);
	if (row_loops_end == num_row_vars && row_loops_end > 0) {
		lower_nest(m, s, &top, 0, row_loops_end);
	} else if (tile_inner != HIR_NONE) {
		lower_tile_nest(m, s, &top, 0, row_loops_end, tile_inner);
	} else {
		lower_row_nest(m, s, &top, MOP_INIT);
		lower_nest(m, s, &top, 0, UINT32_MAX);
		lower_row_nest(m, s, &top, MOP_TRANSFORM);
	}
	m->body = top.first;
	if (!mir_verify(m, e)) {
		mir_module_free(m);
		return NULL;
	}
	return m;
}
