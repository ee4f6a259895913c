/*
 * LIR -> LLVM IR, through the LLVM-C API.
 *
 * Every LIR value maps to an LLVMValueRef (values[]). VAR cells and LOCAL_ARRAYs are
 * allocas in the entry block of the LLVM function being built, so mem2reg promotes
 * them. A PARALLEL_FOR is outlined into a function of one pointer argument, the
 * context: the values its body uses from outside (captures), the iteration space and
 * an atomic counter from which threads take chunks of `grain` iterations. Small ranges
 * call the outlined function directly; large ones go through GOMP_parallel, which
 * libgomp and libomp both provide. SHARED LOCAL_ARRAYs reach the outlined body as
 * captured pointers like any other value. Values with lanes are LLVM vectors, loaded
 * and stored with the alignment of one element; ATOMIC is a monotonic atomicrmw.
 */
#include "target/llvm.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LOOP_NESTING LIR_MAX_NESTING

typedef struct Emitter {
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b;
	LLVMBuilderRef entry_b;     /* appends to the entry block of the function being built */
	LLVMTypeRef types[LTYPE_PTR + 1];
	const LModule *m;
	LLVMValueRef *buffers;      /* per module buffer: its global */
	const LFunc *fn;            /* LIR function being emitted */
	LLVMValueRef *values;       /* per LIR instruction of fn: its LLVM value */
	LLVMValueRef func;          /* LLVM function being built (the entry or an outlined body) */
	LLVMBasicBlockRef entry;    /* its alloca block */
	LLVMBasicBlockRef loop_exit[MAX_LOOP_NESTING]; /* exits of the enclosing LOOPs */
	uint32_t loops;
	uint32_t outlined;          /* outlined functions so far, for names */
	char prefix[64];
} Emitter;

static void emit_region(Emitter *em, uint32_t first);

static LLVMTypeRef type_of(Emitter *em, LType t) { return em->types[t]; }
static LLVMValueRef value(Emitter *em, uint32_t v) { return em->values[v]; }
static LLVMValueRef const_i64(Emitter *em, int64_t v) { return LLVMConstInt(em->types[LTYPE_I64], (unsigned long long)v, 1); }
static LLVMBasicBlockRef new_block(Emitter *em, const char *name) { return LLVMAppendBasicBlockInContext(em->ctx, em->func, name); }

/* An alloca of count elements of type in the current function's entry block. */
static LLVMValueRef entry_alloca(Emitter *em, LLVMTypeRef type, int64_t count)
{
	LLVMValueRef slot;
	LLVMPositionBuilderAtEnd(em->entry_b, em->entry);
	slot = count == 1 ? LLVMBuildAlloca(em->entry_b, type, "") : LLVMBuildAlloca(em->entry_b, LLVMArrayType(type, (unsigned)count), "");
	LLVMSetAlignment(slot, 16);
	return slot;
}

/* Start a function: an entry block for allocas and a first body block; the builder goes to the latter. */
static void begin_function(Emitter *em, LLVMValueRef func)
{
	em->func = func;
	em->entry = new_block(em, "entry");
	LLVMPositionBuilderAtEnd(em->b, new_block(em, "body"));
	em->loops = 0;
}

/* Finish a function started by begin_function: return, and jump from the entry block to the body. */
static void end_function(Emitter *em)
{
	LLVMBuildRetVoid(em->b);
	LLVMPositionBuilderAtEnd(em->entry_b, em->entry);
	LLVMBuildBr(em->entry_b, LLVMGetNextBasicBlock(em->entry));
}

/* A call to the overloaded intrinsic name on type. */
static LLVMValueRef call_intrinsic(Emitter *em, const char *name, LLVMTypeRef type, LLVMValueRef *args, unsigned nargs)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	LLVMValueRef decl = LLVMGetIntrinsicDeclaration(em->mod, id, &type, 1);
	LLVMTypeRef fn_type = LLVMIntrinsicGetType(em->ctx, id, &type, 1);
	return LLVMBuildCall2(em->b, fn_type, decl, args, nargs, "");
}

static const LLVMIntPredicate int_predicates[] = {
	[LCMP_EQ] = LLVMIntEQ, [LCMP_NE] = LLVMIntNE, [LCMP_SLT] = LLVMIntSLT, [LCMP_SLE] = LLVMIntSLE,
	[LCMP_SGT] = LLVMIntSGT, [LCMP_SGE] = LLVMIntSGE, [LCMP_ULT] = LLVMIntULT,
};
static const LLVMRealPredicate real_predicates[] = {
	[LCMP_OEQ] = LLVMRealOEQ, [LCMP_ONE] = LLVMRealONE, [LCMP_OLT] = LLVMRealOLT, [LCMP_OLE] = LLVMRealOLE,
	[LCMP_OGT] = LLVMRealOGT, [LCMP_OGE] = LLVMRealOGE, [LCMP_ULT_F] = LLVMRealULT, [LCMP_ULE_F] = LLVMRealULE,
	[LCMP_UGT_F] = LLVMRealUGT, [LCMP_UGE_F] = LLVMRealUGE, [LCMP_UNO] = LLVMRealUNO,
};
static const LLVMOpcode cast_opcodes[] = {
	[LCAST_SEXT] = LLVMSExt, [LCAST_ZEXT] = LLVMZExt, [LCAST_TRUNC] = LLVMTrunc, [LCAST_FPEXT] = LLVMFPExt,
	[LCAST_FPTRUNC] = LLVMFPTrunc, [LCAST_SITOFP] = LLVMSIToFP, [LCAST_FPTOSI] = LLVMFPToSI,
};

/* The address of element index of ptr, elements being of type. */
static LLVMValueRef element(Emitter *em, LLVMTypeRef type, uint32_t ptr, uint32_t index)
{
	LLVMValueRef i = value(em, index);
	return LLVMBuildGEP2(em->b, type, value(em, ptr), &i, 1, "");
}

/* The type of values of LIR type t with lanes lanes: a vector type when lanes > 1. */
static LLVMTypeRef lanes_type(Emitter *em, LType t, unsigned lanes)
{
	return lanes > 1 ? LLVMVectorType(em->types[t], lanes) : em->types[t];
}

/* A constant of LIR instruction inst: imm or fimm, splat over its lanes. */
static LLVMValueRef emit_const(Emitter *em, const LInst *inst)
{
	LLVMTypeRef type = type_of(em, (LType)inst->type);
	LLVMValueRef scalar, lanes[LIR_MAX_LANES];
	if (inst->type == LTYPE_F32 || inst->type == LTYPE_F64)
		scalar = LLVMConstReal(type, inst->fimm);
	else
		scalar = LLVMConstInt(type, (unsigned long long)inst->imm, 1);
	if (inst->lanes <= 1)
		return scalar;
	for (unsigned i = 0; i < inst->lanes; i++)
		lanes[i] = scalar;
	return LLVMConstVector(lanes, inst->lanes);
}

/* LOAD: one element, or a vector of consecutive elements aligned as one element. */
static LLVMValueRef emit_load(Emitter *em, const LInst *inst)
{
	LLVMTypeRef type = type_of(em, (LType)inst->type);
	LLVMValueRef load = LLVMBuildLoad2(em->b, lanes_type(em, (LType)inst->type, inst->lanes),
	                                   element(em, type, inst->a, inst->b), "");
	if (inst->lanes > 1)
		LLVMSetAlignment(load, (unsigned)lir_type_size((LType)inst->type));
	return load;
}

/* STORE of c, a scalar or a vector (whose elements are the ones indexed, aligned as one element). */
static void emit_store(Emitter *em, const LInst *inst)
{
	LLVMValueRef c = value(em, inst->c), store;
	LLVMTypeRef type = LLVMTypeOf(c);
	bool vector = LLVMGetTypeKind(type) == LLVMVectorTypeKind;
	if (vector)
		type = LLVMGetElementType(type);
	store = LLVMBuildStore(em->b, c, element(em, type, inst->a, inst->b));
	if (vector)
		LLVMSetAlignment(store, (unsigned)lir_type_size((LType)em->fn->insts[inst->c].type));
}

/* ATOMIC: atomicrmw add, min or max (integers: signed; floats: fadd, fmin, fmax), monotonic (relaxed) ordering. */
static void emit_atomic(Emitter *em, const LInst *inst)
{
	static const LLVMAtomicRMWBinOp ints[] = {[LATOMIC_ADD] = LLVMAtomicRMWBinOpAdd, [LATOMIC_MIN] = LLVMAtomicRMWBinOpMin,
	                                          [LATOMIC_MAX] = LLVMAtomicRMWBinOpMax};
	static const LLVMAtomicRMWBinOp floats[] = {[LATOMIC_ADD] = LLVMAtomicRMWBinOpFAdd, [LATOMIC_MIN] = LLVMAtomicRMWBinOpFMin,
	                                            [LATOMIC_MAX] = LLVMAtomicRMWBinOpFMax};
	LLVMValueRef c = value(em, inst->c);
	LLVMTypeRef type = LLVMTypeOf(c);
	bool fl = LLVMGetTypeKind(type) == LLVMFloatTypeKind || LLVMGetTypeKind(type) == LLVMDoubleTypeKind;
	LLVMBuildAtomicRMW(em->b, (fl ? floats : ints)[inst->sub], element(em, type, inst->a, inst->b), c,
	                   LLVMAtomicOrderingMonotonic, 0);
}

/* PREFETCH: llvm.prefetch of the element's address for reading (0), high locality (3), data cache (1). */
static void emit_prefetch(Emitter *em, const LInst *inst)
{
	LLVMTypeRef i32 = em->types[LTYPE_I32];
	LLVMValueRef args[4] = {element(em, type_of(em, (LType)inst->type), inst->a, inst->b), LLVMConstInt(i32, 0, 0),
	                        LLVMConstInt(i32, 3, 0), LLVMConstInt(i32, 1, 0)};
	call_intrinsic(em, "llvm.prefetch", em->types[LTYPE_PTR], args, 4);
}

/* for (iv = begin; iv < end; iv += step) body, with the LIR value of the loop bound to iv. */
static void emit_for(Emitter *em, uint32_t id, LLVMValueRef begin, LLVMValueRef end, LLVMValueRef step)
{
	const LInst *inst = &em->fn->insts[id];
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(em->b), head = new_block(em, "for"), body = new_block(em, "for.body");
	LLVMBasicBlockRef exit = new_block(em, "for.end"), latch;
	LLVMValueRef iv, next;

	LLVMBuildBr(em->b, head);
	LLVMPositionBuilderAtEnd(em->b, head);
	iv = LLVMBuildPhi(em->b, em->types[LTYPE_I64], "");
	LLVMBuildCondBr(em->b, LLVMBuildICmp(em->b, LLVMIntSLT, iv, end, ""), body, exit);
	LLVMPositionBuilderAtEnd(em->b, body);
	em->values[id] = iv;
	emit_region(em, inst->body);
	latch = LLVMGetInsertBlock(em->b);
	next = LLVMBuildNSWAdd(em->b, iv, step, "");
	LLVMBuildBr(em->b, head);
	LLVMAddIncoming(iv, &begin, &pre, 1);
	LLVMAddIncoming(iv, &next, &latch, 1);
	LLVMPositionBuilderAtEnd(em->b, exit);
}

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
			if (v == LIR_NONE || inside[v] || seen[v] || LLVMIsConstant(value(em, v)))
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
	LLVMValueRef grain = const_i64(em, em->fn->insts[id].imm), *saved = xmalloc(((size_t)count + 1) * sizeof *saved);
	LLVMValueRef body, ctx, trips, begin, step, first, last;
	LLVMBasicBlockRef take, run, done;
	char name[96];

	snprintf(name, sizeof name, "%s.parallel.%u", em->prefix, em->outlined++);
	body = LLVMAddFunction(em->mod, name, LLVMFunctionType(em->types[LTYPE_VOID], &ptr, 1, 0));
	LLVMSetLinkage(body, LLVMInternalLinkage);
	begin_function(em, body);
	ctx = LLVMGetParam(body, 0);
	trips = load_field(em, ctx_type, ctx, CTX_TRIPS, i64);
	begin = load_field(em, ctx_type, ctx, CTX_BEGIN, i64);
	step = load_field(em, ctx_type, ctx, CTX_STEP, i64);
	for (uint32_t i = 0; i < count; i++) {
		saved[i] = em->values[captures[i]];
		em->values[captures[i]] = load_field(em, ctx_type, ctx, CTX_CAPTURES + i, LLVMTypeOf(saved[i]));
	}
	take = new_block(em, "take");
	run = new_block(em, "run");
	done = new_block(em, "done");
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
	emit_for(em, id, LLVMBuildAdd(em->b, begin, LLVMBuildMul(em->b, first, step, ""), ""),
	         LLVMBuildAdd(em->b, begin, LLVMBuildMul(em->b, last, step, ""), ""), step);
	LLVMBuildBr(em->b, take);
	LLVMPositionBuilderAtEnd(em->b, done);
	end_function(em);

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
	LLVMBasicBlockRef serial = new_block(em, "serial"), team = new_block(em, "team"), after = new_block(em, "parallel.end");

	if (!gomp)
		gomp = LLVMAddFunction(em->mod, "GOMP_parallel", gomp_type);
	LLVMBuildCondBr(em->b, LLVMBuildICmp(em->b, LLVMIntSLT, trips, const_i64(em, 2 * grain), ""), serial, team);
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
	LLVMValueRef begin = value(em, inst->a), end = value(em, inst->b), step = value(em, inst->c);
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
		fields[CTX_CAPTURES + i] = LLVMTypeOf(value(em, captures[i]));
	ctx_type = LLVMStructTypeInContext(em->ctx, fields, count + CTX_CAPTURES, 0);

	/* trips = max(0, ceil((end - begin) / step)) */
	ctx = entry_alloca(em, ctx_type, 1);
	span = LLVMBuildSub(em->b, end, begin, "");
	trips = LLVMBuildSDiv(em->b, LLVMBuildAdd(em->b, span, LLVMBuildSub(em->b, step, const_i64(em, 1), ""), ""), step, "");
	trips = LLVMBuildSelect(em->b, LLVMBuildICmp(em->b, LLVMIntSGT, span, const_i64(em, 0), ""), trips, const_i64(em, 0), "");
	{
		LLVMValueRef init[CTX_CAPTURES] = {[CTX_TRIPS] = trips, [CTX_NEXT] = const_i64(em, 0), [CTX_BEGIN] = begin,
		                                   [CTX_STEP] = step};
		for (unsigned i = 0; i < CTX_CAPTURES; i++)
			LLVMBuildStore(em->b, init[i], LLVMBuildStructGEP2(em->b, ctx_type, ctx, i, ""));
		for (uint32_t i = 0; i < count; i++)
			LLVMBuildStore(em->b, value(em, captures[i]), LLVMBuildStructGEP2(em->b, ctx_type, ctx, CTX_CAPTURES + i, ""));
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

/* IF a { body } else { alt }. */
static void emit_if(Emitter *em, const LInst *inst)
{
	LLVMBasicBlockRef then = new_block(em, "then"), otherwise = new_block(em, "else"), merge = new_block(em, "endif");
	LLVMBuildCondBr(em->b, value(em, inst->a), then, otherwise);
	LLVMPositionBuilderAtEnd(em->b, then);
	emit_region(em, inst->body);
	LLVMBuildBr(em->b, merge);
	LLVMPositionBuilderAtEnd(em->b, otherwise);
	emit_region(em, inst->alt);
	LLVMBuildBr(em->b, merge);
	LLVMPositionBuilderAtEnd(em->b, merge);
}

/* LOOP { body }: BREAK_IFs inside jump to its exit. */
static void emit_loop(Emitter *em, const LInst *inst)
{
	LLVMBasicBlockRef head = new_block(em, "loop"), exit = new_block(em, "loop.end");
	if (em->loops == MAX_LOOP_NESTING)
		die("LIR loops nested deeper than %d", MAX_LOOP_NESTING);
	LLVMBuildBr(em->b, head);
	LLVMPositionBuilderAtEnd(em->b, head);
	em->loop_exit[em->loops++] = exit;
	emit_region(em, inst->body);
	em->loops--;
	LLVMBuildBr(em->b, head);
	LLVMPositionBuilderAtEnd(em->b, exit);
}

/* A binary instruction of LIR opcode op. */
static LLVMValueRef emit_binary(Emitter *em, LOp op, LLVMValueRef x, LLVMValueRef y)
{
	switch (op) {
	case LOP_ADD: return LLVMBuildAdd(em->b, x, y, "");
	case LOP_SUB: return LLVMBuildSub(em->b, x, y, "");
	case LOP_MUL: return LLVMBuildMul(em->b, x, y, "");
	case LOP_AND: return LLVMBuildAnd(em->b, x, y, "");
	case LOP_OR: return LLVMBuildOr(em->b, x, y, "");
	case LOP_SHL: return LLVMBuildShl(em->b, x, y, "");
	case LOP_ASHR: return LLVMBuildAShr(em->b, x, y, "");
	case LOP_SDIV: return LLVMBuildSDiv(em->b, x, y, "");
	case LOP_MIN: return LLVMBuildSelect(em->b, LLVMBuildICmp(em->b, LLVMIntSLT, x, y, ""), x, y, "");
	case LOP_FADD: return LLVMBuildFAdd(em->b, x, y, "");
	case LOP_FSUB: return LLVMBuildFSub(em->b, x, y, "");
	case LOP_FMUL: return LLVMBuildFMul(em->b, x, y, "");
	case LOP_FDIV: return LLVMBuildFDiv(em->b, x, y, "");
	case LOP_FMIN:
	case LOP_FMAX: {
		LLVMValueRef args[2] = {x, y};
		return call_intrinsic(em, op == LOP_FMIN ? "llvm.minnum" : "llvm.maxnum", LLVMTypeOf(x), args, 2);
	}
	default: die("LIR op %s is not binary", lir_op_name(op));
	}
}

/* Emit one instruction; sets values[id] when it has a result. */
static void emit_inst(Emitter *em, uint32_t id)
{
	const LInst *inst = &em->fn->insts[id];
	LLVMTypeRef type = type_of(em, (LType)inst->type);
	LLVMValueRef *out = &em->values[id];

	switch ((LOp)inst->op) {
	case LOP_PARAM: *out = LLVMGetParam(em->func, (unsigned)inst->imm); break;
	case LOP_CONST: *out = emit_const(em, inst); break;
	case LOP_BUFFER: *out = em->buffers[inst->imm]; break;
	case LOP_LOAD: *out = emit_load(em, inst); break;
	case LOP_INDEX: {
		LLVMValueRef bytes = LLVMBuildMul(em->b, value(em, inst->b), LLVMConstInt(em->types[LTYPE_I64], (unsigned long long)inst->imm, 0), "");
		*out = LLVMBuildGEP2(em->b, em->types[LTYPE_I8], value(em, inst->a), &bytes, 1, "");
		break;
	}
	case LOP_STORE: emit_store(em, inst); break;
	case LOP_ATOMIC: emit_atomic(em, inst); break;
	case LOP_PREFETCH: emit_prefetch(em, inst); break;
	case LOP_ADD: case LOP_SUB: case LOP_MUL: case LOP_AND: case LOP_OR: case LOP_SHL: case LOP_ASHR:
	case LOP_MIN: case LOP_SDIV: case LOP_FADD: case LOP_FSUB: case LOP_FMUL: case LOP_FDIV: case LOP_FMIN: case LOP_FMAX:
		*out = emit_binary(em, (LOp)inst->op, value(em, inst->a), value(em, inst->b));
		break;
	case LOP_FNEG: *out = LLVMBuildFNeg(em->b, value(em, inst->a), ""); break;
	case LOP_EXP: case LOP_LOG: case LOP_SQRT: {
		LLVMValueRef x = value(em, inst->a);
		*out = call_intrinsic(em, inst->op == LOP_EXP ? "llvm.exp" : inst->op == LOP_LOG ? "llvm.log" : "llvm.sqrt", type, &x, 1);
		break;
	}
	case LOP_ICMP: *out = LLVMBuildICmp(em->b, int_predicates[inst->sub], value(em, inst->a), value(em, inst->b), ""); break;
	case LOP_FCMP: *out = LLVMBuildFCmp(em->b, real_predicates[inst->sub], value(em, inst->a), value(em, inst->b), ""); break;
	case LOP_SELECT: *out = LLVMBuildSelect(em->b, value(em, inst->a), value(em, inst->b), value(em, inst->c), ""); break;
	case LOP_CAST: *out = LLVMBuildCast(em->b, cast_opcodes[inst->sub], value(em, inst->a), type, ""); break;
	case LOP_VAR:
		*out = entry_alloca(em, type, 1);
		LLVMBuildStore(em->b, value(em, inst->a), *out);
		break;
	case LOP_GET: *out = LLVMBuildLoad2(em->b, type, value(em, inst->a), ""); break;
	case LOP_SET: LLVMBuildStore(em->b, value(em, inst->b), value(em, inst->a)); break;
	case LOP_LOCAL_ARRAY: *out = entry_alloca(em, type, inst->imm); break;
	case LOP_FOR: emit_for(em, id, value(em, inst->a), value(em, inst->b), value(em, inst->c)); break;
	case LOP_PARALLEL_FOR: emit_parallel_for(em, id); break;
	case LOP_LOOP: emit_loop(em, inst); break;
	case LOP_BREAK_IF: {
		LLVMBasicBlockRef stay = new_block(em, "loop.next");
		LLVMBuildCondBr(em->b, value(em, inst->a), em->loop_exit[em->loops - 1], stay);
		LLVMPositionBuilderAtEnd(em->b, stay);
		break;
	}
	case LOP_IF: emit_if(em, inst); break;
	case LOP_GPU_INDEX: case LOP_BARRIER: case LOP_SHUFFLE: die("LIR op %s in a host function", lir_op_name((LOp)inst->op));
	case LOP_COUNT: die("bad LIR op");
	}
}

static void emit_region(Emitter *em, uint32_t first)
{
	for (uint32_t id = first; id != LIR_NONE; id = em->fn->insts[id].next)
		emit_inst(em, id);
}

/* A private constant global holding buffer buf. */
static LLVMValueRef emit_buffer(Emitter *em, const LBuffer *buf)
{
	size_t bytes = (size_t)buf->count * lir_type_size(buf->elem);
	LLVMValueRef init = LLVMConstStringInContext(em->ctx, buf->data ? buf->data : "", (unsigned)bytes, 1);
	LLVMValueRef global = LLVMAddGlobal(em->mod, LLVMTypeOf(init), buf->name);
	if (bytes > UINT32_MAX)
		die("buffer %s is larger than 4 GiB", buf->name);
	LLVMSetInitializer(global, init);
	LLVMSetGlobalConstant(global, 1);
	LLVMSetLinkage(global, LLVMPrivateLinkage);
	LLVMSetUnnamedAddress(global, LLVMGlobalUnnamedAddr);
	LLVMSetAlignment(global, 64);
	return global;
}

/* Add the enum attribute name to function f at index (0 = return, 1.. = parameters, -1 = function). */
static void add_attribute(Emitter *em, LLVMValueRef f, LLVMAttributeIndex index, const char *name)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
	LLVMAddAttributeAtIndex(f, index, LLVMCreateEnumAttribute(em->ctx, kind, 0));
}

/* Emit LIR function fn as an external LLVM function called name. */
static LLVMValueRef emit_function(Emitter *em, const LFunc *fn, const char *name)
{
	LLVMTypeRef params[COUNT_OF(fn->params)], type;
	LLVMValueRef func;
	for (uint32_t i = 0; i < fn->num_params; i++)
		params[i] = type_of(em, fn->params[i]);
	type = LLVMFunctionType(em->types[LTYPE_VOID], params, fn->num_params, 0);
	func = LLVMAddFunction(em->mod, name, type);
	add_attribute(em, func, LLVMAttributeFunctionIndex, "nounwind");
	/* The rows and the output must not overlap (grove.h says so); this lets loads move past stores. */
	for (uint32_t i = 0; i < fn->num_params; i++)
		if (fn->params[i] == LTYPE_PTR)
			add_attribute(em, func, i + 1, "noalias");
	em->fn = fn;
	em->values = xcalloc(fn->num_insts ? fn->num_insts : 1, sizeof *em->values);
	begin_function(em, func);
	emit_region(em, fn->body);
	end_function(em);
	free(em->values);
	em->values = NULL;
	return func;
}

/* A private constant global holding init (of type). */
static LLVMValueRef constant_global(Emitter *em, LLVMTypeRef type, LLVMValueRef init)
{
	LLVMValueRef global = LLVMAddGlobal(em->mod, type, "");
	LLVMSetInitializer(global, init);
	LLVMSetGlobalConstant(global, 1);
	LLVMSetLinkage(global, LLVMPrivateLinkage);
	return global;
}

/* n strings as a constant array of pointers to NUL-terminated strings; a NULL pointer for NULL. */
static LLVMValueRef emit_strings(Emitter *em, char *const *strings, uint32_t n)
{
	LLVMTypeRef ptr = em->types[LTYPE_PTR];
	LLVMValueRef *items, array;
	if (!strings)
		return LLVMConstPointerNull(ptr);
	items = xcalloc(n + 1, sizeof *items);
	for (uint32_t k = 0; k < n; k++) {
		LLVMValueRef s = LLVMConstStringInContext(em->ctx, strings[k], (unsigned)strlen(strings[k]), 0);
		items[k] = constant_global(em, LLVMTypeOf(s), s);
	}
	array = constant_global(em, LLVMArrayType(ptr, n), LLVMConstArray(ptr, items, n));
	free(items);
	return array;
}

/* The module's int64 labels as a constant array; a NULL pointer where it has none. */
static LLVMValueRef emit_label_ints(Emitter *em)
{
	const LModule *m = em->m;
	LLVMTypeRef i64 = em->types[LTYPE_I64];
	LLVMValueRef *items, array;
	if (!m->label_ints)
		return LLVMConstPointerNull(em->types[LTYPE_PTR]);
	items = xcalloc(m->num_labels + 1, sizeof *items);
	for (uint32_t k = 0; k < m->num_labels; k++)
		items[k] = LLVMConstInt(i64, (unsigned long long)m->label_ints[k], 1);
	array = constant_global(em, LLVMArrayType(i64, m->num_labels), LLVMConstArray(i64, items, m->num_labels));
	free(items);
	return array;
}

/*
 * The artifact descriptor: a constant GroveArtifact (version 5) named symbol: six i32
 * fields, the two i64 workspace sizes, the predict and predict_f64 pointers (the latter
 * NULL when the module has no such entry), the labels, the feature names and the device
 * (NULL: a host artifact).
 */
static void emit_descriptor(Emitter *em, LLVMValueRef predict, LLVMValueRef predict_f64, const char *symbol)
{
	LLVMTypeRef i32 = em->types[LTYPE_I32], i64 = em->types[LTYPE_I64], ptr = em->types[LTYPE_PTR];
	LLVMTypeRef fields[15] = {i32, i32, i32, i32, i32, i32, i64, i64, ptr, ptr, i32, ptr, ptr, ptr, ptr};
	LLVMTypeRef type = LLVMStructTypeInContext(em->ctx, fields, 15, 0);
	uint32_t ints[6] = {GROVE_ARTIFACT_MAGIC, GROVE_ARTIFACT_VERSION, em->m->num_features, em->m->num_outputs,
	                    em->m->num_margins, em->m->transform};
	LLVMValueRef init[15], global;
	for (int i = 0; i < 6; i++)
		init[i] = LLVMConstInt(i32, ints[i], 0);
	init[6] = LLVMConstInt(i64, em->m->workspace_fixed, 0);
	init[7] = LLVMConstInt(i64, em->m->workspace_per_row, 0);
	init[8] = predict;
	init[9] = predict_f64 ? predict_f64 : LLVMConstPointerNull(ptr);
	init[10] = LLVMConstInt(i32, em->m->num_labels, 0);
	init[11] = emit_label_ints(em);
	init[12] = emit_strings(em, em->m->label_strings, em->m->num_labels);
	init[13] = emit_strings(em, em->m->feature_names, em->m->num_features);
	init[14] = LLVMConstPointerNull(ptr);
	global = LLVMAddGlobal(em->mod, type, symbol);
	LLVMSetInitializer(global, LLVMConstNamedStruct(type, init, 15));
	LLVMSetGlobalConstant(global, 1);
}

LLVMModuleRef target_build_module(LLVMContextRef ctx, const LModule *m, const char *prefix, const char *artifact_symbol)
{
	Emitter em = {.ctx = ctx, .m = m};
	char name[96];
	LLVMValueRef predict = NULL, predict_f64 = NULL;

	snprintf(em.prefix, sizeof em.prefix, "%s", prefix);
	em.mod = LLVMModuleCreateWithNameInContext(prefix, ctx);
	em.b = LLVMCreateBuilderInContext(ctx);
	em.entry_b = LLVMCreateBuilderInContext(ctx);
	em.types[LTYPE_VOID] = LLVMVoidTypeInContext(ctx);
	em.types[LTYPE_I1] = LLVMInt1TypeInContext(ctx);
	em.types[LTYPE_I8] = LLVMInt8TypeInContext(ctx);
	em.types[LTYPE_I32] = LLVMInt32TypeInContext(ctx);
	em.types[LTYPE_I64] = LLVMInt64TypeInContext(ctx);
	em.types[LTYPE_F32] = LLVMFloatTypeInContext(ctx);
	em.types[LTYPE_F64] = LLVMDoubleTypeInContext(ctx);
	em.types[LTYPE_PTR] = LLVMPointerTypeInContext(ctx, 0);

	em.buffers = xcalloc(m->num_buffers + 1, sizeof *em.buffers);
	for (uint32_t i = 0; i < m->num_buffers; i++)
		em.buffers[i] = emit_buffer(&em, &m->buffers[i]);
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
	emit_descriptor(&em, predict, predict_f64, artifact_symbol);
	free(em.buffers);
	LLVMDisposeBuilder(em.b);
	LLVMDisposeBuilder(em.entry_b);
	return em.mod;
}
