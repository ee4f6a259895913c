/* Model readers: each turns a file in a training library's format into HIR. */
#ifndef GROVE_FRONT_FRONT_H
#define GROVE_FRONT_FRONT_H

#include "ir/hir.h"

/*
 * Read an XGBoost JSON model (gbtree booster; XGBoost 1.x, 2.x and 3.x) from
 * text[0..len). `name` is used in messages, which look like
 * "model.json: trees[3].left_children[7]: index 912 out of range".
 * mapped: text is a read-only private mapping of the file, whose pages the reader lets
 * the kernel drop once it has gone past them (front/doc.h). Returns NULL and fills e
 * on bad input.
 */
HForest *front_read_xgboost_json(const char *name, const char *text, size_t len, bool mapped, Error *e);

/*
 * Read a LightGBM text model (Booster.save_model; LightGBM 2.x, 3.x and 4.x) from
 * text[0..len), with LightGBM's float64 thresholds and leaves. Messages look like
 * "model.txt: Tree=3: left_child[5]: index 912 out of range (the tree has 30 splits)".
 * Returns NULL and fills e on bad input.
 */
HForest *front_read_lightgbm(const char *name, const char *text, size_t len, bool mapped, Error *e);

/*
 * Read an ONNX model (a protobuf) whose graph holds one ai.onnx.ml tree ensemble:
 * TreeEnsembleRegressor or TreeEnsembleClassifier (opsets 1-3) or TreeEnsemble (opset
 * 5). Messages look like "model.onnx: TreeEnsembleRegressor.nodes_modes[7]: unknown
 * mode 'BRANCH_XX'". Returns NULL and fills e on bad input.
 */
HForest *front_read_onnx(const char *name, const char *bytes, size_t len, bool mapped, Error *e);

/*
 * Read a CatBoost JSON model (`save_model(path, format="json")`): symmetric trees over
 * float and one-hot categorical features. Messages look like "model.json:
 * oblivious_trees[3].splits[1]: a split on a CTR ...".
 */
HForest *front_read_catboost(const char *name, const char *text, size_t len, bool mapped, Error *e);

/*
 * Read an XGBoost UBJSON model (XGBoost 2.x/3.x `save_model("m.ubj")`) from
 * bytes[0..len): the same reader as the JSON one, over the UBJSON document; errors in
 * the encoding name the byte offset ("model.ubj: offset 812: ...").
 */
HForest *front_read_xgboost_ubjson(const char *name, const char *bytes, size_t len, bool mapped, Error *e);

/*
 * The readers' error: e gets "name: place" and the message fmt formats from ap (place
 * is "" or ends in ": "). Returns false.
 */
bool front_fail(Error *e, const char *name, const char *place, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/*
 * A model reader: the contents bytes[0..len) of file `name` -> HIR, or NULL with e
 * filled. mapped: bytes are a read-only private mapping of the file (readers that go
 * through it in order may drop its pages behind them; the others ignore it).
 */
typedef HForest *FrontReader(const char *name, const char *bytes, size_t len, bool mapped, Error *e);

/*
 * The sizes grove accepts in a model (`--limit NAME=N,...` overrides them). Readers
 * never allocate more than the file's contents justify, so these bound what a model
 * that is well-formed but huge costs later: rows of num_features floats, scratch memory
 * per output, code and buffers per tree and node.
 */
typedef struct FrontLimits {
	uint64_t features; /* columns of a row (default 2^22; the representations take up to 2^26 - 1) */
	uint64_t outputs;  /* margins per row: classes or targets (default 65,536, the readers' own bound) */
	uint64_t trees;    /* default 2^24 */
	uint64_t nodes;    /* all trees' nodes together (default 2^30) */
	uint64_t stream;   /* bytes read from a model file that is not a regular one, which has no size: a pipe, a
	                      device (default 2^30; a regular file is mapped, whatever its size) */
} FrontLimits;

#define FRONT_LIMIT_NAMES "features, outputs, trees, nodes, stream"

/* The default limits. */
FrontLimits front_default_limits(void);
/* Whether f has features and fits the limits l; e names the first it exceeds (path: where f came from) and how to
 * raise it. */
bool front_check_limits(const HForest *f, FrontLimits l, const char *path, Error *e);
/* Apply "NAME=N,NAME=N" (names from FRONT_LIMIT_NAMES) to l; false with a message on a bad list. */
bool front_limits_parse(FrontLimits *l, const char *text, Error *e);

/*
 * Read a model file. `format` names its format (--format: catboost, xgboost,
 * xgboost-ubj, lightgbm, onnx), or is NULL to recognise it from the contents; limits is NULL for the
 * defaults. Returns NULL and fills e on failure, also for a model past the limits.
 */
HForest *front_read_model(const char *path, const char *format, const FrontLimits *limits, Error *e);
/* front_read_model for the contents bytes[0..length) of a file named path. */
HForest *front_read_bytes(const char *path, const char *bytes, size_t length, const char *format,
                          const FrontLimits *limits, Error *e);
/* Whether `format` is the name of a format front_read_model knows. */
bool front_format_known(const char *format);
/* The name of the i-th format of the table of readers, NULL past the last. */
const char *front_format_name(size_t i);
/* The names of the formats, "catboost, xgboost, xgboost-ubj, lightgbm or onnx" (from the table of readers), for messages. */
const char *front_format_names(void);

/* For the readers: the text a category value that is a number stands as ("10", "2.5"), malloc'ed. */
char *front_number_text(double x);
/*
 * For the LightGBM reader: the pandas_categorical of model text[0..len) (the categories of
 * each pandas categorical column it was trained on), a line of its text after its trees
 * (from text[tail]), as f's category values, where its lists can be placed
 * (front/lightgbm_categories.c).
 */
bool front_lightgbm_categories(HForest *f, const char *name, const char *text, size_t tail, size_t len, Error *e);

#endif
