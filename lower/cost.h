/*
 * What grove's compile costs and what its code's speed pays for, in one module: the
 * heuristic (hir_choose_schedule), the tuner, the HIR passes and the lowering ask it
 * alike, so that no pass asks another level.
 *
 * Budgets: rules, each with its measurements beside it in cost.c, of what fits (on the
 * stack, in memory) and what pays (padding, depth groups, keys).
 *
 * The learned cost model (../shared/seeds/002: boosted regression trees as a performance
 * model for auto-tuning): the time per row of a schedule grove writes itself
 * (HScheduleKnobs), predicted from the forest's shape, the knobs, the batch size and the
 * CPU. `grove tune` logs these features with every candidate it times; tools/cost_train.py
 * trains an XGBoost model on such logs into lower/cost_model.json; the build compiles that
 * forest with grove itself (a first grove, built without it) and links it in
 * (lower/cost_model.c).
 *
 * Features are floats in a fixed order (cost_feature_name): the forest's, the
 * machine's, every knob of hir_knobs, and a few the knobs imply (bytes a tile of trees
 * and a block of rows take). The model predicts log2 of a schedule's time per row over a
 * typical one's for the same forest and batch (the median candidate of its tune in
 * training): a ranking, and in differences a predicted speed-up.
 */
#ifndef GROVE_LOWER_COST_H
#define GROVE_LOWER_COST_H

#include "lower/lower.h"

/* Nodes a forest of trees at most PAD_BUDGET_DEPTH deep may have after padding whatever it had before: 2^21 (16 MiB of array records of f32 values). */
#define PAD_BUDGET (1u << 21)
#define PAD_BUDGET_DEPTH 10
/* Whether a forest of `unpadded` nodes (or slots of complete trees) may grow to `nodes` by padding or layout, its deepest tree `depth` deep. */
bool cost_nodes_affordable(uint64_t nodes, uint64_t unpadded, uint32_t depth);
/* Whether padding f pays: it lets walks run without leaf tests at a bounded memory cost. */
bool cost_padding_pays(const HForest *f);
/* Whether every walk of f can take a fixed number of steps: its leaves have one depth, or padding that pays evens them. */
bool cost_walks_even(const HForest *f);
/* Whether the n depth groups ending at ends pay: a twentieth of the walk steps saved, the padding's memory bounded. */
bool cost_depth_groups_pay(const HForest *f, const uint32_t *ends, uint32_t n);
/*
 * The keys a row of f has where walks read keys (RepLayout.key_columns): twice its
 * features where its splits send NaN either way, not where 0 goes (nan_columns).
 */
uint32_t cost_key_columns(const HForest *f);
/*
 * The most stack one ifComplete's keys may take: 256 rows of 64 features as i64, or of
 * 128 as i32. It admits 512 rows of syn-covtype's 54 features, whose 800 trees then come
 * from L3 half as often as in blocks of 256 rows; a smaller bound leaves such rows
 * without keys, which costs more (measured: docs/performance-notes.md, Stack budget for
 * keys).
 */
#define COST_KEYS_MAX_BYTES (128 * 1024)
/*
 * Whether blocks of `rows` rows of `columns` keys (cost_key_columns: a scan of every
 * split, which callers make once) get i64 keys (the walks' fastest compares) where the
 * layout keeps a key copy.
 */
bool cost_whole_keys_fit(uint32_t columns, int64_t rows);
/* Whether blocks of `rows` rows of `columns` keys get i32 keys on the stack. */
bool cost_keys_fit(uint32_t columns, int64_t rows);
/* The most rows a block may have for cost_keys_fit (0 where `columns` is 0). */
int64_t cost_keys_max_rows(uint32_t columns);
/* Whether f's walks read their keys in tiles (RepLayout.tile_words) where they make keys: rows wide enough. */
bool cost_keys_in_tiles(const HForest *f);
/* The rows of the tiles of keys of a block of `span` rows (RepLayout.key_lanes). */
int64_t cost_tiled_rows(int64_t span);
/* Whether the tiles of keys of a block of `span` rows of `columns` keys fit the stack. */
bool cost_tiles_fit(uint32_t columns, int64_t span);
/* Whether the walks of blocks of `rows` of f's rows (`columns` keys) read keys in tiles, where the CPU takes tops. */
bool cost_tiled_keys_fit(const HForest *f, uint32_t columns, int64_t rows);
/* Whether f's average tree outgrows L1 (forests grown to purity): most steps of its walks wait on L2 and beyond. */
bool cost_walks_wait_on_memory(const HForest *f);
/* Bytes the walks of f's symmetric trees read in the oblivious layout: a record (8 bytes) a level, every leaf's values. */
uint64_t cost_oblivious_bytes(const HForest *f);
/*
 * Whether f's walks of BYTE_TOP_LANES rows read bins (RepLayout.byte_tops) on a CPU whose
 * vectors take tops as `tops` says: AVX2's (MTOPS_PAIRS; AVX-512 keeps its own tops),
 * symmetric trees of one depth up to 8 with float leaves (a vector of up to 32 a leaf, every
 * tree's of one width), float thresholds and no category sets, at most 255 thresholds a
 * feature (a bin is a byte).
 */
bool cost_byte_tops(const HForest *f, MTops tops);
/* Whether the leaves of such trees of `depth` come from byte planes (RepLayout.bins_in_order), not one by one. */
bool cost_leaf_planes(uint32_t depth);
/* Whether a block of `rows` of f's rows, row_size bytes a value, may be copied to the stack with NaN read as 0. */
bool cost_zero_rows_fit(const HForest *f, int64_t rows, size_t row_size);

/* Per-depth features: the fill of depths 0 .. COST_DEPTHS - 1 (splits there over trees x 2^depth). */
#define COST_DEPTHS 16
enum {
	COST_FOREST_FEATURES = 16 + COST_DEPTHS,
	COST_MACHINE_FEATURES = 5,
	COST_DERIVED_FEATURES = 2,
	COST_FEATURES = COST_FOREST_FEATURES + COST_MACHINE_FEATURES + HKNOB_COUNT + COST_DERIVED_FEATURES,
};
/* Feature i's name (the log's column less its "x_"): the forest's, the machine's, then hir_knobs' names. */
const char *cost_feature_name(uint32_t i);

/* What the features need of a forest, computed once for all its candidates. */
typedef struct CostForest {
	const HForest *forest;
	float x[COST_FOREST_FEATURES];
	double tree_bytes; /* a tree's mean bytes as the array layout stores it (complete to its depth) */
	double row_bytes;  /* a row's (floats, or doubles where the thresholds are) */
	uint32_t shallowest, deepest; /* trees' depths */
	uint64_t splits;
	bool oblivious;    /* every tree symmetric (hir_forest_symmetric) */
	bool walks_even;   /* every walk can take a fixed number of steps (cost_walks_even) */
} CostForest;
void cost_forest(const HForest *f, CostForest *c);

/* The machine a schedule is for: the batch size, the threads, and this CPU's vectors and caches. */
typedef struct CostMachine {
	size_t batch;
	uint32_t threads;
	uint32_t vector_bits; /* 512 with AVX-512, 256 with AVX2, else 128 */
	uint64_t l2_bytes, l3_bytes; /* per core, and shared (0 where the system does not say) */
} CostMachine;
/* This host for batch rows a call on threads threads. */
void cost_machine_host(CostMachine *m, size_t batch, uint32_t threads);

/* The features of k's schedule for c's forest on m into x (COST_FEATURES floats). */
void cost_features(const CostForest *c, const CostMachine *m, const HScheduleKnobs *k, float *x);

/*
 * The leaves' depth as walks reach them: mean and standard deviation, each leaf weighted
 * by the training rows that reached it (its cover) where every leaf has one, else
 * equally.
 */
void cost_leaf_depths(const HForest *f, double *mean, double *sd);
/* Whether walks of `lanes` rows side by side, past `peel` straight steps, finish in one loop together rather than a loop a lane. */
bool cost_finish_together(const HForest *f, uint32_t peel, uint32_t lanes);
/*
 * The rows from which TOP_LANES rows side by side, those past the rows walking copies of
 * one, cost no more than the rows walked one at a time: where a tile of rows is left
 * short (lower_lanes_run; `lone`: lone rows of splitSize's few half, whose code is
 * faster a row). masks: the trees walk by leaf masks (RepLayout.leaf_masks); levels: by
 * their levels' splits, symmetric trees' (LRepresentation.levels). TOP_LANES: never, the
 * forest past L2.
 */
uint32_t cost_pad_rows(const HForest *f, bool masks, bool levels, bool lone);

/*
 * Whether this grove was built with a trained model (else cost_predict has none to ask),
 * and the model's prediction of n feature vectors: lower/cost_model.c, built twice (with
 * the compiled model, and without for the first grove that compiles it).
 */
bool cost_model_trained(void);
void cost_model_predict(const float *x, size_t n, float *out);
/* The predicted relative log2 time per row of n feature vectors (x: n x COST_FEATURES) into out; false where no model is linked. */
bool cost_predict(const float *x, size_t n, float *out);

/*
 * The space the searches turn (lower/cost_search.c): COST_DIMENSIONS dimensions, in the
 * order a coordinate descent turns them: rows, trees, parallel, tree_tile, row_tile,
 * unroll, peel, representation, depth groups, tiles (with their tiled representation),
 * rows cached, trees side by side for lone rows (few_trees), trees prefetched.
 */
#define COST_DIMENSIONS 13
#define COST_PARALLEL_DIMENSION 2
#define COST_REPRESENTATION_DIMENSION 7
#define COST_TILES_DIMENSION 9
typedef struct CostSpace {
	const HForest *forest;
	const char *representation; /* named by the user, and so fixed; NULL to search */
	size_t batch;               /* the (smallest) batch searched for: lone rows' knobs turn below few_rows */
	uint32_t depth;             /* the deepest tree's */
	uint64_t splits;
	bool oblivious;             /* the trees symmetric, their walks even (the levels representation applies) */
	bool depths_differ;         /* some trees shallower than others (depth groups are searched) */
	unsigned fixed;             /* 1 << dimension: dimensions not turned */
	uint32_t tree_tile;         /* the tile of trees L2 holds in the array layout, which tree tiles are searched around */
} CostSpace;
void cost_space(const CostForest *c, const char *representation, size_t batch, CostSpace *s);
/* The values dimension i takes (at most 8) around the heuristic's knobs; returns how many. */
uint32_t cost_values(const CostSpace *s, const HScheduleKnobs *heuristic, int i, uint32_t *v);
/* Set dimension i of k to v, with what the other knobs then must be (code takes no tiles, ...). */
void cost_set(HScheduleKnobs *k, int i, uint32_t v);
/* Whether dimension i is worth turning from k (row tiles only where trees are tiled, ...). */
bool cost_turns(const CostSpace *s, int i, const HScheduleKnobs *k);
/*
 * k as the schedule it writes: caches hir_apply_knobs leaves out (rows that do not fit,
 * trees not in tiles) cleared and the knobs in normal form, so that candidates that
 * write one schedule are one candidate.
 */
void cost_normal(const HForest *f, HScheduleKnobs *k);

/* What a search on predictions reports: each candidate with its predicted relative log2 time. */
typedef void CostVisit(void *context, const HScheduleKnobs *k, float predicted);
/*
 * Coordinate descent on the model's predictions from *k, the mean over the n machines
 * m (batch sizes, say) of each candidate's predicted relative log2 time, until no dimension
 * improves it; visit (unless NULL) sees every candidate predicted. Leaves the best in *k
 * and returns its prediction. Needs a trained model (cost_model_trained).
 */
float cost_descend(const CostSpace *s, const CostForest *c, const CostMachine *m, uint32_t n,
                   const HScheduleKnobs *heuristic, HScheduleKnobs *k, CostVisit *visit, void *context);

/*
 * The learned schedule's knobs (grove compile --learned): where grove has a model, a descent on its predictions
 * (averaged over lone rows, small and large batches, one thread) from the heuristic's
 * knobs k, turning every knob but the parallel loop (the model learns from one thread)
 * and the representation and its tiles (the heuristic's rules for code, symmetric trees
 * and tiles hold measurements the model's few training forests do not); the best
 * replaces k where it is predicted a quarter faster. Returns whether it did.
 */
bool cost_improve_knobs(const HForest *f, const char *named, HScheduleKnobs *k);
/*
 * HIR (compile --learned): hir_choose_schedule with the cost model's knobs where cost_improve_knobs finds
 * better ones that apply (and sets *learned), the heuristic's otherwise. A lowering may
 * still refuse the model's (target/compile.c then takes the heuristic's).
 */
bool cost_choose_schedule(HForest *f, uint32_t tree_tile, uint32_t rows, uint32_t trees, const char *named, MTops tops,
                          bool *learned, Error *e);

#endif
