/*
 * The compiler's pipeline, from a model file to an artifact, as one library call. The
 * command line (tools/grove.c) and the C entry point grove_compile_file (rt/grove_compile.h)
 * both go through it:
 *
 *   front_read_model -> schedule (the user's or hir_choose_schedule) -> [hir_pad] -> hir_pad_unrolled_walks
 *   -> lower_hir_to_mir -> mir_legalize_reductions -> mir_unroll_walks -> mir_interleave -> lower_mir_to_lir
 *   -> target_emit
 */
#ifndef GROVE_TARGET_COMPILE_H
#define GROVE_TARGET_COMPILE_H

#include "ir/hir.h"
#include "ir/lir.h"
#include "ir/mir.h"
#include "lower/lower.h"
#include "rt/grove_compile.h"
#include "target/target.h"

typedef enum Level { LEVEL_HIR, LEVEL_MIR, LEVEL_LIR } Level;

/* The IR of one model at every level built so far; once the LIR is built, only it is kept. */
typedef struct Compiled {
	HForest *hir;
	MModule *mir;
	LModule *lir;
	char notes[1024]; /* where the pipeline does other than the schedule's words say, a line each ("": nowhere) */
} Compiled;

/*
 * Rows and trees interleaved by default: enough independent walks to hide load latency.
 * Rows: 16 walks of one tree share its nodes in cache and its handle in a register
 * (in tiles of trees 16 rows walk faster than 8; measured: docs/performance-notes.md,
 * Rows side by side); trees of one row: 8, each with its own handle, to stay in
 * registers.
 */
#define DEFAULT_INTERLEAVE 16
#define DEFAULT_INTERLEAVE_TREES 8

/* Choices the pipeline leaves to the user. */
typedef struct PipelineOptions {
	const char *format;         /* the model's format, NULL = recognised from its contents */
	const char *limits;         /* "NAME=N,..." raising or lowering front_default_limits, or NULL */
	const char *representation; /* NULL = chosen per model */
	uint32_t interleave;        /* rows walked together */
	uint32_t interleave_trees;  /* trees walked together for one row */
	uint32_t tree_tile;         /* trees per tile, 0 = none, HIR_TILE_AUTO = chosen per model */
	const char *schedule_file;  /* a file in the scheduling language */
	const char *schedule_text;  /* the same inline */
	const char *sizes[HIR_MAX_SIZE_NAMES]; /* "NAME=VALUE" (-D): sizes the schedule's arguments may name, besides N_t,
	                               N_f (the features) and N_c (the outputs) */
	uint32_t num_sizes;
	const char *sizes_from;     /* what messages call them: "-D" where NULL, or the API's "sizes" */
	const char *dump_after;     /* "PASS,PASS": print the IR after these passes on standard error (or "all") */
	bool scheduled;             /* the forest has its schedule already: pipeline_lower keeps it */
	bool learned;               /* grove's own schedule improved by the cost model where it predicts a gain (--learned),
	                               from the heuristic's with the values of interleave, interleave_trees and tree_tile */
	bool gpu;                   /* lower to GPU kernels (lower_mir_to_gpu), for a GPU target */
	MTops vector_tops;          /* how the CPU's vectors take walks' tops (MModule.vector_tops; target_vector_tops) */
	PhaseTimer *timer;          /* reports each phase's time (grove compile --time), or NULL */
} PipelineOptions;

#define DEFAULT_PIPELINE {.interleave = DEFAULT_INTERLEAVE, .interleave_trees = DEFAULT_INTERLEAVE_TREES, .tree_tile = HIR_TILE_AUTO}

/* The name of the i-th pass -d can print the IR after, in pipeline order; NULL past the last. */
const char *pipeline_pass_name(size_t i);
/* The name of the i-th device --target names besides host triples ("gpusim", "cuda", "rocm"), NULL past the last. */
const char *pipeline_device_name(size_t i);
/* Whether list is a comma-separated list of pass names (or "all"); e names the first that is not. */
bool pipeline_check_passes(const char *list, Error *e);

/*
 * Run the pipeline on the model at path up to level stop into c (zeroed first;
 * compiled_free it either way). At LEVEL_LIR, c holds the LIR only: the HIR and the MIR
 * are freed once it is built.
 */
bool pipeline_run(const char *path, Level stop, const PipelineOptions *o, Compiled *c, Error *e);

/* The pipeline after the reader: c->hir (read from path) scheduled and lowered up to level stop (freed at LEVEL_LIR). */
bool pipeline_lower(const char *path, Level stop, const PipelineOptions *o, Compiled *c, Error *e);

/*
 * grove_compile_file (model_path) and grove_compile_forest (forest, which is copied) alike:
 * options checked, the pipeline run, the artifact emitted into out_path.
 */
GroveStatus pipeline_compile(const char *model_path, const HForest *forest, const char *out_path,
                             const GroveCompileOptions *options, GroveError *err);

/*
 * A target as the user writes it: gpusim, cuda[:ARCH] or rocm[:ARCH] set t's device
 * and architecture (and make p lower to kernels); anything else (or NULL: this host) is
 * a host triple, checked later by target_check.
 */
bool pipeline_target(const char *text, TargetOptions *t, PipelineOptions *p, Error *e);

/* Free what c holds. */
void compiled_free(Compiled *c);

#endif
