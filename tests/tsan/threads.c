/*
 * libgrove under ThreadSanitizer: 8 threads predict at once on one model, with batch
 * sizes that run on the calling thread and sizes that use OpenMP, and every result must
 * equal a single-threaded reference, row by row. tests/run.py builds it with
 * -fsanitize=thread together with rt/runtime.c (the artifact is ordinary generated
 * code, which TSan does not instrument) and runs it with tests/tsan/suppressions.txt.
 *
 *   threads ARTIFACT.so SECONDS
 */
#include "rt/grove.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROWS 4096
#define THREADS 8

static GroveModel *model;
static size_t features, outputs;
static float *rows, *reference;
static double seconds;

typedef struct Worker {
	unsigned seed;
	long calls, rows_done, mismatches;
	char error[600];
} Worker;

/* Seconds on a monotonic clock. */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Predict batches of mixed sizes at random offsets until the time is up; count rows that differ from the reference. */
static void *work(void *arg)
{
	static const size_t sizes[] = {1, 3, 64, 127, 128, 129, 500, 2000, ROWS};
	Worker *w = arg;
	float *out = malloc(ROWS * outputs * sizeof *out);
	GroveError err;
	double end = now() + seconds;
	while (out && now() < end) {
		size_t n = sizes[rand_r(&w->seed) % (sizeof sizes / sizeof sizes[0])];
		size_t first = (size_t)rand_r(&w->seed) % (ROWS - n + 1);
		if (grove_predict(model, rows + first * features, n, features, out, n * outputs, 0, &err) != GROVE_OK) {
			snprintf(w->error, sizeof w->error, "%s", err.message);
			break;
		}
		for (size_t i = 0; i < n * outputs; i++)
			w->mismatches += memcmp(&out[i], &reference[first * outputs + i], sizeof *out) != 0;
		w->calls++;
		w->rows_done += (long)n;
	}
	free(out);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[THREADS];
	Worker workers[THREADS];
	GroveError err;
	long calls = 0, done = 0, mismatches = 0;
	unsigned seed = 7;

	if (argc != 3) {
		fprintf(stderr, "usage: threads ARTIFACT.so SECONDS\n");
		return 2;
	}
	seconds = atof(argv[2]);
	if (grove_load(argv[1], &model, &err) != GROVE_OK) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	features = grove_num_features(model);
	outputs = grove_num_outputs(model, 0);
	rows = malloc(ROWS * features * sizeof *rows);
	reference = malloc(ROWS * outputs * sizeof *reference);
	for (size_t i = 0; i < ROWS * features; i++) /* values around 0, some missing */
		rows[i] = rand_r(&seed) % 17 == 0 ? NAN : (float)(rand_r(&seed) % 2001 - 1000) / 400.0f;
	/* The reference: one row at a time, on this thread only. */
	for (size_t r = 0; r < ROWS; r++)
		if (grove_predict(model, rows + r * features, 1, features, reference + r * outputs, outputs, 0, &err) != GROVE_OK) {
			fprintf(stderr, "%s\n", err.message);
			return 1;
		}
	for (int t = 0; t < THREADS; t++) {
		workers[t] = (Worker){.seed = 1000u + (unsigned)t};
		pthread_create(&threads[t], NULL, work, &workers[t]);
	}
	for (int t = 0; t < THREADS; t++) {
		pthread_join(threads[t], NULL);
		if (workers[t].error[0]) {
			fprintf(stderr, "thread %d: %s\n", t, workers[t].error);
			return 1;
		}
		calls += workers[t].calls;
		done += workers[t].rows_done;
		mismatches += workers[t].mismatches;
	}
	printf("%d threads, %.0f s: %ld calls, %ld rows, %ld values differ from the reference\n", THREADS, seconds, calls, done,
	       mismatches);
	grove_free(model);
	free(rows);
	free(reference);
	return mismatches != 0 || calls == 0;
}
