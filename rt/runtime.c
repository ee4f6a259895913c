/* libgrove: loading artifacts and predicting. Never prints, never exits. */
#include "rt/grove.h"
#include "rt/artifact.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct GroveModel {
	void *handle;                 /* from dlopen */
	const GroveArtifact *artifact;
};

/* Fill err (if any) and return status. */
__attribute__((format(printf, 3, 4))) static GroveStatus fail(GroveError *err, GroveStatus status, const char *fmt, ...)
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

GroveStatus grove_load(const char *path, GroveModel **model, GroveError *err)
{
	char *local = NULL;
	const char *name = path;
	void *handle;
	const GroveArtifact *a;
	GroveModel *m;

	if (!model)
		return fail(err, GROVE_ERROR_ARGUMENT, "grove_load: model is NULL");
	*model = NULL;
	if (!path || !*path)
		return fail(err, GROVE_ERROR_ARGUMENT, "grove_load: no path");
	/* dlopen searches the library path for names without a slash; a path is meant here. */
	if (!strchr(path, '/')) {
		size_t len = strlen(path) + 3;
		if (!(local = malloc(len)))
			return fail(err, GROVE_ERROR_MEMORY, "%s: out of memory", path);
		snprintf(local, len, "./%s", path);
		name = local;
	}
	handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	free(local);
	if (!handle)
		return fail(err, GROVE_ERROR_IO, "%s: cannot load: %s", path, dlerror());
	pin_openmp();
	a = dlsym(handle, GROVE_ARTIFACT_SYMBOL);
	if (!a) {
		dlclose(handle);
		return fail(err, GROVE_ERROR_FORMAT, "%s: not a grove artifact (no %s symbol)", path, GROVE_ARTIFACT_SYMBOL);
	}
	if (a->magic != GROVE_ARTIFACT_MAGIC || a->version != GROVE_ARTIFACT_VERSION || !a->predict || !a->num_features ||
	    !a->num_outputs || !a->num_margins) {
		GroveStatus s = fail(err, GROVE_ERROR_FORMAT, "%s: a grove artifact of another version (%u; this library reads %u)",
		                     path, a->version, GROVE_ARTIFACT_VERSION);
		dlclose(handle);
		return s;
	}
	if (!(m = malloc(sizeof *m))) {
		dlclose(handle);
		return fail(err, GROVE_ERROR_MEMORY, "%s: out of memory", path);
	}
	m->handle = handle;
	m->artifact = a;
	*model = m;
	return ok(err);
}

void grove_free(GroveModel *model)
{
	if (!model)
		return;
	dlclose(model->handle);
	free(model);
}

size_t grove_num_features(const GroveModel *model) { return model ? model->artifact->num_features : 0; }

size_t grove_num_outputs(const GroveModel *model, unsigned flags)
{
	if (!model)
		return 0;
	return flags & GROVE_PREDICT_MARGIN ? model->artifact->num_margins : model->artifact->num_outputs;
}

GroveStatus grove_predict(const GroveModel *model, const float *rows, size_t nrows, size_t ncols, float *out,
                          size_t out_len, unsigned flags, GroveError *err)
{
	const GroveArtifact *a;
	size_t per_row;

	if (!model)
		return fail(err, GROVE_ERROR_ARGUMENT, "grove_predict: model is NULL");
	a = model->artifact;
	if (flags & ~(unsigned)GROVE_PREDICT_MARGIN)
		return fail(err, GROVE_ERROR_ARGUMENT, "grove_predict: unknown flags 0x%x", flags);
	if (ncols != a->num_features)
		return fail(err, GROVE_ERROR_ARGUMENT, "rows have %zu columns, the model needs %u", ncols, a->num_features);
	if (nrows == 0)
		return ok(err);
	if (!rows || !out)
		return fail(err, GROVE_ERROR_ARGUMENT, "grove_predict: %s is NULL", rows ? "out" : "rows");
	per_row = grove_num_outputs(model, flags);
	if (nrows > INT64_MAX / per_row || nrows > SIZE_MAX / ncols)
		return fail(err, GROVE_ERROR_ARGUMENT, "grove_predict: %zu rows is too many", nrows);
	if (out_len < nrows * per_row)
		return fail(err, GROVE_ERROR_ARGUMENT, "the output holds %zu floats, %zu rows need %zu", out_len, nrows,
		            nrows * per_row);
	{
		const char *rows_end = (const char *)(rows + nrows * ncols), *out_end = (const char *)(out + nrows * per_row);
		if ((const char *)rows < out_end && (const char *)out < rows_end)
			return fail(err, GROVE_ERROR_ARGUMENT, "the output overlaps the rows");
	}
	a->predict(rows, (int64_t)nrows, out, (int32_t)(flags & GROVE_PREDICT_MARGIN ? GROVE_ARTIFACT_MARGIN : 0));
	return ok(err);
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
	}
	return "unknown status";
}
