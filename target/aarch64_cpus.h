/*
 * AArch64 CPU names LLVM 16 knows, for checking --cpu, and the features of each that an
 * artifact records (target/cpu_features.c). Written by tools/gen_aarch64_cpus.py, which says
 * what is recorded and why.
 */
static const char *const aarch64_cpus[] = {
	"a64fx", "ampere1", "ampere1a", "apple-a10", "apple-a11", "apple-a12", "apple-a13", "apple-a14",
	"apple-a15", "apple-a16", "apple-a7", "apple-a8", "apple-a9", "apple-latest", "apple-m1", "apple-m2",
	"apple-s4", "apple-s5", "carmel", "cortex-a34", "cortex-a35", "cortex-a510", "cortex-a53", "cortex-a55",
	"cortex-a57", "cortex-a65", "cortex-a65ae", "cortex-a710", "cortex-a715", "cortex-a72", "cortex-a73",
	"cortex-a75", "cortex-a76", "cortex-a76ae", "cortex-a77", "cortex-a78", "cortex-a78c", "cortex-r82",
	"cortex-x1", "cortex-x1c", "cortex-x2", "cortex-x3", "cyclone", "exynos-m3", "exynos-m4", "exynos-m5",
	"falkor", "generic", "kryo", "neoverse-512tvb", "neoverse-e1", "neoverse-n1", "neoverse-n2", "neoverse-v1",
	"neoverse-v2", "saphira", "thunderx", "thunderx2t99", "thunderx3t110", "thunderxt81", "thunderxt83",
	"thunderxt88", "tsv110",
};

/* Each CPU's recorded features (LLVM's names, comma-separated), in the order of aarch64_cpus. */
static const char *const aarch64_cpu_features[] = {
	"fp-armv8,neon,fullfp16,lse,rdm,complxnum,sve", /* a64fx */
	"fp-armv8,neon,lse,rdm,rcpc,dotprod,complxnum", /* ampere1 */
	"fp-armv8,neon,lse,rdm,rcpc,dotprod,complxnum", /* ampere1a */
	"fp-armv8,neon,rdm", /* apple-a10 */
	"fp-armv8,neon,fullfp16,lse,rdm", /* apple-a11 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,complxnum", /* apple-a12 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum", /* apple-a13 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum", /* apple-a14 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum", /* apple-a15 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum", /* apple-a16 */
	"fp-armv8,neon", /* apple-a7 */
	"fp-armv8,neon", /* apple-a8 */
	"fp-armv8,neon", /* apple-a9 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum", /* apple-latest */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum", /* apple-m1 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum", /* apple-m2 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,complxnum", /* apple-s4 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,complxnum", /* apple-s5 */
	"fp-armv8,neon,fullfp16,lse,rdm", /* carmel */
	"fp-armv8,neon", /* cortex-a34 */
	"fp-armv8,neon", /* cortex-a35 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum,sve,sve2", /* cortex-a510 */
	"fp-armv8,neon", /* cortex-a53 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod", /* cortex-a55 */
	"fp-armv8,neon", /* cortex-a57 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod", /* cortex-a65 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod", /* cortex-a65ae */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum,sve,sve2", /* cortex-a710 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum,sve,sve2", /* cortex-a715 */
	"fp-armv8,neon", /* cortex-a72 */
	"fp-armv8,neon", /* cortex-a73 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod", /* cortex-a75 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod", /* cortex-a76 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod", /* cortex-a76ae */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod", /* cortex-a77 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod", /* cortex-a78 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod", /* cortex-a78c */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum", /* cortex-r82 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod", /* cortex-x1 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod", /* cortex-x1c */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum,sve,sve2", /* cortex-x2 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum,sve,sve2", /* cortex-x3 */
	"fp-armv8,neon", /* cyclone */
	"fp-armv8,neon", /* exynos-m3 */
	"fp-armv8,neon,fullfp16,lse,rdm,dotprod", /* exynos-m4 */
	"fp-armv8,neon,fullfp16,lse,rdm,dotprod", /* exynos-m5 */
	"fp-armv8,neon,rdm", /* falkor */
	"fp-armv8,neon", /* generic */
	"fp-armv8,neon", /* kryo */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum,sve", /* neoverse-512tvb */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod", /* neoverse-e1 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod", /* neoverse-n1 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum,sve,sve2", /* neoverse-n2 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum,sve", /* neoverse-v1 */
	"fp-armv8,neon,fullfp16,lse,rdm,rcpc,dotprod,complxnum,sve,sve2", /* neoverse-v2 */
	"fp-armv8,neon,lse,rdm,rcpc,dotprod,complxnum", /* saphira */
	"fp-armv8,neon", /* thunderx */
	"fp-armv8,neon,lse,rdm", /* thunderx2t99 */
	"fp-armv8,neon,lse,rdm,rcpc,complxnum", /* thunderx3t110 */
	"fp-armv8,neon", /* thunderxt81 */
	"fp-armv8,neon", /* thunderxt83 */
	"fp-armv8,neon", /* thunderxt88 */
	"fp-armv8,neon,fullfp16,lse,rdm,dotprod", /* tsv110 */
};
