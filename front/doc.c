/* Documents of values: walking the tape and converting scalars, whichever encoding they are in. */
#include "front/doc.h"
#include "front/json.h"
#include "front/ubjson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const char *doc_type_name(DocType t)
{
	static const char *const names[] = {"null", "false", "true", "a number", "a string", "an array", "an object"};
	return t < COUNT_OF(names) ? names[t] : "?";
}

void doc_free(Document *doc)
{
	free(doc->values);
	doc->values = NULL;
	doc->num_values = 0;
	doc->values_cap = 0;
}

void doc_release(Document *doc, uint64_t offset)
{
	uintptr_t page, from, to;
	if (!doc->mapped || offset > doc->size || offset - doc->released < DOC_RELEASE_STEP || offset < doc->released)
		return;
	page = (uintptr_t)sysconf(_SC_PAGESIZE);
	from = ((uintptr_t)doc->bytes + doc->released + page - 1) & ~(page - 1);
	to = ((uintptr_t)doc->bytes + offset) & ~(page - 1);
	if (to <= from)
		return;
	/* Clean pages of a private file mapping: dropping them loses nothing, a later read maps the file's again. */
	madvise((void *)from, to - from, MADV_DONTNEED);
	doc->released = to - (uintptr_t)doc->bytes;
}

bool doc_reserve(Document *doc)
{
	if (doc->num_values >= DOC_MAX_VALUES)
		return false;
	GROW(doc->values, (size_t)doc->num_values + 1, doc->values_cap);
	return true;
}

/* Big-endian unsigned integer of n bytes at p. */
static inline uint64_t big_endian(const char *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | (unsigned char)p[i];
	return v;
}

/* A UBJSON binary number (marker m, payload at p) as a double; *integer says whether it is an integer type. */
static double binary_number(const char *p, uint8_t m, int64_t *integer, bool *is_integer)
{
	uint64_t bits;
	*is_integer = true;
	switch (m) {
	case 'i': *integer = (int8_t)big_endian(p, 1); break;
	case 'U': case 'C': *integer = (uint8_t)big_endian(p, 1); break;
	case 'I': *integer = (int16_t)big_endian(p, 2); break;
	case 'l': *integer = (int32_t)big_endian(p, 4); break;
	case 'L': *integer = (int64_t)big_endian(p, 8); break;
	case 'd': {
		uint32_t b = (uint32_t)big_endian(p, 4);
		float f;
		memcpy(&f, &b, sizeof f);
		*is_integer = false;
		return f;
	}
	case 'D': {
		double d;
		bits = big_endian(p, 8);
		memcpy(&d, &bits, sizeof d);
		*is_integer = false;
		return d;
	}
	default:
		die("unknown binary number marker %d", m);
	}
	return (double)*integer;
}

float doc_item_float(const DocItem *item)
{
	int64_t n;
	bool is_integer;
	double d;
	if (item->encoding == DOC_TEXT)
		return json_text_float(item->bytes, item->length);
	d = binary_number(item->bytes, item->encoding, &n, &is_integer);
	return is_integer ? (float)n : (float)d; /* a float32 'd' is exact */
}

double doc_item_double(const DocItem *item)
{
	int64_t n;
	bool is_integer;
	if (item->encoding == DOC_TEXT)
		return json_text_double(item->bytes, item->length);
	return binary_number(item->bytes, item->encoding, &n, &is_integer);
}

bool doc_item_int64(const DocItem *item, int64_t *out)
{
	bool is_integer;
	if (item->type != DOC_NUMBER)
		return false;
	if (item->encoding == DOC_TEXT)
		return json_text_int64(item->bytes, item->length, out);
	binary_number(item->bytes, item->encoding, out, &is_integer);
	return is_integer;
}

void doc_item_describe(const DocItem *item, char *buf, size_t size)
{
	int64_t n;
	bool is_integer;
	double d;
	if (item->type == DOC_STRING && item->encoding == DOC_TEXT)
		snprintf(buf, size, "\"%.*s\" (a string)", (int)(item->length < 40 ? item->length : 40), item->bytes);
	else if (item->type != DOC_NUMBER)
		snprintf(buf, size, "%s", doc_type_name(item->type));
	else if (item->encoding == DOC_TEXT)
		snprintf(buf, size, "%.*s", (int)(item->length < 40 ? item->length : 40), item->bytes);
	else if ((d = binary_number(item->bytes, item->encoding, &n, &is_integer)), is_integer)
		snprintf(buf, size, "%lld", (long long)n);
	else
		snprintf(buf, size, "%.17g", d);
}

DocItem doc_item(const Document *doc, uint32_t v)
{
	const DocValue *value = &doc->values[v];
	return (DocItem){.type = (DocType)value->type, .encoding = value->encoding, .value = v,
	                 .bytes = doc->bytes + value->start, .length = value->length};
}

char *doc_item_string(const DocItem *item)
{
	char *text = xmalloc(item->length + 1);
	size_t n = item->length;
	if (item->encoding == DOC_TEXT_ESCAPED)
		n = json_unescape(item->bytes, n, text); /* unescaped text is never longer */
	else
		memcpy(text, item->bytes, n);
	text[n] = 0;
	if (memchr(text, 0, n)) {
		free(text);
		return NULL;
	}
	return text;
}

float doc_number_float(const Document *doc, uint32_t v)
{
	DocItem item = doc_item(doc, v);
	return doc_item_float(&item);
}

double doc_number_double(const Document *doc, uint32_t v)
{
	DocItem item = doc_item(doc, v);
	return doc_item_double(&item);
}

bool doc_number_int64(const Document *doc, uint32_t v, int64_t *out)
{
	DocItem item = doc_item(doc, v);
	return doc_item_int64(&item, out);
}

size_t doc_string_copy(const Document *doc, uint32_t v, char *buf, size_t size)
{
	const DocValue *value = &doc->values[v];
	const char *raw = doc->bytes + value->start;
	size_t n = value->length;
	char *tmp = NULL;
	if (value->encoding == DOC_TEXT_ESCAPED) {
		/* Unescaped text is never longer than the escaped text. */
		tmp = xmalloc(n + 1);
		n = json_unescape(raw, n, tmp);
		raw = tmp;
	}
	if (size) {
		size_t m = n < size - 1 ? n : size - 1;
		memcpy(buf, raw, m);
		buf[m] = '\0';
	}
	free(tmp);
	return n;
}

bool doc_string_equals(const Document *doc, uint32_t v, const char *s)
{
	const DocValue *value = &doc->values[v];
	const char *raw = doc->bytes + value->start;
	size_t n = strlen(s);
	bool equal;
	char *tmp;
	if (value->type != DOC_STRING)
		return false;
	if (value->encoding != DOC_TEXT_ESCAPED)
		return value->length == n && memcmp(raw, s, n) == 0;
	tmp = xmalloc((size_t)value->length + 1);
	equal = json_unescape(raw, value->length, tmp) == n && memcmp(tmp, s, n) == 0;
	free(tmp);
	return equal;
}

uint32_t doc_member(const Document *doc, uint32_t v, const char *key)
{
	uint32_t k;
	uint64_t n;
	if (doc->values[v].type != DOC_OBJECT)
		return DOC_MISSING;
	n = doc->values[v].length;
	k = v + 1;
	for (uint64_t i = 0; i < n; i++) {
		if (doc_string_equals(doc, k, key))
			return k + 1;
		k = doc->values[k + 1].end;
	}
	return DOC_MISSING;
}

void doc_iterate(const Document *doc, uint32_t v, DocIterator *it)
{
	const DocValue *value = &doc->values[v];
	memset(it, 0, sizeof *it);
	it->doc = doc;
	it->end = doc->bytes + doc->size;
	if (value->type != DOC_ARRAY)
		return;
	it->remaining = value->length;
	it->flat = value->flat;
	it->encoding = value->encoding;
	it->value = v + 1;
	if (!it->flat)
		return;
	it->width = (uint8_t)ubjson_number_width(value->encoding);
	if (value->encoding == DOC_TEXT)
		json_flat_begin(it, value);
	else
		it->p = doc->bytes + value->start;
}

bool doc_next(DocIterator *it, DocItem *item)
{
	if (it->remaining == 0) {
		*item = (DocItem){.type = DOC_NULL};
		return false;
	}
	if (!it->flat) {
		const DocValue *value = &it->doc->values[it->value];
		*item = doc_item(it->doc, it->value);
		it->value = value->end;
		it->remaining--;
		return true;
	}
	if (it->encoding == DOC_TEXT) {
		json_flat_next(it, item);
		return true;
	}
	*item = (DocItem){.type = DOC_NUMBER, .encoding = it->encoding, .value = DOC_MISSING, .bytes = it->p, .length = it->width};
	it->p += it->width;
	it->remaining--;
	return true;
}

bool doc_next_float_other(DocIterator *it, DocItem *item, float *out)
{
	if (!doc_next(it, item) || item->type != DOC_NUMBER)
		return false;
	*out = doc_item_float(item);
	return true;
}

bool doc_next_int64_other(DocIterator *it, DocItem *item, int64_t *out)
{
	return doc_next(it, item) && doc_item_int64(item, out);
}
