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
static const char *node_title(const Graph *g, size_t i, char *buf, size_t size)
{
	const Node *n = &g->nodes[i];
	if (n->name.len)
		snprintf(buf, size, "node '%.*s' (%.*s)", PB_PRINT(n->name), PB_PRINT(n->op_type));
	else
		snprintf(buf, size, "node %zu (%.*s)", i, PB_PRINT(n->op_type));
	return buf;
}

/* Whether two names are the same bytes. */
static bool same(PbBytes a, PbBytes b) { return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0); }

/* Names of tensors, for following them through the graph. */
typedef struct Names {
	PbBytes *names;
	size_t count, cap;
} Names;

static bool names_has(const Names *s, PbBytes name)
{
	for (size_t i = 0; i < s->count; i++)
		if (same(s->names[i], name))
			return true;
	return false;
}

static void names_add(Names *s, PbBytes name)
{
	GROW(s->names, s->count + 1, s->cap);
	s->names[s->count++] = name;
}

/* Whether node n reads any tensor of s. */
static bool reads_any(const Node *n, const Names *s)
{
	for (size_t i = 0; i < n->num_inputs; i++)
		if (names_has(s, n->inputs[i]))
			return true;
	return false;
}

static bool is_op(const Node *n, const char *op) { return pb_equal(n->op_type, op); }

/* A Cast node's target type, or 0. */
static int64_t cast_to(const Node *n)
{
	for (size_t i = 0; i < n->num_attributes; i++)
		if (pb_equal(n->attributes[i].name, "to"))
			return n->attributes[i].i;
	return 0;
}

static bool is_real_type(int64_t type) { return type == ONNX_FLOAT || type == ONNX_DOUBLE; }

/* The graph's one tree ensemble node, or SIZE_MAX after an error. */
static size_t find_ensemble(Reader *r, const Graph *g)
{
	static const char *const ops[] = {"TreeEnsembleRegressor", "TreeEnsembleClassifier", "TreeEnsemble"};
	size_t found = SIZE_MAX;
	char a[128], b[128];
	for (size_t i = 0; i < g->num_nodes; i++) {
		const Node *n = &g->nodes[i];
		bool ml = pb_equal(n->domain, "ai.onnx.ml");
		for (size_t k = 0; k < COUNT_OF(ops); k++) {
			if (!ml || !is_op(n, ops[k]))
				continue;
			if (found != SIZE_MAX) {
				onnx_fail(r, "the graph has two tree ensembles, %s and %s; grove reads models with one", node_title(g, found, a, sizeof a),
				     node_title(g, i, b, sizeof b));
				return SIZE_MAX;
			}
			found = i;
			r->op = ops[k];
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
static bool trace_input(Reader *r, const Graph *g, const Node *ensemble, bool *path, uint32_t *width, bool *double_rows)
{
	PbBytes x = ensemble->num_inputs ? ensemble->inputs[0] : (PbBytes){(const uint8_t *)"", 0};
	char title[128];
	*double_rows = true;
	for (size_t steps = 0; steps <= g->num_nodes; steps++) {
		size_t producer = SIZE_MAX, input = SIZE_MAX, definitions = 0;
		for (size_t i = 0; i < g->num_inputs; i++)
			if (same(g->inputs[i].name, x))
				input = i, definitions++;
		for (size_t i = 0; i < g->num_nodes; i++)
			for (size_t o = 0; o < g->nodes[i].num_outputs; o++)
				if (same(g->nodes[i].outputs[o], x))
					producer = producer == SIZE_MAX ? i : producer, definitions++;
		if (definitions > 1)
			return onnx_fail(r, "tensor '%.*s' is defined %zu times (as graph inputs or node outputs): an ONNX graph defines each "
			                 "tensor once (onnx.checker refuses this one)", PB_PRINT(x), definitions);
		if (input != SIZE_MAX) {
			const ValueInfo *in = &g->inputs[input];
			if (!in->tensor || !is_real_type(in->elem_type))
				return onnx_fail(r, "graph input '%.*s': grove reads tensors of float or double", PB_PRINT(x));
			*double_rows &= in->elem_type == ONNX_DOUBLE;
			*width = 0;
			if (in->has_width) {
				if (in->width < 1 || in->width > INT32_MAX)
					return onnx_fail(r, "graph input '%.*s': %lld columns", PB_PRINT(x), (long long)in->width);
				*width = (uint32_t)in->width;
			}
			return true;
		}
		if (producer == SIZE_MAX)
			return onnx_fail(r, "the tree ensemble's input '%.*s' is neither a graph input nor a node's output", PB_PRINT(x));
		if (!(is_op(&g->nodes[producer], "Identity") || (is_op(&g->nodes[producer], "Cast") && is_real_type(cast_to(&g->nodes[producer])))))
			return onnx_fail(r, "%s computes the tree ensemble's input, which grove cannot express",
			            node_title(g, producer, title, sizeof title));
		if (is_op(&g->nodes[producer], "Cast"))
			*double_rows &= cast_to(&g->nodes[producer]) == ONNX_DOUBLE;
		path[producer] = true;
		x = g->nodes[producer].num_inputs ? g->nodes[producer].inputs[0] : (PbBytes){(const uint8_t *)"", 0};
	}
	return onnx_fail(r, "the tree ensemble's input is computed in a cycle");
}

/*
 * The one value of the single-element float or double initializer `name` into *value
 * (NAN if there is no such initializer); false with a message for two of that name.
 */
static bool constant(Reader *r, const Graph *g, PbBytes name, double *value)
{
	size_t found = 0;
	*value = NAN;
	for (size_t i = 0; i < g->num_initializers; i++) {
		const Tensor *t = &g->initializers[i];
		bool is_float = t->data_type == ONNX_FLOAT, is_double = t->data_type == ONNX_DOUBLE;
		size_t count = 0;
		char place[240];
		Error detail;
		float f;
		double d;
		if (!same(t->name, name))
			continue;
		if (found++)
			return onnx_fail(r, "two initializers are named '%.*s' (onnxruntime takes the last, onnx.checker refuses them)", PB_PRINT(name));
		snprintf(place, sizeof place, "initializer '%.*s'", PB_PRINT(name));
		if ((is_float || is_double) && !onnx_tensor_check_data(t, is_float ? 4 : 10, place, r->e)) {
			error_prefix(r->e, r->name);
			return false;
		}
		if (t->has_raw_data) {
			if (is_float && t->raw_data.len == 4)
				*value = (memcpy(&f, t->raw_data.data, 4), f);
			if (is_double && t->raw_data.len == 8)
				*value = (memcpy(&d, t->raw_data.data, 8), d);
			continue;
		}
		if (!is_float && !is_double)
			continue;
		if (!pb_repeated_count(t->message, is_float ? 4 : 10, is_float ? PB_FIXED32 : PB_FIXED64, &count, &detail))
			return onnx_fail(r, "not an ONNX model: the protobuf cannot be decoded: graph.initializer[%zu]: %s", i, detail.message);
		if (count == 1) {
			PbRepeated it = pb_repeated(t->message, is_float ? 4 : 10, is_float ? PB_FIXED32 : PB_FIXED64);
			uint64_t bits = pb_repeated_next(&it);
			uint32_t low = (uint32_t)bits;
			*value = is_float ? (memcpy(&f, &low, 4), f) : (memcpy(&d, &bits, 8), d);
		}
	}
	return true;
}

/*
 * Whether n passes the scores on unchanged (*keeps): Identity, ZipMap, Cast to float or
 * double, x * 1, x / 1, x + 0, x - 0; false after an error.
 */
static bool keeps_scores(Reader *r, const Graph *g, const Node *n, const Names *scores, bool *keeps)
{
	double neutral = is_op(n, "Mul") || is_op(n, "Div") ? 1 : is_op(n, "Add") || is_op(n, "Sub") ? 0 : NAN, value;
	*keeps = is_op(n, "Identity") || is_op(n, "ZipMap") || (is_op(n, "Cast") && is_real_type(cast_to(n)));
	if (*keeps || isnan(neutral) || n->num_inputs != 2 || !names_has(scores, n->inputs[0]))
		return true;
	if (!constant(r, g, n->inputs[1], &value))
		return false;
	*keeps = value == neutral;
	return true;
}

/*
 * The nodes after the ensemble: those on its scores must keep their meaning (Identity,
 * Cast to float or double, ZipMap, arithmetic with a neutral constant; Exp becomes the
 * transform); those on the label are
 * ignored; any other node is refused.
 */
static bool check_outputs(Reader *r, const Graph *g, size_t ensemble, const bool *path, HForest *f)
{
	const Node *e = &g->nodes[ensemble];
	size_t scores_output = strcmp(r->op, "TreeEnsembleClassifier") == 0 ? 1 : 0;
	Names scores = {0}, labels = {0};
	char title[128];
	bool ok = false;

	if (e->num_outputs <= scores_output) {
		onnx_fail(r, "%s: no scores output", r->op);
		goto done;
	}
	names_add(&scores, e->outputs[scores_output]);
	for (size_t o = 0; o < e->num_outputs; o++)
		if (o != scores_output)
			names_add(&labels, e->outputs[o]);
	for (size_t i = 0; i < g->num_nodes; i++) {
		const Node *n = &g->nodes[i];
		bool on_scores = reads_any(n, &scores), exp = on_scores && is_op(n, "Exp") && f->transform == HTRANSFORM_IDENTITY;
		bool keeps = false;
		if (i == ensemble || path[i])
			continue;
		node_title(g, i, title, sizeof title);
		if (on_scores && !exp && !keeps_scores(r, g, n, &scores, &keeps))
			goto done;
		if (exp) {
			f->transform = HTRANSFORM_EXP;
		} else if (on_scores && !keeps) {
			onnx_fail(r, "%s reads the tree ensemble's scores: grove cannot express what it computes", title);
			goto done;
		} else if (!on_scores && !reads_any(n, &labels)) {
			onnx_fail(r, "%s is not connected to the tree ensemble", title);
			goto done;
		}
		for (size_t o = 0; o < n->num_outputs; o++)
			names_add(on_scores ? &scores : &labels, n->outputs[o]);
	}
	for (size_t o = 0; o < g->num_outputs && !ok; o++)
		ok = names_has(&scores, g->outputs[o]);
	if (!ok)
		onnx_fail(r, "none of the graph's outputs is the tree ensemble's scores");
done:
	free(scores.names);
	free(labels.names);
	return ok;
}

HForest *front_read_onnx(const char *name, const char *bytes, size_t len, bool mapped, Error *e)
{
	Reader r = {.name = name, .e = e};
	Graph g;
	HForest *f = NULL;
	bool *path = NULL, double_rows;
	uint32_t width;
	size_t ensemble;

	r.mapped = mapped;
	if (!onnx_graph_parse(&g, (const uint8_t *)bytes, len, e)) {
		error_prefix(e, name);
		goto done;
	}
	r.base = g.base;
	if (!g.present) {
		onnx_fail(&r, "the model has no graph");
		goto done;
	}
	if ((ensemble = find_ensemble(&r, &g)) == SIZE_MAX)
		goto done;
	r.node = &g.nodes[ensemble];
	path = xcalloc(g.num_nodes, sizeof *path);
	if (!trace_input(&r, &g, r.node, path, &width, &double_rows))
		goto done;
	f = onnx_read_ensemble(&r, len, width, double_rows);
	if (f && !check_outputs(&r, &g, ensemble, path, f)) {
		hir_forest_free(f);
		f = NULL;
	}
done:
	free(path);
	onnx_reader_free(&r);
	onnx_graph_free(&g);
	return f;
}
