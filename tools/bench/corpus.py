#!/usr/bin/env python3
"""A corpus of models as people train them: the libraries' defaults and their usual first changes.

    build/bench-venv/bin/python tools/bench/corpus.py [NAME ...] [--cache build/bench] [--list]
    build/bench-venv/bin/python tools/bench/corpus.py --check [--grove build/grove] [NAME ...]

trains each named model (default: all) once into CACHE/corpus/ and prints, per model, its
path, format, trees, deepest leaf, mean leaf depth, leaves, outputs and training time. As
models.py does, a model is kept with a note of how it was made (its CORPUS entry, the seed,
this generator's and models.py's versions, the libraries' versions) and trained again only
when one of those changes. Beside each model: NAME.rows.csv, test rows as `grove predict
--input` reads them (float32 values, %.9g; a missing value is `nan`; a first line naming
the columns), and NAME.expected.csv, the training library's predictions for them (one row
per line: probabilities as predict_proba gives them, for XGBoost and LightGBM binary
classifiers only the positive class's, as their Booster.predict and grove give it; values
as predict gives them for regressors).

--check compiles each model with `grove compile MODEL --no-cache --time` (under `timeout`,
--timeout seconds, and /usr/bin/time -v: seconds and peak memory; --jobs at once), predicts the test rows
with the artifact, compares with NAME.expected.csv, and writes the table to
CACHE/corpus/baseline.md (and stdout).

Everything comes from the CORPUS table: the estimator (the libraries' scikit-learn
interfaces, as most users call them) and the parameters that differ from its defaults,
the data (a models.py feature layout, optionally with categorical columns and missing
values, the number of training rows), the task and the number of classes or targets.
Every estimator gets random_state=0 (CatBoost: random_seed); n_jobs=-1 where it has one,
which changes nothing but the time. Data come from models.py's generators (make_rows,
_score): training rows with seed 0, test rows with seed 1. Classes: for up to 100, the
argmax of one score per class plus Gumbel noise (as models.py); for more, equal-sized
quantile bins of a noisy score, so that every class occurs (XGBClassifier requires it).
The scikit-learn models are converted to ONNX by skl2onnx, the CatBoost one by CatBoost's
own ONNX export (and kept in CatBoost's own format too, NAME.cbm, for its own predictor and
daal4py in bench.py). On 2 cores the whole corpus takes about 7 minutes to make (4.6 of them
fitting; skl2onnx's conversion of the purity forests most of the rest): 400 MB of models
in all, 300 of them the purity forests' ONNX files (50-150 MB each), so nothing here is
committed.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import models  # noqa: E402  (the data generators)

CORPUS_VERSION = 2
TEST_ROWS = 2000
TEST_VALUES = 1_000_000  # models with many outputs get fewer test rows: at most this many predictions
CATEGORIES = (3, 12, 60, 300)  # the categorical columns of a "+cat" layout: how many categories each has

# name: (estimator, parameters other than defaults, layout, training rows, task, classes or targets, why)
# layout: a models.SHAPES name (its features' kinds), "+cat": with categorical columns and missing values, "+nan":
# with missing values.
CORPUS = {
    "lgb-binary-cat": ("lightgbm.LGBMClassifier", {}, "airline+cat", 50000, "binary", 2,
                       "LightGBM defaults (31 leaves, 100 rounds) with pandas categories and NaNs: set splits, missing routes"),
    "lgb-cat-500": ("lightgbm.LGBMClassifier", {"n_estimators": 500}, "airline+cat", 50000, "binary", 2,
                    "500 rounds with pandas categories: more category sets than compiling every tree pays for"),
    "lgb-reg-500": ("lightgbm.LGBMRegressor", {"n_estimators": 500}, "year", 50000, "regression", 1,
                    "500 rounds of LightGBM's leaf-wise 31-leaf trees: many unbalanced trees"),
    "lgb-nan-500": ("lightgbm.LGBMRegressor", {"n_estimators": 500}, "year+nan", 50000, "regression", 1,
                    "500 rounds of LightGBM's defaults on rows with missing values: NaN sent either way"),
    "lgb-leaves255": ("lightgbm.LGBMClassifier", {"num_leaves": 255}, "higgs", 50000, "binary", 2,
                      "num_leaves=255, the usual first change: deep, unbalanced trees (no depth limit)"),
    "lgb-leaves255-nan": ("lightgbm.LGBMClassifier", {"num_leaves": 255}, "higgs+nan", 50000, "binary", 2,
                          "num_leaves=255 on rows with missing values: deep trees whose splits send NaN either way"),
    "lgb-leaves255-cov": ("lightgbm.LGBMClassifier", {"num_leaves": 255}, "covtype", 50000, "binary", 2,
                          "num_leaves=255 on covtype's 54 features: deeper walks, a fifth of them past 16 steps"),
    "lgb-10class": ("lightgbm.LGBMClassifier", {}, "letters", 30000, "multiclass", 10,
                    "a 10-class LightGBM model: 1000 trees, one per class and round, softmax"),
    "xgb-default": ("xgboost.XGBClassifier", {}, "higgs", 50000, "binary", 2,
                    "XGBoost defaults: 100 rounds of depth-6 trees"),
    "xgb-nan": ("xgboost.XGBClassifier", {}, "higgs+nan", 50000, "binary", 2,
                "XGBoost defaults on rows with missing values: each split's learned default direction"),
    "xgb-1000": ("xgboost.XGBRegressor", {"n_estimators": 1000}, "year", 30000, "regression", 1,
                 "1000 rounds of depth 6: a long ensemble of shallow trees"),
    "xgb-lossguide": ("xgboost.XGBClassifier", {"grow_policy": "lossguide", "max_leaves": 255, "max_depth": 0},
                      "higgs", 50000, "binary", 2,
                      "lossguide with max_leaves=255 and no depth limit: LightGBM-like trees in XGBoost"),
    "xgb-depth12": ("xgboost.XGBRegressor", {"max_depth": 12}, "airline", 50000, "regression", 1,
                    "max_depth=12: deep trees, beyond what fits a cache line per level"),
    "xgb-rf": ("xgboost.XGBRFClassifier", {}, "higgs", 50000, "binary", 2,
               "XGBRFClassifier defaults: one round of 100 parallel depth-6 trees (num_parallel_tree)"),
    "xgb-100class": ("xgboost.XGBClassifier", {}, "letters", 20000, "multiclass", 100,
                     "a 100-class model with XGBoost defaults: 10,000 trees"),
    "xgb-1000class": ("xgboost.XGBClassifier", {"n_estimators": 1}, "higgs", 20000, "multiclass", 1000,
                      "1000 classes, multi:softprob, one round: 1000 small trees, a wide softmax"),
    "xgb-8000class": ("xgboost.XGBClassifier", {"n_estimators": 1}, "higgs", 16000, "multiclass", 8000,
                      "8000 classes, one round: 8000 tiny trees (a few rows per class), an 8000-wide softmax"),
    "skl-rf-clf": ("sklearn.ensemble.RandomForestClassifier", {}, "higgs", 50000, "binary", 2,
                   "scikit-learn's random forest grown to purity (its defaults): deep trees, thousands of leaves"),
    "skl-rf-reg": ("sklearn.ensemble.RandomForestRegressor", {}, "abalone", 20000, "regression", 1,
                   "a regression forest grown to purity: about as many leaves as distinct bootstrap rows"),
    "skl-et-reg": ("sklearn.ensemble.ExtraTreesRegressor", {}, "abalone", 20000, "regression", 1,
                   "extra trees (no bootstrap, random cuts) grown to purity: one leaf per training row"),
    "skl-gb-clf": ("sklearn.ensemble.GradientBoostingClassifier", {}, "higgs", 20000, "binary", 2,
                   "scikit-learn's gradient boosting defaults (100 depth-3 trees) through skl2onnx"),
    "cat-default": ("catboost.CatBoostClassifier", {}, "higgs", 20000, "binary", 2,
                    "CatBoost defaults, 1000 symmetric (oblivious) depth-6 trees, through CatBoost's ONNX export"),
    "cat-depth8": ("catboost.CatBoostClassifier", {"depth": 8}, "higgs", 20000, "binary", 2,
                   "CatBoost's usual first change, depth=8: 256 leaves a tree, more than the vectors' tables hold"),
    "cat-10class": ("catboost.CatBoostClassifier", {}, "letters", 30000, "multiclass", 10,
                    "CatBoost defaults on 10 classes: 1000 symmetric trees, each leaf a vector of 10 (MultiClass)"),
    "skl-10k-targets": ("sklearn.ensemble.RandomForestRegressor", {"n_estimators": 10, "max_depth": 3},
                        "abalone", 2000, "multitarget", 10000,
                        "10,000 regression targets (an ONNX TreeEnsembleRegressor, n_targets=10000): a leaf is a wide vector"),
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def library(entry):
    """The module name of the library that trains the entry ("lightgbm", "xgboost", "sklearn", "catboost")."""
    return entry[0].split(".")[0]


def model_format(entry):
    """The file format the entry is saved in: xgboost, lightgbm or onnx."""
    return {"xgboost": "xgboost", "lightgbm": "lightgbm"}.get(library(entry), "onnx")


def versions(entry):
    """The versions of everything that makes the entry's model file."""
    from importlib import metadata
    mods = {"sklearn": ["scikit-learn", "skl2onnx", "onnx"], "catboost": ["catboost"]}.get(library(entry), [library(entry)])
    return {m: metadata.version(m) for m in ["numpy"] + mods}


def make_rows(np, entry, n, seed, missing=True):
    """n rows of the entry's data as float32 (NaN where missing, unless not missing), and its categorical columns."""
    layout = entry[2]
    shape = layout.split("+")[0]
    X = models.make_rows(np, shape, n, seed)
    if layout.endswith("+nan"):  # missing values in a third of the columns, 5% of each
        if missing:
            holes = np.arange(0, X.shape[1], 3)
            rng = np.random.default_rng([seed, 13])
            X[:, holes] = np.where(rng.random((n, len(holes))) < 0.05, np.nan, X[:, holes])
        return X, []
    if not layout.endswith("+cat"):
        return X, []
    # Categorical columns (a few frequent categories, a long tail) as integer codes 0..k-1, and missing
    # values: 5% of a third of the numeric columns and of the categorical ones.
    rng = np.random.default_rng([seed, 11])
    cats = [rng.permutation(k)[np.minimum(rng.zipf(1.5, (n, 1)) - 1, k - 1)].astype(np.float32) for k in CATEGORIES]
    numeric = X.shape[1]
    X = np.concatenate([X] + cats, axis=1)
    cat_cols = list(range(numeric, X.shape[1]))
    if not missing:
        return X, cat_cols
    holes = np.array(list(range(0, numeric, 3)) + cat_cols)
    X[:, holes] = np.where(rng.random((n, len(holes))) < 0.05, np.nan, X[:, holes])
    return X, cat_cols


def make_labels(np, entry, X, cat_cols, seed=0):
    """The entry's target for complete rows X (before missing values are punched in)."""
    task, outputs = entry[4], entry[5]
    rng = np.random.default_rng([seed, X.shape[1], 7])
    n = len(X)

    def score():
        s = models._score(np, rng, X, 40)
        for c, k in zip(cat_cols, CATEGORIES):  # each category its own effect
            s = s + rng.normal(0, 0.7, k)[X[:, c].astype(int)]
        return (s - s.mean()) / (s.std() + 1e-6)

    if task == "multiclass" and outputs <= 100:
        S = np.stack([score() for _ in range(outputs)], axis=1)
        return np.argmax(2 * S + rng.gumbel(size=S.shape), axis=1)
    if task == "multiclass":  # equal-sized bins of a noisy score: every class occurs
        order = np.argsort(score() + rng.normal(0, 0.3, n), kind="stable")
        y = np.empty(n, np.int64)
        y[order] = np.arange(n) * outputs // n
        return y
    if task == "multitarget":  # targets: random mixtures of a few scores
        return np.stack([score() for _ in range(8)], axis=1) @ rng.normal(0, 1, (8, outputs)) + rng.normal(0, 0.3, (n, outputs))
    s = score()
    if task == "binary":
        return (rng.random(n) < 1 / (1 + np.exp(-2 * s))).astype(np.int64)
    return 10 + 3 * s + rng.normal(0, 1, n)


def training_data(np, entry):
    """Training rows (with missing values), labels (of the rows before their holes) and categorical columns: seed 0."""
    complete, cat_cols = make_rows(np, entry, entry[3], 0, missing=False)
    X, _ = make_rows(np, entry, entry[3], 0)
    return X, make_labels(np, entry, complete, cat_cols), cat_cols


def frame(np, X, cat_cols):
    """X as a pandas DataFrame whose categorical columns have the category dtype (codes = values), or X itself."""
    if not cat_cols:
        return X
    import pandas as pd
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    for c, k in zip(cat_cols, CATEGORIES):
        df[f"f{c}"] = pd.Categorical(X[:, c], categories=np.arange(k, dtype=np.float32))
    return df


def estimator(entry):
    """A fresh estimator of the entry, seeded."""
    import importlib
    module, _, cls = entry[0].rpartition(".")
    est = getattr(importlib.import_module(module), cls)(**entry[1])
    params = est.get_params()
    fixed = {"random_state": 0} if "random_state" in params else {"random_seed": 0}
    if "n_jobs" in params:
        fixed["n_jobs"] = -1
    if library(entry) == "lightgbm":
        fixed["verbose"] = -1
    if library(entry) == "catboost":
        fixed["verbose"] = 0
        fixed["allow_writing_files"] = False
    return est.set_params(**fixed)


def save(np, entry, est, X, tmp):
    """Write the fitted estimator to tmp in the entry's format."""
    lib = library(entry)
    if lib == "xgboost":
        est.get_booster().save_model(tmp + ".json")
        os.replace(tmp + ".json", tmp)
    elif lib == "lightgbm":
        est.booster_.save_model(tmp)
    elif lib == "catboost":
        est.save_model(tmp, format="onnx")
    else:
        from skl2onnx import to_onnx
        options = {"zipmap": False} if entry[4] in ("binary", "multiclass") else None
        onx = to_onnx(est, X[:1].astype(np.float32), options=options)
        with open(tmp, "wb") as f:
            f.write(onx.SerializeToString())


def reference(np, entry, est, X):
    """The library's own predictions for X, one row per row (see the module's description)."""
    if "n_jobs" in est.get_params() and library(entry) == "sklearn":
        est.set_params(n_jobs=1)  # its forests add up the trees' predictions in threads, in any order
    if entry[4] in ("binary", "multiclass"):
        P = est.predict_proba(X)
        if entry[4] == "binary" and library(entry) in ("xgboost", "lightgbm"):
            P = P[:, 1:]
        return np.asarray(P)
    P = np.asarray(est.predict(X))
    return P.reshape(len(P), -1)


def paths(name, cache):
    """The model file of the corpus model name and its companions' prefix."""
    ext = {"xgboost": "json", "lightgbm": "txt", "onnx": "onnx"}[model_format(CORPUS[name])]
    base = os.path.join(cache, "corpus", name)
    return f"{base}.{ext}", base


def native_path(name, cache):
    """The model file the training library itself loads (CatBoost: NAME.cbm), or None (scikit-learn: only ONNX)."""
    lib = library(CORPUS[name])
    if lib == "catboost":
        return paths(name, cache)[1] + ".cbm"
    return None if lib == "sklearn" else paths(name, cache)[0]


def test_rows(entry):
    """How many test rows the entry gets."""
    outputs = entry[5]
    return min(TEST_ROWS, max(100, TEST_VALUES // outputs))


def model_path(name, cache, quiet=False):
    """The path of corpus model name, trained (with its test rows and predictions) unless cached."""
    import numpy as np
    entry = CORPUS[name]
    path, base = paths(name, cache)
    native = native_path(name, cache)
    want = {"corpus": CORPUS_VERSION, "generator": models.GENERATOR_VERSION, "entry": entry[:6],
            "test_rows": test_rows(entry), "versions": versions(entry)}
    if all(os.path.exists(p) for p in (path, native or path, base + ".rows.csv", base + ".expected.csv")) \
            and models._cache_ok(path + ".meta.json", want):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not quiet:
        log(f"making {name}: {entry[0]} {entry[1] or '(defaults)'}, {entry[3]} rows ...")
    t0 = time.perf_counter()
    X, y, cat_cols = training_data(np, entry)
    t1 = time.perf_counter()
    est = estimator(entry).fit(frame(np, X, cat_cols), y)
    train_s, data_s = time.perf_counter() - t1, t1 - t0
    tmp = f"{path}.{os.getpid()}.tmp"
    save(np, entry, est, X, tmp)
    if native and native != path:
        est.save_model(native)  # CatBoost's own format (cbm)
    T, _ = make_rows(np, entry, test_rows(entry), 1)
    P = reference(np, entry, est, frame(np, T, cat_cols))
    header = ",".join(f"f{j}" for j in range(T.shape[1]))
    np.savetxt(base + ".rows.csv", T, fmt="%.9g", delimiter=",", header=header, comments="")
    np.savetxt(base + ".expected.csv", P, fmt="%.9g" if P.dtype == np.float32 else "%.17g", delimiter=",")
    os.replace(tmp, path)
    stats = tree_stats(np, path, model_format(entry))
    with open(path + ".meta.json", "w") as f:
        json.dump({"made_by": want, "why": entry[6], "train_rows": entry[3], "train_s": round(train_s, 1),
                   "data_s": round(data_s, 1), "categorical_columns": cat_cols, "stats": stats}, f, indent=1)
    if not quiet:
        log(f"  {name}: {data_s:.0f} s making the data, {train_s:.0f} s fitting")
    return path


def _depths(np, left, right, roots):
    """Depth of every leaf of the trees given as child index arrays (-1: a leaf) and their roots."""
    depths, frontier, d = [], np.asarray(roots), 0
    while len(frontier):
        leaf = left[frontier] < 0
        depths.append(np.full(int(leaf.sum()), d))
        inner = frontier[~leaf]
        frontier, d = np.concatenate([left[inner], right[inner]]), d + 1
    return np.concatenate(depths)


def _forest(np, path, fmt):
    """(left, right, roots, outputs) of a model file: child arrays over all its nodes."""
    if fmt == "xgboost":
        with open(path) as f:
            learner = json.load(f)["learner"]
        trees = learner["gradient_booster"]["model"]["trees"]
        param = learner["learner_model_param"]
        outputs = max(1, int(param.get("num_class", 0)), int(param.get("num_target", 1)))
        L, R, roots, at = [], [], [], 0
        for t in trees:
            left, right = np.array(t["left_children"]), np.array(t["right_children"])
            L.append(np.where(left < 0, -1, left + at))
            R.append(np.where(right < 0, -1, right + at))
            roots.append(at)
            at += len(left)
        return np.concatenate(L), np.concatenate(R), roots, outputs
    if fmt == "lightgbm":
        import lightgbm as lgb
        dump = lgb.Booster(model_file=path).dump_model()
        L, R, roots = [], [], []
        for t in dump["tree_info"]:
            stack = [(t["tree_structure"], len(L))]
            roots.append(len(L))
            L.append(-1), R.append(-1)
            while stack:
                node, i = stack.pop()
                if "left_child" in node:
                    for side, child in ((L, node["left_child"]), (R, node["right_child"])):
                        side[i] = len(L)
                        stack.append((child, len(L)))
                        L.append(-1), R.append(-1)
        return np.array(L), np.array(R), roots, dump["num_class"]
    import onnx
    from onnx import helper
    for node in onnx.load(path).graph.node:
        if node.op_type.startswith("TreeEnsemble"):
            a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
            break
    else:
        raise ValueError(f"{path}: no TreeEnsemble node")
    if "tree_roots" in a:  # ai.onnx.ml 5 TreeEnsemble: leaves are a separate array
        nodes = len(a["nodes_featureids"])
        tl, fl = np.array(a["nodes_trueleafs"], bool), np.array(a["nodes_falseleafs"], bool)
        t, f = np.array(a["nodes_truenodeids"]), np.array(a["nodes_falsenodeids"])
        leaves = nodes + np.arange(len(a["leaf_targetids"]))
        L = np.concatenate([np.where(tl, nodes + t, t), np.full(len(leaves), -1)])
        R = np.concatenate([np.where(fl, nodes + f, f), np.full(len(leaves), -1)])
        return L, R, list(a["tree_roots"]), a.get("n_targets", 1)
    key = np.array(a["nodes_treeids"], np.int64) << 32 | np.array(a["nodes_nodeids"], np.int64)
    order = np.argsort(key)
    tree = np.array(a["nodes_treeids"], np.int64)
    is_leaf = np.array([m == b"LEAF" for m in a["nodes_modes"]])

    def index(child):
        return np.where(is_leaf, -1, order[np.searchsorted(key[order], tree << 32 | np.array(child, np.int64))])
    L, R = index(a["nodes_truenodeids"]), index(a["nodes_falsenodeids"])
    children = np.zeros(len(key), bool)
    children[L[L >= 0]] = children[R[R >= 0]] = True
    outputs = a.get("n_targets") or len(a.get("classlabels_int64s") or a.get("classlabels_strings"))
    return L, R, np.flatnonzero(~children), outputs


def tree_stats(np, path, fmt):
    """Trees, deepest leaf, mean leaf depth, leaves and outputs of a model file."""
    L, R, roots, outputs = _forest(np, path, fmt)
    d = _depths(np, L, R, roots)
    return {"trees": len(roots), "max_depth": int(d.max()), "mean_leaf_depth": round(float(d.mean()), 2),
            "leaves": len(d), "outputs": int(outputs)}


def check(np, name, cache, grove, timeout):
    """Compile the model with grove, predict its test rows, compare: a dict of the results."""
    path, base = paths(name, cache)
    so = os.path.join(tempfile.gettempdir(), f"grove-corpus-{os.getpid()}-{name}.so")  # $TMPDIR, else /tmp
    cmd = ["/usr/bin/time", "-v", "timeout", str(timeout), grove, "compile", path, "-o", so, "--no-cache", "--time"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    r = {"compile_s": round(time.perf_counter() - t0, 1)}
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    r["peak_mb"] = round(int(rss.group(1)) / 1024) if rss else None
    if p.returncode == 124:
        r["status"] = f"timeout ({timeout} s)"
        return r
    if p.returncode != 0 or not os.path.exists(so):
        msg = [ln for ln in p.stderr.splitlines() if ln.startswith("grove")]  # not --time's or time -v's lines
        r["status"] = f"compile failed ({p.returncode}): " + (msg[0][:120] if msg else "")
        return r
    r["artifact_mb"] = round(os.path.getsize(so) / 2**20, 1)
    p = subprocess.run([grove, "predict", so, "--input", base + ".rows.csv"], capture_output=True, text=True)
    os.unlink(so)
    if p.returncode != 0:
        r["status"] = f"predict failed ({p.returncode}): {p.stderr.strip()[:120]}"
        return r
    got = np.loadtxt(p.stdout.splitlines(), delimiter=",", ndmin=2)
    want = np.loadtxt(base + ".expected.csv", delimiter=",", ndmin=2)
    if got.shape != want.shape:
        r["status"] = f"shape {got.shape} != library's {want.shape}"
        return r
    diff = np.abs(got - want)
    r["max_abs"] = float(diff.max())
    r["max_rel"] = float((diff / np.maximum(1, np.abs(want))).max())
    r["status"] = "ok"
    return r


def write_baseline(rows, out, args):
    """The --check table, in Markdown, to stdout and out."""
    version = subprocess.run([args.grove, "--version"], capture_output=True, text=True).stdout.strip()
    git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
    note = (f"{args.grove}: {version}; tree {git}; {time.strftime('%Y-%m-%d %H:%M')}; {len(os.sched_getaffinity(0))} cores, "
            f"{args.jobs} compile(s) at once, timeout {args.timeout} s; diffs against the library's predictions "
            f"(relative: to max(1, |prediction|))\n\n")
    head = ["model", "format", "trees", "max depth", "mean leaf depth", "leaves", "outputs", "fit s",
            "grove compile s", "peak MB", "artifact MB", "max abs diff", "max rel diff", "status"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, meta, fmt, r in rows:
        s = meta["stats"]
        cells = [name, fmt, s["trees"], s["max_depth"], s["mean_leaf_depth"], s["leaves"], s["outputs"], meta["train_s"],
                 r["compile_s"], r.get("peak_mb", ""), r.get("artifact_mb", ""),
                 f"{r['max_abs']:.2e}" if "max_abs" in r else "", f"{r['max_rel']:.2e}" if "max_rel" in r else "",
                 r["status"]]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    text = note + "\n".join(lines) + "\n"
    print(text)
    with open(out, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", default=list(CORPUS), help="corpus models (see --list); default: all")
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--list", action="store_true", help="print the corpus table and train nothing")
    ap.add_argument("--check", action="store_true", help="compile and predict each model with grove; write baseline.md")
    ap.add_argument("--grove", default=os.path.join(ROOT, "build", "grove"))
    ap.add_argument("--timeout", type=int, default=120, help="seconds a grove compile may take (--check)")
    ap.add_argument("--jobs", type=int, default=1, help="grove compiles at once (--check)")
    args = ap.parse_args()
    for name in args.names:
        if name not in CORPUS:
            sys.exit(f"corpus.py: {name}: not in the corpus ({', '.join(CORPUS)})")
    if args.list:
        for name in args.names:
            e = CORPUS[name]
            print(f"{name:16} {e[0]} {json.dumps(e[1]) if e[1] else '(defaults)'}; {e[2]} x {e[3]} rows, {e[4]}"
                  + (f" {e[5]}" if e[5] > 2 else "") + f"\n{'':16} {e[6]}")
        return
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import numpy as np
    rows = []
    for name in args.names:
        path = model_path(name, args.cache)
        with open(path + ".meta.json") as f:
            meta = json.load(f)
        s, fmt = meta["stats"], model_format(CORPUS[name])
        print(f"{path}  {fmt}, {s['trees']} trees, depth {s['max_depth']} (mean leaf {s['mean_leaf_depth']}), "
              f"{s['leaves']} leaves, {s['outputs']} outputs; fit in {meta['train_s']} s", flush=True)
        rows.append((name, path, meta, fmt))
    if args.check:  # grove compiles on one core: --jobs compiles at once (their times then share the machine)
        from concurrent.futures import ThreadPoolExecutor

        def one(row):
            r = check(np, row[0], args.cache, args.grove, args.timeout)
            log(f"{row[0]}: grove {r}")
            return r
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(one, rows))
        write_baseline([(name, meta, fmt, r) for (name, _, meta, fmt), r in zip(rows, results)],
                       os.path.join(args.cache, "corpus", "baseline.md"), args)


if __name__ == "__main__":
    main()
