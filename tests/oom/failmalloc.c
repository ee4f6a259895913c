/*
 * Allocation failure injection, preloaded into grove by the oom test group
 * (LD_PRELOAD). Only allocations that grove's own code makes count (malloc, calloc or
 * realloc called from the grove executable, not from libc or LLVM, whose static
 * constructors allocate before main and abort when that fails): with
 * GROVE_FAIL_ALLOC=N the Nth of them, and every later one, returns NULL. With
 * GROVE_FAIL_ALLOC=0 none fails, and their count is printed on standard error at exit
 * ("allocations: N"), so that the test knows how many sites a run passes.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static long calls, fail_at = -1;
static uintptr_t text_begin, text_end; /* the executable's loaded segments */

/* The first object dl_iterate_phdr reports is the executable: note the span of its segments. */
static int find_executable(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			uintptr_t begin = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			uintptr_t end = begin + info->dlpi_phdr[i].p_memsz;
			text_begin = !text_begin || begin < text_begin ? begin : text_begin;
			text_end = end > text_end ? end : text_end;
		}
	return 1;
}

/* Whether this allocation, called from caller, fails. */
static int failing(const void *caller)
{
	if (fail_at < 0) {
		const char *v = getenv("GROVE_FAIL_ALLOC");
		fail_at = v ? atol(v) : 0;
		dl_iterate_phdr(find_executable, NULL);
	}
	if ((uintptr_t)caller < text_begin || (uintptr_t)caller >= text_end)
		return 0;
	return ++calls >= fail_at && fail_at > 0;
}

void *malloc(size_t n) { return failing(__builtin_return_address(0)) ? NULL : __libc_malloc(n); }
void *calloc(size_t count, size_t size) { return failing(__builtin_return_address(0)) ? NULL : __libc_calloc(count, size); }
void *realloc(void *p, size_t n) { return failing(__builtin_return_address(0)) ? NULL : __libc_realloc(p, n); }

__attribute__((destructor)) static void report(void)
{
	if (fail_at == 0)
		fprintf(stderr, "allocations: %ld\n", calls);
}
