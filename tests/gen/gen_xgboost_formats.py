#!/usr/bin/env python3
"""Generate the XGBoost fixtures beyond plain JSON (tests/models/xgboost/).

Three kinds, all with the XGBoost 3.x of the running interpreter (pip's):

  ubj_SPEC      UBJSON copies of some of tests/models/SPEC.x3.json (gen_xgboost.py's):
                the model re-saved with save_model("NAME.ubj"), its rows and expected
                outputs copied (checked to be what XGBoost predicts from the .ubj).
  cat_*         categorical splits (enable_categorical=True, feature_types "c"): one-hot
                (max_cat_to_onehot above the feature's categories) and partition-based
                (max_cat_to_onehot=1) sets, categories past 32 (sets of several words);
                the rows hold unseen, negative (-1, -0.5, -0.0), non-integer (2.5, 3.99),
                huge (2^24 - 1, 2^24, 1e10) and missing categories. Each is written as
                NAME.json and as NAME_ubj.ubj.
  mo_*          multi-output trees (multi_strategy="multi_output_tree": vector leaves), as
                JSON and UBJSON (XGBoost 3.2 trains no categorical multi-output trees); mo_reg3_v31 is mo_reg3 rewritten into the layout XGBoost
                2.0-3.1 write (a leaf's vector in base_weights at its node, no
                leaf_weights; see gen_v31_layout), which XGBoost 3.2 no longer reads.
  per_tree_reg3 several targets with one tree per target (the default multi_strategy).

Files per model NAME: the model, NAME.rows.csv (no header; "%.9g"; missing = empty
field), NAME.pred.csv (booster.predict(DMatrix(rows, enable_categorical=True))),
NAME.margin.csv (output_margin=True), all "%.17g" for expected values.

manifest.json lists them in the schema of fixtures() in tests/run.py. The unit test
tests/unit/front_xgboost.c reads every model and checks its HIR, walked by a reference
interpreter, against NAME.margin.csv.

Run from the repository root with the project's venv:

  /work/venv/bin/python tests/gen/gen_xgboost_formats.py        # the fixtures
  /work/venv/bin/python tests/gen/gen_xgboost_formats.py --bad  # tests/bad/xgboost (from mo_reg3.json and a tiny model)

Seeds are fixed and training single-threaded: a given XGBoost writes the same files.
"""

import json
import os
import shutil
import sys
from dataclasses import dataclass, field

import numpy as np
import xgboost as xgb

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
OUT = os.path.join(MODELS, "xgboost")
NAN = float("nan")

# gen_xgboost.py's fixtures re-saved as UBJSON (schedules: whether the schedule matrix runs them).
UBJ_COPIES = {"reg_squarederror": False, "binary_logistic": False, "multi_softprob3": True, "dart": False,
              "missing_directions": False, "base_score": False, "random_forest": False, "count_poisson": False,
              "deep": False}
PROBABILITY_OBJECTIVES = {"binary:logistic", "reg:logistic", "multi:softprob"}
BASE_PARAMS = {"nthread": 1, "seed": 20240, "tree_method": "hist", "eta": 0.3}


@dataclass
class Spec:
    name: str
    objective: str
    categories: list  # per feature: number of categories, or 0 for a numerical feature
    rounds: int = 10
    params: dict = field(default_factory=dict)
    targets: int = 1  # regression targets (labels per row)
    num_class: int = 0
    n_train: int = 1500
    missing: float = 0.08
    schedules: bool = False
    has: list = field(default_factory=list)  # what the model must contain: "in" (category sets), "leaf vectors"
    notes: str = ""


SPECS = [
    Spec("cat_onehot", "binary:logistic", [6, 0, 4, 0], rounds=10, params={"max_depth": 3, "max_cat_to_onehot": 16},
         has=["in"], notes="one-hot categorical splits (each set holds one category)"),
    Spec("cat_partition", "reg:squarederror", [70, 0, 40, 0], rounds=12, params={"max_depth": 4, "max_cat_to_onehot": 1},
         schedules=True, has=["in"], notes="partition-based sets over 70 and 40 categories (sets of 3 words)"),
    Spec("cat_multiclass", "multi:softprob", [45, 0, 0], rounds=5, num_class=3,
         params={"max_depth": 3, "max_cat_to_onehot": 1}, has=["in"], notes="3 classes, partition-based sets"),
    Spec("mo_reg3", "reg:squarederror", [0, 0, 0, 0], rounds=8, targets=3,
         params={"max_depth": 3, "multi_strategy": "multi_output_tree"}, schedules=True, has=["leaf vectors"],
         notes="3 targets, vector leaves (leaf_weights)"),
    Spec("mo_softprob4", "multi:softprob", [0, 0, 0, 0, 0], rounds=6, num_class=4,
         params={"max_depth": 3, "multi_strategy": "multi_output_tree"}, has=["leaf vectors"],
         notes="4 classes, one tree per round with vector leaves"),
    Spec("per_tree_reg3", "reg:squarederror", [0, 0, 0, 0], rounds=6, targets=3, params={"max_depth": 3},
         notes="3 targets, one tree per target per round (base_score vector)"),
]


def spec_seed(name):
    return sum((i + 1) * ord(c) for i, c in enumerate(name))


def feature_types(spec):
    return ["c" if k else "q" for k in spec.categories]


def make_features(rng, spec, n):
    X = rng.normal(size=(n, len(spec.categories)))
    for j, k in enumerate(spec.categories):
        if k:
            X[:, j] = rng.integers(0, k, n)
    X = X.astype(np.float32)
    X[rng.random(X.shape) < spec.missing] = np.nan
    return X


def make_labels(spec, rng, X):
    """A fixed function of the features: each category gets its own effect."""
    Z = np.nan_to_num(X.astype(np.float64), nan=0.0)
    score = np.zeros((len(X), max(spec.targets, spec.num_class, 1)))
    for j, k in enumerate(spec.categories):
        for t in range(score.shape[1]):
            if k:
                effect = np.sin(np.arange(k) * (1.3 + 0.7 * t + 0.5 * j))
                score[:, t] += effect[Z[:, j].astype(int) % k]
            else:
                score[:, t] += (0.8 - 0.3 * t) * Z[:, j] * (1 if j % 2 else -1)
    score += 0.2 * rng.normal(size=score.shape)
    if spec.objective == "binary:logistic":
        return (score[:, 0] > 0).astype(np.float64)
    if spec.num_class:
        return np.argmax(score, axis=1).astype(np.float64)
    return score if spec.targets > 1 else score[:, 0]


def special_rows(spec, rng, base):
    """For each categorical feature: values XGBoost treats specially, each in a random row."""
    values = [-1.0, -0.5, -0.0, 0.0, 2.5, 3.99, 31.0, 32.0, 33.0, 64.0, 100.0, 1000.0, 16777215.0, 16777216.0, 1e10, NAN]
    rows = []
    for j, k in enumerate(spec.categories):
        if not k:
            continue
        for v in values + [float(k), float(k) + 0.5]:  # k: the first unseen category
            row = base[rng.integers(len(base))].copy()
            row[j] = v
            rows.append(row)
    return np.array(rows, dtype=np.float32).reshape(-1, base.shape[1])


def dmatrix(spec, X, y=None):
    return xgb.DMatrix(X, label=y, missing=np.nan, feature_types=feature_types(spec), enable_categorical=True)


def fmt(v):
    return "%.17g" % float(v)


def write_rows(path, X):
    with open(path, "w") as out:
        for row in X:
            out.write(",".join("" if np.isnan(v) else "%.9g" % float(v) for v in row) + "\n")


def write_matrix(path, Y):
    Y = np.asarray(Y).reshape(len(Y), -1)
    with open(path, "w") as out:
        for row in Y:
            out.write(",".join(fmt(v) for v in row) + "\n")


def read_rows(path):
    with open(path) as f:
        return np.array([[NAN if s in ("", "nan") else float(s) for s in line.rstrip("\n").split(",")] for line in f],
                        dtype=np.float32)


def read_matrix(path):
    return np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)


def entry(name, model, spec_notes, objective, probability, rows, num_trees, schedules):
    e = {"name": name, "model": model, "objective": objective, "xgboost": xgb.__version__, "rows": rows,
         "probability": probability, "num_trees": num_trees, "schedules": schedules, "notes": spec_notes}
    return e


def copy_outputs(src, dst):
    for suffix in (".rows.csv", ".pred.csv", ".margin.csv"):
        shutil.copyfile(src + suffix, dst + suffix)


def ubj_copy(spec_name, schedules):
    """Re-save tests/models/SPEC.x3.json as UBJSON; check XGBoost predicts the same from it; copy the CSVs."""
    src = os.path.join(MODELS, spec_name + ".x3")
    name = "ubj_" + spec_name
    dst = os.path.join(OUT, name)
    booster = xgb.Booster(model_file=src + ".json")
    booster.save_model(dst + ".ubj")
    again = xgb.Booster(model_file=dst + ".ubj")
    X = read_rows(src + ".rows.csv")
    margin = np.asarray(again.predict(xgb.DMatrix(X, missing=np.nan), output_margin=True), np.float64).reshape(len(X), -1)
    assert np.allclose(margin, read_matrix(src + ".margin.csv"), rtol=1e-6, atol=1e-6), name
    copy_outputs(src, dst)
    with open(os.path.join(MODELS, "manifest.json")) as f:
        old = {e["name"]: e for e in json.load(f)}[spec_name + ".x3"]
    print("%-22s from %s.x3.json" % (name, spec_name))
    return entry(name, name + ".ubj", "UBJSON copy of %s.x3.json: %s" % (spec_name, old["notes"]), old["objective"],
                 old["probability"], old["rows"], old["num_trees"], schedules)


def v31_layout(model):
    """Rewrite vector-leaf trees into XGBoost 2.0-3.1's layout: base_weights holds every node's vector (a leaf's is
    its leaf_weights entry), a leaf's right child is -1, no leaf_weights (src/tree/multi_target_tree_model.cc, v3.1.3)."""
    for tree in model["learner"]["gradient_booster"]["model"]["trees"]:
        width = int(tree["tree_param"]["size_leaf_vector"])
        leaf_weights = tree.pop("leaf_weights")
        base = list(tree["base_weights"])
        for i, left in enumerate(tree["left_children"]):
            if left == -1:
                k = tree["right_children"][i]
                base[i * width:(i + 1) * width] = leaf_weights[k * width:(k + 1) * width]
                tree["right_children"][i] = -1
        tree["base_weights"] = base
    return model


def generate(spec):
    rng = np.random.default_rng(spec_seed(spec.name))
    X = make_features(rng, spec, spec.n_train)
    y = make_labels(spec, rng, X)
    params = dict(BASE_PARAMS, objective=spec.objective, **spec.params)
    if spec.num_class:
        params["num_class"] = spec.num_class
    booster = xgb.train(params, dmatrix(spec, X, y), num_boost_round=spec.rounds)
    base = make_features(rng, spec, 100)
    rows = np.concatenate([base, special_rows(spec, rng, base), np.full((1, base.shape[1]), np.nan, np.float32)])
    d = dmatrix(spec, rows)
    pred, margin = booster.predict(d), booster.predict(d, output_margin=True)
    assert np.allclose(margin, booster.inplace_predict(rows, missing=np.nan, predict_type="margin"), rtol=1e-6)

    path = os.path.join(OUT, spec.name)
    booster.save_model(path + ".json")
    with open(path + ".json") as f:
        model = json.load(f)
    trees = model["learner"]["gradient_booster"]["model"]["trees"]
    categorical = sum(t["split_type"].count(1) for t in trees)
    widths = {int(t["tree_param"]["size_leaf_vector"]) for t in trees}
    assert ("in" in spec.has) == (categorical > 0), (spec.name, categorical)
    assert ("leaf vectors" in spec.has) == (max(widths) > 1), (spec.name, widths)
    largest = max((max(t["categories"]) for t in trees if t["categories"]), default=-1)
    print("%-22s %-17s trees %3d categorical splits %3d largest category %3d leaf width %s rows %d"
          % (spec.name, spec.objective, len(trees), categorical, largest, sorted(widths), len(rows)))
    write_rows(path + ".rows.csv", rows)
    write_matrix(path + ".pred.csv", pred)
    write_matrix(path + ".margin.csv", margin)
    probability = spec.objective in PROBABILITY_OBJECTIVES
    out = [entry(spec.name, spec.name + ".json", spec.notes, spec.objective, probability, len(rows), len(trees),
                 spec.schedules)]
    if "in" in spec.has:  # category sets: also as code, whose splits test them against immediates
        out[0]["representations"] = ["code"]
    booster.save_model(path + "_ubj.ubj")
    copy_outputs(path, path + "_ubj")
    out.append(entry(spec.name + "_ubj", spec.name + "_ubj.ubj", spec.notes + "; UBJSON", spec.objective, probability,
                     len(rows), len(trees), False))
    if max(widths) > 1 and spec.name == "mo_reg3":
        with open(path + "_v31.json", "w") as f:
            json.dump(v31_layout(model), f, separators=(",", ":"))
        copy_outputs(path, path + "_v31")
        out.append(entry(spec.name + "_v31", spec.name + "_v31.json", spec.notes + "; rewritten into XGBoost 2.0-3.1's "
                         "layout (vectors in base_weights)", spec.objective, probability, len(rows), len(trees), False))
    return out


# ----------------------------------------------------------------------------- bad inputs

BAD = os.path.join(HERE, "..", "bad", "xgboost")


def tiny_categorical():
    """A two-tree categorical model (one-hot and partition splits) to derive the bad inputs from."""
    spec = Spec("tiny", "reg:squarederror", [40, 0], rounds=2, params={"max_depth": 2, "max_cat_to_onehot": 1})
    rng = np.random.default_rng(7)
    X = make_features(rng, spec, 400)
    booster = xgb.train(dict(BASE_PARAMS, objective=spec.objective, **spec.params), dmatrix(spec, X, make_labels(spec, rng, X)),
                        num_boost_round=spec.rounds)
    model = json.loads(booster.save_raw("json"))
    for tree in model["learner"]["gradient_booster"]["model"]["trees"]:
        for key in ("loss_changes", "sum_hessian", "base_weights", "parents"):
            tree.pop(key)  # grove does not read them: smaller files
    return booster, model


def write_bad(name, data, message):
    with open(os.path.join(BAD, name), "wb") as f:
        f.write(data)
    with open(os.path.join(BAD, name.rsplit(".", 1)[0] + ".err"), "w") as f:
        f.write(message + "\n")


def bad_inputs():
    """tests/bad/xgboost: UBJSON damaged at the byte level, and categorical / vector-leaf trees that break the rules."""
    os.makedirs(BAD, exist_ok=True)
    booster, model = tiny_categorical()
    ubj = bytes(booster.save_raw("ubj"))
    key = b"L" + (7).to_bytes(8, "big") + b"learner"
    assert ubj.startswith(b"{" + key)
    write_bad("ubj_truncated.ubj", ubj[:len(ubj) // 2], "runs past the end of the file")
    write_bad("ubj_truncated_end.ubj", ubj[:-1], "offset %d: the file ends inside the object that starts at offset 0" % (len(ubj) - 1))
    write_bad("ubj_key_past_end.ubj", b"{L" + (1 << 40).to_bytes(8, "big") + b"learner{}}",
              "offset 1: the key length 1099511627776 runs past the end of the file")
    write_bad("ubj_negative_length.ubj", b"{L" + (2**64 - 5).to_bytes(8, "big") + b"learner{}}", "offset 1: the key length is negative (-5)")
    at = ubj.index(b"[$d#L")  # the first typed float array: claim 2^60 elements
    write_bad("ubj_count_past_end.ubj", ubj[:at + 5] + (1 << 60).to_bytes(8, "big") + ubj[at + 13:],
              "offset %d: count 1152921504606846976 runs past the end of the file" % (at + 3))
    at = ubj.index(b"Sl") if b"Sl" in ubj else ubj.index(b"SL")
    write_bad("ubj_unknown_marker.ubj", ubj[:at] + b"Q" + ubj[at + 1:], "offset %d: unknown marker 'Q'" % at)

    def tree_variant(name, message, change):
        m = json.loads(json.dumps(model))
        change(m["learner"]["gradient_booster"]["model"]["trees"][0])
        write_bad(name, json.dumps(m, separators=(",", ":")).encode(), message)

    def segment(t):
        t["categories_segments"][0] = len(t["categories"])
    tree_variant("cat_segment_range.json", "trees[0].categories_segments[0]: segment of", segment)
    tree_variant("cat_negative.json", "trees[0].categories[0]: category -3 is negative",
                 lambda t: t["categories"].__setitem__(0, -3))
    tree_variant("cat_enormous.json", "trees[0].categories[0]: category 16777216 is too large",
                 lambda t: t["categories"].__setitem__(0, 1 << 24))
    tree_variant("cat_not_listed.json", "a categorical split that categories_nodes does not list",
                 lambda t: [t[k].pop() for k in ("categories_nodes", "categories_segments", "categories_sizes")])
    tree_variant("cat_numerical_node.json", "is not a categorical split",
                 lambda t: t["split_type"].__setitem__(t["categories_nodes"][0], 0))
    tree_variant("cat_split_type.json", "unknown split type 2 (0: numerical, 1: categorical)",
                 lambda t: t["split_type"].__setitem__(0, 2))
    tree_variant("cat_sizes_length.json", "trees[0].categories_sizes: 0 elements, but the length of categories_nodes is",
                 lambda t: t.__setitem__("categories_sizes", []))

    mo = json.load(open(os.path.join(OUT, "mo_reg3.json")))
    trees = mo["learner"]["gradient_booster"]["model"]["trees"]
    del trees[1:]
    mo["learner"]["gradient_booster"]["model"]["tree_info"] = [0]
    mo["learner"]["gradient_booster"]["model"]["gbtree_model_param"]["num_trees"] = "1"
    leaf = trees[0]["left_children"].index(-1)
    trees[0]["right_children"][leaf] = 99
    write_bad("mo_leaf_index.json", json.dumps(mo, separators=(",", ":")).encode(),
              "trees[0].right_children[%d]: leaf index 99 out of range" % leaf)
    trees[0]["right_children"][leaf] = 0
    trees[0]["tree_param"]["size_leaf_vector"] = "2"
    write_bad("mo_width.json", json.dumps(mo, separators=(",", ":")).encode(),
              "trees[0].tree_param.size_leaf_vector: leaves of 2 values, but the model has 3 outputs")
    print("bad inputs in", os.path.normpath(BAD))


def main():
    if sys.argv[1:] == ["--bad"]:
        bad_inputs()
        return
    os.makedirs(OUT, exist_ok=True)
    print("xgboost", xgb.__version__, "numpy", np.__version__, "python", sys.version.split()[0])
    entries = [ubj_copy(name, schedules) for name, schedules in UBJ_COPIES.items()]
    for spec in SPECS:
        entries += generate(spec)
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(entries, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
