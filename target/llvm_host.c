/*
 * The host's part of the LIR -> LLVM IR translation (the core is llvm.c): model buffers
 * as constant globals in a module of their own, the entry points, and PARALLEL_FOR outlined into a
 * function of one pointer argument, the context: the values its body uses from outside
 * (captures), the iteration space and an atomic counter from which threads take chunks
 * of `grain` iterations. Small ranges call the outlined function directly; large ones go
 * through GOMP_parallel, which libgomp and libomp both provide. SHARED LOCAL_ARRAYs
 * reach the outlined body as captured pointers like any other value.
 */
#include "target/llvm.h"

#include <stdlib.h>
#include <string.h>

/* Mark in inside[] every instruction of the region starting at first, nested regions included. */
static void mark_region(const LFunc *fn, uint32_t first, bool *inside)
{
	for (uint32_t id = first; id != LIR_NONE; id = fn->insts[id].next) {
		inside[id] = true;
		mark_region(fn, fn->insts[id].body, inside);
		mark_region(fn, fn->insts[id].alt, inside);
	}
}

/* Append to captures[] the non-constant values used in the region but defined outside it. */
static void find_captures(Emitter *em, uint32_t first, const bool *inside, bool *seen, uint32_t *captures, uint32_t *count)
{
	for (uint32_t id = first; id != LIR_NONE; id = em->fn->insts[id].next) {
		const LInst *inst = &em->fn->insts[id];
		uint32_t operands[3] = {inst->a, inst->b, inst->c};
		for (int i = 0; i < 3; i++) {
			uint32_t v = operands[i];
			if (v == LIR_NONE || inside[v] || seen[v] || LLVMIsConstant(llvm_value(em, v)))
				continue;
			seen[v] = true;
			captures[(*count)++] = v;
		}
		find_captures(em, inst->body, inside, seen, captures, count);
		find_captures(em, inst->alt, inside, seen, captures, count);
	}
}

/* The context handed to an outlined parallel body: {trips, next, begin, step, captures...}. */
enum { CTX_TRIPS, CTX_NEXT, CTX_BEGIN, CTX_STEP, CTX_CAPTURES };

/* Load field i of the context ctx (of type ctx_type) as type. */
static LLVMValueRef load_field(Emitter *em, LLVMTypeRef ctx_type, LLVMValueRef ctx, unsigned i, LLVMTypeRef type)
{
	return LLVMBuildLoad2(em->b, type, LLVMBuildStructGEP2(em->b, ctx_type, ctx, i, ""), "");
}

/*
 * The outlined body of PARALLEL_FOR id: `void body(ctx *)` takes chunks of grain
 * iterations from ctx->next with an atomic add until none are left, running each
 * through the loop's body with the captured values reloaded from the context.
 */
static LLVMValueRef emit_outlined_body(Emitter *em, uint32_t id, LLVMTypeRef ctx_type, const uint32_t *captures,
                                       uint32_t count)
{
	LLVMTypeRef i64 = em->types[LTYPE_I64], ptr = em->types[LTYPE_PTR];
	LLVMValueRef grain = llvm_const_i64(em, em->fn->insts[id].imm), *saved = xmalloc(((size_t)count + 1) * sizeof *saved);
	LLVMValueRef body, ctx, trips, begin, step, first, last;
	LLVMBasicBlockRef take, run, done;
	char name[96];

	snprintf(name, sizeof name, "%s.parallel.%u", em->prefix, em->outlined++);
	body = LLVMAddFunction(em->mod, name, LLVMFunctionType(em->types[LTYPE_VOID], &ptr, 1, 0));
	LLVMSetLinkage(body, LLVMInternalLinkage);
	llvm_begin_function(em, body);
	ctx = LLVMGetParam(body, 0);
	trips = load_field(em, ctx_type, ctx, CTX_TRIPS, i64);
	begin = load_field(em, ctx_type, ctx, CTX_BEGIN, i64);
	step = load_field(em, ctx_type, ctx, CTX_STEP, i64);
	for (uint32_t i = 0; i < count; i++) {
		saved[i] = em->values[captures[i]];
		em->values[captures[i]] = load_field(em, ctx_type, ctx, CTX_CAPTURES + i, LLVMTypeOf(saved[i]));
	}
	take = llvm_new_block(em, "take");
	run = llvm_new_block(em, "run");
	done = llvm_new_block(em, "done");
	LLVMBuildBr(em->b, take);

	/* take: first = atomically (ctx->next += grain); stop when first >= trips. */
	LLVMPositionBuilderAtEnd(em->b, take);
	first = LLVMBuildAtomicRMW(em->b, LLVMAtomicRMWBinOpAdd, LLVMBuildStructGEP2(em->b, ctx_type, ctx, CTX_NEXT, ""),
	                           grain, LLVMAtomicOrderingMonotonic, 0);
	LLVMBuildCondBr(em->b, LLVMBuildICmp(em->b, LLVMIntSLT, first, trips, ""), run, done);

	/* run: iterations [first, min(first + grain, trips)), i.e. loop values begin + k * step. */
	LLVMPositionBuilderAtEnd(em->b, run);
	last = LLVMBuildAdd(em->b, first, grain, "");
	last = LLVMBuildSelect(em->b, LLVMBuildICmp(em->b, LLVMIntSLT, last, trips, ""), last, trips, "");
	llvm_emit_for(em, id, LLVMBuildAdd(em->b, begin, LLVMBuildMul(em->b, first, step, ""), ""),
	         LLVMBuildAdd(em->b, begin, LLVMBuildMul(em->b, last, step, ""), ""), step);
	LLVMBuildBr(em->b, take);
	LLVMPositionBuilderAtEnd(em->b, done);
	llvm_end_function(em);

	for (uint32_t i = 0; i < count; i++)
		em->values[captures[i]] = saved[i];
	free(saved);
	return body;
}

/* Call body(ctx) here when trips < 2 * grain, else on a team of threads through GOMP_parallel. */
static void emit_team_call(Emitter *em, LLVMValueRef body, LLVMValueRef ctx, LLVMValueRef trips, int64_t grain)
{
	LLVMTypeRef ptr = em->types[LTYPE_PTR], i32 = em->types[LTYPE_I32];
	LLVMTypeRef body_type = LLVMFunctionType(em->types[LTYPE_VOID], &ptr, 1, 0);
	LLVMTypeRef gomp_params[4] = {ptr, ptr, i32, i32}; /* fn, data, num_threads (0 = default), flags */
	LLVMTypeRef gomp_type = LLVMFunctionType(em->types[LTYPE_VOID], gomp_params, 4, 0);
	LLVMValueRef gomp = LLVMGetNamedFunction(em->mod, "GOMP_parallel"), zero = LLVMConstInt(i32, 0, 0);
	LLVMValueRef args[4] = {body, ctx, zero, zero};
	LLVMBasicBlockRef serial = llvm_new_block(em, "serial"), team = llvm_new_block(em, "team"), after = llvm_new_block(em, "parallel.end");

	if (!gomp)
		gomp = LLVMAddFunction(em->mod, "GOMP_parallel", gomp_type);
	LLVMBuildCondBr(em->b, LLVMBuildICmp(em->b, LLVMIntSLT, trips, llvm_const_i64(em, 2 * grain), ""), serial, team);
	LLVMPositionBuilderAtEnd(em->b, serial);
	LLVMBuildCall2(em->b, body_type, body, &ctx, 1, "");
	LLVMBuildBr(em->b, after);
	LLVMPositionBuilderAtEnd(em->b, team);
	LLVMBuildCall2(em->b, gomp_type, gomp, args, 4, "");
	LLVMBuildBr(em->b, after);
	LLVMPositionBuilderAtEnd(em->b, after);
}

/* A PARALLEL_FOR: fill a context in the caller, outline the body, and run it on one thread or a team. */
static void emit_parallel_for(Emitter *em, uint32_t id)
{
	const LInst *inst = &em->fn->insts[id];
	uint32_t n = em->fn->num_insts, count = 0, outer_loops = em->loops;
	bool *inside = xcalloc(n, sizeof *inside), *seen = xcalloc(n, sizeof *seen);
	uint32_t *captures = xmalloc(((size_t)n + 1) * sizeof *captures);
	LLVMValueRef begin = llvm_value(em, inst->a), end = llvm_value(em, inst->b), step = llvm_value(em, inst->c);
	LLVMTypeRef i64 = em->types[LTYPE_I64], *fields, ctx_type;
	LLVMValueRef ctx, trips, span, outer_func = em->func, body;
	LLVMBasicBlockRef outer_entry = em->entry, outer_block = LLVMGetInsertBlock(em->b);

	mark_region(em->fn, inst->body, inside);
	inside[id] = true; /* the loop's own value is the outlined loop's */
	find_captures(em, inst->body, inside, seen, captures, &count);
	fields = xmalloc(((size_t)count + CTX_CAPTURES) * sizeof *fields);
	for (uint32_t i = 0; i < CTX_CAPTURES; i++)
		fields[i] = i64;
	for (uint32_t i = 0; i < count; i++)
		fields[CTX_CAPTURES + i] = LLVMTypeOf(llvm_value(em, captures[i]));
	ctx_type = LLVMStructTypeInContext(em->ctx, fields, count + CTX_CAPTURES, 0);

	/* trips = max(0, ceil((end - begin) / step)) */
	ctx = llvm_entry_alloca(em, ctx_type, 1);
	span = LLVMBuildSub(em->b, end, begin, "");
	trips = LLVMBuildSDiv(em->b, LLVMBuildAdd(em->b, span, LLVMBuildSub(em->b, step, llvm_const_i64(em, 1), ""), ""), step, "");
	trips = LLVMBuildSelect(em->b, LLVMBuildICmp(em->b, LLVMIntSGT, span, llvm_const_i64(em, 0), ""), trips, llvm_const_i64(em, 0), "");
	{
		LLVMValueRef init[CTX_CAPTURES] = {[CTX_TRIPS] = trips, [CTX_NEXT] = llvm_const_i64(em, 0), [CTX_BEGIN] = begin,
		                                   [CTX_STEP] = step};
		for (unsigned i = 0; i < CTX_CAPTURES; i++)
			LLVMBuildStore(em->b, init[i], LLVMBuildStructGEP2(em->b, ctx_type, ctx, i, ""));
		for (uint32_t i = 0; i < count; i++)
			LLVMBuildStore(em->b, llvm_value(em, captures[i]), LLVMBuildStructGEP2(em->b, ctx_type, ctx, CTX_CAPTURES + i, ""));
	}

	body = emit_outlined_body(em, id, ctx_type, captures, count);
	em->func = outer_func;
	em->entry = outer_entry;
	em->loops = outer_loops;
	LLVMPositionBuilderAtEnd(em->b, outer_block);
	emit_team_call(em, body, ctx, trips, inst->imm);
	free(inside);
	free(seen);
	free(captures);
	free(fields);
}

/*
 * Buffer buf: a hidden constant global <prefix>.<name> holding its bytes in data, and
 * its declaration (returned) in the code module. The code sees the buffer's size but
 * not its bytes, so the same model shape gives the same code (target/cache.c).
 */
static LLVMValueRef emit_buffer(Emitter *em, LLVMModuleRef data, const LBuffer *buf)
{
	size_t bytes = (size_t)buf->count * lir_type_size(buf->elem);
	LLVMValueRef init, globals[2];
	char name[160];
	if (bytes > UINT32_MAX)
		die("buffer %s is larger than 4 GiB", buf->name);
	snprintf(name, sizeof name, "%s.%s", em->prefix, buf->name);
	init = LLVMConstStringInContext(em->ctx, buf->data ? buf->data : "", (unsigned)bytes, 1);
	globals[0] = LLVMAddGlobal(data, LLVMTypeOf(init), name);
	globals[1] = LLVMAddGlobal(em->mod, LLVMTypeOf(init), name);
	LLVMSetInitializer(globals[0], init);
	for (int i = 0; i < 2; i++) {
		LLVMSetGlobalConstant(globals[i], 1);
		LLVMSetVisibility(globals[i], LLVMHiddenVisibility);
		LLVMSetAlignment(globals[i], 64);
	}
	return globals[1];
}

/* Emit LIR function fn as an external LLVM function called name. */
static LLVMValueRef emit_function(Emitter *em, const LFunc *fn, const char *name)
{
	LLVMTypeRef params[COUNT_OF(fn->params)], type;
	LLVMValueRef func;
	for (uint32_t i = 0; i < fn->num_params; i++)
		params[i] = em->types[fn->params[i]];
	type = LLVMFunctionType(em->types[LTYPE_VOID], params, fn->num_params, 0);
	func = LLVMAddFunction(em->mod, name, type);
	llvm_add_attribute(em, func, LLVMAttributeFunctionIndex, "nounwind");
	/* The rows and the output must not overlap (grove.h says so); this lets loads move past stores. */
	for (uint32_t i = 0; i < fn->num_params; i++)
		if (fn->params[i] == LTYPE_PTR)
			llvm_add_attribute(em, func, i + 1, "noalias");
	llvm_emit_body(em, fn, func);
	return func;
}

/* A declaration in mod of function f (of another module). */
static LLVMValueRef declare_like(LLVMModuleRef mod, LLVMValueRef f)
{
	size_t len;
	const char *name = LLVMGetValueName2(f, &len);
	return LLVMAddFunction(mod, name, LLVMGlobalGetValueType(f));
}

/* BUFFER k: its global. */
static LLVMValueRef host_buffer(Emitter *em, uint32_t k) { return em->buffers[k]; }

static const TargetHooks host_hooks = {.buffer = host_buffer, .parallel_for = emit_parallel_for};

LLVMModuleRef target_build_module(LLVMContextRef ctx, const LModule *m, const char *prefix, const char *artifact_symbol,
                                  LLVMModuleRef *data)
{
	Emitter em;
	char name[96];
	LLVMValueRef predict = NULL, predict_f64 = NULL;
	LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(prefix, ctx);

	*data = LLVMModuleCreateWithNameInContext(prefix, ctx);
	llvm_emitter_init(&em, ctx, mod, m, &host_hooks, prefix);
	em.buffers = xcalloc(m->num_buffers + 1, sizeof *em.buffers);
	for (uint32_t i = 0; i < m->num_buffers; i++)
		em.buffers[i] = emit_buffer(&em, *data, &m->buffers[i]);
	for (uint32_t i = 0; i < m->num_funcs; i++) {
		LLVMValueRef f;
		snprintf(name, sizeof name, "%s_%s", prefix, m->funcs[i]->name);
		f = emit_function(&em, m->funcs[i], name);
		if (i == m->predict)
			predict = f;
		else if (i == m->predict_f64)
			predict_f64 = f;
		else
			LLVMSetLinkage(f, LLVMInternalLinkage);
	}
	if (!predict)
		die("LIR module has no predict function");
	/* The descriptor (names, labels) is data too; it points at the entry points through declarations. */
	em.mod = *data;
	llvm_emit_descriptor(&em, declare_like(*data, predict), predict_f64 ? declare_like(*data, predict_f64) : NULL,
	                     NULL, artifact_symbol);
	free(em.buffers);
	llvm_emitter_dispose(&em);
	return mod;
}
