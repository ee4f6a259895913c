/*
 * NaNs of every bit pattern count as missing: the edge fixtures (tests/models/edges,
 * tests/gen/gen_edges.py), compiled with each representation, predict a row holding a
 * signalling, negative or payload-carrying NaN exactly as the same row with plain NaN.
 * The CSV reader (strtof/strtod) makes only quiet NaNs, so these rows are built here.
 */
#define _POSIX_C_SOURCE 200809L
#include "rt/grove_compile.h"

#include <libgen.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/check.h"

#define MAX_FEATURES 8
#define MAX_OUTPUTS 8

/* float32 NaNs: quiet and signalling, either sign, with and without payloads (the first is plain NaN). */
static const uint32_t nan32[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fa00123u, 0x7fbfffffu,
                                 0x7fc00123u, 0xffffffffu};
/* The same for doubles. */
static const uint64_t nan64[] = {0x7ff8000000000000u, 0xfff8000000000000u, 0x7ff0000000000001u, 0xfff0000000000001u,
                                 0x7ff4000000000123u, 0x7ff7ffffffffffffu, 0x7ff8000000000123u, 0xffffffffffffffffu};
#define NUM_NANS (sizeof nan32 / sizeof *nan32)

/* Values the other features take: ordinary, zero, subnormal, infinite, huge. */
static const double others[] = {0.5, -1.25, 0.0, -0.0, 1e-40, -1e-45, INFINITY, -INFINITY, 3e38, -2.0, 7.0, 1e-310};
#define NUM_OTHERS (sizeof others / sizeof *others)

/* A fixture: its file, its number of features, whether it takes rows of doubles. */
typedef struct {
	const char *file;
	size_t features;
	int f64;
} Fixture;

static const Fixture fixtures[] = {
	{"xgb_edges.json", 4, 0},
	{"xgb_edges_cat.json", 4, 0},
	{"lgb_edges.txt", 5, 1},
	{"onnx_edges.onnx", 3, 0},
	{"onnx_edges_double.onnx", 3, 1},
	{"lgb_wide_cat.txt", 4, 0},
};

/* Whether a and b are the same prediction: the same bits, or both NaN. */
static int same(float a, float b)
{
	return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* Row r (of features n): feature j (or every feature, j == n) holds the k-th NaN, the others values from `others`. */
static void make_row(const Fixture *fx, size_t r, size_t j, size_t k, float *rf, double *rd)
{
	for (size_t i = 0; i < fx->features; i++) {
		rd[i] = others[(r * 5 + i * 3) % NUM_OTHERS];
		rf[i] = (float)rd[i];
		if (i == j || j == fx->features) {
			memcpy(&rf[i], &nan32[k], sizeof rf[i]);
			memcpy(&rd[i], &nan64[k], sizeof rd[i]);
		}
	}
}

/* Predict one row into y (flags: margins or not); 0 on failure, which is counted. */
static int predict(GroveModel *m, const Fixture *fx, const float *rf, const double *rd, unsigned flags, float *y)
{
	GroveError err = {0};
	GroveStatus s = fx->f64 ? grove_predict_f64(m, rd, 1, fx->features, y, MAX_OUTPUTS, flags, &err)
	                        : grove_predict(m, rf, 1, fx->features, y, MAX_OUTPUTS, flags, &err);
	if (s != GROVE_OK) {
		fprintf(stderr, "%s: predict: %s\n", fx->file, err.message);
		failures++;
	}
	return s == GROVE_OK;
}

/* Every NaN in every feature of a few rows predicts (and gives margins) as plain NaN does; returns rows checked. */
static size_t check_nans(GroveModel *m, const Fixture *fx, const char *rep)
{
	float rf[MAX_FEATURES], want[MAX_OUTPUTS], got[MAX_OUTPUTS];
	double rd[MAX_FEATURES];
	size_t checked = 0, outputs;
	for (unsigned flags = 0; flags <= GROVE_PREDICT_MARGIN; flags += GROVE_PREDICT_MARGIN) {
		outputs = grove_num_outputs(m, flags);
		for (size_t r = 0; r < NUM_OTHERS; r++)
			for (size_t j = 0; j <= fx->features; j++) {
				make_row(fx, r, j, 0, rf, rd);
				if (!predict(m, fx, rf, rd, flags, want))
					return checked;
				for (size_t k = 1; k < NUM_NANS; k++) {
					make_row(fx, r, j, k, rf, rd);
					if (!predict(m, fx, rf, rd, flags, got))
						return checked;
					for (size_t o = 0; o < outputs; o++)
						if (!same(got[o], want[o])) {
							fprintf(stderr, "%s (%s): row %zu feature %zu NaN %#llx: output %zu is %.9g, with plain NaN %.9g\n",
							        fx->file, rep, r, j, fx->f64 ? (unsigned long long)nan64[k] : (unsigned long long)nan32[k],
							        o, got[o], want[o]);
							failures++;
						}
					checked++;
				}
			}
	}
	return checked;
}

/*
 * Category splits decide as the code representation's tests do on every value a row's
 * feature can take near the categories: integers from below 0 to past the sets' words
 * (walks of keys read a category feature's key as its category), fractions, NaN, huge
 * values. Rows go in a batch, so that walks of keys make them (each feature swept in
 * turn, the others from `others`). Returns rows checked.
 */
static size_t check_categories(GroveModel *m, GroveModel *code, const Fixture *fx, const char *rep)
{
	static const double odd[] = {-0.5, -0.99, -1.0, -1.5, 0.5, 1.5, 2.999, 31.5, 1e6, 3e38, INFINITY, -INFINITY, NAN};
	size_t n = 0, cap = 4096 * fx->features + 64, outputs = grove_num_outputs(m, 0);
	double *values = malloc(cap * sizeof *values), *rd = malloc(cap * MAX_FEATURES * sizeof *rd);
	float *rf = malloc(cap * MAX_FEATURES * sizeof *rf), *want = malloc(cap * MAX_OUTPUTS * sizeof *want),
	      *got = malloc(cap * MAX_OUTPUTS * sizeof *got);
	size_t count = 0, rows = 0;
	GroveError err = {0};
	for (int v = -3; v < 2200; v++)
		values[count++] = v;
	for (int k = 11; k <= 17; k++) /* around larger sets' ends (identifiers up to 10^5) */
		for (int d = -40; d < 40; d += 3)
			values[count++] = (1 << k) + d;
	for (size_t i = 0; i < sizeof odd / sizeof *odd; i++)
		values[count++] = odd[i];
	for (size_t j = 0; j < fx->features; j++)
		for (size_t i = 0; i < count && rows < cap; i++, rows++)
			for (size_t f = 0; f < fx->features; f++) {
				rd[rows * fx->features + f] = f == j ? values[i] : others[(i + f) % NUM_OTHERS];
				rf[rows * fx->features + f] = (float)rd[rows * fx->features + f];
			}
	if ((fx->f64 ? grove_predict_f64(m, rd, rows, fx->features, got, rows * MAX_OUTPUTS, 0, &err)
	             : grove_predict(m, rf, rows, fx->features, got, rows * MAX_OUTPUTS, 0, &err)) != GROVE_OK ||
	    (fx->f64 ? grove_predict_f64(code, rd, rows, fx->features, want, rows * MAX_OUTPUTS, 0, &err)
	             : grove_predict(code, rf, rows, fx->features, want, rows * MAX_OUTPUTS, 0, &err)) != GROVE_OK) {
		fprintf(stderr, "%s (%s): predict: %s\n", fx->file, rep, err.message);
		failures++;
		rows = 0;
	}
	for (size_t r = 0; r < rows; r++)
		for (size_t o = 0; o < outputs; o++)
			if (!same(got[r * outputs + o], want[r * outputs + o]) && n++ < 5) {
				fprintf(stderr, "%s (%s): row %zu (feature %zu = %.9g): output %zu is %.9g, in code %.9g\n", fx->file, rep, r,
				        r / count, fx->f64 ? rd[r * fx->features + r / count] : rf[r * fx->features + r / count], o,
				        got[r * outputs + o], want[r * outputs + o]);
				failures++;
			}
	free(values), free(rd), free(rf), free(want), free(got);
	return rows;
}

int main(int argc, char **argv)
{
	static const char *const reps[] = {"code", "array", "sparse"}; /* code first: the others' reference on categories */
	GroveModel *code = NULL;
	size_t swept = 0;
	char dir[] = "/tmp/grove-edges-XXXXXX", model[4096], out[64];
	const char *here = dirname(argv[0]); /* build/tests/edges */
	GroveCompileOptions o;
	GroveError err;
	size_t checked = 0;

	(void)argc;
	if (!mkdtemp(dir))
		return 1;
	for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; i++) {
		for (size_t r = 0; r < 3; r++) {
			GroveModel *m = NULL;
			snprintf(model, sizeof model, "%s/../../tests/models/edges/%s", here, fixtures[i].file);
			snprintf(out, sizeof out, "%s/%s.so", dir, reps[r]); /* (a path loaded already would load that library again) */
			grove_compile_options_init(&o);
			o.representation = reps[r];
			o.cache_dir = ""; /* compiled by this build, not found in a cache of an earlier one */
			if (grove_compile_file(model, out, &o, &err) != GROVE_OK || grove_load(out, &m, &err) != GROVE_OK) {
				fprintf(stderr, "%s: %s\n", model, err.message);
				failures++;
				continue;
			}
			CHECK(grove_num_features(m) == fixtures[i].features);
			CHECK(grove_num_outputs(m, 0) <= MAX_OUTPUTS);
			if (grove_num_features(m) == fixtures[i].features && grove_num_outputs(m, 0) <= MAX_OUTPUTS) {
				checked += check_nans(m, &fixtures[i], reps[r]);
				if (r == 0)
					code = m;
				else
					swept += check_categories(m, code, &fixtures[i], reps[r]);
			}
			if (m != code)
				grove_free(m);
			unlink(out);
		}
		grove_free(code);
		code = NULL;
	}
	rmdir(dir);
	CHECK(checked > 1000);
	CHECK(swept > 10000);
	printf("%zu rows with NaNs of other bits predicted as with plain NaN; %zu rows of swept features as code\n", checked, swept);
	return failures != 0;
}
