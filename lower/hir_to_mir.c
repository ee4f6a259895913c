/*
 * HIR -> MIR: build the loop nest the schedule describes, by one walk over its loop
 * tree. Every loop becomes a FOR over its variable; the innermost bodies get the tree,
 * walk it for the row and reduce the walk's value into the margins buffer.
 *
 * The margins buffer is declared where the walk first meets a tree loop: at the
 * deepest point reached from the outside through batch loops only. Its rows are those
 * one iteration there covers: the batch variables bound above it are its row base, and
 * the batch loops below it (inside the tree loops) give the row within the buffer. When
 * those loops run over offsets within a tile, the buffer holds just that tile's rows
 * (on the stack: a one-row prediction allocates nothing); otherwise it holds all N rows
 * (in the caller's workspace). The buffer is initialised with the base scores before
 * the tree loops and transformed into the output after them, by a nest of the batch
 * loops found below (each row once, whatever the tree loops around them).
 *
 * Reductions are plain here; mir_legalize_reductions makes those under parallel loops
 * safe.
 */
#include "lower/lower.h"
#include "lower/rep.h"

typedef struct Walker {
	MModule *m;
	const HSchedule *s;
} Walker;

/* What the loops around the point being lowered have bound. */
typedef struct Bound {
	MIndex rows, trees; /* the batch and tree variables bound */
	uint32_t buf;       /* the margins buffer (MIR_NONE until declared) */
} Bound;

_Static_assert(MIR_MAX_TERMS >= HIR_MAX_NESTED && HIR_MAX_VARS <= INT8_MAX, "hir_schedule_check bounds index terms");
static void add_term(MIndex *index, int32_t var)
{
	if (index->num_terms == MIR_MAX_TERMS)
		die("an index of more than %d terms (hir_schedule_check limits nesting)", MIR_MAX_TERMS);
	index->terms[index->num_terms++] = (int8_t)var;
}

/*
 * Loops are lowered a list of siblings at a time: first and its next siblings up to
 * end (exclusive; HIR_NONE: all of them).
 */

/*
 * The largest sum of batch-loop (trees: tree-loop) offsets on a path down from the loops
 * first..end; -1 if some such loop there is absolute.
 */
static int64_t offsets_below(const HSchedule *s, int32_t first, int32_t end, bool trees)
{
	int64_t most = 0;
	for (int32_t v = first; v != end; v = s->vars[v].next_sibling) {
		int64_t here = s->vars[v].over_trees != trees ? 0 : hir_schedule_max_offset(s, v);
		int64_t below = offsets_below(s, s->vars[v].first_child, HIR_NONE, trees);
		if (here < 0 || below < 0)
			return -1;
		if (here + below > most)
			most = here + below;
	}
	return most;
}

/* Whether the variables of index derive one from var (var among their lineage). */
static bool index_derives(const HSchedule *s, const MIndex *index, int32_t var)
{
	for (uint32_t k = 0; k < index->num_terms; k++)
		for (int32_t v = index->terms[k]; v != HIR_NONE; v = s->vars[v].parent)
			if (v == var)
				return true;
	return false;
}

/* What fills the body of a loop, given the loops inside it and what is bound there. */
typedef void NestFn(Walker *w, MList *l, int32_t first, int32_t end, Bound b);

/* Append a FOR for each of the sibling loops first..end, each body filled by fill from the loop's children. */
static void add_loops(Walker *w, MList *l, int32_t first, int32_t end, Bound b, NestFn *fill)
{
	for (int32_t v = first; v != end; v = w->s->vars[v].next_sibling) {
		const HIndexVar *x = &w->s->vars[v];
		Bound inner = b;
		MList body = {MIR_NONE, MIR_NONE};
		uint32_t loop = mir_append(w->m, l, MOP_FOR);
		w->m->insts[loop].var = v;
		w->m->insts[loop].gpu_dim = x->gpu_dim;
		w->m->insts[loop].parallel = (x->flags & HVAR_PARALLEL) || x->gpu_dim;
		w->m->insts[loop].loop = (uint8_t)((x->over_trees ? MLOOP_TREES : 0) | (x->flags & HVAR_CACHE ? MLOOP_CACHE : 0) |
		                                   (x->flags & HVAR_SPECIALIZE ? MLOOP_SPECIALIZE : 0) | (x->flags & HVAR_PREFETCH ? MLOOP_PREFETCH : 0) |
		                                   (x->by_size && x->kind == HVAR_SPLIT_FIRST ? MLOOP_FEW_ROWS : 0));
		/* (MLoop.rows: of a tree loop, the trees an iteration covers) */
		if (x->kind == HVAR_TILE_OUTER && index_derives(w->s, x->over_trees ? &b.trees : &b.rows, x->partner)) {
			/* inside its tile's inner loop, an iteration covers the rows of the batch loops inside it */
			int64_t offsets = offsets_below(w->s, x->first_child, HIR_NONE, x->over_trees);
			w->m->loops[v].rows = offsets < 0 ? MIR_ROWS_ALL : offsets + 1;
		} else if (x->kind == HVAR_TILE_INNER && !index_derives(w->s, x->over_trees ? &b.trees : &b.rows, x->partner)) {
			w->m->loops[v].rows = MIR_ROWS_ALL; /* outside its tile's outer loop: rows a step apart, to the end */
		} else if (offsets_below(w->s, x->first_child, HIR_NONE, x->over_trees) < 0) {
			w->m->loops[v].rows = MIR_ROWS_ALL; /* a loop inside runs to the end (such a tile's tiles) */
		}
		add_term(x->over_trees ? &inner.trees : &inner.rows, v);
		fill(w, &body, x->first_child, HIR_NONE, inner);
		w->m->insts[loop].body = body.first;
	}
}

/* The transform of every row below: a nest of the batch loops under the loops first..end (tree loops looked through). */
static void transform_nest(Walker *w, MList *l, int32_t first, int32_t end, Bound b)
{
	const HSchedule *s = w->s;
	if (first == HIR_NONE) {
		uint32_t t = mir_append(w->m, l, MOP_TRANSFORM);
		w->m->insts[t].buf = b.buf;
		w->m->insts[t].row = b.rows;
		return;
	}
	if (s->vars[first].over_trees) {
		/* Sibling tree loops (split) each run over all the rows below: the first one's rows are all of them. */
		transform_nest(w, l, s->vars[first].first_child, HIR_NONE, b);
		return;
	}
	add_loops(w, l, first, end, b, transform_nest);
}

static void lower_loops(Walker *w, MList *l, int32_t first, int32_t end, Bound b);

/* Declare the margins buffer for the rows bound in b and the batch loops below first..end; initialise, lower, transform. */
static void declare_margins(Walker *w, MList *l, int32_t first, int32_t end, Bound b)
{
	int64_t offsets = offsets_below(w->s, first, end, false);
	MBuffer buffer = {.type = w->m->forest->leaf_type, .space = MSPACE_LOCAL, .base = b.rows, .rows = offsets + 1, .copy_var = HIR_NONE, .copies = 1,
	                  .outputs = w->m->forest->num_outputs, .of = MIR_NONE};
	uint32_t decl, init;
	if (offsets < 0) {
		/* Some batch loop below runs over absolute rows: the buffer holds them all. */
		buffer.space = MSPACE_WORKSPACE;
		buffer.base = (MIndex){0};
		buffer.rows = MIR_ROWS_ALL;
	}
	b.buf = mir_buffer_add(w->m, &buffer);
	decl = mir_append(w->m, l, MOP_BUFFER);
	w->m->insts[decl].buf = b.buf;
	init = mir_append(w->m, l, MOP_INIT);
	w->m->insts[init].buf = b.buf;
	lower_loops(w, l, first, end, b);
	transform_nest(w, l, first, end, b);
}

/* Whether the sibling loops first..end hold both tree loops and batch loops: the halves of a batch split by size. */
static bool halves(const HSchedule *s, int32_t first, int32_t end)
{
	bool trees = false, rows = false;
	for (int32_t v = first; v != end; v = s->vars[v].next_sibling) {
		trees = trees || s->vars[v].over_trees;
		rows = rows || !s->vars[v].over_trees;
	}
	return trees && rows;
}

/* Lower the sibling loops first..end (and the walk, where there are none) into l. */
static void lower_loops(Walker *w, MList *l, int32_t first, int32_t end, Bound b)
{
	const HSchedule *s = w->s;
	MModule *m = w->m;
	if (b.buf == MIR_NONE && first != HIR_NONE && halves(s, first, end)) {
		/* Each half its own margins: one whose tree loop is outermost must not make the other's rows all N. */
		for (int32_t v = first; v != end; v = s->vars[v].next_sibling)
			lower_loops(w, l, v, s->vars[v].next_sibling, b);
		return;
	}
	if (b.buf == MIR_NONE && (first == HIR_NONE || s->vars[first].over_trees)) {
		declare_margins(w, l, first, end, b);
		return;
	}
	if (first == HIR_NONE) {
		uint32_t tree = mir_append(m, l, MOP_GET_TREE), walk, reduce;
		m->insts[tree].tree = b.trees;
		walk = mir_append(m, l, MOP_WALK);
		m->insts[walk].a = tree;
		m->insts[walk].row = b.rows;
		reduce = mir_append(m, l, MOP_REDUCE);
		m->insts[reduce].a = tree;
		m->insts[reduce].b = walk;
		m->insts[reduce].row = b.rows;
		m->insts[reduce].buf = b.buf;
		m->insts[reduce].reduce_op = mir_reduce_op(m->forest);
		return;
	}
	add_loops(w, l, first, end, b, lower_loops);
}

MModule *lower_hir_to_mir(const HForest *f, const char *representation, Error *e)
{
	Walker w = {.s = &f->schedule};
	MList top = {MIR_NONE, MIR_NONE};
	Bound none = {.buf = MIR_NONE};
	const LRepresentation *rep;

	if (!hir_verify(f, e))
		return NULL;
	if (f->schedule.num_trees != f->num_trees)
		return error_set(e, "schedule: made for %u trees, the forest has %u", f->schedule.num_trees, f->num_trees), NULL;
	if (!hir_schedule_check(&f->schedule, e) || !(rep = rep_for(f, representation, e)))
		return NULL;
	w.m = mir_module_new(f);
	w.m->representation = rep->name;
	lower_loops(&w, &top, f->schedule.first_loop, HIR_NONE, none);
	w.m->body = top.first;
	if (!mir_verify(w.m, e)) {
		mir_module_free(w.m);
		return NULL;
	}
	return w.m;
}
