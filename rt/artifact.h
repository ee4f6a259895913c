/*
 * The ABI between generated host code and the runtime. Every artifact defines a
 * constant GroveArtifact; shared libraries export it as `grove_artifact`, objects as
 * `<prefix>_artifact` (next to `<prefix>_predict`). Bump GROVE_ARTIFACT_VERSION when
 * this layout changes.
 */
#ifndef GROVE_RT_ARTIFACT_H
#define GROVE_RT_ARTIFACT_H

#include <stdint.h>

#define GROVE_ARTIFACT_MAGIC 0x31565247u /* "GRV1" little-endian */
#define GROVE_ARTIFACT_VERSION 1u
#define GROVE_ARTIFACT_SYMBOL "grove_artifact"

/* flags for GroveArtifact.predict */
#define GROVE_ARTIFACT_MARGIN 1

typedef struct GroveArtifact {
	uint32_t magic;        /* GROVE_ARTIFACT_MAGIC */
	uint32_t version;      /* GROVE_ARTIFACT_VERSION */
	uint32_t num_features; /* columns per row */
	uint32_t num_outputs;  /* predictions per row */
	uint32_t num_margins;  /* raw margins per row (GROVE_ARTIFACT_MARGIN) */
	uint32_t transform;    /* post-transform code (HTransform) */
	/* rows: nrows x num_features floats, NaN = missing; out: nrows x (outputs or margins). Thread-safe. */
	void (*predict)(const float *rows, int64_t nrows, float *out, int32_t flags);
} GroveArtifact;

#endif
