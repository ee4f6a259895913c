/*
 * Unit tests of protobuf's wire format as front/protobuf.c reads it: fields of each wire
 * type, bad encodings refused with their offset, repeated numbers packed, unpacked and
 * both, the fast path over unpacked runs; and the ONNX reader's refusal of graphs past
 * its bound.
 */
#include "front/front.h"
#include "front/protobuf.h"

#include <stdlib.h>
#include <string.h>
#include "tests/unit/check.h"

#define BYTES(literal) ((PbBytes){(const uint8_t *)(literal), sizeof(literal) - 1})

#define expect_bad(bytes, text) expect_bad_at(bytes, text, __LINE__)

/* Reading bytes field by field must fail with a message containing `text`. */
static void expect_bad_at(PbBytes bytes, const char *text, int line)
{
	PbCursor c = pb_cursor(bytes.data, bytes);
	PbField f;
	Error e = {.message = {0}};
	int got;
	while ((got = pb_next(&c, &f, &e)) > 0)
		;
	if (got == 0 || !strstr(e.message, text)) {
		fprintf(stderr, "%s:%d: expected an error '%s', got %d '%s'\n", __FILE__, line, text, got, e.message);
		failures++;
	}
}

static void test_fields(void)
{
	/* 1: varint 300; 2: "abc"; 3: fixed32; 4: fixed64; 20 (a two-byte key): varint 1 */
	PbBytes m = BYTES("\x08\xac\x02\x12\x03" "abc" "\x1d\x01\x02\x03\x04" "\x21\x01\0\0\0\0\0\0\x80" "\xa0\x01\x01");
	PbCursor c = pb_cursor(m.data, m);
	PbField f;
	Error e;
	CHECK(pb_next(&c, &f, &e) == 1 && f.number == 1 && f.wire == PB_VARINT && f.value == 300);
	CHECK(pb_next(&c, &f, &e) == 1 && f.number == 2 && f.wire == PB_LEN && f.bytes.len == 3 && pb_equal(f.bytes, "abc"));
	CHECK(pb_next(&c, &f, &e) == 1 && f.number == 3 && f.wire == PB_FIXED32 && f.value == 0x04030201);
	CHECK(pb_next(&c, &f, &e) == 1 && f.number == 4 && f.wire == PB_FIXED64 && f.value == 0x8000000000000001);
	CHECK(pb_next(&c, &f, &e) == 1 && f.number == 20 && f.value == 1 && f.offset == 22);
	CHECK(pb_next(&c, &f, &e) == 0);
}

static void test_bad(void)
{
	expect_bad(BYTES("\x08"), "at byte 1: a varint runs past the end");
	expect_bad(BYTES("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), "a varint runs past the end");
	expect_bad(BYTES("\x12\x05" "ab"), "at byte 0: field 2 holds 5 bytes, past the end of its message (2 bytes left)");
	expect_bad(BYTES("\x12\xff\xff\xff\xff\xff\xff\xff\xff\x7f"), "past the end of its message");
	expect_bad(BYTES("\x1d\x01\x02"), "a fixed-size number runs past the end");
	expect_bad(BYTES("\x0b\x0c"), "field 1 has wire type 3, a group, which ONNX does not use");
	expect_bad(BYTES("\x0e"), "wire type 6, which protobuf does not define");
	expect_bad(BYTES("\x00\x01"), "field number 0");
	expect_bad(BYTES("\x08\x01\x80"), "at byte 2: a field's key runs past the end");
}

/* Field 8's elements: 1, 2 packed, 300 unpacked, 4, 5 packed, field 9 in between, 6 unpacked. */
static void test_repeated(void)
{
	PbBytes m = BYTES("\x42\x02\x01\x02" "\x40\xac\x02" "\x4a\x01x" "\x42\x02\x04\x05" "\x40\x06");
	static const uint64_t want[] = {1, 2, 300, 4, 5, 6};
	PbCursor c = pb_cursor(m.data, m);
	PbRepeated it;
	size_t count = 0;
	Error e;
	CHECK(pb_repeated_count(c, 8, PB_VARINT, &count, &e) && count == 6);
	it = pb_repeated(c, 8, PB_VARINT);
	for (size_t k = 0; k < COUNT_OF(want); k++)
		CHECK(pb_repeated_next(&it) == want[k]);
	CHECK(pb_repeated_count(c, 9, PB_LEN, &count, &e) && count == 1);
	it = pb_repeated(c, 9, PB_LEN);
	CHECK(pb_equal(pb_repeated_next_bytes(&it), "x"));
	/* field 8 as fixed32: a packed run of 2 bytes is no whole element */
	CHECK(!pb_repeated_count(c, 8, PB_FIXED32, &count, &e) && strstr(e.message, "does not hold whole ones"));
	/* a packed run ending inside a varint */
	CHECK(!pb_repeated_count(pb_cursor(m.data, BYTES("\x42\x02\x01\x82")), 8, PB_VARINT, &count, &e));
}

static void test_skip(void)
{
	/* four unpacked varints of field 8, then field 9 */
	PbBytes m = BYTES("\x40\x01\x40\xac\x02\x40\x03\x40\x04\x4a\x00");
	PbCursor c = pb_cursor(m.data, m);
	PbField f;
	Error e;
	size_t count = 0;
	CHECK(pb_next(&c, &f, &e) == 1 && pb_count_field(&f, PB_VARINT, &count));
	pb_skip_repeats(&c, 0x40, PB_VARINT, &count);
	CHECK(count == 4 && pb_next(&c, &f, &e) == 1 && f.number == 9);
	/* varints of 3, 8, 9 and 10 bytes (past a word's load) and 2, then field 9 */
	m = BYTES("\x40\x80\x80\x01\x40\xff\xff\xff\xff\xff\xff\xff\x7f\x40\xff\xff\xff\xff\xff\xff\xff\xff\x01"
	          "\x40\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x40\x80\x01\x4a\x00");
	c = pb_cursor(m.data, m);
	count = 0;
	pb_skip_repeats(&c, 0x40, PB_VARINT, &count);
	CHECK(count == 5 && pb_next(&c, &f, &e) == 1 && f.number == 9);
	/* stops before a varint cut short, for pb_next to report */
	m = BYTES("\x40\x01\x40\x81");
	c = pb_cursor(m.data, m);
	count = 0;
	pb_skip_repeats(&c, 0x40, PB_VARINT, &count);
	CHECK(count == 1 && pb_next(&c, &f, &e) < 0);
}

/* A graph of 20,000 empty nodes is past the reader's bound, and refused without reading them all into memory. */
static void test_graph_bound(void)
{
	size_t n = 20000, len = 6 + 2 * n;
	uint8_t *bytes = malloc(len);
	Error e = {.message = {0}};
	size_t k = 0;
	bytes[k++] = 0x3a; /* ModelProto.graph, length 2n */
	bytes[k++] = (uint8_t)(0x80 | ((2 * n) & 0x7f));
	bytes[k++] = (uint8_t)(0x80 | (((2 * n) >> 7) & 0x7f));
	bytes[k++] = (uint8_t)((2 * n) >> 14);
	for (size_t i = 0; i < n; i++) {
		bytes[k++] = 0x0a; /* GraphProto.node, empty */
		bytes[k++] = 0;
	}
	CHECK(!front_read_bytes("m.onnx", (const char *)bytes, k, "onnx", NULL, &e));
	CHECK(strstr(e.message, "graph.node[16384]: the graph has more than 16384 nodes"));
	free(bytes);
}

int main(void)
{
	test_fields();
	test_bad();
	test_repeated();
	test_skip();
	test_graph_bound();
	if (failures)
		fprintf(stderr, "protobuf: %d failures\n", failures);
	return failures != 0;
}
