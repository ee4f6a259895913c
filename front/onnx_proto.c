/*
 * ONNX's messages, parsed in place (front/onnx.h): ModelProto -> GraphProto -> NodeProto
 * -> AttributeProto, ValueInfoProto -> TypeProto, TensorProto. Fields grove does not read
 * are skipped; the long repeated fields of attributes and tensors are only found here,
 * and read by their users through PbRepeated.
 *
 * Where protobuf would accept two copies of a field (the last copy of a scalar or of a
 * oneof winning, two copies of a message merged), another ONNX reader could read the
 * file differently: grove refuses such a file, naming the field. So it refuses a node
 * with two attributes of one name (as onnxruntime and onnx.checker do) and an attribute
 * holding two kinds of value (as onnx.checker does).
 *
 * A graph of a tree ensemble has a few nodes; grove reads graphs of up to MAX_ENTRIES
 * nodes, inputs, outputs, initializers and attributes together, which bounds the memory
 * and the time the graph's checks take whatever the file holds.
 */
#include "front/onnx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENTRIES (1u << 14)

static const struct {
	uint32_t code, field;
	const char *type, *name;
} attribute_types[] = {
#define ONNX_ATTRIBUTE_ROW(type, code, field, name) {code, field, #type, name},
	ONNX_ATTRIBUTE_TYPES(ONNX_ATTRIBUTE_ROW)
#undef ONNX_ATTRIBUTE_ROW
};

const char *onnx_attribute_field_name(uint32_t value)
{
	for (size_t k = 0; k < COUNT_OF(attribute_types); k++)
		if (attribute_types[k].field == value)
			return attribute_types[k].name;
	return "nothing";
}

typedef struct Parse {
	Graph *g;
	const uint8_t *base;
	Error *e;
} Parse;

/* The next field of c, or -1 after reporting a bad encoding at place. */
static int next(Parse *p, PbCursor *c, PbField *f, const char *place)
{
	Error detail;
	int got = pb_next(c, f, &detail);
	if (got < 0)
		error_set(p->e, "not an ONNX model: the protobuf cannot be decoded: %s: %s", place, detail.message);
	return got;
}

/*
 * Field f, called name, must be of wire type `wire`; a singular one (seen not NULL,
 * numbers below 32) must be there once.
 */
static bool check_field(Parse *p, const PbField *f, PbWire wire, uint32_t *seen, const char *place, const char *name)
{
	if (f->wire != wire)
		return error_set(p->e, "not an ONNX model: the protobuf cannot be decoded: %s: at byte %zu: %s (field %u) has wire type "
		                 "%d, not %d", place, f->offset, name, f->number, (int)f->wire, (int)wire);
	if (seen && (*seen & (UINT32_C(1) << f->number)))
		return error_set(p->e, "%s: %s is written twice (a protobuf reader takes the last copy, or merges two messages, silently); grove refuses such a file",
		                 place, name);
	if (seen)
		*seen |= UINT32_C(1) << f->number;
	return true;
}

/* One more node, input, output, initializer or attribute. */
static bool count_entry(Parse *p, const char *place)
{
	if (++p->g->entries > MAX_ENTRIES)
		return error_set(p->e, "%s: the graph has more than %u nodes, inputs, outputs, initializers and attributes together; "
		                 "grove reads graphs of tree ensembles, which have a few", place, MAX_ENTRIES);
	return true;
}

/* AttributeProto bytes into *a: its name, scalar values, and which field holds its value (and how many). */
static bool parse_attribute(Parse *p, PbBytes bytes, const char *place, Attribute *a)
{
	PbCursor c = pb_cursor(p->base, bytes);
	PbField f;
	uint32_t seen = 0, present = 0, first = 0, second = 0;
	uint64_t type = 0;
	size_t counts[3] = {0}; /* elements of floats, ints, strings */
	int got;
	memset(a, 0, sizeof *a);
	a->message = c;
	while ((got = next(p, &c, &f, place)) > 0) {
		bool ok = true;
		switch (f.number) {
		case 1: ok = check_field(p, &f, PB_LEN, &seen, place, "name"), a->name = f.bytes; break;
		case 20: ok = check_field(p, &f, PB_VARINT, &seen, place, "type"), type = f.value; break;
		case ATTR_FLOAT: ok = check_field(p, &f, PB_FIXED32, &seen, place, "f"); break;
		case ATTR_INT: ok = check_field(p, &f, PB_VARINT, &seen, place, "i"), a->i = (int64_t)f.value; break;
		case ATTR_STRING: ok = check_field(p, &f, PB_LEN, &seen, place, "s"), a->s = f.bytes; break;
		case ATTR_TENSOR: ok = check_field(p, &f, PB_LEN, &seen, place, "t"), a->t = f.bytes; break;
		case ATTR_GRAPH: ok = check_field(p, &f, PB_LEN, &seen, place, "g"); break;
		case ATTR_TYPE_PROTO: ok = check_field(p, &f, PB_LEN, &seen, place, "tp"); break;
		case ATTR_SPARSE_TENSOR: ok = check_field(p, &f, PB_LEN, &seen, place, "sparse_tensor"); break;
		case ATTR_FLOATS:
		case ATTR_INTS:
		case ATTR_STRINGS: {
			static const PbWire wires[] = {PB_FIXED32, PB_VARINT, PB_LEN};
			PbWire wire = wires[f.number - ATTR_FLOATS];
			if (!pb_count_field(&f, wire, &counts[f.number - ATTR_FLOATS]))
				return error_set(p->e, "not an ONNX model: the protobuf cannot be decoded: %s: at byte %zu: %s (field %u) holds "
				                 "%s", place, f.offset, onnx_attribute_field_name(f.number), f.number,
				                 f.wire == PB_LEN ? "a packed run that is not whole elements" : "elements of another wire type");
			if (f.wire == wire)
				pb_skip_repeats(&c, (uint8_t)(f.number << 3 | wire), wire, &counts[f.number - ATTR_FLOATS]);
			break;
		}
		case ATTR_TENSORS: case ATTR_GRAPHS: case ATTR_SPARSE_TENSORS: case ATTR_TYPE_PROTOS: break;
		default: continue;
		}
		if (!ok)
			return false;
		if (f.number != 1 && f.number != 20)
			present |= UINT32_C(1) << f.number;
	}
	if (got < 0)
		return false;
	for (uint32_t k = 0; k < 32; k++)
		if (present & (UINT32_C(1) << k))
			*(first ? &second : &first) = k;
	if (second)
		return error_set(p->e, "%s ('%.*s'): the attribute holds both %s and %s (onnx.checker refuses an attribute with more than "
		                 "one value)", place, PB_PRINT(a->name), onnx_attribute_field_name(first), onnx_attribute_field_name(second));
	a->value = first;
	if (type) {
		size_t k = 0;
		while (k < COUNT_OF(attribute_types) && attribute_types[k].code != type)
			k++;
		if (k == COUNT_OF(attribute_types))
			return error_set(p->e, "%s ('%.*s'): unknown attribute type %llu", place, PB_PRINT(a->name), (unsigned long long)type);
		if (first && first != attribute_types[k].field)
			return error_set(p->e, "%s ('%.*s'): the attribute's type is %s, but it holds %s", place, PB_PRINT(a->name),
			                 attribute_types[k].type, onnx_attribute_field_name(first));
		a->value = attribute_types[k].field;
	}
	if (a->value >= ATTR_FLOATS && a->value <= ATTR_STRINGS)
		a->count = counts[a->value - ATTR_FLOATS];
	return true;
}

/* Order of names: by length, then bytes. */
static int compare_names(const void *x, const void *y)
{
	const PbBytes *a = x, *b = y;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->len ? memcmp(a->data, b->data, a->len) : 0;
}

/* No two attributes of node n may have one name (onnxruntime and onnx.checker refuse that). */
static bool check_attribute_names(Parse *p, const Node *n, const char *place)
{
	PbBytes *names;
	bool ok = true;
	if (n->num_attributes < 2)
		return true;
	names = xmalloc(n->num_attributes * sizeof *names);
	for (size_t k = 0; k < n->num_attributes; k++)
		names[k] = n->attributes[k].name;
	qsort(names, n->num_attributes, sizeof *names, compare_names);
	for (size_t k = 1; k < n->num_attributes && ok; k++)
		if (compare_names(&names[k - 1], &names[k]) == 0)
			ok = error_set(p->e, "%s (%.*s): two attributes named '%.*s' (onnxruntime and onnx.checker refuse such a node)", place,
			               PB_PRINT(n->op_type), PB_PRINT(names[k]));
	free(names);
	return ok;
}

/* NodeProto bytes into *n (zeroed): names, inputs, outputs, attributes. */
static bool parse_node(Parse *p, PbBytes bytes, const char *place, Node *n)
{
	PbCursor c = pb_cursor(p->base, bytes);
	PbField f;
	uint32_t seen = 0;
	size_t inputs_cap = 0, outputs_cap = 0, attributes_cap = 0;
	char inner[96];
	int got;
	while ((got = next(p, &c, &f, place)) > 0) {
		bool ok = true;
		switch (f.number) {
		case 1:
			if ((ok = check_field(p, &f, PB_LEN, NULL, place, "input") && count_entry(p, place))) {
				GROW(n->inputs, n->num_inputs + 1, inputs_cap);
				n->inputs[n->num_inputs++] = f.bytes;
			}
			break;
		case 2:
			if ((ok = check_field(p, &f, PB_LEN, NULL, place, "output") && count_entry(p, place))) {
				GROW(n->outputs, n->num_outputs + 1, outputs_cap);
				n->outputs[n->num_outputs++] = f.bytes;
			}
			break;
		case 3: ok = check_field(p, &f, PB_LEN, &seen, place, "name"), n->name = f.bytes; break;
		case 4: ok = check_field(p, &f, PB_LEN, &seen, place, "op_type"), n->op_type = f.bytes; break;
		case 7: ok = check_field(p, &f, PB_LEN, &seen, place, "domain"), n->domain = f.bytes; break;
		case 5:
			snprintf(inner, sizeof inner, "%s.attribute[%zu]", place, n->num_attributes);
			if ((ok = check_field(p, &f, PB_LEN, NULL, place, "attribute") && count_entry(p, place))) {
				GROW(n->attributes, n->num_attributes + 1, attributes_cap);
				ok = parse_attribute(p, f.bytes, inner, &n->attributes[n->num_attributes++]);
			}
			break;
		default: break;
		}
		if (!ok)
			return false;
	}
	return got == 0 && check_attribute_names(p, n, place);
}

/* TensorShapeProto bytes: v->width, the second dimension's value, when there are two and it is a number. */
static bool parse_shape(Parse *p, PbBytes bytes, const char *place, ValueInfo *v)
{
	PbCursor c = pb_cursor(p->base, bytes);
	PbField f;
	size_t rank = 0;
	int got;
	while ((got = next(p, &c, &f, place)) > 0) {
		PbCursor d;
		PbField g;
		uint32_t seen = 0;
		if (f.number != 1)
			continue;
		if (!check_field(p, &f, PB_LEN, NULL, place, "dim") || !count_entry(p, place))
			return false;
		d = pb_cursor(p->base, f.bytes);
		while ((got = next(p, &d, &g, place)) > 0) {
			if (g.number != 1 && g.number != 2)
				continue;
			if (seen)
				return error_set(p->e, "%s: dimension %zu holds two values (protobuf readers keep the last one of its oneof, "
				                 "silently); grove refuses such a file", place, rank);
			if (!check_field(p, &g, g.number == 1 ? PB_VARINT : PB_LEN, &seen, place, g.number == 1 ? "dim_value" : "dim_param"))
				return false;
			if (rank == 1 && g.number == 1)
				v->has_width = true, v->width = (int64_t)g.value;
		}
		if (got < 0)
			return false;
		rank++;
	}
	if (rank != 2)
		v->has_width = false;
	return got == 0;
}

/* TypeProto: whether it is a tensor, its element type and shape. */
static bool parse_type(Parse *p, PbBytes bytes, const char *place, ValueInfo *v)
{
	PbCursor c = pb_cursor(p->base, bytes);
	PbField f;
	bool has_value = false;
	int got;
	while ((got = next(p, &c, &f, place)) > 0) {
		PbCursor t;
		PbField g;
		uint32_t seen = 0;
		if (f.number != 1 && f.number != 4 && f.number != 5 && f.number != 8 && f.number != 9)
			continue;
		if (has_value)
			return error_set(p->e, "%s: the type holds two values (protobuf readers keep the last one of its oneof, silently); "
			                 "grove refuses such a file", place);
		has_value = true;
		if (!check_field(p, &f, PB_LEN, NULL, place, "type"))
			return false;
		if (f.number != 1)
			continue;
		v->tensor = true;
		t = pb_cursor(p->base, f.bytes);
		while ((got = next(p, &t, &g, place)) > 0) {
			bool ok = true;
			switch (g.number) {
			case 1: ok = check_field(p, &g, PB_VARINT, &seen, place, "elem_type"), v->elem_type = (int32_t)g.value; break;
			case 2: ok = check_field(p, &g, PB_LEN, &seen, place, "shape") && parse_shape(p, g.bytes, place, v); break;
			default: break;
			}
			if (!ok)
				return false;
		}
		if (got < 0)
			return false;
	}
	return got == 0;
}

/* ValueInfoProto bytes into *v: its name and what grove needs of its type. */
static bool parse_value_info(Parse *p, PbBytes bytes, const char *place, ValueInfo *v)
{
	PbCursor c = pb_cursor(p->base, bytes);
	PbField f;
	uint32_t seen = 0;
	int got;
	memset(v, 0, sizeof *v);
	while ((got = next(p, &c, &f, place)) > 0) {
		bool ok = true;
		switch (f.number) {
		case 1: ok = check_field(p, &f, PB_LEN, &seen, place, "name"), v->name = f.bytes; break;
		case 2: ok = check_field(p, &f, PB_LEN, &seen, place, "type") && parse_type(p, f.bytes, place, v); break;
		default: break;
		}
		if (!ok)
			return false;
	}
	return got == 0;
}

/* TensorProto's data fields, by number; NULL for another field. */
static const char *tensor_data_field(uint32_t number)
{
	static const char *const names[] = {[4] = "float_data", [5] = "int32_data", [6] = "string_data", [7] = "int64_data",
	                                     [9] = "raw_data", [10] = "double_data", [11] = "uint64_data"};
	return number < COUNT_OF(names) ? names[number] : NULL;
}

bool onnx_tensor_check_data(const Tensor *t, uint32_t field, const char *place, Error *e)
{
	uint32_t used = t->has_raw_data ? 9 : field, others = t->data_fields & ~(UINT32_C(1) << used);
	for (uint32_t k = 0; k < 32; k++)
		if (others & (UINT32_C(1) << k))
			return error_set(e, "%s: the tensor holds %s besides %s (onnxruntime and onnx.checker refuse a tensor with "
			                 "two fields of data)", place, tensor_data_field(k), tensor_data_field(used));
	return true;
}

bool onnx_tensor_parse(const uint8_t *base, PbBytes bytes, const char *place, Tensor *t, Error *e)
{
	Graph none = {0};
	Parse p = {&none, base, e};
	PbCursor c = pb_cursor(base, bytes);
	PbField f;
	uint32_t seen = 0;
	int got;
	memset(t, 0, sizeof *t);
	t->message = c;
	while ((got = next(&p, &c, &f, place)) > 0) {
		bool ok = true;
		switch (f.number) {
		case 2: ok = check_field(&p, &f, PB_VARINT, &seen, place, "data_type"), t->data_type = (int32_t)f.value; break;
		case 8: ok = check_field(&p, &f, PB_LEN, &seen, place, "name"), t->name = f.bytes; break;
		case 9: ok = check_field(&p, &f, PB_LEN, &seen, place, "raw_data"), t->raw_data = f.bytes, t->has_raw_data = true; break;
		case 14: ok = check_field(&p, &f, PB_VARINT, &seen, place, "data_location"), t->data_location = (int32_t)f.value; break;
		default: break;
		}
		if (f.number < 32 && tensor_data_field(f.number))
			t->data_fields |= UINT32_C(1) << f.number;
		if (!ok)
			return false;
	}
	return got == 0;
}

/* GraphProto bytes into p->g: nodes, initializers, inputs, outputs. */
static bool parse_graph(Parse *p, PbBytes bytes)
{
	Graph *g = p->g;
	PbCursor c = pb_cursor(p->base, bytes);
	PbField f;
	char place[64];
	int got;
	while ((got = next(p, &c, &f, "graph")) > 0) {
		bool ok;
		switch (f.number) {
		case 1:
			snprintf(place, sizeof place, "graph.node[%zu]", g->num_nodes);
			if (!check_field(p, &f, PB_LEN, NULL, "graph", "node") || !count_entry(p, place))
				return false;
			GROW(g->nodes, g->num_nodes + 1, g->nodes_cap);
			memset(&g->nodes[g->num_nodes], 0, sizeof *g->nodes);
			ok = parse_node(p, f.bytes, place, &g->nodes[g->num_nodes++]);
			break;
		case 5:
			snprintf(place, sizeof place, "graph.initializer[%zu]", g->num_initializers);
			if (!check_field(p, &f, PB_LEN, NULL, "graph", "initializer") || !count_entry(p, place))
				return false;
			GROW(g->initializers, g->num_initializers + 1, g->initializers_cap);
			ok = onnx_tensor_parse(p->base, f.bytes, place, &g->initializers[g->num_initializers++], p->e);
			break;
		case 11:
		case 12: {
			ValueInfo v;
			bool input = f.number == 11;
			snprintf(place, sizeof place, "graph.%s[%zu]", input ? "input" : "output", input ? g->num_inputs : g->num_outputs);
			if (!check_field(p, &f, PB_LEN, NULL, "graph", input ? "input" : "output") || !count_entry(p, place) ||
			    !parse_value_info(p, f.bytes, place, &v))
				return false;
			if (input) {
				GROW(g->inputs, g->num_inputs + 1, g->inputs_cap);
				g->inputs[g->num_inputs++] = v;
			} else {
				GROW(g->outputs, g->num_outputs + 1, g->outputs_cap);
				g->outputs[g->num_outputs++] = v.name;
			}
			ok = true;
			break;
		}
		default: ok = true; break;
		}
		if (!ok)
			return false;
	}
	return got == 0;
}

bool onnx_graph_parse(Graph *g, const uint8_t *bytes, size_t len, Error *e)
{
	Parse p = {g, bytes, e};
	PbCursor c = pb_cursor(bytes, (PbBytes){bytes, len});
	PbField f;
	uint32_t seen = 0;
	int got;
	memset(g, 0, sizeof *g);
	g->base = bytes;
	while ((got = next(&p, &c, &f, "the model")) > 0) {
		if (f.number != 7)
			continue;
		if (!check_field(&p, &f, PB_LEN, &seen, "the model", "graph") || !parse_graph(&p, f.bytes))
			return false;
		g->present = true;
	}
	return got == 0;
}

void onnx_graph_free(Graph *g)
{
	for (size_t i = 0; i < g->num_nodes; i++) {
		free(g->nodes[i].inputs);
		free(g->nodes[i].outputs);
		free(g->nodes[i].attributes);
	}
	free(g->nodes);
	free(g->inputs);
	free(g->outputs);
	free(g->initializers);
	memset(g, 0, sizeof *g);
}
