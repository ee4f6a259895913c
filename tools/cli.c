/* What grove's commands share (tools/cli.h). */
#include "tools/cli.h"

#include "front/front.h"
#include "lower/lower.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *directive_name(size_t i) { return i < HDIR_COUNT ? hir_directive_name((HDirectiveKind)i) : NULL; }
static const char *cuda_arch_name(size_t i) { return target_gpu_arch_name(TARGET_DEVICE_CUDA, i); }
static const char *rocm_arch_name(size_t i) { return target_gpu_arch_name(TARGET_DEVICE_ROCM, i); }

/* The tables a usage text lists, by the names its placeholders use. */
static const struct {
	const char *key;
	const char *(*name)(size_t i);
} usage_lists[] = {
	{"formats", front_format_name},       {"representations", lower_representation_name},
	{"passes", pipeline_pass_name},       {"directives", directive_name},
	{"devices", pipeline_device_name},    {"cuda", cuda_arch_name},
	{"rocm", rocm_arch_name},
};

/* Usage texts keep to this many columns; a list that would pass it goes on under its first name. */
#define USAGE_COLUMNS 104

void cli_usage(FILE *out, const char *text)
{
	for (const char *p = text; *p;) {
		const char *open = strchr(p, '{'), *close = open ? strchr(open, '}') : NULL, *line = open;
		size_t key = open ? strspn(open + 1, "abcdefghijklmnopqrstuvwxyz") : 0, i = 0, column, start;
		if (!close) {
			fputs(p, out);
			return;
		}
		while (i < COUNT_OF(usage_lists) && (strlen(usage_lists[i].key) != key || strncmp(open + 1, usage_lists[i].key, key)))
			i++;
		fwrite(p, 1, (size_t)(open - p), out);
		if (i == COUNT_OF(usage_lists)) {
			fwrite(open, 1, (size_t)(close + 1 - open), out);
			p = close + 1;
			continue;
		}
		while (line > text && line[-1] != '\n')
			line--;
		column = start = (size_t)(open - line);
		for (size_t k = 0; usage_lists[i].name(k); k++) {
			const char *name = usage_lists[i].name(k);
			int seplen = (int)(close - open - 1 - key);
			size_t width = (k ? (size_t)seplen : 0) + strlen(name);
			if (k && column + width > USAGE_COLUMNS && start + width < USAGE_COLUMNS) {
				fprintf(out, "%.*s\n%*s", (int)strcspn(open + 1 + key, " }"), open + 1 + key, (int)start, "");
				column = start, width = strlen(name);
			} else if (k) {
				fprintf(out, "%.*s", seplen, open + 1 + key);
			}
			fputs(name, out);
			column += width;
		}
		p = close + 1;
	}
}

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
	else if (!strncmp(argv[*i], "-D", 2)) { /* -D NAME=VALUE or -DNAME=VALUE */
		if (o->num_sizes == HIR_MAX_SIZE_NAMES)
			fail("-D: at most %d sizes", HIR_MAX_SIZE_NAMES);
		o->sizes[o->num_sizes++] = argv[*i][2] ? argv[*i] + 2 : option_value(argc, argv, i);
	}
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
