#!/usr/bin/env python3
"""Synthetic models with the shapes of SilvanForge's eight benchmarks, and their rows.

    build/bench-venv/bin/python tools/bench/models.py [NAME ...] [--cache build/bench] [--rows N]

trains (once) and prints where each model is. The benchmark (bench.py) calls the same
functions; a model is made once and cached in build/bench/models/ with a note of how it
was made (its shape, the seed, this generator's version and XGBoost's or LightGBM's), so
it is trained again only when one of those changes.

The data are random but not noise: each feature is drawn from one of a few kinds
(gaussian, uniform, skewed, small integers, one-hot groups, as the original data sets
have), and the target is a sum of random rules (indicator products of two or three
features at random quantiles, smooth terms, a linear part) plus noise, so that every
round grows full depth-8 trees that split on many features, as trees trained on the real
data sets do. Binary targets are Bernoulli draws of the sigmoid of the score; classes are
the argmax of one score per class plus Gumbel noise.

The shapes (features, boosting rounds, classes; depth 8 everywhere; trees = rounds x classes):
abalone 8/1000, airline 13/100, airline-ohe 692/1000, covtype 54/100 x 8, epsilon 2000/100,
higgs 28/100, letters 16/100 x 26, year 90/100. LightGBM models of three of the shapes
(lgb-higgs, lgb-year, lgb-covtype: 255 leaves, depth at most 8) give LightGBM's own
predictor and lleaves a model of their format.
"""
import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GENERATOR_VERSION = 1
DEPTH = 8

# name: (features, rounds, classes, task, feature layout, training rows)
SHAPES = {
    "abalone": (8, 1000, 1, "regression", "abalone", 32768),
    "airline": (13, 100, 1, "binary", "mixed", 32768),
    "airline-ohe": (692, 1000, 1, "binary", "airline-ohe", 8192),
    "covtype": (54, 100, 8, "multiclass", "covtype", 32768),
    "epsilon": (2000, 100, 1, "binary", "gaussian", 8192),
    "higgs": (28, 100, 1, "binary", "mixed", 32768),
    "letters": (16, 100, 26, "multiclass", "letters", 32768),
    "year": (90, 100, 1, "regression", "gaussian", 32768),
}
# LightGBM models: name -> the shape whose data they are trained on.
LIGHTGBM = {"lgb-higgs": "higgs", "lgb-year": "year", "lgb-covtype": "covtype"}


def _one_hot(np, rng, n, sizes):
    """Columns of one-hot groups: for each group one column of the group is 1 in each row."""
    cols = []
    for size in sizes:
        pick = np.minimum(rng.zipf(1.6, n) - 1, size - 1)  # a few frequent categories, a long tail
        perm = rng.permutation(size)
        block = np.zeros((n, size), np.float32)
        block[np.arange(n), perm[pick]] = 1
        cols.append(block)
    return np.concatenate(cols, axis=1)


def _mixed(np, rng, n, m):
    """m columns, each of a kind drawn at random: gaussian, uniform, skewed or small integers."""
    kinds = rng.choice(4, m, p=[0.4, 0.2, 0.2, 0.2])
    X = np.empty((n, m), np.float32)
    for j, kind in enumerate(kinds):
        if kind == 0:
            X[:, j] = rng.standard_normal(n) * rng.uniform(0.5, 3) + rng.uniform(-2, 2)
        elif kind == 1:
            X[:, j] = rng.uniform(0, rng.uniform(1, 100), n)
        elif kind == 2:
            X[:, j] = rng.lognormal(0, rng.uniform(0.3, 1.2), n)
        else:
            X[:, j] = rng.integers(0, rng.integers(2, 30), n)
    return X


def make_rows(np, name, n, seed):
    """n float32 rows of the shape's data set (the same rows for the same seed)."""
    features, _, _, _, layout, _ = SHAPES[name]
    rng = np.random.default_rng([seed, features])
    if layout == "gaussian":
        X = rng.standard_normal((n, features), dtype=np.float32)
    elif layout == "mixed":
        X = _mixed(np, rng, n, features)
    elif layout == "abalone":  # sex (3 values) and 7 positive measurements
        X = np.concatenate([rng.integers(0, 3, (n, 1)).astype(np.float32),
                            rng.gamma(4, 0.1, (n, 7)).astype(np.float32)], axis=1)
    elif layout == "letters":  # 16 integer features in 0..15
        X = np.clip(rng.normal(7, 3, (n, 16)).round(), 0, 15).astype(np.float32)
    elif layout == "covtype":  # 10 numbers, 4 wilderness areas, 40 soil types
        X = np.concatenate([_mixed(np, rng, n, 10), _one_hot(np, rng, n, [4, 40])], axis=1)
    elif layout == "airline-ohe":  # 5 numbers and one-hot carriers, airports, hours, days, months, ...
        X = np.concatenate([_mixed(np, rng, n, 5), _one_hot(np, rng, n, [22, 300, 300, 24, 31, 7, 3])], axis=1)
    else:
        raise ValueError(layout)
    assert X.shape == (n, features), (name, X.shape)
    return np.ascontiguousarray(X, dtype=np.float32)


def _score(np, rng, X, rules):
    """A random function of the rows: rules on 2-3 features at random quantiles, smooth terms, a linear part."""
    n, m = X.shape
    Z = (X - X.mean(0)) / (X.std(0) + 1e-6)
    used = rng.choice(m, min(m, 64), replace=False)  # the informative features
    s = Z[:, used] @ rng.normal(0, 0.3, len(used))
    for _ in range(rules):
        feats = rng.choice(used, rng.integers(2, 4))
        term = np.ones(n, np.float32)
        for f in feats:
            cut = np.quantile(X[:, f], rng.uniform(0.1, 0.9))
            term *= (X[:, f] > cut) if rng.random() < 0.5 else (X[:, f] <= cut)
        s += rng.normal(0, 1) * term
    for f in rng.choice(used, min(len(used), 8), replace=False):
        s += 0.5 * np.sin(2 * Z[:, f])
    return (s - s.mean()) / (s.std() + 1e-6)


def make_data(np, name, seed=0):
    """Training rows and labels for the shape."""
    features, _, classes, task, _, n = SHAPES[name]
    X = make_rows(np, name, n, seed)
    rng = np.random.default_rng([seed, features, 7])
    if task == "multiclass":
        S = np.stack([_score(np, rng, X, 40) for _ in range(classes)], axis=1)
        y = np.argmax(2 * S + rng.gumbel(size=S.shape), axis=1)
    else:
        s = _score(np, rng, X, 60)
        if task == "binary":
            y = (rng.random(n) < 1 / (1 + np.exp(-2 * s))).astype(np.float32)
        else:
            y = 10 + 3 * s + rng.normal(0, 1, n)
    return X, y.astype(np.float32)


def _cache_ok(meta_path, want):
    """Whether the note beside a cached model says it was made as want says (compared as JSON)."""
    try:
        with open(meta_path) as f:
            return json.load(f).get("made_by") == json.loads(json.dumps(want))
    except (OSError, ValueError):
        return False


def model_path(name, cache, quiet=False):
    """The path of synthetic model name (a shape or an lgb- name), trained first if it is not cached."""
    import numpy as np
    lgb = name in LIGHTGBM
    shape = LIGHTGBM.get(name, name)
    features, rounds, classes, task, _, n = SHAPES[shape]
    out_dir = os.path.join(cache, "models")
    path = os.path.join(out_dir, f"syn-{name}." + ("txt" if lgb else "json"))
    if lgb:
        import lightgbm as lib
    else:
        import xgboost as lib
    want = {"generator": GENERATOR_VERSION, "shape": SHAPES[shape], "library": f"{lib.__name__} {lib.__version__}"}
    if os.path.exists(path) and _cache_ok(path + ".meta.json", want):
        return path
    os.makedirs(out_dir, exist_ok=True)
    if not quiet:
        print(f"making syn-{name}: {features} features, {rounds} rounds x {classes} classes ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    tmp = f"{path}.{os.getpid()}.tmp"  # two runs making one model do not write the same file
    X, y = make_data(np, shape)
    if lgb:
        objective = {"regression": "regression", "binary": "binary", "multiclass": "multiclass"}[task]
        params = {"objective": objective, "num_leaves": 255, "max_depth": DEPTH, "learning_rate": 0.1,
                  "min_data_in_leaf": 5, "min_sum_hessian_in_leaf": 1e-3, "verbose": -1, "seed": 0}
        if classes > 1:
            params["num_class"] = classes
        booster = lib.train(params, lib.Dataset(X, y), rounds)
        booster.save_model(tmp)
    else:
        objective = {"regression": "reg:squarederror", "binary": "binary:logistic", "multiclass": "multi:softprob"}[task]
        params = {"objective": objective, "max_depth": DEPTH, "eta": 0.1, "tree_method": "hist",
                  "min_child_weight": 0.1, "seed": 0}
        if classes > 1:
            params["num_class"] = classes
        booster = lib.train(params, lib.DMatrix(X, label=y), rounds)
        booster.save_model(tmp + ".json")
        os.replace(tmp + ".json", tmp)
    os.replace(tmp, path)
    with open(path + ".meta.json", "w") as f:
        json.dump({"made_by": want, "train_rows": n, "train_s": round(time.perf_counter() - t0, 1)}, f, indent=1)
    if not quiet:
        print(f"  syn-{name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return path


def depth_profile(path):
    """(trees, fraction of leaves at depth DEPTH, deepest leaf) of an XGBoost JSON model."""
    with open(path) as f:
        trees = json.load(f)["learner"]["gradient_booster"]["model"]["trees"]
    deep, leaves, deepest = 0, 0, 0
    for t in trees:
        left, right = t["left_children"], t["right_children"]
        stack = [(0, 0)]
        while stack:
            node, d = stack.pop()
            if left[node] == -1:
                leaves += 1
                deep += d == DEPTH
                deepest = max(deepest, d)
            else:
                stack += [(left[node], d + 1), (right[node], d + 1)]
    return len(trees), deep / max(1, leaves), deepest


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", default=list(SHAPES) + list(LIGHTGBM),
                    help="shapes (abalone, ..., or syn-abalone, ...) and lgb- names; default: all")
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--rows", type=int, metavar="N",
                    help="also write N rows of each model's data to CACHE/rows/syn-NAME.f32 (for timer.c)")
    args = ap.parse_args()
    # Idle OpenMP threads sleep: spinning ones make training crawl on a machine that runs other work.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    for name in args.names:
        name = name[4:] if name.startswith("syn-") else name  # bench.py's names work too
        path = model_path(name, args.cache)
        extra = ""
        if path.endswith(".json"):
            trees, frac, deepest = depth_profile(path)
            extra = f"  {trees} trees, {frac:.0%} of leaves at depth {DEPTH}, deepest {deepest}"
        print(path + extra)
        if args.rows:
            import numpy as np
            out = os.path.join(args.cache, "rows", f"syn-{name}.f32")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            make_rows(np, LIGHTGBM.get(name, name), args.rows, seed=1).astype("<f4").tofile(out)
            print(f"{out}  {args.rows} rows")


if __name__ == "__main__":
    main()
