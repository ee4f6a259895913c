/* Unit tests of the JSON reader and the XGBoost model reader; also times reading a real model. */
#define _POSIX_C_SOURCE 200809L
#include "front/front.h"
#include "front/json.h"

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

/* Parsing must fail with a message containing `text`. */
static void expect_json_error(const char *json, const char *text, int line)
{
	Document doc;
	Error e = {.message = {0}};
	bool ok = json_parse(&doc, "t.json", json, strlen(json), false, &e);
	if (ok) {
		fprintf(stderr, "%s:%d: '%s' parsed, expected an error\n", __FILE__, line, json);
		failures++;
	} else {
		expect_message(e.message, text, line);
	}
	doc_free(&doc);
}

static void test_json_values(void)
{
	static const char text[] = "{\"a\": [1, 2.5, -3e2], \"b\": {\"c\": \"x\\u00e9\\ud83d\\ude00\\n\\\"\"},\n"
	                           " \"d\": [true, false, null, [1], {}, \"s\"], \"e\": [], \"k\\u0065y\": 7}";
	Document doc;
	DocIterator it;
	DocItem item;
	Error e;
	char buf[64];
	int64_t n;
	uint32_t a, b, c, d, count;
	float x;

	CHECK(json_parse(&doc, "t.json", text, strlen(text), false, &e));
	CHECK(doc_type(&doc, 0) == DOC_OBJECT && doc_length(&doc, 0) == 5);
	a = doc_member(&doc, 0, "a");
	CHECK(a && doc_type(&doc, a) == DOC_ARRAY && doc_length(&doc, a) == 3 && doc_is_flat(&doc, a));
	doc_iterate(&doc, a, &it);
	CHECK(doc_next_int64(&it, &item, &n) && n == 1);
	CHECK(doc_next_float(&it, &item, &x) && x == 2.5f);
	CHECK(!doc_next_int64(&it, &item, &n) && item.type == DOC_NUMBER && doc_item_float(&item) == -300.0f);
	CHECK(!doc_next(&it, &item));

	b = doc_member(&doc, 0, "b");
	c = doc_member(&doc, b, "c");
	CHECK(c && doc_type(&doc, c) == DOC_STRING);
	CHECK(doc_string_copy(&doc, c, buf, sizeof buf) == 9 && strcmp(buf, "x\xc3\xa9\xf0\x9f\x98\x80\n\"") == 0);
	CHECK(doc_string_equals(&doc, c, "x\xc3\xa9\xf0\x9f\x98\x80\n\""));
	CHECK(doc_member(&doc, b, "missing") == DOC_MISSING && doc_member(&doc, c, "c") == DOC_MISSING);
	CHECK(doc_member(&doc, 0, "key") && doc_number_int64(&doc, doc_member(&doc, 0, "key"), &n) && n == 7);

	d = doc_member(&doc, 0, "d");
	CHECK(d && !doc_is_flat(&doc, d) && doc_length(&doc, d) == 6);
	doc_iterate(&doc, d, &it);
	static const DocType types[] = {DOC_TRUE, DOC_FALSE, DOC_NULL, DOC_ARRAY, DOC_OBJECT, DOC_STRING};
	for (count = 0; doc_next(&it, &item); count++)
		CHECK(count < 6 && item.type == types[count] && item.value != DOC_MISSING);
	CHECK(count == 6);
	CHECK(doc_length(&doc, doc_member(&doc, 0, "e")) == 0);
	doc_free(&doc);

	/* Elements of a flat array as the iterator sees them, with spacing and strings. */
	static const char flat[] = "[ \"a,b\" , \"q\\\"]\",true ,\n -0.0 ,1E400]";
	CHECK(json_parse(&doc, "t.json", flat, strlen(flat), false, &e) && doc_is_flat(&doc, 0) && doc.num_values == 1);
	doc_iterate(&doc, 0, &it);
	CHECK(doc_next(&it, &item) && item.type == DOC_STRING && item.length == 3 && memcmp(item.bytes, "a,b", 3) == 0);
	CHECK(doc_next(&it, &item) && item.type == DOC_STRING && item.encoding == DOC_TEXT_ESCAPED && item.length == 4);
	CHECK(doc_next(&it, &item) && item.type == DOC_TRUE);
	CHECK(doc_next_float(&it, &item, &x) && x == 0.0f && signbit(x));
	CHECK(doc_next_float(&it, &item, &x) && isinf(x));
	CHECK(!doc_next(&it, &item));
	doc_free(&doc);

	/* Python's json module writes these. */
	static const char special[] = "[NaN, Infinity, -Infinity]";
	CHECK(json_parse(&doc, "t.json", special, strlen(special), false, &e));
	doc_iterate(&doc, 0, &it);
	CHECK(doc_next_float(&it, &item, &x) && isnan(x));
	CHECK(doc_next_float(&it, &item, &x) && isinf(x) && x > 0);
	CHECK(doc_next_float(&it, &item, &x) && isinf(x) && x < 0);
	doc_free(&doc);
}

static void test_json_errors(void)
{
	char *deep;
	expect_json_error("", "t.json:1:1: expected a value, found end of input", __LINE__);
	expect_json_error("[1,2", "t.json:1:5: expected ',' or ']', found end of input", __LINE__);
	expect_json_error("[1,]", "t.json:1:4: expected a value, found ']'", __LINE__);
	expect_json_error("{\n  \"a\": 1,\n  \"b\" 2}", "t.json:3:7: expected ':', found '2'", __LINE__);
	expect_json_error("{\"a\": 1 \"b\": 2}", "t.json:1:9: expected ',' or '}', found '\"'", __LINE__);
	expect_json_error("{1: 2}", "t.json:1:2: expected a member name (a string), found '1'", __LINE__);
	expect_json_error("[tru]", "t.json:1:2: expected a value, found 't'", __LINE__);
	expect_json_error("[01]", "t.json:1:2: invalid number", __LINE__);
	expect_json_error("[1.]", "invalid number", __LINE__);
	expect_json_error("[1e+]", "invalid number", __LINE__);
	expect_json_error("[-]", "invalid number", __LINE__);
	expect_json_error("[-NaN]", "invalid number", __LINE__);
	expect_json_error("[1x]", "invalid number", __LINE__);
	expect_json_error("[\"a\tb\"]", "t.json:1:4: control character (byte 0x09) in a string", __LINE__);
	expect_json_error("[\"\\x\"]", "invalid escape '\\x' in a string", __LINE__);
	expect_json_error("[\"\\u12g4\"]", "\\u must be followed by four hexadecimal digits", __LINE__);
	expect_json_error("[\"abc", "t.json:1:2: unterminated string", __LINE__);
	expect_json_error("[1] [2]", "t.json:1:5: unexpected text after the JSON value", __LINE__);
	expect_json_error("\x01", "expected a value, found byte 0x01", __LINE__);

	deep = malloc(100001);
	memset(deep, '[', 100000);
	deep[100000] = '\0';
	expect_json_error(deep, "t.json:1:1001: arrays and objects nested more than 1000 deep", __LINE__);
	free(deep);
}

/* json_text_float must round like strtof, and json_text_double like strtod, on the kinds of text models hold. */
static void test_json_numbers(void)
{
	unsigned seed = 12345;
	char text[64];
	int mismatches = 0;
	for (int i = 0; i < 300000; i++) {
		double d;
		int format = i % 5;
		seed = seed * 1103515245u + 12345u;
		uint32_t bits = seed ^ (seed >> 7) * 2654435761u;
		float f;
		memcpy(&f, &bits, sizeof f);
		if (!isfinite(f))
			continue;
		if (format == 0)
			snprintf(text, sizeof text, "%.9g", (double)f);
		else if (format == 1)
			snprintf(text, sizeof text, "%.8E", (double)f);
		else if (format == 2)
			snprintf(text, sizeof text, "%.7E", (double)f); /* XGBoost 1.x style, shortest digits */
		else if (format == 3)
			snprintf(text, sizeof text, "%.17g", (double)f * 1.000000123); /* between floats */
		else
			snprintf(text, sizeof text, "%u.%u", seed % 100000, bits % 1000000);
		d = strtod(text, NULL);
		if (json_text_float(text, strlen(text)) != strtof(text, NULL) || json_text_double(text, strlen(text)) != d) {
			if (mismatches++ < 5)
				fprintf(stderr, "number mismatch on '%s'\n", text);
		}
	}
	/* Exactly halfway between two floats after the first rounding: must not round twice. */
	static const char *const hard[] = {"1.00000005960464477539062500000000001", "1.000000059604644775390625", "0.1",
	                                   "3.4028235677973366e38", "1e-45", "7.006492e-46", "1.17549435E-38", "16777217",
	                                   "4.4501477170144023e-308", "9007199254740993", "16777217.000000001", "-16777219.0000000001"};
	for (size_t i = 0; i < COUNT_OF(hard); i++)
		if (json_text_float(hard[i], strlen(hard[i])) != strtof(hard[i], NULL) ||
		    json_text_double(hard[i], strlen(hard[i])) != strtod(hard[i], NULL)) {
			fprintf(stderr, "number mismatch on '%s'\n", hard[i]);
			mismatches++;
		}
	CHECK(mismatches == 0);

	int64_t n;
	CHECK(json_text_int64("-9223372036854775808", 20, &n) && n == INT64_MIN);
	CHECK(!json_text_int64("9223372036854775808", 19, &n));
	CHECK(!json_text_int64("1.0", 3, &n) && !json_text_int64("", 0, &n) && !json_text_int64("-", 1, &n));
}

/* A model in the given parts, read from memory; NULL (with e filled) on error. */
static HForest *read_model_text(const char *text, Error *e)
{
	return front_read_xgboost_json("model.json", text, strlen(text), false, e);
}

static void test_reader_small(void)
{
	/* XGBoost 3.x style: per-class base_score vector, 0/1 default_left. */
	static const char multiclass[] =
		"{\"learner\":{\"gradient_booster\":{\"name\":\"gbtree\",\"model\":{\"gbtree_model_param\":{\"num_trees\":\"2\"},"
		"\"tree_info\":[0,2],\"trees\":["
		"{\"tree_param\":{\"num_nodes\":\"3\",\"size_leaf_vector\":\"1\"},\"left_children\":[1,-1,-1],\"right_children\":[2,-1,-1],"
		"\"split_indices\":[1,0,0],\"split_conditions\":[2.5E-1,-4E-1,4E-1],\"default_left\":[1,0,0],\"split_type\":[0,0,0]},"
		"{\"tree_param\":{\"num_nodes\":\"1\"},\"left_children\":[-1],\"right_children\":[-1],"
		"\"split_indices\":[0],\"split_conditions\":[1.1E-1],\"default_left\":[0]}]}},"
		"\"learner_model_param\":{\"base_score\":\"[2.3E-1,1.1E-1,5E-1]\",\"num_class\":\"3\",\"num_feature\":\"2\",\"num_target\":\"1\"},"
		"\"objective\":{\"name\":\"multi:softprob\"}},\"version\":[3,1,0]}";
	Error e = {.message = {0}};
	HForest *f = read_model_text(multiclass, &e);
	CHECK(f);
	if (f) {
		const HNode *n = hir_tree_nodes(f, 0);
		CHECK(f->num_trees == 2 && f->num_outputs == 3 && f->num_features == 2 && f->transform == HTRANSFORM_SOFTMAX);
		CHECK(f->base_score[0] == (double)0.23f && f->base_score[1] == (double)0.11f && f->base_score[2] == 0.5);
		CHECK(f->trees[0].output == 0 && f->trees[1].output == 2 && f->trees[1].num_nodes == 1);
		CHECK(n[0].feature == 1 && n[0].value == 0.25 && n[0].left == 1 && n[0].right == 2 && n[0].default_left == 1);
		CHECK(n[0].compare == HCMP_LT && n[1].feature == HIR_LEAF && n[1].value == (double)-0.4f);
		CHECK(f->threshold_type == HTYPE_F32 && f->leaf_type == HTYPE_F32);
		hir_forest_free(f);
	}

	/* XGBoost 1.x style: boolean default_left, scalar base_score through the logit; DART weights. */
	static const char dart[] =
		"{\"learner\":{\"gradient_booster\":{\"name\":\"dart\",\"gbtree\":{\"name\":\"gbtree\",\"model\":{"
		"\"gbtree_model_param\":{\"num_trees\":\"1\",\"size_leaf_vector\":\"0\"},\"tree_info\":[0],\"trees\":["
		"{\"tree_param\":{\"num_nodes\":\"3\"},\"left_children\":[1,-1,-1],\"right_children\":[2,-1,-1],"
		"\"split_indices\":[0,0,0],\"split_conditions\":[1E0,3E-1,-7E-1],\"default_left\":[true,false,false]}]}},"
		"\"weight_drop\":[9E-1]},"
		"\"learner_model_param\":{\"base_score\":\"3E-1\",\"num_class\":\"0\",\"num_feature\":\"1\"},"
		"\"objective\":{\"name\":\"binary:logistic\"}},\"version\":[1,7,4]}";
	f = read_model_text(dart, &e);
	CHECK(f);
	if (f) {
		const HNode *n = hir_tree_nodes(f, 0);
		CHECK(f->num_outputs == 1 && f->transform == HTRANSFORM_SIGMOID);
		CHECK(f->base_score[0] == (double)-logf(1.0f / 0.3f - 1.0f));
		CHECK(n[0].default_left == 1 && n[1].value == (double)(0.3f * 0.9f) && n[2].value == (double)(-0.7f * 0.9f));
		hir_forest_free(f);
	}

	/* No trees is legal: the model predicts its base score. */
	static const char empty[] =
		"{\"learner\":{\"gradient_booster\":{\"name\":\"gbtree\",\"model\":{\"trees\":[],\"tree_info\":[]}},"
		"\"learner_model_param\":{\"base_score\":\"2E0\",\"num_feature\":\"3\"},\"objective\":{\"name\":\"reg:gamma\"}}}";
	f = read_model_text(empty, &e);
	CHECK(f && f->num_trees == 0 && f->base_score[0] == (double)logf(2.0f) && f->transform == HTRANSFORM_EXP);
	hir_forest_free(f);

	f = front_read_model("no/such/model.json", NULL, NULL, &e);
	CHECK(!f);
	expect_message(e.message, "no/such/model.json: No such file or directory", __LINE__);
}

/*
 * A model larger than a few DOC_RELEASE_STEPs, read from a file (mapped: the parser and
 * the reader drop its pages behind them, and the reader maps them again) and from memory
 * (nothing dropped), must give the same forest.
 */
static void test_reader_mapped(void)
{
	enum { TREES = 150000 };
	char path[] = "/tmp/grove-front-json-XXXXXX";
	int fd = mkstemp(path);
	FILE *out = fd >= 0 ? fdopen(fd, "w+b") : NULL;
	char *text;
	long size;
	Error e = {.message = {0}};
	HForest *mapped, *copied;

	CHECK(out);
	if (!out)
		return;
	fputs("{\"learner\":{\"gradient_booster\":{\"name\":\"gbtree\",\"model\":{\"trees\":[", out);
	for (int t = 0; t < TREES; t++)
		fprintf(out, "%s{\"tree_param\":{\"num_nodes\":\"3\"},\"left_children\":[1,-1,-1],\"right_children\":[2,-1,-1],"
		        "\"split_indices\":[%d,0,0],\"split_conditions\":[%d.25,-%d.5E-3,%d.75E-3],\"default_left\":[%d,0,0]}",
		        t ? "," : "", t % 7, t, t, t, t & 1);
	fprintf(out, "],\"tree_info\":[0");
	for (int t = 1; t < TREES; t++)
		fputs(",0", out);
	fputs("]}},\"learner_model_param\":{\"base_score\":\"5E-1\",\"num_feature\":\"7\"},"
	      "\"objective\":{\"name\":\"reg:squarederror\"}}}", out);
	size = ftell(out);
	CHECK(size > 3 * (long)DOC_RELEASE_STEP);
	text = xmalloc((size_t)size);
	rewind(out);
	CHECK(fread(text, 1, (size_t)size, out) == (size_t)size);
	fclose(out);

	mapped = front_read_model(path, NULL, NULL, &e);
	copied = front_read_xgboost_json(path, text, (size_t)size, false, &e);
	CHECK(mapped && copied);
	if (mapped && copied) {
		CHECK(mapped->num_trees == TREES && copied->num_trees == TREES && mapped->num_nodes == copied->num_nodes);
		for (uint32_t t = 0; t < TREES; t++)
			CHECK(mapped->trees[t].first_node == copied->trees[t].first_node &&
			      mapped->trees[t].num_nodes == copied->trees[t].num_nodes);
		CHECK(!memcmp(mapped->nodes, copied->nodes, mapped->num_nodes * sizeof *mapped->nodes));
		CHECK(hir_tree_nodes(mapped, TREES - 1)[0].value == TREES - 1 + 0.25);
	}
	hir_forest_free(mapped);
	hir_forest_free(copied);
	free(text);
	remove(path);
}

/* Read the real higgs model (100 trees, 28 features), from ../shared beside the repository (this program is build/tests/front_json). */
static void test_reader_higgs(const char *program)
{
	char path[4096], here[4096];
	Error e;
	HForest *f;
	snprintf(here, sizeof here, "%s", program);
	snprintf(path, sizeof path, "%s/../../../shared/models/real/higgs.json", dirname(here));
	f = front_read_model(path, NULL, NULL, &e);
	if (!f) {
		fprintf(stderr, "front_json: %s\n", e.message);
		failures++;
		return;
	}
	CHECK(f->num_trees == 100 && f->num_features == 28 && f->num_outputs == 1);
	CHECK(f->transform == HTRANSFORM_SIGMOID && f->base_score[0] == 0.0);
	CHECK(f->num_nodes > 100 && f->trees[99].num_nodes > 1);
	hir_forest_free(f);
}

int main(int argc, char **argv)
{
	(void)argc;
	test_json_values();
	test_json_errors();
	test_json_numbers();
	test_reader_small();
	test_reader_mapped();
	test_reader_higgs(argv[0]);
	if (failures) {
		fprintf(stderr, "front_json: %d failures\n", failures);
		return 1;
	}
	return 0;
}
