/*
 * Passes and lowerings. The pipeline (tools/grove.c) is:
 *
 *   model file --front--> HIR --lower_hir_to_mir(rep)--> MIR --lower_mir_to_lir--> LIR --target--> artifact
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
/*
 * HIR: pad trees [first, end) so that no leaf is shallower than depth (the others are kept
 * as they are), unless the forest would then have more than max_nodes nodes: then f is
 * left as it was and the return is the number it would have had (else 0).
 */
uint64_t hir_pad_trees(HForest *f, uint32_t first, uint32_t end, uint32_t depth, uint64_t max_nodes);
/*
 * HIR pass: for each loop v with unrollWalk(v, d), pad the trees v's walks reach so that no
 * leaf is shallower than d (or their deepest leaf). False (e says which directive) where
 * that would grow the forest past PAD_MAX_GROWTH times its nodes and PAD_MAX_NODES.
 */
bool hir_pad_unrolled_walks(HForest *f, Error *e);
/* Padding may grow a forest to this many times its nodes, or to PAD_MAX_NODES (640 MiB of HIR nodes), whichever is more. */
#define PAD_MAX_GROWTH 64
#define PAD_MAX_NODES (1u << 24)
/*
 * HIR: the forest that float rows walk, a copy of f that decides as f does: a forest
 * that compares in double gets float thresholds (each the float nearest its threshold
 * on the side its comparison needs), and its comparisons take the forms x86 decides
 * from one flag (<= and >= where every split sends NaN right, < and > where every one
 * sends it left, else < and >=) against the neighbouring float, where every split
 * can (lower/hir_narrow.c). NULL where f is that forest already, or
 * where an == or != threshold has no float twin. Leaves keep their type.
 */
HForest *hir_float_forest(const HForest *f);
/*
 * HIR pass: f's splits rewritten in place to those forms against the neighbouring value
 * of f's threshold type: a float forest as hir_float_forest would rewrite a copy (so that
 * lowering walks the forest itself, without the time a large forest's copy takes;
 * measured: docs/performance-notes.md, Comparison forms), a double forest for the double
 * entry's walk (its float twin is the same either way). The compile pipeline runs it for
 * CPU targets. False where f has none to rewrite, or some split cannot be (f is then as
 * it was).
 */
bool hir_float_forms(HForest *f);
/*
 * How double rows of a forest that compares in double become float keys on which its
 * float twin decides exactly as it decides on the rows (lower/convert_rows.c).
 */
typedef struct NarrowCuts NarrowCuts;
/* f's narrowing; NULL where f compares floats, or some of its decisions are not narrowed exactly. */
NarrowCuts *lower_narrowing(const HForest *f);
void lower_narrowing_free(NarrowCuts *t);
/* The key of x of feature `feature` under t, as predict_f64 narrows it. */
float lower_narrow_key(const NarrowCuts *t, int32_t feature, double x);
/* The comparisons (1 << HCompare) whose compare alone sends NaN left (< and >), or right (<= and >=), as x86 reads it off one flag. */
unsigned lower_nan_deciding_forms(bool nan_left);
/*
 * HIR pass: a two-class forest whose every leaf adds [-v, v] and whose base values are
 * [-b, b] keeps one margin, the other its negation (HBINARY_MIRROR), with the same
 * predictions, margins and labels. False where f is not such a forest (f unchanged).
 */
bool hir_fold_mirrored_margins(HForest *f);
/* HIR pass: tile f's trees, tiles of at most size splits grown from their roots as tiling says (tileTrees(tiling, size)). */
void hir_tile_trees(HForest *f, uint32_t size, HTiling tiling);
/* HIR pass: sort f's trees by depth, shallowest first, keeping the model's order among trees of one depth (sortTrees(depth)). */
void hir_sort_trees(HForest *f);
/* f's tree depths sorted as hir_sort_trees sorts the trees (num_trees entries, the caller frees them). */
uint32_t *hir_sorted_depths(const HForest *f);
/* Analysis: the number of nodes f would have after hir_pad. */
uint64_t hir_padded_nodes(const HForest *f);
/* Analysis: the nodes f has after padding every tree to depth. */
uint64_t hir_nodes_padded_to(const HForest *f, uint32_t depth);

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
	uint8_t peel;       /* steps peeled off the walks (peelWalk), 0 = none; rows side by side may take fewer (rows_peel) */
	uint8_t representation; /* 0: none named (the lowering chooses); r + 1: lower_representation_name(r) (representation) */
	uint8_t depth_groups; /* at most this many groups of trees of similar depth, each unrolled to its own depth (0, 1: none) */
	uint8_t tile_trees;   /* tiles of this many splits a walk step (tileTrees, walked by tiled or tiled_array), 0 = none */
	uint8_t cache_rows;   /* each iteration of the outermost row loop copies its rows to the stack (cache), where they fit */
	uint8_t cache_trees;  /* each iteration of the outermost tree loop prefetches the next one's trees (cache), where tiled */
	uint8_t few_trees;    /* batches of fewer than few_rows rows walk a row at a time, this many trees side by side */
	uint8_t few_rows;     /*   (few_trees 0: as larger ones; 1: one tree at a time, untiled); few_rows at most `rows` */
} HScheduleKnobs;

/* The knobs of HScheduleKnobs, one description (lower/hir_knobs.c): names, values, the log's columns, the cost model's features. */
typedef enum HKnobId {
	HKNOB_ROWS, HKNOB_TREES, HKNOB_TREE_TILE, HKNOB_ROW_TILE, HKNOB_PARALLEL, HKNOB_UNROLL, HKNOB_PEEL,
	HKNOB_REPRESENTATION, HKNOB_DEPTH_GROUPS, HKNOB_TILE_TREES, HKNOB_CACHE_ROWS, HKNOB_CACHE_TREES, HKNOB_FEW_TREES,
	HKNOB_FEW_ROWS, HKNOB_COUNT
} HKnobId;
typedef enum HKnobKind { HKNOB_NUMBER, HKNOB_PARALLEL_NAME, HKNOB_REPRESENTATION_NAME } HKnobKind;
typedef struct HKnob {
	const char *name; /* the field's name: hir_knobs_describe's word, grove tune's log column, a cost model feature */
	size_t offset;    /* in HScheduleKnobs */
	uint8_t size;     /* 1 or 4 bytes */
	uint8_t kind;     /* HKnobKind: how it is written (a number, hir_parallel_names, lower_representation_name) */
} HKnob;
extern const HKnob hir_knobs[HKNOB_COUNT];
uint32_t hir_knob_get(const HScheduleKnobs *k, HKnobId i);
void hir_knob_set(HScheduleKnobs *k, HKnobId i, uint32_t v);
/* k with the knobs that choose nothing zeroed: row_tile without tree tiles, few_rows without few_trees, one depth group. */
void hir_knobs_normal(HScheduleKnobs *k);
/* Whether a and b write one schedule (equal in normal form). */
bool hir_knobs_same(const HScheduleKnobs *a, const HScheduleKnobs *b);
/* Knob i of k as text ("8", "rows", "code", "auto" for no representation named) into buf, as snprintf. */
int hir_knob_value(const HScheduleKnobs *k, HKnobId i, char *buf, size_t size);

/*
 * cache(v) of a batch loop on the host copies an iteration's rows to the thread's stack:
 * at most this many bytes (16 rows of 4096 floats). grove's own schedule caches rows of
 * at least HIR_CACHE_ROW_BYTES, whose walks read them in no order the hardware's
 * prefetcher follows (see lower_rows.c: lower_copy_rows).
 */
#define LOWER_ROW_CACHE_BYTES (256u << 10)
#define HIR_CACHE_ROW_BYTES 1024u
/* Whether k's outermost row loop holds more than one row and their copy (of f's widest rows) fits in LOWER_ROW_CACHE_BYTES. */
bool hir_rows_cache_fits(const HForest *f, const HScheduleKnobs *k);
/* Whether k's outermost tree loop is a tile of trees that rows walk in blocks (no code), which cache_trees marks. */
bool hir_trees_cache_applies(const HForest *f, const HScheduleKnobs *k);

/* Depth groups: at most this many. */
#define HIR_MAX_DEPTH_GROUPS 4
/*
 * Where the depth groups of f's trees end, sorted by depth (sortTrees): at most `groups`
 * groups, each ending at a multiple of `unit` trees (the step of the loop split into
 * them) or at the last tree, chosen to take the fewest walk steps when each group's
 * walks take as many as its deepest tree. Writes the ends into ends (an end is one past
 * a group's last tree); returns how many groups (1: grouping saves nothing).
 */
uint32_t hir_depth_groups(const HForest *f, uint32_t groups, uint32_t unit, uint32_t *ends);
/*
 * Analysis: the walk steps and the nodes of the n depth groups ending at ends, each padded
 * to its deepest tree, into *steps and *nodes, and the deepest tree's depth into *deepest;
 * false where grouping cannot apply (fewer than two groups, or trees deeper than 16).
 */
bool hir_depth_groups_size(const HForest *f, const uint32_t *ends, uint32_t n, uint64_t *steps, uint64_t *nodes,
                           uint32_t *deepest);

/* Rows whose walks read their keys in tiles (BlockScope.key_tiles): 16 keys of i32, a 512-bit vector. */
#define TOP_LANES 16
/* Rows whose walks of symmetric trees read bins (RepLayout.byte_tops): a byte each, AVX2's 256-bit vector. */
#define BYTE_TOP_LANES 32
/* The most leaves of a tree whose rows walk by leaf masks (lower/rep_masks.c): a bit each in an i32 lane. */
#define LOWER_MASK_LEAVES 32

/*
 * The heuristic: rows walking every tree for models that fit in cache, row tiles
 * walking tiles of trees for the others. tree_tile: trees per tile, 0 for no tiling,
 * HIR_TILE_AUTO to choose; rows, trees: as in HScheduleKnobs. named: the representation
 * the user named, or NULL for the heuristic's choice, where forests small enough to
 * compile into code (HIR_CODE_SPLITS) take the code representation. Code, named or
 * chosen, walks tiles of rows over tiles of trees, its tree loops specialized. tops:
 * how the target's vectors take 16 rows (MModule.vector_tops; MTOPS_NONE: none or not
 * known), which decides where leaf masks walk trees of few leaves rather than code.
 */
void hir_choose_knobs(const HForest *f, uint32_t tree_tile, uint32_t rows, uint32_t trees, const char *named,
                      MTops tops, HScheduleKnobs *k);
/*
 * Forests of at most this many splits are compiled into code by the heuristic: several
 * times faster than array on the fixtures of 146-440 splits, and they compile faster
 * too. Past it, code's compile grows with every split, to seconds for large forests, and
 * code walks random rows slower than array (measured: docs/performance-notes.md, Code or
 * array).
 */
#define HIR_CODE_SPLITS 512
/*
 * Forests with category sets (LightGBM's categorical features) of at most this many
 * splits are compiled into code too: a walk over memory pays every comparison kind and
 * the set's word at each step, where code makes each split's own test against
 * immediates, and is several times slower at every batch. LLVM's time on code grows
 * with the splits (linearly: LOWER_CODE_FUNCTION_SPLITS); the bound takes a thousand
 * trees of LightGBM's default 31 leaves and stops before compiles of minutes.
 */
#define HIR_CODE_CATEGORY_SPLITS 32768
/*
 * Rows side by side in the code schedules grove writes (rows interleaved under the code
 * representation walk trees of at most 64 leaves in vectors, every split for all of them
 * at once): 8, a vector of floats in AVX2's registers. The heuristic writes it for forests
 * of at most HIR_CODE_LANES_SPLITS splits: one row pays a whole vector, and past that
 * arrays compile faster than code; grove tune tries it for any.
 */
#define HIR_CODE_LANES 8
#define HIR_CODE_LANES_SPLITS 4096
/*
 * The most splits of code one function may hold (a representation that compiles trees
 * into code, all its walks there together): LLVM's time on such code grows faster than
 * its size within a function (its register allocator's), linearly across functions,
 * which compile in parallel. Each iteration of a specialized tree loop around a loop
 * over rows compiles as a function of its own (its tile of trees walked over the rows),
 * so that a forest past this size compiles tile by tile; the heuristic's tiles of trees
 * keep under it.
 */
#define LOWER_CODE_FUNCTION_SPLITS 2048
/* The most leaves of a tree that code walks by masks (rows side by side, or branchfree's walks): a bit each in an i64. */
#define LOWER_CODE_MASK_LEAVES 64
/* Write k's schedule into f->schedule as directives; fails (e says why) where they do not apply to f. */
bool hir_apply_knobs(HForest *f, const HScheduleKnobs *k, Error *e);
/*
 * HIR: give f the heuristic's schedule (hir_choose_knobs, then hir_apply_knobs); fails (e
 * says why) only where the representation named cannot take it (code for more trees
 * than specialize copies).
 */
bool hir_choose_schedule(HForest *f, uint32_t tree_tile, uint32_t rows, uint32_t trees, const char *named, MTops tops,
                         Error *e);
/*
 * SilvanForge's template GPU schedule (its Table 5; lower/hir_choose_schedule.c shows
 * the directives): a block of threads takes rows_per_block rows, each thread
 * rows_per_thread of them one after another, and tree_threads threads of the block
 * split the trees, their sums folded per row. One point of the space.
 */
typedef struct HGpuKnobs {
	uint32_t rows_per_block;  /* hir_gpu_rows_per_block: 8, 32, 64 */
	uint32_t rows_per_thread; /* hir_gpu_rows_per_thread: 1, 2, 4 */
	uint32_t tree_threads;    /* hir_gpu_tree_threads: 2, 10, 20, 50 (fewer for forests of fewer trees) */
	uint32_t interleave;      /* hir_gpu_interleave: trees one thread walks side by side, 1, 2, 4 */
	uint8_t cache_rows;       /* the block's rows copied into shared memory (cache) */
	uint8_t cache_trees;      /* each tree thread's trees copied into shared memory (cache) */
	uint8_t unroll;           /* walks unrolled to the forest's depth (unrollWalk) */
	uint8_t shared_reduce;    /* the tree threads' sums in shared memory (sharedReduce), else in global memory */
	uint8_t representation;   /* lower_representation_name(representation) */
} HGpuKnobs;

/* Table 5's values of each numeric knob, 0-terminated. */
extern const uint32_t hir_gpu_rows_per_block[], hir_gpu_rows_per_thread[], hir_gpu_tree_threads[], hir_gpu_interleave[];

/* What the GPU heuristic prunes by: the prediction's batch size and the forest's shape. */
typedef struct HGpuShape {
	size_t batch;
	uint32_t features, trees, outputs, depth;
	uint64_t splits;                  /* the forest's, which code holds in one kernel up to LOWER_CODE_FUNCTION_SPLITS */
	uint32_t row_bytes, margin_bytes; /* 4 or 8: a feature's and a margin's size in shared memory */
	bool unroll_pays;                 /* padding the trees to their depth for unrolled walks costs little memory */
} HGpuShape;

/* The batch size grove compile --target cuda|rocm|gpusim assumes when it writes the schedule itself. */
#define HIR_GPU_DEFAULT_BATCH 4096

/* The shape of predicting batch rows at a time with forest f. */
/* Elements from one row to the next in a GPU block's copy of its rows (cache): odd, so a warp reading one feature of
 * consecutive rows meets no bank twice (lower/mir_to_gpu.c, gpu_cache). */
uint32_t gpu_row_stride(uint32_t features);
void hir_gpu_shape(const HForest *f, size_t batch, HGpuShape *s);
/* Whether k's schedule can run on a GPU for shape s (threads per block, shared memory); e says why not. */
bool hir_gpu_knobs_check(const HGpuShape *s, const HGpuKnobs *k, Error *e);
/*
 * SilvanForge's pruning heuristic (its Algorithm 1): the template schedules worth
 * evaluating for shape s, in the order the heuristic prefers them (the first is
 * grove's default), without shared reduction (tried later on the best three). Writes
 * at most max into out; returns how many there are.
 */
uint32_t hir_gpu_candidates(const HGpuShape *s, HGpuKnobs *out, uint32_t max);
/* Write k's schedule into f->schedule as directives; fails (e says why) where they do not apply to f. */
bool hir_apply_gpu_knobs(HForest *f, const HGpuKnobs *k, Error *e);
/*
 * HIR: give f the GPU's default schedule: the heuristic's first candidate at
 * HIR_GPU_DEFAULT_BATCH rows for representation `named` (NULL: any; a small shallow
 * forest's trees as code, else trees in memory, below a batch size with a row's trees
 * over more threads: splitSize), or, where none fits, a thread per row in blocks of rows.
 */
void hir_choose_gpu_schedule(HForest *f, const char *named);
/* "rows/block 32 rows/thread 1 tree threads 10 ..." into buf, as snprintf. */
int hir_gpu_knobs_describe(const HGpuKnobs *k, char *buf, size_t size);
/* "rows 8 trees 8 tree_tile 0 ..." (every knob in normal form) into buf, as snprintf. */
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
#define MIR_MAX_INTERLEAVE 32
/*
 * The most walks the heuristic and grove tune interleave, and code walks take in vectors:
 * a walk of more chains of steps than x86's 16 registers spills. (Symmetric trees' walks
 * of bytes take 32 rows: RepLayout.byte_tops.)
 */
#define MIR_WALK_LANES 16
/* MIR pass: interleave the walks of the loops the schedule marks interleave(v), all v's iterations together. */
void mir_interleave(MModule *m);

/*
 * MIR pass: wrap the walks of each group of rows (the rows one iteration of the
 * innermost batch loop around them covers) in ifComplete, so that rows without a
 * missing value take walks without missing-value tests.
 */
void mir_version_complete(MModule *m);
/*
 * What each ifComplete's block makes of its rows before its walks, and whether NaN may
 * read as 0 (MInst.block, MModule.nan_as_zero; lower/mir_plan_blocks.c), for the host or
 * a GPU; after mir_version_complete, with MModule.vector_tops set.
 */
void mir_plan_blocks(MModule *m, bool gpu);
/*
 * After mir_plan_blocks on the host: the rows of the largest bounded block it planned
 * without keys though the representation keeps a key copy (its keys would not fit the
 * stack, so its rows walk as floats; 0: none), with the keys a row would have in *columns.
 */
int64_t mir_keyless_block(const MModule *m, uint32_t *columns);

/*
 * Lower a verified forest to MIR under its schedule, with the representation the
 * schedule names (representation(r)), which must agree with representation where that
 * is not NULL; else representation; else tiled where the schedule tiles trees; else
 * the one the forest's shape asks for (MModule.representation). Returns NULL and fills
 * e if the schedule cannot be lowered.
 */
MModule *lower_hir_to_mir(const HForest *f, const char *representation, Error *e);

/* The name of the i-th representation lower_hir_to_mir accepts ("array", ...; lower/rep.c's table), NULL past the last. */
const char *lower_representation_name(size_t i);
/* The i whose lower_representation_name is name; the table's length (a NULL name) where none is. (lower/hir_knobs.c) */
size_t lower_representation_index(const char *name);
/*
 * What the schedules grove writes need to know of representation
 * lower_representation_name(i) (0 past the last): LREP_CODE, its trees are code (the
 * tree loops specialized); LREP_TILES, it walks tileTrees' tiles (the tile knob reaches
 * it); LREP_BLOCKS, it walks blocks of trees interleaved for one row (walk_trees);
 * LREP_LEVELS, a step reads its level's split, so walks are unrolled to the depth (levels);
 * LREP_NAMED, taken only where named, never searched (named_only).
 */
enum { LREP_CODE = 1, LREP_TILES = 2, LREP_BLOCKS = 4, LREP_LEVELS = 8, LREP_NAMED = 16 };
unsigned lower_representation_traits(uint32_t i);
/* The same of the representation named name (0 for an unknown name or NULL). */
unsigned lower_representation_named_traits(const char *name);

/*
 * Lower MIR to LIR laying the model out with the module's representation. The lowering
 * reads no schedule: an error about a loop or its directive says which in Error.place,
 * for the caller to name where the schedule has it (as lower_mir_to_gpu).
 */
LModule *lower_mir_to_lir(const MModule *m, Error *e);
/*
 * Lower MIR to a GPU module (LModule.gpu): kernels whose threads share out the loops
 * mapped with gpuDimension (see lower/mir_to_gpu.c). Fails, with a message
 * naming the directive, for schedules a GPU cannot run as written.
 */
LModule *lower_mir_to_gpu(const MModule *m, Error *e);

#endif
