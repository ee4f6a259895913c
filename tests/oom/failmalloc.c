/*
 * Allocation failure injection for the oom test group. It is linked into a copy of grove
 * (build/tests/grove-failmalloc) and into tests/oom/runtime.c with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc, so that the allocations grove's own
 * code makes (libgrovec.a, libgrove.a, tools/) come here, and those of libc, LLVM and
 * libgomp do not (LLVM's static constructors allocate before main and abort when that
 * fails). Wrapping at link time, rather than preloading a malloc, leaves the sanitizers'
 * allocator in place, so an AddressSanitizer build checks each failure path for leaks.
 *
 * With GROVE_FAIL_ALLOC=N the Nth of grove's allocations, and every later one, returns
 * NULL; with GROVE_FAIL_ALLOC=0 none fails and their count is printed on standard error
 * at exit ("allocations: N"), so that a test knows how many sites a run passes, followed
 * by the allocations made from a call stack no earlier allocation was made from
 * ("new stacks: 1 2 5 ..."): failing the 40th tree's node array takes the same path out
 * as failing the first's, so a test short of time may fail only those.
 * failmalloc_arm() does the same from inside a process.
 */
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/oom/failmalloc.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t n);

static long calls, fail_at = -1;
static int counting; /* GROVE_FAIL_ALLOC=0: count the allocations and note their call stacks */

/* While counting: the hashes of the call stacks seen (open addressing), and the allocations that were the first from
 * theirs; past MAX_STACKS / 2 stacks the report leaves them out (a test then fails every allocation). */
enum { MAX_STACKS = 1 << 14, STACK_DEPTH = 24 };
static uint64_t stacks[MAX_STACKS];
static long firsts[MAX_STACKS / 2], num_firsts;
static int too_many;

/* Note this allocation's call stack, remembering the allocation if the stack is new. */
static void note_stack(void)
{
	void *frames[STACK_DEPTH];
	int n = backtrace(frames, STACK_DEPTH);
	uint64_t h = 14695981039346656037ull;
	for (int i = 1; i < n; i++) /* frame 0 is this function */
		h = (h ^ (uint64_t)(uintptr_t)frames[i]) * 1099511628211ull;
	h |= 1; /* 0 marks an empty slot */
	for (uint64_t i = h; !too_many; i++) {
		uint64_t *slot = &stacks[i % MAX_STACKS];
		if (*slot == h)
			return;
		if (!*slot) {
			too_many = num_firsts == MAX_STACKS / 2;
			if (!too_many)
				*slot = h, firsts[num_firsts++] = calls;
			return;
		}
	}
}

void failmalloc_arm(long n)
{
	calls = 0;
	fail_at = n;
}

long failmalloc_calls(void) { return calls; }

/* Whether this allocation fails. */
static int failing(void)
{
	if (fail_at < 0) {
		const char *v = getenv("GROVE_FAIL_ALLOC");
		fail_at = v ? atol(v) : 0;
		counting = v && fail_at == 0;
	}
	++calls;
	if (counting)
		note_stack();
	return calls >= fail_at && fail_at > 0;
}

void *__wrap_malloc(size_t n) { return failing() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t count, size_t size) { return failing() ? NULL : __real_calloc(count, size); }
void *__wrap_realloc(void *p, size_t n) { return failing() ? NULL : __real_realloc(p, n); }

__attribute__((destructor)) static void report(void)
{
	if (!counting)
		return;
	fprintf(stderr, "allocations: %ld\n", calls);
	if (!too_many) {
		fprintf(stderr, "new stacks:");
		for (long i = 0; i < num_firsts; i++)
			fprintf(stderr, " %ld", firsts[i]);
		fprintf(stderr, "\n");
	}
}
