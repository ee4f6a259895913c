/*
 * UBJSON (ubjson.org, draft 12) for model files: the parser that fills a Document
 * (front/doc.h), as XGBoost 2.x/3.x `save_model("m.ubj")` writes them.
 *
 * Values: Z (null), N (no-op, skipped), T, F, the big-endian numbers i (int8), U (uint8),
 * I (int16), l (int32), L (int64), d (float32), D (float64), C (a byte, read as an
 * integer as XGBoost does), H (a number as decimal text), S (string: an integer length,
 * then the bytes), [ ] arrays, { } objects (keys are an integer length and the bytes).
 * A container may give its count (`#` and an integer) and then one type for all its
 * elements (`$` marker before `#`): an array of one fixed-size number type so given (XGBoost's
 * `[$d#L n ...`) is a flat array of the document, its elements read in place.
 *
 * Every length and count is checked against what is left of the file before it is
 * used; errors are "name: offset N: message" (N the byte offset, from 0).
 */
#ifndef GROVE_FRONT_UBJSON_H
#define GROVE_FRONT_UBJSON_H

#include "front/doc.h"

/* Parse bytes[0..length) into doc (which the caller frees with doc_free, also on failure); mapped: see Document. */
bool ubjson_parse(Document *doc, const char *name, const char *bytes, size_t length, bool mapped, Error *e);

/* Bytes of a big-endian number of marker m (i U I l L d D C); 0 for any other marker (DOC_TEXT included). */
size_t ubjson_number_width(unsigned char m);

#endif
