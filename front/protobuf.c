/*
 * Protobuf's wire format, read in place (front/protobuf.h). A key is a varint holding
 * field number << 3 | wire type; then a varint, 8 or 4 little-endian bytes, or a varint
 * length and that many bytes.
 */
#include "front/protobuf.h"

#include <stdio.h>

/* Read a varint at c->p into *v; false if it does not end within the message and 10 bytes. */
static bool read_varint(PbCursor *c, uint64_t *v)
{
	const uint8_t *p = c->p;
	*v = 0;
	for (int shift = 0; p < c->end && shift < 70; shift += 7) {
		uint8_t b = *p++;
		*v |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 0);
		if (!(b & 0x80)) {
			c->p = p;
			return true;
		}
	}
	return false;
}

/* Fill e with "at byte N: what" for the byte at `at`; returns -1. */
static int bad(const PbCursor *c, const uint8_t *at, Error *e, const char *what)
{
	error_set(e, "at byte %zu: %s", (size_t)(at - c->base), what);
	return -1;
}

int pb_next_any(PbCursor *c, PbField *f, Error *e)
{
	const uint8_t *key = c->p, *value;
	uint64_t k, n;
	char what[160];
	if (c->p == c->end)
		return 0;
	if (!read_varint(c, &k))
		return bad(c, key, e, "a field's key runs past the end of its message");
	if (k >> 3 == 0 || k >> 3 > 0x1fffffff) {
		snprintf(what, sizeof what, "field number %llu (protobuf's are 1 to 536870911)", (unsigned long long)(k >> 3));
		return bad(c, key, e, what);
	}
	f->number = (uint32_t)(k >> 3);
	f->wire = (PbWire)(k & 7);
	f->offset = (size_t)(key - c->base);
	value = c->p;
	switch (k & 7) {
	case PB_VARINT:
		if (!read_varint(c, &f->value))
			return bad(c, value, e, "a varint runs past the end of its message");
		break;
	case PB_FIXED64:
	case PB_FIXED32:
		n = (k & 7) == PB_FIXED64 ? 8 : 4;
		if ((uint64_t)(c->end - c->p) < n)
			return bad(c, value, e, "a fixed-size number runs past the end of its message");
		f->value = 0;
		memcpy(&f->value, c->p, n); /* little-endian, as x86-64 and AArch64 are */
		c->p += n;
		break;
	case PB_LEN:
		if (!read_varint(c, &n))
			return bad(c, value, e, "a length runs past the end of its message");
		if (n > (uint64_t)(c->end - c->p)) {
			snprintf(what, sizeof what, "field %u holds %llu bytes, past the end of its message (%zu bytes left)", f->number,
			         (unsigned long long)n, (size_t)(c->end - c->p));
			return bad(c, key, e, what);
		}
		f->bytes = (PbBytes){c->p, (size_t)n};
		c->p += n;
		return 1;
	default:
		snprintf(what, sizeof what, "field %u has wire type %u, %s", f->number, (unsigned)(k & 7),
		         (k & 7) == 3 || (k & 7) == 4 ? "a group, which ONNX does not use" : "which protobuf does not define");
		return bad(c, key, e, what);
	}
	f->bytes = (PbBytes){value, (size_t)(c->p - value)};
	return 1;
}

static const char *wire_name(PbWire wire)
{
	switch (wire) {
	case PB_VARINT: return "varints";
	case PB_FIXED32: return "32-bit numbers";
	case PB_FIXED64: return "64-bit numbers";
	case PB_LEN: return "length-delimited values";
	}
	return "?";
}

/* The number of varints in a packed run; false if the last does not end in it or one is longer than 10 bytes. */
static bool count_varints(PbBytes run, size_t *count)
{
	size_t n = 0, length = 0;
	for (size_t i = 0; i < run.len; i++) {
		if (run.data[i] & 0x80) {
			if (++length == 10)
				return false;
		} else {
			n++;
			length = 0;
		}
	}
	*count += n;
	return length == 0;
}

bool pb_count_field(const PbField *f, PbWire wire, size_t *count)
{
	if (f->wire == wire) {
		++*count;
		return true;
	}
	if (f->wire != PB_LEN || wire == PB_LEN)
		return false;
	if (wire == PB_VARINT)
		return count_varints(f->bytes, count);
	if (f->bytes.len % (wire == PB_FIXED32 ? 4 : 8) != 0)
		return false;
	*count += f->bytes.len / (wire == PB_FIXED32 ? 4 : 8);
	return true;
}

bool pb_repeated_count(PbCursor message, uint32_t number, PbWire wire, size_t *count, Error *e)
{
	PbField f;
	int got;
	char what[160];
	*count = 0;
	while ((got = pb_next(&message, &f, e)) > 0) {
		if (f.number != number || pb_count_field(&f, wire, count))
			continue;
		if (f.wire != PB_LEN || wire == PB_LEN)
			snprintf(what, sizeof what, "field %u holds %s where %s are expected", number, wire_name(f.wire), wire_name(wire));
		else
			snprintf(what, sizeof what, "field %u: a packed run of %s of %zu bytes does not hold whole ones", number,
			         wire_name(wire), f.bytes.len);
		return bad(&message, message.base + f.offset, e, what) > 0;
	}
	return got == 0;
}

/* The 8 bytes at p as a little-endian number (one load where the CPU is little-endian). */
static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 |
	       (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

void pb_skip_repeats(PbCursor *c, uint8_t key, PbWire wire, size_t *count)
{
	const uint8_t *p = c->p, *end = c->end;
	size_t n = 0;
	if (wire == PB_VARINT) /* one-byte values first: the most common, and the quickest */
		while (end - p >= 2 && p[0] == key && p[1] < 0x80) {
			p += 2;
			n++;
		}
	while (end - p >= 2 && p[0] == key) {
		const uint8_t *q = p + 1;
		uint64_t last = wire == PB_VARINT && end - q >= 8 ? ~le64(q) & UINT64_C(0x8080808080808080) : 0;
		if (last) { /* a varint of up to 8 bytes ends at the first without its high bit: no loop over its bytes */
			p = q + __builtin_ctzll(last) / 8 + 1;
			n++;
			continue;
		}
		if (wire == PB_VARINT || wire == PB_LEN) {
			uint64_t length = 0;
			int i = 0;
			for (; i < 10 && q < end; i++) {
				length |= (uint64_t)(*q & 0x7f) << (7 * i < 64 ? 7 * i : 0);
				if (!(*q++ & 0x80))
					break;
			}
			if (i == 10 || (q[-1] & 0x80) || (wire == PB_LEN && length > (uint64_t)(end - q)))
				break;
			if (wire == PB_LEN)
				q += length;
		} else {
			size_t size = wire == PB_FIXED32 ? 4 : 8;
			if ((size_t)(end - q) < size)
				break;
			q += size;
		}
		p = q;
		n++;
	}
	c->p = p;
	*count += n;
}

bool pb_repeated_advance(PbRepeated *it, PbBytes *single)
{
	PbField f;
	Error e;
	while (pb_next(&it->message, &f, &e) > 0) {
		if (f.number != it->number)
			continue;
		if (it->wire == PB_LEN) {
			*single = f.bytes;
			return true;
		}
		if (f.bytes.len == 0)
			continue; /* an empty packed run */
		it->p = f.bytes.data;
		it->end = f.bytes.data + f.bytes.len;
		return true;
	}
	return false;
}

PbBytes pb_repeated_next_any_bytes(PbRepeated *it)
{
	PbBytes s = {(const uint8_t *)"", 0};
	if (it->wire != PB_LEN)
		die("pb_repeated_next_bytes on a field of numbers");
	pb_repeated_advance(it, &s);
	return s;
}

void pb_repeated_take(PbRepeated *it, size_t n, uint64_t *out)
{
	size_t i = 0;
	while (i < n) {
		const uint8_t *q = it->message.p, *end = it->message.end;
		uint32_t x;
		/* Unpacked elements with one-byte keys (pb_repeated_count has checked the message), or a packed run. */
		if (it->p == it->end && it->key) {
			switch (it->wire) {
			case PB_VARINT:
				for (; i < n && q < end && *q == it->key; i++) {
					q++;
					out[i] = pb_varint_known(&q, end);
				}
				break;
			case PB_FIXED32:
				for (; i < n && end - q >= 5 && *q == it->key; i++, q += 5)
					out[i] = (memcpy(&x, q + 1, 4), x);
				break;
			case PB_FIXED64:
				for (; i < n && end - q >= 9 && *q == it->key; i++, q += 9)
					memcpy(&out[i], q + 1, 8);
				break;
			case PB_LEN: die("pb_repeated_take on a field of strings");
			}
			it->message.p = q;
		} else if (it->p < it->end) {
			switch (it->wire) {
			case PB_VARINT:
				for (; i < n && it->p < it->end; i++)
					out[i] = pb_varint_known(&it->p, it->end);
				break;
			case PB_FIXED32:
				for (; i < n && it->end - it->p >= 4; i++, it->p += 4)
					out[i] = (memcpy(&x, it->p, 4), x);
				break;
			case PB_FIXED64:
				for (; i < n && it->end - it->p >= 8; i++, it->p += 8)
					memcpy(&out[i], it->p, 8);
				break;
			case PB_LEN: die("pb_repeated_take on a field of strings");
			}
		}
		if (i < n) /* anything else: the next field, or a key of more bytes */
			out[i++] = pb_repeated_next(it);
	}
}
