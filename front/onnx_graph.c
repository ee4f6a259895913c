/*
 * The graph around an ONNX tree ensemble: find the one ensemble node, and accept the
 * nodes around it where their meaning is clear: Identity and Cast (to float or double)
 * on the input or the scores, ZipMap and arithmetic with a neutral constant (x * 1, as
 * onnxmltools writes) on the scores, Exp on scores without post_transform, anything on
 * the classifier's label output. Any other node on those paths is refused by name. The
 * ensemble itself is front/onnx.c's.
 */
#include "front/onnx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "node 'name' (Op)", or "node 3 (Op)" for a node without a name. */
static const char *node_title(const Onnx__GraphProto *g, size_t i, char *buf, size_t size)
{
	const Node *n = g->node[i];
	if (n->name && *n->name)
		snprintf(buf, size, "node '%s' (%s)", n->name, onnx_text(n->op_type));
	else
		snprintf(buf, size, "node %zu (%s)", i, onnx_text(n->op_type));
	return buf;
}

/* Names of tensors, for following them through the graph. */
typedef struct Names {
	const char **names;
	size_t count, cap;
} Names;

static bool names_has(const Names *s, const char *name)
{
	for (size_t i = 0; i < s->count; i++)
		if (strcmp(s->names[i], name) == 0)
			return true;
	return false;
}

static void names_add(Names *s, const char *name)
{
	GROW(s->names, s->count + 1, s->cap);
	s->names[s->count++] = name;
}

/* Whether node n reads any tensor of s. */
static bool reads_any(const Node *n, const Names *s)
{
	for (size_t i = 0; i < n->n_input; i++)
		if (names_has(s, onnx_text(n->input[i])))
			return true;
	return false;
}

static bool is_op(const Node *n, const char *op) { return strcmp(onnx_text(n->op_type), op) == 0; }

/* A Cast node's target type, or 0. */
static int64_t cast_to(const Node *n)
{
	for (size_t i = 0; i < n->n_attribute; i++)
		if (strcmp(onnx_text(n->attribute[i]->name), "to") == 0)
			return n->attribute[i]->i;
	return 0;
}

static bool is_real_type(int64_t type)
{
	return type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || type == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
}

/* The graph's one tree ensemble node, or SIZE_MAX after an error. */
static size_t find_ensemble(Reader *r, const Onnx__GraphProto *g)
{
	static const char *const ops[] = {"TreeEnsembleRegressor", "TreeEnsembleClassifier", "TreeEnsemble"};
	size_t found = SIZE_MAX;
	char a[128], b[128];
	for (size_t i = 0; i < g->n_node; i++) {
		const Node *n = g->node[i];
		bool ml = strcmp(onnx_text(n->domain), "ai.onnx.ml") == 0;
		for (size_t k = 0; k < COUNT_OF(ops); k++) {
			if (!ml || !is_op(n, ops[k]))
				continue;
			if (found != SIZE_MAX) {
				onnx_fail(r, "the graph has two tree ensembles, %s and %s; grove reads models with one", node_title(g, found, a, sizeof a),
				     node_title(g, i, b, sizeof b));
				return SIZE_MAX;
			}
			found = i;
		}
	}
	if (found == SIZE_MAX)
		onnx_fail(r, "the graph has no tree ensemble (an ai.onnx.ml TreeEnsembleRegressor, TreeEnsembleClassifier or TreeEnsemble node)");
	return found;
}

/*
 * Follow the ensemble's input back to a graph input through Identity and Cast nodes
 * (marked in *path): its width (0 when unknown) and whether rows stay double.
 */
static bool trace_input(Reader *r, const Onnx__GraphProto *g, const Node *ensemble, bool *path, uint32_t *width, bool *double_rows)
{
	const char *x = ensemble->n_input ? onnx_text(ensemble->input[0]) : "";
	char title[128];
	*double_rows = true;
	for (size_t steps = 0; steps <= g->n_node; steps++) {
		size_t producer = SIZE_MAX;
		for (size_t i = 0; i < g->n_input; i++) {
			const Onnx__ValueInfoProto *in = g->input[i];
			const Onnx__TypeProto__Tensor *t;
			if (strcmp(onnx_text(in->name), x) != 0)
				continue;
			t = in->type && in->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? in->type->tensor_type : NULL;
			if (!t || !is_real_type(t->elem_type))
				return onnx_fail(r, "graph input '%s': grove reads tensors of float or double", x);
			*double_rows &= t->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
			*width = 0;
			if (t->shape && t->shape->n_dim == 2 && t->shape->dim[1]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
				int64_t w = t->shape->dim[1]->dim_value;
				if (w < 1 || w > INT32_MAX)
					return onnx_fail(r, "graph input '%s': %lld columns", x, (long long)w);
				*width = (uint32_t)w;
			}
			return true;
		}
		for (size_t i = 0; i < g->n_node && producer == SIZE_MAX; i++)
			for (size_t o = 0; o < g->node[i]->n_output; o++)
				if (strcmp(onnx_text(g->node[i]->output[o]), x) == 0)
					producer = i;
		if (producer == SIZE_MAX)
			return onnx_fail(r, "the tree ensemble's input '%s' is neither a graph input nor a node's output", x);
		if (!(is_op(g->node[producer], "Identity") || (is_op(g->node[producer], "Cast") && is_real_type(cast_to(g->node[producer])))))
			return onnx_fail(r, "%s computes the tree ensemble's input, which grove cannot express",
			            node_title(g, producer, title, sizeof title));
		if (is_op(g->node[producer], "Cast"))
			*double_rows &= cast_to(g->node[producer]) == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
		path[producer] = true;
		x = g->node[producer]->n_input ? onnx_text(g->node[producer]->input[0]) : "";
	}
	return onnx_fail(r, "the tree ensemble's input is computed in a cycle");
}

/* The one value of a single-element float or double initializer `name`; NAN if there is no such initializer. */
static double constant(const Onnx__GraphProto *g, const char *name)
{
	for (size_t i = 0; i < g->n_initializer; i++) {
		const Tensor *t = g->initializer[i];
		float f;
		double d;
		if (strcmp(onnx_text(t->name), name) != 0)
			continue;
		if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && t->n_float_data == 1)
			return t->float_data[0];
		if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE && t->n_double_data == 1)
			return t->double_data[0];
		if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && t->has_raw_data && t->raw_data.len == 4)
			return memcpy(&f, t->raw_data.data, 4), f;
		if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE && t->has_raw_data && t->raw_data.len == 8)
			return memcpy(&d, t->raw_data.data, 8), d;
	}
	return NAN;
}

/* Whether n passes the scores on unchanged: Identity, ZipMap, Cast to float or double, x * 1, x / 1, x + 0, x - 0. */
static bool keeps_scores(const Onnx__GraphProto *g, const Node *n, const Names *scores)
{
	double neutral = is_op(n, "Mul") || is_op(n, "Div") ? 1 : is_op(n, "Add") || is_op(n, "Sub") ? 0 : NAN;
	if (is_op(n, "Identity") || is_op(n, "ZipMap") || (is_op(n, "Cast") && is_real_type(cast_to(n))))
		return true;
	if (isnan(neutral) || n->n_input != 2 || !names_has(scores, onnx_text(n->input[0])))
		return false;
	return constant(g, onnx_text(n->input[1])) == neutral;
}

/*
 * The nodes after the ensemble: those on its scores must keep their meaning (Identity,
 * Cast to float or double, ZipMap, arithmetic with a neutral constant; Exp becomes the
 * transform); those on the label are
 * ignored; any other node is refused.
 */
static bool check_outputs(Reader *r, const Onnx__GraphProto *g, size_t ensemble, const bool *path, HForest *f)
{
	const Node *e = g->node[ensemble];
	size_t scores_output = strcmp(r->op, "TreeEnsembleClassifier") == 0 ? 1 : 0;
	Names scores = {0}, labels = {0};
	char title[128];
	bool ok = false;

	if (e->n_output <= scores_output) {
		onnx_fail(r, "%s: no scores output", r->op);
		goto done;
	}
	names_add(&scores, onnx_text(e->output[scores_output]));
	for (size_t o = 0; o < e->n_output; o++)
		if (o != scores_output)
			names_add(&labels, onnx_text(e->output[o]));
	for (size_t i = 0; i < g->n_node; i++) {
		const Node *n = g->node[i];
		bool on_scores = reads_any(n, &scores);
		if (i == ensemble || path[i])
			continue;
		node_title(g, i, title, sizeof title);
		if (on_scores && is_op(n, "Exp") && f->transform == HTRANSFORM_IDENTITY) {
			f->transform = HTRANSFORM_EXP;
		} else if (on_scores && !keeps_scores(g, n, &scores)) {
			onnx_fail(r, "%s reads the tree ensemble's scores: grove cannot express what it computes", title);
			goto done;
		} else if (!on_scores && !reads_any(n, &labels)) {
			onnx_fail(r, "%s is not connected to the tree ensemble", title);
			goto done;
		}
		for (size_t o = 0; o < n->n_output; o++)
			names_add(on_scores ? &scores : &labels, onnx_text(n->output[o]));
	}
	for (size_t o = 0; o < g->n_output && !ok; o++)
		ok = names_has(&scores, onnx_text(g->output[o]->name));
	if (!ok)
		onnx_fail(r, "none of the graph's outputs is the tree ensemble's scores");
done:
	free(scores.names);
	free(labels.names);
	return ok;
}

/* protobuf-c allocates through the compiler's allocation, so that running out of memory is reported as such. */
static void *pb_alloc(void *data, size_t size)
{
	(void)data;
	return xmalloc(size);
}

static void pb_free(void *data, void *p)
{
	(void)data;
	free(p);
}

static ProtobufCAllocator allocator = {.alloc = pb_alloc, .free = pb_free};

HForest *front_read_onnx(const char *name, const char *bytes, size_t len, bool mapped, Error *e)
{
	Reader r = {.name = name, .e = e};
	Onnx__ModelProto *model = onnx__model_proto__unpack(&allocator, len, (const uint8_t *)bytes);
	const Onnx__GraphProto *g;
	HForest *f = NULL;
	bool *path = NULL, double_rows;
	uint32_t width;
	size_t ensemble;

	(void)mapped; /* protobuf-c unpacks the whole file at once */
	if (!model) {
		error_set(e, "%s: not an ONNX model: the protobuf cannot be decoded (a truncated or corrupt file)", name);
		return NULL;
	}
	g = model->graph;
	if (!g) {
		onnx_fail(&r, "the model has no graph");
		goto done;
	}
	if ((ensemble = find_ensemble(&r, g)) == SIZE_MAX)
		goto done;
	r.node = g->node[ensemble];
	r.op = onnx_text(r.node->op_type);
	path = xcalloc(g->n_node, sizeof *path);
	if (!trace_input(&r, g, r.node, path, &width, &double_rows))
		goto done;
	f = onnx_read_ensemble(&r, len, width, double_rows);
	if (f && !check_outputs(&r, g, ensemble, path, f)) {
		hir_forest_free(f);
		f = NULL;
	}
done:
	free(path);
	free(r.items);
	free(r.weights);
	free(r.roots);
	free(r.stamp);
	free(r.order);
	free(r.nodes);
	onnx__model_proto__free_unpacked(model, &allocator);
	return f;
}
