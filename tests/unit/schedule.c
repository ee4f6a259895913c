/*
 * Unit tests of the schedule: the text form (ir/schedule_parse.c), the loop tree and
 * ranges the directives make (ir/schedule.c), printing and parsing back, the C API
 * builders, and the bad schedules in tests/schedules/bad (NAME.sched must fail with a
 * message containing NAME.err). Run from the repository root (or from anywhere below
 * the directory that holds tests/, where the build puts it).
 */
#include "ir/schedule.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/check.h"

#define NUM_TREES 100
#define BAD_DIR "tests/schedules/bad"
/* What hir_schedule_find and the loop links give for "none" (HIR_NONE, which ir/hir.h defines). */
#define NO_VAR (-1)

/* A fresh schedule over NUM_TREES trees (heap: an HSchedule is large). */
static HSchedule *fresh(void)
{
	HSchedule *s = malloc(sizeof *s);
	if (!s)
		abort();
	hir_schedule_init(s, NUM_TREES);
	return s;
}

/* text parsed into a fresh schedule, which the caller frees; reports and returns NULL on failure. */
static HSchedule *parse_ok(const char *text, int line)
{
	HSchedule *s = fresh();
	Error e = {.message = {0}};
	if (!hir_schedule_parse(s, text, "good.sched", &e)) {
		fprintf(stderr, "%s:%d: '%s' failed: %s\n", __FILE__, line, text, e.message);
		failures++;
		free(s);
		return NULL;
	}
	return s;
}

/* What hir_schedule_print_loops (loops) or hir_schedule_print writes for s, into buf. */
static const char *printed(const HSchedule *s, bool loops, char *buf, size_t size)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (!out)
		abort();
	if (loops)
		hir_schedule_print_loops(out, s);
	else
		hir_schedule_print(out, s, "");
	fclose(out);
	snprintf(buf, size, "%s", text);
	free(text);
	return buf;
}

/* Printing s and parsing the text gives the same schedule, which prints the same text. */
static void check_round_trip(const HSchedule *s, int line)
{
	static char first[8192], second[8192];
	HSchedule *t = fresh();
	Error e = {.message = {0}};
	printed(s, false, first, sizeof first);
	if (!hir_schedule_parse(t, first, "printed", &e)) {
		fprintf(stderr, "%s:%d: the printed schedule does not parse: %s\n%s", __FILE__, line, e.message, first);
		failures++;
	} else {
		if (!hir_schedule_equal(s, t)) {
			fprintf(stderr, "%s:%d: the printed schedule parses into another schedule:\n%s", __FILE__, line, first);
			failures++;
		}
		if (strcmp(first, printed(t, false, second, sizeof second))) {
			fprintf(stderr, "%s:%d: printing again gives\n%sinstead of\n%s", __FILE__, line, second, first);
			failures++;
		}
	}
	free(t);
}

/* text parses, its loop tree prints as loops, and it survives printing and parsing back. */
static void expect_loops(const char *text, const char *loops, int line)
{
	char buf[1024];
	HSchedule *s = parse_ok(text, line);
	if (!s)
		return;
	if (strcmp(printed(s, true, buf, sizeof buf), loops)) {
		fprintf(stderr, "%s:%d: '%s' gives the loops '%s', expected '%s'\n", __FILE__, line, text, buf, loops);
		failures++;
	}
	check_round_trip(s, line);
	free(s);
}
#define EXPECT_LOOPS(text, loops) expect_loops((text), (loops), __LINE__)

/* text fails to parse (source "t") with a message containing want. */
static void expect_error(const char *text, const char *want, int line)
{
	HSchedule *s = fresh();
	Error e = {.message = {0}};
	bool ok = hir_schedule_parse(s, text, "t", &e);
	if (ok || !strstr(e.message, want)) {
		fprintf(stderr, "%s:%d: '%s': expected an error containing '%s', got %s'%s'\n", __FILE__, line, text, want,
		        ok ? "success " : "", e.message);
		failures++;
	}
	free(s);
}
#define EXPECT_ERROR(text, want) expect_error((text), (want), __LINE__)

/* --- the loop tree --- */

/* Good schedules give the loop trees they should, and survive printing and parsing back. */
static void test_loops(void)
{
	EXPECT_LOOPS("", "batch { tree }");
	EXPECT_LOOPS("tile(batch, b0, b1, 64); reorder(b0, tree, b1); parallel(b0)", "b0 { tree { b1 } }");
	EXPECT_LOOPS("reorder(tree, batch)\nsplit(tree, t0, t1, 50)", "t0 { t0.batch }; t1 { t1.batch }");
	EXPECT_LOOPS("split(tree, t0, t1, 50)", "batch { t0; t1 }");
	/* The paper's XGBoost and Tahoe schedules (§3.2), spaces before '(' as written there. */
	EXPECT_LOOPS("tile (batch, b0, b1, 64)\nreorder (b0, tree, b1)\nparallel (b0)\n", "b0 { tree { b1 } }");
	EXPECT_LOOPS("tile (batch, b0, b1, 32)\nreorder (b0, b1, tree)\ngpuDimension (b0, grid.x)\ngpuDimension (b1, block.x)\n",
	             "b0 { b1 { tree } }");
	EXPECT_LOOPS("reorder (batch, tree)\ngpuDimension (batch, grid.x)\ngpuDimension (tree, block.x)\ncache (batch)\n",
	             "batch { tree }");
	EXPECT_LOOPS("tile(tree, t0, t1, 50); reorder(t0, t1, batch); parallel(t0); vectorReduce(t0, 8)", "t0 { t1 { batch } }");
	/* Spaces optional or anywhere between tokens; comments, blank lines, ';' and newlines mixed; CRLF. */
	EXPECT_LOOPS("tile(batch,b0,b1,64);reorder(b0,tree,b1);parallel(b0)", "b0 { tree { b1 } }");
	EXPECT_LOOPS("\t tile ( batch , b0 ,b1, 64 ) \t;\n\n# a comment; tile(x, y, z, 1)\n;;\n reorder(b0, tree, b1) # trailing\r\n"
	             "parallel(b0);\r\n   \n# the end",
	             "b0 { tree { b1 } }");
	EXPECT_LOOPS("# only comments\n\n   # and blanks\n;\n", "batch { tree }");
	EXPECT_LOOPS("\xef\xbb\xbftile(batch, b0, b1, 8)", "b0 { b1 { tree } }");
	/* Split copies everything inside the split loop, nested copies included. */
	EXPECT_LOOPS("tile(batch, b0, b1, 8); reorder(tree, b0, b1); split(tree, t0, t1, 10)",
	             "t0 { t0.b0 { t0.b1 } }; t1 { t1.b0 { t1.b1 } }");
	/* Directives on the loops inside a split loop travel with the copies. */
	EXPECT_LOOPS("reorder(tree, batch); tile(batch, b0, b1, 8); interleave(b1); split(tree, t0, t1, 30); parallel(t0.b0)",
	             "t0 { t0.b0 { t0.b1 } }; t1 { t1.b0 { t1.b1 } }");
	/* A split half split again; a tile of a split half; reorder across a split's copies. */
	EXPECT_LOOPS("split(tree, t0, t1, 50); split(t1, u0, u1, 20); tile(t0, v0, v1, 16)", "batch { v0 { v1 }; u0; u1 }");
	EXPECT_LOOPS("reorder(tree, batch); split(tree, t0, t1, 50); reorder(t1.batch, t1); tile(t0.batch, r0, r1, 4)",
	             "t0 { r0 { r1 } }; t1.batch { t1 }");
	EXPECT_LOOPS("tile(batch, b0, b1, 256); split(b0, c0, c1, 2)", "c0 { c0.b1 { c0.tree } }; c1 { c1.b1 { c1.tree } }");
	EXPECT_LOOPS("tile(batch, b0, b1, 256); tile(b0, c0, c1, 4)", "c0 { c1 { b1 { tree } } }");
	/* Every other directive, with its numbers. */
	EXPECT_LOOPS("tile(tree, t0, t1, 4); reorder(t0, batch, t1); specialize(t1); unrollWalk(t1, 6); cache(t0)",
	             "t0 { batch { t1 } }");
	EXPECT_LOOPS("tile(tree, t0, t1, 10); reorder(t0, batch); peelWalk(t1, 3); interleave(t1)", "t0 { batch { t1 } }");
	EXPECT_LOOPS("reorder(tree, batch); gpuDimension(tree, grid.y); atomicReduce(tree); tile(batch, b0, b1, 32); "
	             "gpuDimension(b0, block.y); gpuDimension(b1, block.z)",
	             "tree { b0 { b1 } }");
	EXPECT_LOOPS("tile(tree, t0, t1, 25); gpuDimension(t0, grid.z); sharedReduce(t0); gpuDimension(t1, block.x)",
	             "batch { t0 { t1 } }");
	/* Names: '_' first, digits, dots; 46 characters; 2^31 - 1. */
	EXPECT_LOOPS("tile(batch, _b0, B_1.x, 2147483647)", "_b0 { B_1.x { tree } }");
	EXPECT_LOOPS("tile(batch, bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, b1, 007)",
	             "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb { b1 { tree } }");
}

/* --- ranges --- */

/* The value of node x of r with N rows and values[v] for variable v's loop. */
static int64_t eval(const HRange *r, uint8_t x, int64_t rows, const int64_t *values)
{
	const HExpr *n = &r->nodes[x];
	int64_t a, b;
	switch ((HExprOp)n->op) {
	case HEXPR_CONST: return n->value;
	case HEXPR_ROWS: return rows;
	case HEXPR_VAR: return values[n->var];
	case HEXPR_ADD: return eval(r, n->a, rows, values) + eval(r, n->b, rows, values);
	case HEXPR_SUB: return eval(r, n->a, rows, values) - eval(r, n->b, rows, values);
	case HEXPR_MIN:
		a = eval(r, n->a, rows, values);
		b = eval(r, n->b, rows, values);
		return a < b ? a : b;
	case HEXPR_BELOW:
		a = eval(r, n->a, rows, values);
		b = eval(r, n->b, rows, values);
		return a < b ? a : 0;
	}
	abort();
}

/* The range of var in s, with N = rows and the named loops at the given values ("b0=64,c0=3"), is [begin, end) step, max_trips trips. */
static void expect_range(const HSchedule *s, const char *var, int64_t rows, const char *values, int64_t begin, int64_t end, int64_t step,
                         int64_t trips, int line)
{
	int64_t vals[HIR_MAX_VARS] = {0}, b, en;
	int32_t v = hir_schedule_find(s, var);
	HRange r;
	char name[HIR_MAX_NAME];
	if (v == NO_VAR || !s->vars[v].has_loop) {
		fprintf(stderr, "%s:%d: no loop '%s'\n", __FILE__, line, var);
		failures++;
		return;
	}
	for (const char *p = values; *p;) {
		size_t n = strcspn(p, "=");
		int32_t w;
		snprintf(name, sizeof name, "%.*s", (int)n, p);
		w = hir_schedule_find(s, name);
		if (w == NO_VAR)
			abort();
		vals[w] = strtoll(p + n + 1, (char **)&p, 10);
		p += *p == ',';
	}
	hir_schedule_range(s, v, &r);
	/* Bounds may only use loops that enclose var's. */
	for (uint32_t i = 0; i < r.num_nodes; i++)
		if (r.nodes[i].op == HEXPR_VAR) {
			int32_t l = v;
			while (l != NO_VAR && l != r.nodes[i].var)
				l = s->vars[l].loop_parent;
			if (l == NO_VAR || l == v) {
				fprintf(stderr, "%s:%d: the range of '%s' uses '%s', which is not a loop around it\n", __FILE__, line, var,
				        s->vars[r.nodes[i].var].name);
				failures++;
			}
		}
	b = eval(&r, r.begin, rows, vals);
	en = eval(&r, r.end, rows, vals);
	if (b != begin || en != end || r.step != step || r.max_trips != trips) {
		fprintf(stderr, "%s:%d: '%s' with N=%lld %s: got [%lld, %lld) step %lld trips %lld, expected [%lld, %lld) step %lld trips %lld\n",
		        __FILE__, line, var, (long long)rows, values, (long long)b, (long long)en, (long long)r.step, (long long)r.max_trips,
		        (long long)begin, (long long)end, (long long)step, (long long)trips);
		failures++;
	}
}
#define EXPECT_RANGE(s, var, rows, values, begin, end, step, trips) \
	expect_range((s), (var), (rows), (values), (begin), (end), (step), (trips), __LINE__)

/* The trees var's walks reach are [first, end). */
static void expect_span(const HSchedule *s, const char *var, uint32_t first, uint32_t end, int line)
{
	uint32_t f = 0, en = 0;
	int32_t v = hir_schedule_find(s, var);
	if (v == NO_VAR) {
		fprintf(stderr, "%s:%d: no variable '%s'\n", __FILE__, line, var);
		failures++;
		return;
	}
	hir_schedule_tree_span(s, v, &f, &en);
	if (f != first || en != end) {
		fprintf(stderr, "%s:%d: '%s' reaches trees [%u, %u), expected [%u, %u)\n", __FILE__, line, var, f, en, first, end);
		failures++;
	}
}
#define EXPECT_SPAN(s, var, first, end) expect_span((s), (var), (first), (end), __LINE__)

/* Loop ranges from lineage: tiles that do not divide, splits, and tiles and splits of their loops; the trees walks reach. */
static void test_ranges(void)
{
	HSchedule *s;

	/* The roots. */
	if ((s = parse_ok("", __LINE__))) {
		EXPECT_RANGE(s, "batch", 1000, "", 0, 1000, 1, -1);
		EXPECT_RANGE(s, "tree", 1000, "", 0, 100, 1, 100);
		EXPECT_SPAN(s, "tree", 0, 100);
		EXPECT_SPAN(s, "batch", 0, 100);
		free(s);
	}
	/* tile with sizes that do not divide: the inner loop's last tile is short. */
	if ((s = parse_ok("tile(batch, b0, b1, 64); tile(tree, t0, t1, 30)", __LINE__))) {
		EXPECT_RANGE(s, "b0", 100, "", 0, 100, 64, -1);
		EXPECT_RANGE(s, "b1", 100, "b0=0", 0, 64, 1, 64);
		EXPECT_RANGE(s, "b1", 100, "b0=64", 0, 36, 1, 64);
		EXPECT_RANGE(s, "t0", 0, "", 0, 100, 30, 4);
		EXPECT_RANGE(s, "t1", 0, "t0=60", 0, 30, 1, 30);
		EXPECT_RANGE(s, "t1", 0, "t0=90", 0, 10, 1, 30);
		EXPECT_SPAN(s, "t0", 0, 100);
		free(s);
	}
	/* A tile bigger than the loop. */
	if ((s = parse_ok("tile(tree, t0, t1, 1000)", __LINE__))) {
		EXPECT_RANGE(s, "t0", 0, "", 0, 100, 1000, 1);
		EXPECT_RANGE(s, "t1", 0, "t0=0", 0, 100, 1, 100);
		free(s);
	}
	/* split: trees at a constant, rows at min(at, N). */
	if ((s = parse_ok("split(tree, t0, t1, 40); split(batch, b0, b1, 10)", __LINE__))) {
		EXPECT_RANGE(s, "b0.t0", 0, "", 0, 40, 1, 40);
		EXPECT_RANGE(s, "b1.t1", 0, "", 40, 100, 1, 60);
		EXPECT_RANGE(s, "b0", 1000, "", 0, 10, 1, 10);
		EXPECT_RANGE(s, "b1", 1000, "", 10, 1000, 1, -1);
		EXPECT_RANGE(s, "b0", 5, "", 0, 5, 1, 10);
		EXPECT_RANGE(s, "b1", 5, "", 5, 5, 1, -1);
		EXPECT_SPAN(s, "b0.t0", 0, 40);
		EXPECT_SPAN(s, "b1.t1", 40, 100);
		free(s);
	}
	/* splitSize: every row to the first half where there are fewer than 16, else every row to the second. */
	if ((s = parse_ok("splitSize(batch, few, many, 16); tile(many, m0, m1, 256); splitSize(m1, a, b, 8)", __LINE__))) {
		EXPECT_RANGE(s, "few", 15, "", 0, 15, 1, 15);
		EXPECT_RANGE(s, "m0", 15, "", 15, 15, 256, -1);
		EXPECT_RANGE(s, "few", 16, "", 0, 0, 1, 15);
		EXPECT_RANGE(s, "m0", 16, "", 0, 16, 256, -1);
		EXPECT_RANGE(s, "few", 1, "", 0, 1, 1, 15);
		EXPECT_RANGE(s, "few.tree", 1, "", 0, 100, 1, 100);
		EXPECT_RANGE(s, "m0", 1000, "", 0, 1000, 256, -1);
		/* the last tile of 1000 rows has 232, the tile of a batch of 7 rows 7 */
		EXPECT_RANGE(s, "a", 1000, "m0=768", 0, 0, 1, 7);
		EXPECT_RANGE(s, "b", 1000, "m0=768", 0, 232, 1, 256);
		EXPECT_RANGE(s, "a", 7, "m0=0", 0, 7, 1, 7);
		EXPECT_RANGE(s, "b", 7, "m0=0", 7, 7, 1, 256);
		free(s);
	}
	/* A tile's inner loop reordered outside its outer one: offsets of any step, the outer loop ending where they say. */
	if ((s = parse_ok("tile(tree, t0, t1, 30); reorder(batch, t1, t0)", __LINE__))) {
		EXPECT_RANGE(s, "t1", 0, "", 0, 30, 1, 30);
		EXPECT_RANGE(s, "t0", 0, "t1=7", 0, 93, 30, 4);
		EXPECT_RANGE(s, "t0", 0, "t1=15", 0, 85, 30, 4);
		EXPECT_SPAN(s, "t0", 0, 100);
		free(s);
	}
	if ((s = parse_ok("tile(batch, b0, b1, 64); reorder(b1, b0)", __LINE__))) {
		EXPECT_RANGE(s, "b1", 100, "", 0, 64, 1, 64);
		EXPECT_RANGE(s, "b1", 10, "", 0, 10, 1, 64);
		EXPECT_RANGE(s, "b0", 100, "b1=40", 0, 60, 64, -1);
		free(s);
	}
	if ((s = parse_ok("tile(batch, b0, b1, 12); tile(b1, c0, c1, 4); reorder(c1, c0)", __LINE__))) {
		EXPECT_RANGE(s, "c1", 100, "b0=0", 0, 4, 1, 4);
		EXPECT_RANGE(s, "c0", 100, "b0=0,c1=3", 0, 9, 4, 3);
		EXPECT_RANGE(s, "c0", 100, "b0=96,c1=3", 0, 1, 4, 3);
		free(s);
	}
	/* A tile of a split half: the outer loop starts at the split point. */
	if ((s = parse_ok("split(tree, t0, t1, 40); tile(t1, u0, u1, 25)", __LINE__))) {
		EXPECT_RANGE(s, "u0", 0, "", 40, 100, 25, 3);
		EXPECT_RANGE(s, "u1", 0, "u0=40", 0, 25, 1, 25);
		EXPECT_RANGE(s, "u1", 0, "u0=90", 0, 10, 1, 25);
		EXPECT_SPAN(s, "u0", 40, 100);
		EXPECT_SPAN(s, "u1", 40, 100);
		EXPECT_SPAN(s, "t0", 0, 40);
		free(s);
	}
	/* A split of a tile's inner loop, and of a split half. */
	if ((s = parse_ok("tile(tree, t0, t1, 30); split(t1, a, b, 20)", __LINE__))) {
		EXPECT_RANGE(s, "a", 0, "t0=0", 0, 20, 1, 20);
		EXPECT_RANGE(s, "b", 0, "t0=0", 20, 30, 1, 10);
		EXPECT_RANGE(s, "a", 0, "t0=90", 0, 10, 1, 20);
		EXPECT_RANGE(s, "b", 0, "t0=90", 10, 10, 1, 10);
		free(s);
	}
	if ((s = parse_ok("split(tree, t0, t1, 50); split(t1, u0, u1, 20)", __LINE__))) {
		EXPECT_RANGE(s, "u0", 0, "", 50, 70, 1, 20);
		EXPECT_RANGE(s, "u1", 0, "", 70, 100, 1, 30);
		EXPECT_SPAN(s, "u1", 70, 100);
		free(s);
	}
	/* Copies made by split: a copied tree loop is limited to its half's trees. */
	if ((s = parse_ok("reorder(tree, batch); split(tree, t0, t1, 50)", __LINE__))) {
		EXPECT_RANGE(s, "t1.batch", 7, "", 0, 7, 1, -1);
		EXPECT_SPAN(s, "t1.batch", 50, 100);
		EXPECT_SPAN(s, "t0.batch", 0, 50);
		free(s);
	}
	/* A split of a tile's outer loop: the copied inner loop runs within the enclosing half's step. */
	if ((s = parse_ok("tile(batch, b0, b1, 256); split(b0, c0, c1, 2)", __LINE__))) {
		EXPECT_RANGE(s, "c0", 1000, "", 0, 512, 256, 2);
		EXPECT_RANGE(s, "c1", 1000, "", 512, 1000, 256, -1);
		EXPECT_RANGE(s, "c1", 300, "", 300, 300, 256, -1);
		EXPECT_RANGE(s, "c0.b1", 1000, "c0=256", 0, 256, 1, 256);
		EXPECT_RANGE(s, "c1.b1", 1000, "c1=768", 0, 232, 1, 256);
		free(s);
	}
	/* A tile of a tile's outer loop: the inner loop's bound uses both new loops. */
	if ((s = parse_ok("tile(batch, b0, b1, 256); tile(b0, c0, c1, 4)", __LINE__))) {
		EXPECT_RANGE(s, "c0", 1100, "", 0, 1100, 1024, -1);
		EXPECT_RANGE(s, "c1", 1100, "c0=1024", 0, 76, 256, 4);
		EXPECT_RANGE(s, "c1", 1100, "c0=0", 0, 1024, 256, 4);
		EXPECT_RANGE(s, "b1", 1100, "c0=1024,c1=0", 0, 76, 1, 256);
		EXPECT_RANGE(s, "b1", 1100, "c0=0,c1=768", 0, 256, 1, 256);
		free(s);
	}
	/* The outer loop of a tile split, its first half copied by another split, that copy tiled: the inner loop's bound adds the pieces. */
	if ((s = parse_ok("tile(batch, b0, b1, 8); reorder(tree, b0, b1); split(b0, h1, h2, 3); split(tree, t0, t1, 50); tile(t0.h1, c0, c1, 2)",
	                  __LINE__))) {
		EXPECT_RANGE(s, "c0", 100, "", 0, 24, 16, 2);
		EXPECT_RANGE(s, "c1", 100, "c0=16", 0, 8, 8, 2);
		EXPECT_RANGE(s, "t0.h1.b1", 20, "c0=16,c1=0", 0, 4, 1, 8);
		EXPECT_RANGE(s, "t1.h2", 100, "", 24, 100, 8, -1);
		EXPECT_RANGE(s, "t1.h2.b1", 100, "t1.h2=96", 0, 4, 1, 8);
		EXPECT_SPAN(s, "t1.h2.b1", 50, 100);
		free(s);
	}
	/* A tile of a tile's inner loop, and a tile inner copied with its outer by split. */
	if ((s = parse_ok("tile(batch, b0, b1, 64); tile(b1, c0, c1, 16)", __LINE__))) {
		EXPECT_RANGE(s, "c0", 100, "b0=64", 0, 36, 16, 4);
		EXPECT_RANGE(s, "c1", 100, "b0=64,c0=32", 0, 4, 1, 16);
		EXPECT_RANGE(s, "c1", 100, "b0=0,c0=32", 0, 16, 1, 16);
		free(s);
	}
	if ((s = parse_ok("tile(tree, t0, t1, 8); reorder(batch, t0, t1); split(batch, b0, b1, 4)", __LINE__))) {
		EXPECT_RANGE(s, "b1.t1", 0, "b1.t0=96", 0, 4, 1, 8);
		EXPECT_SPAN(s, "b0.t1", 0, 100);
		free(s);
	}
}

/* --- the C API --- */

/* The schedule built through the C API equals the one parsed from text, and prints as the text does. */
static void expect_same(const HSchedule *built, const char *text, int line)
{
	char a[4096], b[4096];
	HSchedule *s = parse_ok(text, line);
	if (!s)
		return;
	if (!hir_schedule_equal(built, s)) {
		fprintf(stderr, "%s:%d: the C API built another schedule than '%s'\n", __FILE__, line, text);
		failures++;
	}
	if (strcmp(printed(built, false, a, sizeof a), printed(s, false, b, sizeof b))) {
		fprintf(stderr, "%s:%d: the C API's schedule prints as\n%sinstead of\n%s", __FILE__, line, a, b);
		failures++;
	}
	free(s);
}

/* The C API builders make what the text makes; their errors; where a directive was. */
static void test_api(void)
{
	static const char *const order[] = {"b0", "tree", "b1"};
	static const char *const turn[] = {"tree", "batch"};
	HSchedule *s = fresh(), *t = fresh();
	Error e = {.message = {0}};
	char where[300];

	CHECK(hir_schedule_tile(s, "batch", "b0", "b1", 8, &e));
	CHECK(hir_schedule_reorder(s, order, 3, &e));
	CHECK(hir_schedule_mark(s, HDIR_PARALLEL, "b0", 0, &e));
	CHECK(hir_schedule_split(s, "tree", "t0", "t1", 50, &e));
	CHECK(hir_schedule_mark(s, HDIR_INTERLEAVE, "t0.b1", 0, &e));
	CHECK(hir_schedule_mark(s, HDIR_UNROLL_WALK, "t1.b1", 4, &e));
	CHECK(hir_schedule_mark(s, HDIR_CACHE, "b0", 0, &e));
	CHECK(hir_schedule_check(s, &e));
	expect_same(s, "tile(batch, b0, b1, 8)\nreorder(b0, tree, b1)\nparallel(b0)\nsplit(tree, t0, t1, 50)\n"
	               "interleave(t0.b1); unrollWalk(t1.b1, 4); cache(b0)", __LINE__);

	hir_schedule_init(s, NUM_TREES);
	CHECK(hir_schedule_tile(s, "batch", "b0", "b1", 32, &e));
	CHECK(hir_schedule_gpu_dimension(s, "b0", "grid.x", &e));
	CHECK(hir_schedule_gpu_dimension(s, "b1", "block.x", &e));
	CHECK(hir_schedule_tile(s, "tree", "t0", "t1", 20, &e));
	CHECK(hir_schedule_mark(s, HDIR_SPECIALIZE, "t1", 0, &e));
	CHECK(hir_schedule_mark(s, HDIR_PEEL_WALK, "t1", 2, &e));
	CHECK(hir_schedule_gpu_dimension(s, "t0", "block.y", &e));
	CHECK(hir_schedule_mark(s, HDIR_SHARED_REDUCE, "t0", 0, &e));
	CHECK(hir_schedule_check(s, &e));
	expect_same(s, "tile(batch, b0, b1, 32); gpuDimension(b0, grid.x); gpuDimension(b1, block.x)\n"
	               "tile(tree, t0, t1, 20); specialize(t1); peelWalk(t1, 2); gpuDimension(t0, block.y); sharedReduce(t0)", __LINE__);

	hir_schedule_init(s, NUM_TREES);
	CHECK(hir_schedule_tile(s, "tree", "t0", "t1", 50, &e));
	CHECK(hir_schedule_reorder(s, (const char *const[]){"t0", "t1", "batch"}, 3, &e));
	CHECK(hir_schedule_mark(s, HDIR_PARALLEL, "t0", 0, &e));
	CHECK(hir_schedule_mark(s, HDIR_VECTOR_REDUCE, "t0", 8, &e));
	CHECK(hir_schedule_mark(s, HDIR_ATOMIC_REDUCE, "t1", 0, &e));
	CHECK(hir_schedule_mark(s, HDIR_PARALLEL, "t1", 0, &e));
	CHECK(hir_schedule_check(s, &e));
	expect_same(s, "tile(tree, t0, t1, 50); reorder(t0, t1, batch); parallel(t0); vectorReduce(t0, 8); atomicReduce(t1); parallel(t1)",
	            __LINE__);

	/* Errors through the C API name the directive but no place; the schedule is unchanged. */
	hir_schedule_init(s, NUM_TREES);
	CHECK(hir_schedule_tile(s, "batch", "b0", "b1", 8, &e));
	memcpy(t, s, sizeof *t);
	CHECK(!hir_schedule_tile(s, "batch", "c0", "c1", 8, &e));
	CHECK(!strcmp(e.message, "tile(batch, c0, c1, 8): 'batch' is no longer a loop: it was tiled into b0, b1"));
	CHECK(!hir_schedule_split(s, "b0", "c0", "c1", 3000000000u, &e));
	CHECK(!strcmp(e.message, "split(b0, c0, c1, 3000000000): split point 3000000000: must be at most 2147483647"));
	CHECK(!hir_schedule_tile(s, "tree", "b0", "t1", 8, &e));
	CHECK(!strcmp(e.message, "tile(tree, b0, t1, 8): 'b0' is already a variable"));
	CHECK(!hir_schedule_tile(s, "tree", "t0", "t1", 0, &e));
	CHECK(!hir_schedule_mark(s, HDIR_VECTOR_REDUCE, "tree", 5, &e));
	CHECK(!hir_schedule_gpu_dimension(s, "b0", "grid", &e));
	CHECK(!strcmp(e.message, "gpuDimension(b0, grid): unknown GPU dimension 'grid' (expected grid.x, grid.y, grid.z, block.x, block.y or block.z)"));
	CHECK(!hir_schedule_tile(s, "tree", "t0", "t0", 8, &e));
	CHECK(!hir_schedule_tile(s, "tree", "t-0", "t1", 8, &e));
	CHECK(strstr(e.message, "'t-0' is not a variable name"));
	CHECK(!hir_schedule_tile(s, "tree", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "t1", 8, &e));
	CHECK(!hir_schedule_reorder(s, order, 0, &e));
	CHECK(!hir_schedule_reorder(s, (const char *const[]){"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"}, 13, &e));
	CHECK(!hir_schedule_mark(s, (HDirectiveKind)HDIR_COUNT, "b0", 0, &e));
	CHECK(hir_schedule_equal(s, t));
	CHECK(s->num_log == 1);

	/* The check names the directive of a copy made by split, not another directive of its kind. */
	hir_schedule_init(s, NUM_TREES);
	CHECK(hir_schedule_reorder(s, turn, 2, &e));
	CHECK(hir_schedule_tile(s, "batch", "b0", "b1", 8, &e));
	CHECK(hir_schedule_mark(s, HDIR_INTERLEAVE, "b1", 0, &e));
	CHECK(hir_schedule_mark(s, HDIR_INTERLEAVE, "b0", 0, &e));
	CHECK(hir_schedule_split(s, "tree", "t0", "t1", 50, &e));
	CHECK(!hir_schedule_check(s, &e));
	CHECK(!strcmp(e.message, "interleave(b0): 't0.b0' holds the batch loop 't0.b1': rows are interleaved over tree loops only"));
	CHECK(!strcmp(hir_schedule_where(s, hir_schedule_find(s, "t1.b1"), HDIR_INTERLEAVE, where, sizeof where), "interleave(b1)"));

	/* hir_schedule_where names the place in the text. */
	free(t);
	if ((t = parse_ok("reorder(tree, batch)\n  tile(batch, b0, b1, 8); interleave(b1)\nsplit(tree, t0, t1, 50)", __LINE__))) {
		CHECK(!strcmp(hir_schedule_where(t, hir_schedule_find(t, "t1.b1"), HDIR_INTERLEAVE, where, sizeof where),
		              "good.sched:2:27: interleave(b1)"));
		CHECK(!strcmp(hir_schedule_where(t, hir_schedule_find(t, "b1"), HDIR_INTERLEAVE, where, sizeof where),
		              "good.sched:2:27: interleave(b1)"));
		free(t);
	}
	CHECK(!strcmp(hir_directive_name(HDIR_UNROLL_WALK), "unrollWalk"));
	CHECK(!strcmp(hir_gpu_dim_name(HGPU_BLOCK_Z), "block.z"));
	free(s);
}

/* --- errors --- */

/* Errors not covered by tests/schedules/bad: places, columns, what is left of the schedule. */
static void test_errors(void)
{
	HSchedule *s = fresh(), *t;
	Error e = {.message = {0}};
	char text[2048];

	/* The schedule is left as it was before the failing directive. */
	CHECK(!hir_schedule_parse(s, "tile(batch, b0, b1, 8)\nsplit(tree, t0, t1, 50); tile(batch, c0, c1, 4)", "x", &e));
	CHECK(!strcmp(e.message, "x:2:26: tile(batch, c0, c1, 4): 'batch' is no longer a loop: it was tiled into b0, b1 (line 1)"));
	if ((t = parse_ok("tile(batch, b0, b1, 8)\nsplit(tree, t0, t1, 50)", __LINE__))) {
		CHECK(hir_schedule_equal(s, t));
		free(t);
	}
	/* A syntax error stops before the directives after it; those before it stay applied. */
	hir_schedule_init(s, NUM_TREES);
	CHECK(!hir_schedule_parse(s, "tile(batch, b0, b1, 8); parallel(b0) x; parallel(b1)", "x", &e));
	CHECK(s->num_log == 1);
	/* Columns count bytes, tabs included; no source gives "schedule". */
	EXPECT_ERROR("\t\tparallel(batch, )", "t:1:19: expected an argument before ')'");
	EXPECT_ERROR("parallel(batch,, tree)", "t:1:16: expected an argument before ','");
	hir_schedule_init(s, NUM_TREES);
	CHECK(!hir_schedule_parse(s, "\n\ncache(x)", NULL, &e));
	CHECK(!strcmp(e.message, "schedule:3:1: cache(x): unknown variable 'x'"));
	CHECK(!hir_schedule_parse(s, "cache(x)", "", &e));
	CHECK(!strcmp(e.message, "schedule:1:1: cache(x): unknown variable 'x'"));
	/* Directives may not span lines. */
	EXPECT_ERROR("tile(batch,\n b0, b1, 8)", "t:1:12: expected ')' after the arguments of tile");
	EXPECT_ERROR("tile\n(batch, b0, b1, 8)", "t:1:5: expected '(' after tile, got the end of the line");
	EXPECT_ERROR("tile", "t:1:5: expected '(' after tile, got the end of the text");
	EXPECT_ERROR("tile(", "t:1:6: expected ')' after the arguments of tile");
	EXPECT_ERROR("tile(batch # b0, b1, 8)", "t:1:12: expected ')' after the arguments of tile");
	EXPECT_ERROR("tile(batch; b0, b1, 8)", "t:1:11: expected ')' after the arguments of tile");
	EXPECT_ERROR("tile # (batch, b0, b1, 8)", "t:1:6: expected '(' after tile, got a comment");
	EXPECT_ERROR("parallel(batch)\n)", "t:2:1: expected a directive name, got ')'");
	EXPECT_ERROR("parallel(batch) ,", "t:1:17: unexpected ',' after the ')' of parallel");
	EXPECT_ERROR("parallel(batch)(tree)", "t:1:16: unexpected '(' after the ')' of parallel");
	EXPECT_ERROR("8(batch)", "t:1:1: expected a directive name, got '8'");
	EXPECT_ERROR("Tile(batch, b0, b1, 8)", "t:1:1: unknown directive 'Tile' (expected tile, split, splitSize, reorder, parallel,");
	EXPECT_ERROR("tile.x(batch, b0, b1, 8)", "t:1:1: unknown directive 'tile.x'");
	EXPECT_ERROR("unrollWalk(tree)", "t:1:16: unrollWalk takes 1 variable and 1 number, got 1 argument");
	EXPECT_ERROR("gpuDimension(batch)", "t:1:19: gpuDimension takes a variable and a GPU dimension, got 1 argument");
	EXPECT_ERROR("tile(batch, b0, b1, 8, 9)", "t:1:24: tile takes 3 variables and 1 number, got 5 arguments");
	EXPECT_ERROR("reorder()", "t:1:9: reorder takes one to 12 variables, got 0 arguments");
	EXPECT_ERROR("tile(batch, b0, b1, +8)", "t:1:21: '+8' is not a number");
	EXPECT_ERROR("tile(batch, b0, b1, 0x10)", "t:1:21: '0x10' is not a number");
	EXPECT_ERROR("tile(batch, b0, b1, 99999999999999999999999999)", "t:1:21: '99999999999999999999999999' is too large (at most 2147483647)");
	EXPECT_ERROR("tile(batch, b0, 8, 8)", "t:1:17: '8' is not a variable name");
	EXPECT_ERROR("tile(batch, b\xc3\xa9, b1, 8)", "t:1:13: 'b\\xc3\\xa9' is not a variable name");
	EXPECT_ERROR("parallel(\x01)", "t:1:10: '\\x01' is not a variable name");
	/* A name of 47 characters is one too many; an overlong one is shortened in the message. */
	EXPECT_ERROR("parallel(bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb)", "is longer than 46 characters");
	/* The end-of-schedule checks run after the last directive. */
	EXPECT_ERROR("reorder(tree, batch); interleave(tree)\n# a comment\n\n", "t:1:23: interleave(tree): 'tree' is not an innermost loop (it holds 'batch')");
	EXPECT_ERROR("reorder(tree, batch); vectorReduce(tree, 4)", "t:1:23: vectorReduce(tree, 4): 'tree' is not parallel");
	/* More directives than the log holds. */
	text[0] = 0;
	for (int i = 0; i <= HIR_MAX_DIRECTIVES; i++)
		strcat(text, "reorder(batch, tree);");
	hir_schedule_init(s, NUM_TREES);
	CHECK(!hir_schedule_parse(s, text, "x", &e));
	CHECK(strstr(e.message, "x:1:1345: reorder(batch, tree): too many directives (at most 64)"));
	free(s);
}

/* --- the bad schedules in tests/schedules/bad --- */

/* The file at path, NUL-terminated, in a new allocation; NULL if it cannot be read. */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *text;
	size_t n;
	if (!f)
		return NULL;
	text = malloc(1 << 16);
	if (!text)
		abort();
	n = fread(text, 1, (1 << 16) - 1, f);
	text[n] = 0;
	fclose(f);
	return text;
}

/* Whether BAD_DIR is under base or a directory above it; dir gets its path. */
static bool find_above(char *base, char *dir, size_t size)
{
	for (char *slash = base + strlen(base); slash; slash = strrchr(base, '/')) {
		*slash = 0;
		snprintf(dir, size, "%s/%s", base, BAD_DIR);
		if (access(dir, R_OK) == 0)
			return true;
	}
	return false;
}

/*
 * The directory of bad schedules: BAD_DIR under the working directory (the repository
 * root), else above it or above the test program (build/tests/schedule, which
 * tests/run.py runs in a scratch directory).
 */
static bool find_bad_dir(char *dir, size_t size)
{
	char base[PATH_MAX];
	ssize_t n;
	snprintf(dir, size, "%s", BAD_DIR);
	if (access(dir, R_OK) == 0)
		return true;
	if (getcwd(base, sizeof base) && find_above(base, dir, size))
		return true;
	n = readlink("/proc/self/exe", base, sizeof base - 1);
	if (n <= 0)
		return false;
	base[n] = 0;
	*strrchr(base, '/') = 0;
	return find_above(base, dir, size);
}

/* qsort order for file names. */
static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every NAME.sched in BAD_DIR fails with a message containing the first line of NAME.err. */
static void test_bad_files(void)
{
	char dir[PATH_MAX + 64], path[2 * PATH_MAX], source[300];
	char *names[512];
	size_t count = 0;
	struct dirent *entry;
	DIR *d;

	if (!find_bad_dir(dir, PATH_MAX) || !(d = opendir(dir))) {
		fprintf(stderr, "%s: cannot find the directory %s: run this test from the repository root\n", __FILE__, BAD_DIR);
		failures++;
		return;
	}
	while ((entry = readdir(d)) && count < COUNT_OF(names)) {
		size_t len = strlen(entry->d_name);
		if (len > 6 && !strcmp(entry->d_name + len - 6, ".sched"))
			names[count++] = strdup(entry->d_name);
	}
	closedir(d);
	qsort(names, count, sizeof names[0], compare_names);
	if (count < 30) {
		fprintf(stderr, "%s: only %zu bad schedules in %s\n", __FILE__, count, dir);
		failures++;
	}
	for (size_t i = 0; i < count; i++) {
		size_t len = strlen(names[i]);
		char *text, *want;
		HSchedule *s = fresh();
		Error e = {.message = {0}};
		bool ok;
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		text = read_text(path);
		snprintf(path + strlen(path) - 6, 5, ".err");
		want = read_text(path);
		if (!text || !want) {
			fprintf(stderr, "%s: cannot read %s/%s or its .err\n", __FILE__, dir, names[i]);
			failures++;
		} else {
			want[strcspn(want, "\n")] = 0;
			snprintf(source, sizeof source, "bad/%.*s", (int)len, names[i]);
			ok = hir_schedule_parse(s, text, source, &e);
			if (ok || !want[0] || !strstr(e.message, want)) {
				fprintf(stderr, "%s: %s: expected an error containing\n  %s\ngot %s\n  %s\n", __FILE__, source, want,
				        ok ? "success" : "", e.message);
				failures++;
			}
		}
		free(text);
		free(want);
		free(s);
		free(names[i]);
	}
}

/* --- robustness: every prefix and many mutations of the schedules above parse or fail cleanly --- */

static uint32_t random_state = 12345;
/* A fixed pseudo-random sequence, the same on every run. */
static uint32_t next_random(void)
{
	random_state = random_state * 1103515245u + 12345u;
	return random_state >> 8;
}

/* Parse exactly len bytes of text (in an allocation of len + 1, so that reading past it is caught) and check the outcome's form. */
static void parse_exact(const char *text, size_t len)
{
	char *copy = malloc(len + 1);
	HSchedule *s = fresh();
	Error e = {.message = {0}};
	if (!copy)
		abort();
	memcpy(copy, text, len);
	copy[len] = 0;
	if (!hir_schedule_parse(s, copy, "fuzz", &e) && strncmp(e.message, "fuzz:", 5)) {
		fprintf(stderr, "%s: '%s' fails without a place: %s\n", __FILE__, copy, e.message);
		failures++;
	}
	free(copy);
	free(s);
}

/* Every prefix of some good schedules, and random corruptions of them, parse or fail with a placed message (ASan catches overreads). */
static void test_robust(void)
{
	static const char *const texts[] = {
		"tile(batch, b0, b1, 64); reorder(b0, tree, b1); parallel(b0) # x\n split(tree, t0, t1, 50)\r\n",
		"reorder(tree, batch)\ntile(batch, b0, b1, 8); interleave(b1)\nsplit(tree, t0, t1, 30); unrollWalk(t1.b1, 3)\n",
		"tile(tree, t0, t1, 25); gpuDimension(t0, grid.z); sharedReduce(t0); gpuDimension(t1, block.x); vectorReduce(t1, 4)",
		"tile(batch, b0, b1, 256); tile(b0, c0, c1, 4); split(c1, d0, d1, 2); specialize(d1.b1); peelWalk(d0.b1.tree, 2)",
	};
	const char alphabet[] = "(),;#\n \t.x0_9-";
	char buf[256];
	for (size_t t = 0; t < COUNT_OF(texts); t++) {
		size_t len = strlen(texts[t]);
		for (size_t n = 0; n <= len; n++)
			parse_exact(texts[t], n);
		for (int round = 0; round < 400; round++) {
			memcpy(buf, texts[t], len + 1);
			for (int k = 1 + (int)(next_random() % 3); k > 0; k--) {
				size_t at = next_random() % len;
				uint32_t r = next_random();
				buf[at] = r % 4 ? alphabet[r % (sizeof alphabet - 1)] : (char)(r >> 8);
				if (!buf[at])
					buf[at] = '!';
			}
			parse_exact(buf, len);
		}
	}
}

/* unroll(v), the papers' name for specialize(v), marks the loop as specialize does, prints as written and round-trips. */
static void test_unroll(void)
{
	HSchedule *u = parse_ok("tile(tree, t0, t1, 10); unroll(t0)", __LINE__), *p = parse_ok("tile(tree, t0, t1, 10); specialize(t0)", __LINE__);
	char buf[256];
	if (u && p) {
		int32_t a = hir_schedule_find(u, "t0"), b = hir_schedule_find(p, "t0");
		CHECK(u->vars[a].flags & HVAR_SPECIALIZE && u->vars[a].flags & HVAR_UNROLL);
		CHECK(p->vars[b].flags & HVAR_SPECIALIZE && !(p->vars[b].flags & HVAR_UNROLL));
		CHECK(hir_var_has_directive(&u->vars[a], HDIR_UNROLL) && !hir_var_has_directive(&u->vars[a], HDIR_SPECIALIZE));
		CHECK(strstr(printed(u, false, buf, sizeof buf), "unroll(t0)") != NULL);
		expect_same(u, "tile(tree, t0, t1, 10)\nunroll(t0)", __LINE__);
	}
	free(u);
	free(p);
}

/* Size arguments as expressions of numbers and named sizes, and their refusals, which quote the expression. */
static void test_sizes(void)
{
	static const struct {
		const char *text;
		int64_t tile; /* the tile size it gives; -1: refused with `message` */
		const char *message;
	} cases[] = {
		{"tile(tree, t0, t1, N_t/4)", NUM_TREES / 4, NULL},
		{"tile(tree, t0, t1, 2+3*4-1)", 13, NULL},
		{"tile(tree, t0, t1, ROWS_PER_TB*2/3)", 21, NULL},
		{"tile(tree, t0, t1, N_t/0)", -1, "t:1:20: 'N_t/0' divides by zero"},
		{"tile(tree, t0, t1, TREES_PER_TB)", -1, "'TREES_PER_TB' is not a number, nor a size the schedule knows (N_t, ROWS_PER_TB, "},
		{"tile(tree, t0, t1, 2-ROWS_PER_TB)", -1, "'2-ROWS_PER_TB' is -30 (expected a number from 0 to 2147483647)"},
		{"tile(tree, t0, t1, ROWS_PER_TB*ROWS_PER_TB*ROWS_PER_TB*ROWS_PER_TB*ROWS_PER_TB*ROWS_PER_TB*ROWS_PER_TB*ROWS_PER_TB*ROWS_PER_TB*ROWS_PER_TB*ROWS_PER_TB*ROWS_PER_TB*ROWS_PER_TB)", -1, "is too large"},
		{"tile(tree, t0, t1, 4*)", -1, "'4*' is not a number"},
		{"tile(tree, t0, t1, 99999999999)", -1, "'99999999999' is too large"},
	};
	for (size_t i = 0; i < COUNT_OF(cases); i++) {
		HSchedule *s = fresh();
		Error e = {.message = {0}};
		bool ok = hir_schedule_name_size(s, "ROWS_PER_TB", 32, &e) && hir_schedule_name_size(s, "N_f", 28, &e) &&
		          hir_schedule_parse(s, cases[i].text, "t", &e);
		if (cases[i].tile > 0) {
			CHECK(ok && s->log[0].value == cases[i].tile);
		} else if (ok || !strstr(e.message, cases[i].message)) {
			fprintf(stderr, "%s:%d: '%s': %s\n", __FILE__, __LINE__, cases[i].text, ok ? "accepted" : e.message);
			failures++;
		}
		free(s);
	}
	{
		HSchedule *s = fresh();
		Error e = {.message = {0}};
		CHECK(!hir_schedule_name_size(s, "N_t", 4, &e) && strstr(e.message, "N_t is the number of trees"));
		CHECK(!hir_schedule_name_size(s, "2x", 4, &e) && strstr(e.message, "'2x' is not a size's name"));
		CHECK(hir_schedule_name_size(s, "X", 4, &e) && !hir_schedule_name_size(s, "X", 5, &e) && strstr(e.message, "named twice"));
		CHECK(!hir_schedule_name_size(s, "Y", -1, &e) && strstr(e.message, "the size 'Y' is -1"));
		free(s);
	}
}

int main(void)
{
	test_loops();
	test_sizes();
	test_unroll();
	test_ranges();
	test_api();
	test_errors();
	test_bad_files();
	test_robust();
	if (failures)
		fprintf(stderr, "schedule: %d failures\n", failures);
	return failures != 0;
}
