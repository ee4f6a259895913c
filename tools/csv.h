/* Numeric CSV for the command-line tools: rows of floats in, rows of floats out. */
#ifndef GROVE_TOOLS_CSV_H
#define GROVE_TOOLS_CSV_H

#include <stdio.h>

#include "ir/common.h"

typedef struct Table {
	float *values;   /* rows x cols, row-major (NULL when read as doubles) */
	double *doubles; /* the same, when read as doubles (else NULL) */
	size_t rows, cols;
} Table;

/*
 * Read path ("-" = stdin): comma-separated numbers, one row per line, all rows of one
 * width. An empty field, "nan" or "NaN" is a missing value (NaN). A first line that
 * does not start with a number is a header and is skipped. Blank lines are ignored.
 * Values are rounded once, to float (t->values) or, as_double, to double (t->doubles).
 */
bool csv_read(const char *path, bool as_double, Table *t, Error *e);
/* Write rows x cols values to out with enough digits to round-trip a float. */
void csv_write(FILE *out, const float *values, size_t rows, size_t cols);
/* Free t's values. */
void table_free(Table *t);

#endif
