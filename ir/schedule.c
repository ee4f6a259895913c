/* The schedule: index variables, the loop tree and directives (loop ranges: schedule_range.c). */
#include "ir/schedule.h"

#include <stdlib.h>
#include <string.h>

enum { NONE = -1 };

/* Most walks interleave may run side by side. */
#define MAX_INTERLEAVE 32

static const struct {
	const char *name;
	int names, ints, optional;
} directives[] = {
#define X(name, text, names, ints, optional) {text, names, ints, optional},
	HIR_DIRECTIVES(X)
#undef X
};

static const char *const gpu_dim_names[] = {
#define X(name, text) text,
	HIR_GPU_DIMS(X)
#undef X
};

const char *hir_directive_name(HDirectiveKind k) { return k < HDIR_COUNT ? directives[k].name : "?"; }
void hir_directive_arity(HDirectiveKind k, int *names, int *optional, int *ints)
{
	*names = k < HDIR_COUNT ? directives[k].names : 0;
	*optional = k < HDIR_COUNT ? directives[k].optional : 0;
	*ints = k < HDIR_COUNT ? directives[k].ints : 0;
}

const char *hir_gpu_dim_name(HGpuDim d) { return d < COUNT_OF(gpu_dim_names) ? gpu_dim_names[d] : "?"; }

/* Append the directive as written, e.g. "tile(batch, b0, b1, 64)", to buf. */
static void format_directive(const HDirective *d, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "%s(", hir_directive_name((HDirectiveKind)d->kind));
	for (uint32_t i = 0; i < d->num_names && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", d->names[i]);
	if (n < size && d->kind < HDIR_COUNT && directives[d->kind].ints)
		n += (size_t)snprintf(buf + n, size - n, ", %lld", (long long)d->value);
	if (n < size)
		snprintf(buf + n, size - n, ")");
}

void hir_schedule_pos(const HSchedule *s, HSourcePos pos, char *buf, size_t size)
{
	if (pos.line)
		snprintf(buf, size, "%s:%u:%u: ", s->source[0] ? s->source : "schedule", pos.line, pos.column);
	else
		buf[0] = 0;
}

/* Add a variable; returns its index or NONE when the table is full. */
static int32_t add_var(HSchedule *s, const char *name, HVarKind kind, bool over_trees, int32_t parent, uint32_t size)
{
	HIndexVar *v;
	if (s->num_vars >= HIR_MAX_VARS)
		return NONE;
	v = &s->vars[s->num_vars];
	memset(v, 0, sizeof *v);
	snprintf(v->name, sizeof v->name, "%s", name);
	v->kind = (uint8_t)kind;
	v->over_trees = over_trees;
	v->size = size;
	v->parent = parent;
	v->partner = v->origin = NONE;
	v->loop_parent = v->first_child = v->next_sibling = NONE;
	return (int32_t)s->num_vars++;
}

void hir_schedule_init(HSchedule *s, uint32_t num_trees)
{
	int32_t batch, tree;
	memset(s, 0, sizeof *s);
	s->num_trees = num_trees;
	batch = add_var(s, "batch", HVAR_ROOT, false, NONE, 0);
	tree = add_var(s, "tree", HVAR_ROOT, true, NONE, 0);
	s->vars[batch].has_loop = s->vars[tree].has_loop = true;
	s->vars[batch].first_child = tree;
	s->vars[tree].loop_parent = batch;
	s->first_loop = batch;
}

int32_t hir_schedule_find(const HSchedule *s, const char *name)
{
	for (uint32_t v = 0; v < s->num_vars; v++)
		if (strcmp(s->vars[v].name, name) == 0)
			return (int32_t)v;
	return NONE;
}

/* --- the loop tree --- */

/* The slot that points at loop v: its parent's first_child, its previous sibling's next_sibling, or first_loop. */
static int32_t *slot_of(HSchedule *s, int32_t v)
{
	int32_t parent = s->vars[v].loop_parent;
	int32_t *slot = parent == NONE ? &s->first_loop : &s->vars[parent].first_child;
	while (*slot != v)
		slot = &s->vars[*slot].next_sibling;
	return slot;
}

/* Number of loops directly inside loop v (or at the top when v is NONE). */
static uint32_t count_children(const HSchedule *s, int32_t v)
{
	uint32_t n = 0;
	for (int32_t c = v == NONE ? s->first_loop : s->vars[v].first_child; c != NONE; c = s->vars[c].next_sibling)
		n++;
	return n;
}

bool hir_schedule_encloses(const HSchedule *s, int32_t a, int32_t b)
{
	for (; b != NONE; b = s->vars[b].loop_parent)
		if (a == b)
			return true;
	return false;
}

/* Make children (a list linked by next_sibling) the children of loop v. */
static void adopt(HSchedule *s, int32_t v, int32_t children)
{
	s->vars[v].first_child = children;
	for (int32_t c = children; c != NONE; c = s->vars[c].next_sibling)
		s->vars[c].loop_parent = v;
}

/* --- messages --- */

/* Why variable v has no loop, e.g. "it was tiled into b0, b1 (line 2)". */
static void no_loop_reason(const HSchedule *s, int32_t v, char *buf, size_t size)
{
	size_t n = 0;
	const char *how = "copied by split into";
	for (uint32_t w = 0; w < s->num_vars; w++) {
		const HIndexVar *x = &s->vars[w];
		if (x->parent == v && (x->kind == HVAR_TILE_OUTER || x->kind == HVAR_SPLIT_FIRST)) {
			n = (size_t)snprintf(buf, size, "it was %s into %s, %s", x->kind == HVAR_TILE_OUTER ? "tiled" : "split", x->name,
			                     s->vars[x->partner].name);
			if (x->made.line && n < size)
				snprintf(buf + n, size - n, " (line %u)", x->made.line);
			return;
		}
	}
	buf[0] = 0;
	for (uint32_t w = 0; w < s->num_vars && n < size; w++)
		if (s->vars[w].origin == v) {
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? " and " : "it was copied by split into ", s->vars[w].name);
			how = NULL;
		}
	if (how)
		snprintf(buf, size, "it has no loop");
}

/* The variable named name, which must have a loop; NONE with e filled otherwise. */
static int32_t loop_var(const HSchedule *s, const char *name, Error *e)
{
	int32_t v = hir_schedule_find(s, name);
	char why[160];
	if (v == NONE)
		return error_set(e, "unknown variable '%s'", name), NONE;
	if (!s->vars[v].has_loop) {
		no_loop_reason(s, v, why, sizeof why);
		return error_set(e, "'%s' is no longer a loop: %s", name, why), NONE;
	}
	return v;
}

/* Whether name can name a new variable; fills e if not. */
static bool new_name(const HSchedule *s, const char *name, Error *e)
{
	int32_t old = hir_schedule_find(s, name);
	if (!name[0] || !(name[0] == '_' || ((name[0] | 32) >= 'a' && (name[0] | 32) <= 'z')))
		return error_set(e, "'%s' is not a variable name", name);
	for (const char *p = name; *p; p++)
		if (!(*p == '_' || *p == '.' || (*p >= '0' && *p <= '9') || ((*p | 32) >= 'a' && (*p | 32) <= 'z')))
			return error_set(e, "'%s' is not a variable name", name);
	if (strlen(name) + 1 >= HIR_MAX_NAME)
		return error_set(e, "'%s' is longer than %d characters", name, HIR_MAX_NAME - 2);
	if (old != NONE)
		return error_set(e, "'%s' is already a variable%s", name,
		                 s->vars[old].kind == HVAR_ROOT && s->vars[old].origin == NONE ? " (a root)" : "");
	return true;
}

bool hir_var_has_directive(const HIndexVar *v, HDirectiveKind k)
{
	switch (k) {
	case HDIR_PARALLEL: return v->flags & HVAR_PARALLEL;
	case HDIR_CACHE: return v->flags & HVAR_CACHE;
	case HDIR_INTERLEAVE: return v->flags & HVAR_INTERLEAVE;
	case HDIR_SPECIALIZE: return (v->flags & HVAR_SPECIALIZE) && !(v->flags & HVAR_UNROLL);
	case HDIR_UNROLL: return v->flags & HVAR_UNROLL;
	case HDIR_UNROLL_WALK: return v->unroll_walk;
	case HDIR_PEEL_WALK: return v->peel_walk;
	case HDIR_ATOMIC_REDUCE: return v->reduce == HREDUCE_ATOMIC;
	case HDIR_VECTOR_REDUCE: return v->reduce == HREDUCE_VECTOR;
	case HDIR_SHARED_REDUCE: return v->reduce == HREDUCE_SHARED;
	case HDIR_GPU_DIMENSION: return v->gpu_dim != HGPU_NONE;
	case HDIR_TILE: case HDIR_SPLIT: case HDIR_SPLIT_SIZE: case HDIR_REORDER: case HDIR_REPRESENTATION: case HDIR_SORT_TREES: case HDIR_TILE_TREES: case HDIR_COUNT: return false;
	}
	return false;
}

/* The directive that chose reduction strategy r (not HREDUCE_PRIVATE). */
static HDirectiveKind reduce_directive(HReduce r)
{
	return r == HREDUCE_ATOMIC ? HDIR_ATOMIC_REDUCE : r == HREDUCE_VECTOR ? HDIR_VECTOR_REDUCE : HDIR_SHARED_REDUCE;
}

/* The first directive already given to v, or HDIR_COUNT if none. */
static HDirectiveKind first_directive(const HIndexVar *v)
{
	for (int k = 0; k < HDIR_COUNT; k++)
		if (hir_var_has_directive(v, (HDirectiveKind)k))
			return (HDirectiveKind)k;
	return HDIR_COUNT;
}

/* A loop that has directives may not be tiled or split: they would not say which half they mean. */
static bool check_bare(const HSchedule *s, int32_t v, Error *e)
{
	HDirectiveKind k = first_directive(&s->vars[v]);
	if (k == HDIR_COUNT)
		return true;
	return error_set(e, "'%s' already has %s; give directives to the loops this one makes", s->vars[v].name,
	                 hir_directive_name(k));
}

/* --- directives --- */

/* Copy the loops in the list starting at first (and everything inside them) under new parent, names prefixed. */
static bool copy_loops(HSchedule *s, int32_t first, int32_t parent, const char *prefix, int32_t *map, Error *e)
{
	int32_t *tail = &s->vars[parent].first_child;
	for (int32_t c = first; c != NONE; c = s->vars[c].next_sibling) {
		char name[2 * HIR_MAX_NAME];
		int32_t copy;
		snprintf(name, sizeof name, "%s.%s", prefix, s->vars[c].name);
		if (strlen(name) + 1 >= HIR_MAX_NAME)
			return error_set(e, "the copy '%s' of '%s' would have a name longer than %d characters", name, s->vars[c].name, HIR_MAX_NAME - 2);
		if (hir_schedule_find(s, name) != NONE)
			return error_set(e, "the copy of '%s' would be called '%s', which is already a variable", s->vars[c].name, name);
		copy = add_var(s, name, HVAR_ROOT, false, NONE, 0);
		if (copy == NONE)
			return error_set(e, "too many index variables (at most %d)", HIR_MAX_VARS);
		s->vars[copy] = s->vars[c];
		memcpy(s->vars[copy].name, name, strlen(name) + 1);
		s->vars[copy].origin = c;
		s->vars[copy].loop_parent = parent;
		s->vars[copy].first_child = s->vars[copy].next_sibling = NONE;
		map[c] = copy;
		*tail = copy;
		tail = &s->vars[copy].next_sibling;
		if (!copy_loops(s, s->vars[c].first_child, copy, prefix, map, e))
			return false;
	}
	return true;
}

/* Point the partners of copies at the copies of their partners. */
static void map_partners(HSchedule *s, const int32_t *map, uint32_t from)
{
	for (uint32_t v = from; v < s->num_vars; v++)
		if (s->vars[v].partner != NONE && map[s->vars[v].partner] != NONE)
			s->vars[v].partner = map[s->vars[v].partner];
}

/* Take the loops inside v away from the loop tree (their variables lose their loops). */
static void drop_loops(HSchedule *s, int32_t first)
{
	for (int32_t c = first; c != NONE; c = s->vars[c].next_sibling) {
		s->vars[c].has_loop = false;
		drop_loops(s, s->vars[c].first_child);
	}
}

/* Checks shared by tile and split of loop v into two new loops: v has no directives yet, and the names are new and distinct. */
static bool check_pair_names(const HSchedule *s, const HDirective *d, int32_t v, const char *two_names, Error *e)
{
	if (!check_bare(s, v, e) || !new_name(s, d->names[1], e) || !new_name(s, d->names[2], e))
		return false;
	if (!strcmp(d->names[1], d->names[2]))
		return error_set(e, "%s", two_names);
	return true;
}

/* Add the two partner loops d names (d->names[1], [2]) derived from v; returns the first, or NONE with e filled. */
static int32_t add_pair(HSchedule *s, const HDirective *d, int32_t v, HVarKind first_kind, HVarKind second_kind, Error *e)
{
	int32_t first = add_var(s, d->names[1], first_kind, s->vars[v].over_trees, v, (uint32_t)d->value);
	int32_t second = add_var(s, d->names[2], second_kind, s->vars[v].over_trees, v, (uint32_t)d->value);
	if (second == NONE)
		return error_set(e, "too many index variables (at most %d)", HIR_MAX_VARS), NONE;
	s->vars[first].partner = second;
	s->vars[second].partner = first;
	s->vars[first].made = s->vars[second].made = d->pos;
	s->vars[first].has_loop = s->vars[second].has_loop = true;
	return first;
}

/* v no longer has a loop: the loops that replace it have taken its place. */
static void retire_loop(HSchedule *s, int32_t v)
{
	s->vars[v].has_loop = false;
	s->vars[v].first_child = s->vars[v].next_sibling = s->vars[v].loop_parent = NONE;
}

static bool apply_tile(HSchedule *s, const HDirective *d, Error *e)
{
	int32_t v = loop_var(s, d->names[0], e), outer, inner;
	if (v == NONE)
		return false;
	if (!check_pair_names(s, d, v, "the outer and inner loops need two names", e))
		return false;
	if (d->value < 1 || d->value > INT32_MAX)
		return error_set(e, "tile size %lld: must be from 1 to %d", (long long)d->value, INT32_MAX);
	if ((outer = add_pair(s, d, v, HVAR_TILE_OUTER, HVAR_TILE_INNER, e)) == NONE)
		return false;
	inner = s->vars[outer].partner;
	/* outer takes v's place; inner is its only loop; v's loops go inside inner. */
	*slot_of(s, v) = outer;
	s->vars[outer].loop_parent = s->vars[v].loop_parent;
	s->vars[outer].next_sibling = s->vars[v].next_sibling;
	adopt(s, inner, s->vars[v].first_child);
	adopt(s, outer, inner);
	retire_loop(s, v);
	return true;
}

/* Copy the loops from first on under loop half, names prefixed, copies' partners pointing at copies. */
static bool copy_under(HSchedule *s, int32_t first, int32_t half, const char *prefix, Error *e)
{
	int32_t map[HIR_MAX_VARS];
	uint32_t before = s->num_vars;
	for (int i = 0; i < HIR_MAX_VARS; i++)
		map[i] = NONE;
	if (!copy_loops(s, first, half, prefix, map, e))
		return false;
	map_partners(s, map, before);
	return true;
}

/*
 * split(v, first, second, at), or splitSize(v, small, large, n): the halves run over all
 * of v's iterations, small where they are fewer than n, else large (a batch of a few
 * rows takes a schedule of its own). The number of trees is known when compiling, so
 * splitSize splits row loops only.
 */
static bool apply_split(HSchedule *s, const HDirective *d, Error *e)
{
	int32_t v = loop_var(s, d->names[0], e), first, second;
	bool by_size = d->kind == HDIR_SPLIT_SIZE;
	HRange r;
	if (v == NONE)
		return false;
	if (!check_pair_names(s, d, v, "the two halves need two names", e))
		return false;
	hir_schedule_range(s, v, &r);
	if (by_size) {
		if (s->vars[v].over_trees)
			return error_set(e, "'%s' runs over trees, whose number is known when compiling: split it with split", d->names[0]);
		if (d->value < 2 || d->value > INT32_MAX)
			return error_set(e, "size %lld: must be from 2 to %d ('%s' runs where the loop has fewer iterations)",
			                 (long long)d->value, INT32_MAX, d->names[1]);
		if (r.max_trips >= 0 && d->value > r.max_trips)
			return error_set(e, "'%s' runs at most %lld iterations, never %lld, so '%s' would never run", d->names[0],
			                 (long long)r.max_trips, (long long)d->value, d->names[2]);
	} else if (d->value < 1) {
		return error_set(e, "split point %lld is outside the range: '%s' would never run", (long long)d->value, d->names[1]);
	} else if (d->value > INT32_MAX) {
		return error_set(e, "split point %lld: must be at most %d", (long long)d->value, INT32_MAX);
	} else if (r.max_trips >= 0 && d->value >= r.max_trips) {
		return error_set(e, "split point %lld is outside the range: '%s' runs at most %lld iterations, so '%s' would never run and the walk under it is unreachable",
		                 (long long)d->value, d->names[0], (long long)r.max_trips, d->names[2]);
	}
	if ((first = add_pair(s, d, v, HVAR_SPLIT_FIRST, HVAR_SPLIT_SECOND, e)) == NONE)
		return false;
	second = s->vars[first].partner;
	s->vars[first].by_size = s->vars[second].by_size = by_size;
	*slot_of(s, v) = first;
	s->vars[first].loop_parent = s->vars[second].loop_parent = s->vars[v].loop_parent;
	s->vars[first].next_sibling = second;
	s->vars[second].next_sibling = s->vars[v].next_sibling;
	/* The loops inside v are copied under each half; the originals lose their loops. */
	if (!copy_under(s, s->vars[v].first_child, first, d->names[1], e) ||
	    !copy_under(s, s->vars[v].first_child, second, d->names[2], e))
		return false;
	drop_loops(s, s->vars[v].first_child);
	retire_loop(s, v);
	return true;
}

static bool apply_reorder(HSchedule *s, const HDirective *d, Error *e)
{
	int32_t named[HIR_MAX_ARGS], chain[HIR_MAX_VARS], top = NONE, bottom = NONE, parent, next, children;
	uint32_t n = d->num_names, length = 0, k = 0;
	int32_t *slot;

	if (n < 2)
		return error_set(e, "reorder needs at least two loops");
	for (uint32_t i = 0; i < n; i++) {
		if ((named[i] = loop_var(s, d->names[i], e)) == NONE)
			return false;
		for (uint32_t j = 0; j < i; j++)
			if (named[j] == named[i])
				return error_set(e, "'%s' is named twice", d->names[i]);
	}
	/* They must lie on one chain of loops: any two nested one in the other; the outermost encloses them all. */
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++)
			if (!hir_schedule_encloses(s, named[i], named[j]) && !hir_schedule_encloses(s, named[j], named[i]))
				return error_set(e, "'%s' and '%s' are not nested in one another, so they cannot be reordered", d->names[i], d->names[j]);
	for (uint32_t i = 0; i < n; i++) {
		bool outermost = true;
		for (uint32_t j = 0; j < n; j++)
			if (j != i && hir_schedule_encloses(s, named[j], named[i]))
				outermost = false;
		if (outermost)
			top = named[i];
	}
	for (uint32_t i = 0; i < n; i++)
		if (bottom == NONE || hir_schedule_encloses(s, bottom, named[i]))
			bottom = named[i];
	/* The chain from top to bottom must be perfectly nested. */
	for (int32_t l = bottom;; l = s->vars[l].loop_parent) {
		chain[length++] = l;
		if (l == top)
			break;
	}
	for (uint32_t i = 0, j = length - 1; i < j; i++, j--) {
		int32_t t = chain[i];
		chain[i] = chain[j];
		chain[j] = t;
	}
	for (uint32_t i = 0; i + 1 < length; i++)
		if (count_children(s, chain[i]) != 1)
			return error_set(e, "the loops are not perfectly nested: '%s' holds %u loops", s->vars[chain[i]].name,
			                 count_children(s, chain[i]));
	/* Put the named loops, in the order given, where named loops were on the chain. */
	for (uint32_t i = 0; i < length; i++) {
		bool is_named = false;
		for (uint32_t j = 0; j < n; j++)
			is_named |= chain[i] == named[j];
		if (is_named)
			chain[i] = named[k++];
	}
	parent = s->vars[top].loop_parent;
	next = s->vars[top].next_sibling;
	children = s->vars[bottom].first_child;
	slot = slot_of(s, top);
	*slot = chain[0];
	s->vars[chain[0]].loop_parent = parent;
	s->vars[chain[0]].next_sibling = next;
	for (uint32_t i = 0; i + 1 < length; i++) {
		s->vars[chain[i + 1]].next_sibling = NONE;
		adopt(s, chain[i], chain[i + 1]);
	}
	adopt(s, chain[length - 1], children);
	return true;
}

/* The GPU dimension named text, or HGPU_NONE. */
static HGpuDim find_gpu_dim(const char *text)
{
	for (uint32_t d = 1; d < COUNT_OF(gpu_dim_names); d++)
		if (!strcmp(text, gpu_dim_names[d]))
			return (HGpuDim)d;
	return HGPU_NONE;
}

/* A directive on one loop: parallel, cache, interleave, unrollWalk, peelWalk, specialize, the reduces, gpuDimension. */
static bool apply_mark(HSchedule *s, const HDirective *d, Error *e)
{
	int32_t v = loop_var(s, d->names[0], e);
	HIndexVar *x;
	HRange r;
	if (v == NONE)
		return false;
	x = &s->vars[v];
	if (hir_var_has_directive(x, (HDirectiveKind)d->kind))
		return error_set(e, "'%s' already has %s", x->name, hir_directive_name((HDirectiveKind)d->kind));
	if ((d->kind == HDIR_SPECIALIZE || d->kind == HDIR_UNROLL) && (x->flags & HVAR_SPECIALIZE))
		return error_set(e, "'%s' already has %s, which is the same", x->name, x->flags & HVAR_UNROLL ? "unroll" : "specialize");
	switch ((HDirectiveKind)d->kind) {
	case HDIR_PARALLEL: x->flags |= HVAR_PARALLEL; break;
	case HDIR_CACHE:
		if (d->num_names == 2 && strcmp(d->names[1], "prefetch"))
			return error_set(e, "'%s': expected prefetch (cache(%s) alone copies rows)", d->names[1], x->name);
		x->flags |= HVAR_CACHE | (d->num_names == 2 ? HVAR_PREFETCH : 0);
		break;
	case HDIR_INTERLEAVE: x->flags |= HVAR_INTERLEAVE; break;
	case HDIR_SPECIALIZE:
	case HDIR_UNROLL:
		hir_schedule_range(s, v, &r);
		if (r.max_trips < 0)
			return error_set(e, "'%s' runs over the rows, whose number is known only at run time; only loops with a constant trip count can be %s",
			                 x->name, d->kind == HDIR_UNROLL ? "unrolled" : "specialized");
		if (r.max_trips > HIR_MAX_SPECIALIZE)
			return error_set(e, "'%s' runs %lld iterations; at most %d can be %s", x->name, (long long)r.max_trips, HIR_MAX_SPECIALIZE,
			                 d->kind == HDIR_UNROLL ? "unrolled" : "specialized");
		x->flags |= HVAR_SPECIALIZE | (d->kind == HDIR_UNROLL ? HVAR_UNROLL : 0);
		break;
	case HDIR_UNROLL_WALK:
	case HDIR_PEEL_WALK:
		if (d->value < 1 || d->value > HIR_MAX_WALK_STEPS)
			return error_set(e, "depth %lld: must be from 1 to %d", (long long)d->value, HIR_MAX_WALK_STEPS);
		if (d->kind == HDIR_UNROLL_WALK)
			x->unroll_walk = (uint16_t)d->value;
		else
			x->peel_walk = (uint16_t)d->value;
		break;
	case HDIR_ATOMIC_REDUCE:
	case HDIR_VECTOR_REDUCE:
	case HDIR_SHARED_REDUCE:
		if (!x->over_trees)
			return error_set(e, "'%s' runs over rows; reductions conflict only across trees", x->name);
		if (x->reduce != HREDUCE_PRIVATE)
			return error_set(e, "'%s' already has %s: a loop has one reduction strategy", x->name,
			                 hir_directive_name(reduce_directive((HReduce)x->reduce)));
		if (d->kind == HDIR_VECTOR_REDUCE) {
			if (d->value != 2 && d->value != 4 && d->value != 8 && d->value != 16)
				return error_set(e, "vector width %lld: expected 2, 4, 8 or 16", (long long)d->value);
			x->vector_width = (uint16_t)d->value;
		}
		x->reduce = d->kind == HDIR_ATOMIC_REDUCE ? HREDUCE_ATOMIC : d->kind == HDIR_VECTOR_REDUCE ? HREDUCE_VECTOR : HREDUCE_SHARED;
		break;
	case HDIR_GPU_DIMENSION: {
		HGpuDim dim = find_gpu_dim(d->names[1]);
		if (dim == HGPU_NONE)
			return error_set(e, "unknown GPU dimension '%s' (expected grid.x, grid.y, grid.z, block.x, block.y or block.z)", d->names[1]);
		/* Loops side by side (the halves of a split) may share a dimension: at the top, each is a kernel. */
		for (uint32_t w = 0; w < s->num_vars; w++)
			if (s->vars[w].gpu_dim == dim && s->vars[w].has_loop && (hir_schedule_encloses(s, (int32_t)w, v) || hir_schedule_encloses(s, v, (int32_t)w)))
				return error_set(e, "%s is already mapped to '%s', %s", d->names[1], s->vars[w].name,
				                 hir_schedule_encloses(s, (int32_t)w, v) ? "a loop around it" : "a loop inside it");
		x->gpu_dim = (uint8_t)dim;
		break;
	}
	case HDIR_TILE: case HDIR_SPLIT: case HDIR_SPLIT_SIZE: case HDIR_REORDER: case HDIR_REPRESENTATION: case HDIR_SORT_TREES: case HDIR_TILE_TREES: case HDIR_COUNT: die("not a one-loop directive");
	}
	x->at[d->kind] = d->pos;
	return true;
}

static bool apply_directive(HSchedule *s, const HDirective *d, Error *e)
{
	if (d->kind >= HDIR_COUNT)
		return error_set(e, "unknown directive %u", d->kind);
	if (d->num_names > HIR_MAX_ARGS)
		return error_set(e, "at most %d variables, got %u", HIR_MAX_ARGS, d->num_names);
	if (directives[d->kind].names >= 0 && (d->num_names > directives[d->kind].names || d->num_names < directives[d->kind].names - directives[d->kind].optional))
		return error_set(e, "expected %d variable names, got %u", directives[d->kind].names, d->num_names);
	switch ((HDirectiveKind)d->kind) {
	case HDIR_REPRESENTATION: /* of the whole forest, not of a loop: the lowering knows the names */
		if (s->representation[0])
			return error_set(e, "the representation is already '%s'", s->representation);
		memcpy(s->representation, d->names[0], sizeof s->representation);
		s->representation_at = d->pos;
		return true;
	case HDIR_SORT_TREES: /* of the whole forest too */
		if (strcmp(d->names[0], "depth"))
			return error_set(e, "unknown order '%s' (expected depth)", d->names[0]);
		if (s->tree_order != HORDER_MODEL)
			return error_set(e, "the trees are already sorted");
		s->tree_order = HORDER_DEPTH;
		s->tree_order_at = d->pos;
		return true;
	case HDIR_TILE_TREES: /* and this */
		if (strcmp(d->names[0], "uniform") && strcmp(d->names[0], "probability"))
			return error_set(e, "unknown tiling '%s' (expected uniform or probability)", d->names[0]);
		if (d->value < 1 || d->value > HIR_MAX_TILE)
			return error_set(e, "tile size %lld, expected 1 to %d splits", (long long)d->value, HIR_MAX_TILE);
		if (s->tile_size)
			return error_set(e, "the trees are already tiled (tiles of %u)", s->tile_size);
		s->tile_size = (uint8_t)d->value;
		s->tiling = strcmp(d->names[0], "uniform") ? HTILING_PROBABILITY : HTILING_UNIFORM;
		s->tile_size_at = d->pos;
		return true;
	case HDIR_TILE: return apply_tile(s, d, e);
	case HDIR_SPLIT: case HDIR_SPLIT_SIZE: return apply_split(s, d, e);
	case HDIR_REORDER: return apply_reorder(s, d, e);
	default: return apply_mark(s, d, e);
	}
}

bool hir_schedule_apply(HSchedule *s, const HDirective *d, Error *e)
{
	HSchedule *t = xmalloc(sizeof *t);
	bool ok;
	memcpy(t, s, sizeof *t);
	ok = apply_directive(t, d, e);
	ok = ok && hir_schedule_check_ranges(t, e);
	if (ok && t->num_log == HIR_MAX_DIRECTIVES)
		ok = error_set(e, "too many directives (at most %d)", HIR_MAX_DIRECTIVES);
	if (ok) {
		t->log[t->num_log++] = *d;
		memcpy(s, t, sizeof *s);
	} else {
		char where[300], text[600];
		hir_schedule_pos(s, d->pos, where, sizeof where);
		format_directive(d, text, sizeof text);
		snprintf(where + strlen(where), sizeof where - strlen(where), "%.200s", text);
		error_prefix(e, where);
	}
	free(t);
	return ok;
}

const char *hir_schedule_where(const HSchedule *s, int32_t var, HDirectiveKind k, char *buf, size_t size)
{
	HSourcePos pos = s->vars[var].at[k];
	char where[300];
	for (uint32_t i = 0; i < s->num_log; i++) {
		const HDirective *d = &s->log[i];
		int32_t named = hir_schedule_find(s, d->names[0]), o = var;
		/* The directive names var or, for a copy made by split, the variable it copies. */
		while (o != NONE && o != named)
			o = s->vars[o].origin;
		if (d->kind == k && d->pos.line == pos.line && d->pos.column == pos.column && o != NONE) {
			hir_schedule_pos(s, pos, where, sizeof where);
			snprintf(buf, size, "%s", where);
			format_directive(d, buf + strlen(buf), size - strlen(buf));
			return buf;
		}
	}
	snprintf(buf, size, "%s(%s)", hir_directive_name(k), s->vars[var].name);
	return buf;
}

/* Fill e with "where: message" for the directive of kind k on v; returns false. */
__attribute__((format(printf, 5, 6))) static bool fail_at(const HSchedule *s, int32_t v, HDirectiveKind k, Error *e, const char *fmt, ...)
{
	char where[700];
	va_list ap;
	va_start(ap, fmt);
	if (e)
		vsnprintf(e->message, sizeof e->message, fmt, ap);
	va_end(ap);
	error_prefix(e, hir_schedule_where(s, v, k, where, sizeof where));
	return false;
}

/* A batch loop among the loops first.. or inside them, or NONE. */
static int32_t batch_loop_in(const HSchedule *s, int32_t first)
{
	for (int32_t c = first; c != NONE; c = s->vars[c].next_sibling) {
		int32_t inner = s->vars[c].over_trees ? batch_loop_in(s, s->vars[c].first_child) : c;
		if (inner != NONE)
			return inner;
	}
	return NONE;
}

/* Whether the loops over rows around innermost loop v (and those over trees) are at most HIR_MAX_NESTED. */
static bool nesting_fits(const HSchedule *s, int32_t v, Error *e)
{
	for (int trees = 0; trees < 2; trees++) {
		int32_t loops[HIR_MAX_VARS];
		char names[HIR_MAX_VARS * (HIR_MAX_NAME + 2)];
		size_t n = 0, used = 0;
		for (int32_t l = v; l != NONE; l = s->vars[l].loop_parent) /* innermost first */
			if (s->vars[l].over_trees == trees)
				loops[n++] = l;
		if (n <= HIR_MAX_NESTED)
			continue;
		for (size_t i = n; i-- > 0;)
			used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", s->vars[loops[i]].name, i ? ", " : "");
		return error_set(e, "%s%s%zu loops over the %s nest in one another (%s; at most %d)", s->source,
		                 s->source[0] ? ": " : "", n, trees ? "trees" : "rows", names, HIR_MAX_NESTED);
	}
	return true;
}

bool hir_schedule_check(const HSchedule *s, Error *e)
{
	static const HDirectiveKind innermost[] = {HDIR_INTERLEAVE, HDIR_UNROLL_WALK, HDIR_PEEL_WALK};
	for (uint32_t i = 0; i < s->num_vars; i++) {
		const HIndexVar *x = &s->vars[i];
		int32_t v = (int32_t)i;
		bool has[HDIR_COUNT] = {false};
		if (!x->has_loop)
			continue;
		has[HDIR_INTERLEAVE] = x->flags & HVAR_INTERLEAVE;
		has[HDIR_UNROLL_WALK] = x->unroll_walk;
		has[HDIR_PEEL_WALK] = x->peel_walk;
		/* A batch loop interleaves its rows over the tree loops inside it (unroll and jam). */
		if (has[HDIR_INTERLEAVE] && !x->over_trees) {
			int32_t rows = batch_loop_in(s, x->first_child);
			if (rows != NONE)
				return fail_at(s, v, HDIR_INTERLEAVE, e, "'%s' holds the batch loop '%s': rows are interleaved over tree loops only",
				               x->name, s->vars[rows].name);
			has[HDIR_INTERLEAVE] = false;
		}
		for (uint32_t k = 0; k < COUNT_OF(innermost); k++)
			if (has[innermost[k]] && x->first_child != NONE)
				return fail_at(s, v, innermost[k], e, "'%s' is not an innermost loop (it holds '%s')", x->name,
				               s->vars[x->first_child].name);
		has[HDIR_INTERLEAVE] = x->flags & HVAR_INTERLEAVE;
		if (has[HDIR_INTERLEAVE]) {
			HRange r;
			hir_schedule_range(s, v, &r);
			if (r.max_trips < 0)
				return fail_at(s, v, HDIR_INTERLEAVE, e, "'%s' runs a number of iterations known only at run time; tile it and interleave the inner loop", x->name);
			if (r.max_trips > MAX_INTERLEAVE)
				return fail_at(s, v, HDIR_INTERLEAVE, e, "'%s' runs up to %lld iterations; at most %d walks can be interleaved", x->name,
				               (long long)r.max_trips, MAX_INTERLEAVE);
		}
		HDirectiveKind copied = x->flags & HVAR_UNROLL ? HDIR_UNROLL : HDIR_SPECIALIZE; /* (as written) */
		const char *as = copied == HDIR_UNROLL ? "unrolled" : "specialized";
		if ((x->flags & HVAR_SPECIALIZE) && (x->flags & HVAR_CACHE))
			return fail_at(s, v, HDIR_CACHE, e, "'%s' is also %s: its iterations become copies of the body, with no loop to fetch the next one's working set in; cache a loop inside it",
			               x->name, as);
		if (x->flags & HVAR_SPECIALIZE) {
			int64_t copies = 1;
			if (x->flags & (HVAR_PARALLEL | HVAR_INTERLEAVE))
				return fail_at(s, v, copied, e, "'%s' is also %s: its iterations become copies of the body, run in turn", x->name,
				               x->flags & HVAR_PARALLEL ? "parallel" : "interleaved");
			for (int32_t l = v; l != NONE; l = s->vars[l].loop_parent)
				if (s->vars[l].flags & HVAR_SPECIALIZE) {
					HRange r;
					hir_schedule_range(s, l, &r);
					copies *= r.max_trips;
				}
			if (copies > HIR_MAX_SPECIALIZE)
				return fail_at(s, v, copied, e, "with the %s loops around it, the body would be copied %lld times (at most %d)", as,
				               (long long)copies, HIR_MAX_SPECIALIZE);
		}
		if (x->first_child == NONE && !nesting_fits(s, v, e)) /* innermost: its indices sum the loops around */
			return false;
		if (x->unroll_walk && x->peel_walk)
			return fail_at(s, v, HDIR_PEEL_WALK, e, "'%s' already unrolls its walks (unrollWalk)", x->name);
		if (x->reduce != HREDUCE_PRIVATE && !(x->flags & HVAR_PARALLEL) && !x->gpu_dim)
			return fail_at(s, v, reduce_directive((HReduce)x->reduce), e,
			               "'%s' is not parallel: its iterations never reduce into one place at once", x->name);
	}
	return true;
}

/* --- printing and comparing --- */

void hir_schedule_print(FILE *out, const HSchedule *s, const char *indent)
{
	char text[700];
	for (uint32_t i = 0; i < s->num_log; i++) {
		format_directive(&s->log[i], text, sizeof text);
		fprintf(out, "%s%s\n", indent, text);
	}
}

static void print_loops(FILE *out, const HSchedule *s, int32_t first)
{
	for (int32_t c = first; c != NONE; c = s->vars[c].next_sibling) {
		fprintf(out, "%s%s", c == first ? "" : "; ", s->vars[c].name);
		if (s->vars[c].first_child != NONE) {
			fputs(" { ", out);
			print_loops(out, s, s->vars[c].first_child);
			fputs(" }", out);
		}
	}
}

void hir_schedule_print_loops(FILE *out, const HSchedule *s) { print_loops(out, s, s->first_loop); }

bool hir_schedule_equal(const HSchedule *a, const HSchedule *b)
{
	if (a->num_vars != b->num_vars || a->first_loop != b->first_loop || a->num_trees != b->num_trees ||
	    strcmp(a->representation, b->representation) || a->tree_order != b->tree_order ||
	    a->tile_size != b->tile_size || a->tiling != b->tiling)
		return false;
	for (uint32_t v = 0; v < a->num_vars; v++) {
		const HIndexVar *x = &a->vars[v], *y = &b->vars[v];
		if (strcmp(x->name, y->name) || x->kind != y->kind || x->over_trees != y->over_trees || x->gpu_dim != y->gpu_dim ||
		    x->reduce != y->reduce || x->flags != y->flags || x->unroll_walk != y->unroll_walk ||
		    x->peel_walk != y->peel_walk || x->vector_width != y->vector_width || x->size != y->size ||
		    x->parent != y->parent || x->partner != y->partner || x->origin != y->origin || x->has_loop != y->has_loop ||
		    x->loop_parent != y->loop_parent || x->first_child != y->first_child || x->next_sibling != y->next_sibling)
			return false;
	}
	return true;
}
