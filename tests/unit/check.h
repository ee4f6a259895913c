/* The unit tests' one assertion: CHECK(cond) reports a failed condition and counts it in `failures`. */
#ifndef GROVE_TESTS_CHECK_H
#define GROVE_TESTS_CHECK_H

#include <stdio.h>

/* GROVE_ASAN: built with AddressSanitizer (gcc defines __SANITIZE_ADDRESS__, clang 16 answers __has_feature). */
#if defined(__SANITIZE_ADDRESS__)
#define GROVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GROVE_ASAN 1
#endif
#endif

static int failures;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                                              \
		}                                                                                \
	} while (0)

#endif
