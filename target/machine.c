/*
 * The architectures grove emits code for, one row of a table each, and LLVM target
 * machines for them. The row of the host's architecture compiles for this machine
 * (--cpu native, $CC links); the others are cross targets (a generic CPU, a cross
 * compiler links). Adding an architecture is adding a row, its CPU list and its LLVM
 * components in configure.py.
 */
#include "target/machine.h"
#include "target/target.h"
#include "target/aarch64_cpus.h"
#include "target/x86_cpus.h"

#include <llvm-c/Core.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct TargetArch {
	const char *name;          /* in messages: "x86-64", "aarch64" */
	const char *llvm_arch;     /* a triple's first component, as LLVM spells it */
	const char *gnu_triple;    /* Debian's multiarch triple, the cross compiler's prefix */
	const char *llvm_triple;   /* LLVM's spelling, emitted for when this is not the host */
	const char *cross_cc;      /* the cross compiler that links its shared libraries elsewhere */
	const char *cc_variable;   /* the environment variable naming another one */
	const char *cc_package;    /* the Debian package holding cross_cc */
	void (*init)(void);        /* registers the LLVM target */
	const char *const *cpus;   /* the CPU names LLVM knows */
	size_t num_cpus;
	const char *cpu_examples;  /* a few of them, for messages */
	const char *features;      /* LLVM features turned on or off whatever the CPU (after its own; "" for none) */
};

/* LLVM's X86 target, registered when a compile asks for it. */
static void init_x86(void)
{
	LLVMInitializeX86TargetInfo();
	LLVMInitializeX86Target();
	LLVMInitializeX86TargetMC();
	LLVMInitializeX86AsmPrinter();
	LLVMInitializeX86AsmParser();
}

/*
 * x86: no gathers. A walk's 16 interleaved rows are 16 chains of scalar loads whose
 * latencies overlap; where gathers are legal (any AVX-512 CPU, or AVX2 on one LLVM tunes
 * as fast-gather: Skylake and later Intel cores) LLVM's SLP vectoriser turns a step of
 * all 16 into 2-4 gathers, one chain of long latency, which made batches several times
 * slower and lone rows no faster (measured: docs/performance-notes.md, Gathers, and No
 * gathers). LLVM 16 takes any AVX-512 CPU's gathers as legal, so AVX-512 goes too:
 * what it would give the walks (wider reductions) the AVX2 code has at 8 lanes.
 */
#define X86_FEATURES "-avx512f,-fast-gather"

/* LLVM's AArch64 target, registered when a compile asks for it. */
static void init_aarch64(void)
{
	LLVMInitializeAArch64TargetInfo();
	LLVMInitializeAArch64Target();
	LLVMInitializeAArch64TargetMC();
	LLVMInitializeAArch64AsmPrinter();
	LLVMInitializeAArch64AsmParser();
}

static const TargetArch arches[] = {
	{"x86-64", "x86_64", "x86_64-linux-gnu", "x86_64-pc-linux-gnu", "x86_64-linux-gnu-gcc", "GROVE_CC_X86_64",
	 "gcc-x86-64-linux-gnu", init_x86, x86_cpus, COUNT_OF(x86_cpus), "x86-64, x86-64-v3, skylake, znver3", X86_FEATURES},
	{"aarch64", "aarch64", "aarch64-linux-gnu", "aarch64-unknown-linux-gnu", "aarch64-linux-gnu-gcc", "GROVE_CC_AARCH64",
	 "gcc-aarch64-linux-gnu", init_aarch64, aarch64_cpus, COUNT_OF(aarch64_cpus),
	 "generic, neoverse-n1, neoverse-v1, cortex-a72, apple-m1", ""},
};

/* Whether triple's first component is arch's. */
static bool triple_has_arch(const char *triple, const TargetArch *arch)
{
	size_t n = strlen(arch->llvm_arch);
	return !strncmp(triple, arch->llvm_arch, n) && triple[n] == '-';
}

/* Fill e with the triples --target accepts. */
static bool unknown_triple(const char *triple, const char *host, Error *e)
{
	char list[512] = "";
	size_t used = 0;
	for (size_t i = 0; i < COUNT_OF(arches); i++)
		used += (size_t)snprintf(list + used, sizeof list - used, "%s%s or %s%s", i ? ", " : "", arches[i].gnu_triple,
		                         arches[i].llvm_triple, triple_has_arch(host, &arches[i]) ? " (this host)" : "");
	return error_set(e, "--target %s: unknown target triple (grove emits code for %s)", triple, list);
}

bool target_platform(const char *triple, TargetPlatform *p, Error *e)
{
	char *host = LLVMGetDefaultTargetTriple();
	bool ok = false;
	memset(p, 0, sizeof *p);
	for (size_t i = 0; i < COUNT_OF(arches) && !p->arch; i++) {
		const TargetArch *arch = &arches[i];
		bool is_host = triple_has_arch(host, arch);
		if (triple ? !strcmp(triple, arch->gnu_triple) || !strcmp(triple, arch->llvm_triple) ||
		                 (is_host && !strcmp(triple, host))
		           : is_host) {
			p->arch = arch;
			p->host = is_host;
			snprintf(p->triple, sizeof p->triple, "%s", is_host ? host : arch->llvm_triple);
		}
	}
	if (p->arch)
		ok = true;
	else if (triple)
		unknown_triple(triple, host, e);
	else
		error_set(e, "this host (%s) is none of the architectures grove emits code for", host);
	LLVMDisposeMessage(host);
	return ok;
}

/* Whether LLVM knows the CPU name for arch. */
static bool known_cpu(const TargetArch *arch, const char *name)
{
	for (size_t i = 0; i < arch->num_cpus; i++)
		if (!strcmp(arch->cpus[i], name))
			return true;
	return false;
}

/*
 * No loop strength reduction (-disable-lsr). LLVM's code generator rewrites the address
 * arithmetic of loops before instruction selection; on grove's kernels it was the
 * costliest pass of the critical code part (about a third of the code generation of a
 * large model's lone rows' function), and the code ran as fast or faster without it, on
 * the CPU and on an H100 alike (measured: docs/performance-notes.md, No loop strength
 * reduction). LLVM's options are the process's: a program that loads libgrovec and uses
 * the same libLLVM for its own code gets this too.
 *
 * NVPTX's shared, constant and local pointers in 32 bits (-nvptx-short-ptr), as nvcc
 * has them: a walk's read of its cached row's feature then adds in 32 bits, not 64 (two
 * instructions on a GPU), and higgs' default kernels take 129 64-bit integer instructions
 * rather than 169 (ptxas; docs/gpu.md).
 *
 * A schedule budget for the SLP vectoriser (-slp-schedule-budget, default 100000
 * instructions scanned per block): the interleaved walks are long blocks of straight
 * code with nothing for it to bundle but the reductions, which it still finds inside
 * the smaller budget, and it was the costliest pass of the pipeline there.
 */
static void set_llvm_options(void)
{
	const char *const argv[] = {"grove", "-disable-lsr", "-slp-schedule-budget=1000", "-nvptx-short-ptr"};
	LLVMParseCommandLineOptions(4, argv, NULL);
}

void target_llvm_options(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, set_llvm_options);
}

LLVMTargetMachineRef target_machine_create(const TargetPlatform *p, const char *cpu, int opt_level, Error *e)
{
	static const LLVMCodeGenOptLevel levels[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
	                                             LLVMCodeGenLevelAggressive};
	const TargetArch *arch = p->arch;
	char *message = NULL, *host_cpu = NULL, *host_features = NULL, *features = NULL;
	LLVMTargetRef target;
	LLVMTargetMachineRef tm = NULL;

	if (!cpu || !*cpu)
		cpu = p->host ? "native" : "generic";
	target_llvm_options();
	arch->init();
	if (LLVMGetTargetFromTriple(p->triple, &target, &message)) {
		error_set(e, "no LLVM target for %s: %s", p->triple, message);
	} else if (!strcmp(cpu, "native") && !p->host) {
		error_set(e, "--cpu native: tunes for the machine grove runs on, which is not %s; name an %s CPU (%s; "
		          "default generic)", arch->gnu_triple, arch->name, arch->cpu_examples);
	} else if (!strcmp(cpu, "native")) {
		host_cpu = LLVMGetHostCPUName();
		host_features = LLVMGetHostCPUFeatures();
		features = malloc(strlen(host_features) + strlen(arch->features) + 2);
		if (features) {
			sprintf(features, "%s%s%s", host_features, *host_features && *arch->features ? "," : "", arch->features);
			tm = LLVMCreateTargetMachine(target, p->triple, host_cpu, features, levels[opt_level], LLVMRelocPIC,
			                             LLVMCodeModelDefault);
		} else {
			error_set(e, "out of memory for the host CPU's features");
		}
	} else if (!known_cpu(arch, cpu)) {
		error_set(e, "--cpu %s: unknown %s CPU (try %s%s)", cpu, arch->name, p->host ? "native, " : "", arch->cpu_examples);
	} else {
		tm = LLVMCreateTargetMachine(target, p->triple, cpu, arch->features, levels[opt_level], LLVMRelocPIC,
		                             LLVMCodeModelDefault);
	}
	if (!tm && e && !e->message[0])
		error_set(e, "cannot create an LLVM target machine for %s", p->triple);
	LLVMDisposeMessage(message);
	LLVMDisposeMessage(host_cpu);
	LLVMDisposeMessage(host_features);
	free(features);
	return tm;
}

/*
 * Whether the x86-64 CPU (NULL, "" or "native": this host, where triple is its) has
 * feature (LLVM's spelling: "+avx2"): its name is one of the n names, which have it.
 */
static bool x86_cpu_has(const char *triple, const char *cpu, const char *feature, const char *const *names, size_t n)
{
	TargetPlatform p;
	Error e;
	bool found = false;
	if (!target_platform(triple, &p, &e) || strcmp(p.arch->name, "x86-64"))
		return false;
	if (!cpu || !*cpu || !strcmp(cpu, "native")) {
		char *features = p.host ? LLVMGetHostCPUFeatures() : NULL;
		found = features && strstr(features, feature);
		LLVMDisposeMessage(features);
		return found;
	}
	for (size_t i = 0; i < n && !found; i++)
		found = !strcmp(cpu, names[i]);
	return found;
}

/* x86-64 CPUs of AVX-512 (LLVM 16's names). */
static const char *const avx512_cpus[] = {"cannonlake", "cascadelake", "cooperlake", "emeraldrapids", "graniterapids",
                                          "icelake-client", "icelake-server", "knl", "knm", "rocketlake",
                                          "sapphirerapids", "skx", "skylake-avx512", "tigerlake", "x86-64-v4", "znver4"};
/* And those of AVX2 without it. */
static const char *const avx2_cpus[] = {"alderlake", "bdver4", "broadwell", "core-avx2", "haswell", "meteorlake",
                                        "raptorlake", "skylake", "x86-64-v3", "znver1", "znver2", "znver3"};

bool target_wide_vectors(const char *triple, const char *cpu)
{
	return x86_cpu_has(triple, cpu, "+avx512f", avx512_cpus, COUNT_OF(avx512_cpus));
}

MTops target_vector_tops(const char *triple, const char *cpu)
{
	if (target_wide_vectors(triple, cpu))
		return MTOPS_WIDE;
	return x86_cpu_has(triple, cpu, "+avx2", avx2_cpus, COUNT_OF(avx2_cpus)) ? MTOPS_PAIRS : MTOPS_NONE;
}

const char *target_linker(const TargetPlatform *p, const char *cc)
{
	const char *named = getenv(p->host ? "GROVE_LINKER" : p->arch->cc_variable);
	if (!p->host)
		return named && *named ? named : p->arch->cross_cc;
	if (named && *named)
		return strcmp(named, "grove") ? named : NULL;
	if (cc)
		return cc;
	return strncmp(p->triple, "x86_64", 6) ? getenv("CC") ? getenv("CC") : "cc" : NULL;
}

bool target_linker_missing(const TargetPlatform *p, const char *linker, int error, Error *e)
{
	if (p->host)
		return error_set(e, "cannot run %s: %s", linker, strerror(error));
	return error_set(e, "cannot run %s to link the %s shared library: %s (install %s, e.g. with bash .ci/setup, or "
	                 "name a cross compiler in %s)", linker, p->arch->name, strerror(error), p->arch->cc_package,
	                 p->arch->cc_variable);
}
