/*
 * CPU artifacts, for this host or another architecture (target/machine.c's table):
 * LIR -> LLVM module -> verify -> optimise -> object, assembly, LLVM IR, or a shared
 * library linked by the system C compiler (a cross compiler for another architecture).
 */
#include "target/target.h"
#include "target/llvm.h"
#include "target/machine.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Whether s is a C identifier (symbol prefixes end up in C headers). */
static bool is_identifier(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* Run the standard LLVM pipeline for the optimisation level (a phase for timer). */
static bool optimise(LLVMModuleRef mod, LLVMTargetMachineRef tm, int level, PhaseTimer *timer, Error *e)
{
	char passes[32];
	LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
	LLVMErrorRef err;
	snprintf(passes, sizeof passes, "default<O%d>", level);
	LLVMPassBuilderOptionsSetLoopVectorization(options, level >= 2);
	LLVMPassBuilderOptionsSetSLPVectorization(options, level >= 2);
	LLVMPassBuilderOptionsSetLoopUnrolling(options, level >= 2);
	err = LLVMRunPasses(mod, passes, tm, options);
	LLVMDisposePassBuilderOptions(options);
	phase_end(timer, "llvm-opt");
	if (err) {
		char *message = LLVMGetErrorMessage(err);
		error_set(e, "LLVM pass pipeline failed: %s", message);
		LLVMDisposeErrorMessage(message);
		return false;
	}
	return true;
}

/* Write size bytes to the file at path; false with a message (a full disk, a size limit) if they do not all get there. */
static bool write_bytes(const char *path, const char *bytes, size_t size, Error *e)
{
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(bytes, 1, size, f) == size;
	if (f && fclose(f) != 0)
		ok = false;
	return ok || error_set(e, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
}

/*
 * Write the machine code of mod to path as an object or assembly file. It goes through
 * memory: LLVM's own file streams end the process on a write error (a full disk).
 */
static bool write_code(LLVMTargetMachineRef tm, LLVMModuleRef mod, const char *path, LLVMCodeGenFileType kind, Error *e)
{
	char *message = NULL;
	LLVMMemoryBufferRef code;
	bool ok;
	if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, kind, &message, &code)) {
		error_set(e, "%s: cannot generate code: %s", path, message);
		LLVMDisposeMessage(message);
		return false;
	}
	ok = write_bytes(path, LLVMGetBufferStart(code), LLVMGetBufferSize(code), e);
	LLVMDisposeMemoryBuffer(code);
	return ok;
}

/* Run the linker argv[0] for p with argv and wait; false with a message unless it exits with 0. */
static bool run_linker(const TargetPlatform *p, char *const argv[], Error *e)
{
	pid_t pid;
	int status, rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (rc != 0)
		return target_linker_missing(p, argv[0], rc, e);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return error_set(e, "waiting for %s: %s", argv[0], strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return error_set(e, "%s failed (status %d) linking the shared library", argv[0], status);
	return true;
}

/* Emit an object to a temporary file beside path, then link it into the shared library path with p's linker. */
static bool write_shared(LLVMTargetMachineRef tm, LLVMModuleRef mod, const TargetOptions *o, const TargetPlatform *p,
                         const char *path, Error *e)
{
	const char *cc = target_linker(p, o->cc);
	char *object = temporary_beside(path, ".o", e);
	bool ok;

	if (!object)
		return false;
	ok = write_code(tm, mod, object, LLVMObjectFile, e);
	phase_end(o->timer, "codegen");
	if (ok) {
		char *argv[] = {(char *)cc, "-shared", "-fopenmp", "-o", (char *)path, object, "-lm", NULL};
		ok = run_linker(p, argv, e);
		phase_end(o->timer, "link");
	}
	temporary_drop(object, false);
	return ok;
}

/* The C header beside an object: entry points and sizes. Written to <path minus extension>.h. */
static bool write_header(const LModule *m, const char *prefix, const char *path, Error *e)
{
	size_t len = strlen(path);
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	char *header = xmalloc(len + 3), upper[64];
	FILE *out;

	if (!dot || (slash && dot < slash))
		dot = path + len;
	snprintf(header, len + 3, "%.*s.h", (int)(dot - path), path);
	for (size_t i = 0; i < sizeof upper; i++)
		if (!(upper[i] = (char)toupper((unsigned char)prefix[i])))
			break;
	upper[sizeof upper - 1] = 0;
	out = fopen(header, "w");
	if (!out) {
		error_set(e, "%s: cannot write: %s", header, strerror(errno));
		free(header);
		return false;
	}
	fprintf(out,
	        "/* Generated by grove. Link with the object (and -lm; -fopenmp or -lgomp for its parallel loop). */\n"
	        "#ifndef %s_H\n#define %s_H\n\n#include <stdint.h>\n\n"
	        "#define %s_NUM_FEATURES %u /* floats per row */\n"
	        "#define %s_NUM_OUTPUTS %u  /* predictions per row */\n"
	        "#define %s_NUM_MARGINS %u  /* raw margins per row (flags & %s_MARGIN) */\n"
	        "#define %s_MARGIN 1\n"
	        "/* Workspace bytes for nrows rows: %s_WORKSPACE_FIXED + nrows * %s_WORKSPACE_PER_ROW. */\n"
	        "#define %s_WORKSPACE_FIXED %" PRIu64 "ull\n"
	        "#define %s_WORKSPACE_PER_ROW %" PRIu64 "ull\n\n"
	        "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
	        "/*\n * Predict nrows rows (row-major, %u floats each, NaN = missing) into out, which must not\n"
	        " * overlap rows: nrows x %s_NUM_OUTPUTS values, or nrows x %s_NUM_MARGINS raw margins\n"
	        " * when flags & %s_MARGIN. workspace is scratch memory of the size above (NULL when it\n"
	        " * is 0), 16-byte aligned (malloc's), overlapping neither rows nor out, uninitialised,\n"
	        " * used by one call at a time. Thread-safe; small batches run on the calling thread.\n */\n"
	        "void %s_predict(const float *rows, int64_t nrows, float *out, int32_t flags, void *workspace);\n\n",
	        upper, upper, upper, m->num_features, upper, m->num_outputs, upper, m->num_margins, upper, upper, upper,
	        upper, upper, m->workspace_fixed, upper, m->workspace_per_row, m->num_features, upper, upper, upper, prefix);
	if (m->predict_f64 != LIR_NONE)
		fprintf(out,
		        "/* The same for rows of doubles, compared in double as the model's library compares them. */\n"
		        "void %s_predict_f64(const double *rows, int64_t nrows, float *out, int32_t flags, void *workspace);\n\n",
		        prefix);
	fputs("#ifdef __cplusplus\n}\n#endif\n\n#endif\n", out);
	if (fclose(out) != 0) {
		error_set(e, "%s: cannot write: %s", header, strerror(errno));
		free(header);
		return false;
	}
	free(header);
	return true;
}

bool target_check(const TargetOptions *o, Error *e)
{
	const char *prefix = o->prefix ? o->prefix : "grove_model";
	TargetPlatform platform;
	LLVMTargetMachineRef tm;
	if (!is_identifier(prefix) || strlen(prefix) > 48)
		return error_set(e, "--prefix %s: not a C identifier of at most 48 characters", prefix);
	if (o->opt_level < 0 || o->opt_level > 3)
		return error_set(e, "-O%d: the optimisation level must be 0 to 3", o->opt_level);
	if (!target_platform(o->triple, &platform, e) || !(tm = target_machine_create(&platform, o->cpu, o->opt_level, e)))
		return false;
	LLVMDisposeTargetMachine(tm);
	return true;
}

bool target_emit(const LModule *m, const TargetOptions *o, const char *out_path, Error *e)
{
	const char *prefix = o->prefix ? o->prefix : "grove_model";
	char symbol[96], *message = NULL;
	LLVMContextRef ctx;
	LLVMModuleRef mod;
	LLVMTargetMachineRef tm;
	LLVMTargetDataRef layout;
	TargetPlatform platform;
	char *temp = NULL;
	bool verified, ok = false;

	if (!target_check(o, e) || !target_platform(o->triple, &platform, e) ||
	    !(tm = target_machine_create(&platform, o->cpu, o->opt_level, e)))
		return false;

	ctx = LLVMContextCreate();
	snprintf(symbol, sizeof symbol, "%s_artifact", prefix);
	mod = target_build_module(ctx, m, prefix, o->emit == TARGET_EMIT_SHARED ? GROVE_ARTIFACT_SYMBOL : symbol);
	LLVMSetTarget(mod, platform.triple);
	layout = LLVMCreateTargetDataLayout(tm);
	LLVMSetModuleDataLayout(mod, layout);
	LLVMDisposeTargetData(layout);
	phase_end(o->timer, "llvm-build");

	verified = !LLVMVerifyModule(mod, LLVMReturnStatusAction, &message);
	phase_end(o->timer, "llvm-verify");
	if (!verified) {
		error_set(e, "internal error: the generated LLVM IR does not verify: %s", message);
	} else if (optimise(mod, tm, o->opt_level, o->timer, e) && (temp = temporary_beside(out_path, ".tmp", e))) {
		/* Written beside out_path, then renamed over it: a failed compile leaves no half-written artifact. */
		switch (o->emit) {
		case TARGET_EMIT_SHARED: ok = write_shared(tm, mod, o, &platform, temp, e) && target_seal(temp, e); break;
		case TARGET_EMIT_OBJ: ok = write_code(tm, mod, temp, LLVMObjectFile, e) && write_header(m, prefix, out_path, e); break;
		case TARGET_EMIT_ASM: ok = write_code(tm, mod, temp, LLVMAssemblyFile, e); break;
		case TARGET_EMIT_PTX:
		case TARGET_EMIT_HSACO: ok = error_set(e, "PTX and HSACO are emitted for GPU targets only"); break;
		case TARGET_EMIT_LLVM:
			LLVMDisposeMessage(message);
			message = LLVMPrintModuleToString(mod);
			ok = write_bytes(temp, message, strlen(message), e);
			break;
		}
		if (ok && rename(temp, out_path) != 0)
			ok = error_set(e, "%s: cannot write: %s", out_path, strerror(errno));
		temporary_drop(temp, ok);
		phase_end(o->timer, o->emit == TARGET_EMIT_SHARED ? "seal" : o->emit == TARGET_EMIT_LLVM ? "print" : "codegen");
	}
	LLVMDisposeMessage(message);
	LLVMDisposeModule(mod);
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	return ok;
}
