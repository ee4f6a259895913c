/*
 * LIR -> LLVM IR, through the LLVM-C API: the target-neutral core.
 *
 * Every LIR value maps to an LLVMValueRef (values[]). VAR cells and private
 * LOCAL_ARRAYs are allocas in the entry block of the LLVM function being built, so
 * mem2reg promotes them. Values with lanes are LLVM vectors, loaded and stored with the
 * alignment of one element; ATOMIC is a monotonic atomicrmw. The ops a target does its
 * own way (buffers, PARALLEL_FOR, the GPU ops, BLOCK arrays, exp and log where there is
 * no libm) go through its hooks (target/llvm.h).
 */
#include "target/llvm.h"

#include <stdlib.h>
#include <string.h>

static LLVMTypeRef type_of(Emitter *em, LType t) { return em->types[t]; }
LLVMValueRef llvm_const_i64(Emitter *em, int64_t v) { return LLVMConstInt(em->types[LTYPE_I64], (unsigned long long)v, 1); }
LLVMValueRef llvm_const_i32(Emitter *em, uint32_t v) { return LLVMConstInt(em->types[LTYPE_I32], v, 0); }
LLVMBasicBlockRef llvm_new_block(Emitter *em, const char *name) { return LLVMAppendBasicBlockInContext(em->ctx, em->func, name); }

LLVMValueRef llvm_entry_alloca(Emitter *em, LLVMTypeRef type, int64_t count)
{
	LLVMValueRef slot;
	LLVMPositionBuilderAtEnd(em->entry_b, em->entry);
	slot = count == 1 ? LLVMBuildAlloca(em->entry_b, type, "") : LLVMBuildAlloca(em->entry_b, LLVMArrayType(type, (unsigned)count), "");
	LLVMSetAlignment(slot, 16);
	return slot;
}

void llvm_begin_function(Emitter *em, LLVMValueRef func)
{
	em->func = func;
	em->entry = llvm_new_block(em, "entry");
	LLVMPositionBuilderAtEnd(em->b, llvm_new_block(em, "body"));
	em->loops = 0;
}

void llvm_end_function(Emitter *em)
{
	LLVMBuildRetVoid(em->b);
	LLVMPositionBuilderAtEnd(em->entry_b, em->entry);
	LLVMBuildBr(em->entry_b, LLVMGetNextBasicBlock(em->entry));
}

LLVMValueRef llvm_call_intrinsic(Emitter *em, const char *name, LLVMTypeRef type, LLVMValueRef *args, unsigned nargs)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name)), overloads = type != NULL;
	LLVMValueRef decl = LLVMGetIntrinsicDeclaration(em->mod, id, &type, overloads);
	LLVMTypeRef fn_type = LLVMIntrinsicGetType(em->ctx, id, &type, overloads);
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
	[LCAST_FPTRUNC] = LLVMFPTrunc, [LCAST_SITOFP] = LLVMSIToFP, [LCAST_FPTOSI] = LLVMFPToSI, [LCAST_BITCAST] = LLVMBitCast,
};

/* An address's index: i64, or an i32 sign-extended (lower/gpu_ints.c). */
static LLVMValueRef index_value(Emitter *em, uint32_t index)
{
	LLVMValueRef i = llvm_value(em, index);
	return lir_type(em->fn, index) == LTYPE_I32 ? LLVMBuildSExt(em->b, i, em->types[LTYPE_I64], "") : i;
}

/* The address of element index of ptr, elements being of type. */
static LLVMValueRef element(Emitter *em, LLVMTypeRef type, uint32_t ptr, uint32_t index)
{
	LLVMValueRef i = index_value(em, index);
	return LLVMBuildGEP2(em->b, type, llvm_value(em, ptr), &i, 1, "");
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
		lanes[i] = inst->sub == LIR_CONST_STEPS ? LLVMConstInt(type, (unsigned long long)(inst->imm * i), 1) : scalar;
	return LLVMConstVector(lanes, inst->lanes);
}

/* Where em profiles, tell the target of the access at address by inst, of its type and lanes. */
static void profile_access(Emitter *em, const LInst *inst, LType type, unsigned lanes, LLVMValueRef address)
{
	if (em->profile && em->hooks->access)
		em->hooks->access(em, address, (unsigned)lir_type_size(type) * (lanes > 1 ? lanes : 1),
		                  (uint32_t)(inst - em->fn->insts));
}

/* LOAD: one element, or a vector of consecutive elements aligned as one element. */
static LLVMValueRef emit_load(Emitter *em, const LInst *inst)
{
	LLVMTypeRef type = type_of(em, (LType)inst->type);
	LLVMValueRef address = element(em, type, inst->a, inst->b), load;
	profile_access(em, inst, (LType)inst->type, inst->lanes, address);
	load = LLVMBuildLoad2(em->b, lanes_type(em, (LType)inst->type, inst->lanes), address, "");
	if (inst->lanes > 1)
		LLVMSetAlignment(load, (unsigned)lir_type_size((LType)inst->type));
	return load;
}

/*
 * A GATHER from a table of two 512-bit vectors, on x86 with AVX-512: one two-table
 * permute (vpermi2), which LLVM does not make of two one-table permutes and a select. It
 * reads the index's low bits alone, as a GATHER of sub 1 may want.
 */
static LLVMValueRef emit_permute_pair(Emitter *em, const LInst *inst)
{
	static const char *const names[] = {[LTYPE_I32] = "llvm.x86.avx512.vpermi2var.d.512",
	                                    [LTYPE_I64] = "llvm.x86.avx512.vpermi2var.q.512",
	                                    [LTYPE_F32] = "llvm.x86.avx512.vpermi2var.ps.512",
	                                    [LTYPE_F64] = "llvm.x86.avx512.vpermi2var.pd.512"};
	LLVMTypeRef type = type_of(em, (LType)inst->type), half = LLVMVectorType(type, inst->lanes);
	LLVMValueRef base = llvm_value(em, inst->a), start = llvm_value(em, inst->b), indices = llvm_value(em, inst->c);
	LLVMValueRef second = LLVMConstInt(em->types[LTYPE_I64], inst->lanes, 0), args[3];
	LLVMValueRef at = LLVMBuildGEP2(em->b, type, base, &start, 1, "");
	for (int k = 0; k < 2; k++) {
		args[2 * k] = LLVMBuildLoad2(em->b, half, k ? LLVMBuildGEP2(em->b, type, at, &second, 1, "") : at, "");
		LLVMSetAlignment(args[2 * k], (unsigned)lir_type_size((LType)inst->type));
	}
	args[1] = indices;
	if (lir_type_size((LType)inst->type) == 8)
		args[1] = LLVMBuildSExt(em->b, indices, LLVMVectorType(em->types[LTYPE_I64], inst->lanes), "");
	return llvm_call_intrinsic(em, names[inst->type], NULL, args, 3);
}

/*
 * A GATHER of 8 or 16 lanes of 4 bytes from a table of 8, on x86 with AVX2: a vpermd
 * (vpermps) for each 8 lanes, which reads the index's low 3 bits alone, as a table's GATHER
 * of sub 1 does (LLVM's own permute would want the index ANDed).
 */
static LLVMValueRef emit_permute8(Emitter *em, const LInst *inst)
{
	LLVMTypeRef type = type_of(em, (LType)inst->type);
	LLVMValueRef start = llvm_value(em, inst->b), indices = llvm_value(em, inst->c), args[2], halves[2], pick[16];
	LLVMValueRef table = LLVMBuildLoad2(em->b, LLVMVectorType(type, 8), LLVMBuildGEP2(em->b, type, llvm_value(em, inst->a), &start, 1, ""), "");
	unsigned n = inst->lanes / 8;
	LLVMSetAlignment(table, 4);
	for (unsigned i = 0; i < 16; i++)
		pick[i] = llvm_const_i32(em, i);
	for (unsigned k = 0; k < n; k++) {
		args[0] = table;
		args[1] = n == 1 ? indices : LLVMBuildShuffleVector(em->b, indices, indices, LLVMConstVector(pick + 8 * k, 8), "");
		halves[k] = llvm_call_intrinsic(em, inst->type == LTYPE_F32 ? "llvm.x86.avx2.permps" : "llvm.x86.avx2.permd", NULL, args, 2);
	}
	return n == 1 ? halves[0] : LLVMBuildShuffleVector(em->b, halves[0], halves[1], LLVMConstVector(pick, 16), "");
}

/* A table's GATHER of sub 1 (ir/lir.h): its indices' low bits, for an instruction that reads them whole. */
static LLVMValueRef low_bits(Emitter *em, const LInst *inst, LLVMValueRef indices)
{
	LLVMValueRef mask[64];
	unsigned lanes = LLVMGetVectorSize(LLVMTypeOf(indices));
	if (!inst->sub)
		return indices;
	for (unsigned i = 0; i < lanes; i++)
		mask[i] = LLVMConstInt(LLVMGetElementType(LLVMTypeOf(indices)), (unsigned long long)inst->imm - 1, 0);
	return LLVMBuildAnd(em->b, indices, LLVMConstVector(mask, lanes), "");
}

/*
 * A GATHER of 16 or 32 i8 lanes from a table of 16, on x86 with AVX2: a pshufb (whose
 * 256-bit form picks within each 128-bit half: the table is in both). LLVM makes its own
 * variable permutes of bytes three instructions longer (it keeps lanes past 15 apart).
 */
static LLVMValueRef emit_byte_table(Emitter *em, const LInst *inst)
{
	LLVMTypeRef i8 = em->types[LTYPE_I8], table16 = LLVMVectorType(i8, 16);
	LLVMValueRef start = llvm_value(em, inst->b), indices = llvm_value(em, inst->c), args[2], both[32];
	LLVMValueRef table = LLVMBuildLoad2(em->b, table16, LLVMBuildGEP2(em->b, i8, llvm_value(em, inst->a), &start, 1, ""), "");
	LLVMSetAlignment(table, 1);
	if (inst->lanes == 32) {
		for (unsigned i = 0; i < 32; i++)
			both[i] = llvm_const_i32(em, i % 16);
		table = LLVMBuildShuffleVector(em->b, table, LLVMGetUndef(table16), LLVMConstVector(both, 32), "");
	}
	if (em->fn->insts[inst->c].type != LTYPE_I8)
		indices = LLVMBuildTrunc(em->b, indices, LLVMVectorType(i8, inst->lanes), "");
	indices = low_bits(em, inst, indices); /* (pshufb reads bit 7 too) */
	args[0] = table;
	args[1] = indices;
	return llvm_call_intrinsic(em, inst->lanes == 32 ? "llvm.x86.avx2.pshuf.b" : "llvm.x86.ssse3.pshuf.b.128", NULL, args, 2);
}

/*
 * GATHER: each lane's element loaded on its own and inserted (x86's gather instructions are slower for a few lanes),
 * or from a table loaded whole (x86's code generation makes that a permute; a table of two vectors, emit_permute_pair).
 */
static LLVMValueRef emit_gather(Emitter *em, const LInst *inst)
{
	LLVMTypeRef type = type_of(em, (LType)inst->type), i64 = em->types[LTYPE_I64], i32 = em->types[LTYPE_I32];
	LLVMValueRef base = llvm_value(em, inst->a), start = llvm_value(em, inst->b), indices = llvm_value(em, inst->c);
	LLVMValueRef v = LLVMGetUndef(lanes_type(em, (LType)inst->type, inst->lanes));
	LLVMValueRef table = NULL;
	unsigned lanes = inst->lanes > 1 ? inst->lanes : 1;
	if (em->avx512 && inst->imm == 2 * lanes && lanes * lir_type_size((LType)inst->type) == 64 &&
	    lir_type_size((LType)inst->type) >= 4)
		return emit_permute_pair(em, inst);
	if (em->avx2 && inst->type == LTYPE_I8 && inst->imm == 16 && (inst->lanes == 16 || inst->lanes == 32))
		return emit_byte_table(em, inst);
	if (em->avx2 && inst->imm == 8 && (inst->lanes == 8 || inst->lanes == 16) && lir_type_size((LType)inst->type) == 4)
		return emit_permute8(em, inst);
	if (inst->imm > 0 && inst->lanes > 1) { /* a table (lir.h): loaded whole, its lanes picked (x86: a permute) */
		indices = low_bits(em, inst, indices);
		table = LLVMBuildLoad2(em->b, LLVMVectorType(type, (unsigned)inst->imm), LLVMBuildGEP2(em->b, type, base, &start, 1, ""), "");
		LLVMSetAlignment(table, (unsigned)lir_type_size((LType)inst->type));
	}
	/*
	 * Lanes of a module buffer of fewer than 2^31 elements: b + c[i] is an element of it, so
	 * it is summed in i32 and its lanes are used zero-extended. The sums of the vector's
	 * lanes are then one vector add and its lanes' extracts, not two extends and adds in
	 * i64 (x86).
	 */
	/* Indices of i8 (unsigned, ir/lir.h) are each a load's offset from b: its address made once. */
	bool bytes = !table && em->fn->insts[inst->c].type == LTYPE_I8;
	bool narrow = !table && !bytes && inst->lanes > 1 && em->fn->insts[inst->a].op == LOP_BUFFER &&
	              em->m->buffers[em->fn->insts[inst->a].imm].count <= INT32_MAX;
	LLVMValueRef start32 = narrow ? LLVMBuildTrunc(em->b, start, i32, "") : NULL;
	if (bytes)
		base = LLVMBuildGEP2(em->b, type, base, &start, 1, "");
	for (unsigned i = 0; i < lanes; i++) {
		LLVMValueRef k = inst->lanes > 1 ? LLVMBuildExtractElement(em->b, indices, LLVMConstInt(i32, i, 0), "") : indices;
		LLVMValueRef at = table    ? NULL
		                  : bytes  ? LLVMBuildZExt(em->b, k, i64, "")
		                  : narrow ? LLVMBuildZExt(em->b, LLVMBuildAdd(em->b, start32, k, ""), i64, "")
		                           : LLVMBuildNSWAdd(em->b, start, LLVMBuildSExt(em->b, k, i64, ""), "");
		LLVMValueRef x = table ? LLVMBuildExtractElement(em->b, table, k, "")
		                       : LLVMBuildLoad2(em->b, type, LLVMBuildGEP2(em->b, type, base, &at, 1, ""), "");
		if (inst->lanes <= 1)
			return x;
		v = LLVMBuildInsertElement(em->b, v, x, LLVMConstInt(i32, i, 0), "");
	}
	return v;
}

/* BITS: the i1 lanes as an integer of as many bits, widened to i32. */
static LLVMValueRef emit_bits(Emitter *em, const LInst *inst)
{
	const LInst *a = &em->fn->insts[inst->a];
	unsigned lanes = a->lanes > 1 ? a->lanes : 1;
	LLVMValueRef x = llvm_value(em, inst->a);
	if (lanes > 1)
		x = LLVMBuildBitCast(em->b, x, LLVMIntTypeInContext(em->ctx, lanes), "");
	return LLVMBuildZExt(em->b, x, em->types[LTYPE_I32], "");
}

/* STORE of c, a scalar or a vector (whose elements are the ones indexed, aligned as one element). */
static void emit_store(Emitter *em, const LInst *inst)
{
	LLVMValueRef c = llvm_value(em, inst->c), store, address;
	LLVMTypeRef type = LLVMTypeOf(c);
	const LInst *value = &em->fn->insts[inst->c];
	bool vector = LLVMGetTypeKind(type) == LLVMVectorTypeKind;
	if (vector)
		type = LLVMGetElementType(type);
	address = element(em, type, inst->a, inst->b);
	profile_access(em, inst, (LType)value->type, vector ? LLVMGetVectorSize(LLVMTypeOf(c)) : 1, address);
	store = LLVMBuildStore(em->b, c, address);
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
	LLVMValueRef c = llvm_value(em, inst->c);
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
	llvm_call_intrinsic(em, "llvm.prefetch", em->types[LTYPE_PTR], args, 4);
}

void llvm_emit_for(Emitter *em, uint32_t id, LLVMValueRef begin, LLVMValueRef end, LLVMValueRef step)
{
	const LInst *inst = &em->fn->insts[id];
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(em->b), head = llvm_new_block(em, "for"), body = llvm_new_block(em, "for.body");
	LLVMBasicBlockRef exit = llvm_new_block(em, "for.end"), latch;
	LLVMValueRef iv, next;

	LLVMBuildBr(em->b, head);
	LLVMPositionBuilderAtEnd(em->b, head);
	iv = LLVMBuildPhi(em->b, em->types[inst->type], ""); /* i64, or i32 (lower/gpu_ints.c) */
	LLVMBuildCondBr(em->b, LLVMBuildICmp(em->b, LLVMIntSLT, iv, end, ""), body, exit);
	LLVMPositionBuilderAtEnd(em->b, body);
	em->values[id] = iv;
	llvm_emit_region(em, inst->body);
	latch = LLVMGetInsertBlock(em->b);
	next = LLVMBuildNSWAdd(em->b, iv, step, "");
	LLVMBuildBr(em->b, head);
	LLVMAddIncoming(iv, &begin, &pre, 1);
	LLVMAddIncoming(iv, &next, &latch, 1);
	LLVMPositionBuilderAtEnd(em->b, exit);
}

/*
 * IF a { body } else { alt }; the regions of one marked apart are functions of their own
 * where the target says how. A wide one marks its function (LLVM_VECTOR_WIDTH).
 */
static void emit_if(Emitter *em, const LInst *inst)
{
	LLVMBasicBlockRef then = llvm_new_block(em, "then"), otherwise = llvm_new_block(em, "else"), merge = llvm_new_block(em, "endif");
	void (*apart)(Emitter *, uint32_t) = em->hooks->apart ? em->hooks->apart : llvm_emit_region;
	if (inst->imm == LIR_IF_WIDE) {
		char bits[16];
		snprintf(bits, sizeof bits, "%d", LLVM_WIDE_BITS);
		LLVMAddAttributeAtIndex(LLVMGetBasicBlockParent(then), LLVMAttributeFunctionIndex,
		                        LLVMCreateStringAttribute(em->ctx, LLVM_VECTOR_WIDTH, sizeof LLVM_VECTOR_WIDTH - 1, bits,
		                                                  (unsigned)strlen(bits)));
	}
	LLVMBuildCondBr(em->b, llvm_value(em, inst->a), then, otherwise);
	LLVMPositionBuilderAtEnd(em->b, then);
	if (inst->imm == LIR_IF_APART || inst->imm == LIR_IF_APART_BODY)
		apart(em, inst->body);
	else
		llvm_emit_region(em, inst->body);
	LLVMBuildBr(em->b, merge);
	LLVMPositionBuilderAtEnd(em->b, otherwise);
	if (inst->imm == LIR_IF_APART)
		apart(em, inst->alt);
	else
		llvm_emit_region(em, inst->alt);
	LLVMBuildBr(em->b, merge);
	LLVMPositionBuilderAtEnd(em->b, merge);
}

/* LOOP { body }: BREAK_IFs inside jump to its exit. */
static void emit_loop(Emitter *em, const LInst *inst)
{
	LLVMBasicBlockRef head = llvm_new_block(em, "loop"), exit = llvm_new_block(em, "loop.end");
	if (em->loops == MAX_LOOP_NESTING)
		die("LIR loops nested deeper than %d", MAX_LOOP_NESTING);
	LLVMBuildBr(em->b, head);
	LLVMPositionBuilderAtEnd(em->b, head);
	em->loop_exit[em->loops++] = exit;
	llvm_emit_region(em, inst->body);
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
		return llvm_call_intrinsic(em, op == LOP_FMIN ? "llvm.minnum" : "llvm.maxnum", LLVMTypeOf(x), args, 2);
	}
	default: die("LIR op %s is not binary", lir_op_name(op));
	}
}

/*
 * An ADD, SUB, MUL or SHL that never wraps (LIR_NSW): LLVM's nsw, which lets a sign
 * extension of a sum be the sum of the extensions (an address's constant offset). A shift
 * by a constant as the multiplication LLVM makes an nsw shift of; by a variable, plain.
 */
static LLVMValueRef emit_nsw(Emitter *em, const LInst *inst)
{
	LLVMValueRef x = llvm_value(em, inst->a), y = llvm_value(em, inst->b);
	const LInst *by = &em->fn->insts[inst->b];
	switch ((LOp)inst->op) {
	case LOP_ADD: return LLVMBuildNSWAdd(em->b, x, y, "");
	case LOP_SUB: return LLVMBuildNSWSub(em->b, x, y, "");
	case LOP_MUL: return LLVMBuildNSWMul(em->b, x, y, "");
	default:
		if (by->op != LOP_CONST || by->imm < 0 || by->imm >= (int64_t)lir_type_size((LType)inst->type) * 8 - 1)
			return emit_binary(em, LOP_SHL, x, y);
		return LLVMBuildNSWMul(em->b, x, LLVMConstInt(LLVMTypeOf(x), 1ull << by->imm, 0), "");
	}
}

/*
 * ADDC: a + b + zext(c). On x86 through llvm.x86.addcarry, which the code generator
 * makes one adc reading c off its compare's flags: as a plain add of a doubled value
 * (a walk's 2i + c), LLVM's passes make it a shift and the code generator a setb, a
 * zeroing xor and an lea.
 */
static LLVMValueRef emit_addc(Emitter *em, const LInst *inst)
{
	LLVMValueRef x = llvm_value(em, inst->a), y = llvm_value(em, inst->b), c = llvm_value(em, inst->c);
	LLVMTypeRef type = LLVMTypeOf(x);
	if (em->x86 && inst->lanes <= 1 && (inst->type == LTYPE_I32 || inst->type == LTYPE_I64)) {
		LLVMValueRef args[3] = {LLVMBuildZExt(em->b, c, LLVMInt8TypeInContext(em->ctx), ""), x, y};
		const char *name = inst->type == LTYPE_I64 ? "llvm.x86.addcarry.64" : "llvm.x86.addcarry.32";
		return LLVMBuildExtractValue(em->b, llvm_call_intrinsic(em, name, NULL, args, 3), 1, "");
	}
	x = LLVMBuildAdd(em->b, x, y, "");
	return LLVMBuildAdd(em->b, x, LLVMBuildZExt(em->b, c, type, ""), "");
}

/*
 * The target's hook for inst, which lir_verify lets appear only where the target has
 * one: a missing hook is a bug of the caller (an unverified module, or a host module
 * handed to a GPU target), not of the input.
 */
#define hook(fn, inst) ((fn) ? (fn) : (die("LIR op %s has no translation for this target", lir_op_name((LOp)(inst)->op)), (fn)))

/* A local array outside a GPU block (an alloca), aligned for vectors of its lanes' elements where it has lanes. */
static LLVMValueRef emit_local_array(Emitter *em, const LInst *inst)
{
	LLVMValueRef slot = llvm_entry_alloca(em, type_of(em, (LType)inst->type), inst->imm);
	size_t bytes = lir_type_size((LType)inst->type) * (inst->lanes > 1 ? inst->lanes : 1);
	if (bytes > 16)
		LLVMSetAlignment(slot, (unsigned)bytes);
	return slot;
}

/* Emit one instruction; sets values[id] when it has a result. */
static void emit_inst(Emitter *em, uint32_t id)
{
	const LInst *inst = &em->fn->insts[id];
	LLVMTypeRef type = type_of(em, (LType)inst->type);
	LLVMValueRef *out = &em->values[id];

	switch ((LOp)inst->op) {
	case LOP_PARAM: *out = em->params[inst->imm]; break;
	case LOP_CONST: *out = emit_const(em, inst); break;
	case LOP_BUFFER: *out = hook(em->hooks->buffer, inst)(em, (uint32_t)inst->imm); break;
	case LOP_LOAD: *out = emit_load(em, inst); break;
	case LOP_INDEX: {
		LLVMValueRef bytes = LLVMBuildMul(em->b, index_value(em, inst->b), LLVMConstInt(em->types[LTYPE_I64], (unsigned long long)inst->imm, 0), "");
		*out = LLVMBuildGEP2(em->b, em->types[LTYPE_I8], llvm_value(em, inst->a), &bytes, 1, "");
		break;
	}
	case LOP_GATHER: *out = emit_gather(em, inst); break;
	case LOP_BITS: *out = emit_bits(em, inst); break;
	case LOP_STORE: emit_store(em, inst); break;
	case LOP_ATOMIC: emit_atomic(em, inst); break;
	case LOP_PREFETCH: emit_prefetch(em, inst); break;
	case LOP_ADD: case LOP_SUB: case LOP_MUL: case LOP_AND: case LOP_OR: case LOP_SHL: case LOP_ASHR:
	case LOP_MIN: case LOP_SDIV: case LOP_FADD: case LOP_FSUB: case LOP_FMUL: case LOP_FDIV: case LOP_FMIN: case LOP_FMAX:
		*out = inst->imm == LIR_NSW ? emit_nsw(em, inst) : emit_binary(em, (LOp)inst->op, llvm_value(em, inst->a), llvm_value(em, inst->b));
		break;
	case LOP_ADDC: *out = emit_addc(em, inst); break;
	case LOP_FNEG: *out = LLVMBuildFNeg(em->b, llvm_value(em, inst->a), ""); break;
	case LOP_ZIP: {
		LLVMValueRef mask[LIR_MAX_LANES];
		unsigned part = inst->sub > 1 ? inst->lanes / 2u : inst->lanes; /* zipped apart: the vectors, or each half */
		for (unsigned i = 0; i < inst->lanes; i++) /* lane i/2 (+ half) of a, then of b, in the part */
			mask[i] = llvm_const_i32(em, (i & 1) * inst->lanes + i / part * part + i % part / 2 + (inst->sub & 1) * (part / 2));
		*out = LLVMBuildShuffleVector(em->b, llvm_value(em, inst->a), llvm_value(em, inst->b), LLVMConstVector(mask, inst->lanes), "");
		break;
	}
	case LOP_SPLAT: {
		LLVMTypeRef vector = lanes_type(em, (LType)inst->type, inst->lanes);
		LLVMValueRef zero = LLVMConstInt(em->types[LTYPE_I32], 0, 0);
		LLVMValueRef one = LLVMBuildInsertElement(em->b, LLVMGetUndef(vector), llvm_value(em, inst->a), zero, "");
		*out = LLVMBuildShuffleVector(em->b, one, LLVMGetUndef(vector),
		                              LLVMConstNull(LLVMVectorType(em->types[LTYPE_I32], inst->lanes)), "");
		break;
	}
	case LOP_CTZ: {
		/* defined at 0 unless the LIR says a never is (then no test for 0: a branch on GPUs) */
		LLVMValueRef args[2] = {llvm_value(em, inst->a), LLVMConstInt(em->types[LTYPE_I1], inst->imm != 0, 0)};
		*out = llvm_call_intrinsic(em, "llvm.cttz", lanes_type(em, (LType)inst->type, inst->lanes), args, 2);
		break;
	}
	case LOP_EXP: case LOP_LOG: case LOP_SQRT: {
		LLVMValueRef x = llvm_value(em, inst->a);
		if (inst->op != LOP_SQRT && em->hooks->math)
			*out = em->hooks->math(em, (LOp)inst->op, x);
		else
			*out = llvm_call_intrinsic(em, inst->op == LOP_EXP ? "llvm.exp" : inst->op == LOP_LOG ? "llvm.log" : "llvm.sqrt", type, &x, 1);
		break;
	}
	case LOP_ICMP: *out = LLVMBuildICmp(em->b, int_predicates[inst->sub], llvm_value(em, inst->a), llvm_value(em, inst->b), ""); break;
	case LOP_FCMP: *out = LLVMBuildFCmp(em->b, real_predicates[inst->sub], llvm_value(em, inst->a), llvm_value(em, inst->b), ""); break;
	case LOP_SELECT: *out = LLVMBuildSelect(em->b, llvm_value(em, inst->a), llvm_value(em, inst->b), llvm_value(em, inst->c), ""); break;
	case LOP_CAST:
		*out = LLVMBuildCast(em->b, cast_opcodes[inst->sub], llvm_value(em, inst->a), lanes_type(em, (LType)inst->type, inst->lanes), "");
		break;
	case LOP_VAR:
		*out = llvm_entry_alloca(em, type, 1);
		LLVMBuildStore(em->b, llvm_value(em, inst->a), *out);
		break;
	case LOP_GET: *out = LLVMBuildLoad2(em->b, type, llvm_value(em, inst->a), ""); break;
	case LOP_SET: LLVMBuildStore(em->b, llvm_value(em, inst->b), llvm_value(em, inst->a)); break;
	case LOP_LOCAL_ARRAY:
		*out = inst->sub == LSPACE_BLOCK ? hook(em->hooks->block_array, inst)(em, id) : emit_local_array(em, inst);
		break;
	case LOP_FOR: llvm_emit_for(em, id, llvm_value(em, inst->a), llvm_value(em, inst->b), llvm_value(em, inst->c)); break;
	case LOP_PARALLEL_FOR: hook(em->hooks->parallel_for, inst)(em, id); break;
	case LOP_THREADS: *out = hook(em->hooks->threads, inst)(em); break;
	case LOP_CALL: hook(em->hooks->call, inst)(em, id); break;
	case LOP_LOOP: emit_loop(em, inst); break;
	case LOP_BREAK_IF: {
		LLVMBasicBlockRef stay = llvm_new_block(em, "loop.next");
		LLVMBuildCondBr(em->b, llvm_value(em, inst->a), em->loop_exit[em->loops - 1], stay);
		LLVMPositionBuilderAtEnd(em->b, stay);
		break;
	}
	case LOP_IF: emit_if(em, inst); break;
	case LOP_GPU_INDEX: *out = hook(em->hooks->gpu_index, inst)(em, (LGpuIndex)inst->sub); break;
	case LOP_BARRIER: hook(em->hooks->barrier, inst)(em, id); break;
	case LOP_SHUFFLE: *out = hook(em->hooks->shuffle, inst)(em, llvm_value(em, inst->a), llvm_value(em, inst->b), id); break;
	case LOP_COUNT: die("bad LIR op");
	}
}

void llvm_emit_region(Emitter *em, uint32_t first)
{
	for (uint32_t id = first; id != LIR_NONE; id = em->fn->insts[id].next)
		emit_inst(em, id);
}


void llvm_emitter_init(Emitter *em, LLVMContextRef ctx, LLVMModuleRef mod, const LModule *m, const TargetHooks *hooks,
                       const char *prefix)
{
	memset(em, 0, sizeof *em);
	em->ctx = ctx;
	em->mod = mod;
	em->m = m;
	em->hooks = hooks;
	snprintf(em->prefix, sizeof em->prefix, "%s", prefix);
	em->b = LLVMCreateBuilderInContext(ctx);
	em->entry_b = LLVMCreateBuilderInContext(ctx);
	em->types[LTYPE_VOID] = LLVMVoidTypeInContext(ctx);
	em->types[LTYPE_I1] = LLVMInt1TypeInContext(ctx);
	em->types[LTYPE_I8] = LLVMInt8TypeInContext(ctx);
	em->types[LTYPE_I32] = LLVMInt32TypeInContext(ctx);
	em->types[LTYPE_I64] = LLVMInt64TypeInContext(ctx);
	em->types[LTYPE_F32] = LLVMFloatTypeInContext(ctx);
	em->types[LTYPE_F64] = LLVMDoubleTypeInContext(ctx);
	em->types[LTYPE_PTR] = LLVMPointerTypeInContext(ctx, 0);
}

void llvm_emitter_dispose(Emitter *em)
{
	LLVMDisposeBuilder(em->b);
	LLVMDisposeBuilder(em->entry_b);
}

void llvm_emit_body(Emitter *em, const LFunc *fn, LLVMValueRef func)
{
	em->fn = fn;
	em->values = xcalloc(fn->num_insts ? fn->num_insts : 1, sizeof *em->values);
	if (fn->kind == LFUNC_KERNEL) {
		em->block_offset = xcalloc(fn->num_insts ? fn->num_insts : 1, sizeof *em->block_offset);
		lir_block_memory(fn, em->block_offset);
	}
	llvm_begin_function(em, func);
	for (unsigned i = 0; i < fn->num_params; i++)
		em->params[i] = em->hooks->param ? em->hooks->param(em, i) : LLVMGetParam(func, i);
	{
		LLVMValueRef entered = em->hooks->enter ? em->hooks->enter(em) : NULL;
		llvm_emit_region(em, fn->body);
		if (em->hooks->leave)
			em->hooks->leave(em, entered);
	}
	llvm_end_function(em);
	free(em->values);
	free(em->block_offset);
	em->values = NULL;
	em->block_offset = NULL;
}

LLVMValueRef llvm_emit_kernel(Emitter *em, const LFunc *fn)
{
	char name[128];
	LLVMValueRef func;
	snprintf(name, sizeof name, "%s_%s", em->prefix, fn->name);
	if (!em->hooks->kernel)
		die("kernel %s for a target without kernels", fn->name);
	func = em->hooks->kernel(em, fn, name);
	llvm_emit_body(em, fn, func);
	return func;
}

void llvm_add_attribute(Emitter *em, LLVMValueRef f, LLVMAttributeIndex index, const char *name)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
	LLVMAddAttributeAtIndex(f, index, LLVMCreateEnumAttribute(em->ctx, kind, 0));
}

LLVMValueRef llvm_constant_global(Emitter *em, LLVMTypeRef type, LLVMValueRef init)
{
	LLVMValueRef global = LLVMAddGlobal(em->mod, type, "");
	LLVMSetInitializer(global, init);
	LLVMSetGlobalConstant(global, 1);
	LLVMSetLinkage(global, LLVMPrivateLinkage);
	return global;
}
