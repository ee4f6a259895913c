/*
 * The ABI between generated host code and the runtime. Every artifact defines a
 * constant GroveArtifact; shared libraries export it as `grove_artifact`, objects as
 * `<prefix>_artifact` (next to `<prefix>_predict`). Bump GROVE_ARTIFACT_VERSION when
 * this layout changes, and keep a copy of the old layout below for the runtime, which
 * reads every version it knows by the `version` field (the first two fields are the
 * same in all of them).
 */
#ifndef GROVE_RT_ARTIFACT_H
#define GROVE_RT_ARTIFACT_H

#include <stdint.h>

#define GROVE_ARTIFACT_MAGIC 0x31565247u /* "GRV1" little-endian, in every version */
#define GROVE_ARTIFACT_VERSION 4u
#define GROVE_ARTIFACT_SYMBOL "grove_artifact"

/* flags for GroveArtifact.predict */
#define GROVE_ARTIFACT_MARGIN 1
#define GROVE_ARTIFACT_LABEL 2 /* each row's class, an index into the labels (models with labels) */

/* Alignment of the workspace handed to predict (malloc's on x86-64). */
#define GROVE_ARTIFACT_WORKSPACE_ALIGN 16u

/*
 * Version 4. predict gets a caller-provided workspace of at least
 * workspace_fixed + nrows * workspace_per_row bytes, aligned to
 * GROVE_ARTIFACT_WORKSPACE_ALIGN, overlapping neither rows nor out, used by this call
 * only and uninitialised; NULL when that size is 0 (schedules that keep their scratch
 * on the stack). predict_f64 is the same for rows of doubles; it exists (is not NULL)
 * for models that compare in double, where rounding rows to float would change
 * decisions. Classifiers with class labels (ONNX) list them; GROVE_ARTIFACT_LABEL then
 * asks predict for each row's class, an index into them. Models whose columns have names
 * (XGBoost's feature_names, LightGBM's) list them.
 */
typedef struct GroveArtifact {
	uint32_t magic;             /* GROVE_ARTIFACT_MAGIC */
	uint32_t version;           /* GROVE_ARTIFACT_VERSION */
	uint32_t num_features;      /* columns per row */
	uint32_t num_outputs;       /* predictions per row */
	uint32_t num_margins;       /* raw margins per row (GROVE_ARTIFACT_MARGIN) */
	uint32_t transform;         /* post-transform code (HTransform) */
	uint64_t workspace_fixed;   /* workspace bytes for any number of rows */
	uint64_t workspace_per_row; /* and per row */
	/* rows: nrows x num_features floats, NaN = missing; out: nrows x (outputs or margins). Thread-safe. */
	void (*predict)(const float *rows, int64_t nrows, float *out, int32_t flags, void *workspace);
	void (*predict_f64)(const double *rows, int64_t nrows, float *out, int32_t flags, void *workspace);
	uint32_t num_labels;              /* 0: no labels */
	const int64_t *label_ints;        /* num_labels int64 labels, or NULL */
	const char *const *label_strings; /* num_labels string labels, or NULL */
	const char *const *feature_names; /* num_features column names, or NULL when the model names none */
} GroveArtifact;

/* Version 3: no feature names. */
typedef struct GroveArtifactV3 {
	uint32_t magic;             /* GROVE_ARTIFACT_MAGIC */
	uint32_t version;           /* GROVE_ARTIFACT_VERSION */
	uint32_t num_features;      /* columns per row */
	uint32_t num_outputs;       /* predictions per row */
	uint32_t num_margins;       /* raw margins per row (GROVE_ARTIFACT_MARGIN) */
	uint32_t transform;         /* post-transform code (HTransform) */
	uint64_t workspace_fixed;   /* workspace bytes for any number of rows */
	uint64_t workspace_per_row; /* and per row */
	/* rows: nrows x num_features floats, NaN = missing; out: nrows x (outputs or margins). Thread-safe. */
	void (*predict)(const float *rows, int64_t nrows, float *out, int32_t flags, void *workspace);
	void (*predict_f64)(const double *rows, int64_t nrows, float *out, int32_t flags, void *workspace);
	uint32_t num_labels;              /* 0: no labels */
	const int64_t *label_ints;        /* num_labels int64 labels, or NULL */
	const char *const *label_strings; /* num_labels string labels, or NULL */
} GroveArtifactV3;

/* Version 2: no predict_f64. Artifacts written before version 3 still load. */
typedef struct GroveArtifactV2 {
	uint32_t magic;
	uint32_t version;           /* 2 */
	uint32_t num_features;
	uint32_t num_outputs;
	uint32_t num_margins;
	uint32_t transform;
	uint64_t workspace_fixed;
	uint64_t workspace_per_row;
	void (*predict)(const float *rows, int64_t nrows, float *out, int32_t flags, void *workspace);
} GroveArtifactV2;

/* Version 1: no workspace. Artifacts written before version 2 still load. */
typedef struct GroveArtifactV1 {
	uint32_t magic;        /* GROVE_ARTIFACT_MAGIC */
	uint32_t version;      /* 1 */
	uint32_t num_features;
	uint32_t num_outputs;
	uint32_t num_margins;
	uint32_t transform;
	void (*predict)(const float *rows, int64_t nrows, float *out, int32_t flags);
} GroveArtifactV1;

/*
 * The seal. `grove compile` appends a GroveSeal to every shared-library artifact (after
 * the ELF file, which the dynamic loader reads through its headers, so the bytes after it
 * do not matter to the loader): the size of the file before it and a checksum of those
 * bytes. libgrove checks it before it hands the file to dlopen, so that a truncated,
 * bit-flipped or half-copied artifact is refused with a message instead of crashing the
 * process or predicting wrong answers. Its fields are little-endian.
 */
#define GROVE_SEAL_MAGIC "GRVSEAL1"
typedef struct GroveSeal {
	char magic[8];     /* GROVE_SEAL_MAGIC, without its NUL */
	uint64_t size;     /* bytes of the file before the seal */
	uint64_t checksum; /* grove_checksum of those bytes */
	uint64_t zero;     /* 0 */
} GroveSeal;

#define GROVE_CHECKSUM_START UINT64_C(0x6772766368656b31)

/*
 * The checksum, one step per 8-byte little-endian word (a last partial word padded with
 * zeros): h = mix(h ^ word). mix is a bijection, so any change to one word changes the
 * result; the seal's size catches a change of length. Feed it chunks of a multiple of 8
 * bytes, the last one excepted.
 */
static inline uint64_t grove_checksum(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		const unsigned char *q = p + i;
		uint64_t word = 0;
		if (n - i >= 8) /* one load where the compiler sees it */
			word = (uint64_t)q[0] | (uint64_t)q[1] << 8 | (uint64_t)q[2] << 16 | (uint64_t)q[3] << 24 |
			       (uint64_t)q[4] << 32 | (uint64_t)q[5] << 40 | (uint64_t)q[6] << 48 | (uint64_t)q[7] << 56;
		else
			for (size_t k = 0; k < n - i; k++)
				word |= (uint64_t)q[k] << (8 * k);
		h = (h ^ word) * UINT64_C(0x9e3779b97f4a7c15);
		h ^= h >> 29;
	}
	return h;
}

#endif
