#!/usr/bin/env python3
"""Generate the fixtures of category values (tests/models/category_values/): models trained
on pandas DataFrames with categorical columns, whose files name the categories, and rows
that give those columns by value, as `grove predict` reads them from CSV.

  NAME.txt / NAME.json / NAME.ubj   the model (LightGBM text, XGBoost JSON and UBJSON)
  NAME.rows.csv                     a header and rows, categorical columns by value: every
                                    category, missing ones, numbers written another way
                                    ("20.0"), and for LightGBM categories it never saw
  NAME.pred.csv                     the library's predict on the DataFrame, "%.17g"

Each column's categories are listed in an order other than sorted and other than the
rows', so that a reader taking a category's code for its value is wrong.

  build/bench-venv/bin/python tests/gen/gen_category_values.py
"""

import os

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "models", "category_values")
COLOURS = ["red", "green", "blue, dark", "violet", "\"quoted\"", "amber"]
SIZES = [30, 10, 20]


def frame(rng, n, unseen=False):
    colours = list(COLOURS) + (["ultraviolet"] if unseen else [])
    df = pd.DataFrame({
        "a": rng.normal(size=n),
        "colour": pd.Categorical(rng.choice(colours, n), categories=COLOURS[::-1] if not unseen else None),
        "k": rng.integers(0, 5, n).astype(float),
        "size": pd.Categorical(rng.choice(SIZES, n), categories=SIZES),
    })
    df.loc[rng.random(n) < 0.1, "a"] = np.nan
    df.loc[rng.random(n) < 0.1, "colour"] = np.nan
    return df


def labels(df):
    c = df["colour"].astype(object)
    score = df["a"].fillna(0) + 1.5 * (c == "green") - 1.0 * (c == "blue, dark") + 0.8 * (c == "\"quoted\"") \
        + 0.7 * (df["size"].astype(float) == 20) + 0.3 * df["k"]
    return (score > 0.9).astype(int)


def write_rows(path, df, size_text):
    """The rows as CSV: a header, categories by value (quoted where they hold commas or quotes), missing as empty."""
    def field(v):
        if isinstance(v, float) and np.isnan(v):
            return ""
        s = str(v)
        return '"' + s.replace('"', '""') + '"' if any(ch in s for ch in ',"') else s
    with open(path, "w") as f:
        f.write(",".join(df.columns) + "\n")
        for i, row in enumerate(df.astype(object).itertuples(index=False)):
            values = [field(v) for v in row]
            if size_text and i % 3 == 0 and values[3]:
                values[3] = values[3] + ".0"  # a number written another way is the same category
            f.write(",".join(values) + "\n")


def write_pred(path, pred):
    np.savetxt(path, np.asarray(pred, dtype=np.float64).reshape(len(pred), -1), fmt="%.17g", delimiter=",")


def main():
    import lightgbm as lgb
    import xgboost as xgb
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(7)
    train = frame(rng, 3000)
    y = labels(train)
    rows = frame(np.random.default_rng(8), 200)
    seen = frame(np.random.default_rng(9), 40, unseen=True)  # LightGBM: a category it never saw is missing
    lgb_rows = pd.concat([rows, seen], ignore_index=True)
    lgb_rows["colour"] = pd.Categorical(lgb_rows["colour"])  # (concat made it text: its categories differ)

    booster = lgb.LGBMClassifier(n_estimators=8, num_leaves=7, min_child_samples=5, verbose=-1,
                                 deterministic=True, num_threads=1).fit(train, y).booster_
    booster.save_model(os.path.join(OUT, "lightgbm_frame.txt"))
    write_rows(os.path.join(OUT, "lightgbm_frame.rows.csv"), lgb_rows, True)
    write_pred(os.path.join(OUT, "lightgbm_frame.pred.csv"), booster.predict(lgb_rows))

    # categorical features given by hand: the frame's categorical columns are numbers to the model, the lists unplaced
    by_hand = lgb.LGBMClassifier(n_estimators=2, num_leaves=4, verbose=-1, num_threads=1).fit(train, y, categorical_feature=["k"])
    by_hand.booster_.save_model(os.path.join(OUT, "lightgbm_by_hand.txt"))

    model = xgb.XGBClassifier(n_estimators=8, max_depth=3, enable_categorical=True, tree_method="hist",
                              nthread=1).fit(train, y)
    model.save_model(os.path.join(OUT, "xgboost_frame.json"))
    model.save_model(os.path.join(OUT, "xgboost_frame.ubj"))
    write_rows(os.path.join(OUT, "xgboost_frame.rows.csv"), rows, True)
    write_pred(os.path.join(OUT, "xgboost_frame.pred.csv"), model.predict_proba(rows)[:, 1])
    with open(os.path.join(OUT, "xgboost_frame.unseen.csv"), "w") as f:
        f.write("a,colour,k,size\n0.5,ultraviolet,1,10\n")


if __name__ == "__main__":
    main()
