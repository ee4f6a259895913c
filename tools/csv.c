/* Numeric CSV reading and writing. */
#include "tools/csv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The whole of path (or stdin for "-") as a NUL-terminated string. */
static char *slurp(const char *path, size_t *len, Error *e)
{
	FILE *in = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	size_t cap = 1 << 16, n = 0, got;
	char *text;
	if (!in)
		return error_set(e, "%s: %s", path, strerror(errno)), NULL;
	text = xmalloc(cap);
	while ((got = fread(text + n, 1, cap - n - 1, in)) > 0) {
		n += got;
		if (cap - n - 1 == 0)
			text = xrealloc(text, cap *= 2);
	}
	if (ferror(in)) {
		error_set(e, "%s: %s", path, strerror(errno));
		free(text);
		text = NULL;
	} else {
		text[n] = 0;
		*len = n;
	}
	if (in != stdin)
		fclose(in);
	return text;
}

/* Parse one field [s, end) into *v (rounded to float unless as_double); false if it is not a number. */
static bool parse_field(const char *s, const char *end, bool as_double, double *v)
{
	char *stop;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (s == end) {
		*v = NAN;
		return true;
	}
	errno = 0;
	*v = as_double ? strtod(s, &stop) : (double)strtof(s, &stop);
	return stop == end;
}

bool csv_read(const char *path, bool as_double, Table *t, Error *e)
{
	size_t len, cap = 0, line_no = 0;
	char *text = slurp(path, &len, e), *line, *next;
	memset(t, 0, sizeof *t);
	if (!text)
		return false;
	for (line = text; line < text + len; line = next) {
		char *eol = memchr(line, '\n', (size_t)(text + len - line)), *field;
		size_t cols = 0;
		if (!eol)
			eol = text + len;
		next = eol + 1;
		line_no++;
		if (eol == line || (eol == line + 1 && *line == '\r'))
			continue;
		for (field = line;; ) {
			char *comma = memchr(field, ',', (size_t)(eol - field)), *stop = comma ? comma : eol;
			double v;
			if (!parse_field(field, stop, as_double, &v)) {
				if (t->rows == 0 && cols == 0 && line_no == 1)
					break; /* a header */
				error_set(e, "%s:%zu: field %zu: '%.*s' is not a number", path, line_no, cols + 1,
				          (int)(stop - field > 40 ? 40 : stop - field), field);
				goto fail;
			}
			GROW(t->doubles, t->rows * (t->cols ? t->cols : cols + 1) + cols + 1, cap);
			t->doubles[t->rows * t->cols + cols] = v;
			cols++;
			if (!comma)
				break;
			field = comma + 1;
		}
		if (cols == 0)
			continue;
		if (t->rows == 0)
			t->cols = cols;
		else if (cols != t->cols) {
			error_set(e, "%s:%zu: %zu fields, earlier rows have %zu", path, line_no, cols, t->cols);
			goto fail;
		}
		t->rows++;
	}
	free(text);
	if (!as_double) { /* every value is a float already */
		t->values = xmalloc((t->rows * t->cols + 1) * sizeof *t->values);
		for (size_t i = 0; i < t->rows * t->cols; i++)
			t->values[i] = (float)t->doubles[i];
		free(t->doubles);
		t->doubles = NULL;
	}
	return true;
fail:
	free(text);
	table_free(t);
	return false;
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
