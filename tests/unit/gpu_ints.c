/* Unit tests of lower_gpu_ints: which of a function's i64 values it computes in 32 bits, and the module stays valid. */
#include "lower/lowering.h"

#include "tests/unit/check.h"
#include "tests/unit/lir_check.h"

static uint32_t op(LBuilder *b, LOp o, uint32_t x, uint32_t y) { return lir_emit(b, o, LTYPE_I64, x, y, LIR_NONE); }
static uint32_t k64(LBuilder *b, int64_t v) { return lir_const_int(b, LTYPE_I64, v); }

/*
 * A step of a walk from a constant root (node 2n + right, a record of two i32 words) is
 * made i32, its load indexed by the i32; what may pass 2^31 (a product by 2^30), what
 * rows make (the row count's parameter) and what only a loop's bound reads stay i64.
 */
static void test_steps(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	LFunc *fn = b.fn;
	uint32_t right = lir_cmp(&b, LOP_ICMP, LCMP_SLT, 1, k64(&b, 5));
	uint32_t bit = lir_cast(&b, LCAST_ZEXT, LTYPE_I64, right);
	uint32_t node = op(&b, LOP_ADD, op(&b, LOP_SHL, k64(&b, 1), k64(&b, 1)), bit);
	uint32_t slot = op(&b, LOP_MUL, node, k64(&b, 2));
	uint32_t word = lir_emit(&b, LOP_LOAD, LTYPE_I32, 0, slot, LIR_NONE);
	uint32_t feature = lir_cast(&b, LCAST_ZEXT, LTYPE_I64, lir_emit(&b, LOP_AND, LTYPE_I32, word, lir_const_int(&b, LTYPE_I32, 255), LIR_NONE));
	uint32_t at = op(&b, LOP_ADD, feature, op(&b, LOP_MUL, 1, k64(&b, 28)));      /* a row's feature: i64 */
	uint32_t value = lir_emit(&b, LOP_LOAD, LTYPE_F32, 0, at, LIR_NONE);
	uint32_t big = op(&b, LOP_MUL, node, k64(&b, 1 << 30));                      /* past 2^31 */
	uint32_t leaf = lir_cmp(&b, LOP_ICMP, LCMP_SLT, node, k64(&b, 3));          /* compares in 32 bits */
	uint32_t bound = op(&b, LOP_ADD, bit, k64(&b, 4));                           /* only a loop's bound */
	uint32_t loop = lir_begin(&b, LOP_FOR, k64(&b, 0), bound, k64(&b, 1));
	lir_emit(&b, LOP_STORE, LTYPE_VOID, 0, big, value);
	lir_end(&b);
	(void)leaf;
	(void)loop;
	lower_gpu_ints(m, fn);
	EXPECT_VALID(m);
	CHECK(lir_type(fn, node) == LTYPE_I32 && lir_type(fn, slot) == LTYPE_I32 && lir_type(fn, bit) == LTYPE_I32);
	CHECK(fn->insts[word].b == slot);                                            /* indexed by the i32 itself */
	CHECK(lir_type(fn, fn->insts[leaf].a) == LTYPE_I32 && lir_type(fn, fn->insts[leaf].b) == LTYPE_I32);
	CHECK(lir_type(fn, at) == LTYPE_I64 && lir_type(fn, big) == LTYPE_I64 && lir_type(fn, bound) == LTYPE_I64);
	CHECK(fn->insts[big].a != node && fn->insts[fn->insts[big].a].op == LOP_CAST); /* node, sign-extended */
	/* the feature is the zero-extended i32 it was: an i32 user would read the AND itself */
	CHECK(lir_type(fn, feature) == LTYPE_I64);
	lir_module_free(m);
}

/*
 * A VAR: set to values under 8 (a walk's node) it holds i32 and its GETs read i32; one
 * that counts up in a loop with no bound grows past any limit and stays i64.
 */
static void test_vars(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	LFunc *fn = b.fn;
	uint32_t small = lir_emit(&b, LOP_VAR, LTYPE_I64, k64(&b, 0), LIR_NONE, LIR_NONE);
	uint32_t count = lir_emit(&b, LOP_VAR, LTYPE_I64, k64(&b, 0), LIR_NONE, LIR_NONE), got, n, right, next, read;
	lir_begin(&b, LOP_LOOP, LIR_NONE, LIR_NONE, LIR_NONE);
	got = lir_emit(&b, LOP_GET, LTYPE_I64, small, LIR_NONE, LIR_NONE);
	right = lir_cast(&b, LCAST_ZEXT, LTYPE_I64, lir_emit(&b, LOP_LOAD, LTYPE_I8, 0, got, LIR_NONE));
	next = op(&b, LOP_AND, op(&b, LOP_ADD, op(&b, LOP_SHL, got, k64(&b, 1)), right), k64(&b, 7));
	lir_emit(&b, LOP_SET, LTYPE_VOID, small, next, LIR_NONE);
	n = lir_emit(&b, LOP_GET, LTYPE_I64, count, LIR_NONE, LIR_NONE);
	lir_emit(&b, LOP_SET, LTYPE_VOID, count, op(&b, LOP_ADD, n, k64(&b, 1)), LIR_NONE);
	lir_emit(&b, LOP_BREAK_IF, LTYPE_VOID, lir_cmp(&b, LOP_ICMP, LCMP_SGT, n, 1), LIR_NONE, LIR_NONE);
	lir_end(&b);
	read = lir_emit(&b, LOP_LOAD, LTYPE_F32, 0, lir_emit(&b, LOP_GET, LTYPE_I64, small, LIR_NONE, LIR_NONE), LIR_NONE);
	lower_gpu_ints(m, fn);
	EXPECT_VALID(m);
	CHECK(lir_type(fn, small) == LTYPE_I32 && lir_type(fn, got) == LTYPE_I32 && lir_type(fn, next) == LTYPE_I32);
	CHECK(lir_type(fn, fn->insts[read].b) == LTYPE_I32);
	CHECK(lir_type(fn, right) == LTYPE_I32); /* an i8 widened to i32, not i64 */
	CHECK(lir_type(fn, count) == LTYPE_I64 && lir_type(fn, n) == LTYPE_I64);
	lir_module_free(m);
}

/*
 * A loop over 8 trees whose counter indexes a load counts in i32, the product with it
 * nsw; one up to the row count (a parameter, unbounded) counts in i64, and so does a
 * loop whose counter only a 64-bit value reads.
 */
static void test_loops(void)
{
	LBuilder b;
	LModule *m = tiny(&b);
	LFunc *fn = b.fn;
	uint32_t trees = lir_begin(&b, LOP_FOR, k64(&b, 0), k64(&b, 8), k64(&b, 1)), slot, rows, count, wide;
	slot = op(&b, LOP_MUL, trees, k64(&b, 3));
	lir_emit(&b, LOP_LOAD, LTYPE_F32, 0, slot, LIR_NONE);
	lir_end(&b);
	rows = lir_begin(&b, LOP_FOR, k64(&b, 0), 1, k64(&b, 1));
	lir_emit(&b, LOP_LOAD, LTYPE_F32, 0, rows, LIR_NONE);
	lir_end(&b);
	count = lir_begin(&b, LOP_FOR, k64(&b, 0), k64(&b, 4), k64(&b, 1));
	wide = op(&b, LOP_MUL, count, 1); /* the counter times the row count */
	lir_emit(&b, LOP_LOAD, LTYPE_F32, 0, wide, LIR_NONE);
	lir_end(&b);
	lower_gpu_ints(m, fn);
	EXPECT_VALID(m);
	CHECK(lir_type(fn, trees) == LTYPE_I32 && lir_type(fn, slot) == LTYPE_I32 && fn->insts[slot].imm == LIR_NSW);
	CHECK(lir_type(fn, rows) == LTYPE_I64 && lir_type(fn, count) == LTYPE_I64 && fn->insts[wide].a == count);
	lir_module_free(m);
}

int main(void)
{
	test_steps();
	test_vars();
	test_loops();
	if (failures)
		fprintf(stderr, "gpu_ints: %d checks failed\n", failures);
	return failures != 0;
}
