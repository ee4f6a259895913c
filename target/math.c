/* e^x in arithmetic, for every target (target/llvm.h: llvm_exp). */
#include "target/llvm.h"

/* value of x's type (a float or a vector of them), or of its integer twin (integer true). */
static LLVMValueRef constant(LLVMTypeRef type, bool integer, double value)
{
	bool vector = LLVMGetTypeKind(type) == LLVMVectorTypeKind;
	LLVMTypeRef elem = vector ? LLVMGetElementType(type) : type;
	LLVMValueRef scalar, lanes[LIR_MAX_LANES];
	if (integer)
		scalar = LLVMConstInt(LLVMIntTypeInContext(LLVMGetTypeContext(elem), LLVMGetTypeKind(elem) == LLVMFloatTypeKind ? 32 : 64),
		                      (unsigned long long)(long long)value, 1);
	else
		scalar = LLVMConstReal(elem, value);
	if (!vector)
		return scalar;
	for (unsigned i = 0; i < LLVMGetVectorSize(type); i++)
		lanes[i] = scalar;
	return LLVMConstVector(lanes, LLVMGetVectorSize(type));
}

static LLVMValueRef real(LLVMValueRef x, double v) { return constant(LLVMTypeOf(x), false, v); }
static LLVMValueRef whole(LLVMValueRef x, double v) { return constant(LLVMTypeOf(x), true, v); }

static LLVMValueRef minmax(Emitter *em, const char *name, LLVMValueRef x, double bound)
{
	LLVMValueRef args[2] = {x, real(x, bound)};
	return llvm_call_intrinsic(em, name, LLVMTypeOf(x), args, 2);
}

/*
 * e^x = 2^n e^r, n = x / ln2 rounded, |r| <= ln2/2 (Cody and Waite's reduction, ln2 in
 * two parts whose first times n is exact). e^r by its Taylor series, of degree 13 for
 * doubles and 7 for floats (the first term left out is under half an ulp); 2^n as two
 * powers of two, so that results near the largest number or among the subnormals round
 * as e^x does. x is first clamped to where e^x rounds to 0 and to inf. n is read from
 * the bits of x log2(e) + 1.5 2^(p-1), which rounds it to an integer without rint (a
 * libm call on x86-64 before SSE4.1) or fptosi. NaN gives NaN. Inline, with no call,
 * the loop vectorizer can widen it: the host's softmax, 8 margins at a time, takes a
 * third of the time of scalar calls of libm's expf. tests/unit/exp.c holds it within
 * 2 ulps of libm's exp and expf.
 */
LLVMValueRef llvm_exp(Emitter *em, LLVMValueRef x)
{
	LLVMTypeRef type = LLVMTypeOf(x);
	bool vector = LLVMGetTypeKind(type) == LLVMVectorTypeKind;
	bool f32 = LLVMGetTypeKind(vector ? LLVMGetElementType(type) : type) == LLVMFloatTypeKind;
	LLVMTypeRef bits = LLVMTypeOf(whole(x, 0));
	const double magic = f32 ? 12582912.0 : 6755399441055744.0; /* 1.5 * 2^23, 1.5 * 2^52 */
	const double ln2_hi = f32 ? 0.693359375 : LLVM_LN2_HI, ln2_lo = f32 ? -2.12194440e-4 : LLVM_LN2_LO;
	const int degree = f32 ? 7 : 13, mantissa = f32 ? 23 : 52, bias = f32 ? 127 : 1023;
	LLVMValueRef y, shifted, nf, n, r, p, half, rest;
	double factorial = 1;

	y = minmax(em, "llvm.maxnum", minmax(em, "llvm.minnum", x, f32 ? 89.0 : 710.0), f32 ? -104.0 : -746.0);
	shifted = LLVMBuildFAdd(em->b, LLVMBuildFMul(em->b, y, real(x, 1.4426950408889634), ""), real(x, magic), "");
	nf = LLVMBuildFSub(em->b, shifted, real(x, magic), "");
	n = LLVMBuildSub(em->b, LLVMBuildBitCast(em->b, shifted, bits, ""), LLVMBuildBitCast(em->b, real(x, magic), bits, ""), "");
	r = LLVMBuildFSub(em->b, y, LLVMBuildFMul(em->b, nf, real(x, ln2_hi), ""), "");
	r = LLVMBuildFSub(em->b, r, LLVMBuildFMul(em->b, nf, real(x, ln2_lo), ""), "");
	for (int k = 1; k <= degree; k++)
		factorial *= k;
	p = real(x, 1.0 / factorial);
	for (int k = degree - 1; k >= 0; k--) { /* Horner: p = p r + 1/k! */
		factorial /= k + 1;
		p = LLVMBuildFAdd(em->b, LLVMBuildFMul(em->b, p, r, ""), real(x, 1.0 / factorial), "");
	}
	half = LLVMBuildAShr(em->b, n, whole(x, 1), "");
	rest = LLVMBuildSub(em->b, n, half, "");
	for (int k = 0; k < 2; k++) { /* p 2^half 2^rest, each power a normal number */
		LLVMValueRef power = LLVMBuildShl(em->b, LLVMBuildAdd(em->b, k ? rest : half, whole(x, bias), ""), whole(x, mantissa), "");
		p = LLVMBuildFMul(em->b, p, LLVMBuildBitCast(em->b, power, type, ""), "");
	}
	return LLVMBuildSelect(em->b, LLVMBuildFCmp(em->b, LLVMRealUNO, x, x, ""), x, p, "");
}
