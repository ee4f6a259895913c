/* What grove's commands (tools/grove.c, tools/tune.c) share: errors and options. */
#ifndef GROVE_TOOLS_CLI_H
#define GROVE_TOOLS_CLI_H

#include "target/compile.h"
#include "target/target.h"

/* Print "grove: message" on standard error, remove the files being written, and exit 1. */
__attribute__((format(printf, 1, 2))) _Noreturn void fail(const char *fmt, ...);
/* The value of option argv[*i] (which needs one), advancing *i. */
const char *option_value(int argc, char **argv, int *i);
/* A whole-number option value from 0 to max. */
long parse_count(const char *option, const char *s, long max);
/* Parse argv[*i] if it is a pipeline option (advancing *i past its value); false if it is not one. */
bool pipeline_option(int argc, char **argv, int *i, PipelineOptions *o);
/*
 * --target TEXT: gpusim, cuda[:ARCH] or rocm[:ARCH] set the device (and p lowers to
 * kernels); anything else is a host triple.
 */
void parse_target(const char *text, TargetOptions *t, PipelineOptions *p);
/* Seconds on a monotonic clock. */
double now(void);

int cmd_tune(int argc, char **argv);

#endif
