#!/usr/bin/env python3
"""Generate the fixtures of numbers at the edges (tests/models/edges/).

Trained models have no infinite, signed-zero or subnormal thresholds and no leaves near
the largest float, so these are trained models edited (XGBoost JSON, LightGBM text) or
built by hand (ONNX, with gen_onnx.py's helpers); the expected values are always the
library's own prediction from the edited file (onnxruntime for ONNX), never computed here.

  xgb_edges          XGBoost JSON, reg:squarederror: thresholds +-inf, +-0, float32
                     subnormals (1.4e-45, 1e-40), the smallest normal and +-FLT_MAX, with
                     default_left either way; leaves of +3e38 and FLT_MAX whose sums
                     overflow to +inf
  xgb_edges_logistic XGBoost UBJSON, binary:logistic: the same thresholds, leaves of -3e38
                     and -FLT_MAX (margins of -inf, probabilities 0)
  xgb_edges_softprob XGBoost JSON, multi:softprob: the same thresholds; leaves of 3e38 in two
                     trees of class 0, whose margin overflows to inf: XGBoost's softmax then
                     gives NaN for every class (so do grove's)
  xgb_edges_cat      XGBoost JSON, categorical splits; categories +-inf, +-0, subnormals,
                     +-FLT_MAX, 2^24 - 1, 2^24, 2^31, -1, NaN and NaN with payloads
  lgb_edges          LightGBM text, rows of doubles: thresholds +-inf, +-0, double and float32
                     subnormals, +-1e-35 (kZeroThreshold), +-DBL_MAX, under the three
                     missing types with default left and right; leaves of +-1e300 and
                     1.5e308 (sums overflowing to +inf); a categorical feature with
                     categories +-inf, -0, subnormals, 2^31, 1e300 and NaN
  lgb_edges_f32      the same model on the same rows rounded to float32 (grove_predict)
  lgb_wide_cat       LightGBM text, three categorical features: one of identifiers up to 10^5 (sets of
                     thousands of words, too unequal for padding every set to the widest), two of 12 and 20
  onnx_edges         ONNX TreeEnsembleRegressor (floats): every comparison mode at +-inf,
                     +-0, subnormal and +-FLT_MAX thresholds, missing_value_tracks_true
                     either way; leaves of +-3e38 overflowing to +-inf
  onnx_edges_double  the same with *_as_tensor doubles on double rows: double subnormal
                     thresholds, +-DBL_MAX, leaves of +-1e300 and 1e308

Rows: random rows; rows with each threshold's feature exactly on the threshold and on its
neighbours (float32 nextafter up and down; for double rows also the double neighbours);
rows with one feature, and rows with every feature, set to +-inf, +-0, subnormals, the
largest finite values, NaN, -NaN and NaN with payloads (written "nan(0x123)", which
grove's CSV reader (strtof/strtod) reads with its payload; the library gets the same
bits, and the script checks that each payload NaN predicts as plain NaN does).

XGBoost's DMatrix refuses rows with infinities ("Input data contains `inf`"), so its
expected values come from Booster.inplace_predict, XGBoost's own predictor on the same
arrays, checked against DMatrix predictions on the rows without infinities.

It also writes tests/bad/onnx/nan_threshold and infinite_weight: onnxruntime runs them,
grove refuses them (as it refuses NaN thresholds and infinite leaves in every format).

Files per fixture: the model, NAME.rows.csv ("%.9g" for float rows, "%.17g" for double
rows, plain NaN as an empty field), NAME.pred.csv and NAME.margin.csv ("%.17g"; inf and
-inf as such). manifest.json lists them in the schema of fixtures() in tests/run.py.

  /work/venv/bin/python tests/gen/gen_edges.py

Seeds are fixed and training is single-threaded: given library versions write the same files.
"""

import json
import math
import os
import re
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "models", "edges")
BAD = os.path.join(HERE, "..", "bad")
INF = math.inf
NAN = math.nan
F32_MAX = float(np.finfo(np.float32).max)
F32_TINY = float(np.float32(2.0 ** -149))        # the smallest float32 subnormal, 1.4e-45
F32_SUB = float(np.float32(1e-40))                # a float32 subnormal
F32_NORMAL = float(np.finfo(np.float32).tiny)     # the smallest normal float32
F64_TINY = 5e-324                                 # the smallest double subnormal
F64_MAX = sys.float_info.max

# Thresholds at the edges of float32, for models that compare floats.
F32_THRESHOLDS = [INF, -INF, -0.0, 0.0, F32_TINY, -F32_TINY, F32_SUB, -F32_SUB, F32_NORMAL, F32_MAX, -F32_MAX]
# And of double, for models that compare doubles.
F64_THRESHOLDS = [INF, -INF, -0.0, 0.0, F64_TINY, -F64_TINY, 1e-310, -1e-310, F32_TINY, -F32_SUB, 1e-35, -1e-35,
                  F64_MAX, -F64_MAX]

# NaNs as bit patterns: float32 and double, each quiet (strtof and strtod give only quiet NaNs), with the text that
# grove's CSV reader turns into exactly these bits.
NAN32 = [(0x7FC00000, ""), (0xFFC00000, "-nan"), (0x7FC00123, "nan(0x123)"), (0xFFC00123, "-nan(0x123)"),
         (0x7FFFFFFF, "nan(0x3fffff)")]
NAN64 = [(0x7FF8000000000000, ""), (0xFFF8000000000000, "-nan"), (0x7FF8000000000123, "nan(0x123)"),
         (0xFFF8000000000123, "-nan(0x123)"), (0x7FFFFFFFFFFFFFFF, "nan(0x7ffffffffffff)")]


def nan32(bits):
    return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])  # float32 -> double keeps the payload


def nan64(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def bits32(v):
    return int(np.array([v], dtype=np.float32).view(np.uint32)[0])


def bits64(v):
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def nans(f64):
    return [nan64(b) for b, _ in NAN64] if f64 else [nan32(b) for b, _ in NAN32]


def special_values(f64):
    """What every feature of some rows gets: the edges of the rows' type and NaNs of every kind."""
    values = [INF, -INF, -0.0, 0.0, F32_TINY, -F32_TINY, F32_SUB, -F32_SUB, F32_NORMAL, 3e38, -3e38, F32_MAX, -F32_MAX,
              1e30, -1e30]
    if f64:
        values += [F64_TINY, -F64_TINY, 1e-310, 1e308, -1e308, F64_MAX, -F64_MAX, 1e-35, -1e-35]
    return values + nans(f64)


def neighbours(t, f64):
    """t and the values beside it: float32 nextafter up and down, and for double rows the double ones too."""
    f = np.float32(t)
    out = [float(f), float(np.nextafter(f, np.float32(INF))), float(np.nextafter(f, np.float32(-INF)))]
    if f64:
        out += [t, float(np.nextafter(t, INF)), float(np.nextafter(t, -INF))]
    return sorted(set(out), key=lambda v: (v, math.copysign(1, v)))


def edge_rows(rng, base, splits, f64, categorical=()):
    """Rows from base (random rows): each split's feature on and beside its threshold, then each special value in
    one feature (in turn) and in every feature."""
    rows = [r.copy() for r in base]
    for feature, t in splits:
        for v in neighbours(t, f64):
            row = base[rng.integers(len(base))].copy()
            row[feature] = v
            rows.append(row)
    width = base.shape[1]
    specials = special_values(f64)
    for j in range(width):
        extra = [16777215.0, 16777216.0, 2.0 ** 31, 1e10, -1.0, 0.5, 2.5] if j in categorical else []
        for v in specials + extra:
            row = base[rng.integers(len(base))].copy()
            row[j] = v
            rows.append(row)
    for v in specials:
        rows.append(np.full(width, v))
    return np.array(rows, dtype=np.float64 if f64 else np.float32)


def field(v, f64):
    """v as grove's CSV reader must read it: NaNs by their bits, inf as inf, numbers exact."""
    if math.isnan(v):
        table = dict(NAN64) if f64 else dict(NAN32)
        bits = bits64(v) if f64 else bits32(v)
        assert bits in table, hex(bits)
        return table[bits]
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return "%.17g" % v if f64 else "%.9g" % v


def write_rows(path, X, f64):
    with open(path, "w") as f:
        for row in X:
            f.write(",".join(field(float(v), f64) for v in row) + "\n")


def write_matrix(path, Y):
    Y = np.asarray(Y, dtype=np.float64).reshape(len(Y), -1)
    with open(path, "w") as f:
        for row in Y:
            f.write(",".join("nan" if math.isnan(v) else "%.17g" % v for v in row) + "\n")


def check_payloads(name, predict, X, f64):
    """Every row holding a NaN predicts as the same row with plain NaNs does."""
    plain = X.copy()
    plain[np.isnan(plain)] = np.nan
    a, b = predict(X), predict(plain)
    assert np.array_equal(a, b, equal_nan=True), f"{name}: a NaN payload changes the library's prediction"


ENTRIES = []
# The fixtures in the schedule matrix (tests/run.py's schedules group): floats and doubles, to keep it short (about
# 30 compiles each); the others run with each representation under the default schedule.
SCHEDULES = ("xgb_edges", "lgb_edges")


def save(name, model, X, pred, margin, probability, f64, num_trees, library, notes):
    base = os.path.join(OUT, name)
    write_rows(base + ".rows.csv", X, f64)
    write_matrix(base + ".pred.csv", pred)
    if margin is not None:
        write_matrix(base + ".margin.csv", margin)
    entry = {"name": name, "model": model, "probability": probability, "num_trees": num_trees,
             "schedules": name in SCHEDULES, "representations": ["array", "sparse", "reorg", "code", "breadth_first", "layered"], "library": library,
             "rows": len(X), "notes": notes}
    if f64:
        entry["f64_rows"] = True
    ENTRIES.append(entry)
    inf = int(np.isinf(np.asarray(pred, dtype=np.float64)).sum())
    print(f"{name}: {num_trees} trees, {len(X)} rows, {inf} infinite predictions")


# ----------------------------------------------------------------------------- XGBoost

def xgb_train(xgb, objective, categorical=False):
    rng = np.random.default_rng(20261124 + len(objective) + categorical)
    X = rng.normal(size=(1500, 4)).astype(np.float32)
    types = ["q"] * 4
    if categorical:
        X[:, 0] = rng.integers(0, 24, len(X))
        types[0] = "c"
    X[rng.random(X.shape) < 0.05] = np.nan
    Z = np.nan_to_num(X, nan=0.0)
    y = Z[:, 1] - 0.7 * Z[:, 2] + 0.5 * Z[:, 3] + (np.sin(Z[:, 0] * 1.7) if categorical else Z[:, 0])
    if objective == "binary:logistic":
        y = (y > 0).astype(np.float32)
    if objective == "multi:softprob":
        y = np.digitize(y, [-0.7, 0.7]).astype(np.float32)
    params = {"num_class": 3} if objective == "multi:softprob" else {}
    params.update({"nthread": 1, "seed": 7, "tree_method": "hist", "max_depth": 3, "eta": 0.3, "objective": objective,
              "max_cat_to_onehot": 1})
    d = xgb.DMatrix(X, label=y, missing=np.nan, feature_types=types, enable_categorical=True)
    return xgb.train(params, d, num_boost_round=2 if objective == "multi:softprob" else 5), types, rng


def xgb_edit(model, leaf_values):
    """Numerical thresholds from F32_THRESHOLDS in turn, default_left alternating; in the first two trees of output 0
    every other leaf gets leaf_values in turn (one sign per model, so that no two huge leaves cancel in an
    order-dependent way; two of them overflow the output's sum to inf)."""
    k = 0
    splits = []
    gbtree = model["learner"]["gradient_booster"]["model"]
    huge = [t for t, output in enumerate(gbtree["tree_info"]) if output == 0][:2]
    for t, tree in enumerate(gbtree["trees"]):
        leaves = 0
        for i, left in enumerate(tree["left_children"]):
            if left == -1:
                if t in huge and leaves % 2 == 0:
                    tree["split_conditions"][i] = leaf_values[(leaves // 2) % len(leaf_values)]
                leaves += 1
            elif tree["split_type"][i] == 0:
                threshold = F32_THRESHOLDS[k % len(F32_THRESHOLDS)] if k % 4 != 3 else tree["split_conditions"][i]
                tree["split_conditions"][i] = threshold
                tree["default_left"][i] = k % 2
                splits.append((tree["split_indices"][i], threshold))
                k += 1
    return splits


def xgboost_fixture(xgb, name, objective, file, leaf_values, categorical=False, notes=""):
    booster, types, rng = xgb_train(xgb, objective, categorical)
    model = json.loads(booster.save_raw("json"))
    splits = xgb_edit(model, leaf_values) if not categorical else []
    path = os.path.join(OUT, file)
    tmp = path + ".tmp.json"
    with open(tmp, "w") as f:
        json.dump(model, f, separators=(",", ":"))
    edited = xgb.Booster(model_file=tmp)  # the library reads the edited model (JSON writes Infinity, -0.0, 1e-45)
    os.remove(tmp)
    edited.save_model(path)
    edited = xgb.Booster(model_file=path)
    if categorical:
        for tree in model["learner"]["gradient_booster"]["model"]["trees"]:
            splits += [(f, c) for f, c, l, s in zip(tree["split_indices"], tree["split_conditions"], tree["left_children"],
                                                  tree["split_type"]) if l != -1 and s == 0]
    base = rng.normal(size=(40, 4)).astype(np.float32)
    if categorical:
        base[:, 0] = rng.integers(0, 26, len(base))
    base[rng.random(base.shape) < 0.05] = np.nan
    X = edge_rows(rng, base, splits, False, categorical=(0,) if categorical else ())

    def predict(rows, margin=False):
        return np.asarray(edited.inplace_predict(rows, missing=np.nan, predict_type="margin" if margin else "value"),
                          dtype=np.float64)

    pred, margin = predict(X), predict(X, True)
    finite = np.all(np.isfinite(X) | np.isnan(X), axis=1)  # DMatrix refuses infinities
    d = xgb.DMatrix(X[finite], missing=np.nan, feature_types=types, enable_categorical=True)
    assert np.array_equal(np.asarray(edited.predict(d, output_margin=True), np.float64), margin[finite], equal_nan=True)
    check_payloads(name, lambda r: predict(r, True), X, False)
    save(name, file, X, pred, margin, objective in ("binary:logistic", "multi:softprob"), False, len(model["learner"]["gradient_booster"]
         ["model"]["trees"]), "xgboost " + xgb.__version__ + " (inplace_predict)", notes)


# ----------------------------------------------------------------------------- LightGBM

def lgb_edit(text):
    """Numerical thresholds from F64_THRESHOLDS in turn, missing types None/Zero/NaN and default left/right in turn;
    tree 0's leaves 0 and 1 +-1e300, trees 1 and 2 a leaf of 1.5e308 each (their sum overflows to inf)."""
    text = re.sub(r"\ntree_sizes=[^\n]*", "", text)  # byte sizes of the trees, which the edits change
    k = 0
    splits = []
    blocks = text.split("\nTree=")
    for b in range(1, len(blocks)):
        lines = blocks[b].split("\n")
        keys = {line.split("=", 1)[0]: i for i, line in enumerate(lines) if "=" in line}
        get = lambda key: lines[keys[key]].split("=", 1)[1].split()  # noqa: E731
        thresholds, types, features = get("threshold"), [int(d) for d in get("decision_type")], get("split_feature")
        for i, d in enumerate(types):
            if d & 1:
                continue
            t = F64_THRESHOLDS[k % len(F64_THRESHOLDS)]
            thresholds[i] = "%.17g" % t if math.isfinite(t) else ("inf" if t > 0 else "-inf")
            types[i] = ((k // 2) % 3) << 2 | (2 if k % 2 else 0)
            splits.append((int(features[i]), t))
            k += 1
        leaves = get("leaf_value")
        t = b - 1
        if t == 0:
            leaves[:2] = ["1e+300", "-1e+300"]
        elif t in (1, 2):
            leaves[0] = "1.5e+308"
        lines[keys["threshold"]] = "threshold=" + " ".join(thresholds)
        lines[keys["decision_type"]] = "decision_type=" + " ".join(map(str, types))
        lines[keys["leaf_value"]] = "leaf_value=" + " ".join(leaves)
        blocks[b] = "\n".join(lines)
    return "\nTree=".join(blocks), splits


def lightgbm_fixture(lgb):
    rng = np.random.default_rng(20261125)
    X = rng.normal(size=(1200, 5))
    X[:, 0] = rng.integers(0, 30, len(X))
    X[rng.random(X.shape) < 0.05] = np.nan
    Z = np.nan_to_num(X, nan=0.0)
    y = np.where(np.isin(Z[:, 0], [1, 4, 9, 16, 25]), 2.0, 0.0) + Z[:, 1] - 0.5 * Z[:, 2] + 0.3 * Z[:, 3] * Z[:, 4]
    params = {"verbose": -1, "num_threads": 1, "seed": 20240, "deterministic": True, "num_leaves": 8,
              "learning_rate": 0.3, "min_data_in_leaf": 10, "min_data_per_group": 5, "cat_smooth": 1.0}
    booster = lgb.train(params, lgb.Dataset(X, label=y, categorical_feature=[0]), num_boost_round=5)
    text, splits = lgb_edit(booster.model_to_string())
    name = "lgb_edges"
    path = os.path.join(OUT, name + ".txt")
    with open(path, "w") as f:
        f.write(text)
    edited = lgb.Booster(model_file=path)
    assert "cat_threshold=" in text, "no categorical split"
    base = rng.normal(size=(30, 5))
    base[:, 0] = rng.integers(0, 32, len(base))
    rows = edge_rows(rng, base, splits, True, categorical=(0,))
    extra = []
    for v in (1e300, -1e300, 2.0 ** 31 + 1, 4294967297.0, 31.0, 32.0, 31.999999999999996):  # categories beyond int
        row = base[rng.integers(len(base))].copy()
        row[0] = v
        extra.append(row)
    rows = np.concatenate([rows, np.array(extra)])
    predict = lambda r, raw=False: np.asarray(edited.predict(r, raw_score=raw), np.float64)  # noqa: E731
    check_payloads(name, lambda r: predict(r, True), rows, True)
    pred, margin = predict(rows), predict(rows, True)
    # grove's outputs are float32 (docs/formats.md): LightGBM's doubles beyond FLT_MAX reach the caller as +-inf.
    # The library's values are written rounded to float32, which changes no finite value by more than 6e-8.
    beyond = int(np.sum(np.isfinite(margin) & (np.abs(margin) > F32_MAX)))
    pred, margin = (np.asarray(v, np.float32).astype(np.float64) for v in (pred, margin))
    print(f"{name}: {beyond} margins beyond FLT_MAX (written as +-inf, their float32 rounding)")
    save(name, name + ".txt", rows, pred, margin, False, True, edited.num_trees(), "lightgbm " + lgb.__version__,
         "edited thresholds, missing types, huge leaves; categorical feature 0; expected values rounded to float32")
    # The same model on float32 rows (grove_predict): LightGBM gets the floats as doubles.
    rows32 = rows.astype(np.float32)
    pred, margin = (np.asarray(predict(rows32.astype(np.float64), raw), np.float32).astype(np.float64)
                    for raw in (False, True))
    save(name + "_f32", name + ".txt", rows32, pred, margin, False, False, edited.num_trees(),
         "lightgbm " + lgb.__version__, "lgb_edges on its rows rounded to float32; expected values rounded to float32")


def lightgbm_wide_cat_fixture(lgb):
    rng = np.random.default_rng(20261202)
    ids = rng.choice(100000, 40, replace=False)
    X = rng.normal(size=(2000, 4))
    X[:, 0] = ids[rng.integers(0, len(ids), len(X))]
    X[:, 1] = rng.integers(0, 12, len(X))
    X[:, 2] = rng.integers(0, 20, len(X))
    X[rng.random(X.shape) < 0.03] = np.nan
    Z = np.nan_to_num(X, nan=0.0)
    y = (np.where(Z[:, 0] % 7 < 3, 0.3, 0.0) + np.where(np.isin(Z[:, 1], [2, 3, 5, 7, 11]), 1.0, 0.0)
         + np.where(np.isin(Z[:, 2], [1, 4, 9, 16]), 1.0, 0.0) + Z[:, 3])
    params = {"verbose": -1, "num_threads": 1, "seed": 20261, "deterministic": True, "num_leaves": 8,
              "learning_rate": 0.3, "min_data_in_leaf": 10, "min_data_per_group": 5, "cat_smooth": 1.0,
              "max_cat_to_onehot": 1}
    booster = lgb.train(params, lgb.Dataset(X, label=y, categorical_feature=[0, 1, 2]), num_boost_round=12)
    name = "lgb_wide_cat"
    path = os.path.join(OUT, name + ".txt")
    booster.save_model(path)
    text = open(path).read()
    words = [len(line.split()) for line in text.splitlines() if line.startswith("cat_threshold=")]
    assert max(words) > 1000 and sum(1 for line in text.splitlines() if line.startswith("num_cat=")) > 4, \
        "no wide category sets"
    rows = rng.normal(size=(300, 4))
    rows[:, 0] = np.where(rng.random(len(rows)) < 0.8, ids[rng.integers(0, len(ids), len(rows))],
                          rng.integers(-2, 140000, len(rows)))
    rows[:, 1] = rng.integers(-1, 40, len(rows))
    rows[:, 2] = rng.integers(-1, 40, len(rows))
    rows[rng.random(rows.shape) < 0.03] = np.nan
    pred = np.asarray(booster.predict(rows), np.float32).astype(np.float64)
    margin = np.asarray(booster.predict(rows, raw_score=True), np.float32).astype(np.float64)
    save(name, name + ".txt", rows, pred, margin, False, True, booster.num_trees(), "lightgbm " + lgb.__version__,
         "identifiers up to 10^5 as categories: sets of thousands of words; expected values rounded to float32")


# ----------------------------------------------------------------------------- ONNX

def onnx_fixtures():
    sys.path.insert(0, HERE)
    import gen_onnx as g
    from onnx import TensorProto

    S, L = g.S, g.L

    def trees(thresholds, big):
        """Four trees over 3 features: every mode at the thresholds given, tracks_true either way. Only rows with
        x[2] <= -1e30 reach the leaves of +big of trees 0 and 1, and only rows with x[2] > 1e30 their leaves of -big,
        so huge sums share a sign and the other rows keep finite margins."""
        t = thresholds
        return [
            S("BRANCH_LEQ", 2, -1e30, 0,
              S("BRANCH_LT", 0, t[0], 0, L({0: big}), S("BRANCH_GTE", 1, t[1], 1, L({0: 0.5}), L({0: big}))),
              S("BRANCH_GT", 2, 1e30, 0, L({0: -big}), S("BRANCH_GT", 0, t[2], 1, L({0: -1.0}), L({0: 0.25})))),
            S("BRANCH_GT", 2, 1e30, 0,
              S("BRANCH_EQ", 1, t[3], 0, L({0: -big}), L({0: -1.0})),
              S("BRANCH_LEQ", 2, -1e30, 0, L({0: big}), S("BRANCH_LEQ", 0, t[4], 0, L({0: 1.25}), L({0: 2.0})))),
            S("BRANCH_LEQ", 1, t[5], 1, S("BRANCH_LT", 2, t[6], 0, L({0: 0.125}), L({0: -0.75})),
              S("BRANCH_GTE", 0, t[7], 0, L({0: 1.5}), S("BRANCH_EQ", 0, t[8], 1, L({0: 3.0}), L({0: -3.0})))),
            S("BRANCH_GT", 1, t[9], 1, S("BRANCH_LEQ", 2, t[10], 1, L({0: 0.0625}), L({0: -0.0625})),
              S("BRANCH_LT", 0, t[11 % len(t)], 1, L({0: 1.0}), L({0: -2.0}))),
        ]

    def splits_of(tree):
        if tree[0] == "leaf":
            return []
        return [(tree[1], tree[2])] + splits_of(tree[4]) + splits_of(tree[5])

    rng = np.random.default_rng(20261126)
    for name, f64 in (("onnx_edges", False), ("onnx_edges_double", True)):
        if f64:
            ts = [INF, -0.0, F64_TINY, 0.0, -INF, -F64_TINY, 1e-310, F64_MAX, -0.0, -F64_MAX, 1e-35, F32_TINY]
            big = 1e300
        else:
            ts = [INF, -0.0, F32_TINY, 0.0, -INF, -F32_TINY, F32_SUB, F32_MAX, -0.0, -F32_MAX, -F32_SUB, F32_NORMAL]
            big = 3e38
        forest = trees(ts, big)
        if f64:  # two more trees whose 1e308 leaves overflow a double sum to +inf
            forest += [S("BRANCH_GTE", 0, 1e300, 0, L({0: 1e308}), L({0: 0.0}))] * 2
        node = g.regressor(forest, 1, [0.5], doubles=f64)
        model = g.graph(node, 3, 1, TensorProto.DOUBLE if f64 else TensorProto.FLOAT)
        model.graph.name = name
        import onnx
        onnx.checker.check_model(model)
        with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
            f.write(model.SerializeToString())
        splits = [s for tree in forest for s in splits_of(tree)]
        base = rng.normal(size=(30, 3)).astype(np.float64 if f64 else np.float32)
        rows = edge_rows(rng, base, splits, f64)
        predict = lambda r, m=model: g.run(m, r)  # noqa: E731
        check_payloads(name, predict, rows, f64)
        save(name, name + ".onnx", rows, predict(rows), None, False, f64, len(forest),
             "onnxruntime " + g.rt.__version__, "hand-built: every mode at edge thresholds, huge leaves")


def onnx_bad():
    """tests/bad/onnx: a NaN threshold and an infinite weight. onnxruntime runs both (NaN takes every comparison's
    false branch; the weight makes the sum inf); grove refuses them, as its XGBoost and LightGBM readers refuse NaN
    thresholds and infinite leaves (tests/bad/nan_threshold.json, tests/bad/lightgbm/infinite_leaf.txt, ...)."""
    sys.path.insert(0, HERE)
    import gen_onnx as g
    rows = np.array([[0.25, 0.0], [0.75, 0.0], [np.nan, 0.0]], dtype=np.float32)
    cases = {
        "nan_threshold": ([g.S("BRANCH_LEQ", 0, NAN, 0, g.L({0: 1.0}), g.L({0: 2.0}))],
                          "TreeEnsembleRegressor.nodes_values[0]: threshold is NaN"),
        "infinite_weight": ([g.S("BRANCH_LEQ", 0, 0.5, 0, g.L({0: INF}), g.L({0: 2.0}))],
                            "TreeEnsembleRegressor.target_weights[0]: weight is infinite"),
    }
    for name, (tree, message) in cases.items():
        model = g.graph(g.regressor(tree, 1), 2, 1)
        print(f"bad/onnx/{name}: onnxruntime predicts {g.run(model, rows).ravel().tolist()}; grove refuses it")
        with open(os.path.join(BAD, "onnx", name + ".onnx"), "wb") as f:
            f.write(model.SerializeToString())
        with open(os.path.join(BAD, "onnx", name + ".err"), "w") as f:
            f.write(message + "\n")


def main():
    np.seterr(over="ignore")  # nextafter and float32 casts of the largest values overflow on purpose
    import lightgbm as lgb
    import xgboost as xgb
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    xgboost_fixture(xgb, "xgb_edges", "reg:squarederror", "xgb_edges.json", [3e38, F32_MAX],
                    notes="edited thresholds and default_left; leaves of 3e38 and FLT_MAX")
    xgboost_fixture(xgb, "xgb_edges_logistic", "binary:logistic", "xgb_edges_logistic.ubj", [-3e38, -F32_MAX],
                    notes="UBJSON; edited thresholds; leaves of -3e38 and -FLT_MAX")
    xgboost_fixture(xgb, "xgb_edges_softprob", "multi:softprob", "xgb_edges_softprob.json", [3e38],
                    notes="3 classes; class 0's margin overflows to inf in some rows, where XGBoost's softmax gives NaN")
    xgboost_fixture(xgb, "xgb_edges_cat", "reg:squarederror", "xgb_edges_cat.json", [], categorical=True,
                    notes="categorical feature 0 with edge categories in the rows")
    lightgbm_fixture(lgb)
    lightgbm_wide_cat_fixture(lgb)
    onnx_fixtures()
    onnx_bad()
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(ENTRIES, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
