/*
 * Unit tests of the UBJSON reader, the format detection, and the XGBoost reader's
 * categorical splits and vector leaves: every model of tests/models/xgboost/manifest.json
 * is read, walked by a reference interpreter of HIR's semantics, and compared with the
 * margins XGBoost predicted (the reader checked apart from the lowering).
 */
#define _POSIX_C_SOURCE 200809L
#include "front/front.h"
#include "front/json.h"
#include "front/ubjson.h"

#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/check.h"

/* Check that `message` contains `text`. */
static void expect_message(const char *message, const char *text, int line)
{
	if (!strstr(message, text)) {
		fprintf(stderr, "%s:%d: expected '%s' in '%s'\n", __FILE__, line, text, message);
		failures++;
	}
}

/* Parsing bytes[0..n) as UBJSON must fail with a message containing `text`. */
static void expect_ubjson_error(const char *bytes, size_t n, const char *text, int line)
{
	Document doc;
	Error e = {.message = {0}};
	if (ubjson_parse(&doc, "t.ubj", bytes, n, false, &e)) {
		fprintf(stderr, "%s:%d: parsed, expected an error '%s'\n", __FILE__, line, text);
		failures++;
	} else {
		expect_message(e.message, text, line);
	}
	doc_free(&doc);
}

#define UBJ_ERROR(literal, text) expect_ubjson_error(literal, sizeof literal - 1, text, __LINE__)

static void test_ubjson_values(void)
{
	/* {"a": [$l#i 3: 1 -2 70000], "b": {"c": "xy", "d": D 2.5}, "e": [#U 3: T Z i-5], "f": [d 1.5 H"12e1" C 7]} */
	static const char bytes[] =
		"{" "i\1a" "[$l#i\3" "\0\0\0\1" "\xff\xff\xff\xfe" "\0\1\x11\x70"
		"i\1b" "{" "i\1c" "Si\2xy" "U\1d" "D\x40\x04\0\0\0\0\0\0" "}"
		"i\1e" "[#U\3" "T" "Z" "i\xfb"
		"L\0\0\0\0\0\0\0\1f" "[" "d\x3f\xc0\0\0" "N" "Hi\4" "12e1" "C\7" "]" "}";
	Document doc;
	DocIterator it;
	DocItem item;
	Error e;
	char buf[16];
	int64_t n;
	float x;
	uint32_t a, b, c, d, ev, f;

	CHECK(ubjson_parse(&doc, "t.ubj", bytes, sizeof bytes - 1, false, &e));
	CHECK(doc_type(&doc, 0) == DOC_OBJECT && doc_length(&doc, 0) == 4);
	a = doc_member(&doc, 0, "a");
	CHECK(a && doc_type(&doc, a) == DOC_ARRAY && doc_is_flat(&doc, a) && doc_length(&doc, a) == 3);
	doc_iterate(&doc, a, &it);
	CHECK(doc_next_int64(&it, &item, &n) && n == 1);
	CHECK(doc_next_float(&it, &item, &x) && x == -2.0f);
	CHECK(doc_next_int64(&it, &item, &n) && n == 70000);
	CHECK(!doc_next(&it, &item));
	b = doc_member(&doc, 0, "b");
	c = doc_member(&doc, b, "c");
	d = doc_member(&doc, b, "d");
	CHECK(c && doc_string_equals(&doc, c, "xy") && doc_string_copy(&doc, c, buf, sizeof buf) == 2 && !strcmp(buf, "xy"));
	CHECK(d && doc_type(&doc, d) == DOC_NUMBER && doc_number_double(&doc, d) == 2.5 && !doc_number_int64(&doc, d, &n));
	ev = doc_member(&doc, 0, "e");
	CHECK(ev && !doc_is_flat(&doc, ev) && doc_length(&doc, ev) == 3);
	doc_iterate(&doc, ev, &it);
	CHECK(doc_next(&it, &item) && item.type == DOC_TRUE);
	CHECK(doc_next(&it, &item) && item.type == DOC_NULL);
	CHECK(doc_next_int64(&it, &item, &n) && n == -5);
	f = doc_member(&doc, 0, "f");
	CHECK(f && doc_length(&doc, f) == 3);
	doc_iterate(&doc, f, &it);
	CHECK(doc_next_float(&it, &item, &x) && x == 1.5f);
	CHECK(doc_next_float(&it, &item, &x) && x == 120.0f);
	CHECK(doc_next_int64(&it, &item, &n) && n == 7);
	doc_free(&doc);
}

static void test_ubjson_errors(void)
{
	char *deep;
	UBJ_ERROR("", "t.ubj: offset 0: the file ends before its first value");
	UBJ_ERROR("{i\1aSL\0\0\0\0\0\0\0\x40xy}", "t.ubj: offset 5: the string length 64 runs past the end of the file (3 bytes left)");
	UBJ_ERROR("{i\1aSL\xff\xff\xff\xff\xff\xff\xff\xff}", "offset 5: the string length is negative (-1)");
	UBJ_ERROR("{i\1a[$d#L\0\0\0\0\x10\0\0\0\0}", "offset 7: count 268435456 runs past the end of the file (2 bytes left)");
	UBJ_ERROR("[#l\x7f\xff\xff\xff", "offset 1: count 2147483647 runs past the end of the file");
	UBJ_ERROR("{i\1a[$d#i\2\x3f\x80\0\0\x3f", "offset 7: count 2 runs past the end of the file (5 bytes left)");
	UBJ_ERROR("{i\1a[$d#i\1\x3f\x80\0\0", "offset 14: the file ends inside the object that starts at offset 0");
	UBJ_ERROR("{i\1al\0\0", "offset 4: the file ends inside a number ('l' needs 4 bytes, 2 left)");
	UBJ_ERROR("{i\1aQ}", "offset 4: unknown marker 'Q'");
	UBJ_ERROR("{i\1a\x01}", "offset 4: unknown marker byte 0x01");
	UBJ_ERROR("{Si\1a}", "offset 1: expected the key length (an integer: i, U, I, l or L), found 'S'");
	UBJ_ERROR("[$T#i\3]", "offset 2: 'T' is not a supported element type of a typed container");
	UBJ_ERROR("[$di\3]", "offset 3: a typed container ('$') must give its count ('#')");
	UBJ_ERROR("[Hi\3abc]", "offset 1: high-precision number 'abc' is not a number");
	UBJ_ERROR("[]]", "offset 2: unexpected bytes after the value (1 of them)");
	UBJ_ERROR("{i\1a[i\1", "offset 7: the file ends inside the array that starts at offset 4");
	deep = malloc(2001);
	memset(deep, '[', 2000);
	expect_ubjson_error(deep, 2000, "offset 1000: arrays and objects nested more than 1000 deep", __LINE__);
	free(deep);
}

/* Write `bytes` to a file `name` in the current directory. */
static void write_file(const char *name, const char *bytes, size_t n)
{
	FILE *f = fopen(name, "wb");
	CHECK(f && fwrite(bytes, 1, n, f) == n);
	if (f)
		fclose(f);
}

/* Reading file `name` holding bytes[0..n) (with format, or recognised) must fail with `text`. */
static void expect_read_error(const char *name, const char *bytes, size_t n, const char *format, const char *text, int line)
{
	Error e = {.message = {0}};
	HForest *f;
	write_file(name, bytes, n);
	f = front_read_model(name, format, NULL, &e);
	if (f) {
		fprintf(stderr, "%s:%d: %s was read, expected an error '%s'\n", __FILE__, line, name, text);
		failures++;
		hir_forest_free(f);
	} else {
		expect_message(e.message, text, line);
	}
	remove(name);
}

#define READ_ERROR(name, literal, format, text) expect_read_error(name, literal, sizeof literal - 1, format, text, __LINE__)

static void test_detection(void)
{
	READ_ERROR("m.txt", "tree\nversion=v4\n", NULL, "m.txt: missing key 'num_class'"); /* the LightGBM reader's */
	READ_ERROR("m.onnx", "\x08\x07\x12\x08skl2onnx", NULL, "m.onnx: the model has no graph");
	READ_ERROR("m.onnx", "\x3a\xff\xff\xff\xff\x0f", NULL, "not an ONNX model: the protobuf cannot be decoded"); /* a graph of 4 GiB */
	READ_ERROR("m.bin", "\x1f\x8b\x08\x00", NULL, "unknown model format: expected XGBoost JSON or UBJSON");
	READ_ERROR("m.bin", "\x1f\x8b\x08\x00", NULL, "the file starts with gzip-compressed data");
	READ_ERROR("m.bin", "\x01\x02\x03", NULL, "the file starts with the bytes 01 02 03");
	READ_ERROR("m.csv", "1,2,3\n4,5,6\n", NULL, "the file starts with the text '1,2,3'");
	READ_ERROR("m.json", " \n\t ", NULL, "m.json: empty file");
	READ_ERROR("m.json", "{\"learner\": {}}", "xgboost-ubj", "m.json: offset 1: expected the key length");
	READ_ERROR("m.ubj", "{L\0\0\0\0\0\0\0\7learner{}}", "xgboost", "m.ubj:1:2: expected a member name");
	READ_ERROR("m.ubj", "{L\0\0\0\0\0\0\0\7learner{}}", NULL, "m.ubj: learner: missing member 'learner_model_param'");
	READ_ERROR("m.ubj", "{}", "csv", "--format csv: unknown format (expected catboost, xgboost, xgboost-ubj, lightgbm or onnx)");
	CHECK(front_format_known("onnx") && front_format_known("xgboost-ubj") && !front_format_known("json"));
}

/* A table of numbers read from a CSV file (an empty field is NaN); false if it cannot be read. */
typedef struct Table {
	double *values;
	size_t rows, cols;
} Table;

static bool table_read(const char *path, Table *t)
{
	FILE *f = fopen(path, "r");
	char line[1 << 16];
	size_t cap = 0;
	memset(t, 0, sizeof *t);
	if (!f)
		return false;
	while (fgets(line, sizeof line, f)) {
		size_t cols = 0;
		for (char *p = line;; p++) {
			char *end;
			double v = strtod(p, &end);
			GROW(t->values, t->rows * t->cols + cols + 1, cap);
			t->values[t->rows * t->cols + cols++] = end == p ? NAN : v;
			p = end;
			if (*p != ',')
				break;
		}
		if (t->rows && cols != t->cols)
			break;
		t->cols = cols;
		t->rows++;
	}
	fclose(f);
	return t->rows > 0;
}

/* Whether x, not missing, is in the category set of an IN split under the forest's rule (HCATEGORY_NONNEGATIVE here). */
static bool category_in(const HForest *f, const HNode *n, double x)
{
	CHECK(f->category_rule == HCATEGORY_NONNEGATIVE);
	return x >= 0 && x < (double)f->sets[n->set].num_words * 32 && hir_set_has(f, n->set, (uint64_t)x);
}

/* The margins of one row, walking f as HIR defines it (float32 sums, aggregate SUM). */
static void reference_margins(const HForest *f, const double *row, float *margin)
{
	for (uint32_t o = 0; o < f->num_outputs; o++)
		margin[o] = (float)f->base_score[o];
	for (uint32_t t = 0; t < f->num_trees; t++) {
		const HTree *tree = &f->trees[t];
		const HNode *nodes = hir_tree_nodes(f, t), *n = nodes;
		while (n->feature != HIR_LEAF) {
			double x = (float)row[n->feature], v = n->value;
			bool left;
			if (isnan(x) || (n->missing == HMISSING_ZERO && fabs(x) <= HIR_ZERO_THRESHOLD))
				left = n->default_left;
			else if (n->compare == HCMP_IN)
				left = category_in(f, n, x);
			else
				left = n->compare == HCMP_LT ? x < v : n->compare == HCMP_LE ? x <= v : n->compare == HCMP_GT ? x > v
				     : n->compare == HCMP_GE ? x >= v : n->compare == HCMP_EQ ? x == v : x != v;
			n = &nodes[left ? n->left : n->right];
		}
		for (uint32_t k = 0; k < tree->width; k++)
			margin[tree->output + k] += (float)(tree->width == 1 ? n->value : f->leaf_values[n->vector + k]);
	}
}

/* Read model NAME of the fixtures in dir, walk its rows, compare with NAME.margin.csv. */
static void check_fixture(const char *dir, const char *name, const char *model, bool *categorical, bool *vectors)
{
	char path[4096];
	Table rows, want;
	Error e;
	HForest *f;
	double worst = 0;

	if (snprintf(path, sizeof path, "%s/%s", dir, model) >= (int)sizeof path || !(f = front_read_model(path, NULL, NULL, &e))) {
		fprintf(stderr, "%s\n", e.message);
		failures++;
		return;
	}
	for (uint32_t t = 0; t < f->num_trees; t++)
		*vectors |= f->trees[t].width > 1;
	*categorical |= f->num_sets > 0;
	snprintf(path, sizeof path, "%s/%s.rows.csv", dir, name);
	CHECK(table_read(path, &rows) && rows.cols == f->num_features);
	snprintf(path, sizeof path, "%s/%s.margin.csv", dir, name);
	CHECK(table_read(path, &want) && want.rows == rows.rows && want.cols == f->num_outputs);
	if (want.rows == rows.rows && want.cols == f->num_outputs && rows.cols == f->num_features) {
		float *margin = xmalloc(f->num_outputs * sizeof *margin);
		for (size_t r = 0; r < rows.rows; r++) {
			reference_margins(f, rows.values + r * rows.cols, margin);
			for (size_t o = 0; o < want.cols; o++) {
				double w = want.values[r * want.cols + o], err = fabs(margin[o] - w) / fmax(1.0, fabs(w));
				if (err > 1e-5 && worst <= 1e-5)
					fprintf(stderr, "%s: row %zu output %zu: HIR gives %.9g, XGBoost %.9g\n", name, r, o, margin[o], w);
				worst = fmax(worst, err);
			}
		}
		free(margin);
	}
	CHECK(worst <= 1e-5);
	printf("front_xgboost: %-24s %4zu rows, largest relative error %.3g\n", name, rows.rows, worst);
	free(rows.values);
	free(want.values);
	hir_forest_free(f);
}

/* Check every model of `manifest` (a file of dir) against its margins. */
static void check_manifest(const char *dir, const char *manifest, bool *categorical, bool *vectors)
{
	char path[4096], name[256], model[256];
	Document doc;
	DocIterator it;
	DocItem entry;
	Error e;
	FILE *f;
	char *text;
	long size;

	if (snprintf(path, sizeof path, "%s/%s", dir, manifest) >= (int)sizeof path || !(f = fopen(path, "rb"))) {
		fprintf(stderr, "front_xgboost: cannot open %s\n", path);
		failures++;
		return;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	text = xmalloc((size_t)size + 1);
	CHECK(fread(text, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	CHECK(json_parse(&doc, path, text, (size_t)size, false, &e));
	doc_iterate(&doc, 0, &it);
	while (doc_next(&it, &entry)) {
		doc_string_copy(&doc, doc_member(&doc, entry.value, "name"), name, sizeof name);
		doc_string_copy(&doc, doc_member(&doc, entry.value, "model"), model, sizeof model);
		check_fixture(dir, name, model, categorical, vectors);
	}
	doc_free(&doc);
	free(text);
}

static void test_fixtures(const char *argv0)
{
	char exe[2048], dir[2048];
	bool categorical = false, vectors = false;
	snprintf(exe, sizeof exe, "%s", argv0);
	snprintf(dir, sizeof dir, "%s/../../tests/models/xgboost", dirname(exe)); /* build/tests/front_xgboost */
	check_manifest(dir, "manifest.json", &categorical, &vectors);
	CHECK(categorical && vectors);
}

int main(int argc, char **argv)
{
	(void)argc;
	test_ubjson_values();
	test_ubjson_errors();
	test_detection();
	test_fixtures(argv[0]);
	if (failures) {
		fprintf(stderr, "front_xgboost: %d failures\n", failures);
		return 1;
	}
	return 0;
}
