/*
 * MIR: the loop nest the schedule asks for, independent of target and of how the
 * model is laid out in memory.
 *
 * A function is a tree of operations stored in one array and named by 32-bit index:
 * loops over index variables (sequential or parallel) whose bodies are lists of
 * operations, tree walks, and explicit reductions into named buffers. An index
 * variable's value is an absolute offset or an offset within its tile, so the row of an
 * iteration is the sum of the values of the enclosing batch variables, and the tree the
 * sum of the tree variables.
 *
 * Buffers. The margins of the rows being predicted live in buffers of the module's
 * table, each declared by a BUFFER operation and living until the end of that list:
 * copies x rows x outputs elements of the margin type. A buffer declared where the
 * batch variables `base` are bound holds the rows base + 0, base + 1, ...: an operation
 * on row `row` (a sum that includes base's terms) addresses row `row - base`. A buffer
 * privatised along a loop (copy_var) has one copy per iteration of that loop, addressed
 * by the iteration number (value - begin) / step. `init`, `reduce`, `reduceDimension`
 * and `transform` name the buffer they touch; reductions carry their operator and
 * strategy, and mir_legalize_reductions makes every reduction under a parallel loop
 * safe by privatising its buffer or making it atomic.
 *
 * Loops carry what the schedule asked of them (MInst.loop: over trees, cache,
 * specialize, splitSize's half for few rows), and the module their ranges (MLoop), so
 * that the MIR passes and the lowering read the MIR, not the HIR schedule, for them.
 */
#ifndef GROVE_IR_MIR_H
#define GROVE_IR_MIR_H

#include "ir/hir.h"

#define MIR_NONE UINT32_MAX

/* Columns: name, printed text. */
#define MIR_OPS(X)                                                                              \
	X(FOR, "for")             /* loop over index variable `var`; body */                    \
	X(BUFFER, "buffer")       /* declare buffer `buf` for the rest of the list */            \
	X(INIT, "init")           /* every element of buffer `buf` = its starting margin, or the \
	                             reduction's identity (`zero`: privatised copies) */          \
	X(GET_TREE, "getTree")    /* the tree at index `tree` */                                 \
	X(WALK, "walk")           /* leaf value of tree `a` for row `row` */                     \
	X(REDUCE, "reduce")       /* buf[copy, row - base, output(tree a) + k] op= leaf b [k],   \
	                             k < width(tree a) (leaf b a scalar where all widths are 1) */ \
	X(REDUCE_DIM, "reduceDimension") /* buf[copy, r, o] op= src[c, r, o] for each copy c */  \
	X(TRANSFORM, "transform") /* out[row, :] = transform(buf[row - base, :]) */                \
	X(IF_COMPLETE, "ifComplete") /* body, specialised to rows that hold no missing value when  \
	                             rows [row, row + span) hold none, as written otherwise */

typedef enum MOp {
#define X(name, text) MOP_##name,
	MIR_OPS(X)
#undef X
} MOp;

/* Reduction operators: how a leaf value combines with a margin (HForest.aggregate: AVERAGE sums). */
typedef enum MReduceOp {
	MREDUCE_SUM,
	MREDUCE_MIN,
	MREDUCE_MAX,
} MReduceOp;

/* How a reduction writes its buffer. */
typedef enum MStrategy {
	MSTRATEGY_PLAIN,  /* load, combine, store: no other iteration touches the element meanwhile */
	MSTRATEGY_ATOMIC, /* an atomic read-modify-write: parallel iterations share the element */
	MSTRATEGY_VECTOR, /* reduceDimension: `vector` elements at a time */
	MSTRATEGY_SHUFFLE, /* reduceDimension on a GPU block: more copies than elements, each element's copies folded by a
	                      tree of warp shuffles where the block's threads can meet (else as PLAIN) */
} MStrategy;

/* Where a buffer lives. */
typedef enum MSpace {
	MSPACE_LOCAL,     /* on the stack of the code that declares it, private to it */
	MSPACE_SHARED,    /* on the stack of the code that declares it, written by parallel loops inside */
	MSPACE_WORKSPACE, /* in the caller's workspace (its size grows with the batch) */
} MSpace;

/* A sum of index variables (HSchedule.vars indices): a row or a tree number. */
#define MIR_MAX_TERMS 8
typedef struct MIndex {
	uint8_t num_terms;
	int8_t terms[MIR_MAX_TERMS];
} MIndex;

/* MBuffer.rows when the buffer holds every row of the batch. */
#define MIR_ROWS_ALL (-1)

typedef struct MBuffer {
	uint8_t type;      /* HType of the elements: the forest's leaf type, in which margins accumulate */
	uint8_t space;     /* MSpace */
	uint8_t zero;      /* INIT writes 0 (a privatised copy) rather than the base scores */
	MIndex base;       /* batch variables bound where it is declared: its row 0 is their sum (no terms: row 0) */
	int64_t rows;      /* rows, or MIR_ROWS_ALL for N */
	int32_t copy_var;  /* privatised along this variable's loop (HIR_NONE: one copy) */
	uint32_t copies;   /* iterations of that loop (1 if none) */
	uint32_t outputs;  /* margins per row */
	uint32_t of;       /* the buffer this one privatises (MIR_NONE: none) */
} MBuffer;

/* What a FOR's schedule asked of it (MInst.loop), which the lowering reads instead of the HIR schedule. */
typedef enum MLoopFlags {
	MLOOP_TREES = 1 << 0,      /* over trees (its variable derives from `tree`), else over rows */
	MLOOP_CACHE = 1 << 1,      /* cache(v): the rows or trees of an iteration copied (GPU) or prefetched (host) */
	MLOOP_SPECIALIZE = 1 << 2, /* specialize(v): each iteration lowered apart, its value known */
	MLOOP_FEW_ROWS = 1 << 3,   /* splitSize's half for few rows (the host compiles its walks apart) */
	MLOOP_PREFETCH = 1 << 4,   /* cache(v, prefetch): prefetched, not copied (host) */
} MLoopFlags;

/*
 * What an ifComplete's block makes of its rows before its walks (MInst.block), as
 * mir_plan_blocks plans it; the lowering makes it where the layout can take it.
 */
typedef enum MBlockFlags {
	MBLOCK_KEYS = 1 << 0,  /* keys of its float rows for the walks (the key copy's compares), on the stack */
	MBLOCK_WHOLE = 1 << 1, /* the keys are i64, a threshold's key and its rank (else i32) */
	MBLOCK_TILES = 1 << 2, /* its keys fit the stack in tiles of TOP_LANES rows (lower_tops, leaf masks, tile words) */
	MBLOCK_TOPS = 1 << 3,  /* its walks of TOP_LANES rows or more take their tops, or leaf masks, from those tiles */
	MBLOCK_NEXT = 1 << 4,  /* its walks of TOP_LANES rows side by side prefetch the rows of its next block */
} MBlockFlags;

/* Rows whose NaN the walks may read as 0, a copy of the block's rows made where one holds NaN (MModule.nan_as_zero). */
typedef enum MZeroRows {
	MZERO_FLOATS = 1 << 0,  /* float rows (predict) */
	MZERO_DOUBLES = 1 << 1, /* double rows (predict_f64) */
} MZeroRows;

typedef struct MInst {
	uint8_t op;          /* MOp */
	uint8_t loop;        /* FOR: MLoopFlags */
	uint8_t parallel;    /* FOR: iterations may run concurrently (parallel, or spread over a GPU dimension) */
	uint8_t gpu_dim;     /* FOR: the GPU grid or block dimension its iterations are spread over (HGpuDim; 0: none) */
	uint8_t exact;       /* WALK: the peeled steps always end on a leaf, no loop follows them */
	uint8_t interleave;  /* FOR: this many consecutive rows (or trees) run together, their walks interleaved (0, 1 = off) */
	uint8_t block;       /* IF_COMPLETE: MBlockFlags */
	uint16_t peel;       /* WALK: steps taken in straight-line code before the first leaf test */
	uint16_t peel_safe;  /* WALK: how many of them no leaf can end; a later peeled step from a leaf stays on it */
	uint8_t reduce_op;   /* REDUCE, REDUCE_DIM: MReduceOp */
	uint8_t strategy;    /* REDUCE, REDUCE_DIM: MStrategy */
	uint16_t vector;     /* REDUCE_DIM with MSTRATEGY_VECTOR: elements per vector */
	int64_t span;        /* IF_COMPLETE: the rows it checks from `row` (MIR_ROWS_ALL: to the end of the batch) */
	int32_t var;         /* FOR: the index variable */
	MIndex row;          /* WALK, REDUCE, TRANSFORM: the row; IF_COMPLETE: the first row it checks (no terms: row 0) */
	MIndex tree;         /* GET_TREE: the tree */
	uint32_t a, b;       /* operands: values of earlier instructions */
	uint32_t buf;        /* BUFFER, INIT, REDUCE, REDUCE_DIM, TRANSFORM: the buffer */
	uint32_t src;        /* REDUCE_DIM: the privatised buffer folded into buf */
	uint32_t body;       /* FOR, IF_COMPLETE: first instruction of the body */
	uint32_t next;       /* next instruction in the same list */
} MInst;

/* How the CPU's vectors take walks' tops (MModule.vector_tops). */
typedef enum MTops {
	MTOPS_NONE,  /* no tops: no CPU named (grove dump), AArch64, GPUs, x86 before AVX2 */
	MTOPS_PAIRS, /* AVX2: 16 rows' keys in two 256-bit vectors, of 16 registers */
	MTOPS_WIDE,  /* AVX-512: in one 512-bit vector, of 32 registers, with room for a top's masks (RepLayout.top_masks) */
} MTops;

/*
 * A loop's range and, for a loop over trees, the trees its iterations reach: made from
 * the variable's lineage in the schedule (hir_schedule_range, hir_schedule_tree_span)
 * when the module is made, and read from the MIR after (mir_loop_range, mir_loop_trees).
 */
typedef struct MLoop {
	HRange range;
	uint32_t first_tree, end_tree; /* [first_tree, end_tree) */
	int64_t rows; /* the rows (a loop over trees: trees) from its value that an iteration covers (the step, but for
	                 an outer tile loop reordered inside its inner one); MIR_ROWS_ALL: to the end of the batch (the
	                 forest), not consecutive (a tile's inner loop outside its outer one, a loop around such an
	                 outer one) */
} MLoop;

/* The predict function over a forest. */
typedef struct MModule {
	const HForest *forest;
	MInst *insts;
	uint32_t num_insts;
	size_t insts_cap;
	MBuffer *buffers;
	uint32_t num_buffers;
	size_t buffers_cap;
	uint32_t body;       /* first instruction */
	MTops vector_tops;   /* how the code's CPU takes 16 rows' tops at once (x86: AVX-512, AVX2), if it does */
	const char *representation; /* how the nodes are laid out and walked (a name in lower/rep.c's table, static) */
	uint8_t nan_as_zero; /* MZeroRows: every ifComplete's rows may be copied with NaN read as 0 (mir_plan_blocks) */
	MLoop *loops;        /* per index variable of the forest's schedule, its loop's (zero for a variable without one) */
} MModule;

/* A new empty module over forest f (which must outlive it). */
MModule *mir_module_new(const HForest *f);
/* Free a module. */
void mir_module_free(MModule *m);
/* The range of the loop over var. */
void mir_loop_range(const MModule *m, int32_t var, HRange *r);
/* The trees the iterations of the loop over var reach, [*first, *end) (all of them for var HIR_NONE). */
void mir_loop_trees(const MModule *m, int32_t var, uint32_t *first, uint32_t *end);
/* A list of instructions being built: its first and last elements (MIR_NONE when empty). */
typedef struct MList {
	uint32_t first, last;
} MList;

/* Append a new instruction of kind op to list l (all fields MIR_NONE or zero); returns it. */
uint32_t mir_append(MModule *m, MList *l, MOp op);
/* A new instruction of kind op in no list yet; link it with mir_link_after. */
uint32_t mir_new(MModule *m, MOp op);
/*
 * Link instruction id into a list: after instruction prev, or, when prev is MIR_NONE,
 * first in the body of loop owner (or of the function when owner is MIR_NONE).
 */
void mir_link_after(MModule *m, uint32_t owner, uint32_t prev, uint32_t id);
/* Add a buffer to the table; returns its number. */
uint32_t mir_buffer_add(MModule *m, const MBuffer *buffer);
/* Whether var is a term of index. */
bool mir_index_has(const MIndex *index, int32_t var);
/* Whether instruction id walks: a walk, or a loop (or ifComplete) holding one. */
bool mir_walks(const MModule *m, uint32_t id);
/* Whether some instruction in the list from id (and the lists inside) is one that `holds`. */
bool mir_some(const MModule *m, uint32_t id, bool (*holds)(const MModule *, const MInst *));

/* Check the module: variables in scope, operands defined before use, buffers declared where they are used. */
bool mir_verify(const MModule *m, Error *e);
/* Print the module as text (stable; used for golden tests). */
void mir_print(FILE *out, const MModule *m);

const char *mir_op_name(MOp op);
/* The reduction that combines f's leaves (AVERAGE sums). */
MReduceOp mir_reduce_op(const HForest *f);

#endif
