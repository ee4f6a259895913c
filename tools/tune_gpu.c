/*
 * grove tune --target gpusim|cuda|rocm: SilvanForge's template schedules (HGpuKnobs),
 * the candidates its pruning heuristic keeps (hir_gpu_candidates) evaluated in the
 * heuristic's two phases: every candidate with its tree threads' sums in shared memory
 * (sharedReduce), then the best three with them in global memory.
 *
 * A candidate is timed on the device where there is one: libgrove loads the artifact
 * through the CUDA Driver API or the HSA runtime, and the CPU search's timing loop
 * runs it. Where there is none, grove says so and ranks by an estimate instead:
 *   - cuda (and gpusim, as sm_80): ptxas -v's report for the arch (each kernel's
 *     registers, shared memory and spills, so the blocks an SM holds), and the memory
 *     requests the candidate's warps make on the simulator over the batch's first rows
 *     (its kernels built to profile them), made into a time by a model of the SM's
 *     memory pipe and latency (estimate(), at PROFILE_ROWS below); fewer spilled bytes
 *     first, then the estimated time, then the heuristic's order.
 *   - rocm: the heuristic's order, keeping the candidates whose HSACO links.
 * On gpusim every candidate's profiled run must also predict what the first did: a
 * correctness check (the simulator's speed says nothing of a GPU's; its requests do).
 */
#include "tools/tune.h"
#include "tools/cli.h"
#include "rt/device.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Candidates tried again with their tree threads' sums in the other memory (Algorithm 1's reduction phase, line 25). */
#define SHARED_REDUCE_TOP 3
/* Rows each candidate predicts on the simulator to be checked against the first. */
#define CHECK_ROWS 256
/* How far a checked prediction may stray from the first's (summing trees in another order rounds differently). */
#define CHECK_TOLERANCE 1e-5
#define PTXAS_DEFAULT "/usr/local/cuda/bin/ptxas"

typedef enum GpuBasis { BASIS_TIMED, BASIS_PTXAS, BASIS_ORDER } GpuBasis;
static const char *const basis_names[] = {"timed", "ptxas", "order"};

typedef struct GpuCandidate {
	HGpuKnobs knobs;
	uint32_t order;      /* place in the heuristic's list (shared-reduction ones after the others) */
	bool done, failed;   /* failed: refused by the lowering or the assembler, or predicted wrong (why) */
	char why[1100];      /* room for an Error's message and a prefix */
	double seconds;      /* timed: per row */
	uint32_t registers;  /* ptxas: the most any kernel uses per thread */
	uint64_t shared;     /* ptxas: the most shared memory any kernel's block takes */
	uint64_t spills;     /* ptxas: bytes of spill stores and loads over the kernels */
	double occupancy;    /* ptxas: the lowest estimate over the kernels, 0-1 */
	uint32_t resident[GROVE_SIM_KERNELS]; /* ptxas: per kernel of the LIR, its blocks an SM holds at once */
	double requests;     /* the simulator: memory requests of a warp per row (global and shared) */
	double estimate;     /* ns a row at the batch, from the requests (estimate()); 0: none */
	double compile;      /* seconds to compile */
	double key[3];       /* what the ranking sorts by, smallest first (rank()) */
} GpuCandidate;

/*
 * What an SM of an NVIDIA architecture holds (the CUDA occupancy calculator's
 * figures): resident threads and blocks, 32-bit registers, shared memory for blocks,
 * and the shared memory the driver keeps per block; and, for the estimate, the SMs and
 * boost clock (GHz) of a data-centre GPU of it: V100, T4, A100, A10, L4, H100 SXM.
 */
typedef struct CudaArch {
	const char *name;
	uint32_t threads, blocks, registers, shared, reserved, sms;
	double clock;
} CudaArch;

static const CudaArch cuda_arches[] = {
	{"sm_70", 2048, 32, 65536, 98304, 0, 80, 1.53},     {"sm_75", 1024, 16, 65536, 65536, 0, 40, 1.59},
	{"sm_80", 2048, 32, 65536, 167936, 1024, 108, 1.41}, {"sm_86", 1536, 16, 65536, 102400, 1024, 72, 1.70},
	{"sm_89", 1536, 24, 65536, 102400, 1024, 58, 2.04}, {"sm_90", 2048, 32, 65536, 233472, 1024, 132, 1.98},
};

/*
 * The estimate of a candidate's time where no device times it (estimate()), from the
 * memory requests its warps make on the simulator (rt/gpusim.c, profiled kernels) over
 * PROFILE_ROWS rows at most: a tree walk's kernels are bound by the L1 and shared-memory
 * pipe of each SM (issue 54: a request count predicted the H100's time of higgs within
 * 7%). Per kernel, at the batch's B rows, with G global sectors, S shared wavefronts and
 * Q requests a row, blocks of W warps, R blocks resident on each of the arch's SMs:
 *   throughput = B * (G / SECTORS_PER_CYCLE + S) / min(SMs, blocks)   cycles
 *   latency    = ceil(blocks / (SMs * R)) * (B * Q / (blocks * W)) * REQUEST_CYCLES
 *                (each wave of resident blocks; a warp's requests one after the other)
 *   time       = max(throughput, latency) / clock + LAUNCH_NS
 * and the candidate's is CALL_NS and the sum over its kernels, per row. A shared-memory
 * wavefront takes the pipe a cycle; a launch about 3 us, a call's synchronisation about
 * 7. SECTORS_PER_CYCLE and REQUEST_CYCLES were fitted to an H200's times of higgs under
 * 32 rows x 2 tree threads a block, at 2^20 and 4096 rows (the pipe below the L1's four
 * sectors a cycle, as nodes come from L2; a dependent request as an L2 hit and a shared
 * read take): docs/gpu.md, grove tune without a device, has the points it predicts.
 */
#define PROFILE_ROWS 2048
#define SECTORS_PER_CYCLE 1.5
#define REQUEST_CYCLES 120.0
#define LAUNCH_NS 3000.0
#define CALL_NS 7000.0

typedef struct GpuSearch {
	Tuner *t;
	HGpuShape shape;
	GpuCandidate *c;
	uint32_t num;
	GpuBasis basis;
	const char *ptxas;       /* the assembler, for BASIS_PTXAS */
	char ptxas_path[4096];
	const CudaArch *arch;    /* whose limits the estimate uses */
	const char *assemble_as; /* the arch ptxas assembles for (sm_75 for sm_70, which CUDA 13's ptxas dropped) */
	char device[64];         /* the log's device column */
	float *reference;        /* gpusim: the first candidate's predictions of CHECK_ROWS rows, or NULL */
	size_t check_rows;
} GpuSearch;

/*
 * The occupancy estimate: the share of an SM's thread slots that blocks of `threads`
 * threads fill, each thread holding `registers` registers and each block `shared`
 * bytes of shared memory, as NVIDIA's occupancy calculator counts:
 *   W (warps per block)       = ceil(threads / 32)
 *   registers per warp        = ceil(registers * 32 / 256) * 256
 *   blocks per SM             = min(resident blocks, resident threads / 32W,
 *                                   SM registers / (W * registers per warp),
 *                                   SM shared memory / (ceil(shared / 128) * 128 + reserve))
 *   occupancy                 = blocks per SM * 32W / resident threads
 */
static uint64_t resident_blocks(const CudaArch *a, uint64_t threads, uint32_t registers, uint64_t shared)
{
	uint64_t warps = (threads + 31) / 32, per_warp = (registers * 32 + 255) / 256 * 256, blocks = a->blocks;
	uint64_t by_threads = a->threads / (32 * warps), by_registers = per_warp ? a->registers / (warps * per_warp) : blocks;
	uint64_t by_shared = shared ? a->shared / ((shared + 127) / 128 * 128 + a->reserved) : blocks;
	blocks = by_threads < blocks ? by_threads : blocks;
	blocks = by_registers < blocks ? by_registers : blocks;
	return by_shared < blocks ? by_shared : blocks;
}

static double occupancy(const CudaArch *a, uint64_t threads, uint32_t registers, uint64_t shared)
{
	return (double)(resident_blocks(a, threads, registers, shared) * 32 * ((threads + 31) / 32)) / a->threads;
}

/* Run argv (argv[0] a path) with its standard output and error going to path; its exit status, or -1 if it did not run. */
static int run_to_file(char *const argv[], const char *path)
{
	int status, fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pid_t pid;
	if (fd < 0)
		return -1;
	if ((pid = fork()) == 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd);
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The contents of the file at path (malloc'ed, NUL-terminated), or NULL. */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *text;
	long n;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = xmalloc((size_t)(n > 0 ? n : 0) + 1);
	n = (long)fread(text, 1, (size_t)(n > 0 ? n : 0), f);
	text[n] = 0;
	fclose(f);
	return text;
}

/* Threads per block of kernel i of m. */
static uint64_t kernel_threads(const LModule *m, uint32_t i)
{
	const LLaunch *l = &m->funcs[i]->launch;
	return (uint64_t)(l->block[0].count ? l->block[0].count : 1) * (l->block[1].count ? l->block[1].count : 1) *
	       (l->block[2].count ? l->block[2].count : 1);
}

/* The kernel of m that PTX names `name` (grove_model_NAME), or m->num_funcs if none is. */
static uint32_t kernel_named(const LModule *m, const char *name)
{
	static const char prefix[] = "grove_model_";
	uint32_t i = 0;
	if (strncmp(name, prefix, sizeof prefix - 1))
		return m->num_funcs;
	while (i < m->num_funcs && strcmp(m->funcs[i]->name, name + sizeof prefix - 1))
		i++;
	return i;
}

/* Read ptxas -v's report into c: per kernel its spills, registers and shared memory, then its occupancy with m's block size. */
static void read_ptxas_report(const GpuSearch *g, const LModule *m, const char *report, GpuCandidate *c)
{
	char name[128] = "";
	unsigned long long stores = 0, loads = 0;
	c->occupancy = 1;
	for (const char *next = report; *next; next += strcspn(next, "\n"), next += *next == '\n') {
		char line[512]; /* (searched line by line: a search of the rest would find the next kernel's lines) */
		const char *at;
		unsigned registers;
		snprintf(line, sizeof line, "%.*s", (int)strcspn(next, "\n"), next);
		if ((at = strstr(line, "entry function '")))
			sscanf(at + 16, "%127[^']", name);
		else if ((at = strstr(line, "bytes spill stores")) && sscanf(line, "%*u bytes stack frame, %llu bytes spill stores, %llu bytes spill loads", &stores, &loads) == 2)
			c->spills += stores + loads;
		else if ((at = strstr(line, "Used ")) && sscanf(at, "Used %u registers", &registers) == 1) {
			unsigned long long shared = 0;
			const char *smem = strstr(line, " bytes smem");
			uint32_t kernel = kernel_named(m, name);
			uint64_t threads = kernel < m->num_funcs ? kernel_threads(m, kernel) : 0;
			while (smem && smem > line && smem[-1] >= '0' && smem[-1] <= '9')
				smem--;
			if (smem)
				shared = strtoull(smem, NULL, 10);
			c->registers = registers > c->registers ? registers : c->registers;
			c->shared = shared > c->shared ? shared : c->shared;
			if (threads) {
				double o = occupancy(g->arch, threads, registers, shared);
				c->occupancy = o < c->occupancy ? o : c->occupancy;
				if (kernel < GROVE_SIM_KERNELS)
					c->resident[kernel] = (uint32_t)resident_blocks(g->arch, threads, registers, shared);
			}
		}
	}
}

/* Assemble m's PTX with ptxas and read its resources into c; false (c->why says why) where it fails. */
static bool rank_by_ptxas(GpuSearch *g, const LModule *m, GpuCandidate *c)
{
	Tuner *t = g->t;
	char ptx[PATH_MAX], report_path[PATH_MAX], arch[32];
	char *argv[] = {(char *)g->ptxas, arch, "-v", ptx, "-o", "/dev/null", NULL};
	TargetOptions o = {.emit = TARGET_EMIT_PTX, .opt_level = 3, .device = TARGET_DEVICE_CUDA, .gpu_arch = g->arch->name};
	Error e = {0};
	char *report;
	int status;
	snprintf(ptx, sizeof ptx, "%s/candidate.ptx", t->dir);
	snprintf(report_path, sizeof report_path, "%s/ptxas.txt", t->dir);
	if (!target_emit(m, &o, ptx, &e)) {
		snprintf(c->why, sizeof c->why, "%s", e.message);
		return false;
	}
	snprintf(arch, sizeof arch, "-arch=%s", g->assemble_as);
	status = run_to_file(argv, report_path);
	report = read_text(report_path);
	if (status != 0)
		snprintf(c->why, sizeof c->why, "%s %s: exit %d: %.300s", g->ptxas, arch, status, report ? report : "");
	else
		read_ptxas_report(g, m, report ? report : "", c);
	free(report);
	unlink(report_path);
	unlink(ptx);
	return status == 0;
}

/* Whether predictions a and b (n values) agree within CHECK_TOLERANCE; where not, the first difference goes to why. */
static bool same_predictions(const float *a, const float *b, size_t n, size_t per_row, char *why, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		double x = a[i], y = b[i];
		if (x == y || (isnan(x) && isnan(y)) || fabs(x - y) <= CHECK_TOLERANCE * (fabs(y) > 1 ? fabs(y) : 1))
			continue;
		snprintf(why, size, "on the simulator, row %zu predicts %.9g where the first candidate predicted %.9g",
		         i / per_row, x, y);
		return false;
	}
	return true;
}

/*
 * Compile m for target o (NULL: t's) into an artifact and load it; false (c->why) where
 * it does not compile, *model NULL (err says why) where libgrove cannot load it.
 */
static bool load_artifact(GpuSearch *g, const LModule *m, const TargetOptions *o, GroveModel **model, GroveError *err,
                          GpuCandidate *c)
{
	Tuner *t = g->t;
	char path[PATH_MAX];
	Error e = {0};
	bool ok;
	snprintf(path, sizeof path, "%s/candidate.so", t->dir);
	if (!target_emit(m, o ? o : &t->target, path, &e)) {
		snprintf(c->why, sizeof c->why, "%s", e.message);
		return false;
	}
	ok = grove_load(path, model, err) == GROVE_OK;
	unlink(path);
	if (!ok)
		*model = NULL;
	return true;
}

/*
 * Check that c's predictions on the simulator of the pool's first check_rows rows (out,
 * malloc'ed, taken) are what the first candidate's were (which they become if first).
 */
static bool check_predictions(GpuSearch *g, float *out, size_t per_row, GpuCandidate *c)
{
	bool ok;
	if (!g->reference) {
		g->reference = out;
		return true;
	}
	ok = same_predictions(out, g->reference, g->check_rows * per_row, per_row, c->why, sizeof c->why);
	free(out);
	return ok;
}

/* Run c's artifact (model) on the simulator and check its predictions (check_predictions). */
static bool check_on_simulator(GpuSearch *g, GroveModel *model, GpuCandidate *c)
{
	Tuner *t = g->t;
	size_t per_row = grove_num_outputs(model, 0), n = g->check_rows * per_row;
	float *out = xmalloc(n * sizeof *out);
	GroveError err;
	if (grove_predict(model, t->pool, g->check_rows, t->features, out, n, 0, &err) != GROVE_OK) {
		snprintf(c->why, sizeof c->why, "on the simulator: %s", err.message);
		free(out);
		return false;
	}
	return check_predictions(g, out, per_row, c);
}

/* The blocks of kernel i of m's launch for nrows rows. */
static int64_t kernel_blocks(const LModule *m, uint32_t i, int64_t nrows)
{
	int64_t blocks = 1;
	for (int d = 0; d < 3; d++)
		blocks *= lir_dim_value(&m->funcs[i]->launch.grid[d], nrows);
	return blocks;
}

/* c's estimate (above PROFILE_ROWS) from p, its kernels' requests over n rows. */
static void estimate(const GpuSearch *g, const LModule *m, const GroveSimProfile *p, double n, GpuCandidate *c)
{
	const CudaArch *a = g->arch;
	double rows = (double)g->t->batch, ns = CALL_NS;
	c->requests = 0;
	for (uint32_t i = 0; i < m->num_funcs && i < GROVE_SIM_KERNELS; i++) {
		const GroveSimCounts *k = &p->kernels[i];
		double blocks, warps, q, sms, waves, throughput, latency;
		if (m->funcs[i]->entry != 0) /* (predict's kernels: predict_f64's are its twins) */
			continue;
		blocks = (double)kernel_blocks(m, i, (int64_t)rows);
		warps = (double)((kernel_threads(m, i) + 31) / 32);
		q = (double)(k->global_requests + k->shared_requests) / n;
		sms = blocks < a->sms ? blocks : a->sms;
		waves = ceil(blocks / (a->sms * (c->resident[i] ? c->resident[i] : 1)));
		throughput = rows * ((double)k->global_sectors / SECTORS_PER_CYCLE + (double)k->shared_wavefronts) / n / sms;
		latency = waves * rows * q / (blocks * warps) * REQUEST_CYCLES;
		ns += (throughput > latency ? throughput : latency) / a->clock + LAUNCH_NS;
		c->requests += q;
	}
	c->estimate = ns / rows;
}

/*
 * Run m, compiled for the simulator to profile its memory requests, on the batch's
 * first rows (PROFILE_ROWS at most), and make c's estimate of them; on gpusim, check its
 * predictions too. False (c->why) where it fails.
 */
static bool profile_on_simulator(GpuSearch *g, const LModule *m, GpuCandidate *c)
{
	Tuner *t = g->t;
	TargetOptions o = {.emit = TARGET_EMIT_SHARED, .opt_level = 3, .device = TARGET_DEVICE_GPUSIM, .profile = true};
	GroveSimProfile profile = {0};
	size_t n = t->batch < PROFILE_ROWS ? t->batch : PROFILE_ROWS, per_row;
	GroveModel *model;
	GroveError err;
	float *out;
	bool ok;
	if (!load_artifact(g, m, &o, &model, &err, c))
		return false;
	if (!model) {
		snprintf(c->why, sizeof c->why, "%s", err.message);
		return false;
	}
	per_row = grove_num_outputs(model, 0);
	out = xmalloc(n * per_row * sizeof *out);
	grove_gpusim_profile = &profile;
	ok = grove_predict(model, t->pool, n, t->features, out, n * per_row, 0, &err) == GROVE_OK;
	grove_gpusim_profile = NULL;
	grove_free(model);
	if (!ok || profile.incomplete) {
		snprintf(c->why, sizeof c->why, "profiling on the simulator: %s", ok ? "out of memory" : err.message);
		free(out);
		return false;
	}
	estimate(g, m, &profile, (double)n, c);
	if (t->target.device != TARGET_DEVICE_GPUSIM) {
		free(out);
		return true;
	}
	return check_predictions(g, out, per_row, c);
}

/* Whether m's HSACO for t's arch links (BASIS_ORDER keeps only candidates that do); false (c->why) where not. */
static bool hsaco_links(GpuSearch *g, const LModule *m, GpuCandidate *c)
{
	Tuner *t = g->t;
	TargetOptions o = t->target;
	char path[PATH_MAX];
	Error e = {0};
	bool ok;
	o.emit = TARGET_EMIT_HSACO;
	snprintf(path, sizeof path, "%s/candidate.hsaco", t->dir);
	if (!(ok = target_emit(m, &o, path, &e)))
		snprintf(c->why, sizeof c->why, "%s", e.message);
	unlink(path);
	return ok;
}

/* Judge c by the search's basis (and on the simulator for gpusim); false (c->why) where it fails. */
static bool judge(GpuSearch *g, const LModule *m, GpuCandidate *c)
{
	Tuner *t = g->t;
	GroveModel *model = NULL;
	GroveError err;
	bool ok = true;
	if (g->basis == BASIS_PTXAS) /* (and on gpusim the profiled run is the check) */
		return rank_by_ptxas(g, m, c) && profile_on_simulator(g, m, c);
	/* Timed, with --estimate and ptxas at hand: the estimate too, printed beside the time (its data to check it on). */
	if (g->basis == BASIS_TIMED && g->ptxas && !(rank_by_ptxas(g, m, c) && profile_on_simulator(g, m, c)))
		c->estimate = 0;
	if (g->basis == BASIS_ORDER && t->target.device == TARGET_DEVICE_ROCM)
		return hsaco_links(g, m, c);
	if (g->basis != BASIS_TIMED && t->target.device != TARGET_DEVICE_GPUSIM)
		return true;
	if (!load_artifact(g, m, NULL, &model, &err, c))
		return false;
	if (!model) {
		snprintf(c->why, sizeof c->why, "%s", err.message);
		return false;
	}
	if (t->target.device == TARGET_DEVICE_GPUSIM)
		ok = check_on_simulator(g, model, c);
	if (ok && g->basis == BASIS_TIMED)
		c->seconds = tune_time_model(t, model);
	grove_free(model);
	return ok;
}

/* Lower t's forest under knobs k to LIR (a GPU module) into c; false (e says why) where the lowering refuses it. */
static bool lower_knobs(Tuner *t, const HGpuKnobs *k, Compiled *c, Error *e)
{
	PipelineOptions o = t->options;
	o.scheduled = true;
	o.representation = lower_representation_name(k->representation);
	*c = (Compiled){.hir = hir_forest_copy(t->forest)};
	return hir_apply_gpu_knobs(c->hir, k, e) && pipeline_lower(t->model, LEVEL_LIR, &o, c, e);
}

/* Append c to the log. */
static void log_candidate(GpuSearch *g, const GpuCandidate *c)
{
	const HGpuKnobs *k = &c->knobs;
	char knobs[160], judged[200], measured[160] = ",,,,";
	if (!c->failed && g->basis == BASIS_PTXAS)
		snprintf(measured, sizeof measured, "%u,%llu,%llu,%.4f,", c->registers, (unsigned long long)c->shared,
		         (unsigned long long)c->spills, c->occupancy);
	else if (!c->failed && g->basis == BASIS_TIMED)
		snprintf(measured, sizeof measured, ",,,,%.6g", c->seconds * 1e6);
	snprintf(knobs, sizeof knobs, "%u,%u,%u,%u,%u,%u,%u,%u", k->rows_per_block, k->rows_per_thread, k->tree_threads,
	         k->interleave, k->unroll, k->cache_rows, k->cache_trees, k->shared_reduce);
	snprintf(judged, sizeof judged, "%s,%s,%.3f", c->failed ? "failed" : basis_names[g->basis], measured, c->compile);
	tune_log_line(g->t, g->device, lower_representation_name(k->representation), NULL, knobs, judged);
}

/* Compile and judge candidate c once. */
static void evaluate(GpuSearch *g, GpuCandidate *c)
{
	Tuner *t = g->t;
	Compiled compiled;
	Error e = {0};
	char what[200];
	double begin = now();
	c->done = true;
	if (!lower_knobs(t, &c->knobs, &compiled, &e)) {
		snprintf(c->why, sizeof c->why, "%s", e.message);
		c->failed = true;
	} else
		c->failed = !judge(g, compiled.lir, c);
	compiled_free(&compiled);
	c->compile = now() - begin;
	log_candidate(g, c);
	if (t->verbose) {
		hir_gpu_knobs_describe(&c->knobs, what, sizeof what);
		if (c->failed)
			fprintf(stderr, "tune: skipped %s: %s\n", what, c->why);
		else if (g->basis == BASIS_TIMED)
			fprintf(stderr, "%9.4f us/row  %s\n", c->seconds * 1e6, what);
		else
			fprintf(stderr, "%3u regs %6llu B smem %4llu B spilled %3.0f%% %7.2f requests/row %8.3f ns/row  %s\n",
			        c->registers, (unsigned long long)c->shared, (unsigned long long)c->spills, c->occupancy * 100,
			        c->requests, c->estimate, what);
	}
}

static int by_key(const void *pa, const void *pb)
{
	const GpuCandidate *a = pa, *b = pb;
	for (int i = 0; i < 3; i++)
		if (a->key[i] != b->key[i])
			return a->key[i] < b->key[i] ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Sort the candidates: those judged and passed first, then by time, or by spills and occupancy, then by the heuristic's order. */
static void rank(GpuSearch *g)
{
	for (uint32_t i = 0; i < g->num; i++) {
		GpuCandidate *c = &g->c[i];
		c->key[0] = c->done && !c->failed ? 0 : 1;
		c->key[1] = g->basis == BASIS_TIMED ? c->seconds : g->basis == BASIS_PTXAS ? (double)c->spills : 0;
		c->key[2] = g->basis == BASIS_PTXAS ? c->estimate : 0;
		if (c->key[0])
			c->key[1] = c->key[2] = 0;
	}
	qsort(g->c, g->num, sizeof *g->c, by_key);
}

/* The ptxas to run: $GROVE_PTXAS, the CUDA toolkit's, or one on PATH (found: room for its path); NULL if there is none. */
static const char *find_ptxas(char found[4096])
{
	const char *env = getenv("GROVE_PTXAS"), *path = getenv("PATH");
	if (env && *env)
		return access(env, X_OK) == 0 ? env : NULL;
	if (access(PTXAS_DEFAULT, X_OK) == 0)
		return PTXAS_DEFAULT;
	for (const char *p = path; p && *p; p += strcspn(p, ":"), p += *p == ':') {
		snprintf(found, 4096, "%.*s/ptxas", (int)strcspn(p, ":"), p);
		if (access(found, X_OK) == 0)
			return found;
	}
	return NULL;
}

/* The architecture the estimate is for (cuda's, or sm_80 for gpusim), and the one ptxas assembles. */
static void choose_arch(GpuSearch *g)
{
	const char *name = g->t->target.device == TARGET_DEVICE_CUDA && g->t->target.gpu_arch ? g->t->target.gpu_arch : "sm_80";
	g->arch = &cuda_arches[2];
	for (size_t i = 0; i < COUNT_OF(cuda_arches); i++)
		if (!strcmp(cuda_arches[i].name, name))
			g->arch = &cuda_arches[i];
	g->assemble_as = strcmp(g->arch->name, "sm_70") ? g->arch->name : "sm_75";
}

/*
 * How candidates are judged: timed where the target's device answers (tried with the
 * first candidate that lowers), else statically, saying so on standard error.
 */
static void choose_basis(GpuSearch *g)
{
	Tuner *t = g->t;
	const char *why = "";
	GroveError err = {0};
	snprintf(g->device, sizeof g->device, "none");
	if (t->target.device != TARGET_DEVICE_GPUSIM) {
		for (uint32_t i = 0; i < g->num; i++) {
			Compiled compiled;
			GroveModel *model = NULL;
			Error e = {0};
			bool lowered = lower_knobs(t, &g->c[i].knobs, &compiled, &e) && load_artifact(g, compiled.lir, NULL, &model, &err, &g->c[i]);
			compiled_free(&compiled);
			if (!lowered)
				continue;
			if (model) {
				snprintf(g->device, sizeof g->device, "%s", grove_device(model));
				grove_free(model);
				g->basis = BASIS_TIMED;
				choose_arch(g);
				g->ptxas = t->estimate && t->target.device == TARGET_DEVICE_CUDA ? find_ptxas(g->ptxas_path) : NULL;
				return;
			}
			if (err.status != GROVE_ERROR_UNAVAILABLE)
				fail("tune: %s", err.message);
			why = err.message;
			break;
		}
	}
	choose_arch(g);
	g->ptxas = t->target.device == TARGET_DEVICE_ROCM ? NULL : find_ptxas(g->ptxas_path);
	g->basis = g->ptxas ? BASIS_PTXAS : BASIS_ORDER;
	if (t->target.device == TARGET_DEVICE_GPUSIM)
		fprintf(stderr, "tune: gpusim's speed is no GPU's: ");
	else
		fprintf(stderr, "tune: no %s device here (%s): ", t->target.device == TARGET_DEVICE_CUDA ? "CUDA" : "ROCm", why);
	if (g->basis == BASIS_PTXAS)
		fprintf(stderr, "ranking by an estimate for %s%s: ptxas' registers, shared memory and spills, and the memory "
		                "requests of each candidate's warps on the simulator (not a measurement)%s\n", g->arch->name,
		        g->assemble_as != g->arch->name ? ", assembled as sm_75 (CUDA 13's ptxas has no sm_70)" : "",
		        t->target.device == TARGET_DEVICE_GPUSIM ? "; every candidate is checked on the simulator" : "");
	else if (t->target.device == TARGET_DEVICE_ROCM)
		fprintf(stderr, "ranking by the heuristic's order (no estimate is made for AMD GPUs)\n");
	else
		fprintf(stderr, "no ptxas (the CUDA toolkit's, or $GROVE_PTXAS): ranking by the heuristic's order\n");
}

/* Fill g->c with the heuristic's candidates (those of --representation only, where given). */
static void list_candidates(GpuSearch *g)
{
	Tuner *t = g->t;
	uint32_t n = hir_gpu_candidates(&g->shape, NULL, 0);
	HGpuKnobs *all = xcalloc(n + 1, sizeof *all);
	hir_gpu_candidates(&g->shape, all, n);
	g->c = xcalloc(n + SHARED_REDUCE_TOP, sizeof *g->c);
	for (uint32_t i = 0; i < n; i++)
		if (!t->options.representation || !strcmp(t->options.representation, lower_representation_name(all[i].representation)))
			g->c[g->num] = (GpuCandidate){.knobs = all[i], .order = g->num}, g->num++;
	free(all);
	if (!g->num)
		fail("tune: the heuristic keeps no template schedule for %s at batch %zu (rows of %u margins need more shared "
		     "memory than a block has)", t->model, t->batch, g->shape.outputs);
}

/* Print the ranking, the judged candidates first. */
static void print_ranking(const GpuSearch *g, uint32_t failed)
{
	Tuner *t = g->t;
	uint32_t judged = 0;
	for (uint32_t i = 0; i < g->num; i++)
		judged += g->c[i].done;
	printf("grove tune %s --target %s: batch %zu, %u candidates judged (%u failed) in %.0f s, ranked by %s\n", t->model,
	       t->target_name, t->batch, judged, failed, now() - t->start,
	       g->basis == BASIS_TIMED ? "time on the device" : g->basis == BASIS_PTXAS ? "an estimate from ptxas and the simulator" : "the heuristic's order");
	printf(g->basis == BASIS_TIMED ? (g->ptxas ? "rank    us/row  estimate  schedule\n" : "rank    us/row  schedule\n")
	       : g->basis == BASIS_PTXAS ? "rank  regs  smem B  spill B  occupancy  requests/row  ns/row (estimate)  schedule\n"
	                                 : "rank  schedule\n");
	for (uint32_t i = 0; i < g->num && g->c[i].done && !g->c[i].failed && i < 12; i++) {
		const GpuCandidate *c = &g->c[i];
		char what[200];
		hir_gpu_knobs_describe(&c->knobs, what, sizeof what);
		if (g->basis == BASIS_TIMED && g->ptxas)
			printf("%4u %9.4f %9.4f  %s\n", i + 1, c->seconds * 1e6, c->estimate / 1e3, what);
		else if (g->basis == BASIS_TIMED)
			printf("%4u %9.4f  %s\n", i + 1, c->seconds * 1e6, what);
		else if (g->basis == BASIS_PTXAS)
			printf("%4u %5u %7llu %8llu %9.0f%% %13.2f %18.3f  %s\n", i + 1, c->registers, (unsigned long long)c->shared,
			       (unsigned long long)c->spills, c->occupancy * 100, c->requests, c->estimate, what);
		else
			printf("%4u  %s\n", i + 1, what);
	}
}

/* Write the best candidate's schedule to t->output, and say how to compile with it. */
static void write_best(const GpuSearch *g)
{
	Tuner *t = g->t;
	const GpuCandidate *best = &g->c[0];
	const char *representation = lower_representation_name(best->knobs.representation);
	HForest *f = hir_forest_copy(t->forest);
	char comment[600], what[200];
	Error e = {0};
	/* The knobs' schedule leaves the representation to the compile; the file names the one tuned. */
	if (!hir_apply_gpu_knobs(f, &best->knobs, &e) ||
	    (!(lower_representation_traits(best->knobs.representation) & LREP_CODE) && /* (code's names itself) */
	     !hir_schedule_representation(&f->schedule, representation, &e)))
		fail("tune: %s", e.message);
	hir_gpu_knobs_describe(&best->knobs, what, sizeof what);
	snprintf(comment, sizeof comment, "grove tune %s --target %s --batch %zu (ranked by %s): %s", t->model,
	         t->target_name, t->batch, basis_names[g->basis], what);
	tune_write_schedule(&f->schedule, comment, t->output);
	hir_forest_free(f);
	printf("best schedule written to %s (grove compile %s --target %s --schedule %s)\n", t->output, t->model,
	       t->target_name, t->output);
}

void tune_gpu(Tuner *t)
{
	GpuSearch g = {.t = t};
	uint32_t failed = 0, wrong = 0, phase1;
	const char *first_why = NULL;

	hir_gpu_shape(t->forest, t->batch, &g.shape);
	g.check_rows = t->batch < CHECK_ROWS ? t->batch : CHECK_ROWS;
	list_candidates(&g);
	choose_basis(&g);
	/* Phase 1: every candidate, the heuristic's first whatever the budget. */
	for (uint32_t i = 0; i < g.num && (i == 0 || now() - t->start < t->budget); i++)
		evaluate(&g, &g.c[i]);
	rank(&g);
	/*
	 * Phase 2: the best few again with the tree threads' sums in global memory (shared, where they were there);
	 * trees as code have no tree threads to fold.
	 */
	phase1 = g.num;
	for (uint32_t i = 0; i < phase1 && i < SHARED_REDUCE_TOP && g.c[i].done && !g.c[i].failed; i++) {
		GpuCandidate *c = &g.c[g.num];
		if (lower_representation_traits(g.c[i].knobs.representation) & LREP_CODE)
			continue;
		*c = (GpuCandidate){.knobs = g.c[i].knobs, .order = g.num};
		c->knobs.shared_reduce = !c->knobs.shared_reduce;
		g.num++;
		if (now() - t->start < t->budget)
			evaluate(&g, c);
	}
	rank(&g);
	for (uint32_t i = 0; i < g.num; i++)
		if (g.c[i].done && g.c[i].failed) {
			failed++;
			wrong += !strncmp(g.c[i].why, "on the simulator, row", 21);
			first_why = first_why ? first_why : g.c[i].why;
		}
	if (failed)
		fprintf(stderr, "tune: %u of the candidates failed%s; the first: %s\n", failed, t->verbose ? "" : " (-v lists them)",
		        first_why);
	if (!g.c[0].done || g.c[0].failed)
		fail("tune: no candidate compiles for %s", t->target_name);
	print_ranking(&g, failed);
	write_best(&g);
	free(g.reference);
	free(g.c);
	if (wrong)
		fail("tune: %u candidates predicted differently on the simulator from the first: a compiler bug (the best was "
		     "written all the same)", wrong);
}
