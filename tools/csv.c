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
	free(r->order);
	free(r->fields);
	csv_free_categories(r);
	memset(r, 0, sizeof *r);
}

void csv_set_names(CsvReader *r, const char *const *names, size_t n)
{
	r->names = names;
	r->num_names = names ? n : 0;
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

bool csv_field_number(const CsvField *f, bool as_double, double *v)
{
	char saved = *f->end, *end = f->end;
	bool ok;
	*end = 0; /* strtod stops at the field's end, not at the next field's digits */
	ok = parse_field(f->start, end, as_double, v);
	*end = saved;
	return ok;
}

/*
 * Split the line (NUL-terminated) into r->fields at its commas, a quoted field's quotes
 * removed in place; their number in *n, or false with e filled for a quote left open or
 * text after a closing quote.
 */
static bool split_fields(CsvReader *r, char *line, size_t len, size_t *n, Error *e)
{
	char *p = line, *end = line + len;
	size_t count = 0;
	for (;;) {
		CsvField *f;
		GROW(r->fields, count + 1, r->fields_cap);
		f = &r->fields[count++];
		f->quoted = false;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p < end && *p == '"') {
			char *out = ++p;
			f->quoted = true;
			f->start = out;
			for (;; p++) {
				if (p == end)
					return error_set(e, "%s:%zu: field %zu: a quote left open (a field's quotes close on its line)",
					                 r->name, r->line_no, count);
				if (*p == '"' && p + 1 < end && p[1] == '"')
					p++;
				else if (*p == '"')
					break;
				*out++ = *p;
			}
			f->end = out;
			for (p++; p < end && (*p == ' ' || *p == '\t'); p++)
				;
			if (p < end && *p != ',')
				return error_set(e, "%s:%zu: field %zu: text after its closing quote", r->name, r->line_no, count);
		} else {
			f->start = p;
			p = memchr(p, ',', (size_t)(end - p));
			f->end = p ? p : end;
			p = p ? p : end;
		}
		if (p == end)
			break;
		p++; /* the comma */
	}
	*n = count;
	return true;
}

/* Make t hold max_rows rows of r->cols values. */
static void table_reserve(const CsvReader *r, size_t max_rows, Table *t)
{
	if (t->cols == r->cols && t->cap >= max_rows * r->cols)
		return;
	free(t->values);
	free(t->doubles);
	t->cap = max_rows * r->cols;
	t->values = r->as_double ? NULL : xmalloc(t->cap * sizeof *t->values);
	t->doubles = r->as_double ? xmalloc(t->cap * sizeof *t->doubles) : NULL;
	t->cols = r->cols;
}

bool csv_next(CsvReader *r, size_t max_rows, Table *t, Error *e)
{
	t->rows = 0;
	while (t->rows < max_rows) {
		char *line;
		size_t len, cols = 0;
		int got = read_line(r, &line, &len, e);
		if (got <= 0)
			return got == 0;
		if (r->line_no == 1 && len >= 3 && !memcmp(line, "\xef\xbb\xbf", 3)) { /* a byte-order mark, not data */
			line += 3;
			len -= 3;
		}
		if (len == 0)
			continue;
		if (!split_fields(r, line, len, &cols, e))
			return false;
		if (!r->started) {
			int header = csv_first_line(r, cols, e);
			r->started = true;
			if (header < 0)
				return false;
			if (header)
				continue;
		}
		if (!r->cols)
			r->cols = cols;
		if (max_rows > CSV_CHUNK_VALUES / r->cols)
			max_rows = CSV_CHUNK_VALUES / r->cols ? CSV_CHUNK_VALUES / r->cols : 1;
		if (cols != r->cols)
			return error_set(e, "%s:%zu: %zu fields, %s %zu", r->name, r->line_no, cols,
			                 r->order ? "the header names" : "earlier rows have", r->cols);
		table_reserve(r, max_rows, t);
		for (size_t c = 0; c < cols; c++) {
			const CsvField *f = &r->fields[c];
			size_t feature = r->order ? r->order[c] : c, at = t->rows * cols + feature;
			double v;
			if (csv_column_has_values(r, feature)) {
				if (!csv_category(r, feature, f, c + 1, &v, e))
					return false;
			} else if (!csv_field_number(f, r->as_double, &v))
				return error_set(e, "%s:%zu: field %zu: '%.*s' is not a number", r->name, r->line_no, c + 1,
				                 (int)(f->end - f->start > 40 ? 40 : f->end - f->start), f->start);
			if (r->as_double)
				t->doubles[at] = v;
			else
				t->values[at] = (float)v;
		}
		t->rows++;
	}
	return true;
}

void csv_write_text(FILE *out, const char *text)
{
	if (!strpbrk(text, ",\"\r\n")) {
		fputs(text, out);
		return;
	}
	fputc('"', out);
	for (const char *p = text; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
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
