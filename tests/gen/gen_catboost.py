#!/usr/bin/env python3
"""Generate the CatBoost fixtures of grove's end-to-end tests (tests/models/catboost/).

For every spec in SPECS this trains a small model with the catboost that the running
interpreter has (build/bench-venv/bin/python: tools/bench/setup.sh installs it), and
writes under tests/models/catboost/ (each NAME with the prefix cb_):

  NAME.json        the model, from save_model("NAME.json", format="json")
  NAME.rows.csv    the input rows, no header, a missing value as an empty field ("%.9g")
  NAME.pred.csv    predict_proba (classifiers) or predict (regressors), "%.17g"
  NAME.margin.csv  predict(prediction_type="RawFormulaVal")
  NAME.label.csv   a classifier's predict(): its class labels (where the model names its classes)

Rows: random rows like the training data with missing values, every float split's
border and the floats just below and above it, one-hot categories seen and unseen
(negative ones too).

Every entry goes to manifest.json, which tests/run.py runs.

  build/bench-venv/bin/python tests/gen/gen_catboost.py

Seeds are fixed and training is single-threaded and deterministic.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "models", "catboost")


def data(rng, n, features, missing, categories=()):
    """Rows of float32 features (a fraction `missing` NaN) and, at the columns in `categories`, integer categories."""
    X = rng.normal(size=(n, features)).astype(np.float32)
    X[rng.random(X.shape) < missing] = np.nan
    for c, (low, high) in categories:
        X[:, c] = rng.integers(low, high, n)
    return X


def border_rows(model, X, categories):
    """Rows whose float features sit on each border of the model's splits and one float either side."""
    rows = []
    info = model["features_info"]
    columns = {f["feature_index"]: f["flat_feature_index"] for f in info.get("float_features", [])}
    for tree in model["oblivious_trees"][:12]:
        for split in tree["splits"]:
            if split["split_type"] != "FloatFeature":
                continue
            b = np.float32(split["border"])
            for v in (b, np.nextafter(b, np.float32(-np.inf)), np.nextafter(b, np.float32(np.inf))):
                row = X[len(rows) % len(X)].copy()
                row[columns[split["float_feature_index"]]] = v
                rows.append(row)
    return np.array(rows, dtype=np.float32).reshape(-1, X.shape[1])


def write_rows(path, X):
    with open(path, "w") as f:
        for row in X:
            f.write(",".join("" if np.isnan(v) else "%.9g" % v for v in row) + "\n")


def write_table(path, Y):
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y.reshape(len(Y), -1)
    with open(path, "w") as f:
        for row in Y:
            f.write(",".join("%.17g" % v for v in row) + "\n")


def frame(X, categories):
    """X for CatBoost: a DataFrame whose category columns are integers (CatBoost reads them as their text)."""
    import pandas as pd
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    for c, _ in categories:
        df[f"f{c}"] = X[:, c].astype(np.int64)
    return df


# name, estimator, its parameters, features, labels recipe, categories (column, [low, high)), notes
SPECS = [
    ("binary", "CatBoostClassifier", {"iterations": 30, "depth": 4}, 6, "binary", (), "Logloss, NaN as the minimum"),
    ("binary_nan_max", "CatBoostClassifier", {"iterations": 20, "depth": 3, "nan_mode": "Max"}, 5, "binary", (),
     "nan_mode=Max: NaN's tests are true"),
    ("cross_entropy", "CatBoostClassifier", {"iterations": 15, "depth": 5, "loss_function": "CrossEntropy"}, 5,
     "binary", (), "CrossEntropy"),
    ("multiclass", "CatBoostClassifier", {"iterations": 20, "depth": 4, "loss_function": "MultiClass"}, 6, "three",
     (), "MultiClass: softmax of leaf vectors"),
    ("one_vs_all", "CatBoostClassifier", {"iterations": 15, "depth": 3, "loss_function": "MultiClassOneVsAll"}, 5,
     "three", (), "MultiClassOneVsAll: a sigmoid per class"),
    ("strings", "CatBoostClassifier", {"iterations": 10, "depth": 6}, 4, "words", (),
     "string class names, depth 6"),
    ("regression", "CatBoostRegressor", {"iterations": 40, "depth": 6}, 8, "real", (), "RMSE, with a bias"),
    ("poisson", "CatBoostRegressor", {"iterations": 20, "depth": 4, "loss_function": "Poisson"}, 5, "counts", (),
     "Poisson: exp"),
    ("quantile", "CatBoostRegressor", {"iterations": 20, "depth": 5, "loss_function": "Quantile:alpha=0.3"}, 5,
     "real", (), "Quantile"),
    ("one_hot", "CatBoostClassifier", {"iterations": 30, "depth": 4, "one_hot_max_size": 10}, 6, "categories",
     ((2, (-3, 5)), (4, (0, 8))), "one-hot categorical features, negative categories too"),
]


def labels(recipe, X, rng):
    x = np.nan_to_num(X)
    if recipe == "binary":
        return (x[:, 0] + x[:, 1] * x[:, 2] > 0).astype(int)
    if recipe == "three":
        return (np.digitize(x[:, 0] + 0.5 * x[:, 1], [-0.5, 0.5])).astype(int)
    if recipe == "words":
        return np.where(x[:, 0] - x[:, 3] > 0, "yes", "no")
    if recipe == "real":
        return x[:, 0] * 3 + np.sin(x[:, 1]) + 0.1 * rng.normal(size=len(x))
    if recipe == "counts":
        return rng.poisson(np.exp(0.5 * x[:, 0]))
    if recipe == "categories":
        return ((x[:, 2] == 1) | (x[:, 2] == -2) ^ (x[:, 4] == 5) | (x[:, 0] > 1)).astype(int)
    raise ValueError(recipe)


def main():
    import catboost
    os.makedirs(OUT, exist_ok=True)
    manifest = []
    for i, (name, kind, params, features, recipe, categories, notes) in enumerate(SPECS):
        rng = np.random.default_rng(20261203 + i)
        X = data(rng, 800, features, 0.1, categories)
        y = labels(recipe, X, rng)
        cat = [c for c, _ in categories]
        est = getattr(catboost, kind)(**params, random_seed=1, verbose=False, thread_count=1,
                                      allow_writing_files=False, cat_features=cat or None)
        est.fit(frame(X, categories), y)
        name = "cb_" + name  # fixture names are one namespace over every format's folder
        path = os.path.join(OUT, name + ".json")
        est.save_model(path, format="json")
        with open(path) as f:
            model = json.load(f)
        unseen = [(c, (low - 2, high + 3)) for c, (low, high) in categories]
        rows = np.concatenate([data(rng, 80, features, 0.15, unseen), border_rows(model, X, categories)])
        rows_df = frame(rows, categories)
        classifier = kind == "CatBoostClassifier"
        write_rows(os.path.join(OUT, name + ".rows.csv"), rows)
        write_table(os.path.join(OUT, name + ".pred.csv"), est.predict_proba(rows_df) if classifier
                    else est.predict(rows_df))
        write_table(os.path.join(OUT, name + ".margin.csv"), est.predict(rows_df, prediction_type="RawFormulaVal"))
        entry = {"name": name, "model": name + ".json", "probability": classifier, "num_trees": est.tree_count_,
                 "catboost": catboost.__version__, "rows": len(rows), "notes": notes}
        if model["model_info"].get("class_params", {}).get("class_names"):
            with open(os.path.join(OUT, name + ".label.csv"), "w") as f:
                f.write("".join(f"{v}\n" for v in np.asarray(est.predict(rows_df)).reshape(-1)))
        if name == "cb_binary":
            entry["representations"] = ["array", "oblivious"]
        manifest.append(entry)
        print(f"{name}: {est.tree_count_} trees, {len(rows)} rows")
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
