/*
 * Unit tests of libgrovec's entry points, grove_compile_file and the forest building of
 * grove_forest_*: a model compiles into an artifact that libgrove loads, and each kind of
 * failure has its status and leaves no output behind.
 */
#define _POSIX_C_SOURCE 200809L
#include "rt/grove_compile.h"

#include <libgen.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tests/unit/check.h"

/* Compiling model into out with options must fail with status and a message containing text, writing nothing. */
static void expect_failure(const char *model, const char *out, const GroveCompileOptions *options, GroveStatus status,
                           const char *text, int line)
{
	GroveError err = {0};
	GroveStatus got = grove_compile_file(model, out, options, &err);
	if (got != status || err.status != status || !strstr(err.message, text)) {
		fprintf(stderr, "%s:%d: got %s '%s', expected %s with '%s'\n", __FILE__, line, grove_status_name(got),
		        err.message, grove_status_name(status), text);
		failures++;
	}
	CHECK(!out || access(out, F_OK) != 0);
}

#define FAILS(model, out, options, status, text) expect_failure(model, out, options, status, text, __LINE__)

/* One of several compiles at once: model into its own path, which must then load (its seal intact). */
typedef struct Job {
	const char *model;
	char out[96];
	GroveStatus status;
	char message[512];
} Job;

static void *compile_job(void *arg)
{
	Job *j = arg;
	GroveModel *m = NULL;
	GroveError err = {0};
	for (int round = 0; round < 3 && (j->status = grove_compile_file(j->model, j->out, NULL, &err)) == GROVE_OK; round++) {
		if ((j->status = grove_load(j->out, &m, &err)) != GROVE_OK)
			break;
		grove_free(m);
	}
	snprintf(j->message, sizeof j->message, "%s", err.message);
	return NULL;
}

/* Compiles on several threads at once share nothing: each artifact loads. */
static void test_threads(const char *model, const char *dir)
{
	pthread_t threads[4];
	Job jobs[4];
	for (int t = 0; t < 4; t++) {
		jobs[t] = (Job){.model = model};
		snprintf(jobs[t].out, sizeof jobs[t].out, "%s/thread%d.so", dir, t);
		pthread_create(&threads[t], NULL, compile_job, &jobs[t]);
	}
	for (int t = 0; t < 4; t++) {
		pthread_join(threads[t], NULL);
		if (jobs[t].status != GROVE_OK) {
			fprintf(stderr, "%s:%d: thread %d: %s\n", __FILE__, __LINE__, t, jobs[t].message);
			failures++;
		}
		unlink(jobs[t].out);
	}
}

/* A category set split (the exact rule): x0 in {2, 5} goes left, NaN too; 2.5, -2 and 7 have no category in it. */
static void test_forest_sets(const char *dir)
{
	GroveForestOptions fo = {.num_features = 1, .num_outputs = 1};
	long long left[] = {1, -1, -1}, right[] = {2, -1, -1}, feature[] = {0, 0, 0}, sets[] = {0, -1, -1}, index = -1;
	double threshold[] = {0, 0, 0}, value[] = {0, 1, 2};
	unsigned char missing_left[] = {1, 0, 0};
	unsigned words[] = {(1u << 2) | (1u << 5)};
	float rows[] = {2, 5, 2.5f, -2, 7, __builtin_nanf("")}, y[6];
	GroveTreeArrays t = {.num_nodes = 3, .left = left, .right = right, .feature = feature, .threshold = threshold,
	                     .missing_left = missing_left, .value = value, .category_set = sets};
	GroveError err;
	GroveModel *m = NULL;
	GroveForest *forest = grove_forest_new(&fo, &err);
	char out[96];
	snprintf(out, sizeof out, "%s/sets.so", dir);
	CHECK(forest && grove_forest_add_set(forest, words, 1, &index, &err) == GROVE_OK && index == 0);
	sets[0] = 1;
	CHECK(forest && grove_forest_add_tree(forest, &t, &err) == GROVE_ERROR_FORMAT &&
	      !strcmp(err.message, "tree 0 node 0: the category set is out of range"));
	sets[0] = 0;
	CHECK(forest && grove_forest_add_tree(forest, &t, &err) == GROVE_OK);
	CHECK(forest && grove_compile_forest(forest, out, NULL, &err) == GROVE_OK);
	CHECK(grove_load(out, &m, &err) == GROVE_OK);
	CHECK(m && grove_predict(m, rows, 6, 1, y, 6, 0, &err) == GROVE_OK && y[0] == 1 && y[1] == 1 && y[2] == 2 &&
	      y[3] == 2 && y[4] == 2 && y[5] == 1);
	grove_free(m);
	grove_forest_free(forest);
	unlink(out);
}

/*
 * Nodes no walk reaches (the forest API takes them): tree 1's nodes 3 and 4 would send
 * rows of -5 < x <= 0 right, away from leaf 10, were they walked. Compiled as code with
 * 8 rows side by side in vectors (lower/rep_code.c: every split a tree reaches, after
 * tree 0's larger walk), and as the default.
 */
static void test_forest_unreached(const char *dir)
{
	GroveForestOptions fo = {.num_features = 1, .num_outputs = 1};
	long long left0[] = {1, 3, 5, -1, -1, -1, -1}, right0[] = {2, 4, 6, -1, -1, -1, -1}, feature[] = {0, 0, 0, 0, 0, 0, 0};
	long long left1[] = {1, -1, -1, 1, 1}, right1[] = {2, -1, -1, 2, 2};
	double threshold0[] = {0, -1, 1, 0, 0, 0, 0}, value0[] = {0, 0, 0, 1, 2, 3, 4};
	double threshold1[] = {0, 0, 0, -5, -5}, value1[] = {0, 10, 20, 0, 0};
	GroveTreeArrays t0 = {.num_nodes = 7, .left = left0, .right = right0, .feature = feature, .threshold = threshold0,
	                      .value = value0};
	GroveTreeArrays t1 = {.num_nodes = 5, .left = left1, .right = right1, .feature = feature, .threshold = threshold1,
	                      .value = value1};
	float rows[16], y[16];
	const char *schedules[] = {"representation(code); tile(batch, b0, b1, 32); tile(b1, b2, b3, 8); interleave(b3); "
	                           "reorder(b0, tree, b2, b3); specialize(tree); parallel(b0)",
	                           NULL};
	GroveError err;
	GroveForest *forest = grove_forest_new(&fo, &err);
	char out[96];
	snprintf(out, sizeof out, "%s/unreached.so", dir);
	CHECK(forest && grove_forest_add_tree(forest, &t0, &err) == GROVE_OK && grove_forest_add_tree(forest, &t1, &err) == GROVE_OK);
	for (int i = 0; i < 16; i++)
		rows[i] = -3.0f + 0.5f * (float)i; /* -3 .. 4.5 */
	for (int k = 0; forest && k < 2; k++) {
		GroveCompileOptions o;
		GroveModel *m = NULL;
		grove_compile_options_init(&o);
		o.schedule = schedules[k];
		CHECK(grove_compile_forest(forest, out, &o, &err) == GROVE_OK && grove_load(out, &m, &err) == GROVE_OK);
		CHECK(m && grove_predict(m, rows, 16, 1, y, 16, 0, &err) == GROVE_OK);
		for (int i = 0; m && i < 16; i++) {
			float x = rows[i], want = (x <= 0 ? (x <= -1 ? 1.0f : 2.0f) : (x <= 1 ? 3.0f : 4.0f)) + (x <= 0 ? 10.0f : 20.0f);
			CHECK(y[i] == want);
		}
		grove_free(m);
		unlink(out);
	}
	grove_forest_free(forest);
}

/*
 * Category sets walked by leaf masks (sparse, 16 rows a tile, where the CPU has AVX2 or
 * AVX-512): set A {3, 5, 300} fits AVX2's two tables of 8 words, set B {7, 600} does
 * not, and the sets' stride (B's 19 words and one) is wider than them, so a category past
 * the tables (556 = 512 + 32 + 12, whose word 17 a permute would read as A's 9, 300's)
 * must read as in no such set. Every category 0..639 and NaN, 656 rows: 41 tiles.
 */
static void test_forest_category_tables(const char *dir)
{
	GroveForestOptions fo = {.num_features = 1, .num_outputs = 1};
	long long left[] = {1, -1, 3, -1, -1}, right[] = {2, -1, 4, -1, -1}, feature[] = {0, 0, 0, 0, 0}, set[5] = {0, -1, 0, -1, -1};
	double threshold[5] = {0}, value[] = {0, 1, 0, 2, 3};
	unsigned a[10] = {1u << 3 | 1u << 5}, b[19] = {1u << 7};
	GroveTreeArrays t = {.num_nodes = 5, .left = left, .right = right, .feature = feature, .threshold = threshold,
	                     .value = value, .category_set = set};
	float rows[656], y[656];
	GroveError err;
	GroveModel *m = NULL;
	GroveCompileOptions o;
	GroveForest *forest = grove_forest_new(&fo, &err);
	char out[96];
	a[300 / 32] = 1u << (300 % 32);
	b[600 / 32] = 1u << (600 % 32);
	snprintf(out, sizeof out, "%s/tables.so", dir);
	CHECK(forest && grove_forest_add_set(forest, a, 10, &set[0], &err) == GROVE_OK &&
	      grove_forest_add_set(forest, b, 19, &set[2], &err) == GROVE_OK && grove_forest_add_tree(forest, &t, &err) == GROVE_OK);
	for (int i = 0; i < 656; i++)
		rows[i] = i < 640 ? (float)i : NAN;
	grove_compile_options_init(&o);
	o.representation = "sparse";
	CHECK(forest && grove_compile_forest(forest, out, &o, &err) == GROVE_OK && grove_load(out, &m, &err) == GROVE_OK);
	CHECK(m && grove_predict(m, rows, 656, 1, y, 656, 0, &err) == GROVE_OK);
	for (int i = 0; m && i < 656; i++)
		CHECK(y[i] == (i == 3 || i == 5 || i == 300 ? 1.0f : i == 7 || i == 600 ? 2.0f : 3.0f));
	grove_free(m);
	unlink(out);
	grove_forest_free(forest);
}

/*
 * A forest built in memory: a stump and a tree of two levels over 4 features, averaged,
 * rows rounded to float32 (scikit-learn's rule: a double just above a threshold that
 * rounds to it goes left), predicted from floats and doubles; bad trees and options.
 */
static void test_forest(const char *dir)
{
	GroveForestOptions fo = {.num_features = 4, .num_outputs = 1, .average = 1, .double_thresholds = 1, .rows_float = 1};
	long long left[] = {1, 3, -1, -1, -1}, right[] = {2, 4, -1, -1, -1}, feature[] = {3, 0, 0, 0, 0};
	long long stump_left[] = {1, -1, -1}, stump_right[] = {2, -1, -1}, stump_feature[] = {1, 0, 0};
	double threshold[] = {0.25, -2.0, 0, 0, 0}, value[] = {0, 0, 10.0, 1.0, 3.0}, stump_value[] = {0, 100.0, 200.0};
	double stump_threshold[] = {0.5, 0, 0}, rows[8] = {-3, 0.5000000001, 0, 0.1, 5, 0.6, 0, 0.3}, twin[8];
	unsigned char missing_left[] = {1, 0, 0, 0, 0};
	GroveTreeArrays t = {.num_nodes = 5, .left = left, .right = right, .feature = feature, .threshold = threshold,
	                     .missing_left = missing_left, .value = value};
	GroveTreeArrays stump = {.num_nodes = 3, .left = stump_left, .right = stump_right, .feature = stump_feature,
	                         .threshold = stump_threshold, .value = stump_value};
	GroveError err;
	GroveModel *m = NULL;
	GroveForest *forest = grove_forest_new(&fo, &err);
	float y[2], y64[2], frows[8];
	char out[96];
	snprintf(out, sizeof out, "%s/forest.so", dir);
	CHECK(forest != NULL);
	if (!forest)
		return;
	CHECK(grove_compile_forest(forest, out, NULL, &err) == GROVE_ERROR_ARGUMENT && strstr(err.message, "no trees"));
	CHECK(grove_forest_add_tree(forest, &t, &err) == GROVE_OK && grove_forest_add_tree(forest, &stump, &err) == GROVE_OK);
	CHECK(grove_compile_forest(forest, out, NULL, &err) == GROVE_OK);
	CHECK(grove_load(out, &m, &err) == GROVE_OK);
	for (int i = 0; i < 8; i++)
		frows[i] = (float)rows[i];
	/* Row 0: x3 = 0.1 <= 0.25, x0 = -3 <= -2: 1.0; x1 = 0.5000000001 is 0.5 as a float: 100. Row 1: 10; 200. */
	CHECK(m && grove_predict(m, frows, 2, 4, y, 2, 0, &err) == GROVE_OK && y[0] == 50.5f && y[1] == 105.0f);
	CHECK(m && grove_predict_f64(m, rows, 2, 4, y64, 2, 0, &err) == GROVE_OK && y64[0] == 50.5f && y64[1] == 105.0f);
	memcpy(twin, rows, sizeof twin);
	twin[3] = __builtin_nan(""); /* NaN at node 0 goes left, then x0 = -3: 1.0 */
	CHECK(m && grove_predict_f64(m, twin, 1, 4, y64, 1, 0, &err) == GROVE_OK && y64[0] == 50.5f);
	grove_free(m);
	unlink(out);
	/* Bad trees: named by tree and node; the forest keeps the good ones. */
	right[1] = 9;
	CHECK(grove_forest_add_tree(forest, &t, &err) == GROVE_ERROR_FORMAT &&
	      !strcmp(err.message, "tree 2 node 1: right child 9 is out of range"));
	right[1] = 4;
	value[3] = __builtin_inf();
	CHECK(grove_forest_add_tree(forest, &t, &err) == GROVE_ERROR_FORMAT &&
	      !strcmp(err.message, "tree 2 node 3: value 0 is not finite"));
	t.value = NULL;
	CHECK(grove_forest_add_tree(forest, &t, &err) == GROVE_ERROR_ARGUMENT && strstr(err.message, "NULL"));
	{
		GroveCompileOptions o;
		grove_compile_options_init(&o);
		o.limits = "trees=1";
		CHECK(grove_compile_forest(forest, out, &o, &err) == GROVE_ERROR_FORMAT && strstr(err.message, "2 trees"));
		CHECK(access(out, F_OK) != 0);
	}
	grove_forest_free(forest);
	test_forest_sets(dir);
	test_forest_unreached(dir);
	test_forest_category_tables(dir);
	fo.transform = "cube";
	CHECK(!grove_forest_new(&fo, &err) && err.status == GROVE_ERROR_ARGUMENT && strstr(err.message, "cube"));
	fo.transform = "softmax";
	fo.binary = 1;
	CHECK(!grove_forest_new(&fo, &err) && strstr(err.message, "binary"));
}

int main(int argc, char **argv)
{
	char model[4096], dir[] = "/tmp/grove-compile-XXXXXX", out[64], bad[64];
	GroveCompileOptions o;
	GroveModel *m = NULL;
	GroveError err;
	float row[3] = {0.5f, 1.0f, -1.0f}, y[1];
	FILE *f;

	(void)argc;
	snprintf(model, sizeof model, "%s/../../tests/golden/lightgbm.txt", dirname(argv[0])); /* build/tests/compile */
	if (!mkdtemp(dir))
		return 1;
	snprintf(out, sizeof out, "%s/model.so", dir);
	snprintf(bad, sizeof bad, "%s/bad.json", dir);

	/* The defaults compile a model that loads and predicts, with its feature names. */
	CHECK(grove_compile_file(model, out, NULL, &err) == GROVE_OK);
	CHECK(grove_load(out, &m, &err) == GROVE_OK);
	CHECK(m && grove_num_features(m) == 3 && grove_feature_name(m, 2) && !strcmp(grove_feature_name(m, 2), "c"));
	CHECK(m && grove_predict(m, row, 1, 3, y, 1, 0, &err) == GROVE_OK && y[0] > 0 && y[0] < 1);
	grove_free(m);
	unlink(out);

	/* Options: a schedule, another representation, portable code, LLVM IR. */
	grove_compile_options_init(&o);
	o.schedule = "tile(batch, b0, b1, 4); reorder(b0, tree, b1)";
	o.representation = "sparse";
	o.cpu = "x86-64";
	o.opt_level = 1;
	CHECK(grove_compile_file(model, out, &o, &err) == GROVE_OK);
	unlink(out);
	grove_compile_options_init(&o);
	o.emit = "llvm";
	CHECK(grove_compile_file(model, out, &o, &err) == GROVE_OK);
	unlink(out);

	/* Failures. */
	FAILS(NULL, out, NULL, GROVE_ERROR_ARGUMENT, "model_path is NULL");
	FAILS(model, NULL, NULL, GROVE_ERROR_ARGUMENT, "out_path is NULL");
	FAILS("/nonexistent/model.json", out, NULL, GROVE_ERROR_IO, "/nonexistent/model.json");
	f = fopen(bad, "w");
	if (f) {
		fputs("{\"learner\": {}}", f);
		fclose(f);
	}
	FAILS(bad, out, NULL, GROVE_ERROR_FORMAT, "missing member 'learner_model_param'");
	f = fopen(bad, "w"); /* a fuzz find: no trees over no features */
	if (f) {
		fputs("{\"learner\": {\"attributes\": {}, \"feature_names\": [], \"feature_types\": [], \"gradient_booster\": "
		      "{\"model\": {\"gbtree_model_param\": {\"num_parallel_tree\": \"1\", \"num_trees\": \"0\"}, "
		      "\"iteration_indptr\": [0], \"tree_info\": [], \"trees\": []}, \"name\": \"gbtree\"}, "
		      "\"learner_model_param\": {\"base_score\": \"3.5E0\", \"boost_from_average\": \"1\", \"num_class\": \"0\", "
		      "\"num_feature\": \"0\", \"num_target\": \"1\"}, \"objective\": {\"name\": \"reg:squarederror\", "
		      "\"reg_loss_param\": {\"scale_pos_weight\": \"1\"}}}, \"version\": [2, 1, 4]}", f);
		fclose(f);
	}
	FAILS(bad, out, NULL, GROVE_ERROR_FORMAT, "the model has no features; grove needs at least one");
	unlink(bad);
	grove_compile_options_init(&o);
	o.schedule = "tile(batch, a, b, 0)";
	FAILS(model, out, &o, GROVE_ERROR_ARGUMENT, "--schedule-text");
	grove_compile_options_init(&o);
	o.schedule = "tile(batch, b0, b1, ROWS); tile(tree, t0, t1, N_t/PARTS); reorder(b0, t0, b1, t1)";
	FAILS(model, out, &o, GROVE_ERROR_ARGUMENT, "'ROWS' is not a number, nor a size the schedule knows");
	o.sizes = "ROWS=8,PARTS=0";
	FAILS(model, out, &o, GROVE_ERROR_ARGUMENT, "'N_t/PARTS' divides by zero");
	o.sizes = "ROWS=8,PARTS";
	FAILS(model, out, &o, GROVE_ERROR_ARGUMENT, "sizes PARTS: expected NAME=NUMBER");
	o.sizes = "A=1,B=2,C=3,D=4,E=5,F=6,G=7,H=8,I=9,J=10,K=11,L=12,M=13,N=14,O=15,P=16,Q=17";
	FAILS(model, out, &o, GROVE_ERROR_ARGUMENT, "at most");
	o.sizes = "ROWS=8,PARTS=2";
	CHECK(grove_compile_file(model, out, &o, &err) == GROVE_OK);
	CHECK(grove_load(out, &m, &err) == GROVE_OK);
	CHECK(m && grove_predict(m, row, 1, 3, y, 1, 0, &err) == GROVE_OK && y[0] > 0 && y[0] < 1);
	grove_free(m);
	unlink(out);
	grove_compile_options_init(&o);
	o.cpu = "pentium9";
	FAILS(model, out, &o, GROVE_ERROR_ARGUMENT, "unknown x86-64 CPU");
	grove_compile_options_init(&o);
	o.emit = "exe";
	FAILS(model, out, &o, GROVE_ERROR_ARGUMENT, "emit exe");
	grove_compile_options_init(&o);
	o.format = "csv";
	FAILS(model, out, &o, GROVE_ERROR_ARGUMENT, "format csv");
	grove_compile_options_init(&o);
	o.interleave = 0;
	FAILS(model, out, &o, GROVE_ERROR_ARGUMENT, "interleave 0");
	grove_compile_options_init(&o);
	o.representation = "bitvector";
	FAILS(model, out, &o, GROVE_ERROR_ARGUMENT, "bitvector");
	FAILS(model, "/nonexistent/dir/model.so", NULL, GROVE_ERROR_IO, "/nonexistent/dir/model.so");
	grove_compile_options_init(&o);
	o.limits = "features=2";
	FAILS(model, out, &o, GROVE_ERROR_FORMAT, "the model has 3 features, more than grove's limit of 2");
	o.limits = "features=-1";
	FAILS(model, out, &o, GROVE_ERROR_ARGUMENT, "features needs a whole number above 0");

	test_threads(model, dir);
	test_forest(dir);
	rmdir(dir);
	if (failures)
		fprintf(stderr, "compile: %d checks failed\n", failures);
	return failures != 0;
}
