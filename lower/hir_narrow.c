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
 * Strict comparisons. Between floats, x <= t is x < t' and x > t is x >= t', t' the
 * float after t, for every x, NaN included (both sides are then false), wherever t is
 * not +inf. x86 decides x >= t from the carry flag alone, which the step adds to the
 * child index (sbb); x > t needs two flags and a setcc. So LightGBM's <= forests walk
 * as XGBoost's < forests do: 8% faster on syn-lgb-covtype at 4096 rows. t' must not be
 * subnormal, as a CPU that treats subnormal operands as zero (DAZ) would compare it as
 * 0; and a forest that kept some <= beside the new < would pay for both compares at
 * every step, so the rewrite is all or nothing.
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

/* Whether s is a <= or > split on a float threshold. */
static bool non_strict(const HNode *s) { return s->feature != HIR_LEAF && (s->compare == HCMP_LE || s->compare == HCMP_GT); }

/* The float after t, which makes a <= or > split on t strict; NAN where there is none that every CPU compares as such. */
static double strict_bound(double t)
{
	float next = nextafterf((float)t, INFINITY);
	return t < INFINITY && fpclassify(next) != FP_SUBNORMAL ? next : NAN;
}

/* Whether every <= and > split of a float-threshold forest can be made strict. */
static bool can_be_strict(const HForest *f)
{
	bool any = false;
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		if (!non_strict(&f->nodes[i]))
			continue;
		if (isnan(strict_bound(f->nodes[i].value)))
			return false;
		any = true;
	}
	return any;
}

/* Make every <= and > split of f (float thresholds, can_be_strict) a < or >= split. */
static void make_strict(HForest *f)
{
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		HNode *s = &f->nodes[i];
		if (non_strict(s)) {
			s->value = strict_bound(s->value);
			s->compare = s->compare == HCMP_LE ? HCMP_LT : HCMP_GE;
		}
	}
}

HForest *hir_float_forest(const HForest *f)
{
	HForest *n;
	if (f->threshold_type == HTYPE_F32) {
		if (!can_be_strict(f))
			return NULL;
		n = hir_forest_copy(f);
		make_strict(n);
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
	if (can_be_strict(n))
		make_strict(n);
	return n;
}
