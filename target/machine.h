/*
 * Internal to target/: the architectures grove emits code for (one table row each:
 * triples, LLVM initialisation, CPU names, the linker of a cross build) and LLVM
 * target machines for them.
 */
#ifndef GROVE_TARGET_MACHINE_H
#define GROVE_TARGET_MACHINE_H

#include <llvm-c/TargetMachine.h>

#include "ir/common.h"

typedef struct TargetArch TargetArch;

/* A --target resolved against the table: which architecture, the LLVM triple to emit for, whether it is this host's. */
typedef struct TargetPlatform {
	const TargetArch *arch;
	char triple[128]; /* the LLVM triple (the host's own spelling when host) */
	bool host;        /* the host's architecture: --cpu native works and $CC links */
} TargetPlatform;

/* Resolve triple (NULL = this host) into p; e lists the accepted triples when it names none of them. */
bool target_platform(const char *triple, TargetPlatform *p, Error *e);

/*
 * LLVM's process-wide code generation options, set once before the first target
 * machine (target_machine_create calls it; so does the GPU back end's).
 */
void target_llvm_options(void);

/*
 * A target machine for p, the CPU (NULL or "" = the default: native on the host,
 * generic elsewhere) and the optimisation level 0-3; NULL with e filled when the CPU is
 * unknown or LLVM refuses.
 */
LLVMTargetMachineRef target_machine_create(const TargetPlatform *p, const char *cpu, int opt_level, Error *e);

/*
 * The compiler driver that links p's shared libraries, or NULL where grove links them
 * itself (target/link.h: an x86-64 host). On the host: $GROVE_LINKER where set (its
 * value "grove": NULL), else cc where given, else NULL on x86-64 and $CC or "cc"
 * elsewhere. For another architecture its cross compiler (e.g. aarch64-linux-gnu-gcc),
 * or the one its environment variable names (GROVE_CC_AARCH64).
 */
const char *target_linker(const TargetPlatform *p, const char *cc);

/* Fill e for a linker that cannot be run (error: errno); for a cross target it names the package to install. */
bool target_linker_missing(const TargetPlatform *p, const char *linker, int error, Error *e);

#endif
