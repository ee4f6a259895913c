/*
 * Passes and lowerings. The pipeline (tools/grove.c) is:
 *
 *   model file --front--> HIR --lower_hir_to_mir--> MIR --lower_mir_to_lir(rep)--> LIR --target--> artifact
 *
 * Representations decide how the forest is laid out in memory; the MIR -> LIR
 * lowering reaches the layout only through the LRepresentation interface (rep.h).
 */
#ifndef GROVE_LOWER_LOWER_H
#define GROVE_LOWER_LOWER_H

#include "ir/hir.h"
#include "ir/lir.h"
#include "ir/mir.h"

/* HIR pass: pad every tree so that all leaves sit at the forest's largest depth (new splits send both ways to copies of the leaf). */
void hir_pad(HForest *f);
/* HIR: pad trees [first, end) so that no leaf is shallower than depth (the others are kept as they are). */
void hir_pad_trees(HForest *f, uint32_t first, uint32_t end, uint32_t depth);
/* HIR pass: for each loop v with unrollWalk(v, d), pad the trees v's walks reach so that no leaf is shallower than d (or their deepest leaf). */
void hir_pad_unrolled_walks(HForest *f);
/* Analysis: the number of nodes f would have after hir_pad. */
uint64_t hir_padded_nodes(const HForest *f);
/* Whether padding f pays: it lets walks run without leaf tests at a bounded memory cost. */
bool lower_padding_pays(const HForest *f);

/* hir_choose_schedule's tree_tile when the choice is left to it. */
#define HIR_TILE_AUTO UINT32_MAX

/* Which loop of a schedule grove writes runs on all cores. */
typedef enum HParallel { HPARALLEL_ROWS, HPARALLEL_TREES, HPARALLEL_NONE, HPARALLEL_COUNT } HParallel;
extern const char *const hir_parallel_names[]; /* "rows", "trees", "none" */

/*
 * The family of schedules grove writes itself (lower/hir_choose_schedule.c shows their
 * directives): the heuristic picks one, `grove tune` searches them.
 */
typedef struct HScheduleKnobs {
	uint32_t rows;      /* rows whose walks are interleaved (1 = none), at most MIR_MAX_INTERLEAVE */
	uint32_t trees;     /* trees interleaved where rows go one at a time (1 = none), at most MIR_MAX_INTERLEAVE */
	uint32_t tree_tile; /* 0: every row walks every tree; else tiles of row_tile rows walk tiles of tree_tile trees */
	uint32_t row_tile;
	uint8_t parallel;   /* HParallel */
	uint8_t unroll;     /* walks unrolled to the forest's depth (unrollWalk) */
	uint8_t peel;       /* steps peeled off the walks (peelWalk), 0 = none */
} HScheduleKnobs;

/*
 * The heuristic: rows walking every tree for models that fit in cache, row tiles
 * walking tiles of trees for the others. tree_tile: trees per tile, 0 for no tiling,
 * HIR_TILE_AUTO to choose; rows, trees: as in HScheduleKnobs.
 */
void hir_choose_knobs(const HForest *f, uint32_t tree_tile, uint32_t rows, uint32_t trees, HScheduleKnobs *k);
/* Write k's schedule into f->schedule as directives; fails (e says why) where they do not apply to f. */
bool hir_apply_knobs(HForest *f, const HScheduleKnobs *k, Error *e);
/* HIR: give f the heuristic's schedule (hir_choose_knobs, then hir_apply_knobs). */
void hir_choose_schedule(HForest *f, uint32_t tree_tile, uint32_t rows, uint32_t trees);
/* HIR: give f the GPU's default schedule: blocks of rows, a thread per row. */
void hir_choose_gpu_schedule(HForest *f);
/* HIR: give f the GPU's default schedule: blocks of rows, a thread per row. */
void hir_choose_gpu_schedule(HForest *f);
/* "rows 8 trees 8 tree_tile 0 ..." into buf, as snprintf. */
int hir_knobs_describe(const HScheduleKnobs *k, char *buf, size_t size);

/*
 * MIR pass: make every reduction under a parallel loop safe. A reduction into a buffer
 * conflicts with a parallel loop inside the buffer's scope whose variable its index
 * does not include (iterations of that loop add into the same element). Unless the
 * loop is marked atomicReduce, the buffer is privatised along the loop: one zeroed copy
 * per iteration, declared before the loop, folded into the buffer by a
 * reduceDimension after it (vectorReduce(i, w): w elements at a time). With
 * atomicReduce the reduction adds atomically into the one buffer instead. Fails, with
 * a message naming the loop, where a buffer would need a copy per iteration of a
 * parallel loop that the workspace cannot give (a buffer of all N rows inside it).
 */
bool mir_legalize_reductions(MModule *m, Error *e);

/*
 * MIR pass: set each walk's straight-line steps from the innermost loop around it:
 * peelWalk(v, n) and unrollWalk(v, d) take n (d) steps; other walks the steps no leaf
 * of the trees they reach can end. A walk whose steps reach every leaf of its trees
 * needs no loop after them (exact).
 */
void mir_unroll_walks(MModule *m);

/* The most rows or trees interleave(v) runs together (hir_schedule_check holds schedules to it). */
#define MIR_MAX_INTERLEAVE 16
/* MIR pass: interleave the walks of the loops the schedule marks interleave(v), all v's iterations together. */
void mir_interleave(MModule *m);

/*
 * MIR pass: wrap the walks of each group of rows (the rows one iteration of the
 * innermost batch loop around them covers) in ifComplete, so that rows without a
 * missing value take walks without missing-value tests.
 */
void mir_version_complete(MModule *m);

/* Lower a verified forest to MIR under its schedule. Returns NULL and fills e if the schedule cannot be lowered. */
MModule *lower_hir_to_mir(const HForest *f, Error *e);

/* Names the representations lower_mir_to_lir accepts ("array", ...), NULL-terminated. */
extern const char *const lower_representation_names[];

/* Lower MIR to LIR laying the model out with the named representation (NULL = default). */
LModule *lower_mir_to_lir(const MModule *m, const char *representation, Error *e);
/*
 * Lower MIR to a GPU module (LModule.gpu): kernels whose threads share out the loops
 * mapped with gpuDimension (see "Kernels" in mir_to_lir.c). Fails, with a message
 * naming the directive, for schedules a GPU cannot run as written.
 */
LModule *lower_mir_to_gpu(const MModule *m, const char *representation, Error *e);

#endif
