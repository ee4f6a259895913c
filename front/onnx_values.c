/*
 * The tree ensemble's attributes as numbers (front/onnx.h): a list of ints or floats, or
 * a tensor (typed fields or raw little-endian bytes), read one element after the other
 * straight from the file, so that no attribute is ever copied whole.
 */
#include "front/onnx.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const Attribute *onnx_attribute(const Reader *r, const char *name)
{
	for (size_t i = 0; i < r->node->num_attributes; i++)
		if (pb_equal(r->node->attributes[i].name, name))
			return &r->node->attributes[i];
	return NULL;
}

/* Count the elements of field `number` of message into *count, naming attribute `name` if the encoding is bad. */
static bool count_elements(Reader *r, const char *name, PbCursor message, uint32_t number, PbWire wire, size_t *count)
{
	Error detail;
	if (!pb_repeated_count(message, number, wire, count, &detail))
		return onnx_fail(r, "not an ONNX model: the protobuf cannot be decoded: %s.%s: %s", r->op, name, detail.message);
	return true;
}

/* A tensor attribute's values: float, double, uint8, int32 or int64, typed or raw. */
static bool read_tensor(Reader *r, const Attribute *a, Values *v)
{
	static const struct {
		int type;
		ValueKind kind;
		uint32_t field; /* of the typed data */
		PbWire wire;
	} types[] = {
		{ONNX_FLOAT, VALUES_FLOAT, 4, PB_FIXED32}, {ONNX_DOUBLE, VALUES_DOUBLE, 10, PB_FIXED64},
		{ONNX_UINT8, VALUES_UINT8, 5, PB_VARINT}, {ONNX_INT32, VALUES_INT32, 5, PB_VARINT}, {ONNX_INT64, VALUES_INT64, 7, PB_VARINT},
	};
	Tensor t;
	char place[96];
	size_t k = 0, typed, dims, shape = 1;
	PbRepeated it;
	snprintf(place, sizeof place, "%s.%s", r->op, v->name);
	if (!onnx_tensor_parse(r->base, a->t, place, &t, r->e))
		return false;
	while (k < COUNT_OF(types) && types[k].type != t.data_type)
		k++;
	if (k == COUNT_OF(types))
		return onnx_fail(r, "%s: tensor of element type %d (expected float, double or an integer type)", place, (int)t.data_type);
	if (t.data_location == 1)
		return onnx_fail(r, "%s: the tensor's data is in an external file, which grove does not read", place);
	if (!onnx_tensor_check_data(&t, types[k].field, place, r->e)) {
		error_prefix(r->e, r->name);
		return false;
	}
	v->kind = types[k].kind;
	if (!count_elements(r, v->name, t.message, 1, PB_VARINT, &dims) || !count_elements(r, v->name, t.message, types[k].field, types[k].wire, &typed))
		return false;
	it = pb_repeated(t.message, 1, PB_VARINT);
	for (size_t d = 0; d < dims; d++) {
		int64_t n = (int64_t)pb_repeated_next(&it);
		if (n < 0 || (n && shape > SIZE_MAX / (size_t)n))
			return onnx_fail(r, "%s: dimension %zu is %lld", place, d, (long long)n);
		shape *= (size_t)n;
	}
	if (t.has_raw_data) {
		size_t size = onnx_kind_sizes[v->kind];
		if (t.raw_data.len % size || (dims && t.raw_data.len / size != shape))
			return onnx_fail(r, "%s: %zu bytes of raw data for %zu elements of %zu bytes", place, t.raw_data.len, shape, size);
		v->bytes = t.raw_data.data;
		v->count = t.raw_data.len / size;
	} else {
		if (dims && typed != shape)
			return onnx_fail(r, "%s: %zu elements, but the tensor's shape holds %zu", place, typed, shape);
		v->count = typed;
		v->items = pb_repeated(t.message, types[k].field, types[k].wire);
	}
	return true;
}

bool onnx_read_values(Reader *r, const char *name, bool as_tensor, bool required, Values *v, bool *is_double)
{
	char tensor_name[48];
	const Attribute *a = onnx_attribute(r, name), *t = NULL;
	memset(v, 0, sizeof *v);
	snprintf(v->name, sizeof v->name, "%s", name);
	if (as_tensor) {
		snprintf(tensor_name, sizeof tensor_name, "%s_as_tensor", name);
		t = onnx_attribute(r, tensor_name);
		if (a && t)
			return onnx_fail(r, "%s: both %s and %s are given", r->op, name, tensor_name);
		if (t) {
			a = t;
			snprintf(v->name, sizeof v->name, "%s", tensor_name);
		}
	}
	if (!a)
		return required ? onnx_fail(r, "%s: missing attribute '%s'", r->op, name) : true;
	v->present = true;
	switch (a->value) {
	case ATTR_TENSOR:
		if (!read_tensor(r, a, v))
			return false;
		break;
	case ATTR_FLOATS:
		v->kind = VALUES_FLOAT;
		v->count = a->count;
		v->items = pb_repeated(a->message, ATTR_FLOATS, PB_FIXED32);
		break;
	case ATTR_INTS:
	case 0: /* an empty list, of no type */
		v->kind = VALUES_INT64;
		v->count = a->count;
		v->items = pb_repeated(a->message, ATTR_INTS, PB_VARINT);
		break;
	default:
		return onnx_fail(r, "%s.%s: expected a list of ints or floats or a tensor, found %s", r->op, v->name,
		                 onnx_attribute_field_name(a->value));
	}
	if (is_double)
		*is_double = v->kind == VALUES_DOUBLE;
	v->kept = v->bytes ? v->bytes : v->items.message.p;
	return true;
}

void onnx_release(const Reader *r, const uint8_t **kept, const uint8_t *at)
{
	uintptr_t page, from, to;
	if (!r->mapped || !*kept || at < *kept || at - *kept < (1 << 20))
		return;
	page = (uintptr_t)sysconf(_SC_PAGESIZE);
	from = ((uintptr_t)*kept + page - 1) & ~(page - 1);
	to = (uintptr_t)at & ~(page - 1);
	/* Clean pages of a private file mapping, all behind the reader: a later read maps the file's again. */
	if (from < to)
		madvise((void *)from, to - from, MADV_DONTNEED);
	*kept = at;
}

void onnx_values_release(const Reader *r, Values *v)
{
	const uint8_t *at;
	if (!v->present)
		return;
	if (v->bytes)
		at = v->bytes + v->next * onnx_kind_sizes[v->kind];
	else
		at = v->items.p < v->items.end ? v->items.p : v->items.message.p;
	onnx_release(r, &v->kept, at);
}

/* Whether v has n more elements, and they are typed ones that pb_repeated_take reads as bits of `kind`. */
static bool typed_run(const Values *v, size_t n, ValueKind kind)
{
	if (n > v->count - v->next)
		die("reading %zu elements past the %zu of %s", n, v->count - v->next, v->name);
	return !v->bytes && v->kind == kind;
}

void onnx_values_take_ints(Values *v, size_t n, int64_t *out)
{
	if (!typed_run(v, n, VALUES_INT64)) {
		for (size_t i = 0; i < n; i++)
			out[i] = onnx_values_next_int(v);
		return;
	}
	pb_repeated_take(&v->items, n, (uint64_t *)out);
	v->next += n;
}

void onnx_values_take(Values *v, size_t n, double *out)
{
	uint64_t bits[256];
	float f;
	if (!typed_run(v, n, VALUES_FLOAT)) {
		for (size_t i = 0; i < n; i++)
			out[i] = onnx_values_next(v);
		return;
	}
	for (size_t i = 0; i < n; i += COUNT_OF(bits)) {
		size_t m = n - i < COUNT_OF(bits) ? n - i : COUNT_OF(bits);
		pb_repeated_take(&v->items, m, bits);
		for (size_t k = 0; k < m; k++) {
			uint32_t low = (uint32_t)bits[k];
			out[i + k] = (memcpy(&f, &low, 4), f);
		}
	}
	v->next += n;
}

bool onnx_read_int(Reader *r, const char *name, int64_t min, int64_t max, int64_t otherwise, int64_t *out)
{
	const Attribute *a = onnx_attribute(r, name);
	*out = otherwise;
	if (!a)
		return true;
	if (a->value != ATTR_INT)
		return onnx_fail(r, "%s.%s: expected an integer", r->op, name);
	*out = a->i;
	if (*out < min || *out > max)
		return onnx_fail(r, "%s.%s: %lld is out of range [%lld, %lld]", r->op, name, (long long)*out, (long long)min, (long long)max);
	return true;
}

bool onnx_read_string(Reader *r, const char *name, const char *otherwise, char *buf, size_t size)
{
	const Attribute *a = onnx_attribute(r, name);
	if (!a) {
		snprintf(buf, size, "%s", otherwise);
		return true;
	}
	if (a->value != ATTR_STRING)
		return onnx_fail(r, "%s.%s: expected a string", r->op, name);
	snprintf(buf, size, "%.*s", (int)(a->s.len < size ? a->s.len : size - 1), (const char *)a->s.data);
	return true;
}

bool onnx_read_strings(Reader *r, const Attribute *a, PbRepeated *items, size_t *count)
{
	if (a->value != ATTR_STRINGS && a->value != 0)
		return onnx_fail(r, "%s.%.*s: expected a list of strings, found %s", r->op, PB_PRINT(a->name),
		                 onnx_attribute_field_name(a->value));
	*items = pb_repeated(a->message, ATTR_STRINGS, PB_LEN);
	*count = a->count;
	return true;
}
