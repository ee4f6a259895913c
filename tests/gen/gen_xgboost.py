#!/usr/bin/env python3
"""Generate the XGBoost fixtures of grove's end-to-end tests (tests/models/).

For every spec in SPECS this trains a small model with the XGBoost that the
running interpreter has, and writes, under the name NAME = SPEC.xN (N is the
XGBoost major version, so models of several versions live side by side):

  NAME.json        the model, from booster.save_model("NAME.json")
  NAME.rows.csv    the input rows: no header, float32 values printed "%.9g",
                   a missing value as an empty field, or as the literal "nan"
                   in a few rows (so both spellings are tested)
  NAME.pred.csv    booster.predict(DMatrix(rows, missing=nan)), "%.9g"; one
                   line per row, a multi:softprob line holds the class
                   probabilities, a multi:softmax line the class index
  NAME.margin.csv  the same with output_margin=True

and merges one entry per model into tests/models/manifest.json, which
tests/run.py reads (extra keys beyond name/objective/xgboost/num_feature/
num_class/rows/probability/notes are informative).

Re-run it with both XGBoost versions, from the repository root:

  python3 tests/gen/gen_xgboost.py           # pip's xgboost 3.x  -> *.x3.*
  /usr/bin/python3 tests/gen/gen_xgboost.py  # Debian's 1.7.4      -> *.x1.*

(Debian's: apt-get install python3-xgboost; pip's: pip install xgboost numpy.)
Seeds are fixed and training is single-threaded, so a given XGBoost version
writes the same files every time.

  python3 tests/gen/gen_xgboost.py --check

reloads every model in the manifest with this interpreter's XGBoost (so also
the other version's models), predicts its rows.csv and reports how far that is
from pred.csv and margin.csv. It only reports; it never fails on a mismatch.
"""

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass, field

import numpy as np
import xgboost as xgb

MODELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
MANIFEST = "manifest.json"
NAN = float("nan")


@dataclass
class Spec:
    name: str
    objective: str
    labels: str  # which make_labels() recipe
    num_feature: int = 8
    rounds: int = 10
    params: dict = field(default_factory=dict)  # extra training parameters
    n_train: int = 1000
    n_rows: int = 100  # random prediction rows, before the threshold rows
    missing: float = 0.1  # fraction of missing values, in training and prediction rows
    train_missing: float = None  # in training rows, where not `missing`
    default_left: int = None  # 0 or 1: every split of the saved model edited to send missing values that way
    integer_features: bool = True  # every third feature integer-valued (thresholds of 0 among them)
    schedules: bool = True  # part of the schedule matrix (its x3 copy)
    checks: dict = field(default_factory=dict)  # see check_model()
    notes: str = ""
    representations: list = None  # also compiled with --representation R (tests/run.py: NAME.R)


# The table of models. The "checks" are asserted on the saved JSON.
SPECS = [
    Spec("reg_squarederror", "reg:squarederror", "regression",
         params={"max_depth": 4, "tree_method": "exact"},
         notes="exact tree method: thresholds are midpoints between training values"),
    Spec("reg_logistic", "reg:logistic", "fraction", rounds=12, params={"max_depth": 3},
         notes="labels are fractions in [0, 1]"),
    Spec("binary_logistic", "binary:logistic", "binary", rounds=20, params={"max_depth": 3}),
    Spec("binary_logitraw", "binary:logitraw", "binary", rounds=15, params={"max_depth": 3},
         notes="prediction is the raw margin"),
    Spec("multi_softprob3", "multi:softprob", "multiclass", rounds=8,
         params={"num_class": 3, "max_depth": 3},
         notes="3 classes; 8 rounds x 3 trees"),
    Spec("multi_softprob7", "multi:softprob", "multiclass", num_feature=10, rounds=4,
         params={"num_class": 7, "max_depth": 3}, n_train=1400,
         notes="7 classes; 4 rounds x 7 trees"),
    Spec("multi_softmax", "multi:softmax", "multiclass", rounds=4,
         params={"num_class": 5, "max_depth": 3},
         notes="5 classes; pred.csv is the class index, margin.csv the 5 margins"),
    Spec("count_poisson", "count:poisson", "poisson", rounds=15, params={"max_depth": 3},
         notes="labels are Poisson counts"),
    Spec("reg_gamma", "reg:gamma", "gamma", rounds=15, params={"max_depth": 3},
         notes="labels are positive, gamma distributed"),
    Spec("reg_tweedie", "reg:tweedie", "tweedie", rounds=15,
         params={"max_depth": 3, "tweedie_variance_power": 1.5},
         notes="labels are compound Poisson-gamma: >= 0, about a third exactly 0"),
    Spec("missing_directions", "reg:squarederror", "missing_directions", num_feature=4,
         rounds=8, params={"max_depth": 3}, missing=0.0, n_train=1200,
         checks={"default_left_both": True},
         notes="f0 missing => large label (default right), f1 missing => small label (default left)"),
    Spec("nan_right", "multi:softprob", "multiclass", rounds=6, params={"num_class": 3, "max_depth": 4},
         train_missing=0.0, integer_features=False, checks={"default_left_all": 0},
         notes="trained on rows without missing values: every split sends them right, and with no integer "
               "features no threshold is 0, so grove's compares decide them (lower/hir_narrow.c); prediction "
               "rows 10% missing"),
    Spec("nan_left", "reg:squarederror", "regression", rounds=10, params={"max_depth": 4}, default_left=1,
         integer_features=False, schedules=False, checks={"default_left_all": 1},
         notes="every split's default_left set to 1 in the saved model; predictions from the edited file (not in "
               "the schedule matrix: nan_right is)"),
    Spec("stumps", "binary:logistic", "binary", rounds=30, params={"max_depth": 1},
         checks={"max_depth": 1}, notes="max_depth=1"),
    Spec("deep", "reg:squarederror", "deep_chain", num_feature=4, rounds=5,
         params={"max_depth": 16, "eta": 0.5, "base_score": 0.0}, n_train=2000, missing=0.02,
         checks={"min_depth": 14},
         notes="max_depth=16, trees reach depth >= 14; base_score=0 explicit"),
    Spec("depth_groups", "reg:squarederror", "regression", rounds=40, params={"max_depth": 8, "gamma": 1.0},
         checks={"num_trees": 40},
         notes="min_split_loss=1: later trees stop early (many a single leaf), a few are deep; grove's schedule "
               "walks them in depth groups", representations=["code"]),
    Spec("single_tree", "reg:squarederror", "regression", rounds=1, params={"max_depth": 5},
         checks={"num_trees": 1}, notes="num_boost_round=1"),
    Spec("one_feature", "reg:squarederror", "regression", num_feature=1, rounds=10,
         params={"max_depth": 3}, n_train=600,
         notes="one feature; missing is always spelled nan (an empty field would be an empty line)"),
    Spec("wide500", "binary:logistic", "binary", num_feature=500, rounds=5,
         params={"max_depth": 4}, n_train=1000, n_rows=50, missing=0.8,
         notes="500 features, 80% missing"),
    Spec("dart", "binary:logistic", "binary", rounds=12,
         params={"booster": "dart", "max_depth": 3, "rate_drop": 0.5, "skip_drop": 0.0},
         checks={"dart_weights": True}, notes="booster=dart; weight_drop scales each tree"),
    Spec("base_score", "binary:logistic", "binary", rounds=10,
         params={"max_depth": 3, "base_score": 0.3}, notes="base_score=0.3 set explicitly"),
    Spec("lossguide_words", "reg:squarederror", "every_feature", num_feature=28, rounds=6,
         params={"grow_policy": "lossguide", "max_depth": 0, "max_leaves": 255}, n_train=4000, default_left=1,
         checks={"default_left_all": 1}, representations=["sparse"],
         notes="lossguide, 255 leaves, every split sending missing values left: the sparse layout's word copy "
               "(RepLayout.child_word) for rows side by side, lone rows its first copy"),
    Spec("lossguide_nan_words", "reg:squarederror", "every_feature", num_feature=28, rounds=6,
         params={"grow_policy": "lossguide", "max_depth": 0, "max_leaves": 255}, n_train=4000,
         checks={"default_left_both": True}, representations=["sparse"],
         notes="lossguide, 255 leaves, splits sending missing values either way: rows' keys less one in columns "
               "of their own (RepLayout.nan_columns) under the word copy and the tops"),
    Spec("one_feature_deep", "reg:squarederror", "regression", num_feature=1, rounds=8,
         params={"grow_policy": "lossguide", "max_depth": 0, "max_leaves": 48}, n_train=3000, default_left=1,
         schedules=False, representations=["sparse"],
         notes="one feature, lossguide: the word copy's placement takes too many slots (children 256 apart), "
               "and the sparse layout keeps its first copy alone"),
    Spec("deep_lossguide", "reg:squarederror", "deeper_chain", num_feature=4, rounds=5,
         params={"grow_policy": "lossguide", "max_depth": 0, "max_leaves": 255, "base_score": 0.0}, n_train=4000,
         schedules=False, representations=["sparse"],
         notes="lossguide on 40 bands of labels, leaves past depth 20: walks of rows side by side that finish together "
               "take all their blocks of straight steps and then a loop (lower_walks.c, finish_together)"),
    Spec("random_forest", "reg:squarederror", "regression", rounds=3,
         params={"max_depth": 4, "num_parallel_tree": 3, "eta": 1.0, "subsample": 0.7,
                 "colsample_bynode": 0.7},
         checks={"num_trees": 9}, notes="num_parallel_tree=3, 3 rounds"),
]

BASE_PARAMS = {"nthread": 1, "seed": 20240, "tree_method": "hist", "eta": 0.3}
PROBABILITY_OBJECTIVES = {"binary:logistic", "reg:logistic", "multi:softprob"}


# ----------------------------------------------------------------------------- data

def version_tag():
    return "x" + xgb.__version__.split(".")[0]


def spec_seed(spec):
    """A seed of the spec's name only, so the data is the same for every XGBoost version."""
    return sum((i + 1) * ord(c) for i, c in enumerate(spec.name))


def make_features(rng, n, num_feature, missing, integer_features=True):
    """float32 features: normal, every third one integer-valued unless not integer_features; a fraction NaN."""
    X = rng.normal(size=(n, num_feature))
    if integer_features:
        X[:, 2::3] = np.round(X[:, 2::3] * 3.0)
    X = X.astype(np.float32)
    if missing > 0:
        X[rng.random(X.shape) < missing] = np.nan
    return X


def linear_score(X, k=0):
    """A fixed smooth function of the first few features (NaN counts as 0)."""
    Z = np.nan_to_num(X.astype(np.float64), nan=0.0)
    m = Z.shape[1]
    f = lambda j: Z[:, (j + k) % m]
    return 0.9 * f(0) - 0.6 * f(1) + 0.4 * np.tanh(f(2)) + 0.3 * f(3 % m) * f(0) + 0.2 * np.sin(3 * f(4 % m))


def make_labels(spec, rng, X):
    kind = spec.labels
    s = linear_score(X)
    noise = rng.normal(size=len(X))
    if kind == "regression":
        return 2.0 * s + 0.3 * noise
    if kind == "fraction":
        return 1.0 / (1.0 + np.exp(-(2.0 * s + 0.3 * noise)))
    if kind == "binary":
        return (2.0 * s + noise > 0).astype(np.float64)
    if kind == "multiclass":
        k = spec.params["num_class"]
        scores = np.stack([linear_score(X, c) for c in range(k)], axis=1)
        return np.argmax(scores + 0.5 * rng.normal(size=scores.shape), axis=1).astype(np.float64)
    if kind == "poisson":
        return rng.poisson(np.exp(0.5 * s)).astype(np.float64)
    if kind == "gamma":
        return rng.gamma(shape=2.0, scale=np.exp(0.5 * s) / 2.0)
    if kind == "tweedie":
        counts = rng.poisson(1.2 * np.exp(0.4 * s))
        return np.array([rng.gamma(2.0, 0.5, size=c).sum() for c in counts])
    if kind == "missing_directions":
        return missing_direction_labels(rng, X)
    if kind == "deep_chain":
        return deep_chain_labels(rng, X)
    if kind == "deeper_chain":
        return deep_chain_labels(rng, X, bands=60, base=1.7)
    if kind == "every_feature":  # splits on every feature alike, as models of real data have them
        Z = np.nan_to_num(X.astype(np.float64), nan=0.0)
        return sum(np.sin((1.0 + 0.1 * j) * Z[:, j]) for j in range(Z.shape[1])) + 0.1 * noise
    raise ValueError(kind)


def missing_direction_labels(rng, X):
    """Labels rise with f0 and f1; rows missing f0 get large labels (so splits on f0 learn
    'missing goes right'), rows missing f1 get small ones ('missing goes left')."""
    n = len(X)
    miss0 = rng.random(n) < 0.2
    miss1 = ~miss0 & (rng.random(n) < 0.25)
    X[miss0, 0] = np.nan
    X[miss1, 1] = np.nan
    X[rng.random(n) < 0.1, 2] = np.nan
    f0 = np.nan_to_num(X[:, 0], nan=0.0)
    f1 = np.nan_to_num(X[:, 1], nan=0.0)
    y = f0 + f1 + 0.2 * rng.normal(size=n)
    y[miss0] = 4.0 + 0.2 * rng.normal(size=miss0.sum())
    y[miss1] = -4.0 + 0.2 * rng.normal(size=miss1.sum())
    return y


def deep_chain_labels(rng, X, bands=20, base=2.0):
    """f0 falls in `bands` bands k = 0..bands-1 with labels base^(k-bands/2): the best split keeps
    peeling the top band off, so a tree grows a chain as deep as max_depth; a little f1 noise adds
    side branches. (Labels near 0 and base_score=0 keep the gains far from float cancellation,
    which makes XGBoost 3.x stop early if the labels have a large common offset.)"""
    n = len(X)
    k = rng.integers(0, bands, n)
    X[:, 0] = (k + 0.5 * rng.random(n)).astype(np.float32)
    X[rng.random(n) < 0.02, 0] = np.nan
    f1 = np.nan_to_num(X[:, 1], nan=0.0)
    y = base ** (k - bands // 2) + 0.01 * f1
    return np.where(np.isnan(X[:, 0]), 0.0, y)


# ----------------------------------------------------------------------------- model JSON

def gbtree_model(model):
    booster = model["learner"]["gradient_booster"]
    return booster["gbtree"]["model"] if booster["name"] == "dart" else booster["model"]


def trees_of(model):
    return gbtree_model(model)["trees"]


def tree_weights(model):
    booster = model["learner"]["gradient_booster"]
    return booster.get("weight_drop") or [1.0] * len(trees_of(model))


def tree_depth(tree):
    left, right = tree["left_children"], tree["right_children"]
    depth, stack = 0, [(0, 0)]
    while stack:
        node, d = stack.pop()
        depth = max(depth, d)
        if left[node] != -1:
            stack += [(left[node], d + 1), (right[node], d + 1)]
    return depth


def split_nodes(model):
    """(tree, node, feature, threshold as float32, default_left) of every split."""
    out = []
    for t, tree in enumerate(trees_of(model)):
        for i, left in enumerate(tree["left_children"]):
            if left != -1:
                out.append((t, i, tree["split_indices"][i], np.float32(tree["split_conditions"][i]),
                            int(tree["default_left"][i])))
    return out


def walk_margin(model, X):
    """A reference walk of the JSON: x < threshold goes left, missing follows default_left,
    leaves summed per output (times weight_drop for DART). No base score."""
    trees, info, weights = trees_of(model), gbtree_model(model)["tree_info"], tree_weights(model)
    num_outputs = max(1, int(model["learner"]["learner_model_param"]["num_class"]))
    out = np.zeros((len(X), num_outputs), dtype=np.float64)
    for tree, group, w in zip(trees, info, weights):
        L, R, F = tree["left_children"], tree["right_children"], tree["split_indices"]
        C, D = tree["split_conditions"], tree["default_left"]
        for r, x in enumerate(X):
            n = 0
            while L[n] != -1:
                v = x[F[n]]
                n = (L[n] if D[n] else R[n]) if np.isnan(v) else (L[n] if v < np.float32(C[n]) else R[n])
            out[r, group] += w * C[n]
    return out


def check_model(spec, model):
    """Assert what the spec promises about the saved JSON."""
    trees = trees_of(model)
    depths = [tree_depth(t) for t in trees]
    checks = spec.checks
    if "num_trees" in checks:
        assert len(trees) == checks["num_trees"], (spec.name, len(trees))
    if "max_depth" in checks:
        assert max(depths) == checks["max_depth"], (spec.name, depths)
    if "min_depth" in checks:
        assert max(depths) >= checks["min_depth"], (spec.name, depths)
    if checks.get("default_left_both"):
        splits = split_nodes(model)
        f0 = {d for _, _, f, _, d in splits if f == 0}
        f1 = {d for _, _, f, _, d in splits if f == 1}
        assert 0 in f0 and 1 in f1, (spec.name, "default_left on f0", f0, "on f1", f1)
        assert {d for *_, d in splits} == {0, 1}
    if "default_left_all" in checks:
        assert {d for *_, d in split_nodes(model)} == {checks["default_left_all"]}, spec.name
    if checks.get("dart_weights"):
        assert model["learner"]["gradient_booster"]["name"] == "dart"
        assert any(w != 1.0 for w in tree_weights(model)), "every DART weight is 1"
    assert 5 <= len(trees) <= 30 or "num_trees" in checks, (spec.name, len(trees))
    return depths


# ----------------------------------------------------------------------------- rows

def threshold_rows(rng, model, base):
    """Rows whose value equals a split threshold: every tree's root split (each row reaches it)
    both at the threshold and one float32 step below, then a few deeper thresholds."""
    splits = split_nodes(model)
    roots = []
    for t, node, f, thr, _ in splits:
        if node == 0 and (f, thr) not in [(a, b) for a, b in roots]:
            roots.append((f, thr))
    roots = roots[:10]
    deeper = [(f, thr) for t, node, f, thr, _ in splits if node != 0 and (f, thr) not in roots]
    picks = [deeper[i] for i in rng.choice(len(deeper), size=6, replace=False)] if len(deeper) > 6 else deeper
    rows = []
    for f, thr in roots:
        for value in (thr, np.nextafter(thr, np.float32(-np.inf))):
            row = base[rng.integers(len(base))].copy()
            row[f] = value
            rows.append(row)
    for f, thr in picks:
        row = base[rng.integers(len(base))].copy()
        row[f] = thr
        rows.append(row)
    return np.array(rows, dtype=np.float32).reshape(-1, base.shape[1])


def prediction_rows(spec, rng, model):
    X = make_features(rng, spec.n_rows, spec.num_feature, spec.missing, spec.integer_features)
    if spec.labels in ("missing_directions", "deep_chain", "deeper_chain"):
        make_labels(spec, rng, X)  # the same missing pattern / bands as in training
    all_missing = np.full((1, spec.num_feature), np.nan, dtype=np.float32)
    return np.concatenate([X, threshold_rows(rng, model, X), all_missing]).astype(np.float32)


def nan_spelled_rows(spec, X):
    """Rows whose missing values are written "nan" rather than as an empty field."""
    if spec.num_feature == 1:
        return set(range(len(X)))
    with_missing = [i for i in range(len(X)) if np.isnan(X[i]).any()]
    return set(with_missing[1::5])


def format_value(v):
    return "%.9g" % float(v)


def write_rows(path, X, nan_rows):
    with open(path, "w") as out:
        for i, row in enumerate(X):
            spell = "nan" if i in nan_rows else ""
            out.write(",".join(spell if np.isnan(v) else format_value(v) for v in row) + "\n")


def write_matrix(path, Y):
    Y = np.asarray(Y).reshape(len(Y), -1)
    with open(path, "w") as out:
        for row in Y:
            out.write(",".join(format_value(v) for v in row) + "\n")


def read_rows(path):
    rows = []
    with open(path) as f:
        for line in f:
            rows.append([NAN if s in ("", "nan") else float(s) for s in line.rstrip("\n").split(",")])
    return np.array(rows, dtype=np.float32)


def read_matrix(path):
    return np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)


# ----------------------------------------------------------------------------- predict

def close(a, b, tol):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.abs(a - b) <= tol * np.maximum(np.abs(a), 1.0)


def predict(booster, X):
    """predict() and predict(output_margin=True), cross-checked against inplace_predict."""
    d = xgb.DMatrix(X, missing=np.nan)
    pred = booster.predict(d)
    margin = booster.predict(d, output_margin=True)
    in_pred = booster.inplace_predict(X, missing=np.nan)
    in_margin = booster.inplace_predict(X, missing=np.nan, predict_type="margin")
    assert pred.shape == in_pred.shape and close(pred, in_pred, 1e-6).all(), "inplace_predict disagrees"
    assert margin.shape == in_margin.shape and close(margin, in_margin, 1e-6).all(), "inplace margin disagrees"
    return pred, margin


def implied_base_margin(model, X, margin):
    """margin minus the walked tree sum: the base margin XGBoost really adds, per output.
    Also checks that the reference walk agrees with XGBoost up to that constant."""
    m = np.asarray(margin, np.float64).reshape(len(X), -1)
    diff = m - walk_margin(model, X)
    base = np.median(diff, axis=0)
    spread = np.abs(diff - base).max()
    return base, spread


# ----------------------------------------------------------------------------- generate

def train(spec, X, y):
    params = dict(BASE_PARAMS, objective=spec.objective, **spec.params)
    return xgb.train(params, xgb.DMatrix(X, label=y, missing=np.nan), num_boost_round=spec.rounds)


def generate(spec, tag, out_dir):
    name = "%s.%s" % (spec.name, tag)
    rng = np.random.default_rng(spec_seed(spec))
    X = make_features(rng, spec.n_train, spec.num_feature, spec.missing if spec.train_missing is None else spec.train_missing,
                      spec.integer_features)
    y = make_labels(spec, rng, X)
    booster = train(spec, X, y)

    path = os.path.join(out_dir, name + ".json")
    booster.save_model(path)
    with open(path) as f:
        model = json.load(f)
    if spec.default_left is not None:
        for tree in trees_of(model):
            tree["default_left"] = [spec.default_left] * len(tree["default_left"])
        with open(path, "w") as f:
            json.dump(model, f)
        booster = xgb.Booster(model_file=path)
    depths = check_model(spec, model)

    rows = prediction_rows(spec, rng, model)
    pred, margin = predict(booster, rows)
    write_rows(os.path.join(out_dir, name + ".rows.csv"), rows, nan_spelled_rows(spec, rows))
    write_matrix(os.path.join(out_dir, name + ".pred.csv"), pred)
    write_matrix(os.path.join(out_dir, name + ".margin.csv"), margin)

    base, spread = implied_base_margin(model, rows, margin)
    param = model["learner"]["learner_model_param"]
    num_class = int(param["num_class"])
    pred2, margin2 = np.asarray(pred).reshape(len(rows), -1), np.asarray(margin).reshape(len(rows), -1)
    entry = {
        "name": name,
        "objective": spec.objective,
        "xgboost": xgb.__version__,
        "num_feature": spec.num_feature,
        "num_class": max(num_class, 1),
        "rows": len(rows),
        "probability": spec.objective in PROBABILITY_OBJECTIVES,
        "notes": spec.notes,
        "booster": model["learner"]["gradient_booster"]["name"],
        "num_trees": len(depths),
        "max_depth": max(depths),
        "base_score": param["base_score"],
        "pred_columns": pred2.shape[1],
        "margin_columns": margin2.shape[1],
    }
    if spec.representations:
        entry["representations"] = spec.representations
    if tag == "x1" or not spec.schedules:  # the schedule matrix takes the 3.x copy of each spec: the trees are of the same kinds
        entry["schedules"] = False
    print("%-26s %-17s %-6s trees %2d depth %2d features %3d rows %3d base_score %-40s implied base margin %s (walk spread %.2g)"
          % (name, spec.objective, entry["booster"], len(depths), max(depths), spec.num_feature, len(rows),
             param["base_score"], np.array2string(base, precision=6), spread))
    return entry


def update_manifest(out_dir, entries):
    path = os.path.join(out_dir, MANIFEST)
    old = []
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
    names = {e["name"] for e in entries}
    merged = sorted([e for e in old if e["name"] not in names] + entries, key=lambda e: e["name"])
    with open(path, "w") as f:
        json.dump(merged, f, indent=1)
        f.write("\n")


# ----------------------------------------------------------------------------- cross-check

def check_all(out_dir):
    """Reload every manifest model with this XGBoost and compare to its CSVs; report only."""
    with open(os.path.join(out_dir, MANIFEST)) as f:
        entries = json.load(f)
    print("checking with xgboost", xgb.__version__)
    for e in entries:
        base = os.path.join(out_dir, e["name"])
        try:
            booster = xgb.Booster(model_file=base + ".json")
            X = read_rows(base + ".rows.csv")
            d = xgb.DMatrix(X, missing=np.nan)
            pred = np.asarray(booster.predict(d), np.float64).reshape(len(X), -1)
            margin = np.asarray(booster.predict(d, output_margin=True), np.float64).reshape(len(X), -1)
        except Exception as exc:  # an older XGBoost may not read a newer model
            print("%-26s (made by %s) cannot be loaded: %s" % (e["name"], e["xgboost"], str(exc).splitlines()[0][:150]))
            continue
        want_pred, want_margin = read_matrix(base + ".pred.csv"), read_matrix(base + ".margin.csv")
        def err(a, b):
            if a.shape != b.shape:
                return "shape %s vs %s" % (a.shape, b.shape)
            return "%.3g" % (np.abs(a - b) / np.maximum(np.abs(b), 1.0)).max()
        print("%-26s (made by %-6s) pred max rel err %-10s margin %s"
              % (e["name"], e["xgboost"], err(pred, want_pred), err(margin, want_margin)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=MODELS_DIR, help="output directory (default tests/models)")
    parser.add_argument("--check", action="store_true", help="only reload and compare every model")
    parser.add_argument("only", nargs="*", help="spec names to generate (default all)")
    args = parser.parse_args()
    out_dir = os.path.normpath(args.out)
    if args.check:
        check_all(out_dir)
        return
    os.makedirs(out_dir, exist_ok=True)
    tag = version_tag()
    specs = [s for s in SPECS if not args.only or s.name in args.only]
    print("xgboost", xgb.__version__, "numpy", np.__version__, "python", sys.version.split()[0], "->", tag)
    update_manifest(out_dir, [generate(s, tag, out_dir) for s in specs])


if __name__ == "__main__":
    main()
