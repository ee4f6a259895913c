/* LIR: modules, buffers, functions and the instruction builder. */
#include "ir/lir.h"

#include <stdlib.h>
#include <string.h>

static const char *const type_names[] = {
#define X(name, text) text,
	LIR_TYPES(X)
#undef X
};

static const char *const op_names[] = {
#define X(name, text, operands) text,
	LIR_OPS(X)
#undef X
};

static const char *const cmp_names[] = {
#define X(name, text) text,
	LIR_CMPS(X)
#undef X
};

static const char *const cast_names[] = {
#define X(name, text) text,
	LIR_CASTS(X)
#undef X
};

const LType lir_predict_params[LIR_PREDICT_PARAMS] = {LTYPE_PTR, LTYPE_I64, LTYPE_PTR, LTYPE_I32, LTYPE_PTR};
const LType lir_kernel_params[LIR_KERNEL_PARAMS] = {LTYPE_PTR, LTYPE_I64, LTYPE_PTR, LTYPE_I32, LTYPE_PTR, LTYPE_PTR};

const char *lir_type_name(LType t) { return t < COUNT_OF(type_names) ? type_names[t] : "?"; }
const char *lir_op_name(LOp op) { return op < COUNT_OF(op_names) ? op_names[op] : "?"; }
const char *lir_cmp_name(LCmp c) { return c < COUNT_OF(cmp_names) ? cmp_names[c] : "?"; }

static const char *const atomic_names[] = {
#define X(name, text) text,
	LIR_ATOMICS(X)
#undef X
};

const char *lir_atomic_name(LAtomic a) { return a < COUNT_OF(atomic_names) ? atomic_names[a] : "?"; }
static const char *const space_names[] = {
#define X(name, text) text,
	LIR_SPACES(X)
#undef X
};

static const char *const gpu_index_names[] = {
#define X(name, text) text,
	LIR_GPU_INDICES(X)
#undef X
};

const char *lir_cast_name(LCast c) { return c < COUNT_OF(cast_names) ? cast_names[c] : "?"; }
const char *lir_space_name(LSpace s) { return s < COUNT_OF(space_names) ? space_names[s] : "?"; }
const char *lir_gpu_index_name(LGpuIndex g) { return g < COUNT_OF(gpu_index_names) ? gpu_index_names[g] : "?"; }

uint64_t lir_buffer_offset(const LModule *m, uint32_t k)
{
	uint64_t at = 0;
	for (uint32_t i = 0; i < k && i < m->num_buffers; i++) {
		at += m->buffers[i].count * lir_type_size(m->buffers[i].elem);
		at = (at + LIR_MODEL_ALIGN - 1) / LIR_MODEL_ALIGN * LIR_MODEL_ALIGN;
	}
	return at;
}

uint64_t lir_block_memory(const LFunc *fn, uint64_t *offset)
{
	uint64_t at = 0;
	for (uint32_t id = 0; id < fn->num_insts; id++) {
		const LInst *in = &fn->insts[id];
		if (in->op != LOP_LOCAL_ARRAY || in->sub != LSPACE_BLOCK)
			continue;
		uint64_t size = lir_type_size((LType)in->type);
		at = (at + size - 1) / size * size;
		if (offset)
			offset[id] = at;
		at += size * (uint64_t)in->imm;
	}
	return at;
}

int64_t lir_dim_value(const LDim *d, int64_t nrows)
{
	if (!d->rows_per)
		return d->count;
	int64_t n = (nrows + d->rows_per - 1) / d->rows_per;
	return n > 0 ? n : 1;
}

unsigned lir_op_operands(LOp op)
{
	static const uint8_t operands[] = {
#define X(name, text, count) count,
		LIR_OPS(X)
#undef X
	};
	return op < COUNT_OF(operands) ? operands[op] : 0;
}

bool lir_varies_itself(const LInst *in)
{
	switch ((LOp)in->op) {
	case LOP_GPU_INDEX: return in->sub <= LGPU_THREAD_Z;
	case LOP_LOAD:
	case LOP_GATHER:
	case LOP_GET:
	case LOP_SHUFFLE: return true;
	default: return false;
	}
}

bool lir_op_nests(LOp op) { return op == LOP_FOR || op == LOP_PARALLEL_FOR || op == LOP_LOOP || op == LOP_IF; }

bool lir_op_has_result(LOp op)
{
	switch (op) {
	case LOP_STORE:
	case LOP_ATOMIC:
	case LOP_PREFETCH:
	case LOP_SET:
	case LOP_BREAK_IF:
	case LOP_LOOP:
	case LOP_IF:
	case LOP_CALL:
	case LOP_BARRIER: return false;
	default: return op < LOP_COUNT;
	}
}

size_t lir_type_size(LType t)
{
	switch (t) {
	case LTYPE_VOID: return 0;
	case LTYPE_I1:
	case LTYPE_I8: return 1;
	case LTYPE_I32:
	case LTYPE_F32: return 4;
	case LTYPE_I64:
	case LTYPE_F64:
	case LTYPE_PTR: return 8;
	}
	die("bad LIR type %d", (int)t);
}

LModule *lir_module_new(void)
{
	LModule *m = xcalloc(1, sizeof(LModule));
	m->predict_f64 = LIR_NONE;
	return m;
}

void lir_module_free(LModule *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->num_buffers; i++)
		free(m->buffers[i].data);
	for (uint32_t i = 0; i < m->num_funcs; i++) {
		free(m->funcs[i]->insts);
		free(m->funcs[i]);
	}
	free(m->buffers);
	free(m->funcs);
	free(m->label_ints);
	strings_free(m->label_strings, m->num_labels);
	strings_free(m->feature_names, m->num_features);
	category_values_free(&m->category_values, m->num_features);
	free(m);
}

/* Whether instruction in must run for what it does, not for its value (a value's operands are live if it is). */
static bool has_effect(const LInst *in)
{
	switch ((LOp)in->op) {
	case LOP_STORE: case LOP_ATOMIC: case LOP_PREFETCH: case LOP_SET: case LOP_FOR: case LOP_PARALLEL_FOR:
	case LOP_LOOP: case LOP_BREAK_IF: case LOP_IF: case LOP_CALL: case LOP_BARRIER: case LOP_SHUFFLE: case LOP_VAR:
		return true;
	default:
		return false;
	}
}

bool *lir_buffers_read(const LModule *m)
{
	bool *read = xcalloc((size_t)m->num_buffers + 1, sizeof *read);
	for (uint32_t f = 0; f < m->num_funcs; f++) {
		const LFunc *fn = m->funcs[f];
		uint32_t *stack = xmalloc(((size_t)fn->num_insts + 1) * sizeof *stack), top = 0;
		bool *live = xcalloc((size_t)fn->num_insts + 1, sizeof *live);
		for (uint32_t id = 0; id < fn->num_insts; id++)
			if (has_effect(&fn->insts[id]))
				live[id] = true, stack[top++] = id;
		while (top) {
			const LInst *in = &fn->insts[stack[--top]];
			uint32_t operands[3] = {in->a, in->b, in->c};
			if (in->op == LOP_BUFFER && (uint64_t)in->imm < m->num_buffers)
				read[in->imm] = true;
			for (int i = 0; i < 3; i++) /* LIR_NONE where an op has fewer */
				if (operands[i] < fn->num_insts && !live[operands[i]])
					live[operands[i]] = true, stack[top++] = operands[i];
		}
		free(stack);
		free(live);
	}
	return read;
}

uint32_t lir_buffer_add(LModule *m, const char *name, LType elem, uint64_t count, void *data)
{
	LBuffer *b;
	GROW(m->buffers, (size_t)m->num_buffers + 1, m->buffers_cap);
	b = &m->buffers[m->num_buffers];
	snprintf(b->name, sizeof b->name, "%s", name);
	b->elem = elem;
	b->count = count;
	b->data = data;
	return m->num_buffers++;
}

LFunc *lir_func_add(LModule *m, const char *name, const LType *params, uint32_t num_params)
{
	LFunc *fn = xcalloc(1, sizeof *fn);
	if (num_params > COUNT_OF(fn->params))
		die("too many parameters for LIR function %s", name);
	snprintf(fn->name, sizeof fn->name, "%s", name);
	memcpy(fn->params, params, num_params * sizeof *params);
	fn->num_params = num_params;
	fn->body = LIR_NONE;
	GROW(m->funcs, (size_t)m->num_funcs + 1, m->funcs_cap);
	m->funcs[m->num_funcs++] = fn;
	return fn;
}

void lir_builder_init(LBuilder *b, LFunc *fn)
{
	b->fn = fn;
	b->depth = 0;
	b->tail[0] = &fn->body;
	while (*b->tail[0] != LIR_NONE) /* continue after what the body already holds */
		b->tail[0] = &fn->insts[*b->tail[0]].next;
}

uint32_t lir_emit(LBuilder *b, LOp op, LType type, uint32_t x, uint32_t y, uint32_t z)
{
	LFunc *fn = b->fn;
	uint32_t id = fn->num_insts;
	LInst *inst;
	size_t offset;

	/* The tails point into fn->insts, which may move when it grows: rebase them. */
	char *base = (char *)fn->insts;
	GROW(fn->insts, (size_t)id + 1, fn->insts_cap);
	if ((char *)fn->insts != base) {
		for (uint32_t d = 0; d <= b->depth; d++) {
			if (b->tail[d] == &fn->body)
				continue;
			offset = (size_t)((char *)b->tail[d] - base);
			b->tail[d] = (uint32_t *)((char *)fn->insts + offset);
		}
	}
	inst = &fn->insts[id];
	memset(inst, 0, sizeof *inst);
	inst->op = (uint16_t)op;
	inst->type = (uint8_t)type;
	inst->a = x;
	inst->b = y;
	inst->c = z;
	inst->body = inst->alt = inst->next = LIR_NONE;
	fn->num_insts++;
	*b->tail[b->depth] = id;
	b->tail[b->depth] = &inst->next;
	return id;
}

uint32_t lir_emit_vector(LBuilder *b, LOp op, LType type, uint8_t lanes, uint32_t x, uint32_t y, uint32_t z)
{
	uint32_t id = lir_emit(b, op, type, x, y, z);
	b->fn->insts[id].lanes = lanes;
	return id;
}

uint32_t lir_index(LBuilder *b, uint32_t ptr, uint32_t index, LType type)
{
	uint32_t id = lir_emit(b, LOP_INDEX, LTYPE_PTR, ptr, index, LIR_NONE);
	b->fn->insts[id].imm = (int64_t)lir_type_size(type);
	return id;
}

uint32_t lir_local_array(LBuilder *b, LType type, int64_t count, LSpace space)
{
	uint32_t id = lir_emit(b, LOP_LOCAL_ARRAY, type, LIR_NONE, LIR_NONE, LIR_NONE);
	b->fn->insts[id].imm = count;
	b->fn->insts[id].sub = (uint8_t)space;
	return id;
}

uint32_t lir_const_int(LBuilder *b, LType type, int64_t v)
{
	uint32_t id = lir_emit(b, LOP_CONST, type, LIR_NONE, LIR_NONE, LIR_NONE);
	b->fn->insts[id].imm = v;
	return id;
}

uint32_t lir_const_float(LBuilder *b, LType type, double v)
{
	uint32_t id = lir_emit(b, LOP_CONST, type, LIR_NONE, LIR_NONE, LIR_NONE);
	b->fn->insts[id].fimm = v;
	return id;
}

uint32_t lir_cmp(LBuilder *b, LOp op, LCmp pred, uint32_t x, uint32_t y)
{
	uint32_t id = lir_emit(b, op, LTYPE_I1, x, y, LIR_NONE);
	b->fn->insts[id].sub = (uint8_t)pred;
	b->fn->insts[id].lanes = b->fn->insts[x].lanes; /* a vector compare is lanewise */
	return id;
}

uint32_t lir_cast(LBuilder *b, LCast kind, LType type, uint32_t x)
{
	uint32_t id = lir_emit(b, LOP_CAST, type, x, LIR_NONE, LIR_NONE);
	b->fn->insts[id].sub = (uint8_t)kind;
	b->fn->insts[id].lanes = b->fn->insts[x].lanes; /* a vector converts lanewise */
	return id;
}

uint32_t lir_begin(LBuilder *b, LOp op, uint32_t x, uint32_t y, uint32_t z)
{
	LType type = op == LOP_FOR || op == LOP_PARALLEL_FOR ? LTYPE_I64 : LTYPE_VOID;
	uint32_t id = lir_emit(b, op, type, x, y, z);
	if (b->depth + 1 >= LIR_MAX_NESTING)
		die("LIR nesting deeper than %d", LIR_MAX_NESTING);
	b->tail[++b->depth] = &b->fn->insts[id].body;
	return id;
}

void lir_else(LBuilder *b, uint32_t if_inst)
{
	b->tail[b->depth] = &b->fn->insts[if_inst].alt;
}

void lir_end(LBuilder *b)
{
	if (b->depth == 0)
		die("lir_end without lir_begin");
	b->depth--;
}
