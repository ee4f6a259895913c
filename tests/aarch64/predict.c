/*
 * The runtime alone, for artifacts built for another architecture: configure.py
 * cross-compiles this program with libgrove (build/aarch64/predict and libgrove.so), and
 * the aarch64 test group runs it under qemu-aarch64 on what `grove compile --target
 * aarch64-linux-gnu` wrote. It loads ARTIFACT with grove_load, reads ROWS.csv as
 * `grove predict` does (tools/csv.c) and prints one line of predictions per row.
 *
 *   predict ARTIFACT.so ROWS.csv [--margin] [--f64]
 */
#include "rt/grove.h"
#include "tools/csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Print "predict: message" and return 1, the exit status. */
static int failed(const char *what, const char *message)
{
	fprintf(stderr, "predict: %s: %s\n", what, message);
	return 1;
}

int main(int argc, char **argv)
{
	bool margin = false, f64 = false;
	unsigned flags;
	GroveModel *model;
	GroveError err;
	Error e = {0};
	CsvReader csv;
	Table rows = {0};
	float *out;
	size_t per_row, chunk = 4096;

	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--margin"))
			margin = true;
		else if (!strcmp(argv[i], "--f64"))
			f64 = true;
		else
			return failed(argv[i], "unknown option (expected --margin or --f64)");
	}
	if (argc < 3) {
		fputs("usage: predict ARTIFACT.so ROWS.csv [--margin] [--f64]\n", stderr);
		return 2;
	}
	if (grove_load(argv[1], &model, &err) != GROVE_OK)
		return failed("grove_load", err.message);
	if (!csv_open(&csv, argv[2], f64, &e))
		return failed("rows", e.message);
	flags = margin ? GROVE_PREDICT_MARGIN : 0;
	per_row = grove_num_outputs(model, flags);
	if (!(out = calloc(chunk * per_row, sizeof *out)))
		return failed(argv[2], "out of memory");
	do { /* a chunk of rows at a time, as grove predict reads them */
		GroveStatus status;
		size_t cols;
		if (!csv_next(&csv, chunk, &rows, &e))
			return failed("rows", e.message);
		cols = rows.rows ? rows.cols : grove_num_features(model);
		status = f64 ? grove_predict_f64(model, rows.doubles, rows.rows, cols, out, rows.rows * per_row, flags, &err)
		             : grove_predict(model, rows.values, rows.rows, cols, out, rows.rows * per_row, flags, &err);
		if (status != GROVE_OK)
			return failed(argv[2], err.message);
		csv_write(stdout, out, rows.rows, per_row);
	} while (rows.rows);
	free(out);
	table_free(&rows);
	csv_close(&csv);
	grove_free(model);
	return fflush(stdout) == 0 ? 0 : failed("standard output", "cannot write");
}
