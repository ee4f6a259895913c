/*
 * The SIMT simulator (GROVE_DEVICE_GPUSIM): runs a GPU artifact's kernels, compiled for
 * the host, on the calling thread, with every thread of every block of each launch a
 * fiber (a ucontext on a stack of its own). A thread runs until it returns or waits at
 * a barrier or a shuffle; once every thread of its block waits or has returned, the
 * threads that meet go on. Threads that cannot all meet (a barrier or shuffle under
 * divergent control flow, or after some threads returned) are an error, where a GPU
 * would hang or compute garbage.
 *
 * Every prediction runs twice, threads and blocks in ascending order and then in
 * descending order, each on its own output and workspace, filled beforehand with
 * different garbage (as is each block's shared memory): kernels whose outputs differ
 * between the two have a data race or read memory before writing it. Atomics need
 * nothing: one OS thread runs all the fibers. All state is the call's, so several
 * threads may predict at once.
 *
 * Kernels built to profile (TargetOptions.profile) tell the simulator of each load and
 * store; where grove_gpusim_profile is set, the first run records them, and at the end of
 * each block groups them into the warps' requests (fold): a request is a site executed
 * by a warp's threads for the k-th time each, as a GPU issues it once for the warp where
 * they run in step.
 *
 * AddressSanitizer is told of each stack switch. ThreadSanitizer builds of libgrove do
 * not include the simulator (runtime.c), so the fibers carry no TSan annotations.
 */
#include "rt/device.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define GPUSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPUSIM_ASAN 1
#endif
#endif

#ifdef GPUSIM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

/* Tell AddressSanitizer that this thread switches to the stack at bottom (fake_stack: NULL when leaving for good). */
static void switch_start(void **fake_stack, const void *bottom, size_t size)
{
#ifdef GPUSIM_ASAN
	__sanitizer_start_switch_fiber(fake_stack, bottom, size);
#else
	(void)fake_stack, (void)bottom, (void)size;
#endif
}

/* And that it arrived; *bottom and *size (when not NULL) get the stack it came from. */
static void switch_finish(void *fake_stack, const void **bottom, size_t *size)
{
#ifdef GPUSIM_ASAN
	__sanitizer_finish_switch_fiber(fake_stack, bottom, size);
#else
	(void)fake_stack, (void)bottom, (void)size;
#endif
}

/* Each thread's stack (generated kernels keep little on it; sanitized code more), below it a guard page. */
#define STACK_BYTES ((size_t)256 << 10)
/* Byte patterns of shared memory, outputs and workspace before the first and the second run. */
static const unsigned char garbage[2] = {0xa5, 0x5b};
/* Largest difference between the two runs' outputs, relative to max(1, |x|), that is rounding (atomic sums). */
#define TOLERANCE 1e-5

enum { RUNNING, AT_BARRIER, AT_SHUFFLE, RETURNED };

typedef struct Sim Sim;

GroveSimProfile *grove_gpusim_profile;

/* A profiled load or store: the thread's warp, the site and how many times the thread was there before. */
typedef struct Access {
	uint32_t warp, site, time, bytes;
	uintptr_t address;
	bool shared;
} Access;

/* A simulated thread. */
typedef struct Fiber {
	GroveSimThread thread; /* first: the kernel's callbacks get it back */
	Sim *sim;
	ucontext_t context;
	unsigned char *stack;
	void *fake_stack; /* AddressSanitizer's, while switched out */
	int state;
	uint32_t site;   /* where it waits */
	int32_t delta;   /* SHUFFLE: the lane it reads, relative to its own */
	uint64_t bits;   /* SHUFFLE: what it offers */
	uint64_t got;    /* and what it receives */
	uint32_t *times; /* profiling: per site, the times the thread was there */
	uint32_t num_times;
} Fiber;

/* One call's simulator: the threads of a block, reused for every block of every launch. */
struct Sim {
	Fiber *fibers;
	size_t capacity;       /* fibers and stacks: the most threads a block of the entry has */
	unsigned char *stacks; /* mmap'ed: capacity times a guard page and a stack */
	size_t stacks_bytes, page;
	unsigned char *shared; /* the block's shared memory */
	ucontext_t scheduler;
	const void *scheduler_stack; /* AddressSanitizer's record of the scheduler's stack */
	size_t scheduler_stack_size;
	/* the launch */
	const GroveKernel *kernel;
	const void *rows, *model;
	int64_t nrows;
	float *out;
	int32_t flags;
	void *workspace;
	int64_t grid[3], block[3], at[3]; /* extents, and the block running */
	size_t threads;
	bool descending;
	int pattern; /* 0 or 1: garbage[pattern] */
	GroveError *err;
	/* profiling: the running kernel's counts (NULL: none), and the block's accesses */
	GroveSimCounts *counts;
	Access *accesses;
	size_t num_accesses, accesses_cap;
	bool lost; /* an allocation failed: accesses went uncounted */
};

/* Switch from the scheduler to fiber f until it waits or returns. */
static void enter(Sim *s, Fiber *f)
{
	void *fake_stack = NULL;
	switch_start(&fake_stack, f->stack, STACK_BYTES);
	swapcontext(&s->scheduler, &f->context);
	switch_finish(fake_stack, NULL, NULL);
}

/* Switch from fiber f back to the scheduler; `returned`: for good. */
static void leave(Fiber *f, bool returned)
{
	Sim *s = f->sim;
	switch_start(returned ? NULL : &f->fake_stack, s->scheduler_stack, s->scheduler_stack_size);
	swapcontext(&f->context, &s->scheduler);
	switch_finish(f->fake_stack, &s->scheduler_stack, &s->scheduler_stack_size);
}

/* A fiber's body: the kernel. makecontext passes ints, so the fiber's address comes in two halves. */
static void fiber_main(unsigned high, unsigned low)
{
	Fiber *f = (Fiber *)(uintptr_t)((uint64_t)high << 32 | low);
	Sim *s = f->sim;
	switch_finish(NULL, &s->scheduler_stack, &s->scheduler_stack_size);
	s->kernel->sim(s->rows, s->nrows, s->out, s->flags, s->workspace, s->model, &f->thread);
	f->state = RETURNED;
	leave(f, true);
}

static void sim_barrier(GroveSimThread *thread, uint32_t site)
{
	Fiber *f = (Fiber *)thread;
	f->state = AT_BARRIER;
	f->site = site;
	leave(f, false);
}

static uint64_t sim_shuffle(GroveSimThread *thread, uint64_t bits, int32_t delta, uint32_t site)
{
	Fiber *f = (Fiber *)thread;
	f->state = AT_SHUFFLE;
	f->site = site;
	f->bits = bits;
	f->delta = delta;
	leave(f, false);
	return f->got;
}

/* A profiled kernel's load or store: recorded where the call profiles (Sim.counts). */
static void sim_access(GroveSimThread *thread, const void *address, uint32_t bytes, uint32_t site)
{
	Fiber *f = (Fiber *)thread;
	Sim *s = f->sim;
	uintptr_t at = (uintptr_t)address;
	if (!s->counts || s->lost)
		return;
	if (site > UINT32_MAX - 64) { /* (no LIR function has so many instructions) */
		s->lost = true;
		return;
	}
	if (site >= f->num_times) {
		uint32_t n = site + 64;
		uint32_t *times = realloc(f->times, n * sizeof *times);
		if (!times) {
			s->lost = true;
			return;
		}
		memset(times + f->num_times, 0, (n - f->num_times) * sizeof *times);
		f->times = times;
		f->num_times = n;
	}
	if (s->num_accesses == s->accesses_cap) {
		size_t n = s->accesses_cap ? 2 * s->accesses_cap : 4096;
		Access *more = realloc(s->accesses, n * sizeof *more);
		if (!more) {
			s->lost = true;
			return;
		}
		s->accesses = more;
		s->accesses_cap = n;
	}
	s->accesses[s->num_accesses++] = (Access){
		.warp = (uint32_t)((size_t)(f - s->fibers) / GROVE_WARP), .site = site, .time = f->times[site]++,
		.bytes = bytes, .address = at,
		.shared = at >= (uintptr_t)s->shared && at < (uintptr_t)s->shared + s->kernel->shared_bytes};
}

static int access_order(const void *x, const void *y)
{
	const Access *a = x, *b = y;
	if (a->warp != b->warp)
		return a->warp < b->warp ? -1 : 1;
	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->address < b->address ? -1 : a->address > b->address;
}

/* The block's accesses as its warps' requests, into s->counts; then none. */
static void fold(Sim *s)
{
	GroveSimCounts *c = s->counts;
	Access *a = s->accesses;
	size_t n = s->num_accesses;
	c->warps += (s->threads + GROVE_WARP - 1) / GROVE_WARP;
	qsort(a, n, sizeof *a, access_order);
	for (size_t i = 0, end; i < n; i = end) {
		uint32_t banks[GROVE_WARP] = {0}, most = 0;
		uintptr_t last = UINTPTR_MAX;
		for (end = i; end < n && a[end].warp == a[i].warp && a[end].site == a[i].site && a[end].time == a[i].time; end++)
			;
		/* shared memory: distinct 4-byte words, by bank; global: distinct 32-byte sectors (the accesses ascend) */
		for (size_t k = i; k < end; k++) {
			uintptr_t unit = a[i].shared ? 4 : 32;
			for (uintptr_t u = a[k].address / unit; u <= (a[k].address + (a[k].bytes ? a[k].bytes : 1) - 1) / unit; u++)
				if (last == UINTPTR_MAX || u > last) {
					last = u;
					if (a[i].shared && ++banks[u % GROVE_WARP] > most)
						most = banks[u % GROVE_WARP];
					c->global_sectors += !a[i].shared;
				}
		}
		c->shared_requests += a[i].shared;
		c->shared_wavefronts += most;
		c->global_requests += !a[i].shared;
	}
	s->num_accesses = 0;
}

/* GROVE_ERROR_DEVICE: the threads of the running block cannot meet; the message names the kernel, the block and why. */
__attribute__((format(printf, 2, 3))) static GroveStatus diverged(Sim *s, const char *fmt, ...)
{
	char why[320];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return grove_fail(s->err, GROVE_ERROR_DEVICE, "gpusim: kernel %s, block (%lld, %lld, %lld): %s", s->kernel->name,
	                  (long long)s->at[0], (long long)s->at[1], (long long)s->at[2], why);
}

/* Let the threads of the warp at first (count threads), all waiting, take their shuffle; an error if they cannot. */
static GroveStatus shuffle_warp(Sim *s, Fiber *warp, size_t count)
{
	size_t at = 0;
	while (warp[at].state != AT_SHUFFLE)
		at++;
	for (size_t i = 0; i < count; i++) {
		if (warp[i].state == RETURNED)
			return diverged(s, "a shuffle at site %u after thread %zu of the warp returned", warp[at].site,
			                (size_t)(warp + i - s->fibers));
		if (warp[i].state != AT_SHUFFLE || warp[i].site != warp[at].site)
			return diverged(s, "shuffle under divergent control flow: thread %zu waits at the shuffle at site %u, "
			                "thread %zu at the %s at site %u", (size_t)(warp + at - s->fibers), warp[at].site,
			                (size_t)(warp + i - s->fibers), warp[i].state == AT_BARRIER ? "barrier" : "shuffle",
			                warp[i].site);
	}
	for (size_t i = 0; i < count; i++) {
		int64_t from = (int64_t)i + warp[i].delta;
		warp[i].got = from >= 0 && from < (int64_t)count ? warp[from].bits : warp[i].bits;
	}
	for (size_t i = 0; i < count; i++)
		warp[i].state = RUNNING;
	return GROVE_OK;
}

/*
 * Every thread of the block waits or has returned: let them meet (the shuffles of each
 * warp, else the block's barrier). *finished when all returned.
 */
static GroveStatus meet(Sim *s, bool *finished)
{
	Fiber *f = s->fibers;
	size_t n = s->threads, first = n;
	bool shuffled = false;
	GroveStatus status;
	for (size_t w = 0; w < n; w += GROVE_WARP) {
		size_t count = n - w < GROVE_WARP ? n - w : GROVE_WARP;
		for (size_t i = w; i < w + count; i++)
			if (f[i].state == AT_SHUFFLE) {
				if ((status = shuffle_warp(s, f + w, count)) != GROVE_OK)
					return status;
				shuffled = true;
				break;
			}
	}
	if (shuffled)
		return GROVE_OK;
	for (size_t i = 0; i < n && first == n; i++)
		if (f[i].state == AT_BARRIER)
			first = i;
	*finished = first == n;
	for (size_t i = 0; i < n && !*finished; i++)
		if (f[i].state == RETURNED)
			return diverged(s, "barrier under divergent control flow: thread %zu returned while thread %zu waits at "
			                "the barrier at site %u", i, first, f[first].site);
		else if (f[i].site != f[first].site)
			return diverged(s, "barrier under divergent control flow: thread %zu waits at the barrier at site %u, "
			                "thread %zu at site %u", first, f[first].site, i, f[i].site);
	for (size_t i = 0; i < n && !*finished; i++)
		f[i].state = RUNNING;
	return GROVE_OK;
}

/* Make fiber i the thread of linear index i in the block at s->at, ready to start. */
static void start_fiber(Sim *s, size_t i)
{
	Fiber *f = &s->fibers[i];
	int64_t *index = f->thread.index;
	uint64_t address = (uintptr_t)f;
	size_t linear = i;
	for (int d = 0; d < 3; d++) {
		index[d] = (int64_t)(linear % (size_t)s->block[d]);
		linear /= (size_t)s->block[d];
		index[3 + d] = s->at[d];
		index[6 + d] = s->block[d];
		index[9 + d] = s->grid[d];
	}
	f->thread.shared = s->shared;
	f->thread.barrier = sim_barrier;
	f->thread.shuffle = sim_shuffle;
	f->thread.access = sim_access;
	f->thread.sim = s;
	if (f->times)
		memset(f->times, 0, f->num_times * sizeof *f->times);
	f->sim = s;
	f->state = RUNNING;
	getcontext(&f->context);
	f->context.uc_stack.ss_sp = f->stack;
	f->context.uc_stack.ss_size = STACK_BYTES;
	f->context.uc_link = NULL;
	makecontext(&f->context, (void (*)(void))fiber_main, 2, (unsigned)(address >> 32), (unsigned)address);
}

/* Run the block at s->at: every thread, in s's order, until all returned. */
static GroveStatus run_block(Sim *s)
{
	size_t n = s->threads;
	bool finished = false;
	GroveStatus status = GROVE_OK;
	memset(s->shared, garbage[s->pattern], s->kernel->shared_bytes);
	for (size_t i = 0; i < n; i++)
		start_fiber(s, i);
	while (!finished && status == GROVE_OK) {
		for (size_t k = 0; k < n; k++) {
			Fiber *f = &s->fibers[s->descending ? n - 1 - k : k];
			if (f->state == RUNNING)
				enter(s, f);
		}
		status = meet(s, &finished);
	}
	if (s->counts && status == GROVE_OK)
		fold(s);
	return status;
}

/* Launch kernel k, counted in counts where profiling (else NULL): every block of its grid, in s's order. */
static GroveStatus launch(Sim *s, const GroveKernel *k, GroveSimCounts *counts)
{
	int64_t blocks = 1;
	GroveStatus status = GROVE_OK;
	s->kernel = k;
	s->counts = counts;
	s->threads = 1;
	for (int d = 0; d < 3; d++) {
		s->grid[d] = grove_extent(&k->grid[d], s->nrows);
		s->grid[d] = s->grid[d] < INT32_MAX ? s->grid[d] : INT32_MAX; /* as CUDA's x: kernels stride over any grid */
		s->block[d] = k->block[d].count;
		s->threads *= (size_t)s->block[d];
		blocks *= s->grid[d];
	}
	for (int64_t b = 0; b < blocks && status == GROVE_OK; b++) {
		int64_t linear = s->descending ? blocks - 1 - b : b;
		for (int d = 0; d < 3; d++) {
			s->at[d] = linear % s->grid[d];
			linear /= s->grid[d];
		}
		status = run_block(s);
	}
	return status;
}

/*
 * Run the kernels of the call's entry in order, threads in ascending or descending order,
 * into out and workspace; their requests counted into profile where it is not NULL.
 */
static GroveStatus run_entry(Sim *s, const GroveDevice *d, const DeviceCall *c, float *out, void *workspace,
                             GroveSimProfile *profile)
{
	GroveStatus status = GROVE_OK;
	s->rows = c->rows;
	s->model = d->model;
	s->nrows = c->nrows;
	s->flags = c->flags;
	s->out = out;
	s->workspace = workspace;
	memset(out, garbage[s->pattern], c->out_bytes);
	if (workspace)
		memset(workspace, garbage[s->pattern], c->workspace_bytes);
	for (uint32_t i = 0; i < d->num_kernels && status == GROVE_OK; i++)
		if (d->kernels[i].entry == c->entry)
			status = launch(s, &d->kernels[i], profile && i < GROVE_SIM_KERNELS ? &profile->kernels[i] : NULL);
	return status;
}

/* Allocate s's fibers, their stacks (each above a guard page) and shared memory for the kernels of entry. */
static GroveStatus sim_init(Sim *s, const GroveDevice *d, uint32_t entry)
{
	size_t shared = 1;
	s->page = (size_t)sysconf(_SC_PAGESIZE);
	for (uint32_t i = 0; i < d->num_kernels; i++) {
		const GroveKernel *k = &d->kernels[i];
		size_t threads = (size_t)(k->block[0].count * k->block[1].count * k->block[2].count);
		if (k->entry != entry)
			continue;
		s->capacity = threads > s->capacity ? threads : s->capacity;
		shared = k->shared_bytes > shared ? k->shared_bytes : shared;
	}
	s->stacks_bytes = s->capacity * (s->page + STACK_BYTES);
	s->stacks = mmap(NULL, s->stacks_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s->stacks == MAP_FAILED) {
		s->stacks = NULL;
		return grove_fail(s->err, GROVE_ERROR_MEMORY, "gpusim: cannot map the stacks of %zu threads", s->capacity);
	}
	if (!(s->fibers = calloc(s->capacity, sizeof *s->fibers)) || !(s->shared = malloc(shared)))
		return grove_fail(s->err, GROVE_ERROR_MEMORY, "gpusim: out of memory for %zu threads", s->capacity);
	for (size_t i = 0; i < s->capacity; i++) {
		unsigned char *guard = s->stacks + i * (s->page + STACK_BYTES);
		if (mprotect(guard, s->page, PROT_NONE) != 0)
			return grove_fail(s->err, GROVE_ERROR_MEMORY, "gpusim: cannot protect the stacks' guard pages");
		s->fibers[i].stack = guard + s->page;
	}
	return GROVE_OK;
}

static void sim_free(Sim *s)
{
	if (s->stacks)
		munmap(s->stacks, s->stacks_bytes);
	for (size_t i = 0; s->fibers && i < s->capacity; i++)
		free(s->fibers[i].times);
	free(s->accesses);
	free(s->fibers);
	free(s->shared);
}

/* Whether the two runs' outputs agree; else GROVE_ERROR_DEVICE naming the first that differs. */
static GroveStatus compare(const float *a, const float *b, size_t n, GroveError *err)
{
	for (size_t i = 0; i < n; i++) {
		double x = a[i], y = b[i], scale = fmax(1, fmax(fabs(x), fabs(y)));
		if ((isnan(x) && isnan(y)) || x == y || fabs(x - y) <= TOLERANCE * scale)
			continue;
		return grove_fail(err, GROVE_ERROR_DEVICE, "gpusim: the kernels' results depend on the order threads run in "
		                  "(a data race, or memory read before it is written): output %zu is %.9g with threads in "
		                  "ascending order, %.9g in descending order", i, x, y);
	}
	return GROVE_OK;
}

/*
 * Run the call twice, threads and blocks ascending into its own out and workspace, then
 * descending into copies, and compare the outputs.
 */
static GroveStatus gpusim_run(void *state, const GroveDevice *d, const DeviceCall *c, GroveError *err)
{
	Sim s = {.err = err};
	float *out = NULL;
	void *workspace = NULL;
	GroveStatus status;
	(void)state;
	if ((status = sim_init(&s, d, c->entry)) != GROVE_OK)
		goto done;
	if (!(out = malloc(c->out_bytes)) || (c->workspace_bytes && !(workspace = malloc(c->workspace_bytes)))) {
		status = grove_fail(err, GROVE_ERROR_MEMORY, "gpusim: out of memory for a second output and workspace "
		                    "(%zu and %zu bytes)", c->out_bytes, c->workspace_bytes);
		goto done;
	}
	if ((status = run_entry(&s, d, c, c->out, c->workspace, grove_gpusim_profile)) != GROVE_OK)
		goto done;
	if (grove_gpusim_profile)
		grove_gpusim_profile->incomplete |= s.lost;
	s.descending = true;
	s.pattern = 1;
	if ((status = run_entry(&s, d, c, out, workspace, NULL)) != GROVE_OK)
		goto done;
	status = compare(c->out, out, c->out_bytes / sizeof(float), err);
done:
	free(out);
	free(workspace);
	sim_free(&s);
	return status;
}

/* The simulator needs nothing at load: the model blob is in host memory already. */
static GroveStatus gpusim_open(const GroveDevice *device, void **state, GroveError *err)
{
	(void)device, (void)err;
	*state = NULL;
	return GROVE_OK;
}

static void gpusim_close(void *state) { (void)state; }

const DeviceBackend grove_gpusim_backend = {
	.name = "gpusim",
	.host_memory = true,
	.open = gpusim_open,
	.close = gpusim_close,
	.run = gpusim_run,
};
