/*
 * The CPU features an artifact's code needs (GROVE_CPU_FEATURES_SYMBOL, rt/artifact.h),
 * checked against this CPU before anything of the artifact runs: code compiled with
 * --cpu native, or for x86-64-v4, dies of SIGILL on a CPU without AVX-512; grove_load
 * refuses it instead, naming what is missing.
 *
 * x86-64: by CPUID, and XGETBV for the registers the operating system must save.
 * AArch64 (Linux): by the kernel's HWCAP and HWCAP2 words (getauxval), the features
 * target/cpu_features.c records there (tools/gen_aarch64_cpus.py says which, and why the
 * others, which LLVM uses only for intrinsics grove never emits, are not recorded). On
 * other systems nothing is checked. A name this library does not know (a newer grove's)
 * is taken as had.
 */
#include <stdbool.h>
#include <stddef.h>

#include "rt/artifact.h"
#include "rt/device.h"

#include <stdio.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>

/* A feature by LLVM's name, where CPUID reports it: leaf (subleaf 0), register (0-3: eax ebx ecx edx), bit. */
typedef struct CpuFeature {
	const char *name;
	unsigned leaf, reg, bit;
	unsigned xsave; /* XCR0 bits the OS must enable for its registers: 0x6 (AVX), 0xe6 (AVX-512) */
} CpuFeature;

/* The features GROVE_CPU_FEATURES may name (target_cpu_features in target/machine.c lists the same). */
static const CpuFeature features[] = {
	{"sse3", 1, 2, 0, 0},          {"pclmul", 1, 2, 1, 0},      {"ssse3", 1, 2, 9, 0},
	{"fma", 1, 2, 12, 0x6},        {"cx16", 1, 2, 13, 0},       {"sse4.1", 1, 2, 19, 0},
	{"sse4.2", 1, 2, 20, 0},       {"movbe", 1, 2, 22, 0},      {"popcnt", 1, 2, 23, 0},
	{"aes", 1, 2, 25, 0},          {"avx", 1, 2, 28, 0x6},      {"f16c", 1, 2, 29, 0x6},
	{"bmi", 7, 1, 3, 0},           {"avx2", 7, 1, 5, 0x6},      {"bmi2", 7, 1, 8, 0},
	{"avx512f", 7, 1, 16, 0xe6},   {"avx512dq", 7, 1, 17, 0xe6}, {"adx", 7, 1, 19, 0},
	{"avx512ifma", 7, 1, 21, 0xe6}, {"avx512cd", 7, 1, 28, 0xe6}, {"sha", 7, 1, 29, 0},
	{"avx512bw", 7, 1, 30, 0xe6},  {"avx512vl", 7, 1, 31, 0xe6}, {"avx512vbmi", 7, 2, 1, 0xe6},
	{"avx512vbmi2", 7, 2, 6, 0xe6}, {"gfni", 7, 2, 8, 0},        {"vaes", 7, 2, 9, 0x6},
	{"vpclmulqdq", 7, 2, 10, 0x6}, {"avx512vnni", 7, 2, 11, 0xe6}, {"avx512bitalg", 7, 2, 12, 0xe6},
	{"avx512vpopcntdq", 7, 2, 14, 0xe6}, {"avx512fp16", 7, 3, 23, 0xe6}, {"lzcnt", 0x80000001u, 2, 5, 0},
};

/* Whether this CPU (and its operating system, for the wide registers) has feature f. */
static bool cpu_has(const CpuFeature *f)
{
	unsigned regs[4] = {0}, max = __get_cpuid_max(f->leaf & 0x80000000u, NULL);
	if (max < f->leaf || !__get_cpuid_count(f->leaf, 0, &regs[0], &regs[1], &regs[2], &regs[3]) ||
	    !(regs[f->reg] >> f->bit & 1))
		return false;
	if (f->xsave) {
		unsigned a, b, c, d, lo, hi;
		if (!__get_cpuid(1, &a, &b, &c, &d) || !(c >> 27 & 1)) /* OSXSAVE: XGETBV is there */
			return false;
		__asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		(void)hi;
		return (lo & f->xsave) == f->xsave;
	}
	return true;
}

/* Feature name [p, p + n) known and had by this CPU; unknown names are taken as had (a newer grove's). */
static bool cpu_has_named(const char *p, size_t n)
{
	for (size_t i = 0; i < sizeof features / sizeof *features; i++)
		if (strlen(features[i].name) == n && !memcmp(features[i].name, p, n))
			return cpu_has(&features[i]);
	return true;
}
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>

/* A feature by LLVM's name and the HWCAP and HWCAP2 bits Linux reports it by (all of them). */
typedef struct CpuFeature {
	const char *name;
	unsigned long hwcap, hwcap2;
} CpuFeature;

/* The features GROVE_CPU_FEATURES may name on AArch64 (aarch64_checked in target/cpu_features.c lists the same). */
static const CpuFeature features[] = {
	{"fp-armv8", HWCAP_FP, 0},        {"neon", HWCAP_ASIMD, 0},     {"fullfp16", HWCAP_FPHP | HWCAP_ASIMDHP, 0},
	{"lse", HWCAP_ATOMICS, 0},        {"rdm", HWCAP_ASIMDRDM, 0},   {"rcpc", HWCAP_LRCPC, 0},
	{"dotprod", HWCAP_ASIMDDP, 0},    {"complxnum", HWCAP_FCMA, 0}, {"sve", HWCAP_SVE, 0},
	{"sve2", 0, HWCAP2_SVE2},
};

/* Feature name [p, p + n) known and had by this CPU; unknown names are taken as had (a newer grove's). */
static bool cpu_has_named(const char *p, size_t n)
{
	for (size_t i = 0; i < sizeof features / sizeof *features; i++)
		if (strlen(features[i].name) == n && !memcmp(features[i].name, p, n))
			return (getauxval(AT_HWCAP) & features[i].hwcap) == features[i].hwcap &&
			       (getauxval(AT_HWCAP2) & features[i].hwcap2) == features[i].hwcap2;
	return true;
}
#else
static bool cpu_has_named(const char *p, size_t n)
{
	(void)p;
	(void)n;
	return true;
}
#endif

/* What to do instead, for messages: grove runs on x86-64 hosts, which compile for AArch64 by name. */
#if defined(__aarch64__)
static const char hint[] = "compile it with --cpu naming this CPU, or with --cpu generic for any AArch64 CPU";
#else
static const char hint[] = "compile it on this machine, or with --cpu x86-64 for any x86-64 CPU";
#endif

GroveStatus grove_check_cpu(const char *needed, const char *path, GroveError *err)
{
	char missing[512];
	size_t used = 0, count = 0;
	missing[0] = 0;
	for (const char *p = needed; p && *p;) {
		size_t n = strcspn(p, ",");
		if (n && !cpu_has_named(p, n)) {
			int w = snprintf(missing + used, sizeof missing - used, "%s%.*s", count ? ", " : "", (int)n, p);
			used += w > 0 && (size_t)w < sizeof missing - used ? (size_t)w : 0;
			count++;
		}
		p += n + (p[n] == ',');
	}
	if (!count)
		return GROVE_OK;
	return grove_fail(err, GROVE_ERROR_UNAVAILABLE,
	                  "%s: compiled for a CPU with %s, which this CPU lacks; its code would stop with an illegal "
	                  "instruction here (%s)",
	                  path, missing, hint);
}
