/*
 * predict_f64's narrowing, end to end: LightGBM fixtures that compare in double, compiled
 * with several representations, predict rows of doubles at and around every threshold
 * (two doubles either side, the floats either side of its float, and at 0, infinities
 * and NaN) exactly as predict does on the keys lower_narrow_key makes of them, which
 * test_narrowing (lower_passes.c) checks decide every split as the doubles do. So the
 * generated conversion, its table and its probes compute the keys the reference does.
 */
#define _POSIX_C_SOURCE 200809L
#include "front/front.h"
#include "lower/lower.h"
#include "rt/grove.h"
#include "rt/grove_compile.h"

#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/check.h"

static const char *const fixtures[] = {"models/lightgbm/f64_thresholds.txt", "models/lightgbm/missing_zero.txt",
                                       "models/lightgbm/categorical.txt", "models/edges/lgb_wide_cat.txt",
                                       "models/lightgbm/multiclass.txt", "golden/lightgbm.txt"};
static const char *const reps[] = {NULL, "code", "array", "sparse"};

/* Rows: per split, its feature at values around its threshold, the others at base's. */
static double *edge_rows(const HForest *f, size_t *count)
{
	static const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN};
	size_t n = 0, cap = 0;
	double *rows = NULL;
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		const HNode *s = &f->nodes[i];
		double around[3 + sizeof specials / sizeof *specials];
		if (s->feature == HIR_LEAF)
			continue;
		around[0] = s->compare == HCMP_IN ? (double)(i % 40) - 1.0 : s->value;
		around[1] = (float)around[0];
		around[2] = -around[0];
		memcpy(around + 3, specials, sizeof specials);
		for (size_t k = 0; k < sizeof around / sizeof *around; k++)
			for (int side = 0; side < 2; side++) {
				double x = around[k];
				for (int step = 0; step < 2; step++)
					x = side ? nextafter(x, -INFINITY) : nextafterf((float)x, -INFINITY);
				for (int step = 0; step < 5; step++, x = side ? nextafter(x, INFINITY) : nextafterf((float)x, INFINITY)) {
					if (n == cap) {
						cap = cap ? 2 * cap : 1024;
						rows = realloc(rows, cap * f->num_features * sizeof *rows);
					}
					for (uint32_t j = 0; j < f->num_features; j++)
						rows[n * f->num_features + j] = 0.25 * (double)((n + j) % 7) - 0.5;
					rows[n++ * f->num_features + (uint32_t)s->feature] = x;
				}
			}
	}
	*count = n;
	return rows;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/grove-narrow-XXXXXX", model[4096], out[64];
	const char *here = dirname(argv[0]); /* build/tests/narrow */
	size_t checked = 0;

	(void)argc;
	if (!mkdtemp(dir))
		return 1;
	snprintf(out, sizeof out, "%s/model.so", dir);
	for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; i++) {
		Error e;
		HForest *f;
		NarrowCuts *t;
		double *rows;
		float *keys, *want, *got;
		size_t nrows, outputs;
		snprintf(model, sizeof model, "%s/../../tests/%s", here, fixtures[i]);
		f = front_read_model(model, NULL, NULL, &e);
		t = f ? lower_narrowing(f) : NULL;
		CHECK(f && t);
		if (!f || !t) {
			hir_forest_free(f);
			continue;
		}
		rows = edge_rows(f, &nrows);
		keys = malloc(nrows * f->num_features * sizeof *keys);
		for (size_t r = 0; r < nrows; r++)
			for (uint32_t j = 0; j < f->num_features; j++)
				keys[r * f->num_features + j] = lower_narrow_key(t, (int32_t)j, rows[r * f->num_features + j]);
		for (size_t k = 0; k < sizeof reps / sizeof *reps; k++) {
			GroveCompileOptions o;
			GroveError err;
			GroveModel *m = NULL;
			grove_compile_options_init(&o);
			o.representation = reps[k];
			if (grove_compile_file(model, out, &o, &err) != GROVE_OK || grove_load(out, &m, &err) != GROVE_OK) {
				fprintf(stderr, "%s: %s\n", model, err.message);
				failures++;
				continue;
			}
			outputs = grove_num_outputs(m, 0);
			want = malloc(nrows * outputs * sizeof *want);
			got = malloc(nrows * outputs * sizeof *got);
			CHECK(grove_predict(m, keys, nrows, f->num_features, want, nrows * outputs, 0, &err) == GROVE_OK);
			CHECK(grove_predict_f64(m, rows, nrows, f->num_features, got, nrows * outputs, 0, &err) == GROVE_OK);
			for (size_t r = 0; r < nrows * outputs; r++)
				if (memcmp(want + r, got + r, sizeof *got) != 0 && !(isnan(want[r]) && isnan(got[r]))) {
					fprintf(stderr, "%s (%s): row %zu: predict_f64 %.9g, predict on its keys %.9g\n", fixtures[i],
					        reps[k] ? reps[k] : "default", r / outputs, (double)got[r], (double)want[r]);
					failures++;
					break;
				}
			checked += nrows;
			free(want);
			free(got);
			grove_free(m);
			unlink(out);
		}
		free(rows);
		free(keys);
		lower_narrowing_free(t);
		hir_forest_free(f);
	}
	rmdir(dir);
	CHECK(checked > 10000);
	printf("%zu rows of doubles predicted as their narrowed keys\n", checked);
	return failures != 0;
}
