/* LIR: checking a module's structure: operands, types, SSA dominance, regions, immediates. */
#include "ir/lir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-instruction marks. */
enum {
	SEEN = 1,    /* reached by a region walk (a second visit means a cycle or a shared region) */
	VISIBLE = 2, /* defined in the current region or an enclosing one: usable here */
};

typedef struct Verifier {
	const LModule *m;
	const LFunc *fn;
	uint8_t *mark;  /* per instruction: SEEN | VISIBLE */
	uint32_t *par;  /* per VAR and LOCAL_ARRAY: how many PARALLEL_FORs enclose it */
	bool *varying;  /* per value of a kernel: it may differ between the threads of a block */
	Error *e;
} Verifier;

/*
 * Where a region sits: whether BREAK_IF may leave it, how many PARALLEL_FORs enclose it,
 * and in a kernel whether the threads of a block may disagree on running it (divergent:
 * under an IF or a loop whose condition or bounds are varying, or in any LOOP).
 */
typedef struct Context {
	bool in_loop;
	bool divergent;
	bool nested;    /* inside a structured instruction's region */
	uint32_t par;
} Context;

/* Value x as lir_print shows it (%N, or a constant's value), for messages. */
#define NAME(v, x) lir_value_text((v)->fn, (x), (char[48]){0}, 48)

/* Fail with "lir: FUNC: %N (OP): " and the formatted message. */
static bool fail(Verifier *v, uint32_t id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(Verifier *v, uint32_t id, const char *fmt, ...)
{
	char what[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return error_set(v->e, "lir: %s: %s (%s): %s", v->fn->name, NAME(v, id), lir_op_name((LOp)v->fn->insts[id].op), what);
}

/* Whether t is an integer type. */
static bool is_int(LType t) { return t == LTYPE_I1 || t == LTYPE_I8 || t == LTYPE_I32 || t == LTYPE_I64; }
/* Whether t is a float type. */
static bool is_float(LType t) { return t == LTYPE_F32 || t == LTYPE_F64; }
/* Whether t is a type a value can have (not void, not out of range). */
static bool is_value_type(LType t) { return t != LTYPE_VOID && t <= LTYPE_PTR; }
/* Width in bits of integer type t. */
static unsigned int_bits(LType t) { return t == LTYPE_I1 ? 1 : 8 * (unsigned)lir_type_size(t); }

/* The type of value x: LOCAL_ARRAY's `type` is its element type, its value is a ptr. */
static LType value_type(const LFunc *fn, uint32_t x)
{
	return fn->insts[x].op == LOP_LOCAL_ARRAY ? LTYPE_PTR : lir_type(fn, x);
}

/* Operand x of id must be a value visible here: defined earlier in this region or an enclosing one. */
static bool check_operand(Verifier *v, uint32_t id, uint32_t x)
{
	if (x >= v->fn->num_insts)
		return fail(v, id, "operand %%%u out of range (%u instructions)", x, v->fn->num_insts);
	if (!lir_op_has_result((LOp)v->fn->insts[x].op))
		return fail(v, id, "operand %s (%s) has no value", NAME(v, x), lir_op_name((LOp)v->fn->insts[x].op));
	if (!(v->mark[x] & VISIBLE)) {
		if (!(v->mark[x] & SEEN) || x == id)
			return fail(v, id, "operand %s is used before its definition", NAME(v, x));
		return fail(v, id, "operand %s does not dominate this use (defined in a region that does not enclose it)", NAME(v, x));
	}
	return true;
}

/* Operand x of id must have type want. */
static bool expect(Verifier *v, uint32_t id, uint32_t x, LType want)
{
	LType t = value_type(v->fn, x);
	if (t != want)
		return fail(v, id, "operand %s is %s, expected %s", NAME(v, x), lir_type_name(t), lir_type_name(want));
	return true;
}

/* Operand x of id is an address's index: i64, or i32 (sign-extended). */
static bool expect_index(Verifier *v, uint32_t id, uint32_t x)
{
	return value_type(v->fn, x) == LTYPE_I32 || expect(v, id, x, LTYPE_I64);
}

/* Operand x of id must have an integer type (want_float false) or a float type (true). */
static bool expect_class(Verifier *v, uint32_t id, uint32_t x, bool want_float)
{
	LType t = value_type(v->fn, x);
	if (want_float ? !is_float(t) : !is_int(t))
		return fail(v, id, "operand %s is %s, expected a%s type", NAME(v, x), lir_type_name(t), want_float ? " float" : "n integer");
	return true;
}

/* The result type of id must be want. */
static bool expect_result(Verifier *v, uint32_t id, LType want)
{
	LType t = lir_type(v->fn, id);
	if (t != want)
		return fail(v, id, "result is %s, expected %s", lir_type_name(t), lir_type_name(want));
	return true;
}

/* A CAST of a (type from) to type to, of kind `kind`. */
static bool verify_cast(Verifier *v, uint32_t id, LType from, LType to, unsigned kind)
{
	bool ok;
	switch ((LCast)kind) {
	case LCAST_SEXT:
	case LCAST_ZEXT: ok = is_int(from) && is_int(to) && int_bits(to) > int_bits(from); break;
	case LCAST_TRUNC: ok = is_int(from) && is_int(to) && int_bits(to) < int_bits(from); break;
	case LCAST_FPEXT: ok = from == LTYPE_F32 && to == LTYPE_F64; break;
	case LCAST_FPTRUNC: ok = from == LTYPE_F64 && to == LTYPE_F32; break;
	case LCAST_SITOFP: ok = is_int(from) && is_float(to); break;
	case LCAST_FPTOSI: ok = is_float(from) && is_int(to); break;
	case LCAST_BITCAST: ok = (from == LTYPE_I32 && to == LTYPE_F32) || (from == LTYPE_F32 && to == LTYPE_I32) ||
	                         (from == LTYPE_I64 && to == LTYPE_F64) || (from == LTYPE_F64 && to == LTYPE_I64) ||
	                         (from == LTYPE_I8 && (to == LTYPE_F32 || to == LTYPE_I32)) || (from == LTYPE_I32 && to == LTYPE_I8);
		break;
	default: return fail(v, id, "bad cast kind %u", kind);
	}
	if (!ok)
		return fail(v, id, "cannot %s %s to %s", lir_cast_name((LCast)kind), lir_type_name(from), lir_type_name(to));
	return true;
}

/* Whether vectors of t can be built: integers of a byte or more and floats (and i1, of compares). */
static bool is_vector_element(LType t) { return t == LTYPE_I8 || t == LTYPE_I32 || t == LTYPE_I64 || is_float(t); }

/*
 * Lanes of id and its operands: only LOAD, GATHER, STORE, CONST, SPLAT, ZIP and the
 * elementwise ADD, SUB, AND, OR, ASHR, CTZ, SELECT, ICMP, FADD, FSUB, FMUL, FMIN, FMAX, FCMP
 * and CAST are vectors, of an element type vectors hold (compares, and AND, OR, SELECT
 * and CONST of i1: of i1); SPLAT takes a
 * scalar, the elementwise take operands of their own lanes, GATHER indices
 * c of its lanes, STORE a value c of its lanes (any when it has none), BITS a vector of
 * at most 32 lanes (or a scalar), everything else scalars.
 */
static bool verify_lanes(Verifier *v, uint32_t id)
{
	const LInst *in = &v->fn->insts[id];
	const uint32_t ops[3] = {in->a, in->b, in->c};
	unsigned lanes = lir_lanes(v->fn, id);
	bool elementwise = in->op == LOP_FADD || in->op == LOP_FSUB || in->op == LOP_FMUL || in->op == LOP_FMIN ||
	                   in->op == LOP_FDIV || in->op == LOP_FMAX || in->op == LOP_EXP || in->op == LOP_FCMP ||
	                   in->op == LOP_CAST || in->op == LOP_ADD || in->op == LOP_SUB || in->op == LOP_AND ||
	                   in->op == LOP_SHL || in->op == LOP_ASHR || in->op == LOP_CTZ ||
	                   in->op == LOP_SELECT || in->op == LOP_ICMP || in->op == LOP_ZIP || in->op == LOP_OR;
	/* vectors of i1: compares, and the logic of their answers */
	bool compare = in->op == LOP_FCMP || in->op == LOP_ICMP ||
	               (in->type == LTYPE_I1 && (in->op == LOP_AND || in->op == LOP_OR || in->op == LOP_SELECT || in->op == LOP_CONST));

	if (in->lanes > LIR_MAX_LANES)
		return fail(v, id, "%u lanes, at most %d", in->lanes, LIR_MAX_LANES);
	if (lanes > 1 && !elementwise && in->op != LOP_LOAD && in->op != LOP_GATHER && in->op != LOP_STORE && in->op != LOP_CONST &&
	    in->op != LOP_SPLAT)
		return fail(v, id, "cannot be a vector (%u lanes)", lanes);
	if ((in->op == LOP_SPLAT || in->op == LOP_ZIP) && lanes < 2)
		return fail(v, id, "a %s of %u lanes, expected 2 to %d", lir_op_name((LOp)in->op), lanes, LIR_MAX_LANES);
	if (lanes > 1 && in->op != LOP_STORE && !is_vector_element((LType)in->type) && !compare)
		return fail(v, id, "a vector of %s (vectors hold i8, i32, i64, f32 or f64)", lir_type_name((LType)in->type));
	for (uint32_t k = 0; k < lir_op_operands((LOp)in->op); k++) {
		unsigned have = lir_lanes(v->fn, ops[k]), want = 1;
		if (in->op == LOP_CAST && in->sub == LCAST_BITCAST && k == 0 && (in->type == LTYPE_I8) != (value_type(v->fn, ops[k]) == LTYPE_I8))
			want = in->type == LTYPE_I8 ? lanes / 4 : 4 * lanes; /* bytes and words: as many bits */
		else if (elementwise || (in->op == LOP_GATHER && k == 2))
			want = lanes;
		else if (in->op == LOP_BITS)
			want = have <= 32 ? have : 32;
		else if (in->op == LOP_STORE && k == 2)
			want = in->lanes > 1 ? lanes : have;
		if (have != want) {
			char expected[24] = "a scalar";
			if (want > 1)
				snprintf(expected, sizeof expected, "%u lanes", want);
			if (have == 1)
				return fail(v, id, "operand %s is a scalar, expected %s", NAME(v, ops[k]), expected);
			return fail(v, id, "operand %s has %u lanes, expected %s", NAME(v, ops[k]), have, expected);
		}
	}
	return true;
}

/*
 * STORE, ATOMIC: a PRIVATE local_array defined outside the innermost enclosing
 * PARALLEL_FOR belongs to one iteration of an outer loop (or to the invocation); the
 * iterations of the parallel loop writing it would race.
 */
static bool verify_write(Verifier *v, uint32_t id, Context ctx)
{
	uint32_t target = v->fn->insts[id].a;
	const LInst *array = &v->fn->insts[target];
	if (array->op == LOP_LOCAL_ARRAY && array->sub == LSPACE_PRIVATE && v->par[target] < ctx.par)
		return fail(v, id,
		            "private local_array %s is defined outside the enclosing parallel_for and written in it "
		            "(a data race: make it shared, or define it inside)",
		            NAME(v, target));
	return true;
}

/* GET/SET: operand a must be a VAR cell declared inside the innermost enclosing PARALLEL_FOR. */
static bool verify_cell(Verifier *v, uint32_t id, Context ctx)
{
	uint32_t cell = v->fn->insts[id].a;
	if (v->fn->insts[cell].op != LOP_VAR)
		return fail(v, id, "operand %s is a %s, expected a var", NAME(v, cell), lir_op_name((LOp)v->fn->insts[cell].op));
	if (v->par[cell] != ctx.par)
		return fail(v, id, "var %s is declared outside the enclosing parallel_for", NAME(v, cell));
	return true;
}

/*
 * Whether id's value may differ between the threads of a block: the thread's own
 * coordinates, what it loads, reads from a cell or receives from a shuffle, and what is
 * computed from those. Block coordinates, extents, parameters and constants are uniform.
 */
static bool is_varying(const Verifier *v, uint32_t id)
{
	const LInst *in = &v->fn->insts[id];
	const uint32_t ops[3] = {in->a, in->b, in->c};
	if (lir_varies_itself(in))
		return true;
	for (uint32_t k = 0; k < lir_op_operands((LOp)in->op); k++)
		if (v->varying[ops[k]])
			return true;
	return false;
}

/* GPU_INDEX, BARRIER, SHUFFLE and BLOCK arrays belong in kernels; BARRIER and SHUFFLE under block-uniform control. */
static bool verify_gpu(Verifier *v, uint32_t id, Context ctx)
{
	const LInst *in = &v->fn->insts[id];
	bool kernel = v->fn->kind == LFUNC_KERNEL;
	bool gpu_only = in->op == LOP_GPU_INDEX || in->op == LOP_BARRIER || in->op == LOP_SHUFFLE ||
	                (in->op == LOP_LOCAL_ARRAY && in->sub == LSPACE_BLOCK);
	if (gpu_only && !kernel)
		return fail(v, id, "only a kernel can have it");
	if ((in->op == LOP_PARALLEL_FOR || in->op == LOP_THREADS) && kernel)
		return fail(v, id, "a kernel cannot have it (its loops are spread over the grid with gpu_index)");
	if ((in->op == LOP_BARRIER || in->op == LOP_SHUFFLE) && ctx.divergent)
		return fail(v, id, "under control flow the threads of a block may not all take (it would hang or read garbage)");
	if (kernel)
		v->varying[id] = is_varying(v, id);
	return true;
}

/* The checks of one instruction whose operands are present and visible. */
static bool verify_types(Verifier *v, uint32_t id, Context ctx)
{
	const LFunc *fn = v->fn;
	const LInst *in = &fn->insts[id];
	LType t = (LType)in->type;

	switch ((LOp)in->op) {
	case LOP_PARAM:
		if (in->imm < 0 || in->imm >= fn->num_params)
			return fail(v, id, "parameter %lld out of range (%u parameters)", (long long)in->imm, fn->num_params);
		return expect_result(v, id, fn->params[in->imm]);
	case LOP_CONST:
		if (!is_int(t) && !is_float(t))
			return fail(v, id, "constant of type %s", lir_type_name(t));
		if (in->sub && (in->sub != LIR_CONST_STEPS || !is_int(t) || in->lanes < 2))
			return fail(v, id, "constant of kind %u (steps are vectors of integers)", in->sub);
		return true;
	case LOP_BUFFER:
		if (in->imm < 0 || in->imm >= v->m->num_buffers)
			return fail(v, id, "buffer %lld out of range (%u buffers)", (long long)in->imm, v->m->num_buffers);
		return expect_result(v, id, LTYPE_PTR);
	case LOP_LOAD:
		return expect(v, id, in->a, LTYPE_PTR) && expect_index(v, id, in->b);
	case LOP_GATHER:
		if (!is_value_type(t) || t == LTYPE_I1 || t == LTYPE_PTR)
			return fail(v, id, "gathers %s, expected i8, i32, i64, f32 or f64", lir_type_name(t));
		if (in->imm < 0 || in->imm > 2 * LIR_MAX_LANES || (in->imm & (in->imm - 1)))
			return fail(v, id, "gathers from a table of %lld elements, expected a power of 2 up to %d",
			            (long long)in->imm, 2 * LIR_MAX_LANES);
		if (in->sub > 1 || (in->sub && !in->imm))
			return fail(v, id, "gather of sub %u, expected 0, or 1 (the index's low bits) from a table", in->sub);
		return expect(v, id, in->a, LTYPE_PTR) && expect(v, id, in->b, LTYPE_I64) &&
		       expect(v, id, in->c, (t == LTYPE_I8 || !in->imm) && value_type(fn, in->c) == LTYPE_I8 ? LTYPE_I8 : LTYPE_I32);
	case LOP_SPLAT:
		return expect(v, id, in->a, t);
	case LOP_ZIP:
		if (in->sub > 3)
			return fail(v, id, "zip of half %u, expected 0 (low), 1 (high), 2 or 3 (theirs in halves)", in->sub);
		if (in->sub > 1 && lir_lanes(fn, id) < 4)
			return fail(v, id, "a zip in halves of %u lanes, expected 4 or more", lir_lanes(fn, id));
		return expect(v, id, in->a, t) && expect(v, id, in->b, t);
	case LOP_BITS:
		return expect_result(v, id, LTYPE_I32) && expect(v, id, in->a, LTYPE_I1);
	case LOP_INDEX:
		if (in->imm < 1 || in->imm > 64)
			return fail(v, id, "element of %lld bytes", (long long)in->imm);
		return expect_result(v, id, LTYPE_PTR) && expect(v, id, in->a, LTYPE_PTR) && expect_index(v, id, in->b);
	case LOP_STORE:
		return expect(v, id, in->a, LTYPE_PTR) && expect_index(v, id, in->b) && verify_write(v, id, ctx);
	case LOP_ATOMIC: {
		LType c = value_type(fn, in->c);
		if (in->sub >= LATOMIC_COUNT)
			return fail(v, id, "unknown atomic operation %u", in->sub);
		if (c == LTYPE_I1 || c == LTYPE_PTR)
			return fail(v, id, "operand %s is %s, expected i8, i32, i64, f32 or f64", NAME(v, in->c), lir_type_name(c));
		return expect(v, id, in->a, LTYPE_PTR) && expect_index(v, id, in->b) && verify_write(v, id, ctx);
	}
	case LOP_PREFETCH:
		if (!is_value_type(t))
			return fail(v, id, "element type %s, expected a value type", lir_type_name(t));
		return expect(v, id, in->a, LTYPE_PTR) && expect_index(v, id, in->b);
	case LOP_CTZ:
		if (t != LTYPE_I32 && t != LTYPE_I64)
			return fail(v, id, "result is %s, expected i32 or i64", lir_type_name(t));
		return expect(v, id, in->a, t);
	case LOP_ADD: case LOP_SUB: case LOP_MUL: case LOP_AND: case LOP_OR: case LOP_SHL: case LOP_ASHR: case LOP_MIN: case LOP_SDIV:
		if (!is_int(t))
			return fail(v, id, "result is %s, expected an integer type", lir_type_name(t));
		return expect(v, id, in->a, t) && expect(v, id, in->b, t);
	case LOP_ADDC:
		if (!is_int(t))
			return fail(v, id, "result is %s, expected an integer type", lir_type_name(t));
		return expect(v, id, in->a, t) && expect(v, id, in->b, t) && expect(v, id, in->c, LTYPE_I1);
	case LOP_FADD: case LOP_FSUB: case LOP_FMUL: case LOP_FDIV: case LOP_FMIN: case LOP_FMAX:
	case LOP_FNEG: case LOP_EXP: case LOP_LOG: case LOP_SQRT:
		if (!is_float(t))
			return fail(v, id, "result is %s, expected a float type", lir_type_name(t));
		return expect(v, id, in->a, t) && (lir_op_operands((LOp)in->op) < 2 || expect(v, id, in->b, t));
	case LOP_ICMP:
	case LOP_FCMP: {
		bool fl = in->op == LOP_FCMP;
		if (in->sub >= LCMP_COUNT || fl != (in->sub >= LCMP_OEQ))
			return fail(v, id, "bad predicate %u (%s)", in->sub, lir_cmp_name((LCmp)in->sub));
		return expect_result(v, id, LTYPE_I1) && expect_class(v, id, in->a, fl) &&
		       expect(v, id, in->b, value_type(fn, in->a));
	}
	case LOP_SELECT:
		return expect(v, id, in->a, LTYPE_I1) && expect(v, id, in->b, t) && expect(v, id, in->c, t);
	case LOP_CAST:
		return verify_cast(v, id, value_type(fn, in->a), t, in->sub);
	case LOP_VAR:
		v->par[id] = ctx.par;
		return expect(v, id, in->a, t);
	case LOP_GET:
		return verify_cell(v, id, ctx) && expect_result(v, id, lir_type(fn, in->a));
	case LOP_SET:
		return verify_cell(v, id, ctx) && expect(v, id, in->b, lir_type(fn, in->a));
	case LOP_LOCAL_ARRAY:
		v->par[id] = ctx.par;
		if (in->imm < 1)
			return fail(v, id, "%lld elements, expected at least 1", (long long)in->imm);
		if (in->sub >= LSPACE_COUNT)
			return fail(v, id, "bad memory space %u", in->sub);
		if (in->lanes & (in->lanes - 1))
			return fail(v, id, "aligned for vectors of %u elements, expected a power of two", in->lanes);
		return true;
	case LOP_PARALLEL_FOR:
		if (in->imm < 1)
			return fail(v, id, "grain %lld, expected at least 1", (long long)in->imm);
		/* fall through */
	case LOP_FOR: /* a FOR may count in i32 (lower/gpu_ints.c) */
		if (in->op == LOP_PARALLEL_FOR || t != LTYPE_I32)
			t = LTYPE_I64;
		return expect_result(v, id, t) && expect(v, id, in->a, t) && expect(v, id, in->b, t) && expect(v, id, in->c, t);
	case LOP_BREAK_IF:
		if (!ctx.in_loop)
			return fail(v, id, "not inside a loop (or a for/parallel_for lies between it and the loop)");
		return expect(v, id, in->a, LTYPE_I1);
	case LOP_IF:
		return expect(v, id, in->a, LTYPE_I1);
	case LOP_THREADS:
		return expect_result(v, id, LTYPE_I64);
	case LOP_CALL: {
		const LModule *m = v->m;
		bool entry = in->imm >= 0 && ((uint64_t)in->imm == m->predict || (uint64_t)in->imm == m->predict_f64);
		if (!entry || m->funcs[in->imm] == fn)
			return fail(v, id, "calls function %lld, expected an entry other than this function", (long long)in->imm);
		if (ctx.nested)
			return fail(v, id, "inside a region (a call passes on its function's own out and flags, so it stays at the top)");
		return expect(v, id, in->a, LTYPE_PTR) && expect(v, id, in->b, LTYPE_I64) && expect(v, id, in->c, LTYPE_PTR);
	}
	case LOP_GPU_INDEX:
		if (in->sub >= LGPU_COUNT)
			return fail(v, id, "unknown GPU index %u", in->sub);
		return expect_result(v, id, LTYPE_I64);
	case LOP_SHUFFLE:
		if (t != LTYPE_I32 && t != LTYPE_I64 && !is_float(t))
			return fail(v, id, "result is %s, expected i32, i64, f32 or f64", lir_type_name(t));
		return expect(v, id, in->a, t) && expect(v, id, in->b, LTYPE_I32);
	case LOP_BARRIER:
	case LOP_LOOP:
	case LOP_COUNT:
		break;
	}
	return true;
}

/* Opcode, type, operand presence and visibility, nested regions of instruction id. */
static bool verify_inst(Verifier *v, uint32_t id, Context ctx)
{
	const LInst *in = &v->fn->insts[id];
	const uint32_t ops[3] = {in->a, in->b, in->c};
	bool structured = lir_op_nests((LOp)in->op);

	if (in->op >= LOP_COUNT)
		return fail(v, id, "unknown opcode %u", in->op);
	if (lir_op_has_result((LOp)in->op) && !is_value_type((LType)in->type))
		return fail(v, id, "result type is %s, expected a value type", lir_type_name((LType)in->type));
	if (!lir_op_has_result((LOp)in->op) && in->op != LOP_STORE && in->op != LOP_PREFETCH && in->type != LTYPE_VOID)
		return fail(v, id, "has no result but type %s", lir_type_name((LType)in->type));
	for (uint32_t k = 0; k < 3; k++) {
		if (k >= lir_op_operands((LOp)in->op) && ops[k] != LIR_NONE)
			return fail(v, id, "unused operand %c is %s, expected none", 'a' + k, NAME(v, ops[k]));
		if (k < lir_op_operands((LOp)in->op) && ops[k] == LIR_NONE)
			return fail(v, id, "operand %c is missing", 'a' + k);
		if (k < lir_op_operands((LOp)in->op) && !check_operand(v, id, ops[k]))
			return false;
	}
	if ((!structured && in->body != LIR_NONE) || (in->op != LOP_IF && in->alt != LIR_NONE))
		return fail(v, id, "has a nested region it cannot have");
	return verify_lanes(v, id) && verify_types(v, id, ctx) && verify_gpu(v, id, ctx);
}

static bool verify_region(Verifier *v, uint32_t first, Context ctx);

/* The nested regions of structured instruction id, with the contexts they run in. */
static bool verify_nested(Verifier *v, uint32_t id, Context ctx)
{
	const LInst *in = &v->fn->insts[id];
	Context inner = ctx;
	bool ok;
	inner.nested = true;
	switch ((LOp)in->op) {
	case LOP_FOR:
	case LOP_PARALLEL_FOR:
		inner.in_loop = false;
		inner.par += in->op == LOP_PARALLEL_FOR;
		inner.divergent |= v->varying[id];
		v->mark[id] |= VISIBLE; /* the induction variable, inside the body only */
		ok = verify_region(v, in->body, inner);
		v->mark[id] &= (uint8_t)~VISIBLE;
		return ok;
	case LOP_LOOP:
		inner.in_loop = true;
		inner.divergent = true;
		return verify_region(v, in->body, inner);
	case LOP_IF:
		inner.divergent |= v->varying[in->a];
		return verify_region(v, in->body, inner) && verify_region(v, in->alt, inner);
	default:
		if (lir_op_has_result((LOp)in->op))
			v->mark[id] |= VISIBLE;
		return true;
	}
}

/* The instructions of the region starting at first; their values are visible until it ends. */
static bool verify_region(Verifier *v, uint32_t first, Context ctx)
{
	const LFunc *fn = v->fn;
	for (uint32_t id = first; id != LIR_NONE; id = fn->insts[id].next) {
		if (id >= fn->num_insts)
			return error_set(v->e, "lir: %s: a region reaches %%%u, out of range (%u instructions)", fn->name, id,
			                 fn->num_insts);
		if (v->mark[id] & SEEN)
			return error_set(v->e, "lir: %s: %%%u (%s) is reached twice (a cycle or a shared region)", fn->name, id,
			                 lir_op_name((LOp)fn->insts[id].op));
		v->mark[id] |= SEEN;
		if (!verify_inst(v, id, ctx) || !verify_nested(v, id, ctx))
			return false;
	}
	for (uint32_t id = first; id != LIR_NONE; id = fn->insts[id].next)
		v->mark[id] &= (uint8_t)~VISIBLE;
	return true;
}

/* One function: its parameters and body. */
static bool verify_func(Verifier *v, const LFunc *fn)
{
	bool ok = true;
	Context top = {0};
	if (fn->num_params > COUNT_OF(fn->params))
		return error_set(v->e, "lir: %s: %u parameters, at most %zu", fn->name, fn->num_params, COUNT_OF(fn->params));
	for (uint32_t i = 0; i < fn->num_params; i++)
		if (!is_value_type(fn->params[i]))
			return error_set(v->e, "lir: %s: parameter %u has type %s", fn->name, i, lir_type_name(fn->params[i]));
	v->fn = fn;
	v->mark = xcalloc(fn->num_insts ? fn->num_insts : 1, sizeof *v->mark);
	v->par = xcalloc(fn->num_insts ? fn->num_insts : 1, sizeof *v->par);
	v->varying = xcalloc(fn->num_insts ? fn->num_insts : 1, sizeof *v->varying);
	ok = verify_region(v, fn->body, top);
	free(v->mark);
	free(v->par);
	free(v->varying);
	v->mark = NULL;
	v->par = NULL;
	v->varying = NULL;
	return ok;
}

/* An entry function (a kernel) must have the n parameters want (lir_predict_params, lir_kernel_params), as the ABI calls it. */
static bool verify_signature(const LFunc *fn, const LType *want_params, uint32_t n, Error *e)
{
	bool same = fn->num_params == n;
	for (uint32_t i = 0; same && i < n; i++)
		same = fn->params[i] == want_params[i];
	if (!same) {
		char have[128] = "", want[128] = "";
		for (uint32_t i = 0; i < fn->num_params && i < COUNT_OF(fn->params); i++)
			snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", i ? ", " : "", lir_type_name(fn->params[i]));
		for (uint32_t i = 0; i < n; i++)
			snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? ", " : "", lir_type_name(want_params[i]));
		return error_set(e, "lir: %s: the %s takes (%s), expected (%s)", fn->name,
		                 fn->kind == LFUNC_KERNEL ? "kernel" : "entry function", have, want);
	}
	return true;
}

/* A launch extent: a positive count, or a positive rows_per. */
static bool verify_dim(const LFunc *fn, const LDim *d, const char *what, int axis, Error *e)
{
	if (d->rows_per < 0 || (d->rows_per == 0 && d->count < 1))
		return error_set(e, "lir: kernel %s: %s.%c is %lld (rows_per %lld), expected a positive extent", fn->name, what,
		                 'x' + axis, (long long)d->count, (long long)d->rows_per);
	return true;
}

/* A GPU module: kernels only, each with the kernel parameters and a launch, the predict sequence not empty. */
static bool verify_kernels(const LModule *m, Error *e)
{
	bool any = false;
	if (m->predict != LIR_NONE || m->predict_f64 != LIR_NONE)
		return error_set(e, "lir: a GPU module has no host entry functions");
	for (uint32_t i = 0; i < m->num_funcs; i++) {
		const LFunc *fn = m->funcs[i];
		if (fn->kind != LFUNC_KERNEL)
			return error_set(e, "lir: %s: a GPU module holds kernels only", fn->name);
		if (fn->entry > 1)
			return error_set(e, "lir: kernel %s: entry %u, expected 0 or 1", fn->name, fn->entry);
		any |= fn->entry == 0;
		if (!verify_signature(fn, lir_kernel_params, LIR_KERNEL_PARAMS, e))
			return false;
		for (int k = 0; k < 3; k++)
			if (!verify_dim(fn, &fn->launch.grid[k], "grid", k, e) || !verify_dim(fn, &fn->launch.block[k], "block", k, e))
				return false;
		for (int k = 0; k < 3; k++)
			if (fn->launch.block[k].rows_per)
				return error_set(e, "lir: kernel %s: block.%c depends on the rows; blocks have a fixed size", fn->name, 'x' + k);
	}
	if (!any)
		return error_set(e, "lir: a GPU module without a kernel for predict");
	return true;
}

bool lir_verify(const LModule *m, Error *e)
{
	Verifier v = {.m = m, .e = e};
	if (m->gpu) {
		if (!verify_kernels(m, e))
			return false;
	} else if (m->predict >= m->num_funcs)
		return error_set(e, "lir: predict function %u out of range (%u functions)", m->predict, m->num_funcs);
	if (!m->gpu && !verify_signature(m->funcs[m->predict], lir_predict_params, LIR_PREDICT_PARAMS, e))
		return false;
	if (!m->gpu && m->predict_f64 != LIR_NONE) {
		if (m->predict_f64 >= m->num_funcs || m->predict_f64 == m->predict)
			return error_set(e, "lir: predict_f64 function %u out of range or the same as predict", m->predict_f64);
		if (!verify_signature(m->funcs[m->predict_f64], lir_predict_params, LIR_PREDICT_PARAMS, e))
			return false;
	}
	for (uint32_t i = 0; i < m->num_funcs; i++)
		if (!m->gpu && m->funcs[i]->kind != LFUNC_HOST)
			return error_set(e, "lir: %s: a host module cannot hold a kernel", m->funcs[i]->name);
	for (uint32_t i = 0; i < m->num_buffers; i++) {
		const LBuffer *b = &m->buffers[i];
		if (!is_value_type(b->elem))
			return error_set(e, "lir: buffer %u (%s): element type %s", i, b->name, lir_type_name(b->elem));
		if (b->count && !b->data)
			return error_set(e, "lir: buffer %u (%s): %llu elements but no data", i, b->name, (unsigned long long)b->count);
	}
	for (uint32_t i = 0; i < m->num_funcs; i++)
		if (!verify_func(&v, m->funcs[i]))
			return false;
	return true;
}
