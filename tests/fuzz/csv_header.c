/*
 * libFuzzer harness: grove predict's CSV header and name matching, and categories by
 * value. The input is the model's feature names, one a line, then a NUL byte, then the
 * CSV; its first byte chooses --header (auto, yes, no), whether the odd features take
 * the names as category values (4) and whether a value in no list is missing (8). The
 * reader may refuse the input with a message naming it, never crash; rows it returns
 * have the model's width once a header was matched, a matched header's order is a
 * permutation of the features, and a category column's values are NaN or an index into
 * its list.
 */
#include "tools/csv.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The names before the NUL (at most 64, one a line, malloc'ed in *buffer); their number. */
static size_t split_names(const char *text, size_t size, char **buffer, const char **names)
{
	size_t n = 0;
	char *p;
	*buffer = memcpy(malloc(size + 1), text, size);
	(*buffer)[size] = 0;
	for (p = *buffer; n < 64 && p;) {
		char *line_end = strchr(p, '\n');
		if (line_end)
			*line_end = 0;
		names[n++] = p;
		p = line_end ? line_end + 1 : NULL;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *names[64], *nul;
	char *buffer;
	size_t num_names, csv_size;
	FILE *in;
	CsvReader r;
	Table t = {0};
	Error e = {0};
	if (size < 2 || !(nul = memchr(data + 1, 0, size - 1)))
		return 0;
	num_names = split_names((const char *)data + 1, (size_t)(nul - (const char *)data - 1), &buffer, names);
	csv_size = size - (size_t)(nul + 1 - (const char *)data);
	if (!csv_size || !(in = fmemopen((void *)(nul + 1), csv_size, "rb"))) {
		free(buffer);
		return 0;
	}
	csv_attach(&r, in, "fuzz.csv", false);
	r.header = (CsvHeader)(data[0] % 3);
	csv_set_names(&r, names, num_names);
	if (data[0] & 4) {
		const char *const *values[64];
		size_t counts[64];
		for (size_t j = 0; j < num_names; j++) {
			values[j] = j % 2 ? names : NULL;
			counts[j] = j % 2 ? num_names : 0;
		}
		csv_set_categories(&r, values, counts, num_names, data[0] & 8);
	}
	while (csv_next(&r, 3, &t, &e) && t.rows) {
		for (size_t i = 0; i < t.rows * t.cols; i++) {
			size_t feature = i % t.cols;
			float v = t.values[i];
			if (csv_column_has_values(&r, feature) && !(v != v) && (v < 0 || v >= (float)num_names || v != (float)(size_t)v))
				abort(); /* a category is an index into its list */
		}
		if (r.order) {
			bool *seen = calloc(num_names, sizeof *seen);
			if (t.cols != num_names)
				abort(); /* a matched header gives the model's width */
			for (size_t c = 0; c < t.cols; c++) {
				if (r.order[c] >= num_names || seen[r.order[c]])
					abort(); /* the order is a permutation */
				seen[r.order[c]] = true;
			}
			free(seen);
		}
	}
	if (e.message[0] && strncmp(e.message, "fuzz.csv", 8))
		abort(); /* messages name the input */
	table_free(&t);
	csv_close(&r);
	fclose(in);
	free(buffer);
	return 0;
}
