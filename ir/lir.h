/*
 * LIR: memory and scalar operations. The last level before LLVM IR.
 *
 * A module holds buffers (model data in the chosen representation, as constant bytes)
 * and functions. A function body is a list of instructions; structured instructions
 * (FOR, PARALLEL_FOR, LOOP, IF) own nested lists (regions). Every instruction is an
 * element of its function's `insts` array and is named by its 32-bit index there;
 * an instruction with a result *is* that value (SSA: defined once, used after, in the
 * same region or a nested one). Mutable state is explicit: VAR declares a local cell,
 * GET/SET read and write it (LLVM's mem2reg turns them into registers), LOCAL_ARRAY
 * reserves a small array, private to an invocation (or parallel iteration) or shared
 * with the parallel loops nested in it (LIR_SPACES).
 *
 * lir_print numbers the values in the order it prints them and prints a constant as its
 * value where it is used, so the text does not depend on the order instructions were made in.
 *
 * The index b of a LOAD, INDEX, STORE, ATOMIC or PREFETCH, written i64 below, may be an
 * i32, sign-extended (a GPU kernel's indices in 32 bits, lower/gpu_ints.c).
 *
 * Operands a, b, c are value indices (LIR_NONE when unused). Integer immediates live
 * in `imm`, float immediates in `fimm`, comparison predicates, cast kinds and memory
 * spaces in `sub`.
 *
 * Kernels (GPU targets). A module for a GPU (LModule.gpu) has no host entry: it is a
 * sequence of kernels (LFunc.kind LFUNC_KERNEL), launched one after the other with each
 * one's grid and block (LFunc.launch), every thread of the grid running the kernel's
 * body. GPU_INDEX reads the thread's place in the grid; BARRIER and SHUFFLE make the
 * threads of a block (of a warp) meet, and may appear only where every thread of the
 * block takes the same path (block-uniform control flow, which lir_verify checks
 * conservatively); LOCAL_ARRAYs in space BLOCK are the block's shared memory. Model
 * buffers reach a kernel as one blob (the `model` parameter): buffer k at
 * lir_buffer_offset(m, k).
 *
 * Vectors: an instruction with `lanes` n of 2..LIR_MAX_LANES is a vector of n `type`
 * elements (i8, i32, i64, f32 or f64, and i1 for compares and the AND, OR, SELECT and
 * CONST of their answers); 0 or 1 is a scalar. Only
 * these carry lanes: LOAD (n consecutive elements from element b, aligned as one
 * element), GATHER, STORE (takes its lanes from c, which may be a vector; its own lanes
 * are 0 or c's), the lanewise ADD, SUB, AND, OR, SHL, ASHR, CTZ, SELECT, ICMP, FADD, FSUB,
 * FMUL, FDIV, FMIN, FMAX, EXP, FCMP and CAST (operands and result of equal lanes, but a
 * BITCAST of a vector to one of as many bits in other lanes, i8 to f32 or i32 and back), CONST
 * (a splat of its immediate), SPLAT (of a scalar value) and ZIP (of two vectors' halves).
 * BITS turns a vector of i1 into a scalar.
 * Every other operand is a scalar.
 */
#ifndef GROVE_IR_LIR_H
#define GROVE_IR_LIR_H

#include <stdio.h>

#include "ir/common.h"

#define LIR_NONE UINT32_MAX

#define LIR_TYPES(X)   \
	X(VOID, "void") \
	X(I1, "i1")     \
	X(I8, "i8")     \
	X(I32, "i32")   \
	X(I64, "i64")   \
	X(F32, "f32")   \
	X(F64, "f64")   \
	X(PTR, "ptr")

typedef enum LType {
#define X(name, text) LTYPE_##name,
	LIR_TYPES(X)
#undef X
} LType;

/*
 * The opcodes. Columns: name, printed text, number of value operands.
 * Unless said otherwise the result type is `type` and binary operands have that type.
 */
#define LIR_OPS(X)                                                                                  \
	X(PARAM, "param", 0)          /* function parameter number imm */                            \
	X(CONST, "const", 0)          /* constant: imm for integer types, fimm for float types;      \
	                                 with lanes, the same value in every lane, or (integers, sub \
	                                 LIR_CONST_STEPS) imm x i in lane i */                        \
	X(BUFFER, "buffer", 0)        /* ptr to the first element of module buffer number imm */     \
	X(LOAD, "load", 2)            /* *(type *)(a + b * sizeof(type)); a ptr, b i64 */            \
	X(INDEX, "index", 2)          /* ptr: a + b * imm bytes; a ptr, b i64 */                     \
	X(GATHER, "gather", 3)        /* lane i: *(type *)(a + (b + c[i]) * sizeof(type)); a ptr, b  \
	                                 i64, c a vector of i32 of the result's lanes (or of i8:   \
	                                 unsigned where imm is 0; of a table, only of i8); imm > 0: \
	                                 a table, every c[i] below imm (a power of 2; sub 1: c[i]'s \
	                                 bits above are ignored, lane i reads c[i] mod imm) and    \
	                                 the imm elements from b inside a's buffer,                  \
	                                 so the code may load them at once and pick lanes from them  \
	                                 (x86: a permute; up to twice the most lanes, two vectors'   \
	                                 permute with AVX-512; 16 i8 in 16 or 32 lanes a pshufb,     \
	                                 which wants AVX2) */                                        \
	X(BITS, "bits", 1)            /* i32 whose bit i is lane i of a (a vector of i1, at most 32 \
	                                 lanes; a scalar i1 is lane 0) */                             \
	X(SPLAT, "splat", 1)          /* a vector of `lanes` copies of the scalar a */                \
	X(ZIP, "zip", 2)              /* vectors a, b and the result of equal lanes n: lane 2i is   \
	                                 lane i + h of a, lane 2i + 1 lane i + h of b, h 0 (sub 0,  \
	                                 the low halves) or n / 2 (sub 1, the high halves); sub 2 and \
	                                 3: each half of the result so from that half of a and b    \
	                                 (x86: a 256-bit unpack) */                                  \
	X(STORE, "store", 3)          /* *(a + b * sizeof(c)) = c; a ptr, b i64; no result */        \
	X(ATOMIC, "atomic", 3)        /* *(a + b * sizeof(c)) op= c atomically (relaxed ordering), op \
	                                 in sub (LAtomic: add, min, max); a ptr, b i64, c i8, i32, i64, \
	                                 f32 or f64; no result */                                     \
	X(PREFETCH, "prefetch", 2)    /* hint: the element of `type` at a + b * sizeof(type) will be \
	                                 read soon; a ptr, b i64; no result (type is the element's) */ \
	X(ADD, "add", 2)              /* integer arithmetic, wrapping; ADD, SUB, MUL and SHL with imm \
	                                 LIR_NSW never wrap as signed integers of their type (nsw) */ \
	X(ADDC, "addc", 3)            /* a + b + zext(c), c i1: an add with carry in (x86: one adc, \
	                                 which reads c off the flags of the compare that made it) */ \
	X(SUB, "sub", 2)                                                                              \
	X(MUL, "mul", 2)                                                                              \
	X(AND, "and", 2)                                                                              \
	X(OR, "or", 2)                                                                                \
	X(SHL, "shl", 2)                                                                              \
	X(ASHR, "ashr", 2)            /* arithmetic shift right */                                   \
	X(MIN, "min", 2)              /* signed integer minimum */                                   \
	X(SDIV, "sdiv", 2)            /* signed integer division, rounding toward zero; b != 0 */    \
	X(FADD, "fadd", 2)            /* float arithmetic, IEEE, no fast-math */                     \
	X(FSUB, "fsub", 2)                                                                            \
	X(FMUL, "fmul", 2)                                                                            \
	X(FDIV, "fdiv", 2)                                                                            \
	X(FMIN, "fmin", 2)            /* the lesser (llvm.minnum: a NaN operand yields the other) */   \
	X(FMAX, "fmax", 2)            /* the greater (llvm.maxnum) */                                 \
	X(FNEG, "fneg", 1)                                                                            \
	X(EXP, "exp", 1)              /* e^a (llvm.exp) */                                           \
	X(LOG, "log", 1)              /* natural logarithm (llvm.log) */                             \
	X(SQRT, "sqrt", 1)            /* square root (llvm.sqrt) */                                  \
	X(CTZ, "ctz", 1)              /* trailing zero bits of a (i32 or i64): its width where a is 0; imm 1: a is never 0 */ \
	X(ICMP, "icmp", 2)            /* i1 result; predicate in sub (LCmp) */                       \
	X(FCMP, "fcmp", 2)            /* i1 result; predicate in sub (LCmp) */                       \
	X(SELECT, "select", 3)        /* a (i1) ? b : c */                                           \
	X(CAST, "cast", 1)            /* convert a to type; kind in sub (LCast) */                   \
	X(VAR, "var", 1)              /* new local cell of `type` holding a; result names the cell */ \
	X(GET, "get", 1)              /* current value of cell a */                                  \
	X(SET, "set", 2)              /* cell a = b; no result */                                    \
	X(LOCAL_ARRAY, "local_array", 0) /* ptr to imm elements of `type` in memory space sub      \
	                                    (LSpace): see LIR_SPACES; with lanes n (a power of two), \
	                                    its start aligned for vectors of n elements */           \
	X(FOR, "for", 3)              /* for (v = a; v < b; v += c) body; a, b, c i64 (or all i32, \
	                                 where v + c cannot pass i32's range); the FOR's own value is \
	                                 v (of their type), usable inside body */                     \
	X(PARALLEL_FOR, "parallel_for", 3) /* as FOR, but iterations may run concurrently on       \
	                                 several threads. imm = grain: iterations handed out at once; \
	                                 ranges of fewer than 2 * grain run on the calling thread     \
	                                 without starting threads. The body may use values defined    \
	                                 outside it (they are passed in) but no VAR cell declared     \
	                                 outside it, and may write no PRIVATE LOCAL_ARRAY defined    \
	                                 outside it. */                                                \
	X(THREADS, "threads", 0)      /* i64: the threads a PARALLEL_FOR started here may run on    \
	                                 (the host's OpenMP team); host functions only */             \
	X(LOOP, "loop", 0)            /* repeat body until a BREAK_IF in it fires */                 \
	X(BREAK_IF, "break_if", 1)    /* if a (i1): leave the innermost enclosing LOOP */            \
	X(IF, "if", 1)                /* if a (i1) body else alt; imm = LIR_IF_APART: each region   \
	                                 may compile as a function of its own (host: the functions  \
	                                 of a module compile in parallel), as a PARALLEL_FOR body   \
	                                 does, taking the values it uses from outside;              \
	                                 LIR_IF_APART_BODY: the body only; LIR_IF_WIDE: in place,   \
	                                 the body's 512-bit vectors whole (x86: AVX-512) */         \
	X(CALL, "call", 3)            /* call entry imm of the module (predict or predict_f64, not \
	                                 this function) with rows a (ptr), nrows b (i64) and       \
	                                 workspace c (ptr), and this function's out and flags; no  \
	                                 result; at the top of a host function's body */           \
	X(GPU_INDEX, "gpu_index", 0)  /* i64: the thread's place in the grid, sub (LGpuIndex) says  \
	                                 which coordinate or extent; kernels only; at most 1024     \
	                                 threads a block, fewer than 2^32 blocks (runtimes clamp) */ \
	X(BARRIER, "barrier", 0)      /* wait until every thread of the block is here, and see what \
	                                 they wrote before it; kernels only, block-uniform control */ \
	X(SHUFFLE, "shuffle", 2)      /* the value of a (i32, i64, f32, f64) in the thread b (i32,  \
	                                 0..31) lanes further down the warp, a's own value where that \
	                                 lane is past the warp's end (shfl.down); kernels only,       \
	                                 block-uniform control (every thread of the warp takes part) */

typedef enum LOp {
#define X(name, text, operands) LOP_##name,
	LIR_OPS(X)
#undef X
	LOP_COUNT
} LOp;

/* Comparison predicates (ICMP: EQ..ULT, FCMP: OEQ..UNO) and their printed names. */
#define LIR_CMPS(X)                                                 \
	X(EQ, "eq") X(NE, "ne") X(SLT, "slt") X(SLE, "sle")         \
	X(SGT, "sgt") X(SGE, "sge") X(ULT, "ult")                   \
	X(OEQ, "oeq") X(ONE, "one") X(OLT, "olt") X(OLE, "ole")     \
	X(OGT, "ogt") X(OGE, "oge") X(ULT_F, "ult") X(ULE_F, "ule") \
	X(UGT_F, "ugt") X(UGE_F, "uge") X(UNO, "uno")

typedef enum LCmp {
#define X(name, text) LCMP_##name,
	LIR_CMPS(X)
#undef X
	LCMP_COUNT
} LCmp;

/* The operations of ATOMIC (in sub): integer or float add, signed or float min and max. */
#define LIR_ATOMICS(X) X(ADD, "add") X(MIN, "min") X(MAX, "max")

typedef enum LAtomic {
#define X(name, text) LATOMIC_##name,
	LIR_ATOMICS(X)
#undef X
	LATOMIC_COUNT
} LAtomic;

/* Conversion kinds of CAST and their printed names. */
#define LIR_CASTS(X)                                              \
	X(SEXT, "sext") X(ZEXT, "zext") X(TRUNC, "trunc")         \
	X(FPEXT, "fpext") X(FPTRUNC, "fptrunc") X(SITOFP, "sitofp") \
	X(FPTOSI, "fptosi") X(BITCAST, "bitcast")

typedef enum LCast {
#define X(name, text) LCAST_##name,
	LIR_CASTS(X)
#undef X
	LCAST_COUNT
} LCast;

/*
 * Memory spaces of LOCAL_ARRAYs. On the host both are allocas in the function that
 * defines them (a PARALLEL_FOR body is a function of its own); they differ in who may
 * write them, which lir_verify checks: a PRIVATE array defined outside a PARALLEL_FOR
 * must not be written (STORE or ATOMIC to it) inside it.
 */
#define LIR_SPACES(X)                                                                              \
	X(PRIVATE, "private") /* private to the iteration (or invocation) that defines it */          \
	X(SHARED, "shared")   /* defined in the enclosing frame and shared with the PARALLEL_FORs     \
	                         nested in it, whose iterations write disjoint elements (or add to    \
	                         them with ATOMIC); captured by the outlined body on the host */ \
	X(BLOCK, "block")     /* GPU shared memory: one array per block of a kernel, visible to every  \
	                         thread of the block (kernels only) */

typedef enum LSpace {
#define X(name, text) LSPACE_##name,
	LIR_SPACES(X)
#undef X
	LSPACE_COUNT
} LSpace;

/* What GPU_INDEX reads (CUDA's names): the thread's coordinates and the extents. */
#define LIR_GPU_INDICES(X)                                                              \
	X(THREAD_X, "thread.x") X(THREAD_Y, "thread.y") X(THREAD_Z, "thread.z")       \
	X(BLOCK_X, "block.x") X(BLOCK_Y, "block.y") X(BLOCK_Z, "block.z")             \
	X(BLOCK_DIM_X, "blockDim.x") X(BLOCK_DIM_Y, "blockDim.y") X(BLOCK_DIM_Z, "blockDim.z") \
	X(GRID_DIM_X, "gridDim.x") X(GRID_DIM_Y, "gridDim.y") X(GRID_DIM_Z, "gridDim.z")

typedef enum LGpuIndex {
#define X(name, text) LGPU_##name,
	LIR_GPU_INDICES(X)
#undef X
	LGPU_COUNT
} LGpuIndex;

/* Lanes of the widest vector value. */
#define LIR_MAX_LANES 32

/* The imm of an ADD, SUB, MUL or SHL that never wraps as signed integers (LLVM's nsw; lower/gpu_ints.c proves it). */
#define LIR_NSW 1
/* CONST's sub for a vector of integers whose lane i holds imm x i. */
#define LIR_CONST_STEPS 1

/*
 * IF's imm: its regions may compile apart (see LOP_IF); or its body only, the alt staying
 * in place; or (LIR_IF_WIDE) both in place, the body using vectors of 512 bits, which
 * the function's code may then be generated with (x86: its code is optimised without
 * AVX-512, where LLVM would make gathers of a walk's loads, and generated with it).
 */
#define LIR_IF_APART 1
#define LIR_IF_APART_BODY 2
#define LIR_IF_WIDE 3

typedef struct LInst {
	uint16_t op;    /* LOp */
	uint8_t type;   /* LType of the result, or of its lanes (STORE, ATOMIC: unused, void) */
	uint8_t sub;    /* LCmp, LCast, LAtomic, LSpace or LGpuIndex */
	uint8_t lanes;  /* 0 or 1: a scalar; 2..LIR_MAX_LANES: a vector of `type` (see above) */
	uint32_t a, b, c;
	uint32_t body;  /* first instruction of the nested region (FOR, PARALLEL_FOR, LOOP, IF), or LIR_NONE */
	uint32_t alt;   /* first instruction of IF's else region, or LIR_NONE */
	uint32_t next;  /* next instruction in the same region, or LIR_NONE */
	int64_t imm;
	double fimm;
} LInst;

typedef struct LBuffer {
	char name[48];
	LType elem;
	uint64_t count;   /* elements */
	void *data;       /* count elements of elem, owned by the module */
} LBuffer;

typedef enum LFuncKind {
	LFUNC_HOST,   /* a function of a host module */
	LFUNC_KERNEL, /* a GPU kernel: every thread of its launch runs the body */
} LFuncKind;

/*
 * One extent of a launch: `count`, or, when rows_per is not 0, ceil(nrows / rows_per)
 * (at least 1). Kernels distribute their loops over whatever extents they are given
 * (grid-stride loops), so a runtime may clamp them to the device's limits.
 */
typedef struct LDim {
	int64_t count;
	int64_t rows_per;
} LDim;

typedef struct LLaunch {
	LDim grid[3];  /* blocks, x y z */
	LDim block[3]; /* threads per block (constants: rows_per 0) */
} LLaunch;

typedef struct LFunc {
	char name[64];
	uint8_t kind;     /* LFuncKind */
	uint8_t entry;    /* a kernel: of the predict sequence (0) or of the double-row one (1) */
	LLaunch launch;   /* a kernel's grid and block */
	LType params[8];
	uint32_t num_params;
	LInst *insts;
	uint32_t num_insts;
	size_t insts_cap;
	uint32_t body;    /* first instruction of the body, or LIR_NONE */
} LFunc;

/*
 * The module. `predict` is the entry point every artifact exports (ABI version 2,
 * rt/artifact.h), of parameter types lir_predict_params:
 *   void predict(const float *rows, int64_t nrows, float *out, int32_t flags, void *workspace)
 * rows is row-major nrows x num_features (NaN = missing); out receives
 * nrows x num_outputs predictions, or nrows x num_margins raw margins when
 * flags & 1 (GROVE_PREDICT_MARGIN), or, for a module with labels, each row's class (an
 * index into the labels, as a float) when flags & 2. workspace is the caller's scratch memory of
 * workspace_fixed + nrows * workspace_per_row bytes, 16-byte aligned and uninitialised
 * (NULL when that is 0), overlapping neither rows nor out; one call uses it at a time.
 */
typedef struct LModule {
	LBuffer *buffers;
	uint32_t num_buffers;
	size_t buffers_cap;
	LFunc **funcs;
	uint32_t num_funcs;
	size_t funcs_cap;
	uint32_t predict;      /* index of the entry function in funcs */
	uint32_t predict_f64;  /* of the entry for double rows (same parameters, rows of doubles), or LIR_NONE */
	uint32_t num_features;
	uint32_t num_outputs;
	uint32_t num_margins;
	uint32_t transform;    /* HTransform, recorded in the artifact */
	uint64_t workspace_fixed;   /* workspace bytes predict needs for any number of rows (0: none) */
	uint64_t workspace_per_row; /* and per row (0 when the schedule keeps its scratch on the stack) */
	uint32_t num_labels;        /* class labels recorded in the artifact (0: none); predict's flags & 2 */
	int64_t *label_ints;        /*   asks for each row's class index. Owned: int64 labels, or */
	char **label_strings;       /*   string labels (the other NULL) */
	char **feature_names;       /* num_features column names recorded in the artifact, or NULL (owned) */
	CategoryValues category_values; /* the categorical columns' values recorded in the artifact (owned) */
	bool gpu;                   /* a GPU module: predict and predict_f64 are LIR_NONE, funcs are kernels
	                               (lir_kernel_params) in launch order, those of entry 1 for double rows */
	bool code;                  /* its walks are code, branches on constants (the code representation) */
	bool waits;                 /* most steps of its walks wait on memory (cost_walks_wait_on_memory) */
} LModule;

/* Parameters of predict, in order: rows, nrows, out, flags, workspace. */
#define LIR_PREDICT_PARAMS 5
extern const LType lir_predict_params[LIR_PREDICT_PARAMS];

/* Parameters of a kernel, in order: rows, nrows, out, flags, workspace (as predict's, in device memory), model. */
#define LIR_KERNEL_PARAMS 6
extern const LType lir_kernel_params[LIR_KERNEL_PARAMS];
/* Alignment of each buffer in the model blob of a GPU module. */
#define LIR_MODEL_ALIGN 64u
/* Byte offset of buffer k in the model blob (buffers in order, each aligned to LIR_MODEL_ALIGN); k = num_buffers: the blob's size. */
uint64_t lir_buffer_offset(const LModule *m, uint32_t k);
/*
 * Shared memory of kernel fn: its BLOCK local arrays one after the other, each aligned
 * to its element size. Fills offset[id] for each (when offset is not NULL; num_insts
 * entries) and returns the total bytes.
 */
uint64_t lir_block_memory(const LFunc *fn, uint64_t *offset);
/* Evaluate a launch extent for nrows rows. */
int64_t lir_dim_value(const LDim *d, int64_t nrows);

/* An insertion point: appends instructions to a region of a function. */
#define LIR_MAX_NESTING 128
typedef struct LBuilder {
	LFunc *fn;
	uint32_t *tail[LIR_MAX_NESTING]; /* where the next instruction's index is stored */
	uint32_t depth;
} LBuilder;

/* A new empty module. */
LModule *lir_module_new(void);
/* Free a module, its buffers and functions. */
void lir_module_free(LModule *m);
/* Add a constant buffer of count elements; takes ownership of data (malloc'ed). Returns its index. */
uint32_t lir_buffer_add(LModule *m, const char *name, LType elem, uint64_t count, void *data);
/*
 * Per buffer of m, whether some function reads it: a BUFFER of it reaches, through
 * operands, an instruction that acts (store, loop, branch...). Malloc'ed, num_buffers long.
 */
bool *lir_buffers_read(const LModule *m);
/* Add a function with the given parameter types; returns it. */
LFunc *lir_func_add(LModule *m, const char *name, const LType *params, uint32_t num_params);

/* Start appending to the body of fn. */
void lir_builder_init(LBuilder *b, LFunc *fn);
/* Append an instruction; returns its index (its value). */
uint32_t lir_emit(LBuilder *b, LOp op, LType type, uint32_t x, uint32_t y, uint32_t z);
/*
 * Append an instruction of `lanes` lanes (LOAD, STORE, FADD, FSUB, FMUL, CONST; see the
 * top of this file); returns it. For a splat, set the new CONST's imm or fimm after.
 */
uint32_t lir_emit_vector(LBuilder *b, LOp op, LType type, uint8_t lanes, uint32_t x, uint32_t y, uint32_t z);
/* Append an integer constant. */
uint32_t lir_const_int(LBuilder *b, LType type, int64_t v);
/* Append a float constant. */
uint32_t lir_const_float(LBuilder *b, LType type, double v);
/* Append a comparison (ICMP or FCMP by operand type). */
uint32_t lir_cmp(LBuilder *b, LOp op, LCmp pred, uint32_t x, uint32_t y);
/* Append a conversion of x to type. */
uint32_t lir_cast(LBuilder *b, LCast kind, LType type, uint32_t x);
/* Append a structured instruction (FOR, PARALLEL_FOR, LOOP, IF) and continue inside its body; returns it. */
uint32_t lir_begin(LBuilder *b, LOp op, uint32_t x, uint32_t y, uint32_t z);
/* Continue in the else region of the IF being built. */
void lir_else(LBuilder *b, uint32_t if_inst);
/* Leave the innermost structured instruction; appending continues after it. */
void lir_end(LBuilder *b);
/* Append an INDEX: the address of element index (i64) of type at ptr. */
uint32_t lir_index(LBuilder *b, uint32_t ptr, uint32_t index, LType type);
/* Append a LOCAL_ARRAY of count elements of type in memory space space. */
uint32_t lir_local_array(LBuilder *b, LType type, int64_t count, LSpace space);
/* Type of value v of fn (of its lanes for a vector). */
static inline LType lir_type(const LFunc *fn, uint32_t v) { return (LType)fn->insts[v].type; }
/* Lanes of value v of fn: 1 for a scalar (a LOCAL_ARRAY's value is a ptr, whatever its lanes). */
static inline unsigned lir_lanes(const LFunc *fn, uint32_t v)
{
	return fn->insts[v].lanes > 1 && fn->insts[v].op != LOP_LOCAL_ARRAY ? fn->insts[v].lanes : 1;
}

/* Check the module's structure: operand types, SSA dominance, regions, buffer indices, predict's signature. */
bool lir_verify(const LModule *m, Error *e);
/* Print the module as text (stable; used for golden tests). Buffer contents are summarised, not dumped. */
void lir_print(FILE *out, const LModule *m);
/*
 * Value x of fn as lir_print names it, into buf (n bytes; returns buf): %N, numbered in
 * printing order, or a constant's value, which prints where it is used; an instruction
 * without a result is "after %N" (or "first"), the value printed before it.
 */
const char *lir_value_text(const LFunc *fn, uint32_t x, char *buf, size_t n);

/* Printed name of a type, "?" if out of range. */
const char *lir_type_name(LType t);
/* Printed name of an opcode, "?" if out of range. */
const char *lir_op_name(LOp op);
/* Printed name of a comparison predicate, "?" if out of range. */
const char *lir_cmp_name(LCmp c);
const char *lir_atomic_name(LAtomic a);
/* Printed name of a cast kind, "?" if out of range. */
const char *lir_cast_name(LCast c);
/* Printed name of a memory space, "?" if out of range. */
const char *lir_space_name(LSpace s);
/* Printed name of a GPU index, "?" if out of range. */
const char *lir_gpu_index_name(LGpuIndex g);
/* Whether instructions of kind op have a result (STORE, ATOMIC, PREFETCH, SET, BREAK_IF, LOOP, IF, CALL, BARRIER do not). */
bool lir_op_has_result(LOp op);
/* Number of value operands of instructions of kind op (LIR_OPS' third column). */
unsigned lir_op_operands(LOp op);
/*
 * Whether in's value may differ between the threads of a GPU block whatever its operands:
 * the thread's coordinates, and what it loads, reads from a cell or receives from a
 * shuffle. (Any other value differs where an operand does.)
 */
bool lir_varies_itself(const LInst *in);
/* Whether instructions of kind op own nested regions (FOR, PARALLEL_FOR, LOOP and IF: body; IF also alt). */
bool lir_op_nests(LOp op);
/* Size in bytes of a value of type t (PTR: 8). */
size_t lir_type_size(LType t);

#endif
