/* Reading a model file: load it, recognize its format, hand it to that format's reader. */
#include "front/front.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file's contents, mapped or read into memory. */
typedef struct FileText {
	char *text;
	size_t length;
	bool mapped;
} FileText;

/* Read what is left of fd into a growing buffer (for pipes and other files without a size). */
static bool read_stream(int fd, FileText *file)
{
	size_t cap = 1 << 16;
	file->text = xmalloc(cap);
	file->length = 0;
	for (;;) {
		ssize_t got;
		if (file->length == cap) {
			cap *= 2;
			file->text = xrealloc(file->text, cap);
		}
		got = read(fd, file->text + file->length, cap - file->length);
		if (got == 0)
			return true;
		if (got < 0 && errno != EINTR)
			return false;
		if (got > 0)
			file->length += (size_t)got;
	}
}

/*
 * Load all of `path`. A regular file is mapped with its pages read in up front (one
 * system call instead of a page fault per 4 KiB), anything else is read.
 */
static bool file_load(const char *path, FileText *file, Error *e)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;
	memset(file, 0, sizeof *file);
	if (fd < 0)
		return error_set(e, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0) {
		int err = errno;
		close(fd);
		return error_set(e, "%s: %s", path, strerror(err));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return error_set(e, "%s: %s", path, strerror(EISDIR));
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
		flags |= MAP_POPULATE;
#endif
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, flags, fd, 0);
		if (p != MAP_FAILED) {
			close(fd);
			file->text = p;
			file->length = (size_t)st.st_size;
			file->mapped = true;
			return true;
		}
	}
	ok = read_stream(fd, file);
	if (!ok) {
		int err = errno;
		free(file->text);
		close(fd);
		return error_set(e, "%s: %s", path, strerror(err));
	}
	close(fd);
	return true;
}

static void file_free(FileText *file)
{
	if (file->mapped)
		munmap(file->text, file->length);
	else
		free(file->text);
}

HForest *front_read_model(const char *path, Error *e)
{
	FileText file;
	const char *text;
	size_t length, i = 0;
	HForest *f = NULL;

	if (!file_load(path, &file, e))
		return NULL;
	text = file.text;
	length = file.length;
	if (length >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		text += 3; /* a UTF-8 byte order mark */
		length -= 3;
	}
	while (i < length && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
		i++;
	if (i == length)
		error_set(e, "%s: empty file", path);
	else if (text[i] == 0x08 || (strlen(path) > 5 && strcmp(path + strlen(path) - 5, ".onnx") == 0)) /* ModelProto's ir_version */
		f = front_read_onnx(path, file.text, file.length, e);
	else if (text[i] == '{')
		f = front_read_xgboost_json(path, text, length, e);
	else
		error_set(e, "%s: unknown model format (expected an XGBoost JSON model)", path);
	file_free(&file);
	return f;
}
