/*
 * Fakes of the GPU drivers libgrove opens, built by tests/unit/gpusim.c at test time:
 * with -DFAKE_CUDA_DRIVER a stand-in for libcuda.so.1, with -DFAKE_HSA_RUNTIME one for
 * libhsa-runtime64.so.1. Host memory is device memory, and the dot kernel runs on the
 * host: CUDA's at launch, HSA's AQL packets when someone waits for a signal (or an
 * asynchronous copy for one not yet 0); the fake's state (FakeDriver) counts what the
 * back-end allocated and did, for the test.
 */
#include "tests/unit/gpusim.h"

#ifdef FAKE_CUDA_DRIVER

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

FakeDriver fake_cuda;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const void *running[64]; /* the predictions buffers of launches under way */

typedef unsigned long long Pointer;
static char context, module, function;

int cuInit(unsigned flags) { return (int)flags; }
int cuDeviceGet(int *device, int ordinal) { *device = 0; return ordinal; }
int cuDeviceGetAttribute(int *value, int attribute, int device) { *value = attribute >= 5 ? 65535 : 1024; return device; }
int cuDevicePrimaryCtxRetain(void **c, int device) { *c = &context; return device; }
int cuDevicePrimaryCtxRelease_v2(int device) { return device; }
int cuCtxPushCurrent_v2(void *c) { return c != &context; }
int cuCtxPopCurrent_v2(void **c) { *c = &context; return 0; }
int cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *options, void **values)
{
	(void)image, (void)n, (void)options, (void)values;
	*m = &module;
	return 0;
}
int cuModuleUnload(void *m) { return m != &module; }
int cuModuleGetFunction(void **f, void *m, const char *name) { *f = &function; return m != &module || strcmp(name, "dot"); }
int cuCtxSynchronize(void) { return 0; }
int cuGetErrorName(int e, const char **name) { *name = e == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_UNKNOWN"; return 0; }
int cuGetErrorString(int e, const char **text) { *text = e == 2 ? "out of memory" : "unknown error"; return 0; }

int cuMemAlloc_v2(Pointer *p, size_t bytes)
{
	void *q;
	pthread_mutex_lock(&lock);
	q = fake_cuda.fail_next ? NULL : malloc(bytes);
	fake_cuda.fail_next = 0;
	fake_cuda.allocations += q != NULL;
	fake_cuda.live += q != NULL;
	pthread_mutex_unlock(&lock);
	*p = (Pointer)(uintptr_t)q;
	return q ? 0 : 2;
}

int cuMemFree_v2(Pointer p)
{
	pthread_mutex_lock(&lock);
	fake_cuda.live--;
	pthread_mutex_unlock(&lock);
	free((void *)(uintptr_t)p);
	return 0;
}

int cuMemcpyHtoD_v2(Pointer to, const void *from, size_t bytes) { memcpy((void *)(uintptr_t)to, from, bytes); return 0; }
int cuMemcpyDtoH_v2(void *to, Pointer from, size_t bytes) { memcpy(to, (const void *)(uintptr_t)from, bytes); return 0; }

/* Pinned host memory: host memory, counted as device memory is. */
int cuMemAllocHost_v2(void **p, size_t bytes)
{
	Pointer q;
	int r = cuMemAlloc_v2(&q, bytes);
	*p = (void *)(uintptr_t)q;
	return r;
}
int cuMemFreeHost(void *p) { return cuMemFree_v2((Pointer)(uintptr_t)p); }

/* Streams and events: live objects, everything done at once (the copies at their call, launches at theirs). */
static int live_object(void **p)
{
	pthread_mutex_lock(&lock);
	fake_cuda.live++;
	pthread_mutex_unlock(&lock);
	*p = malloc(1);
	return *p == NULL;
}
static int dead_object(void *p)
{
	pthread_mutex_lock(&lock);
	fake_cuda.live--;
	pthread_mutex_unlock(&lock);
	free(p);
	return p == NULL;
}
int cuStreamCreate(void **stream, unsigned flags) { return live_object(stream) || flags; }
int cuStreamDestroy_v2(void *stream) { return dead_object(stream); }
int cuEventCreate(void **event, unsigned flags) { return live_object(event) || flags != 2; }
int cuEventDestroy_v2(void *event) { return dead_object(event); }
int cuEventRecord(void *event, void *stream) { return !event || !stream; }
int cuEventSynchronize(void *event) { return !event; }
int cuStreamWaitEvent(void *stream, void *event, unsigned flags) { return !stream || !event || flags; }
int cuMemcpyHtoDAsync_v2(Pointer to, const void *from, size_t bytes, void *stream)
{
	__atomic_add_fetch(&fake_cuda.async, 1, __ATOMIC_RELAXED);
	return cuMemcpyHtoD_v2(to, from, bytes) || !stream;
}
int cuMemcpyDtoHAsync_v2(void *to, Pointer from, size_t bytes, void *stream)
{
	__atomic_add_fetch(&fake_cuda.async, 1, __ATOMIC_RELAXED);
	return cuMemcpyDtoH_v2(to, from, bytes) || !stream;
}

/* The dot kernel over the launch's threads, its predictions buffer marked as in use for delay_us first. */
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void *stream, void **parameters, void **extra)
{
	const float *rows = *(const float **)parameters[0], *model = *(const float **)parameters[5];
	int64_t nrows = *(const int64_t *)parameters[1], threads = (int64_t)gx * gy * gz * bx * by * bz;
	float *out = *(float **)parameters[2];
	int32_t flags = *(const int32_t *)parameters[3];
	int slot = -1;
	if (f != &function || shared || extra)
		return 1;
	(void)stream; /* the default one, or a call's in chunks: run at once either way */
	pthread_mutex_lock(&lock);
	for (int i = 0; i < 64; i++) {
		fake_cuda.shared += running[i] == out;
		slot = !running[i] && slot < 0 ? i : slot;
	}
	if (slot >= 0)
		running[slot] = out;
	pthread_mutex_unlock(&lock);
	usleep((useconds_t)fake_cuda.delay_us);
	for (int64_t r = 0; r < nrows && r < threads; r++)
		out[r] = dot(rows + r * FEATURES, model, flags);
	pthread_mutex_lock(&lock);
	if (slot >= 0)
		running[slot] = NULL;
	pthread_mutex_unlock(&lock);
	return 0;
}

#elif defined(FAKE_HSA_RUNTIME)

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

FakeDriver fake_hsa; /* delay_us holds up every copy; shared stays 0 */

typedef struct { uint64_t handle; } Handle;
typedef struct { int64_t value; } Signal;
typedef struct Queue {
	uint32_t type, features;
	void *base_address;
	Handle doorbell_signal;
	uint32_t size, reserved1;
	uint64_t id;
	uint64_t write_index, read_index;
	Signal doorbell;
} Queue;
typedef struct {
	uint16_t header, setup, size_x, size_y, size_z, reserved0;
	uint32_t grid_x, grid_y, grid_z, private_bytes, group_bytes;
	uint64_t kernel_object;
	void *kernarg;
	uint64_t reserved2;
	Handle completion;
} Packet;

enum { GPU = 1, CPU = 2, DEVICE_POOL = 10, HOST_POOL = 20, KERNEL = 0xd07, KERNARG = 56, OUT_OF_RESOURCES = 0x1008 };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Queue *queues[16]; /* the live queues, whose packets run when someone waits */
static void run_queues(void);

int hsa_init(void) { return 0; }
int hsa_shut_down(void) { return 0; }
int hsa_status_string(int status, const char **text) { *text = status == OUT_OF_RESOURCES ? "out of resources" : "error"; return 0; }
int hsa_iterate_agents(int (*callback)(Handle agent, void *data), void *data)
{
	int s = callback((Handle){GPU}, data);
	return s ? s : callback((Handle){CPU}, data);
}
int hsa_agent_get_info(Handle agent, int attribute, void *value)
{
	switch (attribute) {
	case 4: *(int *)value = 0; return 0;                                     /* profile */
	case 9: memcpy(value, (uint32_t[3]){1u << 30, 65535, 65535}, 12); return 0; /* grid limits */
	case 14: *(uint32_t *)value = 4096; return 0;                            /* queue size */
	case 17: *(uint32_t *)value = agent.handle == GPU; return 0;             /* device type */
	}
	return 0x1001;
}
int hsa_code_object_reader_create_from_memory(const void *code, size_t size, Handle *r) { (void)code, (void)size; r->handle = 1; return 0; }
int hsa_code_object_reader_destroy(Handle r) { return r.handle != 1; }
int hsa_executable_create_alt(int profile, int rounding, const char *options, Handle *e) { (void)options; e->handle = 2; return profile || rounding; }
int hsa_executable_load_agent_code_object(Handle e, Handle agent, Handle r, const char *options, Handle *loaded)
{
	(void)options, (void)loaded;
	return e.handle != 2 || agent.handle != GPU || r.handle != 1;
}
int hsa_executable_freeze(Handle e, const char *options) { (void)options; return e.handle != 2; }
int hsa_executable_destroy(Handle e) { return e.handle != 2; }
int hsa_executable_get_symbol_by_name(Handle e, const char *name, const Handle *agent, Handle *symbol)
{
	symbol->handle = 3;
	return e.handle != 2 || agent->handle != GPU || strcmp(name, "dot.kd") ? 0x1001 : 0;
}
int hsa_executable_symbol_get_info(Handle symbol, int attribute, void *value)
{
	if (attribute == 22)
		*(uint64_t *)value = KERNEL;
	else
		*(uint32_t *)value = attribute == 11 ? KERNARG : 0;
	return symbol.handle != 3;
}
int hsa_amd_agent_iterate_memory_pools(Handle agent, int (*callback)(Handle pool, void *data), void *data)
{
	return callback((Handle){agent.handle == GPU ? DEVICE_POOL : HOST_POOL}, data);
}
int hsa_amd_memory_pool_get_info(Handle pool, int attribute, void *value)
{
	if (attribute == 5)
		*(bool *)value = true;
	else
		*(uint32_t *)value = attribute == 1 ? (pool.handle == DEVICE_POOL ? 4 : 1) : 0;
	return 0;
}
int hsa_amd_memory_pool_allocate(Handle pool, size_t size, uint32_t flags, void **p)
{
	(void)pool;
	pthread_mutex_lock(&lock);
	*p = fake_hsa.fail_next || flags ? NULL : malloc(size);
	fake_hsa.fail_next = 0;
	fake_hsa.allocations += *p != NULL;
	fake_hsa.live += *p != NULL;
	pthread_mutex_unlock(&lock);
	return *p ? 0 : OUT_OF_RESOURCES;
}
int hsa_amd_memory_pool_free(void *p)
{
	pthread_mutex_lock(&lock);
	fake_hsa.live--;
	pthread_mutex_unlock(&lock);
	free(p);
	return 0;
}
int hsa_amd_agents_allow_access(uint32_t count, const Handle *agents, const uint32_t *flags, const void *p)
{
	return count != 1 || agents[0].handle != GPU || flags || !p;
}
/*
 * Done at once, after delay_us, and after the queues' packets where a signal it waits for
 * is not yet 0 (they run only then, or when someone waits: a copy that should have waited
 * for kernels and did not copies what they have not written yet).
 */
int hsa_amd_memory_async_copy(void *to, Handle to_agent, const void *from, Handle from_agent, size_t size,
                              uint32_t deps, const Handle *dep, Handle completion)
{
	usleep((useconds_t)fake_hsa.delay_us);
	pthread_mutex_lock(&lock);
	fake_hsa.async++;
	for (uint32_t i = 0; i < deps; i++)
		if (((Signal *)(uintptr_t)dep[i].handle)->value > 0)
			run_queues();
	for (uint32_t i = 0; i < deps; i++)
		fake_hsa.early += ((Signal *)(uintptr_t)dep[i].handle)->value > 0;
	memcpy(to, from, size);
	((Signal *)(uintptr_t)completion.handle)->value--;
	pthread_mutex_unlock(&lock);
	return to_agent.handle == from_agent.handle || (to_agent.handle != GPU && from_agent.handle != GPU) || !size;
}

/* The queue's packets from the read index on, while their headers say kernel dispatch: the dot kernel. Locked. */
static void run_packets(Queue *q)
{
	for (;;) {
		Packet *p = (Packet *)q->base_address + (q->read_index & (q->size - 1));
		const char *args = p->kernarg;
		const float *rows, *model;
		float *out;
		int64_t nrows;
		int32_t flags;
		if ((__atomic_load_n(&p->header, __ATOMIC_ACQUIRE) & 0xff) != 2 || p->kernel_object != KERNEL)
			return;
		memcpy(&rows, args, 8);
		memcpy(&nrows, args + 8, 8);
		memcpy(&out, args + 16, 8);
		memcpy(&flags, args + 24, 4);
		memcpy(&model, args + 40, 8);
		for (int64_t r = 0; r < nrows && r < (int64_t)p->grid_x; r++)
			out[r] = dot(rows + r * FEATURES, model, flags);
		for (int i = 48; i < KERNARG; i++)
			if (args[i])
				out[0] = -1e30f; /* hidden arguments not zeroed */
		if (p->completion.handle)
			((Signal *)(uintptr_t)p->completion.handle)->value--;
		p->header = 1; /* invalid, until written again */
		__atomic_store_n(&q->read_index, q->read_index + 1, __ATOMIC_RELEASE);
	}
}

/* Every live queue's packets. Locked. */
static void run_queues(void)
{
	for (int i = 0; i < 16; i++)
		if (queues[i])
			run_packets(queues[i]);
}

int hsa_queue_create(Handle agent, uint32_t size, uint32_t type, void (*callback)(int, Queue *, void *), void *data,
                     uint32_t private_size, uint32_t group_size, Queue **queue)
{
	Queue *q = calloc(1, sizeof *q);
	(void)callback, (void)data, (void)private_size, (void)group_size;
	if (!q || agent.handle != GPU || type != 0 || !(q->base_address = calloc(size, sizeof(Packet))))
		return OUT_OF_RESOURCES;
	for (uint32_t i = 0; i < size; i++)
		((Packet *)q->base_address)[i].header = 1;
	q->size = size;
	q->doorbell_signal.handle = (uintptr_t)&q->doorbell;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < 16; i++)
		if (!queues[i]) {
			queues[i] = q;
			break;
		}
	pthread_mutex_unlock(&lock);
	*queue = q;
	return 0;
}
int hsa_queue_destroy(Queue *q)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < 16; i++)
		if (queues[i] == q)
			queues[i] = NULL;
	pthread_mutex_unlock(&lock);
	free(q->base_address);
	free(q);
	return 0;
}
uint64_t hsa_queue_add_write_index_screlease(Queue *q, uint64_t n) { return __atomic_fetch_add(&q->write_index, n, __ATOMIC_RELEASE); }
uint64_t hsa_queue_load_read_index_scacquire(const Queue *q) { return __atomic_load_n(&q->read_index, __ATOMIC_ACQUIRE); }
int hsa_signal_create(int64_t initial, uint32_t consumers, const Handle *agents, Handle *signal)
{
	Signal *s = calloc(1, sizeof *s);
	(void)consumers, (void)agents;
	if (!s)
		return OUT_OF_RESOURCES;
	s->value = initial;
	signal->handle = (uintptr_t)s;
	return 0;
}
int hsa_signal_destroy(Handle signal) { free((void *)(uintptr_t)signal.handle); return 0; }
void hsa_signal_store_relaxed(Handle signal, int64_t value) { ((Signal *)(uintptr_t)signal.handle)->value = value; }
/* A doorbell only stores: the packets run when someone waits. */
void hsa_signal_store_screlease(Handle signal, int64_t value)
{
	pthread_mutex_lock(&lock);
	((Signal *)(uintptr_t)signal.handle)->value = value;
	pthread_mutex_unlock(&lock);
}
int64_t hsa_signal_wait_scacquire(Handle signal, int condition, int64_t compare, uint64_t hint, int state)
{
	Signal *s = (Signal *)(uintptr_t)signal.handle;
	int64_t v;
	(void)hint;
	for (;;) { /* another caller's packets may come before this caller's, still being written */
		pthread_mutex_lock(&lock);
		run_queues();
		v = s->value;
		pthread_mutex_unlock(&lock);
		if (condition != 2 || compare != 1 || state != 0 || v < compare)
			return v;
		usleep(10);
	}
}
#endif
