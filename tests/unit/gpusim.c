/*
 * GPU artifacts (ABI version 5) on libgrove's SIMT simulator. The code generator does
 * not write kernels yet, so this file holds kernels written in C as it would write them
 * (GroveSimKernel) and GPU descriptors of them: built with -DGPUSIM_ARTIFACT, it is an
 * artifact (a shared library, compiled and sealed at test time); built plainly, it is
 * the test, which loads that library itself first and points its writable
 * grove_artifact at one descriptor after another, each then loaded by grove_load.
 *
 * It checks predictions through every entry point (grid-stride loops, shared memory
 * behind a barrier, 3-D blocks with partial warps, a shuffle-tree reduction, float and
 * integer atomics, a sequence of three kernels, double rows), the simulator's errors
 * (a race, barriers and shuffles under divergence), descriptor checks, CUDA and ROCm
 * artifacts where no driver is installed, threads predicting at once, and (without
 * AddressSanitizer) every allocation of a prediction failing in turn.
 *
 * On fakes of the CUDA driver and the ROCm runtime (tests/fakes/gpu_drivers.c, built
 * at test time as libcuda.so.1 and libhsa-runtime64.so.1) the test runs the CUDA and
 * ROCm back-ends: predictions through both entry points, and their memory (kept between
 * calls, grown, never shared by two calls at once, freed after a failed allocation and
 * at grove_free), and both back-ends' calls of host rows in chunks.
 */
#include "tests/unit/gpusim.h"

#if defined(GPUSIM_ARTIFACT)

#include <stdbool.h>
#include <string.h>

/* The model blob: the weights of the features, then the bias. */
static const float model_blob[FEATURES + 1] = {1, 2, 3, 4, BIAS};

/* This thread's index in its block (x fastest), the threads of a block, and of the grid along x. */
static int64_t thread_in_block(const GroveSimThread *t) { return t->index[0] + t->index[6] * (t->index[1] + t->index[7] * t->index[2]); }
static int64_t block_threads(const GroveSimThread *t) { return t->index[6] * t->index[7] * t->index[8]; }

/* Grid-stride over rows, one 1-D block per 64 rows. */
static void k_dot(const void *rows, int64_t nrows, float *out, int32_t flags, void *workspace, const void *model,
                  GroveSimThread *t)
{
	(void)workspace;
	for (int64_t r = t->index[3] * t->index[6] + t->index[0]; r < nrows; r += t->index[6] * t->index[9])
		out[r] = dot((const float *)rows + r * FEATURES, model, flags);
}

/* The weights loaded into shared memory by the first threads of a 3-D block, then used by all after a barrier. */
static void k_shared(const void *rows, int64_t nrows, float *out, int32_t flags, void *workspace, const void *model,
                     GroveSimThread *t)
{
	float *w = (float *)t->shared;
	int64_t tid = thread_in_block(t), n = block_threads(t);
	(void)workspace;
	if (tid <= FEATURES)
		w[tid] = ((const float *)model)[tid];
	t->barrier(t, 1);
	for (int64_t r = t->index[3] * n + tid; r < nrows; r += n * t->index[9])
		out[r] = dot((const float *)rows + r * FEATURES, w, flags);
}

/* The workspace of the reduction: the sum of every row's prediction and the rows counted. */
typedef struct Sums {
	float sum;
	int32_t pad;
	int64_t count;
} Sums;

static void k_zero(const void *rows, int64_t nrows, float *out, int32_t flags, void *workspace, const void *model,
                   GroveSimThread *t)
{
	(void)rows, (void)nrows, (void)out, (void)flags, (void)model;
	if (thread_in_block(t) == 0 && t->index[3] == 0)
		*(Sums *)workspace = (Sums){0, 0, 0};
}

static void atomic_add_float(float *p, float v)
{
	float old = *p, sum;
	do
		sum = old + v;
	while (!__atomic_compare_exchange(p, &old, &sum, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/*
 * Each thread sums its rows' predictions; each warp adds its threads' sums with a tree
 * of shuffles (lanes past a partial warp's end add nothing), and its first lane adds
 * the warp's sum and count to the workspace atomically.
 */
static void k_sum(const void *rows, int64_t nrows, float *out, int32_t flags, void *workspace, const void *model,
                  GroveSimThread *t)
{
	Sums *sums = workspace;
	int64_t tid = thread_in_block(t), n = block_threads(t), lane = tid % GROVE_WARP;
	int64_t lanes = n - tid / GROVE_WARP * GROVE_WARP < GROVE_WARP ? n - tid / GROVE_WARP * GROVE_WARP : GROVE_WARP;
	float s = 0;
	int64_t count = 0;
	(void)out;
	for (int64_t r = t->index[3] * n + tid; r < nrows; r += n * t->index[9]) {
		s += dot((const float *)rows + r * FEATURES, model, flags);
		count++;
	}
	for (int32_t delta = GROVE_WARP / 2; delta > 0; delta /= 2) {
		uint32_t bits;
		memcpy(&bits, &s, 4);
		bits = (uint32_t)t->shuffle(t, bits, delta, 2);
		int64_t other = (int64_t)t->shuffle(t, (uint64_t)count, delta, 3);
		float v;
		memcpy(&v, &bits, 4);
		if (lane + delta < lanes) {
			s += v;
			count += other;
		}
	}
	if (lane == 0) {
		atomic_add_float(&sums->sum, s);
		__atomic_fetch_add(&sums->count, count, __ATOMIC_RELAXED);
	}
}

/* Each row's prediction plus the mean of all, and 1000 more if the count is wrong. */
static void k_finish(const void *rows, int64_t nrows, float *out, int32_t flags, void *workspace, const void *model,
                     GroveSimThread *t)
{
	const Sums *sums = workspace;
	for (int64_t r = t->index[3] * t->index[6] + t->index[0]; r < nrows; r += t->index[6] * t->index[9])
		out[r] = dot((const float *)rows + r * FEATURES, model, flags) + sums->sum / (float)nrows +
		         (sums->count == nrows ? 0 : 1000);
}

/* Entry 1: rows of doubles, summed in double. */
static void k_dot64(const void *rows, int64_t nrows, float *out, int32_t flags, void *workspace, const void *model,
                    GroveSimThread *t)
{
	const float *w = model;
	(void)workspace;
	for (int64_t r = t->index[3] * t->index[6] + t->index[0]; r < nrows; r += t->index[6] * t->index[9]) {
		double s = flags & GROVE_ARTIFACT_MARGIN ? 0 : w[FEATURES];
		for (int k = 0; k < FEATURES; k++)
			s += ((const double *)rows)[r * FEATURES + k] * w[k];
		out[r] = (float)s;
	}
}

/* A race: each thread reads what its neighbour writes to shared memory, without a barrier between. */
static void k_race(const void *rows, int64_t nrows, float *out, int32_t flags, void *workspace, const void *model,
                   GroveSimThread *t)
{
	float *cell = (float *)t->shared;
	int64_t tid = thread_in_block(t), n = block_threads(t);
	(void)workspace;
	for (int64_t r = t->index[3] * n + tid; r < nrows; r += n * t->index[9]) {
		cell[tid] = dot((const float *)rows + r * FEATURES, model, flags);
		out[r] = cell[(tid + 1) % n];
	}
}

/* A barrier only the first five threads reach. */
static void k_diverge(const void *rows, int64_t nrows, float *out, int32_t flags, void *workspace, const void *model,
                      GroveSimThread *t)
{
	(void)rows, (void)nrows, (void)out, (void)flags, (void)workspace, (void)model;
	if (thread_in_block(t) < 5)
		t->barrier(t, 4);
}

/* Odd and even threads at different barriers. */
static void k_sites(const void *rows, int64_t nrows, float *out, int32_t flags, void *workspace, const void *model,
                    GroveSimThread *t)
{
	(void)rows, (void)nrows, (void)out, (void)flags, (void)workspace, (void)model;
	t->barrier(t, thread_in_block(t) % 2 ? 5 : 6);
}

/* A shuffle after the upper half of each warp returned. */
static void k_shuffle_returned(const void *rows, int64_t nrows, float *out, int32_t flags, void *workspace,
                               const void *model, GroveSimThread *t)
{
	(void)rows, (void)nrows, (void)out, (void)flags, (void)workspace, (void)model;
	if (thread_in_block(t) % GROVE_WARP >= 16)
		return;
	t->shuffle(t, 1, 1, 7);
}

/*
 * A profiled kernel's accesses of known shape (as kernels built to profile report them),
 * each warp's lanes at: 128 consecutive bytes (4 sectors); 32 bytes apart (32 sectors);
 * 32 banks of shared memory (one wavefront); one bank (32 wavefronts); one float, twice,
 * lane 0 a third time (3 requests of a sector). Then the dot products.
 */
static void k_profile(const void *rows, int64_t nrows, float *out, int32_t flags, void *workspace, const void *model,
                      GroveSimThread *t)
{
	const float *w = model;
	const float *cell = (const float *)t->shared;
	int64_t lane = thread_in_block(t) % GROVE_WARP;
	t->access(t, w + lane, 4, 1);
	t->access(t, w + lane * 8, 4, 2);
	t->access(t, cell + lane, 4, 3);
	t->access(t, cell + lane * GROVE_WARP, 4, 4);
	for (int i = 0; i < 2 + (lane == 0); i++)
		t->access(t, w, 4, 5);
	k_dot(rows, nrows, out, flags, workspace, model, t);
}

#define D1(n) {{n, 0}, {1, 0}, {1, 0}}
#define PER(rows) {{0, rows}, {1, 0}, {1, 0}}

static const GroveKernel dot_kernels[] = {{"dot", 0, 0, PER(64), D1(64), k_dot}};
static const GroveKernel shared_kernels[] = {{"shared", 0, 64, D1(3), {{10, 0}, {3, 0}, {2, 0}}, k_shared}};
static const GroveKernel reduce_kernels[] = {
	{"zero", 0, 0, D1(1), D1(32), k_zero},
	{"dot64", 1, 0, PER(100), D1(100), k_dot64},
	{"sum", 0, 0, PER(500), D1(80), k_sum},
	{"finish", 0, 0, PER(128), D1(128), k_finish},
};
static const GroveKernel race_kernels[] = {{"race", 0, 64 * 4, D1(4), D1(64), k_race}};
static const GroveKernel diverge_kernels[] = {{"diverge", 0, 0, D1(2), D1(40), k_diverge}};
static const GroveKernel sites_kernels[] = {{"sites", 0, 0, D1(2), D1(40), k_sites}};
static const GroveKernel shuffle_kernels[] = {{"shuffle_returned", 0, 0, D1(1), D1(64), k_shuffle_returned}};
static const GroveKernel profile_kernels[] = {{"profile", 0, GROVE_WARP * GROVE_WARP * 4, PER(64), D1(64), k_profile}};
static const GroveKernel device_kernels[] = {{"dot", 0, 0, PER(64), D1(64), NULL}};
static const unsigned char fake_code[] = "// not PTX, not an HSACO";

#define SIM(kernels) {GROVE_DEVICE_GPUSIM, "", NULL, 0, (const unsigned char *)model_blob, sizeof model_blob, \
	sizeof kernels / sizeof kernels[0], kernels}

/* The test copies one of these into `device` and loads the library. */
const GroveDevice dev_dot = SIM(dot_kernels), dev_shared = SIM(shared_kernels), dev_reduce = SIM(reduce_kernels),
		  dev_race = SIM(race_kernels), dev_diverge = SIM(diverge_kernels), dev_sites = SIM(sites_kernels),
		  dev_shuffle = SIM(shuffle_kernels), dev_profile = SIM(profile_kernels);
const GroveDevice dev_cuda = {GROVE_DEVICE_CUDA, "sm_80", fake_code, sizeof fake_code - 1,
                              (const unsigned char *)model_blob, sizeof model_blob, 1, device_kernels};
const GroveDevice dev_rocm = {GROVE_DEVICE_ROCM, "gfx90a", fake_code, sizeof fake_code - 1,
                              (const unsigned char *)model_blob, sizeof model_blob, 1, device_kernels};
GroveDevice device;
GroveKernel kernel; /* for descriptors the test breaks */

GroveArtifact grove_artifact = {GROVE_ARTIFACT_MAGIC, GROVE_ARTIFACT_VERSION, FEATURES, 1, 1, 0, sizeof(float) * 4, 0,
                                NULL, NULL, 0, NULL, NULL, NULL, &device};

#else /* the test */

#include "rt/device.h"
#include "rt/grove.h"
#include "target/target.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/check.h"

#ifndef GROVE_ASAN /* AddressSanitizer has its own malloc */
/* While fail_at > 0, the fail_at-th allocation of this program, and every later one, fails (glibc's allocator, interposed). */
static long allocations, fail_at;
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *p, size_t n);
static int failing(void) { return fail_at > 0 && ++allocations >= fail_at; }
void *malloc(size_t n) { return failing() ? NULL : __libc_malloc(n); }
void *calloc(size_t count, size_t size) { return failing() ? NULL : __libc_calloc(count, size); }
void *realloc(void *p, size_t n) { return failing() ? NULL : __libc_realloc(p, n); }
#endif

#define ROWS 3000

static float rows[ROWS * FEATURES], out[ROWS], want[ROWS];
static double rows64[ROWS * FEATURES];
static GroveDevice *device;
static GroveKernel *kernel;
static const float weights[FEATURES] = {1, 2, 3, 4};

/* Run a shell command; whether it exits with 0. */
static bool shell(const char *command)
{
	int status = system(command);
	if (status != 0)
		fprintf(stderr, "'%s' failed (%d)\n", command, status);
	return status == 0;
}

/* Compile `source` (from the repository's root) with -D`define` (and `flags`) as the shared library `path`. */
static bool build_library(const char *source, const char *define, const char *flags, const char *path)
{
	char command[PATH_MAX * 4 + 256], root[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", root, sizeof root - 1);
	if (len <= 0)
		return false;
	root[len] = 0;
	for (int up = 0; up < 3 && strrchr(root, '/'); up++) /* ROOT/BUILDDIR/tests/gpusim -> ROOT */
		*strrchr(root, '/') = 0;
	snprintf(command, sizeof command, "%s -std=c11 -D_GNU_SOURCE -O1 -Wall -Werror -shared -fPIC %s -D%s -I%s "
	         "%s/%s -o %s", getenv("CC") ? getenv("CC") : "cc", flags, define, root, root, source, path);
	return shell(command);
}

/* Compile this file as the artifact dir/gpusim.so, sealed as grove compile seals what it writes. */
static bool build_artifact(const char *dir, char *path, size_t size)
{
	snprintf(path, size, "%s/gpusim.so", dir);
	return build_library("tests/unit/gpusim.c", "GPUSIM_ARTIFACT", "", path) && target_seal(path, NULL);
}

/* Load the artifact with `device` as it is now; NULL (with err filled) when that fails. */
static GroveModel *load(const char *path, GroveError *err)
{
	GroveModel *m = NULL;
	grove_load(path, &m, err);
	return m;
}

/* The expected prediction of row r (margins: without the bias). */
static float expected(size_t r, unsigned flags)
{
	float s = 0;
	for (int k = 0; k < FEATURES; k++)
		s += rows[r * FEATURES + k] * weights[k];
	return s + (flags & GROVE_PREDICT_MARGIN ? 0 : BIAS);
}

/* Whether got[0..n) is want within rounding. */
static bool near(const float *got, const float *expect, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(fabsf(got[i] - expect[i]) <= 1e-4f * fmaxf(1, fabsf(expect[i])))) {
			fprintf(stderr, "output %zu: %g, expected %g\n", i, got[i], expect[i]);
			return false;
		}
	return true;
}

/* A descriptor whose kernels predict the rows' dot products: through every entry point. */
static void test_predictions(const char *path, const GroveDevice *d, const char *name)
{
	GroveError err;
	GroveModel *m;
	*device = *d;
	if (!(m = load(path, &err))) {
		fprintf(stderr, "%s: %s\n", name, err.message);
		CHECK(!"load");
		return;
	}
	CHECK(strcmp(grove_device(m), "gpusim") == 0);
	for (size_t n = 1; n <= ROWS; n = n * 7 + 3) {
		for (unsigned flags = 0; flags < 2; flags++) {
			for (size_t r = 0; r < n; r++)
				want[r] = expected(r, flags);
			memset(out, 0, sizeof out);
			CHECK(grove_predict(m, rows, n, FEATURES, out, n, flags, &err) == GROVE_OK);
			CHECK(near(out, want, n));
		}
		memset(out, 0, sizeof out);
		CHECK(grove_predict_device(m, rows, n, FEATURES, out, 0, &err) == GROVE_OK);
		for (size_t r = 0; r < n; r++)
			want[r] = expected(r, 0);
		CHECK(near(out, want, n));
	}
	for (size_t r = 0; r < ROWS; r++)
		want[r] = expected(r, 0);
	CHECK(grove_predict_f64(m, rows64, ROWS, FEATURES, out, ROWS, 0, &err) == GROVE_OK);
	CHECK(near(out, want, ROWS));
	CHECK(grove_predict(m, rows, 5, FEATURES + 1, out, 5, 0, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(grove_predict(m, rows, 5, FEATURES, out, 4, 0, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(grove_predict(m, rows, 5, FEATURES, out, 5, GROVE_PREDICT_LABEL, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(grove_predict_device(m, rows, 5, FEATURES, (float *)rows, 0, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(grove_predict(m, rows, 0, FEATURES, NULL, 0, 0, &err) == GROVE_OK);
	grove_free(m);
}

/* A descriptor of the artifact's, by name. */
static const GroveDevice *artifact_device(void *handle, const char *name)
{
	const GroveDevice *d = dlsym(handle, name);
	CHECK(d != NULL);
	return d;
}

/*
 * The sum of every row's prediction plus each row's: three kernels with shuffles,
 * atomics and a workspace; and its entry 1, which predicts double rows without the sum.
 */
static void test_reduction(const char *path, const GroveDevice *d)
{
	GroveError err;
	GroveModel *m;
	double total = 0;
	char *workspace = aligned_alloc(16, 16);
	*device = *d;
	CHECK((m = load(path, &err)) != NULL);
	if (!m || !workspace) {
		free(workspace);
		grove_free(m);
		return;
	}
	for (size_t r = 0; r < ROWS; r++)
		total += expected(r, 0);
	for (size_t r = 0; r < ROWS; r++)
		want[r] = expected(r, 0) + (float)(total / ROWS);
	CHECK(grove_workspace_size(m, ROWS) == 16);
	CHECK(grove_predict(m, rows, ROWS, FEATURES, out, ROWS, 0, &err) == GROVE_OK);
	CHECK(near(out, want, ROWS));
	memset(out, 0, sizeof out);
	CHECK(grove_predict_with_workspace(m, rows, ROWS, FEATURES, out, ROWS, 0, workspace, 16, &err) == GROVE_OK);
	CHECK(near(out, want, ROWS));
	CHECK(grove_predict_with_workspace(m, rows, ROWS, FEATURES, out, ROWS, 0, workspace, 15, &err) ==
	      GROVE_ERROR_ARGUMENT);
	for (size_t r = 0; r < ROWS; r++)
		want[r] = expected(r, 0);
	CHECK(grove_predict_f64(m, rows64, ROWS, FEATURES, out, ROWS, 0, &err) == GROVE_OK);
	CHECK(near(out, want, ROWS));
	free(workspace);
	grove_free(m);
}

/* Kernels the simulator must refuse at predict: GROVE_ERROR_DEVICE with a message containing `says`. */
static void test_kernel_error(const char *path, const GroveDevice *d, const char *says)
{
	GroveError err;
	GroveModel *m;
	*device = *d;
	CHECK((m = load(path, &err)) != NULL);
	if (!m)
		return;
	CHECK(grove_predict(m, rows, 500, FEATURES, out, 500, 0, &err) == GROVE_ERROR_DEVICE);
	if (!strstr(err.message, says)) {
		fprintf(stderr, "'%s' does not say '%s'\n", err.message, says);
		CHECK(!"message");
	}
	grove_free(m);
}

/* grove_load of `device` as it is: status, and a message containing `says`. */
static void expect_load(const char *path, GroveStatus status, const char *says)
{
	GroveError err;
	GroveModel *m = NULL;
	GroveStatus got = grove_load(path, &m, &err);
	CHECK(got == status && m == NULL);
	if (got != status || !strstr(err.message, says)) {
		fprintf(stderr, "%s: '%s' does not say '%s'\n", grove_status_name(got), err.message, says);
		CHECK(!"message");
	}
	grove_free(m);
}

/* Damaged descriptors: GROVE_ERROR_FORMAT at load, with what is wrong. */
static void test_descriptors(const char *path, const GroveDevice *good)
{
	static const struct {
		int64_t threads, rows_per;
		uint32_t shared, entry;
		bool no_sim;
		const char *says;
	} cases[] = {
		{2048, 0, 0, 0, false, "threads (rows per block 0)"},
		{33, 0, 0, 0, false, "1056 threads per block (at most 1024)"},
		{64, -1, 0, 0, false, "grid extent 0 is"},
		{64, 0, 1 << 20, 0, false, "1048576 bytes of shared memory"},
		{64, 0, 0, 2, false, "of entry 2"},
		{64, 0, 0, 1, false, "no kernel of predict"},
		{64, 0, 0, 0, true, "no host code for the simulator"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		*kernel = good->kernels[0];
		kernel->block[0].count = cases[i].threads;
		kernel->block[1].count = cases[i].threads == 33 ? 32 : 1;
		kernel->grid[0].rows_per = cases[i].rows_per ? cases[i].rows_per : kernel->grid[0].rows_per;
		kernel->shared_bytes = cases[i].shared;
		kernel->entry = cases[i].entry;
		kernel->sim = cases[i].no_sim ? NULL : kernel->sim;
		*device = *good;
		device->kernels = kernel;
		expect_load(path, GROVE_ERROR_FORMAT, cases[i].says);
	}
	*device = *good;
	device->kind = 9;
	expect_load(path, GROVE_ERROR_FORMAT, "unknown device kind 9");
	*device = *good;
	device->num_kernels = 0;
	expect_load(path, GROVE_ERROR_FORMAT, "0 kernels");
	*device = *good;
	device->model_size = 0;
	expect_load(path, GROVE_ERROR_FORMAT, "a model blob of 0 bytes");
}

/* CUDA and ROCm artifacts here: unavailable without their driver (this machine's case), else the fake code is refused. */
static void test_unavailable(const char *path, const GroveDevice *d, const char *library, const char *says)
{
	void *driver = dlopen(library, RTLD_NOW | RTLD_LOCAL);
	*device = *d;
	if (driver) {
		dlclose(driver);
		expect_load(path, GROVE_ERROR_DEVICE, "");
	} else
		expect_load(path, GROVE_ERROR_UNAVAILABLE, says);
}

typedef struct Worker {
	GroveModel *model;
	float out[ROWS];
	int bad;
} Worker;

/* One of several threads predicting at once with one model. */
static void *work(void *arg)
{
	Worker *w = arg;
	GroveError err;
	for (int i = 0; i < 3; i++)
		w->bad += grove_predict(w->model, rows, ROWS, FEATURES, w->out, ROWS, 0, &err) != GROVE_OK ||
		          memcmp(w->out, out, sizeof out) != 0;
	return NULL;
}

static void test_threads(const char *path, const GroveDevice *d)
{
	static Worker workers[4];
	pthread_t threads[4];
	GroveError err;
	GroveModel *m;
	*device = *d;
	CHECK((m = load(path, &err)) != NULL);
	if (!m)
		return;
	CHECK(grove_predict(m, rows, ROWS, FEATURES, out, ROWS, 0, &err) == GROVE_OK);
	for (int i = 0; i < 4; i++) {
		workers[i].model = m;
		CHECK(pthread_create(&threads[i], NULL, work, &workers[i]) == 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(threads[i], NULL);
		CHECK(workers[i].bad == 0);
	}
	grove_free(m);
}

#ifndef GROVE_ASAN
/* Each allocation of a prediction failing in turn: GROVE_ERROR_MEMORY, or the right answer; the model still works after. */
static void test_allocation_failures(const char *path, const GroveDevice *d)
{
	GroveError err;
	GroveModel *m;
	GroveStatus status;
	long k = 1;
	*device = *d;
	CHECK((m = load(path, &err)) != NULL);
	if (!m)
		return;
	CHECK(grove_predict(m, rows, 300, FEATURES, want, 300, 0, &err) == GROVE_OK);
	do {
		allocations = 0;
		fail_at = k++;
		status = grove_predict(m, rows, 300, FEATURES, out, 300, 0, &err);
		fail_at = 0;
		if (status != GROVE_OK && (status != GROVE_ERROR_MEMORY || !err.message[0])) {
			fprintf(stderr, "allocation %ld: %s: %s\n", k - 1, grove_status_name(status), err.message);
			CHECK(!"out of memory");
		}
	} while (status != GROVE_OK && k < 100);
	CHECK(k > 2 && status == GROVE_OK && memcmp(out, want, 300 * sizeof *out) == 0);
	grove_free(m);
}
#endif

/*
 * This file built with -D`define` as dir/`library` (with that soname) and loaded, so that
 * libgrove's dlopen of the name finds it: the fake's state, its variable `state`.
 */
static FakeDriver *open_fake(const char *dir, const char *define, const char *library, const char *state)
{
	char path[PATH_MAX], flags[PATH_MAX + 64];
	void *handle = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
	FakeDriver *fake;
	if (handle) { /* a real driver stays loaded (a GPU machine): libgrove would find it, not the fake */
		dlclose(handle);
		fprintf(stderr, "%s is loaded: its fake is not tested\n", library);
		return NULL;
	}
	snprintf(path, sizeof path, "%s/%s", dir, library);
	snprintf(flags, sizeof flags, "-pthread -Wl,-soname,%s", library);
	CHECK(build_library("tests/fakes/gpu_drivers.c", define, flags, path));
	handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL); /* kept loaded, as libgrove keeps it */
	fake = handle ? dlsym(handle, state) : NULL;
	CHECK(fake != NULL);
	return fake;
}

/* Threads predicting at once with one model, each its own window of rows, every copy held up so that they overlap. */
typedef struct Window {
	GroveModel *model;
	size_t first;
	float out[1000];
	int bad;
} Window;

static void *predict_window(void *arg)
{
	Window *w = arg;
	GroveError err;
	for (int i = 0; i < 3; i++) {
		memset(w->out, 0, sizeof w->out);
		w->bad += grove_predict(w->model, rows + w->first * FEATURES, 1000, FEATURES, w->out, 1000, 0, &err) !=
		                  GROVE_OK ||
		          !near(w->out, want + w->first, 1000);
	}
	return NULL;
}

static void test_windows(GroveModel *m, FakeDriver *fake)
{
	static Window windows[4];
	pthread_t threads[4];
	fake->delay_us = 2000;
	for (int i = 0; i < 4; i++) {
		windows[i] = (Window){.model = m, .first = (size_t)i * 500};
		CHECK(pthread_create(&threads[i], NULL, predict_window, &windows[i]) == 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(threads[i], NULL);
		CHECK(windows[i].bad == 0);
	}
	fake->delay_us = 0;
}

/*
 * The simulator's count of a profiled kernel's requests (rt/gpusim.c, fold), over two
 * blocks of two warps (k_profile's accesses), its first run's only; none where no one asks.
 */
static void test_profile(const char *path, const GroveDevice *d)
{
	GroveSimProfile profile = {0};
	const GroveSimCounts *k = &profile.kernels[0];
	GroveModel *m;
	GroveError err;
	*device = *d;
	if (!(m = load(path, &err)))
		return;
	for (size_t r = 0; r < 128; r++)
		want[r] = expected(r, 0);
	CHECK(grove_predict(m, rows, 128, FEATURES, out, 128, 0, &err) == GROVE_OK && near(out, want, 128));
	grove_gpusim_profile = &profile;
	CHECK(grove_predict(m, rows, 128, FEATURES, out, 128, 0, &err) == GROVE_OK && near(out, want, 128));
	grove_gpusim_profile = NULL;
	CHECK(k->warps == 4 && k->global_requests == 4 * (1 + 1 + 3) && k->global_sectors == 4 * (4 + 32 + 3));
	CHECK(k->shared_requests == 4 * 2 && k->shared_wavefronts == 4 * (1 + 32) && !profile.incomplete);
	if (k->global_sectors != 4 * (4 + 32 + 3) || k->shared_wavefronts != 4 * 33)
		fprintf(stderr, "profile: %llu warps, %llu / %llu global, %llu / %llu shared\n", (unsigned long long)k->warps,
		        (unsigned long long)k->global_requests, (unsigned long long)k->global_sectors,
		        (unsigned long long)k->shared_requests, (unsigned long long)k->shared_wavefronts);
	grove_free(m);
}

/*
 * A call of host rows large enough to go in chunks (rt/chunks.c) on a fake driver (CUDA's,
 * HSA's): its predictions, made by asynchronous copies (two a chunk), none before what it
 * waits for, its pinned memory, streams, events and signals kept for the next such call,
 * all freed by grove_free.
 */
static void test_chunks(const char *path, const GroveDevice *d, FakeDriver *fake)
{
	enum { N = 600000 }; /* two chunks of 262144 rows of 4 floats (4 MiB), and a part */
	float *many = malloc((size_t)N * FEATURES * sizeof *many), *got = malloc(N * sizeof *got);
	GroveModel *m;
	GroveError err;
	int made, async;
	bool right = true;
	*device = *d;
	if (!fake || !many || !got || !(m = load(path, &err))) {
		free(many), free(got);
		return;
	}
	for (size_t i = 0; i < (size_t)N * FEATURES; i++)
		many[i] = (float)(i % 13) / 4 - 1;
	for (int call = 0; call < 2; call++) {
		async = fake->async;
		made = fake->allocations;
		memset(got, 0, N * sizeof *got);
		CHECK(grove_predict(m, many, N, FEATURES, got, N, 0, &err) == GROVE_OK);
		for (size_t r = 0; r < N && right; r++) {
			float s = BIAS;
			for (int k = 0; k < FEATURES; k++)
				s += many[r * FEATURES + k] * weights[k];
			right = fabsf(got[r] - s) <= 1e-4f * fmaxf(1, fabsf(s));
		}
		CHECK(right);
		CHECK(fake->async == async + 2 * 3 && fake->early == 0);
		CHECK(call == 0 || fake->allocations == made); /* the second call allocates nothing */
	}
	grove_free(m);
	CHECK(fake->live == 0);
	free(many);
	free(got);
}

/*
 * The back-end `name` on a fake of its driver (FAKE_CUDA_DRIVER, FAKE_HSA_RUNTIME above):
 * a call allocates only where its memory outgrows the kept memory (`grows` allocations
 * where rows and predictions do), rows already on the device
 * allocate nothing, concurrent calls never share memory, a failed allocation is
 * GROVE_ERROR_MEMORY saying `says` and the next call works, and grove_free leaves
 * nothing allocated.
 */
static void test_kept_buffers(const char *path, const GroveDevice *d, const char *name, FakeDriver *fake, int grows,
                              const char *says)
{
	GroveModel *m, *other;
	GroveError err;
	int kept, live;
	*device = *d;
	if (!fake || !(m = load(path, &err)))
		return;
	CHECK(strcmp(grove_device(m), name) == 0);
	for (size_t r = 0; r < ROWS; r++)
		want[r] = expected(r, 0);
	CHECK(grove_predict(m, rows, 1, FEATURES, out, 1, 0, &err) == GROVE_OK && near(out, want, 1));
	kept = fake->allocations; /* the model, and what the first call made */
	live = fake->live;
	CHECK(grove_predict(m, rows, 200, FEATURES, out, 200, 0, &err) == GROVE_OK && near(out, want, 200));
	CHECK(fake->allocations == kept + grows);
	for (size_t n = 1; n < 200; n += 66) {
		memset(out, 0, sizeof out);
		CHECK(grove_predict(m, rows, n, FEATURES, out, n, 0, &err) == GROVE_OK && near(out, want, n));
	}
	CHECK(grove_predict(m, rows, ROWS, FEATURES, out, ROWS, 0, &err) == GROVE_OK && near(out, want, ROWS));
	CHECK(grove_predict(m, rows, 3, FEATURES, out, 3, GROVE_PREDICT_MARGIN, &err) == GROVE_OK &&
	      out[2] == want[2] - BIAS);
	CHECK(fake->allocations == kept + 2 * grows && fake->live == live);
	/* The fakes' device memory is the host's: rows on the device are any rows. */
	memset(out, 0, sizeof out);
	CHECK(grove_predict_device(m, rows, ROWS, FEATURES, out, 0, &err) == GROVE_OK && near(out, want, ROWS));
	CHECK(fake->allocations == kept + 2 * grows);
	test_windows(m, fake);
	CHECK(fake->shared == 0);
	CHECK((other = load(path, &err)) != NULL);
	fake->fail_next = 1;
	CHECK(grove_predict(other, rows, 10, FEATURES, out, 10, 0, &err) == GROVE_ERROR_MEMORY &&
	      strstr(err.message, says));
	CHECK(grove_predict(other, rows, 10, FEATURES, out, 10, 0, &err) == GROVE_OK && near(out, want, 10));
	grove_free(other);
	grove_free(m);
	CHECK(fake->live == 0);
}

int main(void)
{
	char dir[] = "/tmp/grove-gpusim-XXXXXX", path[PATH_MAX], command[PATH_MAX + 16];
	FakeDriver *cuda, *hsa;
	void *handle;
	for (size_t i = 0; i < ROWS * FEATURES; i++) {
		rows[i] = (float)((i * 7 + i / 11) % 10) / 4 - 1;
		rows64[i] = rows[i];
	}
	if (!mkdtemp(dir))
		return 1;
	CHECK(build_artifact(dir, path, sizeof path));
	/* Loaded here first, so that grove_load gets this copy, whose descriptor the tests set. */
	if (!(handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	device = dlsym(handle, "device");
	kernel = dlsym(handle, "kernel");
	CHECK(device && kernel);
	if (!device || !kernel)
		return 1;
	test_predictions(path, artifact_device(handle, "dev_dot"), "dot");
	test_predictions(path, artifact_device(handle, "dev_shared"), "shared");
	test_reduction(path, artifact_device(handle, "dev_reduce"));
	test_kernel_error(path, artifact_device(handle, "dev_race"), "depend on the order threads run in (a data race");
	test_kernel_error(path, artifact_device(handle, "dev_diverge"),
	                  "kernel diverge, block (0, 0, 0): barrier under divergent control flow: thread 5 returned while "
	                  "thread 0 waits at the barrier at site 4");
	test_kernel_error(path, artifact_device(handle, "dev_sites"), "barrier under divergent control flow: thread 0 "
	                  "waits at the barrier at site 6, thread 1 at site 5");
	test_kernel_error(path, artifact_device(handle, "dev_shuffle"), "kernel shuffle_returned, block (0, 0, 0): a "
	                  "shuffle at site 7 after thread 16 of the warp returned");
	test_descriptors(path, artifact_device(handle, "dev_dot"));
	test_profile(path, artifact_device(handle, "dev_profile"));
	test_unavailable(path, artifact_device(handle, "dev_cuda"), "libcuda.so.1",
	                 "cuda: libcuda.so.1 not found: the NVIDIA driver is not installed");
	test_unavailable(path, artifact_device(handle, "dev_rocm"), "libhsa-runtime64.so.1",
	                 "rocm: libhsa-runtime64.so.1 not found: the ROCm runtime is not installed");
	test_threads(path, artifact_device(handle, "dev_reduce"));
#ifndef GROVE_ASAN
	test_allocation_failures(path, artifact_device(handle, "dev_reduce"));
#endif
	cuda = open_fake(dir, "FAKE_CUDA_DRIVER", "libcuda.so.1", "fake_cuda");
	test_kept_buffers(path, artifact_device(handle, "dev_cuda"), "cuda", cuda, 2,
	                  "cuMemAlloc (rows, 160 bytes): CUDA_ERROR_OUT_OF_MEMORY");
	test_chunks(path, artifact_device(handle, "dev_cuda"), cuda);
	hsa = open_fake(dir, "FAKE_HSA_RUNTIME", "libhsa-runtime64.so.1", "fake_hsa");
	test_kept_buffers(path, artifact_device(handle, "dev_rocm"), "rocm", hsa, 3,
	                  "hsa_amd_memory_pool_allocate (rows, 160 bytes): out of resources");
	test_chunks(path, artifact_device(handle, "dev_rocm"), hsa);
	dlclose(handle);
	snprintf(command, sizeof command, "rm -rf %s", dir);
	shell(command);
	if (failures)
		fprintf(stderr, "gpusim: %d checks failed\n", failures);
	return failures != 0;
}

#endif
