/* UBJSON reader: one non-recursive pass that checks the bytes and fills the value tape. */
#include "front/ubjson.h"
#include "front/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An open container. */
typedef struct Frame {
	uint32_t value;     /* its tape index */
	uint8_t fixed;      /* the marker of every element ('$'), 0 if none */
	bool object;
	bool counted;       /* it gave its count ('#'): no closing marker */
	uint64_t remaining; /* counted: elements not read yet */
	uint64_t elements;  /* elements (members) read so far */
	size_t start;       /* offset of its '[' or '{' */
} Frame;

typedef struct Parser {
	Document *doc;
	const char *bytes;
	size_t size, pos;
	Error *e;
	Frame stack[DOC_MAX_DEPTH];
} Parser;

/* Fill e with "name: offset N: message"; returns false. */
static bool fail(Parser *ps, size_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(Parser *ps, size_t offset, const char *fmt, ...)
{
	char message[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	return error_set(ps->e, "%s: offset %zu: %s", ps->doc->name, offset, message);
}

/* Describe marker byte c for messages. */
static void describe_marker(unsigned char c, char *buf, size_t size)
{
	if (c >= 0x21 && c < 0x7f)
		snprintf(buf, size, "'%c'", c);
	else
		snprintf(buf, size, "byte 0x%02x", c);
}

size_t ubjson_number_width(unsigned char m)
{
	switch (m) {
	case 'i': case 'U': case 'C': return 1;
	case 'I': return 2;
	case 'l': case 'd': return 4;
	case 'L': case 'D': return 8;
	default: return 0;
	}
}

static inline size_t left(const Parser *ps) { return ps->size - ps->pos; }

/* Big-endian signed integer of marker m at p (one of i U I l L). */
static int64_t read_int(const char *p, unsigned char m)
{
	uint64_t v = 0;
	size_t n = ubjson_number_width(m);
	for (size_t i = 0; i < n; i++)
		v = v << 8 | (unsigned char)p[i];
	switch (m) {
	case 'i': return (int8_t)v;
	case 'U': return (uint8_t)v;
	case 'I': return (int16_t)v;
	case 'l': return (int32_t)v;
	default: return (int64_t)v;
	}
}

/* An integer (a length or count: marker i, U, I, l or L, then its bytes), which must not be negative. */
static bool read_count(Parser *ps, const char *what, uint64_t *out)
{
	size_t at = ps->pos, n;
	unsigned char m;
	int64_t v;
	char found[32];
	if (left(ps) == 0)
		return fail(ps, at, "the file ends where %s should be", what);
	m = (unsigned char)ps->bytes[ps->pos];
	if (m == 0 || !strchr("iUIlL", m)) {
		describe_marker(m, found, sizeof found);
		return fail(ps, at, "expected %s (an integer: i, U, I, l or L), found %s", what, found);
	}
	n = ubjson_number_width(m);
	if (left(ps) - 1 < n)
		return fail(ps, at, "the file ends inside %s ('%c' needs %zu bytes, %zu left)", what, m, n, left(ps) - 1);
	v = read_int(ps->bytes + ps->pos + 1, m);
	if (v < 0)
		return fail(ps, at, "%s is negative (%lld)", what, (long long)v);
	ps->pos += 1 + n;
	*out = (uint64_t)v;
	return true;
}

/* A length-prefixed payload (a string, a key, a high-precision number): its length, checked against the file. */
static bool read_payload(Parser *ps, const char *what, uint64_t *length)
{
	size_t at = ps->pos;
	if (!read_count(ps, what, length))
		return false;
	if (*length > left(ps))
		return fail(ps, at, "%s %llu runs past the end of the file (%zu bytes left)", what, (unsigned long long)*length, left(ps));
	if (*length > DOC_MAX_LENGTH)
		return fail(ps, at, "%s %llu is more than the reader takes (%u)", what, (unsigned long long)*length, (unsigned)DOC_MAX_LENGTH);
	return true;
}

/* Append a value to the tape; false past the tape's limit. */
static bool push_value(Parser *ps, size_t at, DocValue value)
{
	Document *doc = ps->doc;
	if (!doc_reserve(doc))
		return fail(ps, at, "more than %u values (typed arrays aside)", (unsigned)DOC_MAX_VALUES);
	value.end = doc->num_values + 1;
	doc->values[doc->num_values++] = value;
	return true;
}

/* The next marker, no-ops skipped; false at the end of the file (after reporting, inside `context`). */
static bool next_marker(Parser *ps, const char *context, unsigned char *m)
{
	while (left(ps) && ps->bytes[ps->pos] == 'N')
		ps->pos++;
	if (left(ps) == 0)
		return fail(ps, ps->pos, "the file ends %s", context);
	*m = (unsigned char)ps->bytes[ps->pos++];
	return true;
}

/*
 * Open the container whose '[' or '{' was just read (at offset at): read its type and
 * count, then either record it whole (a typed array of fixed-size numbers) or push it.
 */
static bool open_container(Parser *ps, size_t at, bool object, uint32_t *depth)
{
	uint8_t fixed = 0;
	bool counted = false;
	uint64_t count = 0, least;
	size_t width = 0, index = ps->doc->num_values;
	DocValue value = {.type = (uint8_t)(object ? DOC_OBJECT : DOC_ARRAY), .start = at};
	char found[32];

	doc_release(ps->doc, at); /* the parser is done with the bytes before a container */
	if (left(ps) && ps->bytes[ps->pos] == '$') {
		size_t type_at = ps->pos++;
		if (left(ps) == 0)
			return fail(ps, type_at, "the file ends where the container's element type should be");
		fixed = (uint8_t)ps->bytes[ps->pos++];
		width = ubjson_number_width(fixed);
		if (!width && !strchr("HS[{", fixed)) {
			describe_marker(fixed, found, sizeof found);
			return fail(ps, type_at + 1, "%s is not a supported element type of a typed container", found);
		}
		if (left(ps) == 0 || ps->bytes[ps->pos] != '#')
			return fail(ps, ps->pos, "a typed container ('$') must give its count ('#')");
	}
	if (left(ps) && ps->bytes[ps->pos] == '#') {
		size_t count_at = ps->pos++;
		if (!read_count(ps, "the count", &count))
			return false;
		/* Each element takes at least a byte (a member at least two more, its key), or width bytes when typed. */
		least = (width ? width : 1) + (object ? 2 : 0);
		if (count > left(ps) / least)
			return fail(ps, count_at, "count %llu runs past the end of the file (%zu bytes left)", (unsigned long long)count,
			            left(ps));
		if (count > DOC_MAX_LENGTH)
			return fail(ps, count_at, "count %llu is more than the reader takes (%u)", (unsigned long long)count, (unsigned)DOC_MAX_LENGTH);
		counted = true;
	}
	if (!object && width) { /* a flat array: its elements are read in place */
		value.flat = 1;
		value.encoding = fixed;
		value.start = ps->pos;
		value.length = (uint32_t)count;
		ps->pos += count * width;
		return push_value(ps, at, value);
	}
	if (*depth == DOC_MAX_DEPTH)
		return fail(ps, at, "arrays and objects nested more than %d deep", DOC_MAX_DEPTH);
	if (!push_value(ps, at, value))
		return false;
	ps->stack[(*depth)++] = (Frame){.value = (uint32_t)index, .fixed = fixed, .object = object, .counted = counted,
	                                .remaining = count, .start = at};
	return true;
}

/* Read the value of marker m (at offset at): a scalar onto the tape, or a container opened. */
static bool read_value(Parser *ps, unsigned char m, size_t at, uint32_t *depth)
{
	size_t width = ubjson_number_width(m);
	uint64_t length;
	char found[32];

	if (width) {
		if (left(ps) < width)
			return fail(ps, at, "the file ends inside a number ('%c' needs %zu bytes, %zu left)", m, width, left(ps));
		ps->pos += width;
		return push_value(ps, at, (DocValue){.type = DOC_NUMBER, .encoding = m, .start = ps->pos - width, .length = width});
	}
	switch (m) {
	case 'Z':
	case 'T':
	case 'F':
		return push_value(ps, at, (DocValue){.type = (uint8_t)(m == 'Z' ? DOC_NULL : m == 'T' ? DOC_TRUE : DOC_FALSE), .start = at});
	case 'S':
	case 'H':
		if (!read_payload(ps, m == 'S' ? "the string length" : "the number length", &length))
			return false;
		if (m == 'H' && !json_text_is_number(ps->bytes + ps->pos, length))
			return fail(ps, at, "high-precision number '%.*s' is not a number", (int)(length < 40 ? length : 40), ps->bytes + ps->pos);
		ps->pos += length;
		return push_value(ps, at, (DocValue){.type = (uint8_t)(m == 'S' ? DOC_STRING : DOC_NUMBER), .encoding = DOC_TEXT,
		                                     .start = ps->pos - length, .length = (uint32_t)length});
	case '[':
	case '{':
		return open_container(ps, at, m == '{', depth);
	default:
		describe_marker(m, found, sizeof found);
		return fail(ps, at, "unknown marker %s", found);
	}
}

/* Close the innermost container. */
static void close_container(Parser *ps, uint32_t *depth)
{
	Frame *f = &ps->stack[--*depth];
	DocValue *value = &ps->doc->values[f->value];
	value->length = (uint32_t)f->elements; /* at most its count, or the bytes it spans: checked in read_element */
	value->end = ps->doc->num_values;
}

/* Read the next element of the innermost container (or close it); false on error. */
static bool read_element(Parser *ps, uint32_t *depth)
{
	Frame *f = &ps->stack[*depth - 1];
	char context[96];
	unsigned char m;
	size_t at;

	snprintf(context, sizeof context, "inside the %s that starts at offset %zu", f->object ? "object" : "array", f->start);
	if (f->counted && f->remaining == 0) {
		close_container(ps, depth);
		return true;
	}
	if (!f->counted) {
		while (left(ps) && ps->bytes[ps->pos] == 'N')
			ps->pos++;
		if (left(ps) == 0)
			return fail(ps, ps->pos, "the file ends %s", context);
		if (ps->bytes[ps->pos] == (f->object ? '}' : ']')) {
			ps->pos++;
			close_container(ps, depth);
			return true;
		}
	}
	if (f->object) {
		uint64_t length;
		at = ps->pos;
		if (!read_payload(ps, "the key length", &length))
			return false;
		ps->pos += length;
		if (!push_value(ps, at, (DocValue){.type = DOC_STRING, .encoding = DOC_TEXT, .start = ps->pos - length, .length = (uint32_t)length}))
			return false;
	}
	if (f->elements == DOC_MAX_LENGTH)
		return fail(ps, ps->pos, "the %s that starts at offset %zu has more than %u elements", f->object ? "object" : "array",
		            f->start, (unsigned)DOC_MAX_LENGTH);
	f->remaining -= f->counted;
	f->elements++;
	at = ps->pos;
	if (f->fixed)
		m = f->fixed;
	else if (!next_marker(ps, context, &m))
		return false;
	else
		at = ps->pos - 1;
	return read_value(ps, m, at, depth);
}

bool ubjson_parse(Document *doc, const char *name, const char *bytes, size_t length, bool mapped, Error *e)
{
	Parser *ps;
	uint32_t depth = 0;
	unsigned char m;
	bool ok;

	memset(doc, 0, sizeof *doc);
	doc->name = name;
	doc->bytes = bytes;
	doc->size = length;
	doc->mapped = mapped;
	ps = xmalloc(sizeof *ps);
	ps->doc = doc;
	ps->bytes = bytes;
	ps->size = length;
	ps->pos = 0;
	ps->e = e;
	ok = next_marker(ps, "before its first value", &m) && read_value(ps, m, ps->pos - 1, &depth);
	while (ok && depth)
		ok = read_element(ps, &depth);
	while (ok && left(ps) && ps->bytes[ps->pos] == 'N')
		ps->pos++;
	if (ok && left(ps))
		ok = fail(ps, ps->pos, "unexpected bytes after the value (%zu of them)", left(ps));
	free(ps);
	doc->released = 0; /* the reader goes through the bytes again, from the top */
	return ok;
}
