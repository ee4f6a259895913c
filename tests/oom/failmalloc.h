/* Allocation failure injection (tests/oom/failmalloc.c). */
#ifndef GROVE_TESTS_FAILMALLOC_H
#define GROVE_TESTS_FAILMALLOC_H

/* From now on, the nth allocation and every later one fails (n = 0: none); the count restarts. */
void failmalloc_arm(long n);
/* The allocations counted since the last failmalloc_arm. */
long failmalloc_calls(void);

#endif
