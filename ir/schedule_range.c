/* The schedule's loop ranges: each loop's bounds as expressions over the loops around it, from its variable's lineage. */
#include "ir/schedule.h"

enum { NONE = -1 };

/* The bounds of v's range, appended to r; context is the loop whose range is asked for (partners resolve in it). */
typedef struct Bounds {
	uint8_t begin, end;
	int64_t step, trips;
} Bounds;

/* Append a node; when r is full, num_nodes becomes HIR_MAX_EXPR + 1 (see range_fits) and node 0 stands in. */
static uint8_t expr(HRange *r, HExprOp op, int64_t value, int32_t var, uint8_t a, uint8_t b)
{
	HExpr *x;
	if (r->num_nodes >= HIR_MAX_EXPR) {
		r->num_nodes = HIR_MAX_EXPR + 1;
		return 0;
	}
	x = &r->nodes[r->num_nodes];
	*x = (HExpr){.op = (uint8_t)op, .value = value, .var = var, .a = a, .b = b};
	return (uint8_t)r->num_nodes++;
}

static bool is_const(const HRange *r, uint8_t x, int64_t *v)
{
	*v = r->nodes[x].value;
	return r->nodes[x].op == HEXPR_CONST;
}

static uint8_t konst(HRange *r, int64_t v) { return expr(r, HEXPR_CONST, v, NONE, 0, 0); }

/* a op b, folded when both are constants (or b is 0 for + and -, a is 0 for +). */
static uint8_t binary(HRange *r, HExprOp op, uint8_t a, uint8_t b)
{
	int64_t x, y;
	bool ca = is_const(r, a, &x), cb = is_const(r, b, &y);
	if (ca && cb)
		return konst(r, op == HEXPR_ADD ? x + y : op == HEXPR_SUB ? x - y : op == HEXPR_BELOW ? (x < y ? x : 0) : x < y ? x : y);
	if (cb && y == 0 && (op == HEXPR_ADD || op == HEXPR_SUB))
		return a;
	if (ca && x == 0 && op == HEXPR_ADD)
		return b;
	return expr(r, op, 0, NONE, a, b);
}

/*
 * Whether the loops around context (context included) carry var's value: var's own
 * loop, or, where a directive took var's loop away, the loops that replaced it: one
 * split half or copy (each runs over var's own values), or both loops of its tile
 * (the outer one runs over var's values in steps, the inner one over the offsets
 * within a step, so var = outer + inner).
 */
static bool carried(const HSchedule *s, int32_t context, int32_t var)
{
	if (s->vars[var].has_loop)
		return hir_schedule_encloses(s, var, context);
	for (uint32_t w = 0; w < s->num_vars; w++) {
		const HIndexVar *y = &s->vars[w];
		bool half = y->origin == NONE && y->parent == var && (y->kind == HVAR_SPLIT_FIRST || y->kind == HVAR_SPLIT_SECOND);
		if (y->origin == NONE && y->parent == var && y->kind == HVAR_TILE_OUTER)
			return carried(s, context, (int32_t)w) && carried(s, context, y->partner);
		if ((half || y->origin == var) && carried(s, context, (int32_t)w))
			return true;
	}
	return false;
}

/* The value of var inside loop `context`, from the loops that carry it; a bare var (which outside_var reports) where none do. */
static uint8_t value_of(const HSchedule *s, HRange *r, int32_t context, int32_t var)
{
	if (!s->vars[var].has_loop)
		for (uint32_t w = 0; w < s->num_vars; w++) {
			const HIndexVar *y = &s->vars[w];
			bool half = y->origin == NONE && y->parent == var && (y->kind == HVAR_SPLIT_FIRST || y->kind == HVAR_SPLIT_SECOND);
			if (y->origin == NONE && y->parent == var && y->kind == HVAR_TILE_OUTER) {
				if (carried(s, context, (int32_t)w) && carried(s, context, y->partner))
					return binary(r, HEXPR_ADD, value_of(s, r, context, (int32_t)w), value_of(s, r, context, y->partner));
				break;
			}
			if ((half || y->origin == var) && carried(s, context, (int32_t)w))
				return value_of(s, r, context, (int32_t)w);
		}
	return expr(r, HEXPR_VAR, 0, var, 0, 0);
}

static Bounds bounds(const HSchedule *s, int32_t context, int32_t v, HRange *r)
{
	const HIndexVar *x = &s->vars[v];
	Bounds p, out;
	uint8_t at;
	if (x->kind == HVAR_ROOT) {
		out.begin = konst(r, 0);
		out.end = x->over_trees ? konst(r, s->num_trees) : expr(r, HEXPR_ROWS, 0, NONE, 0, 0);
		out.step = 1;
		out.trips = x->over_trees ? (int64_t)s->num_trees : -1;
		return out;
	}
	p = bounds(s, context, x->parent, r);
	out = p;
	switch ((HVarKind)x->kind) {
	case HVAR_ROOT: break;
	case HVAR_TILE_OUTER:
		out.step = p.step * x->size;
		out.trips = p.trips < 0 ? -1 : (p.trips + x->size - 1) / x->size;
		if (carried(s, context, x->partner)) /* reordered inside its inner loop: var = outer + inner < end */
			out.end = binary(r, HEXPR_SUB, p.end, value_of(s, r, context, x->partner));
		break;
	case HVAR_TILE_INNER:
		/* Offsets within a step of the outer loop (var = outer + inner); where reordered outside it, of any step. */
		out.begin = konst(r, 0);
		out.end = binary(r, HEXPR_MIN, konst(r, (int64_t)x->size * p.step),
		                 binary(r, HEXPR_SUB, p.end, carried(s, context, x->partner) ? value_of(s, r, context, x->partner) : p.begin));
		out.trips = p.trips < 0 || p.trips > x->size ? x->size : p.trips;
		break;
	case HVAR_SPLIT_FIRST:
	case HVAR_SPLIT_SECOND:
		if (x->by_size) { /* all iterations to one half: fewer than size of them (a span of at most (size - 1) steps) to the first */
			at = binary(r, HEXPR_ADD, p.begin,
			            binary(r, HEXPR_BELOW, binary(r, HEXPR_SUB, p.end, p.begin), konst(r, ((int64_t)x->size - 1) * p.step + 1)));
			if (x->kind == HVAR_SPLIT_FIRST) {
				out.end = at;
				out.trips = p.trips >= 0 && p.trips < x->size ? p.trips : x->size - 1;
			} else {
				out.begin = at;
			}
			break;
		}
		at = binary(r, HEXPR_MIN, binary(r, HEXPR_ADD, p.begin, konst(r, (int64_t)x->size * p.step)), p.end);
		if (x->kind == HVAR_SPLIT_FIRST) {
			out.end = at;
			out.trips = p.trips >= 0 && p.trips < x->size ? p.trips : x->size;
		} else {
			out.begin = at;
			out.trips = p.trips < 0 ? -1 : p.trips > x->size ? p.trips - x->size : 0;
		}
		break;
	}
	return out;
}

/* Compute var's range into r; false if its bounds need more than HIR_MAX_EXPR nodes. */
static bool range_fits(const HSchedule *s, int32_t var, HRange *r)
{
	Bounds b;
	r->num_nodes = 0;
	b = bounds(s, var, var, r);
	r->begin = b.begin;
	r->end = b.end;
	r->step = b.step;
	r->max_trips = b.trips;
	return r->num_nodes <= HIR_MAX_EXPR;
}

void hir_schedule_range(const HSchedule *s, int32_t var, HRange *r)
{
	/* hir_schedule_apply rejects a directive after which some loop's range would not fit. */
	if (!range_fits(s, var, r))
		die("the range of schedule variable '%s' does not fit in %d expression nodes", s->vars[var].name, HIR_MAX_EXPR);
}

int64_t hir_schedule_max_offset(const HSchedule *s, int32_t var)
{
	const HIndexVar *x = &s->vars[var];
	HRange r;
	switch ((HVarKind)x->kind) {
	case HVAR_ROOT:
		return -1;
	case HVAR_SPLIT_FIRST: /* by size, of the whole batch: fewer than size rows from row 0 */
		if (!x->by_size || s->vars[x->parent].kind != HVAR_ROOT)
			break;
		/* fallthrough */
	case HVAR_TILE_INNER:
		hir_schedule_range(s, var, &r);
		return (r.max_trips - 1) * r.step;
	case HVAR_TILE_OUTER:
	case HVAR_SPLIT_SECOND:
		break;
	}
	return hir_schedule_max_offset(s, x->parent);
}

/* A variable whose value the bound at node x of r uses but whose loop does not enclose loop v, or NONE. */
static int32_t outside_var(const HSchedule *s, const HRange *r, uint8_t x, int32_t v)
{
	const HExpr *n = &r->nodes[x];
	int32_t w;
	if (n->op == HEXPR_VAR)
		return n->var != v && hir_schedule_encloses(s, n->var, v) ? NONE : n->var;
	if (n->op == HEXPR_ADD || n->op == HEXPR_SUB || n->op == HEXPR_MIN || n->op == HEXPR_BELOW)
		return (w = outside_var(s, r, n->a, v)) != NONE ? w : outside_var(s, r, n->b, v);
	return NONE;
}

/* The trees variable v covers, [*lo, *hi), and whether its values are absolute tree numbers (else offsets). */
static bool tree_domain(const HSchedule *s, int32_t v, int64_t *lo, int64_t *hi, int64_t *step)
{
	const HIndexVar *x = &s->vars[v];
	bool absolute;
	if (x->kind == HVAR_ROOT) {
		*lo = 0;
		*hi = s->num_trees;
		*step = 1;
		return true;
	}
	absolute = tree_domain(s, x->parent, lo, hi, step);
	switch ((HVarKind)x->kind) {
	case HVAR_ROOT: break;
	case HVAR_TILE_OUTER: *step *= x->size; break;
	case HVAR_TILE_INNER: return false;
	case HVAR_SPLIT_FIRST:
	case HVAR_SPLIT_SECOND:
		if (absolute) {
			int64_t at = *lo + (int64_t)x->size * *step < *hi ? *lo + (int64_t)x->size * *step : *hi;
			if (x->kind == HVAR_SPLIT_FIRST)
				*hi = at;
			else
				*lo = at;
		}
		break;
	}
	return absolute;
}

void hir_schedule_tree_span(const HSchedule *s, int32_t var, uint32_t *first, uint32_t *end)
{
	int64_t lo = 0, hi = s->num_trees;
	for (int32_t l = var; l != NONE; l = s->vars[l].loop_parent) {
		int64_t a, b, step;
		if (!s->vars[l].over_trees)
			continue;
		tree_domain(s, l, &a, &b, &step);
		lo = a > lo ? a : lo;
		hi = b < hi ? b : hi;
	}
	*first = (uint32_t)lo;
	*end = (uint32_t)(hi > lo ? hi : lo);
}

bool hir_schedule_check_ranges(const HSchedule *s, Error *e)
{
	for (uint32_t v = 0; v < s->num_vars; v++) {
		HRange r;
		int32_t w;
		if (!s->vars[v].has_loop)
			continue;
		if (!range_fits(s, (int32_t)v, &r))
			return error_set(e, "the loops are nested too deeply: the bounds of '%s' would need more than %d expression nodes",
			                 s->vars[v].name, HIR_MAX_EXPR);
		if ((w = outside_var(s, &r, r.begin, (int32_t)v)) != NONE || (w = outside_var(s, &r, r.end, (int32_t)v)) != NONE)
			return error_set(e, "'%s' would run outside %s '%s', on whose value its bounds depend", s->vars[v].name,
			                 s->vars[w].has_loop ? "loop" : "the loops made from", s->vars[w].name);
	}
	return true;
}
