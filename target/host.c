/*
 * CPU artifacts, for this host or another architecture (target/machine.c's table):
 * LIR -> LLVM module -> verify -> optimise -> object, assembly, LLVM IR, or a shared
 * library linked by the system C compiler (a cross compiler for another architecture).
 * GPU modules go to target/gpu.c, which builds on the steps here (target/emit.h).
 */
#include "target/target.h"
#include "target/cache.h"
#include "target/emit.h"
#include "target/llvm.h"
#include "target/link.h"
#include "target/machine.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


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

/* Run the textual pass pipeline `passes` on mod, with vectorisation and unrolling from -O2 up. */
static bool run_passes(LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *passes, int level, PhaseTimer *timer,
                       Error *e)
{
	LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
	LLVMErrorRef err;
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

bool target_optimise(LLVMModuleRef mod, LLVMTargetMachineRef tm, int level, PhaseTimer *timer, Error *e)
{
	char passes[32];
	snprintf(passes, sizeof passes, "default<O%d>", level);
	return run_passes(mod, tm, passes, level, timer, e);
}

/*
 * -O2 for CPU code (-O3 stays default<O3>: see the one loss below). Our modules are
 * one function holding a few large loop nests of straight-line walks, and default<O3>
 * spends most of its time (whatever the model's size: the trees are data) re-running
 * instcombine, GVN and the vectorisers over those walks. This is a function pipeline
 * with the passes that pay, measured (prediction time, one thread) on higgs, airline,
 * year_prediction_msd, abalone.onnx, a 1000-tree depth-8 model, a 4-class LightGBM model
 * and higgs in the sparse and reorg layouts; it predicts as fast as default<O3> or
 * faster in about half the optimisation time (measured: docs/performance-notes.md, The
 * -O2 pipeline):
 *   sroa .. indvars, instcombine: the cleanup and loop canonicalisation everything
 *     below needs (alone, they compile quickly but predict much slower);
 *     no early-cse: ahead of instcombine it slows a 4-class LightGBM model with
 *     missing values, and it gains nothing;
 *   gvn<no-load-pre;no-memdep>: its scalar PRE pays on the 1000-tree model
 *     (early-cse instead loses it); memory-dependence-based load elimination is worth
 *     nothing here and costs compile time;
 *   loop-vectorize: the missing-value scan over a block's rows and the output
 *     transform (rows of 90 features are slower without it);
 *   loop-unroll, runtime unrolling included: higgs and airline are slower without it
 *     (or with no-runtime), though the hot walks' IR comes out the same:
 *     it unrolls loops off the hot path (the one-row tail's tree-at-a-time loop, the
 *     tail's output transform), and the gain is the register allocation and layout
 *     the hot loop then gets (it spills: 16 rows' walk state outnumbers the registers);
 *   slp-vectorizer: turns the 16 interleaved rows' reductions into vector adds
 *     (the 1000-tree model is much slower without it; it is most of the compile time
 *     left).
 * Codegen stays at the -O level's (Aggressive): Less saves little compile time and
 * predicts slower.
 * One loss: a 4-class XGBoost model (depth 6, 200 trees) is slower than with
 * default<O3>, its hot loop's IR the same. That loop spills, and its register
 * allocation swings with code elsewhere in the function:
 * simplifycfg<hoist-common-insts> after loop-vectorize wins the model back and loses
 * as much on abalone.onnx, so neither is a pipeline fix. default<O2> itself takes as
 * long as default<O3> and predicts no faster, so this is what -O2 means here: -O3's
 * speed on most models at about half its optimisation time.
 */
static const char cpu_o2_passes[] =
	"function(sroa,simplifycfg,instcombine,loop-simplify,lcssa,loop(loop-rotate),"
	"loop-mssa(licm),loop(indvars),gvn<no-load-pre;no-memdep>,simplifycfg,loop-vectorize,loop-unroll<O3>,"
	"instcombine,simplifycfg,slp-vectorizer)";

/*
 * Modules whose walks are code (LLVM_CODE_FLAG): nests of branches on constants, each
 * tile of trees a function of its own, with little for loop or vector passes to find
 * and a great deal for them to search. This pipeline predicts as fast as -O2's and
 * -O3's (LGBMClassifier() defaults with categorical features, one core) in a fraction
 * of their optimisation time; code generation, linear in the code, is what remains.
 * GVN forwards each tree's stored margin to the next tree's add: the row's sum stays
 * in a register instead of a chain of stores and loads through memory.
 */
static const char cpu_code_passes[] = "function(sroa,instcombine,simplifycfg,gvn)";

/*
 * The pass pipeline of CPU module mod at level: -O2 is cpu_o2_passes, the other levels
 * LLVM's defaults; code, cpu_code_passes. -O3 of walks that wait on memory at most steps
 * (LLVM_WAITS_FLAG: forests grown to purity) is -O2's pipeline: they predicted as fast
 * at every batch, and its optimisation takes half the time, which grows with their long
 * straight walks (docs/performance-notes.md, The -O2 pipeline).
 */
static const char *cpu_passes(LLVMModuleRef mod, int level)
{
	static const char *const defaults[] = {"default<O0>", "default<O1>", cpu_o2_passes, "default<O3>"};
	if (level > 0 && LLVMGetModuleFlag(mod, LLVM_CODE_FLAG, sizeof LLVM_CODE_FLAG - 1))
		return cpu_code_passes;
	if (level == 3 && LLVMGetModuleFlag(mod, LLVM_WAITS_FLAG, sizeof LLVM_WAITS_FLAG - 1))
		return cpu_o2_passes;
	return defaults[level];
}

bool target_write_bytes(const char *path, const char *bytes, size_t size, Error *e)
{
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(bytes, 1, size, f) == size;
	if (f && fclose(f) != 0)
		ok = false;
	return ok || error_set(e, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
}

/* mod's object code in memory (malloc'd, *size bytes), or NULL with e set. */
static char *object_in_memory(LLVMTargetMachineRef tm, LLVMModuleRef mod, size_t *size, Error *e)
{
	char *message = NULL, *bytes;
	LLVMMemoryBufferRef code;
	if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &message, &code)) {
		error_set(e, "cannot generate code: %s", message);
		LLVMDisposeMessage(message);
		return NULL;
	}
	*size = LLVMGetBufferSize(code);
	bytes = xmalloc(*size ? *size : 1);
	memcpy(bytes, LLVMGetBufferStart(code), *size);
	LLVMDisposeMemoryBuffer(code);
	return bytes;
}

bool target_write_code(LLVMTargetMachineRef tm, LLVMModuleRef mod, const char *path, LLVMCodeGenFileType kind, Error *e)
{
	char *message = NULL;
	LLVMMemoryBufferRef code;
	bool ok;
	if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, kind, &message, &code)) {
		error_set(e, "%s: cannot generate code: %s", path, message);
		LLVMDisposeMessage(message);
		return false;
	}
	ok = target_write_bytes(path, LLVMGetBufferStart(code), LLVMGetBufferSize(code), e);
	LLVMDisposeMemoryBuffer(code);
	return ok;
}

/* Parts a code module is compiled in at most (one per core), and the objects of a shared library: those and the data. */
#define MAX_PARTS 8
#define MAX_OBJECTS (MAX_PARTS + 2) /* the code's parts, the data, the buffers */

/*
 * Link the n objects into the shared library path with p's linker and OpenMP. Without a
 * build ID, which Debian's compilers ask for by default: the linker hashed the whole
 * library for it, and nothing reads it.
 */
static bool link_shared(char *const *objects, int n, const char *linker, const TargetPlatform *p, const char *path,
                        Error *e)
{
	char *argv[MAX_OBJECTS + 8] = {(char *)linker, "-shared", "-fopenmp", "-Wl,--build-id=none", "-o",
	                               target_path_argument(path)};
	int spawn_error, k = 6;
	bool ok;
	for (int i = 0; i < n && i < MAX_OBJECTS; i++)
		argv[k++] = target_path_argument(objects[i]);
	argv[k] = "-lm";
	ok = target_run_linker(argv, "the shared library", &spawn_error, e) ||
	     (spawn_error && target_linker_missing(p, argv[0], spawn_error, e));
	for (int i = 5; i < k; i++)
		free(argv[i]);
	return ok;
}

/*
 * The libraries the imports of k's library come from, into needed (4 entries, NULL-terminated): OpenMP's where it
 * calls OpenMP, libm's and libc's where it calls other functions (what cc -fopenmp -lm --as-needed links). A
 * library needed for nothing would be loaded and unloaded with the artifact.
 */
static void artifact_libraries(const Linker *k, const char **needed)
{
	size_t openmp = link_imports(k, "GOMP_") + link_imports(k, "omp_");
	if (openmp)
		*needed++ = "libgomp.so.1";
	if (link_imports(k, "") > openmp) {
		*needed++ = "libm.so.6";
		*needed++ = "libc.so.6";
	}
	*needed = NULL;
}

/*
 * Link the shared library at path from the n objects in memory (objects[k] of sizes[k]
 * bytes) and m's buffers (NULL: none; their symbols named after prefix): by grove's
 * linker where it links for p (target_linker), else with the compiler driver, the
 * objects and the buffers (target_write_buffers) in temporary files beside path.
 */
static bool link_objects(char *const *objects, const size_t *sizes, uint32_t n, const LModule *m, const char *prefix,
                         const TargetOptions *o, const TargetPlatform *p, const char *path, Error *e)
{
	const char *linker = target_linker(p, o->cc), *needed[4];
	char *files[MAX_OBJECTS] = {NULL};
	bool ok = true;
	if (!linker) {
		Linker *k = link_new();
		for (uint32_t i = 0; ok && i < n; i++)
			ok = link_add_object(k, objects[i], sizes[i], "grove's object", e);
		if (ok && m)
			target_link_buffers(k, m, prefix);
		artifact_libraries(k, needed);
		ok = ok && link_write(k, needed, path, e);
		link_free(k);
		phase_end(o->timer, "link");
		return ok;
	}
	for (uint32_t i = 0; ok && i < n; i++)
		ok = (files[i] = temporary_beside(path, ".o", e)) && target_write_bytes(files[i], objects[i], sizes[i], e);
	if (ok && m)
		ok = (files[n] = temporary_beside(path, ".o", e)) &&
		     target_write_buffers(m, prefix, !strncmp(p->triple, "aarch64", 7), files[n], e);
	ok = ok && link_shared(files, (int)n + (m != NULL), linker, p, path, e);
	for (uint32_t i = 0; i <= n; i++)
		if (files[i])
			temporary_drop(files[i], false);
	phase_end(o->timer, "link");
	return ok;
}

/* Functions' vector width (LLVM_VECTOR_WIDTH) in bits: 0 where they have none. */
static unsigned vector_width(LLVMValueRef f)
{
	LLVMAttributeRef width = LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVM_VECTOR_WIDTH,
	                                                      sizeof LLVM_VECTOR_WIDTH - 1);
	unsigned length;
	const char *bits = width ? LLVMGetStringAttributeValue(width, &length) : NULL;
	return bits ? (unsigned)strtoul(bits, NULL, 10) : 0;
}

/*
 * Before mod is optimised: a width of 0 for every function without one, so that a wide
 * function's width survives its inlining into another (LLVM_VECTOR_WIDTH).
 */
static void keep_vector_widths(LLVMModuleRef mod)
{
	LLVMContextRef ctx = LLVMGetModuleContext(mod);
	for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
		if (!LLVMIsDeclaration(f) && !LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVM_VECTOR_WIDTH,
		                                                            sizeof LLVM_VECTOR_WIDTH - 1))
			LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
			                        LLVMCreateStringAttribute(ctx, LLVM_VECTOR_WIDTH, sizeof LLVM_VECTOR_WIDTH - 1, "0", 1));
}

/*
 * Once mod is optimised: the functions whose LIR holds 512-bit vectors (the walks' tops,
 * lower_tops; LLVM_VECTOR_WIDTH) are generated with tm's features and AVX-512's. They
 * were optimised without them, as all code is (X86_FEATURES: LLVM's vectorisers would
 * make gathers of the walks' loads), and their width keeps their vectors of 16 i32 whole
 * (LLVM splits them in two where the CPU prefers 256 bits). A top thus lies in its
 * walks' loop: as a function of its own for AVX-512 alone, called with preserve_all,
 * its calls, saves and context cost more than the walks can spare (measured:
 * docs/performance-notes.md, Tops in the walks' loop).
 */
static void wide_functions(LLVMModuleRef mod, LLVMTargetMachineRef tm, const TargetOptions *o)
{
	static const char avx512[] = "+avx512f,+avx512vl,+avx512bw,+avx512dq,+avx512cd", named[] = "target-features";
	LLVMContextRef ctx = LLVMGetModuleContext(mod);
	char *features = NULL;
	if (!target_wide_vectors(o->triple, o->cpu))
		return;
	for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
		if (LLVMIsDeclaration(f) || vector_width(f) < LLVM_WIDE_BITS)
			continue;
		if (!features) {
			char *base = LLVMGetTargetMachineFeatureString(tm);
			features = xmalloc(strlen(base) + sizeof avx512 + 1);
			sprintf(features, "%s%s%s", base, *base ? "," : "", avx512);
			LLVMDisposeMessage(base);
		}
		LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
		                        LLVMCreateStringAttribute(ctx, named, sizeof named - 1, features, (unsigned)strlen(features)));
	}
	free(features);
}

/* mod optimised for a CPU (o's level), its wide functions then made to be generated with AVX-512 (wide_functions). */
static bool optimise_for_cpu(LLVMModuleRef mod, LLVMTargetMachineRef tm, const TargetOptions *o, PhaseTimer *timer,
                             Error *e)
{
	if (!run_passes(mod, tm, cpu_passes(mod, o->opt_level), o->opt_level, timer, e))
		return false;
	wide_functions(mod, tm, o);
	return true;
}

/*
 * The optimised code object of mod (malloc'd, *size bytes): from o's cache when it
 * holds mod's (*hit), else optimised and generated here (and stored in the cache).
 * Phases go to timer (NULL on the threads of a split module).
 */
static char *code_object(LLVMModuleRef mod, LLVMTargetMachineRef tm, const TargetOptions *o, PhaseTimer *timer, size_t *size,
                         bool *hit, Error *e)
{
	const char *passes = cpu_passes(mod, o->opt_level);
	LLVMMemoryBufferRef code;
	CacheKey key;
	char *bytes = NULL, *message = NULL;

	*hit = false;
	if (o->cache_dir) {
		cache_key(&key, mod, tm, o->opt_level, passes);
		bytes = cache_load(o->cache_dir, &key, size);
		phase_end(timer, bytes ? "cache-hit" : "cache-miss");
		if ((*hit = bytes != NULL))
			return bytes;
	}
	if (!optimise_for_cpu(mod, tm, o, timer, e))
		return NULL;
	if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &message, &code)) {
		error_set(e, "cannot generate code: %s", message);
		LLVMDisposeMessage(message);
		return NULL;
	}
	*size = LLVMGetBufferSize(code);
	bytes = xmalloc(*size + 1);
	memcpy(bytes, LLVMGetBufferStart(code), *size);
	LLVMDisposeMemoryBuffer(code);
	if (o->cache_dir)
		cache_store(o->cache_dir, &key, bytes, *size);
	phase_end(timer, "codegen");
	return bytes;
}

/*
 * Parts. The code module's functions (the entry, the parallel body, and the regions the
 * LIR marks apart: a block's complete-row and missing-value walks, each about half the
 * code) are shared out among parts, about equal in instructions, one per core up to
 * MAX_PARTS; each part is the module with the others' functions only declared, and is
 * optimised, compiled and cached on a thread of its own, in a context of its own (read
 * back from the module's bitcode). Optimisation and code generation take nearly all of
 * a compile (docs/performance-notes.md, Code in parts), and a function's do not depend
 * on another's body once none is inlined.
 */
typedef struct CodePart {
	const TargetOptions *o;
	const TargetPlatform *platform;
	LLVMMemoryBufferRef bitcode;  /* the whole module (shared, read only) */
	const char **names;           /* the functions this part defines */
	uint32_t num_names;
	uint64_t weight;              /* their instructions */
	char *object;                 /* the result (malloc'd), size bytes */
	size_t size;
	bool hit;
	Error error;
} CodePart;

/* Instructions in function f's body. */
static uint64_t function_size(LLVMValueRef f)
{
	uint64_t n = 0;
	for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
		for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
			n++;
	return n;
}

/* Whether f is one of the names. */
static bool named(LLVMValueRef f, const char *const *names, uint32_t count)
{
	size_t len;
	const char *name = LLVMGetValueName2(f, &len);
	for (uint32_t i = 0; i < count; i++)
		if (strlen(names[i]) == len && !memcmp(names[i], name, len))
			return true;
	return false;
}

/* Replace the body of every function of mod that is not the part's by a declaration. */
static void keep_part(LLVMModuleRef mod, const CodePart *part)
{
	LLVMValueRef f = LLVMGetFirstFunction(mod), next;
	for (; f; f = next) {
		LLVMValueRef decl;
		size_t len;
		char *name;
		next = LLVMGetNextFunction(f);
		if (LLVMIsDeclaration(f) || named(f, part->names, part->num_names))
			continue;
		name = xstrdup(LLVMGetValueName2(f, &len));
		decl = LLVMAddFunction(mod, "", LLVMGlobalGetValueType(f));
		LLVMSetFunctionCallConv(decl, LLVMGetFunctionCallConv(f)); /* its calls keep theirs (a wide region's, emit_apart) */
		LLVMReplaceAllUsesWith(f, decl);
		LLVMDeleteFunction(f);
		LLVMSetValueName2(decl, name, len);
		LLVMSetVisibility(decl, LLVMHiddenVisibility);
		free(name);
	}
}

/* A thread: read the module, keep the part's functions, and compile them (or take them from the cache). */
static void *compile_part(void *arg)
{
	CodePart *part = arg;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef mod = NULL;
	LLVMTargetMachineRef tm = target_machine_create(part->platform, part->o->cpu, part->o->opt_level, &part->error);
	if (tm && LLVMParseBitcodeInContext2(ctx, part->bitcode, &mod))
		error_set(&part->error, "internal error: cannot read back the code module's bitcode");
	else if (tm) {
		keep_part(mod, part);
		part->object = code_object(mod, tm, part->o, NULL, &part->size, &part->hit, &part->error);
	}
	if (mod)
		LLVMDisposeModule(mod);
	if (tm)
		LLVMDisposeTargetMachine(tm);
	LLVMContextDispose(ctx);
	return NULL;
}

/* A function and its size, to share out. */
typedef struct Sized {
	LLVMValueRef f;
	uint64_t size;
} Sized;

static int larger_first(const void *a, const void *b)
{
	uint64_t x = ((const Sized *)a)->size, y = ((const Sized *)b)->size;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Share mod's defined functions out among at most max parts, each largest first to the lightest part; returns the parts used. */
static uint32_t share_out(LLVMModuleRef mod, CodePart *parts, uint32_t max)
{
	uint32_t count = 0, used = 0;
	Sized *functions;
	for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
		count += !LLVMIsDeclaration(f);
	functions = xmalloc(((size_t)count + 1) * sizeof *functions);
	count = 0;
	for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
		if (!LLVMIsDeclaration(f))
			functions[count++] = (Sized){f, function_size(f)};
	qsort(functions, count, sizeof *functions, larger_first);
	for (uint32_t k = 0; k < max; k++)
		parts[k].names = xcalloc(count + 1, sizeof *parts[k].names);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t light = 0;
		size_t len;
		for (uint32_t k = 1; k < max; k++)
			if (parts[k].weight < parts[light].weight)
				light = k;
		parts[light].names[parts[light].num_names++] = LLVMGetValueName2(functions[i].f, &len);
		parts[light].weight += functions[i].size;
		used = light + 1 > used ? light + 1 : used;
	}
	free(functions);
	return used;
}

/* The threads compiling a module's parts (started[k]: part k has a thread; else it was compiled on the caller's). */
typedef struct PartThreads {
	pthread_t threads[MAX_PARTS];
	bool started[MAX_PARTS];
	LLVMMemoryBufferRef bitcode;
} PartThreads;

/* Start compiling mod's n parts on threads of their own (on this one where a thread cannot start). */
static void start_parts(LLVMModuleRef mod, CodePart *parts, uint32_t n, const TargetOptions *o, const TargetPlatform *p,
                        PartThreads *t)
{
	/* The parts call each other's functions: hidden symbols of the library instead of internal ones. */
	for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
		if (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMInternalLinkage) {
			LLVMSetLinkage(f, LLVMExternalLinkage);
			LLVMSetVisibility(f, LLVMHiddenVisibility);
		}
	t->bitcode = LLVMWriteBitcodeToMemoryBuffer(mod);
	for (uint32_t k = 0; k < n; k++) {
		parts[k].o = o;
		parts[k].platform = p;
		parts[k].bitcode = t->bitcode;
		t->started[k] = pthread_create(&t->threads[k], NULL, compile_part, &parts[k]) == 0;
		if (!t->started[k])
			compile_part(&parts[k]);
	}
}

/* Wait for the parts that start_parts started; false with the first failure in e. */
static bool join_parts(CodePart *parts, uint32_t n, const TargetOptions *o, PartThreads *t, Error *e)
{
	uint32_t hits = 0;
	bool ok = true;
	for (uint32_t k = 0; k < n; k++) {
		if (t->started[k])
			pthread_join(t->threads[k], NULL);
		if (ok && !parts[k].object) {
			*e = parts[k].error;
			ok = false;
		}
		hits += parts[k].hit;
	}
	LLVMDisposeMemoryBuffer(t->bitcode);
	phase_end(o->timer, !o->cache_dir ? "llvm-opt and codegen" : hits == n ? "cache-hit" : "cache-miss, llvm-opt and codegen");
	return ok;
}

/* The cores this process may run on (its affinity mask; else those online). */
static long usable_cores(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		return CPU_COUNT(&set);
	return sysconf(_SC_NPROCESSORS_ONLN);
}

/*
 * The shared library at path from code module mod, data module data and m's buffers
 * (their symbols named after prefix): the
 * code's parts (perhaps from the cache), the data and the buffers (target/buffers.c), each
 * an object of its own, linked with p's linker.
 */
static bool write_shared(const LModule *m, const char *prefix, LLVMTargetMachineRef tm, LLVMModuleRef mod,
                         LLVMModuleRef data, const TargetOptions *o, const TargetPlatform *p, const char *path, Error *e)
{
	CodePart parts[MAX_PARTS];
	char *objects[MAX_PARTS + 1];
	size_t sizes[MAX_PARTS + 1];
	long cores = usable_cores();
	uint32_t n;
	bool ok, data_ok;
	PartThreads threads;
	Error data_error;

	memset(parts, 0, sizeof parts);
	n = share_out(mod, parts, cores < 2 ? 1 : cores > MAX_PARTS ? MAX_PARTS : (uint32_t)cores);
	/* The data object (the descriptor) is made while the parts compile. */
	if (n > 1)
		start_parts(mod, parts, n, o, p, &threads);
	n = n > 1 ? n : 1;
	data_ok = (objects[n] = object_in_memory(tm, data, &sizes[n], &data_error)) != NULL;
	phase_end(o->timer, "data");
	if (n > 1)
		ok = join_parts(parts, n, o, &threads, e);
	else
		ok = (parts[0].object = code_object(mod, tm, o, o->timer, &parts[0].size, &parts[0].hit, e)) != NULL;
	if (ok && !data_ok) {
		*e = data_error;
		ok = false;
	}
	for (uint32_t k = 0; k < n; k++) {
		objects[k] = parts[k].object;
		sizes[k] = parts[k].size;
	}
	ok = ok && link_objects(objects, sizes, n + 1, m, prefix, o, p, path, e);
	if (data_ok)
		free(objects[n]);
	for (uint32_t k = 0; k < MAX_PARTS; k++) {
		free(parts[k].object);
		free(parts[k].names);
	}
	return ok;
}

bool target_write_shared(LLVMTargetMachineRef tm, LLVMModuleRef mod, const TargetOptions *o, const TargetPlatform *p,
                         const char *path, Error *e)
{
	size_t size;
	char *object = object_in_memory(tm, mod, &size, e);
	bool ok = object != NULL;
	phase_end(o->timer, "codegen");
	ok = ok && link_objects(&object, &size, 1, NULL, NULL, o, p, path, e);
	free(object);
	return ok;
}

char *target_header_path(const char *object_path)
{
	size_t len = strlen(object_path);
	const char *dot = strrchr(object_path, '.'), *slash = strrchr(object_path, '/');
	struct stat st;
	char *header;
	if (!strcmp(object_path, "-") || (stat(object_path, &st) == 0 && S_ISCHR(st.st_mode)))
		return NULL;
	if (!dot || (slash && dot < slash))
		dot = object_path + len;
	header = xmalloc(len + 3);
	snprintf(header, len + 3, "%.*s.h", (int)(dot - object_path), object_path);
	return header;
}

/* The C header beside an object at path (target_header_path; none where that has none): entry points and sizes. */
static bool write_header(const LModule *m, const char *prefix, const char *path, Error *e)
{
	char *header = target_header_path(path), *temp, upper[64];
	FILE *out;
	bool ok;

	if (!header)
		return true;
	if (!(temp = target_output_temporary(header, ".tmp", e))) {
		free(header);
		return false;
	}
	for (size_t i = 0; i < sizeof upper; i++)
		if (!(upper[i] = (char)toupper((unsigned char)prefix[i])))
			break;
	upper[sizeof upper - 1] = 0;
	if (!(out = fopen(temp, "w"))) {
		error_set(e, "%s: cannot write: %s", header, strerror(errno));
		temporary_drop(temp, false);
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
	ok = !ferror(out);
	if (fclose(out) != 0 || !ok)
		ok = error_set(e, "%s: cannot write: %s", header, strerror(errno ? errno : EIO));
	ok = target_output_finish(temp, ok, header, false, e);
	free(header);
	return ok;
}

/*
 * Link the data module into the optimised code (which disposes of data: *consumed is
 * set to NULL) and make the buffers private again: one module, as an object or IR file
 * wants it.
 */
static bool link_data(LLVMModuleRef mod, LLVMModuleRef data, LLVMModuleRef *consumed, Error *e)
{
	*consumed = NULL;
	if (LLVMLinkModules2(mod, data))
		return error_set(e, "internal error: cannot link the model's data into its code");
	for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g))
		if (LLVMGetVisibility(g) == LLVMHiddenVisibility && !LLVMIsDeclaration(g)) {
			LLVMSetVisibility(g, LLVMDefaultVisibility);
			LLVMSetLinkage(g, LLVMPrivateLinkage);
		}
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
	return o->device == TARGET_DEVICE_HOST || target_check_gpu(o, e);
}

bool target_emit(const LModule *m, const TargetOptions *o, const char *out_path, Error *e)
{
	const char *prefix = o->prefix ? o->prefix : "grove_model";
	char symbol[96], *message = NULL;
	LLVMContextRef ctx;
	LLVMModuleRef mod, data;
	LLVMTargetMachineRef tm;
	LLVMTargetDataRef layout;
	TargetPlatform platform;
	char *temp = NULL;
	bool verified, ok = false;

	if (m->gpu || o->device != TARGET_DEVICE_HOST)
		return target_emit_gpu(m, o, out_path, e);
	if (!target_check(o, e) || !target_platform(o->triple, &platform, e) ||
	    !(tm = target_machine_create(&platform, o->cpu, o->opt_level, e)))
		return false;

	ctx = LLVMContextCreate();
	snprintf(symbol, sizeof symbol, "%s_artifact", prefix);
	mod = target_build_module(ctx, m, prefix, o->emit == TARGET_EMIT_SHARED ? GROVE_ARTIFACT_SYMBOL : symbol,
	                          !strncmp(platform.triple, "aarch64", 7), target_vector_tops(platform.triple, o->cpu),
	                          o->emit == TARGET_EMIT_SHARED, &data);
	if (o->emit == TARGET_EMIT_SHARED) {
		char *features = target_cpu_features(platform.triple, o->cpu);
		target_add_cpu_features(data, features);
		free(features);
	}
	keep_vector_widths(mod);
	layout = LLVMCreateTargetDataLayout(tm);
	LLVMSetTarget(mod, platform.triple);
	LLVMSetTarget(data, platform.triple);
	LLVMSetModuleDataLayout(mod, layout);
	LLVMSetModuleDataLayout(data, layout);
	LLVMDisposeTargetData(layout);
	phase_end(o->timer, "llvm-build");

	verified = !LLVMVerifyModule(mod, LLVMReturnStatusAction, &message);
	phase_end(o->timer, "llvm-verify");
	if (!verified) {
		error_set(e, "internal error: the generated LLVM IR does not verify: %s", message);
	} else if ((temp = target_output_temporary(out_path, ".tmp", e))) {
		/*
		 * Written beside out_path, then renamed over it: a failed compile leaves no
		 * half-written artifact. A shared library optimises its code alone (or takes it from
		 * the cache); the other kinds want one module, the data linked into the code.
		 */
		bool ready = o->emit == TARGET_EMIT_SHARED ||
		             (optimise_for_cpu(mod, tm, o, o->timer, e) && link_data(mod, data, &data, e));
		if (ready)
			switch (o->emit) {
			case TARGET_EMIT_SHARED: ok = write_shared(m, prefix, tm, mod, data, o, &platform, temp, e) && target_seal(temp, e); break;
			case TARGET_EMIT_OBJ: ok = target_write_code(tm, mod, temp, LLVMObjectFile, e) && write_header(m, prefix, out_path, e); break;
			case TARGET_EMIT_ASM: ok = target_write_code(tm, mod, temp, LLVMAssemblyFile, e); break;
			case TARGET_EMIT_PTX:
			case TARGET_EMIT_HSACO: ok = error_set(e, "PTX and HSACO are emitted for GPU targets only"); break;
			case TARGET_EMIT_LLVM:
				LLVMDisposeMessage(message);
				message = LLVMPrintModuleToString(mod);
				ok = target_write_bytes(temp, message, strlen(message), e);
				break;
			}
		ok = target_output_finish(temp, ok, out_path, o->emit == TARGET_EMIT_SHARED, e);
		phase_end(o->timer, o->emit == TARGET_EMIT_SHARED ? "seal" : o->emit == TARGET_EMIT_LLVM ? "print" : "codegen");
	}
	LLVMDisposeMessage(message);
	LLVMDisposeModule(mod);
	if (data)
		LLVMDisposeModule(data);
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	return ok;
}
