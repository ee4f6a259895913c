#!/usr/bin/env python3
"""Generate the ONNX-ML fixtures of grove's end-to-end tests (tests/models/onnx/).

Three kinds of models, every one small and built from fixed seeds:

  * scikit-learn trees and forests converted by skl2onnx (decision tree, random forest,
    extra trees, gradient boosting; regressors and classifiers, binary and multiclass);
  * XGBoost and LightGBM models converted by onnxmltools;
  * hand-built graphs (onnx.helper) for what converters do not write: every node mode,
    missing-value tracking, the aggregates, the post-transforms, *_as_tensor doubles on
    double rows, node ids in any order, and opset 5's TreeEnsemble with BRANCH_MEMBER
    sets and leaves adding to several targets.

For each model NAME it writes

  NAME.onnx         the model
  NAME.rows.csv     the input rows, no header; "%.9g" for float rows, "%.17g" for double
                    rows; a missing value is an empty field
  NAME.pred.csv     onnxruntime's output (the scores of a classifier), "%.17g"
  NAME.label.csv    onnxruntime's label output of a classifier, one label per line
  NAME.margin.csv   the same model with post_transform NONE, where it has a transform;
                    for onnxruntime's binary case (two classes, weights for class 0 only)
                    the one score s (column 1 of onnxruntime's [1 - s, s] or [-s, s]),
                    which is grove's one margin

Expected values come from onnxruntime after checking it against the source library
(scikit-learn, XGBoost, LightGBM) or, for the hand-built graphs, against evaluate() below,
which follows the ONNX specification. Where onnxruntime departs from the specification
(NaN on BRANCH_NEQ, LOGISTIC on a single-target regressor, base values of targets no leaf
adds to, the root of a tree whose nodes are not listed root first) the expected values
are the specification's; the script prints every disagreement it finds.

manifest.json lists them in the schema of fixtures() in tests/run.py. From the
repository root:

  /work/venv/bin/python tests/gen/gen_onnx.py
"""

import json
import math
import os
import sys
import tempfile
import warnings

import numpy as np
import onnx
import onnxruntime as rt
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "onnx")
ML = "ai.onnx.ml"



def write_csv(path, rows, fmt):
    with open(path, "w") as f:
        for row in rows:
            f.write(",".join("" if math.isnan(v) else fmt % v for v in row) + "\n")


def run(model, rows):
    """onnxruntime's scores for rows (the classifier's probabilities, as a 2-D array)."""
    sess = rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs = sess.run(None, {sess.get_inputs()[0].name: rows})
    scores = outputs[-1] if len(outputs) > 1 else outputs[0]
    if isinstance(scores, list):  # ZipMap: a dict per row
        scores = np.array([[d[k] for k in sorted(d)] for d in scores])
    return np.asarray(scores, dtype=np.float64).reshape(len(rows), -1)


def run_labels(model, rows):
    """onnxruntime's label output for rows, when the classifier's label is a graph output; else None."""
    nodes = [n for n in model.graph.node if n.op_type == "TreeEnsembleClassifier"]
    outputs = [o.name for o in model.graph.output]
    if not nodes or nodes[0].output[0] not in outputs:
        return None
    sess = rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    labels = sess.run([nodes[0].output[0]], {sess.get_inputs()[0].name: rows})[0]
    labels = [x.decode() if isinstance(x, bytes) else str(x) for x in np.asarray(labels).reshape(-1)]
    attributes = {a.name: a for a in nodes[0].attribute}
    names = ([str(v) for v in attributes["classlabels_int64s"].ints] if "classlabels_int64s" in attributes
             else [v.decode() for v in attributes["classlabels_strings"].strings])
    if not set(labels) <= set(names) and set(labels) <= {"0", "1"}:
        # Two classes that both have weights: onnxruntime answers 1 or 0 (its positive and
        # negative label) instead of the class labels; the specification's label is the class's.
        print(f"  onnxruntime labels classes by 0/1 instead of {names}: expected labels are the classes'")
        labels = [names[int(x)] for x in labels]
    return labels


def without_transform(model):
    """A copy of the model with the ensemble's post_transform NONE (its margins), or None if it had none."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for node in copy.graph.node:
        for a in node.attribute:
            if a.name == "post_transform" and a.s not in (b"", b"NONE") and a.type == onnx.AttributeProto.STRING:
                a.s = b"NONE"
                return copy
            if a.name == "post_transform" and a.type == onnx.AttributeProto.INT and a.i != 0:
                a.i = 0
                return copy
    return None


def report(name, what, got, want):
    err = float(np.nanmax(np.abs(got - want))) if got.size else 0.0
    flag = "" if err <= 1e-5 else "   <-- differs"
    print(f"  {name}: onnxruntime vs {what}: largest difference {err:.3g}{flag}")
    return err


ENTRIES = []


def binary_case(model):
    """Whether the model is onnxruntime's binary case: a classifier of two labels whose weights all go to class 0."""
    for node in model.graph.node:
        a = {x.name: x for x in node.attribute}
        if node.op_type == "TreeEnsembleClassifier":
            labels = len(a["classlabels_int64s"].ints) if "classlabels_int64s" in a else len(a["classlabels_strings"].strings)
            return labels == 2 and set(a["class_ids"].ints) == {0}
    return False


def save(name, model, rows, expected, probability, double_rows=False, margin=None, schedules=False, reference=None,
         representations=None):
    """Write the fixture's files and its manifest entry."""
    model.graph.name = name  # onnxmltools names graphs with a random uuid
    imports = sorted((o.domain, o.version) for o in model.opset_import)  # skl2onnx lists them in set order
    del model.opset_import[:]
    model.opset_import.extend(helper.make_opsetid(d, v) for d, v in imports)
    onnx.checker.check_model(model)
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())
    fmt = "%.17g" if double_rows else "%.9g"
    write_csv(os.path.join(OUT, name + ".rows.csv"), rows, fmt)
    write_csv(os.path.join(OUT, name + ".pred.csv"), expected, "%.17g")
    if margin is not None and binary_case(model):
        margin = margin[:, 1:]
    if margin is not None:
        write_csv(os.path.join(OUT, name + ".margin.csv"), margin, "%.17g")
    labels = run_labels(model, rows)
    if labels is not None:
        with open(os.path.join(OUT, name + ".label.csv"), "w") as f:
            f.write("".join(label + "\n" for label in labels))
    num_trees = len({(n.name, t) for n in model.graph.node for a in n.attribute
                     if a.name in ("nodes_treeids",) for t in a.ints}) or None
    entry = {"name": name, "model": name + ".onnx", "probability": probability, "schedules": schedules}
    if num_trees:
        entry["num_trees"] = num_trees
    if double_rows:
        entry["f64_rows"] = True
    if reference:
        entry["reference"] = reference
    if representations:
        entry["representations"] = representations
    ENTRIES.append(entry)


def random_rows(rng, n, features, missing=0.0, dtype=np.float32):
    rows = rng.uniform(-3, 3, size=(n, features)).astype(dtype)
    if missing:
        rows[rng.random_sample(rows.shape) < missing] = np.nan
    return rows


# ---------------------------------------------------------------------------------------
# Converted models


def sklearn_models(rng):
    from skl2onnx import to_onnx
    from sklearn import ensemble, tree
    X = random_rows(rng, 600, 6)
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] - 0.5 * X[:, 3]
    binary = (y > 0).astype(np.int64)
    multi = np.digitize(y, [-1.0, 0.0, 1.0]).astype(np.int64)
    rows = random_rows(rng, 120, 6)
    opset = {"": 17, ML: 3}
    specs = [
        ("sk_dt_regressor", tree.DecisionTreeRegressor(max_depth=6, random_state=1), y, True),
        ("sk_rf_regressor", ensemble.RandomForestRegressor(8, max_depth=5, random_state=1), y, False),
        ("sk_et_regressor", ensemble.ExtraTreesRegressor(8, max_depth=5, random_state=1), y, False),
        ("sk_gb_regressor", ensemble.GradientBoostingRegressor(n_estimators=20, max_depth=3, random_state=1), y, False),
        ("sk_dt_binary", tree.DecisionTreeClassifier(max_depth=5, random_state=1), binary, False),
        ("sk_rf_binary", ensemble.RandomForestClassifier(8, max_depth=5, random_state=1), binary, False),
        ("sk_gb_binary", ensemble.GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=1), binary, True),
        ("sk_rf_multiclass", ensemble.RandomForestClassifier(6, max_depth=5, random_state=1), multi, True),
        ("sk_et_multiclass", ensemble.ExtraTreesClassifier(6, max_depth=5, random_state=1), multi, False),
        ("sk_gb_multiclass", ensemble.GradientBoostingClassifier(n_estimators=8, max_depth=3, random_state=1), multi, False),
    ]
    for name, est, target, schedules in specs:
        est.fit(X, target)
        classifier = hasattr(est, "predict_proba")
        # sk_rf_multiclass keeps skl2onnx's ZipMap (a map per row); the others ask for a plain tensor.
        options = {id(est): {"zipmap": False}} if classifier and name != "sk_rf_multiclass" else None
        model = to_onnx(est, X[:1], target_opset=opset, options=options)
        got = run(model, rows)
        want = est.predict_proba(rows) if classifier else est.predict(rows).reshape(-1, 1)
        report(name, "scikit-learn", got, want)
        plain = without_transform(model)
        save(name, model, rows, got, classifier, margin=run(plain, rows) if plain else None, schedules=schedules)


def xgboost_models(rng):
    import xgboost as xgb
    from onnxmltools import convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType
    X = random_rows(rng, 600, 5, missing=0.1)
    y = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2 + 0.3 * np.nan_to_num(X[:, 2])
    rows = random_rows(rng, 120, 5, missing=0.15)
    specs = [
        ("xgb_regressor", xgb.XGBRegressor(n_estimators=15, max_depth=4, random_state=1), y),
        ("xgb_binary", xgb.XGBClassifier(n_estimators=12, max_depth=3, random_state=1), (y > 0).astype(int)),
        ("xgb_multiclass", xgb.XGBClassifier(n_estimators=6, max_depth=3, random_state=1), np.digitize(y, [-1.5, 0.0, 1.0])),
    ]
    for name, est, target in specs:
        est.set_params(n_jobs=1, base_score=0.5 if name != "xgb_regressor" else 0.0)
        est.fit(X, target)
        classifier = hasattr(est, "predict_proba")
        model = convert_xgboost(est, initial_types=[("X", FloatTensorType([None, 5]))], target_opset=15)
        got = run(model, rows)
        want = est.predict_proba(rows) if classifier else est.predict(rows).reshape(-1, 1)
        report(name, "XGBoost", got, want)
        plain = without_transform(model)
        save(name, model, rows, got, classifier, margin=run(plain, rows) if plain else None, schedules=name == "xgb_multiclass")


def lightgbm_models(rng):
    import lightgbm as lgb
    from onnxmltools import convert_lightgbm
    from onnxmltools.convert.common.data_types import FloatTensorType
    X = random_rows(rng, 600, 5, missing=0.1)
    y = np.nan_to_num(X[:, 0]) * np.nan_to_num(X[:, 3]) + np.nan_to_num(X[:, 1])
    rows = random_rows(rng, 120, 5, missing=0.15)
    params = dict(n_estimators=10, num_leaves=8, min_child_samples=5, random_state=1, verbose=-1, n_jobs=1)
    specs = [
        ("lgbm_regressor", lgb.LGBMRegressor(**params), y),
        ("lgbm_binary", lgb.LGBMClassifier(**params), (y > 0).astype(int)),
        ("lgbm_multiclass", lgb.LGBMClassifier(**params), np.digitize(y, [-1.0, 0.0, 1.0])),
    ]
    for name, est, target in specs:
        est.fit(X, target)
        classifier = hasattr(est, "predict_proba")
        model = convert_lightgbm(est, initial_types=[("X", FloatTensorType([None, 5]))], target_opset=15,
                                 zipmap=False)
        got = run(model, rows)
        want = est.predict_proba(rows) if classifier else est.predict(rows).reshape(-1, 1)
        # LightGBM compares float64 rows with float64 thresholds; the ONNX model rounded them to float32.
        report(name, "LightGBM", got, want)
        plain = without_transform(model)
        save(name, model, rows, got, classifier, margin=run(plain, rows) if plain else None)


def catboost_models(rng):
    """CatBoost's own ONNX export of a binary classifier: symmetric trees whose every leaf adds [-v, v] to the two
    classes (grove keeps one margin: lower/hir_mirror.c)."""
    from catboost import CatBoostClassifier
    X = random_rows(rng, 600, 5, missing=0.1)
    y = (np.nan_to_num(X[:, 0]) * np.nan_to_num(X[:, 3]) + np.nan_to_num(X[:, 1]) > 0).astype(int)
    rows = random_rows(rng, 120, 5, missing=0.15)
    est = CatBoostClassifier(iterations=20, depth=4, random_seed=1, verbose=False, thread_count=1,
                             allow_writing_files=False).fit(X, y)
    with tempfile.TemporaryDirectory() as d:
        est.save_model(os.path.join(d, "m.onnx"), format="onnx")
        model = onnx.load(os.path.join(d, "m.onnx"))
    got = run(model, rows)
    report("catboost_binary", "CatBoost", got, est.predict_proba(rows))
    plain = without_transform(model)
    save("catboost_binary", model, rows, got, True, margin=run(plain, rows) if plain else None,
         representations=["array", "oblivious"])


# ---------------------------------------------------------------------------------------
# Hand-built graphs. A tree is a leaf ("leaf", {target: weight}) or a split
# (mode, feature, threshold or category set, missing_tracks_true, true subtree, false subtree).

MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER"]


def L(weights):
    return ("leaf", weights)


def S(mode, feature, threshold, tracks_true, yes, no):
    return (mode, feature, threshold, tracks_true, yes, no)


def erf_inv(x):
    """onnxruntime's ErfInv, in float32."""
    f = np.float32
    sgn = f(-1) if x < 0 else f(1)
    x = (f(1) - f(x)) * (f(1) + f(x))
    log = np.log(x)
    v = f(2) / (f(3.14159) * f(0.147)) + f(0.5) * log
    v2 = f(1) / f(0.147) * log
    v3 = -v + np.sqrt(v * v - v2)
    return sgn * np.sqrt(v3)


def transform(values, post):
    v = np.array(values, dtype=np.float64)
    if post == "LOGISTIC":
        return 1 / (1 + np.exp(-v))
    if post == "SOFTMAX":
        e = np.exp(v - v.max())
        return e / e.sum()
    if post == "SOFTMAX_ZERO":
        nonzero = np.abs(v) > 1e-7
        e = np.where(nonzero, np.exp(v - v.max()), 0.0)
        return e / e.sum()
    if post == "PROBIT":
        return np.array([math.sqrt(2) * float(erf_inv(np.float32(2 * x - 1))) for x in v])
    return v


def evaluate(trees, rows, targets, base, aggregate="SUM", post="NONE"):
    """The ONNX specification's prediction for rows."""
    out = []
    for row in rows:
        scores = [[] for _ in range(targets)]
        for tree in trees:
            node = tree
            while node[0] != "leaf":
                mode, feature, threshold, tracks, yes, no = node
                x = float(row[feature])
                if math.isnan(x):
                    node = yes if tracks else no
                    continue
                if mode == "BRANCH_MEMBER":
                    test = x in threshold
                else:
                    test = {"BRANCH_LEQ": x <= threshold, "BRANCH_LT": x < threshold, "BRANCH_GTE": x >= threshold,
                            "BRANCH_GT": x > threshold, "BRANCH_EQ": x == threshold, "BRANCH_NEQ": x != threshold}[mode]
                node = yes if test else no
            for t, w in node[1].items():
                scores[t].append(w)
        margins = []
        for t in range(targets):
            s = scores[t]
            a = (sum(s) if aggregate == "SUM" else sum(s) / len(trees) if aggregate == "AVERAGE" else
                 min(s) if aggregate == "MIN" and s else max(s) if s else 0.0)
            margins.append(a + (base[t] if base else 0.0))
        out.append(transform(margins, post))
    return np.array(out)


def flatten(trees, order=None):
    """Opsets 1-3: the trees as nodes_* and target_* lists. order(tree index, node count) may permute the ids."""
    nodes = {k: [] for k in ("treeids", "nodeids", "featureids", "modes", "values", "truenodeids", "falsenodeids",
                             "missing_value_tracks_true")}
    weights = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}
    for t, tree in enumerate(trees):
        tree_id, listed = (order(t) if order else (t, None))
        queue, numbered = [tree], []
        while queue:  # breadth first: node i gets id i
            node = queue.pop(0)
            numbered.append(node)
            if node[0] != "leaf":
                queue += [node[4], node[5]]
        ids = list(range(len(numbered))) if listed is None else listed(len(numbered))
        child = 1
        entries = []
        for i, node in enumerate(numbered):
            if node[0] == "leaf":
                entries.append((ids[i], 0, "LEAF", 0.0, 0, 0, 0))
                for target, w in node[1].items():
                    weights["treeids"].append(tree_id)
                    weights["nodeids"].append(ids[i])
                    weights["ids"].append(target)
                    weights["weights"].append(w)
            else:
                entries.append((ids[i], node[1], node[0], node[2], ids[child], ids[child + 1], node[3]))
                child += 2
        if listed is not None:
            entries = [entries[i] for i in np.random.RandomState(t).permutation(len(entries))]
        for e in entries:
            for key, value in zip(("nodeids", "featureids", "modes", "values", "truenodeids", "falsenodeids",
                                   "missing_value_tracks_true"), e):
                nodes[key].append(value)
            nodes["treeids"].append(tree_id)
    return nodes, weights


def graph(node, features, outputs, input_type=TensorProto.FLOAT, opset=3, extra=(), output_name="Y", before=()):
    inputs = [helper.make_tensor_value_info("X", input_type, [None, features])]
    outs = [helper.make_tensor_value_info(output_name, TensorProto.FLOAT, [None, outputs])]
    if node.op_type == "TreeEnsembleClassifier":
        outs.insert(0, helper.make_tensor_value_info("label", TensorProto.STRING if any(
            a.name == "classlabels_strings" for a in node.attribute) else TensorProto.INT64, [None]))
    g = helper.make_graph([*before, node, *extra], "g", inputs, outs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, opset)])


def regressor(trees, targets, base=None, aggregate="SUM", post="NONE", doubles=False, order=None, output="Y", **kw):
    nodes, weights = flatten(trees, order)
    attrs = {f"nodes_{k}": v for k, v in nodes.items() if k != "values"}
    if doubles:
        attrs["nodes_values_as_tensor"] = numpy_helper.from_array(np.array(nodes["values"], dtype=np.float64))
        attrs["target_weights_as_tensor"] = numpy_helper.from_array(np.array(weights["weights"], dtype=np.float64))
        if base:
            attrs["base_values_as_tensor"] = numpy_helper.from_array(np.array(base, dtype=np.float64))
    else:
        attrs["nodes_values"] = nodes["values"]
        attrs["target_weights"] = weights["weights"]
        if base:
            attrs["base_values"] = base
    attrs.update({f"target_{k}": v for k, v in weights.items() if k != "weights"})
    return helper.make_node("TreeEnsembleRegressor", ["X"], [output], domain=ML, n_targets=targets,
                            aggregate_function=aggregate, post_transform=post, **attrs, **kw)


def classifier(trees, labels, base=None, post="NONE"):
    nodes, weights = flatten(trees)
    attrs = {f"nodes_{k}": v for k, v in nodes.items()}
    attrs.update({f"class_{k}": v for k, v in weights.items()})
    key = "classlabels_strings" if isinstance(labels[0], str) else "classlabels_int64s"
    if base:
        attrs["base_values"] = base
    return helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "Y"], domain=ML, post_transform=post,
                            **{key: labels}, **attrs)


def tree_ensemble(trees, targets, aggregate="SUM", post="NONE", dtype=np.float32):
    """Opset 5's TreeEnsemble (every leaf adds to one target)."""
    a = {k: [] for k in ("featureids", "modes", "splits", "truenodeids", "falsenodeids", "trueleafs", "falseleafs",
                         "missing_value_tracks_true")}
    leaf_targets, leaf_weights, roots, members = [], [], [], []

    def leaf(node):
        (target, w), = node[1].items()
        leaf_targets.append(target)
        leaf_weights.append(w)
        return len(leaf_weights) - 1

    def visit(node):
        i = len(a["featureids"])
        for k in a:
            a[k].append(0)
        if node[0] == "leaf":  # a one-leaf tree: both branches to the same leaf
            j = leaf(node)
            a["truenodeids"][i] = a["falsenodeids"][i] = j
            a["trueleafs"][i] = a["falseleafs"][i] = 1
            return i
        mode, feature, threshold, tracks, yes, no = node
        a["featureids"][i], a["modes"][i], a["missing_value_tracks_true"][i] = feature, MODES.index(mode), tracks
        if mode == "BRANCH_MEMBER":
            members.extend(sorted(threshold) + [math.nan])
        else:
            a["splits"][i] = threshold
        for side, child in (("true", yes), ("false", no)):
            if child[0] == "leaf":
                a[f"{side}nodeids"][i], a[f"{side}leafs"][i] = leaf(child), 1
            else:
                a[f"{side}nodeids"][i] = visit(child)
        return i

    for tree in trees:
        roots.append(visit(tree))
    attrs = {f"nodes_{k}": v for k, v in a.items() if k not in ("modes", "splits")}
    attrs["nodes_modes"] = numpy_helper.from_array(np.array(a["modes"], dtype=np.uint8))
    attrs["nodes_splits"] = numpy_helper.from_array(np.array(a["splits"], dtype=dtype))
    attrs["leaf_weights"] = numpy_helper.from_array(np.array(leaf_weights, dtype=dtype))
    if members:
        attrs["membership_values"] = numpy_helper.from_array(np.array(members[:-1], dtype=dtype))
    return helper.make_node("TreeEnsemble", ["X"], ["Y"], domain=ML, n_targets=targets, tree_roots=roots,
                            leaf_targetids=leaf_targets, aggregate_function=["AVERAGE", "SUM", "MIN", "MAX"].index(aggregate),
                            post_transform=["NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"].index(post), **attrs)


def special_rows(rng, n, features, special, missing=0.15, dtype=np.float32):
    """Rows mixing random values, the given special values (thresholds, categories) and NaN."""
    rows = rng.uniform(-3, 3, size=(n, features))
    pick = rng.random_sample(rows.shape)
    rows = np.where(pick < 0.4, rng.choice(special, size=rows.shape), rows)
    rows[pick > 1 - missing] = np.nan
    return rows.astype(dtype)


MODE_TREES = [
    S("BRANCH_LEQ", 0, 0.5, 1, S("BRANCH_LT", 1, -1.0, 0, L({0: 0.5}), L({0: 1.5})),
      S("BRANCH_GTE", 2, 0.25, 0, L({0: -0.75}), L({0: 2.0}))),
    S("BRANCH_GT", 1, 0.0, 0, S("BRANCH_EQ", 3, 1.0, 1, L({0: 3.0}), L({0: -2.0})),
      S("BRANCH_NEQ", 3, 2.0, 1, L({0: 0.125}), L({0: -0.5}))),
    S("BRANCH_NEQ", 0, -1.0, 0, L({0: 0.25}), L({0: -4.0})),  # NaN: the specification says false, onnxruntime true
    S("BRANCH_EQ", 2, 0.0, 0, L({0: 1.0}), S("BRANCH_LEQ", 2, 2.0, 0, L({0: 0.5}), L({0: -0.5}))),
]
MODE_SPECIAL = [-1.0, 0.0, 0.25, 0.5, 1.0, 2.0]

# Three targets; tree 0 adds to targets 0 and 2 (a leaf vector with a hole), tree 1 to target 1, tree 2 to all or
# some, tree 3 is a single leaf. Every row gets a value for every target.
TARGET_TREES = [
    S("BRANCH_LEQ", 0, 0.0, 1, L({0: 1.0, 2: -0.5}),
      S("BRANCH_LT", 1, 1.0, 0, L({0: -2.0, 2: 0.75}), L({0: 0.25, 2: 0.125}))),
    S("BRANCH_GT", 2, -0.5, 0, L({1: 0.5}), L({1: -1.5})),
    S("BRANCH_LEQ", 3, 0.3, 0, L({0: 0.3, 1: 0.2, 2: 0.1}),
      S("BRANCH_GTE", 1, -1.0, 1, L({0: -0.6, 1: 0.9, 2: -0.2}), L({1: 0.4}))),
    L({2: 0.05}),
]
# Small margins, for the transforms; target 1 is exactly 0 where tree 1 takes its true branch.
SMALL_TREES = [
    S("BRANCH_LEQ", 0, 0.0, 1, L({0: 0.1, 2: -0.05}), L({0: -0.1, 2: 0.08})),
    S("BRANCH_GT", 1, 0.5, 0, L({1: 0.0}), L({1: 0.125})),
    S("BRANCH_LT", 2, 0.2, 0, L({0: 0.04, 2: 0.02}), L({0: -0.02, 2: 0.06})),
]
# Opset 5: sets (one past 32, so two words), a one-leaf tree, two targets.
MEMBER_TREES = [
    S("BRANCH_MEMBER", 0, {0.0, 2.0, 5.0}, 0, L({0: 1.0}),
      S("BRANCH_LEQ", 1, 0.5, 1, L({1: -0.5}), L({0: 0.25}))),
    S("BRANCH_MEMBER", 1, {1.0, 3.0, 33.0, 40.0}, 1, S("BRANCH_MEMBER", 2, {7.0}, 0, L({1: 2.0}), L({1: -1.0})),
      L({0: 0.75})),
    L({1: 0.375}),
    S("BRANCH_GT", 2, 1.5, 0, L({0: -0.125}), L({1: 0.0625})),
]
MEMBER_SPECIAL = [0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 33.0, 40.0, 41.0, -1.0, 2.5, 0.5]


def double_trees():
    """Thresholds that float32 cannot hold; rows just above, below and at them and at their float32 roundings."""
    t = [0.1, 1.0 / 3.0, -2.0 / 3.0, 1e-3 + 1e-12]
    trees = [S("BRANCH_LEQ", 0, t[0], 0, L({0: 0.1}), S("BRANCH_LT", 1, t[1], 1, L({0: 1.0 / 7.0}), L({0: -0.3}))),
             S("BRANCH_GTE", 1, t[2], 0, L({0: 2.0 / 3.0}), S("BRANCH_GT", 0, t[3], 0, L({0: -1e-9}), L({0: 0.7})))]
    special = []
    for v in t:
        special += [v, float(np.float32(v)), np.nextafter(v, 1.0), np.nextafter(v, -1.0)]
    return trees, special


def hand_built(rng):
    def one(name, node, trees, features, targets, base=None, aggregate="SUM", post="NONE", special=MODE_SPECIAL,
            input_type=TensorProto.FLOAT, opset=3, ort_differs=None, extra=(), before=(), schedules=False, rows_rng=None,
            representations=None, n_rows=160):
        """Expected values: onnxruntime's, or the specification's where onnxruntime departs from it (ort_differs)."""
        dtype = np.float64 if input_type == TensorProto.DOUBLE else np.float32
        rows = special_rows(rows_rng or rng, n_rows, features, special, dtype=dtype)
        model = graph(node, features, targets, input_type, opset, extra, before=before)
        want = margin = evaluate(trees, rows, targets, base, aggregate, post)
        if extra:  # Exp on the scores
            want = np.exp(want)
        elif post != "NONE":
            margin = evaluate(trees, rows, targets, base, aggregate)
        else:
            margin = None
        try:
            got = run(model, rows)
            report(name, "the specification", got, want)
            if ort_differs:
                print(f"    (expected: {ort_differs})")
            else:
                want = got
        except Exception as exc:  # noqa: BLE001 - onnxruntime refuses what the specification allows
            print(f"  {name}: onnxruntime refuses it ({str(exc).splitlines()[0][:120]}); expected values from the specification")
        save(name, model, rows, want, post in ("LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"), input_type == TensorProto.DOUBLE,
             margin, schedules, reference="the ONNX specification (evaluate() in tests/gen/gen_onnx.py)",
             representations=representations)

    one("modes", regressor(MODE_TREES, 1, [0.25]), MODE_TREES, 4, 1, [0.25], schedules=True,
        ort_differs="NaN on BRANCH_NEQ with missing_value_tracks_true 0 goes to the false branch (onnxruntime: true)")
    for aggregate in ("SUM", "AVERAGE", "MIN", "MAX"):
        base = [0.5, -0.25, 1.0]
        one(f"aggregate_{aggregate.lower()}", regressor(TARGET_TREES, 3, base, aggregate), TARGET_TREES, 4, 3, base,
            aggregate, schedules=aggregate == "MAX")
    for post, base in (("LOGISTIC", [0.4, 0.25, 0.5]), ("SOFTMAX", [0.4, 0.25, 0.5]), ("SOFTMAX_ZERO", [0.4, 0.0, 0.5]),
                       ("PROBIT", [0.4, 0.25, 0.5])):
        one(f"transform_{post.lower()}", regressor(SMALL_TREES, 3, base, post=post), SMALL_TREES, 3, 3, base, post=post)
    one("logistic_single", regressor(MODE_TREES, 1, [0.25], post="LOGISTIC"), MODE_TREES, 4, 1, [0.25], post="LOGISTIC",
        ort_differs="LOGISTIC applies to a single-target regressor (onnxruntime ignores it); NaN on BRANCH_NEQ as in 'modes'")
    trees, special = double_trees()
    one("as_tensor", regressor(trees, 1, [0.125], doubles=True), trees, 2, 1, [0.125], special=special,
        input_type=TensorProto.DOUBLE)
    # Tree ids 7, 3, 11 and node ids 10, 20, ... listed in a shuffled order.
    order = lambda t: ([7, 3, 11, 5][t], lambda n: [10 * (i + 1) + t for i in range(n)])  # noqa: E731
    one("renumbered", regressor(TARGET_TREES, 3, [0.0, 0.5, -0.5], order=order), TARGET_TREES, 4, 3, [0.0, 0.5, -0.5],
        ort_differs="node ids outside [0, n) and roots listed last: onnxruntime refuses or misreads them")
    labels = ["ant", "bee", "cat"]
    one("classifier_strings", classifier(TARGET_TREES, labels, [0.1, -0.2, 0.3], "SOFTMAX"), TARGET_TREES, 4, 3,
        [0.1, -0.2, 0.3], post="SOFTMAX", schedules=True)
    two = [S("BRANCH_LEQ", 0, 0.0, 1, L({0: 0.2, 1: -0.4}), L({0: -0.3, 1: 0.6})),
           S("BRANCH_LT", 1, 0.5, 0, L({0: 0.1, 1: 0.3}), L({0: 0.0, 1: -0.2}))]
    one("classifier_two", classifier(two, [3, 9], None, "LOGISTIC"), two, 2, 2, None, post="LOGISTIC")
    # Identity and Cast on the input, Exp on the scores.
    cast = [helper.make_node("Identity", ["X"], ["X1"]), helper.make_node("Cast", ["X1"], ["X2"], to=TensorProto.FLOAT)]
    node = regressor(SMALL_TREES, 3, [0.4, 0.25, 0.5], output="S")
    node.input[0] = "X2"
    one("exp_after", node, SMALL_TREES, 3, 3, [0.4, 0.25, 0.5], extra=[helper.make_node("Exp", ["S"], ["Y"])],
        before=cast)
    one("opset5_member", tree_ensemble(MEMBER_TREES, 2), MEMBER_TREES, 3, 2, None, special=MEMBER_SPECIAL, opset=5,
        schedules=True, ort_differs="x in a set with a member above 30 (onnxruntime's 'big set') is tested as "
        "trunc(x) in the set by onnxruntime (1.15 in {1, 3, 33, 40}); the specification and smaller sets test x itself")
    one("opset5_targets", tree_ensemble([S("BRANCH_LEQ", 0, 0.0, 1, L({0: 0.5}), L({2: -1.0})),
                                         S("BRANCH_GTE", 1, 0.5, 0, L({1: 2.0}), L({2: 0.25})), L({0: 0.125})], 3,
                                        "MAX"),
        [S("BRANCH_LEQ", 0, 0.0, 1, L({0: 0.5}), L({2: -1.0})), S("BRANCH_GTE", 1, 0.5, 0, L({1: 2.0}), L({2: 0.25})),
         L({0: 0.125})], 2, 3, None, "MAX", opset=5,
        ort_differs="onnxruntime refuses a tree whose leaves add to different targets")
    trees, special = double_trees()
    one("opset5_double", tree_ensemble(trees, 1, dtype=np.float64), trees, 2, 1, None, special=special, opset=5,
        input_type=TensorProto.DOUBLE)
    # Forests of one mode whose splits all send NaN the same way: grove's compares then decide missing values
    # (lower/hir_narrow.c gives each mode the form that does). Rows from their own generator, so that adding
    # them changed no other fixture; 150 of them, so that the last 6 walk as lone rows (with integer keys).
    uniform_rng = np.random.RandomState(20261125)
    for mode in ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT"):
        for tracks in (0, 1):
            trees = [S(mode, 0, 0.5, tracks, S(mode, 1, -1.0, tracks, L({0: 0.5}), L({0: 1.5})),
                       S(mode, 2, 0.25, tracks, L({0: -0.75}), L({0: 2.0}))),
                     S(mode, 2, 1.0, tracks, L({0: 0.125}), S(mode, 1, 0.75, tracks, L({0: -0.5}), L({0: 4.0})))]
            name = "uniform_%s_%s" % (mode[len("BRANCH_"):].lower(), "true" if tracks else "false")
            one(name, regressor(trees, 1, [0.25]), trees, 3, 1, [0.25], special=[-1.0, 0.25, 0.5, 0.75, 1.0],
                rows_rng=uniform_rng, representations=["array", "sparse", "code"], n_rows=150)


def varint(n):
    """n as a protobuf varint."""
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


BAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bad", "onnx")


def bad_models():
    """tests/bad/onnx/NAME.onnx and NAME.err (the message grove must give) from a small valid model."""
    tree = [S("BRANCH_LEQ", 0, 0.5, 0, L({0: 1.0}), S("BRANCH_LT", 1, 0.0, 0, L({0: 2.0}), L({0: 3.0})))]
    good = graph(regressor(tree, 1), 2, 1).SerializeToString()

    def edited(**changes):
        model = graph(regressor(tree, 1), 2, 1)
        node = model.graph.node[0]
        for name, value in changes.items():
            for a in node.attribute:
                if a.name == name:
                    node.attribute.remove(a)
                    break
            if value is not None:
                node.attribute.append(helper.make_attribute(name, value))
        return model.SerializeToString()

    no_ensemble = helper.make_model(helper.make_graph(
        [helper.make_node("Identity", ["X"], ["Y"])], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 2])])).SerializeToString()
    normalizer = graph(regressor(tree, 1, output="S"), 2, 1,
                       extra=[helper.make_node("Normalizer", ["S"], ["Y"], domain=ML, norm="L1")])
    cycle = graph(tree_ensemble(tree, 1), 2, 1, opset=5)  # node 1's false branch back to node 0
    for a in cycle.graph.node[0].attribute:
        if a.name in ("nodes_falsenodeids", "nodes_falseleafs"):
            a.ints[1] = 0
    # Files protobuf reads one way and another ONNX reader could read another (issue 51): grove refuses each.
    duplicate_attribute = graph(regressor(tree, 1), 2, 1)
    duplicate_attribute.graph.node[0].attribute.append(helper.make_attribute("nodes_values", [0.25, 0, 0.75, 0, 0]))
    two_values = graph(regressor(tree, 1), 2, 1)
    for a in two_values.graph.node[0].attribute:
        if a.name == "nodes_values":
            a.ints.extend([1, 2, 3, 4, 5])
    type_mismatch = graph(regressor(tree, 1), 2, 1)
    for a in type_mismatch.graph.node[0].attribute:
        if a.name == "nodes_values":
            a.type = onnx.AttributeProto.INTS
    # The ensemble's node with a second op_type field (protobuf keeps the last: an Identity node).
    twice = graph(regressor(tree, 1), 2, 1)
    node_bytes = twice.graph.node[0].SerializeToString() + b"\x22\x08Identity"
    del twice.graph.node[:]
    graph_bytes = twice.graph.SerializeToString() + b"\x0a" + varint(len(node_bytes)) + node_bytes
    del twice.graph.node[:]
    twice.ClearField("graph")
    op_type_twice = twice.SerializeToString() + b"\x3a" + varint(len(graph_bytes)) + graph_bytes
    # The model with a second (empty) graph: protobuf merges the two.
    graph_twice = good + b"\x3a\x00"
    # A tensor both a graph input and a node's output; two initializers of one name.
    defined_twice = graph(regressor(tree, 1), 2, 1, before=[helper.make_node("Identity", ["X0"], ["X"])])
    defined_twice.graph.input.append(helper.make_tensor_value_info("X0", TensorProto.FLOAT, [None, 2]))
    two_initializers = graph(regressor(tree, 1, output="S"), 2, 1, extra=[helper.make_node("Mul", ["S", "one"], ["Y"])])
    two_initializers.graph.initializer.extend([numpy_helper.from_array(np.array([1.0], np.float32), "one"),
                                               numpy_helper.from_array(np.array([2.0], np.float32), "one")])
    # A tensor with its values twice: raw_data (what onnxruntime reads) and double_data.
    two_fields = graph(regressor(tree, 1, doubles=True), 2, 1)
    for a in two_fields.graph.node[0].attribute:
        if a.name == "nodes_values_as_tensor":
            a.t.double_data.extend([9.0] * 5)
    # ModelProto field 7 (graph), length-delimited, claiming 2^31 bytes, after ir_version 8.
    huge_length = bytes([0x08, 0x08, 0x3A, 0x80, 0x80, 0x80, 0x80, 0x08]) + b"\0" * 16
    cases = {
        "truncated": (good[:len(good) * 2 // 3], "the protobuf cannot be decoded"),
        "huge_length": (huge_length, "the protobuf cannot be decoded"),
        "length_mismatch": (edited(nodes_featureids=[0, 0, 1]),
                            "TreeEnsembleRegressor.nodes_featureids: 3 elements, but nodes_treeids has 5"),
        "node_outside_tree": (edited(nodes_falsenodeids=[2, 0, 7, 0, 0]),
                              "TreeEnsembleRegressor.nodes_falsenodeids[2]: node id 7 is not in tree 0"),
        "unknown_mode": (edited(nodes_modes=["BRANCH_LEQ", "LEAF", "BRANCH_ABOUT", "LEAF", "LEAF"]),
                         "TreeEnsembleRegressor.nodes_modes[2]: unknown mode 'BRANCH_ABOUT'"),
        "no_ensemble": (no_ensemble, "the graph has no tree ensemble"),
        "cycle": (cycle.SerializeToString(), "TreeEnsemble: nodes_featureids[0] is reached twice"),
        "two_roots": (edited(nodes_falsenodeids=[2, 0, 3, 0, 0]),
                      "TreeEnsembleRegressor: tree 0 has two roots, nodes 0 and 4"),
        "leaf_without_weight": (edited(target_nodeids=[1, 3, 3], target_treeids=[0, 0, 0], target_ids=[0, 0, 0]),
                                "tree 0 node 4 (nodes_nodeids[4]) is a leaf without a weight"),
        "normalizer": (normalizer.SerializeToString(), "node 1 (Normalizer) reads the tree ensemble's scores"),
        "member_negative": (graph(tree_ensemble([S("BRANCH_MEMBER", 0, {-1.0, 2.0}, 0, L({0: 1.0}), L({0: 2.0}))], 1), 2, 1,
                                  opset=5).SerializeToString(),
                            "TreeEnsemble.membership_values[0]: -1 is not a category grove takes"),
        "duplicate_attribute": (duplicate_attribute.SerializeToString(),
                                "graph.node[0] (TreeEnsembleRegressor): two attributes named 'nodes_values'"),
        "attribute_two_values": (two_values.SerializeToString(), "('nodes_values'): the attribute holds both floats and ints"),
        "attribute_type_mismatch": (type_mismatch.SerializeToString(),
                                    "('nodes_values'): the attribute's type is INTS, but it holds floats"),
        "op_type_twice": (op_type_twice, "graph.node[0]: op_type is written twice"),
        "graph_twice": (graph_twice, "the model: graph is written twice"),
        "tensor_defined_twice": (defined_twice.SerializeToString(), "tensor 'X' is defined 2 times"),
        "two_initializers": (two_initializers.SerializeToString(), "two initializers are named 'one'"),
        "tensor_two_fields": (two_fields.SerializeToString(),
                              "TreeEnsembleRegressor.nodes_values_as_tensor: the tensor holds double_data besides raw_data"),
    }
    os.makedirs(BAD, exist_ok=True)
    for name, (data, message) in cases.items():
        with open(os.path.join(BAD, name + ".onnx"), "wb") as f:
            f.write(data)
        with open(os.path.join(BAD, name + ".err"), "w") as f:
            f.write(message + "\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith((".onnx", ".csv", ".json")):
            os.remove(os.path.join(OUT, f))
    bad_models()
    rng = np.random.RandomState(20261123)
    warnings.filterwarnings("ignore")
    print("hand-built graphs:")
    hand_built(rng)
    print("scikit-learn (skl2onnx):")
    sklearn_models(rng)
    print("XGBoost (onnxmltools):")
    xgboost_models(rng)
    print("LightGBM (onnxmltools):")
    lightgbm_models(rng)
    print("CatBoost (its own export):")
    catboost_models(np.random.RandomState(20261201))  # a generator of its own: the fixtures above stay as they were
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(ENTRIES, f, indent=1)
        f.write("\n")
    print(f"{len(ENTRIES)} fixtures in manifest.json")


if __name__ == "__main__":
    sys.exit(main())
