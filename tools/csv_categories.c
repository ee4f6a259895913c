/*
 * Fields of categorical columns whose values the model names (csv_set_categories): a
 * field is its value's index in the column's list, found by text ("x", "10") or, for a
 * field that is a number, by number ("10.0" is 10). An empty field, "nan" or "NaN" not in
 * the list is missing. A value in no list is missing or refused, as the model's library
 * does; a number in a column whose values are all text is refused, as the code it likely
 * is (a category's code depends on the order its frame happened to list them in).
 */
#include "tools/csv.h"

#include <math.h>
#include <stdlib.h>

/* Value indexes by the numbers the values are (numbers[0..count)), for find_number's binary search. */
static int by_number(const void *a, const void *b, void *numbers)
{
	const double *x = numbers;
	double p = x[*(const size_t *)a], q = x[*(const size_t *)b];
	return (p > q) - (p < q);
}

void csv_set_categories(CsvReader *r, const char *const *const *values, const size_t *counts, size_t n, bool unseen_missing)
{
	r->columns = xcalloc(n ? n : 1, sizeof *r->columns);
	r->num_columns = n;
	r->unseen_missing = unseen_missing;
	for (size_t j = 0; j < n; j++) {
		CsvColumnValues *c = &r->columns[j];
		double *numbers;
		if (!values[j] || !counts[j])
			continue;
		c->values = values[j];
		c->count = counts[j];
		c->by_text = csv_sort_texts(c->values, c->count);
		c->by_number = xmalloc(c->count * sizeof *c->by_number);
		c->numbers = xmalloc(c->count * sizeof *c->numbers);
		numbers = xmalloc(c->count * sizeof *numbers);
		for (size_t k = 0; k < c->count; k++) {
			char *stop;
			numbers[k] = strtod(c->values[k], &stop);
			if (stop != c->values[k] && !*stop && !isnan(numbers[k]))
				c->by_number[c->num_numbers++] = k;
		}
		qsort_r(c->by_number, c->num_numbers, sizeof *c->by_number, by_number, numbers);
		for (size_t k = 0; k < c->num_numbers; k++)
			c->numbers[k] = numbers[c->by_number[k]];
		free(numbers);
	}
}

void csv_set_category_values(CsvReader *r, const CategoryValues *c, size_t n)
{
	const char *const **values;
	size_t *counts;
	if (!c->counts)
		return;
	values = xcalloc(n + 1, sizeof *values);
	counts = xcalloc(n + 1, sizeof *counts);
	for (size_t j = 0, at = 0; j < n; at += c->counts[j++]) {
		counts[j] = c->counts[j];
		values[j] = (const char *const *)c->values + at;
	}
	csv_set_categories(r, values, counts, n, c->unseen_missing);
	free(values);
	free(counts);
}

void csv_free_categories(CsvReader *r)
{
	for (size_t j = 0; j < r->num_columns; j++) {
		free(r->columns[j].by_text);
		free(r->columns[j].by_number);
		free(r->columns[j].numbers);
	}
	free(r->columns);
	r->columns = NULL;
	r->num_columns = 0;
}

bool csv_column_has_values(const CsvReader *r, size_t feature)
{
	return feature < r->num_columns && r->columns[feature].count;
}

/* The index of the value that is number x among c's, or c->count. */
static size_t find_number(const CsvColumnValues *c, double x)
{
	size_t lo = 0, hi = c->num_numbers;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->numbers[mid] == x)
			return c->by_number[mid];
		if (c->numbers[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return c->count;
}

/* The index of field f among c's values (by text, or by number where it is one), or c->count; *x: its number, or NaN. */
static size_t find_value(const CsvColumnValues *c, const CsvField *f, double *x)
{
	size_t k = csv_find_text(c->values, c->by_text, c->count, f);
	if (k == c->count && csv_field_number(f, true, x))
		return isnan(*x) ? c->count : find_number(c, *x);
	*x = NAN;
	return k;
}

bool csv_field_is_value(const CsvReader *r, size_t feature, const CsvField *f)
{
	double x;
	return csv_column_has_values(r, feature) && find_value(&r->columns[feature], f, &x) < r->columns[feature].count;
}

bool csv_category(const CsvReader *r, size_t feature, const CsvField *f, size_t field, double *v, Error *e)
{
	const CsvColumnValues *c = &r->columns[feature];
	size_t shown = f->end - f->start > 40 ? 40 : (size_t)(f->end - f->start);
	double x;
	size_t k = find_value(c, f, &x);
	bool number;
	if (k < c->count) {
		*v = (double)k;
		return true;
	}
	number = csv_field_number(f, true, &x);
	if (number && isnan(x)) { /* empty, "nan" */
		*v = NAN;
		return true;
	}
	if (number && !c->num_numbers)
		return error_set(e, "%s:%zu: field %zu: '%.*s' is a number, but this column takes the model's %zu categories "
		                 "by value ('%s', ...): give the category, not its code", r->name, r->line_no, field, (int)shown,
		                 f->start, c->count, c->values[0]);
	if (!r->unseen_missing)
		return error_set(e, "%s:%zu: field %zu: '%.*s' is none of the %zu categories the model knows for this column "
		                 "('%s', ...), and its library (XGBoost) predicts no row with such a category", r->name,
		                 r->line_no, field, (int)shown, f->start, c->count, c->values[0]);
	*v = NAN; /* LightGBM's rule: a category it never saw is missing */
	return true;
}
