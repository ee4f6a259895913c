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
	EXPECT_PRINTED(m, "\n\tatomic add %0[%1] += 1.5\n\tatomic add %0[%1] += 3\n\tprefetch f32 %0[%1]\n\t%3 = fadd f32 1.5, 1.5\n");

	in = b.fn->insts;
	in[add].type = LTYPE_F32;
	EXPECT_INVALID(m, "lir: f: after %2 (atomic): has no result but type f32");
	in[add].type = LTYPE_VOID;
	in[iadd].c = 0;
	EXPECT_INVALID(m, "lir: f: after %2 (atomic): operand %0 is ptr, expected i8, i32, i64, f32 or f64");
	in[iadd].c = flag;
	EXPECT_INVALID(m, "lir: f: after %2 (atomic): operand %2 is i1, expected i8, i32, i64, f32 or f64");
	in[iadd].c = n;
	in[add].b = x;
	EXPECT_INVALID(m, "lir: f: after %2 (atomic): operand 1.5 is f32, expected i64");
	in[add].b = 1;
	in[add].a = 1;
	EXPECT_INVALID(m, "lir: f: after %2 (atomic): operand %1 is i64, expected ptr");
	in[add].a = 0;
	in[add].c = LIR_NONE;
	EXPECT_INVALID(m, "lir: f: after %2 (atomic): operand c is missing");
	in[add].c = x;

	in[fetch].type = LTYPE_VOID;
	EXPECT_INVALID(m, "lir: f: after %2 (prefetch): element type void, expected a value type");
	in[fetch].type = LTYPE_F64;
	in[fetch].c = 1;
	EXPECT_INVALID(m, "lir: f: after %2 (prefetch): unused operand c is %1, expected none");
	in[fetch].c = LIR_NONE;
	in[fetch].a = x;
	EXPECT_INVALID(m, "lir: f: after %2 (prefetch): operand 1.5 is f32, expected ptr");
	in[fetch].a = 0;
	in[sum].b = fetch;
	EXPECT_INVALID(m, "lir: f: %3 (fadd): operand after %2 (prefetch) has no value");
	in[sum].b = add;
	EXPECT_INVALID(m, "lir: f: %3 (fadd): operand after %2 (atomic) has no value");
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
	uint32_t add = lir_emit(&b, LOP_MUL, LTYPE_I64, 1, 1, LIR_NONE);
	in = b.fn->insts;
	in[two].fimm = 2.0;
	in[seven].imm = 7;
	in[scalar].lanes = 1; /* 1 is a scalar too */
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\t%2 = load <8 x f32> %0[%1]\n\t%3 = fmul <8 x f32> %2, {2}\n\t%4 = fadd <8 x f32> %3, %2\n"
	                  "\t%5 = fsub <8 x f32> %4, {2}\n\tstore %0[%1] = %5\n\tstore %0[%1] = %5\n\t%6 = load f32 %0[%1]\n"
	                  "\t%7 = load <4 x i32> %0[%1]\n");
	CHECK(lir_lanes(b.fn, v) == 8 && lir_lanes(b.fn, scalar) == 1 && lir_lanes(b.fn, add) == 1);

	in[sum].b = 1;
	EXPECT_INVALID(m, "lir: f: %4 (fadd): operand %1 is a scalar, expected 8 lanes");
	in[sum].b = v;
	in[prod].lanes = 4;
	EXPECT_INVALID(m, "lir: f: %3 (fmul): operand %2 has 8 lanes, expected 4 lanes");
	in[prod].lanes = 8;
	in[store8].lanes = 4;
	EXPECT_INVALID(m, "lir: f: after %5 (store): operand %5 has 8 lanes, expected 4 lanes");
	in[store8].lanes = 8;
	in[store].b = seven;
	EXPECT_INVALID(m, "lir: f: after %5 (store): operand {7} is used before its definition");
	in[store].b = 1;
	in[ints].b = v;
	EXPECT_INVALID(m, "lir: f: %7 (load): operand %2 has 8 lanes, expected a scalar");
	in[ints].b = 1;
	in[v].lanes = LIR_MAX_LANES + 1;
	EXPECT_INVALID(m, "lir: f: %2 (load): 33 lanes, at most 32");
	in[v].lanes = 8;
	in[add].lanes = 4;
	EXPECT_INVALID(m, "lir: f: %8 (mul): cannot be a vector (4 lanes)");
	in[add].lanes = 0;
	in[ints].type = LTYPE_I1;
	EXPECT_INVALID(m, "lir: f: %7 (load): a vector of i1 (vectors hold i8, i32, i64, f32 or f64)");
	in[ints].type = LTYPE_PTR;
	EXPECT_INVALID(m, "lir: f: %7 (load): a vector of ptr");
	in[ints].type = LTYPE_I8;
	in[add].op = LOP_FNEG;
	in[add].type = LTYPE_F32;
	in[add].a = diff;
	in[add].b = LIR_NONE;
	EXPECT_INVALID(m, "lir: f: %8 (fneg): operand %5 has 8 lanes, expected a scalar");
	in[add].a = scalar;
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\t%7 = load <4 x i8> %0[%1]\n\t%8 = fneg f32 %6\n");
	lir_module_free(m);

	/* A float's exponent, lanewise (the tops' lowest candidate): a bitcast of the vector and its shift. */
	m = tiny(&b);
	v = lir_emit_vector(&b, LOP_LOAD, LTYPE_F32, 8, 0, 1, LIR_NONE);
	uint32_t bits = lir_cast(&b, LCAST_BITCAST, LTYPE_I32, v);
	uint32_t by = lir_emit_vector(&b, LOP_CONST, LTYPE_I32, 8, LIR_NONE, LIR_NONE, LIR_NONE);
	uint32_t exponent = lir_emit_vector(&b, LOP_ASHR, LTYPE_I32, 8, bits, by, LIR_NONE);
	b.fn->insts[by].imm = 23;
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\t%3 = cast bitcast <8 x f32> %2 to <8 x i32>\n\t%4 = ashr <8 x i32> %3, {23}\n");
	b.fn->insts[exponent].b = 1;
	EXPECT_INVALID(m, "lir: f: %4 (ashr): operand %1 is a scalar, expected 8 lanes");
	lir_module_free(m);
}

/* Lanewise integer compares, ands, selects, adds and trailing zeros, and splats of a scalar (a walk's top, lower_tops). */
static void test_int_vectors(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	LInst *in;
	uint32_t x = lir_emit_vector(&b, LOP_LOAD, LTYPE_I32, 16, 0, 1, LIR_NONE);
	uint32_t key = lir_emit(&b, LOP_LOAD, LTYPE_I32, 0, 1, LIR_NONE);
	uint32_t t = lir_emit_vector(&b, LOP_SPLAT, LTYPE_I32, 16, key, LIR_NONE, LIR_NONE);
	uint32_t right = lir_cmp(&b, LOP_ICMP, LCMP_ULT, t, x);
	uint32_t ones = lir_emit_vector(&b, LOP_CONST, LTYPE_I32, 16, LIR_NONE, LIR_NONE, LIR_NONE);
	uint32_t kept = lir_emit_vector(&b, LOP_AND, LTYPE_I32, 16, ones, x, LIR_NONE);
	uint32_t chosen = lir_emit_vector(&b, LOP_SELECT, LTYPE_I32, 16, right, kept, ones);
	uint32_t zeros = lir_emit_vector(&b, LOP_CTZ, LTYPE_I32, 16, chosen, LIR_NONE, LIR_NONE);
	uint32_t sum = lir_emit_vector(&b, LOP_ADD, LTYPE_I32, 16, zeros, ones, LIR_NONE);
	lir_emit(&b, LOP_STORE, LTYPE_VOID, 0, 1, sum);
	in = b.fn->insts;
	in[ones].imm = -1;
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\t%4 = splat <16 x i32> %3\n\t%5 = icmp ult <16 x i32> %4, %2\n");
	EXPECT_PRINTED(m, "\t%7 = select <16 x i32> %5, %6, {-1}\n\t%8 = ctz <16 x i32> %7\n");
	in[t].a = x;
	EXPECT_INVALID(m, "lir: f: %4 (splat): operand %2 has 16 lanes, expected a scalar");
	in[t].a = key;
	in[t].lanes = 1;
	EXPECT_INVALID(m, "lir: f: %4 (splat): a splat of 1 lanes, expected 2 to 32");
	in[t].lanes = 16;
	in[chosen].a = key;
	EXPECT_INVALID(m, "lir: f: %7 (select): operand %3 is a scalar, expected 16 lanes");
	lir_module_free(m);

	/* Zips of two vectors' halves, lane by lane (the tiles of keys' transposes). */
	m = tiny(&b);
	x = lir_emit_vector(&b, LOP_LOAD, LTYPE_I32, 16, 0, 1, LIR_NONE);
	uint32_t y = lir_emit_vector(&b, LOP_LOAD, LTYPE_I32, 16, 0, 1, LIR_NONE);
	uint32_t low = lir_emit_vector(&b, LOP_ZIP, LTYPE_I32, 16, x, y, LIR_NONE);
	uint32_t high = lir_emit_vector(&b, LOP_ZIP, LTYPE_I32, 16, x, y, LIR_NONE);
	lir_emit(&b, LOP_STORE, LTYPE_VOID, 0, 1, high);
	in = b.fn->insts;
	in[high].sub = 1;
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\t%4 = zip <16 x i32> %2, %3 low\n\t%5 = zip <16 x i32> %2, %3 high\n");
	in[high].sub = 3;
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\t%5 = zip <16 x i32> %2, %3 high halves\n");
	in[high].sub = 4;
	EXPECT_INVALID(m, "lir: f: %5 (zip): zip of half 4, expected 0 (low), 1 (high), 2 or 3 (theirs in halves)");
	in[high].sub = 1;
	in[low].lanes = 8;
	EXPECT_INVALID(m, "lir: f: %4 (zip): operand %2 has 16 lanes, expected 8 lanes");
	in[low].lanes = 1;
	EXPECT_INVALID(m, "lir: f: %4 (zip): a zip of 1 lanes, expected 2 to 32");
	in[low].lanes = 16;
	in[low].type = LTYPE_F32;
	EXPECT_INVALID(m, "lir: f: %4 (zip): operand %2 is i32, expected f32");
	lir_module_free(m);

	/* Bytes: a table gather of them by byte indices, and their words (the oblivious layout's leaf planes). */
	m = tiny(&b);
	uint32_t index = lir_emit_vector(&b, LOP_LOAD, LTYPE_I8, 32, 0, 1, LIR_NONE);
	uint32_t picked = lir_emit_vector(&b, LOP_GATHER, LTYPE_I8, 32, 0, 1, index);
	uint32_t words = lir_cast(&b, LCAST_BITCAST, LTYPE_F32, picked);
	uint32_t back = lir_cast(&b, LCAST_BITCAST, LTYPE_I8, lir_cast(&b, LCAST_BITCAST, LTYPE_I32, words));
	lir_emit(&b, LOP_STORE, LTYPE_VOID, 0, 1, back);
	in = b.fn->insts;
	in[picked].imm = 16;
	in[words].lanes = 8;
	in[words + 1].lanes = 8;
	in[back].lanes = 32;
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\t%3 = gather <32 x i8> %0[%1 + <32 x i8> %2] table 16\n\t%4 = cast bitcast <32 x i8> %3 to <8 x f32>\n");
	in[picked].imm = 0; /* (no table: each lane's load at its unsigned byte) */
	EXPECT_VALID(m);
	in[picked].imm = 16;
	in[words].lanes = 32;
	EXPECT_INVALID(m, "lir: f: %4 (cast): operand %3 has 32 lanes, expected 128 lanes");
	in[words].lanes = 8;
	in[back].lanes = 16;
	EXPECT_INVALID(m, "lir: f: %6 (cast): operand %5 has 8 lanes, expected 4 lanes");
	lir_module_free(m);

	/* Floats by byte indices (the oblivious layout's depth-8 leaves): a lane each, never from a table. */
	m = tiny(&b);
	index = lir_emit_vector(&b, LOP_LOAD, LTYPE_I8, 32, 0, 1, LIR_NONE);
	picked = lir_emit_vector(&b, LOP_GATHER, LTYPE_F32, 32, 0, 1, index);
	lir_emit_vector(&b, LOP_STORE, LTYPE_VOID, 32, 0, 1, picked);
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\t%3 = gather <32 x f32> %0[%1 + <32 x i8> %2]\n");
	b.fn->insts[picked].imm = 16;
	EXPECT_INVALID(m, "lir: f: %3 (gather): operand %2 is i8, expected i32");
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
	EXPECT_PRINTED(m, "\t%2 = local_array f32 x 4\n\t%3 = local_array shared f32 x 4\n");
	EXPECT_PRINTED(m, "\t\tstore %5[%4] = 1\n\t\tstore %3[%4] = 1\n\t\tatomic add %3[0] += 1\n");
	(void)store_inner;

	in[store].a = private;
	EXPECT_INVALID(m, "lir: f: after %5 (store): private local_array %2 is defined outside the enclosing parallel_for "
	                  "and written in it (a data race");
	in[store].a = shared;
	in[add].a = private;
	EXPECT_INVALID(m, "lir: f: after %5 (atomic): private local_array %2 is defined outside the enclosing parallel_for");
	in[loop].op = LOP_FOR; /* a sequential loop may write it */
	EXPECT_VALID(m);
	in[loop].op = LOP_PARALLEL_FOR;
	in[add].a = shared;
	in[store_nested].a = inner; /* private to an iteration of the outer loop, written by the inner one */
	EXPECT_INVALID(m, "lir: f: after %7 (store): private local_array %5 is defined outside the enclosing parallel_for");
	in[inner].sub = LSPACE_SHARED;
	EXPECT_VALID(m);
	in[shared].sub = LSPACE_COUNT;
	EXPECT_INVALID(m, "lir: f: %3 (local_array): bad memory space 3");
	in[shared].sub = LSPACE_SHARED;
	/* Lanes align an array for vectors of as many elements; its value, read and written through, stays a ptr. */
	in[shared].lanes = 4;
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "\t%3 = local_array shared f32 x 4 for <4 x f32>\n");
	in[shared].lanes = 3;
	EXPECT_INVALID(m, "lir: f: %3 (local_array): aligned for vectors of 3 elements, expected a power of two");
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

/* A kernel: gpu_index, block memory, barrier and shuffle where the block's threads agree; launches; GPU ops outside kernels. */
static void test_kernels(void)
{
	LModule *m = lir_module_new();
	LBuilder b;
	LFunc *fn = lir_func_add(m, "k", lir_kernel_params, LIR_KERNEL_PARAMS);
	LInst *in;
	uint32_t n, tid, blk, zero, one, shared, loop, cond, branch, barrier, x, down, shuffle;

	fn->kind = LFUNC_KERNEL;
	fn->launch = (LLaunch){.grid = {{.rows_per = 64}, {.count = 1}, {.count = 1}}, .block = {{.count = 64}, {.count = 1}, {.count = 1}}};
	m->gpu = true;
	m->predict = LIR_NONE;
	lir_builder_init(&b, fn);
	n = lir_emit(&b, LOP_PARAM, LTYPE_I64, LIR_NONE, LIR_NONE, LIR_NONE);
	b.fn->insts[n].imm = 1;
	tid = lir_emit(&b, LOP_GPU_INDEX, LTYPE_I64, LIR_NONE, LIR_NONE, LIR_NONE);
	b.fn->insts[tid].sub = LGPU_THREAD_X;
	blk = lir_emit(&b, LOP_GPU_INDEX, LTYPE_I64, LIR_NONE, LIR_NONE, LIR_NONE);
	b.fn->insts[blk].sub = LGPU_BLOCK_DIM_X;
	zero = lir_const_int(&b, LTYPE_I64, 0);
	one = lir_const_int(&b, LTYPE_I64, 1);
	shared = lir_local_array(&b, LTYPE_F32, 64, LSPACE_BLOCK);
	loop = lir_begin(&b, LOP_FOR, zero, n, blk); /* uniform bounds: every thread of a block runs it alike */
	barrier = lir_emit(&b, LOP_BARRIER, LTYPE_VOID, LIR_NONE, LIR_NONE, LIR_NONE);
	x = lir_emit(&b, LOP_LOAD, LTYPE_F32, shared, tid, LIR_NONE);
	down = lir_const_int(&b, LTYPE_I32, 16);
	shuffle = lir_emit(&b, LOP_SHUFFLE, LTYPE_F32, x, down, LIR_NONE);
	lir_emit(&b, LOP_STORE, LTYPE_VOID, shared, tid, shuffle);
	lir_end(&b);
	cond = lir_cmp(&b, LOP_ICMP, LCMP_EQ, tid, zero);
	branch = lir_begin(&b, LOP_IF, cond, LIR_NONE, LIR_NONE);
	x = lir_const_float(&b, LTYPE_F32, 1);
	lir_emit(&b, LOP_STORE, LTYPE_VOID, shared, zero, x);
	lir_end(&b);
	EXPECT_VALID(m);
	EXPECT_PRINTED(m, "module features 0 outputs 0 margins 0 transform 0 gpu\n\nkernel k(ptr, i64 %0, ptr, i32, ptr, ptr) grid(N/64, 1, 1) block(64, 1, 1) {\n"
	                  "\t%0 = param 1 i64\n\t%1 = gpu_index thread.x\n\t%2 = gpu_index blockDim.x\n");
	EXPECT_PRINTED(m, "\t%3 = local_array block f32 x 64\n\t%4 = for 0, %0, %2 {\n\t\tbarrier\n\t\t%5 = load f32 %3[%1]\n"
	                  "\t\t%6 = shuffle f32 %5, 16\n");

	in = b.fn->insts;
	in[loop].a = tid; /* each thread starts elsewhere: the loop's trips differ */
	EXPECT_INVALID(m, "lir: k: after %4 (barrier): under control flow the threads of a block may not all take");
	in[loop].a = zero;
	in[shuffle].b = one;
	EXPECT_INVALID(m, "lir: k: %6 (shuffle): operand 1 is i64, expected i32");
	in[shuffle].b = down;
	in[barrier].op = LOP_GPU_INDEX;
	in[barrier].sub = LGPU_COUNT;
	in[barrier].type = LTYPE_I64;
	EXPECT_INVALID(m, "lir: k: %5 (gpu_index): unknown GPU index 12");
	in[barrier].op = LOP_BARRIER;
	in[barrier].type = LTYPE_VOID;
	/* a barrier in the IF's branch, which only thread 0 takes */
	in[branch].body = barrier;
	in[loop].body = in[barrier].next;
	in[barrier].next = LIR_NONE;
	EXPECT_INVALID(m, "lir: k: after %7 (barrier): under control flow");
	in[barrier].next = in[loop].body;
	in[loop].body = barrier;
	in[branch].body = x;
	EXPECT_VALID(m);

	fn->launch.block[0] = (LDim){.rows_per = 8};
	EXPECT_INVALID(m, "lir: kernel k: block.x depends on the rows");
	fn->launch.block[0] = (LDim){.count = 0};
	EXPECT_INVALID(m, "lir: kernel k: block.x is 0 (rows_per 0), expected a positive extent");
	fn->launch.block[0] = (LDim){.count = 64};
	fn->num_params = 5;
	EXPECT_INVALID(m, "lir: k: the kernel takes (ptr, i64, ptr, i32, ptr), expected (ptr, i64, ptr, i32, ptr, ptr)");
	fn->num_params = LIR_KERNEL_PARAMS;
	m->predict = 0;
	EXPECT_INVALID(m, "lir: a GPU module has no host entry functions");
	m->predict = LIR_NONE;
	fn->entry = 1;
	EXPECT_INVALID(m, "lir: a GPU module without a kernel for predict");
	fn->entry = 0;
	EXPECT_VALID(m);
	/* the same code in a host function */
	m->gpu = false;
	m->predict = 0;
	fn->kind = LFUNC_HOST;
	fn->num_params = LIR_PREDICT_PARAMS;
	EXPECT_INVALID(m, "lir: k: %1 (gpu_index): only a kernel can have it");
	lir_module_free(m);

	CHECK(lir_dim_value(&(LDim){.rows_per = 64}, 129) == 3 && lir_dim_value(&(LDim){.rows_per = 64}, 0) == 1 &&
	      lir_dim_value(&(LDim){.count = 7}, 1000) == 7);
}

int main(void)
{
	test_atomic_and_prefetch();
	test_vectors();
	test_int_vectors();
	test_kernels();
	test_spaces();
	test_module();
	test_names();
	if (failures)
		fprintf(stderr, "lir_features: %d checks failed\n", failures);
	return failures != 0;
}
