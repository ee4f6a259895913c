/* LIR -> LLVM IR through the LLVM-C API, optimisation, and emission of CPU artifacts (this host's or AArch64's). */
#ifndef GROVE_TARGET_TARGET_H
#define GROVE_TARGET_TARGET_H

#include "ir/lir.h"
#include "ir/mir.h"

#include <sys/types.h>

typedef enum TargetEmit {
	TARGET_EMIT_SHARED, /* shared library loadable by libgrove (exports grove_artifact) */
	TARGET_EMIT_OBJ,    /* relocatable object + a C header next to it (PATH with .h) */
	TARGET_EMIT_ASM,    /* assembly text */
	TARGET_EMIT_LLVM,   /* LLVM IR text after optimisation */
	TARGET_EMIT_PTX,    /* cuda: the PTX alone (for ptxas) */
	TARGET_EMIT_HSACO,  /* rocm: the HSACO alone (for llvm-objdump) */
} TargetEmit;

/* Where the module's code runs: a host module on the CPU, a GPU module (LModule.gpu) on one of the others. */
typedef enum TargetDevice {
	TARGET_DEVICE_HOST,
	TARGET_DEVICE_GPUSIM, /* kernels compiled for the host CPU, run by libgrove's SIMT simulator */
	TARGET_DEVICE_CUDA,   /* PTX through LLVM's NVPTX back end */
	TARGET_DEVICE_ROCM,   /* an HSACO through the AMDGPU back end and ld.lld */
} TargetDevice;

typedef struct TargetOptions {
	TargetEmit emit;
	const char *cpu;     /* an LLVM CPU name of the triple's architecture; NULL = "native" on the host, else "generic" */
	int opt_level;       /* 0..3 */
	const char *prefix;  /* symbol prefix for objects: <prefix>_predict, <prefix>_artifact; default "grove_model" */
	const char *cc;      /* C compiler that links the host's shared libraries; default $CC or "cc" */
	const char *triple;  /* x86_64-linux-gnu, aarch64-linux-gnu or their LLVM spellings; NULL = this host's. Another
	                        architecture's shared libraries are linked by its cross compiler (target/machine.h) */
	PhaseTimer *timer;   /* reports each phase's time (grove compile --time), or NULL */
	TargetDevice device; /* GPU artifacts are shared libraries for the host (triple) holding the device code */
	const char *gpu_arch; /* one of target_gpu_arch_name(device, i); NULL = the device's default, sm_80 / gfx90a */
	const char *cache_dir; /* host shared libraries: the code cache's directory (target/cache.c); NULL = no cache */
	bool profile;        /* gpusim: kernels tell the simulator of every load and store (grove tune, rt/gpusim.c) */
} TargetOptions;

/* The name of the i-th GPU architecture grove compiles device's code for (sm_80, gfx90a, ...), NULL past the last. */
const char *target_gpu_arch_name(TargetDevice device, size_t i);

/* Whether code for triple (NULL: this host) and cpu (NULL or "": the default) has 512-bit vectors (x86's AVX-512). */
bool target_wide_vectors(const char *triple, const char *cpu);
/*
 * How its vectors take a walk's top for 16 rows at once (MModule.vector_tops): x86's
 * AVX-512, or AVX2 in pairs of 256 bits.
 */
MTops target_vector_tops(const char *triple, const char *cpu);

/*
 * The code cache's directory (malloc'd), or NULL for none: chosen (the user's --cache or
 * cache_dir) unless NULL, else $GROVE_CACHE_DIR, else $XDG_CACHE_HOME/grove, else
 * ~/.cache/grove; "" or "off" means none. Compiles of one model shape under one
 * schedule share their optimised code there (target/cache.c).
 */
char *target_cache_dir(const char *chosen);

/* Append a GroveSeal (rt/artifact.h) to the shared library at path: libgrove refuses a damaged artifact. */
bool target_seal(const char *path, Error *e);

/* The mode cc gives what it writes: 0755 (executable: shared libraries) or 0644, less the umask. */
mode_t target_output_mode(bool executable);
/*
 * A temporary file (ir/common.h's temporary_beside) for what will become out_path:
 * beside it, or in $TMPDIR (else /tmp) where out_path is "-" (standard output) or exists
 * and is not a regular file.
 */
char *target_output_temporary(const char *out_path, const char *suffix, Error *e);
/*
 * Done writing temp (from target_output_temporary), ok if complete: give it the mode of
 * target_output_mode(executable) and rename it over out_path, or, where out_path is "-"
 * or not a regular file (/dev/null, a FIFO), copy it into out_path, which is never
 * replaced. temp is dropped either way. False (e says why) if not ok or on failure.
 */
bool target_output_finish(char *temp, bool ok, const char *out_path, bool executable, Error *e);

/*
 * The header --emit obj writes beside the object at object_path: the path less its
 * extension, with .h (malloc'ed); NULL where the object goes to standard output ("-") or
 * a character device, which have nothing beside them.
 */
char *target_header_path(const char *object_path);

/*
 * Stop the linkers that compiles in progress are running (SIGTERM) and wait, at most 5
 * seconds, until they have exited: for a compiler about to exit on a signal, which then
 * removes its temporary files (no linker writes one afterwards).
 */
void target_linkers_stop(void);

/*
 * The x86-64 or AArch64 features code for cpu (NULL or "native": this host's; AArch64's
 * default: generic) may use, by LLVM's names, comma-separated (malloc'ed; "" for another
 * architecture or an x86-64 CPU of no known level): what an artifact records for
 * grove_load to check (target/cpu_features.c).
 */
char *target_cpu_features(const char *triple, const char *cpu);

/* Whether options are ones target_emit can honour (prefix, optimisation level, triple, CPU); e says why not. */
bool target_check(const TargetOptions *options, Error *e);

/*
 * Emit module m as options say into out_path. Shared libraries are linked with the
 * system C compiler (or the triple's cross compiler) and OpenMP (the generated code may
 * call GOMP_parallel).
 */
bool target_emit(const LModule *m, const TargetOptions *options, const char *out_path, Error *e);

#endif
