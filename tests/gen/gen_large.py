#!/usr/bin/env python3
"""Write a synthetic XGBoost JSON model with many random trees, and rows with its predictions.

    python3 tests/gen/gen_large.py TREES DEPTH FEATURES OUT_PREFIX [--rows N] [--seed S]

Writes OUT_PREFIX.json (binary:logistic, XGBoost 1.x layout), and with --rows N > 0 also
OUT_PREFIX.rows.csv and OUT_PREFIX.pred.csv: the probabilities computed here by walking
the trees in float32 as XGBoost does. Standard library only, so the tests can build
models of any size without XGBoost. Trees are random: each node splits with probability
0.8 until DEPTH, so leaf depths vary; default directions are random.
"""
import argparse
import json
import math
import random
import struct


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def make_tree(rng, tid, depth, features):
    left, right, feat, thresh, dleft = [], [], [], [], []
    stack = [(0, 0)]
    order = []
    # Breadth-first numbering, as XGBoost writes trees.
    queue = [0]
    nodes = [{"depth": 0}]
    i = 0
    while i < len(queue):
        n = queue[i]
        i += 1
        d = nodes[n]["depth"]
        if d < depth and (d == 0 or rng.random() < 0.8):
            nodes[n]["children"] = (len(nodes), len(nodes) + 1)
            nodes.append({"depth": d + 1})
            nodes.append({"depth": d + 1})
            queue += [len(nodes) - 2, len(nodes) - 1]
    for n in nodes:
        if "children" in n:
            left.append(n["children"][0])
            right.append(n["children"][1])
            feat.append(rng.randrange(features))
            thresh.append(f32(rng.gauss(0, 1)))
            dleft.append(rng.randrange(2))
        else:
            left.append(-1)
            right.append(-1)
            feat.append(0)
            thresh.append(f32(rng.gauss(0, 0.1)))
            dleft.append(0)
    del stack, order
    count = len(nodes)
    return {
        "base_weights": [0.0] * count, "categories": [], "categories_nodes": [], "categories_segments": [],
        "categories_sizes": [], "default_left": dleft, "id": tid, "left_children": left,
        "loss_changes": [0.0] * count, "parents": [2147483647] * count, "right_children": right,
        "split_conditions": thresh, "split_indices": feat, "split_type": [0] * count,
        "sum_hessian": [1.0] * count,
        "tree_param": {"num_deleted": "0", "num_feature": str(features), "num_nodes": str(count),
                       "size_leaf_vector": "0"},
    }


def predict(trees, row):
    margin = 0.0  # base_score 0.5 -> logit 0
    for t in trees:
        n = 0
        while t["left_children"][n] != -1:
            x = row[t["split_indices"][n]]
            if math.isnan(x):
                n = t["left_children"][n] if t["default_left"][n] else t["right_children"][n]
            else:
                n = t["left_children"][n] if x < t["split_conditions"][n] else t["right_children"][n]
        margin = f32(margin + t["split_conditions"][n])
    return 1.0 / (1.0 + math.exp(-margin))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", type=int)
    ap.add_argument("depth", type=int)
    ap.add_argument("features", type=int)
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    trees = [make_tree(rng, i, args.depth, args.features) for i in range(args.trees)]
    model = {"learner": {
        "attributes": {},
        "feature_names": [], "feature_types": [],
        "gradient_booster": {"model": {
            "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(args.trees)},
            "tree_info": [0] * args.trees, "trees": trees}, "name": "gbtree"},
        "learner_model_param": {"base_score": "5E-1", "num_class": "0", "num_feature": str(args.features),
                                "num_target": "1"},
        "objective": {"name": "binary:logistic", "reg_loss_param": {"scale_pos_weight": "1"}}},
        "version": [1, 7, 4]}
    with open(args.out + ".json", "w") as f:
        json.dump(model, f, separators=(",", ":"))
    if args.rows:
        rows = [[math.nan if rng.random() < 0.1 else f32(rng.gauss(0, 1)) for _ in range(args.features)]
                for _ in range(args.rows)]
        with open(args.out + ".rows.csv", "w") as f:
            for r in rows:
                f.write(",".join("" if math.isnan(v) else repr(v) for v in r) + "\n")
        with open(args.out + ".pred.csv", "w") as f:
            for r in rows:
                f.write(repr(predict(trees, r)) + "\n")


if __name__ == "__main__":
    main()
