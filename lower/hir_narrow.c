/*
 * HIR pass: float thresholds for float rows. A forest that compares in double (LightGBM,
 * some ONNX models) gets two entries: predict_f64 compares double rows against the
 * double thresholds, and predict, whose rows are floats, compared them too, each row
 * value widened to double. For a float x every such comparison has a float threshold
 * that decides the same (x < t iff x < the least float >= t; x <= t iff x <= the
 * greatest float <= t; likewise > and >=), so predict can walk float thresholds:
 * records of half the size, and the walk's working set with them (on syn-lgb-covtype,
 * 800 trees of depth 8, the array layout's records go from 16 to 8 bytes).
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

HForest *hir_narrow_thresholds(const HForest *f)
{
	HForest *n;
	if (f->threshold_type != HTYPE_F64)
		return NULL;
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
	return n;
}
