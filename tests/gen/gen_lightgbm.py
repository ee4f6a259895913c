#!/usr/bin/env python3
"""Generate the LightGBM fixtures of grove's end-to-end tests (tests/models/lightgbm/).

For every spec in SPECS this trains a small model with the LightGBM that the running
interpreter has (4.x; `/work/venv/bin/python`), and writes under tests/models/lightgbm/:

  NAME.txt         the model, from booster.save_model("NAME.txt")
  NAME.rows.csv    the input rows, no header, a missing value as an empty field: float32
                   values printed "%.9g", or (f64 specs) float64 values printed "%.17g"
  NAME.pred.csv    booster.predict(X) with X the rows as float64, "%.17g"
  NAME.margin.csv  booster.predict(X, raw_score=True), except for average_output models
                   (LightGBM's raw score is then the sum, its prediction the average)

Rows: random rows like the training data, rows at and beside split thresholds (for
float32 specs the float32 values just below and above each threshold, for f64 specs
the doubles between each float64 threshold and its float32 rounding), rows of values
within 1e-35 of zero, and for categorical specs unseen, negative, fractional, huge and
NaN categories.

Every entry goes to manifest.json, which tests/run.py runs.

  python3 tests/gen/gen_lightgbm.py           # write everything
  python3 tests/gen/gen_lightgbm.py --check   # evaluate `grove dump --level hir` of every
        model with a float64 reference walk of the HIR and compare with pred/margin;
        for f64 specs also count the rows whose prediction changes when the thresholds
        are rounded to float32 (build/grove must exist)

Seeds are fixed and training is single-threaded and deterministic.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "models", "lightgbm")
ZERO = float(np.float32(1e-35))  # LightGBM's kZeroThreshold


@dataclass
class Spec:
    name: str
    objective: str
    labels: str  # which make_labels() recipe
    rounds: int = 8
    params: dict = field(default_factory=dict)
    num_feature: int = 6
    n_train: int = 800
    n_rows: int = 60
    missing: float = 0.1  # fraction of NaN in training and prediction rows
    train_missing: float = None  # in training rows, where not `missing`
    zeros: float = 0.0    # fraction of exact zeros
    categorical: tuple = ()  # feature indices that are categorical
    categories: tuple = (40, 3)  # how many categories each categorical feature takes
    f64: bool = False     # rows are float64 values that float32 cannot hold
    schedules: bool = False
    representations: tuple = ()  # also compiled with --representation R (tests/run.py: NAME.R)
    notes: str = ""


SPECS = [
    Spec("regression", "regression", "regression", schedules=True, notes="l2, NaN missing type"),
    Spec("regression_sqrt", "regression", "signed", params={"reg_sqrt": True}, notes="objective 'regression sqrt'"),
    Spec("regression_l1", "regression_l1", "regression", rounds=5),
    Spec("huber", "huber", "regression", rounds=5),
    Spec("quantile", "quantile", "regression", rounds=5, params={"alpha": 0.7}),
    Spec("fair", "fair", "regression", rounds=5),
    Spec("mape", "mape", "positive", rounds=5),
    Spec("binary", "binary", "binary", rounds=10, schedules=True, notes="sigmoid:1"),
    Spec("binary_sigmoid", "binary", "binary", rounds=10, params={"sigmoid": 1.7}, notes="sigmoid:1.7"),
    Spec("multiclass", "multiclass", "multiclass", rounds=5, params={"num_class": 3}, schedules=True),
    Spec("multiclass_one_iteration", "multiclass", "multiclass", rounds=1, params={"num_class": 4},
         notes="one tree per class"),
    Spec("multiclassova", "multiclassova", "multiclass", rounds=5, params={"num_class": 3, "sigmoid": 1.3}),
    Spec("cross_entropy", "cross_entropy", "fraction", rounds=6),
    Spec("poisson", "poisson", "poisson", rounds=6),
    Spec("gamma", "gamma", "gamma", rounds=6),
    Spec("tweedie", "tweedie", "tweedie", rounds=6, params={"tweedie_variance_power": 1.4}),
    Spec("lambdarank", "lambdarank", "rank", rounds=5),
    Spec("rank_xendcg", "rank_xendcg", "rank", rounds=5),
    Spec("missing_zero", "regression", "regression", zeros=0.3, params={"zero_as_missing": True}, schedules=True, notes="zero_as_missing: missing type Zero", representations=("code",)),
    Spec("missing_none", "regression", "regression", zeros=0.3, params={"use_missing": False},
         notes="use_missing=false: missing type None, NaN compared as 0", representations=("code",)),
    Spec("missing_nan_zeros", "binary", "binary", zeros=0.3, notes="NaN missing type with thresholds at +-1e-35", representations=("code",)),
    Spec("trained_complete", "multiclass", "multiclass", rounds=6, params={"num_class": 3}, zeros=0.1, missing=0.01,
         train_missing=0.0, n_rows=200, schedules=True,
         notes="trained without NaN (missing type None under the default use_missing), predicted on rows with some: "
               "NaN compared as 0, whole blocks of 16 rows with and without", representations=("code",)),
    Spec("categorical", "regression", "categorical", rounds=10, categorical=(0, 1), missing=0.05, schedules=True,
         params={"max_cat_to_onehot": 4, "cat_smooth": 1.0, "min_data_per_group": 5, "cat_l2": 1.0}, notes="categories 0..39 (bitsets of 2 words) and 0..2 (one-hot splits)", representations=("code",)),
    Spec("categorical_binary", "binary", "categorical", rounds=10, categorical=(0,), missing=0.05,
         params={"min_data_per_group": 5, "cat_smooth": 1.0}, representations=("code",)),
    Spec("wide_multiclass", "multiclass", "multiclass", rounds=6, params={"num_class": 3}, num_feature=40, missing=0.05,
         n_rows=200, schedules=True,
         notes="40 features, double leaves: walks read rows' keys in tiles (RepLayout.tile_words)"),
    Spec("leafwise", "regression", "regression", rounds=12, params={"num_leaves": 31, "min_data_in_leaf": 3},
         num_feature=10, n_train=3000, n_rows=200, missing=0.02, train_missing=0.0, schedules=True,
         representations=("sparse",),
         notes="LightGBM's default 31 leaves grown deep, trained without NaN (NaN compared as 0): rows side by side "
               "walk whole trees by leaf masks (lower/rep_masks.c)"),
    Spec("leafwise_nan", "binary", "binary", rounds=12, params={"num_leaves": 31, "min_data_in_leaf": 3},
         num_feature=10, n_train=3000, n_rows=200, missing=0.01, schedules=True, representations=("sparse",),
         notes="31 leaves grown deep, NaN sent either way: leaf masks for blocks of rows with and without NaN"),
    Spec("leafwise_categorical", "binary", "categorical", rounds=12, categorical=(0, 1), categories=(300, 12),
         params={"num_leaves": 31, "min_data_in_leaf": 3, "min_data_per_group": 5, "cat_smooth": 1.0},
         num_feature=10, n_train=3000, n_rows=200, missing=0.05, representations=("sparse",),
         notes="31 leaves grown deep with category sets of up to 10 words: leaf masks pick a set's word from a "
               "table of 8 or 16 (AVX2, AVX-512) or gather it where the set is wider"),
    Spec("leafwise_categorical_masks", "binary", "categorical", rounds=24, categorical=(0, 1), categories=(40, 12),
         params={"num_leaves": 31, "min_data_in_leaf": 3, "min_data_per_group": 5, "cat_smooth": 1.0},
         num_feature=10, n_train=3000, n_rows=200, missing=0.05,
         notes="as leafwise_categorical, past 512 splits: grove's schedule walks batches by leaf masks and lone rows "
               "node by node, in two versions (rows with NaN and without), all trees side by side finished together"),
    Spec("leafwise_multiclass", "multiclass", "multiclass", rounds=6,
         params={"num_class": 3, "num_leaves": 31, "min_data_in_leaf": 3}, num_feature=10, n_train=3000, n_rows=200,
         missing=0.0, train_missing=0.0, representations=("sparse",), notes="31 leaves grown deep, 3 classes"),
    Spec("rf", "regression", "regression", rounds=6, schedules=True,
         params={"boosting": "rf", "bagging_fraction": 0.7, "bagging_freq": 1, "feature_fraction": 0.8}, notes="boosting=rf: average_output; no margin.csv (see the docstring)"),
    Spec("constant", "regression", "regression", rounds=3, params={"min_data_in_leaf": 5000},
         notes="every tree is a single leaf"),
    Spec("f64_thresholds", "regression", "regression", rounds=8, f64=True, missing=0.05, schedules=True, notes="rows between float64 thresholds and their float32 rounding", representations=("code",)),
    Spec("f64_binary", "binary", "binary", rounds=8, f64=True, missing=0.05, representations=("code",)),
    Spec("f64_trained_complete", "regression", "regression", rounds=8, f64=True, zeros=0.1, missing=0.01,
         train_missing=0.0, n_rows=200, notes="trained_complete's case with rows of doubles (the schedule matrix "
         "has f64_thresholds's)"),
]

BASE_PARAMS = {"verbose": -1, "num_threads": 1, "seed": 20240, "deterministic": True, "num_leaves": 8,
               "learning_rate": 0.3, "min_data_in_leaf": 10}


# ----------------------------------------------------------------------------- data

def spec_seed(spec):
    return sum((i + 1) * ord(c) for i, c in enumerate(spec.name))


def make_features(spec, rng, n, missing=None):
    """Normal features, every third one integer-valued; categorical ones 0..39 (0..2 for the second), or as categories says."""
    missing = spec.missing if missing is None else missing
    X = rng.normal(size=(n, spec.num_feature))
    X[:, 2::3] = np.round(X[:, 2::3] * 3.0)
    for k, j in enumerate(spec.categorical):
        X[:, j] = rng.integers(0, spec.categories[min(k, len(spec.categories) - 1)], n)
    if spec.zeros:
        X[rng.random(X.shape) < spec.zeros] = 0.0
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    if not spec.f64:
        X = X.astype(np.float32).astype(np.float64)
    return X


def make_labels(spec, rng, X):
    Z = np.nan_to_num(X, nan=0.0)
    s = 0.9 * Z[:, 0] - 0.6 * Z[:, 1] + 0.4 * np.tanh(Z[:, 2]) + 0.3 * Z[:, 3] * Z[:, 0] + 0.2 * np.sin(3 * Z[:, 4])
    noise = rng.normal(size=len(X))
    kind = spec.labels
    if kind == "regression":
        return 2.0 * s + 0.3 * noise
    if kind == "signed":
        return 3.0 * s * np.abs(s) + 0.3 * noise
    if kind == "positive":
        return np.exp(0.5 * s) + 0.1
    if kind == "binary":
        return (2.0 * s + noise > 0).astype(np.float64)
    if kind == "fraction":
        return 1.0 / (1.0 + np.exp(-(2.0 * s + 0.3 * noise)))
    if kind == "multiclass":
        k = spec.params["num_class"]
        scores = np.stack([np.roll(Z, c, axis=1)[:, 0] - 0.5 * np.roll(Z, c, axis=1)[:, 1] for c in range(k)], axis=1)
        return np.argmax(scores + 0.5 * rng.normal(size=scores.shape), axis=1).astype(np.float64)
    if kind == "poisson":
        return rng.poisson(np.exp(0.5 * s)).astype(np.float64)
    if kind == "gamma":
        return rng.gamma(shape=2.0, scale=np.exp(0.5 * s) / 2.0)
    if kind == "tweedie":
        counts = rng.poisson(1.2 * np.exp(0.4 * s))
        return np.array([rng.gamma(2.0, 0.5, size=c).sum() for c in counts])
    if kind == "rank":
        return np.clip(np.round(s + 1.5 + 0.3 * noise), 0, 4)
    if kind == "categorical":
        cat = np.nan_to_num(X[:, 0], nan=-1).astype(int)
        y = np.where(np.isin(cat, [1, 5, 9, 17, 33, 34, 38]), 2.0, 0.0) + np.where(cat % 4 == 0, -1.0, 0.0)
        if len(spec.categorical) > 1:
            y += np.nan_to_num(X[:, 1], nan=0.0) * 0.7
        y += 0.5 * Z[:, 2] + 0.3 * noise
        return (y > 0.5).astype(np.float64) if spec.objective == "binary" else y
    raise ValueError(kind)


# ----------------------------------------------------------------------------- model text

def numeric_splits(model_text):
    """(feature, threshold) of every numerical split, read from the text."""
    out = []
    for block in model_text.split("\nTree=")[1:]:
        keys = dict(line.split("=", 1) for line in block.split("\n")[1:] if "=" in line)
        if int(keys["num_leaves"]) < 2:
            continue
        for f, t, d in zip(keys["split_feature"].split(), keys["threshold"].split(), keys["decision_type"].split()):
            if not int(d) & 1:
                out.append((int(f), float(t)))
    return out


def threshold_rows(spec, rng, splits, base):
    """Rows at and beside thresholds. float32 specs: the float32 values either side of each
    threshold. f64 specs: the threshold itself and the doubles between it and its float32
    rounding (so a float32 threshold would decide them the other way)."""
    rows = []
    picks = splits if len(splits) <= 40 else [splits[i] for i in rng.choice(len(splits), 40, replace=False)]
    for f, t in picks:
        if spec.f64:
            r = float(np.float32(t))
            values = [t] if r == t else [t, float(np.nextafter(t, r)), (t + r) / 2]
        else:
            below = np.float32(t) if np.float32(t) <= t else np.nextafter(np.float32(t), np.float32(-np.inf))
            values = [float(below), float(np.nextafter(below, np.float32(np.inf)))]
        for v in values:
            row = base[rng.integers(len(base))].copy()
            row[f] = v
            rows.append(row)
    return rows


def zero_rows(spec, rng, base):
    """Values within kZeroThreshold of 0, which LightGBM's predictor reads as 0."""
    rows = []
    for v in (0.0, -0.0, ZERO, -ZERO, 1e-36, -1e-36, 2e-35, -2e-35):
        row = base[rng.integers(len(base))].copy()
        row[[j for j in range(spec.num_feature) if j not in spec.categorical]] = v
        rows.append(row)
    return rows


def category_rows(spec, rng, base):
    """Unseen, negative, fractional, huge and NaN categories, and the 32-bit word edges."""
    rows = []
    j = spec.categorical[0]
    for v in (31, 32, 33, 39, 40, 45, 100, 1e10, -1, -0.5, -3, 2.7, 5.99, np.nan):
        row = base[rng.integers(len(base))].copy()
        row[j] = v
        rows.append(row)
    return rows


def prediction_rows(spec, rng, model_text):
    X = make_features(spec, rng, spec.n_rows)
    rows = list(X) + threshold_rows(spec, rng, numeric_splits(model_text), X) + zero_rows(spec, rng, X)
    if spec.categorical:
        rows += category_rows(spec, rng, X)
    rows.append(np.full(spec.num_feature, np.nan))
    X = np.array(rows, dtype=np.float64)
    return X if spec.f64 else X.astype(np.float32).astype(np.float64)


def write_matrix(path, Y, fmt):
    Y = np.asarray(Y, dtype=np.float64).reshape(len(Y), -1)
    with open(path, "w") as out:
        for row in Y:
            out.write(",".join("" if math.isnan(v) else fmt % v for v in row) + "\n")


# ----------------------------------------------------------------------------- generate

def generate(spec, lgb):
    rng = np.random.default_rng(spec_seed(spec))
    X = make_features(spec, rng, spec.n_train, spec.train_missing)
    y = make_labels(spec, rng, X)
    params = dict(BASE_PARAMS, objective=spec.objective, **spec.params)
    group = None
    if spec.labels == "rank":
        group = [20] * (spec.n_train // 20)
    train = lgb.Dataset(X, label=y, group=group, categorical_feature=list(spec.categorical) or "auto", free_raw_data=False)
    booster = lgb.train(params, train, num_boost_round=spec.rounds)
    model = os.path.join(OUT, spec.name + ".txt")
    booster.save_model(model)
    with open(model) as f:
        text = f.read()
    rows = prediction_rows(spec, rng, text)
    pred = booster.predict(rows)
    margin = booster.predict(rows, raw_score=True)
    reloaded = lgb.Booster(model_file=model)
    assert np.array_equal(reloaded.predict(rows), pred), "the saved model predicts differently"
    fmt = "%.17g"
    write_matrix(os.path.join(OUT, spec.name + ".rows.csv"), rows, "%.17g" if spec.f64 else "%.9g")
    write_matrix(os.path.join(OUT, spec.name + ".pred.csv"), pred, fmt)
    average = "\naverage_output\n" in text
    margin_path = os.path.join(OUT, spec.name + ".margin.csv")
    if average:
        if os.path.exists(margin_path):
            os.remove(margin_path)
    else:
        write_matrix(margin_path, margin, fmt)
    check_text(spec, text)
    entry = {"name": spec.name, "model": spec.name + ".txt", "probability": spec.objective in
             ("binary", "multiclass", "multiclassova", "cross_entropy"), "num_trees": booster.num_trees(),
             "objective": text.split("\nobjective=", 1)[1].split("\n", 1)[0], "lightgbm": lgb.__version__,
             "rows": len(rows), "notes": spec.notes}
    if spec.schedules is False:
        entry["schedules"] = False
    if spec.f64:
        entry["f64_rows"] = True
    if spec.representations:
        entry["representations"] = list(spec.representations)
    return entry


def check_text(spec, text):
    """Assert that the model has what the spec is there to test."""
    types = [int(d) for line in text.split("\n") if line.startswith("decision_type=") for d in line[14:].split()]
    leaves = [int(line[11:]) for line in text.split("\n") if line.startswith("num_leaves=")]
    if spec.name == "constant":
        assert set(leaves) == {1}, leaves
    else:
        assert max(leaves) > 1, spec.name
    missing = {d >> 2 for d in types if not d & 1}
    if spec.name == "missing_zero":
        assert missing == {1}, missing
    if spec.name in ("missing_none", "trained_complete", "f64_trained_complete"):
        assert missing == {0}, missing
    if spec.name == "regression":
        assert 2 in missing and {d & 2 for d in types} == {0, 2}, types
    if spec.categorical:
        bounds = [[int(v) for v in line[15:].split()] for line in text.split("\n") if line.startswith("cat_boundaries=")]
        assert bounds and any(b[i + 1] - b[i] > 1 for b in bounds for i in range(len(b) - 1)), "no multi-word bitset"
    if spec.name == "missing_nan_zeros":
        assert any(abs(t) == ZERO for _, t in numeric_splits(text)), "no threshold at +-kZeroThreshold"


def main_generate(names):
    """Write every spec's files, or those of the specs named (the manifest keeps the others' entries)."""
    import lightgbm as lgb
    os.makedirs(OUT, exist_ok=True)
    manifest = os.path.join(OUT, "manifest.json")
    kept = {e["name"]: e for e in json.load(open(manifest))} if names and os.path.exists(manifest) else {}
    entries = []
    for spec in SPECS:
        if names and spec.name not in names:
            if spec.name in kept:
                entries.append(kept[spec.name])
            continue
        entries.append(generate(spec, lgb))
        print(f"{spec.name}: {entries[-1]['num_trees']} trees, {entries[-1]['rows']} rows")
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(entries, f, indent=1)
        f.write("\n")


# ----------------------------------------------------------------------------- check

NODE = re.compile(r"\s*(\d+): (?:leaf (\S+)|x\[(\d+)\] (<=|in) (\S+) \? (\d+) : (\d+), (missing|zero or missing) (left|right))$")


def read_hir(text):
    """The forest of a `grove dump --level hir` (the parts a LightGBM model uses)."""
    lines = text.split("\n")
    head = dict(kv.split("=", 1) for kv in lines[0].split()[1:])
    forest = {"head": head, "base": [float(v) for v in lines[1].split()[1:]], "trees": []}
    for line in lines:
        if line.startswith("tree "):
            forest["trees"].append({"output": int(re.search(r"output=(\d+)", line).group(1)), "nodes": {}})
        elif forest["trees"] and (m := NODE.match(line)):
            i, leaf, feat, op, value, left, right, missing, side = m.groups()
            if leaf is not None:
                node = ("leaf", float(leaf))
            else:
                value = set(int(c) for c in value[1:-1].split(",") if c) if op == "in" else float(value)
                node = (op, int(feat), value, int(left), int(right), missing != "missing", side == "left")
            forest["trees"][-1]["nodes"][int(i)] = node
    return forest


def walk(forest, row, f32_thresholds=False):
    margins = list(forest["base"])
    for tree in forest["trees"]:
        n = tree["nodes"][0]
        while n[0] != "leaf":
            op, feat, value, left, right, zero_missing, default_left = n
            x = row[feat]
            if math.isnan(x) or (zero_missing and abs(x) <= ZERO):
                go_left = default_left
            elif op == "in":
                c = math.trunc(x) if math.isfinite(x) else -1
                go_left = c >= 0 and c in value
            else:
                go_left = x <= (float(np.float32(value)) if f32_thresholds else value)
            n = tree["nodes"][left if go_left else right]
        margins[tree["output"]] += n[1]
    aggregate = forest["head"].get("aggregate", "sum")
    if aggregate.startswith("average/"):
        margins = [m / int(aggregate.split("/")[1]) for m in margins]
    return margins


def transform(forest, m):
    t, alpha = forest["head"]["transform"], float(forest["head"].get("sigmoid_alpha", 1))
    if t == "identity":
        return m
    if t == "sigmoid":
        return [1 / (1 + math.exp(-alpha * v)) for v in m]
    if t == "exp":
        return [math.exp(v) for v in m]
    if t == "signed_square":
        return [math.copysign(v * v, v) for v in m]
    if t == "softmax":
        top = max(m)
        e = [math.exp(v - top) for v in m]
        return [v / sum(e) for v in e]
    raise ValueError(t)


def read_csv(path):
    with open(path) as f:
        return [[math.nan if s == "" else float(s) for s in line.rstrip("\n").split(",")] for line in f]


def main_check():
    grove = os.path.join(ROOT, "build", "grove")
    worst = 0.0
    for manifest in ("manifest.json",):
        for m in json.load(open(os.path.join(OUT, manifest))):
            p = subprocess.run([grove, "dump", "--level", "hir", os.path.join(OUT, m["model"])], capture_output=True, text=True)
            if p.returncode != 0:
                print(f"{m['name']}: {p.stderr.strip()}")
                continue
            forest = read_hir(p.stdout)
            rows = read_csv(os.path.join(OUT, m["name"] + ".rows.csv"))
            if not m.get("f64_rows"):  # grove reads these as float32
                rows = [[float(np.float32(v)) for v in r] for r in rows]
            errors = {}
            for kind in ("pred", "margin"):
                path = os.path.join(OUT, f"{m['name']}.{kind}.csv")
                if not os.path.exists(path):
                    continue
                want = read_csv(path)
                got = [walk(forest, r) for r in rows]
                if kind == "pred":
                    got = [transform(forest, g) for g in got]
                errors[kind] = max(abs(a - b) / max(1.0, abs(b)) for g, w in zip(got, want) for a, b in zip(g, w))
                worst = max(worst, errors[kind])
            flips = ""
            if m.get("f64_rows"):
                exact = [walk(forest, r) for r in rows]
                rounded = [walk(forest, r, f32_thresholds=True) for r in rows]
                flips = f", {sum(a != b for a, b in zip(exact, rounded))} of {len(rows)} rows change with float32 thresholds"
            print(f"{m['name']}: largest relative error " + ", ".join(f"{k} {v:.3g}" for k, v in errors.items()) + flips)
    print(f"largest relative error over all fixtures: {worst:.3g}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="the specs to write (default: all)")
    ap.add_argument("--check", action="store_true", help="compare grove's HIR, walked in float64, with the expected files")
    args = ap.parse_args()
    main_check() if args.check else main_generate(args.names)
