/*
 * Internal to target/: the LIR -> LLVM IR translation. The core (llvm.c) translates
 * every op of a function body the same way for every target; what differs between
 * targets goes through a table of hooks (TargetHooks): the host's (llvm_host.c: model
 * buffers as globals, PARALLEL_FOR outlined onto OpenMP) and each GPU's (nvptx.c,
 * amdgpu.c, gpusim.c: the kernel's signature, GPU_INDEX, BARRIER, SHUFFLE, BLOCK arrays).
 */
#ifndef GROVE_TARGET_LLVM_H
#define GROVE_TARGET_LLVM_H

#include <llvm-c/Core.h>

#include "ir/lir.h"
#include "ir/mir.h"
#include "rt/artifact.h"

#define MAX_LOOP_NESTING LIR_MAX_NESTING

/*
 * The function attribute that says how many bits of vector a function's code must keep
 * whole: LLVM_WIDE_BITS where its LIR holds 512-bit vectors (LIR_IF_WIDE), which it is
 * then generated with (target/host.c: wide_functions). LLVM's inliner keeps the larger
 * width where caller and callee both have one, and drops it where one has none.
 */
#define LLVM_VECTOR_WIDTH "min-legal-vector-width"
#define LLVM_WIDE_BITS 512
/* The module flag (i32 1) of a code module whose walks are code (LModule.code): host.c optimises it with its own pipeline. */
#define LLVM_CODE_FLAG "grove.code"
/* The module flag (i32 1) of a module whose walks wait on memory (LModule.waits): host.c's -O3 is its -O2. */
#define LLVM_WAITS_FLAG "grove.waits"

typedef struct TargetHooks TargetHooks;

typedef struct Emitter {
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMBuilderRef b;
	LLVMBuilderRef entry_b;     /* appends to the entry block of the function being built */
	LLVMTypeRef types[LTYPE_PTR + 1];
	const LModule *m;
	const TargetHooks *hooks;
	LLVMValueRef *buffers;      /* host: per module buffer, its global */
	const LFunc *fn;            /* LIR function being emitted */
	LLVMValueRef *values;       /* per LIR instruction of fn: its LLVM value */
	LLVMValueRef params[COUNT_OF(((LFunc *)0)->params)]; /* fn's parameters as its body sees them */
	uint64_t *block_offset;     /* a kernel: per BLOCK local array, its offset in the block's shared memory */
	LLVMValueRef func;          /* LLVM function being built (the entry, a kernel or an outlined body) */
	LLVMBasicBlockRef entry;    /* its alloca block */
	LLVMBasicBlockRef loop_exit[MAX_LOOP_NESTING]; /* exits of the enclosing LOOPs */
	uint32_t loops;
	uint32_t outlined;          /* outlined functions so far, for names */
	bool aarch64;               /* host: the code is for AArch64 */
	bool x86;                   /* host: the code is for x86-64 */
	bool avx2;                  /* x86: the CPU has AVX2 */
	bool avx512;                /* x86: the CPU has AVX-512 */
	bool profile;               /* a kernel tells the target's access hook of its loads and stores */
	char prefix[64];
} Emitter;

/*
 * What a target does its own way. A hook the target has no use for is NULL: the ops it
 * translates cannot occur there (lir_verify keeps GPU ops out of host functions and
 * PARALLEL_FOR out of kernels).
 */
struct TargetHooks {
	/* Declare the LLVM function of kernel fn called name: signature, calling convention, annotations. */
	LLVMValueRef (*kernel)(Emitter *em, const LFunc *fn, const char *name);
	/* Parameter i of the function being built as its body sees it (built at the body's start); NULL: as it is. */
	LLVMValueRef (*param)(Emitter *em, unsigned i);
	/* BUFFER k: a pointer to the first element of module buffer k. */
	LLVMValueRef (*buffer)(Emitter *em, uint32_t k);
	/* PARALLEL_FOR id (the host's team of threads). */
	void (*parallel_for)(Emitter *em, uint32_t id);
	/* THREADS: the threads a PARALLEL_FOR may run on, as i64. */
	LLVMValueRef (*threads)(Emitter *em);
	/* CALL id: a host entry of the module called. */
	void (*call)(Emitter *em, uint32_t id);
	/* The region at first of an IF marked apart, as a function of its own; NULL: inline, as any IF's. */
	void (*apart)(Emitter *em, uint32_t first);
	/* LOCAL_ARRAY id in space BLOCK: a pointer to the block's array. */
	LLVMValueRef (*block_array)(Emitter *em, uint32_t id);
	/* GPU_INDEX which, as i64. */
	LLVMValueRef (*gpu_index)(Emitter *em, LGpuIndex which);
	/* BARRIER; site is the LIR instruction. */
	void (*barrier)(Emitter *em, uint32_t site);
	/* SHUFFLE of v (i32, i64, f32, f64) from delta (i32) lanes down the warp; site is the LIR instruction. */
	LLVMValueRef (*shuffle)(Emitter *em, LLVMValueRef v, LLVMValueRef delta, uint32_t site);
	/* Where the emitter profiles (Emitter.profile): before a LOAD or STORE site of bytes at address. */
	void (*access)(Emitter *em, LLVMValueRef address, unsigned bytes, uint32_t site);
	/* EXP or LOG of x (EXP's may be a vector); NULL: llvm.exp and llvm.log. */
	LLVMValueRef (*math)(Emitter *em, LOp op, LLVMValueRef x);
	/* On the way into a function's body, and (given what enter returned) out of it: the host's FP mode; NULL: nothing. */
	LLVMValueRef (*enter)(Emitter *em);
	void (*leave)(Emitter *em, LLVMValueRef entered);
};

/* Start translating m into mod (of ctx) with the target's hooks; symbols are named after prefix. */
void llvm_emitter_init(Emitter *em, LLVMContextRef ctx, LLVMModuleRef mod, const LModule *m, const TargetHooks *hooks,
                       const char *prefix);
/* Release what llvm_emitter_init made (not the module). */
void llvm_emitter_dispose(Emitter *em);
/* Translate the body of LIR function fn into func, an LLVM function of fn's parameters (a kernel's may have more). */
void llvm_emit_body(Emitter *em, const LFunc *fn, LLVMValueRef func);
/* Kernel fn of m, declared by the hooks and translated; named <prefix>_<fn name>. */
LLVMValueRef llvm_emit_kernel(Emitter *em, const LFunc *fn);

/* Pieces of the translation for the targets' hooks. */
static inline LLVMValueRef llvm_value(Emitter *em, uint32_t v) { return em->values[v]; }
LLVMValueRef llvm_const_i64(Emitter *em, int64_t v);
LLVMValueRef llvm_const_i32(Emitter *em, uint32_t v);
LLVMBasicBlockRef llvm_new_block(Emitter *em, const char *name);
/* An alloca of count elements of type in the current function's entry block. */
LLVMValueRef llvm_entry_alloca(Emitter *em, LLVMTypeRef type, int64_t count);
/* Start a function: an entry block for allocas and a first body block; the builder goes to the latter. */
void llvm_begin_function(Emitter *em, LLVMValueRef func);
/* Finish a function started by llvm_begin_function: return, and jump from the entry block to the body. */
void llvm_end_function(Emitter *em);
/* The instructions of the region at first. */
void llvm_emit_region(Emitter *em, uint32_t first);
/* for (iv = begin; iv < end; iv += step) body of LIR loop id, with the loop's value bound to iv. */
void llvm_emit_for(Emitter *em, uint32_t id, LLVMValueRef begin, LLVMValueRef end, LLVMValueRef step);
/*
 * The symbol of buffer k of m (into out, of size bytes): <prefix>.<name>, or where an
 * earlier buffer has its name, <prefix>.<name>.<k> (target/buffers.c).
 */
#define TARGET_SYMBOL_MAX 160
void target_buffer_symbol(const LModule *m, const char *prefix, uint32_t k, char *out, size_t size);
/* ln 2 split so that k * LLVM_LN2_HI is exact for |k| < 2^11 (fdlibm's constants; exp and log). */
#define LLVM_LN2_HI 6.93147180369123816490e-01
#define LLVM_LN2_LO 1.90821492927058770002e-10
/* e^x, x a float or double or a vector of them, in arithmetic (target/math.c). */
LLVMValueRef llvm_exp(Emitter *em, LLVMValueRef x);
/* A call to the intrinsic name, overloaded on type (NULL: not overloaded). */
LLVMValueRef llvm_call_intrinsic(Emitter *em, const char *name, LLVMTypeRef type, LLVMValueRef *args, unsigned nargs);
/* Add the enum attribute name to function f at index (0 = return, 1.. = parameters, -1 = function). */
void llvm_add_attribute(Emitter *em, LLVMValueRef f, LLVMAttributeIndex index, const char *name);
/* A private constant global holding init (of type). */
LLVMValueRef llvm_constant_global(Emitter *em, LLVMTypeRef type, LLVMValueRef init);

/*
 * Translate host module m into two new LLVM modules in ctx: the code (returned) and
 * *data, the model's buffers and a constant GroveArtifact named artifact_symbol that
 * describes the entry point. Functions are named <prefix>_<name>; the entry point is
 * external, the rest internal. Buffers are hidden globals <prefix>.<name>, declared in
 * the code. Optimise the code, then link the data into it, or emit each as an object
 * of its own (a cached code object). With buffers_apart, *data does not hold the
 * buffers: they are an object of their own (target_write_buffers). The code is for
 * AArch64 where aarch64, else for x86-64, with the vectors `vectors` names (AVX2 for
 * MTOPS_PAIRS, AVX-512 for MTOPS_WIDE). m must have passed lir_verify.
 */
LLVMModuleRef target_build_module(LLVMContextRef ctx, const LModule *m, const char *prefix, const char *artifact_symbol,
                                  bool aarch64, MTops vectors, bool buffers_apart, LLVMModuleRef *data);

/*
 * The constant GroveArtifact named symbol describing m: predict and predict_f64 (NULL
 * pointers where NULL) and device (a GroveDevice; NULL for a host artifact).
 */
void llvm_emit_descriptor(Emitter *em, LLVMValueRef predict, LLVMValueRef predict_f64, LLVMValueRef device,
                          const char *symbol);

#endif
