/* What the kernels of every GPU target share: their declaration, model buffers, shared memory, exp and log. */
#include "target/gpu.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

LLVMValueRef gpu_declare_kernel(Emitter *em, const char *name, unsigned ptr_space, LLVMTypeRef *extra, unsigned num_extra)
{
	LLVMTypeRef params[LIR_KERNEL_PARAMS + 2];
	LLVMValueRef func;
	for (unsigned i = 0; i < LIR_KERNEL_PARAMS; i++)
		params[i] = lir_kernel_params[i] == LTYPE_PTR ? LLVMPointerTypeInContext(em->ctx, ptr_space)
		                                              : em->types[lir_kernel_params[i]];
	for (unsigned i = 0; i < num_extra; i++)
		params[LIR_KERNEL_PARAMS + i] = extra[i];
	func = LLVMAddFunction(em->mod, name, LLVMFunctionType(em->types[LTYPE_VOID], params, LIR_KERNEL_PARAMS + num_extra, 0));
	llvm_add_attribute(em, func, LLVMAttributeFunctionIndex, "nounwind");
	llvm_add_attribute(em, func, 1, "noalias"); /* rows */
	llvm_add_attribute(em, func, 6, "noalias"); /* model */
	return func;
}

LLVMValueRef gpu_buffer(Emitter *em, uint32_t k)
{
	LLVMValueRef offset = llvm_const_i64(em, (int64_t)lir_buffer_offset(em->m, k));
	return LLVMBuildGEP2(em->b, em->types[LTYPE_I8], em->params[LIR_KERNEL_PARAMS - 1], &offset, 1, "");
}

LLVMValueRef gpu_shared_array(Emitter *em, uint32_t id)
{
	const LInst *in = &em->fn->insts[id];
	LLVMTypeRef type = LLVMArrayType(em->types[in->type], (unsigned)in->imm);
	char name[128];
	size_t length;
	const char *kernel = LLVMGetValueName2(em->func, &length);
	LLVMValueRef global;
	snprintf(name, sizeof name, "%.*s.shared.%u", (int)length, kernel, id);
	global = LLVMAddGlobalInAddressSpace(em->mod, type, name, 3);
	/* Shared memory starts undefined on every launch: no initialiser to store. */
	LLVMSetInitializer(global, LLVMGetUndef(type));
	LLVMSetLinkage(global, LLVMInternalLinkage);
	LLVMSetAlignment(global, (unsigned)lir_type_size((LType)in->type));
	return LLVMConstAddrSpaceCast(global, em->types[LTYPE_PTR]);
}

/* The function grove.NAME of one double, built by body (given a builder in its entry block and its parameter) once per module. */
static LLVMValueRef math_function(Emitter *em, const char *name, LLVMValueRef (*body)(Emitter *em, LLVMValueRef x))
{
	LLVMTypeRef f64 = em->types[LTYPE_F64];
	LLVMValueRef f = LLVMGetNamedFunction(em->mod, name);
	LLVMBuilderRef saved = em->b;
	if (f)
		return f;
	f = LLVMAddFunction(em->mod, name, LLVMFunctionType(f64, &f64, 1, 0));
	LLVMSetLinkage(f, LLVMInternalLinkage);
	llvm_add_attribute(em, f, LLVMAttributeFunctionIndex, "nounwind");
	em->b = LLVMCreateBuilderInContext(em->ctx);
	LLVMPositionBuilderAtEnd(em->b, LLVMAppendBasicBlockInContext(em->ctx, f, "entry"));
	LLVMBuildRet(em->b, body(em, LLVMGetParam(f, 0)));
	LLVMDisposeBuilder(em->b);
	em->b = saved;
	return f;
}

static LLVMValueRef real(Emitter *em, double v) { return LLVMConstReal(em->types[LTYPE_F64], v); }
static LLVMValueRef ir_fmul(Emitter *em, LLVMValueRef x, LLVMValueRef y) { return LLVMBuildFMul(em->b, x, y, ""); }
static LLVMValueRef ir_fadd(Emitter *em, LLVMValueRef x, LLVMValueRef y) { return LLVMBuildFAdd(em->b, x, y, ""); }
static LLVMValueRef ir_fsub(Emitter *em, LLVMValueRef x, LLVMValueRef y) { return LLVMBuildFSub(em->b, x, y, ""); }

/* The polynomial c[0] + c[1] z + ... + c[n-1] z^(n-1), by Horner's rule. */
static LLVMValueRef horner(Emitter *em, const double *c, int n, LLVMValueRef z)
{
	LLVMValueRef p = real(em, c[n - 1]);
	for (int i = n - 2; i >= 0; i--)
		p = ir_fadd(em, ir_fmul(em, p, z), real(em, c[i]));
	return p;
}

/*
 * log x = e ln 2 + log m for x = m 2^e with m in [sqrt(2)/2, sqrt(2)); log m =
 * 2 atanh(s) = 2 (s + s^3/3 + ... + s^21/21) with s = (m - 1) / (m + 1), |s| < 0.172
 * (the rest is below 1e-17). Subnormal x is scaled by 2^54 first; 0, negative x,
 * infinity and NaN get -inf, NaN, inf and NaN.
 */
static LLVMValueRef log_body(Emitter *em, LLVMValueRef x)
{
	LLVMTypeRef i64 = em->types[LTYPE_I64], f64 = em->types[LTYPE_F64];
	LLVMValueRef tiny = LLVMBuildFCmp(em->b, LLVMRealOLT, x, real(em, 0x1p-1022), "");
	LLVMValueRef xs = LLVMBuildSelect(em->b, tiny, ir_fmul(em, x, real(em, 0x1p54)), x, "");
	LLVMValueRef bits = LLVMBuildBitCast(em->b, xs, i64, "");
	LLVMValueRef e = LLVMBuildSub(em->b, LLVMBuildLShr(em->b, bits, LLVMConstInt(i64, 52, 0), ""),
	                              LLVMBuildSelect(em->b, tiny, LLVMConstInt(i64, 1023 + 54, 0), LLVMConstInt(i64, 1023, 0), ""), "");
	LLVMValueRef mbits = LLVMBuildOr(em->b, LLVMBuildAnd(em->b, bits, LLVMConstInt(i64, (1ull << 52) - 1, 0), ""),
	                                 LLVMConstInt(i64, 1023ull << 52, 0), "");
	LLVMValueRef m = LLVMBuildBitCast(em->b, mbits, f64, ""), big = LLVMBuildFCmp(em->b, LLVMRealOGT, m, real(em, M_SQRT2), "");
	LLVMValueRef f, s, y, ed, special;
	double c[11];
	m = LLVMBuildSelect(em->b, big, ir_fmul(em, m, real(em, 0.5)), m, "");
	e = LLVMBuildAdd(em->b, e, LLVMBuildZExt(em->b, big, i64, ""), "");
	f = ir_fsub(em, m, real(em, 1));
	s = LLVMBuildFDiv(em->b, f, ir_fadd(em, f, real(em, 2)), "");
	for (int i = 0; i < 11; i++)
		c[i] = 1.0 / (2 * i + 1);
	y = ir_fmul(em, ir_fmul(em, real(em, 2), s), horner(em, c, 11, ir_fmul(em, s, s)));
	ed = LLVMBuildSIToFP(em->b, e, f64, "");
	y = ir_fadd(em, ir_fmul(em, ed, real(em, LLVM_LN2_HI)), ir_fadd(em, ir_fmul(em, ed, real(em, LLVM_LN2_LO)), y));
	special = LLVMBuildSelect(em->b, LLVMBuildFCmp(em->b, LLVMRealOLT, x, real(em, 0), ""), real(em, NAN), x, "");
	special = LLVMBuildSelect(em->b, LLVMBuildFCmp(em->b, LLVMRealOEQ, x, real(em, 0), ""), real(em, -INFINITY), special, "");
	return LLVMBuildSelect(em->b, LLVMBuildAnd(em->b, LLVMBuildFCmp(em->b, LLVMRealOGT, x, real(em, 0), ""),
	                                            LLVMBuildFCmp(em->b, LLVMRealOLT, x, real(em, INFINITY), ""), ""),
	                       y, special, "");
}

/*
 * e^x and log x. A float's e^x is taken in float arithmetic, inline, as the host takes it
 * (llvm_exp, within 2 ulps of expf): GPUs other than the data-centre ones run double
 * arithmetic at a small fraction of float's rate, and a float sigmoid has no use for it.
 * Log (probit's) is taken in double.
 */
LLVMValueRef gpu_math(Emitter *em, LOp op, LLVMValueRef x)
{
	LLVMTypeRef f64 = em->types[LTYPE_F64], type = LLVMTypeOf(x);
	LLVMValueRef f, wide;
	if (op == LOP_EXP && type != f64)
		return llvm_exp(em, x);
	f = op == LOP_EXP ? math_function(em, "grove.exp", llvm_exp) : math_function(em, "grove.log", log_body);
	wide = type == f64 ? x : LLVMBuildFPExt(em->b, x, f64, "");
	LLVMValueRef y = LLVMBuildCall2(em->b, LLVMFunctionType(f64, &f64, 1, 0), f, &wide, 1, "");
	return type == f64 ? y : LLVMBuildFPTrunc(em->b, y, type, "");
}
