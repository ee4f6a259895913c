/* The XGBoost reader's parts (xgboost.c: the model; xgboost_tree.c: its trees), over a document of values. */
#ifndef GROVE_FRONT_XGBOOST_H
#define GROVE_FRONT_XGBOOST_H

#include "front/doc.h"
#include "ir/hir.h"

/* The largest tree and forest the reader accepts (HIR indexes nodes with 32 bits). */
#define XGBOOST_MAX_NODES_PER_TREE (UINT32_C(1) << 31)
#define XGBOOST_MAX_OUTPUTS 65536

typedef struct XgboostReader {
	const char *name;
	Document doc;
	Error *e;
	uint64_t set_words_left; /* category set words the model may still add (a bound from the file's size) */
} XgboostReader;

/* Fill e with "name: " and the message; returns false. */
bool xgboost_fail(XgboostReader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report that value v at `path` is not of the expected kind; returns false. */
bool xgboost_fail_type(XgboostReader *r, const char *path, uint32_t v, const char *expected);
/* Member `key` of the object at `path`, which must exist and (unless want is -1) have type want; 0 after an error. */
uint32_t xgboost_member(XgboostReader *r, uint32_t object, const char *path, const char *key, int want);
/* An integer parameter in [min, max]: XGBoost writes them as strings ("28"), other writers as numbers. */
bool xgboost_integer(XgboostReader *r, uint32_t v, const char *path, int64_t min, int64_t max, int64_t *out);
/* An integer parameter path.key that may be absent (then it is `otherwise`). */
bool xgboost_optional_integer(XgboostReader *r, uint32_t object, const char *path, const char *key, int64_t min,
                              int64_t max, int64_t otherwise, int64_t *out);

/*
 * Read trees[t] (value `tree`) into a new HIR tree adding to `output`; leaves are scaled
 * by `weight` (DART) in float32 when `weighted`.
 */
bool xgboost_read_tree(XgboostReader *r, HForest *f, uint32_t tree, uint32_t t, uint32_t output, bool weighted, float weight);

#endif
