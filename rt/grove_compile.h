/*
 * libgrovec: compile a model into an artifact in-process, without running the grove
 * command. Link with -lgrovec (pkg-config grove-compiler); the artifact it writes is
 * loaded with libgrove (grove.h). The compiler uses LLVM and links x86-64 shared
 * libraries itself, as `grove compile` does (or with the compiler driver
 * $GROVE_LINKER names); AArch64 ones with aarch64-linux-gnu-gcc (or $GROVE_CC_AARCH64).
 *
 * Calls may run on several threads at once. The library never prints and never exits
 * on bad input: errors come back as a GroveStatus and a message in err. One exception:
 * when memory runs out while compiling, the compiler (unlike libgrove) ends the process
 * with status 1 and "grove: out of memory" on standard error, after removing its
 * temporary files.
 */
#ifndef GROVE_COMPILE_H
#define GROVE_COMPILE_H

#include "grove.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What `grove compile`'s options choose. Start from grove_compile_options_init. */
typedef struct GroveCompileOptions {
	const char *format;         /* as grove compile --format: "xgboost", "lightgbm", "onnx", ...; NULL = recognised */
	const char *schedule;       /* a schedule in the scheduling language (docs/schedules.md); NULL = grove chooses */
	const char *representation; /* as grove compile --representation: "array", "sparse", ...; NULL = chosen per model */
	const char *emit;           /* "so" (an artifact for grove_load; the default), "obj", "asm", "llvm" */
	const char *cpu;            /* "native" (the host's default), "x86-64", "x86-64-v3", "neoverse-n1", an LLVM CPU
	                               name of the target's architecture; NULL = native, or generic for another one */
	const char *target;         /* "x86_64-linux-gnu", "aarch64-linux-gnu" (or LLVM's spellings); NULL = this host;
	                               or a GPU: "cuda[:ARCH]", "rocm[:ARCH]" (ARCH as grove compile --help lists them),
	                               "gpusim" (libgrove's simulator): a shared library for this host holding the GPU code */
	const char *prefix;         /* symbol prefix of "obj" output; NULL = "grove_model" */
	int opt_level;              /* LLVM optimisation level 0-3 (default 3) */
	unsigned interleave;        /* rows walked together, 1-16 (default 16; without a schedule) */
	unsigned interleave_trees;  /* trees walked together where rows go one at a time, 1-16 (default 8) */
	unsigned tile_trees;        /* trees per tile for tiles of rows, 0 = never; default: chosen per model */
	const char *limits;         /* "features=N,outputs=N,trees=N,nodes=N" (any of them): the sizes of model
	                               accepted (docs/bad-input.md: Models); NULL = the defaults */
	const char *cache_dir;      /* the code cache's directory (docs/cli.md: Code cache); NULL = $GROVE_CACHE_DIR, else
	                               ~/.cache/grove; "" = none */
	const char *sizes;          /* "NAME=N,NAME=N": sizes the schedule's arguments may name besides N_t, N_f and N_c
	                               (as grove compile -D NAME=N; docs/schedules.md); NULL = none */
} GroveCompileOptions;

/* Fill o with the defaults (those of `grove compile` without options). */
void grove_compile_options_init(GroveCompileOptions *o);

/*
 * Compile the model file at model_path into out_path (written to a temporary file
 * beside it and renamed over it, so that a failed compile leaves out_path as it was).
 * options may be NULL for the defaults. GROVE_ERROR_IO: the model cannot be read or
 * the output not written; GROVE_ERROR_FORMAT: the model is malformed or of a kind grove
 * does not compile; GROVE_ERROR_ARGUMENT: a bad option or schedule.
 */
GroveStatus grove_compile_file(const char *model_path, const char *out_path, const GroveCompileOptions *options,
                               GroveError *err);

/*
 * Building a forest in memory, for front ends of other libraries (grove's Python
 * package reads scikit-learn's fitted trees through it). A tree is arrays of its nodes,
 * node 0 its root; a split sends a row left where x[feature] <= threshold, and a
 * missing x (NaN) where missing_left says. Build with grove_forest_new, add the trees
 * in the order their values are summed, compile with grove_compile_forest (as often as
 * wanted), free with grove_forest_free.
 */
typedef struct GroveForest GroveForest;

typedef struct GroveForestOptions {
	unsigned num_features;      /* columns of a row */
	unsigned num_outputs;       /* margins of a row: classes or targets */
	const char *transform;      /* what makes predictions of the margins: "identity" (NULL), "sigmoid", "softmax",
	                               "exp", "argmax", "isolation" (-2^-m), ... (HIR's transforms, docs/ir.md) */
	const double *base_score;   /* num_outputs values every row's margins start from; NULL = 0 */
	int average;                /* non-zero: a margin is base_score + the mean of the trees' values (a random
	                               forest), not their sum */
	int binary;                 /* non-zero, with one margin (and a transform of it alone: identity, sigmoid, ...):
	                               two predictions a row, [1 - p, p] */
	int double_thresholds;      /* non-zero: thresholds and leaves are compared and summed in double; else float */
	int rows_float;             /* non-zero: rows are rounded to float32 before they are compared (scikit-learn's
	                               cast), doubles given to grove_predict_f64 too */
	const char *category_rule;  /* how a category split reads x: "exact" (NULL: x is category c where it is the
	                               integer c >= 0, else none), "nonnegative" (x truncated; none below 0),
	                               "truncate" (x truncated toward 0; none below 0 after) */
} GroveForestOptions;

typedef struct GroveTreeArrays {
	unsigned num_nodes;
	const long long *left, *right; /* node i's children (node indices); left[i] < 0 on a leaf */
	const long long *feature;      /* the column node i tests (splits only) */
	const double *threshold;       /* its threshold: x <= threshold goes left (splits only) */
	const unsigned char *missing_left; /* non-zero: NaN goes left at node i; NULL: NaN goes right everywhere */
	const double *value;           /* node i's values at value[i * width .. i * width + width) (leaves only) */
	const long long *category_set; /* NULL, or per node: -1, or the index of a set (grove_forest_add_set): the
	                                  split sends a row left where x's category is in it (threshold unused;
	                                  NaN as missing_left says; a row of no category, right) */
	unsigned output;               /* the first margin the tree adds to */
	unsigned width;                /* how many margins its leaves add to, from output (0 means 1) */
} GroveTreeArrays;

/* A new empty forest, or NULL with err filled (GROVE_ERROR_ARGUMENT: bad options). */
GroveForest *grove_forest_new(const GroveForestOptions *options, GroveError *err);

/*
 * Add a category set: category c is in it where bit c % 32 of words[c / 32] is 1 (none
 * past its words). Its index, for GroveTreeArrays.category_set, goes to *index.
 */
GroveStatus grove_forest_add_set(GroveForest *forest, const unsigned *words, unsigned num_words, long long *index,
                                 GroveError *err);

/*
 * Add a tree, copied from its arrays. GROVE_ERROR_FORMAT, naming the node: a child out
 * of range or reached twice, a node no path reaches, a feature out of range, a value
 * that is not finite.
 */
GroveStatus grove_forest_add_tree(GroveForest *forest, const GroveTreeArrays *tree, GroveError *err);

/* Compile the forest into out_path as grove_compile_file compiles a model file (the format option is unused). */
GroveStatus grove_compile_forest(const GroveForest *forest, const char *out_path, const GroveCompileOptions *options,
                                 GroveError *err);

void grove_forest_free(GroveForest *forest);

#ifdef __cplusplus
}
#endif

#endif
