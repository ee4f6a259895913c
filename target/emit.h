/* Internal to target/: the steps of emitting an artifact, shared by host artifacts (host.c) and GPU ones (gpu.c). */
#ifndef GROVE_TARGET_EMIT_H
#define GROVE_TARGET_EMIT_H

#include <llvm-c/TargetMachine.h>

#include "target/link.h"
#include "target/machine.h"
#include "target/target.h"

/* Run the standard LLVM pipeline for the optimisation level (a phase for timer). */
bool target_optimise(LLVMModuleRef mod, LLVMTargetMachineRef tm, int level, PhaseTimer *timer, Error *e);

/* Write size bytes to the file at path; false with a message (a full disk, a size limit) if they do not all get there. */
bool target_write_bytes(const char *path, const char *bytes, size_t size, Error *e);

/*
 * Write the machine code of mod to path as an object or assembly file. It goes through
 * memory: LLVM's own file streams end the process on a write error (a full disk).
 */
bool target_write_code(LLVMTargetMachineRef tm, LLVMModuleRef mod, const char *path, LLVMCodeGenFileType kind, Error *e);

/*
 * Run the linker argv[0] with argv and wait; false with a message unless it exits with
 * 0, or with *spawn_error (an errno) not 0 and no message when it could not be started:
 * the caller knows what to install.
 */
bool target_run_linker(char *const argv[], const char *what, int *spawn_error, Error *e);
/* Define GROVE_CPU_FEATURES_SYMBOL (rt/artifact.h) in mod, exported: features (target_cpu_features's, or "" for none). */
void target_add_cpu_features(LLVMModuleRef mod, const char *features);
/* path as a linker's argument (malloc'ed): "./" before a relative path beginning with '-', taken for an option otherwise. */
char *target_path_argument(const char *path);

/*
 * Write m's buffers to path as an ELF relocatable object for x86-64 or (aarch64) AArch64:
 * the definitions of the hidden symbols (target_buffer_symbol) that target_build_module's
 * code declares with buffers apart (target/buffers.c).
 */
bool target_write_buffers(const LModule *m, const char *prefix, bool aarch64, const char *path, Error *e);
/* The same buffers as sections of grove's linker (target/link.h), their bytes read in place from m. */
void target_link_buffers(Linker *k, const LModule *m, const char *prefix);

/* Emit mod as an object to a temporary file beside path, then link it into the shared library path with p's linker. */
bool target_write_shared(LLVMTargetMachineRef tm, LLVMModuleRef mod, const TargetOptions *o, const TargetPlatform *p,
                         const char *path, Error *e);

/* target_check's part for GPU devices: the device, its architecture, what can be emitted for it. */
bool target_check_gpu(const TargetOptions *o, Error *e);

/* target_emit for a GPU module or a GPU device (target/gpu.c). */
bool target_emit_gpu(const LModule *m, const TargetOptions *o, const char *out_path, Error *e);

#endif
