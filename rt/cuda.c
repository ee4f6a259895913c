/*
 * The CUDA back-end (GROVE_DEVICE_CUDA): the artifact's PTX and model go to device 0
 * at load, through the CUDA Driver API, which libgrove opens with dlopen so that it
 * loads and runs host artifacts where no NVIDIA driver is installed. It declares the
 * few driver types and entry points it uses itself (cuda.h's, API version 2 where the
 * driver has several) instead of building against CUDA's headers.
 *
 * Each call runs on the device's primary context, pushed on the calling thread for the
 * call, and on the legacy default stream, whose launches run one after the other: so
 * the kernels of a sequence see each other's writes, and calls from several threads
 * are safe (they serialise on the device).
 *
 * A call's device buffers (rows, predictions, workspace) stay allocated after it, each
 * as large as the largest call's so far, for the next call to reuse, so that a call no
 * larger than an earlier one makes no allocation (cuMemFree also waits for the device):
 * while every call allocated and freed its buffers, even a lone row paid for both each
 * time (measured: docs/performance-notes.md, Device buffers kept). One call at a time
 * holds them; a call made while another thread's holds them allocates its own and frees
 * them after. grove_free frees them.
 */
#include "rt/device.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X 2 /* then Y, Z */
#define CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X 5  /* then Y, Z */
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

/* A call's device buffers for rows, predictions and workspace, and their sizes (0: none allocated). */
enum { ROWS, PREDICTIONS, WORKSPACE, BUFFERS };
typedef struct Buffers {
	CUdeviceptr at[BUFFERS];
	size_t bytes[BUFFERS];
} Buffers;

/* The driver's entry points this back-end calls, and the state of one loaded artifact. */
typedef struct Cuda {
	void *library;
	CUresult (*cuInit)(unsigned flags);
	CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
	CUresult (*cuDeviceGetAttribute)(int *value, int attribute, CUdevice device);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
	CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
	CUresult (*cuCtxPushCurrent)(CUcontext context);
	CUresult (*cuCtxPopCurrent)(CUcontext *context);
	CUresult (*cuModuleLoadDataEx)(CUmodule *module, const void *image, unsigned count, int *options, void **values);
	CUresult (*cuModuleUnload)(CUmodule module);
	CUresult (*cuModuleGetFunction)(CUfunction *function, CUmodule module, const char *name);
	CUresult (*cuMemAlloc)(CUdeviceptr *pointer, size_t bytes);
	CUresult (*cuMemFree)(CUdeviceptr pointer);
	CUresult (*cuMemcpyHtoD)(CUdeviceptr to, const void *from, size_t bytes);
	CUresult (*cuMemcpyDtoH)(void *to, CUdeviceptr from, size_t bytes);
	CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
	                           unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream stream,
	                           void **parameters, void **extra);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuGetErrorName)(CUresult error, const char **name);
	CUresult (*cuGetErrorString)(CUresult error, const char **text);

	CUdevice device;
	CUcontext context; /* the primary context, retained; NULL before */
	CUmodule module;
	CUfunction *functions; /* one per kernel of the artifact */
	CUdeviceptr model;     /* the model blob, or 0 */
	int64_t max_grid[3];
	Buffers spare;         /* the buffers kept between calls */
	bool spare_taken;      /* a call holds them (atomic) */
} Cuda;

/* Where each entry point is found: its exported name and its field. */
static const struct {
	const char *name;
	size_t offset;
} entry_points[] = {
#define ENTRY(field, name) {name, offsetof(Cuda, field)}
	ENTRY(cuInit, "cuInit"),
	ENTRY(cuDeviceGet, "cuDeviceGet"),
	ENTRY(cuDeviceGetAttribute, "cuDeviceGetAttribute"),
	ENTRY(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
	ENTRY(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
	ENTRY(cuCtxPushCurrent, "cuCtxPushCurrent_v2"),
	ENTRY(cuCtxPopCurrent, "cuCtxPopCurrent_v2"),
	ENTRY(cuModuleLoadDataEx, "cuModuleLoadDataEx"),
	ENTRY(cuModuleUnload, "cuModuleUnload"),
	ENTRY(cuModuleGetFunction, "cuModuleGetFunction"),
	ENTRY(cuMemAlloc, "cuMemAlloc_v2"),
	ENTRY(cuMemFree, "cuMemFree_v2"),
	ENTRY(cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
	ENTRY(cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
	ENTRY(cuLaunchKernel, "cuLaunchKernel"),
	ENTRY(cuCtxSynchronize, "cuCtxSynchronize"),
	ENTRY(cuGetErrorName, "cuGetErrorName"),
	ENTRY(cuGetErrorString, "cuGetErrorString"),
#undef ENTRY
};

/* GROVE_ERROR_DEVICE (or status) for the driver's error r from call: the driver's name and text for it. */
static GroveStatus cuda_error(const Cuda *c, GroveStatus status, CUresult r, const char *call, GroveError *err)
{
	const char *name = NULL, *text = NULL;
	if (c->cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
		name = "an unknown error";
	if (c->cuGetErrorString(r, &text) != CUDA_SUCCESS || !text)
		text = "no description";
	return grove_fail(err, status, "cuda: %s: %s (%d: %s)", call, name, r, text);
}

/* Open libcuda.so.1 and find the entry points: GROVE_ERROR_UNAVAILABLE where the driver is missing or too old. */
static GroveStatus open_driver(Cuda *c, GroveError *err)
{
	if (!(c->library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)))
		return grove_fail(err, GROVE_ERROR_UNAVAILABLE, "cuda: libcuda.so.1 not found: the NVIDIA driver is not "
		                  "installed (%s)", dlerror());
	for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; i++) {
		void *symbol = dlsym(c->library, entry_points[i].name);
		if (!symbol)
			return grove_fail(err, GROVE_ERROR_UNAVAILABLE, "cuda: libcuda.so.1 has no %s: the NVIDIA driver is too "
			                  "old", entry_points[i].name);
		memcpy((char *)c + entry_points[i].offset, &symbol, sizeof symbol);
	}
	return GROVE_OK;
}

/*
 * Device 0, its grid limits, and its primary context: GROVE_ERROR_UNAVAILABLE where
 * the driver finds no device. Kernels whose blocks exceed the device's are an error.
 */
static GroveStatus open_device(Cuda *c, const GroveDevice *d, GroveError *err)
{
	CUresult r;
	int limit;
	if ((r = c->cuInit(0)) != CUDA_SUCCESS)
		return cuda_error(c, GROVE_ERROR_UNAVAILABLE, r, "cuInit (no usable NVIDIA GPU)", err);
	if ((r = c->cuDeviceGet(&c->device, 0)) != CUDA_SUCCESS)
		return cuda_error(c, GROVE_ERROR_UNAVAILABLE, r, "cuDeviceGet (no CUDA device)", err);
	for (int k = 0; k < 3; k++) {
		if ((r = c->cuDeviceGetAttribute(&limit, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + k, c->device)) != CUDA_SUCCESS)
			return cuda_error(c, GROVE_ERROR_DEVICE, r, "cuDeviceGetAttribute", err);
		c->max_grid[k] = limit > 0 ? limit : 1;
		if ((r = c->cuDeviceGetAttribute(&limit, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + k, c->device)) != CUDA_SUCCESS)
			return cuda_error(c, GROVE_ERROR_DEVICE, r, "cuDeviceGetAttribute", err);
		for (uint32_t i = 0; i < d->num_kernels; i++)
			if (d->kernels[i].block[k].count > limit)
				return grove_fail(err, GROVE_ERROR_DEVICE, "cuda: kernel %s has %lld threads per block along %c, the "
				                  "device at most %d", d->kernels[i].name, (long long)d->kernels[i].block[k].count,
				                  "xyz"[k], limit);
	}
	if ((r = c->cuDevicePrimaryCtxRetain(&c->context, c->device)) != CUDA_SUCCESS) {
		c->context = NULL;
		return cuda_error(c, GROVE_ERROR_DEVICE, r, "cuDevicePrimaryCtxRetain", err);
	}
	return GROVE_OK;
}

/* Load the PTX (the JIT's log in the message when it fails), find each kernel, upload the model. In the context. */
static GroveStatus load_module(Cuda *c, const GroveDevice *d, GroveError *err)
{
	char log[256] = "", call[400];
	int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *values[] = {log, (void *)(uintptr_t)sizeof log};
	CUresult r = c->cuModuleLoadDataEx(&c->module, d->code, 2, options, values);
	if (r != CUDA_SUCCESS) {
		c->module = NULL;
		log[sizeof log - 1] = 0;
		snprintf(call, sizeof call, "cuModuleLoadDataEx (PTX for %s: %s)", d->arch, *log ? log : "no log");
		return cuda_error(c, GROVE_ERROR_DEVICE, r, call, err);
	}
	if (!(c->functions = calloc(d->num_kernels, sizeof *c->functions)))
		return grove_fail(err, GROVE_ERROR_MEMORY, "cuda: out of memory");
	for (uint32_t i = 0; i < d->num_kernels; i++)
		if ((r = c->cuModuleGetFunction(&c->functions[i], c->module, d->kernels[i].name)) != CUDA_SUCCESS) {
			snprintf(call, sizeof call, "cuModuleGetFunction (%s)", d->kernels[i].name);
			return cuda_error(c, GROVE_ERROR_DEVICE, r, call, err);
		}
	if (!d->model_size)
		return GROVE_OK;
	if ((r = c->cuMemAlloc(&c->model, d->model_size)) != CUDA_SUCCESS) {
		c->model = 0;
		return cuda_error(c, GROVE_ERROR_DEVICE, r, "cuMemAlloc (the model)", err);
	}
	if ((r = c->cuMemcpyHtoD(c->model, d->model, d->model_size)) != CUDA_SUCCESS)
		return cuda_error(c, GROVE_ERROR_DEVICE, r, "cuMemcpyHtoD (the model)", err);
	return GROVE_OK;
}

/* Free b's buffers. In the context. */
static void release(const Cuda *c, Buffers *b)
{
	for (int i = 0; i < BUFFERS; i++)
		if (b->at[i])
			c->cuMemFree(b->at[i]);
	*b = (Buffers){0};
}

static void cuda_close(void *state)
{
	Cuda *c = state;
	CUcontext popped;
	if (!c)
		return;
	if (c->context && c->cuCtxPushCurrent(c->context) == CUDA_SUCCESS) {
		release(c, &c->spare);
		if (c->model)
			c->cuMemFree(c->model);
		if (c->module)
			c->cuModuleUnload(c->module);
		c->cuCtxPopCurrent(&popped);
	}
	if (c->context)
		c->cuDevicePrimaryCtxRelease(c->device);
	free(c->functions);
	if (c->library)
		dlclose(c->library);
	free(c);
}

static GroveStatus cuda_open(const GroveDevice *d, void **state, GroveError *err)
{
	Cuda *c = calloc(1, sizeof *c);
	CUcontext popped;
	CUresult r;
	GroveStatus status;
	*state = NULL;
	if (!c)
		return grove_fail(err, GROVE_ERROR_MEMORY, "cuda: out of memory");
	if ((status = open_driver(c, err)) == GROVE_OK && (status = open_device(c, d, err)) == GROVE_OK) {
		if ((r = c->cuCtxPushCurrent(c->context)) != CUDA_SUCCESS)
			status = cuda_error(c, GROVE_ERROR_DEVICE, r, "cuCtxPushCurrent", err);
		else {
			status = load_module(c, d, err);
			c->cuCtxPopCurrent(&popped);
		}
	}
	if (status != GROVE_OK)
		cuda_close(c);
	else
		*state = c;
	return status;
}

/* Make buffer i of b hold at least bytes: kept if it does, else freed and allocated again. In the context. */
static GroveStatus reserve(const Cuda *c, Buffers *b, int i, size_t bytes, GroveError *err)
{
	static const char *const what[] = {"rows", "predictions", "workspace"};
	char call[80];
	CUresult r;
	if (b->bytes[i] >= bytes)
		return GROVE_OK;
	if (b->at[i])
		c->cuMemFree(b->at[i]);
	b->at[i] = 0;
	b->bytes[i] = 0;
	if ((r = c->cuMemAlloc(&b->at[i], bytes)) != CUDA_SUCCESS) {
		b->at[i] = 0;
		snprintf(call, sizeof call, "cuMemAlloc (%s, %zu bytes)", what[i], bytes);
		return cuda_error(c, r == CUDA_ERROR_OUT_OF_MEMORY ? GROVE_ERROR_MEMORY : GROVE_ERROR_DEVICE, r, call, err);
	}
	b->bytes[i] = bytes;
	return GROVE_OK;
}

/* Launch the kernels of the call's entry in order, grids clamped to the device's limits. */
static GroveStatus launch_all(const Cuda *c, const GroveDevice *d, const DeviceCall *call, CUdeviceptr rows,
                              CUdeviceptr out, CUdeviceptr workspace, GroveError *err)
{
	int64_t nrows = call->nrows;
	int32_t flags = call->flags;
	CUdeviceptr model = c->model;
	void *parameters[] = {&rows, &nrows, &out, &flags, &workspace, &model};
	for (uint32_t i = 0; i < d->num_kernels; i++) {
		const GroveKernel *k = &d->kernels[i];
		unsigned grid[3];
		CUresult r;
		if (k->entry != call->entry)
			continue;
		for (int a = 0; a < 3; a++) {
			int64_t n = grove_extent(&k->grid[a], nrows);
			grid[a] = (unsigned)(n < c->max_grid[a] ? n : c->max_grid[a]);
		}
		r = c->cuLaunchKernel(c->functions[i], grid[0], grid[1], grid[2], (unsigned)k->block[0].count,
		                      (unsigned)k->block[1].count, (unsigned)k->block[2].count, 0, NULL, parameters, NULL);
		if (r != CUDA_SUCCESS) {
			char what[160];
			snprintf(what, sizeof what, "cuLaunchKernel (%s)", k->name);
			return cuda_error(c, GROVE_ERROR_DEVICE, r, what, err);
		}
	}
	return GROVE_OK;
}

/* Run the call in the context with b's buffers (grown as it needs): rows in, launches, predictions out. */
static GroveStatus run_in_context(const Cuda *c, const GroveDevice *d, const DeviceCall *call, Buffers *b,
                                  GroveError *err)
{
	CUdeviceptr rows = (CUdeviceptr)(uintptr_t)call->rows, out = (CUdeviceptr)(uintptr_t)call->out;
	GroveStatus status;
	CUresult r;
	if (!call->resident) {
		if ((status = reserve(c, b, ROWS, call->rows_bytes, err)) != GROVE_OK ||
		    (status = reserve(c, b, PREDICTIONS, call->out_bytes, err)) != GROVE_OK)
			return status;
		rows = b->at[ROWS];
		out = b->at[PREDICTIONS];
		if ((r = c->cuMemcpyHtoD(rows, call->rows, call->rows_bytes)) != CUDA_SUCCESS)
			return cuda_error(c, GROVE_ERROR_DEVICE, r, "cuMemcpyHtoD (rows)", err);
	}
	if ((status = reserve(c, b, WORKSPACE, call->workspace_bytes, err)) != GROVE_OK ||
	    (status = launch_all(c, d, call, rows, out, b->at[WORKSPACE], err)) != GROVE_OK)
		return status;
	/* Errors of the kernels themselves surface here. */
	if ((r = c->cuCtxSynchronize()) != CUDA_SUCCESS)
		return cuda_error(c, GROVE_ERROR_DEVICE, r, "cuCtxSynchronize (after the kernels)", err);
	if (!call->resident && (r = c->cuMemcpyDtoH(call->out, out, call->out_bytes)) != CUDA_SUCCESS)
		return cuda_error(c, GROVE_ERROR_DEVICE, r, "cuMemcpyDtoH (predictions)", err);
	return GROVE_OK;
}

/* The call on the kept buffers where no other call holds them, else on buffers of its own. A failed call frees what it used. */
static GroveStatus cuda_run(void *state, const GroveDevice *d, const DeviceCall *call, GroveError *err)
{
	Cuda *c = state;
	Buffers own = {0}, *b = &own;
	bool kept = !__atomic_exchange_n(&c->spare_taken, true, __ATOMIC_ACQUIRE);
	CUcontext popped;
	GroveStatus status;
	CUresult r = c->cuCtxPushCurrent(c->context);
	if (kept)
		b = &c->spare;
	if (r != CUDA_SUCCESS)
		status = cuda_error(c, GROVE_ERROR_DEVICE, r, "cuCtxPushCurrent", err);
	else {
		status = run_in_context(c, d, call, b, err);
		if (!kept || status != GROVE_OK)
			release(c, b);
		c->cuCtxPopCurrent(&popped);
	}
	if (kept)
		__atomic_store_n(&c->spare_taken, false, __ATOMIC_RELEASE);
	return status;
}

const DeviceBackend grove_cuda_backend = {
	.name = "cuda",
	.host_memory = false,
	.open = cuda_open,
	.close = cuda_close,
	.run = cuda_run,
};
