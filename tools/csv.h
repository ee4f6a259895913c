/* Numeric CSV for the command-line tools: rows of floats in, a chunk at a time; rows of floats out. */
#ifndef GROVE_TOOLS_CSV_H
#define GROVE_TOOLS_CSV_H

#include <stdio.h>

#include "ir/common.h"

/* The longest line csv_next reads (a row of 2,000 features takes about 50 KiB). */
#define CSV_MAX_LINE (64u << 20)
/* The most values csv_next returns at once (at least one row, whatever its width). */
#define CSV_CHUNK_VALUES (1u << 22)

typedef struct Table {
	float *values;   /* rows x cols, row-major (when not read as doubles) */
	double *doubles; /* the same, when read as doubles */
	size_t rows, cols;
	size_t cap;      /* values the buffer holds */
} Table;

/*
 * Reads comma-separated numbers, one row per line, all rows of one width, a chunk of
 * rows at a time, so that memory stays bounded whatever the input's size. An empty
 * field, "nan" or "NaN" is a missing value (NaN). A first line that does not start with
 * a number is a header and is skipped. Blank lines are ignored. Values are rounded
 * once, to float or, as_double, to double.
 */
typedef struct CsvReader {
	FILE *in;
	const char *name;  /* for messages */
	bool as_double;
	bool owned;        /* in was opened by csv_open */
	char *buf;         /* input read but not yet parsed: buf[start, end) */
	size_t start, end, cap;
	bool eof;
	size_t line_no;
	size_t cols;       /* fields per row; 0 before the first row */
} CsvReader;

/* Open path ("-" = standard input). */
bool csv_open(CsvReader *r, const char *path, bool as_double, Error *e);
/* Read from in (not closed by csv_close); name is for messages. */
void csv_attach(CsvReader *r, FILE *in, const char *name, bool as_double);
/*
 * Read the next rows, at most max_rows and CSV_CHUNK_VALUES values (but one row at least), into t (its buffer reused and grown as needed);
 * t->rows is 0 at the end of the input. Errors name the line ("rows.csv:7: field 3:
 * 'abc' is not a number").
 */
bool csv_next(CsvReader *r, size_t max_rows, Table *t, Error *e);
void csv_close(CsvReader *r);

/* Write rows x cols values to out with enough digits to round-trip a float. */
void csv_write(FILE *out, const float *values, size_t rows, size_t cols);
/* Free t's values. */
void table_free(Table *t);

#endif
