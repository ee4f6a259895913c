/*
 * grove tune: the auto-scheduler that times. It searches the schedules grove writes
 * itself (HScheduleKnobs: rows and trees interleaved, tree tiles, the parallel loop,
 * unrolled and peeled walks, ...; lower/cost_search.c's space) by compiling candidates
 * for this machine and timing them on representative rows at the batch size asked for,
 * and writes the fastest as a schedule file for `grove compile --schedule`.
 *
 * Where grove has a cost model (lower/cost.h), it ranks the candidates that coordinate
 * descents on its predictions reach, from the heuristic's schedule and from each
 * representation's, and times only the best few. Otherwise, or with --explore, the
 * search is a coordinate descent by timing: one knob at a time takes each of its values
 * with the others held at the best so far, until a whole round improves nothing or the
 * time budget is spent. Either way the heuristic's schedule and the learned one (the
 * cost model's improvement on it, compile --learned) are timed, and at the end the few
 * fastest, the heuristic's and the learned one are timed again, in turns, so that a
 * machine that runs slow for a while slows them all alike; they are ranked by those
 * times alone. Every timed candidate is appended to a CSV log (the model's shape,
 * the knobs, the batch size, the CPU, the time, and the cost model's features): the data
 * tools/cost_train.py trains the cost model on.
 *
 * With --target gpusim|cuda|rocm it searches the GPU's template schedules instead
 * (tools/tune_gpu.c).
 */
#include "tools/tune.h"
#include "lower/cost.h"
#include "front/front.h"
#include "tools/cli.h"
#include "tools/csv.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The log's format: bump it (and so the default log's name) when the columns change. */
#define LOG_VERSION "v6"

static const char tune_usage[] =
	"usage: grove tune MODEL [--target DEVICE[:ARCH]] [--batch N] [--budget SECONDS] [--input ROWS.csv]\n"
	"                  [-o OUT.sched] [--log LOG.csv]\n"
	"Search schedules for MODEL by compiling and timing them on this machine; write the fastest.\n"
	"  --target DEVICE    a GPU ({devices, }): search SilvanForge's template schedules as its\n"
	"                     pruning heuristic keeps them, timed on the device; with no device (or\n"
	"                     gpusim, whose speed is no GPU's) ranked by an estimate: ptxas' spills,\n"
	"                     and a time from ptxas' resources and the memory requests of the\n"
	"                     candidate's warps on the simulator (cuda; gpusim as sm_80, each\n"
	"                     candidate also checked on the simulator against the first), the\n"
	"                     heuristic's order (rocm);\n"
	"                     ARCH: {cuda, } (cuda),\n"
	"                     {rocm, } (rocm)\n"
	"  --batch N          rows per prediction call to tune for (default 4096)\n"
	"  --budget SECONDS   time to spend searching (default 60); the heuristic's schedule is always timed\n"
	"  --input ROWS.csv   rows to time on (default: rows drawn from the model's thresholds)\n"
	"  -o OUT.sched       where the best schedule goes (default: MODEL with .sched), for\n"
	"                     grove compile --schedule OUT.sched\n"
	"  --log LOG.csv      append every timed candidate to LOG.csv (default: $XDG_CACHE_HOME/grove/tune." LOG_VERSION ".csv,\n"
	"                     else ~/.cache/grove/tune." LOG_VERSION ".csv; --log '' for none)\n"
	"  --explore          time every candidate the search reaches (a coordinate descent from the\n"
	"                     heuristic's schedule), not only those the cost model ranks best: the\n"
	"                     logs tools/cost_train.py learns from\n"
	"  --estimate         with a GPU to time on (cuda), also make each candidate's estimate of\n"
	"                     the device-less ranking and print it beside its time (about a second a\n"
	"                     candidate more): the data that estimate is checked on\n"
	"  -v                 print every candidate as it is timed\n"
	"Also takes compile's --format, --limit and --representation (which fixes the representation;\n"
	"without it the search tries each). Candidates use all cores as\n"
	"OpenMP is told (OMP_NUM_THREADS), as the artifact will. Timing wants a quiet machine.\n";

/*
 * The row pool: 8 batches (at least 4096 rows), at most this many floats (256 MiB).
 * Calls cycle through the batches so that rows come from memory, as fresh rows do: with
 * 64 MiB, which this machine's 260 MiB L3 held, syn-epsilon's rows (8 KB each) stayed in
 * cache, and tune chose a schedule that was faster there and much slower on the
 * benchmark's 32768 rows (measured: docs/performance-notes.md, The tuner's row pool).
 */
#define POOL_FLOATS (64u << 20)
#define POOL_BATCHES 8
/*
 * Timing: a sample is calls until this many seconds pass; a candidate's time is the
 * fastest of SAMPLES. Other processes only ever slow a sample down, so the fastest is
 * the estimate they disturb least (the median of five let a candidate timed twice differ
 * by half its time on a shared machine, noise a cost model then learns).
 */
#define SAMPLE_SECONDS 0.01
#define SAMPLES 7
/*
 * The finals: the RETIME fastest candidates (with the heuristic's and the learned one)
 * timed again in FINAL_ROUNDS turns. A shared machine runs slow for seconds at a time,
 * longer than one candidate's samples: timed one after another, a candidate that met a
 * slow spell lost to its equal; in turns, every finalist meets it
 * (docs/performance-notes.md, The tuner's finals in turns).
 */
#define RETIME 4
#define FINAL_ROUNDS 5
#define MAX_CANDIDATES 512

typedef struct Candidate {
	HScheduleKnobs knobs;
	double seconds;  /* best time per row over its timings; INFINITY when it failed */
	double compile;  /* seconds to compile */
	bool final;      /* timed in the finals: seconds is the finals' time */
} Candidate;

/* A uniform double in [0, 1) from a 64-bit xorshift state. */
static double uniform(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (double)(*state >> 11) * 0x1p-53;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/*
 * Rows drawn from the model's thresholds: each feature a value between two neighbouring
 * thresholds of the splits that test it (or beyond the last), chosen uniformly among
 * those gaps, so that walks spread over the trees' branches as real rows do; features
 * no split tests are 0, and features of category splits a small category.
 */
static void rows_from_thresholds(Tuner *t)
{
	const HForest *f = t->forest;
	size_t nf = t->features;
	uint64_t *count = xcalloc(nf + 1, sizeof *count), *at = xcalloc(nf + 1, sizeof *at), state = 0x9e3779b97f4a7c15u;
	bool *categorical = xcalloc(nf + 1, sizeof *categorical);
	double *thresholds;
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		const HNode *n = &f->nodes[i];
		if (n->feature == HIR_LEAF || (size_t)n->feature >= nf)
			continue;
		if (n->compare == HCMP_IN)
			categorical[n->feature] = true;
		else
			count[n->feature]++;
	}
	for (size_t j = 0; j < nf; j++)
		at[j + 1] = at[j] + count[j];
	thresholds = xmalloc((at[nf] + 1) * sizeof *thresholds);
	memset(count, 0, nf * sizeof *count);
	for (uint64_t i = 0; i < f->num_nodes; i++) {
		const HNode *n = &f->nodes[i];
		if (n->feature != HIR_LEAF && (size_t)n->feature < nf && n->compare != HCMP_IN)
			thresholds[at[n->feature] + count[n->feature]++] = n->value;
	}
	for (size_t j = 0; j < nf; j++)
		qsort(thresholds + at[j], count[j], sizeof *thresholds, compare_doubles);
	for (size_t r = 0; r < t->pool_rows; r++)
		for (size_t j = 0; j < nf; j++) {
			const double *v = thresholds + at[j];
			size_t n = count[j], gap = (size_t)(uniform(&state) * (double)(n + 1));
			double x = 0;
			if (categorical[j] && (n == 0 || uniform(&state) < 0.5))
				x = floor(uniform(&state) * 32);
			else if (n && gap == 0)
				x = v[0] - 1 - fabs(v[0]) * 0.1;
			else if (n && gap == n)
				x = v[n - 1] + 1 + fabs(v[n - 1]) * 0.1;
			else if (n)
				x = v[gap - 1] + (v[gap] - v[gap - 1]) * uniform(&state);
			t->pool[r * nf + j] = (float)x;
		}
	free(thresholds);
	free(categorical);
	free(at);
	free(count);
}

/* Rows from the user's CSV, repeated to fill the pool when there are fewer. */
static void rows_from_csv(Tuner *t, const char *path)
{
	CsvReader csv;
	Table rows = {0};
	Error e = {0};
	size_t have = 0;
	if (!csv_open(&csv, path, false, &e))
		fail("%s", e.message);
	csv_set_names(&csv, (const char *const *)t->forest->feature_names, t->forest->num_features);
	csv_set_category_values(&csv, &t->forest->category_values, t->forest->num_features);
	while (have < t->pool_rows) {
		if (!csv_next(&csv, t->pool_rows - have, &rows, &e))
			fail("%s", e.message);
		if (!rows.rows)
			break;
		if (rows.cols != t->features)
			fail("%s: rows of %zu values, the model takes %zu features", path, rows.cols, t->features);
		memcpy(t->pool + have * t->features, rows.values, rows.rows * rows.cols * sizeof *rows.values);
		have += rows.rows;
	}
	if (!have)
		fail("%s: no rows", path);
	for (size_t r = have; r < t->pool_rows; r++)
		memcpy(t->pool + r * t->features, t->pool + (r % have) * t->features, t->features * sizeof *t->pool);
	table_free(&rows);
	csv_close(&csv);
}

double tune_time_model(Tuner *t, const GroveModel *model)
{
	size_t slices = t->pool_rows / t->batch, next = 0, per_row = grove_num_outputs(model, 0);
	double samples[SAMPLES];
	GroveError err;
	for (int s = -1; s < SAMPLES; s++) { /* sample -1 warms up */
		double begin = now(), elapsed;
		size_t calls = 0;
		do {
			const float *rows = t->pool + (next++ % slices) * t->batch * t->features;
			if (grove_predict(model, rows, t->batch, t->features, t->out, t->batch * per_row, 0, &err) != GROVE_OK)
				fail("tune: %s", err.message);
			calls++;
		} while ((elapsed = now() - begin) < SAMPLE_SECONDS);
		if (s >= 0)
			samples[s] = elapsed / (double)(calls * t->batch);
	}
	qsort(samples, SAMPLES, sizeof *samples, compare_doubles);
	return samples[0];
}

/* Compile knobs' schedule into the temporary directory; false (e says why) where the knobs do not apply. */
static bool compile_knobs(Tuner *t, const HScheduleKnobs *k, const char *out, Error *e)
{
	TargetOptions target = {.emit = TARGET_EMIT_SHARED, .opt_level = 3};
	PipelineOptions o = t->options;
	Compiled c = {.hir = hir_forest_copy(t->forest)};
	bool ok;
	o.scheduled = true;
	ok = hir_apply_knobs(c.hir, k, e) && pipeline_lower(t->model, LEVEL_LIR, &o, &c, e) && target_emit(c.lir, &target, out, e);
	compiled_free(&c);
	return ok;
}

/*
 * The log's columns: the candidate's model, batch, target and shape; the CPU's knobs
 * (hir_knobs, but representation, which has its own column), then the GPU's, each empty
 * on the other's lines; how the candidate was judged; and the cost model's features
 * (x_ and cost_feature_name; CPU lines), which tools/cost_train.py learns from.
 */
static char *log_header(void)
{
	static const char shape[] = "time,model,target,device,batch,threads,representation,num_trees,num_features,num_outputs,num_nodes,max_depth";
	static const char gpu[] = "rows_per_block,rows_per_thread,tree_threads,interleave,gpu_unroll,gpu_cache_rows,"
	                          "gpu_cache_trees,shared_reduce,basis,registers,shared_bytes,spill_bytes,occupancy,us_per_row,"
	                          "compile_s";
	size_t size = sizeof shape + sizeof gpu + 2, at;
	char *header;
	for (int i = 0; i < HKNOB_COUNT; i++)
		size += strlen(hir_knobs[i].name) + 1;
	for (uint32_t i = 0; i < COST_FEATURES; i++)
		size += strlen(cost_feature_name(i)) + 3;
	header = xmalloc(size);
	at = (size_t)sprintf(header, "%s,", shape);
	for (int i = 0; i < HKNOB_COUNT; i++)
		if (i != HKNOB_REPRESENTATION)
			at += (size_t)sprintf(header + at, "%s,", hir_knobs[i].name);
	at += (size_t)sprintf(header + at, "%s", gpu);
	for (uint32_t i = 0; i < COST_FEATURES; i++)
		at += (size_t)sprintf(header + at, ",x_%s", cost_feature_name(i));
	strcpy(header + at, "\n");
	return header;
}

/* Exit with a message if a write to the log failed (a full disk, /dev/full). */
static void log_flush(Tuner *t)
{
	if (fflush(t->log) != 0 || ferror(t->log))
		fail("--log %s: %s", t->log_path, strerror(errno ? errno : EIO));
}

void tune_log_line(Tuner *t, const char *device, const char *representation, const HScheduleKnobs *cpu,
                   const char *gpu, const char *judged)
{
	const HForest *f = t->forest;
	char when[32];
	time_t now_s = time(NULL);
	if (!t->log)
		return;
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now_s));
	fprintf(t->log, "%s,\"%s\",%s,\"%s\",%zu,%u,%s,%u,%u,%u,%llu,%u,", when, t->model, t->target_name, device, t->batch,
	        t->machine.threads, representation, f->num_trees, f->num_features, f->num_outputs,
	        (unsigned long long)f->num_nodes, t->space.depth);
	HScheduleKnobs n = cpu ? *cpu : (HScheduleKnobs){0};
	hir_knobs_normal(&n);
	for (int i = 0; i < HKNOB_COUNT; i++) {
		char value[32] = "";
		if (cpu)
			hir_knob_value(&n, i, value, sizeof value);
		if (i != HKNOB_REPRESENTATION)
			fprintf(t->log, "%s,", value);
	}
	fprintf(t->log, "%s,%s", gpu ? gpu : ",,,,,,,", judged);
	if (cpu) {
		float x[COST_FEATURES];
		cost_features(&t->shape, &t->machine, cpu, x);
		for (uint32_t i = 0; i < COST_FEATURES; i++)
			fprintf(t->log, ",%.7g", x[i]);
	} else {
		for (uint32_t i = 0; i < COST_FEATURES; i++)
			fputc(',', t->log);
	}
	fputc('\n', t->log);
	log_flush(t);
}

/* Append candidate c to the log. */
static void log_candidate(Tuner *t, const Candidate *c)
{
	char judged[96];
	snprintf(judged, sizeof judged, "timed,,,,,%.6g,%.3f", isinf(c->seconds) ? -1.0 : c->seconds * 1e6, c->compile);
	tune_log_line(t, t->cpu, c->knobs.representation ? lower_representation_name(c->knobs.representation - 1)
	                         : t->options.representation ? t->options.representation : "auto", &c->knobs, NULL, judged);
}

static void show_progress(const Tuner *t, const Candidate *best)
{
	double spent = now() - t->start, part = spent / t->budget;
	int filled = (int)(20 * (part > 1 ? 1 : part));
	if (!t->progress)
		return;
	fprintf(stderr, "\rtune: [%.*s%.*s] %3u candidates, %4.0f/%.0f s, best %.4g us/row ", filled, "####################",
	        20 - filled, "....................", t->num, spent, t->budget, best ? best->seconds * 1e6 : 0.0);
}

/* Compile c's knobs and time them into c, and log it; false (e says why) where the knobs do not apply. */
static bool measure(Tuner *t, Candidate *c, Error *e)
{
	char path[PATH_MAX];
	GroveModel *model;
	GroveError err;
	double begin = now();
	snprintf(path, sizeof path, "%s/candidate.so", t->dir);
	if (!compile_knobs(t, &c->knobs, path, e))
		return false;
	c->compile = now() - begin;
	if (grove_load(path, &model, &err) != GROVE_OK)
		fail("tune: %s", err.message);
	c->seconds = tune_time_model(t, model);
	grove_free(model);
	unlink(path);
	log_candidate(t, c);
	return true;
}

/* Time candidate knobs (once: a second call returns the first's result). */
static Candidate *evaluate(Tuner *t, const HScheduleKnobs *knobs)
{
	char what[400];
	Candidate *c;
	Error e = {0};
	HScheduleKnobs normal = *knobs, *k = &normal;
	cost_normal(t->forest, k);
	for (uint32_t i = 0; i < t->num; i++)
		if (hir_knobs_same(&t->candidates[i].knobs, k))
			return &t->candidates[i];
	if (t->num == MAX_CANDIDATES)
		return NULL;
	c = &t->candidates[t->num++];
	*c = (Candidate){.knobs = *k, .seconds = INFINITY};
	if (!measure(t, c, &e)) {
		if (t->verbose)
			fprintf(stderr, "tune: skipped (%s)\n", e.message);
		return c;
	}
	if (t->verbose) {
		hir_knobs_describe(k, what, sizeof what);
		fprintf(stderr, "%s%9.4f us/row  %s\n", t->progress ? "\r" : "", c->seconds * 1e6, what);
	}
	return c;
}

static bool over_budget(const Tuner *t) { return now() - t->start >= t->budget; }

/* Time the n finalists again in turns (FINAL_ROUNDS), each its fastest; they are logged again with those times. */
static void final_rounds(Tuner *t, Candidate **finalists, uint32_t n)
{
	GroveModel *models[RETIME + 2];
	char path[PATH_MAX];
	GroveError err;
	for (uint32_t i = 0; i < n; i++) {
		Error e = {0};
		snprintf(path, sizeof path, "%s/final%u.so", t->dir, i);
		if (!compile_knobs(t, &finalists[i]->knobs, path, &e))
			fail("tune: compiling a candidate again: %s", e.message);
		if (grove_load(path, &models[i], &err) != GROVE_OK)
			fail("tune: %s", err.message);
		unlink(path);
		finalists[i]->seconds = INFINITY;
		finalists[i]->final = true;
	}
	for (int round = 0; round < FINAL_ROUNDS; round++)
		for (uint32_t i = 0; i < n; i++) {
			double seconds = tune_time_model(t, models[i]);
			if (seconds < finalists[i]->seconds)
				finalists[i]->seconds = seconds;
		}
	for (uint32_t i = 0; i < n; i++) {
		grove_free(models[i]);
		log_candidate(t, finalists[i]);
	}
}

/* Finalists first, then by time. */
static int by_time(const void *a, const void *b)
{
	const Candidate *x = a, *y = b;
	if (x->final != y->final)
		return x->final ? -1 : 1;
	return compare_doubles(&x->seconds, &y->seconds);
}

/* The default log: $XDG_CACHE_HOME/grove/tune.LOG_VERSION.csv or ~/.cache/grove/... (directories made as needed), or NULL. */
static char *default_log(void)
{
	const char *base = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	size_t len;
	char *path;
	if ((!base || !*base) && (!home || !*home))
		return NULL;
	len = strlen(base && *base ? base : home) + 32;
	path = xmalloc(len);
	if (base && *base)
		snprintf(path, len, "%s/grove", base);
	else {
		snprintf(path, len, "%s/.cache", home);
		mkdir(path, 0777);
		snprintf(path, len, "%s/.cache/grove", home);
	}
	mkdir(path, 0777);
	strcat(path, "/tune." LOG_VERSION ".csv"); /* versioned: a grove with other columns keeps its own log */
	return path;
}

/* Open the log for appending; a new one gets the header, one with other columns (an older grove's) is refused. */
static void open_log(Tuner *t)
{
	char *header = log_header(), *first = xcalloc(strlen(header) + 2, 1);
	FILE *old = fopen(t->log_path, "r");
	if (old) {
		if (!fgets(first, (int)strlen(header) + 2, old))
			first[0] = 0;
		fclose(old);
	}
	if (first[0] && strcmp(first, header))
		fail("--log %s: its columns are not this grove's (an older grove wrote it); move it aside or name another log",
		     t->log_path);
	if (!(t->log = fopen(t->log_path, "a")))
		fail("--log %s: %s", t->log_path, strerror(errno));
	if (!first[0]) {
		fputs(header, t->log);
		log_flush(t);
	}
	free(header);
	free(first);
}

/* Exit with a message if the schedule (output) or the log would overwrite the model, the rows or each other. */
static void check_outputs(const Tuner *t, const char *input, const char *output, const char *log_path)
{
	const char *inputs[] = {t->model, input, log_path && *log_path ? log_path : NULL};
	check_output("-o", output, inputs, COUNT_OF(inputs));
	if (log_path && *log_path)
		check_output("--log", log_path, inputs, 2);
}

void tune_write_schedule(const HSchedule *s, const char *comment, const char *path)
{
	Error e = {0};
	char *temp;
	FILE *out;
	bool ok;
	if (!(temp = target_output_temporary(path, ".sched", &e)))
		fail("%s", e.message);
	if (!(out = fopen(temp, "w")))
		fail("%s: %s", temp, strerror(errno));
	fprintf(out, "# %s\n", comment);
	hir_schedule_print(out, s, "");
	ok = !ferror(out);
	if (fclose(out) != 0 || !ok)
		fail("%s: %s", path, strerror(errno ? errno : EIO));
	if (!target_output_finish(temp, true, path, false, &e))
		fail("%s", e.message);
}

/* Write the best schedule to path with a comment saying where it came from. */
static void write_schedule(const Tuner *t, const Candidate *best, const Candidate *heuristic, const char *path)
{
	HForest *f = hir_forest_copy(t->forest);
	Error e = {0};
	char comment[512];
	if (!hir_apply_knobs(f, &best->knobs, &e))
		fail("tune: %s", e.message);
	snprintf(comment, sizeof comment, "grove tune %s --batch %zu on %s: %.4g us/row (the heuristic's schedule: %.4g)",
	         t->model, t->batch, t->cpu, best->seconds * 1e6, heuristic->seconds * 1e6);
	tune_write_schedule(&f->schedule, comment, path);
	hir_forest_free(f);
}

/* Coordinate descent by timing: every candidate it reaches is compiled and timed (--explore, or no cost model). */
static void descend(Tuner *t, Candidate *heuristic)
{
	Candidate *best = heuristic;
	for (bool improved = true; improved && !over_budget(t);) {
		improved = false;
		for (int knob = 0; knob < COST_DIMENSIONS && !over_budget(t); knob++) {
			uint32_t values[8], n = cost_values(&t->space, &heuristic->knobs, knob, values);
			if (!cost_turns(&t->space, knob, &best->knobs))
				continue;
			for (uint32_t i = 0; i < n && !over_budget(t); i++) {
				HScheduleKnobs k = best->knobs;
				Candidate *c;
				cost_set(&k, knob, values[i]);
				if (!(c = evaluate(t, &k)))
					break;
				if (c->seconds < best->seconds * 0.99) {
					best = c;
					improved = true;
				}
				show_progress(t, best);
			}
		}
	}
}

/* The cost model's guesses: candidates it predicted, not (yet) timed. */
typedef struct Guess {
	HScheduleKnobs knobs;
	float predicted; /* relative log2 time (lower/cost.h) */
} Guess;
typedef struct Guesses {
	Guess *all;
	uint32_t num;
} Guesses;
#define MAX_GUESSES 8192
/* Candidates the cost model's ranking times, besides the heuristic's. */
#define TOP 6

/* Keep candidate k, predicted p, in the guesses (once). */
static void keep_guess(void *context, const HScheduleKnobs *k, float p)
{
	Guesses *g = context;
	for (uint32_t j = 0; j < g->num; j++)
		if (hir_knobs_same(&g->all[j].knobs, k))
			return;
	if (g->num < MAX_GUESSES)
		g->all[g->num++] = (Guess){.knobs = *k, .predicted = p};
}

static int by_prediction(const void *a, const void *b)
{
	float x = ((const Guess *)a)->predicted, y = ((const Guess *)b)->predicted;
	return x < y ? -1 : x > y;
}

/*
 * The cost model's search: coordinate descents on its predictions, from the heuristic's
 * schedule and from each representation's, rank every candidate they reach, and time
 * the TOP best predicted (those that compile) within the budget.
 */
static void rank_by_model(Tuner *t, Candidate *heuristic)
{
	Guesses g = {.all = xmalloc(MAX_GUESSES * sizeof *g.all)};
	uint32_t values[8], n = cost_values(&t->space, &heuristic->knobs, COST_REPRESENTATION_DIMENSION, values), timed = 0;
	HScheduleKnobs k = heuristic->knobs;
	cost_descend(&t->space, &t->shape, &t->machine, 1, &heuristic->knobs, &k, keep_guess, &g);
	for (uint32_t i = 0; i < n; i++) {
		k = heuristic->knobs;
		cost_set(&k, COST_REPRESENTATION_DIMENSION, values[i]);
		cost_descend(&t->space, &t->shape, &t->machine, 1, &heuristic->knobs, &k, keep_guess, &g);
	}
	qsort(g.all, g.num, sizeof *g.all, by_prediction);
	for (uint32_t i = 0; i < g.num && timed < TOP && !over_budget(t); i++) {
		Candidate *c = evaluate(t, &g.all[i].knobs);
		if (!c)
			break;
		timed += !isinf(c->seconds) && c != heuristic;
		show_progress(t, heuristic);
	}
	if (t->verbose)
		fprintf(stderr, "tune: the cost model ranked %u candidates; %u timed\n", g.num, t->num);
	free(g.all);
}

/*
 * The CPU search from the heuristic's knobs: ranked by the cost model where grove has one
 * (and not --explore), else a coordinate descent that times each candidate; the finals
 * (final_rounds) rank the fastest few; writes the best to t->output.
 */
static void tune_cpu(Tuner *t)
{
	HScheduleKnobs k, heuristic_knobs, learned_knobs;
	Candidate *heuristic, *best, *finalists[RETIME + 2];
	uint32_t num_finalists = 0;
	float heuristic_predicted;

	t->candidates = xcalloc(MAX_CANDIDATES, sizeof *t->candidates);
	/* The heuristic's schedule first: the baseline, and where the searches start. */
	hir_choose_knobs(t->forest, t->options.tree_tile, t->options.interleave, t->options.interleave_trees,
	                 t->options.representation, t->options.vector_tops, &k);
	heuristic = evaluate(t, &k);
	if (isinf(heuristic->seconds))
		fail("tune: the heuristic's schedule does not compile");
	show_progress(t, heuristic);
	/* The learned schedule (compile --learned), where the cost model makes it other than the heuristic's. */
	learned_knobs = k;
	if (cost_improve_knobs(t->forest, t->options.representation, &learned_knobs))
		evaluate(t, &learned_knobs);
	cost_normal(t->forest, &learned_knobs);
	if (!t->explore && cost_model_trained())
		rank_by_model(t, heuristic);
	else
		descend(t, heuristic);
	/* The finals: the fastest few, the heuristic's and the learned one, timed again in turns. */
	heuristic_knobs = heuristic->knobs;
	qsort(t->candidates, t->num, sizeof *t->candidates, by_time);
	for (uint32_t i = 0; i < t->num; i++)
		if (!isinf(t->candidates[i].seconds) && (i < RETIME || hir_knobs_same(&t->candidates[i].knobs, &heuristic_knobs) ||
		                                         hir_knobs_same(&t->candidates[i].knobs, &learned_knobs)))
			finalists[num_finalists++] = &t->candidates[i];
	final_rounds(t, finalists, num_finalists);
	qsort(t->candidates, t->num, sizeof *t->candidates, by_time);
	if (t->progress)
		fputc('\n', stderr);

	best = &t->candidates[0];
	for (uint32_t i = 0; i < t->num; i++)
		if (hir_knobs_same(&t->candidates[i].knobs, &heuristic_knobs))
			heuristic = &t->candidates[i];
	printf("grove tune %s: batch %zu, %u candidates in %.0f s on %s%s\n", t->model, t->batch, t->num, now() - t->start,
	       t->cpu, cost_model_trained() ? " (predicted: the cost model's time against the heuristic's, as us/row)" : "");
	{
		float x[COST_FEATURES], p = 0;
		cost_features(&t->shape, &t->machine, &heuristic->knobs, x);
		heuristic_predicted = cost_predict(x, 1, &p) ? p : 0;
	}
	printf("rank    us/row predicted  vs heuristic  schedule\n");
	for (uint32_t i = 0; i < t->num && !isinf(t->candidates[i].seconds); i++) {
		Candidate *c = &t->candidates[i];
		char what[400], guess[16] = "-", ratio[16] = "-";
		float x[COST_FEATURES], p;
		bool is_learned = hir_knobs_same(&c->knobs, &learned_knobs);
		if (i >= 10 && c != heuristic && !is_learned)
			continue;
		hir_knobs_describe(&c->knobs, what, sizeof what);
		cost_features(&t->shape, &t->machine, &c->knobs, x);
		if (cost_predict(x, 1, &p)) /* the model's time relative to the heuristic's, at the heuristic's measured time */
			snprintf(guess, sizeof guess, "%.4f", heuristic->seconds * 1e6 * exp2(p - heuristic_predicted));
		if (c->final) /* (the others' times are from the search, in other spells of the machine's speed) */
			snprintf(ratio, sizeof ratio, "%.2fx", heuristic->seconds / c->seconds);
		printf("%4u %9.4f %9s %13s  %s%s%s\n", i + 1, c->seconds * 1e6, guess, ratio, what, c == heuristic ? "  (heuristic)" : "",
		       is_learned ? "  (learned)" : "");
	}
	write_schedule(t, best, heuristic, t->output);
	printf("best schedule written to %s (grove compile %s --schedule %s)\n", t->output, t->model, t->output);
	free(t->candidates);
}

int cmd_tune(int argc, char **argv)
{
	const char *input = NULL, *output = NULL;
	char *log_path = NULL, *default_out = NULL, *host;
	Tuner *t = xcalloc(1, sizeof *t);
	FrontLimits limits = front_default_limits();
	Error e = {0};
	HForest *read;
	bool log_given = false;

	t->options = (PipelineOptions)DEFAULT_PIPELINE;
	t->target = (TargetOptions){.emit = TARGET_EMIT_SHARED, .opt_level = 3};
	strcpy(t->target_name, "host");
	t->batch = 4096;
	t->budget = 60;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			cli_usage(stdout, tune_usage);
			return 0;
		} else if (!strcmp(a, "--format") || !strcmp(a, "--limit") || !strcmp(a, "--representation")) {
			pipeline_option(argc, argv, &i, &t->options);
		} else if (!strcmp(a, "--batch")) {
			t->batch = (size_t)parse_count("--batch", option_value(argc, argv, &i), 1 << 24);
			if (!t->batch)
				fail("--batch 0: at least one row");
		} else if (!strcmp(a, "--budget")) {
			t->budget = (double)parse_count("--budget", option_value(argc, argv, &i), 1000000);
		} else if (!strcmp(a, "--target")) {
			parse_target(option_value(argc, argv, &i), &t->target, &t->options);
			if (t->target.device == TARGET_DEVICE_HOST) {
				char devices[64];
				fail("--target %s: tune times on this machine, or searches for a GPU (%s, with :ARCH for a real one)",
				     argv[i], names_join(devices, sizeof devices, pipeline_device_name, ", ", " or "));
			}
			snprintf(t->target_name, sizeof t->target_name, "%s", argv[i]);
		} else if (!strcmp(a, "--input")) {
			input = option_value(argc, argv, &i);
		} else if (!strcmp(a, "-o")) {
			output = option_value(argc, argv, &i);
		} else if (!strcmp(a, "--log")) {
			log_path = (char *)option_value(argc, argv, &i);
			log_given = true;
		} else if (!strcmp(a, "-v")) {
			t->verbose = true;
		} else if (!strcmp(a, "--explore")) {
			t->explore = true;
		} else if (!strcmp(a, "--estimate")) {
			t->estimate = true;
		} else if (a[0] == '-' && a[1]) {
			fail("tune: unknown option %s (see grove tune --help)", a);
		} else if (t->model) {
			fail("tune: one model at a time (%s and %s)", t->model, a);
		} else {
			t->model = a;
		}
	}
	if (!t->model)
		fail("tune: no model (see grove tune --help)");
	if (!target_check(&t->target, &e))
		fail("%s", e.message);
	if (t->estimate && t->target.device != TARGET_DEVICE_CUDA)
		fail("tune: --estimate is for --target cuda, timed on its GPU (without one, the estimate is the ranking)");
	if (t->options.limits && !front_limits_parse(&limits, t->options.limits, &e))
		fail("%s", e.message);
	if (!(read = front_read_model(t->model, t->options.format, &limits, &e)))
		fail("%s", e.message);
	hir_fold_mirrored_margins(read); /* the forest compile schedules (pipeline_lower): the heuristic's knobs are its */
	t->forest = read;
	if (t->options.representation) {
		char names[200];
		if (!lower_representation_name(lower_representation_index(t->options.representation)))
			fail("--representation %s: unknown representation (expected one of %s)", t->options.representation,
			     names_join(names, sizeof names, lower_representation_name, ", ", NULL));
	}
	cost_forest(t->forest, &t->shape);
	cost_space(&t->shape, t->options.representation, t->batch, &t->space);
	cost_machine_host(&t->machine, t->batch, (uint32_t)omp_get_max_threads());
	t->features = t->forest->num_features ? t->forest->num_features : 1;
	t->pool_rows = POOL_BATCHES * t->batch > 4096 ? POOL_BATCHES * t->batch : 4096;
	if (t->pool_rows * t->features > POOL_FLOATS)
		t->pool_rows = POOL_FLOATS / t->features > t->batch ? POOL_FLOATS / t->features : t->batch;
	t->pool = xmalloc(t->pool_rows * t->features * sizeof *t->pool);
	t->out = xmalloc(t->batch * (t->forest->num_outputs + 1) * sizeof *t->out);
	if (input)
		rows_from_csv(t, input);
	else
		rows_from_thresholds(t);
	t->options.vector_tops = target_vector_tops(t->target.triple, t->target.cpu);
	host = LLVMGetHostCPUName();
	snprintf(t->cpu, sizeof t->cpu, "%s", host);
	LLVMDisposeMessage(host);
	if (!log_given)
		log_path = default_log();
	if (!output) {
		const char *dot = strrchr(t->model, '.'), *slash = strrchr(t->model, '/');
		size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - t->model) : strlen(t->model);
		default_out = xmalloc(stem + 8);
		memcpy(default_out, t->model, stem);
		strcpy(default_out + stem, ".sched");
		output = default_out;
	}
	check_outputs(t, input, output, log_path);
	if (log_path && *log_path) {
		t->log_path = log_path;
		open_log(t);
	}
	t->output = output;
	t->dir = cli_temporary_directory("grove-tune");
	t->progress = isatty(2);
	t->start = now();

	if (t->target.device == TARGET_DEVICE_HOST)
		tune_cpu(t);
	else
		tune_gpu(t);
	cli_temporary_directory_remove(t->dir);
	if (t->log) {
		log_flush(t);
		if (fclose(t->log) != 0)
			fail("--log %s: %s", t->log_path, strerror(errno));
	}
	if (!log_given)
		free(log_path);
	free(default_out);
	free(t->pool);
	free(t->out);
	hir_forest_free((HForest *)t->forest);
	free(t);
	return 0;
}
