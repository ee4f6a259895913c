/* Numeric CSV reading, a chunk of rows at a time, and writing. */
#include "tools/csv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool csv_open(CsvReader *r, const char *path, bool as_double, Error *e)
{
	FILE *in = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!in)
		return error_set(e, "%s: %s", path, strerror(errno));
	csv_attach(r, in, path, as_double);
	r->owned = in != stdin;
	return true;
}

void csv_attach(CsvReader *r, FILE *in, const char *name, bool as_double)
{
	memset(r, 0, sizeof *r);
	r->in = in;
	r->name = name;
	r->as_double = as_double;
}

void csv_close(CsvReader *r)
{
	if (r->owned)
		fclose(r->in);
	free(r->buf);
	memset(r, 0, sizeof *r);
}

/*
 * The next line, without its line end, at *line (NUL-terminated, valid until the next
 * call), its length in *len: 1, or 0 at the end of the input, or -1 on an error.
 */
static int read_line(CsvReader *r, char **line, size_t *len, Error *e)
{
	char *eol;
	size_t scanned = 0;
	if (!r->buf)
		r->buf = xmalloc(r->cap = 1 << 16);
	while (!(eol = memchr(r->buf + r->start + scanned, '\n', r->end - r->start - scanned))) {
		size_t got;
		scanned = r->end - r->start;
		if (r->eof) {
			if (!scanned)
				return 0;
			eol = r->buf + r->end; /* the last line has no newline */
			break;
		}
		if (r->start > 0) { /* keep the partial line, drop what was parsed */
			memmove(r->buf, r->buf + r->start, scanned);
			r->end = scanned;
			r->start = 0;
		}
		if (r->end + 1 >= r->cap) {
			if (r->cap > CSV_MAX_LINE)
				return error_set(e, "%s:%zu: a line longer than %u MiB", r->name, r->line_no + 1, CSV_MAX_LINE >> 20), -1;
			r->buf = xrealloc(r->buf, r->cap *= 2);
		}
		got = fread(r->buf + r->end, 1, r->cap - r->end - 1, r->in);
		if (got == 0 && ferror(r->in))
			return error_set(e, "%s: %s", r->name, strerror(errno)), -1;
		r->eof = got == 0;
		r->end += got;
	}
	*line = r->buf + r->start;
	*len = (size_t)(eol - *line);
	r->start = eol < r->buf + r->end ? (size_t)(eol - r->buf) + 1 : r->end;
	r->line_no++;
	if (*len && (*line)[*len - 1] == '\r')
		--*len;
	(*line)[*len] = 0;
	return 1;
}

/* Parse one field [s, end) into *v (rounded to float unless as_double); false if it is not a number. */
static bool parse_field(const char *s, const char *end, bool as_double, double *v)
{
	char *stop;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (s == end) {
		*v = NAN;
		return true;
	}
	errno = 0;
	*v = as_double ? strtod(s, &stop) : (double)strtof(s, &stop);
	return stop == end;
}

/* Fields of the line: its commas and one. */
static size_t count_fields(const char *line, size_t len)
{
	size_t n = 1;
	for (const char *p = line, *end = line + len; (p = memchr(p, ',', (size_t)(end - p))); p++)
		n++;
	return n;
}

bool csv_next(CsvReader *r, size_t max_rows, Table *t, Error *e)
{
	t->rows = 0;
	while (t->rows < max_rows) {
		char *line, *field;
		size_t len, cols;
		int got = read_line(r, &line, &len, e);
		if (got <= 0)
			return got == 0;
		if (len == 0)
			continue;
		cols = count_fields(line, len);
		if (!r->cols) { /* the first row: its width; a first line that is not numeric is a header */
			double v;
			char *comma = memchr(line, ',', len);
			if (r->line_no == 1 && !parse_field(line, comma ? comma : line + len, r->as_double, &v))
				continue;
			r->cols = cols;
		}
		if (max_rows > CSV_CHUNK_VALUES / r->cols)
			max_rows = CSV_CHUNK_VALUES / r->cols ? CSV_CHUNK_VALUES / r->cols : 1;
		if (cols != r->cols)
			return error_set(e, "%s:%zu: %zu fields, earlier rows have %zu", r->name, r->line_no, cols, r->cols);
		if (t->cols != r->cols || t->cap < max_rows * r->cols) {
			free(t->values);
			free(t->doubles);
			t->cap = max_rows * r->cols;
			t->values = r->as_double ? NULL : xmalloc(t->cap * sizeof *t->values);
			t->doubles = r->as_double ? xmalloc(t->cap * sizeof *t->doubles) : NULL;
			t->cols = r->cols;
		}
		field = line;
		for (size_t c = 0; c < cols; c++) {
			char *comma = memchr(field, ',', (size_t)(line + len - field)), *stop = comma ? comma : line + len;
			double v;
			if (!parse_field(field, stop, r->as_double, &v))
				return error_set(e, "%s:%zu: field %zu: '%.*s' is not a number", r->name, r->line_no, c + 1,
				                 (int)(stop - field > 40 ? 40 : stop - field), field);
			if (r->as_double)
				t->doubles[t->rows * cols + c] = v;
			else
				t->values[t->rows * cols + c] = (float)v;
			field = stop + 1;
		}
		t->rows++;
	}
	return true;
}

void csv_write(FILE *out, const float *values, size_t rows, size_t cols)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < cols; c++)
			fprintf(out, "%.9g%c", (double)values[r * cols + c], c + 1 == cols ? '\n' : ',');
}

void table_free(Table *t)
{
	free(t->values);
	free(t->doubles);
	memset(t, 0, sizeof *t);
}
