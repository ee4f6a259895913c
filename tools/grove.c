/*
 * grove: the command-line compiler.
 *
 *   grove compile MODEL [-o OUT] [--emit so|obj|asm|llvm] [--target TRIPLE] [--cpu CPU] [-O N] [--prefix NAME]
 *                 [--representation R]
 *   grove predict ARTIFACT_OR_MODEL --input ROWS.csv [--output OUT.csv] [--margin | --label] [--f64] [--time] [--repeat N] [--batch N]
 *   grove dump --level hir|mir|lir MODEL
 * (each taking a model also takes --format, front.c's table of formats)
 *
 * The pipeline itself is target/compile.c's, shared with libgrovec (rt/grove_compile.h).
 */
#include "front/front.h"
#include "lower/lower.h"
#include "rt/artifact.h"
#include "rt/grove.h"
#include "target/compile.h"
#include "target/target.h"
#include "tools/cli.h"
#include "tools/csv.h"

#include <llvm-c/Core.h>

#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Run the pipeline on the model at path up to level stop; exit with its message on failure. */
static void compile_model(const char *path, Level stop, const PipelineOptions *o, Compiled *c)
{
	Error e = {0};
	if (!pipeline_run(path, stop, o, c, &e))
		fail("%s", e.message);
}

/* The pipeline's notes (Compiled.notes) on standard error, each line after prefix. */
static void print_notes(const Compiled *c, const char *prefix)
{
	for (const char *line = c->notes; *line;) {
		const char *end = strchr(line, '\n');
		int n = end ? (int)(end - line) : (int)strlen(line);
		fprintf(stderr, "%s%.*s\n", prefix, n, line);
		line += n + (end != NULL);
	}
}

/* Whether the text ends with suffix. */
static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

static const char compile_usage[] =
	"usage: grove compile MODEL [-o OUT] [--emit so|obj|asm|llvm|ptx|hsaco] [--target TARGET] [--cpu CPU] [-O N]\n"
	"                           [--prefix NAME] [--representation R] [--format FORMAT] [-v]\n"
	"Compile a model (XGBoost JSON or UBJSON, LightGBM text, CatBoost JSON, ONNX) into an inference artifact\n"
	"for this (x86-64) host or, with --target, for AArch64 or a GPU.\n"
	"  -o OUT              output path (default: MODEL with .so/.o/.s/.ll)\n"
	"  --emit KIND         so: shared library for libgrove (default; grove links an x86-64 one itself, or\n"
	"                      the compiler driver $GROVE_LINKER names); obj: object plus a C header\n"
	"                      (OUT with .h) declaring PREFIX_predict; asm: assembly; llvm: LLVM IR text;\n"
	"                      ptx (cuda), hsaco (rocm): the GPU code alone\n"
	"  --target TARGET     x86_64-linux-gnu (this host, the default) or aarch64-linux-gnu (LLVM's\n"
	"                      aarch64-unknown-linux-gnu too); AArch64 shared libraries are linked by\n"
	"                      aarch64-linux-gnu-gcc (package gcc-aarch64-linux-gnu) or $GROVE_CC_AARCH64;\n"
	"                      cuda[:ARCH] (PTX), rocm[:ARCH] (HSACO), or gpusim (GPU kernels run by\n"
	"                      libgrove's SIMT simulator, to check them here); ARCH is one of\n"
	"                      {cuda, } (cuda),\n"
	"                      {rocm, } (rocm);\n"
	"                      a GPU artifact is a shared library for this host holding the GPU code\n"
	"                      and, without --schedule, the schedule grove tune --target would try first\n"
	"                      for batches of 4096 rows, beside one for batches of fewer than 32768\n"
	"                      (see docs/cli.md: tune, docs/gpu.md)\n"
	"  --cpu CPU           native (default), x86-64 (portable), x86-64-v3, skylake, znver3, ...;\n"
	"                      for aarch64: generic (default), neoverse-n1, neoverse-v1, cortex-a72, ...\n"
	"                      (native is refused there: it names the machine grove runs on)\n"
	"  -O N                LLVM optimisation level 0-3 (default 3; 2 compiles a CPU model in about half\n"
	"                      the time and predicts as fast on most models)\n"
	"  --prefix NAME       symbol prefix in objects (default grove_model)\n"
	"  --time              report each phase's time and the peak memory so far on standard error\n"
	"  -v, --verbose       say where the code does other than the schedule's words say (grove dump always\n"
	"                      does): a peelWalk whose walks padding makes straight, branchfree's trees\n"
	"                      that walk as ifs, a block of rows too big for its keys\n"
	"  --cache DIR         keep optimised code in DIR and reuse it for models of the same shape\n"
	"                      (default $GROVE_CACHE_DIR, else ~/.cache/grove; see docs/cli.md)\n"
	"  --no-cache          compile everything afresh and store nothing\n"
	"  --representation R  memory layout of the trees (default: chosen per model), one of\n"
	"                      {representations, }.\n"
	"                      code compiles each tree into instructions, over tiles of rows, its tree loops\n"
	"                      specialized; branchfree too, testing every split of a tree of at most 64\n"
	"                      leaves and finding its leaf by mask, with no branch; breadth_first and layered\n"
	"                      store sparse's nodes in FIL's other orders (see docs/representations.md)\n"
	"  --format FORMAT     the model's format: {formats, }\n"
	"                      (default: recognised from the file's contents)\n"
	"  --limit NAME=N,...  the largest model accepted: features (default 4194304), outputs (65536),\n"
	"                      trees (16777216), nodes (1073741824), stream (bytes read from a pipe or\n"
	"                      device, 1073741824)\n"
	"  --schedule FILE     the loop schedule, in the scheduling language (docs/schedules.md); its directives:\n"
	"                      {directives, }\n"
	"  --schedule-text S   the same inline, directives separated by ';'\n"
	"  -D NAME=N           a size the schedule's arguments may name, as N_t/2 (trees), N_f, N_c do\n"
	"  -d PASS,...         print the IR after these passes on standard error:\n"
	"                      {passes, }, all\n"
	"  --interleave N      rows walked together, 1-16 (default 16; without --schedule)\n"
	"  --interleave-trees N  trees walked together where rows go one at a time, 1-16 (default 8;\n"
	"                      without --schedule)\n"
	"  --tile-trees N      walk trees in tiles of N for tiles of 256 rows (0: never; default: tiles\n"
	"                      of about 16 KiB of nodes, more for wide rows, at most 16 trees)\n"
	"  --learned           without --schedule: the heuristic's schedule as the cost model improves it,\n"
	"                      where it predicts a gain of a quarter (it may change what the options\n"
	"                      above set)\n";

/* Exit with a message if compile's output (and its header, with_header) would overwrite the model or schedule or each other. */
static void check_outputs(const char *out, const char *model, const PipelineOptions *p, bool with_header)
{
	const char *inputs[] = {model, p->schedule_file};
	char *header = with_header ? target_header_path(out) : NULL;
	check_output("-o", out, inputs, COUNT_OF(inputs));
	if (header && same_file(header, out))
		fail("-o %s: the object and its header would both be %s; name the object with another extension", out, header);
	for (size_t i = 0; header && i < COUNT_OF(inputs); i++)
		if (same_file(header, inputs[i]))
			fail("-o %s: its header %s is the input %s, which would be lost; name another output", out, header,
			     inputs[i]);
	free(header);
}

static int cmd_compile(int argc, char **argv)
{
	static const char *const emit_names[] = {"so", "obj", "asm", "llvm", "ptx", "hsaco"};
	static const char *const extensions[] = {".so", ".o", ".s", ".ll", ".ptx", ".hsaco"};
	TargetOptions o = {.emit = TARGET_EMIT_SHARED, .opt_level = 3};
	const char *model = NULL, *out = NULL;
	PipelineOptions p = DEFAULT_PIPELINE;
	PhaseTimer timer;
	const char *chosen_cache = NULL;
	char *default_out = NULL, *cache;
	Compiled c;
	Error e = {0};
	bool verbose = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			cli_usage(stdout, compile_usage);
			return 0;
		} else if (!strcmp(a, "-o")) {
			out = option_value(argc, argv, &i);
		} else if (!strcmp(a, "--emit")) {
			const char *kind = option_value(argc, argv, &i);
			size_t k = 0;
			while (k < COUNT_OF(emit_names) && strcmp(kind, emit_names[k]))
				k++;
			if (k == COUNT_OF(emit_names))
				fail("--emit %s: expected so, obj, asm, llvm, ptx or hsaco", kind);
			o.emit = (TargetEmit)k;
		} else if (!strcmp(a, "--cpu")) {
			o.cpu = option_value(argc, argv, &i);
		} else if (!strcmp(a, "--target")) {
			parse_target(option_value(argc, argv, &i), &o, &p);
		} else if (!strncmp(a, "-O", 2)) {
			o.opt_level = (int)parse_count("-O", a[2] ? a + 2 : option_value(argc, argv, &i), 3);
		} else if (!strcmp(a, "--prefix")) {
			o.prefix = option_value(argc, argv, &i);
		} else if (!strcmp(a, "--time")) {
			o.timer = p.timer = &timer;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose = true;
		} else if (!strcmp(a, "--cache")) {
			chosen_cache = option_value(argc, argv, &i);
		} else if (!strcmp(a, "--no-cache")) {
			chosen_cache = "";
		} else if (pipeline_option(argc, argv, &i, &p)) {
		} else if (a[0] == '-' && a[1]) {
			fail("compile: unknown option %s (see grove compile --help)", a);
		} else if (model) {
			fail("compile: one model at a time (%s and %s)", model, a);
		} else {
			model = a;
		}
	}
	if (!model)
		fail("compile: no model (see grove compile --help)");
	o.cache_dir = cache = target_cache_dir(chosen_cache);
	/* Options are checked before the model is read: a misspelt --target or --cpu fails at once. */
	phase_timer_start(&timer);
	if (!target_check(&o, &e))
		fail("%s", e.message);
	phase_end(o.timer, "check");
	p.vector_tops = target_vector_tops(o.triple, o.cpu);
	if (!out) {
		size_t n = strlen(model);
		const char *dot = strrchr(model, '.'), *slash = strrchr(model, '/');
		if (dot && (!slash || dot > slash))
			n = (size_t)(dot - model);
		default_out = xmalloc(n + 4);
		snprintf(default_out, n + 4, "%.*s%s", (int)n, model, extensions[o.emit]);
		out = default_out;
	}
	check_outputs(out, model, &p, o.emit == TARGET_EMIT_OBJ);
	compile_model(model, LEVEL_LIR, &p, &c);
	if (verbose)
		print_notes(&c, "grove: note: ");
	if (!target_emit(c.lir, &o, out, &e))
		fail("%s", e.message);
	compiled_free(&c);
	phase_end(o.timer, "free");
	free(default_out);
	free(cache);
	return 0;
}

/* Compile the model at path to a shared library (as o says) in a fresh temporary directory; returns the library's path. */
static char *compile_to_temporary(const char *path, const PipelineOptions *p, const TargetOptions *o, char **dir)
{
	size_t len;
	char *out;
	Compiled c;
	Error e = {0};
	*dir = cli_temporary_directory("grove");
	len = strlen(*dir) + 16;
	out = xmalloc(len);
	snprintf(out, len, "%s/model.so", *dir);
	compile_model(path, LEVEL_LIR, p, &c);
	if (!target_emit(c.lir, o, out, &e))
		fail("%s", e.message);
	compiled_free(&c);
	return out;
}

static const char predict_usage[] =
	"usage: grove predict ARTIFACT_OR_MODEL --input ROWS.csv [--header auto|yes|no] [--output OUT.csv] [--margin | --label]\n"
	"                     [--f64] [--time] [--repeat N] [--batch N]\n"
	"Predict rows with a compiled artifact (.so), or with a model file compiled on the fly.\n"
	"  --input ROWS.csv   comma-separated floats, one row per line; an empty field or nan is missing\n"
	"                     (\"-\" reads standard input); fields may be quoted\n"
	"  --header auto|yes|no  whether the first line names the columns (auto: when none of its fields\n"
	"                     is a number); where the model names its features, a header's columns are\n"
	"                     matched to them by name and reordered, a missing or unknown one an error\n"
	"  --output OUT.csv   where predictions go (default: standard output)\n"
	"  --margin           raw margins instead of probabilities / transformed outputs\n"
	"  --label            each row's class label (classifiers that have labels: ONNX)\n"
	"  --f64              read the rows as doubles (grove_predict_f64): exact for models whose library\n"
	"                     compares doubles (LightGBM), rounded to float for the others, as their library does\n"
	"  --time             report the time per prediction call on standard error\n"
	"  --repeat N         predict each call's rows N times back to back, timing the best (default 1); small\n"
	"                     batches then meet the same rows again, with warm caches and branch predictors\n"
	"  --batch N          at most N rows a prediction call (default: as many as a chunk of the CSV holds)\n"
	"A model is compiled with compile's options (--format, --schedule, --schedule-text, -d, ...), and with\n"
	"its code cache ($GROVE_CACHE_DIR, else ~/.cache/grove).\n";

/* Write the label of each row's class (out: the classes, as GROVE_PREDICT_LABEL gives them), one per line. */
static void write_labels(FILE *f, const GroveModel *model, const float *out, size_t rows)
{
	for (size_t r = 0; r < rows; r++) {
		long long value;
		const char *text;
		GroveError err;
		if (grove_label(model, (size_t)out[r], &value, &text, &err) != GROVE_OK)
			fail("row %zu: %s", r + 1, err.message);
		if (text) {
			csv_write_text(f, text);
			fputc('\n', f);
		} else
			fprintf(f, "%lld\n", value);
	}
}

/* predict's output while it is written (pending: removed if grove exits before it is complete). */
static char *pending_output;

/*
 * Open the output: standard output for "-"; a file that is not a regular one (a device, a
 * FIFO) as it is, so that what is predicted streams into it; else a temporary file that
 * becomes path once complete (finish_output).
 */
static FILE *open_output(const char *path)
{
	struct stat st;
	Error e = {0};
	FILE *f;
	if (!strcmp(path, "-"))
		return stdout;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		f = S_ISDIR(st.st_mode) ? (errno = EISDIR, NULL) : fopen(path, "w");
	else if (!(pending_output = target_output_temporary(path, "", &e)))
		fail("%s", e.message);
	else
		f = fopen(pending_output, "w");
	if (!f)
		fail("%s: %s", path, strerror(errno));
	return f;
}

/* Close the output (reporting any write that failed) and rename the temporary file to path. */
static void finish_output(FILE *f, const char *path)
{
	Error e = {0};
	bool ok = fflush(f) == 0 && !ferror(f);
	if ((f != stdout && fclose(f) != 0) || !ok)
		fail("%s: %s", f == stdout ? "standard output" : path, strerror(errno ? errno : EIO));
	if (pending_output && !target_output_finish(pending_output, true, path, false, &e))
		fail("%s", e.message);
	pending_output = NULL;
}

/* Timing of the prediction calls over all chunks: the sum of each chunk's best and mean. */
typedef struct Timing {
	double best, total;
	size_t rows;
} Timing;

/* Predict the chunk t into out `repeat` times, adding the times to *timing; exits on an error. */
static void predict_chunk(const GroveModel *model, const Table *t, bool f64, unsigned flags, float *out, size_t out_len,
                          long repeat, const char *input, Timing *timing)
{
	double best = 1e30, total = 0;
	size_t cols = t->rows ? t->cols : grove_num_features(model);
	GroveError err;
	for (long r = 0; r < repeat; r++) {
		double start = now(), spent;
		GroveStatus status = f64 ? grove_predict_f64(model, t->doubles, t->rows, cols, out, out_len, flags, &err)
		                         : grove_predict(model, t->values, t->rows, cols, out, out_len, flags, &err);
		if (status != GROVE_OK)
			fail("%s: %s", input, err.message);
		spent = now() - start;
		total += spent;
		best = spent < best ? spent : best;
	}
	timing->best += best;
	timing->total += total;
	timing->rows += t->rows;
}

/* The model's feature names (the array malloc'ed, the names the model's), or NULL where it names none. */
static const char **feature_names(const GroveModel *model)
{
	size_t n = grove_num_features(model);
	const char **names;
	if (!n || !grove_feature_name(model, 0))
		return NULL;
	names = xcalloc(n, sizeof *names);
	for (size_t i = 0; i < n; i++)
		if (!(names[i] = grove_feature_name(model, i))) {
			free(names);
			return NULL;
		}
	return names;
}

/* Give the reader the values the model's categorical columns take by name (grove_category_values), where it has them. */
static void set_categories(CsvReader *csv, const GroveModel *model)
{
	size_t n = grove_num_features(model), *counts = xcalloc(n + 1, sizeof *counts);
	const char *const **values = xcalloc(n + 1, sizeof *values);
	bool any = false;
	for (size_t j = 0; j < n; j++)
		any |= (values[j] = grove_category_values(model, j, &counts[j])) != NULL;
	if (any)
		csv_set_categories(csv, values, counts, n, grove_unseen_category_missing(model));
	free(values);
	free(counts);
}

static int cmd_predict(int argc, char **argv)
{
	const char *artifact = NULL, *input = NULL, *output = NULL;
	PipelineOptions p = DEFAULT_PIPELINE;
	TargetOptions target = {.emit = TARGET_EMIT_SHARED, .opt_level = 3};
	bool margin = false, timing = false, f64 = false, label = false;
	CsvHeader header = CSV_HEADER_AUTO;
	const char **names;
	long repeat = 1, batch = 0;
	char *temp_dir = NULL, *library = NULL;
	GroveModel *model;
	GroveError err;
	CsvReader csv;
	Table rows = {0};
	Timing spent = {0};
	Error e = {0};
	float *out;
	size_t per_row, chunk;
	unsigned flags;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			cli_usage(stdout, predict_usage);
			return 0;
		} else if (pipeline_option(argc, argv, &i, &p)) {
		} else if (!strcmp(a, "--target")) {
			parse_target(option_value(argc, argv, &i), &target, &p);
			if (target.device == TARGET_DEVICE_HOST)
				fail("predict: --target %s: predict runs its artifact on this host or its GPU; compile for another "
				     "target with grove compile --target and run it there", target.triple);
		} else if (!strcmp(a, "--input")) {
			input = option_value(argc, argv, &i);
		} else if (!strcmp(a, "--output") || !strcmp(a, "-o")) {
			output = option_value(argc, argv, &i);
		} else if (!strcmp(a, "--margin")) {
			margin = true;
		} else if (!strcmp(a, "--label")) {
			label = true;
		} else if (!strcmp(a, "--f64")) {
			f64 = true;
		} else if (!strcmp(a, "--header")) {
			const char *value = option_value(argc, argv, &i);
			header = !strcmp(value, "auto") ? CSV_HEADER_AUTO : !strcmp(value, "yes") ? CSV_HEADER_YES
			       : !strcmp(value, "no") ? CSV_HEADER_NO : (CsvHeader)-1;
			if (header == (CsvHeader)-1)
				fail("--header %s: expected yes, no or auto", value);
		} else if (!strcmp(a, "--time")) {
			timing = true;
		} else if (!strcmp(a, "--batch")) {
			batch = parse_count("--batch", option_value(argc, argv, &i), 1L << 30);
			if (batch < 1)
				fail("--batch 0: at least one row a call");
		} else if (!strcmp(a, "--repeat")) {
			repeat = parse_count("--repeat", option_value(argc, argv, &i), 1000000);
			if (repeat < 1)
				fail("--repeat 0: at least one run");
		} else if (a[0] == '-' && a[1]) {
			fail("predict: unknown option %s (see grove predict --help)", a);
		} else if (artifact) {
			fail("predict: one artifact at a time (%s and %s)", artifact, a);
		} else {
			artifact = a;
		}
	}
	if (!artifact || !input)
		fail("predict: %s (see grove predict --help)", artifact ? "no --input" : "no artifact or model");
	if (margin && label)
		fail("predict: --margin or --label, not both");

	if (output) {
		const char *inputs[] = {input, artifact, p.schedule_file};
		check_output("--output", output, inputs, COUNT_OF(inputs));
	}
	if (!csv_open(&csv, input, f64, &e))
		fail("%s", e.message);
	if (!ends_with(artifact, ".so")) {
		double start = now();
		char *cache = target_cache_dir(NULL);
		target.cache_dir = cache;
		p.vector_tops = target_vector_tops(target.triple, target.cpu);
		library = compile_to_temporary(artifact, &p, &target, &temp_dir);
		free(cache);
		if (timing)
			fprintf(stderr, "compile: %.3f ms\n", (now() - start) * 1e3);
	}
	if (grove_load(library ? library : artifact, &model, &err) != GROVE_OK)
		fail("%s", err.message);
	if (library) {
		cli_temporary_directory_remove(temp_dir);
		free(library);
	}
	names = feature_names(model);
	csv.header = header;
	csv_set_names(&csv, names, grove_num_features(model));
	set_categories(&csv, model);
	if (label && !grove_num_labels(model))
		fail("%s: the model has no class labels (--label is for classifiers that have them, as ONNX's do)", artifact);
	flags = margin ? GROVE_PREDICT_MARGIN : label ? GROVE_PREDICT_LABEL : 0;
	per_row = grove_num_outputs(model, flags);
	/* The CSV is read, predicted and written a chunk of rows at a time (csv_next may return fewer for wide rows). */
	chunk = CSV_CHUNK_VALUES / ((size_t)grove_num_features(model) + per_row); /* its rows and their predictions */
	chunk = chunk ? chunk : 1;
	chunk = batch && (size_t)batch < chunk ? (size_t)batch : chunk;
	out = xcalloc(chunk * per_row + 1, sizeof *out);
	f = output ? open_output(output) : stdout;
	do {
		if (!csv_next(&csv, chunk, &rows, &e))
			fail("%s", e.message);
		if (rows.rows || !spent.rows) /* an empty input still checks its width, as one empty call */
			predict_chunk(model, &rows, f64, flags, out, rows.rows * per_row, repeat, input, &spent);
		if (label)
			write_labels(f, model, out, rows.rows);
		else
			csv_write(f, out, rows.rows, per_row);
	} while (rows.rows);
	finish_output(f, output ? output : "-");
	if (timing)
		fprintf(stderr, "predict: %zu rows, best %.3f ms (%.3f us/row), mean %.3f ms over %ld runs\n", spent.rows,
		        spent.best * 1e3, spent.rows ? spent.best * 1e6 / (double)spent.rows : 0.0, spent.total * 1e3 / (double)repeat,
		        repeat);
	free(out);
	free(names);
	table_free(&rows);
	csv_close(&csv);
	grove_free(model);
	return 0;
}

static const char dump_usage[] =
	"usage: grove dump --level hir|mir|lir MODEL [--schedule FILE | --schedule-text S] [-D NAME=N] [--representation R]\n"
	"                  [--format {formats|}] [--target {devices|}] [--cpu CPU]\n"
	"Print the model at one IR level: hir as read, mir after its passes (pad, unroll), lir as emitted.\n"
	"--cpu lowers the walks' tops for that CPU's vectors (as compile does for its --cpu); without it, for none.\n";

static int cmd_dump(int argc, char **argv)
{
	static const char *const level_names[] = {"hir", "mir", "lir"};
	const char *model = NULL, *cpu = NULL;
	PipelineOptions p = DEFAULT_PIPELINE;
	TargetOptions target = {0};
	int level = -1;
	Compiled c;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			cli_usage(stdout, dump_usage);
			return 0;
		} else if (!strcmp(a, "--level")) {
			const char *name = option_value(argc, argv, &i);
			for (level = 0; level < 3 && strcmp(name, level_names[level]); level++)
				;
			if (level == 3)
				fail("--level %s: expected hir, mir or lir", name);
		} else if (pipeline_option(argc, argv, &i, &p)) {
		} else if (!strcmp(a, "--target")) {
			parse_target(option_value(argc, argv, &i), &target, &p);
		} else if (!strcmp(a, "--cpu")) {
			cpu = option_value(argc, argv, &i);
		} else if (a[0] == '-' && a[1]) {
			fail("dump: unknown option %s (see grove dump --help)", a);
		} else if (model) {
			fail("dump: one model at a time (%s and %s)", model, a);
		} else {
			model = a;
		}
	}
	if (!model || level < 0)
		fail("dump: %s (see grove dump --help)", model ? "no --level" : "no model");
	if (cpu) /* the walks' tops as that CPU's vectors take them; without --cpu, none (the dump is the same everywhere) */
		p.vector_tops = target_vector_tops(target.triple, cpu);
	compile_model(model, (Level)level, &p, &c);
	print_notes(&c, "# note: ");
	switch ((Level)level) {
	case LEVEL_HIR: hir_print(stdout, c.hir); break;
	case LEVEL_MIR: mir_print(stdout, c.mir); break;
	case LEVEL_LIR: lir_print(stdout, c.lir); break;
	}
	compiled_free(&c);
	return 0;
}

static const char usage[] =
	"usage: grove COMMAND [ARGS]   (grove COMMAND --help for more)\n"
	"grove compiles decision-forest models into fast inference code.\n"
	"  compile   compile a model into a shared library, object, assembly or LLVM IR\n"
	"  predict   predict CSV rows with a compiled artifact or a model\n"
	"  dump      print a model's HIR, MIR or LIR\n"
	"  tune      search schedules for a model by timing them on this machine\n"
	"grove --version prints the version.\n";

int main(int argc, char **argv)
{
	cli_cleanup_start();
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2;
	}
	if (!strcmp(argv[1], "--version")) {
		unsigned major, minor, patch;
		LLVMGetVersion(&major, &minor, &patch);
		printf("grove %s (artifact ABI %u, LLVM %u.%u.%u)\n", GROVE_VERSION, GROVE_ARTIFACT_VERSION, major, minor, patch);
		return 0;
	}
	if (!strcmp(argv[1], "compile"))
		return cmd_compile(argc - 1, argv + 1);
	if (!strcmp(argv[1], "predict"))
		return cmd_predict(argc - 1, argv + 1);
	if (!strcmp(argv[1], "dump"))
		return cmd_dump(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tune"))
		return cmd_tune(argc - 1, argv + 1);
	fail("unknown command '%s' (try grove --help)", argv[1]);
}
