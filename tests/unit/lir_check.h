/* Helpers of the LIR unit tests: expecting lir_verify to accept or reject, a tiny module, printing. */
#ifndef GROVE_TESTS_LIR_CHECK_H
#define GROVE_TESTS_LIR_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/lir.h"
#include "tests/unit/check.h"

/* lir_verify must reject m with a message containing text. */
static inline void expect_invalid(const LModule *m, const char *text, const char *file, int line)
{
	Error e = {.message = {0}};
	bool ok = lir_verify(m, &e);
	if (ok || !strstr(e.message, text)) {
		fprintf(stderr, "%s:%d: expected an error containing '%s', got %s'%s'\n", file, line, text,
		        ok ? "success " : "", e.message);
		failures++;
	}
}
#define EXPECT_INVALID(m, text) expect_invalid((m), (text), __FILE__, __LINE__)

/* lir_verify must accept m. */
static inline void expect_valid(const LModule *m, const char *file, int line)
{
	Error e = {.message = {0}};
	if (!lir_verify(m, &e)) {
		fprintf(stderr, "%s:%d: expected a valid module, got '%s'\n", file, line, e.message);
		failures++;
	}
}
#define EXPECT_VALID(m) expect_valid((m), __FILE__, __LINE__)

/*
 * A module whose only function, its entry, is f(ptr, i64, ptr, i32, ptr) (predict's
 * signature) with %0 = param 0 (ptr) and %1 = param 1 (i64); b appends to its body.
 */
static inline LModule *tiny(LBuilder *b)
{
	static const LType params[] = {LTYPE_PTR, LTYPE_I64, LTYPE_PTR, LTYPE_I32, LTYPE_PTR};
	LModule *m = lir_module_new();
	uint32_t n;
	lir_builder_init(b, lir_func_add(m, "f", params, COUNT_OF(params)));
	lir_emit(b, LOP_PARAM, LTYPE_PTR, LIR_NONE, LIR_NONE, LIR_NONE);
	n = lir_emit(b, LOP_PARAM, LTYPE_I64, LIR_NONE, LIR_NONE, LIR_NONE); /* emitting may move insts */
	b->fn->insts[n].imm = 1;
	return m;
}

/* m as lir_print writes it; free() the result. */
static inline char *lir_text(const LModule *m)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	lir_print(out, m);
	fclose(out);
	return text;
}

/* The printed module must contain text. */
static inline void expect_printed(const LModule *m, const char *text, const char *file, int line)
{
	char *printed = lir_text(m);
	if (!strstr(printed, text)) {
		fprintf(stderr, "%s:%d: expected the printed module to contain '%s', got:\n%s", file, line, text, printed);
		failures++;
	}
	free(printed);
}
#define EXPECT_PRINTED(m, text) expect_printed((m), (text), __FILE__, __LINE__)

#endif
