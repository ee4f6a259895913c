#include "ir/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool error_set(Error *e, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->message, sizeof e->message, fmt, ap);
		va_end(ap);
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

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		die("out of memory allocating %zu x %zu bytes", count, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
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
