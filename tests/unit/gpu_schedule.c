/*
 * Unit tests of the GPU schedules grove writes itself (lower/hir_choose_schedule.c):
 * the candidates SilvanForge's pruning heuristic keeps for given batch sizes and
 * forest shapes, exactly and in order, the limits a template point is checked
 * against, and the directives one point is written as (for
 * tests/models/multi_softprob7.x1.json, found from the program's place, build/tests).
 */
#include "front/front.h"
#include "lower/lower.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/check.h"

#define MAX 64

/* A 100-tree depth-8 forest of one margin and features features, as the heuristic sees it at batch rows. */
static HGpuShape shape(size_t batch, uint32_t features)
{
	return (HGpuShape){.batch = batch, .features = features, .trees = 100, .outputs = 1, .depth = 8, .row_bytes = 4,
	                   .margin_bytes = 4, .unroll_pays = true};
}

/*
 * The candidates of the first representation, as "R/T/I" words (rows per block, tree
 * threads, interleave) followed by u (unrolled) and c (rows cached); checks that rows
 * per thread is 1, trees are never cached, the tree threads' sums are in shared memory, and every schedule comes once per representation that
 * keeps trees in memory (the template does not specialize tree loops, as code needs) and is searched (not named_only).
 */
static const char *listed(const HGpuShape *s, char *buf, size_t size)
{
	HGpuKnobs k[MAX];
	uint32_t n = hir_gpu_candidates(s, k, MAX), reps = 0, per_rep = 0;
	size_t at = 0;
	buf[0] = 0;
	CHECK(n <= MAX);
	for (uint32_t i = 0; lower_representation_name(i); i++)
		reps += !(lower_representation_traits(i) & (LREP_CODE | LREP_TILES | LREP_BLOCKS | LREP_LEVELS | LREP_NAMED));
	for (uint32_t i = 0; i < n && i < MAX; i++) {
		CHECK(k[i].rows_per_thread == 1 && !k[i].cache_trees && k[i].shared_reduce);
		if (k[i].representation)
			continue;
		per_rep++;
		at += (size_t)snprintf(buf + at, size - at, "%s%u/%u/%u%s%s", at ? " " : "", k[i].rows_per_block,
		                       k[i].tree_threads, k[i].interleave, k[i].unroll ? "u" : "", k[i].cache_rows ? "c" : "");
	}
	CHECK(n == per_rep * reps);
	return buf;
}

#define CHECK_LIST(s, want)                                                                                  \
	do {                                                                                                 \
		char got_[1024];                                                                             \
		HGpuShape s_ = (s);                                                                          \
		if (strcmp(listed(&s_, got_, sizeof got_), want)) {                                          \
			fprintf(stderr, "%s:%d: candidates\n  %s\nexpected\n  %s\n", __FILE__, __LINE__, got_, want); \
			failures++;                                                                          \
		}                                                                                            \
	} while (0)

/* Algorithm 1's two branches, and the thresholds between them. */
static void test_batch_and_features(void)
{
	/* Small batch: 8 or 32 rows per block, 20 or 50 tree threads; 32 x 50 threads are too many for a block. */
	const char *small = "8/20/1c 8/20/2uc 8/20/4uc 8/50/1c 8/50/2uc 32/20/1c 32/20/2uc 32/20/4uc";
	/* Large batch of narrow rows: 32 or 64 rows per block, 2 or 10 tree threads. */
	const char *large = "32/2/1c 32/2/2uc 32/2/4uc 32/10/1c 32/10/2uc 32/10/4uc 64/2/1c 64/2/2uc 64/2/4uc 64/10/1c "
	                    "64/10/2uc 64/10/4uc";
	/* Wide rows: the small batch's schedules, and no block's rows fit in shared memory (8 x 2000 x 4 > 48 KiB). */
	const char *wide = "8/20/1 8/20/2u 8/20/4u 8/50/1 8/50/2u 32/20/1 32/20/2u 32/20/4u";
	CHECK_LIST(shape(64, 28), small);
	CHECK_LIST(shape(100000, 28), large);
	CHECK_LIST(shape(64, 2000), wide);
	CHECK_LIST(shape(100000, 2000), wide);
	CHECK_LIST(shape(2048, 28), small);
	CHECK_LIST(shape(2049, 28), large);
	CHECK_LIST(shape(4096, 128), large);
	/* 129 features: the small-batch branch; 32 rows of them (16512 bytes) still fit. */
	CHECK_LIST(shape(4096, 129), small);
}

/* The forest's shape: few trees, many margins, walks that must not be unrolled. */
static void test_forest_shape(void)
{
	HGpuShape s = shape(64, 28);
	/* Three trees: 20 and 50 tree threads are both 3 threads of a tree each, listed once, nothing to interleave. */
	s.trees = 3;
	CHECK_LIST(s, "8/3/1c 32/3/1c");
	/* 1000 trees: 50 tree threads walk 20 each, so interleave 4 is kept. */
	s.trees = 1000;
	CHECK_LIST(s, "8/20/1c 8/20/2uc 8/20/4uc 8/50/1c 8/50/2uc 8/50/4uc 32/20/1c 32/20/2uc 32/20/4uc");
	/* Deep trees whose padding would not pay: interleaved, not unrolled. */
	s = shape(100000, 28);
	s.unroll_pays = false;
	CHECK_LIST(s, "32/2/1c 32/2/2c 32/2/4c 32/10/1c 32/10/2c 32/10/4c 64/2/1c 64/2/2c 64/2/4c 64/10/1c 64/10/2c 64/10/4c");
	/* 200 margins of doubles: 64 rows x 10 tree threads' sums take 1 MiB; 32 x 2 of them 100 KiB: none fits. */
	s.outputs = 200;
	s.margin_bytes = 8;
	CHECK_LIST(s, "");
	/* 36 margins: the 10-thread sums of 32 rows (46080 bytes) fit only without the rows cached; those of 64 rows not at all. */
	s.outputs = 36;
	s.margin_bytes = 4;
	CHECK_LIST(s, "32/2/1c 32/2/2c 32/2/4c 32/10/1 32/10/2 32/10/4 64/2/1c 64/2/2c 64/2/4c");
}

/* What hir_gpu_knobs_check refuses, and says. */
static void test_check(void)
{
	HGpuShape s = shape(4096, 28);
	HGpuKnobs k = {.rows_per_block = 64, .rows_per_thread = 1, .tree_threads = 20, .interleave = 1, .shared_reduce = 1};
	Error e = {.message = {0}};
	CHECK(!hir_gpu_knobs_check(&s, &k, &e) && strstr(e.message, "1280 threads per block, more than 1024"));
	k.rows_per_thread = 2;
	CHECK(hir_gpu_knobs_check(&s, &k, &e));
	s.features = 200;
	k.cache_rows = 1;
	CHECK(!hir_gpu_knobs_check(&s, &k, &e) && strstr(e.message, "56576 bytes of shared memory, more than 49152"));
	k.shared_reduce = 0; /* the sums in global memory: the rows alone, 201 floats apart */
	CHECK(!hir_gpu_knobs_check(&s, &k, &e) && strstr(e.message, "margins in global memory: 51456 bytes of shared memory"));
	k.shared_reduce = 1;
	k.rows_per_thread = 3;
	CHECK(!hir_gpu_knobs_check(&s, &k, &e) && strstr(e.message, "rows per thread dividing rows per block"));
}

/*
 * The candidates whose trees are code, as "NAME/R" words (rows per block) in order, c
 * where the rows are cached, and the place of the first (-1: none); each a thread per row.
 */
static int code_listed(const HGpuShape *s, char *buf, size_t size)
{
	HGpuKnobs k[MAX];
	uint32_t n = hir_gpu_candidates(s, k, MAX);
	size_t at = 0;
	int first = -1;
	buf[0] = 0;
	for (uint32_t i = 0; i < n && i < MAX; i++) {
		if (!(lower_representation_traits(k[i].representation) & LREP_CODE))
			continue;
		CHECK(k[i].tree_threads == 1 && k[i].interleave == 1 && k[i].rows_per_thread == 1 && !k[i].shared_reduce &&
		      !k[i].unroll);
		first = first < 0 ? (int)i : first;
		at += (size_t)snprintf(buf + at, size - at, "%s%s/%u%s", at ? " " : "",
		                       lower_representation_name(k[i].representation), k[i].rows_per_block,
		                       k[i].cache_rows ? "c" : "");
	}
	return first;
}

/* Trees as code (seed 003): first up to depth 7, branch-free first up to 6, after the tables deeper; none past the code's size. */
static void test_code(void)
{
	HGpuShape s = shape(4096, 28);
	char got[512];
	s.splits = 600;
	s.depth = 6;
	CHECK(code_listed(&s, got, sizeof got) == 0 && !strcmp(got, "branchfree/128c branchfree/64c code/128c code/64c"));
	s.depth = 7;
	CHECK(code_listed(&s, got, sizeof got) == 0 && !strcmp(got, "code/128c code/64c branchfree/128c branchfree/64c"));
	s.depth = 8;
	CHECK(code_listed(&s, got, sizeof got) > 0 && !strcmp(got, "code/128c code/64c branchfree/128c branchfree/64c"));
	s.depth = 3;
	s.splits = 2049;
	CHECK(code_listed(&s, got, sizeof got) < 0);
	s.splits = 2048;
	s.features = 2000; /* rows of 2000 floats: 64 or 128 of them exceed a block's shared memory */
	CHECK(code_listed(&s, got, sizeof got) == 0 && !strcmp(got, "branchfree/128 branchfree/64 code/128 code/64"));
}

/* One point of the template, written as directives: a multiclass fixture of 28 trees, depth 3. */
static void test_directives(const char *here)
{
	FrontLimits limits = front_default_limits();
	HGpuKnobs k = {.rows_per_block = 32, .rows_per_thread = 2, .tree_threads = 10, .interleave = 2, .cache_rows = 1,
	               .unroll = 1, .shared_reduce = 1};
	Error e = {.message = {0}};
	char path[4096], *text = NULL;
	HForest *f;
	size_t len = 0;
	FILE *out;
	snprintf(path, sizeof path, "%s/../../tests/models/multi_softprob7.x1.json", here);
	if (!(f = front_read_model(path, NULL, &limits, &e))) {
		fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, e.message);
		failures++;
		return;
	}
	CHECK(hir_apply_gpu_knobs(f, &k, &e));
	out = open_memstream(&text, &len);
	hir_schedule_print(out, &f->schedule, "");
	fclose(out);
	if (strcmp(text, "tile(batch, b0, b1, 32)\ntile(tree, t0, t1, 3)\ntile(b1, b2, b3, 2)\ntile(t1, t2, t3, 2)\n"
	                 "reorder(b0, t0, b2, b3, t2, t3)\ngpuDimension(b0, grid.x)\ngpuDimension(t0, block.y)\n"
	                 "gpuDimension(b2, block.x)\ncache(b0)\ninterleave(t3)\nunrollWalk(t3, 3)\nsharedReduce(t0)\n")) {
		fprintf(stderr, "%s:%d: the directives are\n%s", __FILE__, __LINE__, text);
		failures++;
	}
	free(text);
	hir_forest_free(f);
}

int main(int argc, char **argv)
{
	(void)argc;
	test_batch_and_features();
	test_forest_shape();
	test_check();
	test_code();
	test_directives(dirname(argv[0]));
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures != 0;
}
