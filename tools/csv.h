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

/* Whether the first line names the columns (predict --header). */
typedef enum CsvHeader {
	CSV_HEADER_AUTO, /* it does when none of its fields is a number (csv_header.c says how it decides) */
	CSV_HEADER_YES,
	CSV_HEADER_NO,
} CsvHeader;

/* A field of the line being read: [start, end), its quotes removed ("" made "). */
typedef struct CsvField {
	char *start, *end;
	bool quoted;
} CsvField;

/* A column's values by name (csv_set_categories), indexed for lookups. */
typedef struct CsvColumnValues {
	const char *const *values; /* count values (0: a column of numbers); value k is category k (not owned) */
	size_t count;
	size_t *by_text;           /* their indexes, sorted by text */
	double *numbers;           /* the values that are numbers, ascending */
	size_t *by_number;         /* and their indexes */
	size_t num_numbers;
} CsvColumnValues;

/*
 * Reads comma-separated numbers, one row per line, all rows of one width, a chunk of
 * rows at a time, so that memory stays bounded whatever the input's size. An empty
 * field, "nan" or "NaN" is a missing value (NaN); a field may be quoted ("1.5"). A
 * UTF-8 byte-order mark before the first line is skipped. The first line may be a
 * header (CsvHeader); where the model names its features (names), a header's columns
 * are matched to them by name, and rows are reordered to the model's order. Blank
 * lines are ignored. Values are rounded once, to float or, as_double, to double.
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
	CsvHeader header;
	const char *const *names; /* the model's feature names (not owned: csv_set_names), or NULL */
	size_t num_names;
	bool started;      /* the first line has been read */
	size_t *order;     /* after a header matched by name: field c is feature order[c]; NULL: in the file's order */
	CsvField *fields;  /* the current line's fields */
	size_t fields_cap;
	CsvColumnValues *columns; /* per feature, the values it takes by name (csv_set_categories), or NULL */
	size_t num_columns;
	bool unseen_missing;      /* a value in no list is missing, else refused */
} CsvReader;

/* Open path ("-" = standard input). */
bool csv_open(CsvReader *r, const char *path, bool as_double, Error *e);
/* Read from in (not closed by csv_close); name is for messages. */
void csv_attach(CsvReader *r, FILE *in, const char *name, bool as_double);
/*
 * Before the first csv_next: the model's n feature names (names[i] for feature i; kept,
 * not copied), to which a header's columns are matched; NULL when it names none.
 */
void csv_set_names(CsvReader *r, const char *const *names, size_t n);
/*
 * Before the first csv_next: the values each of the n features takes by name, where the
 * model names them (values[j]: counts[j] of them; NULL or 0 for a column of numbers; each
 * values[j] kept, not copied). A field of such a column is its value's index (tools/csv_categories.c);
 * one in no list is missing where unseen_missing, else an error.
 */
void csv_set_categories(CsvReader *r, const char *const *const *values, const size_t *counts, size_t n, bool unseen_missing);
/* csv_set_categories from a forest's category values (c, over its n features; kept, not copied), where it has them. */
void csv_set_category_values(CsvReader *r, const CategoryValues *c, size_t n);
/*
 * Read the next rows, at most max_rows and CSV_CHUNK_VALUES values (but one row at least), into t (its buffer reused and grown as needed);
 * t->rows is 0 at the end of the input. Errors name the line ("rows.csv:7: field 3:
 * 'abc' is not a number").
 */
bool csv_next(CsvReader *r, size_t max_rows, Table *t, Error *e);
void csv_close(CsvReader *r);

/* Write text as one CSV field: quoted ("" for a quote) when it holds a comma, a quote or a line end. */
void csv_write_text(FILE *out, const char *text);
/* Write rows x cols values to out with enough digits to round-trip a float. */
void csv_write(FILE *out, const float *values, size_t rows, size_t cols);
/* Free t's values. */
void table_free(Table *t);

/* csv_header.c, for csv_next: the line's n fields are the first line's; 1 if they are a header (r->order set where
   they were matched to names), 0 if they are a row, -1 with e filled if they are neither. */
int csv_first_line(CsvReader *r, size_t n, Error *e);
/* csv_categories.c, for csv.c and csv_header.c: free what csv_set_categories made; whether a feature takes values by
   name; whether field f is one of a feature's values; field f (number `field` on the line) of such a feature as its
   value's index into *v, or false with e filled. */
void csv_free_categories(CsvReader *r);
bool csv_column_has_values(const CsvReader *r, size_t feature);
bool csv_field_is_value(const CsvReader *r, size_t feature, const CsvField *f);
bool csv_category(const CsvReader *r, size_t feature, const CsvField *f, size_t field, double *v, Error *e);
/* csv_header.c, for it and csv_categories.c: the indexes 0..n-1 of texts sorted by text (malloc'ed); the index of the
   text field f holds among texts (sorted by csv_sort_texts), or n. */
size_t *csv_sort_texts(const char *const *texts, size_t n);
size_t csv_find_text(const char *const *texts, const size_t *sorted, size_t n, const CsvField *f);
/* csv.c, for csv_header.c: parse field f into *v (rounded to float unless as_double); false if it is not a number. */
bool csv_field_number(const CsvField *f, bool as_double, double *v);

#endif
