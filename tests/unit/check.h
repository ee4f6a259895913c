/* The unit tests' one assertion: CHECK(cond) reports a failed condition and counts it in `failures`. */
#ifndef GROVE_TESTS_CHECK_H
#define GROVE_TESTS_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                                              \
		}                                                                                \
	} while (0)

#endif
