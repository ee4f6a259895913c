/* What grove tune's CPU search (tools/tune.c) and its GPU search (tools/tune_gpu.c) share. */
#ifndef GROVE_TOOLS_TUNE_H
#define GROVE_TOOLS_TUNE_H

#include "lower/cost.h"
#include "rt/grove.h"
#include "target/compile.h"
#include "target/target.h"

#include <stdio.h>

typedef struct Tuner {
	const char *model, *log_path, *output;
	PipelineOptions options;
	TargetOptions target;      /* what is tuned for: this host, or a GPU (device and arch) */
	char target_name[64];      /* "host", "gpusim", "cuda:sm_80", ... (the log's target column) */
	const HForest *forest;     /* as read, mirrored margins folded as compile folds them; never scheduled */
	CostForest shape;          /* its features for the cost model */
	CostMachine machine;       /* the batch, threads and this CPU, as the cost model reads them */
	CostSpace space;           /* the schedules the CPU search turns */
	size_t batch, pool_rows, features;
	float *pool;               /* pool_rows rows */
	float *out;
	char *dir;                 /* a temporary directory for the artifacts (cli_temporary_directory) */
	char cpu[128];
	struct Candidate *candidates; /* the CPU search's (tools/tune.c) */
	uint32_t num;
	double start, budget;
	bool verbose, progress, explore;
	bool estimate;             /* --estimate: a GPU timed on also has each candidate estimated (tune_gpu.c) */
	FILE *log;
} Tuner;

/* Seconds per row of model at the tuner's batch size: the median of a few samples, each cycling through the pool. */
double tune_time_model(Tuner *t, const GroveModel *model);
/*
 * Append a line to the log (none where there is no log): the model's shape, the batch,
 * the target, device and representation; the CPU's knobs (NULL on a GPU's line) or
 * gpu, the GPU's columns (NULL on a CPU's); judged, the columns from basis to compile_s;
 * and the cost model's features of the CPU's knobs.
 */
void tune_log_line(Tuner *t, const char *device, const char *representation, const HScheduleKnobs *cpu,
                   const char *gpu, const char *judged);
/* Write schedule s to path (atomically), under the comment line `comment`. */
void tune_write_schedule(const HSchedule *s, const char *comment, const char *path);
/* grove tune --target gpusim|cuda|rocm: search SilvanForge's template schedules (tools/tune_gpu.c). */
void tune_gpu(Tuner *t);

#endif
