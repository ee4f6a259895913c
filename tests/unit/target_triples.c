/*
 * target_check's triples and CPUs: the spellings of x86-64 and AArch64 it accepts, the
 * CPUs of each architecture, --cpu native only for this host, and the messages of what it
 * refuses. (Emission and running AArch64 code are the aarch64 group of tests/run.py.)
 */
#include "target/target.h"

#include <string.h>
#include "tests/unit/check.h"

/* Whether target_check accepts triple and cpu; the message, if any, goes to e. */
static bool accepts(const char *triple, const char *cpu, Error *e)
{
	TargetOptions o = {.emit = TARGET_EMIT_OBJ, .opt_level = 2, .triple = triple, .cpu = cpu};
	memset(e, 0, sizeof *e);
	return target_check(&o, e);
}

int main(void)
{
	static const char *const good[][2] = {
		{NULL, NULL}, {"x86_64-linux-gnu", "x86-64"}, {"x86_64-pc-linux-gnu", "native"}, {"aarch64-linux-gnu", NULL},
		{"aarch64-unknown-linux-gnu", "generic"}, {"aarch64-linux-gnu", "neoverse-n1"}, {"aarch64-linux-gnu", "apple-m1"},
	};
	Error e;

	for (size_t i = 0; i < COUNT_OF(good); i++) {
		bool ok = accepts(good[i][0], good[i][1], &e);
		if (!ok)
			fprintf(stderr, "%s --cpu %s: %s\n", good[i][0], good[i][1], e.message);
		CHECK(ok);
	}
	CHECK(!accepts("arm-linux-gnueabihf", NULL, &e));
	CHECK(strstr(e.message, "--target arm-linux-gnueabihf: unknown target triple (grove emits code for x86_64-linux-gnu"));
	CHECK(strstr(e.message, "aarch64-linux-gnu or aarch64-unknown-linux-gnu"));
	CHECK(!accepts("aarch64", NULL, &e));
	CHECK(!accepts("aarch64-linux-gnu", "native", &e));
	CHECK(strstr(e.message, "--cpu native: tunes for the machine grove runs on, which is not aarch64-linux-gnu"));
	CHECK(!accepts("aarch64-linux-gnu", "znver3", &e));
	CHECK(strstr(e.message, "--cpu znver3: unknown aarch64 CPU (try generic, neoverse-n1"));
	CHECK(!accepts("x86_64-linux-gnu", "neoverse-n1", &e));
	CHECK(strstr(e.message, "--cpu neoverse-n1: unknown x86-64 CPU (try native, x86-64"));
	return failures ? 1 : 0;
}
