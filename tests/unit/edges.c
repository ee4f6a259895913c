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

int main(int argc, char **argv)
{
	static const char *const reps[] = {"array", "sparse"};
	char dir[] = "/tmp/grove-edges-XXXXXX", model[4096], out[64];
	const char *here = dirname(argv[0]); /* build/tests/edges */
	GroveCompileOptions o;
	GroveError err;
	size_t checked = 0;

	(void)argc;
	if (!mkdtemp(dir))
		return 1;
	snprintf(out, sizeof out, "%s/model.so", dir);
	for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; i++)
		for (size_t r = 0; r < 2; r++) {
			GroveModel *m = NULL;
			snprintf(model, sizeof model, "%s/../../tests/models/edges/%s", here, fixtures[i].file);
			grove_compile_options_init(&o);
			o.representation = reps[r];
			if (grove_compile_file(model, out, &o, &err) != GROVE_OK || grove_load(out, &m, &err) != GROVE_OK) {
				fprintf(stderr, "%s: %s\n", model, err.message);
				failures++;
				continue;
			}
			CHECK(grove_num_features(m) == fixtures[i].features);
			CHECK(grove_num_outputs(m, 0) <= MAX_OUTPUTS);
			if (grove_num_features(m) == fixtures[i].features && grove_num_outputs(m, 0) <= MAX_OUTPUTS)
				checked += check_nans(m, &fixtures[i], reps[r]);
			grove_free(m);
			unlink(out);
		}
	rmdir(dir);
	CHECK(checked > 1000);
	printf("%zu rows with NaNs of other bits predicted as with plain NaN\n", checked);
	return failures != 0;
}
