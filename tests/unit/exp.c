/*
 * The host's EXP (llvm_exp) against libm: an artifact whose entries compute e^x of each row's one value
 * (predict: the float's, 8 rows a vector; predict_f64: the double's, its bits written
 * into the row's two outputs) must stay within 2 ulps of expf and exp, from where e^x
 * rounds to 0 to where it overflows, subnormals included, and give e^x's values at
 * +-inf, NaN and beyond.
 */
#include "lower/lowering.h"
#include "rt/grove.h"
#include "target/target.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/check.h"

/*
 * An entry of m: e^rows[i] into out, rows of type t, `lanes` rows at a time (nrows a
 * multiple of it): a float's result into out[i], a double's bits into out[2 i, 2 i + 1].
 */
static void add_entry(LModule *m, const char *name, LType t, unsigned lanes)
{
	LFunc *fn = lir_func_add(m, name, lir_predict_params, LIR_PREDICT_PARAMS);
	LBuilder b;
	uint32_t rows, n, out, zero, one, i, x, e;
	fn->kind = LFUNC_HOST;
	fn->entry = t == LTYPE_F64;
	lir_builder_init(&b, fn);
	rows = lir_emit(&b, LOP_PARAM, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
	n = lir_emit(&b, LOP_PARAM, LTYPE_I64, LIR_NONE, LIR_NONE, LIR_NONE);
	fn->insts[n].imm = 1;
	out = lir_emit(&b, LOP_PARAM, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
	fn->insts[out].imm = 2;
	zero = lir_const_int(&b, LTYPE_I64, 0);
	one = lir_const_int(&b, LTYPE_I64, lanes);
	i = lir_begin(&b, LOP_FOR, zero, n, one);
	x = lir_emit_vector(&b, LOP_LOAD, t, (uint8_t)lanes, rows, i, LIR_NONE);
	e = lir_emit_vector(&b, LOP_EXP, t, (uint8_t)(lanes > 1 ? lanes : 0), x, LIR_NONE, LIR_NONE);
	if (t == LTYPE_F64) {
		e = lir_cast(&b, LCAST_BITCAST, LTYPE_I64, e);
		b.fn->insts[e].lanes = b.fn->insts[x].lanes;
	}
	lir_emit(&b, LOP_STORE, LTYPE_VOID, out, i, e);
	lir_end(&b);
}

/* Distance in ulps between two finite numbers of one sign (or zero), or 0 where both are the same inf or NaN. */
static double ulps(double got, double want, bool f32)
{
	if (isnan(want) || isinf(want))
		return (isnan(want) && isnan(got)) || got == want ? 0 : INFINITY;
	if (f32) {
		float g = (float)got, w = (float)want;
		int32_t a, c;
		memcpy(&a, &g, sizeof a);
		memcpy(&c, &w, sizeof c);
		return (double)llabs((long long)a - c);
	}
	int64_t a, c;
	memcpy(&a, &got, sizeof a);
	memcpy(&c, &want, sizeof c);
	return (double)llabs((long long)(a - c)); /* of one sign: no overflow */
}

#define SWEEP 20000
#define SPECIALS 16 /* ROWS a multiple of 8 */
#define ROWS (SWEEP + SPECIALS)

int main(void)
{
	static const double specials[SPECIALS] = {-INFINITY, INFINITY, NAN, 0.0, -0.0, 1e-30, -1000.0, 1000.0,
	                                          88.72283, 709.782712893384, -745.1332191019411, -103.97207,
	                                          -87.3, -88.0, 87.0, 1.0};
	static float rows[ROWS], out[2 * ROWS];
	static double rows64[ROWS];
	char dir[] = "/tmp/grove-exp-XXXXXX", path[64];
	LModule *m = lir_module_new();
	TargetOptions o = {.emit = TARGET_EMIT_SHARED, .opt_level = 2};
	GroveModel *model = NULL;
	GroveError err;
	Error e = {.message = {0}};
	double worst32 = 0, worst64 = 0;

	add_entry(m, "predict", LTYPE_F32, 8); /* as a vector (a softmax's), */
	add_entry(m, "predict_f64", LTYPE_F64, 1); /* and as a scalar (a sigmoid's) */
	m->predict = 0;
	m->predict_f64 = 1;
	m->num_features = 1;
	m->num_outputs = m->num_margins = 2;
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/exp.so", dir);
	CHECK(lir_verify(m, &e) && target_emit(m, &o, path, &e));
	if (e.message[0])
		fprintf(stderr, "exp: %s\n", e.message);
	CHECK(grove_load(path, &model, &err) == GROVE_OK);

	for (int i = 0; i < ROWS; i++) { /* from below the doubles' zero to past their overflow */
		rows64[i] = i < SWEEP ? -750.0 + 1465.0 * i / (SWEEP - 1) + 1e-3 * sin(i) : specials[i - SWEEP];
		if (i < SWEEP / 2) /* and the floats' range, densely */
			rows64[i] = -106.0 + 200.0 * i / (SWEEP / 2 - 1) + 1e-4 * cos(i);
		rows[i] = (float)rows64[i];
	}
	if (model) {
		CHECK(grove_predict(model, rows, ROWS, 1, out, 2 * ROWS, 0, &err) == GROVE_OK);
		for (int i = 0; i < ROWS; i++) {
			double d = ulps(out[i], expf(rows[i]), true);
			if (d > 2)
				fprintf(stderr, "exp: e^%.9g (float) = %.9g, libm %.9g\n", rows[i], out[i], expf(rows[i]));
			worst32 = d > worst32 ? d : worst32;
		}
		CHECK(grove_predict_f64(model, rows64, ROWS, 1, out, 2 * ROWS, 0, &err) == GROVE_OK);
		for (int i = 0; i < ROWS; i++) {
			double got;
			memcpy(&got, &out[2 * i], sizeof got);
			double d = ulps(got, exp(rows64[i]), false);
			if (d > 2)
				fprintf(stderr, "exp: e^%.17g (double) = %.17g, libm %.17g\n", rows64[i], got, exp(rows64[i]));
			worst64 = d > worst64 ? d : worst64;
		}
	}
	CHECK(worst32 <= 2 && worst64 <= 2);
	grove_free(model);
	lir_module_free(m);
	unlink(path);
	rmdir(dir);
	if (failures)
		fprintf(stderr, "exp: %d checks failed (worst: %g ulps float, %g double)\n", failures, worst32, worst64);
	return failures != 0;
}
