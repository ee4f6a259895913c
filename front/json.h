/*
 * JSON for model files: the parser that fills a Document (front/doc.h) from JSON text,
 * and the conversions of JSON's text (numbers, escaped strings) the document uses.
 *
 * Extensions to RFC 8259, as written by Python's json module: the numbers NaN,
 * Infinity and -Infinity. Nesting is limited to DOC_MAX_DEPTH. Errors name the
 * position as "name:line:column: message" (column in bytes, both from 1).
 */
#ifndef GROVE_FRONT_JSON_H
#define GROVE_FRONT_JSON_H

#include "front/doc.h"

/* Parse text[0..length) into doc (which the caller frees with doc_free, also on failure); mapped: see Document. */
bool json_parse(Document *doc, const char *name, const char *text, size_t length, bool mapped, Error *e);

/* Convert decimal text[0..length) (JSON number syntax or NaN/Infinity) to the nearest double. */
double json_text_double(const char *text, size_t length);
/* Convert decimal text[0..length) to the nearest float, rounding once. */
float json_text_float(const char *text, size_t length);
/* Whether text[0..length) is exactly one number in JSON syntax (or NaN, Infinity, -Infinity). */
bool json_text_is_number(const char *text, size_t length);
/* Convert integer text[0..length) ("-"? digits); false if it is not one or does not fit. */
bool json_text_int64(const char *text, size_t length, int64_t *out);
/* Unescape a JSON string's text raw[0..n) (checked by the parser) into out (room for n bytes); returns the length. */
size_t json_unescape(const char *raw, size_t n, char *out);

/* Line and column (from 1, column in bytes) of byte `offset` of the text. */
void json_position(const Document *doc, size_t offset, uint32_t *line, uint32_t *column);

/* For doc.c: the elements of a flat JSON array, read from the text. */
/* Point it at the first element of flat array `value`. */
void json_flat_begin(DocIterator *it, const DocValue *value);
/* The next element (it->remaining > 0). */
void json_flat_next(DocIterator *it, DocItem *item);
/* (json_flat_float and json_flat_int64, declared in doc.h: doc_next_float and doc_next_int64 on flat arrays.) */

#endif
