/*
 * Entries that convert their rows and call the forest's one body, so a forest that
 * compares in double is compiled once for both row types. Each is
 *
 *   entry(rows, nrows, out, flags, workspace)
 *     parallel for r in [0, nrows): converted[r][j] = convert(rows[r][j], j) for every feature j
 *     body(converted, nrows, out, flags, workspace)
 *
 * The body keeps the workspace's first nrows * callee_per_row bytes; the converted rows
 * follow, 8-aligned (LModule.workspace_fixed holds the padding).
 *
 * Widening (code a row at a time, which compiles faster for double rows than its float
 * twin does, and predicts as fast): predict widens float rows to double, exactly (every
 * float is a double), and calls predict_f64.
 *
 * Narrowing: predict_f64 turns double rows into float keys on which the float twin
 * (hir_float_forest) decides every split as the double forest decides it on the rows,
 * and calls predict. Every decision of the double forest on a value x of feature j
 * depends only on whether x is NaN and on which side of each of j's cuts it lies: a
 * cut is a double d, x above it where x > d (x <= t and x > t cut at t; x < t and
 * x >= t at the double before t; category splits at -1 (truncation: -0.5 is category 0)
 * or below 0, and at the integers, which are floats). The twin decides a float y by the
 * same cuts, y above d where y >= u(d), the least float > d. The key of x is fl(x), the
 * greatest float <= x, except where x is above a cut d whose u(d) is the float after
 * fl(x): then it is u(d). For every cut d the key is then >= u(d) exactly where x > d:
 *   - x > d and x >= u(d): fl(x) >= u(d), a float <= x;
 *   - x > d and x < u(d): no float lies in (x, u(d)) (it would be above d and below
 *     u(d)), so u(d) is the float after fl(x), and the key is u(d);
 *   - x <= d: fl(x) < u(d); a key raised to u(d') for a cut d' below x is below u(d),
 *     since u(d') differs from u(d) (below) and both are floats > fl(x), the least of
 *     which is u(d').
 * So the narrowing holds where the cuts of a feature have distinct u (two cuts between
 * the same two floats, or one just below a float and one at it, have not; those forests
 * keep two bodies). NaN stays NaN. A category is x truncated, the same for the key where
 * categories stay below 2^24 (floats hold those integers) and no key of a feature with
 * category splits is raised to an integer (it would carry a value below it into its
 * category; padding's splits put ordered cuts on such features); only -1 needs a cut of
 * its own. ONNX's exact rule (x must be an integer) would need one past every integer,
 * and keeps two bodies.
 *
 * The raised keys are found in a hash table of the cuts d with a double between d and
 * u(d) (on a cut at a float's double below it there is none): per (feature, fl(x)), d,
 * in the slots from its home on up to an empty one, at most half the slots in use. A
 * bitmap of 2^NARROW_FILTER_SHIFT bits a slot, one set for each entry, stops most
 * values, near no cut, before they read the table.
 */
#include "lower/lowering.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows a thread converts at once. */
#define CONVERT_GRAIN 1024
/* Categories below this are integers a float holds (2^24). */
#define NARROW_CATEGORIES (1u << 24)

typedef struct Cut {
	int32_t feature;
	bool categories; /* the feature has category splits */
	double above;    /* x is above the cut where x > above */
} Cut;

struct NarrowCuts {
	uint32_t bits;        /* the table has 2^bits slots; its bitmap 2^NARROW_FILTER_SHIFT times as many bits */
	uint32_t num_entries; /* cuts with a double between them and their float */
	int64_t *slots;       /* per slot: feature << 32 | the bits of fl(x) below u(d) (-1: empty), then d's bits */
	int32_t *filter;      /* bit h where an entry's key hashes to h; its home is slot h >> NARROW_FILTER_SHIFT */
};

static int by_feature_then_cut(const void *a, const void *b)
{
	const Cut *x = a, *y = b;
	if (x->feature != y->feature)
		return x->feature < y->feature ? -1 : 1;
	return x->above < y->above ? -1 : x->above > y->above;
}

/* u(d): the least float > d. */
static float float_above(double d)
{
	float u = (float)d;
	return (double)u > d ? u : nextafterf(u, INFINITY);
}

/* Whether a double lies between the cut `above` and u, the least float above it: x there raises its key to u. */
static bool raises(double above, float u) { return nextafter(above, INFINITY) < (double)u; }

/* The table's key of feature's values whose greatest float below is cell. */
static int64_t table_key(int32_t feature, float cell)
{
	uint32_t bits;
	memcpy(&bits, &cell, sizeof bits);
	return (int64_t)((uint64_t)(uint32_t)feature << 32 | bits);
}

/*
 * A key's bit in the bitmap of a table of 2^bits slots: the top bits of key times
 * NARROW_HASH (the LIR's ashr, masked, reads the same); its home slot is the bit over
 * 2^NARROW_FILTER_SHIFT. With at most half the slots in use, at most 1 value in 16 near
 * no cut reads the table.
 */
#define NARROW_HASH 0x9E3779B97F4A7C15ull
#define NARROW_FILTER_SHIFT 3

static uint32_t filter_bit(int64_t key, uint32_t bits)
{
	return (uint32_t)(((uint64_t)key * NARROW_HASH) >> (64 - bits - NARROW_FILTER_SHIFT));
}

/* Words of t's bitmap. */
static uint64_t filter_words(const NarrowCuts *t) { return t->bits + NARROW_FILTER_SHIFT > 5 ? 1ull << (t->bits + NARROW_FILTER_SHIFT - 5) : 1; }

static void add_cut(Cut **cuts, uint64_t *n, uint64_t *cap, int32_t feature, double above)
{
	GROW(*cuts, *n + 1, *cap);
	(*cuts)[(*n)++] = (Cut){.feature = feature, .above = above};
}

/* The cuts of f's splits, sorted; NULL where some decision is not one of cuts (see the top). */
static Cut *forest_cuts(const HForest *f, uint64_t *count)
{
	Cut *cuts = NULL;
	uint64_t n = 0, cap = 0;
	bool *categories = xcalloc(f->num_features ? f->num_features : 1, sizeof *categories); /* per feature: some IN split */
	bool ok = true;
	for (uint64_t i = 0; ok && i < f->num_nodes; i++) {
		const HNode *s = &f->nodes[i];
		double t = s->value;
		if (s->feature == HIR_LEAF)
			continue;
		if (s->compare == HCMP_IN) {
			categories[s->feature] = true;
			ok = f->category_rule != HCATEGORY_EXACT && (uint64_t)f->sets[s->set].num_words * 32 <= NARROW_CATEGORIES;
			continue;
		}
		ok = !isnan(t);
		if (s->compare != HCMP_LT && s->compare != HCMP_GE)
			add_cut(&cuts, &n, &cap, s->feature, t);
		if (s->compare != HCMP_LE && s->compare != HCMP_GT)
			add_cut(&cuts, &n, &cap, s->feature, nextafter(t, -INFINITY));
		if (s->missing == HMISSING_ZERO) { /* |x| <= z */
			add_cut(&cuts, &n, &cap, s->feature, HIR_ZERO_THRESHOLD);
			add_cut(&cuts, &n, &cap, s->feature, nextafter(-HIR_ZERO_THRESHOLD, -INFINITY));
		}
	}
	for (uint32_t j = 0; ok && j < f->num_features; j++)
		if (categories[j])
			add_cut(&cuts, &n, &cap, (int32_t)j, f->category_rule == HCATEGORY_TRUNCATE ? -1.0 : nextafter(0.0, -INFINITY));
	for (uint64_t i = 0; i < n; i++)
		cuts[i].categories = categories[cuts[i].feature];
	free(categories);
	if (!ok) {
		free(cuts);
		return NULL;
	}
	if (n)
		qsort(cuts, n, sizeof *cuts, by_feature_then_cut);
	*count = 0;
	for (uint64_t i = 0; i < n; i++) /* each once */
		if (!*count || cuts[i].feature != cuts[*count - 1].feature || cuts[i].above != cuts[*count - 1].above)
			cuts[(*count)++] = cuts[i];
	return cuts;
}

/* t's table of 2^bits slots, more than twice the entries of cuts[0..n), holding them. */
static void place(NarrowCuts *t, const Cut *cuts, uint64_t n, uint32_t bits)
{
	uint32_t mask = (1u << bits) - 1;
	t->bits = bits;
	t->slots = xmalloc(2 * ((size_t)mask + 1) * sizeof *t->slots);
	t->filter = xcalloc(filter_words(t), sizeof *t->filter);
	memset(t->slots, 0xff, 2 * ((size_t)mask + 1) * sizeof *t->slots);
	for (uint64_t i = 0; i < n; i++) {
		float u = float_above(cuts[i].above);
		int64_t key;
		uint32_t bit, at;
		if (!raises(cuts[i].above, u))
			continue;
		key = table_key(cuts[i].feature, nextafterf(u, -INFINITY));
		bit = filter_bit(key, bits);
		for (at = bit >> NARROW_FILTER_SHIFT; t->slots[2 * at] != -1; at = (at + 1) & mask)
			;
		t->slots[2 * at] = key;
		memcpy(t->slots + 2 * at + 1, &cuts[i].above, sizeof cuts[i].above);
		t->filter[bit / 32] |= (int32_t)(1u << bit % 32);
		t->num_entries++;
	}
}

void lower_narrowing_free(NarrowCuts *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t->filter);
	free(t);
}

NarrowCuts *lower_narrowing(const HForest *f)
{
	uint64_t n = 0;
	Cut *cuts;
	NarrowCuts *t;
	uint32_t bits = 5;
	if (f->threshold_type != HTYPE_F64 || !(cuts = forest_cuts(f, &n)))
		return NULL;
	for (uint64_t i = 0; i < n; i++) {
		float u = float_above(cuts[i].above);
		/* distinct cuts of a feature need distinct floats above them */
		bool ok = !i || cuts[i].feature != cuts[i - 1].feature || u != float_above(cuts[i - 1].above);
		/* a key raised to a category would move a value below it into it */
		if (cuts[i].categories && raises(cuts[i].above, u))
			ok = ok && !(u >= 0 && u <= (float)NARROW_CATEGORIES && u == floorf(u));
		if (!ok) {
			free(cuts);
			return NULL;
		}
	}
	while ((1ull << bits) <= 2 * n)
		bits++;
	if (bits > 31) {
		free(cuts);
		return NULL;
	}
	t = xcalloc(1, sizeof *t);
	place(t, cuts, n, bits);
	free(cuts);
	return t;
}

float lower_narrow_key(const NarrowCuts *t, int32_t feature, double x)
{
	float c = (float)x;
	int64_t key;
	if ((double)c > x)
		c = nextafterf(c, -INFINITY);
	key = table_key(feature, c);
	for (uint32_t at = filter_bit(key, t->bits) >> NARROW_FILTER_SHIFT; t->slots[2 * at] != -1; at = (at + 1) & ((1u << t->bits) - 1)) {
		double above;
		memcpy(&above, t->slots + 2 * at + 1, sizeof above);
		if (t->slots[2 * at] == key && x > above)
			return nextafterf(c, INFINITY);
	}
	return c;
}

static void *copy(const void *p, size_t size) { return memcpy(xmalloc(size), p, size); }

static uint32_t param(LBuilder *b, LType type, int64_t k)
{
	uint32_t p = lir_emit(b, LOP_PARAM, type, LIR_NONE, LIR_NONE, LIR_NONE);
	b->fn->insts[p].imm = k;
	return p;
}

static uint32_t op(LBuilder *b, LOp o, LType t, uint32_t x, uint32_t y) { return lir_emit(b, o, t, x, y, LIR_NONE); }

/*
 * The key of double x of feature `column` (i64) under narrowing t, whose buffers are
 * tables (slots, filter). One instruction a statement: C leaves the order of a
 * call's arguments open, and it would number them.
 */
static uint32_t narrow(LBuilder *b, const NarrowCuts *t, const uint32_t *tables, uint32_t x, uint32_t column)
{
	uint32_t c, back, bits, zero, positive, below, above, key, wanted, home, mask, word, bit, after, at, hit, slot;
	/* fl(x): x rounded to nearest, one float down where that went up (from 0: to -2^-149). */
	c = lir_cast(b, LCAST_FPTRUNC, LTYPE_F32, x);
	back = lir_cast(b, LCAST_FPEXT, LTYPE_F64, c);
	bits = lir_cast(b, LCAST_BITCAST, LTYPE_I32, c);
	zero = lir_const_float(b, LTYPE_F32, 0.0);
	positive = lir_cmp(b, LOP_FCMP, LCMP_OGT, c, zero);
	below = op(b, LOP_ADD, LTYPE_I32, bits, lir_const_int(b, LTYPE_I32, -1));
	above = op(b, LOP_ADD, LTYPE_I32, bits, lir_const_int(b, LTYPE_I32, 1));
	below = lir_emit(b, LOP_SELECT, LTYPE_I32, positive, below, above);
	at = lir_cmp(b, LOP_FCMP, LCMP_OEQ, c, zero);
	below = lir_emit(b, LOP_SELECT, LTYPE_I32, at, lir_const_int(b, LTYPE_I32, (int32_t)0x80000001u), below);
	at = lir_cmp(b, LOP_FCMP, LCMP_OGT, back, x);
	bits = lir_emit(b, LOP_SELECT, LTYPE_I32, at, below, bits);
	key = lir_emit(b, LOP_VAR, LTYPE_I32, bits, LIR_NONE, LIR_NONE);
	if (t->num_entries) {
		uint32_t filter_bits = t->bits + NARROW_FILTER_SHIFT;
		mask = lir_const_int(b, LTYPE_I64, (int64_t)((1ull << t->bits) - 1));
		wanted = op(b, LOP_SHL, LTYPE_I64, column, lir_const_int(b, LTYPE_I64, 32));
		wanted = op(b, LOP_OR, LTYPE_I64, wanted, lir_cast(b, LCAST_ZEXT, LTYPE_I64, bits));
		bit = op(b, LOP_MUL, LTYPE_I64, wanted, lir_const_int(b, LTYPE_I64, (int64_t)NARROW_HASH));
		bit = op(b, LOP_ASHR, LTYPE_I64, bit, lir_const_int(b, LTYPE_I64, 64 - filter_bits));
		bit = op(b, LOP_AND, LTYPE_I64, bit, lir_const_int(b, LTYPE_I64, (int64_t)((1ull << filter_bits) - 1)));
		home = op(b, LOP_ASHR, LTYPE_I64, bit, lir_const_int(b, LTYPE_I64, NARROW_FILTER_SHIFT));
		word = op(b, LOP_ASHR, LTYPE_I64, bit, lir_const_int(b, LTYPE_I64, 5));
		word = op(b, LOP_LOAD, LTYPE_I32, tables[1], word);
		bit = op(b, LOP_AND, LTYPE_I64, bit, lir_const_int(b, LTYPE_I64, 31));
		bit = lir_cast(b, LCAST_TRUNC, LTYPE_I32, bit);
		bit = op(b, LOP_SHL, LTYPE_I32, lir_const_int(b, LTYPE_I32, 1), bit);
		word = op(b, LOP_AND, LTYPE_I32, word, bit);
		lir_begin(b, LOP_IF, lir_cmp(b, LOP_ICMP, LCMP_NE, word, lir_const_int(b, LTYPE_I32, 0)), LIR_NONE, LIR_NONE);
		/* the float after fl(x): one up from 0 and above, one down below (after -0: 2^-149) */
		after = op(b, LOP_ADD, LTYPE_I32, bits, lir_const_int(b, LTYPE_I32, 1));
		below = op(b, LOP_ADD, LTYPE_I32, bits, lir_const_int(b, LTYPE_I32, -1));
		at = lir_cmp(b, LOP_ICMP, LCMP_SLT, bits, lir_const_int(b, LTYPE_I32, 0));
		after = lir_emit(b, LOP_SELECT, LTYPE_I32, at, below, after);
		at = lir_cmp(b, LOP_ICMP, LCMP_EQ, bits, lir_const_int(b, LTYPE_I32, (int32_t)0x80000000u));
		after = lir_emit(b, LOP_SELECT, LTYPE_I32, at, lir_const_int(b, LTYPE_I32, 1), after);
		/* slots from home on, to an empty one */
		slot = lir_emit(b, LOP_VAR, LTYPE_I64, home, LIR_NONE, LIR_NONE);
		lir_begin(b, LOP_LOOP, LIR_NONE, LIR_NONE, LIR_NONE);
		at = lir_emit(b, LOP_GET, LTYPE_I64, slot, LIR_NONE, LIR_NONE);
		at = op(b, LOP_ADD, LTYPE_I64, at, at);
		hit = op(b, LOP_LOAD, LTYPE_I64, tables[0], at);
		lir_emit(b, LOP_BREAK_IF, LTYPE_VOID, lir_cmp(b, LOP_ICMP, LCMP_EQ, hit, lir_const_int(b, LTYPE_I64, -1)), LIR_NONE, LIR_NONE);
		hit = lir_cmp(b, LOP_ICMP, LCMP_EQ, hit, wanted);
		at = op(b, LOP_ADD, LTYPE_I64, at, lir_const_int(b, LTYPE_I64, 1));
		at = op(b, LOP_LOAD, LTYPE_F64, tables[0], at);
		at = lir_cmp(b, LOP_FCMP, LCMP_OGT, x, at);
		hit = op(b, LOP_AND, LTYPE_I1, hit, at);
		lir_begin(b, LOP_IF, hit, LIR_NONE, LIR_NONE);
		lir_emit(b, LOP_SET, LTYPE_VOID, key, after, LIR_NONE);
		lir_end(b);
		at = lir_emit(b, LOP_GET, LTYPE_I64, slot, LIR_NONE, LIR_NONE);
		at = op(b, LOP_ADD, LTYPE_I64, at, lir_const_int(b, LTYPE_I64, 1));
		at = op(b, LOP_AND, LTYPE_I64, at, mask);
		lir_emit(b, LOP_SET, LTYPE_VOID, slot, at, LIR_NONE);
		lir_end(b);
		lir_end(b);
	}
	key = lir_emit(b, LOP_GET, LTYPE_I32, key, LIR_NONE, LIR_NONE);
	return lir_cast(b, LCAST_BITCAST, LTYPE_F32, key);
}

/*
 * Entry `name` of module: its rows (of `from`) converted (widened to double, or
 * narrowed by t) into the workspace, then entry callee (callee_per_row: its workspace).
 */
static uint32_t converting_entry(LModule *module, const char *name, LType from, const NarrowCuts *t, uint32_t callee,
                                 uint64_t callee_per_row)
{
	LFunc *fn = lir_func_add(module, name, lir_predict_params, LIR_PREDICT_PARAMS);
	LType to = from == LTYPE_F32 ? LTYPE_F64 : LTYPE_F32;
	LBuilder b;
	uint32_t rows, nrows, workspace, width, zero, one, own, converted, row, first, column, at, x, tables[2];

	fn->kind = LFUNC_HOST;
	lir_builder_init(&b, fn);
	if (t) {
		uint64_t slots = 2ull << t->bits;
		tables[0] = lir_buffer_add(module, "narrow_slots", LTYPE_I64, slots, copy(t->slots, slots * sizeof *t->slots));
		tables[1] = lir_buffer_add(module, "narrow_filter", LTYPE_I32, filter_words(t), copy(t->filter, filter_words(t) * sizeof *t->filter));
	}
	rows = param(&b, LTYPE_PTR, 0);
	nrows = param(&b, LTYPE_I64, 1);
	workspace = param(&b, LTYPE_PTR, 4);
	for (int i = 0; t && i < 2; i++) {
		uint32_t buffer = tables[i];
		tables[i] = lir_emit(&b, LOP_BUFFER, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
		fn->insts[tables[i]].imm = buffer;
	}
	width = lir_const_int(&b, LTYPE_I64, module->num_features);
	zero = lir_const_int(&b, LTYPE_I64, 0);
	one = lir_const_int(&b, LTYPE_I64, 1);
	own = op(&b, LOP_MUL, LTYPE_I64, nrows, lir_const_int(&b, LTYPE_I64, (int64_t)callee_per_row));
	own = op(&b, LOP_ADD, LTYPE_I64, own, lir_const_int(&b, LTYPE_I64, 7));
	own = op(&b, LOP_AND, LTYPE_I64, own, lir_const_int(&b, LTYPE_I64, -8));
	converted = op(&b, LOP_INDEX, LTYPE_PTR, workspace, own);
	fn->insts[converted].imm = 1;

	row = lir_begin(&b, LOP_PARALLEL_FOR, zero, nrows, one);
	fn->insts[row].imm = CONVERT_GRAIN;
	first = op(&b, LOP_MUL, LTYPE_I64, row, width);
	column = lir_begin(&b, LOP_FOR, zero, width, one);
	at = op(&b, LOP_ADD, LTYPE_I64, first, column);
	x = op(&b, LOP_LOAD, from, rows, at);
	x = t ? narrow(&b, t, tables, x, column) : lir_cast(&b, LCAST_FPEXT, to, x);
	lir_emit(&b, LOP_STORE, LTYPE_VOID, converted, at, x);
	lir_end(&b);
	lir_end(&b);

	x = lir_emit(&b, LOP_CALL, LTYPE_VOID, converted, nrows, workspace);
	fn->insts[x].imm = callee;
	module->workspace_fixed = 8;
	module->workspace_per_row = callee_per_row + (uint64_t)module->num_features * lir_type_size(to);
	return module->num_funcs - 1;
}

void lower_widening_entry(LModule *module, uint64_t callee_per_row)
{
	module->predict = converting_entry(module, "predict", LTYPE_F32, NULL, module->predict_f64, callee_per_row);
}

void lower_narrowing_entry(LModule *module, const NarrowCuts *t, uint64_t callee_per_row)
{
	module->predict_f64 = converting_entry(module, "predict_f64", LTYPE_F64, t, module->predict, callee_per_row);
}
