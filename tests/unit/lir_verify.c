/* Unit tests of the LIR verifier, and a smoke test of the LIR printer. */
#include "lower/lower.h"
#include "lower/rep.h"

#include <stdlib.h>
#include <string.h>
#include "tests/unit/check.h"
#include "tests/unit/lower_check.h"
#include "tests/unit/lir_check.h"

/* A forest of num_trees trees that each split on feature 0 then 1 (depth 2, 7 nodes). */
static HForest *small_forest(uint32_t num_trees, uint32_t num_outputs, HTransform t)
{
	HForest *f = hir_forest_new("unit", 2, num_outputs);
	f->transform = t;
	for (uint32_t i = 0; i < num_trees; i++) {
		HNode *n = hir_tree_add(f, 7, i % num_outputs);
		n[0] = (HNode){.value = 0.5, .left = 1, .right = 2, .feature = 0, .default_left = 1};
		n[1] = (HNode){.value = 0.25, .left = 3, .right = 4, .feature = 1};
		n[2] = (HNode){.value = 0.75, .left = 5, .right = 6, .feature = 1};
		for (int k = 3; k < 7; k++)
			n[k] = (HNode){.value = k, .feature = HIR_LEAF};
	}
	CHECK(hir_choose_schedule(f, 0, 8, 8, "array", MTOPS_NONE, NULL));
	return f;
}

/* The first instruction of fn with opcode op, or LIR_NONE. */
static uint32_t find_op(const LFunc *fn, LOp op)
{
	for (uint32_t id = 0; id < fn->num_insts; id++)
		if (fn->insts[id].op == op)
			return id;
	return LIR_NONE;
}

/* Lowered modules verify and print; a cycle in one of their regions is caught. */
static void test_lowered(void)
{
	static const char *const reps[] = {"array", "sparse"};
	Error e;
	for (size_t r = 0; r < COUNT_OF(reps); r++) {
		HForest *f = small_forest(4, 3, HTRANSFORM_SOFTMAX);
		MModule *mir = lower_hir_to_mir(f, NULL, &e);
		LModule *m = mir ? lower_as(mir, reps[r], &e) : NULL;
		CHECK(m != NULL);
		if (m) {
			LFunc *fn = m->funcs[m->predict];
			uint32_t loop = find_op(fn, LOP_LOOP), last;
			char *text = NULL;
			size_t size = 0;
			FILE *out = open_memstream(&text, &size);
			EXPECT_VALID(m);
			lir_print(out, m);
			fclose(out);
			CHECK(strstr(text, "func predict(ptr %0, i64 %1, ptr %2, i32 %3, ptr %4) entry {\n"));
			CHECK(strstr(text, "\n\t%0 = param 0 ptr\n") && strstr(text, " = parallel_for ") && strstr(text, " grain 8 {\n"));
			CHECK(strstr(text, "} else {\n") && strstr(text, "loop {\n") && strstr(text, "] fnv1a "));
			free(text);

			/* the last instruction of the walk loop's body goes back to the first: a cycle */
			CHECK(loop != LIR_NONE);
			for (last = fn->insts[loop].body; fn->insts[last].next != LIR_NONE; last = fn->insts[last].next)
				;
			fn->insts[last].next = fn->insts[loop].body;
			EXPECT_INVALID(m, "is reached twice (a cycle or a shared region)");
			fn->insts[last].next = last; /* a one-instruction cycle */
			EXPECT_INVALID(m, "is reached twice");
			fn->insts[last].next = LIR_NONE;
			EXPECT_VALID(m);
		}
		lir_module_free(m);
		mir_module_free(mir);
		hir_forest_free(f);
	}
}

/* Values are used after their definition, and only in the region that defines them or a nested one. */
static void test_dominance(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	uint32_t add = lir_emit(&b, LOP_ADD, LTYPE_I64, 1, 1, LIR_NONE);
	uint32_t one = lir_const_int(&b, LTYPE_I64, 1);
	EXPECT_VALID(m);
	b.fn->insts[add].b = one;
	EXPECT_INVALID(m, "lir: f: %2 (add): operand 1 is used before its definition");
	b.fn->insts[add].b = add;
	EXPECT_INVALID(m, "lir: f: %2 (add): operand %2 is used before its definition");
	b.fn->insts[add].b = 1;

	/* a value defined inside a for is not visible after it, nor is the for's own value */
	uint32_t loop = lir_begin(&b, LOP_FOR, one, 1, one);
	uint32_t inner = lir_emit(&b, LOP_ADD, LTYPE_I64, loop, one, LIR_NONE);
	lir_end(&b);
	uint32_t after = lir_emit(&b, LOP_ADD, LTYPE_I64, one, one, LIR_NONE);
	EXPECT_VALID(m);
	b.fn->insts[after].a = inner;
	EXPECT_INVALID(m, "operand %4 does not dominate this use");
	b.fn->insts[after].a = loop;
	EXPECT_INVALID(m, "operand %3 does not dominate this use");
	b.fn->insts[after].a = 9999;
	EXPECT_INVALID(m, "operand %9999 out of range");
	b.fn->insts[after].a = one;

	/* operand counts: unused operands are LIR_NONE, used ones are present */
	b.fn->insts[after].c = one;
	EXPECT_INVALID(m, "lir: f: %5 (add): unused operand c is 1, expected none");
	b.fn->insts[after].c = LIR_NONE;
	b.fn->insts[after].b = LIR_NONE;
	EXPECT_INVALID(m, "operand b is missing");
	b.fn->insts[after].b = one;
	EXPECT_VALID(m);
	lir_module_free(m);
}

/* Operand and result types. */
static void test_types(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	uint32_t x = lir_const_float(&b, LTYPE_F32, 0.5), y = lir_const_float(&b, LTYPE_F64, 2.0);
	uint32_t sum = lir_emit(&b, LOP_FADD, LTYPE_F32, x, x, LIR_NONE);
	uint32_t cast = lir_cast(&b, LCAST_FPEXT, LTYPE_F64, sum);
	uint32_t cmp = lir_cmp(&b, LOP_FCMP, LCMP_OGE, cast, y);
	uint32_t arr = lir_emit(&b, LOP_LOCAL_ARRAY, LTYPE_F32, LIR_NONE, LIR_NONE, LIR_NONE);
	uint32_t load = lir_emit(&b, LOP_LOAD, LTYPE_F32, arr, 1, LIR_NONE); /* a local array is a ptr */
	uint32_t sel = lir_emit(&b, LOP_SELECT, LTYPE_F32, cmp, load, x);
	b.fn->insts[arr].imm = 4;
	EXPECT_VALID(m);

	b.fn->insts[sum].b = y;
	EXPECT_INVALID(m, "lir: f: %2 (fadd): operand 2 is f64, expected f32");
	b.fn->insts[sum].b = x;
	b.fn->insts[cast].sub = LCAST_FPTRUNC;
	EXPECT_INVALID(m, "lir: f: %3 (cast): cannot fptrunc f32 to f64");
	b.fn->insts[cast].sub = LCAST_BITCAST; /* bits of the same size only */
	EXPECT_INVALID(m, "lir: f: %3 (cast): cannot bitcast f32 to f64");
	b.fn->insts[cast].sub = LCAST_FPEXT;
	b.fn->insts[cmp].op = LOP_ICMP;
	EXPECT_INVALID(m, "bad predicate");
	b.fn->insts[cmp].sub = LCMP_EQ;
	EXPECT_INVALID(m, "lir: f: %4 (icmp): operand %3 is f64, expected an integer type");
	b.fn->insts[cmp].op = LOP_FCMP;
	b.fn->insts[cmp].sub = LCMP_OGE;
	b.fn->insts[load].b = x;
	EXPECT_INVALID(m, "lir: f: %6 (load): operand 0.5 is f32, expected i64");
	b.fn->insts[load].b = 1;
	b.fn->insts[sel].a = load;
	EXPECT_INVALID(m, "lir: f: %7 (select): operand %6 is f32, expected i1");
	b.fn->insts[sel].a = cmp;
	b.fn->insts[1].type = LTYPE_I32;
	EXPECT_INVALID(m, "lir: f: %1 (param): result is i32, expected i64");
	b.fn->insts[1].type = LTYPE_I64;
	b.fn->insts[arr].imm = 0;
	EXPECT_INVALID(m, "0 elements, expected at least 1");
	b.fn->insts[arr].imm = 4;
	EXPECT_VALID(m);
	lir_module_free(m);
}

/* ADDC adds two integers of its type and an i1. */
static void test_addc(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	uint32_t x = lir_const_int(&b, LTYPE_I64, 3), y = lir_const_int(&b, LTYPE_I64, 4);
	uint32_t below = lir_cmp(&b, LOP_ICMP, LCMP_ULT, x, y);
	uint32_t sum = lir_emit(&b, LOP_ADDC, LTYPE_I64, x, x, below);
	EXPECT_VALID(m);
	b.fn->insts[sum].c = y;
	EXPECT_INVALID(m, "(addc): operand 4 is i64, expected i1");
	b.fn->insts[sum].c = below;
	b.fn->insts[sum].b = below;
	EXPECT_INVALID(m, "(addc): operand %2 is i1, expected i64");
	b.fn->insts[sum].b = x;
	b.fn->insts[sum].type = LTYPE_F64;
	EXPECT_INVALID(m, "(addc): result is f64, expected an integer type");
	lir_module_free(m);
}

/* THREADS: an i64. */
static void test_threads(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	uint32_t threads = lir_emit(&b, LOP_THREADS, LTYPE_I64, LIR_NONE, LIR_NONE, LIR_NONE);
	EXPECT_VALID(m);
	b.fn->insts[threads].type = LTYPE_I32;
	EXPECT_INVALID(m, "(threads): result is i32, expected i64");
	lir_module_free(m);
}

/* CALL: another entry of the module, given rows, a row count and a workspace, at the top of its caller's body. */
static void test_call(void)
{
	LBuilder b, other;
	LModule *m = tiny(&b);
	LFunc *callee = lir_func_add(m, "g", lir_predict_params, LIR_PREDICT_PARAMS);
	uint32_t call, zero, loop;
	lir_builder_init(&other, callee);
	m->predict_f64 = 1;
	call = lir_emit(&b, LOP_CALL, LTYPE_VOID, 0, 1, 0);
	b.fn->insts[call].imm = 1;
	EXPECT_VALID(m);
	{
		char *text = lir_text(m);
		CHECK(strstr(text, "\tcall g %0, %1, %0\n"));
		free(text);
	}
	b.fn->insts[call].imm = 0;
	EXPECT_INVALID(m, "(call): calls function 0, expected an entry other than this function");
	b.fn->insts[call].imm = 2;
	EXPECT_INVALID(m, "(call): calls function 2, expected an entry");
	b.fn->insts[call].imm = 1;
	b.fn->insts[call].b = 0;
	EXPECT_INVALID(m, "(call): operand %0 is ptr, expected i64");
	b.fn->insts[call].b = 1;
	m->predict_f64 = LIR_NONE;
	EXPECT_INVALID(m, "(call): calls function 1, expected an entry");
	m->predict_f64 = 1;
	zero = lir_const_int(&b, LTYPE_I64, 0);
	loop = lir_begin(&b, LOP_FOR, zero, 1, lir_const_int(&b, LTYPE_I64, 1));
	call = lir_emit(&b, LOP_CALL, LTYPE_VOID, 0, loop, 0);
	b.fn->insts[call].imm = 1;
	lir_end(&b);
	EXPECT_INVALID(m, "(call): inside a region");
	lir_module_free(m);
}

/* A buffer counts as read where a value loaded from it reaches an effect, not where its address is only computed. */
static void test_buffer_read(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	float values[2] = {1, 2};
	bool *read;
	uint32_t kept = lir_buffer_add(m, "kept", LTYPE_F32, 2, memcpy(xmalloc(sizeof values), values, sizeof values));
	uint32_t dead = lir_buffer_add(m, "dead", LTYPE_F32, 2, memcpy(xmalloc(sizeof values), values, sizeof values));
	uint32_t k = rep_buffer_address(&b, kept), d = rep_buffer_address(&b, dead), one = lir_const_int(&b, LTYPE_I64, 1);
	uint32_t x = lir_emit(&b, LOP_LOAD, LTYPE_F32, k, one, LIR_NONE);
	lir_emit(&b, LOP_LOAD, LTYPE_F32, lir_index(&b, d, one, LTYPE_F32), one, LIR_NONE); /* loaded, never used */
	lir_emit(&b, LOP_STORE, LTYPE_VOID, 0, lir_const_int(&b, LTYPE_I64, 0), x);
	EXPECT_VALID(m);
	read = lir_buffers_read(m);
	CHECK(read[kept]);
	CHECK(!read[dead]);
	free(read);
	lir_module_free(m);
}

/* BREAK_IF leaves the innermost LOOP, through IFs but not through FORs. */
static void test_break_if(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	uint32_t zero = lir_const_int(&b, LTYPE_I64, 0), one = lir_const_int(&b, LTYPE_I64, 1);
	uint32_t done = lir_cmp(&b, LOP_ICMP, LCMP_SLT, zero, one);
	uint32_t top = lir_emit(&b, LOP_BREAK_IF, LTYPE_VOID, done, LIR_NONE, LIR_NONE);
	EXPECT_INVALID(m, "lir: f: after %2 (break_if): not inside a loop");
	b.fn->insts[top].op = LOP_SET; /* as a set: its value is missing, then its cell is no var */
	EXPECT_INVALID(m, "lir: f: after %2 (set): operand b is missing");
	b.fn->insts[top].b = zero;
	EXPECT_INVALID(m, "operand %2 is a icmp, expected a var");
	b.fn->insts[done].next = LIR_NONE; /* drop it from the body */
	lir_builder_init(&b, b.fn);

	lir_begin(&b, LOP_LOOP, LIR_NONE, LIR_NONE, LIR_NONE);
	lir_begin(&b, LOP_IF, done, LIR_NONE, LIR_NONE);
	uint32_t in_if = lir_emit(&b, LOP_BREAK_IF, LTYPE_VOID, done, LIR_NONE, LIR_NONE);
	lir_end(&b);
	uint32_t loop = lir_begin(&b, LOP_FOR, zero, one, one);
	lir_emit(&b, LOP_BREAK_IF, LTYPE_VOID, done, LIR_NONE, LIR_NONE);
	lir_end(&b);
	lir_end(&b);
	EXPECT_INVALID(m, "lir: f: after %3 (break_if): not inside a loop");
	b.fn->insts[loop].body = LIR_NONE; /* drop the break_if inside the for */
	EXPECT_VALID(m);
	b.fn->insts[in_if].a = zero;
	EXPECT_INVALID(m, "lir: f: after %2 (break_if): operand 0 is i64, expected i1");
	lir_module_free(m);
}

/* A PARALLEL_FOR's body may use outside values but not outside VAR cells. */
static void test_parallel_vars(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	uint32_t zero = lir_const_int(&b, LTYPE_I64, 0), one = lir_const_int(&b, LTYPE_I64, 1);
	uint32_t outside = lir_emit(&b, LOP_VAR, LTYPE_I64, zero, LIR_NONE, LIR_NONE);
	uint32_t loop = lir_begin(&b, LOP_PARALLEL_FOR, zero, 1, one);
	uint32_t inside = lir_emit(&b, LOP_VAR, LTYPE_I64, loop, LIR_NONE, LIR_NONE);
	lir_begin(&b, LOP_FOR, zero, one, one);
	uint32_t get = lir_emit(&b, LOP_GET, LTYPE_I64, inside, LIR_NONE, LIR_NONE);
	uint32_t set = lir_emit(&b, LOP_SET, LTYPE_VOID, inside, get, LIR_NONE);
	lir_end(&b);
	lir_end(&b);
	b.fn->insts[loop].imm = 64;
	EXPECT_VALID(m);
	b.fn->insts[get].a = outside;
	EXPECT_INVALID(m, "lir: f: %6 (get): var %2 is declared outside the enclosing parallel_for");
	b.fn->insts[get].a = inside;
	b.fn->insts[set].a = outside;
	EXPECT_INVALID(m, "lir: f: after %6 (set): var %2 is declared outside the enclosing parallel_for");
	b.fn->insts[loop].op = LOP_FOR; /* a sequential loop may use it */
	EXPECT_VALID(m);
	b.fn->insts[loop].op = LOP_PARALLEL_FOR;
	b.fn->insts[set].a = inside;
	b.fn->insts[get].type = LTYPE_I32;
	EXPECT_INVALID(m, "lir: f: %6 (get): result is i32, expected i64");
	b.fn->insts[get].type = LTYPE_I64;
	b.fn->insts[loop].imm = 0;
	EXPECT_INVALID(m, "grain 0, expected at least 1");
	b.fn->insts[loop].imm = 64;
	m->predict = 1;
	EXPECT_INVALID(m, "lir: predict function 1 out of range");
	m->predict = 0;
	EXPECT_VALID(m);
	lir_module_free(m);
}

int main(void)
{
	test_lowered();
	test_dominance();
	test_types();
	test_addc();
	test_threads();
	test_call();
	test_buffer_read();
	test_break_if();
	test_parallel_vars();
	if (failures)
		fprintf(stderr, "lir_verify: %d checks failed\n", failures);
	return failures != 0;
}
