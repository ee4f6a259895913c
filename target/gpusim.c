/*
 * Kernels for libgrove's SIMT simulator: host functions (GroveSimKernel) that take the
 * kernel parameters and the simulated thread (GroveSimThread, rt/artifact.h), read
 * their place in the grid from it, find their block's shared memory through it and
 * call back into the simulator to meet the other threads at barriers and shuffles.
 */
#include "target/gpu.h"

#include <stddef.h>

/* GroveSimThread's fields, in order. */
enum { THREAD_INDEX, THREAD_SHARED, THREAD_BARRIER, THREAD_SHUFFLE, THREAD_SIM, THREAD_ACCESS, THREAD_FIELDS };

_Static_assert(offsetof(GroveSimThread, shared) == 12 * sizeof(int64_t) && offsetof(GroveSimThread, barrier) ==
               offsetof(GroveSimThread, shared) + sizeof(void *) && offsetof(GroveSimThread, shuffle) ==
               offsetof(GroveSimThread, barrier) + sizeof(void *) && offsetof(GroveSimThread, sim) ==
               offsetof(GroveSimThread, shuffle) + sizeof(void *) && offsetof(GroveSimThread, access) ==
               offsetof(GroveSimThread, sim) + sizeof(void *), "GroveSimThread is the struct thread_type builds");

/* GroveSimThread as an LLVM struct: {[12 x i64], ptr, ptr, ptr, ptr, ptr}. */
static LLVMTypeRef thread_type(Emitter *em)
{
	LLVMTypeRef ptr = em->types[LTYPE_PTR];
	LLVMTypeRef fields[THREAD_FIELDS] = {LLVMArrayType(em->types[LTYPE_I64], 12), ptr, ptr, ptr, ptr, ptr};
	return LLVMStructTypeInContext(em->ctx, fields, THREAD_FIELDS, 0);
}

/* The thread: the kernel's last parameter. */
static LLVMValueRef thread(Emitter *em) { return LLVMGetParam(em->func, LIR_KERNEL_PARAMS); }

/* Load field i (of type) of the thread. */
static LLVMValueRef thread_field(Emitter *em, unsigned i, LLVMTypeRef type)
{
	return LLVMBuildLoad2(em->b, type, LLVMBuildStructGEP2(em->b, thread_type(em), thread(em), i, ""), "");
}

/* A kernel: lir_kernel_params, then the thread. Internal: the kernel table is how the simulator finds it. */
static LLVMValueRef sim_kernel(Emitter *em, const LFunc *fn, const char *name)
{
	LLVMTypeRef ptr = em->types[LTYPE_PTR];
	LLVMValueRef func = gpu_declare_kernel(em, name, 0, &ptr, 1);
	(void)fn;
	LLVMSetLinkage(func, LLVMInternalLinkage);
	return func;
}

/* A BLOCK array: the block's shared memory from the thread, at the array's offset. */
static LLVMValueRef sim_block_array(Emitter *em, uint32_t id)
{
	LLVMValueRef offset = llvm_const_i64(em, (int64_t)em->block_offset[id]);
	return LLVMBuildGEP2(em->b, em->types[LTYPE_I8], thread_field(em, THREAD_SHARED, em->types[LTYPE_PTR]), &offset, 1, "");
}

/* GPU_INDEX: thread->index[which]. */
static LLVMValueRef sim_gpu_index(Emitter *em, LGpuIndex which)
{
	LLVMValueRef at[3] = {llvm_const_i32(em, 0), llvm_const_i32(em, THREAD_INDEX), llvm_const_i32(em, which)};
	LLVMValueRef slot = LLVMBuildInBoundsGEP2(em->b, thread_type(em), thread(em), at, 3, "");
	return LLVMBuildLoad2(em->b, em->types[LTYPE_I64], slot, "");
}

/* BARRIER: thread->barrier(thread, site). */
static void sim_barrier(Emitter *em, uint32_t site)
{
	LLVMTypeRef params[2] = {em->types[LTYPE_PTR], em->types[LTYPE_I32]};
	LLVMValueRef args[2] = {thread(em), llvm_const_i32(em, site)};
	LLVMBuildCall2(em->b, LLVMFunctionType(em->types[LTYPE_VOID], params, 2, 0),
	               thread_field(em, THREAD_BARRIER, em->types[LTYPE_PTR]), args, 2, "");
}

/* SHUFFLE: thread->shuffle(thread, v's bits zero-extended, delta, site), truncated back to v's type. */
static LLVMValueRef sim_shuffle(Emitter *em, LLVMValueRef v, LLVMValueRef delta, uint32_t site)
{
	LLVMTypeRef type = LLVMTypeOf(v), i64 = em->types[LTYPE_I64];
	LLVMTypeRef params[4] = {em->types[LTYPE_PTR], i64, em->types[LTYPE_I32], em->types[LTYPE_I32]};
	unsigned width = LLVMGetTypeKind(type) == LLVMFloatTypeKind ? 32 : LLVMGetTypeKind(type) == LLVMDoubleTypeKind ? 64
	                                                                                                                : LLVMGetIntTypeWidth(type);
	LLVMTypeRef int_type = LLVMIntTypeInContext(em->ctx, width);
	LLVMValueRef bits = LLVMBuildZExt(em->b, LLVMBuildBitCast(em->b, v, int_type, ""), i64, "");
	LLVMValueRef args[4] = {thread(em), bits, delta, llvm_const_i32(em, site)}, got;
	got = LLVMBuildCall2(em->b, LLVMFunctionType(i64, params, 4, 0), thread_field(em, THREAD_SHUFFLE, em->types[LTYPE_PTR]),
	                     args, 4, "");
	return LLVMBuildBitCast(em->b, LLVMBuildTrunc(em->b, got, int_type, ""), type, "");
}

/* A profiled access: thread->access(thread, address, bytes, site). */
static void sim_access(Emitter *em, LLVMValueRef address, unsigned bytes, uint32_t site)
{
	LLVMTypeRef i32 = em->types[LTYPE_I32], ptr = em->types[LTYPE_PTR];
	LLVMTypeRef params[4] = {ptr, ptr, i32, i32};
	LLVMValueRef args[4] = {thread(em), address, llvm_const_i32(em, bytes), llvm_const_i32(em, site)};
	LLVMBuildCall2(em->b, LLVMFunctionType(LLVMVoidTypeInContext(em->ctx), params, 4, 0),
	               thread_field(em, THREAD_ACCESS, ptr), args, 4, "");
}

static const TargetHooks sim_hooks = {
	.kernel = sim_kernel,
	.buffer = gpu_buffer,
	.block_array = sim_block_array,
	.gpu_index = sim_gpu_index,
	.barrier = sim_barrier,
	.shuffle = sim_shuffle,
	.access = sim_access,
};

const GpuTarget gpu_sim = {
	.device = TARGET_DEVICE_GPUSIM,
	.kind = GROVE_DEVICE_GPUSIM,
	.name = "gpusim",
	.code_emit = TARGET_EMIT_SHARED,
	.hooks = &sim_hooks,
};
