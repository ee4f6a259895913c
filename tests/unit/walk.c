/*
 * Tree walks end to end: random forests whose splits mix every comparison (category
 * sets under each category rule among them), both missing directions and both missing
 * rules, with leaves at many depths, compiled with every representation under
 * walk schedules (automatic, peelWalk, unrollWalk, on row and tree loops, on one half
 * of a split tree loop) and run on rows that hit the thresholds exactly, against a
 * straightforward walk of the HIR, also with the caller's thread flushing subnormals to
 * zero. Also: padding a range of trees, and the steps mir_unroll_walks gives each walk.
 */
#include "lower/lower.h"
#include "lower/rep.h"
#include "rt/grove.h"
#include "target/target.h"

#include <math.h>
#include <stdlib.h>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif
#include <string.h>
#include <unistd.h>
#include "tests/unit/check.h"
#include "tests/unit/lower_check.h"

#define FEATURES 5
#define ROWS 257
#define MAX_DEPTH 7

/* Thresholds and row values share this grid, so that rows often equal a threshold. */
static const float grid[] = {-1.0f, -0.5f, 0.0f, 0.25f, 0.5f, 1.0f, 2.0f};

static uint32_t seed = 12345;

/* A small deterministic random number in [0, n). */
static uint32_t random_below(uint32_t n)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 8) % n;
}

/* What the splits of a random forest may be. */
typedef struct Kinds {
	uint32_t compares;  /* 1 << HCompare of the comparisons splits pick from */
	bool zero;          /* splits pick the zero missing rule half the time */
	HCategoryRule rule; /* for IN splits */
	uint8_t nan_way;    /* where splits send NaN: 0 either way at random, 1 right, 2 left */
} Kinds;

/* Fill nodes[at] with a random subtree at depth `depth` of forest f; *count is the next free node. */
static void random_subtree(HForest *f, HNode *nodes, uint32_t at, uint32_t depth, uint32_t *count, const Kinds *kinds)
{
	uint32_t compare;
	if (depth == MAX_DEPTH || (depth > 0 && random_below(4) == 0)) {
		nodes[at] = (HNode){.value = (double)((int)random_below(64) - 32) / 8.0, .feature = HIR_LEAF};
		return;
	}
	do
		compare = random_below(HCMP_COUNT);
	while (!(kinds->compares & 1u << compare));
	nodes[at] = (HNode){.value = grid[random_below(COUNT_OF(grid))], .feature = (int32_t)random_below(FEATURES),
	                    .default_left = (uint8_t)random_below(2), .compare = (uint8_t)compare,
	                    .missing = (uint8_t)(kinds->zero && random_below(2) ? HMISSING_ZERO : HMISSING_NAN)};
	if (kinds->nan_way)
		nodes[at].default_left = kinds->nan_way == 2;
	if (compare == HCMP_IN) { /* categories 0..95, about a third of them in the set */
		uint32_t *words;
		nodes[at].set = hir_set_add(f, 1 + random_below(3), &words);
		for (uint32_t c = 0; c < 96; c++)
			if (c / 32 < f->sets[nodes[at].set].num_words && random_below(3) == 0)
				words[c / 32] |= 1u << (c % 32);
	}
	nodes[at].left = (*count)++;
	nodes[at].right = (*count)++;
	random_subtree(f, nodes, nodes[at].left, depth + 1, count, kinds);
	random_subtree(f, nodes, nodes[at].right, depth + 1, count, kinds);
}

/* A forest of num_trees random trees whose splits are of the given kinds. */
static HForest *random_forest(uint32_t num_trees, Kinds kinds)
{
	HForest *f = hir_forest_new("walk", FEATURES, 1);
	HNode scratch[1u << (MAX_DEPTH + 1)];
	f->category_rule = kinds.rule;
	for (uint32_t t = 0; t < num_trees; t++) {
		uint32_t count = 1;
		random_subtree(f, scratch, 0, 0, &count, &kinds);
		memcpy(hir_tree_add(f, count, 0), scratch, count * sizeof *scratch);
	}
	f->base_score[0] = 0.5;
	hir_schedule_init(&f->schedule, num_trees);
	return f;
}

/* Whether x is in the category set of split n, by the forest's rule. */
static bool reference_in(const HForest *f, const HNode *n, float x)
{
	bool ok = f->category_rule == HCATEGORY_TRUNCATE ? x > -1.0f : x >= 0.0f;
	if (!ok || x >= 2147483648.0f || (f->category_rule == HCATEGORY_EXACT && x != truncf(x)))
		return false;
	return hir_set_has(f, n->set, (uint64_t)x);
}

/* Whether row x goes left at split n. */
static bool reference_left(const HForest *f, const HNode *n, float x)
{
	float t = (float)n->value;
	if (isnan(x) || (n->missing == HMISSING_ZERO && fabsf(x) <= (float)HIR_ZERO_THRESHOLD))
		return n->default_left;
	switch ((HCompare)n->compare) {
	case HCMP_LT: return x < t;
	case HCMP_LE: return x <= t;
	case HCMP_GT: return x > t;
	case HCMP_GE: return x >= t;
	case HCMP_EQ: return x == t;
	case HCMP_NE: return x != t;
	case HCMP_IN: return reference_in(f, n, x);
	case HCMP_COUNT: break;
	}
	die("bad comparison");
}

/* The leaf value tree t gives row x, walking the HIR as the model format says. */
static double reference_tree(const HForest *f, uint32_t t, const float *x)
{
	const HNode *nodes = hir_tree_nodes(f, t), *n = nodes;
	while (n->feature != HIR_LEAF)
		n = &nodes[reference_left(f, n, x[n->feature]) ? n->left : n->right];
	return n->value;
}

/* The margin f gives row x, summed in float in tree order as the generated code does. */
static float reference_margin(const HForest *f, const float *x)
{
	float m = (float)f->base_score[0];
	for (uint32_t t = 0; t < f->num_trees; t++)
		m += (float)reference_tree(f, t, x);
	return m;
}

/* Every comparison there is. */
#define ALL_KINDS ((1u << HCMP_COUNT) - 1)

static float rows[ROWS * FEATURES];

/* Rows from the grid, between its points, missing, near zero, and categories (some not integers, some past the sets). */
static void make_rows(void)
{
	/* -0 and subnormals: walks of integer keys (rep_key) must take them as floats compare. */
	static const float odd[] = {1e-36f, -1e-36f, 1e-30f, -0.0f, -0.75f, 1.5f, 95.0f, 100.0f, 3e9f,
	                            1e-40f, -1e-45f, INFINITY, -INFINITY};
	for (int i = 0; i < ROWS * FEATURES; i++) {
		uint32_t k = random_below(COUNT_OF(grid) + 5);
		rows[i] = k < COUNT_OF(grid)      ? grid[k]
		          : k == COUNT_OF(grid)     ? NAN
		          : k == COUNT_OF(grid) + 1 ? (float)random_below(40) / 16.0f - 1.25f
		          : k == COUNT_OF(grid) + 2 ? odd[random_below(COUNT_OF(odd))]
		                                    : (float)random_below(100);
	}
}

/* The predictions of check_module run with the thread flushing subnormals to zero (x86: MXCSR's DAZ and FTZ). */
static bool flush_subnormals;

/* grove_predict's margins of rows (n of them) into out, in the thread's mode that flush_subnormals says, which it must keep. */
static bool predict_margins(GroveModel *model, const float *x, size_t n, float *out)
{
	GroveError err;
	bool ok;
#if defined(__x86_64__)
	unsigned mode = _mm_getcsr(), flushing = mode | 1u << 6 | 1u << 15;
	if (flush_subnormals)
		_mm_setcsr(flushing);
	ok = grove_predict(model, x, n, FEATURES, out, n, GROVE_PREDICT_MARGIN, &err) == GROVE_OK;
	if (flush_subnormals)
		CHECK(_mm_getcsr() == flushing);
	_mm_setcsr(mode);
#else
	ok = grove_predict(model, x, n, FEATURES, out, n, GROVE_PREDICT_MARGIN, &err) == GROVE_OK;
#endif
	return ok;
}

/* Emit m (a module over f) with representation rep into a library at path, load it, and check its margins against the reference. */
static void check_module(const HForest *reference, MModule *m, const char *rep, const char *dir, const char *what)
{
	static unsigned built;
	/* Every other library at -O0 (half the time; the walks' semantics, not LLVM's, are under test), the others at -O2. */
	TargetOptions o = {.emit = TARGET_EMIT_SHARED, .opt_level = built % 2 ? 0 : 2, .cpu = "x86-64"};
	char file[128];
	GroveModel *model = NULL;
	GroveError err;
	Error e = {.message = {0}};
	LModule *lir;
	float out[ROWS];
	int bad = 0;

	/* A fresh file each time: the dynamic loader may keep a library it has seen at a path. */
	snprintf(file, sizeof file, "%s/model%u.so", dir, built++);
	mir_interleave(m);
	mir_version_complete(m); /* as the driver does: walks of complete rows, and lone rows' walks of keys */
	lir = lower_as(m, rep, &e);
	if (!lir || !target_emit(lir, &o, file, &e) || grove_load(file, &model, &err) != GROVE_OK) {
		fprintf(stderr, "%s (%s): %s\n", what, rep, e.message[0] ? e.message : err.message);
		failures++;
		lir_module_free(lir);
		return;
	}
	lir_module_free(lir);
	/* Every batch size up to 9 (remainders of interleaved groups), then all rows at once. */
	for (size_t n = 1; n <= 9; n++) {
		CHECK(predict_margins(model, rows + FEATURES * n, n, out));
		for (size_t r = 0; r < n; r++)
			bad += out[r] != reference_margin(reference, rows + FEATURES * (n + r));
	}
	CHECK(predict_margins(model, rows, ROWS, out));
	for (size_t r = 0; r < ROWS; r++)
		bad += out[r] != reference_margin(reference, rows + FEATURES * r);
	if (bad) {
		fprintf(stderr, "%s (%s): %d wrong margins\n", what, rep, bad);
		failures++;
	}
	grove_free(model);
	unlink(file);
}

/* Compile a copy of f under schedule text with the driver's passes, with each of reps (NULL: the schedule's), and check it. */
static void check_schedule_with(const HForest *f, const char *schedule, const char *dir, const char *const *reps, size_t n)
{
	for (size_t r = 0; r < n; r++) {
		HForest *c = hir_forest_copy(f);
		Error e = {.message = {0}};
		MModule *m;
		hir_schedule_init(&c->schedule, c->num_trees);
		CHECK(hir_schedule_parse(&c->schedule, schedule, "test", &e));
		CHECK(hir_pad_unrolled_walks(c, &e));
		if (c->schedule.tile_size)
			hir_tile_trees(c, c->schedule.tile_size, (HTiling)c->schedule.tiling);
		m = lower_hir_to_mir(c, NULL, &e);
		if (!m || !mir_legalize_reductions(m, &e)) {
			fprintf(stderr, "%s: %s\n", schedule, e.message);
			failures++;
		} else {
			mir_unroll_walks(m);
			check_module(f, m, reps[r], dir, schedule);
		}
		mir_module_free(m);
		hir_forest_free(c);
	}
}

static void check_schedule(const HForest *f, const char *schedule, const char *dir)
{
	static const char *const reps[] = {"array", "sparse"};
	check_schedule_with(f, schedule, dir, reps, COUNT_OF(reps));
}

static const char *const schedules[] = {
	"",
	"peelWalk(tree, 3)",
	"peelWalk(tree, 7)",
	"tile(batch, b0, b1, 4); reorder(b0, tree, b1); interleave(b1); peelWalk(b1, 5)",
	"tile(tree, t0, t1, 4); interleave(t1); peelWalk(t1, 2)",
	"unrollWalk(tree, 3)",
	"tile(tree, t0, t1, 4); interleave(t1); unrollWalk(t1, 7)",
	"tile(batch, b0, b1, 4); reorder(b0, tree, b1); interleave(b1); unrollWalk(b1, 5)",
};

/* Every mix of comparisons and missing rules predicts as the model says under every walk schedule. */
static void test_schedules(const char *dir)
{
	enum { ORDERED = 1u << HCMP_LT | 1u << HCMP_LE | 1u << HCMP_GT | 1u << HCMP_GE | 1u << HCMP_EQ | 1u << HCMP_NE };
	static const Kinds kinds[] = {
		{1u << HCMP_LT | 1u << HCMP_LE, false, HCATEGORY_NONNEGATIVE, 0},
		{1u << HCMP_LE, false, HCATEGORY_NONNEGATIVE, 0},
		{1u << HCMP_LT, false, HCATEGORY_NONNEGATIVE, 0},
		{1u << HCMP_LE, true, HCATEGORY_NONNEGATIVE, 0},
		{ORDERED, true, HCATEGORY_NONNEGATIVE, 0},
		{ORDERED, false, HCATEGORY_NONNEGATIVE, 0}, /* every comparison of keys */
		{1u << HCMP_IN, false, HCATEGORY_TRUNCATE, 0},
		{1u << HCMP_IN | 1u << HCMP_LE, true, HCATEGORY_EXACT, 0},
		{ORDERED | 1u << HCMP_IN, true, HCATEGORY_NONNEGATIVE, 0},
	};
	for (size_t k = 0; k < COUNT_OF(kinds); k++) {
		HForest *f = random_forest(10, kinds[k]);
		Error e = {.message = {0}};
		CHECK(hir_verify(f, &e));
		for (size_t s = 0; s < COUNT_OF(schedules); s++)
			check_schedule(f, schedules[s], dir);
		hir_forest_free(f);
	}
}

/*
 * A caller whose thread flushes subnormals to zero (DAZ and FTZ on x86) gets the same
 * margins, on rows of subnormals, zeros and NaN: forests whose splits all send NaN one
 * way, so that their thresholds of 0 become x <= -2^-149 or x < 2^-149 (hir_float_forest),
 * and one that sends it both ways. Its threads, OpenMP's among them (257 rows go to a
 * team), must keep the mode they had.
 */
static void test_flush_to_zero(const char *dir)
{
	static const Kinds kinds[] = {
		{1u << HCMP_LT, false, HCATEGORY_NONNEGATIVE, 1}, /* XGBoost's */
		{1u << HCMP_LE | 1u << HCMP_GE, false, HCATEGORY_NONNEGATIVE, 2},
		{1u << HCMP_LE, false, HCATEGORY_NONNEGATIVE, 0},
	};
	flush_subnormals = true;
	for (size_t k = 0; k < COUNT_OF(kinds); k++) {
		HForest *f = random_forest(10, kinds[k]);
		check_schedule(f, "", dir);
		check_schedule(f, "tile(batch, b0, b1, 4); reorder(b0, tree, b1); interleave(b1)", dir);
		hir_forest_free(f);
	}
	flush_subnormals = false;
}

/*
 * Tiles of every size (tiled) and blocks of trees (bitvector, with trees past 64 leaves
 * whose blocks are walked node by node), over the comparisons and missing rules each
 * takes, under walk schedules.
 */
static void test_tiles_and_blocks(const char *dir)
{
	enum { ORDERED = 1u << HCMP_LT | 1u << HCMP_LE | 1u << HCMP_GT | 1u << HCMP_GE | 1u << HCMP_EQ | 1u << HCMP_NE };
	static const Kinds tiled[] = {
		{1u << HCMP_LT | 1u << HCMP_GE, false, HCATEGORY_NONNEGATIVE, 0},
		{1u << HCMP_LE | 1u << HCMP_GT, true, HCATEGORY_NONNEGATIVE, 0},
		{ORDERED, true, HCATEGORY_NONNEGATIVE, 0},
	}, blocks[] = {
		{1u << HCMP_LT | 1u << HCMP_GE, false, HCATEGORY_NONNEGATIVE, 0},
		{1u << HCMP_LE | 1u << HCMP_GT, false, HCATEGORY_NONNEGATIVE, 0},
	};
	static const char *const tile_schedules[] = {
		"tileTrees(uniform, 1)",
		"tileTrees(uniform, 3); peelWalk(tree, 2)",
		"tileTrees(uniform, 4); tile(tree, t0, t1, 4); interleave(t1)",
		"tileTrees(uniform, 8); tile(batch, b0, b1, 4); reorder(b0, tree, b1); interleave(b1); unrollWalk(b1, 5)",
		"tileTrees(uniform, 4); tile(batch, b0, b1, 16); tile(tree, t0, t1, 8); reorder(b0, t0, b1, t1); unrollWalk(t1, 6)",
	}, *block_schedules[] = {
		"tile(tree, t0, t1, 4); interleave(t1)",
		"tile(tree, t0, t1, 2); interleave(t1); peelWalk(t1, 3)",
		"tile(batch, b0, b1, 4); tile(tree, t0, t1, 3); reorder(b0, t0, b1, t1); interleave(t1)",
		/* blocks from tree 1 on, never a multiple of 2: the check at run time walks them node by node */
		"split(tree, a, b, 1); tile(b, b0, b1, 2); interleave(b1)",
	}, *tiled_rep[] = {"tiled", "tiled_array"}, *bitvector[] = {"bitvector"};
	for (size_t k = 0; k < COUNT_OF(tiled); k++) {
		HForest *f = random_forest(10, tiled[k]);
		for (size_t s = 0; s < COUNT_OF(tile_schedules); s++)
			check_schedule_with(f, tile_schedules[s], dir, tiled_rep, COUNT_OF(tiled_rep));
		hir_forest_free(f);
	}
	for (size_t k = 0; k < COUNT_OF(blocks); k++) {
		HForest *f = random_forest(10, blocks[k]);
		for (size_t s = 0; s < COUNT_OF(block_schedules); s++)
			check_schedule_with(f, block_schedules[s], dir, bitvector, 1);
		hir_forest_free(f);
	}
}

/* hir_pad_trees pads only its range, to the depth asked, keeping every prediction. */
static void test_pad_range(void)
{
	HForest *f = random_forest(8, (Kinds){ALL_KINDS, true, HCATEGORY_TRUNCATE, 0}), *padded = hir_forest_copy(f);
	uint32_t min, max, min_after, max_after;
	Error e = {.message = {0}};
	int bad = 0;
	hir_trees_leaf_depth_range(f, 2, 5, &min, &max);
	CHECK(min < 4);
	/* Past a bound on the nodes, nothing changes and the answer is how many it would have made. */
	CHECK(hir_pad_trees(padded, 2, 5, 4, f->num_nodes) > f->num_nodes && padded->num_nodes == f->num_nodes);
	CHECK(hir_pad_trees(padded, 2, 5, 4, UINT64_MAX) == 0);
	CHECK(hir_verify(padded, &e));
	hir_trees_leaf_depth_range(padded, 2, 5, &min_after, &max_after);
	CHECK(min_after == 4 && max_after == (max > 4 ? max : 4));
	for (uint32_t t = 0; t < f->num_trees; t++) {
		if (t < 2 || t >= 5)
			CHECK(padded->trees[t].num_nodes == f->trees[t].num_nodes &&
			      !memcmp(hir_tree_nodes(padded, t), hir_tree_nodes(f, t), f->trees[t].num_nodes * sizeof(HNode)));
		for (uint32_t r = 0; r < ROWS; r++)
			bad += reference_tree(f, t, rows + FEATURES * r) != reference_tree(padded, t, rows + FEATURES * r);
	}
	CHECK(bad == 0);
	hir_forest_free(padded);
	hir_forest_free(f);
}

/* The walk of the first instruction list under the loop over var, searched depth first. */
static MInst *find_walk(MModule *m, uint32_t first, int32_t var, bool inside)
{
	for (uint32_t id = first; id != MIR_NONE; id = m->insts[id].next) {
		MInst *inst = &m->insts[id], *found;
		if (inst->op == MOP_WALK && inside)
			return inst;
		if (inst->op == MOP_FOR && (found = find_walk(m, inst->body, var, inside || inst->var == var)))
			return found;
	}
	return NULL;
}

/* Sibling loops made by split: each walk follows its own loop, the halves' trees padded and peeled apart. */
static void test_split_halves(const char *dir)
{
	HForest *f = random_forest(9, (Kinds){ALL_KINDS, true, HCATEGORY_TRUNCATE, 0}), *c;
	const char *const texts[] = {"split(tree, t0, t1, 4); peelWalk(t1, 6)", "split(tree, t0, t1, 4); unrollWalk(t0, 5)"};
	for (size_t i = 0; i < COUNT_OF(texts); i++) {
		MModule *m;
		uint32_t min0, max0, min1, max1;
		MInst *w0, *w1;
		Error e = {.message = {0}};
		c = hir_forest_copy(f);
		hir_schedule_init(&c->schedule, c->num_trees);
		CHECK(hir_schedule_parse(&c->schedule, texts[i], "test", &e));
		CHECK(hir_pad_unrolled_walks(c, &e));
		hir_trees_leaf_depth_range(c, 0, 4, &min0, &max0);
		hir_trees_leaf_depth_range(c, 4, 9, &min1, &max1);
		/* for batch { buffer; init; for t0 {...}; for t1 {...}; transform } */
		m = lower_hir_to_mir(c, NULL, &e);
		CHECK(m && mir_legalize_reductions(m, &e));
		if (!m) {
			hir_forest_free(c);
			continue;
		}
		mir_unroll_walks(m);
		w0 = find_walk(m, m->body, hir_schedule_find(&c->schedule, "t0"), false);
		w1 = find_walk(m, m->body, hir_schedule_find(&c->schedule, "t1"), false);
		CHECK(w0 && w1);
		if (i == 0) {
			/* t0: automatic, from its own trees; t1: 6 steps, leaves possible past its shallowest */
			CHECK(w0->peel == min0 && w0->peel_safe == min0 && w0->exact == (min0 == max0));
			CHECK(w1->peel == (max1 < 6 ? max1 : 6) && w1->peel_safe == min1 && w1->exact == (max1 <= 6));
		} else {
			/* t0's trees padded to 5 (or their deepest leaf), t1's left alone */
			CHECK(min0 == (max0 < 5 ? max0 : 5) && w0->peel == min0 && w0->peel_safe == min0 && w0->exact == (max0 <= 5));
			CHECK(c->trees[5].num_nodes == f->trees[5].num_nodes && w1->peel == min1);
		}
		check_module(f, m, "array", dir, texts[i]);
		mir_module_free(m);
		hir_forest_free(c);
	}
	hir_forest_free(f);
}

int main(void)
{
	char dir[] = "/tmp/grove-walk-XXXXXX";
	make_rows();
	if (!mkdtemp(dir))
		return 1;
	test_pad_range();
	test_schedules(dir);
	test_tiles_and_blocks(dir);
	test_flush_to_zero(dir);
	test_split_halves(dir);
	rmdir(dir);
	if (failures)
		fprintf(stderr, "%d checks failed\n", failures);
	return failures != 0;
}
