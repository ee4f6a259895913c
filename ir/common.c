#include "ir/common.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool error_set(Error *e, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->message, sizeof e->message, fmt, ap);
		va_end(ap);
		e->place = 0;
	}
	return false;
}

void error_prefix(Error *e, const char *prefix)
{
	char old[sizeof e->message];
	size_t n;
	if (!e)
		return;
	memcpy(old, e->message, sizeof old);
	n = (size_t)snprintf(e->message, sizeof e->message, "%s: ", prefix);
	if (n < sizeof e->message)
		snprintf(e->message + n, sizeof e->message - n, "%.*s", (int)(sizeof old - 1), old);
}

_Noreturn void die(const char *fmt, ...)
{
	va_list ap;
	fputs("grove: internal error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/*
 * The temporary files temporary_beside made (a few at a time: one temporary output per
 * compile in progress), and whether pending_files_unlink has run: after it no new one is
 * made, so that a file created while it ran is never left behind.
 */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *pending[64];
static bool pending_closed;

static void pending_file_remove(const char *path)
{
	pthread_mutex_lock(&pending_lock);
	for (size_t i = 0; i < COUNT_OF(pending); i++)
		if (pending[i] == path)
			pending[i] = NULL;
	pthread_mutex_unlock(&pending_lock);
}

void pending_files_unlink(void)
{
	pthread_mutex_lock(&pending_lock);
	pending_closed = true;
	for (size_t i = 0; i < COUNT_OF(pending); i++)
		if (pending[i])
			unlink(pending[i]);
	pthread_mutex_unlock(&pending_lock);
}

char *temporary_beside(const char *path, const char *suffix, Error *e)
{
	size_t len = strlen(path) + strlen(suffix) + 8;
	char *name = xmalloc(len);
	int fd = -1, error = 0;
	snprintf(name, len, "%s.XXXXXX%s", path, suffix);
	/* Made and noted at once: the signal thread's pending_files_unlink sees both or neither. */
	pthread_mutex_lock(&pending_lock);
	if (!pending_closed && (fd = mkstemps(name, (int)strlen(suffix))) < 0)
		error = errno;
	for (size_t i = 0; fd >= 0 && i < COUNT_OF(pending); i++)
		if (!pending[i]) {
			pending[i] = name;
			break;
		}
	pthread_mutex_unlock(&pending_lock);
	if (fd < 0) {
		if (error)
			error_set(e, "%s: cannot create a temporary file: %s", name, strerror(error));
		else
			error_set(e, "%s: no temporary file made: grove is stopping", path);
		free(name);
		return NULL;
	}
	close(fd);
	return name;
}

const char *temporary_root(void)
{
	const char *dir = getenv("TMPDIR");
	return dir && *dir ? dir : "/tmp";
}

bool temporary_root_check(const char *what, Error *e)
{
	const char *dir = temporary_root(), *environment = getenv("TMPDIR");
	struct stat st;
	int error = 0;
	if (stat(dir, &st) != 0)
		error = errno;
	else if (!S_ISDIR(st.st_mode))
		error = ENOTDIR;
	else if (access(dir, W_OK | X_OK) != 0)
		error = errno;
	if (!error)
		return true;
	if (environment && *environment)
		return error_set(e, "cannot create %s in %s, which $TMPDIR names: %s (set TMPDIR to a writable directory, or "
		                 "unset it for /tmp)", what, dir, strerror(error));
	return error_set(e, "cannot create %s in %s: %s (set TMPDIR to a writable directory)", what, dir, strerror(error));
}

void temporary_drop(char *name, bool keep)
{
	pending_file_remove(name);
	if (!keep)
		unlink(name);
	free(name);
}

/* Exhausted memory is the machine's state, not a bug: say so and exit 1 (no core dump, no half-written file). */
static _Noreturn void out_of_memory(size_t n)
{
	fprintf(stderr, "grove: out of memory (allocating %zu bytes)\n", n);
	pending_files_unlink();
	exit(1);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		out_of_memory(n);
	return p;
}

void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		out_of_memory(size && count > SIZE_MAX / size ? SIZE_MAX : count * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		out_of_memory(n);
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

const char *names_join(char *buf, size_t n, const char *(*name)(size_t i), const char *sep, const char *last)
{
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; name(i) && used < n; i++) {
		const char *between = i == 0 ? "" : last && !name(i + 1) ? last : sep;
		int k = snprintf(buf + used, n - used, "%s%s", between, name(i));
		used += k > 0 ? (size_t)k : 0;
	}
	return buf;
}

void grow_array(void **array, size_t elem, size_t need, size_t *cap)
{
	size_t n;
	if (need <= *cap)
		return;
	n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	*array = xrealloc(*array, n * elem);
	*cap = n;
}

/* A deep copy of n strings (NULL for NULL). */
char **strings_copy(char *const *s, uint32_t n)
{
	char **c = s ? xmalloc((n ? n : 1) * sizeof *c) : NULL;
	for (uint32_t k = 0; s && k < n; k++)
		c[k] = xstrdup(s[k]);
	return c;
}

/* Free n strings and their array (NULL is allowed). */
void strings_free(char **s, uint32_t n)
{
	for (uint32_t k = 0; s && k < n; k++)
		free(s[k]);
	free(s);
}

uint64_t category_values_total(const CategoryValues *c, uint32_t num_features)
{
	uint64_t total = 0;
	for (uint32_t j = 0; c->counts && j < num_features; j++)
		total += c->counts[j];
	return total;
}

CategoryValues category_values_copy(const CategoryValues *c, uint32_t num_features)
{
	CategoryValues copy = *c;
	uint64_t total = category_values_total(c, num_features);
	if (!c->counts)
		return copy;
	copy.counts = xmalloc((num_features ? num_features : 1) * sizeof *copy.counts);
	memcpy(copy.counts, c->counts, num_features * sizeof *copy.counts);
	copy.values = strings_copy(c->values, (uint32_t)total);
	return copy;
}

void category_values_free(CategoryValues *c, uint32_t num_features)
{
	strings_free(c->values, (uint32_t)category_values_total(c, num_features));
	free(c->counts);
	c->counts = NULL;
	c->values = NULL;
}

/* Seconds on clock. */
static double seconds_now(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void phase_timer_start(PhaseTimer *t)
{
	t->start = t->last = seconds_now(CLOCK_MONOTONIC);
	t->cpu = seconds_now(CLOCK_PROCESS_CPUTIME_ID);
}

void phase_end(PhaseTimer *t, const char *name)
{
	struct rusage self;
	double now, cpu;
	if (!t)
		return;
	now = seconds_now(CLOCK_MONOTONIC);
	cpu = seconds_now(CLOCK_PROCESS_CPUTIME_ID);
	getrusage(RUSAGE_SELF, &self);
	fprintf(stderr, "time: %-12s %8.1f ms (cpu %8.1f ms)  total %8.1f ms  peak memory %6.1f MiB\n", name,
	        (now - t->last) * 1e3, (cpu - t->cpu) * 1e3, (now - t->start) * 1e3, (double)self.ru_maxrss / 1024);
	t->last = now;
	t->cpu = cpu;
}
