/*
 * Protobuf's wire format, read in place from bytes in memory (a mapped file): a field's
 * bytes are a span of the same memory, so reading a message copies and allocates
 * nothing. Every length is checked against what is left of its message, and a bad
 * encoding is reported with its byte offset. Only what ONNX's messages use: varints,
 * fixed 32- and 64-bit numbers and length-delimited fields; groups (wire types 3 and 4,
 * deprecated, never in ONNX) are refused.
 *
 * Repeated numbers are read one after the other, packed or not, straight from the file
 * (PbRepeated), so a reader fills its own arrays from them without an intermediate copy.
 */
#ifndef GROVE_FRONT_PROTOBUF_H
#define GROVE_FRONT_PROTOBUF_H

#include "ir/common.h"

#include <string.h>

/* Bytes of the file: a string, a message, or a packed run of numbers. */
typedef struct PbBytes {
	const uint8_t *data;
	size_t len;
} PbBytes;

typedef enum PbWire { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2, PB_FIXED32 = 5 } PbWire;

typedef struct PbField {
	uint32_t number;
	PbWire wire;
	uint64_t value; /* PB_VARINT, PB_FIXED64, PB_FIXED32: the number's bits */
	PbBytes bytes;  /* the value as written: a varint's or fixed number's bytes, a PB_LEN field's contents */
	size_t offset;  /* of the field's key in the file */
} PbField;

/* The fields of a message from p to end; base is the file's first byte, for offsets in messages. */
typedef struct PbCursor {
	const uint8_t *p, *end, *base;
} PbCursor;

/* A cursor over message, which lies in the file starting at base. */
static inline PbCursor pb_cursor(const uint8_t *base, PbBytes message)
{
	const uint8_t *p = message.data ? message.data : base; /* an absent message is an empty one */
	return (PbCursor){p, p + message.len, base};
}

/* pb_next for any field. */
int pb_next_any(PbCursor *c, PbField *f, Error *e);

/*
 * The next field of c into *f: 1, 0 at the message's end, or -1 for a bad encoding
 * ("at byte N: ..." in e). Inline for the most common fields: a one-byte key and a
 * one-byte varint or length (ONNX's attribute lists are mostly unpacked, one field per
 * element).
 */
static inline int pb_next(PbCursor *c, PbField *f, Error *e)
{
	const uint8_t *p = c->p, *q;
	uint64_t n = 0;
	if (c->end - p < 2 || p[0] >= 0x80 || p[0] < 8)
		return pb_next_any(c, f, e);
	f->number = p[0] >> 3;
	f->wire = (PbWire)(p[0] & 7);
	f->offset = (size_t)(p - c->base);
	q = p + 1;
	switch (f->wire) {
	case PB_VARINT:
		for (int shift = 0; q < c->end && shift < 63; shift += 7) {
			n |= (uint64_t)(*q & 0x7f) << shift;
			if (!(*q++ & 0x80)) {
				f->value = n;
				f->bytes = (PbBytes){p + 1, (size_t)(q - p - 1)};
				c->p = q;
				return 1;
			}
		}
		break;
	case PB_FIXED32:
	case PB_FIXED64:
		if (c->end - q >= (f->wire == PB_FIXED32 ? 4 : 8)) {
			f->value = 0;
			memcpy(&f->value, q, f->wire == PB_FIXED32 ? 4 : 8);
			f->bytes = (PbBytes){q, f->wire == PB_FIXED32 ? 4u : 8u};
			c->p = q + f->bytes.len;
			return 1;
		}
		break;
	case PB_LEN:
		for (int shift = 0; q < c->end && shift < 35; shift += 7) {
			n |= (uint64_t)(*q & 0x7f) << shift;
			if (!(*q++ & 0x80)) {
				if (n > (uint64_t)(c->end - q))
					break;
				f->bytes = (PbBytes){q, (size_t)n};
				c->p = q + n;
				return 1;
			}
		}
		break;
	}
	return pb_next_any(c, f, e); /* says what is wrong, or reads what the fast path leaves */
}

/*
 * Add the elements of wire type `wire` that field f holds (one, or a packed run) to
 * *count; false if it holds other ones, or a packed run does not hold whole ones.
 */
bool pb_count_field(const PbField *f, PbWire wire, size_t *count);

/*
 * Skip the fields right at c that repeat key byte `key` (a field number below 16) with
 * single elements of wire type `wire`, adding them to *count: the fast way over an
 * unpacked list. Stops before anything else, a bad encoding included (pb_next reports it).
 */
void pb_skip_repeats(PbCursor *c, uint8_t key, PbWire wire, size_t *count);

/*
 * Repeated field `number` of a message, whose elements are numbers of wire type `wire`
 * (PB_VARINT, PB_FIXED32 or PB_FIXED64) or strings (PB_LEN): the elements in order,
 * whether written one field each, packed in runs, or both.
 */
typedef struct PbRepeated {
	PbCursor message;       /* the message's fields not yet looked at */
	const uint8_t *p, *end; /* the packed run being read */
	uint32_t number;
	PbWire wire;
	uint8_t key;            /* an unpacked element's one-byte key, 0 if its key takes more (or it is a string) */
} PbRepeated;

/*
 * The number of elements of repeated field `number` (of wire type `wire`) in message,
 * checking each: false with e filled ("at byte N: ...") if a field of that number has
 * another wire type or a packed run does not hold whole elements.
 */
bool pb_repeated_count(PbCursor message, uint32_t number, PbWire wire, size_t *count, Error *e);

/* Start reading the elements of field `number` of message (pb_repeated_count must have accepted it). */
static inline PbRepeated pb_repeated(PbCursor message, uint32_t number, PbWire wire)
{
	uint8_t key = number < 16 && wire != PB_LEN ? (uint8_t)(number << 3 | wire) : 0;
	return (PbRepeated){message, NULL, NULL, number, wire, key};
}

/* Read a varint at *p (below end); it is known to end there, within 10 bytes. */
static inline uint64_t pb_varint_known(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	if (q < end && q[0] < 0x80) { /* most are one byte */
		*p = q + 1;
		return q[0];
	}
	for (int shift = 0; q < end && shift < 70; shift += 7) {
		uint8_t b = *q++;
		v |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 0);
		if (!(b & 0x80))
			break;
	}
	*p = q;
	return v;
}

/* Find the next field holding elements of it: false past the last. */
bool pb_repeated_advance(PbRepeated *it, PbBytes *single);

/* The next element's bits (for numbers), in order; 0 past the last. */
static inline uint64_t pb_repeated_next(PbRepeated *it)
{
	uint64_t v = 0;
	PbBytes single;
	const uint8_t *q = it->message.p;
	/* An unpacked element right there, with a one-byte key (pb_repeated_count has checked the message). */
	if (it->p == it->end && q < it->message.end && *q == it->key && it->key) {
		it->message.p = q + 1;
		switch (it->wire) {
		case PB_VARINT: return pb_varint_known(&it->message.p, it->message.end);
		case PB_FIXED32: memcpy(&v, q + 1, 4), it->message.p += 4; return v;
		case PB_FIXED64: memcpy(&v, q + 1, 8), it->message.p += 8; return v;
		case PB_LEN: break;
		}
	}
	if (it->p == it->end && !pb_repeated_advance(it, &single))
		return 0;
	switch (it->wire) {
	case PB_VARINT: return pb_varint_known(&it->p, it->end);
	case PB_FIXED32: memcpy(&v, it->p, 4), it->p += 4; return v;
	case PB_FIXED64: memcpy(&v, it->p, 8), it->p += 8; return v;
	case PB_LEN: break;
	}
	die("pb_repeated_next on a field of strings");
}

/* The next n elements' bits into out, in order (there must be as many): pb_repeated_next's, in tight loops. */
void pb_repeated_take(PbRepeated *it, size_t n, uint64_t *out);

/* pb_repeated_next_bytes for any field. */
PbBytes pb_repeated_next_any_bytes(PbRepeated *it);

/* The next string element, in order; empty past the last. */
static inline PbBytes pb_repeated_next_bytes(PbRepeated *it)
{
	const uint8_t *q = it->message.p;
	/* A one-byte key and length right there (pb_repeated_count has checked the message). */
	if (it->number < 16 && it->message.end - q >= 2 && q[0] == (uint8_t)(it->number << 3 | PB_LEN) && q[1] < 0x80 &&
	    q[1] <= it->message.end - q - 2) {
		it->message.p = q + 2 + q[1];
		return (PbBytes){q + 2, q[1]};
	}
	return pb_repeated_next_any_bytes(it);
}

/* Whether text is the string s. */
static inline bool pb_equal(PbBytes text, const char *s)
{
	size_t n = strlen(s);
	return text.len == n && (n == 0 || memcmp(text.data, s, n) == 0);
}

/* printf's arguments for "%.*s" of text, cut to 200 bytes. */
#define PB_PRINT(text) (int)((text).len < 200 ? (text).len : 200), (const char *)(text).data

#endif
