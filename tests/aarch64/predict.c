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

/* Predict every row of rows with model into a new array of rows x per_row values (NULL with err filled). */
static float *predict_rows(GroveModel *model, const Table *rows, unsigned flags, size_t per_row, GroveError *err)
{
	size_t cols = rows->rows ? rows->cols : grove_num_features(model), size = rows->rows * per_row;
	float *out = calloc(size + 1, sizeof *out);
	GroveStatus status;
	if (!out) {
		snprintf(err->message, sizeof err->message, "out of memory for %zu predictions", size);
		return NULL;
	}
	status = rows->doubles ? grove_predict_f64(model, rows->doubles, rows->rows, cols, out, size, flags, err)
	                       : grove_predict(model, rows->values, rows->rows, cols, out, size, flags, err);
	if (status != GROVE_OK) {
		free(out);
		return NULL;
	}
	return out;
}

int main(int argc, char **argv)
{
	bool margin = false, f64 = false;
	unsigned flags;
	GroveModel *model;
	GroveError err;
	Error e = {0};
	Table rows;
	float *out;

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
	if (!csv_read(argv[2], f64, &rows, &e))
		return failed("rows", e.message);
	flags = margin ? GROVE_PREDICT_MARGIN : 0;
	if (!(out = predict_rows(model, &rows, flags, grove_num_outputs(model, flags), &err)))
		return failed(argv[2], err.message);
	csv_write(stdout, out, rows.rows, grove_num_outputs(model, flags));
	free(out);
	table_free(&rows);
	grove_free(model);
	return fflush(stdout) == 0 ? 0 : failed("standard output", "cannot write");
}
