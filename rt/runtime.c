/* libgrove: loading artifacts and predicting. Never prints, never exits. */
#include "rt/grove.h"
#include "rt/artifact.h"
#include "rt/device.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(GROVE_WORKSPACE_ALIGN == GROVE_ARTIFACT_WORKSPACE_ALIGN, "grove.h and artifact.h disagree");

/* A loaded artifact of any version, its fields copied out of the descriptor. */
struct GroveModel {
	void *handle;                 /* from dlopen */
	uint32_t version;
	uint32_t num_features;
	uint32_t num_outputs;
	uint32_t num_margins;
	uint64_t workspace_fixed;     /* 0 for version 1 */
	uint64_t workspace_per_row;
	void (*predict)(const float *rows, int64_t nrows, float *out, int32_t flags, void *workspace); /* version 2, 3 */
	void (*predict_v1)(const float *rows, int64_t nrows, float *out, int32_t flags);             /* version 1 */
	void (*predict_f64)(const double *rows, int64_t nrows, float *out, int32_t flags, void *workspace); /* or NULL */
	uint32_t num_labels;          /* version 3 */
	const int64_t *label_ints;
	const char *const *label_strings;
	const char *const *feature_names; /* version 4, or NULL */
	const GroveDevice *device;    /* version 5: a GPU artifact's kernels, or NULL */
	uint32_t unseen_category;     /* version 6: GROVE_UNSEEN_* */
	const uint32_t *category_counts; /* or NULL */
	const char *const *category_values;
	const DeviceBackend *backend; /* and the back-end running them */
	void *backend_state;
};

GroveStatus grove_fail(GroveError *err, GroveStatus status, const char *fmt, ...)
{
	va_list ap;
	if (err) {
		err->status = status;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof err->message, fmt, ap);
		va_end(ap);
	}
	return status;
}

/* Clear err: success. */
static GroveStatus ok(GroveError *err)
{
	if (err) {
		err->status = GROVE_OK;
		err->message[0] = 0;
	}
	return GROVE_OK;
}

/*
 * Keep the OpenMP runtime an artifact brought in loaded for good: its worker threads
 * outlive the parallel region, and unloading their code under them (dlclose of the last
 * model) would crash them.
 */
static void pin_openmp(void)
{
	static const char *const names[] = {"libgomp.so.1", "libomp.so.5", "libomp.so"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
		if (h)
			dlclose(h);
	}
}

/* The ELF machine this library runs on, and its name for messages. */
#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#endif

/* A name for ELF machine m. */
static const char *machine_name(unsigned m)
{
	switch (m) {
	case EM_X86_64: return "x86-64";
	case EM_AARCH64: return "AArch64";
	case EM_386: return "i386";
	case EM_ARM: return "32-bit ARM";
	case EM_RISCV: return "RISC-V";
	case EM_PPC64: return "POWER";
	case EM_AMDGPU: return "AMDGPU";
	case EM_CUDA: return "CUDA";
	default: return "another machine";
	}
}

/* Read n bytes at offset into p; false on a short read or an error. */
static bool read_at(int fd, void *p, size_t n, uint64_t offset)
{
	for (size_t done = 0; done < n;) {
		ssize_t k = pread(fd, (char *)p + done, n - done, (off_t)(offset + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		done += (size_t)k;
	}
	return true;
}

/* Whether [offset, offset + count * size) lies within the first `within` bytes (no overflow). */
static bool fits(uint64_t offset, uint64_t count, uint64_t size, uint64_t within)
{
	return offset <= within && (size == 0 || count <= (within - offset) / size);
}

/*
 * Check the seal of the size-byte file fd (rt/artifact.h): *sealed says whether it has
 * one, and *elf_size is the size of the ELF file before it.
 */
static GroveStatus check_seal(int fd, const char *path, uint64_t size, bool *sealed, uint64_t *elf_size, GroveError *err)
{
	enum { CHUNK = 1 << 16 }; /* a multiple of 8, as grove_checksum wants */
	unsigned char seal[sizeof(GroveSeal)], *chunk;
	uint64_t h = GROVE_CHECKSUM_START, want_size = 0, want_sum = 0, zero = 0;
	GroveStatus status = GROVE_OK;

	*sealed = false;
	*elf_size = size;
	if (size < sizeof seal || !read_at(fd, seal, sizeof seal, size - sizeof seal) || memcmp(seal, GROVE_SEAL_MAGIC, 8))
		return GROVE_OK;
	for (int k = 7; k >= 0; k--) {
		want_size = want_size << 8 | seal[8 + k];
		want_sum = want_sum << 8 | seal[16 + k];
		zero = zero << 8 | seal[24 + k];
	}
	if (want_size != size - sizeof seal || zero != 0)
		return grove_fail(err, GROVE_ERROR_FORMAT, "%s: damaged artifact: the file holds %llu bytes before its seal, the seal "
		                  "says %llu (truncated, extended or overwritten)", path, (unsigned long long)(size - sizeof seal),
		                  (unsigned long long)want_size);
	if (!(chunk = malloc(CHUNK)))
		return grove_fail(err, GROVE_ERROR_MEMORY, "%s: out of memory", path);
	for (uint64_t at = 0; at < want_size && status == GROVE_OK; at += CHUNK) {
		size_t n = want_size - at < CHUNK ? (size_t)(want_size - at) : CHUNK;
		if (read_at(fd, chunk, n, at))
			h = grove_checksum(h, chunk, n);
		else
			status = grove_fail(err, GROVE_ERROR_IO, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));
	}
	free(chunk);
	if (status != GROVE_OK)
		return status;
	if (h != want_sum)
		return grove_fail(err, GROVE_ERROR_FORMAT, "%s: damaged artifact: its checksum does not match its contents (the file "
		                  "changed after grove wrote it)", path);
	*sealed = true;
	*elf_size = want_size;
	return GROVE_OK;
}

/*
 * Check, before dlopen sees it, that the file at path is a whole shared library for this
 * machine: its ELF header, that its program and section headers and every segment lie
 * within the file, and its seal's size and checksum. dlopen trusts the file (a damaged
 * one can crash it), so a file without a seal is refused too, once the ELF checks have
 * said what else is wrong with it.
 */
static GroveStatus check_file(const char *path, GroveError *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	Elf64_Ehdr eh;
	uint64_t size;
	GroveStatus status;
	bool sealed;

	if (fd < 0)
		return grove_fail(err, GROVE_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		status = grove_fail(err, GROVE_ERROR_IO, "%s: %s", path, S_ISDIR(st.st_mode) ? "a directory, not an artifact" :
		                                                            "not a regular file");
		goto done;
	}
	if ((status = check_seal(fd, path, (uint64_t)st.st_size, &sealed, &size, err)) != GROVE_OK)
		goto done;
	status = GROVE_ERROR_FORMAT;
	if (size < sizeof eh || !read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		grove_fail(err, status, "%s: not a grove artifact (not an ELF shared library%s)", path, size ? "" : ": the file is empty");
		goto done;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_DYN) {
		grove_fail(err, status, "%s: not a grove artifact (an ELF file, but not a 64-bit little-endian shared library)", path);
		goto done;
	}
	if (eh.e_machine != HOST_MACHINE) {
		grove_fail(err, status, "%s: an artifact for %s; this library runs on %s (compile it with --target for this machine)",
		           path, machine_name(eh.e_machine), machine_name(HOST_MACHINE));
		goto done;
	}
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || !fits(eh.e_phoff, eh.e_phnum, sizeof(Elf64_Phdr), size) ||
	    (eh.e_shnum && (eh.e_shentsize != sizeof(Elf64_Shdr) || !fits(eh.e_shoff, eh.e_shnum, sizeof(Elf64_Shdr), size)))) {
		grove_fail(err, status, "%s: damaged artifact: its ELF headers lie outside the file's %llu bytes (truncated?)", path,
		           (unsigned long long)size);
		goto done;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (!read_at(fd, &ph, sizeof ph, eh.e_phoff + (uint64_t)i * sizeof ph)) {
			grove_fail(err, GROVE_ERROR_IO, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));
			goto done;
		}
		if (ph.p_type == PT_LOAD && !fits(ph.p_offset, 1, ph.p_filesz, size)) {
			grove_fail(err, status, "%s: damaged artifact: segment %u ends past the file's %llu bytes (truncated?)", path, i,
			           (unsigned long long)size);
			goto done;
		}
	}
	status = sealed ? GROVE_OK : grove_fail(err, status, "%s: not a sealed grove artifact (truncated, or not written by grove "
	                                        "compile; an artifact from before grove's ABI 4 must be compiled again)", path);
done:
	close(fd);
	return status;
}

/* Fill m from the descriptor a of an artifact of version 1 to 6; false for another version. */
static bool read_descriptor(const void *a, GroveModel *m)
{
	uint32_t head[2]; /* magic and version, the same in every version */
	memcpy(head, a, sizeof head);
	m->version = head[1];
	m->predict = NULL;
	m->predict_v1 = NULL;
	m->predict_f64 = NULL;
	m->num_labels = 0;
	m->label_ints = NULL;
	m->label_strings = NULL;
	m->feature_names = NULL;
	m->device = NULL;
	m->unseen_category = GROVE_UNSEEN_MISSING;
	m->category_counts = NULL;
	m->category_values = NULL;
	m->backend = NULL;
	m->backend_state = NULL;
	if (head[0] != GROVE_ARTIFACT_MAGIC)
		return false;
	if (head[1] == 1) {
		const GroveArtifactV1 *v1 = a;
		m->num_features = v1->num_features;
		m->num_outputs = v1->num_outputs;
		m->num_margins = v1->num_margins;
		m->workspace_fixed = m->workspace_per_row = 0;
		m->predict_v1 = v1->predict;
		return v1->predict != NULL;
	}
	if (head[1] >= 2 && head[1] <= GROVE_ARTIFACT_VERSION) {
		const GroveArtifactV2 *v2 = a; /* each version begins as the one before it does */
		m->num_features = v2->num_features;
		m->num_outputs = v2->num_outputs;
		m->num_margins = v2->num_margins;
		m->workspace_fixed = v2->workspace_fixed;
		m->workspace_per_row = v2->workspace_per_row;
		m->predict = v2->predict;
		if (head[1] >= 3) {
			const GroveArtifactV3 *v3 = a;
			m->predict_f64 = v3->predict_f64;
			m->num_labels = v3->num_labels;
			m->label_ints = v3->label_ints;
			m->label_strings = v3->label_strings;
			if (m->num_labels && !m->label_ints == !m->label_strings)
				return false;
		}
		if (head[1] >= 4)
			m->feature_names = ((const GroveArtifactV4 *)a)->feature_names;
		if (head[1] >= 6) {
			const GroveArtifact *v6 = a;
			m->unseen_category = v6->unseen_category;
			m->category_counts = v6->category_counts;
			m->category_values = v6->category_values;
			if (!m->category_counts != !m->category_values || m->unseen_category > GROVE_UNSEEN_REFUSED)
				return false;
		}
		/* A GPU artifact's kernels are checked by check_device. */
		if (head[1] >= 5 && (m->device = ((const GroveArtifactV5 *)a)->device))
			return true;
		return v2->predict != NULL;
	}
	return false;
}

/* Kernels a GPU artifact may have at most: far more than a kernel sequence needs, few enough to check. */
#define MAX_KERNELS 4096u
/* Blocks of a grid extent given as a count at most (CUDA's limit on x). */
#define MAX_GRID_COUNT INT32_MAX

/* GROVE_ERROR_FORMAT: the GPU artifact at path is damaged or was written for another ABI; the message says why. */
__attribute__((format(printf, 3, 4))) static GroveStatus bad_device(GroveError *err, const char *path, const char *fmt, ...)
{
	char why[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return grove_fail(err, GROVE_ERROR_FORMAT, "%s: damaged GPU artifact: %s", path, why);
}

/* Check kernel i of a GPU artifact of device kind `kind`. */
static GroveStatus check_kernel(const GroveKernel *k, uint32_t i, uint32_t kind, const char *path, GroveError *err)
{
	int64_t threads = 1;
	if (!k->name)
		return bad_device(err, path, "kernel %u has no name", i);
	if (k->entry > 1)
		return bad_device(err, path, "kernel %s is of entry %u (0 or 1)", k->name, k->entry);
	for (int d = 0; d < 3; d++) {
		const GroveLaunchDim *g = &k->grid[d], *b = &k->block[d];
		if (g->rows_per < 0 || (g->rows_per == 0 && (g->count < 1 || g->count > MAX_GRID_COUNT)))
			return bad_device(err, path, "kernel %s: grid extent %d is %lld blocks (rows per block %lld)", k->name,
			                  d, (long long)g->count, (long long)g->rows_per);
		if (b->rows_per != 0 || b->count < 1 || b->count > GROVE_MAX_BLOCK_THREADS)
			return bad_device(err, path, "kernel %s: block extent %d is %lld threads (rows per block %lld)", k->name,
			                  d, (long long)b->count, (long long)b->rows_per);
		threads *= b->count;
	}
	if (threads > GROVE_MAX_BLOCK_THREADS)
		return bad_device(err, path, "kernel %s: %lld threads per block (at most %d)", k->name, (long long)threads,
		                  GROVE_MAX_BLOCK_THREADS);
	if (k->shared_bytes > GROVE_MAX_SHARED_BYTES)
		return bad_device(err, path, "kernel %s: %u bytes of shared memory per block (at most %u)", k->name,
		                  k->shared_bytes, GROVE_MAX_SHARED_BYTES);
	if (kind == GROVE_DEVICE_GPUSIM && !k->sim)
		return bad_device(err, path, "kernel %s has no host code for the simulator", k->name);
	return GROVE_OK;
}

/*
 * Check the device descriptor of a GPU artifact before anything follows its pointers
 * or sizes: the back-ends trust it.
 */
static GroveStatus check_device(const GroveModel *m, const char *path, GroveError *err)
{
	const GroveDevice *d = m->device;
	bool entry0 = false;
	GroveStatus status;
	if (m->predict || m->predict_f64)
		return bad_device(err, path, "it has kernels and a host predict");
	if (d->kind < GROVE_DEVICE_GPUSIM || d->kind > GROVE_DEVICE_ROCM)
		return bad_device(err, path, "unknown device kind %u", d->kind);
	if (!memchr(d->arch, 0, sizeof d->arch))
		return bad_device(err, path, "its architecture name is not terminated");
	if (d->kind != GROVE_DEVICE_GPUSIM && (!d->code || !d->code_size))
		return bad_device(err, path, "no device code");
	if (d->kind == GROVE_DEVICE_CUDA && d->code[d->code_size] != 0)
		return bad_device(err, path, "its PTX text does not end at its size");
	if (!d->model != !d->model_size)
		return bad_device(err, path, "a model blob of %llu bytes at %p", (unsigned long long)d->model_size,
		                  (const void *)d->model);
	if (!d->kernels || d->num_kernels < 1 || d->num_kernels > MAX_KERNELS)
		return bad_device(err, path, "%u kernels (1 to %u)", d->num_kernels, MAX_KERNELS);
	for (uint32_t i = 0; i < d->num_kernels; i++) {
		if ((status = check_kernel(&d->kernels[i], i, d->kind, path, err)) != GROVE_OK)
			return status;
		entry0 |= d->kernels[i].entry == 0;
	}
	if (!entry0)
		return bad_device(err, path, "no kernel of predict (entry 0)");
	return GROVE_OK;
}

/*
 * libgrove built with ThreadSanitizer runs host artifacts only: the tsan test group
 * (tests/run.py) builds this file alone, and the simulator's fibers (ucontext stack
 * switches) carry no TSan fiber annotations, without which TSan misreads them.
 */
#if defined(__SANITIZE_THREAD__)
#define GROVE_HOST_ONLY 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GROVE_HOST_ONLY 1
#endif
#endif

/* The back-end of device kind `kind` (checked), or NULL where this build has none. */
static const DeviceBackend *backend_of(uint32_t kind)
{
#ifdef GROVE_HOST_ONLY
	(void)kind;
	return NULL;
#else
	return kind == GROVE_DEVICE_GPUSIM ? &grove_gpusim_backend : kind == GROVE_DEVICE_CUDA ? &grove_cuda_backend :
	                                                                                        &grove_hsa_backend;
#endif
}

/* Put "path: " before err's message. */
static void prefix_path(GroveError *err, const char *path)
{
	char message[sizeof err->message];
	if (!err)
		return;
	memcpy(message, err->message, sizeof message);
	grove_fail(err, err->status, "%s: %s", path, message);
}

/* Check m's GPU kernels and open their back-end: the device's module and model are ready after. */
static GroveStatus open_device(GroveModel *m, const char *path, GroveError *err)
{
	GroveStatus status = check_device(m, path, err);
	if (status != GROVE_OK)
		return status;
	if (!(m->backend = backend_of(m->device->kind)))
		return grove_fail(err, GROVE_ERROR_UNAVAILABLE, "%s: a GPU artifact; this libgrove, built with "
		                  "ThreadSanitizer, runs host artifacts only", path);
	if ((status = m->backend->open(m->device, &m->backend_state, err)) != GROVE_OK) {
		m->backend = NULL;
		prefix_path(err, path);
	}
	return status;
}

int64_t grove_extent(const GroveLaunchDim *d, int64_t nrows)
{
	int64_t n;
	if (d->rows_per == 0)
		return d->count;
	n = nrows / d->rows_per + (nrows % d->rows_per != 0);
	return n > 0 ? n : 1;
}

/* Whether m is a GPU artifact with kernels of entry (0: float rows, 1: double rows). */
static bool has_entry(const GroveModel *m, uint32_t entry)
{
	for (uint32_t i = 0; m->device && i < m->device->num_kernels; i++)
		if (m->device->kernels[i].entry == entry)
			return true;
	return false;
}

GroveStatus grove_load(const char *path, GroveModel **model, GroveError *err)
{
	char *local = NULL;
	const char *name = path;
	void *handle;
	const void *a;
	const char *features;
	GroveModel *m;
	GroveStatus status;

	if (!model)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "grove_load: model is NULL");
	*model = NULL;
	if (!path || !*path)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "grove_load: no path");
	/* dlopen searches the library path for names without a slash; a path is meant here. */
	if (!strchr(path, '/')) {
		size_t len = strlen(path) + 3;
		if (!(local = malloc(len)))
			return grove_fail(err, GROVE_ERROR_MEMORY, "%s: out of memory", path);
		snprintf(local, len, "./%s", path);
		name = local;
	}
	status = check_file(name, err);
	handle = status == GROVE_OK ? dlopen(name, RTLD_NOW | RTLD_LOCAL) : NULL;
	free(local);
	if (status != GROVE_OK)
		return status;
	if (!handle)
		return grove_fail(err, GROVE_ERROR_IO, "%s: cannot load: %s", path, dlerror());
	pin_openmp();
	grove_watch_forks();
	a = dlsym(handle, GROVE_ARTIFACT_SYMBOL);
	if (a && (features = dlsym(handle, GROVE_CPU_FEATURES_SYMBOL)) &&
	    (status = grove_check_cpu(features, path, err)) != GROVE_OK) {
		dlclose(handle);
		return status;
	}
	if (!a) {
		dlclose(handle);
		return grove_fail(err, GROVE_ERROR_FORMAT, "%s: not a grove artifact (no %s symbol)", path, GROVE_ARTIFACT_SYMBOL);
	}
	if (!(m = malloc(sizeof *m))) {
		dlclose(handle);
		return grove_fail(err, GROVE_ERROR_MEMORY, "%s: out of memory", path);
	}
	if (!read_descriptor(a, m) || !m->num_features || !m->num_outputs || !m->num_margins)
		status = grove_fail(err, GROVE_ERROR_FORMAT, "%s: a grove artifact of another version (%u; this library reads 1 to %u)",
		                    path, m->version, GROVE_ARTIFACT_VERSION);
	else if (m->device)
		status = open_device(m, path, err);
	if (status != GROVE_OK) {
		free(m);
		dlclose(handle);
		return status;
	}
	m->handle = handle;
	*model = m;
	return ok(err);
}

void grove_free(GroveModel *model)
{
	if (!model)
		return;
	if (model->backend)
		model->backend->close(model->backend_state);
	dlclose(model->handle);
	free(model);
}

size_t grove_num_features(const GroveModel *model) { return model ? model->num_features : 0; }

size_t grove_num_outputs(const GroveModel *model, unsigned flags)
{
	if (!model)
		return 0;
	if (flags & GROVE_PREDICT_LABEL)
		return 1;
	return flags & GROVE_PREDICT_MARGIN ? model->num_margins : model->num_outputs;
}

const char *grove_device(const GroveModel *model)
{
	if (!model)
		return NULL;
	return model->backend ? model->backend->name : "cpu";
}

size_t grove_num_labels(const GroveModel *model) { return model ? model->num_labels : 0; }

const char *grove_feature_name(const GroveModel *model, size_t i)
{
	return model && model->feature_names && i < model->num_features ? model->feature_names[i] : NULL;
}

const char *const *grove_category_values(const GroveModel *model, size_t i, size_t *count)
{
	size_t at = 0, n = model && model->category_counts && i < model->num_features ? model->category_counts[i] : 0;
	for (size_t j = 0; n && j < i; j++)
		at += model->category_counts[j];
	if (count)
		*count = n;
	return n ? model->category_values + at : NULL;
}

int grove_unseen_category_missing(const GroveModel *model) { return !model || model->unseen_category == GROVE_UNSEEN_MISSING; }

GroveStatus grove_label(const GroveModel *model, size_t k, long long *value, const char **text, GroveError *err)
{
	if (!model)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "grove_label: model is NULL");
	if (k >= model->num_labels)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "label %zu: the model has %u labels", k, model->num_labels);
	if (value)
		*value = model->label_ints ? (long long)model->label_ints[k] : 0;
	if (text)
		*text = model->label_strings ? model->label_strings[k] : NULL;
	return ok(err);
}

size_t grove_workspace_size(const GroveModel *model, size_t nrows)
{
	uint64_t fixed, per_row;
	if (!model)
		return 0;
	fixed = model->workspace_fixed;
	per_row = model->workspace_per_row;
	if (fixed > SIZE_MAX || (nrows && per_row > (SIZE_MAX - fixed) / nrows))
		return SIZE_MAX;
	return (size_t)(fixed + per_row * nrows);
}

/* Whether the n bytes at p and the m bytes at q overlap (addresses compared as integers). */
static bool overlap(const void *p, size_t n, const void *q, size_t m)
{
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)q;
	return n && m && a < b + m && b < a + n;
}

/*
 * The checks of every prediction's arguments but the workspace and where the buffers
 * lie: GROVE_OK when nrows rows can be predicted, also when nrows is 0 (nothing to do).
 * *rows_bytes and *out_bytes then say how many bytes of rows and out they span.
 */
static GroveStatus check_arguments(const GroveModel *model, const float *rows, size_t nrows, size_t ncols,
                                   const float *out, size_t out_len, unsigned flags, size_t *rows_bytes,
                                   size_t *out_bytes, GroveError *err)
{
	size_t per_row;
	if (!model)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "grove_predict: model is NULL");
	if (flags & ~(unsigned)(GROVE_PREDICT_MARGIN | GROVE_PREDICT_LABEL))
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "grove_predict: unknown flags 0x%x", flags);
	if ((flags & GROVE_PREDICT_LABEL) && (flags & GROVE_PREDICT_MARGIN))
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "grove_predict: margins or labels, not both");
	if ((flags & GROVE_PREDICT_LABEL) && !model->num_labels)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "grove_predict: the model has no class labels");
	if (ncols != model->num_features)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "rows have %zu columns, the model needs %u", ncols, model->num_features);
	if (nrows == 0)
		return ok(err);
	if (!rows || !out)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "grove_predict: %s is NULL", rows ? "out" : "rows");
	per_row = grove_num_outputs(model, flags);
	if (nrows > INT64_MAX / per_row || nrows > SIZE_MAX / sizeof(float) / per_row ||
	    nrows > SIZE_MAX / sizeof(float) / ncols)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "grove_predict: %zu rows is too many", nrows);
	if (out_len < nrows * per_row)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "the output holds %zu floats, %zu rows need %zu", out_len, nrows,
		                  nrows * per_row);
	*rows_bytes = nrows * ncols * sizeof(float);
	*out_bytes = nrows * per_row * sizeof(float);
	return ok(err);
}

/* The artifact's flags for grove's. */
static int32_t artifact_flags(unsigned flags)
{
	return (flags & GROVE_PREDICT_MARGIN ? GROVE_ARTIFACT_MARGIN : 0) | (flags & GROVE_PREDICT_LABEL ? GROVE_ARTIFACT_LABEL : 0);
}

/*
 * Run a GPU artifact's kernels of entry on checked arguments: rows (floats for entry 0,
 * doubles for 1) and out in host memory, or in device memory when resident.
 */
static GroveStatus run_device(const GroveModel *model, uint32_t entry, const void *rows, size_t nrows, float *out,
                              unsigned flags, void *workspace, bool resident, GroveError *err)
{
	DeviceCall call = {
		.entry = entry,
		.rows = rows,
		.rows_bytes = nrows * model->num_features * (entry ? sizeof(double) : sizeof(float)),
		.nrows = (int64_t)nrows,
		.out = out,
		.out_bytes = nrows * grove_num_outputs(model, flags) * sizeof(float),
		.flags = artifact_flags(flags),
		.workspace = workspace,
		.workspace_bytes = grove_workspace_size(model, nrows),
		.resident = resident,
	};
	return model->backend->run(model->backend_state, model->device, &call, err);
}

/* Run the artifact's predict (or its kernels of entry 0) on checked arguments in host memory. */
static GroveStatus run_predict(const GroveModel *model, const float *rows, size_t nrows, float *out, unsigned flags,
                               void *workspace, GroveError *err)
{
	if (model->device)
		return run_device(model, 0, rows, nrows, out, flags, workspace, false, err);
	HostCall call = {model->predict_v1 ? NULL : model->predict, model->predict_v1, NULL, rows, (int64_t)nrows, out,
	                 artifact_flags(flags), workspace};
	return grove_run_host(&call, err);
}

/*
 * *workspace: a malloc'ed workspace for nrows rows, or NULL where the model needs none
 * or keeps it in device memory (CUDA, HSA: the back-end allocates it there).
 */
static GroveStatus new_workspace(const GroveModel *model, size_t nrows, void **workspace, GroveError *err)
{
	size_t size = grove_workspace_size(model, nrows);
	*workspace = NULL;
	if (size == SIZE_MAX)
		return grove_fail(err, GROVE_ERROR_MEMORY, "%zu rows need a workspace larger than the address space", nrows);
	if (model->backend && !model->backend->host_memory)
		return GROVE_OK;
	if (size && !(*workspace = malloc(size)))
		return grove_fail(err, GROVE_ERROR_MEMORY, "cannot allocate the workspace of %zu rows (%zu bytes)", nrows, size);
	return GROVE_OK;
}

GroveStatus grove_predict(const GroveModel *model, const float *rows, size_t nrows, size_t ncols, float *out,
                          size_t out_len, unsigned flags, GroveError *err)
{
	size_t rows_bytes = 0, out_bytes = 0;
	void *workspace = NULL;
	GroveStatus status = check_arguments(model, rows, nrows, ncols, out, out_len, flags, &rows_bytes, &out_bytes, err);
	if (status != GROVE_OK || nrows == 0)
		return status;
	if ((status = new_workspace(model, nrows, &workspace, err)) != GROVE_OK)
		return status;
	if (overlap(rows, rows_bytes, out, out_bytes)) {
		free(workspace);
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "the output overlaps the rows");
	}
	status = run_predict(model, rows, nrows, out, flags, workspace, err);
	free(workspace);
	return status == GROVE_OK ? ok(err) : status;
}

GroveStatus grove_predict_with_workspace(const GroveModel *model, const float *rows, size_t nrows, size_t ncols,
                                         float *out, size_t out_len, unsigned flags, void *workspace,
                                         size_t workspace_len, GroveError *err)
{
	size_t rows_bytes = 0, out_bytes = 0, size;
	GroveStatus status = check_arguments(model, rows, nrows, ncols, out, out_len, flags, &rows_bytes, &out_bytes, err);
	if (status != GROVE_OK || nrows == 0)
		return status;
	size = grove_workspace_size(model, nrows);
	if (size == SIZE_MAX)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "%zu rows need a workspace larger than the address space", nrows);
	if (workspace_len < size)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "the workspace holds %zu bytes, %zu rows need %zu", workspace_len, nrows,
		                  size);
	if (size && !workspace)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "grove_predict_with_workspace: workspace is NULL");
	if (size && (uintptr_t)workspace % GROVE_WORKSPACE_ALIGN)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "the workspace is not aligned to %u bytes", GROVE_WORKSPACE_ALIGN);
	if (overlap(rows, rows_bytes, out, out_bytes))
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "the output overlaps the rows");
	if (overlap(workspace, size, rows, rows_bytes) || overlap(workspace, size, out, out_bytes))
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "the workspace overlaps the rows or the output");
	status = run_predict(model, rows, nrows, out, flags, size ? workspace : NULL, err);
	return status == GROVE_OK ? ok(err) : status;
}

GroveStatus grove_predict_device(const GroveModel *model, const void *device_rows, size_t nrows, size_t ncols,
                                 float *device_out, unsigned flags, GroveError *err)
{
	size_t rows_bytes = 0, out_bytes = 0;
	void *workspace = NULL;
	GroveStatus status = check_arguments(model, device_rows, nrows, ncols, device_out, SIZE_MAX, flags, &rows_bytes,
	                                     &out_bytes, err);
	if (status != GROVE_OK || nrows == 0)
		return status;
	/* Device pointers share the process's address space (CUDA's unified addressing, HSA's), so this check holds there too. */
	if (overlap(device_rows, rows_bytes, device_out, out_bytes))
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "the output overlaps the rows");
	if ((status = new_workspace(model, nrows, &workspace, err)) != GROVE_OK)
		return status;
	/* A host artifact's device is the host. */
	status = model->device ? run_device(model, 0, device_rows, nrows, device_out, flags, workspace, true, err) :
	                         run_predict(model, device_rows, nrows, device_out, flags, workspace, err);
	free(workspace);
	return status == GROVE_OK ? ok(err) : status;
}

/* Rows of doubles converted to float per chunk of at most this many values, for models that compare floats. */
#define F64_CHUNK_VALUES (1u << 16)

GroveStatus grove_predict_f64(const GroveModel *model, const double *rows, size_t nrows, size_t ncols, float *out,
                              size_t out_len, unsigned flags, GroveError *err)
{
	size_t rows_bytes = 0, out_bytes = 0, per_row, chunk;
	float *floats;
	void *workspace = NULL;
	GroveStatus status = check_arguments(model, (const float *)rows, nrows, ncols, out, out_len, flags, &rows_bytes,
	                                     &out_bytes, err);
	if (status != GROVE_OK || nrows == 0)
		return status;
	if (nrows > SIZE_MAX / sizeof(double) / ncols)
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "grove_predict_f64: %zu rows is too many", nrows);
	if (overlap(rows, nrows * ncols * sizeof(double), out, out_bytes))
		return grove_fail(err, GROVE_ERROR_ARGUMENT, "the output overlaps the rows");
	per_row = grove_num_outputs(model, flags);
	/*
	 * A model that compares in double reads the doubles themselves; a GPU artifact gets
	 * its rows in one batch (each launch costs more than the floats' memory).
	 */
	chunk = model->predict_f64 || model->device ? nrows : (F64_CHUNK_VALUES / ncols ? F64_CHUNK_VALUES / ncols : 1);
	chunk = chunk < nrows ? chunk : nrows;
	if ((status = new_workspace(model, chunk, &workspace, err)) != GROVE_OK)
		return status;
	if (model->predict_f64 || has_entry(model, 1)) {
		HostCall call = {NULL, NULL, model->predict_f64, rows, (int64_t)nrows, out, artifact_flags(flags), workspace};
		status = model->predict_f64 ? grove_run_host(&call, err)
		                            : run_device(model, 1, rows, nrows, out, flags, workspace, false, err);
		free(workspace);
		return status == GROVE_OK ? ok(err) : status;
	}
	/* A model that compares floats gets the rows rounded to float, as its training library rounds them. */
	if (!(floats = malloc(chunk * ncols * sizeof *floats))) {
		free(workspace);
		return grove_fail(err, GROVE_ERROR_MEMORY, "cannot allocate %zu rows of floats", chunk);
	}
	for (size_t first = 0; first < nrows && status == GROVE_OK; first += chunk) {
		size_t n = nrows - first < chunk ? nrows - first : chunk;
		for (size_t i = 0; i < n * ncols; i++)
			floats[i] = (float)rows[first * ncols + i];
		status = run_predict(model, floats, n, out + first * per_row, flags, workspace, err);
	}
	free(floats);
	free(workspace);
	return status == GROVE_OK ? ok(err) : status;
}

const char *grove_status_name(GroveStatus status)
{
	switch (status) {
	case GROVE_OK: return "ok";
	case GROVE_ERROR_IO: return "io error";
	case GROVE_ERROR_FORMAT: return "format error";
	case GROVE_ERROR_ARGUMENT: return "argument error";
	case GROVE_ERROR_UNAVAILABLE: return "unavailable";
	case GROVE_ERROR_MEMORY: return "out of memory";
	case GROVE_ERROR_DEVICE: return "device error";
	}
	return "unknown status";
}
