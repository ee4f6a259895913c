/*
 * Internal to target/: the GPU devices (one GpuTarget each: nvptx.c, amdgpu.c,
 * gpusim.c) and what their kernels share (kernel.c). A GPU artifact is a host shared
 * library whose GroveDevice holds the device code, the model blob and the kernel table
 * (gpu.c).
 */
#ifndef GROVE_TARGET_GPU_H
#define GROVE_TARGET_GPU_H

#include <llvm-c/TargetMachine.h>

#include "target/llvm.h"
#include "target/target.h"

/* An architecture of a device: its name (the LLVM CPU) and the LLVM features it needs (NVPTX: the PTX ISA). */
typedef struct GpuArch {
	const char *name;
	const char *features;
} GpuArch;

typedef struct GpuTarget {
	TargetDevice device;
	uint32_t kind;               /* GROVE_DEVICE_* */
	const char *name;            /* as --target spells it: cuda, rocm, gpusim */
	const char *triple;          /* the device code's LLVM triple; NULL: the host artifact's own (gpusim) */
	const GpuArch *arches;       /* the architectures accepted (none for gpusim) */
	size_t num_arches;
	const char *default_arch;
	TargetEmit code_emit;        /* --emit of the device code alone (ptx, hsaco); TARGET_EMIT_SHARED: none */
	const TargetHooks *hooks;
	void (*init)(void);          /* registers the LLVM target (NULL: the host's, registered already) */
	/*
	 * The device code of mod (verified, optimised for tm) into *code (malloc'ed, *size
	 * bytes; PTX with a NUL after them); temporary files go beside out_path.
	 */
	bool (*code)(LLVMTargetMachineRef tm, LLVMModuleRef mod, const char *out_path, char **code, size_t *size, Error *e);
} GpuTarget;

extern const GpuTarget gpu_nvptx, gpu_amdgpu, gpu_sim;

/*
 * Declare kernel fn called name: lir_kernel_params, their pointers in address space
 * ptr_space, then the extra parameters; nounwind. rows and model, which kernels only
 * read, are noalias; out and the workspace are not: threads meet in them across
 * barriers, which noalias would let LLVM move loads and stores over.
 */
LLVMValueRef gpu_declare_kernel(Emitter *em, const char *name, unsigned ptr_space, LLVMTypeRef *extra, unsigned num_extra);
/* BUFFER k in a kernel: the model parameter + lir_buffer_offset(m, k) bytes. */
LLVMValueRef gpu_buffer(Emitter *em, uint32_t k);
/* A BLOCK LOCAL_ARRAY as a global in address space 3 (shared, LDS), as a generic pointer. */
LLVMValueRef gpu_shared_array(Emitter *em, uint32_t id);
/* EXP and LOG computed in the kernel (no libm on a GPU): in double, rounded back for f32, accurate to about an ulp of double. */
LLVMValueRef gpu_math(Emitter *em, LOp op, LLVMValueRef x);

#endif
