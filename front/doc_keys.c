/*
 * Objects whose keys repeat: refused, as ambiguous. JSON leaves a repeated key's meaning
 * open; grove's readers take the first copy (doc_member), XGBoost's the last, so the two
 * would predict differently from one file.
 */
#include "front/doc.h"
#include "front/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A member's key, unescaped, and the key's index on the tape. */
typedef struct Key {
	const char *text;
	size_t length;
	uint32_t value;
	bool owned; /* text is an unescaped copy */
} Key;

/* By text, then by place in the document. */
static int by_text(const void *pa, const void *pb)
{
	const Key *a = pa, *b = pb;
	int c;
	if (a->length != b->length)
		return a->length < b->length ? -1 : 1;
	if ((c = memcmp(a->text, b->text, a->length)) != 0)
		return c;
	return a->value < b->value ? -1 : a->value > b->value;
}

/* The key at tape index k (a string). */
static Key key_at(const Document *doc, uint32_t k)
{
	const DocValue *value = &doc->values[k];
	Key key = {doc->bytes + value->start, value->length, k, false};
	if (value->encoding == DOC_TEXT_ESCAPED) {
		char *text = xmalloc((size_t)value->length + 1);
		key.length = json_unescape(key.text, value->length, text); /* never longer */
		key.text = text;
		key.owned = true;
	}
	return key;
}

/* Append to buf (of size bytes, used so far *used) what fmt says, cut to fit. */
static void append(char *buf, size_t size, size_t *used, const char *fmt, const char *text, size_t length)
{
	int n = snprintf(buf + *used, size - *used, fmt, (int)(length > 60 ? 60 : length), text);
	*used += n < 0 ? 0 : (size_t)n < size - *used ? (size_t)n : size - *used - 1;
}

/* The path of value target from the root, as "learner.gradient_booster.model.trees[3]" ("" for the root). */
static void value_path(const Document *doc, uint32_t target, char *buf, size_t size)
{
	uint32_t v = 0;
	size_t used = 0;
	buf[0] = 0;
	while (v != target) {
		const DocValue *value = &doc->values[v];
		uint32_t child = v + 1, next = v;
		for (uint64_t i = 0; i < value->length && next == v; i++) {
			uint32_t element = value->type == DOC_OBJECT ? child + 1 : child;
			if (target >= element && target < doc->values[element].end) {
				char index[32];
				Key key;
				if (value->type == DOC_OBJECT) {
					key = key_at(doc, child);
					append(buf, size, &used, used ? ".%.*s" : "%.*s", key.text, key.length);
					if (key.owned)
						free((char *)key.text);
				} else {
					snprintf(index, sizeof index, "[%llu]", (unsigned long long)i);
					append(buf, size, &used, "%.*s", index, strlen(index));
				}
				next = element;
			}
			child = doc->values[element].end;
		}
		if (next == v) /* not inside v: a tape that is not one (a bug), or the flat array's elements */
			return;
		v = next;
	}
}

/* Where the key at tape index k is, for messages: "12:5" (JSON's line and column) or "offset 1234" (UBJSON's). */
static void key_place(const Document *doc, uint32_t k, bool json, char *buf, size_t size)
{
	uint64_t start = doc->values[k].start;
	if (json) {
		uint32_t line, column;
		json_position(doc, (size_t)start - 1, &line, &column); /* the opening quote */
		snprintf(buf, size, "%u:%u", line, column);
	} else
		snprintf(buf, size, "offset %llu", (unsigned long long)start);
}

/* Fill e for key b, a repeat of key a, of object v; returns false. */
static bool duplicate(const Document *doc, uint32_t v, const Key *a, const Key *b, bool json, Error *e)
{
	char path[256], first[64], second[64], shown[64];
	size_t n = b->length < sizeof shown - 1 ? b->length : sizeof shown - 1;
	for (size_t i = 0; i < n; i++)
		shown[i] = (unsigned char)b->text[i] < 0x20 ? '?' : b->text[i];
	shown[n] = 0;
	value_path(doc, v, path, sizeof path);
	key_place(doc, a->value, json, first, sizeof first);
	key_place(doc, b->value, json, second, sizeof second);
	return error_set(e, "%s:%s%s: duplicate key \"%s%s\" in %s%s (first at %s): a repeated key has two readings (XGBoost "
	                 "takes the last copy), so grove refuses it; keep one",
	                 doc->name, json ? "" : " ", second, shown, n < b->length ? "..." : "", path[0] ? "" : "the top-level object",
	                 path, first);
}

bool doc_check_keys(const Document *doc, bool json, Error *e)
{
	Key *keys = NULL;
	size_t cap = 0;
	bool ok = true;
	for (uint32_t v = 0; ok && v < doc->num_values; v++) {
		const DocValue *value = &doc->values[v];
		uint32_t k = v + 1;
		size_t n = 0;
		if (value->type != DOC_OBJECT || value->length < 2)
			continue;
		GROW(keys, value->length, cap);
		for (uint64_t i = 0; i < value->length; i++, n++) {
			keys[n] = key_at(doc, k);
			k = doc->values[k + 1].end;
		}
		qsort(keys, n, sizeof *keys, by_text);
		for (size_t i = 1; ok && i < n; i++)
			if (keys[i].length == keys[i - 1].length && !memcmp(keys[i].text, keys[i - 1].text, keys[i].length))
				ok = duplicate(doc, v, &keys[i - 1], &keys[i], json, e);
		for (size_t i = 0; i < n; i++)
			if (keys[i].owned)
				free((char *)keys[i].text);
	}
	free(keys);
	return ok;
}
