/*
 * GPU schedules: SilvanForge's template (its Table 5) and its pruning heuristic
 * (Algorithm 1). A point of the space (HGpuKnobs) is written as
 *
 *   tile(batch, b0, b1, R); tile(b1, b2, b3, r)     R rows per block, r per thread
 *   tile(tree, t0, t1, K); tile(t1, t2, t3, I)      K = ceil(trees / tree threads), I interleaved
 *   reorder(b0, t0, b2, b3, t2, t3)
 *   gpuDimension(b0, grid.x); gpuDimension(t0, block.y); gpuDimension(b2, block.x)
 *   cache(b0); cache(t0); interleave(t3); unrollWalk(t3, depth); sharedReduce(t0)
 *
 * leaving out the tiles of size 1 and the directives that are off. The tree threads'
 * loop t0 sits outside the threads' rows, not inside them as in SilvanForge: the
 * block's threads meet to fold the tree threads' sums after t0, and threads can meet
 * only outside a loop that runs a different number of times on each of them, as the
 * rows of a block do where the batch ends inside it (the lowering refuses t0 inside b2).
 *
 * Trees compiled into code (`code`'s ifs, `branchfree`'s masks: seed 003) need their
 * tree loop specialized, which a loop that threads spread cannot be: a thread per row
 * walks every tree, one kernel holding the forest's code,
 *
 *   tile(batch, b0, b1, R); gpuDimension(b0, grid.x); gpuDimension(b1, block.x)
 *   cache(b0); specialize(tree); representation(code | branchfree)
 *
 * for forests of at most LOWER_CODE_FUNCTION_SPLITS splits. Seed 003 measured the
 * branch-free form fastest up to depth 6 and ifs from depth 7 (their divergence costs
 * less than every split of a deeper tree), both faster than trees in memory, which pay
 * a load's latency at each level, up to depth 7, where ifs and a table in constant
 * memory met. The heuristic follows it: forests of at most GPU_CODE_DEPTH levels take
 * code first (branch-free to GPU_BRANCHFREE_DEPTH, ifs past it), deeper ones tables
 * first, code after them for the tuner. (Not yet timed by grove on a GPU.)
 */
#include "lower/cost.h"
#include "lower/lower.h"

#include <stdio.h>
#include <stdlib.h>

const uint32_t hir_gpu_rows_per_block[] = {8, 32, 64, 0};
const uint32_t hir_gpu_rows_per_thread[] = {1, 2, 4, 0};
const uint32_t hir_gpu_tree_threads[] = {2, 10, 20, 50, 0};
const uint32_t hir_gpu_interleave[] = {1, 2, 4, 0};

/* The GPU lowering's limits (lower/mir_to_lir.c): threads per block, and bytes of shared memory per block. */
#define GPU_MAX_BLOCK_THREADS 1024
#define GPU_MAX_SHARED (48u << 10)
/* Algorithm 1's thresholds: batches of at most this many rows, or rows of more features, want more tree threads. */
#define GPU_BATCH_THRESHOLD 2048
#define GPU_FEATURE_THRESHOLD 128

void hir_gpu_shape(const HForest *f, size_t batch, HGpuShape *s)
{
	uint32_t min, max;
	uint64_t splits = 0;
	hir_leaf_depth_range(f, &min, &max);
	for (uint32_t t = 0; t < f->num_trees; t++)
		splits += hir_tree_splits(f, t);
	*s = (HGpuShape){.batch = batch, .features = f->num_features, .trees = f->num_trees, .outputs = f->num_outputs,
	                 .depth = max, .splits = splits, .row_bytes = f->threshold_type == HTYPE_F64 ? 8 : 4,
	                 .margin_bytes = f->leaf_type == HTYPE_F64 ? 8 : 4,
	                 .unroll_pays = cost_walks_even(f)};
}

/* Trees each tree thread walks when tree_threads threads split trees. */
static uint32_t trees_per_thread(uint32_t trees, uint32_t tree_threads)
{
	trees = trees ? trees : 1;
	return (trees + tree_threads - 1) / tree_threads;
}

/* The threads that get trees when tree_threads threads split them (fewer where some would get none). */
static uint32_t busy_tree_threads(uint32_t trees, uint32_t tree_threads)
{
	uint32_t per = trees_per_thread(trees, tree_threads);
	return ((trees ? trees : 1) + per - 1) / per;
}

/* Bytes of shared memory k's block takes: the tree threads' sums of its rows where kept there, and its rows where cached. */
static uint64_t gpu_shared_bytes(const HGpuShape *s, const HGpuKnobs *k)
{
	uint64_t sums = k->shared_reduce ? (uint64_t)k->rows_per_block * busy_tree_threads(s->trees, k->tree_threads) *
	                                       s->outputs * s->margin_bytes : 0;
	return sums + (k->cache_rows ? (uint64_t)k->rows_per_block * gpu_row_stride(s->features) * s->row_bytes : 0);
}

bool hir_gpu_knobs_check(const HGpuShape *s, const HGpuKnobs *k, Error *e)
{
	uint64_t threads, shared;
	uint32_t reps = 0;
	while (lower_representation_name(reps))
		reps++;
	if (!k->rows_per_thread || !k->tree_threads || !k->interleave || k->rows_per_block % k->rows_per_thread)
		return error_set(e, "%u rows per block, %u per thread, %u tree threads, interleave %u: each at least 1, and "
		                    "rows per thread dividing rows per block", k->rows_per_block, k->rows_per_thread,
		                 k->tree_threads, k->interleave);
	if (k->representation >= reps)
		return error_set(e, "representation %u: there are %u", k->representation, reps);
	if (lower_representation_traits(k->representation) & LREP_CODE &&
	    (k->rows_per_thread > 1 || k->tree_threads > 1 || k->interleave > 1 || k->cache_trees || k->unroll || k->shared_reduce))
		return error_set(e, "representation %s: its trees are code, which a thread per row walks whole (a tree loop "
		                    "that threads spread cannot be specialized): 1 row per thread, 1 tree thread, interleave 1, "
		                    "no cached trees, no unrolling, no shared reduction", lower_representation_name(k->representation));
	if (lower_representation_traits(k->representation) & LREP_CODE && s->splits > LOWER_CODE_FUNCTION_SPLITS)
		return error_set(e, "representation %s: the forest's %llu splits are more code than one kernel holds (%d)",
		                 lower_representation_name(k->representation), (unsigned long long)s->splits,
		                 LOWER_CODE_FUNCTION_SPLITS);
	threads = (uint64_t)(k->rows_per_block / k->rows_per_thread) * busy_tree_threads(s->trees, k->tree_threads);
	if (threads > GPU_MAX_BLOCK_THREADS)
		return error_set(e, "%u rows per block at %u per thread times %u tree threads: %llu threads per block, more "
		                    "than %u", k->rows_per_block, k->rows_per_thread, k->tree_threads,
		                 (unsigned long long)threads, GPU_MAX_BLOCK_THREADS);
	shared = gpu_shared_bytes(s, k);
	if (shared > GPU_MAX_SHARED)
		return error_set(e, "%u rows per block%s with %u tree threads' sums of %u margins%s: %llu bytes of shared "
		                    "memory, more than %u", k->rows_per_block, k->cache_rows ? " cached" : "",
		                 k->tree_threads, s->outputs, k->shared_reduce ? " there" : " in global memory",
		                 (unsigned long long)shared, GPU_MAX_SHARED);
	return true;
}

/* The deepest trees seed 003 found fastest branch-free, and as code (ifs) rather than tables. */
#define GPU_BRANCHFREE_DEPTH 6
#define GPU_CODE_DEPTH 7
/* Rows per block of a thread per row walking every tree as code: few blocks of one warp would leave an SM half idle. */
static const uint32_t code_rows[] = {128, 64};

/* Trees as code (the header's schedule), where the forest's splits fit a kernel: in seed 003's order by depth. */
static uint32_t code_candidates(const HGpuShape *s, HGpuKnobs *out, uint32_t max, uint32_t n)
{
	bool shallow = s->depth <= GPU_BRANCHFREE_DEPTH;
	const char *order[] = {shallow ? "branchfree" : "code", shallow ? "code" : "branchfree"};
	for (uint32_t r = 0; r < 2 && s->splits; r++)
		for (uint32_t i = 0; i < COUNT_OF(code_rows); i++) {
			HGpuKnobs k = {.rows_per_block = code_rows[i], .rows_per_thread = 1, .tree_threads = 1, .interleave = 1,
			               .cache_rows = 1, .representation = (uint8_t)lower_representation_index(order[r])};
			if (gpu_shared_bytes(s, &k) > GPU_MAX_SHARED)
				k.cache_rows = 0;
			if (!hir_gpu_knobs_check(s, &k, NULL))
				continue;
			if (n < max)
				out[n] = k;
			n++;
		}
	return n;
}

uint32_t hir_gpu_candidates(const HGpuShape *s, HGpuKnobs *out, uint32_t max)
{
	/* Algorithm 1 lines 3-8: small batches and wide rows take few rows per block and many tree threads. */
	static const uint32_t few_rows[] = {8, 32}, many_threads[] = {20, 50}, many_rows[] = {32, 64}, few_threads[] = {2, 10};
	bool small = s->batch <= GPU_BATCH_THRESHOLD || s->features > GPU_FEATURE_THRESHOLD;
	const uint32_t *rows = small ? few_rows : many_rows, *threads = small ? many_threads : few_threads;
	uint32_t n = s->depth <= GPU_CODE_DEPTH ? code_candidates(s, out, max, 0) : 0;
	for (uint32_t i = 0; i < 2; i++)
		for (uint32_t j = 0; j < 2; j++)
			for (const uint32_t *interleave = hir_gpu_interleave; *interleave; interleave++)
				for (uint8_t rep = 0; lower_representation_name(rep); rep++) {
					/*
					 * Not searched: tiles (reached by tiling), blocks of trees (many interleaved trees), levels (CPU
					 * walks), the representations taken only where named.
					 */
					if (lower_representation_traits(rep) & (LREP_TILES | LREP_BLOCKS | LREP_LEVELS | LREP_NAMED))
						continue;
					/*
					 * Lines 15-17: rows cached (where they fit), trees not, walks unrolled where interleaved;
					 * the tree threads' sums in shared memory (tune tries the best few with them in global memory).
					 */
					HGpuKnobs k = {.rows_per_block = rows[i], .rows_per_thread = 1,
					               .tree_threads = busy_tree_threads(s->trees, threads[j]),
					               .interleave = *interleave, .cache_rows = 1, .shared_reduce = 1,
					               .unroll = *interleave > 1 && s->unroll_pays && s->depth > 0, .representation = rep};
					/* Tree threads beyond the trees, or more trees interleaved than a thread walks: the same as fewer. */
					if ((j && k.tree_threads == busy_tree_threads(s->trees, threads[0])) ||
					    *interleave > trees_per_thread(s->trees, k.tree_threads))
						continue;
					if (gpu_shared_bytes(s, &k) > GPU_MAX_SHARED)
						k.cache_rows = 0; /* "it may not be possible to cache all rows" */
					if (!hir_gpu_knobs_check(s, &k, NULL))
						continue;
					if (n < max)
						out[n] = k;
					n++;
				}
	return s->depth <= GPU_CODE_DEPTH ? n : code_candidates(s, out, max, n);
}

/* The loops a point of the space is written on: `batch` and `tree` (or a split's halves of them), the tiles' names after prefix. */
typedef struct KnobLoops {
	const char *batch, *tree, *prefix;
} KnobLoops;

/* Write knobs k on the loops of at (hir_apply_gpu_knobs's form), without the final check. */
static bool apply_knobs(HForest *f, const HGpuKnobs *k, KnobLoops at, Error *e)
{
	HSchedule *s = &f->schedule;
	char b0[16], b1[16], b2[16], b3[16], t0[16], t1[16], t2[16], t3[16];
	const char *order[6] = {b0, t0}, *rows = b1, *walk = t1;
	uint32_t n = 2, shallowest, depth;
	bool ok;
	snprintf(b0, sizeof b0, "%sb0", at.prefix), snprintf(b1, sizeof b1, "%sb1", at.prefix);
	snprintf(b2, sizeof b2, "%sb2", at.prefix), snprintf(b3, sizeof b3, "%sb3", at.prefix);
	snprintf(t0, sizeof t0, "%st0", at.prefix), snprintf(t1, sizeof t1, "%st1", at.prefix);
	snprintf(t2, sizeof t2, "%st2", at.prefix), snprintf(t3, sizeof t3, "%st3", at.prefix);
	if (lower_representation_traits(k->representation) & LREP_CODE) /* a thread per row, the trees as code */
		return hir_schedule_tile(s, at.batch, b0, b1, k->rows_per_block, e) &&
		       hir_schedule_gpu_dimension(s, b0, "grid.x", e) && hir_schedule_gpu_dimension(s, b1, "block.x", e) &&
		       (!k->cache_rows || hir_schedule_mark(s, HDIR_CACHE, b0, 0, e)) &&
		       hir_schedule_mark(s, HDIR_SPECIALIZE, at.tree, 0, e) &&
		       hir_schedule_representation(s, lower_representation_name(k->representation), e);
	ok = hir_schedule_tile(s, at.batch, b0, b1, k->rows_per_block, e) &&
	     hir_schedule_tile(s, at.tree, t0, t1, trees_per_thread(f->num_trees, k->tree_threads), e);
	if (k->rows_per_thread > 1)
		ok = ok && hir_schedule_tile(s, b1, rows = b2, b3, k->rows_per_thread, e);
	order[n++] = rows;
	if (k->rows_per_thread > 1)
		order[n++] = b3;
	if (k->interleave > 1) {
		ok = ok && hir_schedule_tile(s, t1, t2, walk = t3, k->interleave, e);
		order[n++] = t2;
	}
	order[n++] = walk;
	ok = ok && hir_schedule_reorder(s, order, n, e) && hir_schedule_gpu_dimension(s, b0, "grid.x", e) &&
	     hir_schedule_gpu_dimension(s, t0, "block.y", e) && hir_schedule_gpu_dimension(s, rows, "block.x", e);
	if (k->cache_rows)
		ok = ok && hir_schedule_mark(s, HDIR_CACHE, b0, 0, e);
	if (k->cache_trees)
		ok = ok && hir_schedule_mark(s, HDIR_CACHE, t0, 0, e);
	if (k->interleave > 1)
		ok = ok && hir_schedule_mark(s, HDIR_INTERLEAVE, walk, 0, e);
	hir_leaf_depth_range(f, &shallowest, &depth);
	if (k->unroll && depth > 0)
		ok = ok && hir_schedule_mark(s, HDIR_UNROLL_WALK, walk, depth, e);
	if (k->shared_reduce)
		ok = ok && hir_schedule_mark(s, HDIR_SHARED_REDUCE, t0, 0, e);
	return ok;
}

bool hir_apply_gpu_knobs(HForest *f, const HGpuKnobs *k, Error *e)
{
	hir_schedule_init(&f->schedule, f->num_trees);
	return apply_knobs(f, k, (KnobLoops){"batch", "tree", ""}, e) && hir_schedule_check(&f->schedule, e);
}

/* Where no template schedule fits (rows of too many margins for shared memory): blocks of this many rows, a thread per row. */
#define GPU_ROWS_PER_BLOCK 128
/*
 * Batches of fewer rows than this take their own kernels (splitSize), whose blocks spread
 * a row's trees over GPU_FEW_TREE_THREADS threads: a block of a few rows' threads each
 * walking half the trees leaves most of a large GPU idle below tens of thousands of rows
 * (measured: docs/performance-notes.md, GPU schedules for small batches).
 */
#define GPU_FEW_ROWS 32768
#define GPU_FEW_TREE_THREADS 25

/*
 * The heuristic's first candidate for representation `named` (NULL: any): the first of
 * that representation where its trees are code, else the first whose trees are in
 * memory, which the named representation then lays out. False where there is none.
 */
static bool first_candidate(const HGpuShape *shape, const char *named, HGpuKnobs *k)
{
	uint32_t n = hir_gpu_candidates(shape, NULL, 0), i = 0;
	HGpuKnobs *all = xcalloc(n + 1, sizeof *all);
	bool code = lower_representation_named_traits(named) & LREP_CODE;
	hir_gpu_candidates(shape, all, n);
	while (named && i < n &&
	       (code ? all[i].representation != lower_representation_index(named)
	             : (lower_representation_traits(all[i].representation) & LREP_CODE) != 0))
		i++;
	if (i < n)
		*k = all[i];
	free(all);
	return i < n;
}

void hir_choose_gpu_schedule(HForest *f, const char *named)
{
	HSchedule *s = &f->schedule;
	HGpuShape shape;
	HGpuKnobs k, few;
	Error e;
	hir_gpu_shape(f, HIR_GPU_DEFAULT_BATCH, &shape);
	if (first_candidate(&shape, named, &k)) {
		few = k;
		few.tree_threads = busy_tree_threads(f->num_trees, GPU_FEW_TREE_THREADS);
		few.interleave = 1;
		few.unroll = 0;
		few.cache_rows = gpu_shared_bytes(&shape, &few) <= GPU_MAX_SHARED; /* (more sums: the rows may no longer fit) */
		if (few.tree_threads > k.tree_threads && hir_gpu_knobs_check(&shape, &few, NULL)) {
			hir_schedule_init(s, f->num_trees);
			if (!hir_schedule_split_size(s, "batch", "few", "many", GPU_FEW_ROWS, &e) ||
			    !apply_knobs(f, &few, (KnobLoops){"few", "few.tree", "f"}, &e) ||
			    !apply_knobs(f, &k, (KnobLoops){"many", "many.tree", ""}, &e) || !hir_schedule_check(s, &e))
				die("default GPU schedule: %s", e.message);
		} else if (!hir_apply_gpu_knobs(f, &k, &e)) {
			die("default GPU schedule: %s", e.message);
		}
		return;
	}
	hir_schedule_init(s, f->num_trees);
	if (!hir_schedule_tile(s, "batch", "b0", "b1", GPU_ROWS_PER_BLOCK, &e) || !hir_schedule_gpu_dimension(s, "b0", "grid.x", &e) ||
	    !hir_schedule_gpu_dimension(s, "b1", "block.x", &e) || !hir_schedule_check(s, &e))
		die("default GPU schedule: %s", e.message);
}

int hir_gpu_knobs_describe(const HGpuKnobs *k, char *buf, size_t size)
{
	return snprintf(buf, size, "rows/block %u rows/thread %u tree_threads %u interleave %u unroll %u cache_rows %u "
	                "cache_trees %u shared_reduce %u %s", k->rows_per_block, k->rows_per_thread, k->tree_threads,
	                k->interleave, k->unroll, k->cache_rows, k->cache_trees, k->shared_reduce,
	                lower_representation_name(k->representation));
}
