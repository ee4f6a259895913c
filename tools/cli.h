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
/*
 * Print a command's usage text, each {TABLE SEP} in it replaced by the names of that table
 * joined by SEP ({formats, } gives "catboost, xgboost, ..."; {formats|} "catboost|xgboost|...").
 * The tables: formats, representations, passes, directives, devices, cuda and rocm (their
 * GPU architectures). Lists in help texts come from the tables, so they cannot drift.
 */
void cli_usage(FILE *out, const char *text);
/* Seconds on a monotonic clock. */
double now(void);

/* Remove the temporary files and directories of the command (fail calls it). */
void cli_cleanup(void);
/* Whether grove is ending on a signal (cli_cleanup_start's thread is cleaning up). */
bool cli_stopping(void);
/* Block SIGINT, SIGTERM and SIGHUP in every thread but one, which calls cli_cleanup and ends grove on them. */
void cli_cleanup_start(void);
/*
 * A new directory temporary_root()/name-XXXXXX (malloc'ed path), removed with the files it
 * holds by cli_cleanup or cli_temporary_directory_remove; exits with a message naming
 * the place (and $TMPDIR, where it comes from there) when it cannot be made.
 */
char *cli_temporary_directory(const char *name);
/* Remove the files in dir, made by cli_temporary_directory, and dir; free dir. */
void cli_temporary_directory_remove(char *dir);
/*
 * Whether paths a and b name one regular file: the same inode where both exist, else the
 * same name once their directories are resolved. Never for "-" or devices.
 */
bool same_file(const char *a, const char *b);
/* Exit with a message if output (the value of option) is empty or same_file as one of the n inputs ("what path"). */
void check_output(const char *option, const char *output, const char *const *inputs, size_t n);

int cmd_tune(int argc, char **argv);

#endif
