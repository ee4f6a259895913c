/*
 * NVIDIA GPUs through LLVM's NVPTX back end: kernels are external functions marked in
 * nvvm.annotations, the thread's place comes from the PTX special registers, shared
 * memory is address space 3, and the device code is the PTX text.
 */
#include "target/gpu.h"

#include <llvm-c/Target.h>

#include <stdlib.h>
#include <string.h>

/* Add the annotation {func, key, value} to nvvm.annotations. */
static void annotate(Emitter *em, LLVMValueRef func, const char *key, uint32_t value)
{
	LLVMMetadataRef md[3] = {LLVMValueAsMetadata(func), LLVMMDStringInContext2(em->ctx, key, strlen(key)),
	                         LLVMValueAsMetadata(llvm_const_i32(em, value))};
	LLVMAddNamedMetadataOperand(em->mod, "nvvm.annotations", LLVMMetadataAsValue(em->ctx, LLVMMDNodeInContext2(em->ctx, md, 3)));
}

/* A kernel, with the block's extents as its maximum (ptxas budgets registers for them). */
static LLVMValueRef nvptx_kernel(Emitter *em, const LFunc *fn, const char *name)
{
	static const char *const maxntid[3] = {"maxntidx", "maxntidy", "maxntidz"};
	LLVMValueRef func = gpu_declare_kernel(em, name, 0, NULL, 0);
	annotate(em, func, "kernel", 1);
	for (int k = 0; k < 3; k++)
		if (!fn->launch.block[k].rows_per)
			annotate(em, func, maxntid[k], (uint32_t)fn->launch.block[k].count);
	return func;
}

/* GPU_INDEX: a special register (tid, ctaid, ntid, nctaid), zero-extended. */
static LLVMValueRef nvptx_gpu_index(Emitter *em, LGpuIndex which)
{
	static const char *const registers[4] = {"tid", "ctaid", "ntid", "nctaid"};
	char name[64];
	snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s.%c", registers[which / 3], 'x' + which % 3);
	return LLVMBuildZExt(em->b, llvm_call_intrinsic(em, name, NULL, NULL, 0), em->types[LTYPE_I64], "");
}

static void nvptx_barrier(Emitter *em, uint32_t site)
{
	(void)site;
	llvm_call_intrinsic(em, "llvm.nvvm.barrier0", NULL, NULL, 0);
}

/* shfl.sync.down of a 32-bit v (i32 or f32) over the full warp; clamp 0x1f keeps a lane past the end its own value. */
static LLVMValueRef shuffle32(Emitter *em, LLVMValueRef v, LLVMValueRef delta)
{
	bool fl = LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMFloatTypeKind;
	LLVMValueRef args[4] = {llvm_const_i32(em, 0xffffffffu), v, delta, llvm_const_i32(em, 0x1f)};
	return llvm_call_intrinsic(em, fl ? "llvm.nvvm.shfl.sync.down.f32" : "llvm.nvvm.shfl.sync.down.i32", NULL, args, 4);
}

/* SHUFFLE: 32-bit values in one shfl, 64-bit ones as their two halves. */
static LLVMValueRef nvptx_shuffle(Emitter *em, LLVMValueRef v, LLVMValueRef delta, uint32_t site)
{
	LLVMTypeRef type = LLVMTypeOf(v), i32 = em->types[LTYPE_I32], i64 = em->types[LTYPE_I64];
	LLVMValueRef bits, lo, hi;
	(void)site;
	if (type == i32 || type == em->types[LTYPE_F32])
		return shuffle32(em, v, delta);
	bits = LLVMBuildBitCast(em->b, v, i64, "");
	lo = shuffle32(em, LLVMBuildTrunc(em->b, bits, i32, ""), delta);
	hi = shuffle32(em, LLVMBuildTrunc(em->b, LLVMBuildLShr(em->b, bits, LLVMConstInt(i64, 32, 0), ""), i32, ""), delta);
	bits = LLVMBuildOr(em->b, LLVMBuildZExt(em->b, lo, i64, ""),
	                   LLVMBuildShl(em->b, LLVMBuildZExt(em->b, hi, i64, ""), LLVMConstInt(i64, 32, 0), ""), "");
	return LLVMBuildBitCast(em->b, bits, type, "");
}

/* The PTX text of mod, NUL-terminated. */
static bool nvptx_code(LLVMTargetMachineRef tm, LLVMModuleRef mod, const char *out_path, char **code, size_t *size, Error *e)
{
	char *message = NULL;
	LLVMMemoryBufferRef ptx;
	(void)out_path;
	if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &message, &ptx)) {
		error_set(e, "cannot generate PTX: %s", message);
		LLVMDisposeMessage(message);
		return false;
	}
	*size = LLVMGetBufferSize(ptx);
	*code = xmalloc(*size + 1);
	memcpy(*code, LLVMGetBufferStart(ptx), *size);
	(*code)[*size] = 0;
	LLVMDisposeMemoryBuffer(ptx);
	return true;
}

static void nvptx_init(void)
{
	LLVMInitializeNVPTXTargetInfo();
	LLVMInitializeNVPTXTarget();
	LLVMInitializeNVPTXTargetMC();
	LLVMInitializeNVPTXAsmPrinter();
}

static const TargetHooks nvptx_hooks = {
	.kernel = nvptx_kernel,
	.buffer = gpu_buffer,
	.block_array = gpu_shared_array,
	.gpu_index = nvptx_gpu_index,
	.barrier = nvptx_barrier,
	.shuffle = nvptx_shuffle,
	.math = gpu_math,
};

/* Each with the oldest PTX ISA that knows it (LLVM 16 defaults to one too old for the newer ones). */
static const GpuArch nvptx_arches[] = {
	{"sm_70", "+ptx60"}, {"sm_75", "+ptx63"}, {"sm_80", "+ptx70"}, {"sm_86", "+ptx71"}, {"sm_89", "+ptx78"}, {"sm_90", "+ptx78"},
};

const GpuTarget gpu_nvptx = {
	.device = TARGET_DEVICE_CUDA,
	.kind = GROVE_DEVICE_CUDA,
	.name = "cuda",
	.triple = "nvptx64-nvidia-cuda",
	.arches = nvptx_arches,
	.num_arches = COUNT_OF(nvptx_arches),
	.default_arch = "sm_80",
	.code_emit = TARGET_EMIT_PTX,
	.hooks = &nvptx_hooks,
	.init = nvptx_init,
	.code = nvptx_code,
};
