/* JSON reader: one non-recursive pass that checks the text and fills the value tape. */
#include "front/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Parser {
	Document *doc;
	const char *text, *p, *end;
	Error *e;
	uint32_t stack[DOC_MAX_DEPTH]; /* open containers, outermost first */
} Parser;

/* Which bytes are JSON whitespace. */
static inline bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
static inline bool is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* The text after q's white space, one comma and the white space after it. */
static inline const char *skip_separator(const char *q)
{
	while (is_space(*q))
		q++;
	if (*q == ',')
		q++;
	while (is_space(*q))
		q++;
	return q;
}

void json_position(const Document *doc, size_t offset, uint32_t *line, uint32_t *column)
{
	const char *text = doc->bytes;
	size_t line_start = 0;
	uint32_t n = 1;
	if (offset > doc->size)
		offset = doc->size;
	for (const char *q = text; (q = memchr(q, '\n', offset - (size_t)(q - text))) != NULL; q++) {
		n++;
		line_start = (size_t)(q - text) + 1;
	}
	*line = n;
	*column = (uint32_t)(offset - line_start + 1);
}

/* Fill e with "name:line:column: message" for the byte at `at`; returns false. */
static bool parse_error(Parser *ps, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool parse_error(Parser *ps, const char *at, const char *fmt, ...)
{
	char message[512];
	uint32_t line, column;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	json_position(ps->doc, (size_t)(at - ps->text), &line, &column);
	return error_set(ps->e, "%s:%u:%u: %s", ps->doc->name, line, column, message);
}

/* Describe the byte at p (or the end of input) for "expected X, found Y" messages. */
static void describe_byte(const Parser *ps, const char *p, char *buf, size_t size)
{
	unsigned char c = p < ps->end ? (unsigned char)*p : 0;
	if (p >= ps->end)
		snprintf(buf, size, "end of input");
	else if (c >= 0x20 && c < 0x7f)
		snprintf(buf, size, "'%c'", c);
	else
		snprintf(buf, size, "byte 0x%02x", c);
}

/* Report that `what` was expected at the current position. */
static bool expected(Parser *ps, const char *what)
{
	char found[32];
	describe_byte(ps, ps->p, found, sizeof found);
	return parse_error(ps, ps->p, "expected %s, found %s", what, found);
}

static inline bool is_hex(char c) { return is_digit(c) || (unsigned char)((c | 0x20) - 'a') < 6; }

/*
 * The closing quote of the string whose text starts at p (after the opening quote),
 * or NULL after reporting an error. Sets *escaped if the text holds escapes.
 */
static const char *scan_string(Parser *ps, const char *p, uint8_t *escaped)
{
	const char *open = p - 1, *end = ps->end;
	for (;;) {
		unsigned char c;
		if (p >= end)
			return parse_error(ps, open, "unterminated string"), NULL;
		c = (unsigned char)*p;
		if (c == '"')
			return p;
		if (c < 0x20)
			return parse_error(ps, p, "control character (byte 0x%02x) in a string", c), NULL;
		if (c != '\\') {
			p++;
			continue;
		}
		*escaped = 1;
		if (p + 1 >= end)
			return parse_error(ps, open, "unterminated string"), NULL;
		switch (p[1]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			p += 2;
			break;
		case 'u':
			if (end - p < 6 || !is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]) || !is_hex(p[5]))
				return parse_error(ps, p, "\\u must be followed by four hexadecimal digits"), NULL;
			p += 6;
			break;
		default:
			return parse_error(ps, p, "invalid escape '\\%c' in a string", p[1] >= 0x20 && p[1] < 0x7f ? p[1] : '?'), NULL;
		}
	}
}

/*
 * The first byte at or after p that is not a decimal digit, or end. Eight bytes at a
 * time where there are eight to read: a byte b is a digit when b ^ '0' is below 10,
 * which 0x76 added to its low seven bits tells without carrying into the next byte.
 */
static inline const char *skip_digits(const char *p, const char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (end - p >= 8) {
		uint64_t x, not_digit;
		memcpy(&x, p, sizeof x);
		x ^= UINT64_C(0x3030303030303030);
		not_digit = (((x & UINT64_C(0x7f7f7f7f7f7f7f7f)) + UINT64_C(0x7676767676767676)) | x) & UINT64_C(0x8080808080808080);
		if (not_digit)
			return p + (__builtin_ctzll(not_digit) >> 3);
		p += 8;
	}
#endif
	while (p < end && is_digit(*p))
		p++;
	return p;
}

/* The end of the number (JSON syntax, or NaN, Infinity, -Infinity) starting at p, or NULL if there is none. */
static inline const char *scan_number(const char *p, const char *end)
{
	const char *start = p;
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == 'I')
		return (size_t)(end - p) >= 8 && memcmp(p, "Infinity", 8) == 0 ? p + 8 : NULL;
	if (p == start && p < end && *p == 'N')
		return (size_t)(end - p) >= 3 && memcmp(p, "NaN", 3) == 0 ? p + 3 : NULL;
	start = p;
	p = skip_digits(p, end);
	if (p == start || (*start == '0' && p - start > 1))
		return NULL; /* no digits, or a leading zero */
	if (p < end && *p == '.') {
		start = ++p;
		p = skip_digits(p, end);
		if (p == start)
			return NULL;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		start = p;
		p = skip_digits(p, end);
		if (p == start)
			return NULL;
	}
	return p;
}

bool json_text_is_number(const char *text, size_t length)
{
	return scan_number(text, text + length) == text + length;
}

/* Whether the byte after a number would make it malformed ("01", "1x", "1.e"). */
static inline bool bad_after_number(char c) { return is_digit(c) || c == '.' || (unsigned char)((c | 0x20) - 'a') < 26; }

/* A scalar's tape entry (length at most DOC_MAX_LENGTH). */
static inline DocValue scalar(DocType type, uint8_t encoding, size_t start, size_t length, uint32_t end)
{
	return (DocValue){.type = (uint8_t)type, .encoding = encoding, .start = start, .length = (uint32_t)length, .end = end};
}

/* Report a string, number or container longer than the tape records. */
static bool too_long(Parser *ps, const char *at, const char *what)
{
	return parse_error(ps, at, "%s of more than %u %s", what, (unsigned)DOC_MAX_LENGTH, *what == 's' ? "bytes" : "elements");
}

/* Make room for more values (kept out of line: it runs a few times per document); NULL past DOC_MAX_VALUES. */
static DocValue *__attribute__((noinline)) grow_values(DocValue *values, uint32_t count, size_t *cap)
{
	if (count >= DOC_MAX_VALUES)
		return NULL;
	GROW(values, (size_t)count + 1, *cap);
	return values;
}

/* Report a document with more values than the tape holds. */
static bool too_many_values(Parser *ps, const char *at)
{
	return parse_error(ps, at, "more than %u values (arrays of numbers aside)", (unsigned)DOC_MAX_VALUES);
}

/*
 * Put the first n elements of array `array`, scalars all (it was flat until now), on the
 * tape from values[count]; returns the new count, or 0 past the tape's limit.
 */
static uint32_t __attribute__((noinline)) unflatten(Parser *ps, DocValue **values, size_t *cap, uint32_t count, uint32_t array, uint64_t n)
{
	DocIterator it = {.doc = ps->doc, .remaining = n, .flat = 1, .end = ps->end};
	DocItem item;
	json_flat_begin(&it, &(*values)[array]);
	while (it.remaining) {
		DocValue *grown;
		if (count == *cap) {
			if (!(grown = grow_values(*values, count, cap)))
				return 0;
			*values = grown;
		}
		json_flat_next(&it, &item);
		(*values)[count] = scalar(item.type, item.encoding, (size_t)(item.bytes - ps->text), item.length, count + 1);
		count++;
	}
	return count;
}

/*
 * The parser: a loop over three states, `value` (a value must come next), `after`
 * (a value ended: ',' or a closing bracket must come next) and `key` (a member name
 * and ':' must come next). The innermost container and its element count live in
 * locals; an enclosing container's count waits in its `length` field. The scalars of
 * an array that holds scalars only (so far) are written to one slot and not kept
 * (`keep` is 0): the tape then only grows with the document's structure; an array
 * that turns out to hold a container puts its earlier scalars on the tape then.
 */
static bool parse_document(Parser *ps)
{
	const char *text = ps->text, *p = ps->text, *end = ps->end, *q;
	DocValue *values = ps->doc->values, *grown;
	size_t cap = ps->doc->values_cap;
	uint32_t count = 0, depth = 0, top = 0, keep = 1;
	uint64_t elements = 0;
	uint32_t *stack = ps->stack;
	DocType top_type = DOC_NULL; /* the innermost container's type, DOC_NULL at the top level */
	bool ok = false;
	char close;

value:
	while (p < end && is_space(*p))
		p++;
	if (p >= end) {
		ps->p = p;
		expected(ps, "a value");
		goto out;
	}
	if (count == cap) {
		if (!(grown = grow_values(values, count, &cap))) {
			too_many_values(ps, p);
			goto out;
		}
		values = grown;
	}
	elements += top_type == DOC_ARRAY;
	switch (*p) {
	case '[':
	case '{':
		if (depth == DOC_MAX_DEPTH) {
			parse_error(ps, p, "arrays and objects nested more than %d deep", DOC_MAX_DEPTH);
			goto out;
		}
		if (depth && values[top].flat) { /* it holds a container: its scalars go on the tape */
			if (elements > 1 && !(count = unflatten(ps, &values, &cap, count, top, elements - 1))) {
				too_many_values(ps, p);
				goto out;
			}
			if (count == cap) {
				if (!(grown = grow_values(values, count, &cap))) {
					too_many_values(ps, p);
					goto out;
				}
				values = grown;
			}
			values[top].flat = 0;
		}
		if (depth && elements > DOC_MAX_LENGTH) {
			too_long(ps, p, top_type == DOC_ARRAY ? "an array" : "an object");
			goto out;
		}
		if (depth)
			values[top].length = (uint32_t)elements;
		doc_release(ps->doc, (size_t)(p - text)); /* the parser is done with the text before a container */
		top = count;
		top_type = *p == '[' ? DOC_ARRAY : DOC_OBJECT;
		stack[depth++] = top;
		elements = 0;
		values[count++] = (DocValue){.type = (uint8_t)top_type, .flat = top_type == DOC_ARRAY, .start = (size_t)(p - text)};
		keep = top_type == DOC_OBJECT;
		close = *p == '[' ? ']' : '}';
		p++;
		while (p < end && is_space(*p))
			p++;
		if (p < end && *p == close) {
			p++;
			goto close;
		}
		if (top_type == DOC_OBJECT)
			goto key;
		goto value;
	case '"': {
		uint8_t escaped = 0;
		if (!(q = scan_string(ps, p + 1, &escaped)))
			goto out;
		if ((size_t)(q - p - 1) > DOC_MAX_LENGTH) {
			too_long(ps, p, "a string");
			goto out;
		}
		values[count] = scalar(DOC_STRING, escaped ? DOC_TEXT_ESCAPED : DOC_TEXT, (size_t)(p + 1 - text), (size_t)(q - p - 1), count + 1);
		count += keep;
		p = q + 1;
		goto after;
	}
	case 't':
	case 'f':
	case 'n': {
		const char *word = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
		DocType type = *p == 't' ? DOC_TRUE : *p == 'f' ? DOC_FALSE : DOC_NULL;
		size_t n = strlen(word);
		if ((size_t)(end - p) < n || memcmp(p, word, n) != 0)
			break;
		values[count] = scalar(type, DOC_TEXT, (size_t)(p - text), n, count + 1);
		count += keep;
		p += n;
		goto after;
	}
	default:
		if (!is_digit(*p) && *p != '-' && *p != 'N' && *p != 'I')
			break;
		q = scan_number(p, end);
		if (!q || (q < end && bad_after_number(*q)) || (size_t)(q - p) > DOC_MAX_LENGTH) {
			parse_error(ps, p, "invalid number");
			goto out;
		}
		values[count] = scalar(DOC_NUMBER, DOC_TEXT, (size_t)(p - text), (size_t)(q - p), count + 1);
		count += keep;
		p = q;
		goto after;
	}
	ps->p = p;
	expected(ps, "a value");
	goto out;

after:
	while (p < end && is_space(*p))
		p++;
	if (top_type == DOC_NULL) {
		if (p < end) {
			parse_error(ps, p, "unexpected text after the JSON value");
			goto out;
		}
		ok = true;
		goto out;
	}
	if (p < end && *p == ',') {
		p++;
		if (top_type == DOC_OBJECT)
			goto key;
		goto value;
	}
	close = top_type == DOC_OBJECT ? '}' : ']';
	if (p < end && *p == close) {
		p++;
		goto close;
	}
	ps->p = p;
	expected(ps, top_type == DOC_OBJECT ? "',' or '}'" : "',' or ']'");
	goto out;

close:
	if (elements > DOC_MAX_LENGTH) {
		too_long(ps, text + values[top].start, top_type == DOC_ARRAY ? "an array" : "an object");
		goto out;
	}
	values[top].length = (uint32_t)elements;
	values[top].end = count;
	keep = 1; /* the enclosing container holds a container: it is not flat */
	if (--depth) {
		top = stack[depth - 1];
		top_type = (DocType)values[top].type;
		elements = values[top].length;
	} else {
		top_type = DOC_NULL;
	}
	goto after;

key:
	while (p < end && is_space(*p))
		p++;
	if (p >= end || *p != '"') {
		ps->p = p;
		expected(ps, "a member name (a string)");
		goto out;
	} else {
		uint8_t escaped = 0;
		if (!(q = scan_string(ps, p + 1, &escaped)))
			goto out;
		if ((size_t)(q - p - 1) > DOC_MAX_LENGTH) {
			too_long(ps, p, "a string");
			goto out;
		}
		if (count == cap) {
			if (!(grown = grow_values(values, count, &cap))) {
				too_many_values(ps, p);
				goto out;
			}
			values = grown;
		}
		values[count] = scalar(DOC_STRING, escaped ? DOC_TEXT_ESCAPED : DOC_TEXT, (size_t)(p + 1 - text), (size_t)(q - p - 1), count + 1);
		count++;
		elements++;
		p = q + 1;
	}
	while (p < end && is_space(*p))
		p++;
	if (p >= end || *p != ':') {
		ps->p = p;
		expected(ps, "':'");
		goto out;
	}
	p++;
	goto value;

out:
	ps->doc->values = values;
	ps->doc->values_cap = cap;
	ps->doc->num_values = count;
	return ok;
}

bool json_parse(Document *doc, const char *name, const char *text, size_t length, bool mapped, Error *e)
{
	Parser *ps;
	bool ok;
	memset(doc, 0, sizeof *doc);
	doc->name = name;
	doc->bytes = text;
	doc->size = length;
	doc->mapped = mapped;
	GROW(doc->values, 1024, doc->values_cap);
	ps = xmalloc(sizeof *ps);
	ps->doc = doc;
	ps->text = ps->p = text;
	ps->end = text + length;
	ps->e = e;
	ok = parse_document(ps);
	free(ps);
	doc->released = 0; /* the reader goes through the text again, from the top */
	return ok;
}

void json_flat_begin(DocIterator *it, const DocValue *value)
{
	it->p = it->doc->bytes + value->start + 1;
	while (is_space(*it->p))
		it->p++;
}

/*
 * The elements of a flat array are read from the text, which the parser has checked:
 * each is a scalar followed by ',' or the closing ']', so no scan passes the end.
 */
void json_flat_next(DocIterator *it, DocItem *item)
{
	const char *p = it->p, *q;
	it->remaining--;
	item->value = DOC_MISSING;
	item->encoding = DOC_TEXT;
	switch (*p) {
	case '"':
		for (q = ++p; *q != '"'; q++)
			if (*q == '\\') {
				item->encoding = DOC_TEXT_ESCAPED;
				q++;
			}
		item->type = DOC_STRING;
		item->bytes = p;
		item->length = (uint64_t)(q - p);
		q++;
		break;
	case 't': case 'f': case 'n':
		item->type = *p == 't' ? DOC_TRUE : *p == 'f' ? DOC_FALSE : DOC_NULL;
		q = p + (*p == 'f' ? 5 : 4);
		item->bytes = p;
		item->length = (uint64_t)(q - p);
		break;
	default:
		for (q = p; *q != ',' && *q != ']' && !is_space(*q); q++)
			;
		item->type = DOC_NUMBER;
		item->bytes = p;
		item->length = (uint64_t)(q - p);
		break;
	}
	it->p = skip_separator(q);
}

static unsigned hex_value(char c) { return is_digit(c) ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10); }

/* Append code point cp as UTF-8 to out; returns bytes written. */
static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

size_t json_unescape(const char *raw, size_t n, char *out)
{
	size_t i = 0, o = 0;
	while (i < n) {
		char c = raw[i];
		uint32_t cp;
		if (c != '\\') {
			out[o++] = c;
			i++;
			continue;
		}
		c = raw[i + 1];
		i += 2;
		switch (c) {
		case 'b': out[o++] = '\b'; continue;
		case 'f': out[o++] = '\f'; continue;
		case 'n': out[o++] = '\n'; continue;
		case 'r': out[o++] = '\r'; continue;
		case 't': out[o++] = '\t'; continue;
		case 'u': break;
		default: out[o++] = c; continue;
		}
		cp = hex_value(raw[i]) << 12 | hex_value(raw[i + 1]) << 8 | hex_value(raw[i + 2]) << 4 | hex_value(raw[i + 3]);
		i += 4;
		if (cp >= 0xd800 && cp < 0xdc00 && i + 6 <= n && raw[i] == '\\' && raw[i + 1] == 'u') {
			uint32_t low = hex_value(raw[i + 2]) << 12 | hex_value(raw[i + 3]) << 8 | hex_value(raw[i + 4]) << 4 |
			               hex_value(raw[i + 5]);
			if (low >= 0xdc00 && low < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
				i += 6;
			}
		}
		if (cp >= 0xd800 && cp < 0xe000)
			cp = 0xfffd; /* a lone surrogate */
		o += put_utf8(out + o, cp);
	}
	return o;
}

/* Exact powers of ten that a double holds. */
static const double powers_of_ten[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/*
 * The fast path (Clinger's): a decimal with at most 19 significant digits whose
 * value is m * 10^k with m < 2^53 and |k| <= 22 is one correctly rounded operation
 * on two exact doubles. Parses from p and returns where the number stopped (the
 * first byte that cannot continue it, or end), or NULL when it needs the slow path.
 */
static const char *decimal_fast(const char *p, const char *end, double *out)
{
	uint64_t mantissa = 0;
	int digits = 0, exponent = 0;
	bool negative = false;
	if (p < end && *p == '-') {
		negative = true;
		p++;
	}
	for (; p < end && is_digit(*p); p++) {
		if (mantissa == 0 && *p == '0')
			continue;
		if (++digits > 19)
			return NULL;
		mantissa = mantissa * 10 + (uint64_t)(*p - '0');
	}
	if (p < end && *p == '.') {
		for (p++; p < end && is_digit(*p); p++) {
			exponent--;
			if (mantissa == 0 && *p == '0')
				continue;
			if (++digits > 19)
				return NULL;
			mantissa = mantissa * 10 + (uint64_t)(*p - '0');
		}
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		int sign = 1, value = 0;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			sign = *p++ == '-' ? -1 : 1;
		for (; p < end && is_digit(*p); p++) {
			if (value > 100000)
				return NULL;
			value = value * 10 + (*p - '0');
		}
		exponent += sign * value;
	}
	if (mantissa == 0) {
		*out = negative ? -0.0 : 0.0;
		return p;
	}
	if (mantissa > (UINT64_C(1) << 53) || exponent < -22 || exponent > 22)
		return NULL;
	*out = exponent < 0 ? (double)mantissa / powers_of_ten[-exponent] : (double)mantissa * powers_of_ten[exponent];
	if (negative)
		*out = -*out;
	return p;
}

/*
 * Whether rounding d, the correctly rounded double of a decimal, to float rounds the
 * decimal correctly: it does unless d fell exactly halfway between two floats (the
 * 29 bits a float drops are 1000...0) or the float would be subnormal.
 */
static inline bool float_rounds_once(double d)
{
	uint64_t bits;
	memcpy(&bits, &d, sizeof bits);
	return d == 0 || (fabs(d) >= 0x1p-126 && (bits & 0x1fffffff) != 0x10000000);
}

/* The slow path: the C library's conversion on a NUL-terminated copy (assumes the "C" locale). */
static double decimal_slow(const char *text, size_t length, bool single)
{
	char small[64], *buf = length < sizeof small ? small : xmalloc(length + 1);
	double d;
	const char *p = text;
	bool negative = length && *p == '-';
	if (length - negative >= 3 && p[negative] == 'N')
		d = NAN;
	else if (length - negative >= 8 && p[negative] == 'I')
		d = negative ? -INFINITY : INFINITY;
	else {
		memcpy(buf, text, length);
		buf[length] = '\0';
		d = single ? (double)strtof(buf, NULL) : strtod(buf, NULL);
	}
	if (buf != small)
		free(buf);
	return d;
}

double json_text_double(const char *text, size_t length)
{
	double d;
	if (decimal_fast(text, text + length, &d) == text + length)
		return d;
	return decimal_slow(text, length, false);
}

float json_text_float(const char *text, size_t length)
{
	double d;
	if (decimal_fast(text, text + length, &d) == text + length && float_rounds_once(d))
		return (float)d;
	return (float)decimal_slow(text, length, true);
}

/* Whether c ends an element of a flat array. */
static inline bool ends_element(char c) { return c == ',' || c == ']' || is_space(c); }

/* Move a flat array's iterator past the element whose text ends at q. */
static inline void iterator_advance(DocIterator *it, const char *q)
{
	it->p = skip_separator(q);
	it->remaining--;
}

bool json_flat_float(DocIterator *it, DocItem *item, float *out)
{
	if (it->remaining) {
		double d;
		const char *q = decimal_fast(it->p, it->end, &d);
		if (q && q != it->p && ends_element(*q) && float_rounds_once(d)) {
			*out = (float)d;
			iterator_advance(it, q);
			return true;
		}
	}
	if (!doc_next(it, item) || item->type != DOC_NUMBER)
		return false;
	*out = doc_item_float(item);
	return true;
}

bool json_flat_int64(DocIterator *it, DocItem *item, int64_t *out)
{
	if (it->remaining) {
		const char *p = it->p;
		bool negative = *p == '-';
		uint64_t n = 0;
		int digits = 0;
		p += negative;
		for (; is_digit(*p) && digits < 18; p++, digits++)
			n = n * 10 + (uint64_t)(*p - '0');
		if (digits > 0 && ends_element(*p)) {
			*out = negative ? -(int64_t)n : (int64_t)n;
			iterator_advance(it, p);
			return true;
		}
	}
	return doc_next(it, item) && doc_item_int64(item, out);
}

bool json_text_int64(const char *text, size_t length, int64_t *out)
{
	const char *p = text, *end = text + length;
	bool negative = false;
	uint64_t n = 0, limit;
	if (p < end && *p == '-') {
		negative = true;
		p++;
	}
	if (p == end)
		return false;
	limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; p < end; p++) {
		if (!is_digit(*p))
			return false;
		if (n > (limit - (uint64_t)(*p - '0')) / 10)
			return false;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	*out = negative ? (int64_t)(0 - n) : (int64_t)n;
	return true;
}
