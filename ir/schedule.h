/*
 * The schedule: how the batch x tree iteration space is walked, as data.
 *
 * Two root index variables, `batch` (rows) and `tree`, and variables derived from them
 * by directives (SilvanForge's scheduling language, ../shared/seeds/001_*.txt §3).
 * Every variable keeps its lineage (parent, partner, kind), from which one function,
 * hir_schedule_range, computes the range of its loop. The loops themselves form a tree
 * (loop_parent / first_child / next_sibling): a loop's children are the loops directly
 * inside it, and the innermost loops hold the tree walk. `split` makes two sibling
 * loops; the loops that were nested inside the split loop are copied under each half,
 * the copies named `HALF.NAME` (split(tree, t0, t1, 50) over `tree { b1 }` gives
 * `t0 { t0.b1 }` and `t1 { t1.b1 }`).
 *
 * The text form has one directive per line (or `;` between directives), `#` comments
 * and blank lines:
 *
 *   tile(batch, b0, b1, 64)      tile(i, outer, inner, size)
 *   split(tree, t0, t1, 50)      split(i, first, second, at): iterations [0, at) and [at, end)
 *   splitSize(batch, few, many, 16)  the loop runs as `few` when it has fewer than 16 iterations, else as `many`
 *                                (a schedule for small batches beside one for large)
 *   reorder(b0, tree, b1)        permute perfectly nested loops, outermost first
 *   parallel(b0)                 iterations may run concurrently
 *   cache(b1)                    the working set of one iteration at hand: on a CPU, rows copied, trees
 *                                prefetched; on a GPU, both copied to shared memory
 *   cache(b1, prefetch)          CPU: prefetched (the papers' CPU meaning), rows too
 *   interleave(t1)               the walks of all iterations of a loop with a constant trip count run side
 *                                by side: an innermost loop, or a batch loop holding only tree loops
 *   unrollWalk(t1, 8)            walks take 8 steps without leaf tests (trees padded so no leaf is shallower)
 *   peelWalk(t1, 3)              walks take (at least) their first 3 steps in straight-line code
 *   specialize(t0)               one copy of the body per iteration (constant trip count)
 *   unroll(t0)                   the papers' name for the same: the loop unrolled completely
 *   atomicReduce(tree)           parallel iterations of `tree` add into one target with atomics
 *   vectorReduce(tree, 8)        the privatised copies of `tree` are folded with 8-wide vector adds
 *   sharedReduce(tree)           GPU: keep the privatised copies in shared memory (else in global memory)
 *   gpuDimension(b0, grid.x)     GPU: map a loop to a grid or block dimension
 *   representation(code)         how the trees are laid out (lower/rep.h names them; the lowering checks
 *                                the name): a schedule written for one layout carries it
 *   sortTrees(depth)             the tree loops see the trees sorted by depth, shallowest first (stable), so
 *                                that split makes depth groups whose unrollWalk pads each to its own depth;
 *                                trees are then padded only as unrollWalk says, never the whole forest
 *   tileTrees(uniform, 4)        each step of a walk evaluates a tile of up to 4 splits with one vector compare
 *                                (Treebeard's tiling): tiles grown from their roots in level order, 1 to
 *                                HIR_MAX_TILE splits; walk steps (peelWalk, unrollWalk) then count tiles;
 *                                tileTrees(probability, 4) grows each tile by the split most training rows
 *                                reached (the model's node statistics), so that likely paths take fewer steps
 *
 * Each variable carries its directives and the source position of each one, so a
 * check made late (by a lowering, against the model) can name the directive.
 */
#ifndef GROVE_IR_SCHEDULE_H
#define GROVE_IR_SCHEDULE_H

#include <stdio.h>

#include "ir/common.h"

#define HIR_MAX_VARS 64
/* Loops over rows (or over trees) nested in one another: a row's index sums their variables. */
#define HIR_MAX_NESTED 8
#define HIR_MAX_DIRECTIVES 64
#define HIR_MAX_NAME 48
/* reorder takes at most this many loops */
#define HIR_MAX_ARGS 12
/* tileTrees takes tiles of at most this many splits (8 float lanes: one AVX register) */
#define HIR_MAX_TILE 8
/* Largest iteration count specialize may copy the body for. */
#define HIR_MAX_SPECIALIZE 1024
/* Deepest unrollWalk and peelWalk: trees are padded to this depth, 2^depth leaves each. */
#define HIR_MAX_WALK_STEPS 24

/*
 * Columns: name, text, number of variable-name arguments (-1: one or more), number of
 * integer arguments, how many of the names may be left out at the end (cache's mode).
 */
#define HIR_DIRECTIVES(X)                             \
	X(TILE, "tile", 3, 1, 0)                      \
	X(SPLIT, "split", 3, 1, 0)                    \
	X(SPLIT_SIZE, "splitSize", 3, 1, 0)           \
	X(REORDER, "reorder", -1, 0, 0)               \
	X(PARALLEL, "parallel", 1, 0, 0)              \
	X(CACHE, "cache", 2, 0, 1)                    \
	X(INTERLEAVE, "interleave", 1, 0, 0)          \
	X(UNROLL_WALK, "unrollWalk", 1, 1, 0)         \
	X(PEEL_WALK, "peelWalk", 1, 1, 0)             \
	X(SPECIALIZE, "specialize", 1, 0, 0)          \
	X(UNROLL, "unroll", 1, 0, 0)                  \
	X(ATOMIC_REDUCE, "atomicReduce", 1, 0, 0)     \
	X(VECTOR_REDUCE, "vectorReduce", 1, 1, 0)     \
	X(SHARED_REDUCE, "sharedReduce", 1, 0, 0)     \
	X(GPU_DIMENSION, "gpuDimension", 2, 0, 0)     \
	X(REPRESENTATION, "representation", 1, 0, 0)  \
	X(SORT_TREES, "sortTrees", 1, 0, 0)           \
	X(TILE_TREES, "tileTrees", 1, 1, 0)

typedef enum HDirectiveKind {
#define X(name, text, names, ints, optional) HDIR_##name,
	HIR_DIRECTIVES(X)
#undef X
	HDIR_COUNT
} HDirectiveKind;

/* GPU dimensions a loop can be mapped to (gpuDimension's second argument). */
#define HIR_GPU_DIMS(X) \
	X(NONE, "")         \
	X(GRID_X, "grid.x") X(GRID_Y, "grid.y") X(GRID_Z, "grid.z") \
	X(BLOCK_X, "block.x") X(BLOCK_Y, "block.y") X(BLOCK_Z, "block.z")

typedef enum HGpuDim {
#define X(name, text) HGPU_##name,
	HIR_GPU_DIMS(X)
#undef X
} HGpuDim;

/* How reductions carried by a parallel loop are made safe (see mir_legalize_reductions). */
typedef enum HReduce {
	HREDUCE_PRIVATE, /* privatise the target along the loop, fold it after the loop (default) */
	HREDUCE_ATOMIC,  /* one target, atomic adds */
	HREDUCE_VECTOR,  /* privatise; fold with vector_width-wide vector adds */
	HREDUCE_SHARED,  /* privatise in GPU shared memory */
} HReduce;

typedef struct HSourcePos {
	uint32_t line, column; /* 1-based; 0 = not from text (built through the C API) */
} HSourcePos;

/* How tileTrees grows a tile from its root (its first argument). */
typedef enum HTiling {
	HTILING_UNIFORM,     /* level order */
	HTILING_PROBABILITY, /* the split most training rows reached next (HNode.cover), level order among equals */
} HTiling;

/* The order in which tree loops see the trees (sortTrees' argument). */
typedef enum HTreeOrder {
	HORDER_MODEL, /* the model's (no sortTrees) */
	HORDER_DEPTH, /* by depth, shallowest first; trees of one depth in the model's order */
} HTreeOrder;

/* One directive as written: kind, its variable names and integers, and where it was. */
typedef struct HDirective {
	uint8_t kind;       /* HDirectiveKind */
	uint8_t num_names;
	char names[HIR_MAX_ARGS][HIR_MAX_NAME];
	int64_t value;      /* the integer argument (size, split point, depth, width) */
	HSourcePos pos;
} HDirective;

typedef enum HVarKind {
	HVAR_ROOT,         /* batch or tree */
	HVAR_TILE_OUTER,   /* tile(parent, outer, inner, size): the parent's range in steps of size * its step */
	HVAR_TILE_INNER,   /* offsets 0, step, ... within one step of the outer loop (partner) */
	HVAR_SPLIT_FIRST,  /* split(parent, first, second, at): the parent's first `at` iterations; by_size: */
	HVAR_SPLIT_SECOND, /* the parent's iterations from `at` on;   all of them where fewer than `at`, else none */
} HVarKind;

enum {
	HVAR_PARALLEL = 1 << 0,   /* parallel(v) */
	HVAR_CACHE = 1 << 1,      /* cache(v) */
	HVAR_INTERLEAVE = 1 << 2, /* interleave(v) */
	HVAR_SPECIALIZE = 1 << 3, /* specialize(v), or unroll(v) */
	HVAR_UNROLL = 1 << 4,     /* written as unroll(v) (HVAR_SPECIALIZE set too) */
	HVAR_PREFETCH = 1 << 5,   /* cache(v, prefetch) (HVAR_CACHE set too) */
};

typedef struct HIndexVar {
	char name[HIR_MAX_NAME];
	uint8_t kind;           /* HVarKind */
	uint8_t over_trees;     /* derived from `tree` (else from `batch`) */
	uint8_t gpu_dim;        /* HGpuDim */
	uint8_t reduce;         /* HReduce */
	uint16_t flags;         /* HVAR_* */
	uint16_t unroll_walk;   /* unrollWalk depth, 0 = none */
	uint16_t peel_walk;     /* peelWalk steps, 0 = none */
	uint16_t vector_width;  /* vectorReduce width */
	uint32_t size;          /* tile size, or split point (in iterations of the parent) */
	bool by_size;           /* a half of splitSize: the parent's iterations go to one half by how many they are */
	int32_t parent;         /* lineage: the variable this one was derived from (HIR_NONE for roots and copies' roots) */
	int32_t partner;        /* the other half of a tile or split */
	int32_t origin;         /* a copy made by split: the variable it copies, else HIR_NONE */
	/* The loop tree (HIR_NONE where absent). A variable that was tiled or split has no loop. */
	bool has_loop;
	int32_t loop_parent, first_child, next_sibling;
	/* Where each directive that concerns this variable was written (made: the one that created it). */
	HSourcePos made;
	HSourcePos at[HDIR_COUNT];
} HIndexVar;

/*
 * A name the size arguments of directives may use, as the papers write them (`N_t/2`,
 * `ROWS_PER_TB`): N_t, the trees, always; the others given by the caller before parsing
 * (the pipeline's N_f, the features, N_c, the outputs, and -D parameters).
 */
#define HIR_MAX_SIZE_NAMES 16
typedef struct HSizeName {
	char name[HIR_MAX_NAME];
	int64_t value;
} HSizeName;

typedef struct HSchedule {
	HIndexVar vars[HIR_MAX_VARS];
	uint32_t num_vars;
	int32_t first_loop;         /* outermost loops: the first of the top-level siblings */
	uint32_t num_trees;         /* the forest's, for ranges and checks */
	HDirective log[HIR_MAX_DIRECTIVES]; /* the directives applied, in order (what hir_schedule_print writes) */
	uint32_t num_log;
	char source[256];           /* file the directives came from, for messages ("" = none) */
	char representation[HIR_MAX_NAME]; /* representation(name), "" = none */
	HSourcePos representation_at;
	uint8_t tree_order;         /* HTreeOrder: sortTrees */
	HSourcePos tree_order_at;
	uint8_t tile_size;          /* tileTrees' tile size, 0 = none (every split a tile of its own) */
	uint8_t tiling;             /* HTiling: tileTrees' first argument */
	HSourcePos tile_size_at;
	HSizeName size_names[HIR_MAX_SIZE_NAMES]; /* what size arguments may name besides N_t (hir_schedule_name_size) */
	uint32_t num_size_names;
} HSchedule;

/* A loop range: for (v = begin; v < end; v += step). Bounds are small expressions over the batch size N and enclosing loop values. */
typedef enum HExprOp {
	HEXPR_CONST,   /* value */
	HEXPR_ROWS,    /* the batch size N */
	HEXPR_VAR,     /* the current value of variable var's loop */
	HEXPR_ADD,     /* a + b */
	HEXPR_SUB,     /* a - b */
	HEXPR_MIN,     /* min(a, b) */
	HEXPR_BELOW,   /* a < b ? a : 0 */
} HExprOp;

#define HIR_MAX_EXPR 48
typedef struct HExpr {
	uint8_t op;    /* HExprOp */
	int32_t var;   /* HEXPR_VAR */
	int64_t value; /* HEXPR_CONST */
	uint8_t a, b;  /* operands: indices into HRange.nodes */
} HExpr;

typedef struct HRange {
	HExpr nodes[HIR_MAX_EXPR];
	uint32_t num_nodes;
	uint8_t begin, end;     /* roots of the bound expressions in nodes */
	int64_t step;
	int64_t max_trips;      /* most iterations the loop can run, -1 if only known at run time */
} HRange;

/* Reset s to the plain nest `batch { tree }` over a forest of num_trees trees, with no directives. */
void hir_schedule_init(HSchedule *s, uint32_t num_trees);
/*
 * Apply one directive. Checks what can be checked now (names, lineage, nesting, sizes
 * against the number of trees); on failure s is unchanged and e says why, prefixed
 * with "SOURCE:LINE:COL: DIRECTIVE: " where the directive came from text.
 */
bool hir_schedule_apply(HSchedule *s, const HDirective *d, Error *e);
/* Checks that hold only once all directives are in (interleave and unrollWalk on innermost loops, ...). */
bool hir_schedule_check(const HSchedule *s, Error *e);
/*
 * Parse text (directives separated by newlines or ';') and apply them to s; source names the text in messages. A size
 * argument is a number or an expression over numbers and names (N_t and HSchedule.size_names) with * / + -, no
 * spaces, * and / first, left to right (`N_t/2`, `ROWS_PER_TB*4`), whose value is from 0 to 2^31 - 1.
 */
bool hir_schedule_parse(HSchedule *s, const char *text, const char *source, Error *e);
/* Let size arguments name `name` (letters, digits and '_', not N_t) for value: after hir_schedule_init, before parsing. */
bool hir_schedule_name_size(HSchedule *s, const char *name, int64_t value, Error *e);
/* Print s as directives in the text form, one per line, each line prefixed with indent. */
void hir_schedule_print(FILE *out, const HSchedule *s, const char *indent);
/* Print the loop tree, e.g. "b0 { tree { b1 } }" (for messages and tests). */
void hir_schedule_print_loops(FILE *out, const HSchedule *s);
/* Whether a and b describe the same variables, lineage, directives and loop tree. */
bool hir_schedule_equal(const HSchedule *a, const HSchedule *b);

/* Whether v carries a directive of kind k (one of the one-loop directives). */
bool hir_var_has_directive(const HIndexVar *v, HDirectiveKind k);
/* Find a variable by name, or HIR_NONE. */
int32_t hir_schedule_find(const HSchedule *s, const char *name);
/* The range of var's loop, from its lineage. */
void hir_schedule_range(const HSchedule *s, int32_t var, HRange *r);
/*
 * The largest value var's loop takes when its values are offsets within a tile (var
 * descends from the inner loop of a tile, or from the first half by size of the whole
 * batch, whose rows count from 0), or -1 when they are absolute rows or trees.
 */
int64_t hir_schedule_max_offset(const HSchedule *s, int32_t var);
/* The trees that walks inside loop var can reach: [*first, *end). */
void hir_schedule_tree_span(const HSchedule *s, int32_t var, uint32_t *first, uint32_t *end);
/* Whether loop a encloses loop b (or is b). */
bool hir_schedule_encloses(const HSchedule *s, int32_t a, int32_t b);
/* Whether every loop's bounds are expressible, over the loops around it (else an error naming the loop). */
bool hir_schedule_check_ranges(const HSchedule *s, Error *e);
/* "source:line:col: " for pos, or "" when the directive did not come from text, into buf (for messages). */
void hir_schedule_pos(const HSchedule *s, HSourcePos pos, char *buf, size_t size);
/* "file:line:col: directive(args)" for the directive of kind k on var, into buf (for messages). */
const char *hir_schedule_where(const HSchedule *s, int32_t var, HDirectiveKind k, char *buf, size_t size);

/* Builders for the C API: one directive each; pos may be {0, 0}. */
bool hir_schedule_tile(HSchedule *s, const char *var, const char *outer, const char *inner, uint32_t size, Error *e);
bool hir_schedule_split(HSchedule *s, const char *var, const char *first, const char *second, uint32_t at, Error *e);
bool hir_schedule_split_size(HSchedule *s, const char *var, const char *small, const char *large, uint32_t size, Error *e);
bool hir_schedule_reorder(HSchedule *s, const char *const *vars, uint32_t num_vars, Error *e);
/* A directive of one variable (parallel, cache, interleave, specialize, atomicReduce, sharedReduce) or one variable and an integer (unrollWalk, peelWalk, vectorReduce). */
bool hir_schedule_mark(HSchedule *s, HDirectiveKind kind, const char *var, int64_t value, Error *e);
/* gpuDimension(var, dim), dim as written ("grid.x", ...). */
bool hir_schedule_gpu_dimension(HSchedule *s, const char *var, const char *dim, Error *e);
/* representation(name). */
bool hir_schedule_representation(HSchedule *s, const char *name, Error *e);
/* sortTrees(order), order as written ("depth"). */
bool hir_schedule_sort_trees(HSchedule *s, const char *order, Error *e);
/* tileTrees(tiling, size), tiling as written ("uniform" or "probability"). */
bool hir_schedule_tile_trees(HSchedule *s, const char *tiling, uint32_t size, Error *e);

const char *hir_directive_name(HDirectiveKind k);
/* What directive k takes: *names variable names (-1: one or more), the last *optional of which may be left out, and *ints integers. */
void hir_directive_arity(HDirectiveKind k, int *names, int *optional, int *ints);
const char *hir_gpu_dim_name(HGpuDim d);

#endif
