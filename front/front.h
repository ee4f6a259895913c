/* Model readers: each turns a file in a training library's format into HIR. */
#ifndef GROVE_FRONT_FRONT_H
#define GROVE_FRONT_FRONT_H

#include "ir/hir.h"

/*
 * Read an XGBoost JSON model (gbtree booster; XGBoost 1.x, 2.x and 3.x) from
 * text[0..len). `name` is used in messages, which look like
 * "model.json: trees[3].left_children[7]: index 912 out of range".
 * Returns NULL and fills e on bad input.
 */
HForest *front_read_xgboost_json(const char *name, const char *text, size_t len, Error *e);

/*
 * Read an ONNX model (a protobuf) whose graph holds one ai.onnx.ml tree ensemble:
 * TreeEnsembleRegressor or TreeEnsembleClassifier (opsets 1-3) or TreeEnsemble (opset
 * 5). Messages look like "model.onnx: TreeEnsembleRegressor.nodes_modes[7]: unknown
 * mode 'BRANCH_XX'". Returns NULL and fills e on bad input.
 */
HForest *front_read_onnx(const char *name, const char *bytes, size_t len, Error *e);

/* Read a model file, choosing the reader from its contents. Returns NULL and fills e on failure. */
HForest *front_read_model(const char *path, Error *e);

#endif
