/* x86-64 CPU names LLVM 16 knows (from `llc-16 -march=x86-64 -mcpu=help`), for checking --cpu. */
static const char *const x86_cpus[] = {
	"alderlake", "amdfam10", "athlon", "athlon-4", "athlon-fx", "athlon-mp",
	"athlon-tbird", "athlon-xp", "athlon64", "athlon64-sse3", "atom", "barcelona",
	"bdver1", "bdver2", "bdver3", "bdver4", "bonnell", "broadwell",
	"btver1", "btver2", "c3", "c3-2", "cannonlake", "cascadelake",
	"cooperlake", "core-avx-i", "core-avx2", "core2", "corei7", "corei7-avx",
	"emeraldrapids", "generic", "geode", "goldmont", "goldmont-plus", "grandridge",
	"graniterapids", "haswell", "i386", "i486", "i586", "i686",
	"icelake-client", "icelake-server", "ivybridge", "k6", "k6-2", "k6-3",
	"k8", "k8-sse3", "knl", "knm", "lakemont", "meteorlake",
	"nehalem", "nocona", "opteron", "opteron-sse3", "penryn", "pentium",
	"pentium-m", "pentium-mmx", "pentium2", "pentium3", "pentium3m", "pentium4",
	"pentium4m", "pentiumpro", "prescott", "raptorlake", "rocketlake", "sandybridge",
	"sapphirerapids", "sierraforest", "silvermont", "skx", "skylake", "skylake-avx512",
	"slm", "tigerlake", "tremont", "westmere", "winchip-c6", "winchip2",
	"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "yonah", "znver1",
	"znver2", "znver3", "znver4",
};
