/*
 * The host's part of the LIR -> LLVM IR translation (the core is llvm.c): model buffers
 * as constant globals in a module of their own, the entry points, and PARALLEL_FOR outlined into a
 * function of one pointer argument, the context: the values its body uses from outside
 * (captures), the iteration space and an atomic counter from which threads take chunks
 * of `grain` iterations. Small ranges call the outlined function directly; large ones go
 * through GOMP_parallel, which libgomp and libomp both provide. SHARED LOCAL_ARRAYs
 * reach the outlined body as captured pointers like any other value. The regions of an
 * IF marked apart are outlined the same way (a context of captures alone), so that
 * target/host.c can compile them in parallel.
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

/*
 * An outlined region: a function `void f(ctx *)` of its own, its context the caller's
 * `fixed` i64 values and then the values the region uses but the caller defines
 * (captures), which the function reloads.
 */
typedef struct Outline {
	uint32_t *captures, count;
	LLVMTypeRef ctx_type;
	LLVMValueRef ctx;        /* the caller's context (its captures stored) */
	LLVMValueRef *saved;     /* the caller's values of the captures while the function is built */
	LLVMValueRef outer_func;
	LLVMBasicBlockRef outer_entry, outer_block;
	uint32_t outer_loops;
} Outline;

/* Load field i of the context ctx (of type ctx_type) as type. */
static LLVMValueRef load_field(Emitter *em, LLVMTypeRef ctx_type, LLVMValueRef ctx, unsigned i, LLVMTypeRef type)
{
	return LLVMBuildLoad2(em->b, type, LLVMBuildStructGEP2(em->b, ctx_type, ctx, i, ""), "");
}

/*
 * Begin outlining the region at first (and, where not LIR_NONE, the instruction self,
 * whose value the function defines): in the caller, a context holding the `fixed` i64
 * values and the captures; then a new internal function called <prefix>.<kind>.<n>, the
 * builder in its body, the captures reloaded. Returns the function's context parameter.
 */
static LLVMValueRef outline_begin(Emitter *em, uint32_t first, uint32_t self, const LLVMValueRef *values, uint32_t fixed,
                                  const char *kind, Outline *o, LLVMValueRef *func)
{
	uint32_t n = em->fn->num_insts;
	bool *inside = xcalloc(n, sizeof *inside), *seen = xcalloc(n, sizeof *seen);
	LLVMTypeRef *fields, ptr = em->types[LTYPE_PTR];
	LLVMValueRef ctx;
	char name[96];

	*o = (Outline){.captures = xmalloc(((size_t)n + 1) * sizeof *o->captures), .outer_func = em->func,
	               .outer_entry = em->entry, .outer_loops = em->loops};
	mark_region(em->fn, first, inside);
	if (self != LIR_NONE)
		inside[self] = true;
	find_captures(em, first, inside, seen, o->captures, &o->count);
	fields = xmalloc(((size_t)o->count + fixed + 1) * sizeof *fields);
	for (uint32_t i = 0; i < fixed; i++)
		fields[i] = em->types[LTYPE_I64];
	for (uint32_t i = 0; i < o->count; i++)
		fields[fixed + i] = LLVMTypeOf(llvm_value(em, o->captures[i]));
	o->ctx_type = LLVMStructTypeInContext(em->ctx, fields, o->count + fixed, 0);
	o->ctx = llvm_entry_alloca(em, o->ctx_type, 1);
	for (uint32_t i = 0; i < fixed; i++)
		LLVMBuildStore(em->b, values[i], LLVMBuildStructGEP2(em->b, o->ctx_type, o->ctx, i, ""));
	for (uint32_t i = 0; i < o->count; i++)
		LLVMBuildStore(em->b, llvm_value(em, o->captures[i]), LLVMBuildStructGEP2(em->b, o->ctx_type, o->ctx, fixed + i, ""));
	o->outer_block = LLVMGetInsertBlock(em->b);
	free(inside);
	free(seen);
	free(fields);

	snprintf(name, sizeof name, "%s.%s.%u", em->prefix, kind, em->outlined++);
	*func = LLVMAddFunction(em->mod, name, LLVMFunctionType(em->types[LTYPE_VOID], &ptr, 1, 0));
	LLVMSetLinkage(*func, LLVMInternalLinkage);
	llvm_add_attribute(em, *func, LLVMAttributeFunctionIndex, "nounwind");
	llvm_begin_function(em, *func);
	ctx = LLVMGetParam(*func, 0);
	o->saved = xmalloc(((size_t)o->count + 1) * sizeof *o->saved);
	for (uint32_t i = 0; i < o->count; i++) {
		o->saved[i] = em->values[o->captures[i]];
		em->values[o->captures[i]] = load_field(em, o->ctx_type, ctx, fixed + i, LLVMTypeOf(o->saved[i]));
	}
	return ctx;
}

/* Finish the outlined function and go back to the caller, after the context's stores. */
static void outline_end(Emitter *em, Outline *o)
{
	llvm_end_function(em);
	for (uint32_t i = 0; i < o->count; i++)
		em->values[o->captures[i]] = o->saved[i];
	em->func = o->outer_func;
	em->entry = o->outer_entry;
	em->loops = o->outer_loops;
	LLVMPositionBuilderAtEnd(em->b, o->outer_block);
	free(o->captures);
	free(o->saved);
}

/*
 * Subnormal operands compared as they are, whatever mode the caller's thread is in. A
 * CPU may be set to flush subnormals to zero (x86's MXCSR bits DAZ and FTZ, AArch64's
 * FPCR.FZ: the start-up code of -ffast-math programs does it, and some libraries), and
 * then a subnormal row value compares as 0, and so does a subnormal threshold, such as
 * the x <= -2^-149 that hir_float_forest makes of XGBoost's x < 0. So the entry points
 * and each parallel body (OpenMP's threads have modes of their own) clear those modes
 * where they are set, and set them back on the way out: where they are not set, a read
 * of the mode and a branch. A read is a measurable part of one row's prediction
 * (docs/performance-notes.md, Floating-point modes): a parallel body run by the entry's
 * own thread alone skips it.
 */
static LLVMValueRef fp_flush_bits(Emitter *em)
{
	return em->aarch64 ? llvm_const_i64(em, 1 << 24) : llvm_const_i32(em, 1u << 6 | 1u << 15);
}

/* The thread's FP mode: MXCSR (i32) or FPCR (i64). */
static LLVMValueRef read_fp_mode(Emitter *em)
{
	LLVMValueRef slot;
	if (em->aarch64)
		return llvm_call_intrinsic(em, "llvm.aarch64.get.fpcr", NULL, NULL, 0);
	slot = llvm_entry_alloca(em, em->types[LTYPE_I32], 1);
	llvm_call_intrinsic(em, "llvm.x86.sse.stmxcsr", NULL, &slot, 1);
	return LLVMBuildLoad2(em->b, em->types[LTYPE_I32], slot, "");
}

static void write_fp_mode(Emitter *em, LLVMValueRef mode)
{
	LLVMValueRef slot;
	if (em->aarch64) {
		llvm_call_intrinsic(em, "llvm.aarch64.set.fpcr", NULL, &mode, 1);
		return;
	}
	slot = llvm_entry_alloca(em, em->types[LTYPE_I32], 1);
	LLVMBuildStore(em->b, mode, slot);
	llvm_call_intrinsic(em, "llvm.x86.sse.ldmxcsr", NULL, &slot, 1);
}

/* i1: whether mode flushes subnormals. */
static LLVMValueRef fp_mode_flushes(Emitter *em, LLVMValueRef mode)
{
	LLVMValueRef bits = fp_flush_bits(em);
	return LLVMBuildICmp(em->b, LLVMIntNE, LLVMBuildAnd(em->b, mode, bits, ""), LLVMConstNull(LLVMTypeOf(bits)), "");
}

/* Into a body, unless skip (i1; NULL: never): where the thread flushes subnormals, stop it; returns the mode found (0 where skipped). */
static LLVMValueRef enter_exact_fp_unless(Emitter *em, LLVMValueRef skip)
{
	LLVMBasicBlockRef from = LLVMGetInsertBlock(em->b), read = llvm_new_block(em, "fp.read"), clear = llvm_new_block(em, "fp.clear");
	LLVMBasicBlockRef body = llvm_new_block(em, "fp.body"), in[3];
	LLVMValueRef mode, flushes, phi, modes[3];
	if (skip)
		LLVMBuildCondBr(em->b, skip, body, read);
	else
		LLVMBuildBr(em->b, read);
	LLVMPositionBuilderAtEnd(em->b, read);
	mode = read_fp_mode(em);
	flushes = fp_mode_flushes(em, mode);
	LLVMBuildCondBr(em->b, flushes, clear, body);
	LLVMPositionBuilderAtEnd(em->b, clear);
	write_fp_mode(em, LLVMBuildAnd(em->b, mode, LLVMConstNot(fp_flush_bits(em)), ""));
	LLVMBuildBr(em->b, body);
	LLVMPositionBuilderAtEnd(em->b, body);
	phi = LLVMBuildPhi(em->b, LLVMTypeOf(mode), "");
	in[0] = from, in[1] = read, in[2] = clear;
	modes[0] = LLVMConstNull(LLVMTypeOf(mode)), modes[1] = modes[2] = mode;
	LLVMAddIncoming(phi, modes + !skip, in + !skip, skip ? 3 : 2);
	return phi;
}

static LLVMValueRef enter_exact_fp(Emitter *em) { return enter_exact_fp_unless(em, NULL); }

/* Out of a body entered with mode: set it back where it flushed. */
static void leave_exact_fp(Emitter *em, LLVMValueRef mode)
{
	LLVMBasicBlockRef restore = llvm_new_block(em, "fp.restore"), done = llvm_new_block(em, "fp.done");
	LLVMBuildCondBr(em->b, fp_mode_flushes(em, mode), restore, done);
	LLVMPositionBuilderAtEnd(em->b, restore);
	write_fp_mode(em, mode);
	LLVMBuildBr(em->b, done);
	LLVMPositionBuilderAtEnd(em->b, done);
}

/* The context of an outlined parallel body: {trips, next, begin, step, alone, captures...}; alone: run by the caller's thread only. */
enum { CTX_TRIPS, CTX_NEXT, CTX_BEGIN, CTX_STEP, CTX_ALONE, CTX_CAPTURES };

/* Call body(ctx) here, ctx marked alone, when trips < 2 * grain, else on a team of threads through GOMP_parallel. */
static void emit_team_call(Emitter *em, LLVMValueRef body, LLVMTypeRef ctx_type, LLVMValueRef ctx, LLVMValueRef trips, int64_t grain)
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
	LLVMBuildStore(em->b, llvm_const_i64(em, 1), LLVMBuildStructGEP2(em->b, ctx_type, ctx, CTX_ALONE, ""));
	LLVMBuildCall2(em->b, body_type, body, &ctx, 1, "");
	LLVMBuildBr(em->b, after);
	LLVMPositionBuilderAtEnd(em->b, team);
	LLVMBuildCall2(em->b, gomp_type, gomp, args, 4, "");
	LLVMBuildBr(em->b, after);
	LLVMPositionBuilderAtEnd(em->b, after);
}

/*
 * A PARALLEL_FOR: fill a context in the caller and outline the body into a function that
 * takes chunks of grain iterations from ctx->next with an atomic add until none are
 * left (or, run by the caller alone, every iteration in one chunk); run it on one thread
 * or a team.
 */
static void emit_parallel_for(Emitter *em, uint32_t id)
{
	const LInst *inst = &em->fn->insts[id];
	LLVMValueRef begin = llvm_value(em, inst->a), end = llvm_value(em, inst->b), step = llvm_value(em, inst->c);
	LLVMValueRef grain = llvm_const_i64(em, inst->imm), trips, span, body, ctx, first, last, caller_ctx, caller_trips, mode;
	LLVMValueRef alone, taken, taken_last, firsts[2], lasts[2];
	LLVMTypeRef i64 = em->types[LTYPE_I64];
	LLVMBasicBlockRef take, run, done, from[2];
	Outline o;

	/* trips = max(0, ceil((end - begin) / step)) */
	span = LLVMBuildSub(em->b, end, begin, "");
	trips = LLVMBuildSDiv(em->b, LLVMBuildAdd(em->b, span, LLVMBuildSub(em->b, step, llvm_const_i64(em, 1), ""), ""), step, "");
	trips = LLVMBuildSelect(em->b, LLVMBuildICmp(em->b, LLVMIntSGT, span, llvm_const_i64(em, 0), ""), trips, llvm_const_i64(em, 0), "");
	{
		LLVMValueRef init[CTX_CAPTURES] = {[CTX_TRIPS] = trips, [CTX_NEXT] = llvm_const_i64(em, 0), [CTX_BEGIN] = begin,
		                                   [CTX_STEP] = step, [CTX_ALONE] = llvm_const_i64(em, 0)};
		ctx = outline_begin(em, inst->body, id, init, CTX_CAPTURES, "parallel", &o, &body);
	}
	caller_trips = trips;
	/* The entry's thread is in the exact mode already: run by it alone, the body skips the check. */
	alone = LLVMBuildICmp(em->b, LLVMIntNE, load_field(em, o.ctx_type, ctx, CTX_ALONE, i64), llvm_const_i64(em, 0), "");
	mode = enter_exact_fp_unless(em, alone);
	trips = load_field(em, o.ctx_type, ctx, CTX_TRIPS, i64);
	begin = load_field(em, o.ctx_type, ctx, CTX_BEGIN, i64);
	step = load_field(em, o.ctx_type, ctx, CTX_STEP, i64);
	take = llvm_new_block(em, "take");
	run = llvm_new_block(em, "run");
	done = llvm_new_block(em, "done");
	/*
	 * Alone, the thread runs every iteration at once: no atomic add (measured:
	 * docs/performance-notes.md, A parallel body alone).
	 */
	from[0] = LLVMGetInsertBlock(em->b);
	LLVMBuildCondBr(em->b, alone, run, take);

	/* take: first = atomically (ctx->next += grain); stop when first >= trips. */
	LLVMPositionBuilderAtEnd(em->b, take);
	taken = LLVMBuildAtomicRMW(em->b, LLVMAtomicRMWBinOpAdd, LLVMBuildStructGEP2(em->b, o.ctx_type, ctx, CTX_NEXT, ""),
	                           grain, LLVMAtomicOrderingMonotonic, 0);
	taken_last = LLVMBuildAdd(em->b, taken, grain, "");
	taken_last = LLVMBuildSelect(em->b, LLVMBuildICmp(em->b, LLVMIntSLT, taken_last, trips, ""), taken_last, trips, "");
	from[1] = take;
	LLVMBuildCondBr(em->b, LLVMBuildICmp(em->b, LLVMIntSLT, taken, trips, ""), run, done);

	/* run: iterations [first, last): all of them alone, else [taken, min(taken + grain, trips)); loop values begin + k * step. */
	LLVMPositionBuilderAtEnd(em->b, run);
	first = LLVMBuildPhi(em->b, i64, "");
	last = LLVMBuildPhi(em->b, i64, "");
	firsts[0] = llvm_const_i64(em, 0), firsts[1] = taken;
	lasts[0] = trips, lasts[1] = taken_last;
	LLVMAddIncoming(first, firsts, from, 2);
	LLVMAddIncoming(last, lasts, from, 2);
	llvm_emit_for(em, id, LLVMBuildAdd(em->b, begin, LLVMBuildMul(em->b, first, step, ""), ""),
	              LLVMBuildAdd(em->b, begin, LLVMBuildMul(em->b, last, step, ""), ""), step);
	LLVMBuildCondBr(em->b, alone, done, take);
	LLVMPositionBuilderAtEnd(em->b, done);
	leave_exact_fp(em, mode);
	caller_ctx = o.ctx;
	outline_end(em, &o);
	emit_team_call(em, body, o.ctx_type, caller_ctx, caller_trips, inst->imm);
}

/* The region at first as a function of its own, called here (an IF's region that LIR marks apart). */
static void emit_apart(Emitter *em, uint32_t first)
{
	LLVMTypeRef ptr = em->types[LTYPE_PTR];
	LLVMValueRef func, ctx;
	Outline o;
	if (first == LIR_NONE)
		return;
	outline_begin(em, first, LIR_NONE, NULL, 0, "apart", &o, &func);
	/* A tile of trees as code stays apart: inlined back (its only call, where one module holds every part), LLVM's time grew faster than the code. */
	if (em->m->code)
		llvm_add_attribute(em, func, LLVMAttributeFunctionIndex, "noinline");
	llvm_emit_region(em, first);
	ctx = o.ctx;
	outline_end(em, &o);
	LLVMBuildCall2(em->b, LLVMFunctionType(em->types[LTYPE_VOID], &ptr, 1, 0), func, &ctx, 1, "");
}

/*
 * Buffer k: a hidden constant global (target_buffer_symbol) holding its bytes in data,
 * and its declaration (returned) in the code module. The code sees the buffer's size but
 * not its bytes, so the same model shape gives the same code (target/cache.c).
 */
static LLVMValueRef emit_buffer(Emitter *em, LLVMModuleRef data, uint32_t k, bool read)
{
	const LBuffer *buf = &em->m->buffers[k];
	/* (data NULL: the buffers are an object of their own, target/buffers.c) */
	size_t bytes = (size_t)buf->count * lir_type_size(buf->elem);
	LLVMValueRef init, globals[2];
	char name[TARGET_SYMBOL_MAX];
	if (bytes > UINT32_MAX)
		die("buffer %s is larger than 4 GiB", buf->name);
	target_buffer_symbol(em->m, em->prefix, k, name, sizeof name);
	/* A buffer no code reads (a key copy's twin) keeps its name and size, not its bytes: zeros, which take no room in the file. */
	init = !data ? NULL
	       : read ? LLVMConstStringInContext(em->ctx, buf->data ? buf->data : "", (unsigned)bytes, 1)
	              : LLVMConstNull(LLVMArrayType(LLVMInt8TypeInContext(em->ctx), (unsigned)bytes));
	globals[1] = LLVMAddGlobal(em->mod, LLVMArrayType(LLVMInt8TypeInContext(em->ctx), (unsigned)bytes), name);
	globals[0] = data ? LLVMAddGlobal(data, LLVMTypeOf(init), name) : globals[1];
	if (data)
		LLVMSetInitializer(globals[0], init);
	for (int i = 0; i < 2; i++) {
		LLVMSetGlobalConstant(globals[i], read);
		LLVMSetVisibility(globals[i], LLVMHiddenVisibility);
		LLVMSetAlignment(globals[i], 64);
	}
	return globals[1];
}

/* Host function fn of the module, named name: declared here, or the declaration a CALL made before it. */
static LLVMValueRef declare_function(Emitter *em, const LFunc *fn, const char *name, LLVMTypeRef *type)
{
	LLVMTypeRef params[COUNT_OF(fn->params)];
	LLVMValueRef func = LLVMGetNamedFunction(em->mod, name);
	for (uint32_t i = 0; i < fn->num_params; i++)
		params[i] = em->types[fn->params[i]];
	*type = LLVMFunctionType(em->types[LTYPE_VOID], params, fn->num_params, 0);
	return func ? func : LLVMAddFunction(em->mod, name, *type);
}

/* Emit LIR function fn as an external LLVM function called name. */
static LLVMValueRef emit_function(Emitter *em, const LFunc *fn, const char *name)
{
	LLVMTypeRef type;
	LLVMValueRef func = declare_function(em, fn, name, &type);
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

/* THREADS: OpenMP's threads for the next parallel region (omp_get_max_threads, which libgomp and libomp both provide). */
static LLVMValueRef host_threads(Emitter *em)
{
	LLVMTypeRef i32 = em->types[LTYPE_I32], type = LLVMFunctionType(i32, NULL, 0, 0);
	LLVMValueRef f = LLVMGetNamedFunction(em->mod, "omp_get_max_threads");
	if (!f)
		f = LLVMAddFunction(em->mod, "omp_get_max_threads", type);
	return LLVMBuildSExt(em->b, LLVMBuildCall2(em->b, type, f, NULL, 0, ""), em->types[LTYPE_I64], "");
}

/* CALL id: the entry, given the caller's out and flags (parameters 2 and 3: a CALL is at the top of its function's body). */
static void emit_call(Emitter *em, uint32_t id)
{
	const LInst *inst = &em->fn->insts[id];
	const LFunc *callee = em->m->funcs[inst->imm];
	char name[sizeof em->prefix + sizeof callee->name + 1];
	LLVMTypeRef type;
	LLVMValueRef func, args[LIR_PREDICT_PARAMS] = {llvm_value(em, inst->a), llvm_value(em, inst->b), em->params[2], em->params[3],
	                                               llvm_value(em, inst->c)};
	snprintf(name, sizeof name, "%s_%s", em->prefix, callee->name);
	func = declare_function(em, callee, name, &type);
	LLVMBuildCall2(em->b, type, func, args, LIR_PREDICT_PARAMS, "");
}

/* EXP in arithmetic, inline, which the loop vectorizer widens (llvm_exp); LOG, libm's (llvm.log). */
static LLVMValueRef host_math(Emitter *em, LOp op, LLVMValueRef x)
{
	return op == LOP_EXP ? llvm_exp(em, x) : llvm_call_intrinsic(em, "llvm.log", LLVMTypeOf(x), &x, 1);
}

/* BUFFER k: its global. */
static LLVMValueRef host_buffer(Emitter *em, uint32_t k) { return em->buffers[k]; }

static const TargetHooks host_hooks = {.buffer = host_buffer, .parallel_for = emit_parallel_for, .threads = host_threads,
                                       .call = emit_call, .apart = emit_apart, .math = host_math,
                                       .enter = enter_exact_fp, .leave = leave_exact_fp};

/* Module flag `name` (i32 1) on mod, which host.c reads to pick its pipeline. */
static void set_flag(LLVMContextRef ctx, LLVMModuleRef mod, const char *name)
{
	LLVMAddModuleFlag(mod, LLVMModuleFlagBehaviorOverride, name, strlen(name),
	                  LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(ctx), 1, 0)));
}

LLVMModuleRef target_build_module(LLVMContextRef ctx, const LModule *m, const char *prefix, const char *artifact_symbol,
                                  bool aarch64, MTops vectors, bool buffers_apart, LLVMModuleRef *data)
{
	Emitter em;
	char name[96];
	LLVMValueRef predict = NULL, predict_f64 = NULL;
	LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(prefix, ctx);
	bool *read;

	*data = LLVMModuleCreateWithNameInContext(prefix, ctx);
	llvm_emitter_init(&em, ctx, mod, m, &host_hooks, prefix);
	em.aarch64 = aarch64;
	em.x86 = !aarch64;
	em.avx2 = !aarch64 && vectors != MTOPS_NONE;
	em.avx512 = !aarch64 && vectors == MTOPS_WIDE;
	em.buffers = xcalloc(m->num_buffers + 1, sizeof *em.buffers);
	read = lir_buffers_read(m);
	for (uint32_t i = 0; i < m->num_buffers; i++)
		em.buffers[i] = emit_buffer(&em, buffers_apart ? NULL : *data, i, read[i]);
	free(read);
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
	if (m->code)
		set_flag(ctx, mod, LLVM_CODE_FLAG);
	if (m->waits)
		set_flag(ctx, mod, LLVM_WAITS_FLAG);
	/* The descriptor (names, labels) is data too; it points at the entry points through declarations. */
	em.mod = *data;
	llvm_emit_descriptor(&em, declare_like(*data, predict), predict_f64 ? declare_like(*data, predict_f64) : NULL,
	                     NULL, artifact_symbol);
	free(em.buffers);
	llvm_emitter_dispose(&em);
	return mod;
}
