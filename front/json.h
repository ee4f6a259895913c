/*
 * A small, fast JSON reader for model files.
 *
 * json_parse checks the whole text in one pass, without recursion, and records the
 * values in one flat array (a "tape") in document order: a container is followed by
 * its elements, an object's members are a key (a string value) followed by the
 * member's value. An array of scalars only (a "flat" array, like a tree's
 * split_conditions) keeps just its own entry: its elements are read from the text
 * with a JsonIterator. Numbers and strings are converted only when asked for, so a
 * reader pays for the values it uses and the tape stays small.
 *
 *     {"a": [1, 2], "b": [{}]}  ->  0 object(2)  1 "a"  2 flat array(2)  3 "b"  4 array(1)  5 object(0)
 *
 * Extensions to RFC 8259, as written by Python's json module: the numbers NaN,
 * Infinity and -Infinity. Nesting is limited to JSON_MAX_DEPTH. Errors name the
 * position as "name:line:column: message" (column in bytes, both from 1).
 */
#ifndef GROVE_FRONT_JSON_H
#define GROVE_FRONT_JSON_H

#include "ir/common.h"

#define JSON_MAX_DEPTH 1000

typedef enum JsonType {
	JSON_NULL,
	JSON_FALSE,
	JSON_TRUE,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
} JsonType;

enum {
	JSON_MISSING = 0, /* "no such value": index 0 is the root, which is nobody's element */
};

typedef struct JsonValue {
	uint8_t type;    /* JsonType */
	uint8_t escaped; /* a string whose text holds backslash escapes */
	uint8_t flat;    /* an array of scalars only, whose elements are not on the tape */
	uint8_t unused;
	uint32_t start;  /* offset of its text: a string's first byte after the quote, a container's bracket */
	uint32_t length; /* scalars: bytes of text (strings: between the quotes); containers: elements or members */
	uint32_t end;    /* index of the first value after this one and everything inside it */
} JsonValue;

typedef struct JsonDocument {
	const char *name; /* for messages; not owned */
	const char *text; /* not owned; must outlive the document */
	size_t text_length;
	JsonValue *values; /* values[0] is the root */
	uint32_t num_values;
	size_t values_cap;
} JsonDocument;

/* An element of an array, as an iterator returns it. */
typedef struct JsonItem {
	JsonType type;
	uint8_t escaped;  /* a string whose text holds backslash escapes */
	uint32_t value;   /* its index on the tape, or JSON_MISSING for an element of a flat array */
	const char *text; /* a scalar's text (a string's: between the quotes) */
	uint32_t length;  /* bytes of text */
} JsonItem;

/* Walks the elements of an array, flat or not. */
typedef struct JsonIterator {
	const JsonDocument *doc;
	uint32_t remaining; /* elements not returned yet */
	uint32_t value;     /* the next element's tape index (arrays that are not flat) */
	const char *p;      /* the next element's text (flat arrays) */
	bool flat;
} JsonIterator;

/* Parse text[0..length) into doc (which the caller frees with json_free, also on failure). */
bool json_parse(JsonDocument *doc, const char *name, const char *text, size_t length, Error *e);
/* Free the values of doc. */
void json_free(JsonDocument *doc);

/* The type of value v. */
static inline JsonType json_type(const JsonDocument *doc, uint32_t v) { return (JsonType)doc->values[v].type; }
/* Number of elements of an array, members of an object, bytes of a scalar's text. */
static inline uint32_t json_length(const JsonDocument *doc, uint32_t v) { return doc->values[v].length; }
/* Whether array v is flat: its elements are scalars, read with a JsonIterator only. */
static inline bool json_is_flat(const JsonDocument *doc, uint32_t v) { return doc->values[v].flat; }
/* The first element of array v that is not flat (its first key for an object); only meaningful if it has one. */
static inline uint32_t json_first(uint32_t v) { return v + 1; }
/* The value after element v of the same container (for an object's value: the next key). */
static inline uint32_t json_next(const JsonDocument *doc, uint32_t v) { return doc->values[v].end; }

/* Start walking the elements of array v. */
void json_iterate(const JsonDocument *doc, uint32_t v, JsonIterator *it);
/* Fill *item with the next element; false after the last. */
bool json_iterator_next(JsonIterator *it, JsonItem *item);
/* Read the next element as a float (as json_text_float); false if it is not a number, with *item describing it. */
bool json_iterator_float(JsonIterator *it, JsonItem *item, float *out);
/* Read the next element as an integer; false if it is not one (or does not fit), with *item describing it. */
bool json_iterator_int64(JsonIterator *it, JsonItem *item, int64_t *out);

/* The value of member `key` of object v, or JSON_MISSING (also when v is not an object). */
uint32_t json_member(const JsonDocument *doc, uint32_t v, const char *key);
/* Whether string v, unescaped, equals s. */
bool json_string_equals(const JsonDocument *doc, uint32_t v, const char *s);
/* Copy string v, unescaped (\u escapes become UTF-8), to buf, cut to fit and NUL-terminated; returns its full length. */
size_t json_string_copy(const JsonDocument *doc, uint32_t v, char *buf, size_t size);

/* Convert decimal text[0..length) (JSON number syntax or NaN/Infinity) to the nearest double. */
double json_text_double(const char *text, size_t length);
/* Convert decimal text[0..length) to the nearest float, rounding once. */
float json_text_float(const char *text, size_t length);
/* Whether text[0..length) is exactly one number in JSON syntax (or NaN, Infinity, -Infinity). */
bool json_text_is_number(const char *text, size_t length);
/* Convert integer text[0..length) ("-"? digits); false if it is not one or does not fit. */
bool json_text_int64(const char *text, size_t length, int64_t *out);

/* Item `item` (a number) as the nearest float. */
static inline float json_item_float(const JsonItem *item) { return json_text_float(item->text, item->length); }
/* Item `item` as an integer; false if it is not an integer number or does not fit. */
static inline bool json_item_int64(const JsonItem *item, int64_t *out)
{
	return item->type == JSON_NUMBER && json_text_int64(item->text, item->length, out);
}

/* Number v as the nearest double (strtod semantics). */
double json_number_double(const JsonDocument *doc, uint32_t v);
/* Number v as the nearest float (strtof semantics: rounded once, from the decimal text). */
float json_number_float(const JsonDocument *doc, uint32_t v);
/* Number v as an integer; false if it has a fraction or exponent, or does not fit. */
bool json_number_int64(const JsonDocument *doc, uint32_t v, int64_t *out);

/* Line and column (from 1, column in bytes) of byte `offset` of the text. */
void json_position(const JsonDocument *doc, size_t offset, uint32_t *line, uint32_t *column);
/* "a number", "a string", ... for messages. */
const char *json_type_name(JsonType t);

#endif
