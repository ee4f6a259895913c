/*
 * MIR -> LIR: the transform of a row (MOP_TRANSFORM): its finished margins (aggregate
 * and base score) written out as the row's predictions, as its raw margins, or as its
 * class, as the call's flags ask (HTransform, HBinary, HLabels). Scalar code, once per
 * row; shared by the host and GPU lowerings.
 */
#include "lower/lowering.h"

#include <math.h>

/* Store value (acc_type) as float into out[index]. */
static void store_output(Lowering *l, uint32_t index, uint32_t value)
{
	if (lir_type(l->b.fn, value) != LTYPE_F32)
		value = lir_cast(&l->b, LCAST_FPTRUNC, LTYPE_F32, value);
	lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->out, index, value);
}

/* The index of margin c of the current row in l->acc. */
static uint32_t acc_index(Lowering *l, uint32_t c)
{
	if (l->acc_stride != LIR_NONE)
		c = emit2(l, LOP_MUL, LTYPE_I64, c, l->acc_stride);
	return emit2(l, LOP_ADD, LTYPE_I64, l->acc_offset, c);
}

/* An instruction of `lanes` lanes (1: a scalar). */
static uint32_t lanes_op(Lowering *l, LOp op, LType type, unsigned lanes, uint32_t x, uint32_t y)
{
	return lir_emit_vector(&l->b, op, type, (uint8_t)(lanes > 1 ? lanes : 0), x, y, LIR_NONE);
}

/* A float constant of `lanes` lanes. */
static uint32_t lanes_const(Lowering *l, LType t, unsigned lanes, double v)
{
	uint32_t c = lanes_op(l, LOP_CONST, t, lanes, LIR_NONE, LIR_NONE);
	l->b.fn->insts[c].fimm = t == LTYPE_F32 ? (double)(float)v : v;
	return c;
}

/*
 * Margin c (in a loop being built) of the row being transformed, finished: an average
 * divided by its count, a min or max that no leaf reached set to 0, and then the base
 * score added to those aggregates that add it last; with lanes, margins c to c + lanes - 1.
 */
static uint32_t load_acc_lanes(Lowering *l, uint32_t c, unsigned lanes)
{
	const HForest *f = l->f;
	LType t = l->acc_type;
	uint32_t m = lanes_op(l, LOP_LOAD, t, lanes, l->acc, acc_index(l, c)), untouched, base;
	switch (f->aggregate) {
	case HAGGREGATE_SUM:
		return m;
	case HAGGREGATE_AVERAGE:
		m = lanes_op(l, LOP_FDIV, t, lanes, m, lanes_const(l, t, lanes, (double)f->average_count));
		break;
	case HAGGREGATE_MIN:
	case HAGGREGATE_MAX:
		untouched = lanes_op(l, LOP_FCMP, LTYPE_I1, lanes, m, lanes_const(l, t, lanes, aggregate_identity(f)));
		l->b.fn->insts[untouched].sub = LCMP_OEQ;
		m = lir_emit_vector(&l->b, LOP_SELECT, t, (uint8_t)(lanes > 1 ? lanes : 0), untouched, lanes_const(l, t, lanes, 0.0), m);
		break;
	case HAGGREGATE_COUNT:
		die("unknown aggregate");
	}
	base = lanes_op(l, LOP_LOAD, t, lanes, l->base_scores, c);
	return lanes_op(l, LOP_FADD, t, lanes, m, base);
}

static uint32_t load_acc(Lowering *l, uint32_t c) { return load_acc_lanes(l, c, 1); }

/* for c in [from, outputs): body. Returns the loop value; caller ends it. */
static uint32_t begin_outputs(Lowering *l, int64_t from)
{
	uint32_t begin = const_i64(l, from), end = const_i64(l, l->f->num_outputs), step = const_i64(l, 1);
	return lir_begin(&l->b, LOP_FOR, begin, end, step);
}

/*
 * The probit of p as onnxruntime computes it: sqrt(2) * erfinv(2p - 1), erfinv by
 * Winitzki's approximation (a = 0.147) with its float constants.
 */
static uint32_t lower_probit(Lowering *l, uint32_t p)
{
	LType t = l->acc_type;
	const float c1 = 2.0f / (3.14159f * 0.147f), c2 = 1.0f / 0.147f, sqrt2 = 1.41421356f;
	/* One instruction per statement: the LIR's numbering must not depend on the C compiler's argument order. */
	uint32_t one = lir_const_float(&l->b, t, 1.0), x, negative, sign, below, above, y, lg, v, v2, root, e;
	x = emit2(l, LOP_FMUL, t, lir_const_float(&l->b, t, 2.0), p);
	x = emit2(l, LOP_FSUB, t, x, one);
	negative = lir_cmp(&l->b, LOP_FCMP, LCMP_OLT, x, lir_const_float(&l->b, t, 0.0));
	sign = lir_emit(&l->b, LOP_SELECT, t, negative, lir_const_float(&l->b, t, -1.0), one);
	below = emit2(l, LOP_FSUB, t, one, x);
	above = emit2(l, LOP_FADD, t, one, x);
	y = emit2(l, LOP_FMUL, t, below, above);
	lg = lir_emit(&l->b, LOP_LOG, t, y, LIR_NONE, LIR_NONE);
	v = emit2(l, LOP_FMUL, t, lir_const_float(&l->b, t, 0.5), lg);
	v = emit2(l, LOP_FADD, t, lir_const_float(&l->b, t, c1), v);
	v2 = emit2(l, LOP_FMUL, t, lir_const_float(&l->b, t, c2), lg);
	root = emit2(l, LOP_FMUL, t, v, v);
	root = lir_emit(&l->b, LOP_SQRT, t, emit2(l, LOP_FSUB, t, root, v2), LIR_NONE, LIR_NONE);
	e = lir_emit(&l->b, LOP_SQRT, t, emit2(l, LOP_FSUB, t, root, v), LIR_NONE, LIR_NONE);
	e = emit2(l, LOP_FMUL, t, sign, e);
	return emit2(l, LOP_FMUL, t, lir_const_float(&l->b, t, sqrt2), e);
}

/* e^x, x of `lanes` lanes. */
static uint32_t exp_of(Lowering *l, LType t, unsigned lanes, uint32_t x)
{
	return lanes_op(l, LOP_EXP, t, lanes, x, LIR_NONE);
}

/* Emit t of margin m, for the transforms of each margin alone: identity, sigmoid, exp, signed square, probit, isolation, step,
 * softplus. */
static uint32_t elementwise(Lowering *l, uint32_t m, HTransform t)
{
	if (t == HTRANSFORM_SIGMOID) {
		uint32_t one = lir_const_float(&l->b, l->acc_type, 1.0), e;
		if (l->f->sigmoid_alpha != 1.0)
			m = emit2(l, LOP_FMUL, l->acc_type, lir_const_float(&l->b, l->acc_type, l->f->sigmoid_alpha), m);
		e = exp_of(l, l->acc_type, 1, lir_emit(&l->b, LOP_FNEG, l->acc_type, m, LIR_NONE, LIR_NONE));
		m = emit2(l, LOP_FDIV, l->acc_type, one, emit2(l, LOP_FADD, l->acc_type, one, e));
	} else if (t == HTRANSFORM_EXP) {
		m = exp_of(l, l->acc_type, 1, m);
	} else if (t == HTRANSFORM_SIGNED_SQUARE) { /* m * |m| */
		uint32_t negative = lir_cmp(&l->b, LOP_FCMP, LCMP_OLT, m, lir_const_float(&l->b, l->acc_type, 0.0));
		uint32_t magnitude = lir_emit(&l->b, LOP_SELECT, l->acc_type, negative, lir_emit(&l->b, LOP_FNEG, l->acc_type, m, LIR_NONE, LIR_NONE), m);
		m = emit2(l, LOP_FMUL, l->acc_type, m, magnitude);
	} else if (t == HTRANSFORM_PROBIT) {
		m = lower_probit(l, m);
	} else if (t == HTRANSFORM_STEP) {
		uint32_t positive = lir_cmp(&l->b, LOP_FCMP, LCMP_OGT, m, lir_const_float(&l->b, l->acc_type, 0.0));
		m = lir_emit(&l->b, LOP_SELECT, l->acc_type, positive, lir_const_float(&l->b, l->acc_type, 1.0), lir_const_float(&l->b, l->acc_type, 0.0));
	} else if (t == HTRANSFORM_SOFTPLUS) {
		/*
		 * log1p(u), u = e^m, as log(1 + u) u / ((1 + u) - 1), exact where 1 + u rounds: u where
		 * 1 + u is 1, log(u) where it is u (infinity where u is, as LightGBM's log1p(exp(m)) is)
		 */
		uint32_t u = exp_of(l, l->acc_type, 1, m), one = lir_const_float(&l->b, l->acc_type, 1.0), w, d, lg, tiny, huge;
		w = emit2(l, LOP_FADD, l->acc_type, one, u);
		d = emit2(l, LOP_FSUB, l->acc_type, w, one);
		tiny = lir_cmp(&l->b, LOP_FCMP, LCMP_OEQ, d, lir_const_float(&l->b, l->acc_type, 0.0));
		huge = lir_cmp(&l->b, LOP_FCMP, LCMP_OEQ, w, u);
		lg = lir_emit(&l->b, LOP_LOG, l->acc_type, w, LIR_NONE, LIR_NONE);
		m = emit2(l, LOP_FMUL, l->acc_type, lg, emit2(l, LOP_FDIV, l->acc_type, u, d));
		m = lir_emit(&l->b, LOP_SELECT, l->acc_type, huge, lg, m);
		m = lir_emit(&l->b, LOP_SELECT, l->acc_type, tiny, u, m);
	} else if (t == HTRANSFORM_ISOLATION) { /* -2^-m = -e^(-m ln 2) */
		uint32_t x = emit2(l, LOP_FMUL, l->acc_type, lir_const_float(&l->b, l->acc_type, -0.69314718055994530942), m);
		m = lir_emit(&l->b, LOP_FNEG, l->acc_type, exp_of(l, l->acc_type, 1, x), LIR_NONE, LIR_NONE);
	}
	return m;
}

/* Emit: for each margin c, out[out_start + c] = t(acc[c]) (t a transform of each margin alone). */
static void lower_elementwise(Lowering *l, uint32_t out_start, HTransform t)
{
	uint32_t c = begin_outputs(l, 0), m = elementwise(l, load_acc(l, c), t);
	store_output(l, emit2(l, LOP_ADD, LTYPE_I64, out_start, c), m);
	lir_end(&l->b);
}

/* Emit the largest margin (and with index_of, its first index) into fresh cells. */
static void lower_max(Lowering *l, uint32_t *max_cell, uint32_t *index_cell)
{
	uint32_t c, m, greater;
	*max_cell = lir_emit(&l->b, LOP_VAR, l->acc_type, load_acc(l, const_i64(l, 0)), LIR_NONE, LIR_NONE);
	*index_cell = lir_emit(&l->b, LOP_VAR, LTYPE_I64, const_i64(l, 0), LIR_NONE, LIR_NONE);
	c = begin_outputs(l, 1);
	m = load_acc(l, c);
	greater = lir_cmp(&l->b, LOP_FCMP, LCMP_OGT, m, lir_emit(&l->b, LOP_GET, l->acc_type, *max_cell, LIR_NONE, LIR_NONE));
	emit2(l, LOP_SET, LTYPE_VOID, *max_cell, lir_emit(&l->b, LOP_SELECT, l->acc_type, greater, m, lir_emit(&l->b, LOP_GET, l->acc_type, *max_cell, LIR_NONE, LIR_NONE)));
	emit2(l, LOP_SET, LTYPE_VOID, *index_cell, lir_emit(&l->b, LOP_SELECT, LTYPE_I64, greater, c, lir_emit(&l->b, LOP_GET, LTYPE_I64, *index_cell, LIR_NONE, LIR_NONE)));
	lir_end(&l->b);
}

/*
 * Lanes of the host's softmax: its margins go a vector at a time (the last few one at a
 * time), the target's exp in arithmetic widening with them (llvm_exp), 16 where the CPU
 * has 512-bit vectors (MTOPS_WIDE), else 8 (measured: docs/performance-notes.md, A row's
 * softmax). A 1000-class model's softmax took two thirds of its prediction as scalar
 * calls of libm's expf.
 */
#define SOFTMAX_LANES 8
#define SOFTMAX_WIDE_LANES 16

/* The softmax's lanes for `outputs` margins a row: a vector's where at least two vectors' worth, else 1 (one at a time). */
static unsigned softmax_lanes(const Lowering *l, int64_t outputs)
{
	if (l->gpu.on || outputs < 2 * SOFTMAX_LANES)
		return 1;
	return l->m->vector_tops == MTOPS_WIDE && outputs >= 2 * SOFTMAX_WIDE_LANES ? SOFTMAX_WIDE_LANES : SOFTMAX_LANES;
}

/* for c in [from, to) step step: body. Returns the loop value; caller ends it. */
static uint32_t begin_range(Lowering *l, int64_t from, int64_t to, int64_t step)
{
	uint32_t begin = const_i64(l, from), end = const_i64(l, to), by = const_i64(l, step);
	return lir_begin(&l->b, LOP_FOR, begin, end, by);
}

/* e^(margins c.. - max) of the row, `lanes` of them (max a scalar). */
static uint32_t exp_less_max(Lowering *l, uint32_t c, unsigned lanes, uint32_t max)
{
	LType t = l->acc_type;
	uint32_t m = load_acc_lanes(l, c, lanes), by = lanes > 1 ? lanes_op(l, LOP_SPLAT, t, lanes, max, LIR_NONE) : max;
	return exp_of(l, t, lanes, lanes_op(l, LOP_FSUB, t, lanes, m, by));
}

/* A conversion of x (of `lanes` lanes) to type. */
static uint32_t lanes_cast(Lowering *l, LCast kind, LType type, unsigned lanes, uint32_t x)
{
	uint32_t c = lanes_op(l, LOP_CAST, type, lanes, x, LIR_NONE);
	l->b.fn->insts[c].sub = (uint8_t)kind;
	return c;
}

/* A private array of one vector of `lanes` elements of type t, aligned for it: a vector's accumulator. */
static uint32_t lanes_array(Lowering *l, LType t, unsigned lanes)
{
	uint32_t array = lir_local_array(&l->b, t, lanes, LSPACE_PRIVATE);
	l->b.fn->insts[array].lanes = (uint8_t)lanes;
	return array;
}

/* The lanes of the vector in array (of type t) folded in order by op (FMAX or FADD). */
static uint32_t fold_lanes(Lowering *l, uint32_t array, LType t, unsigned lanes, LOp op)
{
	uint32_t x = emit2(l, LOP_LOAD, t, array, const_i64(l, 0));
	for (unsigned k = 1; k < lanes; k++) {
		uint32_t lane = emit2(l, LOP_LOAD, t, array, const_i64(l, k));
		x = emit2(l, op, t, x, lane);
	}
	return x;
}

/*
 * Softmax as XGBoost computes it: subtract the max, exponentiate, divide by the sum
 * (summed in double: here lane by lane, then the lanes, which moves the float sum by
 * less than its rounding).
 */
static void lower_softmax(Lowering *l, uint32_t out_start)
{
	LType t = l->acc_type;
	int64_t outputs = l->f->num_outputs;
	unsigned lanes = lower_stride_one(l, l->acc_stride) ? softmax_lanes(l, outputs) : 1; /* consecutive margins */
	int64_t whole = lanes > 1 ? outputs / lanes * lanes : 0; /* [0, whole) a vector at a time, the rest one at a time */
	bool kept = lanes > 1 && t == LTYPE_F32; /* the vectors' exponentials kept in the predictions' place, not computed twice */
	uint32_t max, sum, c, e, total, index, folded = LIR_NONE;

	if (lanes > 1) { /* the largest margin: lane by lane, then the lanes, then the rest */
		uint32_t maxes = lanes_array(l, t, lanes), zero = const_i64(l, 0), first;
		first = load_acc_lanes(l, zero, lanes);
		lir_emit(&l->b, LOP_STORE, LTYPE_VOID, maxes, zero, first);
		c = begin_range(l, lanes, whole, lanes);
		e = load_acc_lanes(l, c, lanes);
		e = lanes_op(l, LOP_FMAX, t, lanes, lanes_op(l, LOP_LOAD, t, lanes, maxes, zero), e);
		lir_emit(&l->b, LOP_STORE, LTYPE_VOID, maxes, zero, e);
		lir_end(&l->b);
		folded = fold_lanes(l, maxes, t, lanes, LOP_FMAX);
	}
	max = lir_emit(&l->b, LOP_VAR, t, folded != LIR_NONE ? folded : load_acc(l, const_i64(l, 0)), LIR_NONE, LIR_NONE);
	c = begin_range(l, whole ? whole : 1, outputs, 1);
	e = load_acc(l, c);
	emit2(l, LOP_SET, LTYPE_VOID, max, emit2(l, LOP_FMAX, t, lir_emit(&l->b, LOP_GET, t, max, LIR_NONE, LIR_NONE), e));
	lir_end(&l->b);
	max = lir_emit(&l->b, LOP_GET, t, max, LIR_NONE, LIR_NONE);

	sum = lir_emit(&l->b, LOP_VAR, LTYPE_F64, lir_const_float(&l->b, LTYPE_F64, 0.0), LIR_NONE, LIR_NONE);
	if (lanes > 1) {
		uint32_t sums = lanes_array(l, LTYPE_F64, lanes), zero = const_i64(l, 0);
		lir_emit(&l->b, LOP_STORE, LTYPE_VOID, sums, zero, lanes_const(l, LTYPE_F64, lanes, 0.0));
		c = begin_range(l, 0, whole, lanes);
		e = exp_less_max(l, c, lanes, max);
		if (kept) /* (the predictions' place holds them until the sum divides them) */
			lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->out, emit2(l, LOP_ADD, LTYPE_I64, out_start, c), e);
		if (t != LTYPE_F64)
			e = lanes_cast(l, LCAST_FPEXT, LTYPE_F64, lanes, e);
		e = lanes_op(l, LOP_FADD, LTYPE_F64, lanes, lanes_op(l, LOP_LOAD, LTYPE_F64, lanes, sums, zero), e);
		lir_emit(&l->b, LOP_STORE, LTYPE_VOID, sums, zero, e);
		lir_end(&l->b);
		emit2(l, LOP_SET, LTYPE_VOID, sum, fold_lanes(l, sums, LTYPE_F64, lanes, LOP_FADD));
	}
	c = begin_range(l, whole, outputs, 1);
	e = exp_less_max(l, c, 1, max);
	if (t != LTYPE_F64)
		e = lir_cast(&l->b, LCAST_FPEXT, LTYPE_F64, e);
	emit2(l, LOP_SET, LTYPE_VOID, sum, emit2(l, LOP_FADD, LTYPE_F64, lir_emit(&l->b, LOP_GET, LTYPE_F64, sum, LIR_NONE, LIR_NONE), e));
	lir_end(&l->b);
	total = lir_emit(&l->b, LOP_GET, LTYPE_F64, sum, LIR_NONE, LIR_NONE);
	if (t != LTYPE_F64)
		total = lir_cast(&l->b, LCAST_FPTRUNC, t, total);
	/*
	 * The vectors' exponentials wait in the predictions' place (kept); the rest's are
	 * computed again rather than stored back into the margins: storing and reloading
	 * them through a 64-row tile's scratch array came out wrong after LLVM 16's loop
	 * vectorizer (column 0 kept its margin; found by tests/schedules/xgboost.sched on
	 * multi_softprob3, bisected to LoopVectorizePass; whether our IR or LLVM is at fault
	 * is not settled). tests/unit/combine.c checks both under tiles of 64 rows.
	 */
	for (int part = lanes > 1 ? 0 : 1; part < 2; part++) { /* vectors, then the rest */
		unsigned n = part ? 1 : lanes;
		uint32_t by;
		c = part ? begin_range(l, whole, outputs, 1) : begin_range(l, 0, whole, lanes);
		index = emit2(l, LOP_ADD, LTYPE_I64, out_start, c);
		e = kept && !part ? lanes_op(l, LOP_LOAD, t, n, l->out, index) : exp_less_max(l, c, n, max);
		by = n > 1 ? lanes_op(l, LOP_SPLAT, t, n, total, LIR_NONE) : total;
		e = lanes_op(l, LOP_FDIV, t, n, e, by);
		if (t != LTYPE_F32)
			e = lanes_cast(l, LCAST_FPTRUNC, LTYPE_F32, n, e);
		lir_emit(&l->b, LOP_STORE, LTYPE_VOID, l->out, index, e);
		lir_end(&l->b);
	}
}

/*
 * Softmax over the margins that are not (nearly) zero, as onnxruntime computes it:
 * margins within 1e-7 of zero are not exponentiated but scaled by exp(-max), the sum
 * is of the others' exponentials only, and everything is divided by that sum.
 */
static void lower_softmax_zero(Lowering *l, uint32_t out_start)
{
	LType t = l->acc_type;
	uint32_t max_cell, index_cell, max, scale, sum, c, m, e, nonzero, total;
	lower_max(l, &max_cell, &index_cell);
	max = lir_emit(&l->b, LOP_GET, t, max_cell, LIR_NONE, LIR_NONE);
	scale = exp_of(l, t, 1, lir_emit(&l->b, LOP_FNEG, t, max, LIR_NONE, LIR_NONE));
	sum = lir_emit(&l->b, LOP_VAR, t, lir_const_float(&l->b, t, 0.0), LIR_NONE, LIR_NONE);
	for (int pass = 0; pass < 2; pass++) { /* the sum, then the outputs */
		uint32_t above, below;
		c = begin_outputs(l, 0);
		m = load_acc(l, c);
		above = lir_cmp(&l->b, LOP_FCMP, LCMP_OGT, m, lir_const_float(&l->b, t, (double)0.0000001f));
		below = lir_cmp(&l->b, LOP_FCMP, LCMP_OLT, m, lir_const_float(&l->b, t, -(double)0.0000001f));
		nonzero = lir_emit(&l->b, LOP_OR, LTYPE_I1, above, below, LIR_NONE);
		e = exp_of(l, t, 1, emit2(l, LOP_FSUB, t, m, max));
		if (pass == 0) {
			uint32_t add = lir_emit(&l->b, LOP_SELECT, t, nonzero, e, lir_const_float(&l->b, t, 0.0));
			emit2(l, LOP_SET, LTYPE_VOID, sum, emit2(l, LOP_FADD, t, lir_emit(&l->b, LOP_GET, t, sum, LIR_NONE, LIR_NONE), add));
		} else {
			uint32_t at = emit2(l, LOP_ADD, LTYPE_I64, out_start, c);
			e = lir_emit(&l->b, LOP_SELECT, t, nonzero, e, emit2(l, LOP_FMUL, t, m, scale));
			store_output(l, at, emit2(l, LOP_FDIV, t, e, total));
		}
		lir_end(&l->b);
		total = lir_emit(&l->b, LOP_GET, t, sum, LIR_NONE, LIR_NONE);
	}
}

/* A binary expansion: predictions [q, p] of the one margin m, p its transform tr (see HBinary). */
static void lower_binary(Lowering *l, uint32_t row, HTransform tr)
{
	LType t = l->acc_type;
	uint32_t start = emit2(l, LOP_MUL, LTYPE_I64, row, const_i64(l, 2)), c = begin_outputs(l, 0), m = load_acc(l, c), p, q;
	p = elementwise(l, m, tr);
	if (l->f->binary == HBINARY_NEGATE)
		q = lir_emit(&l->b, LOP_FNEG, t, p, LIR_NONE, LIR_NONE);
	else if (l->f->binary == HBINARY_MIRROR || tr == HTRANSFORM_SIGMOID)
		q = elementwise(l, lir_emit(&l->b, LOP_FNEG, t, m, LIR_NONE, LIR_NONE), tr);
	else
		q = emit2(l, LOP_FSUB, t, lir_const_float(&l->b, t, 1.0), p);
	store_output(l, start, q);
	store_output(l, emit2(l, LOP_ADD, LTYPE_I64, start, const_i64(l, 1)), p);
	lir_end(&l->b);
}

/* Write the row's predictions (or, when margin is set, its raw margins). */
static void lower_predictions(Lowering *l, uint32_t row)
{
	HTransform t = l->f->transform;
	uint32_t margins_start = emit2(l, LOP_MUL, LTYPE_I64, row, const_i64(l, l->f->num_outputs));
	uint32_t branch;

	if (l->f->binary != HBINARY_NONE) {
		branch = lir_begin(&l->b, LOP_IF, l->margin, LIR_NONE, LIR_NONE);
		if (l->f->binary == HBINARY_MIRROR) /* the margins [-m, m] */
			lower_binary(l, row, HTRANSFORM_IDENTITY);
		else
			lower_elementwise(l, margins_start, HTRANSFORM_IDENTITY);
		lir_else(&l->b, branch);
		lower_binary(l, row, t);
		lir_end(&l->b);
		return;
	}
	if (t == HTRANSFORM_IDENTITY) {
		lower_elementwise(l, margins_start, t);
		return;
	}
	branch = lir_begin(&l->b, LOP_IF, l->margin, LIR_NONE, LIR_NONE);
	lower_elementwise(l, margins_start, HTRANSFORM_IDENTITY);
	lir_else(&l->b, branch);
	switch (t) {
	case HTRANSFORM_SIGMOID:
	case HTRANSFORM_EXP:
	case HTRANSFORM_SIGNED_SQUARE:
	case HTRANSFORM_PROBIT:
	case HTRANSFORM_ISOLATION:
	case HTRANSFORM_STEP:
	case HTRANSFORM_SOFTPLUS:
		lower_elementwise(l, margins_start, t);
		break;
	case HTRANSFORM_SOFTMAX_ZERO:
		lower_softmax_zero(l, margins_start);
		break;
	case HTRANSFORM_SOFTMAX:
		lower_softmax(l, margins_start);
		break;
	case HTRANSFORM_ARGMAX: {
		uint32_t max_cell, index_cell, index;
		lower_max(l, &max_cell, &index_cell);
		index = lir_emit(&l->b, LOP_GET, LTYPE_I64, index_cell, LIR_NONE, LIR_NONE);
		store_output(l, row, lir_cast(&l->b, LCAST_SITOFP, LTYPE_F32, index));
		break;
	}
	case HTRANSFORM_IDENTITY:
	case HTRANSFORM_COUNT:
		die("transform %s reached the lowering", hir_transform_name(t));
	}
	lir_end(&l->b);
}

/* Write the row's class: the first largest margin, or whether the labels' margin passes their threshold (see HLabels). */
static void lower_label(Lowering *l, uint32_t row)
{
	const HLabels *labels = &l->f->labels;
	uint32_t index;
	if (labels->margin < 0) {
		uint32_t max_cell, index_cell;
		lower_max(l, &max_cell, &index_cell);
		index = lir_emit(&l->b, LOP_GET, LTYPE_I64, index_cell, LIR_NONE, LIR_NONE);
	} else {
		bool mirrored = l->f->binary == HBINARY_MIRROR; /* margin 0 is -m, margin 1 m, m the one kept */
		uint32_t m = load_acc(l, const_i64(l, mirrored ? 0 : labels->margin)), above, one;
		if (mirrored && labels->margin == 0)
			m = lir_emit(&l->b, LOP_FNEG, l->acc_type, m, LIR_NONE, LIR_NONE);
		above = lir_cmp(&l->b, LOP_FCMP, LCMP_OGT, m, lir_const_float(&l->b, l->acc_type, labels->threshold));
		one = const_i64(l, 1);
		index = lir_emit(&l->b, LOP_SELECT, LTYPE_I64, above, one, const_i64(l, 0));
	}
	store_output(l, row, lir_cast(&l->b, LCAST_SITOFP, LTYPE_F32, index));
}

/* transform: write the row's predictions (or, as the flags ask, its raw margins or its class). */
void lower_transform(Lowering *l, uint32_t row)
{
	uint32_t branch;
	if (!l->f->labels.count) {
		lower_predictions(l, row);
		return;
	}
	branch = lir_begin(&l->b, LOP_IF, l->label, LIR_NONE, LIR_NONE);
	lower_label(l, row);
	lir_else(&l->b, branch);
	lower_predictions(l, row);
	lir_end(&l->b);
}
