/*
 * Internal to lower/: the state of the MIR -> LIR lowering, shared by the host part
 * (mir_to_lir.c, lower_walks.c, lower_buffers.c, lower_keys.c, lower_tops.c, ...) and the GPU
 * kernels' (mir_to_gpu.c).
 */
#ifndef GROVE_LOWER_LOWERING_H
#define GROVE_LOWER_LOWERING_H

#include "lower/lower.h"
#include "lower/rep.h"

/* What the loops around the code being lowered set; each loop restores its outer scope when it ends. */
typedef struct LoopScope {
	uint32_t lanes;             /* rows (or trees) handled together by the enclosing interleaved loop (1 if none) */
	int32_t lane_var;           /* that loop's variable (or HIR_NONE): lane r's row (or tree) is the index + r */
	bool lanes_are_trees;       /* lane_var is a tree variable: the lanes are trees of one row */
	int64_t lane_step;          /* lane r's value is the loop value + r * lane_step */
	uint32_t masked;            /* i64: lane r runs where r * lane_step >= masked, the lanes before are masked off
	                               (the last group of an interleaved tree loop); LIR_NONE: every lane runs */
	MIndex rows, trees;         /* the batch and tree variables bound: the row and tree (of lane 0) are their sums */
} LoopScope;

/* A MIR buffer as lowered. */
typedef struct Storage {
	uint32_t base[MIR_MAX_INTERLEAVE]; /* its address per lane (one per lane when declared inside a loop interleaved over rows) */
	bool per_lane;
	uint32_t rows;      /* i64: its rows dimension */
	uint32_t offset;    /* i64: its first element in base */
	bool by_output;     /* its elements lie output by output (c * rows + row), not row by row (row * outputs + c) */
	uint64_t workspace_at; /* a buffer of all rows: its place in the workspace, in elements per row (0: none yet) */
} Storage;

/*
 * What an ifComplete sets for the code inside it (lower/lower_keys.c), which it restores
 * when it ends: the block's rows and the keys, tiles and tops it made of them.
 */
typedef struct BlockScope {
	uint32_t key_rows;          /* inside an ifComplete that made them (rep.h): the keys of rows [key_first, ...) that
	                               walks read (LIR_NONE: none) */
	uint32_t key_first;         /* i64 */
	LType key_type;             /* of the keys: i64 or i32 (rep_emit_row_key) */
	uint32_t key_tiles;         /* with key_rows, the same keys in tiles of TOP_LANES rows (RepLayout.key_lanes), for tops
	                               (LIR_NONE: none) */
	uint32_t mask_tiles;        /* with key_tiles where RepLayout.signed_masks, or mask_nan_keys and not nan_columns:
	                               lower_mask_tiles' copy, for leaf masks (LIR_NONE: the key_tiles) */
	bool key_tiled;             /* key_rows are key_tiles (RepLayout.tile_words), else row by row */
	bool key_padded;            /* key_rows (and key_tiles) hold the block's first row's keys past its last row to its tile's end */
	const MIndex *key_index;    /* the first row of the ifComplete that made them, key_first's index */
	uint32_t bins;              /* with key_tiles where RepLayout.byte_tops, the rows' bins (i8; LIR_NONE: none) */
	uint32_t top_nodes, top_tags; /* the tops lower_tops took a tree ahead: per TOP_LANES rows of the block, TOP_SLOTS
	                               vectors of nodes (i32) and what each is for (i64); LIR_NONE: no tops taken here */
	uint32_t zero_rows;         /* inside an ifComplete where the layout has nan_reads_zero: the rows the walks read (ptr,
	                               indexed as rows), the rows or their copy with NaN read as 0 (LIR_NONE: outside) */
	uint32_t first;             /* i64: inside an ifComplete of a bounded block, its first row (LIR_NONE: outside) */
	int64_t span;               /*   and its rows at most */
	uint32_t next;              /* i64: with first, the first row of the block this thread will likely scan next,
	                               whose rows its walks prefetch (prefetch_next_rows; LIR_NONE: none) */
} BlockScope;

typedef struct Lowering Lowering;

/*
 * Where a GPU's kernels are lowered otherwise than the host's code: mir_to_gpu.c's
 * hooks, which the core (mir_to_lir.c and the files beside it) calls where it lowers a
 * GPU's module, falling back on its own lowering where a hook declines.
 */
typedef struct LowerHooks {
	void (*entry)(Lowering *l, const char *name, LType row_type); /* an entry: its kernels */
	bool (*loop)(Lowering *l, const MInst *inst);                 /* a FOR spread over threads or run alike (false: one thread's) */
	void (*cache)(Lowering *l, const MInst *inst, int64_t count); /* cache(v): the body between a copy in shared memory and a meeting */
	bool (*list)(Lowering *l, uint32_t first);                    /* a list that threads run alike, in phases (false: one thread's) */
	LSpace (*buffer_space)(Lowering *l, uint32_t b);              /* where MIR buffer b lives: private, or a block's shared memory */
	uint32_t (*block_copy)(Lowering *l, int64_t size);            /* shared memory for a buffer inside a lockstep loop: a group's copy */
} LowerHooks;

/* GPU kernels: what the kernel being built and the lockstep loops around the code set (mir_to_gpu.c). */
typedef struct GpuScope {
	bool on;                    /* the module is a GPU's (LModule.gpu) */
	const LowerHooks *hooks;    /* with on, the GPU's lowering (NULL for the host) */
	unsigned mask;              /* the dimensions (dim_bit) in which the threads running this code alike differ; 0: one thread */
	unsigned bound;             /* the dimensions that loops around this code are spread over */
	uint32_t active;            /* i1: this thread has an iteration of the lockstep loops around (LIR_NONE: no such loop) */
	const LLaunch *launch;      /* of the kernel being built */
	bool varying;               /* inside a loop whose trip count differs between the threads of a block */
	int32_t uneven;             /* with varying, the loop whose bounds differ between them, if one does (else -1) */
	uint32_t block_threads;     /* threads per block of the kernel being built */
	bool trees_cached;          /* inside a tree loop whose trees the representation copied to shared memory */
	bool alike;                 /* in a loop over rows whose rounds the block's threads take together, one row each
	                               (gpu_lockstep with no dimension left, for a cached tree loop inside): an idle
	                               thread (active false) copies and meets with the others but writes nothing */
} GpuScope;

/*
 * A walk whose top took every level of its tree (handle `tree`) for the rows of its lanes,
 * and whose reduce takes their leaves' vectors output by output (lower_reduce_outputs):
 * the top's nodes (lower_tops) and levels; or, where `bins`, the leaf indices its walk
 * from bins found (walk_bins: BYTE_TOP_LANES i8 at `nodes`).
 */
typedef struct TopLeaves {
	uint32_t tree, nodes, levels;
	bool bins;
} TopLeaves;

struct Lowering {
	const MModule *m;
	const HForest *f;
	const LRepresentation *rep;
	RepLayout layout;
	LModule *module;
	LBuilder b;
	LType acc_type;             /* type of margins while they accumulate */
	uint32_t rows, num_rows, out, margin; /* function parameters; margin is i1 */
	uint32_t rows_end;          /* where the rows the loops here cover end: num_rows, or inside a parallel loop whose
	                               blocks shrink (lower_loop), its block's end */
	uint32_t label;             /* i1: flags ask for each row's class (models with labels) */
	LType row_type;             /* of the rows: f32, or f64 in the double-row entry */
	uint32_t tree_outputs;      /* address of the per-tree output buffer, or LIR_NONE */
	uint32_t output_buffer;     /* its index */
	uint32_t tree_widths;       /* address of the per-tree width buffer, or LIR_NONE (every width 1) */
	uint32_t width_buffer;      /* its index */
	uint32_t base_scores;       /* address of the base score buffer */
	uint32_t base_buffer;       /* its index */
	uint32_t acc, acc_offset;   /* the margins of the row being transformed: acc[acc_offset + c * acc_stride] */
	uint32_t acc_stride;        /* i64, or LIR_NONE for 1 */
	uint32_t workspace;         /* the workspace parameter */
	uint64_t workspace_elems;   /* elements per row of the workspace buffers so far */
	Storage *storage;           /* per MIR buffer */
	LoopScope scope;            /* what the enclosing loops set */
	BlockScope block;           /* what the enclosing ifComplete sets */
	bool complete;              /* inside the complete-rows copy of an ifComplete */
	bool walks_apart;           /* inside an ifComplete lowered once: rows' side-by-side walks compile apart (lower_for) */
	int64_t pad_rows;           /* the entry's cost_pad_rows: from how many rows a short tile walks padded (lower_lanes_run) */
	uint32_t lanes_left;        /* in a padded run of rows' lanes: its rows (i64; lanes from there on are padding), else LIR_NONE */
	uint64_t code_splits;       /* splits of code (a representation's walk hook) in the function being built so far: the
	                               LIR function's, or its region that compiles apart (LOWER_CODE_FUNCTION_SPLITS) */
	bool code_apart;            /* inside an iteration of a specialized tree loop that compiles apart (lower_specialized) */
	GpuScope gpu;               /* GPU kernels (lower_mir_to_gpu): see mir_to_gpu.c */
	bool failed;                /* an error was found (lower_fail; e says it): the module is dropped */
	uint32_t row_cache;         /* inside cache(v) of a batch loop: the copy of rows [row_cache_first, ...) that walks read, in a GPU
	                               block's shared memory or on the host thread's stack (LIR_NONE: none) */
	uint32_t row_cache_first;   /* i64 */
	int64_t row_cache_rows;     /* 0: the host's copy is row by row; else column by column, feature f of row o at f x this + o,
	                               where rows walk side by side in vectors (RepLayout.lanes), each feature of theirs one load */
	int64_t row_cache_pad;      /* elements after each row of a GPU block's copy: 1 where the features are even, so that the
	                               rows' stride is odd and a warp reading one feature of 32 rows meets 32 banks (0: none) */
	uint32_t loop_stride;       /* i64: inside a loop over rows whose blocks make keys, the rows from an iteration's first
	                               row to the first of the next one its thread takes (LIR_NONE: none) */
	int64_t loop_rows;          /*   and its iterations' rows at most */
	uint32_t var_value[HIR_MAX_VARS];
	uint8_t var_align[HIR_MAX_VARS]; /* in lane 0, what divides every value the variable takes (rows' tiles), up to BYTE_TOP_LANES */
	bool is_const[HIR_MAX_VARS];   /* the variable's loop is specialized: its value here is const_value */
	int64_t const_value[HIR_MAX_VARS];
	uint32_t *value;            /* per MIR instruction and lane: its LIR value (value[id * MIR_MAX_INTERLEAVE + lane]) */
	uint32_t *tree_index;       /* per GET_TREE and lane: the tree number (i64), indexed as value */
	uint32_t *lanes_value;      /* per MIR instruction, its lanes' values as one vector where its walk made them so
	                               (lower_code.c), else LIR_NONE */
	TopLeaves *top_leaves;      /* per MIR instruction: a walk whose leaves its reduce takes output by output (nodes
	                               LIR_NONE: none) */
	uint32_t finish_peel;       /* the last walks of rows side by side: their straight steps, lanes (0: none yet) */
	uint32_t finish_lanes;
	bool finish_together;       /*   and whether they finish together (cost_finish_together) */
	uint32_t deepest_leaf;      /*   and the forest's deepest leaf, asked then (hir_leaf_depth_range) */
	Error *e;
};

/* HGpuDim d as a bit of GpuScope.mask: the grid's x, y, z are bits 0-2, the block's bits 3-5. */
static inline unsigned dim_bit(unsigned d) { return 1u << (d - 1); }
#define GPU_GRID_BITS 7u
#define GPU_BLOCK_BITS (7u << 3)

/* Where lane's entry for MIR instruction id sits in value[] and tree_index[]. */
static inline size_t lane_slot(uint32_t id, uint32_t lane) { return (size_t)id * MIR_MAX_INTERLEAVE + lane; }

static inline uint32_t const_i64(Lowering *l, int64_t v) { return lir_const_int(&l->b, LTYPE_I64, v); }
static inline uint32_t emit2(Lowering *l, LOp op, LType type, uint32_t x, uint32_t y) { return lir_emit(&l->b, op, type, x, y, LIR_NONE); }

/* Tops kept per TOP_LANES rows of a block (l->block.top_nodes, l->block.top_tags): a tree's and the next's, by the tree's parity. */
#define TOP_SLOTS 2

/* lower_tops.c */
/*
 * Whether the rows of the walk's lanes lie in one tile of keys (BlockScope.key_tiled),
 * lane 0's row first.
 */
bool lower_lanes_share_tile(const Lowering *l, const MInst *walk);
/* Whether the walk's lane 0 row starts a tile of the block's keys (every index variable the block's first row has not, aligned). */
bool lower_walk_at_tile(const Lowering *l, const MInst *walk);
/*
 * The first steps of the walks of TOP_LANES rows side by side, taken at once by the
 * representation (top_nodes), where it can: yields how many (0: none), and *nodes (ptr;
 * LIR_NONE: none) where each row's node after them lies, i32 by lane. row: lane 0's;
 * safe: the steps each lane may take untested; ends: the steps after which every lane's
 * walk has ended (UINT32_MAX: not known).
 */
uint32_t lower_tops(Lowering *l, const MInst *walk, const RepRow *row, const uint32_t *safe, uint32_t ends, uint32_t *nodes);
/*
 * Where a top of `levels` levels took every step of the walks of tree `tree` (its handle;
 * every leaf at that depth): the lanes' leaves' values at once (the representation's
 * leaf_values), each lane's into values[r] and all as one vector (yielded); LIR_NONE
 * where the representation cannot. nodes: lower_tops's.
 */
uint32_t lower_top_leaves(Lowering *l, uint32_t tree, uint32_t levels, uint32_t nodes, uint32_t *values);
/*
 * Whether the reduce of walk `walk` (the next reduce of its value in its list) adds
 * the leaf vectors of a top of `levels` levels output by output, each output's lanes as
 * one vector (the representation's leaf_tables, margins output by output); levels 0:
 * of a walk from bins (bin_leaves, which take every output).
 */
bool lower_reduce_outputs(const Lowering *l, uint32_t walk, uint32_t levels);
/* A loop over rows that walks BYTE_TOP_LANES of them side by side (RepLayout.byte_tops). */
bool lower_walks_bytes(const MModule *m, const MInst *inst);
/*
 * Walk id's lanes from their bins (RepLayout.byte_tops), where they are BYTE_TOP_LANES
 * rows side by side of one tree in a block that made bins and their keys decide, and
 * where trees have leaf vectors their reduce takes them output by output: their leaf
 * values as the walk's (l->value, lanes_value), or their leaf indices for the reduce
 * (TopLeaves). False where it cannot.
 */
bool lower_bins_walk(Lowering *l, uint32_t id);
/* Each of the `lanes` lanes of vector v into values[r], through memory (LLVM makes the loads extracts of the vector). */
void lower_lanes_apart(Lowering *l, uint32_t v, uint32_t lanes, uint32_t *values);
/*
 * Where the walk's lanes may take their tree whole by leaf masks (RepLayout.leaf_masks):
 * the representation's tile_apply i1 for its tree, *tile the rows' tile of keys (with
 * its keys less one after them where RepLayout.mask_nan_keys); else LIR_NONE (emitting
 * nothing).
 */
uint32_t lower_tile_applies(Lowering *l, const MInst *walk, uint32_t *tile);
/*
 * A new array of the tiles of `rows` rows (i64; tile_rows at most) for leaf masks
 * (BlockScope.mask_tiles): each tile's keys, biased where RepLayout.signed_masks, followed
 * by the same keys less one where RepLayout.mask_nan_keys and the tiles lack them.
 */
uint32_t lower_mask_tiles(Lowering *l, uint32_t rows, uint32_t tiles, int64_t tile_rows);

/* Record in m what its artifact tells of f besides the code: features, margins, outputs, transform, labels, names, category values. */
void lower_describe_module(LModule *m, const HForest *f);
/* The walks of MIR walk id by leaf masks over tiles: values[r] lane r's leaf value; yields them as one vector. */
uint32_t lower_tile_walk(Lowering *l, uint32_t id, uint32_t tile, uint32_t *values);

/* lower_rows.c */
/* cache(v) of inst: fails (at the cache) where an iteration's rows or trees are not consecutive (MLoop.rows all). */
void lower_cache_consecutive(Lowering *l, const MInst *inst);
/*
 * cache(v) of a batch loop: the first row of this iteration's `count` (i64, in *first) and the
 * elements (rows x features, i64) of those of them that are in the batch, which a copy holds.
 */
uint32_t lower_cached_elements(Lowering *l, int64_t count, uint32_t *first);
/*
 * A local array of `type` for `rows` rows of `width` elements (the forest's features, or
 * its keys' columns): one element where that is none (a LIR array has at least one;
 * such rows copy nothing).
 */
uint32_t lower_rows_array(Lowering *l, LType type, int64_t rows, int64_t width, LSpace space);
/*
 * Where walks read categories as keys (RepLayout.category_keys): after the scan that made
 * the keys of rows' elements [first, end) (i64, multiples of the features) into
 * l->block.key_rows, each category feature's key becomes its category (rep_emit_category_key).
 */
void lower_category_keys(Lowering *l, uint32_t first, uint32_t end);
/* A tree loop that caches its trees (for mir_some). */
bool lower_caches_trees(const MModule *m, const MInst *inst);
/* cache(v) of inst, a batch loop, on the host: a copy of the `count` rows of each iteration that its walks read. */
void lower_copy_rows(Lowering *l, const MInst *inst, int64_t count);
/* cache(v, prefetch) of a batch loop: prefetch the lines of the `count` rows of an iteration. */
void lower_prefetch_rows(Lowering *l, int64_t count);
/*
 * Whether loop, interleaved over rows, may run all its lanes where fewer rows are left:
 * its walks read a copy column by column, zeros past the batch's rows, and it writes
 * only buffers on the stack, whose rows reach past its last lane.
 */
bool lower_lanes_past_end(const Lowering *l, const MInst *loop);
/*
 * i1: whether loop, interleaved over rows ([begin, end) of them, for `span` rows of lanes),
 * runs its lanes side by side: always where `past` (lower_lanes_past_end); from
 * Lowering.pad_rows rows where its lanes are a row each, its walks read padded keys
 * (BlockScope.key_padded) from a tile's start, and it writes only buffers on the stack
 * and, for symmetric trees of one output, rows' transforms, which lanes past its rows
 * write elsewhere (Lowering.lanes_left, set for the run: lower_padded_row); else where
 * the rows fill the lanes. The loop's variable is aligned as lane 0's row
 * (Lowering.var_align).
 */
uint32_t lower_lanes_run(Lowering *l, const MInst *loop, uint32_t begin, uint32_t end, int64_t span, bool past);
/*
 * The row (i64) lane `lane` of a padded run (Lowering.lanes_left), which may lie past its
 * rows, transforms: `row`, or there row 0 of *scratch (made at the first such lane), with
 * Lowering.out set to the scratch's or the rows' (the caller restores out). Selects, not
 * a branch, which would split the lanes' margins LLVM keeps as one vector.
 */
uint32_t lower_padded_row(Lowering *l, uint32_t lane, uint32_t row, uint32_t *scratch);
/*
 * The most rows side by side of the batch loops in the list first that divide TOP_LANES
 * and write only the stack, or rows' transforms where lower_lanes_run lets them (1: none).
 */
int64_t lower_rows_lanes(const Lowering *l, uint32_t first);

/* mir_to_lir.c */
/* Record an error of the lowering (the first one counts; the module is dropped at the end). */
void lower_fail(Lowering *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same about index variable var's directive of kind `directive` (-1: its loop), which the caller places (Error.place). */
void lower_fail_at(Lowering *l, int32_t var, int32_t directive, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* What combines with a margin to leave it as it is: +inf for min, -inf for max, else 0. */
double aggregate_identity(const HForest *f);
/* lower/convert_rows.c */
/* The entry predict of module: its rows widened to double, then predict_f64 (callee_per_row: its workspace). */
void lower_widening_entry(LModule *module, uint64_t callee_per_row);
/* The entry predict_f64 of module: its rows narrowed by t to float keys, then predict (callee_per_row: its workspace). */
void lower_narrowing_entry(LModule *module, const NarrowCuts *t, uint64_t callee_per_row);

/* A new function `name` (a kernel: kernel true) whose rows are of row_type, with its parameters and the representation's prologue. */
LFunc *begin_function(Lowering *l, const char *name, LType row_type, bool kernel);
/* The element of buffer b for row (a full row index; NULL for the buffer's row 0) and output c (i64), in lane `lane`. */
uint32_t buffer_slot(Lowering *l, uint32_t b, uint32_t lane, const MIndex *row, uint32_t c);
/* A reduceDimension's rows (fold_span): the target's element where they begin, a copy's elements (n), the elements
 * before them in each copy (src_at; LIR_NONE: none), and their elements (count). */
typedef struct FoldSpan {
	uint32_t dst_at, n, src_at, count;
} FoldSpan;
FoldSpan fold_span(Lowering *l, const MInst *inst, uint32_t lane);
uint32_t fold_copy(Lowering *l, const FoldSpan *f, uint32_t offset, uint32_t copy);
/* Where margin c (i64) of row `row` (i64, within its copy) lies in a copy of buffer b, from the copy's first element. */
uint32_t buffer_element(Lowering *l, uint32_t b, uint32_t row, uint32_t c);
/*
 * The body of inst's loop for the iteration whose value is `value`, covering `rows` rows
 * (or trees) in `lanes` lanes (0: not interleaved), those before `masked` masked off
 * (LoopScope.masked; LIR_NONE: none).
 */
void lower_body(Lowering *l, const MInst *inst, uint32_t value, int64_t rows, uint32_t lanes, uint32_t masked);
/* buffer: give MIR buffer b its storage. */
void lower_buffer(Lowering *l, uint32_t b);
/* Emit node x of a loop range expression (hir_schedule_range) as an i64. */
uint32_t lower_expr(Lowering *l, const HRange *r, uint8_t x, uint32_t lane);
/* The row that walk reads in lane r: where its features lie, and their type (keys or values). */
RepRow lower_walk_row(Lowering *l, const MInst *walk, uint32_t r);
/* walk in a representation that keeps trees in code (lower/lower_code.c). */
void lower_code_walk(Lowering *l, uint32_t id);
/* A FOR of the MIR. */
void lower_for(Lowering *l, const MInst *inst);
/* The row (or tree) number index stands for in lane `lane`. */
uint32_t lower_index(Lowering *l, const MIndex *index, uint32_t lane);
/* What divides index variable var's value here in lane 0, a power of two up to BYTE_TOP_LANES (Lowering.var_align). */
uint8_t lower_var_align(const Lowering *l, int32_t var);
/* One MIR instruction, in code that one thread runs (on a GPU: GpuScope.mask 0). */
void lower_inst(Lowering *l, uint32_t id);
/* A list of MIR instructions (on a GPU, in phases where threads run it alike). */
void lower_list(Lowering *l, uint32_t first);
/* One loop of inst's variable over [begin, end) by step (a constant), each iteration's body in `lanes` lanes (0: not interleaved). */
void lower_loop(Lowering *l, const MInst *inst, uint32_t begin, uint32_t end, uint32_t step, uint32_t lanes, bool parallel);
/* Where margin c starts: the base score for sums, else the identity. */
double margin_start(const HForest *f, uint32_t c);
/* Emit the transform of row (i64) of the margins at l->acc into l->out (lower/mir_transform.c). */
void lower_transform(Lowering *l, uint32_t row);
/* Whether stride (i64; LIR_NONE for 1) is 1: a row's margins one after another (row by row, or one row's output by output). */
bool lower_stride_one(const Lowering *l, uint32_t stride);
/* The LIR operation of reduction operator op: fadd, fmin or fmax. */
LOp reduce_lop(uint8_t op);
/* The value of var in lane `lane`: the interleaved variable's lanes step from its value. */
uint32_t lower_var_value(Lowering *l, int32_t var, uint32_t lane);
/* lower_index's, leaving out the variables of skip (NULL: none). */
uint32_t lower_index_except(Lowering *l, const MIndex *index, const MIndex *skip, uint32_t lane);

/* Whether the walks being lowered are a lone row's: of trees side by side, or of one tree. */
static inline bool lower_walks_lone_row(const Lowering *l) { return l->scope.lanes_are_trees || l->scope.lanes == 1; }
/* Whether the lanes here are several trees of one row (the representation's tree hook lays their handles out for that). */
static inline bool lower_trees_side_by_side(const Lowering *l) { return l->scope.lanes > 1 && l->scope.lanes_are_trees; }

/* lower_walks.c */
/* walk: its lanes' leaves into l->value (the representation's whole walks where they apply, else node by node). */
void lower_walk(Lowering *l, uint32_t id);

/* lower_buffers.c */
/* The address of buffer b's storage in lane `lane`. */
uint32_t lower_storage_base(Lowering *l, uint32_t b, uint32_t lane);
/* init: every row of every copy of buffer b gets its starting margins (or the identity). */
void lower_init(Lowering *l, uint32_t b);
/* reduce: each lane's leaf into its row's margins for the tree's outputs. */
void lower_reduce(Lowering *l, const MInst *inst);
/* reduceDim: a buffer's copies folded into another. */
void lower_reduce_dim(Lowering *l, const MInst *inst);

/* lower_keys.c */
/* ifComplete: the scan of its rows, their keys and tiles, and its body (twice where the walks differ). */
void lower_if_complete(Lowering *l, const MInst *inst);
/* The ifCompletes whose block mir_plan_blocks planned (for mir_some): keys; keys for one row. */
bool lower_makes_keys(const MModule *m, const MInst *inst);
bool lower_makes_lone_keys(const MModule *m, const MInst *inst);
/* An ifComplete whose walks may take their tops at once (lower_tops), as far as its block decides. */
bool lower_takes_tops(const MModule *m, const MInst *inst);
/* An ifComplete whose walks prefetch the rows of the next block (TOP_LANES rows walked side by side). */
bool lower_keys_block(const MModule *m, const MInst *inst);

/* The host's and GPUs' lowering: the core above, with a GPU's hooks (mir_to_gpu.c) or none (the host). */
LModule *lower_module_with(const MModule *m, const LowerHooks *hooks, Error *e);
/* A GPU kernel's i64 values that provably fit in 32 bits computed as i32 (lower/gpu_ints.c). */
void lower_gpu_ints(const LModule *m, LFunc *fn);

/* lower/stack.c: buffers on the stack fit there (each at most 1 MiB), and so do each host function's arrays together. */
bool lower_check_buffers(const MModule *m, Error *e);
bool lower_check_stack(const LModule *m, Error *e);

#endif
