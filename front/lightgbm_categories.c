/*
 * LightGBM's pandas_categorical: a line after a model's trees, written when it was
 * trained on a pandas DataFrame, holding the categories of each of the frame's
 * categorical columns as a JSON list, in the columns' order:
 *
 *     pandas_categorical:[["x", "y", "z"], [10, 20, 30]]
 *
 * LightGBM's predict gives each value of such a column its index in the list (a value in
 * none is missing). The lists name no column, so they are placed on the model's
 * categorical features (feature_infos: a feature's categories seen in training, "-1:2:0:1",
 * where a number column has its range, "[0:4]"), the k-th list on the k-th, where there
 * are as many and every category a feature saw is an index into its list. Else (a model
 * given its categorical features by hand, whose frame's categorical columns it may take
 * as numbers) the lists are not placed, and the columns take numbers only.
 */
#include "front/front.h"
#include "front/json.h"

#include <stdlib.h>
#include <string.h>

/* The text after the first line of text[0..len) that starts with key, up to its line's end (*n bytes), or NULL. */
static const char *line_after(const char *text, size_t len, const char *key, size_t *n)
{
	size_t k = strlen(key);
	for (const char *p = text, *end = text + len; p && (size_t)(end - p) >= k;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (memcmp(p, key, k) == 0) {
			*n = (size_t)((eol ? eol : end) - p) - k;
			return p + k;
		}
		p = eol ? eol + 1 : NULL;
	}
	return NULL;
}

/*
 * The categorical features of feature_infos (infos[0..n)) in order into features (room for
 * num_features); their count, or -1 where one saw a category that is not an index below
 * counts[k], its list's length.
 */
static int64_t categorical_features(const char *infos, size_t n, uint32_t num_features, const uint64_t *counts,
                                    uint64_t lists, uint32_t *features)
{
	const char *p = infos, *end = infos + n;
	int64_t found = 0;
	for (uint32_t j = 0; j < num_features && p < end; j++) {
		const char *token = p;
		while (p < end && *p != ' ')
			p++;
		if (*token != '[' && !(p - token == 4 && memcmp(token, "none", 4) == 0)) {
			for (const char *q = token; q < p; q++) { /* each category seen: -1 (NaN) or an index into the list */
				char *stop;
				long long c = strtoll(q, &stop, 10);
				if ((uint64_t)found >= lists || stop == q || c < -1 || (c >= 0 && (uint64_t)c >= counts[found]))
					return -1;
				q = stop;
			}
			features[found++] = j;
		}
		while (p < end && *p == ' ')
			p++;
	}
	return found;
}

bool front_lightgbm_categories(HForest *f, const char *name, const char *text, size_t tail, size_t len, Error *e)
{
	size_t n, infos_n;
	const char *line = line_after(text + tail, len - tail, "pandas_categorical:", &n), *infos;
	uint64_t lists, *counts = NULL, total = 0;
	uint32_t *features = NULL;
	Document doc = {0};
	DocIterator it, inner;
	DocItem list, item;
	bool ok = true, placed = false;
	char **values = NULL;
	if (!line || (n == 4 && memcmp(line, "null", 4) == 0) || !(infos = line_after(text, tail, "feature_infos=", &infos_n)))
		return true;
	if (!json_parse(&doc, "pandas_categorical", line, n, false, e)) { /* "pandas_categorical:1:7: ..." */
		error_prefix(e, name);
		ok = false;
		goto done;
	}
	if (doc_type(&doc, 0) != DOC_ARRAY) {
		ok = error_set(e, "%s: pandas_categorical: expected a list of lists", name);
		goto done;
	}
	lists = doc_length(&doc, 0);
	counts = xcalloc(lists + 1, sizeof *counts);
	doc_iterate(&doc, 0, &it);
	for (uint64_t k = 0; doc_next(&it, &list); k++) {
		if (list.type != DOC_ARRAY) {
			ok = error_set(e, "%s: pandas_categorical[%llu]: expected a list", name, (unsigned long long)k);
			goto done;
		}
		counts[k] = doc_length(&doc, list.value);
		total += counts[k];
	}
	features = xmalloc(((size_t)f->num_features + 1) * sizeof *features);
	if (!lists || total > UINT32_MAX || categorical_features(infos, infos_n, f->num_features, counts, lists, features) != (int64_t)lists)
		goto done; /* the lists cannot be placed */
	values = xcalloc(total + 1, sizeof *values);
	total = 0;
	doc_iterate(&doc, 0, &it);
	while (doc_next(&it, &list)) {
		doc_iterate(&doc, list.value, &inner);
		while (doc_next(&inner, &item)) {
			if (item.type == DOC_NUMBER)
				values[total++] = front_number_text(doc_item_double(&item));
			else if (item.type != DOC_STRING || !(values[total++] = doc_item_string(&item)))
				goto done; /* categories that are neither text nor numbers: the columns take numbers */
		}
	}
	f->category_values.counts = xcalloc(f->num_features, sizeof *f->category_values.counts);
	for (uint64_t k = 0; k < lists; k++)
		f->category_values.counts[features[k]] = (uint32_t)counts[k];
	f->category_values.values = values;
	f->category_values.unseen_missing = true;
	placed = true;
done:
	if (!placed)
		strings_free(values, (uint32_t)total);
	free(counts);
	free(features);
	doc_free(&doc);
	return ok;
}
