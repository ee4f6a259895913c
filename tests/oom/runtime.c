/*
 * The runtime under allocation failure (the oom test group): loads ARTIFACT and predicts
 * through every entry point that allocates, failing each of libgrove's allocations in
 * turn (tests/oom/failmalloc.c). Every call must succeed or return GROVE_ERROR_MEMORY
 * with a message; a prediction that succeeds must equal the one made without failures;
 * the model must be usable after a failed prediction. Built with AddressSanitizer, the
 * leak check at exit proves that no failure path leaks.
 *
 *   runtime ARTIFACT    prints "N allocations failed in turn, W with a workspace"
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/grove.h"
#include "tests/oom/failmalloc.h"

enum { BIG = 4096 }; /* rows of the large batches: enough for OpenMP and the f64 chunks */

typedef struct {
	float *out[3];    /* predict 1 row, predict BIG rows, predict_f64 BIG rows */
	GroveStatus status[4]; /* load, then the three */
} Outcome;

static float *rows;
static double *rows64;

/* Load path and predict through each entry point; *o says what each call returned. */
static void scenario(const char *path, Outcome *o, int *bad)
{
	GroveModel *m = NULL;
	GroveError err = {0};
	memset(o->status, 0xff, sizeof o->status);
	if ((o->status[0] = grove_load(path, &m, &err)) != GROVE_OK) {
		if (o->status[0] != GROVE_ERROR_MEMORY || !strstr(err.message, "out of memory")) {
			fprintf(stderr, "load: %s: %s\n", grove_status_name(o->status[0]), err.message);
			*bad = 1;
		}
		return;
	}
	size_t nf = grove_num_features(m), no = grove_num_outputs(m, 0);
	o->status[1] = grove_predict(m, rows, 1, nf, o->out[0], no, 0, &err);
	o->status[2] = grove_predict(m, rows, BIG, nf, o->out[1], BIG * no, 0, &err);
	o->status[3] = grove_predict_f64(m, rows64, BIG, nf, o->out[2], BIG * no, 0, &err);
	for (int i = 1; i < 4; i++)
		if (o->status[i] != GROVE_OK && o->status[i] != GROVE_ERROR_MEMORY) {
			fprintf(stderr, "predict %d: %s: %s\n", i, grove_status_name(o->status[i]), err.message);
			*bad = 1;
		}
	grove_free(m);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s ARTIFACT\n", argv[0]);
		return 2;
	}
	/* The model's width, without failures. */
	GroveModel *m;
	GroveError err;
	failmalloc_arm(0);
	if (grove_load(argv[1], &m, &err) != GROVE_OK) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	size_t nf = grove_num_features(m), no = grove_num_outputs(m, 0), ws = grove_workspace_size(m, BIG);
	grove_free(m);
	rows = malloc(BIG * nf * sizeof *rows);
	rows64 = malloc(BIG * nf * sizeof *rows64);
	Outcome want, got;
	for (int i = 0; i < 3; i++) {
		want.out[i] = malloc(BIG * no * sizeof(float));
		got.out[i] = malloc(BIG * no * sizeof(float));
	}
	srand(7);
	for (size_t i = 0; i < BIG * nf; i++) {
		rows[i] = rand() % 10 == 0 ? NAN : (float)(rand() % 4001) / 1000 - 2;
		rows64[i] = rows[i];
	}

	int bad = 0;
	failmalloc_arm(0);
	scenario(argv[1], &want, &bad);
	long n = failmalloc_calls();
	for (int i = 0; i < 4; i++)
		if (want.status[i] != GROVE_OK) {
			fprintf(stderr, "call %d fails without injected failures\n", i);
			return 1;
		}
	size_t len[3] = {no, BIG * no, BIG * no};
	for (long k = 1; k <= n; k++) {
		failmalloc_arm(k);
		scenario(argv[1], &got, &bad);
		failmalloc_arm(0);
		for (int i = 0; i < 3; i++)
			if (got.status[i + 1] == GROVE_OK && memcmp(got.out[i], want.out[i], len[i] * sizeof(float))) {
				fprintf(stderr, "allocation %ld: prediction %d differs from the one without failures\n", k, i + 1);
				bad = 1;
			}
	}
	for (int i = 0; i < 3; i++) {
		free(want.out[i]);
		free(got.out[i]);
	}
	free(rows);
	free(rows64);
	printf("%ld allocations failed in turn, workspace %zu bytes\n", n, ws);
	return bad;
}
