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
 * are safe (they serialise on the device). Calls in chunks run on streams of their own,
 * blocking ones (work on the legacy default stream waits for them and they for it).
 *
 * A call's device buffers (rows, predictions, workspace) stay allocated after it, each
 * as large as the largest call's so far, for the next call to reuse, so that a call no
 * larger than an earlier one makes no allocation (cuMemFree also waits for the device):
 * while every call allocated and freed its buffers, even a lone row paid for both each
 * time (measured: docs/performance-notes.md, Device buffers kept). One call at a time
 * holds them; a call made while another thread's holds them allocates its own and frees
 * them after. grove_free frees them.
 *
 * Host rows of a call of at least two chunks (run_in_chunks) go to the device a chunk
 * at a time through page-locked (pinned) host memory, on two streams of the call's
 * buffers, so that a chunk's copy in and the last chunk's copy out run while the other
 * chunk's kernels do: copies from pageable memory are staged by the driver and run
 * alone. A chunk's kernels wait for the last chunk's (they share the workspace).
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
typedef struct CUevent_st *CUevent;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X 2 /* then Y, Z */
#define CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X 5  /* then Y, Z */
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define CU_EVENT_DISABLE_TIMING 2

/* The streams, events and pinned host memory of calls in chunks: two of each, a chunk's slot its number's parity. */
typedef struct Chunks {
	CUstream stream[2];
	CUevent ran[2];  /* a slot's kernels have run */
	CUevent done[2]; /* a slot's predictions are in its pinned memory */
	void *pinned;    /* per slot, a chunk's rows and then its predictions */
	size_t pinned_bytes;
} Chunks;

/* A call's device buffers for rows, predictions and workspace, and their sizes (0: none allocated); its chunks'. */
enum { ROWS, PREDICTIONS, WORKSPACE, BUFFERS };
typedef struct Buffers {
	CUdeviceptr at[BUFFERS];
	size_t bytes[BUFFERS];
	Chunks chunks;
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
	CUresult (*cuStreamCreate)(CUstream *stream, unsigned flags);
	CUresult (*cuStreamDestroy)(CUstream stream);
	CUresult (*cuStreamWaitEvent)(CUstream stream, CUevent event, unsigned flags);
	CUresult (*cuEventCreate)(CUevent *event, unsigned flags);
	CUresult (*cuEventDestroy)(CUevent event);
	CUresult (*cuEventRecord)(CUevent event, CUstream stream);
	CUresult (*cuEventSynchronize)(CUevent event);
	CUresult (*cuMemAllocHost)(void **pointer, size_t bytes);
	CUresult (*cuMemFreeHost)(void *pointer);
	CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr to, const void *from, size_t bytes, CUstream stream);
	CUresult (*cuMemcpyDtoHAsync)(void *to, CUdeviceptr from, size_t bytes, CUstream stream);
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
	ENTRY(cuStreamCreate, "cuStreamCreate"),
	ENTRY(cuStreamDestroy, "cuStreamDestroy_v2"),
	ENTRY(cuStreamWaitEvent, "cuStreamWaitEvent"),
	ENTRY(cuEventCreate, "cuEventCreate"),
	ENTRY(cuEventDestroy, "cuEventDestroy_v2"),
	ENTRY(cuEventRecord, "cuEventRecord"),
	ENTRY(cuEventSynchronize, "cuEventSynchronize"),
	ENTRY(cuMemAllocHost, "cuMemAllocHost_v2"),
	ENTRY(cuMemFreeHost, "cuMemFreeHost"),
	ENTRY(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
	ENTRY(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
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

/* Free b's buffers, streams, events and pinned memory, once the device has done with them. In the context. */
static void release(const Cuda *c, Buffers *b)
{
	Chunks *k = &b->chunks;
	if (k->stream[0])
		c->cuCtxSynchronize();
	for (int i = 0; i < BUFFERS; i++)
		if (b->at[i])
			c->cuMemFree(b->at[i]);
	for (int s = 0; s < 2; s++) {
		if (k->stream[s])
			c->cuStreamDestroy(k->stream[s]);
		if (k->ran[s])
			c->cuEventDestroy(k->ran[s]);
		if (k->done[s])
			c->cuEventDestroy(k->done[s]);
	}
	if (k->pinned)
		c->cuMemFreeHost(k->pinned);
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

/*
 * Launch the kernels of the call's entry in order for nrows rows, on stream (NULL: the
 * legacy default), grids clamped to the device's limits.
 */
static GroveStatus launch_all(const Cuda *c, const GroveDevice *d, const DeviceCall *call, int64_t nrows,
                              CUdeviceptr rows, CUdeviceptr out, CUdeviceptr workspace, CUstream stream,
                              GroveError *err)
{
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
		                      (unsigned)k->block[1].count, (unsigned)k->block[2].count, 0, stream, parameters, NULL);
		if (r != CUDA_SUCCESS) {
			char what[160];
			snprintf(what, sizeof what, "cuLaunchKernel (%s)", k->name);
			return cuda_error(c, GROVE_ERROR_DEVICE, r, what, err);
		}
	}
	return GROVE_OK;
}

/* b's streams, events and pinned memory for chunks of `bytes` a slot, made on first use. In the context. */
static GroveStatus chunks_ready(const Cuda *c, Chunks *k, size_t bytes, GroveError *err)
{
	CUresult r = CUDA_SUCCESS;
	for (int s = 0; s < 2 && r == CUDA_SUCCESS; s++) {
		if (!k->stream[s] && (r = c->cuStreamCreate(&k->stream[s], 0)) != CUDA_SUCCESS)
			k->stream[s] = NULL;
		if (r == CUDA_SUCCESS && !k->ran[s] && (r = c->cuEventCreate(&k->ran[s], CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS)
			k->ran[s] = NULL;
		if (r == CUDA_SUCCESS && !k->done[s] && (r = c->cuEventCreate(&k->done[s], CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS)
			k->done[s] = NULL;
	}
	if (r != CUDA_SUCCESS)
		return cuda_error(c, GROVE_ERROR_DEVICE, r, "cuStreamCreate or cuEventCreate (chunks of host rows)", err);
	if (k->pinned_bytes >= 2 * bytes)
		return GROVE_OK;
	if (k->pinned)
		c->cuMemFreeHost(k->pinned);
	k->pinned_bytes = 0;
	if ((r = c->cuMemAllocHost(&k->pinned, 2 * bytes)) != CUDA_SUCCESS) {
		k->pinned = NULL;
		return cuda_error(c, r == CUDA_ERROR_OUT_OF_MEMORY ? GROVE_ERROR_MEMORY : GROVE_ERROR_DEVICE, r,
		                  "cuMemAllocHost (pinned memory for chunks of host rows)", err);
	}
	k->pinned_bytes = 2 * bytes;
	return GROVE_OK;
}

/* Chunk i's predictions, in its slot's pinned memory (after its rows) once its copy is done, into the caller's. */
static GroveStatus chunk_out(const Cuda *c, const DeviceCall *call, const ChunkPlan *p, Chunks *k, int64_t i,
                             GroveError *err)
{
	CUresult r = c->cuEventSynchronize(k->done[i & 1]);
	if (r != CUDA_SUCCESS) /* (the kernels' errors surface here) */
		return cuda_error(c, GROVE_ERROR_DEVICE, r, "cuEventSynchronize (a chunk's kernels and copies)", err);
	grove_chunk_out(call, p, i, k->pinned);
	return GROVE_OK;
}

/*
 * The call's host rows a chunk at a time (the header's pipeline), into b's device
 * buffers for the whole call. Chunk i, in slot s = i mod 2: its rows copied into the
 * slot's pinned memory once chunk i - 2's predictions have left it, copied to the device
 * on the slot's stream, its kernels launched there once chunk i - 1's have run, its
 * predictions copied back into the slot, after its rows.
 */
static GroveStatus run_in_chunks(const Cuda *c, const GroveDevice *d, const DeviceCall *call, const ChunkPlan *p,
                                 Buffers *b, GroveError *err)
{
	Chunks *k = &b->chunks;
	GroveStatus status = chunks_ready(c, k, p->slot_bytes, err);
	for (int64_t i = 0; i < p->chunks && status == GROVE_OK; i++) {
		int s = (int)(i & 1);
		int64_t n = grove_chunk_rows(call, p, i);
		CUdeviceptr rows = b->at[ROWS] + grove_chunk_rows_at(p, i), out = b->at[PREDICTIONS] + grove_chunk_out_at(p, i);
		char *slot;
		CUresult r;
		if (i >= 2 && (status = chunk_out(c, call, p, k, i - 2, err)) != GROVE_OK)
			break;
		slot = grove_chunk_in(call, p, i, k->pinned);
		if ((r = c->cuMemcpyHtoDAsync(rows, slot, (size_t)n * p->row_in, k->stream[s])) != CUDA_SUCCESS)
			status = cuda_error(c, GROVE_ERROR_DEVICE, r, "cuMemcpyHtoDAsync (a chunk of rows)", err);
		else if (i >= 1 && (r = c->cuStreamWaitEvent(k->stream[s], k->ran[!s], 0)) != CUDA_SUCCESS)
			status = cuda_error(c, GROVE_ERROR_DEVICE, r, "cuStreamWaitEvent", err);
		else if ((status = launch_all(c, d, call, n, rows, out, b->at[WORKSPACE], k->stream[s], err)) != GROVE_OK)
			break;
		else if ((r = c->cuEventRecord(k->ran[s], k->stream[s])) != CUDA_SUCCESS ||
		         (r = c->cuMemcpyDtoHAsync(slot + grove_chunk_rows_at(p, 1), out, (size_t)n * p->row_out,
		                                   k->stream[s])) != CUDA_SUCCESS ||
		         (r = c->cuEventRecord(k->done[s], k->stream[s])) != CUDA_SUCCESS)
			status = cuda_error(c, GROVE_ERROR_DEVICE, r, "cuEventRecord or cuMemcpyDtoHAsync (a chunk)", err);
	}
	for (int64_t i = p->chunks >= 2 ? p->chunks - 2 : 0; i < p->chunks && status == GROVE_OK; i++)
		status = chunk_out(c, call, p, k, i, err);
	if (status != GROVE_OK)
		c->cuCtxSynchronize(); /* nothing in flight when the call returns */
	return status;
}

/* Run the call in the context with b's buffers (grown as it needs): rows in, launches, predictions out. */
static GroveStatus run_in_context(const Cuda *c, const GroveDevice *d, const DeviceCall *call, Buffers *b,
                                  GroveError *err)
{
	CUdeviceptr rows = (CUdeviceptr)(uintptr_t)call->rows, out = (CUdeviceptr)(uintptr_t)call->out;
	ChunkPlan plan;
	GroveStatus status;
	CUresult r;
	grove_chunk_plan(call, &plan);
	if (!call->resident && ((status = reserve(c, b, ROWS, call->rows_bytes, err)) != GROVE_OK ||
	                        (status = reserve(c, b, PREDICTIONS, call->out_bytes, err)) != GROVE_OK))
		return status;
	if ((status = reserve(c, b, WORKSPACE, call->workspace_bytes, err)) != GROVE_OK)
		return status;
	if (plan.chunks > 1)
		return run_in_chunks(c, d, call, &plan, b, err);
	if (!call->resident) {
		rows = b->at[ROWS];
		out = b->at[PREDICTIONS];
		if ((r = c->cuMemcpyHtoD(rows, call->rows, call->rows_bytes)) != CUDA_SUCCESS)
			return cuda_error(c, GROVE_ERROR_DEVICE, r, "cuMemcpyHtoD (rows)", err);
	}
	if ((status = launch_all(c, d, call, call->nrows, rows, out, b->at[WORKSPACE], NULL, err)) != GROVE_OK)
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
