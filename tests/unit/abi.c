/*
 * The artifact ABI (version 3) and the new LIR features through LLVM: a hand-built LIR
 * predict that uses vector loads, stores and arithmetic, a prefetch, atomic adds to a
 * shared local array and to the workspace, and the workspace itself, compiled at two
 * optimisation levels, loaded by libgrove and run on one thread and on a team; the
 * workspace API's errors; an object with its header, linked into tests/aot/main.c; and
 * version-1 and version-2 artifacts, which still load.
 */
#include "ir/lir.h"
#include "rt/grove.h"
#include "target/target.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/check.h"

#ifdef GROVE_ASAN
/* Let the huge workspace's malloc fail with NULL rather than abort the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
#endif

#define FEATURES 8
#define OUTPUTS 3
#define FIXED 16    /* the i64 row counter, then padding */
#define PER_ROW 64  /* two vectors of 8 floats */
#define ROWS 5000

/* An i64 constant. */
static uint32_t ci(LBuilder *b, int64_t v) { return lir_const_int(b, LTYPE_I64, v); }

/* A binary instruction. */
static uint32_t op2(LBuilder *b, LOp op, LType t, uint32_t x, uint32_t y) { return lir_emit(b, op, t, x, y, LIR_NONE); }

/* An 8-lane f32 splat of v. */
static uint32_t splat(LBuilder *b, double v)
{
	uint32_t id = lir_emit_vector(b, LOP_CONST, LTYPE_F32, 8, LIR_NONE, LIR_NONE, LIR_NONE);
	b->fn->insts[id].fimm = v;
	return id;
}

/*
 * predict with 8 features and 3 outputs: out[r][0] = sum over the row x of (2x + 0.5) + 2x,
 * computed with vectors through the row's 64 workspace bytes; out[r][1] = the sum of
 * out[.][0] over all rows (atomic adds to a shared local array); out[r][2] = the number
 * of rows (atomic adds to an i64 in the workspace's fixed bytes).
 */
static LModule *features_module(uint64_t fixed, uint64_t per_row)
{
	LModule *m = lir_module_new();
	LBuilder b;
	uint32_t p[LIR_PREDICT_PARAMS], zero, one, eight, sixteen, three, total, loop, slot, acc, k, sum, t, c, r, o;
	lir_builder_init(&b, lir_func_add(m, "predict", lir_predict_params, LIR_PREDICT_PARAMS));
	for (uint32_t i = 0; i < LIR_PREDICT_PARAMS; i++) {
		p[i] = lir_emit(&b, LOP_PARAM, lir_predict_params[i], LIR_NONE, LIR_NONE, LIR_NONE);
		b.fn->insts[p[i]].imm = i;
	}
	m->num_features = FEATURES;
	m->num_outputs = m->num_margins = OUTPUTS;
	m->workspace_fixed = fixed;
	m->workspace_per_row = per_row;
	zero = ci(&b, 0), one = ci(&b, 1), eight = ci(&b, 8), sixteen = ci(&b, 16), three = ci(&b, 3);
	total = lir_local_array(&b, LTYPE_F32, 1, LSPACE_SHARED);
	lir_emit(&b, LOP_STORE, LTYPE_VOID, total, zero, lir_const_float(&b, LTYPE_F32, 0));
	lir_emit(&b, LOP_STORE, LTYPE_VOID, p[4], zero, zero);

	loop = lir_begin(&b, LOP_PARALLEL_FOR, zero, p[1], one);
	{
		uint32_t base = op2(&b, LOP_MUL, LTYPE_I64, loop, eight), x, twice, u;
		lir_emit(&b, LOP_PREFETCH, LTYPE_F32, p[0], op2(&b, LOP_ADD, LTYPE_I64, base, eight), LIR_NONE);
		x = lir_emit_vector(&b, LOP_LOAD, LTYPE_F32, 8, p[0], base, LIR_NONE);
		twice = lir_emit_vector(&b, LOP_FMUL, LTYPE_F32, 8, x, splat(&b, 2), LIR_NONE);
		u = lir_emit_vector(&b, LOP_FADD, LTYPE_F32, 8, twice, splat(&b, 1), LIR_NONE);
		u = lir_emit_vector(&b, LOP_FSUB, LTYPE_F32, 8, u, splat(&b, 0.5), LIR_NONE);
		/* the row's floats in the workspace start after the fixed bytes */
		slot = op2(&b, LOP_ADD, LTYPE_I64, ci(&b, (int64_t)fixed / 4),
		           op2(&b, LOP_MUL, LTYPE_I64, loop, ci(&b, (int64_t)per_row / 4)));
		lir_emit(&b, LOP_STORE, LTYPE_VOID, p[4], slot, u);
		lir_emit_vector(&b, LOP_STORE, LTYPE_VOID, 8, p[4], op2(&b, LOP_ADD, LTYPE_I64, slot, eight), twice);
		acc = lir_emit(&b, LOP_VAR, LTYPE_F32, lir_const_float(&b, LTYPE_F32, 0), LIR_NONE, LIR_NONE);
		k = lir_begin(&b, LOP_FOR, zero, sixteen, one);
		{
			uint32_t e = lir_emit(&b, LOP_LOAD, LTYPE_F32, p[4], op2(&b, LOP_ADD, LTYPE_I64, slot, k), LIR_NONE);
			uint32_t now = lir_emit(&b, LOP_GET, LTYPE_F32, acc, LIR_NONE, LIR_NONE);
			lir_emit(&b, LOP_SET, LTYPE_VOID, acc, op2(&b, LOP_FADD, LTYPE_F32, now, e), LIR_NONE);
		}
		lir_end(&b);
		sum = lir_emit(&b, LOP_GET, LTYPE_F32, acc, LIR_NONE, LIR_NONE);
		lir_emit(&b, LOP_STORE, LTYPE_VOID, p[2], op2(&b, LOP_MUL, LTYPE_I64, loop, three), sum);
		lir_emit(&b, LOP_ATOMIC, LTYPE_VOID, total, zero, sum);
		lir_emit(&b, LOP_ATOMIC, LTYPE_VOID, p[4], zero, one);
	}
	lir_end(&b);
	b.fn->insts[loop].imm = 4;

	t = lir_emit(&b, LOP_LOAD, LTYPE_F32, total, zero, LIR_NONE);
	c = lir_cast(&b, LCAST_SITOFP, LTYPE_F32, lir_emit(&b, LOP_LOAD, LTYPE_I64, p[4], zero, LIR_NONE));
	r = lir_begin(&b, LOP_FOR, zero, p[1], one);
	o = op2(&b, LOP_MUL, LTYPE_I64, r, three);
	lir_emit(&b, LOP_STORE, LTYPE_VOID, p[2], op2(&b, LOP_ADD, LTYPE_I64, o, one), t);
	lir_emit(&b, LOP_STORE, LTYPE_VOID, p[2], op2(&b, LOP_ADD, LTYPE_I64, o, ci(&b, 2)), c);
	lir_end(&b);
	return m;
}

static float rows[ROWS * FEATURES], out[ROWS * OUTPUTS];

/* Whether out holds what features_module computes for the first n rows. */
static bool outputs_right(const float *got, size_t n)
{
	double total = 0;
	int bad = 0;
	for (size_t r = 0; r < n; r++) {
		double s = 4;
		for (int k = 0; k < FEATURES; k++)
			s += 4 * rows[r * FEATURES + k];
		total += s;
		bad += got[r * OUTPUTS] != s;
	}
	for (size_t r = 0; r < n; r++)
		bad += got[r * OUTPUTS + 1] != total || got[r * OUTPUTS + 2] != (double)n;
	if (bad)
		fprintf(stderr, "%d wrong outputs of %zu rows (row 0: %g %g %g)\n", bad, n, got[0], got[1], got[2]);
	return bad == 0;
}

/* Compile m (freed) into path as emit says. */
static bool build(LModule *m, TargetEmit emit, int level, const char *cpu, const char *path)
{
	Error e = {.message = {0}};
	TargetOptions o = {.emit = emit, .opt_level = level, .cpu = cpu, .prefix = "aot_model"};
	bool ok = lir_verify(m, &e) && target_emit(m, &o, path, &e);
	if (!ok)
		fprintf(stderr, "build: %s\n", e.message);
	lir_module_free(m);
	return ok;
}

/* Predictions through the workspace, on the calling thread and on a team, and the workspace API's errors. */
static void test_workspace(const char *path)
{
	GroveModel *model = NULL;
	GroveError err;
	size_t need = FIXED + (size_t)PER_ROW * ROWS;
	char *buffer;
	CHECK(grove_load(path, &model, &err) == GROVE_OK);
	if (!model)
		return;
	CHECK(grove_workspace_size(model, 0) == FIXED && grove_workspace_size(model, 10) == FIXED + 10 * PER_ROW);
	CHECK(grove_workspace_size(model, SIZE_MAX / 32) == SIZE_MAX && grove_workspace_size(NULL, 10) == 0);
	for (size_t n = 1; n <= 9; n += 4) {
		CHECK(grove_predict(model, rows, n, FEATURES, out, n * OUTPUTS, 0, &err) == GROVE_OK);
		CHECK(outputs_right(out, n));
	}
	CHECK(grove_predict(model, rows, ROWS, FEATURES, out, ROWS * OUTPUTS, 0, &err) == GROVE_OK);
	CHECK(outputs_right(out, ROWS));

	buffer = aligned_alloc(64, (need + 64 + 63) / 64 * 64); /* a multiple of the alignment, as C11 asks */
	CHECK(buffer != NULL);
	if (!buffer) {
		grove_free(model);
		return;
	}
	memset(out, 0, sizeof out);
	CHECK(grove_predict_with_workspace(model, rows, ROWS, FEATURES, out, ROWS * OUTPUTS, 0, buffer, need, &err) ==
	      GROVE_OK);
	CHECK(outputs_right(out, ROWS));
	CHECK(grove_predict_with_workspace(model, rows, ROWS, FEATURES, out, ROWS * OUTPUTS, 0, buffer, need - 1, &err) ==
	      GROVE_ERROR_ARGUMENT);
	CHECK(strstr(err.message, "the workspace holds 320015 bytes, 5000 rows need 320016") != NULL);
	CHECK(grove_predict_with_workspace(model, rows, 2, FEATURES, out, 6, 0, NULL, need, &err) == GROVE_ERROR_ARGUMENT);
	CHECK(strstr(err.message, "workspace is NULL") != NULL);
	CHECK(grove_predict_with_workspace(model, rows, 2, FEATURES, out, 6, 0, buffer + 4, need, &err) ==
	      GROVE_ERROR_ARGUMENT);
	CHECK(strstr(err.message, "the workspace is not aligned to 16 bytes") != NULL);
	CHECK(grove_predict_with_workspace(model, rows, 2, FEATURES, (float *)buffer, 6, 0, buffer + 16, need, &err) ==
	      GROVE_ERROR_ARGUMENT);
	CHECK(strstr(err.message, "the workspace overlaps the rows or the output") != NULL);
	CHECK(grove_predict_with_workspace(model, rows, 0, FEATURES, out, 0, 0, NULL, 0, &err) == GROVE_OK);
	free(buffer);
	grove_free(model);
}

/* A workspace too large to allocate, or to count in a size_t: errors, not crashes. */
static void test_huge_workspace(const char *path)
{
	GroveModel *model = NULL;
	GroveError err;
	CHECK(grove_load(path, &model, &err) == GROVE_OK);
	if (!model)
		return;
	CHECK(grove_workspace_size(model, 1) == (size_t)1 << 46 && grove_workspace_size(model, (size_t)1 << 20) == SIZE_MAX);
	CHECK(grove_predict(model, rows, 1, FEATURES, out, OUTPUTS, 0, &err) == GROVE_ERROR_MEMORY);
	CHECK(strstr(err.message, "cannot allocate the workspace of 1 rows (70368744177664 bytes)") != NULL);
	CHECK(grove_predict(model, rows, (size_t)1 << 20, FEATURES, out, SIZE_MAX, 0, &err) == GROVE_ERROR_MEMORY);
	CHECK(strstr(err.message, "1048576 rows need a workspace larger than the address space") != NULL);
	CHECK(grove_predict_with_workspace(model, rows, (size_t)1 << 20, FEATURES, out, SIZE_MAX, 0, out, SIZE_MAX, &err) ==
	      GROVE_ERROR_ARGUMENT);
	grove_free(model);
}

/* Run a shell command; whether it exits with 0. */
static bool shell(const char *command)
{
	int status = system(command);
	if (status != 0)
		fprintf(stderr, "'%s' failed (%d)\n", command, status);
	return status == 0;
}

/* The object's header declares the workspace; tests/aot/main.c allocates it and gets the right predictions. */
static void test_object(const char *dir)
{
	char command[PATH_MAX * 3 + 256], self[PATH_MAX], path[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	FILE *f;
	char *text = NULL;
	size_t size = 0, n = 0;

	snprintf(path, sizeof path, "%s/aot.h", dir);
	CHECK(len > 0);
	self[len > 0 ? len : 0] = 0;
	for (int up = 0; up < 3 && strrchr(self, '/'); up++) /* ROOT/BUILDDIR/tests/abi -> ROOT */
		*strrchr(self, '/') = 0;
	if (!(f = fopen(path, "r"))) {
		CHECK(!"no header");
		return;
	}
	getdelim(&text, &size, 0, f);
	fclose(f);
	CHECK(strstr(text, "#define AOT_MODEL_WORKSPACE_FIXED 16ull\n") && strstr(text, "#define AOT_MODEL_WORKSPACE_PER_ROW 64ull\n"));
	CHECK(strstr(text, "void aot_model_predict(const float *rows, int64_t nrows, float *out, int32_t flags, void *workspace);"));
	free(text);

	snprintf(command, sizeof command, "%s -std=c11 -Wall -Werror -include %s/aot.h %s/tests/aot/main.c %s/aot.o -o %s/aot "
	         "-fopenmp -lm", getenv("CC") ? getenv("CC") : "cc", dir, self, dir, dir);
	CHECK(shell(command));
	snprintf(path, sizeof path, "%s/rows.csv", dir);
	f = fopen(path, "w");
	for (size_t r = 0; f && r < ROWS; r++)
		for (int k = 0; k < FEATURES; k++)
			fprintf(f, "%g%c", rows[r * FEATURES + k], k + 1 < FEATURES ? ',' : '\n');
	if (f)
		fclose(f);
	snprintf(command, sizeof command, "%s/aot %s/rows.csv", dir, dir);
	f = popen(command, "r");
	while (f && n < ROWS * OUTPUTS && fscanf(f, "%f", &out[n]) == 1)
		n++;
	CHECK(f && pclose(f) == 0);
	CHECK(n == ROWS * OUTPUTS && outputs_right(out, ROWS));
}

/* Compile the C source into dir/name.so (kept as dir/name.c). */
static bool build_source(const char *dir, const char *name, const char *source)
{
	char command[3 * PATH_MAX], path[PATH_MAX];
	FILE *f;
	snprintf(path, sizeof path, "%s/%s.c", dir, name);
	if (!(f = fopen(path, "w")))
		return false;
	fputs(source, f);
	fclose(f);
	snprintf(command, sizeof command, "%s -shared -fPIC -o %s/%s.so %s", getenv("CC") ? getenv("CC") : "cc", dir, name,
	         path);
	snprintf(path, sizeof path, "%s/%s.so", dir, name);
	return shell(command) && target_seal(path, NULL); /* as grove compile seals what it writes */
}

/* An artifact of ABI version `version` written as version 1 was: a 4-argument predict, no workspace. */
static bool write_v1(const char *dir, const char *name, unsigned version)
{
	char source[1024];
	snprintf(source, sizeof source,
	         "#include <stdint.h>\n"
	         "static void predict(const float *rows, int64_t nrows, float *out, int32_t flags)\n"
	         "{\n\tfor (int64_t i = 0; i < nrows; i++)\n\t\tout[i] = rows[2 * i] + rows[2 * i + 1] + (flags & 1 ? 100 : 0);\n}\n"
	         "const struct { uint32_t magic, version, features, outputs, margins, transform;\n"
	         "\tvoid (*predict)(const float *, int64_t, float *, int32_t); } grove_artifact =\n"
	         "\t{0x31565247u, %uu, 2, 1, 1, 0, predict};\n",
	         version);
	return build_source(dir, name, source);
}

/* An artifact of ABI version 2: predict with a workspace, no predict_f64. */
static bool write_v2(const char *dir)
{
	return build_source(dir, "v2",
	                    "#include <stdint.h>\n"
	                    "static void predict(const float *rows, int64_t nrows, float *out, int32_t flags, void *workspace)\n"
	                    "{\n\t(void)workspace;\n\tfor (int64_t i = 0; i < nrows; i++)\n"
	                    "\t\tout[i] = rows[2 * i] - rows[2 * i + 1] + (flags & 1 ? 100 : 0);\n}\n"
	                    "const struct { uint32_t magic, version, features, outputs, margins, transform; uint64_t fixed, per_row;\n"
	                    "\tvoid (*predict)(const float *, int64_t, float *, int32_t, void *); } grove_artifact =\n"
	                    "\t{0x31565247u, 2u, 2, 1, 1, 0, 0, 0, predict};\n");
}

/* Version-2 artifacts load; their rows of doubles are rounded to float. */
static void test_version_2(const char *dir)
{
	char path[PATH_MAX];
	GroveModel *model = NULL;
	GroveError err;
	double in[4] = {1.5, 0.25, 1e300, 3.0};
	float got[2];
	CHECK(write_v2(dir));
	snprintf(path, sizeof path, "%s/v2.so", dir);
	CHECK(grove_load(path, &model, &err) == GROVE_OK);
	if (model) {
		CHECK(grove_predict_f64(model, in, 2, 2, got, 2, GROVE_PREDICT_MARGIN, &err) == GROVE_OK);
		CHECK(got[0] == 101.25f && isinf(got[1]));
	}
	grove_free(model);
}

/* Version-1 artifacts load and predict; unknown versions are refused. */
static void test_version_1(const char *dir)
{
	char path[PATH_MAX];
	GroveModel *model = NULL;
	GroveError err;
	float in[6] = {1, 2, 3, 4, 5, 6}, got[3];
	CHECK(write_v1(dir, "v1", 1) && write_v1(dir, "v99", 99));
	snprintf(path, sizeof path, "%s/v1.so", dir);
	CHECK(grove_load(path, &model, &err) == GROVE_OK);
	if (model) {
		CHECK(grove_num_features(model) == 2 && grove_num_outputs(model, 0) == 1 && grove_workspace_size(model, 9) == 0);
		CHECK(grove_predict(model, in, 3, 2, got, 3, 0, &err) == GROVE_OK);
		CHECK(got[0] == 3 && got[1] == 7 && got[2] == 11);
		CHECK(grove_predict_with_workspace(model, in, 3, 2, got, 3, GROVE_PREDICT_MARGIN, NULL, 0, &err) == GROVE_OK);
		CHECK(got[0] == 103 && got[2] == 111);
	}
	grove_free(model);
	snprintf(path, sizeof path, "%s/v99.so", dir);
	CHECK(grove_load(path, &model, &err) == GROVE_ERROR_FORMAT && model == NULL);
	CHECK(strstr(err.message, "a grove artifact of another version (99; this library reads 1 to 6)") != NULL);
}

int main(void)
{
	char dir[] = "/tmp/grove-abi-XXXXXX", path[PATH_MAX];
	static const struct {
		int level;
		const char *cpu;
	} builds[] = {{0, "x86-64"}, {3, NULL}};

	for (size_t i = 0; i < COUNT_OF(rows); i++)
		rows[i] = (float)((i * 7 + i / 11) % 10);
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/model.so", dir);
	for (size_t i = 0; i < COUNT_OF(builds); i++) {
		CHECK(build(features_module(FIXED, PER_ROW), TARGET_EMIT_SHARED, builds[i].level, builds[i].cpu, path));
		test_workspace(path);
	}
	CHECK(build(features_module(0, (uint64_t)1 << 46), TARGET_EMIT_SHARED, 0, "x86-64", path));
	test_huge_workspace(path);
	snprintf(path, sizeof path, "%s/aot.o", dir);
	CHECK(build(features_module(FIXED, PER_ROW), TARGET_EMIT_OBJ, 2, "x86-64", path));
	test_object(dir);
	test_version_1(dir);
	test_version_2(dir);

	snprintf(path, sizeof path, "rm -rf %s", dir);
	shell(path);
	if (failures)
		fprintf(stderr, "abi: %d checks failed\n", failures);
	return failures != 0;
}
