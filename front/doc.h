/*
 * A document of values, as a JSON or a UBJSON file holds them: the one interface the
 * model readers use, whichever of the two encodings the file is in.
 *
 * A parser (json_parse in front/json.c, ubjson_parse in front/ubjson.c) checks the whole
 * file in one pass, without recursion, and records its values in one flat array (a
 * "tape") in document order: a container is followed by its elements, an object's
 * members are a key (a string value) followed by the member's value. An array whose
 * elements are all scalars of a fixed layout (a "flat" array: JSON's arrays of scalars,
 * UBJSON's typed arrays `[$d#L n ...`) keeps just its own entry: its elements are read
 * from the file with a DocIterator. Scalars are converted only when asked for, so a
 * reader pays for the values it uses and the tape stays small.
 *
 *     {"a": [1, 2], "b": [{}]}  ->  0 object(2)  1 "a"  2 flat array(2)  3 "b"  4 array(1)  5 object(0)
 *
 * Each scalar records how its bytes are written (its encoding): as text (JSON numbers
 * and strings, UBJSON strings and high-precision numbers) or as a big-endian binary
 * number (UBJSON's markers i U I l L d D C). Offsets are 64-bit: files past 4 GiB are
 * read. The tape holds at most DOC_MAX_VALUES entries, a string at most DOC_MAX_LENGTH
 * bytes, a container as many elements (more is a clear error); nesting is limited to
 * DOC_MAX_DEPTH.
 *
 * A document over a file mapped into memory (`mapped`) lets go of the file's pages
 * behind the parser and the reader (doc_release): the kernel drops them from the
 * process and maps them again from the page cache should they be read once more, so a
 * large model's text is not all in memory at once (a 175 MB model: 170 MB less).
 */
#ifndef GROVE_FRONT_DOC_H
#define GROVE_FRONT_DOC_H

#include "ir/common.h"

#define DOC_MAX_DEPTH 1000
#define DOC_MAX_VALUES (UINT32_MAX - 1)
#define DOC_MAX_LENGTH UINT32_MAX /* bytes of a scalar, elements of an array, members of an object */

typedef enum DocType {
	DOC_NULL,
	DOC_FALSE,
	DOC_TRUE,
	DOC_NUMBER,
	DOC_STRING,
	DOC_ARRAY,
	DOC_OBJECT,
} DocType;

enum {
	DOC_MISSING = 0, /* "no such value": index 0 is the root, which is nobody's element */
};

/* How a scalar's bytes are written; UBJSON's binary numbers use their type marker ('i', 'd', ...). */
enum {
	DOC_TEXT = 0,     /* text: a JSON number (or UBJSON 'H'), a string's bytes without escapes */
	DOC_TEXT_ESCAPED, /* a JSON string's text holding backslash escapes */
};

typedef struct DocValue {
	uint8_t type;     /* DocType */
	uint8_t encoding; /* scalars: DOC_TEXT, DOC_TEXT_ESCAPED or a UBJSON marker; flat arrays: their elements' */
	uint8_t flat;     /* an array whose elements are not on the tape */
	uint8_t unused;
	uint32_t end;     /* index of the first value after this one and everything inside it */
	uint64_t start;   /* offset of its bytes: a scalar's payload (a string's text), a JSON container's bracket,
	                     a typed array's first element */
	uint32_t length;  /* scalars: bytes of payload; containers: elements or members (at most DOC_MAX_LENGTH) */
} DocValue;

typedef struct Document {
	const char *name;  /* for messages; not owned */
	const char *bytes; /* the file; not owned, must outlive the document */
	size_t size;
	DocValue *values;  /* values[0] is the root */
	uint32_t num_values;
	size_t values_cap;
	bool mapped;       /* bytes are a read-only private mapping of a file: doc_release may drop its pages */
	uint64_t released; /* the pages before bytes + released are dropped (or not to be: bytes + released is
	                      page-aligned after the first doc_release) */
} Document;

/* An element of an array, as an iterator returns it. */
typedef struct DocItem {
	DocType type;
	uint8_t encoding;  /* as DocValue.encoding */
	uint32_t value;    /* its index on the tape, or DOC_MISSING for an element of a flat array */
	const char *bytes; /* a scalar's payload */
	uint64_t length;   /* bytes of payload */
} DocItem;

/* Walks the elements of an array, flat or not. */
typedef struct DocIterator {
	const Document *doc;
	uint64_t remaining; /* elements not returned yet */
	uint32_t value;     /* the next element's tape index (arrays that are not flat) */
	uint8_t flat;
	uint8_t encoding;   /* flat arrays: their elements' encoding */
	uint8_t width;      /* bytes per element of a typed array */
	const char *p;      /* the next element's bytes (flat arrays) */
	const char *end;    /* the end of the file */
} DocIterator;

/* Free the values of doc (also after a failed parse). */
void doc_free(Document *doc);

/* The type of value v. */
static inline DocType doc_type(const Document *doc, uint32_t v) { return (DocType)doc->values[v].type; }
/* Number of elements of an array, members of an object, bytes of a scalar's payload. */
static inline uint64_t doc_length(const Document *doc, uint32_t v) { return doc->values[v].length; }
/* Whether array v is flat: its elements are scalars, read with a DocIterator only. */
static inline bool doc_is_flat(const Document *doc, uint32_t v) { return doc->values[v].flat; }

/* The value of member `key` of object v, or DOC_MISSING (also when v is not an object). */
uint32_t doc_member(const Document *doc, uint32_t v, const char *key);

/* Start walking the elements of array v (none if v is not an array). */
void doc_iterate(const Document *doc, uint32_t v, DocIterator *it);
/* Fill *item with the next element; false after the last. */
bool doc_next(DocIterator *it, DocItem *item);
/* doc_next_float and doc_next_int64 for the elements of flat JSON arrays (json.c) and for all others (doc.c). */
bool json_flat_float(DocIterator *it, DocItem *item, float *out);
bool json_flat_int64(DocIterator *it, DocItem *item, int64_t *out);
bool doc_next_float_other(DocIterator *it, DocItem *item, float *out);
bool doc_next_int64_other(DocIterator *it, DocItem *item, int64_t *out);

/* Read the next element as a float; false if it is not a number, with *item describing it. */
static inline bool doc_next_float(DocIterator *it, DocItem *item, float *out)
{
	return it->flat && it->encoding == DOC_TEXT ? json_flat_float(it, item, out) : doc_next_float_other(it, item, out);
}

/* Read the next element as an integer; false if it is not one (or does not fit), with *item describing it. */
static inline bool doc_next_int64(DocIterator *it, DocItem *item, int64_t *out)
{
	return it->flat && it->encoding == DOC_TEXT ? json_flat_int64(it, item, out) : doc_next_int64_other(it, item, out);
}

/* Value v as an item (as an iterator would return it). */
DocItem doc_item(const Document *doc, uint32_t v);
/* Number item as the nearest float (from text: rounded once, as strtof). */
float doc_item_float(const DocItem *item);
/* Number item as the nearest double. */
double doc_item_double(const DocItem *item);
/* Item as an integer; false if it is not an integer number (text with a fraction or exponent, a binary float) or does not fit. */
bool doc_item_int64(const DocItem *item, int64_t *out);
/* Describe item for messages: a number's value ("1.5"), a string's text in quotes, else its type. */
void doc_item_describe(const DocItem *item, char *buf, size_t size);

/* Number v as the nearest float, double, or as an integer (see the item functions). */
float doc_number_float(const Document *doc, uint32_t v);
double doc_number_double(const Document *doc, uint32_t v);
bool doc_number_int64(const Document *doc, uint32_t v, int64_t *out);

/* String item's text, unescaped, NUL-terminated (malloc'ed); NULL if it holds a NUL byte. */
char *doc_item_string(const DocItem *item);
/* Whether string v (unescaped) equals s; false if v is not a string. */
bool doc_string_equals(const Document *doc, uint32_t v, const char *s);
/* Copy string v, unescaped (\u escapes become UTF-8), to buf, cut to fit and NUL-terminated; returns its full length. */
size_t doc_string_copy(const Document *doc, uint32_t v, char *buf, size_t size);

/* "a number", "a string", ... for messages. */
const char *doc_type_name(DocType t);

/*
 * Done with the bytes before offset for now: if the document is mapped, let the
 * kernel drop their pages (in steps of DOC_RELEASE_STEP bytes; reading them later
 * maps them again). For the parsers and the readers, which go through a file in order.
 */
void doc_release(Document *doc, uint64_t offset);
#define DOC_RELEASE_STEP (8u << 20)

/*
 * Whether every object's keys differ (compared unescaped); else e names the first
 * repeated key, the object's path and both places (JSON's line:column, or UBJSON's
 * offsets: json says which the document is). A repeated key has two readings: grove's
 * readers would take the first copy, XGBoost's the last.
 */
bool doc_check_keys(const Document *doc, bool json, Error *e);

/* Tape building, for the parsers: make room for one more value; false past DOC_MAX_VALUES. */
bool doc_reserve(Document *doc);

#endif
