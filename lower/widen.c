/*
 * The float entry of a module whose walks are code and compare doubles. Code costs LLVM
 * time and artifact bytes in proportion to its splits, and a float twin of the forest
 * (hir_float_forest) would double both; so predict widens its rows into the workspace,
 * exactly (every float is a double), and calls predict_f64, the forest's one body:
 *
 *   predict(rows, nrows, out, flags, workspace)
 *     parallel for r in [0, nrows): wide[r][j] = (double)rows[r][j] for every feature j
 *     predict_f64(wide, nrows, out, flags, workspace)
 *
 * predict_f64 keeps the workspace's first nrows * callee_per_row bytes; the widened rows
 * follow, 8-aligned (LModule.workspace_fixed holds the padding).
 */
#include "lower/lowering.h"

/* Rows a thread widens at once. */
#define WIDEN_GRAIN 1024

static uint32_t param(LBuilder *b, LType type, int64_t k)
{
	uint32_t p = lir_emit(b, LOP_PARAM, type, LIR_NONE, LIR_NONE, LIR_NONE);
	b->fn->insts[p].imm = k;
	return p;
}

void lower_widening_entry(LModule *module, uint64_t callee_per_row)
{
	LFunc *fn = lir_func_add(module, "predict", lir_predict_params, LIR_PREDICT_PARAMS);
	LBuilder b;
	uint32_t rows, nrows, workspace, width, zero, one, own, wide, row, first, column, at, x, wide_x;

	fn->kind = LFUNC_HOST;
	lir_builder_init(&b, fn);
	rows = param(&b, LTYPE_PTR, 0);
	nrows = param(&b, LTYPE_I64, 1);
	workspace = param(&b, LTYPE_PTR, 4);
	width = lir_const_int(&b, LTYPE_I64, module->num_features);
	zero = lir_const_int(&b, LTYPE_I64, 0);
	one = lir_const_int(&b, LTYPE_I64, 1);
	/* (one instruction a statement: C leaves the order of a call's arguments open, and it would number them) */
	own = lir_emit(&b, LOP_MUL, LTYPE_I64, nrows, lir_const_int(&b, LTYPE_I64, (int64_t)callee_per_row), LIR_NONE);
	own = lir_emit(&b, LOP_ADD, LTYPE_I64, own, lir_const_int(&b, LTYPE_I64, 7), LIR_NONE);
	own = lir_emit(&b, LOP_AND, LTYPE_I64, own, lir_const_int(&b, LTYPE_I64, -8), LIR_NONE);
	wide = lir_emit(&b, LOP_INDEX, LTYPE_PTR, workspace, own, LIR_NONE);
	fn->insts[wide].imm = 1;

	row = lir_begin(&b, LOP_PARALLEL_FOR, zero, nrows, one);
	fn->insts[row].imm = WIDEN_GRAIN;
	first = lir_emit(&b, LOP_MUL, LTYPE_I64, row, width, LIR_NONE);
	column = lir_begin(&b, LOP_FOR, zero, width, one);
	at = lir_emit(&b, LOP_ADD, LTYPE_I64, first, column, LIR_NONE);
	x = lir_emit(&b, LOP_LOAD, LTYPE_F32, rows, at, LIR_NONE);
	wide_x = lir_cast(&b, LCAST_FPEXT, LTYPE_F64, x);
	lir_emit(&b, LOP_STORE, LTYPE_VOID, wide, at, wide_x);
	lir_end(&b);
	lir_end(&b);

	x = lir_emit(&b, LOP_CALL, LTYPE_VOID, wide, nrows, workspace);
	fn->insts[x].imm = module->predict_f64;
	module->predict = module->num_funcs - 1;
	module->workspace_fixed = 8;
	module->workspace_per_row = callee_per_row + (uint64_t)module->num_features * sizeof(double);
}
