/*
 * A program deployed against an installed grove. Built with
 * `cc -DDEPLOY_COMPILE deploy.c $(pkg-config --cflags --libs grove-compiler)`, it compiles
 * a model in-process (libgrovec); built with `cc deploy.c $(pkg-config --cflags --libs
 * grove)`, it takes an artifact made by `grove compile`. Either way it loads the artifact
 * (libgrove) and prints one prediction per row of a CSV of floats.
 *
 *   deploy MODEL ARTIFACT ROWS.csv     (DEPLOY_COMPILE)
 *   deploy ARTIFACT ROWS.csv
 */
#ifdef DEPLOY_COMPILE
#include <grove_compile.h>
#define ARGS 4
#define USAGE "usage: deploy MODEL ARTIFACT ROWS.csv\n"
#else
#include <grove.h>
#define ARGS 3
#define USAGE "usage: deploy ARTIFACT ROWS.csv\n"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 4096
#define MAX_COLS 256

static float rows[MAX_ROWS * MAX_COLS];

/* Read up to MAX_ROWS lines of comma-separated numbers, each `cols` wide; returns the row count, or -1. */
static long read_rows(const char *path, size_t cols)
{
	static char line[1 << 16];
	FILE *f = fopen(path, "r");
	long n = 0;
	if (!f)
		return -1;
	while (n < MAX_ROWS && fgets(line, sizeof line, f)) {
		char *p = line;
		for (size_t c = 0; c < cols; c++) {
			char *end;
			rows[n * cols + c] = strtof(p, &end);
			if (end == p)
				return fclose(f), -1;
			p = *end == ',' ? end + 1 : end;
		}
		n++;
	}
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	GroveModel *model;
	GroveError err;
	float *out;
	long n;

	if (argc != ARGS) {
		fprintf(stderr, USAGE);
		return 2;
	}
#ifdef DEPLOY_COMPILE
	GroveCompileOptions options;
	grove_compile_options_init(&options);
	options.cpu = "x86-64";
	if (grove_compile_file(argv[1], argv[2], &options, &err) != GROVE_OK) {
		fprintf(stderr, "%s: %s\n", grove_status_name(err.status), err.message);
		return 1;
	}
#endif
	if (grove_load(argv[ARGS - 2], &model, &err) != GROVE_OK) {
		fprintf(stderr, "%s: %s\n", grove_status_name(err.status), err.message);
		return 1;
	}
	if (grove_num_features(model) > MAX_COLS || (n = read_rows(argv[ARGS - 1], grove_num_features(model))) < 0) {
		fprintf(stderr, "%s: cannot read rows of %zu columns\n", argv[ARGS - 1], grove_num_features(model));
		return 1;
	}
	out = calloc((size_t)n * grove_num_outputs(model, 0) + 1, sizeof *out);
	if (grove_predict(model, rows, (size_t)n, grove_num_features(model), out, (size_t)n * grove_num_outputs(model, 0), 0,
	                  &err) != GROVE_OK) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	for (long i = 0; i < n * (long)grove_num_outputs(model, 0); i++)
		printf("%.9g\n", out[i]);
	free(out);
	grove_free(model);
	return 0;
}
