/*
 * libgrove and the host target together: compile a small forest at every optimisation
 * level and interleave factor, load it, and check predictions, argument errors, thread
 * safety, and that a one-row prediction starts no threads and allocates nothing.
 */
#include "lower/lower.h"
#include "rt/grove.h"
#include "target/target.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/check.h"
#include "tests/unit/lower_check.h"

#ifndef GROVE_ASAN /* AddressSanitizer has its own malloc */
/* Allocations counted while `counting` is set: glibc's allocator, interposed by this program. */
static _Atomic int counting;
static _Atomic long allocations;
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);
void *malloc(size_t n) { allocations += counting; return __libc_malloc(n); }
void *calloc(size_t count, size_t size) { allocations += counting; return __libc_calloc(count, size); }
void *realloc(void *p, size_t n) { allocations += counting; return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
#endif


/* Two trees on two features: tree 0 splits x0 < 0.5 (missing left), then x1 < 2 (missing right). */
static HForest *small_forest(void)
{
	HForest *f = hir_forest_new("unit", 2, 1);
	HNode *n = hir_tree_add(f, 5, 0);
	n[0] = (HNode){.value = 0.5, .left = 1, .right = 2, .feature = 0, .default_left = 1};
	n[1] = (HNode){.value = 1.0, .feature = HIR_LEAF};
	n[2] = (HNode){.value = 2.0, .left = 3, .right = 4, .feature = 1};
	n[3] = (HNode){.value = 10.0, .feature = HIR_LEAF};
	n[4] = (HNode){.value = 20.0, .feature = HIR_LEAF};
	n = hir_tree_add(f, 3, 0);
	n[0] = (HNode){.value = -1.0, .left = 1, .right = 2, .feature = 1};
	n[1] = (HNode){.value = 0.25, .feature = HIR_LEAF};
	n[2] = (HNode){.value = 0.5, .feature = HIR_LEAF};
	f->base_score[0] = 0.125;
	f->transform = HTRANSFORM_SIGMOID;
	return f;
}

/* The margin the small forest gives a row, computed by hand. */
static double expected_margin(const float *x)
{
	double m = 0.125;
	if (isnan(x[0]) || x[0] < 0.5f)
		m += 1.0;
	else
		m += isnan(x[1]) || !(x[1] < 2.0f) ? 20.0 : 10.0;
	m += !isnan(x[1]) && x[1] < -1.0f ? 0.25 : 0.5;
	return m;
}

/* Compile forest f (which this frees) into a shared library at path. */
static bool build_forest(HForest *f, const char *path, int opt_level, uint32_t interleave, uint32_t tree_tile, const char *cpu)
{
	Error e = {0};
	MModule *mir;
	CHECK(hir_choose_schedule(f, tree_tile, interleave, interleave, "array", MTOPS_NONE, NULL));
	mir = lower_hir_to_mir(f, NULL, &e);
	LModule *lir;
	TargetOptions o = {.emit = TARGET_EMIT_SHARED, .opt_level = opt_level, .cpu = cpu};
	bool ok = false;
	if (mir && mir_legalize_reductions(mir, &e)) {
		mir_unroll_walks(mir);
		mir_interleave(mir);
		lir = lower_as(mir, NULL, &e);
		ok = lir && target_emit(lir, &o, path, &e);
		lir_module_free(lir);
	}
	if (!ok)
		fprintf(stderr, "build: %s\n", e.message);
	mir_module_free(mir);
	hir_forest_free(f);
	return ok;
}

/* Compile the small forest into a shared library at path. */
static bool build(const char *path, int opt_level, uint32_t interleave, uint32_t tree_tile, const char *cpu)
{
	return build_forest(small_forest(), path, opt_level, interleave, tree_tile, cpu);
}

#define ROWS 1000
static float rows[ROWS * 2];

/* Fill rows with values around the thresholds, some missing. */
static void make_rows(void)
{
	static const float values[] = {NAN, -2.0f, -1.0f, 0.0f, 0.5f, 0.49999997f, 1.0f, 2.0f, 1.9999999f, 3.0f};
	for (int i = 0; i < ROWS * 2; i++)
		rows[i] = values[(i * 7 + i / 13) % 10];
}

/*
 * Rows of doubles: a model that compares in double decides on the doubles themselves
 * (0.0999999999 <= 0.1 holds, though its float, 0.1f, is above 0.1), and a model that
 * compares floats decides on their floats.
 */
static void test_f64_rows(const char *path)
{
	static const double doubles[] = {0.0999999999, 0.1, 0.1000000001, NAN, -3.0, 0.10000000149011612};
	GroveModel *model = NULL;
	GroveError err;
	float out[6];
	HForest *f = hir_forest_new("f64", 1, 1);
	HNode *n = hir_tree_add(f, 3, 0);
	n[0] = (HNode){.value = 0.1, .left = 1, .right = 2, .feature = 0, .compare = HCMP_LE};
	n[1] = (HNode){.value = 1.0, .feature = HIR_LEAF};
	n[2] = (HNode){.value = 2.0, .feature = HIR_LEAF};
	f->threshold_type = HTYPE_F64;
	hir_schedule_init(&f->schedule, 1);
	CHECK(build_forest(f, path, 2, 4, 0, NULL));
	CHECK(grove_load(path, &model, &err) == GROVE_OK);
	CHECK(grove_predict_f64(model, doubles, 6, 1, out, 6, 0, &err) == GROVE_OK);
	CHECK(out[0] == 1 && out[1] == 1 && out[2] == 2 && out[3] == 2 && out[4] == 1 && out[5] == 2);
	grove_free(model);
	unlink(path);

	CHECK(build(path, 2, 4, 0, NULL)); /* float thresholds: the rows are rounded to float */
	CHECK(grove_load(path, &model, &err) == GROVE_OK);
	{
		double wide[2 * ROWS];
		float got[ROWS];
		int bad = 0;
		for (size_t i = 0; i < 2 * ROWS; i++)
			wide[i] = rows[i];
		CHECK(grove_predict_f64(model, wide, ROWS, 2, got, ROWS, GROVE_PREDICT_MARGIN, &err) == GROVE_OK);
		for (size_t r = 0; r < ROWS; r++)
			bad += fabs(got[r] - expected_margin(rows + 2 * r)) > 1e-6;
		CHECK(bad == 0);
		CHECK(grove_predict_f64(model, wide, 4, 3, got, 4, 0, &err) == GROVE_ERROR_ARGUMENT);
	}
	grove_free(model);
	unlink(path);
}

/* Feature names travel from the HIR to the artifact; a model without them names no column. */
static void test_feature_names(const char *path)
{
	char *names[] = {"age", "income \"net\""};
	GroveModel *model = NULL;
	GroveError err;
	HForest *f = small_forest();
	f->feature_names = strings_copy(names, 2);
	CHECK(build_forest(f, path, 1, 1, 0, NULL));
	CHECK(grove_load(path, &model, &err) == GROVE_OK);
	CHECK(grove_feature_name(model, 0) && !strcmp(grove_feature_name(model, 0), "age"));
	CHECK(grove_feature_name(model, 1) && !strcmp(grove_feature_name(model, 1), "income \"net\""));
	CHECK(grove_feature_name(model, 2) == NULL && grove_feature_name(NULL, 0) == NULL);
	grove_free(model);
	unlink(path);
}

/* The thread count of this process. */
static int threads(void)
{
	char line[256];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "Threads:", 8))
			n = atoi(line + 8);
	if (f)
		fclose(f);
	return n;
}

typedef struct Job {
	const GroveModel *model;
	float out[ROWS];
	GroveStatus status;
} Job;

static void *predict_job(void *arg)
{
	Job *job = arg;
	job->status = grove_predict(job->model, rows, ROWS, 2, job->out, ROWS, GROVE_PREDICT_MARGIN, NULL);
	return NULL;
}

/* Predictions of every batch size up to 20 and of ROWS rows match the hand-computed ones. */
static void check_predictions(const GroveModel *model, const char *what)
{
	float out[ROWS];
	int bad = 0;
	for (size_t n = 1; n <= 20; n++) {
		CHECK(grove_predict(model, rows + 2 * n, n, 2, out, n, GROVE_PREDICT_MARGIN, NULL) == GROVE_OK);
		for (size_t r = 0; r < n; r++)
			bad += fabs(out[r] - expected_margin(rows + 2 * (n + r))) > 1e-6;
	}
	CHECK(grove_predict(model, rows, ROWS, 2, out, ROWS, 0, NULL) == GROVE_OK);
	for (size_t r = 0; r < ROWS; r++)
		bad += fabs(out[r] - 1.0 / (1.0 + exp(-expected_margin(rows + 2 * r)))) > 1e-6;
	if (bad)
		fprintf(stderr, "%s: %d wrong predictions\n", what, bad);
	CHECK(bad == 0);
}

int main(void)
{
	char dir[] = "/tmp/grove-runtime-XXXXXX", path[64];
	GroveModel *model = NULL;
	GroveError err;
	float out[ROWS];

	make_rows();
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/model.so", dir);

	/* A one-row prediction on a fresh model runs on the calling thread. */
	CHECK(build(path, 3, 4, 0, "x86-64"));
	CHECK(grove_load(path, &model, &err) == GROVE_OK);
	if (!model)
		return 1;
	{
		int before = threads();
		CHECK(grove_predict(model, rows, 1, 2, out, 1, 0, &err) == GROVE_OK);
		CHECK(threads() == before);
	}
	CHECK(grove_workspace_size(model, 1) == 0 && grove_workspace_size(model, ROWS) == 0);
#ifndef GROVE_ASAN
	{
		char *volatile copy; /* the count sees allocations, the library's included */
		counting = 1;
		copy = strdup("x");
		free(copy);
		counting = 0;
		CHECK(allocations == 1);
		allocations = 0;
		counting = 1;
		CHECK(grove_predict(model, rows, 1, 2, out, 1, 0, &err) == GROVE_OK);
		counting = 0;
		CHECK(allocations == 0);
	}
#endif
	/* A model without a workspace needs none from the caller either. */
	CHECK(grove_predict_with_workspace(model, rows, 4, 2, out, 4, 0, NULL, 0, &err) == GROVE_OK);
	CHECK(fabs(out[3] - 1.0 / (1.0 + exp(-expected_margin(rows + 6)))) < 1e-6);
	CHECK(grove_num_features(model) == 2);
	CHECK(grove_num_outputs(model, 0) == 1 && grove_num_outputs(model, GROVE_PREDICT_MARGIN) == 1);

	/* Argument errors. */
	CHECK(grove_predict(model, rows, 4, 3, out, 4, 0, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(strstr(err.message, "rows have 3 columns, the model needs 2") != NULL);
	CHECK(grove_predict(model, rows, 4, 2, out, 3, 0, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(strstr(err.message, "the output holds 3 floats") != NULL);
	CHECK(grove_predict(model, NULL, 4, 2, out, 4, 0, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(grove_predict(model, rows, 4, 2, out, 4, 8, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(grove_predict(model, rows, 4, 2, rows + 2, 4, 0, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(grove_predict(model, rows, 0, 2, NULL, 0, 0, &err) == GROVE_OK);
	CHECK(grove_predict(NULL, rows, 1, 2, out, 1, 0, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(grove_num_labels(model) == 0 && grove_num_outputs(model, GROVE_PREDICT_LABEL) == 1);
	CHECK(grove_feature_name(model, 0) == NULL);
	CHECK(grove_predict(model, rows, 4, 2, out, 4, GROVE_PREDICT_LABEL, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(strstr(err.message, "the model has no class labels") != NULL);
	CHECK(grove_predict(model, rows, 4, 2, out, 4, GROVE_PREDICT_LABEL | GROVE_PREDICT_MARGIN, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(grove_label(model, 0, NULL, NULL, &err) == GROVE_ERROR_ARGUMENT && strstr(err.message, "the model has 0 labels"));
	grove_free(model);
	CHECK(grove_load("/nonexistent/model.so", &model, &err) == GROVE_ERROR_IO && model == NULL);
	CHECK(grove_load("/tmp", &model, &err) == GROVE_ERROR_IO);
	CHECK(grove_load(NULL, &model, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(strcmp(grove_status_name(GROVE_ERROR_FORMAT), "format error") == 0);

	/* Several threads predicting on one model at once. */
	CHECK(grove_load(path, &model, &err) == GROVE_OK);
	{
		Job jobs[4];
		pthread_t tids[4];
		for (int i = 0; i < 4; i++) {
			jobs[i].model = model;
			CHECK(pthread_create(&tids[i], NULL, predict_job, &jobs[i]) == 0);
		}
		for (int i = 0; i < 4; i++) {
			pthread_join(tids[i], NULL);
			CHECK(jobs[i].status == GROVE_OK);
			CHECK(memcmp(jobs[i].out, jobs[0].out, sizeof jobs[0].out) == 0);
		}
	}
	check_predictions(model, "-O3 interleave 4");
	grove_free(model);
	unlink(path);

	test_f64_rows(path);
	test_feature_names(path);

	/* Every optimisation level, a range of interleave factors, and tiles of one tree give the same answers. */
	for (int level = 0; level <= 3; level++) {
		for (uint32_t k = 1; k <= 16; k = k * 2 + 1) {
			char what[64];
			uint32_t tile = (uint32_t)(level + k) % 2;
			snprintf(what, sizeof what, "-O%d interleave %u tile %u", level, k, tile);
			CHECK(build(path, level, k, tile, NULL));
			CHECK(grove_load(path, &model, &err) == GROVE_OK);
			if (model)
				check_predictions(model, what);
			grove_free(model);
			model = NULL;
			unlink(path);
		}
	}
	rmdir(dir);
	if (failures)
		fprintf(stderr, "runtime: %d failures\n", failures);
	return failures != 0;
}
