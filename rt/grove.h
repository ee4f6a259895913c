/*
 * libgrove: load artifacts written by the grove compiler and run predictions.
 *
 * Every function that can fail returns a GroveStatus and, if err is not NULL, fills it
 * with a message. The library never prints and never exits. A loaded model may be
 * used by several threads at once, and batches smaller than a few hundred rows run on
 * the calling thread. Predicting allocates nothing, unless the model's schedule needs a
 * workspace (grove_workspace_size is not 0): grove_predict then mallocs it for the call,
 * and grove_predict_with_workspace takes the caller's instead. GPU models (grove_device)
 * allocate their device buffers, and the simulator its threads, for each call.
 */
#ifndef GROVE_H
#define GROVE_H

#include <stddef.h>

/* The version of grove (the compiler and this library). */
#define GROVE_VERSION "0.1.0"
/*
 * The version of this header's interface: libgrove.so.N, N this (its SONAME). Raised
 * when a program built against an earlier grove.h would no longer work with the library.
 */
#define GROVE_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

typedef enum GroveStatus {
	GROVE_OK = 0,
	GROVE_ERROR_IO,          /* the artifact cannot be opened or loaded */
	GROVE_ERROR_FORMAT,      /* not a grove artifact, or one of another version */
	GROVE_ERROR_ARGUMENT,    /* a bad argument: wrong row width, short output buffer, NULL */
	GROVE_ERROR_UNAVAILABLE, /* the artifact's back-end is not available here */
	GROVE_ERROR_MEMORY,      /* out of memory */
	GROVE_ERROR_DEVICE,      /* the GPU, its driver or the simulator reported an error (the message says which and what) */
} GroveStatus;

typedef struct GroveError {
	GroveStatus status;
	char message[512];
} GroveError;

typedef struct GroveModel GroveModel;

/* Flags for grove_predict and grove_num_outputs. */
#define GROVE_PREDICT_MARGIN 1u /* raw margins (before the sigmoid / softmax / ...) */
#define GROVE_PREDICT_LABEL 2u  /* each row's class, as an index k into the model's labels (grove_label) */

/*
 * Load the artifact at path (a shared library written by `grove compile`). A GPU
 * artifact's kernels and model go to the device here: GROVE_ERROR_UNAVAILABLE when its
 * driver or device is missing (the message says what), GROVE_ERROR_DEVICE when the
 * device refuses them.
 */
GroveStatus grove_load(const char *path, GroveModel **model, GroveError *err);
/*
 * Free a model (NULL is allowed). The caller makes sure no other thread is predicting
 * with it: freeing a model in use is the caller's error, as free() of memory in use is.
 */
void grove_free(GroveModel *model);
/*
 * Where the model's predictions run: "cpu", "gpusim" (GPU kernels run by libgrove's
 * SIMT simulator, which checks them for races), "cuda" or "rocm"; NULL for a NULL model.
 * GPU models take the same calls as others, with rows and predictions in host memory;
 * grove_predict_device takes them in device memory.
 */
const char *grove_device(const GroveModel *model);
/* Columns each row must have. */
size_t grove_num_features(const GroveModel *model);
/* Values written per row: predictions, margins with GROVE_PREDICT_MARGIN, 1 with GROVE_PREDICT_LABEL. */
size_t grove_num_outputs(const GroveModel *model, unsigned flags);
/*
 * The name of column i (XGBoost's feature_names, LightGBM's feature names), or NULL
 * when the model names no columns (or i >= grove_num_features).
 */
const char *grove_feature_name(const GroveModel *model, size_t i);
/*
 * The values column i takes by name, where the model names them (the categories of a
 * pandas categorical column it was trained on: LightGBM's pandas_categorical, XGBoost's
 * categories): value k stands for category k, the number to pass in the column. *count
 * is how many; NULL (and 0) for a column of numbers. count may be NULL.
 */
const char *const *grove_category_values(const GroveModel *model, size_t i, size_t *count);
/*
 * What a value in none of a column's values stands for: missing (1, LightGBM's rule),
 * or nothing, to be refused (0, XGBoost's, which does not predict such rows).
 */
int grove_unseen_category_missing(const GroveModel *model);
/* Class labels the model has (ONNX classifiers); 0 when it has none. */
size_t grove_num_labels(const GroveModel *model);
/*
 * Label k (0 <= k < grove_num_labels): *text is its string for string labels (NULL
 * for integer labels), *value its integer for integer labels. Either pointer may be NULL.
 */
GroveStatus grove_label(const GroveModel *model, size_t k, long long *value, const char **text, GroveError *err);
/*
 * Predict nrows rows of ncols floats (row-major, NaN = missing) into out, which holds
 * out_len floats (at least nrows * grove_num_outputs(model, flags)) and must not overlap
 * rows. GROVE_ERROR_MEMORY if the model needs a workspace that cannot be allocated.
 */
GroveStatus grove_predict(const GroveModel *model, const float *rows, size_t nrows, size_t ncols,
                          float *out, size_t out_len, unsigned flags, GroveError *err);
/*
 * grove_predict for rows of doubles. Models whose training library compares in double
 * (LightGBM, ONNX models with double thresholds) read the doubles as they are, so a
 * value between a threshold and its rounding to float goes where the library sends it;
 * other models (XGBoost's compare floats) get the rows rounded to float, as their
 * library rounds them, a chunk at a time. Allocates the chunk and any workspace.
 */
GroveStatus grove_predict_f64(const GroveModel *model, const double *rows, size_t nrows, size_t ncols, float *out,
                              size_t out_len, unsigned flags, GroveError *err);
/* Alignment of a workspace handed to grove_predict_with_workspace (malloc's). */
#define GROVE_WORKSPACE_ALIGN 16u

/*
 * Bytes of scratch memory predicting nrows rows needs: 0 for models that keep their
 * scratch on the stack (most); SIZE_MAX when it does not fit in a size_t.
 */
size_t grove_workspace_size(const GroveModel *model, size_t nrows);
/*
 * grove_predict with the caller's scratch memory instead of a malloc per call (a GPU
 * model on "cuda" or "rocm" checks it but uses device memory instead).
 * workspace holds workspace_len bytes, at least grove_workspace_size(model, nrows)
 * (an error if fewer), aligned to GROVE_WORKSPACE_ALIGN, overlapping neither rows nor
 * out; it may be NULL when that size is 0. It needs no initialisation, holds garbage
 * after, and serves one call at a time: threads predicting at once need one each.
 */
GroveStatus grove_predict_with_workspace(const GroveModel *model, const float *rows, size_t nrows, size_t ncols,
                                         float *out, size_t out_len, unsigned flags, void *workspace,
                                         size_t workspace_len, GroveError *err);
/*
 * grove_predict with rows and predictions already in the device's memory:
 * device_rows holds nrows x ncols floats and device_out room for
 * nrows * grove_num_outputs(model, flags) floats, each a CUdeviceptr (cuda) or an HSA
 * allocation (rocm) as a pointer; on "cpu" and "gpusim" the device's memory is the host's.
 * The device's workspace is allocated for the call. Returns when the predictions are
 * in device_out.
 */
GroveStatus grove_predict_device(const GroveModel *model, const void *device_rows, size_t nrows, size_t ncols,
                                 float *device_out, unsigned flags, GroveError *err);
/* A short name for a status ("ok", "io error", ...). */
const char *grove_status_name(GroveStatus status);

#ifdef __cplusplus
}
#endif

#endif
