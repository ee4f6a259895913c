/*
 * GPU code generation (target/gpu.c and the devices) on hand-built LIR kernels: a
 * grid-stride loop over the rows, a block array written by every thread, a barrier and
 * reads of the neighbours' elements, shuffles of i32, i64, f32 and f64, atomic adds of
 * f32 and i32, two model buffers, exp and log, and a kernel of entry 1. The PTX for three
 * architectures goes through ptxas (no spills), the HSACO for two through ld.lld and
 * llvm-readelf (the kernels in its metadata), and the simulator's artifact is loaded with
 * dlopen: its descriptor and a kernel run as one thread against stub barriers and
 * shuffles. Also the errors of device options that make no sense.
 */
#include "ir/lir.h"
#include "rt/artifact.h"
#include "target/target.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/check.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"
#define OUTPUTS 4
#define ROWS 3
#define BLOCK 64

static const float buffer0[2] = {1.5f, 2.5f};
static const int32_t buffer1[2] = {7, 8};

static uint32_t ci(LBuilder *b, int64_t v) { return lir_const_int(b, LTYPE_I64, v); }
static uint32_t op2(LBuilder *b, LOp op, LType t, uint32_t x, uint32_t y) { return lir_emit(b, op, t, x, y, LIR_NONE); }
static uint32_t gpu_index(LBuilder *b, LGpuIndex which)
{
	uint32_t id = lir_emit(b, LOP_GPU_INDEX, LTYPE_I64, LIR_NONE, LIR_NONE, LIR_NONE);
	b->fn->insts[id].sub = (uint8_t)which;
	return id;
}
static uint32_t shuffle(LBuilder *b, LType t, uint32_t v, int32_t delta)
{
	return lir_emit(b, LOP_SHUFFLE, t, v, lir_const_int(b, LTYPE_I32, delta), LIR_NONE);
}
static void atomic_add(LBuilder *b, uint32_t ptr, uint32_t index, uint32_t v)
{
	uint32_t id = lir_emit(b, LOP_ATOMIC, LTYPE_VOID, ptr, index, v);
	b->fn->insts[id].sub = LATOMIC_ADD;
}

/* A kernel of m with its parameters in p[] and a grid-stride launch of BLOCK threads per block. */
static LFunc *kernel(LModule *m, LBuilder *b, const char *name, uint32_t entry, uint32_t *p)
{
	LFunc *fn = lir_func_add(m, name, lir_kernel_params, LIR_KERNEL_PARAMS);
	fn->kind = LFUNC_KERNEL;
	fn->entry = (uint8_t)entry;
	for (int k = 0; k < 3; k++)
		fn->launch.grid[k].count = fn->launch.block[k].count = 1;
	fn->launch.grid[0] = (LDim){0, BLOCK};
	fn->launch.block[0].count = BLOCK;
	lir_builder_init(b, fn);
	for (uint32_t i = 0; i < LIR_KERNEL_PARAMS; i++) {
		p[i] = lir_emit(b, LOP_PARAM, lir_kernel_params[i], LIR_NONE, LIR_NONE, LIR_NONE);
		b->fn->insts[p[i]].imm = i;
	}
	return fn;
}

/* for (r = block.x * blockDim.x + thread.x; r < nrows; r += blockDim.x * gridDim.x); returns r. */
static uint32_t grid_stride(LBuilder *b, uint32_t nrows, uint32_t thread)
{
	uint32_t dim = gpu_index(b, LGPU_BLOCK_DIM_X);
	uint32_t start = op2(b, LOP_ADD, LTYPE_I64, op2(b, LOP_MUL, LTYPE_I64, gpu_index(b, LGPU_BLOCK_X), dim), thread);
	return lir_begin(b, LOP_FOR, start, nrows, op2(b, LOP_MUL, LTYPE_I64, dim, gpu_index(b, LGPU_GRID_DIM_X)));
}

/*
 * Kernel 0 (float rows of one feature), per row r:
 *   out[r][0] = row + buffer0[r & 1] + buffer1[1]
 *   out[r][1] = shared[(thread + 1) % BLOCK] after every thread stored its index there
 *   out[r][2] = shuffle.i32(thread, 1) + shuffle.f32(row, 1)
 *   out[r][3] = shuffle.f64(row, 1) + shuffle.i64(thread, 2)
 * and atomically workspace.f32[0] += row, workspace.i32[1] += 1.
 * Kernel 1 (double rows): out[r][0] = exp(row), out[r][1] = log(row as float).
 */
static LModule *gpu_module(void)
{
	LModule *m = lir_module_new();
	LBuilder b;
	uint32_t p[LIR_KERNEL_PARAMS], thread, shared, next, v, s32, s64, r, x, o;
	void *data0 = xmalloc(sizeof buffer0), *data1 = xmalloc(sizeof buffer1);
	memcpy(data0, buffer0, sizeof buffer0);
	memcpy(data1, buffer1, sizeof buffer1);
	m->gpu = true;
	m->predict = m->predict_f64 = LIR_NONE;
	m->num_features = 1;
	m->num_outputs = m->num_margins = OUTPUTS;
	m->workspace_fixed = 16;
	lir_buffer_add(m, "weights", LTYPE_F32, 2, data0);
	lir_buffer_add(m, "counts", LTYPE_I32, 2, data1);

	kernel(m, &b, "predict0", 0, p);
	thread = gpu_index(&b, LGPU_THREAD_X);
	shared = lir_local_array(&b, LTYPE_F32, BLOCK, LSPACE_BLOCK);
	lir_emit(&b, LOP_STORE, LTYPE_VOID, shared, thread, lir_cast(&b, LCAST_SITOFP, LTYPE_F32, thread));
	lir_emit(&b, LOP_BARRIER, LTYPE_VOID, LIR_NONE, LIR_NONE, LIR_NONE);
	next = op2(&b, LOP_AND, LTYPE_I64, op2(&b, LOP_ADD, LTYPE_I64, thread, ci(&b, 1)), ci(&b, BLOCK - 1));
	v = lir_emit(&b, LOP_LOAD, LTYPE_F32, shared, next, LIR_NONE);
	s32 = shuffle(&b, LTYPE_I32, lir_cast(&b, LCAST_TRUNC, LTYPE_I32, thread), 1);
	s64 = shuffle(&b, LTYPE_I64, thread, 2);
	r = grid_stride(&b, p[1], thread);
	{
		uint32_t w0 = lir_emit(&b, LOP_LOAD, LTYPE_F32, lir_emit(&b, LOP_BUFFER, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE),
		                       op2(&b, LOP_AND, LTYPE_I64, r, ci(&b, 1)), LIR_NONE);
		uint32_t buf1 = lir_emit(&b, LOP_BUFFER, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
		uint32_t w1 = lir_cast(&b, LCAST_SITOFP, LTYPE_F32, lir_emit(&b, LOP_LOAD, LTYPE_I32, buf1, ci(&b, 1), LIR_NONE));
		b.fn->insts[buf1].imm = 1;
		x = lir_emit(&b, LOP_LOAD, LTYPE_F32, p[0], r, LIR_NONE);
		o = op2(&b, LOP_MUL, LTYPE_I64, r, ci(&b, OUTPUTS));
		lir_emit(&b, LOP_STORE, LTYPE_VOID, p[2], o, op2(&b, LOP_FADD, LTYPE_F32, op2(&b, LOP_FADD, LTYPE_F32, x, w0), w1));
		lir_emit(&b, LOP_STORE, LTYPE_VOID, p[2], op2(&b, LOP_ADD, LTYPE_I64, o, ci(&b, 1)), v);
		atomic_add(&b, p[4], ci(&b, 0), x);
		atomic_add(&b, p[4], ci(&b, 1), lir_const_int(&b, LTYPE_I32, 1));
	}
	lir_end(&b);
	/* The shuffles of row values, outside the loop where every thread of the warp takes part: of row `thread`. */
	{
		uint32_t in = op2(&b, LOP_MIN, LTYPE_I64, thread, op2(&b, LOP_SUB, LTYPE_I64, p[1], ci(&b, 1)));
		uint32_t row = lir_emit(&b, LOP_LOAD, LTYPE_F32, p[0], in, LIR_NONE);
		uint32_t sf = shuffle(&b, LTYPE_F32, row, 1), sd = shuffle(&b, LTYPE_F64, lir_cast(&b, LCAST_FPEXT, LTYPE_F64, row), 1);
		uint32_t at = op2(&b, LOP_MUL, LTYPE_I64, in, ci(&b, OUTPUTS));
		lir_emit(&b, LOP_STORE, LTYPE_VOID, p[2], op2(&b, LOP_ADD, LTYPE_I64, at, ci(&b, 2)),
		         op2(&b, LOP_FADD, LTYPE_F32, lir_cast(&b, LCAST_SITOFP, LTYPE_F32, s32), sf));
		lir_emit(&b, LOP_STORE, LTYPE_VOID, p[2], op2(&b, LOP_ADD, LTYPE_I64, at, ci(&b, 3)),
		         lir_cast(&b, LCAST_FPTRUNC, LTYPE_F32,
		                  op2(&b, LOP_FADD, LTYPE_F64, sd, lir_cast(&b, LCAST_SITOFP, LTYPE_F64, s64))));
	}

	kernel(m, &b, "predict_f64", 1, p);
	r = grid_stride(&b, p[1], gpu_index(&b, LGPU_THREAD_X));
	x = lir_emit(&b, LOP_LOAD, LTYPE_F64, p[0], r, LIR_NONE);
	o = op2(&b, LOP_MUL, LTYPE_I64, r, ci(&b, OUTPUTS));
	lir_emit(&b, LOP_STORE, LTYPE_VOID, p[2], o,
	         lir_cast(&b, LCAST_FPTRUNC, LTYPE_F32, lir_emit(&b, LOP_EXP, LTYPE_F64, x, LIR_NONE, LIR_NONE)));
	lir_emit(&b, LOP_STORE, LTYPE_VOID, p[2], op2(&b, LOP_ADD, LTYPE_I64, o, ci(&b, 1)),
	         lir_emit(&b, LOP_LOG, LTYPE_F32, lir_cast(&b, LCAST_FPTRUNC, LTYPE_F32, x), LIR_NONE, LIR_NONE));
	lir_end(&b);
	return m;
}

/* Emit the module for device (arch) as emit says into path; the error message, if any, into e. */
static bool emit(const LModule *m, TargetDevice device, const char *arch, TargetEmit kind, const char *path, Error *e)
{
	TargetOptions o = {.emit = kind, .opt_level = 3, .cpu = "x86-64", .prefix = "gpu_test", .device = device, .gpu_arch = arch};
	memset(e, 0, sizeof *e);
	return target_emit(m, &o, path, e);
}

/* Run command and return its output (static buffer) and exit status. */
static const char *run(const char *command, int *status)
{
	static char output[1 << 16];
	size_t n = 0;
	FILE *p = popen(command, "r");
	if (!p) {
		*status = -1;
		return "";
	}
	n = fread(output, 1, sizeof output - 1, p);
	output[n] = 0;
	*status = pclose(p);
	return output;
}

/* The PTX for arch through ptxas: it assembles and nothing spills. CUDA 13 dropped sm_70: that PTX goes to sm_75. */
static void test_ptx(const LModule *m, const char *arch, const char *dir)
{
	char path[512], command[1200];
	const char *output;
	int status;
	Error e;
	snprintf(path, sizeof path, "%s/%s.ptx", dir, arch);
	CHECK(emit(m, TARGET_DEVICE_CUDA, arch, TARGET_EMIT_PTX, path, &e));
	if (e.message[0])
		fprintf(stderr, "ptx %s: %s\n", arch, e.message);
	if (access(PTXAS, X_OK) != 0) {
		fprintf(stderr, "gpu_target: %s not found: the PTX for %s is not assembled\n", PTXAS, arch);
		return;
	}
	snprintf(command, sizeof command, "%s -arch=%s -v %s -o %s/%s.cubin 2>&1", PTXAS, arch, path, dir, arch);
	output = run(command, &status);
	if (status != 0 && strstr(output, "is not defined for option")) {
		fprintf(stderr, "gpu_target: this ptxas does not know %s; its PTX is assembled for sm_75\n", arch);
		snprintf(command, sizeof command, "%s -arch=sm_75 -v %s -o %s/%s.cubin 2>&1", PTXAS, path, dir, arch);
		output = run(command, &status);
	}
	CHECK(status == 0);
	CHECK(strstr(output, "Compiling entry function 'gpu_test_predict0'") && strstr(output, "gpu_test_predict_f64"));
	CHECK(strstr(output, "spill stores") != NULL);
	for (const char *line = output; (line = strstr(line, "spill stores")); line++)
		CHECK(line - output >= 9 && !strncmp(line - 9, " 0 bytes spill stores, 0 bytes spill loads", 42));
	if (status != 0 || getenv("GPU_TARGET_VERBOSE"))
		fprintf(stderr, "ptxas %s:\n%s", arch, output);
}

/* The HSACO for arch: linked by ld.lld, its notes list both kernels. */
static void test_hsaco(const LModule *m, const char *arch, const char *dir)
{
	char path[512], command[1200];
	const char *output;
	int status;
	Error e;
	snprintf(path, sizeof path, "%s/%s.hsaco", dir, arch);
	CHECK(emit(m, TARGET_DEVICE_ROCM, arch, TARGET_EMIT_HSACO, path, &e));
	if (e.message[0]) {
		fprintf(stderr, "hsaco %s: %s\n", arch, e.message);
		return;
	}
	snprintf(command, sizeof command, "llvm-readelf-16 --notes %s 2>&1", path);
	output = run(command, &status);
	CHECK(status == 0);
	CHECK(strstr(output, "amdhsa.kernels") != NULL);
	CHECK(strstr(output, ".name:           gpu_test_predict0") != NULL);
	CHECK(strstr(output, ".name:           gpu_test_predict_f64") != NULL);
	CHECK(strstr(output, "gfx") != NULL && strstr(output, arch) != NULL);
	if (getenv("GPU_TARGET_VERBOSE"))
		fprintf(stderr, "%s", output);
}

/* What the stubs saw. */
static int barriers, shuffles;
static uint32_t last_barrier_site;

static void stub_barrier(GroveSimThread *t, uint32_t site)
{
	(void)t;
	barriers++;
	last_barrier_site = site;
}

/* One thread: the lane delta down is past the warp's end, so each thread keeps its own value. */
static uint64_t stub_shuffle(GroveSimThread *t, uint64_t bits, int32_t delta, uint32_t site)
{
	(void)t, (void)delta, (void)site;
	shuffles++;
	return bits;
}

/* The simulator's artifact: sealed, loaded, its descriptor right, kernel 0 run as the one thread of the grid. */
static void test_gpusim(const LModule *m, const char *dir)
{
	char path[512];
	unsigned char tail[sizeof(GroveSeal)];
	Error e;
	FILE *f;
	void *lib;
	const GroveArtifact *a;
	const GroveDevice *d;
	snprintf(path, sizeof path, "%s/sim.so", dir);
	CHECK(emit(m, TARGET_DEVICE_GPUSIM, NULL, TARGET_EMIT_SHARED, path, &e));
	if (e.message[0]) {
		fprintf(stderr, "gpusim: %s\n", e.message);
		return;
	}
	f = fopen(path, "rb");
	CHECK(f && fseek(f, -(long)sizeof tail, SEEK_END) == 0 && fread(tail, 1, sizeof tail, f) == sizeof tail);
	CHECK(!memcmp(tail, GROVE_SEAL_MAGIC, 8));
	if (f)
		fclose(f);
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CHECK(lib != NULL);
	if (!lib) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return;
	}
	a = dlsym(lib, GROVE_ARTIFACT_SYMBOL);
	CHECK(a && a->magic == GROVE_ARTIFACT_MAGIC && a->version == GROVE_ARTIFACT_VERSION);
	if (!a || !a->device) {
		CHECK(!"no device");
		dlclose(lib);
		return;
	}
	d = a->device;
	CHECK(a->predict == NULL && a->predict_f64 == NULL && a->num_features == 1 && a->num_outputs == OUTPUTS);
	CHECK(a->workspace_fixed == 16);
	CHECK(d->kind == GROVE_DEVICE_GPUSIM && d->arch[0] == 0 && d->code == NULL && d->code_size == 0);
	CHECK(d->model_size == lir_buffer_offset(m, m->num_buffers) && d->model_size == 2 * LIR_MODEL_ALIGN);
	CHECK(!memcmp(d->model, buffer0, sizeof buffer0) && !memcmp(d->model + lir_buffer_offset(m, 1), buffer1, sizeof buffer1));
	CHECK(d->num_kernels == 2);
	if (d->num_kernels != 2) {
		dlclose(lib);
		return;
	}
	CHECK(!strcmp(d->kernels[0].name, "gpu_test_predict0") && !strcmp(d->kernels[1].name, "gpu_test_predict_f64"));
	CHECK(d->kernels[0].entry == 0 && d->kernels[1].entry == 1);
	CHECK(d->kernels[0].shared_bytes == BLOCK * 4 && d->kernels[1].shared_bytes == 0);
	CHECK(d->kernels[0].grid[0].rows_per == BLOCK && d->kernels[0].grid[1].count == 1 && d->kernels[0].block[0].count == BLOCK);
	CHECK(d->kernels[0].sim && d->kernels[1].sim);

	{
		float rows[ROWS] = {0.25f, -1, 10}, out[ROWS * OUTPUTS], shared[BLOCK];
		double rows64[ROWS] = {0, 1, 2.5};
		union {
			float f[4];
			int32_t i[4];
		} workspace = {{0}};
		GroveSimThread t = {.shared = (unsigned char *)shared, .barrier = stub_barrier, .shuffle = stub_shuffle};
		for (int k = 6; k < 12; k++)
			t.index[k] = 1; /* one thread in one block */
		for (int k = 0; k < BLOCK; k++)
			shared[k] = 42;
		memset(out, 0, sizeof out);
		d->kernels[0].sim(rows, ROWS, out, 0, &workspace, d->model, &t);
		CHECK(barriers == 1 && last_barrier_site > 0 && shuffles == 4);
		CHECK(shared[0] == 0 && shared[1] == 42);
		for (int r = 0; r < ROWS; r++) {
			CHECK(out[r * OUTPUTS] == rows[r] + buffer0[r & 1] + (float)buffer1[1]);
			CHECK(out[r * OUTPUTS + 1] == 42);
		}
		/* the shuffles: of thread 0's own row 0 */
		CHECK(out[2] == 0 + rows[0] && out[3] == rows[0] + 0);
		CHECK(workspace.f[0] == rows[0] + rows[1] + rows[2] && workspace.i[1] == ROWS);
		d->kernels[1].sim(rows64, ROWS, out, 0, &workspace, d->model, &t);
		for (int r = 0; r < ROWS; r++) {
			CHECK(out[r * OUTPUTS] == (float)exp(rows64[r]));
			CHECK(out[r * OUTPUTS + 1] == logf((float)rows64[r]));
		}
	}
	dlclose(lib);
}

/* Options that make no sense for a device, and modules for the wrong kind of target. */
static void test_errors(const LModule *gpu, const char *dir)
{
	char path[512];
	Error e;
	LModule *host = lir_module_new();
	LBuilder b;
	snprintf(path, sizeof path, "%s/wrong", dir);
	CHECK(!emit(gpu, TARGET_DEVICE_CUDA, "sm_80", TARGET_EMIT_OBJ, path, &e) && strstr(e.message, "--emit obj"));
	CHECK(!emit(gpu, TARGET_DEVICE_ROCM, NULL, TARGET_EMIT_PTX, path, &e) && strstr(e.message, "(hsaco)"));
	CHECK(!emit(gpu, TARGET_DEVICE_GPUSIM, NULL, TARGET_EMIT_HSACO, path, &e) && strstr(e.message, "gpusim"));
	CHECK(!emit(gpu, TARGET_DEVICE_CUDA, "sm_61", TARGET_EMIT_PTX, path, &e) &&
	      strstr(e.message, "sm_70 sm_75 sm_80 sm_86 sm_89 sm_90"));
	CHECK(!emit(gpu, TARGET_DEVICE_ROCM, "gfx900", TARGET_EMIT_HSACO, path, &e) &&
	      strstr(e.message, "gfx90a gfx942 gfx1030 gfx1100"));
	CHECK(!emit(gpu, TARGET_DEVICE_HOST, NULL, TARGET_EMIT_SHARED, path, &e) && strstr(e.message, "needs a GPU device"));
	lir_builder_init(&b, lir_func_add(host, "predict", lir_predict_params, LIR_PREDICT_PARAMS));
	host->predict = 0;
	CHECK(!emit(host, TARGET_DEVICE_CUDA, NULL, TARGET_EMIT_PTX, path, &e) && strstr(e.message, "host module"));
	CHECK(access(path, F_OK) != 0);
	lir_module_free(host);
}

int main(void)
{
	char dir[] = "/tmp/grove-gpu-target-XXXXXX", command[600];
	LModule *m = gpu_module();
	Error e = {.message = {0}};
	int status;
	if (!lir_verify(m, &e)) {
		fprintf(stderr, "the test's LIR does not verify: %s\n", e.message);
		return 1;
	}
	if (!mkdtemp(dir))
		return 1;
	test_ptx(m, "sm_70", dir);
	test_ptx(m, "sm_80", dir);
	test_ptx(m, "sm_90", dir);
	test_hsaco(m, "gfx90a", dir);
	test_hsaco(m, "gfx1100", dir);
	test_gpusim(m, dir);
	test_errors(m, dir);
	lir_module_free(m);
	snprintf(command, sizeof command, "rm -rf %s", dir);
	run(command, &status);
	if (failures)
		fprintf(stderr, "%d checks failed\n", failures);
	return failures != 0;
}
