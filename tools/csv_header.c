/*
 * The first line of a CSV: a header or a row. Never guessed silently: a line that could
 * be either is an error that says how to choose (--header yes|no).
 *
 * With --header auto (the default), the first line is
 *   - a row when all its fields are numbers (or empty): unless they are also all of the
 *     model's feature names, which some models name "0", "1", ...: then it is ambiguous;
 *   - a header when none of its fields is a number;
 *   - an error when some are numbers and some not (a header, or a row with a typo?), or
 *     when its one field is numbers split by another separator ("1;2;3");
 *   - but a row when the fields that are not numbers all lie in columns that take the
 *     model's categories by value, one of them at least such a category, unless they
 *     are all the model's feature names.
 * A header is matched to the model's feature names when it has them: every column must
 * name a feature, every feature must have a column, and the rows are reordered to the
 * model's order. A model without names takes the header as a line to skip.
 */
#include "tools/csv.h"

#include <stdlib.h>
#include <string.h>

/* What the first line's fields are. */
typedef struct LineKinds {
	size_t numbers, texts; /* fields that are numbers (empty ones are neither), and the others */
	size_t first_text;     /* the first of the others */
} LineKinds;

static LineKinds line_kinds(const CsvReader *r, size_t n)
{
	LineKinds k = {0, 0, 0};
	for (size_t c = 0; c < n; c++) {
		const CsvField *f = &r->fields[c];
		double v;
		bool empty = true;
		for (const char *p = f->start; p < f->end && empty; p++)
			empty = *p == ' ' || *p == '\t';
		if (empty)
			continue;
		if (csv_field_number(f, false, &v))
			k.numbers++;
		else if (!k.texts++)
			k.first_text = c;
	}
	return k;
}

/* The separator other than ',' (';', tab, '|' or space) that splits field f into two or more numbers, or 0. */
static char other_separator(const CsvField *f)
{
	static const char separators[] = ";\t| ";
	for (const char *sep = separators; *sep; sep++) {
		const char *p = f->start;
		size_t parts = 0;
		bool numbers = memchr(f->start, *sep, (size_t)(f->end - f->start)) != NULL;
		while (numbers && p <= f->end) {
			const char *q = memchr(p, *sep, (size_t)(f->end - p));
			CsvField part = {(char *)p, (char *)(q ? q : f->end), false};
			double v;
			if (part.end > part.start) { /* runs of spaces */
				numbers = csv_field_number(&part, false, &v);
				parts++;
			}
			p = q ? q + 1 : f->end + 1;
		}
		if (numbers && parts >= 2)
			return *sep;
	}
	return 0;
}

/* Text indexes by their text (texts: the strings), for csv_sort_texts. */
static int by_text(const void *a, const void *b, void *texts)
{
	const char *const *t = texts;
	return strcmp(t[*(const size_t *)a], t[*(const size_t *)b]);
}

size_t *csv_sort_texts(const char *const *texts, size_t n)
{
	size_t *sorted = xmalloc((n ? n : 1) * sizeof *sorted);
	for (size_t i = 0; i < n; i++)
		sorted[i] = i;
	qsort_r(sorted, n, sizeof *sorted, by_text, (void *)texts);
	return sorted;
}

size_t csv_find_text(const char *const *texts, const size_t *sorted, size_t n, const CsvField *f)
{
	size_t lo = 0, hi = n, len = (size_t)(f->end - f->start);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *text = texts[sorted[mid]];
		size_t text_len = strlen(text);
		int c = memcmp(f->start, text, len < text_len ? len : text_len);
		if (c == 0)
			c = len < text_len ? -1 : len > text_len;
		if (c == 0)
			return sorted[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return n;
}

/* Match the header's n columns to the model's names: r->order and r->cols, or false with e filled. */
static bool match_names(CsvReader *r, size_t n, Error *e)
{
	size_t *sorted = csv_sort_texts(r->names, r->num_names), *column = xmalloc(r->num_names * sizeof *column);
	bool ok = true;
	for (size_t i = 0; i < r->num_names; i++)
		column[i] = SIZE_MAX;
	r->order = xmalloc((n ? n : 1) * sizeof *r->order);
	for (size_t c = 0; ok && c < n; c++) {
		const CsvField *f = &r->fields[c];
		size_t i = csv_find_text(r->names, sorted, r->num_names, f);
		int shown = (int)(f->end - f->start > 60 ? 60 : f->end - f->start);
		if (i == r->num_names)
			ok = error_set(e, "%s:%zu: column %zu, '%.*s', is none of the model's %zu features (named '%s', ...): "
			               "columns are matched to them by name (--header no reads the line as a row)",
			               r->name, r->line_no, c + 1, shown, f->start, r->num_names, r->names[0]);
		else if (column[i] != SIZE_MAX)
			ok = error_set(e, "%s:%zu: column %zu, '%.*s', names the feature column %zu named already", r->name,
			               r->line_no, c + 1, shown, f->start, column[i] + 1);
		else
			column[i] = r->order[c] = i;
	}
	for (size_t i = 0; ok && i < r->num_names; i++)
		if (column[i] == SIZE_MAX)
			ok = error_set(e, "%s:%zu: no column names the model's feature %zu, '%s' (the header has %zu columns, the "
			               "model %zu features)", r->name, r->line_no, i + 1, r->names[i], n, r->num_names);
	for (size_t c = 0; ok && c < n; c++) /* order is a permutation: the column of each feature */
		column[r->order[c]] = c;
	free(sorted);
	free(column);
	r->cols = n;
	return ok;
}

/* Whether the n fields are exactly the model's names, in any order. */
static bool all_names(CsvReader *r, size_t n)
{
	Error ignored;
	bool match = n == r->num_names && match_names(r, n, &ignored);
	free(r->order);
	r->order = NULL;
	r->cols = 0;
	return match;
}

/*
 * Whether the n fields' texts all lie in columns that take values by name (csv_set_categories), read in order, and
 * one text at least is such a value (a header's names are none, whatever columns they head).
 */
static bool texts_are_values(const CsvReader *r, size_t n)
{
	bool value = false;
	for (size_t c = 0; c < n; c++) {
		const CsvField *f = &r->fields[c];
		double v;
		if (f->end == f->start || csv_field_number(f, false, &v))
			continue;
		if (!csv_column_has_values(r, c))
			return false;
		value = value || csv_field_is_value(r, c, f);
	}
	return value;
}

int csv_first_line(CsvReader *r, size_t n, Error *e)
{
	LineKinds k;
	char sep;
	if (r->header == CSV_HEADER_NO)
		return 0;
	if (r->header == CSV_HEADER_YES)
		return r->names ? (match_names(r, n, e) ? 1 : -1) : 1;
	k = line_kinds(r, n);
	if (k.texts && r->num_columns && !(r->names && all_names(r, n)) && texts_are_values(r, n))
		return 0; /* a row whose categories are text */
	if (k.texts == 0) {
		if (k.numbers && r->names && all_names(r, n))
			return error_set(e, "%s:%zu: the first line is numbers that are also the model's feature names: say "
			                 "whether it is a header (--header yes) or a row (--header no)", r->name, r->line_no), -1;
		return 0;
	}
	if (n == 1 && (sep = other_separator(&r->fields[0])))
		return error_set(e, "%s:%zu: '%.*s' looks like numbers separated by '%s'; grove reads comma-separated "
		                 "values", r->name, r->line_no, (int)(r->fields[0].end - r->fields[0].start > 40 ? 40 :
		                 r->fields[0].end - r->fields[0].start), r->fields[0].start, sep == '\t' ? "\\t" : sep == ' ' ?
		                 "a space" : (char[]){sep, 0}), -1;
	if (k.numbers)
		return error_set(e, "%s:%zu: a header or a row? field %zu is a number and field %zu, '%.*s', is not: say "
		                 "which with --header yes or --header no", r->name, r->line_no,
		                 k.first_text == 0 ? (size_t)2 : (size_t)1, k.first_text + 1,
		                 (int)(r->fields[k.first_text].end - r->fields[k.first_text].start > 40 ? 40 :
		                       r->fields[k.first_text].end - r->fields[k.first_text].start),
		                 r->fields[k.first_text].start), -1;
	return r->names ? (match_names(r, n, e) ? 1 : -1) : 1;
}
