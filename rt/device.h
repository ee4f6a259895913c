/*
 * libgrove's GPU back-ends, internal to the library: the SIMT simulator (gpusim.c), CUDA
 * (cuda.c) and AMD's HSA runtime (hsa.c). runtime.c checks a GPU artifact's descriptor
 * and every argument, then hands a back-end one call of a kernel sequence. Their
 * symbols are hidden: libgrove.so exports grove.h only.
 */
#ifndef GROVE_RT_DEVICE_H
#define GROVE_RT_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rt/artifact.h"
#include "rt/grove.h"

#define GROVE_HIDDEN __attribute__((visibility("hidden")))

/* Threads of a block at most (CUDA's and HSA's limit), and its static shared memory (HSA's LDS). */
#define GROVE_MAX_BLOCK_THREADS 1024
#define GROVE_MAX_SHARED_BYTES (64u << 10)

/*
 * One prediction: the kernels of `entry` run in table order on nrows rows. rows and out
 * are host memory, or device memory when `resident` (grove_predict_device); for the
 * simulator both are the same. workspace is the call's host workspace (the simulator's
 * device memory); the other back-ends allocate workspace_bytes on the device.
 */
typedef struct DeviceCall {
	uint32_t entry;
	const void *rows;
	size_t rows_bytes;
	int64_t nrows;
	float *out;
	size_t out_bytes;
	int32_t flags; /* GROVE_ARTIFACT_* */
	void *workspace;
	size_t workspace_bytes;
	bool resident;
} DeviceCall;

/*
 * How a call's rows go to the device (rt/chunks.c): `chunks` chunks of `rows` rows (the
 * last may be short), each row's bytes in and out, and a slot's bytes of pinned host
 * memory, a chunk's rows and then its predictions. One chunk of every row where the rows
 * are on the device already or too few for two chunks; the back-ends keep two chunks in
 * flight, chunk i in slot i mod 2.
 */
typedef struct ChunkPlan {
	int64_t rows, chunks;
	size_t row_in, row_out, slot_bytes;
} ChunkPlan;

void grove_chunk_plan(const DeviceCall *call, ChunkPlan *p) GROVE_HIDDEN;
/* The rows of chunk i. */
int64_t grove_chunk_rows(const DeviceCall *call, const ChunkPlan *p, int64_t i) GROVE_HIDDEN;
/* Where chunk i's rows and its predictions start, in bytes from the call's first (in the caller's or the device's). */
static inline size_t grove_chunk_rows_at(const ChunkPlan *p, int64_t i) { return (size_t)(i * p->rows) * p->row_in; }
static inline size_t grove_chunk_out_at(const ChunkPlan *p, int64_t i) { return (size_t)(i * p->rows) * p->row_out; }
/* Chunk i's slot of pinned (two slots of p->slot_bytes), its rows copied into it from the caller's. */
char *grove_chunk_in(const DeviceCall *call, const ChunkPlan *p, int64_t i, void *pinned) GROVE_HIDDEN;
/* Chunk i's predictions, after its rows in its slot of pinned (grove_chunk_rows_at(p, 1) bytes in), into the caller's. */
void grove_chunk_out(const DeviceCall *call, const ChunkPlan *p, int64_t i, const void *pinned) GROVE_HIDDEN;

/* A back-end: state made at load (the module and the model on the device), then any number of calls, thread-safe. */
typedef struct DeviceBackend {
	const char *name;  /* grove_device's answer */
	bool host_memory;  /* its device memory is the host's: runtime.c makes the workspace */
	GroveStatus (*open)(const GroveDevice *device, void **state, GroveError *err);
	void (*close)(void *state);
	GroveStatus (*run)(void *state, const GroveDevice *device, const DeviceCall *call, GroveError *err);
} DeviceBackend;

extern const DeviceBackend grove_gpusim_backend GROVE_HIDDEN;

/*
 * The memory requests of kernels built to profile (TargetOptions.profile) as the
 * simulator runs them, per kernel of the device's table (the first GROVE_SIM_KERNELS):
 * a warp's request is one load or store site executed by its threads for the same time,
 * its global sectors the distinct 32-byte sectors they touch, its shared wavefronts the
 * most distinct 4-byte words they touch in one of the 32 banks. `warps`: of the blocks run.
 */
#define GROVE_SIM_KERNELS 16
typedef struct GroveSimCounts {
	uint64_t warps, global_requests, global_sectors, shared_requests, shared_wavefronts;
} GroveSimCounts;
typedef struct GroveSimProfile {
	GroveSimCounts kernels[GROVE_SIM_KERNELS];
	bool incomplete; /* memory ran out: some requests were not counted */
} GroveSimProfile;
/* Where not NULL, simulated calls add their first run's requests here: grove tune's, one call at a time. */
extern GroveSimProfile *grove_gpusim_profile GROVE_HIDDEN;
extern const DeviceBackend grove_cuda_backend GROVE_HIDDEN;
extern const DeviceBackend grove_hsa_backend GROVE_HIDDEN;

/* Fill err (if any) with status and the message; return status. */
__attribute__((format(printf, 3, 4))) GroveStatus grove_fail(GroveError *err, GroveStatus status, const char *fmt,
                                                             ...) GROVE_HIDDEN;
/* A launch extent for nrows rows: count, or ceil(nrows / rows_per) and at least 1. */
int64_t grove_extent(const GroveLaunchDim *d, int64_t nrows) GROVE_HIDDEN;

/*
 * GROVE_OK if this CPU has every feature of needed (an artifact's GROVE_CPU_FEATURES_SYMBOL:
 * LLVM's names, comma-separated); else GROVE_ERROR_UNAVAILABLE naming the missing ones.
 */
GroveStatus grove_check_cpu(const char *needed, const char *path, GroveError *err) GROVE_HIDDEN;

/* A host artifact's predict call: one of the three functions (the others NULL) and its arguments. */
typedef struct HostCall {
	void (*predict)(const float *rows, int64_t nrows, float *out, int32_t flags, void *workspace);
	void (*predict_v1)(const float *rows, int64_t nrows, float *out, int32_t flags);
	void (*predict_f64)(const double *rows, int64_t nrows, float *out, int32_t flags, void *workspace);
	const void *rows;
	int64_t nrows;
	float *out;
	int32_t flags;
	void *workspace;
} HostCall;

/* Note, from now on, when this process is a child of fork (rt/fork.c); grove_load calls it. */
void grove_watch_forks(void) GROVE_HIDDEN;
/* Make call: here, or in a child of fork on a fresh thread (whose OpenMP team is its own, not the parent's). */
GroveStatus grove_run_host(const HostCall *call, GroveError *err) GROVE_HIDDEN;

#endif
