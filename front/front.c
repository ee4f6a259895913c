/*
 * Reading a model file: load it, recognise its format from its first bytes (or take the
 * one --format names), hand it to that format's reader. The formats are one table.
 */
#include "front/front.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <fcntl.h>
#include <math.h>
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

/*
 * Read what is left of fd into a growing buffer (for pipes and other files without a
 * size), at most max bytes: false with errno EFBIG past them.
 */
static bool read_stream(int fd, FileText *file, uint64_t max)
{
	size_t cap = 1 << 16;
	file->text = xmalloc(cap);
	file->length = 0;
	for (;;) {
		ssize_t got;
		if (file->length == cap) {
			if (cap > max) {
				errno = EFBIG;
				return false;
			}
			cap = cap * 2 > max + 1 ? (size_t)max + 1 : cap * 2; /* a byte past max shows there are more */
			file->text = xrealloc(file->text, cap);
		}
		got = read(fd, file->text + file->length, cap - file->length);
		if (got == 0 && file->length > max)
			errno = EFBIG;
		if (got == 0)
			return file->length <= max;
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
static bool file_load(const char *path, uint64_t max_stream, FileText *file, Error *e)
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
	ok = read_stream(fd, file, max_stream);
	if (!ok) {
		int err = errno;
		free(file->text);
		close(fd);
		if (err == EFBIG)
			return error_set(e, "%s: not a regular file, and longer than grove's limit of %llu bytes for one (raise it "
			                 "with --limit stream=N, or save the model to a file)", path, (unsigned long long)max_stream);
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

/* Skip JSON white space from p. */
static size_t skip_space(const char *bytes, size_t length, size_t i)
{
	while (i < length && (bytes[i] == ' ' || bytes[i] == '\t' || bytes[i] == '\n' || bytes[i] == '\r'))
		i++;
	return i;
}

/* XGBoost UBJSON: an object whose first key's length marker (or count, type, no-op) follows the '{'. */
static bool is_ubjson(const char *bytes, size_t length)
{
	return length >= 2 && bytes[0] == '{' && bytes[1] && strchr("iUIlL#$N", bytes[1]);
}

/* JSON: '{' or '[' after white space (and not UBJSON). */
static bool is_json(const char *bytes, size_t length)
{
	size_t i = skip_space(bytes, length, 0);
	return i < length && (bytes[i] == '{' || bytes[i] == '[') && !is_ubjson(bytes, length);
}

/*
 * CatBoost JSON: an object whose first key is one of those CatBoost writes first (it
 * writes them sorted; XGBoost's are "learner" and "version").
 */
static bool is_catboost(const char *bytes, size_t length)
{
	static const char *const first[] = {"\"ctr_data\"", "\"features_info\""};
	size_t i = skip_space(bytes, length, 0);
	if (!is_json(bytes, length) || bytes[i] != '{')
		return false;
	i = skip_space(bytes, length, i + 1);
	for (size_t k = 0; k < COUNT_OF(first); k++)
		if (length - i >= strlen(first[k]) && !memcmp(bytes + i, first[k], strlen(first[k])))
			return true;
	return false;
}

/* LightGBM text: the first line is "tree". */
static bool is_lightgbm(const char *bytes, size_t length)
{
	return length >= 5 && memcmp(bytes, "tree", 4) == 0 && (bytes[4] == '\n' || (bytes[4] == '\r' && length >= 6 && bytes[5] == '\n'));
}

/* A protobuf varint at bytes[*pos]; false if it does not end within the bytes (or 10 bytes). */
static bool read_varint(const char *bytes, size_t length, size_t *pos, uint64_t *out)
{
	*out = 0;
	for (int shift = 0; shift < 70 && *pos < length; shift += 7) {
		unsigned char b = (unsigned char)bytes[(*pos)++];
		*out |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * ONNX: a protobuf ModelProto, whose first field is one of ModelProto's with its wire
 * type: ir_version (1) and model_version (5) varints, the others length-delimited.
 * Only the first key and its varint are checked, so that a truncated model or one with
 * a length past the end still reaches the reader, which says what is wrong.
 */
static bool is_onnx(const char *bytes, size_t length)
{
	static const uint8_t length_delimited[] = {2, 3, 4, 6, 7, 8, 14, 20, 21, 25};
	uint64_t key, value;
	size_t pos = 0;
	bool known = false;
	if (!read_varint(bytes, length, &pos, &key) || !read_varint(bytes, length, &pos, &value))
		return false;
	if (key >> 3 == 1 || key >> 3 == 5)
		return (key & 7) == 0;
	for (size_t i = 0; i < COUNT_OF(length_delimited); i++)
		known |= key >> 3 == length_delimited[i];
	return known && (key & 7) == 2;
}

typedef struct Format {
	const char *name;        /* --format NAME */
	bool (*recognise)(const char *bytes, size_t length);
	FrontReader *read;
} Format;

/* Every format, in the order they are tried. */
static const Format formats[] = {
	{"catboost", is_catboost, front_read_catboost}, /* before xgboost: both are JSON */
	{"xgboost", is_json, front_read_xgboost_json},
	{"xgboost-ubj", is_ubjson, front_read_xgboost_ubjson},
	{"lightgbm", is_lightgbm, front_read_lightgbm},
	{"onnx", is_onnx, front_read_onnx},
};

const char *front_format_name(size_t i) { return i < COUNT_OF(formats) ? formats[i].name : NULL; }

static char format_names[128];

/* The formats' names as messages list them: "a, b or c". */
static void list_format_names(void) { names_join(format_names, sizeof format_names, front_format_name, ", ", " or "); }

const char *front_format_names(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, list_format_names);
	return format_names;
}

bool front_fail(Error *e, const char *name, const char *place, const char *fmt, va_list ap)
{
	char message[900];
	vsnprintf(message, sizeof message, fmt, ap);
	return error_set(e, "%s: %s%s", name, place, message);
}

char *front_number_text(double x)
{
	char text[32];
	snprintf(text, sizeof text, x == (double)(int64_t)x && fabs(x) < 1e15 ? "%.0f" : "%.17g", x);
	return xstrdup(text);
}

/* The format named `name`, or NULL. */
static const Format *format_named(const char *name)
{
	for (size_t i = 0; i < COUNT_OF(formats); i++)
		if (strcmp(formats[i].name, name) == 0)
			return &formats[i];
	return NULL;
}

bool front_format_known(const char *format) { return format_named(format) != NULL; }

/* Describe what the first bytes of a file look like, for "unknown model format". */
static void describe_start(const char *bytes, size_t length, char *buf, size_t size)
{
	const unsigned char *b = (const unsigned char *)bytes;
	size_t n = 0, shown = length < 16 ? length : 16;
	bool text = true;
	if (length >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
		snprintf(buf, size, "gzip-compressed data (decompress it first)");
		return;
	}
	if (length >= 4 && memcmp(bytes, "PK\3\4", 4) == 0) {
		snprintf(buf, size, "a zip archive (extract the model first)");
		return;
	}
	if (length >= 4 && memcmp(bytes, "CBM1", 4) == 0) {
		snprintf(buf, size, "a CatBoost binary model (save it with save_model(path, format=\"json\"))");
		return;
	}
	if (length >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5) {
		snprintf(buf, size, "a Python pickle (save the model with the library's save_model instead)");
		return;
	}
	for (size_t i = 0; i < length && i < 40 && bytes[i] != '\n' && bytes[i] != '\r'; i++, n++)
		text &= isprint(b[i]) || b[i] == '\t';
	if (text && n > 0) {
		snprintf(buf, size, "the text '%.*s'%s", (int)n, bytes, n == 40 ? "..." : "");
		return;
	}
	n = (size_t)snprintf(buf, size, "the bytes");
	for (size_t i = 0; i < shown && n + 4 < size; i++)
		n += (size_t)snprintf(buf + n, size - n, " %02x", b[i]);
}

/* The limits' names, and FrontLimits' fields in their order. */
static const char *const limit_names[] = {"features", "outputs", "trees", "nodes", "stream"};
static uint64_t *limit_field(FrontLimits *l, size_t i)
{
	uint64_t *fields[] = {&l->features, &l->outputs, &l->trees, &l->nodes, &l->stream};
	return fields[i];
}

FrontLimits front_default_limits(void)
{
	return (FrontLimits){.features = UINT64_C(1) << 22, .outputs = 65536, .trees = UINT64_C(1) << 24,
	                     .nodes = UINT64_C(1) << 30, .stream = UINT64_C(1) << 30};
}

bool front_limits_parse(FrontLimits *l, const char *text, Error *e)
{
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, ",="), i = 0;
		char *end;
		unsigned long long v;
		while (i < COUNT_OF(limit_names) && (strlen(limit_names[i]) != len || strncmp(p, limit_names[i], len)))
			i++;
		if (i == COUNT_OF(limit_names) || p[len] != '=')
			return error_set(e, "--limit %s: expected NAME=N,... with NAME one of %s", text, FRONT_LIMIT_NAMES);
		errno = 0;
		v = strtoull(p + len + 1, &end, 10);
		if (errno || end == p + len + 1 || (*end && *end != ',') || v == 0 || p[len + 1] == '-')
			return error_set(e, "--limit %s: %s needs a whole number above 0", text, limit_names[i]);
		*limit_field(l, i) = v;
		p = *end ? end + 1 : end;
	}
	return true;
}

bool front_check_limits(const HForest *f, FrontLimits l, const char *path, Error *e)
{
	uint64_t have[] = {f->num_features, f->num_outputs, f->num_trees, f->num_nodes};
	if (!f->num_features) /* libgrove loads no artifact whose rows are empty */
		return error_set(e, "%s: the model has no features; grove needs at least one", path);
	for (size_t i = 0; i < COUNT_OF(have); i++) /* the model's; the last limit is the file's */
		if (have[i] > *limit_field(&l, i))
			return error_set(e, "%s: the model has %llu %s, more than grove's limit of %llu (raise it with --limit %s=N)",
			                 path, (unsigned long long)have[i], limit_names[i], (unsigned long long)*limit_field(&l, i),
			                 limit_names[i]);
	return true;
}

/* front_read_bytes, for bytes that are a read-only private mapping of the file if mapped (see FrontReader). */
static HForest *read_bytes(const char *path, const char *bytes, size_t length, bool mapped, const char *format,
                           const FrontLimits *limits, Error *e)
{
	const Format *found = format ? format_named(format) : NULL;
	FrontLimits defaults = front_default_limits();
	char start[128];
	HForest *f;

	if (format && !found)
		return error_set(e, "--format %s: unknown format (expected %s)", format, front_format_names()), NULL;
	if (length >= 3 && memcmp(bytes, "\xef\xbb\xbf", 3) == 0) {
		bytes += 3; /* a UTF-8 byte order mark */
		length -= 3;
	}
	for (size_t i = 0; !found && i < COUNT_OF(formats); i++)
		if (formats[i].recognise(bytes, length))
			found = &formats[i];
	if (skip_space(bytes, length, 0) == length)
		return error_set(e, "%s: empty file", path), NULL;
	if (!found) {
		describe_start(bytes, length, start, sizeof start);
		return error_set(e, "%s: unknown model format: expected XGBoost JSON or UBJSON (starting with '{'), LightGBM text "
		                 "(starting with the line 'tree') or ONNX (a protobuf ModelProto); the file starts with %s", path,
		                 start), NULL;
	}
	if ((f = found->read(path, bytes, length, mapped, e)) && !front_check_limits(f, limits ? *limits : defaults, path, e)) {
		hir_forest_free(f);
		return NULL;
	}
	return f;
}

HForest *front_read_model(const char *path, const char *format, const FrontLimits *limits, Error *e)
{
	FileText file;
	HForest *f;
	if (format && !format_named(format))
		return error_set(e, "--format %s: unknown format (expected %s)", format, front_format_names()), NULL;
	if (!file_load(path, limits ? limits->stream : front_default_limits().stream, &file, e))
		return NULL;
	f = read_bytes(path, file.text, file.length, file.mapped, format, limits, e);
	file_free(&file);
	return f;
}

HForest *front_read_bytes(const char *path, const char *bytes, size_t length, const char *format,
                          const FrontLimits *limits, Error *e)
{
	return read_bytes(path, bytes, length, false, format, limits, e);
}
