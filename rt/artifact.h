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
#define GROVE_ARTIFACT_VERSION 6u
#define GROVE_ARTIFACT_SYMBOL "grove_artifact"
/*
 * Beside it in shared libraries since issue 51's fix: a NUL-terminated string, the x86-64
 * or AArch64 CPU features the code may use, by LLVM's names ("avx,avx2,fma",
 * "fp-armv8,neon,lse"), "" for none (a CUDA or ROCm library, which holds no code).
 * grove_load refuses an artifact whose features this CPU lacks; one without the symbol
 * (older) is loaded unchecked.
 */
#define GROVE_CPU_FEATURES_SYMBOL "grove_cpu_features"

/* flags for GroveArtifact.predict */
#define GROVE_ARTIFACT_MARGIN 1
#define GROVE_ARTIFACT_LABEL 2 /* each row's class, an index into the labels (models with labels) */

/* Alignment of the workspace handed to predict (malloc's on x86-64). */
#define GROVE_ARTIFACT_WORKSPACE_ALIGN 16u

/* GroveDevice.kind: where a GPU artifact's kernels run. */
#define GROVE_DEVICE_GPUSIM 1u /* kernels compiled for this host, run by libgrove's SIMT simulator */
#define GROVE_DEVICE_CUDA 2u   /* PTX text, loaded through the CUDA Driver API */
#define GROVE_DEVICE_ROCM 3u   /* an HSACO code object, loaded through the HSA runtime */

/* Lanes of a warp as SHUFFLE sees them (on a 64-wide AMD wavefront: each half). */
#define GROVE_WARP 32

/* One extent of a launch (LDim): count, or ceil(nrows / rows_per) (at least 1) when rows_per is not 0. */
typedef struct GroveLaunchDim {
	int64_t count;
	int64_t rows_per;
} GroveLaunchDim;

/*
 * What a simulated thread sees (the last parameter of a GROVE_DEVICE_GPUSIM kernel):
 * generated code reads index[] for GPU_INDEX (LGpuIndex order: thread.xyz, block.xyz,
 * blockDim.xyz, gridDim.xyz), addresses its block's shared memory from `shared`, and
 * calls barrier and shuffle, passing the site (the LIR instruction) so that the
 * simulator can tell threads that meet at different places.
 */
typedef struct GroveSimThread {
	int64_t index[12];
	unsigned char *shared;
	void (*barrier)(struct GroveSimThread *thread, uint32_t site);
	/* a's bits (zero-extended to 64) as held by the thread delta lanes down the warp, or the caller's own */
	uint64_t (*shuffle)(struct GroveSimThread *thread, uint64_t bits, int32_t delta, uint32_t site);
	void *sim; /* the simulator's */
	/*
	 * Told of each load and store (its address and bytes) before it is made, by kernels
	 * built to profile their memory requests (grove tune's, TargetOptions.profile);
	 * artifacts never call it, so it is not part of their ABI.
	 */
	void (*access)(struct GroveSimThread *thread, const void *address, uint32_t bytes, uint32_t site);
} GroveSimThread;

/* A kernel compiled for the host (GROVE_DEVICE_GPUSIM): lir_kernel_params, then the thread. */
typedef void (*GroveSimKernel)(const void *rows, int64_t nrows, float *out, int32_t flags, void *workspace,
                               const void *model, GroveSimThread *thread);

/* One kernel of a GPU artifact and its launch. */
typedef struct GroveKernel {
	const char *name;          /* its symbol in the device code */
	uint32_t entry;            /* 0: a step of predict (float rows); 1: of predict_f64 (double rows) */
	uint32_t shared_bytes;     /* static shared memory per block */
	GroveLaunchDim grid[3];    /* blocks */
	GroveLaunchDim block[3];   /* threads per block (counts) */
	GroveSimKernel sim;        /* GROVE_DEVICE_GPUSIM: the kernel; else NULL */
} GroveKernel;

/*
 * The device part of a GPU artifact. predict (predict_f64) is the kernels of entry 0
 * (1) launched in their order here, each after the previous one finished, with the
 * kernel parameters (rows, nrows, out, flags, workspace, model) in device memory: the
 * rows, the outputs, a workspace of workspace_fixed + nrows * workspace_per_row bytes
 * and the model blob.
 */
typedef struct GroveDevice {
	uint32_t kind;                /* GROVE_DEVICE_* */
	char arch[16];                /* "sm_80", "gfx90a", ...; "" for the simulator */
	const unsigned char *code;    /* PTX text (NUL-terminated) or the HSACO; NULL for the simulator */
	uint64_t code_size;           /* its bytes (PTX: without the NUL) */
	const unsigned char *model;   /* the model buffers as one blob (lir_buffer_offset's layout) */
	uint64_t model_size;
	uint32_t num_kernels;
	const GroveKernel *kernels;
} GroveDevice;

/*
 * Version 6: categorical columns whose values the model names (the categories of the
 * pandas categorical columns it was trained on: LightGBM's pandas_categorical, XGBoost's
 * categories). category_counts[f] is how many values column f takes by name (0: a column
 * of numbers); category_values holds them all, column by column, value k of column f
 * standing for category k. Both NULL where no column has values. unseen_category says
 * what a value in no list is: GROVE_UNSEEN_MISSING (LightGBM) or GROVE_UNSEEN_REFUSED
 * (XGBoost).
 *
 * Version 5: `device` describes the kernels of a GPU artifact (predict and predict_f64
 * are then NULL); NULL in a host artifact.
 *
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
	const GroveDevice *device;        /* a GPU artifact's kernels, or NULL */
	uint32_t unseen_category;         /* GROVE_UNSEEN_* */
	const uint32_t *category_counts;  /* num_features counts, or NULL */
	const char *const *category_values;
} GroveArtifact;

/* GroveArtifact.unseen_category */
#define GROVE_UNSEEN_MISSING 0u
#define GROVE_UNSEEN_REFUSED 1u

/* Version 5: no category values. */
typedef struct GroveArtifactV5 {
	uint32_t magic;             /* GROVE_ARTIFACT_MAGIC */
	uint32_t version;           /* 5 */
	uint32_t num_features;
	uint32_t num_outputs;
	uint32_t num_margins;
	uint32_t transform;
	uint64_t workspace_fixed;
	uint64_t workspace_per_row;
	void (*predict)(const float *rows, int64_t nrows, float *out, int32_t flags, void *workspace);
	void (*predict_f64)(const double *rows, int64_t nrows, float *out, int32_t flags, void *workspace);
	uint32_t num_labels;
	const int64_t *label_ints;
	const char *const *label_strings;
	const char *const *feature_names;
	const GroveDevice *device;
} GroveArtifactV5;

/* Version 4: no device. */
typedef struct GroveArtifactV4 {
	uint32_t magic;             /* GROVE_ARTIFACT_MAGIC */
	uint32_t version;           /* 4 */
	uint32_t num_features;
	uint32_t num_outputs;
	uint32_t num_margins;
	uint32_t transform;
	uint64_t workspace_fixed;
	uint64_t workspace_per_row;
	void (*predict)(const float *rows, int64_t nrows, float *out, int32_t flags, void *workspace);
	void (*predict_f64)(const double *rows, int64_t nrows, float *out, int32_t flags, void *workspace);
	uint32_t num_labels;
	const int64_t *label_ints;
	const char *const *label_strings;
	const char *const *feature_names;
} GroveArtifactV4;

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
