/*
 * The AMD back-end (GROVE_DEVICE_ROCM): the artifact's HSACO and model go to the first
 * GPU agent at load, through the HSA runtime, which libgrove opens with dlopen so that
 * it loads and runs host artifacts where ROCm is not installed. It declares the few HSA
 * types and entry points it uses itself (hsa.h's and hsa_ext_amd.h's) instead of
 * building against ROCm's headers.
 *
 * Memory: device buffers come from the GPU's coarse-grained global pool; the host side
 * of copies (pinned), and kernel arguments, from the CPU's fine-grained kernarg pool,
 * which the GPU may read. Copies are asynchronous (hsa_amd_memory_async_copy), each
 * with a signal. Each kernel is one AQL dispatch packet on a queue shared by the
 * model's callers (a multi-producer queue), its barrier bit set, so that it starts once
 * the packets before it have finished and sees their writes; the call waits for its
 * last kernel's completion signal. Host rows go a chunk at a time (run_kernels), so
 * that a chunk's copies run while the other chunk's kernels do.
 *
 * Kernel arguments: the six parameters at offsets 0, 8, 16, 24, 32 and 40, the rest of
 * the kernel's argument segment (the hidden arguments of code objects v4) zeroed.
 *
 * A call's memory (device buffers, the staging of its copies, its kernel arguments and
 * completion signal) stays after it for the next call, each buffer as large as the
 * largest call's so far, as the CUDA back-end keeps its buffers (cuda.c): one call at a
 * time holds them, a call made meanwhile makes and frees its own.
 */
#include "rt/device.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int hsa_status_t;
typedef int64_t hsa_signal_value_t;
typedef struct { uint64_t handle; } hsa_agent_t;
typedef struct { uint64_t handle; } hsa_signal_t;
typedef struct { uint64_t handle; } hsa_executable_t;
typedef struct { uint64_t handle; } hsa_executable_symbol_t;
typedef struct { uint64_t handle; } hsa_code_object_reader_t;
typedef struct { uint64_t handle; } hsa_loaded_code_object_t;
typedef struct { uint64_t handle; } hsa_amd_memory_pool_t;
typedef struct { uint32_t x, y, z; } hsa_dim3_t;

typedef struct hsa_queue_t {
	uint32_t type;
	uint32_t features;
	void *base_address; /* 64-bit little-endian layout */
	hsa_signal_t doorbell_signal;
	uint32_t size;
	uint32_t reserved1;
	uint64_t id;
} hsa_queue_t;

typedef struct hsa_kernel_dispatch_packet_t {
	uint16_t header;
	uint16_t setup;
	uint16_t workgroup_size_x, workgroup_size_y, workgroup_size_z;
	uint16_t reserved0;
	uint32_t grid_size_x, grid_size_y, grid_size_z;
	uint32_t private_segment_size;
	uint32_t group_segment_size;
	uint64_t kernel_object;
	void *kernarg_address;
	uint64_t reserved2;
	hsa_signal_t completion_signal;
} hsa_kernel_dispatch_packet_t;

_Static_assert(sizeof(hsa_kernel_dispatch_packet_t) == 64, "an AQL packet is 64 bytes");

#define HSA_STATUS_SUCCESS 0
#define HSA_STATUS_INFO_BREAK 1
#define HSA_STATUS_ERROR_OUT_OF_RESOURCES 0x1008
#define HSA_AGENT_INFO_PROFILE 4
#define HSA_AGENT_INFO_GRID_MAX_DIM 9
#define HSA_AGENT_INFO_QUEUE_MAX_SIZE 14
#define HSA_AGENT_INFO_DEVICE 17
#define HSA_DEVICE_TYPE_CPU 0
#define HSA_DEVICE_TYPE_GPU 1
#define HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT 0
#define HSA_QUEUE_TYPE_MULTI 0
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE 11
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE 13
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE 14
#define HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT 22
#define HSA_SIGNAL_CONDITION_LT 2
#define HSA_WAIT_STATE_BLOCKED 0
#define HSA_PACKET_TYPE_KERNEL_DISPATCH 2
#define HSA_PACKET_HEADER_TYPE 0
#define HSA_PACKET_HEADER_BARRIER 8
#define HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE 9
#define HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE 11
#define HSA_FENCE_SCOPE_SYSTEM 2
#define HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS 0
#define HSA_AMD_SEGMENT_GLOBAL 0
#define HSA_AMD_MEMORY_POOL_INFO_SEGMENT 0
#define HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS 1
#define HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED 5
#define HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT 1
#define HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED 4

/* Bytes of the six kernel parameters (ptr, i64, ptr, i32, ptr, ptr) in the argument segment. */
#define KERNARG_BYTES 48
/* AQL packets the queue holds (at most; the agent may allow fewer). */
#define QUEUE_PACKETS 256u
/* How long one wait for a kernel lasts (a hint, in the runtime's timestamp units) before the queue's health is checked again. */
#define WAIT_HINT UINT64_C(1000000)

/*
 * A call's memory: device buffers for rows, predictions and workspace; in the host pool
 * two slots of pinned memory (staging: a chunk's rows, then its predictions; and its
 * kernels' arguments); their sizes (0: none allocated); and per slot the signals of its
 * chunk's copy in, kernels and copy out, each 0 when done.
 */
enum { ROWS, PREDICTIONS, WORKSPACE, STAGING, KERNARG, BUFFERS };
enum { COPIED, RAN, DONE, SIGNALS };
typedef struct Buffers {
	void *at[BUFFERS];
	size_t bytes[BUFFERS];
	hsa_signal_t signal[2][SIGNALS];
	bool have_signals;
} Buffers;

/* A kernel of the executable. */
typedef struct HsaKernel {
	uint64_t object;
	uint32_t kernarg_bytes, group_bytes, private_bytes;
} HsaKernel;

/* The runtime's entry points this back-end calls, and the state of one loaded artifact. */
typedef struct Hsa {
	void *library;
	hsa_status_t (*hsa_init)(void);
	hsa_status_t (*hsa_shut_down)(void);
	hsa_status_t (*hsa_status_string)(hsa_status_t status, const char **text);
	hsa_status_t (*hsa_iterate_agents)(hsa_status_t (*callback)(hsa_agent_t agent, void *data), void *data);
	hsa_status_t (*hsa_agent_get_info)(hsa_agent_t agent, int attribute, void *value);
	hsa_status_t (*hsa_code_object_reader_create_from_memory)(const void *code, size_t size,
	                                                          hsa_code_object_reader_t *reader);
	hsa_status_t (*hsa_code_object_reader_destroy)(hsa_code_object_reader_t reader);
	hsa_status_t (*hsa_executable_create_alt)(int profile, int rounding, const char *options,
	                                          hsa_executable_t *executable);
	hsa_status_t (*hsa_executable_load_agent_code_object)(hsa_executable_t executable, hsa_agent_t agent,
	                                                      hsa_code_object_reader_t reader, const char *options,
	                                                      hsa_loaded_code_object_t *loaded);
	hsa_status_t (*hsa_executable_freeze)(hsa_executable_t executable, const char *options);
	hsa_status_t (*hsa_executable_destroy)(hsa_executable_t executable);
	hsa_status_t (*hsa_executable_get_symbol_by_name)(hsa_executable_t executable, const char *name,
	                                                  const hsa_agent_t *agent, hsa_executable_symbol_t *symbol);
	hsa_status_t (*hsa_executable_symbol_get_info)(hsa_executable_symbol_t symbol, int attribute, void *value);
	hsa_status_t (*hsa_amd_agent_iterate_memory_pools)(hsa_agent_t agent,
	                                                   hsa_status_t (*callback)(hsa_amd_memory_pool_t pool, void *data),
	                                                   void *data);
	hsa_status_t (*hsa_amd_memory_pool_get_info)(hsa_amd_memory_pool_t pool, int attribute, void *value);
	hsa_status_t (*hsa_amd_memory_pool_allocate)(hsa_amd_memory_pool_t pool, size_t size, uint32_t flags, void **p);
	hsa_status_t (*hsa_amd_memory_pool_free)(void *p);
	hsa_status_t (*hsa_amd_agents_allow_access)(uint32_t count, const hsa_agent_t *agents, const uint32_t *flags,
	                                            const void *p);
	hsa_status_t (*hsa_amd_memory_async_copy)(void *to, hsa_agent_t to_agent, const void *from, hsa_agent_t from_agent,
	                                          size_t size, uint32_t num_dep_signals, const hsa_signal_t *dep_signals,
	                                          hsa_signal_t completion_signal);
	hsa_status_t (*hsa_queue_create)(hsa_agent_t agent, uint32_t size, uint32_t type,
	                                 void (*callback)(hsa_status_t status, hsa_queue_t *queue, void *data), void *data,
	                                 uint32_t private_size, uint32_t group_size, hsa_queue_t **queue);
	hsa_status_t (*hsa_queue_destroy)(hsa_queue_t *queue);
	uint64_t (*hsa_queue_add_write_index_screlease)(const hsa_queue_t *queue, uint64_t value);
	uint64_t (*hsa_queue_load_read_index_scacquire)(const hsa_queue_t *queue);
	hsa_status_t (*hsa_signal_create)(hsa_signal_value_t initial, uint32_t consumers, const hsa_agent_t *agents,
	                                  hsa_signal_t *signal);
	hsa_status_t (*hsa_signal_destroy)(hsa_signal_t signal);
	void (*hsa_signal_store_relaxed)(hsa_signal_t signal, hsa_signal_value_t value);
	void (*hsa_signal_store_screlease)(hsa_signal_t signal, hsa_signal_value_t value);
	hsa_signal_value_t (*hsa_signal_wait_scacquire)(hsa_signal_t signal, int condition, hsa_signal_value_t compare,
	                                                uint64_t timeout_hint, int wait_state);

	bool initialised; /* hsa_init succeeded: hsa_shut_down at close */
	hsa_agent_t gpu, cpu;
	bool have_gpu, have_cpu;
	hsa_amd_memory_pool_t device_pool, host_pool;
	bool have_device_pool, have_host_pool;
	hsa_code_object_reader_t reader;
	hsa_executable_t executable;
	bool have_reader, have_executable;
	HsaKernel *kernels; /* one per kernel of the artifact */
	hsa_queue_t *queue;
	void *model;        /* the model blob in device memory, or NULL */
	hsa_dim3_t max_grid; /* work-items */
	hsa_status_t queue_status; /* HSA_STATUS_SUCCESS until the queue reports an error */
	Buffers spare;             /* the memory kept between calls */
	bool spare_taken;          /* a call holds it (atomic) */
} Hsa;

static const struct {
	const char *name;
	size_t offset;
} entry_points[] = {
#define ENTRY(name) {#name, offsetof(Hsa, name)}
	ENTRY(hsa_init),
	ENTRY(hsa_shut_down),
	ENTRY(hsa_status_string),
	ENTRY(hsa_iterate_agents),
	ENTRY(hsa_agent_get_info),
	ENTRY(hsa_code_object_reader_create_from_memory),
	ENTRY(hsa_code_object_reader_destroy),
	ENTRY(hsa_executable_create_alt),
	ENTRY(hsa_executable_load_agent_code_object),
	ENTRY(hsa_executable_freeze),
	ENTRY(hsa_executable_destroy),
	ENTRY(hsa_executable_get_symbol_by_name),
	ENTRY(hsa_executable_symbol_get_info),
	ENTRY(hsa_amd_agent_iterate_memory_pools),
	ENTRY(hsa_amd_memory_pool_get_info),
	ENTRY(hsa_amd_memory_pool_allocate),
	ENTRY(hsa_amd_memory_pool_free),
	ENTRY(hsa_amd_agents_allow_access),
	ENTRY(hsa_amd_memory_async_copy),
	ENTRY(hsa_queue_create),
	ENTRY(hsa_queue_destroy),
	ENTRY(hsa_queue_add_write_index_screlease),
	ENTRY(hsa_queue_load_read_index_scacquire),
	ENTRY(hsa_signal_create),
	ENTRY(hsa_signal_destroy),
	ENTRY(hsa_signal_store_relaxed),
	ENTRY(hsa_signal_store_screlease),
	ENTRY(hsa_signal_wait_scacquire),
#undef ENTRY
};

/* status (GROVE_ERROR_DEVICE, ...) for the runtime's error s from call: the runtime's text for it. */
static GroveStatus hsa_error(const Hsa *h, GroveStatus status, hsa_status_t s, const char *call, GroveError *err)
{
	const char *text = NULL;
	if (h->hsa_status_string(s, &text) != HSA_STATUS_SUCCESS || !text)
		text = "an unknown error";
	return grove_fail(err, s == HSA_STATUS_ERROR_OUT_OF_RESOURCES && status == GROVE_ERROR_DEVICE ? GROVE_ERROR_MEMORY :
	                  status, "rocm: %s: %s (0x%x)", call, text, (unsigned)s);
}

/* Open libhsa-runtime64.so.1 and find the entry points: GROVE_ERROR_UNAVAILABLE where ROCm is missing or too old. */
static GroveStatus open_runtime(Hsa *h, GroveError *err)
{
	if (!(h->library = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_LOCAL)))
		return grove_fail(err, GROVE_ERROR_UNAVAILABLE, "rocm: libhsa-runtime64.so.1 not found: the ROCm runtime is "
		                  "not installed (%s)", dlerror());
	for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; i++) {
		void *symbol = dlsym(h->library, entry_points[i].name);
		if (!symbol)
			return grove_fail(err, GROVE_ERROR_UNAVAILABLE, "rocm: libhsa-runtime64.so.1 has no %s: the ROCm runtime "
			                  "is too old", entry_points[i].name);
		memcpy((char *)h + entry_points[i].offset, &symbol, sizeof symbol);
	}
	return GROVE_OK;
}

/* hsa_iterate_agents: the first GPU agent and the first CPU agent. */
static hsa_status_t find_agent(hsa_agent_t agent, void *data)
{
	Hsa *h = data;
	uint32_t type;
	hsa_status_t s = h->hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type);
	if (s != HSA_STATUS_SUCCESS)
		return s;
	if (type == HSA_DEVICE_TYPE_GPU && !h->have_gpu) {
		h->gpu = agent;
		h->have_gpu = true;
	} else if (type == HSA_DEVICE_TYPE_CPU && !h->have_cpu) {
		h->cpu = agent;
		h->have_cpu = true;
	}
	return h->have_gpu && h->have_cpu ? HSA_STATUS_INFO_BREAK : HSA_STATUS_SUCCESS;
}

/* A global pool the runtime allocates from, whose flags include `flag`, or none. */
static bool pool_has(const Hsa *h, hsa_amd_memory_pool_t pool, uint32_t flag)
{
	uint32_t segment, flags;
	bool allowed;
	return h->hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment) == HSA_STATUS_SUCCESS &&
	       segment == HSA_AMD_SEGMENT_GLOBAL &&
	       h->hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &allowed) ==
	               HSA_STATUS_SUCCESS && allowed &&
	       h->hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags) == HSA_STATUS_SUCCESS &&
	       (flags & flag);
}

/* hsa_amd_agent_iterate_memory_pools of the GPU: its coarse-grained device memory. */
static hsa_status_t find_device_pool(hsa_amd_memory_pool_t pool, void *data)
{
	Hsa *h = data;
	if (!pool_has(h, pool, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED))
		return HSA_STATUS_SUCCESS;
	h->device_pool = pool;
	h->have_device_pool = true;
	return HSA_STATUS_INFO_BREAK;
}

/* Of the CPU: the system memory that holds kernel arguments. */
static hsa_status_t find_host_pool(hsa_amd_memory_pool_t pool, void *data)
{
	Hsa *h = data;
	if (!pool_has(h, pool, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT))
		return HSA_STATUS_SUCCESS;
	h->host_pool = pool;
	h->have_host_pool = true;
	return HSA_STATUS_INFO_BREAK;
}

/* The queue's callback: remember its first error (the queue is unusable after it), for every caller to report. */
static void queue_failed(hsa_status_t status, hsa_queue_t *queue, void *data)
{
	Hsa *h = data;
	hsa_status_t none = HSA_STATUS_SUCCESS;
	(void)queue;
	__atomic_compare_exchange_n(&h->queue_status, &none, status, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* Initialise the runtime and find a GPU, a CPU and their pools: GROVE_ERROR_UNAVAILABLE where there is no GPU. */
static GroveStatus open_agents(Hsa *h, GroveError *err)
{
	hsa_status_t s;
	if ((s = h->hsa_init()) != HSA_STATUS_SUCCESS)
		return hsa_error(h, GROVE_ERROR_UNAVAILABLE, s, "hsa_init (no usable AMD GPU or driver)", err);
	h->initialised = true;
	s = h->hsa_iterate_agents(find_agent, h);
	if (s != HSA_STATUS_SUCCESS && s != HSA_STATUS_INFO_BREAK)
		return hsa_error(h, GROVE_ERROR_DEVICE, s, "hsa_iterate_agents", err);
	if (!h->have_gpu || !h->have_cpu)
		return grove_fail(err, GROVE_ERROR_UNAVAILABLE, "rocm: the HSA runtime finds no %s agent",
		                  h->have_gpu ? "CPU" : "GPU");
	h->hsa_amd_agent_iterate_memory_pools(h->gpu, find_device_pool, h);
	h->hsa_amd_agent_iterate_memory_pools(h->cpu, find_host_pool, h);
	if (!h->have_device_pool || !h->have_host_pool)
		return grove_fail(err, GROVE_ERROR_DEVICE, "rocm: no %s memory pool to allocate from",
		                  h->have_device_pool ? "kernel-argument" : "device");
	if ((s = h->hsa_agent_get_info(h->gpu, HSA_AGENT_INFO_GRID_MAX_DIM, &h->max_grid)) != HSA_STATUS_SUCCESS)
		return hsa_error(h, GROVE_ERROR_DEVICE, s, "hsa_agent_get_info (grid limits)", err);
	return GROVE_OK;
}

/* Load the code object for the GPU and find each kernel's descriptor ("NAME.kd") and segment sizes. */
static GroveStatus load_executable(Hsa *h, const GroveDevice *d, GroveError *err)
{
	int profile;
	hsa_status_t s;
	char call[160];
	if ((s = h->hsa_agent_get_info(h->gpu, HSA_AGENT_INFO_PROFILE, &profile)) != HSA_STATUS_SUCCESS)
		return hsa_error(h, GROVE_ERROR_DEVICE, s, "hsa_agent_get_info (profile)", err);
	if ((s = h->hsa_code_object_reader_create_from_memory(d->code, d->code_size, &h->reader)) != HSA_STATUS_SUCCESS)
		return hsa_error(h, GROVE_ERROR_DEVICE, s, "hsa_code_object_reader_create_from_memory", err);
	h->have_reader = true;
	if ((s = h->hsa_executable_create_alt(profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &h->executable)) !=
	    HSA_STATUS_SUCCESS)
		return hsa_error(h, GROVE_ERROR_DEVICE, s, "hsa_executable_create_alt", err);
	h->have_executable = true;
	snprintf(call, sizeof call, "hsa_executable_load_agent_code_object (an HSACO for %s)", d->arch);
	if ((s = h->hsa_executable_load_agent_code_object(h->executable, h->gpu, h->reader, NULL, NULL)) !=
	    HSA_STATUS_SUCCESS)
		return hsa_error(h, GROVE_ERROR_DEVICE, s, call, err);
	if ((s = h->hsa_executable_freeze(h->executable, NULL)) != HSA_STATUS_SUCCESS)
		return hsa_error(h, GROVE_ERROR_DEVICE, s, "hsa_executable_freeze", err);
	if (!(h->kernels = calloc(d->num_kernels, sizeof *h->kernels)))
		return grove_fail(err, GROVE_ERROR_MEMORY, "rocm: out of memory");
	for (uint32_t i = 0; i < d->num_kernels; i++) {
		hsa_executable_symbol_t symbol;
		HsaKernel *k = &h->kernels[i];
		snprintf(call, sizeof call, "%s.kd", d->kernels[i].name);
		if ((s = h->hsa_executable_get_symbol_by_name(h->executable, call, &h->gpu, &symbol)) != HSA_STATUS_SUCCESS) {
			snprintf(call, sizeof call, "hsa_executable_get_symbol_by_name (%s.kd)", d->kernels[i].name);
			return hsa_error(h, GROVE_ERROR_DEVICE, s, call, err);
		}
		if ((s = h->hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &k->object)) !=
		            HSA_STATUS_SUCCESS ||
		    (s = h->hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
		                                           &k->kernarg_bytes)) != HSA_STATUS_SUCCESS ||
		    (s = h->hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
		                                           &k->group_bytes)) != HSA_STATUS_SUCCESS ||
		    (s = h->hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
		                                           &k->private_bytes)) != HSA_STATUS_SUCCESS)
			return hsa_error(h, GROVE_ERROR_DEVICE, s, "hsa_executable_symbol_get_info", err);
	}
	return GROVE_OK;
}

/* Make buffer i of b hold at least bytes: kept if it does, else freed and allocated again (host-pool memory made visible to the GPU). */
static GroveStatus reserve(const Hsa *h, Buffers *b, int i, size_t bytes, const char *what, GroveError *err)
{
	bool host = i >= STAGING;
	char call[96];
	hsa_status_t s;
	if (b->bytes[i] >= bytes)
		return GROVE_OK;
	if (b->at[i])
		h->hsa_amd_memory_pool_free(b->at[i]);
	b->at[i] = NULL;
	b->bytes[i] = 0;
	snprintf(call, sizeof call, "hsa_amd_memory_pool_allocate (%s, %zu bytes)", what, bytes);
	if ((s = h->hsa_amd_memory_pool_allocate(host ? h->host_pool : h->device_pool, bytes, 0, &b->at[i])) !=
	    HSA_STATUS_SUCCESS) {
		b->at[i] = NULL;
		return hsa_error(h, GROVE_ERROR_DEVICE, s, call, err);
	}
	b->bytes[i] = bytes;
	if (host && (s = h->hsa_amd_agents_allow_access(1, &h->gpu, NULL, b->at[i])) != HSA_STATUS_SUCCESS)
		return hsa_error(h, GROVE_ERROR_DEVICE, s, "hsa_amd_agents_allow_access", err);
	return GROVE_OK;
}

/* Free b's memory. */
static void release(const Hsa *h, Buffers *b)
{
	for (int i = 0; i < BUFFERS; i++)
		if (b->at[i])
			h->hsa_amd_memory_pool_free(b->at[i]);
	for (int i = 0; i < 2 * SIGNALS && b->have_signals; i++)
		h->hsa_signal_destroy(b->signal[i / SIGNALS][i % SIGNALS]);
	*b = (Buffers){0};
}

/* b's signals, made on first use (at 0: nothing in flight). */
static GroveStatus signals_ready(const Hsa *h, Buffers *b, GroveError *err)
{
	hsa_status_t s = HSA_STATUS_SUCCESS;
	int made = 0;
	if (b->have_signals)
		return GROVE_OK;
	while (made < 2 * SIGNALS &&
	       (s = h->hsa_signal_create(0, 0, NULL, &b->signal[made / SIGNALS][made % SIGNALS])) == HSA_STATUS_SUCCESS)
		made++;
	if (s == HSA_STATUS_SUCCESS)
		return b->have_signals = true, GROVE_OK;
	while (made-- > 0)
		h->hsa_signal_destroy(b->signal[made / SIGNALS][made % SIGNALS]);
	return hsa_error(h, GROVE_ERROR_DEVICE, s, "hsa_signal_create", err);
}

/* Wait until signal drops below 1; where the queue fails meanwhile, its error, said of `what`. */
static GroveStatus wait_for(Hsa *h, hsa_signal_t signal, const char *what, GroveError *err)
{
	hsa_status_t failed;
	while (h->hsa_signal_wait_scacquire(signal, HSA_SIGNAL_CONDITION_LT, 1, WAIT_HINT, HSA_WAIT_STATE_BLOCKED) != 0)
		if ((failed = __atomic_load_n(&h->queue_status, __ATOMIC_ACQUIRE)) != HSA_STATUS_SUCCESS)
			return hsa_error(h, GROVE_ERROR_DEVICE, failed, what, err);
	return GROVE_OK;
}

/*
 * Copy bytes from pinned host memory to the GPU's (to_gpu) or back, once `after` (if any)
 * drops to 0, without waiting for it: signal drops to 0 when it is done.
 */
static GroveStatus copy_async(const Hsa *h, void *to, const void *from, size_t bytes, bool to_gpu,
                              const hsa_signal_t *after, hsa_signal_t signal, GroveError *err)
{
	hsa_status_t s;
	h->hsa_signal_store_relaxed(signal, bytes ? 1 : 0);
	if (bytes && (s = h->hsa_amd_memory_async_copy(to, to_gpu ? h->gpu : h->cpu, from, to_gpu ? h->cpu : h->gpu, bytes,
	                                               after ? 1 : 0, after, signal)) != HSA_STATUS_SUCCESS) {
		h->hsa_signal_store_relaxed(signal, 0);
		return hsa_error(h, GROVE_ERROR_DEVICE, s,
		                 to_gpu ? "hsa_amd_memory_async_copy (rows to the GPU)" :
		                          "hsa_amd_memory_async_copy (predictions from the GPU)", err);
	}
	return GROVE_OK;
}

static void hsa_close(void *state)
{
	Hsa *h = state;
	if (!h)
		return;
	release(h, &h->spare);
	if (h->queue)
		h->hsa_queue_destroy(h->queue);
	if (h->model)
		h->hsa_amd_memory_pool_free(h->model);
	if (h->have_executable)
		h->hsa_executable_destroy(h->executable);
	if (h->have_reader)
		h->hsa_code_object_reader_destroy(h->reader);
	if (h->initialised)
		h->hsa_shut_down();
	free(h->kernels);
	if (h->library)
		dlclose(h->library);
	free(h);
}

/* The queue, and the model blob on the device. */
static GroveStatus open_queue(Hsa *h, const GroveDevice *d, GroveError *err)
{
	Buffers upload = {0};
	uint32_t max;
	hsa_status_t s;
	GroveStatus status;
	if ((s = h->hsa_agent_get_info(h->gpu, HSA_AGENT_INFO_QUEUE_MAX_SIZE, &max)) != HSA_STATUS_SUCCESS)
		return hsa_error(h, GROVE_ERROR_DEVICE, s, "hsa_agent_get_info (queue size)", err);
	if ((s = h->hsa_queue_create(h->gpu, max < QUEUE_PACKETS ? max : QUEUE_PACKETS, HSA_QUEUE_TYPE_MULTI, queue_failed,
	                             h, UINT32_MAX, UINT32_MAX, &h->queue)) != HSA_STATUS_SUCCESS) {
		h->queue = NULL;
		return hsa_error(h, GROVE_ERROR_DEVICE, s, "hsa_queue_create", err);
	}
	/* The model goes up as a call's rows do, and keeps the buffer. */
	if ((status = reserve(h, &upload, ROWS, d->model_size, "the model", err)) == GROVE_OK &&
	    (status = reserve(h, &upload, STAGING, d->model_size, "staging", err)) == GROVE_OK &&
	    (status = signals_ready(h, &upload, err)) == GROVE_OK) {
		memcpy(upload.at[STAGING], d->model, d->model_size);
		if ((status = copy_async(h, upload.at[ROWS], upload.at[STAGING], d->model_size, true, NULL,
		                         upload.signal[0][COPIED], err)) == GROVE_OK)
			status = wait_for(h, upload.signal[0][COPIED], "the copy of the model", err);
	}
	h->model = upload.at[ROWS];
	upload.at[ROWS] = NULL;
	release(h, &upload);
	return status;
}

static GroveStatus hsa_open(const GroveDevice *d, void **state, GroveError *err)
{
	Hsa *h = calloc(1, sizeof *h);
	GroveStatus status;
	*state = NULL;
	if (!h)
		return grove_fail(err, GROVE_ERROR_MEMORY, "rocm: out of memory");
	if ((status = open_runtime(h, err)) == GROVE_OK && (status = open_agents(h, err)) == GROVE_OK &&
	    (status = load_executable(h, d, err)) == GROVE_OK)
		status = open_queue(h, d, err);
	if (status != GROVE_OK)
		hsa_close(h);
	else
		*state = h;
	return status;
}

/* Queue kernel i for nrows rows with its arguments at kernarg, to run once the packets before it have; it drops signal (handle 0: none) to 0. */
static GroveStatus submit(Hsa *h, const GroveDevice *d, uint32_t i, int64_t nrows, void *kernarg, hsa_signal_t signal,
                          GroveError *err)
{
	const GroveKernel *k = &d->kernels[i];
	const uint32_t max[3] = {h->max_grid.x, h->max_grid.y, h->max_grid.z};
	uint32_t grid[3];
	hsa_queue_t *q = h->queue;
	hsa_kernel_dispatch_packet_t *p;
	uint64_t index;
	uint16_t header;
	hsa_status_t failed;
	for (int a = 0; a < 3; a++) {
		/* grid_size counts work-items: clamp the blocks so that it fits the agent's limit */
		int64_t blocks = grove_extent(&k->grid[a], nrows), most = max[a] / k->block[a].count;
		grid[a] = (uint32_t)((blocks < most ? blocks : most > 0 ? most : 1) * k->block[a].count);
	}
	index = h->hsa_queue_add_write_index_screlease(q, 1);
	while (index - h->hsa_queue_load_read_index_scacquire(q) >= q->size)
		if ((failed = __atomic_load_n(&h->queue_status, __ATOMIC_ACQUIRE)) != HSA_STATUS_SUCCESS)
			return hsa_error(h, GROVE_ERROR_DEVICE, failed, "the queue", err);
	p = (hsa_kernel_dispatch_packet_t *)q->base_address + (index & (q->size - 1));
	memset((char *)p + 4, 0, sizeof *p - 4); /* all but the header and setup, which go last */
	p->workgroup_size_x = (uint16_t)k->block[0].count;
	p->workgroup_size_y = (uint16_t)k->block[1].count;
	p->workgroup_size_z = (uint16_t)k->block[2].count;
	p->grid_size_x = grid[0];
	p->grid_size_y = grid[1];
	p->grid_size_z = grid[2];
	p->private_segment_size = h->kernels[i].private_bytes;
	p->group_segment_size = h->kernels[i].group_bytes;
	p->kernel_object = h->kernels[i].object;
	p->kernarg_address = kernarg;
	p->completion_signal = signal;
	/* The barrier bit: it starts once the packets before it (the last kernel, another call's) are done. */
	header = HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE | 1 << HSA_PACKET_HEADER_BARRIER |
	         HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE |
	         HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
	/* The packet processor reads the packet once its header is valid: header and setup in one release store. */
	__atomic_store_n((uint32_t *)p, header | (uint32_t)3 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS << 16,
	                 __ATOMIC_RELEASE);
	h->hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)index);
	return GROVE_OK;
}

/*
 * Queue the kernels of the call's entry for nrows rows (rows and out on the GPU), their
 * arguments written at kernarg (the same for every kernel: the segment stays until the
 * last has run), without waiting: the last drops ran to 0.
 */
static GroveStatus submit_all(Hsa *h, const GroveDevice *d, const DeviceCall *call, const Buffers *b, int64_t nrows,
                              void *rows, void *out, char *kernarg, hsa_signal_t ran, GroveError *err)
{
	uint32_t last = d->num_kernels;
	GroveStatus status = GROVE_OK;
	memcpy(kernarg + 0, &rows, 8);
	memcpy(kernarg + 8, &nrows, 8);
	memcpy(kernarg + 16, &out, 8);
	memcpy(kernarg + 24, &call->flags, 4);
	memcpy(kernarg + 32, &b->at[WORKSPACE], 8);
	memcpy(kernarg + 40, &h->model, 8);
	for (uint32_t i = 0; i < d->num_kernels; i++)
		if (d->kernels[i].entry == call->entry)
			last = i;
	h->hsa_signal_store_relaxed(ran, last < d->num_kernels);
	for (uint32_t i = 0; i <= last && i < d->num_kernels && status == GROVE_OK; i++)
		if (d->kernels[i].entry == call->entry)
			status = submit(h, d, i, nrows, kernarg, i == last ? ran : (hsa_signal_t){0}, err);
	return status;
}

/* Chunk i's predictions, in its slot's staging after its rows once its copy out is done, into the caller's. */
static GroveStatus chunk_out(Hsa *h, const DeviceCall *call, const ChunkPlan *p, const Buffers *b, int64_t i,
                             const char *what, GroveError *err)
{
	GroveStatus status = wait_for(h, b->signal[i & 1][DONE], what, err);
	if (status == GROVE_OK)
		grove_chunk_out(call, p, i, b->at[STAGING]);
	return status;
}

/*
 * Run the call with b's memory (grown as it needs). Rows already on the GPU: the kernels.
 * Host rows go a chunk at a time (ChunkPlan; one chunk where they are few), into b's
 * device buffers for the whole call. Chunk i, in slot s = i mod 2: its rows copied into
 * the slot's staging once chunk i - 2's predictions have left it, then to the GPU; once
 * there, its kernels queued behind chunk i - 1's (they share the workspace), and the
 * copy of its predictions back into the slot queued behind them. So a chunk's copy in
 * and the last chunk's copy out run while the other chunk's kernels do.
 */
static GroveStatus run_kernels(Hsa *h, const GroveDevice *d, const DeviceCall *call, Buffers *b, GroveError *err)
{
	size_t args = KERNARG_BYTES;
	ChunkPlan p;
	GroveStatus status;
	char what[160] = "the kernels"; /* what a failed queue is said of: the entry's kernels, named by its last */
	grove_chunk_plan(call, &p);
	for (uint32_t i = 0; i < d->num_kernels; i++)
		if (d->kernels[i].entry == call->entry) {
			snprintf(what, sizeof what, "kernel %s or a kernel before it", d->kernels[i].name);
			args = h->kernels[i].kernarg_bytes > args ? h->kernels[i].kernarg_bytes : args;
		}
	args = (args + 63) & ~(size_t)63;
	if ((!call->resident && ((status = reserve(h, b, ROWS, call->rows_bytes, "rows", err)) != GROVE_OK ||
	                         (status = reserve(h, b, PREDICTIONS, call->out_bytes, "predictions", err)) != GROVE_OK ||
	                         (status = reserve(h, b, STAGING, (p.chunks > 1 ? 2 : 1) * p.slot_bytes, "staging",
	                                           err)) != GROVE_OK)) ||
	    (status = reserve(h, b, WORKSPACE, call->workspace_bytes, "workspace", err)) != GROVE_OK ||
	    (status = reserve(h, b, KERNARG, 2 * args, "kernel arguments", err)) != GROVE_OK ||
	    (status = signals_ready(h, b, err)) != GROVE_OK)
		return status;
	/* The hidden arguments of code objects v4 stay zeroed. */
	memset(b->at[KERNARG], 0, 2 * args);
	if (call->resident) {
		if ((status = submit_all(h, d, call, b, call->nrows, (void *)call->rows, call->out, b->at[KERNARG],
		                         b->signal[0][RAN], err)) != GROVE_OK)
			return status;
		return wait_for(h, b->signal[0][RAN], what, err);
	}
	status = GROVE_OK;
	for (int64_t i = 0; i < p.chunks && status == GROVE_OK; i++) {
		int s = (int)(i & 1);
		int64_t n = grove_chunk_rows(call, &p, i);
		char *rows = (char *)b->at[ROWS] + grove_chunk_rows_at(&p, i), *slot;
		char *out = (char *)b->at[PREDICTIONS] + grove_chunk_out_at(&p, i);
		if (i >= 2 && (status = chunk_out(h, call, &p, b, i - 2, what, err)) != GROVE_OK)
			break;
		slot = grove_chunk_in(call, &p, i, b->at[STAGING]);
		if ((status = copy_async(h, rows, slot, (size_t)n * p.row_in, true, NULL, b->signal[s][COPIED], err)) ==
		            GROVE_OK &&
		    (status = wait_for(h, b->signal[s][COPIED], "the copy of a chunk's rows", err)) == GROVE_OK &&
		    (status = submit_all(h, d, call, b, n, rows, out, (char *)b->at[KERNARG] + (size_t)s * args,
		                         b->signal[s][RAN], err)) == GROVE_OK)
			status = copy_async(h, slot + grove_chunk_rows_at(&p, 1), out, (size_t)n * p.row_out, false, &b->signal[s][RAN],
			                    b->signal[s][DONE], err);
	}
	for (int64_t i = p.chunks >= 2 ? p.chunks - 2 : 0; i < p.chunks && status == GROVE_OK; i++)
		status = chunk_out(h, call, &p, b, i, what, err);
	if (status != GROVE_OK) /* nothing of the call's in flight when it returns (a failed queue ends every wait) */
		for (int i = 0; i < 2 * SIGNALS; i++)
			wait_for(h, b->signal[i / SIGNALS][i % SIGNALS], "", &(GroveError){0});
	return status;
}

/* The call on the kept memory where no other call holds it, else on memory of its own. A failed call frees what it used. */
static GroveStatus hsa_run(void *state, const GroveDevice *d, const DeviceCall *call, GroveError *err)
{
	Hsa *h = state;
	Buffers own = {0}, *b = &own;
	bool kept = !__atomic_exchange_n(&h->spare_taken, true, __ATOMIC_ACQUIRE);
	hsa_status_t failed = __atomic_load_n(&h->queue_status, __ATOMIC_ACQUIRE);
	GroveStatus status;
	if (kept)
		b = &h->spare;
	status = failed != HSA_STATUS_SUCCESS ? hsa_error(h, GROVE_ERROR_DEVICE, failed, "the queue", err) :
	                                        run_kernels(h, d, call, b, err);
	if (!kept || status != GROVE_OK)
		release(h, b);
	if (kept)
		__atomic_store_n(&h->spare_taken, false, __ATOMIC_RELEASE);
	return status;
}

const DeviceBackend grove_hsa_backend = {
	.name = "rocm",
	.host_memory = false,
	.open = hsa_open,
	.close = hsa_close,
	.run = hsa_run,
};
