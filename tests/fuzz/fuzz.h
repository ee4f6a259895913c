/* What the libFuzzer harnesses of tests/fuzz share. */
#ifndef GROVE_TESTS_FUZZ_H
#define GROVE_TESTS_FUZZ_H

#include "target/compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Lower c->hir (read or built) to LIR with o. A verifier's complaint ("mir: ...", "lir:
 * ...") is a bug of the compiler, not of the input: abort, so that libFuzzer reports it.
 * With must_lower, so is any other failure (the default schedule lowers every model).
 */
static inline void fuzz_lower(Compiled *c, const PipelineOptions *o, bool must_lower)
{
	Error e = {0};
	if (!pipeline_lower("fuzz", LEVEL_LIR, o, c, &e) &&
	    (must_lower || strstr(e.message, ": mir: ") || strstr(e.message, ": lir: ") || !strncmp(e.message, "mir: ", 5) ||
	     !strncmp(e.message, "lir: ", 5))) {
		fprintf(stderr, "lowering failed: %s\n", e.message);
		abort();
	}
	compiled_free(c);
}

#endif
