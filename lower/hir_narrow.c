/*
 * HIR pass: the forest predict walks, whose rows are floats.
 *
 * Float thresholds for float rows. A forest that compares in double (LightGBM, some
 * ONNX models) gets two entries: predict_f64 compares double rows against the double
 * thresholds, and predict, whose rows are floats, compared them too, each row value
 * widened to double. For a float x every such comparison has a float threshold that
 * decides the same (x < t iff x < the least float >= t; x <= t iff x <= the greatest
 * float <= t; likewise > and >=), so predict can walk float thresholds: records of half
 * the size, and the walk's working set with them (on syn-lgb-covtype, 800 trees of
 * depth 8, the array layout's records go from 16 to 8 bytes).
 *
 * The comparison the walk decides from one flag. x86 reads "the row goes right" off the
 * carry flag of one compare (ucomiss), which the step adds to the child index (adc or
 * sbb), only in four forms: x >= t and x <= t, both false for NaN, and x > t and x < t
 * or NaN. So a split that sends NaN left is best a < or > split (right where x >= t,
 * x <= t), and one that sends NaN right a <= or >= split (right where x > t, x < t, or
 * NaN): the compare then decides a missing value too, and the walk needs no test for
 * it (lower/rep.c: missing_by_compare), nor rows known to hold none (ifComplete). A
 * forest whose splits all send NaN one way gets that form; the others (LightGBM's, whose
 * splits send NaN both ways: tested apart, or read as 0 where it goes where 0 goes,
 * RepLayout.nan_reads_zero) the strict one, x < t, which decides rows without missing
 * values from one flag whatever the rule, and walks faster than <= (measured:
 * docs/performance-notes.md, Comparison forms).
 *
 * Between floats, x <= t is x < t' and x > t is x >= t', t' the float after t, and
 * x < t is x <= t'' and x >= t is x > t'', t'' the float before t, for every x, NaN
 * included (both sides are then false), wherever t' (t'') exists. It may be subnormal
 * (x < 0 is x <= -2^-149): the generated code compares subnormals as they are, whatever
 * the caller's mode (target/llvm_host.c). A forest that kept some splits in the other
 * form would pay for both compares at every step, so the rewrite is all or nothing.
 * Between doubles the same holds with t' and t'' the doubles after and before t: the
 * pipeline rewrites a double forest so too (hir_float_forms), for the double entry's
 * walk, which rows of doubles walk faster so (measured: docs/performance-notes.md,
 * Comparison forms), and its float twin comes out as before (the least float >= t' is
 * the float after the greatest float <= t).
 */
#include "lower/lower.h"

#include <math.h>

/* The float closest to t on the side the comparison needs: up, the least float >= t; else the greatest float <= t. */
static double float_bound(double t, bool up)
{
	float r = (float)t;
	if (up && (double)r < t)
		r = nextafterf(r, INFINITY);
	else if (!up && (double)r > t)
		r = nextafterf(r, -INFINITY);
	return r;
}

/* Whether s is a split that compares (not a leaf, not a category or equality test). */
static bool orders(const HNode *s) { return s->feature != HIR_LEAF && s->compare <= HCMP_GE; }

unsigned lower_nan_deciding_forms(bool nan_left)
{
	return nan_left ? 1u << HCMP_LT | 1u << HCMP_GT : 1u << HCMP_LE | 1u << HCMP_GE;
}

/*
 * The comparisons f's splits are best made (1 << HCompare): those that decide NaN where
 * every split sends it one way (only NaN missing), else < and >=.
 */
static unsigned wanted_forms(const HForest *f)
{
	unsigned rules = 0; /* bit 0: some split sends NaN right, bit 1: left, bit 2: something else */
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		const HNode *s = &f->nodes[i];
		if (s->feature != HIR_LEAF)
			rules |= !orders(s) || s->missing != HMISSING_NAN ? 4u : s->default_left ? 2u : 1u;
	}
	if (rules == 1 || rules == 2)
		return lower_nan_deciding_forms(rules == 2);
	return 1u << HCMP_LT | 1u << HCMP_GE;
}

/* Whether split s compares, in another form than wanted. */
static bool to_rewrite(const HNode *s, unsigned wanted) { return orders(s) && !(wanted & 1u << s->compare); }

/*
 * The threshold that makes s's comparison the other form: the value of f's threshold
 * type (float, or double) after t for <= and >, before it for < and >=; NAN where there
 * is none.
 */
static double other_bound(const HNode *s, HType type)
{
	bool up = s->compare == HCMP_LE || s->compare == HCMP_GT;
	if (type == HTYPE_F64) {
		double b = nextafter(s->value, up ? INFINITY : -INFINITY);
		return b != s->value ? b : NAN;
	}
	float t = (float)s->value, b = nextafterf(t, up ? INFINITY : -INFINITY);
	return b != t ? b : NAN;
}

static const HCompare other_form[] = {[HCMP_LT] = HCMP_LE, [HCMP_LE] = HCMP_LT, [HCMP_GT] = HCMP_GE, [HCMP_GE] = HCMP_GT};

/* Whether f has splits to rewrite to the wanted forms, and every one can be. */
static bool can_rewrite(const HForest *f, unsigned wanted)
{
	bool any = false;
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		if (!to_rewrite(&f->nodes[i], wanted))
			continue;
		if (isnan(other_bound(&f->nodes[i], f->threshold_type)))
			return false;
		any = true;
	}
	return any;
}

/* Rewrite the splits of f (can_rewrite) to the wanted forms. */
static void rewrite(HForest *f, unsigned wanted)
{
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		HNode *s = &f->nodes[i];
		if (to_rewrite(s, wanted)) {
			s->value = other_bound(s, f->threshold_type);
			s->compare = (uint8_t)other_form[s->compare];
		}
	}
}

bool hir_float_forms(HForest *f)
{
	unsigned wanted = wanted_forms(f);
	if (!can_rewrite(f, wanted))
		return false;
	rewrite(f, wanted);
	return true;
}

HForest *hir_float_forest(const HForest *f)
{
	HForest *n;
	unsigned wanted = wanted_forms(f);
	if (f->threshold_type == HTYPE_F32) {
		if (!can_rewrite(f, wanted))
			return NULL;
		n = hir_forest_copy(f);
		rewrite(n, wanted);
		return n;
	}
	/* == and != have a float twin only where t is a float (else no float equals t). */
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		const HNode *s = &f->nodes[i];
		if (s->feature != HIR_LEAF && (s->compare == HCMP_EQ || s->compare == HCMP_NE) && (double)(float)s->value != s->value)
			return NULL;
	}
	n = hir_forest_copy(f);
	n->threshold_type = HTYPE_F32;
	for (uint64_t i = 0; i < n->num_nodes; i++) {
		HNode *s = &n->nodes[i];
		if (s->feature == HIR_LEAF || s->compare == HCMP_IN)
			continue;
		s->value = float_bound(s->value, s->compare == HCMP_LT || s->compare == HCMP_GE || s->compare == HCMP_EQ ||
		                                     s->compare == HCMP_NE);
	}
	if (can_rewrite(n, wanted))
		rewrite(n, wanted);
	return n;
}
