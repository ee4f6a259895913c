/* What grove's commands share (tools/cli.h). */
#include "tools/cli.h"

#include "front/front.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Print "grove: message" and exit 1. */
void fail(const char *fmt, ...)
{
	va_list ap;
	while (cli_stopping()) /* the failure is the signal's doing (a linker stopped): the signal thread ends grove */
		pause();
	fputs("grove: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cli_cleanup();
	exit(1);
}

/* The value of option argv[*i] (which needs one), advancing *i. */
const char *option_value(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc)
		fail("%s needs a value", argv[*i]);
	return argv[++*i];
}

/* A non-negative integer option value. */
long parse_count(const char *option, const char *s, long max)
{
	char *end;
	long v;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < 0 || v > max)
		fail("%s %s: expected a whole number from 0 to %ld", option, s, max);
	return v;
}

/* Parse argv[*i] if it is a pipeline option (advancing *i past its value); false if it is not one. */
bool pipeline_option(int argc, char **argv, int *i, PipelineOptions *o)
{
	if (!strcmp(argv[*i], "--format")) {
		o->format = option_value(argc, argv, i);
		if (!front_format_known(o->format))
			fail("--format %s: unknown format (expected %s)", o->format, front_format_names());
	} else if (!strcmp(argv[*i], "--limit")) {
		FrontLimits limits = front_default_limits();
		Error e = {0};
		if (!front_limits_parse(&limits, o->limits = option_value(argc, argv, i), &e))
			fail("%s", e.message);
	} else if (!strcmp(argv[*i], "--representation"))
		o->representation = option_value(argc, argv, i);
	else if (!strcmp(argv[*i], "--tile-trees"))
		o->tree_tile = (uint32_t)parse_count("--tile-trees", option_value(argc, argv, i), 1000000000);
	else if (!strcmp(argv[*i], "--interleave"))
		o->interleave = (uint32_t)parse_count("--interleave", option_value(argc, argv, i), MIR_MAX_INTERLEAVE);
	else if (!strcmp(argv[*i], "--learned"))
		o->learned = true;
	else if (!strcmp(argv[*i], "--schedule"))
		o->schedule_file = option_value(argc, argv, i);
	else if (!strcmp(argv[*i], "--schedule-text"))
		o->schedule_text = option_value(argc, argv, i);
	else if (!strcmp(argv[*i], "-d")) {
		Error e = {0};
		if (!pipeline_check_passes(o->dump_after = option_value(argc, argv, i), &e))
			fail("%s", e.message);
	} else if (!strcmp(argv[*i], "--interleave-trees"))
		o->interleave_trees = (uint32_t)parse_count("--interleave-trees", option_value(argc, argv, i), MIR_MAX_INTERLEAVE);
	else
		return false;
	return true;
}

void parse_target(const char *text, TargetOptions *t, PipelineOptions *p)
{
	Error e = {0};
	if (!pipeline_target(text, t, p, &e))
		fail("--%s", e.message);
}

/* Seconds on a monotonic clock. */
double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
