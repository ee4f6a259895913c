/*
 * A program deployed against an installed grove, built with
 * `cc deploy.c $(pkg-config --cflags --libs grove-compiler)`: it compiles a model
 * in-process (libgrovec), loads the artifact (libgrove) and prints one prediction per
 * row of a CSV of floats.
 *
 *   deploy MODEL ARTIFACT ROWS.csv
 */
#include <grove_compile.h>

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
	GroveCompileOptions options;
	GroveModel *model;
	GroveError err;
	float *out;
	long n;

	if (argc != 4) {
		fprintf(stderr, "usage: deploy MODEL ARTIFACT ROWS.csv\n");
		return 2;
	}
	grove_compile_options_init(&options);
	options.cpu = "x86-64";
	if (grove_compile_file(argv[1], argv[2], &options, &err) != GROVE_OK ||
	    grove_load(argv[2], &model, &err) != GROVE_OK) {
		fprintf(stderr, "%s: %s\n", grove_status_name(err.status), err.message);
		return 1;
	}
	if (grove_num_features(model) > MAX_COLS || (n = read_rows(argv[3], grove_num_features(model))) < 0) {
		fprintf(stderr, "%s: cannot read rows of %zu columns\n", argv[3], grove_num_features(model));
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
