/*
 * The CPU features an artifact's code may use, recorded in it (GROVE_CPU_FEATURES_SYMBOL,
 * rt/artifact.h) for grove_load to check (rt/cpu.c): code for --cpu native or x86-64-v4
 * would die of SIGILL on an older CPU, code for neoverse-n1 on a Cortex-A72.
 *
 * x86-64: for --cpu native the features are the host's, as LLVM reports them; for a named
 * CPU, those of its x86-64 level (v2, v3, v4, from the psABI), which the CPU has: the code
 * generator may use any of them. A name grove does not place records none.
 *
 * AArch64: the named CPU's (generic's by default) from target/aarch64_cpus.h, which
 * tools/gen_aarch64_cpus.py writes from what LLVM 16's backend selects for each CPU; it
 * says which features are recorded and why the others are not.
 */
#include "target/target.h"
#include "target/emit.h"
#include "target/machine.h"
#include "rt/artifact.h"
#include "target/aarch64_cpus.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What rt/cpu.c can check on x86-64 (LLVM's names); the host's other features are not recorded. */
static const char *const x86_checked[] = {
	"sse3", "pclmul", "ssse3", "fma", "cx16", "sse4.1", "sse4.2", "movbe", "popcnt", "aes", "avx", "f16c", "bmi",
	"avx2", "bmi2", "avx512f", "avx512dq", "adx", "avx512ifma", "avx512cd", "sha", "avx512bw", "avx512vl",
	"avx512vbmi", "avx512vbmi2", "gfni", "vaes", "vpclmulqdq", "avx512vnni", "avx512bitalg", "avx512vpopcntdq",
	"avx512fp16", "lzcnt"};
/* And on AArch64: the features tools/gen_aarch64_cpus.py records. */
static const char *const aarch64_checked[] = {"fp-armv8", "neon", "fullfp16", "lse", "rdm", "rcpc", "dotprod",
                                              "complxnum", "sve", "sve2"};

/* The x86-64 levels' features, each level's adding to the one before. */
static const char v2[] = "cx16,popcnt,sse3,sse4.1,sse4.2,ssse3";
static const char v3[] = "cx16,popcnt,sse3,sse4.1,sse4.2,ssse3,avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe";
static const char v4[] = "cx16,popcnt,sse3,sse4.1,sse4.2,ssse3,avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe,avx512f,avx512bw,"
                         "avx512cd,avx512dq,avx512vl";

/* Named CPUs (LLVM 16's) by level. */
static const char *const v4_cpus[] = {"cannonlake", "cascadelake", "cooperlake", "emeraldrapids", "graniterapids",
                                      "icelake-client", "icelake-server", "rocketlake", "sapphirerapids", "skx",
                                      "skylake-avx512", "tigerlake", "x86-64-v4", "znver4"};
static const char *const v3_cpus[] = {"alderlake", "bdver4", "broadwell", "core-avx2", "haswell", "meteorlake",
                                      "raptorlake", "skylake", "x86-64-v3", "znver1", "znver2", "znver3"};
static const char *const v2_cpus[] = {"nehalem", "corei7", "westmere", "sandybridge", "corei7-avx", "ivybridge",
                                      "core-avx-i", "silvermont", "slm", "goldmont", "goldmont-plus", "tremont",
                                      "btver2", "bdver1", "bdver2", "bdver3", "x86-64-v2"};

/* Whether cpu is one of the n names. */
static bool named(const char *cpu, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(cpu, names[i]))
			return true;
	return false;
}

/* The host's features among the n checked that LLVM reports on ("+avx2,-avx512f,..."), comma-separated (malloc'ed). */
static char *host_features(const char *const *checked, size_t count)
{
	char *all = LLVMGetHostCPUFeatures(), *out = xcalloc(strlen(all) + 2, 1);
	size_t used = 0;
	for (const char *p = all; *p;) {
		size_t n = strcspn(p, ",");
		for (size_t i = 0; p[0] == '+' && i < count; i++)
			if (strlen(checked[i]) == n - 1 && !memcmp(checked[i], p + 1, n - 1))
				used += (size_t)sprintf(out + used, "%s%.*s", used ? "," : "", (int)(n - 1), p + 1);
		p += n + (p[n] == ',');
	}
	LLVMDisposeMessage(all);
	return out;
}

/* The recorded features of AArch64 CPU cpu (generic's for none), "" for one LLVM does not know (malloc'ed). */
static char *aarch64_features(const char *cpu)
{
	for (size_t i = 0; i < COUNT_OF(aarch64_cpus); i++)
		if (!strcmp(aarch64_cpus[i], cpu && *cpu ? cpu : "generic"))
			return xstrdup(aarch64_cpu_features[i]);
	return xstrdup("");
}

char *target_cpu_features(const char *triple, const char *cpu)
{
	TargetPlatform p;
	Error e;
	bool native = !cpu || !*cpu || !strcmp(cpu, "native");
	if (!target_platform(triple, &p, &e))
		return xstrdup("");
	if (!strncmp(p.triple, "aarch64", 7))
		return native && p.host ? host_features(aarch64_checked, COUNT_OF(aarch64_checked)) : aarch64_features(cpu);
	if (strncmp(p.triple, "x86_64", 6))
		return xstrdup("");
	if (native)
		return p.host ? host_features(x86_checked, COUNT_OF(x86_checked)) : xstrdup("");
	if (!strcmp(cpu, "knl") || !strcmp(cpu, "knm")) /* AVX-512 without its BW, DQ and VL parts */
		return xstrdup("cx16,popcnt,sse3,sse4.1,sse4.2,ssse3,avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe,avx512f,avx512cd");
	return xstrdup(named(cpu, v4_cpus, COUNT_OF(v4_cpus))   ? v4
	               : named(cpu, v3_cpus, COUNT_OF(v3_cpus)) ? v3
	               : named(cpu, v2_cpus, COUNT_OF(v2_cpus)) ? v2
	                                                        : "");
}

void target_add_cpu_features(LLVMModuleRef mod, const char *features)
{
	LLVMContextRef ctx = LLVMGetModuleContext(mod);
	LLVMValueRef init = LLVMConstStringInContext(ctx, features, (unsigned)strlen(features), 0);
	LLVMValueRef global = LLVMAddGlobal(mod, LLVMTypeOf(init), GROVE_CPU_FEATURES_SYMBOL);
	LLVMSetInitializer(global, init);
	LLVMSetGlobalConstant(global, 1);
	LLVMSetLinkage(global, LLVMExternalLinkage);
	LLVMSetVisibility(global, LLVMDefaultVisibility);
}
