/* Internal to target/: the LIR -> LLVM IR translation, shared by the host and (later) GPU emitters. */
#ifndef GROVE_TARGET_LLVM_H
#define GROVE_TARGET_LLVM_H

#include <llvm-c/Core.h>

#include "ir/lir.h"
#include "rt/artifact.h"

/*
 * Translate m into a new LLVM module in ctx. Functions are named <prefix>_<name>;
 * the entry point is external, the rest internal. A constant GroveArtifact named
 * artifact_symbol describes the entry point. m must have passed lir_verify.
 */
LLVMModuleRef target_build_module(LLVMContextRef ctx, const LModule *m, const char *prefix, const char *artifact_symbol);

#endif
