/*
 * Output files as compilers treat them: written to a temporary file and renamed over the
 * output when complete, with the mode cc gives its outputs; an output that is not a
 * regular file (a device, a FIFO, "-" for standard output) is written into, never
 * replaced.
 */
#include "target/target.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The process's umask, read without changing it (umask(2) would race with other threads' file creations). */
static mode_t current_umask(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	unsigned mask;
	bool found = false;
	if (f) {
		while (!found && fgets(line, sizeof line, f))
			found = sscanf(line, "Umask: %o", &mask) == 1;
		fclose(f);
	}
	if (!found) { /* kernels before 4.7: the old way */
		mode_t old = umask(022);
		umask(old);
		mask = old;
	}
	return (mode_t)mask & 0777;
}

mode_t target_output_mode(bool executable)
{
	return (executable ? 0755 : 0644) & ~current_umask();
}

/* Whether out_path is standard output or names something that exists and is not a regular file. */
static bool written_into(const char *out_path)
{
	struct stat st;
	return !strcmp(out_path, "-") || (stat(out_path, &st) == 0 && !S_ISREG(st.st_mode));
}

char *target_output_temporary(const char *out_path, const char *suffix, Error *e)
{
	const char *dir = temporary_root();
	char *base, *temp;
	size_t len;
	if (!written_into(out_path))
		return temporary_beside(out_path, suffix, e);
	/* Beside /dev/null or a FIFO there is perhaps no room for a file: the temporary directory then. */
	if (!temporary_root_check("a temporary file", e))
		return NULL;
	len = strlen(dir) + 16;
	base = xmalloc(len);
	snprintf(base, len, "%s/grove-output", dir);
	temp = temporary_beside(base, suffix, e);
	free(base);
	return temp;
}

/* Write the n bytes at p to fd; false with errno set on failure. */
static bool write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno != EINTR)
			return false;
		if (w > 0) {
			p += w;
			n -= (size_t)w;
		}
	}
	return true;
}

/* Copy the file at from into the open descriptor fd; false with errno set on failure. */
static bool copy_into(const char *from, int fd)
{
	char buffer[1 << 16];
	int in = open(from, O_RDONLY | O_CLOEXEC), saved;
	ssize_t n;
	bool ok = true;
	if (in < 0)
		return false;
	while (ok && ((n = read(in, buffer, sizeof buffer)) != 0))
		ok = n > 0 ? write_all(fd, buffer, (size_t)n) : errno == EINTR;
	saved = errno;
	close(in);
	errno = saved;
	return ok;
}

/* Write the complete temp into out_path, which is "-" (standard output) or exists and is not a regular file. */
static bool write_into(const char *temp, const char *out_path, Error *e)
{
	struct stat st;
	int fd;
	bool ok;
	if (!strcmp(out_path, "-"))
		return copy_into(temp, STDOUT_FILENO) || error_set(e, "standard output: cannot write: %s", strerror(errno));
	if (stat(out_path, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode)))
		return error_set(e, "%s: cannot write: %s", out_path, S_ISDIR(st.st_mode) ? "it is a directory" : "it is a socket");
	/* Without O_CREAT or O_TRUNC: a device or FIFO is written as it is, never turned into a regular file. */
	if ((fd = open(out_path, O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0)
		return error_set(e, "%s: cannot write: %s", out_path, strerror(errno));
	ok = copy_into(temp, fd);
	if (close(fd) != 0 && ok)
		ok = false;
	return ok || error_set(e, "%s: %s", out_path, strerror(errno ? errno : EIO));
}

bool target_output_finish(char *temp, bool ok, const char *out_path, bool executable, Error *e)
{
	bool renamed = false;
	if (ok && written_into(out_path))
		ok = write_into(temp, out_path, e);
	else if (ok && (chmod(temp, target_output_mode(executable)) != 0 || !(renamed = rename(temp, out_path) == 0)))
		ok = error_set(e, "%s: cannot write: %s", out_path, strerror(errno));
	temporary_drop(temp, renamed);
	return ok;
}
