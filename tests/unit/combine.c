/*
 * How leaves combine into predictions, end to end: random multi-output forests whose
 * trees add to one output or to a range of them (leaf vectors), under each aggregate
 * (sum, average, min, max) and each transform, compiled with both representations under
 * schedules that interleave, tile and privatise the tree loop, against a direct
 * evaluation of the HIR's definition (hir.h); binary expansions of one margin into two
 * predictions. Every reduction strategy (privatised, atomic, vector) takes every aggregate.
 */
#include "lower/lower.h"
#include "lower/rep.h"
#include "rt/grove.h"
#include "target/target.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/check.h"
#include "tests/unit/lower_check.h"

#define FEATURES 3
#define MAX_OUTPUTS 40 /* the most margins a case has */
#define ROWS 97
#define TREES 12

static uint32_t seed = 777;

static uint32_t random_below(uint32_t n)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 8) % n;
}

static float rows[ROWS * FEATURES];

/*
 * A forest of depth-2 trees: every third tree adds to all outputs through leaf vectors,
 * the others to one output (or, with wide, to a range of two). Vector entries for an
 * output a leaf leaves alone hold the aggregate's identity.
 */
static HForest *random_forest(HAggregate aggregate, HTransform transform, bool wide, uint32_t outputs)
{
	HForest *f = hir_forest_new("combine", FEATURES, outputs);
	double identity = aggregate == HAGGREGATE_MIN ? INFINITY : aggregate == HAGGREGATE_MAX ? -INFINITY : 0.0;
	f->aggregate = aggregate;
	f->average_count = 5;
	f->transform = transform;
	f->sigmoid_alpha = 0.75;
	for (uint32_t o = 0; o < outputs; o++)
		f->base_score[o] = (double)o / 8.0 - 0.25;
	for (uint32_t t = 0; t < TREES; t++) {
		uint32_t width = !wide ? 1 : t % 3 == 0 ? outputs : t % 3 == 1 ? 2 : 1;
		uint32_t output = width == outputs ? 0 : random_below(outputs - width + 1);
		HNode *n = hir_tree_add(f, 7, output);
		f->trees[f->num_trees - 1].width = width;
		n[0] = (HNode){.value = 0.5, .left = 1, .right = 2, .feature = (int32_t)random_below(FEATURES), .default_left = 1};
		n[1] = (HNode){.value = 0.25, .left = 3, .right = 4, .feature = (int32_t)random_below(FEATURES)};
		n[2] = (HNode){.value = 0.75, .left = 5, .right = 6, .feature = (int32_t)random_below(FEATURES), .compare = HCMP_LE};
		for (uint32_t i = 3; i < 7; i++) {
			double *values;
			n = hir_tree_nodes(f, t); /* hir_leaf_values_add does not move nodes, but keep it obvious */
			n[i] = (HNode){.value = (double)((int)random_below(33) - 16) / 16.0, .feature = HIR_LEAF};
			if (width == 1)
				continue;
			n[i].vector = (uint32_t)hir_leaf_values_add(f, width, &values);
			for (uint32_t k = 0; k < width; k++)
				values[k] = random_below(4) == 0 ? identity : (double)((int)random_below(33) - 16) / 16.0;
		}
	}
	hir_schedule_init(&f->schedule, TREES);
	return f;
}

/* The margins of row x by the definition in hir.h, in double. */
static void reference_margins(const HForest *f, const float *x, double *margins)
{
	double acc[MAX_OUTPUTS];
	bool reached[MAX_OUTPUTS] = {false};
	for (uint32_t o = 0; o < f->num_outputs; o++)
		acc[o] = 0;
	for (uint32_t t = 0; t < f->num_trees; t++) {
		const HNode *nodes = hir_tree_nodes(f, t), *n = nodes;
		const HTree *tree = &f->trees[t];
		while (n->feature != HIR_LEAF) {
			float v = x[n->feature], th = (float)n->value;
			bool left = isnan(v) ? n->default_left : n->compare == HCMP_LE ? v <= th : v < th;
			n = &nodes[left ? n->left : n->right];
		}
		for (uint32_t k = 0; k < tree->width; k++) {
			uint32_t o = tree->output + k;
			double v = tree->width == 1 ? n->value : f->leaf_values[n->vector + k];
			if (isinf(v))
				continue; /* the identity: adds nothing */
			if (f->aggregate == HAGGREGATE_MIN)
				acc[o] = reached[o] && acc[o] < v ? acc[o] : v;
			else if (f->aggregate == HAGGREGATE_MAX)
				acc[o] = reached[o] && acc[o] > v ? acc[o] : v;
			else
				acc[o] += v;
			reached[o] = true;
		}
	}
	for (uint32_t o = 0; o < f->num_outputs; o++)
		margins[o] = f->base_score[o] + (f->aggregate == HAGGREGATE_AVERAGE ? acc[o] / f->average_count : acc[o]);
}

/* onnxruntime's probit (Winitzki's erfinv), in float as it computes it. */
static double probit(double margin)
{
	float p = (float)margin, x = 2 * p - 1, sign = x < 0 ? -1.0f : 1.0f, lg = logf((1 - x) * (1 + x));
	float v = 2.0f / (3.14159f * 0.147f) + 0.5f * lg, v2 = 1.0f / 0.147f * lg;
	return 1.41421356f * sign * sqrtf(sqrtf(v * v - v2) - v);
}

/* The predictions of row x. */
static void reference_predictions(const HForest *f, const float *x, double *out)
{
	double m[MAX_OUTPUTS], max = -INFINITY, sum = 0;
	reference_margins(f, x, m);
	for (uint32_t o = 0; o < f->num_outputs; o++)
		max = m[o] > max ? m[o] : max;
	for (uint32_t o = 0; o < f->num_outputs; o++)
		if (f->transform == HTRANSFORM_SOFTMAX || fabs(m[o]) > 1e-7)
			sum += exp(m[o] - max);
	for (uint32_t o = 0; o < f->num_outputs; o++) {
		switch (f->transform) {
		case HTRANSFORM_SIGMOID: out[o] = 1 / (1 + exp(-f->sigmoid_alpha * m[o])); break;
		case HTRANSFORM_SOFTMAX: out[o] = exp(m[o] - max) / sum; break;
		case HTRANSFORM_SOFTMAX_ZERO: out[o] = (fabs(m[o]) > 1e-7 ? exp(m[o] - max) : m[o] * exp(-max)) / sum; break;
		case HTRANSFORM_EXP: out[o] = exp(m[o]); break;
		case HTRANSFORM_SIGNED_SQUARE: out[o] = m[o] * fabs(m[o]); break;
		case HTRANSFORM_PROBIT: out[o] = probit(m[o]); break;
		case HTRANSFORM_ISOLATION: out[o] = -exp2(-m[o]); break;
		case HTRANSFORM_STEP: out[o] = m[o] > 0; break;
		case HTRANSFORM_SOFTPLUS: out[o] = log1p(exp(m[o])); break;
		default: out[o] = m[o]; break;
		}
	}
}

/* Compile f under schedule text with representation rep into path; NULL and a message on failure. */
static GroveModel *build(const HForest *f, const char *schedule, const char *rep, const char *path, Error *e)
{
	static unsigned built;
	/* Every other library at -O0 (half the time; the reductions' semantics, not LLVM's, are under test), the others at -O2. */
	TargetOptions o = {.emit = TARGET_EMIT_SHARED, .opt_level = built++ % 2 ? 0 : 2, .cpu = "x86-64"};
	HForest *c = hir_forest_copy(f);
	GroveModel *model = NULL;
	GroveError err;
	MModule *m = NULL;
	LModule *lir = NULL;
	bool ok = hir_schedule_parse(&c->schedule, schedule, "test", e) && (m = lower_hir_to_mir(c, NULL, e)) &&
	          mir_legalize_reductions(m, e);
	if (ok) {
		m->vector_tops = MTOPS_WIDE; /* (softmaxes 16 margins at a time: the lowering's vectors, split for x86-64 by LLVM) */
		mir_unroll_walks(m);
		mir_interleave(m);
		ok = (lir = lower_as(m, rep, e)) && target_emit(lir, &o, path, e);
	}
	if (ok && grove_load(path, &model, &err) != GROVE_OK)
		error_set(e, "%s", err.message);
	lir_module_free(lir);
	mir_module_free(m);
	hir_forest_free(c);
	unlink(path);
	return model;
}

static const char *const schedules[] = {
	"",
	"tile(batch, b0, b1, 4); interleave(b1); tile(tree, t0, t1, 4); interleave(t1)",
	"reorder(tree, batch); parallel(tree)", /* privatised margins, folded by reduceDimension */
	"reorder(tree, batch); parallel(tree); atomicReduce(tree)",
	"reorder(tree, batch); parallel(tree); vectorReduce(tree, 4)",
	"tile(batch, b0, b1, 8); tile(tree, t0, t1, 3); reorder(b0, t0, b1, t1); parallel(t0)",
	"tile(batch, b0, b1, 64); parallel(b0); tile(b1, b2, b3, 16); interleave(b3)", /* tiles of 64 rows, 16 side by side */
};

/* f predicts (and gives margins) as its definition says, under every schedule, with both representations. */
static void check_forest(const HForest *f, const char *dir, const char *what)
{
	static const char *const reps[] = {"array", "sparse"};
	static unsigned built;
	for (size_t s = 0; s < COUNT_OF(schedules); s++)
		for (size_t r = 0; r < COUNT_OF(reps); r++) {
			char path[128];
			Error e = {.message = {0}};
			GroveModel *model;
			float out[ROWS * MAX_OUTPUTS];
			int bad = 0;
			snprintf(path, sizeof path, "%s/m%u.so", dir, built++);
			if (!(model = build(f, schedules[s], reps[r], path, &e))) {
				fprintf(stderr, "%s '%s' (%s): %s\n", what, schedules[s], reps[r], e.message);
				failures++;
				continue;
			}
			for (int margin = 0; margin < 2; margin++) {
				CHECK(grove_predict(model, rows, ROWS, FEATURES, out, ROWS * f->num_outputs, margin ? GROVE_PREDICT_MARGIN : 0,
				                    NULL) == GROVE_OK);
				for (uint32_t i = 0; i < ROWS; i++) {
					double want[MAX_OUTPUTS];
					if (margin)
						reference_margins(f, rows + i * FEATURES, want);
					else
						reference_predictions(f, rows + i * FEATURES, want);
					for (uint32_t o = 0; o < f->num_outputs; o++) { /* probit: NaN outside [0, 1] and -inf at 0, on both sides */
						double got = out[i * f->num_outputs + o];
						bad += !(got == want[o] || fabs(got - want[o]) <= 1e-5 * fmax(1.0, fabs(want[o])) ||
						         (isnan(got) && isnan(want[o])));
					}
				}
			}
			if (bad)
				fprintf(stderr, "%s '%s' (%s): %d wrong values\n", what, schedules[s], reps[r], bad);
			failures += bad != 0;
			grove_free(model);
		}
}

static void test_combinations(const char *dir)
{
	static const struct {
		HAggregate aggregate;
		HTransform transform;
		bool wide;
		uint32_t outputs;
	} cases[] = {
		{HAGGREGATE_SUM, HTRANSFORM_IDENTITY, false, 4},
		{HAGGREGATE_SUM, HTRANSFORM_SOFTMAX, true, 4},
		/* softmaxes a vector at a time, with the rest one at a time (lower/mir_transform.c, softmax_lanes) */
		{HAGGREGATE_SUM, HTRANSFORM_SOFTMAX, true, 20},
		{HAGGREGATE_SUM, HTRANSFORM_SOFTMAX, false, MAX_OUTPUTS},
		{HAGGREGATE_SUM, HTRANSFORM_SOFTMAX_ZERO, true, 4},
		{HAGGREGATE_AVERAGE, HTRANSFORM_SIGMOID, true, 4},
		{HAGGREGATE_AVERAGE, HTRANSFORM_PROBIT, false, 4},
		{HAGGREGATE_MIN, HTRANSFORM_IDENTITY, true, 4},
		{HAGGREGATE_MAX, HTRANSFORM_SIGNED_SQUARE, true, 4},
		{HAGGREGATE_MAX, HTRANSFORM_EXP, false, 4},
		{HAGGREGATE_AVERAGE, HTRANSFORM_ISOLATION, true, 4},
		{HAGGREGATE_SUM, HTRANSFORM_STEP, false, 4},
		{HAGGREGATE_SUM, HTRANSFORM_SOFTPLUS, true, 4},
	};
	for (size_t i = 0; i < COUNT_OF(cases); i++) {
		HForest *f;
		char what[96];
		Error e = {.message = {0}};
		f = random_forest(cases[i].aggregate, cases[i].transform, cases[i].wide, cases[i].outputs);
		snprintf(what, sizeof what, "%s %s%s, %u outputs", hir_aggregate_name(cases[i].aggregate),
		         hir_transform_name(cases[i].transform), cases[i].wide ? " wide" : "", cases[i].outputs);
		CHECK(hir_verify(f, &e));
		check_forest(f, dir, what);
		hir_forest_free(f);
	}
}

/* Binary expansions: one margin m, predictions [q, p] with p = transform(m). */
static void test_binary(const char *dir)
{
	static const struct {
		HTransform transform;
		HBinary binary;
	} cases[] = {
		{HTRANSFORM_SIGMOID, HBINARY_COMPLEMENT},
		{HTRANSFORM_IDENTITY, HBINARY_COMPLEMENT},
		{HTRANSFORM_IDENTITY, HBINARY_NEGATE},
		{HTRANSFORM_PROBIT, HBINARY_NEGATE},
	};
	for (size_t i = 0; i < COUNT_OF(cases); i++) {
		HForest *f = hir_forest_new("binary", FEATURES, 1);
		char path[128];
		Error e = {.message = {0}};
		GroveModel *model;
		float out[2 * ROWS], margins[ROWS];
		int bad = 0;
		for (uint32_t t = 0; t < 3; t++) {
			HNode *n = hir_tree_add(f, 3, 0);
			n[0] = (HNode){.value = 0.5, .left = 1, .right = 2, .feature = (int32_t)t, .default_left = 1};
			n[1] = (HNode){.value = 0.125 * t, .feature = HIR_LEAF};
			n[2] = (HNode){.value = -0.25 + 0.0625 * t, .feature = HIR_LEAF};
		}
		f->base_score[0] = 0.3;
		f->transform = cases[i].transform;
		f->binary = cases[i].binary;
		hir_schedule_init(&f->schedule, f->num_trees);
		CHECK(hir_verify(f, &e));
		snprintf(path, sizeof path, "%s/binary%zu.so", dir, i);
		if (!(model = build(f, "tile(batch, b0, b1, 4); interleave(b1)", NULL, path, &e))) {
			fprintf(stderr, "binary %zu: %s\n", i, e.message);
			failures++;
			hir_forest_free(f);
			continue;
		}
		CHECK(grove_num_outputs(model, 0) == 2 && grove_num_outputs(model, GROVE_PREDICT_MARGIN) == 1);
		CHECK(grove_predict(model, rows, ROWS, FEATURES, out, 2 * ROWS, 0, NULL) == GROVE_OK);
		CHECK(grove_predict(model, rows, ROWS, FEATURES, margins, ROWS, GROVE_PREDICT_MARGIN, NULL) == GROVE_OK);
		for (uint32_t r = 0; r < ROWS; r++) {
			double m, p, q;
			reference_margins(f, rows + r * FEATURES, &m);
			p = f->transform == HTRANSFORM_SIGMOID ? 1 / (1 + exp(-m)) : f->transform == HTRANSFORM_PROBIT ? probit(m) : m;
			q = f->binary == HBINARY_NEGATE ? -p : f->transform == HTRANSFORM_SIGMOID ? 1 / (1 + exp(m)) : 1 - p;
			bad += fabs(margins[r] - m) > 1e-6 || !(fabs(out[2 * r + 1] - p) <= 1e-5 || (isnan(p) && isnan(out[2 * r + 1]))) ||
			       !(fabs(out[2 * r] - q) <= 1e-5 || (isnan(q) && isnan(out[2 * r])));
		}
		if (bad)
			fprintf(stderr, "binary %s %s: %d wrong rows\n", hir_transform_name(f->transform), hir_binary_name(f->binary), bad);
		failures += bad != 0;
		grove_free(model);
		hir_forest_free(f);
	}
	{ /* two predictions of one margin need a transform of each margin alone */
		HForest *f = hir_forest_new("binary", FEATURES, 1);
		Error e = {.message = {0}};
		f->binary = HBINARY_COMPLEMENT;
		f->transform = HTRANSFORM_SOFTMAX;
		CHECK(!hir_verify(f, &e) && strstr(e.message, "binary expansion"));
		hir_forest_free(f);
	}
}

/* A leaf vector past the forest's values, and an infinite entry that is not the identity, are refused. */
static void test_verify(void)
{
	HForest *f = random_forest(HAGGREGATE_SUM, HTRANSFORM_IDENTITY, true, 4);
	Error e = {.message = {0}};
	CHECK(hir_verify(f, &e));
	f->leaf_values[0] = INFINITY;
	CHECK(!hir_verify(f, &e) && strstr(e.message, "is +inf"));
	f->leaf_values[0] = 0;
	hir_tree_nodes(f, 0)[3].vector = (uint32_t)f->num_leaf_values;
	CHECK(!hir_verify(f, &e) && strstr(e.message, "out of range"));
	hir_forest_free(f);
}

int main(void)
{
	char dir[] = "/tmp/grove-combine-XXXXXX";
	static const float values[] = {0.1f, 0.25f, 0.5f, 0.6f, 0.75f, 0.9f, NAN};
	for (int i = 0; i < ROWS * FEATURES; i++)
		rows[i] = values[random_below(COUNT_OF(values))];
	if (!mkdtemp(dir))
		return 1;
	test_verify();
	test_combinations(dir);
	test_binary(dir);
	rmdir(dir);
	if (failures)
		fprintf(stderr, "%d checks failed\n", failures);
	return failures != 0;
}
