#!/usr/bin/env python3
"""Random models against their training libraries.

Trains small models with random settings on random data (NaNs, integer columns, categories
of up to 1000 values) and compares grove's predictions and margins (grove.compile, the Python
package) with the library's own. A model grove refuses is reported with the message; a
prediction more than 1e-5 (relative to max(1, |x|)) from the library's is a failure. Exits 1
on any failure or refusal, printing the model's settings so that the case can be rebuilt
from its seed.

    GROVE_BUILDDIR=build PYTHONPATH=rt/python build/venv/bin/python tools/library_check.py \\
        [--count 40] [--seed 1] [xgboost lightgbm sklearn catboost]

Kinds: XGBoost (every objective, depth, lossguide, exact / approx / hist, categories,
dart, num_parallel_tree, base_score, quantiles, multi-output trees), LightGBM (every
objective, gbdt / dart / rf, leaves, depth, missing-value settings, categories, max_bin),
scikit-learn (forests, extra trees, gradient boosting, histogram gradient boosting, decision
trees, isolation forests, string labels) and CatBoost (losses, nan_mode, every grow_policy).
"""
import argparse
import sys

import numpy as np

import grove


CALL_ROWS = None  # rows a call of grove's predict takes (None: all at once); main draws it per model


def predict(model, X, **options):
    """grove's predictions of X, in calls of CALL_ROWS rows (a batch's last tile of rows short in most of them)."""
    if CALL_ROWS is None:
        return model.predict(X, **options)
    calls = [model.predict(X[i:i + CALL_ROWS], **options) for i in range(0, len(X), CALL_ROWS)]
    return np.concatenate(calls) if calls else model.predict(X, **options)


def rows(rng, n, features, nan=0.0, categorical=()):
    X = rng.normal(size=(n, features)).astype(np.float32)
    X[:, 0] = np.round(X[:, 0] * 3)  # ties and integers
    for j in categorical:
        X[:, j] = rng.integers(0, rng.choice([2, 5, 40, 300, 1000]), size=n)
    X[rng.random(size=X.shape) < nan] = np.nan
    return X


def signal(rng, X):
    return np.nan_to_num(X[:, 0]) + np.sin(np.nan_to_num(X[:, 1])) + 0.3 * rng.normal(size=len(X))


def classes_of(s, k):
    return np.searchsorted(np.quantile(s, np.linspace(0, 1, k + 1)[1:-1]), s)


def differs(want, got):
    """None where got is want within 1e-5 relative (to max(1, |want|)), else what differs."""
    want = np.asarray(want, dtype=np.float64).reshape(len(got), -1)
    got = np.asarray(got, dtype=np.float64).reshape(len(got), -1)
    if want.shape != got.shape:
        return f"shape {got.shape}, the library's {want.shape}"
    d = np.abs(want - got) / np.maximum(1, np.abs(want))
    bad = (d > 1e-5) | (np.isnan(want) != np.isnan(got))
    return f"{bad.any(axis=1).sum()} rows differ, by up to {np.nanmax(d):.3g}" if bad.any() else None


def xgboost_case(rng, i):
    import xgboost as xgb
    import pandas as pd
    f = int(rng.integers(2, 12))
    categorical = [int(rng.integers(0, f))] if rng.random() < 0.3 else []
    X, Xt = rows(rng, 600, f, rng.choice([0, 0.05, 0.3]), categorical), rows(rng, 300, f, 0.1, categorical)
    multi = rng.random() < 0.25
    objective = str(rng.choice(["reg:squarederror", "binary:logistic", "multi:softprob", "multi:softmax", "count:poisson",
                                "reg:gamma", "reg:tweedie", "reg:absoluteerror", "reg:pseudohubererror", "binary:logitraw",
                                "reg:logistic", "binary:hinge", "reg:squaredlogerror", "reg:quantileerror",
                                "survival:cox"]))
    s = signal(rng, X)
    k = int(rng.integers(3, 6))
    y = {"binary": (s > 0).astype(int), "multi:": classes_of(s, k), "count:": rng.poisson(np.exp(np.clip(s, -2, 2))),
         "reg:gam": np.exp(np.clip(s, -2, 2)), "reg:twe": np.exp(np.clip(s, -2, 2)), "reg:log": (s > 0).astype(float),
         "reg:squaredlog": np.abs(s)}
    y = next((v for key, v in y.items() if objective.startswith(key)), s)
    params = {"objective": objective, "max_depth": int(rng.choice([1, 3, 6, 10])), "eta": 0.3, "seed": i, "nthread": 1,
              "tree_method": str(rng.choice(["hist", "approx"] + ([] if categorical else ["exact"]))),
              "num_parallel_tree": int(rng.choice([1, 1, 3])), "subsample": float(rng.choice([1.0, 0.7]))}
    if rng.random() < 0.3 and params["tree_method"] != "exact":
        params.update(grow_policy="lossguide", max_leaves=int(rng.choice([8, 64])), max_depth=int(rng.choice([0, 12])))
    if rng.random() < 0.3:
        params["base_score"] = float(rng.uniform(0.2, 0.8))
    if objective.startswith("multi"):
        params["num_class"] = k
    if objective == "reg:quantileerror":
        params["quantile_alpha"] = [0.2, 0.5, 0.8] if rng.random() < 0.5 else 0.5
    if objective == "survival:cox":
        y = np.where(rng.random(len(y)) < 0.3, -1, 1) * np.exp(np.clip(s, -2, 2))
    if multi and objective in ("reg:squarederror", "multi:softprob"):
        params.update(tree_method="hist", multi_strategy="multi_output_tree")
        if objective == "reg:squarederror":
            y = np.stack([s * (t + 1) for t in range(k)], axis=1)
    if categorical:
        params["max_cat_to_onehot"] = int(rng.choice([1, 64]))
    if rng.random() < 0.2 and params.get("num_class") is None and objective != "reg:quantileerror":
        params.update(booster="dart", rate_drop=0.2)

    def matrix(X):
        if not categorical:
            return xgb.DMatrix(X, missing=np.nan)
        frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(f)])
        for c in categorical:
            frame[f"f{c}"] = pd.Categorical(pd.Series(X[:, c]).astype("Int64"), categories=list(range(1000)))
        return xgb.DMatrix(frame, enable_categorical=True, missing=np.nan)

    if categorical:
        Xt[:, categorical] = X[:300][:, categorical]
    train = matrix(X)
    train.set_label(y)
    booster = xgb.train(params, train, num_boost_round=int(rng.integers(1, 30)))
    model = grove.compile(booster)
    return params, [(booster.predict(matrix(Xt)), predict(model, Xt)),
                    (booster.predict(matrix(Xt), output_margin=True), predict(model, Xt, margin=True))]


def lightgbm_case(rng, i):
    import lightgbm as lgb
    f = int(rng.integers(2, 12))
    categorical = [int(c) for c in rng.choice(f, size=int(rng.integers(1, min(3, f) + 1)), replace=False)] \
        if rng.random() < 0.4 else []
    X, Xt = rows(rng, 600, f, rng.choice([0, 0.05, 0.3]), categorical), rows(rng, 300, f, 0.1, categorical)
    objective = str(rng.choice(["regression", "binary", "multiclass", "multiclassova", "poisson", "huber", "quantile",
                                "xentropy", "gamma", "tweedie", "regression_l1", "fair", "mape", "cross_entropy_lambda",
                                "lambdarank"]))
    s, k = signal(rng, X), int(rng.integers(3, 6))
    y = {"binary": (s > 0).astype(int), "multiclass": classes_of(s, k), "multiclassova": classes_of(s, k),
         "poisson": np.exp(np.clip(s, -2, 2)), "gamma": np.exp(np.clip(s, -2, 2)), "tweedie": np.exp(np.clip(s, -2, 2)),
         "xentropy": (s > 0).astype(float), "cross_entropy_lambda": (s > 0).astype(float),
         "lambdarank": np.clip(classes_of(s, 5), 0, 4)}.get(objective, s)
    params = {"objective": objective, "verbose": -1, "seed": i, "learning_rate": 0.3,
              "num_leaves": int(rng.choice([2, 7, 31, 63])), "max_depth": int(rng.choice([-1, -1, 3, 8])),
              "min_data_in_leaf": int(rng.choice([1, 5, 20])), "zero_as_missing": bool(rng.random() < 0.2),
              "use_missing": bool(rng.random() < 0.9), "boosting": str(rng.choice(["gbdt", "gbdt", "dart", "rf"])),
              "max_bin": int(rng.choice([15, 255, 1023])), "max_cat_to_onehot": int(rng.choice([4, 64])),
              "max_cat_threshold": int(rng.choice([4, 32])), "cat_smooth": float(rng.choice([1, 10]))}
    if params["boosting"] == "rf":
        params.update(bagging_freq=1, bagging_fraction=0.7)
    if objective.startswith("multiclass"):
        params["num_class"] = k
    data = lgb.Dataset(X.astype(np.float64), label=y, categorical_feature=categorical or "auto",
                       group=[100] * 6 if objective == "lambdarank" else None)
    booster = lgb.train(params, data, num_boost_round=int(rng.integers(1, 40)))
    model = grove.compile(booster)
    Xt64 = Xt.astype(np.float64)
    pairs = [(booster.predict(Xt64), predict(model, Xt64))]
    if params["boosting"] != "rf":  # (an rf model's raw_score is LightGBM's sum, grove's margin the average)
        pairs.append((booster.predict(Xt64, raw_score=True), predict(model, Xt64, margin=True)))
    return params, pairs


def sklearn_case(rng, i):
    from sklearn import ensemble, tree
    f, nan = int(rng.integers(2, 10)), rng.choice([0, 0, 0.1])
    X, Xt = rows(rng, 500, f, nan), rows(rng, 300, f, nan)
    s = signal(rng, X)
    labels = classes_of(s, int(rng.choice([2, 2, 3, 5])))
    if rng.random() < 0.3:
        labels = np.array(["a", "b", "c", "d", "e"])[labels]
    kind = str(rng.choice(["rfc", "rfr", "etc", "etr", "hgbc", "hgbr", "dtc", "dtr", "iso"] +
                          ([] if nan else ["gbc", "gbr"])))
    n, depth = int(rng.integers(1, 30)), rng.choice([None, 3, 8])
    make = {"rfc": lambda: ensemble.RandomForestClassifier(n_estimators=n, max_depth=depth, random_state=i),
            "rfr": lambda: ensemble.RandomForestRegressor(n_estimators=n, max_depth=depth, random_state=i),
            "etc": lambda: ensemble.ExtraTreesClassifier(n_estimators=n, max_depth=depth, random_state=i),
            "etr": lambda: ensemble.ExtraTreesRegressor(n_estimators=n, max_depth=depth, random_state=i),
            "gbc": lambda: ensemble.GradientBoostingClassifier(n_estimators=n, max_depth=depth or 3, random_state=i),
            "gbr": lambda: ensemble.GradientBoostingRegressor(
                n_estimators=n, max_depth=depth or 3, random_state=i,
                loss=str(rng.choice(["squared_error", "absolute_error", "huber", "quantile"]))),
            "hgbc": lambda: ensemble.HistGradientBoostingClassifier(max_iter=n, max_depth=depth, random_state=i),
            "hgbr": lambda: ensemble.HistGradientBoostingRegressor(
                max_iter=n, max_depth=depth, random_state=i,
                loss=str(rng.choice(["squared_error", "absolute_error", "poisson", "gamma"]))),
            "dtc": lambda: tree.DecisionTreeClassifier(max_depth=depth, random_state=i),
            "dtr": lambda: tree.DecisionTreeRegressor(max_depth=depth, random_state=i),
            "iso": lambda: ensemble.IsolationForest(n_estimators=n, random_state=i)}
    est = make[kind]()
    y = labels if kind[-1] == "c" else np.exp(np.clip(s, -2, 2)) if getattr(est, "loss", "") in ("poisson", "gamma") else s
    est.fit(X) if kind == "iso" else est.fit(X, y)
    model = grove.compile(est)
    settings = {"estimator": type(est).__name__, "trees": n, "max_depth": depth, "nan": nan, "loss": getattr(est, "loss", None)}
    if kind == "iso":
        return settings, [(est.score_samples(Xt), predict(model, Xt))]
    if kind[-1] == "c":
        settings["labels"] = list(est.classes_)
        return settings, [(est.predict_proba(Xt), model.predict_proba(Xt))]
    return settings, [(est.predict(Xt), predict(model, Xt))]


def catboost_case(rng, i):
    import catboost as cb
    f = int(rng.integers(2, 8))
    X, Xt = rows(rng, 500, f, rng.choice([0, 0.1])), rows(rng, 300, f, 0.1)
    s = signal(rng, X)
    kind = str(rng.choice(["binary", "multiclass", "regression"]))
    params = dict(iterations=int(rng.integers(1, 40)), depth=int(rng.integers(1, 11)), random_seed=i, verbose=0,
                  thread_count=1, allow_writing_files=False, nan_mode=str(rng.choice(["Min", "Max"])),
                  grow_policy=str(rng.choice(["SymmetricTree", "SymmetricTree", "Depthwise", "Lossguide"])))
    if kind == "regression":
        loss = str(rng.choice(["RMSE", "MAE", "Quantile:alpha=0.3", "Poisson", "Tweedie:variance_power=1.5"]))
        est = cb.CatBoostRegressor(loss_function=loss, **params)
        est.fit(X, np.exp(np.clip(s, -2, 2)) if loss.startswith(("Poisson", "Tweedie")) else s)
    else:
        est = cb.CatBoostClassifier(loss_function="MultiClass" if kind == "multiclass" else "Logloss", **params)
        est.fit(X, classes_of(s, 4) if kind == "multiclass" else (s > 0).astype(int))
    model = grove.compile(est)
    params["kind"] = kind
    if kind == "regression":
        return params, [(est.predict(Xt), predict(model, Xt))]
    return params, [(est.predict_proba(Xt), model.predict_proba(Xt))]


CASES = {"xgboost": xgboost_case, "lightgbm": lightgbm_case, "sklearn": sklearn_case, "catboost": catboost_case}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=40, help="models of each library")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("libraries", nargs="*", default=list(CASES), help=" ".join(CASES))
    args = ap.parse_args()
    checked = failed = 0
    for library in args.libraries:
        if library not in CASES:
            sys.exit(f"library_check.py: unknown library '{library}' (expected {', '.join(CASES)})")
        for i in range(args.seed, args.seed + args.count):
            rng = np.random.default_rng([i, list(CASES).index(library)])
            global CALL_ROWS
            calls = np.random.default_rng([i, list(CASES).index(library), 1])  # (the case's own draws as they were)
            CALL_ROWS = int(calls.integers(2, 41)) if calls.random() < 0.5 else None
            try:
                settings, pairs = CASES[library](rng, i)
            except grove.GroveError as e:
                print(f"{library} {i}: grove refused it: {e}")
                failed += 1
                continue
            except Exception as e:  # the library's own refusal of a random setting (or this script's)
                print(f"{library} {i}: not trained: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}")
                continue
            checked += 1
            for k, (want, got) in enumerate(pairs):
                what = differs(want, got)
                if what:
                    print(f"{library} {i}: {'margins' if k else 'predictions'}: {what}; settings {settings}"
                          + (f"; calls of {CALL_ROWS} rows" if CALL_ROWS else ""))
                    failed += 1
    print(f"{checked} models checked, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
