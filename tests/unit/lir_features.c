/*
 * Unit tests of the LIR features the lowering's schedules build on: ATOMIC, PREFETCH,
 * vector values and the memory spaces of LOCAL_ARRAYs, as lir_verify checks them and
 * lir_print shows them; predict's signature and workspace; the name functions of the enums.
 */
#include "ir/lir.h"

#include <stdlib.h>
#include <string.h>
#include "tests/unit/check.h"
#include "tests/unit/lir_check.h"

/* ATOMIC adds a float or an integer to an element; PREFETCH names one; neither has a result. */
static void test_atomic_and_prefetch(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	LInst *in;
	uint32_t x = lir_const_float(&b, LTYPE_F32, 1.5), n = lir_const_int(&b, LTYPE_I64, 3);
	uint32_t flag = lir_cmp(&b, LOP_ICMP, LCMP_EQ, n, n);
	uint32_t add = lir_emit(&b, LOP_ATOMIC, LTYPE_VOID, 0, 1, x);
	uint32_t iadd = lir_emit(&b, LOP_ATOMIC, LTYPE_VOID, 0, 1, n);
	uint32_t fetch = lir_emit(&b, LOP_PREFETCH, LTYPE_F32, 0, 1, LIR_NONE);
	uint32_t sum = lir_emit(&b, LOP_FADD, LTYPE_F32, x, x, LIR_NONE);
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\n\tatomic add %0[%1] += %2\n\tatomic add %0[%1] += %3\n\tprefetch f32 %0[%1]\n\t%8 = fadd f32 %2, %2\n");

	in = b.fn->insts;
	in[add].type = LTYPE_F32;
	EXPECT_INVALID(m, "lir: f: %5 (atomic): has no result but type f32");
	in[add].type = LTYPE_VOID;
	in[iadd].c = 0;
	EXPECT_INVALID(m, "lir: f: %6 (atomic): operand %0 is ptr, expected i8, i32, i64, f32 or f64");
	in[iadd].c = flag;
	EXPECT_INVALID(m, "lir: f: %6 (atomic): operand %4 is i1, expected i8, i32, i64, f32 or f64");
	in[iadd].c = n;
	in[add].b = x;
	EXPECT_INVALID(m, "lir: f: %5 (atomic): operand %2 is f32, expected i64");
	in[add].b = 1;
	in[add].a = 1;
	EXPECT_INVALID(m, "lir: f: %5 (atomic): operand %1 is i64, expected ptr");
	in[add].a = 0;
	in[add].c = LIR_NONE;
	EXPECT_INVALID(m, "lir: f: %5 (atomic): operand c is missing");
	in[add].c = x;

	in[fetch].type = LTYPE_VOID;
	EXPECT_INVALID(m, "lir: f: %7 (prefetch): element type void, expected a value type");
	in[fetch].type = LTYPE_F64;
	in[fetch].c = 1;
	EXPECT_INVALID(m, "lir: f: %7 (prefetch): unused operand c is %1, expected none");
	in[fetch].c = LIR_NONE;
	in[fetch].a = x;
	EXPECT_INVALID(m, "lir: f: %7 (prefetch): operand %2 is f32, expected ptr");
	in[fetch].a = 0;
	in[sum].b = fetch;
	EXPECT_INVALID(m, "lir: f: %8 (fadd): operand %7 (prefetch) has no value");
	in[sum].b = add;
	EXPECT_INVALID(m, "lir: f: %8 (fadd): operand %5 (atomic) has no value");
	in[sum].b = x;
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\tprefetch f64 %0[%1]\n");
	lir_module_free(m);
}

/* Vector loads, stores, arithmetic and splats; lanes agree, and only those carry them. */
static void test_vectors(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	LInst *in;
	uint32_t v = lir_emit_vector(&b, LOP_LOAD, LTYPE_F32, 8, 0, 1, LIR_NONE);
	uint32_t two = lir_emit_vector(&b, LOP_CONST, LTYPE_F32, 8, LIR_NONE, LIR_NONE, LIR_NONE);
	uint32_t prod = lir_emit_vector(&b, LOP_FMUL, LTYPE_F32, 8, v, two, LIR_NONE);
	uint32_t sum = lir_emit_vector(&b, LOP_FADD, LTYPE_F32, 8, prod, v, LIR_NONE);
	uint32_t diff = lir_emit_vector(&b, LOP_FSUB, LTYPE_F32, 8, sum, two, LIR_NONE);
	uint32_t store = lir_emit(&b, LOP_STORE, LTYPE_VOID, 0, 1, diff);          /* lanes from c */
	uint32_t store8 = lir_emit_vector(&b, LOP_STORE, LTYPE_VOID, 8, 0, 1, diff); /* lanes given */
	uint32_t scalar = lir_emit(&b, LOP_LOAD, LTYPE_F32, 0, 1, LIR_NONE);
	uint32_t ints = lir_emit_vector(&b, LOP_LOAD, LTYPE_I32, 4, 0, 1, LIR_NONE);
	uint32_t seven = lir_emit_vector(&b, LOP_CONST, LTYPE_I64, 2, LIR_NONE, LIR_NONE, LIR_NONE);
	uint32_t add = lir_emit(&b, LOP_ADD, LTYPE_I64, 1, 1, LIR_NONE);
	in = b.fn->insts;
	in[two].fimm = 2.0;
	in[seven].imm = 7;
	in[scalar].lanes = 1; /* 1 is a scalar too */
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\t%2 = load <8 x f32> %0[%1]\n\t%3 = const <8 x f32> 2\n\t%4 = fmul <8 x f32> %2, %3\n"
	                  "\t%5 = fadd <8 x f32> %4, %2\n\t%6 = fsub <8 x f32> %5, %3\n\tstore %0[%1] = %6\n"
	                  "\tstore %0[%1] = %6\n\t%9 = load f32 %0[%1]\n\t%10 = load <4 x i32> %0[%1]\n"
	                  "\t%11 = const <2 x i64> 7\n");
	CHECK(lir_lanes(b.fn, v) == 8 && lir_lanes(b.fn, scalar) == 1 && lir_lanes(b.fn, add) == 1);

	in[sum].b = 1;
	EXPECT_INVALID(m, "lir: f: %5 (fadd): operand %1 is a scalar, expected 8 lanes");
	in[sum].b = v;
	in[prod].lanes = 4;
	EXPECT_INVALID(m, "lir: f: %4 (fmul): operand %2 has 8 lanes, expected 4 lanes");
	in[prod].lanes = 8;
	in[store8].lanes = 4;
	EXPECT_INVALID(m, "lir: f: %8 (store): operand %6 has 8 lanes, expected 4 lanes");
	in[store8].lanes = 8;
	in[store].b = seven;
	EXPECT_INVALID(m, "lir: f: %7 (store): operand %11 is used before its definition");
	in[store].b = 1;
	in[ints].b = v;
	EXPECT_INVALID(m, "lir: f: %10 (load): operand %2 has 8 lanes, expected a scalar");
	in[ints].b = 1;
	in[v].lanes = LIR_MAX_LANES + 1;
	EXPECT_INVALID(m, "lir: f: %2 (load): 17 lanes, at most 16");
	in[v].lanes = 8;
	in[add].lanes = 4;
	EXPECT_INVALID(m, "lir: f: %12 (add): cannot be a vector (4 lanes)");
	in[add].lanes = 0;
	in[ints].type = LTYPE_I1;
	EXPECT_INVALID(m, "lir: f: %10 (load): a vector of i1 (vectors hold i8, i32, i64, f32 or f64)");
	in[ints].type = LTYPE_PTR;
	EXPECT_INVALID(m, "lir: f: %10 (load): a vector of ptr");
	in[ints].type = LTYPE_I8;
	in[add].op = LOP_FNEG;
	in[add].type = LTYPE_F32;
	in[add].a = diff;
	in[add].b = LIR_NONE;
	EXPECT_INVALID(m, "lir: f: %12 (fneg): operand %6 has 8 lanes, expected a scalar");
	in[add].a = scalar;
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\t%10 = load <4 x i8> %0[%1]\n\t%11 = const <2 x i64> 7\n\t%12 = fneg f32 %9\n");
	lir_module_free(m);
}

/* A private local_array may not be written by the iterations of a parallel_for it is defined outside of. */
static void test_spaces(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	LInst *in;
	uint32_t zero = lir_const_int(&b, LTYPE_I64, 0), one = lir_const_int(&b, LTYPE_I64, 1);
	uint32_t x = lir_const_float(&b, LTYPE_F32, 1.0);
	uint32_t private = lir_local_array(&b, LTYPE_F32, 4, LSPACE_PRIVATE);
	uint32_t shared = lir_local_array(&b, LTYPE_F32, 4, LSPACE_SHARED);
	uint32_t loop = lir_begin(&b, LOP_PARALLEL_FOR, zero, 1, one);
	uint32_t inner = lir_local_array(&b, LTYPE_F32, 4, LSPACE_PRIVATE);
	uint32_t store_inner = lir_emit(&b, LOP_STORE, LTYPE_VOID, inner, loop, x);
	uint32_t store = lir_emit(&b, LOP_STORE, LTYPE_VOID, shared, loop, x);
	uint32_t add = lir_emit(&b, LOP_ATOMIC, LTYPE_VOID, shared, zero, x);
	uint32_t read = lir_emit(&b, LOP_LOAD, LTYPE_F32, private, loop, LIR_NONE); /* reading is no race */
	uint32_t nested = lir_begin(&b, LOP_PARALLEL_FOR, zero, one, one);
	uint32_t store_nested = lir_emit(&b, LOP_STORE, LTYPE_VOID, shared, nested, read);
	lir_end(&b);
	lir_end(&b);
	lir_emit(&b, LOP_STORE, LTYPE_VOID, private, zero, x); /* outside the loop */
	in = b.fn->insts;
	in[loop].imm = 16;
	in[nested].imm = 1;
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\t%5 = local_array f32 x 4\n\t%6 = local_array shared f32 x 4\n");
	EXPECT_PRINTED(m, "\t\tstore %8[%7] = %4\n\t\tstore %6[%7] = %4\n\t\tatomic add %6[%2] += %4\n");
	(void)store_inner;

	in[store].a = private;
	EXPECT_INVALID(m, "lir: f: %10 (store): private local_array %5 is defined outside the enclosing parallel_for "
	                  "and written in it (a data race");
	in[store].a = shared;
	in[add].a = private;
	EXPECT_INVALID(m, "lir: f: %11 (atomic): private local_array %5 is defined outside the enclosing parallel_for");
	in[loop].op = LOP_FOR; /* a sequential loop may write it */
	EXPECT_VALID(m);
	in[loop].op = LOP_PARALLEL_FOR;
	in[add].a = shared;
	in[store_nested].a = inner; /* private to an iteration of the outer loop, written by the inner one */
	EXPECT_INVALID(m, "lir: f: %14 (store): private local_array %8 is defined outside the enclosing parallel_for");
	in[inner].sub = LSPACE_SHARED;
	EXPECT_VALID(m);
	in[shared].sub = LSPACE_COUNT;
	EXPECT_INVALID(m, "lir: f: %6 (local_array): bad memory space 3");
	in[shared].sub = LSPACE_SHARED;
	in[shared].lanes = 4;
	EXPECT_INVALID(m, "lir: f: %6 (local_array): cannot be a vector (4 lanes)");
	in[shared].lanes = 0;
	EXPECT_VALID(m);
	lir_module_free(m);
}

/* The entry function has predict's signature; the workspace sizes are printed when not 0. */
static void test_module(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "module features 0 outputs 0 margins 0 transform 0\n\nfunc f(ptr %0, i64 %1, ptr, i32, ptr) entry {\n");
	m->workspace_fixed = 16;
	m->workspace_per_row = 64;
	EXPECT_PRINTED(m, "module features 0 outputs 0 margins 0 transform 0 workspace 16 + 64/row\n");
	b.fn->num_params = 4;
	EXPECT_INVALID(m, "lir: f: the entry function takes (ptr, i64, ptr, i32), expected (ptr, i64, ptr, i32, ptr)");
	b.fn->num_params = 5;
	b.fn->params[4] = LTYPE_I64;
	EXPECT_INVALID(m, "lir: f: the entry function takes (ptr, i64, ptr, i32, i64), expected (ptr, i64, ptr, i32, ptr)");
	b.fn->params[4] = LTYPE_PTR;
	EXPECT_VALID(m);
	lir_module_free(m);
}

/* One name function per enum, "?" out of range. */
static void test_names(void)
{
	CHECK(!strcmp(lir_cmp_name(LCMP_ULT_F), "ult") && !strcmp(lir_cmp_name(LCMP_UNO), "uno"));
	CHECK(!strcmp(lir_cmp_name(LCMP_COUNT), "?"));
	CHECK(!strcmp(lir_cast_name(LCAST_FPTOSI), "fptosi") && !strcmp(lir_cast_name(LCAST_COUNT), "?"));
	CHECK(!strcmp(lir_space_name(LSPACE_SHARED), "shared") && !strcmp(lir_space_name(LSPACE_COUNT), "?"));
	CHECK(!strcmp(lir_op_name(LOP_ATOMIC), "atomic") && !strcmp(lir_op_name(LOP_PREFETCH), "prefetch"));
	CHECK(!lir_op_has_result(LOP_ATOMIC) && !lir_op_has_result(LOP_PREFETCH) && !lir_op_has_result(LOP_STORE));
	CHECK(lir_op_has_result(LOP_LOAD) && lir_op_has_result(LOP_LOCAL_ARRAY) && !lir_op_has_result(LOP_COUNT));
}

int main(void)
{
	test_atomic_and_prefetch();
	test_vectors();
	test_spaces();
	test_module();
	test_names();
	if (failures)
		fprintf(stderr, "lir_features: %d checks failed\n", failures);
	return failures != 0;
}
