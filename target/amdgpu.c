/*
 * AMD GPUs through LLVM's AMDGPU back end: kernels in the amdgpu_kernel calling
 * convention, the thread's place from the work-item and work-group ids and the dispatch
 * packet, shared memory in LDS (address space 3), and an object linked by ld.lld into
 * an HSACO code object.
 */
#include "target/gpu.h"
#include "target/emit.h"

#include <llvm-c/IRReader.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The linker of HSACOs (Debian's lld-16). */
#define LD_LLD "ld.lld-16"

enum { GLOBAL_SPACE = 1, CONSTANT_SPACE = 4 };

/*
 * A kernel: its pointers in the global address space, as HIP passes them (the code
 * object's metadata says global_buffer, and loads through them need no flat
 * instructions once InferAddressSpaces follows the casts in amdgpu_param); the block's
 * size as the flat work-group size, which the register allocator budgets for.
 */
static LLVMValueRef amdgpu_kernel(Emitter *em, const LFunc *fn, const char *name)
{
	LLVMValueRef func = gpu_declare_kernel(em, name, GLOBAL_SPACE, NULL, 0);
	int64_t threads = 1;
	char size[32];
	for (int k = 0; k < 3; k++)
		threads *= fn->launch.block[k].count;
	snprintf(size, sizeof size, "1,%lld", (long long)threads);
	LLVMSetFunctionCallConv(func, LLVMAMDGPUKERNELCallConv);
	LLVMAddAttributeAtIndex(func, LLVMAttributeFunctionIndex,
	                        LLVMCreateStringAttribute(em->ctx, "amdgpu-flat-work-group-size", 27, size, (unsigned)strlen(size)));
	return func;
}

/* A kernel's pointer parameters as the generic pointers of LIR. */
static LLVMValueRef amdgpu_param(Emitter *em, unsigned i)
{
	LLVMValueRef p = LLVMGetParam(em->func, i);
	return lir_kernel_params[i] == LTYPE_PTR ? LLVMBuildAddrSpaceCast(em->b, p, em->types[LTYPE_PTR], "") : p;
}

/* An i32 intrinsic of no operands (llvm.amdgcn.workitem.id.x, ...), zero-extended. */
static LLVMValueRef id(Emitter *em, const char *name)
{
	return LLVMBuildZExt(em->b, llvm_call_intrinsic(em, name, NULL, NULL, 0), em->types[LTYPE_I64], "");
}

/* A field of the dispatch packet (hsa_kernel_dispatch_packet_t) of type at byte offset, zero-extended. */
static LLVMValueRef packet_field(Emitter *em, LLVMTypeRef type, int64_t offset)
{
	LLVMValueRef packet = llvm_call_intrinsic(em, "llvm.amdgcn.dispatch.ptr", NULL, NULL, 0), at = llvm_const_i64(em, offset);
	LLVMValueRef field = LLVMBuildLoad2(em->b, type, LLVMBuildGEP2(em->b, em->types[LTYPE_I8], packet, &at, 1, ""), "");
	LLVMSetAlignment(field, (unsigned)(LLVMGetIntTypeWidth(type) / 8));
	/* The packet does not change while the kernel runs. */
	LLVMSetMetadata(field, LLVMGetMDKindIDInContext(em->ctx, "invariant.load", 14), LLVMMDNodeInContext(em->ctx, NULL, 0));
	return LLVMBuildZExt(em->b, field, em->types[LTYPE_I64], "");
}

/*
 * GPU_INDEX: the work-item and work-group ids; blockDim is the packet's
 * workgroup_size (u16 at 4, 6, 8), gridDim its grid_size (u32 at 12, 16, 20), which HSA
 * counts in work-items, divided by the former.
 */
static LLVMValueRef amdgpu_gpu_index(Emitter *em, LGpuIndex which)
{
	char name[64];
	int axis = which % 3;
	LLVMValueRef block;
	if (which <= LGPU_BLOCK_Z) {
		snprintf(name, sizeof name, "llvm.amdgcn.%s.id.%c", which <= LGPU_THREAD_Z ? "workitem" : "workgroup", 'x' + axis);
		return id(em, name);
	}
	block = packet_field(em, LLVMInt16TypeInContext(em->ctx), 4 + 2 * axis);
	if (which <= LGPU_BLOCK_DIM_Z)
		return block;
	return LLVMBuildUDiv(em->b, packet_field(em, em->types[LTYPE_I32], 12 + 4 * axis), block, "");
}

/*
 * The barrier with the fences that make the block's writes visible at it. The C API of
 * LLVM 16 cannot give a fence a sync scope (a system-wide fence would flush caches), so
 * the function is parsed from IR text and linked into the module once.
 */
static const char barrier_ir[] =
	"define void @grove.barrier() #0 {\n"
	"  fence syncscope(\"workgroup\") release\n"
	"  call void @llvm.amdgcn.s.barrier()\n"
	"  fence syncscope(\"workgroup\") acquire\n"
	"  ret void\n"
	"}\n"
	"declare void @llvm.amdgcn.s.barrier() #1\n"
	"attributes #0 = { alwaysinline convergent nounwind }\n"
	"attributes #1 = { convergent nounwind willreturn }\n";

static void amdgpu_barrier(Emitter *em, uint32_t site)
{
	LLVMValueRef f = LLVMGetNamedFunction(em->mod, "grove.barrier");
	(void)site;
	if (!f) {
		LLVMMemoryBufferRef text = LLVMCreateMemoryBufferWithMemoryRangeCopy(barrier_ir, sizeof barrier_ir - 1, "barrier");
		LLVMModuleRef helper;
		char *message = NULL;
		if (LLVMParseIRInContext(em->ctx, text, &helper, &message))
			die("the barrier's IR does not parse: %s", message);
		LLVMSetTarget(helper, LLVMGetTarget(em->mod));
		LLVMSetDataLayout(helper, LLVMGetDataLayoutStr(em->mod));
		if (LLVMLinkModules2(em->mod, helper))
			die("cannot link the barrier into the module");
		/* Linked as an external definition (the linker drops unreferenced internal ones), then made internal. */
		f = LLVMGetNamedFunction(em->mod, "grove.barrier");
		LLVMSetLinkage(f, LLVMInternalLinkage);
	}
	LLVMBuildCall2(em->b, LLVMGlobalGetValueType(f), f, NULL, 0, "");
}

/*
 * SHUFFLE within groups of GROVE_WARP lanes (each half of a 64-wide wavefront): every
 * lane reads the 32 bits of lane + delta through ds_bpermute, or its own where that
 * leaves its group; 64-bit values as two halves.
 */
static LLVMValueRef amdgpu_shuffle(Emitter *em, LLVMValueRef v, LLVMValueRef delta, uint32_t site)
{
	LLVMTypeRef type = LLVMTypeOf(v), i32 = em->types[LTYPE_I32], i64 = em->types[LTYPE_I64];
	LLVMValueRef lo_args[2] = {llvm_const_i32(em, 0xffffffffu), llvm_const_i32(em, 0)}, hi_args[2], lane, source, address;
	bool wide = type == i64 || type == em->types[LTYPE_F64];
	LLVMValueRef bits = LLVMBuildBitCast(em->b, v, wide ? i64 : i32, ""), halves[2];
	(void)site;
	hi_args[0] = lo_args[0];
	hi_args[1] = llvm_call_intrinsic(em, "llvm.amdgcn.mbcnt.lo", NULL, lo_args, 2);
	lane = llvm_call_intrinsic(em, "llvm.amdgcn.mbcnt.hi", NULL, hi_args, 2);
	source = LLVMBuildSelect(em->b,
	                         LLVMBuildICmp(em->b, LLVMIntULT,
	                                       LLVMBuildAdd(em->b, LLVMBuildAnd(em->b, lane, llvm_const_i32(em, GROVE_WARP - 1), ""), delta, ""),
	                                       llvm_const_i32(em, GROVE_WARP), ""),
	                         LLVMBuildAdd(em->b, lane, delta, ""), lane, "");
	address = LLVMBuildShl(em->b, source, llvm_const_i32(em, 2), "");
	for (int h = 0; h < (wide ? 2 : 1); h++) {
		LLVMValueRef half = wide ? LLVMBuildTrunc(em->b, LLVMBuildLShr(em->b, bits, LLVMConstInt(i64, 32 * (unsigned)h, 0), ""), i32, "")
		                         : bits;
		LLVMValueRef args[2] = {address, half};
		halves[h] = llvm_call_intrinsic(em, "llvm.amdgcn.ds.bpermute", NULL, args, 2);
	}
	if (wide)
		bits = LLVMBuildOr(em->b, LLVMBuildZExt(em->b, halves[0], i64, ""),
		                   LLVMBuildShl(em->b, LLVMBuildZExt(em->b, halves[1], i64, ""), LLVMConstInt(i64, 32, 0), ""), "");
	else
		bits = halves[0];
	return LLVMBuildBitCast(em->b, bits, type, "");
}

/* The whole file at path into *data (malloc'ed). */
static bool read_file(const char *path, char **data, size_t *size, Error *e)
{
	FILE *f = fopen(path, "rb");
	long n;
	bool ok;
	if (!f)
		return error_set(e, "%s: cannot read: %s", path, strerror(errno));
	ok = fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0;
	if (ok) {
		*size = (size_t)n;
		*data = xmalloc(*size + 1);
		ok = fread(*data, 1, *size, f) == *size;
		if (!ok)
			free(*data);
	}
	fclose(f);
	return ok || error_set(e, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));
}

/* The HSACO of mod: an object beside out_path, linked by ld.lld into a shared code object, read back. */
static bool amdgpu_code(LLVMTargetMachineRef tm, LLVMModuleRef mod, const char *out_path, char **code, size_t *size, Error *e)
{
	char *object = target_output_temporary(out_path, ".o", e);
	char *hsaco = object ? target_output_temporary(out_path, ".hsaco", e) : NULL;
	bool ok = false;
	if (hsaco && target_write_code(tm, mod, object, LLVMObjectFile, e)) {
		char *argv[] = {LD_LLD, "-shared", "-o", target_path_argument(hsaco), target_path_argument(object), NULL};
		int spawn_error;
		if (target_run_linker(argv, "the HSACO", &spawn_error, e))
			ok = read_file(hsaco, code, size, e);
		else if (spawn_error)
			error_set(e, "cannot run %s to link the HSACO: %s (install lld-16)", LD_LLD, strerror(spawn_error));
		free(argv[3]);
		free(argv[4]);
	}
	if (hsaco)
		temporary_drop(hsaco, false);
	if (object)
		temporary_drop(object, false);
	return ok;
}

static void amdgpu_init(void)
{
	LLVMInitializeAMDGPUTargetInfo();
	LLVMInitializeAMDGPUTarget();
	LLVMInitializeAMDGPUTargetMC();
	LLVMInitializeAMDGPUAsmPrinter();
}

static const TargetHooks amdgpu_hooks = {
	.kernel = amdgpu_kernel,
	.param = amdgpu_param,
	.buffer = gpu_buffer,
	.block_array = gpu_shared_array,
	.gpu_index = amdgpu_gpu_index,
	.barrier = amdgpu_barrier,
	.shuffle = amdgpu_shuffle,
	.math = gpu_math,
};

static const GpuArch amdgpu_arches[] = {{"gfx90a", ""}, {"gfx942", ""}, {"gfx1030", ""}, {"gfx1100", ""}};

const GpuTarget gpu_amdgpu = {
	.device = TARGET_DEVICE_ROCM,
	.kind = GROVE_DEVICE_ROCM,
	.name = "rocm",
	.triple = "amdgcn-amd-amdhsa",
	.arches = amdgpu_arches,
	.num_arches = COUNT_OF(amdgpu_arches),
	.default_arch = "gfx90a",
	.code_emit = TARGET_EMIT_HSACO,
	.hooks = &amdgpu_hooks,
	.init = amdgpu_init,
	.code = amdgpu_code,
};
