"""Write large XGBoost models for measuring compile time (issue 7, item 5).

    /work/venv/bin/python tools/gen_big_models.py OUTDIR

writes OUTDIR/trees1000_depth8.json (1000 trees of depth 8, 28 features) and
OUTDIR/trees100000.json (100,000 trees of depth 4, about 175 MB of JSON). Random rows
with a signal in a few features; the models are data, not meant to predict well.
Training 100,000 rounds takes long, so the large model is 1000 trained trees repeated
100 times (each copy with its own id), which XGBoost loads and predicts with as usual.
"""
import json
import os
import sys

import numpy as np
import xgboost as xgb


def train(rows, features, trees, depth, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, features)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] * x[:, 2] + np.sin(x[:, 3]) + rng.normal(scale=0.5, size=rows) > 0).astype(np.float32)
    params = {"objective": "binary:logistic", "max_depth": depth, "eta": 0.05, "tree_method": "hist", "nthread": 2,
              "seed": seed}
    return xgb.train(params, xgb.DMatrix(x, label=y), num_boost_round=trees)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "trees1000_depth8.json")
    if not os.path.exists(path):
        train(20000, 28, 1000, 8, 1).save_model(path)
    big = os.path.join(out, "trees100000.json")
    train(5000, 28, 1000, 4, 2).save_model(big)
    repeat(big, 100)


def repeat(path, times):
    """Make the model at path hold its trees `times` times over."""
    with open(path) as f:
        model = json.load(f)
    gbm = model["learner"]["gradient_booster"]["model"]
    trees = gbm["trees"]
    n = len(trees)
    gbm["trees"] = []
    for k in range(times):
        for t in trees:
            copy = dict(t)
            copy["id"] = len(gbm["trees"])
            gbm["trees"].append(copy)
    gbm["tree_info"] = gbm["tree_info"] * times
    gbm["gbtree_model_param"]["num_trees"] = str(n * times)
    gbm["iteration_indptr"] = list(range(n * times + 1))
    with open(path, "w") as f:
        json.dump(model, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
