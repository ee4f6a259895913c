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
 * at exit ("allocations: N"), so that a test knows how many sites a run passes.
 * failmalloc_arm() does the same from inside a process.
 */
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
	}
	return ++calls >= fail_at && fail_at > 0;
}

void *__wrap_malloc(size_t n) { return failing() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t count, size_t size) { return failing() ? NULL : __real_calloc(count, size); }
void *__wrap_realloc(void *p, size_t n) { return failing() ? NULL : __real_realloc(p, n); }

__attribute__((destructor)) static void report(void)
{
	if (fail_at == 0 && getenv("GROVE_FAIL_ALLOC"))
		fprintf(stderr, "allocations: %ld\n", calls);
}
