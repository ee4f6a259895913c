/*
 * GPU artifacts. The kernels of a GPU module are translated for the device (NVPTX,
 * AMDGPU, or the host itself for the simulator), and the artifact is a host shared
 * library, linked and sealed as host artifacts are, whose grove_artifact points to a
 * constant GroveDevice: the device code as bytes (PTX text, an HSACO; none for the
 * simulator, whose kernels are functions of the library), the model buffers as one blob
 * and the kernel table with each kernel's launch.
 */
#include "target/emit.h"
#include "target/gpu.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const GpuTarget *const gpu_targets[] = {&gpu_sim, &gpu_nvptx, &gpu_amdgpu};

/* --emit's spellings, for messages. */
static const char *const emit_names[] = {
	[TARGET_EMIT_SHARED] = "so", [TARGET_EMIT_OBJ] = "obj", [TARGET_EMIT_ASM] = "asm",
	[TARGET_EMIT_LLVM] = "llvm", [TARGET_EMIT_PTX] = "ptx", [TARGET_EMIT_HSACO] = "hsaco",
};

static const GpuTarget *gpu_target(TargetDevice device)
{
	for (size_t i = 0; i < COUNT_OF(gpu_targets); i++)
		if (gpu_targets[i]->device == device)
			return gpu_targets[i];
	return NULL;
}

const char *target_gpu_arch_name(TargetDevice device, size_t i)
{
	const GpuTarget *t = gpu_target(device);
	return t && i < t->num_arches ? t->arches[i].name : NULL;
}

/* The architecture o asks of t (its default when none), or NULL with e listing those t knows. */
static const GpuArch *gpu_arch(const GpuTarget *t, const char *name, Error *e)
{
	char list[256] = "";
	if (!name)
		name = t->default_arch;
	for (size_t i = 0; i < t->num_arches; i++)
		if (!strcmp(t->arches[i].name, name))
			return &t->arches[i];
	for (size_t i = 0; i < t->num_arches; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? " " : "", t->arches[i].name);
	error_set(e, "--target %s:%s: unknown GPU architecture (grove knows %s; default %s)", t->name, name, list, t->default_arch);
	return NULL;
}

bool target_check_gpu(const TargetOptions *o, Error *e)
{
	const GpuTarget *t = gpu_target(o->device);
	if (!t)
		return error_set(e, "unknown device %d", (int)o->device);
	if (!t->num_arches && o->gpu_arch)
		return error_set(e, "--target %s:%s: the simulator runs on the host and has no GPU architecture", t->name, o->gpu_arch);
	if (t->num_arches && !gpu_arch(t, o->gpu_arch, e))
		return false;
	if (o->emit != TARGET_EMIT_SHARED && o->emit != TARGET_EMIT_LLVM && o->emit != t->code_emit) {
		if (t->code_emit == TARGET_EMIT_SHARED)
			return error_set(e, "--emit %s: a %s artifact is a shared library (so) or LLVM IR (llvm)", emit_names[o->emit], t->name);
		return error_set(e, "--emit %s: a %s artifact is a shared library (so), its device code (%s) or LLVM IR (llvm)",
		                 emit_names[o->emit], t->name, emit_names[t->code_emit]);
	}
	return true;
}

/* A target machine for device t's architecture. */
static LLVMTargetMachineRef device_machine(const GpuTarget *t, const GpuArch *arch, int opt_level, Error *e)
{
	static const LLVMCodeGenOptLevel levels[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
	                                             LLVMCodeGenLevelAggressive};
	LLVMTargetRef target;
	LLVMTargetMachineRef tm;
	char *message = NULL;
	target_llvm_options();
	t->init();
	if (LLVMGetTargetFromTriple(t->triple, &target, &message)) {
		error_set(e, "no LLVM target for %s: %s", t->triple, message);
		LLVMDisposeMessage(message);
		return NULL;
	}
	tm = LLVMCreateTargetMachine(target, t->triple, arch->name, arch->features, levels[opt_level], LLVMRelocPIC,
	                             LLVMCodeModelDefault);
	if (!tm)
		error_set(e, "cannot create an LLVM target machine for %s (%s)", t->triple, arch->name);
	return tm;
}

/* Give mod tm's triple and data layout. */
static void set_target(LLVMModuleRef mod, LLVMTargetMachineRef tm)
{
	char *triple = LLVMGetTargetMachineTriple(tm);
	LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
	LLVMSetTarget(mod, triple);
	LLVMSetModuleDataLayout(mod, layout);
	LLVMDisposeTargetData(layout);
	LLVMDisposeMessage(triple);
}

/* Verify mod; false with a message when the generated IR is broken (a bug of grove). */
static bool verify(LLVMModuleRef mod, PhaseTimer *timer, Error *e)
{
	char *message = NULL;
	bool ok = !LLVMVerifyModule(mod, LLVMReturnStatusAction, &message);
	phase_end(timer, "llvm-verify");
	if (!ok)
		error_set(e, "internal error: the generated LLVM IR does not verify: %s", message);
	LLVMDisposeMessage(message);
	return ok;
}

/* A private constant global of bytes, aligned to align; a NUL after them when nul. */
static LLVMValueRef byte_global(Emitter *em, const char *bytes, size_t size, bool nul, unsigned align)
{
	LLVMValueRef init, global;
	if (size + nul > UINT32_MAX)
		die("a GPU artifact's constant of %zu bytes is larger than 4 GiB", size);
	init = LLVMConstStringInContext(em->ctx, size ? bytes : "", (unsigned)size, !nul);
	global = llvm_constant_global(em, LLVMTypeOf(init), init);
	LLVMSetAlignment(global, align);
	return global;
}

/* The model blob: every buffer at lir_buffer_offset. */
static LLVMValueRef model_blob(Emitter *em)
{
	const LModule *m = em->m;
	uint64_t size = lir_buffer_offset(m, m->num_buffers);
	char *blob = xcalloc(size ? size : 1, 1);
	LLVMValueRef global;
	for (uint32_t k = 0; k < m->num_buffers; k++)
		if (m->buffers[k].count)
			memcpy(blob + lir_buffer_offset(m, k), m->buffers[k].data, m->buffers[k].count * lir_type_size(m->buffers[k].elem));
	global = byte_global(em, blob, size, false, LIR_MODEL_ALIGN);
	free(blob);
	return global;
}

/* A GroveLaunchDim[3] of d. */
static LLVMValueRef launch_dims(Emitter *em, LLVMTypeRef dim_type, const LDim *d)
{
	LLVMValueRef dims[3];
	for (int k = 0; k < 3; k++) {
		LLVMValueRef fields[2] = {llvm_const_i64(em, d[k].count), llvm_const_i64(em, d[k].rows_per)};
		dims[k] = LLVMConstNamedStruct(dim_type, fields, 2);
	}
	return LLVMConstArray(dim_type, dims, 3);
}

/* The kernel table: a GroveKernel per kernel of m in order, sim[i] its host function (gpusim) or NULL. */
static LLVMValueRef kernel_table(Emitter *em, const LLVMValueRef *sim)
{
	const LModule *m = em->m;
	LLVMTypeRef i32 = em->types[LTYPE_I32], i64 = em->types[LTYPE_I64], ptr = em->types[LTYPE_PTR];
	LLVMTypeRef dim_fields[2] = {i64, i64}, dim_type = LLVMStructTypeInContext(em->ctx, dim_fields, 2, 0);
	LLVMTypeRef fields[6] = {ptr, i32, i32, LLVMArrayType(dim_type, 3), LLVMArrayType(dim_type, 3), ptr};
	LLVMTypeRef type = LLVMStructTypeInContext(em->ctx, fields, 6, 0);
	LLVMValueRef *kernels = xcalloc(m->num_funcs + 1, sizeof *kernels), table;
	for (uint32_t i = 0; i < m->num_funcs; i++) {
		const LFunc *fn = m->funcs[i];
		char name[128];
		uint64_t shared = lir_block_memory(fn, NULL);
		snprintf(name, sizeof name, "%s_%s", em->prefix, fn->name);
		if (shared > UINT32_MAX)
			die("kernel %s has %llu bytes of shared memory", fn->name, (unsigned long long)shared);
		LLVMValueRef init[6] = {byte_global(em, name, strlen(name), true, 1), LLVMConstInt(i32, fn->entry, 0),
		                        LLVMConstInt(i32, shared, 0), launch_dims(em, dim_type, fn->launch.grid),
		                        launch_dims(em, dim_type, fn->launch.block), sim ? sim[i] : LLVMConstPointerNull(ptr)};
		kernels[i] = LLVMConstNamedStruct(type, init, 6);
	}
	table = llvm_constant_global(em, LLVMArrayType(type, m->num_funcs), LLVMConstArray(type, kernels, m->num_funcs));
	free(kernels);
	return table;
}

/* The GroveDevice of the artifact: t's kind, the architecture, the code (NULL: none), the model blob, the kernels. */
static LLVMValueRef device_descriptor(Emitter *em, const GpuTarget *t, const char *arch, const char *code, size_t code_size,
                                      const LLVMValueRef *sim)
{
	LLVMTypeRef i32 = em->types[LTYPE_I32], i64 = em->types[LTYPE_I64], ptr = em->types[LTYPE_PTR];
	LLVMTypeRef arch_type = LLVMArrayType(em->types[LTYPE_I8], sizeof ((GroveDevice *)0)->arch);
	LLVMTypeRef fields[8] = {i32, arch_type, ptr, i64, ptr, i64, i32, ptr};
	LLVMTypeRef type = LLVMStructTypeInContext(em->ctx, fields, 8, 0);
	char arch_bytes[sizeof ((GroveDevice *)0)->arch] = "";
	LLVMValueRef init[8];
	snprintf(arch_bytes, sizeof arch_bytes, "%s", arch);
	init[0] = LLVMConstInt(i32, t->kind, 0);
	init[1] = LLVMConstStringInContext(em->ctx, arch_bytes, sizeof arch_bytes, 1);
	/* PTX is text: a NUL after it, not counted. An HSACO is loaded from memory: aligned as its ELF header wants. */
	init[2] = code ? byte_global(em, code, code_size, t->code_emit == TARGET_EMIT_PTX, 64) : LLVMConstPointerNull(ptr);
	init[3] = LLVMConstInt(i64, code ? code_size : 0, 0);
	/* A model without buffers (the code representation's, all in the kernels) has no blob: a null pointer, as the runtime checks. */
	init[5] = LLVMConstInt(i64, lir_buffer_offset(em->m, em->m->num_buffers), 0);
	init[4] = LLVMConstIntGetZExtValue(init[5]) ? model_blob(em) : LLVMConstPointerNull(ptr);
	init[6] = LLVMConstInt(i32, em->m->num_funcs, 0);
	init[7] = kernel_table(em, sim);
	return llvm_constant_global(em, type, LLVMConstNamedStruct(type, init, 8));
}

/* Write what is emitted to a temporary beside out_path, then rename it over out_path: a failed compile leaves nothing half-written. */
static bool write_output(const char *out_path, bool (*write)(const char *path, void *arg, Error *e), void *arg,
                         bool executable, Error *e)
{
	char *temp = target_output_temporary(out_path, ".tmp", e);
	return temp && target_output_finish(temp, write(temp, arg, e), out_path, executable, e);
}

/* What write_output's writers need. */
typedef struct Output {
	LLVMModuleRef mod;
	LLVMTargetMachineRef tm;
	const TargetOptions *o;
	const TargetPlatform *platform;
	const char *bytes;
	size_t size;
} Output;

static bool write_ir(const char *path, void *arg, Error *e)
{
	char *text = LLVMPrintModuleToString(((Output *)arg)->mod);
	bool ok = target_write_bytes(path, text, strlen(text), e);
	LLVMDisposeMessage(text);
	return ok;
}

static bool write_code_bytes(const char *path, void *arg, Error *e)
{
	return target_write_bytes(path, ((Output *)arg)->bytes, ((Output *)arg)->size, e);
}

static bool write_library(const char *path, void *arg, Error *e)
{
	Output *out = arg;
	return target_write_shared(out->tm, out->mod, out->o, out->platform, path, e) && target_seal(path, e);
}

/*
 * The kernels of m translated for t into a new module of ctx (or, for the simulator,
 * into host, the artifact's own module); then, for a real device, optimised and, unless
 * its IR is what is wanted, compiled into *code.
 */
static bool build_device(const LModule *m, const GpuTarget *t, const TargetOptions *o, LLVMContextRef ctx, LLVMModuleRef host,
                         LLVMValueRef *kernels, LLVMModuleRef *device, char **code, size_t *code_size, const char *out_path,
                         Error *e)
{
	const char *prefix = o->prefix ? o->prefix : "grove_model";
	LLVMTargetMachineRef tm = NULL;
	const GpuArch *arch = NULL;
	Emitter em;
	bool ok;

	if (t->triple) {
		if (!(arch = gpu_arch(t, o->gpu_arch, e)) || !(tm = device_machine(t, arch, o->opt_level, e)))
			return false;
		*device = LLVMModuleCreateWithNameInContext(prefix, ctx);
		set_target(*device, tm);
	} else {
		*device = host;
	}
	llvm_emitter_init(&em, ctx, *device, m, t->hooks, prefix);
	em.profile = o->profile;
	for (uint32_t i = 0; i < m->num_funcs; i++)
		kernels[i] = llvm_emit_kernel(&em, m->funcs[i]);
	llvm_emitter_dispose(&em);
	phase_end(o->timer, "llvm-build");
	if (!t->triple)
		return true;
	ok = verify(*device, o->timer, e) && target_optimise(*device, tm, o->opt_level, o->timer, e) &&
	     (o->emit == TARGET_EMIT_LLVM || t->code(tm, *device, out_path, code, code_size, e));
	phase_end(o->timer, "codegen");
	LLVMDisposeTargetMachine(tm);
	return ok;
}

bool target_emit_gpu(const LModule *m, const TargetOptions *o, const char *out_path, Error *e)
{
	const GpuTarget *t = gpu_target(o->device);
	const char *prefix = o->prefix ? o->prefix : "grove_model";
	TargetPlatform platform;
	LLVMTargetMachineRef tm;
	LLVMContextRef ctx;
	LLVMModuleRef host, device = NULL;
	LLVMValueRef *kernels;
	Output out = {.o = o, .platform = &platform};
	char *code = NULL;
	size_t code_size = 0;
	bool ok;

	if (!t)
		return error_set(e, "a GPU module (LIR of kernels) needs a GPU device: --target cuda, rocm or gpusim");
	if (!m->gpu)
		return error_set(e, "--target %s: the LIR is a host module (no kernels); lower the model for a GPU", t->name);
	if (!target_check(o, e) || !target_platform(o->triple, &platform, e) ||
	    !(tm = target_machine_create(&platform, o->cpu, o->opt_level, e)))
		return false;

	ctx = LLVMContextCreate();
	host = LLVMModuleCreateWithNameInContext(prefix, ctx);
	set_target(host, tm);
	kernels = xcalloc(m->num_funcs + 1, sizeof *kernels);
	ok = build_device(m, t, o, ctx, host, kernels, &device, &code, &code_size, out_path, e);
	if (ok && device != host && o->emit != TARGET_EMIT_SHARED) {
		/* The device's own output: its IR or its code alone. */
		out.mod = device;
		out.bytes = code;
		out.size = code_size;
		ok = write_output(out_path, o->emit == TARGET_EMIT_LLVM ? write_ir : write_code_bytes, &out, false, e);
	} else if (ok) {
		Emitter em;
		llvm_emitter_init(&em, ctx, host, m, NULL, prefix);
		llvm_emit_descriptor(&em, NULL, NULL,
		                     device_descriptor(&em, t, t->triple ? (o->gpu_arch ? o->gpu_arch : t->default_arch) : "", code,
		                                       code_size, t->triple ? NULL : kernels),
		                     GROVE_ARTIFACT_SYMBOL);
		llvm_emitter_dispose(&em);
		if (o->emit == TARGET_EMIT_SHARED) {
			/*
			 * The simulator's kernels are the library's own code, compiled for o->cpu as a host
			 * artifact's are; a real device's library holds data alone (its code runs on the GPU),
			 * so it needs nothing of the CPU.
			 */
			char *features = t->triple ? xstrdup("") : target_cpu_features(platform.triple, o->cpu);
			target_add_cpu_features(host, features);
			free(features);
		}
		out.mod = host;
		out.tm = tm;
		ok = verify(host, o->timer, e) && target_optimise(host, tm, o->opt_level, o->timer, e) &&
		     write_output(out_path, o->emit == TARGET_EMIT_LLVM ? write_ir : write_library, &out,
		                  o->emit != TARGET_EMIT_LLVM, e);
		phase_end(o->timer, o->emit == TARGET_EMIT_LLVM ? "print" : "seal");
	}
	free(code);
	free(kernels);
	if (device && device != host)
		LLVMDisposeModule(device);
	LLVMDisposeModule(host);
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	return ok;
}
