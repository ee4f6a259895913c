#!/usr/bin/env python3
"""The learned cost model's data and training (lower/cost.h; ../shared/seeds/002).

    tools/cost_train.py collect [--log LOG] [--budget S] [--batch N ...] [--threads T] [--ranked] MODEL ...
        runs `grove tune --explore` on each model at each batch size, every timed candidate appended to LOG
        (its features are the x_ columns); with --ranked, `grove tune` as a user runs it: the candidates the
        current model ranks best and the learned schedule timed, so that where it is wrong, its own picks teach it
    tools/cost_train.py evaluate [--batch N ...] [--quick S] [--long S] MODEL ...
        on each model (hold it out of training): a --quick second tune ranked by the cost model against a --long
        second tune that times every candidate of its descent, and the learned schedule (compile --learned's) and
        the heuristic's against the best either found
    tools/cost_train.py train [--log LOG ...] [--out lower/cost_model.json] [--hold-out NAME ...]
        trains XGBoost on the logs' features to predict log2 of each candidate's us/row over its (model, batch)'s
        median, writes the model (the build compiles it
        into grove), and reports, on the models held out (one group of models at a time where none is named):
        the rank correlation between predicted and measured time within each (model, batch), and how far the
        predicted best is from the measured best.

Training needs numpy and xgboost (tools/bench/setup.sh's venv has them); collecting needs a built grove.
"""
import argparse
import collections
import csv
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_LOG = os.path.join(ROOT, "build", "cost", "tune.csv")
CHECK_ROWS = 16
# The model: small enough to compile in a moment and to evaluate thousands of candidates in a millisecond.
PARAMS = {"n_estimators": 300, "max_depth": 6, "learning_rate": 0.08, "subsample": 0.8, "colsample_bytree": 0.8,
          "min_child_weight": 2, "random_state": 0, "n_jobs": 2}


def model_rows(model, scratch):
    """`--input` rows for a model: its own (the corpus's NAME.rows.csv; a real model's NAME.test.csv or
    NAME.random.csv, or MODEL.csv, less their last column, the library's prediction), else none (grove tune then
    draws rows from the thresholds, on which deep forests walk paths real rows do not: docs/schedules.md, The
    cost model)."""
    stem = os.path.splitext(model)[0]
    if os.path.exists(stem + ".rows.csv"):
        return ["--input", stem + ".rows.csv"]
    for path in (stem + ".test.csv", stem + ".random.csv", model + ".csv"):
        if os.path.exists(path):
            out = os.path.join(scratch, os.path.basename(path))
            with open(path) as src, open(out, "w") as dst:
                for line in src:
                    dst.write(line.rstrip("\n").rsplit(",", 1)[0] + "\n")
            return ["--input", out]
    return []


def collect(args):
    grove = args.grove or os.path.join(ROOT, "build", "grove")
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    with tempfile.TemporaryDirectory() as scratch:
        for model in args.models:
            inputs = model_rows(model, scratch)
            for batch in args.batch:
                argv = [grove, "tune", model, *([] if args.ranked else ["--explore"]), "--batch", str(batch),
                        "--budget", str(args.budget),
                        "--log", args.log, "-o", os.path.join(scratch, "best.sched"), *inputs]
                p = subprocess.run(argv, capture_output=True, text=True, env=env)
                last = (p.stdout.strip().splitlines() or [""])[0]
                print(f"{os.path.basename(model)} batch {batch}: " +
                      (last if p.returncode == 0 else f"failed ({p.returncode}): {p.stderr.strip()[-300:]}"), flush=True)


def tune_table(p):
    """{'best', 'heuristic', 'learned'}: us/row from grove tune's ranking (compile --learned's schedule is marked
    learned; where the model keeps the heuristic's, that one is)."""
    out = {}
    for line in p.stdout.splitlines():
        fields = line.split()
        if len(fields) > 4 and fields[0].isdigit() and fields[3].endswith("x"):
            us = float(fields[1])
            out.setdefault("best", us)
            if "(heuristic)" in line:
                out["heuristic"] = us
            if "(learned)" in line:
                out["learned"] = us
    out.setdefault("learned", out.get("heuristic"))
    return out


def evaluate_tuning(args):
    grove = args.grove or os.path.join(ROOT, "build", "grove")
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for model in args.models:
            inputs = model_rows(model, scratch)
            for batch in args.batch:
                got = {}
                for name, extra in (("quick", ["--budget", str(args.quick)]),
                                    ("long", ["--explore", "--budget", str(args.long)])):
                    argv = [grove, "tune", model, "--batch", str(batch), "--log", "", "-o",
                            os.path.join(scratch, "best.sched"), *inputs, *extra]
                    p = subprocess.run(argv, capture_output=True, text=True, env=env)
                    if p.returncode != 0:
                        sys.exit(f"{' '.join(argv)}: {p.stderr.strip()}")
                    got[name] = tune_table(p)
                best = min(got["quick"]["best"], got["long"]["best"])
                learned = min(got[n]["learned"] for n in got)  # each run times it; its best time
                heuristic = min(got[n]["heuristic"] for n in got)
                rows.append((os.path.basename(model), batch, got["quick"]["best"] / got["long"]["best"],
                             learned / best, heuristic / best))
                print(f"{rows[-1][0]:28} {batch:6}  quick/long {rows[-1][2]:5.2f}  learned/best {rows[-1][3]:5.2f}  "
                      f"heuristic/best {rows[-1][4]:5.2f}", flush=True)
    for i, what in ((2, "quick tune / long tune"), (3, "learned (compile --learned) / best"), (4, "heuristic / best")):
        v = sorted(r[i] for r in rows)
        print(f"{what}: median {v[len(v) // 2]:.2f}, worst {v[-1]:.2f}")


def read_logs(paths):
    """(features names, rows of (group, model, features, log2 us/row)) from the CPU lines of the logs that timed."""
    names, rows = None, []
    for path in paths:
        with open(path) as f:
            reader = csv.DictReader(f)
            cols = [c for c in reader.fieldnames if c.startswith("x_")]
            if names is None:
                names = cols
            elif cols != names:
                sys.exit(f"{path}: other features than {paths[0]}")
            for r in reader:
                if r["target"] != "host" or not r["us_per_row"] or float(r["us_per_row"]) <= 0:
                    continue
                model = os.path.basename(r["model"])
                rows.append(((model, r["batch"], r["threads"], r["device"]), model,
                             [float(r[c]) for c in cols], math.log2(float(r["us_per_row"]))))
    return names, rows


def spearman(a, b):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va, vb = sum((x - ma) ** 2 for x in ra), sum((y - mb) ** 2 for y in rb)
    return cov / math.sqrt(va * vb) if va > 0 and vb > 0 else float("nan")


def fit(np, xgb, rows, params=None):
    X = np.array([r[2] for r in rows], dtype=np.float32)
    y = np.array([r[3] for r in rows], dtype=np.float32)
    model = xgb.XGBRegressor(**(params or PARAMS))
    model.fit(X, y)
    return model


def evaluate(np, model, rows):
    """Per (model, batch) group of rows: (group, n, spearman, measured time of the predicted best / the best)."""
    groups = collections.defaultdict(list)
    for r in rows:
        groups[r[0]].append(r)
    out = []
    for g, rs in sorted(groups.items()):
        if len(rs) < 3:
            continue
        pred = model.predict(np.array([r[2] for r in rs], dtype=np.float32))
        measured = [r[3] for r in rs]
        chosen = measured[int(np.argmin(pred))]
        out.append((g, len(rs), spearman(list(pred), measured), 2 ** (chosen - min(measured))))
    return out


def train(args):
    import numpy as np
    import xgboost as xgb
    names, rows = read_logs(args.log or [DEFAULT_LOG])
    if not args.absolute:  # each candidate's time over its (model, batch)'s median: the knobs' effect, not the forest's scale
        by_group = collections.defaultdict(list)
        for r in rows:
            by_group[r[0]].append(r[3])
        middle = {g: sorted(v)[len(v) // 2] for g, v in by_group.items()}
        rows = [(g, m, x, y - middle[g]) for g, m, x, y in rows]
    models = sorted({r[1] for r in rows})
    print(f"{len(rows)} timed candidates of {len(models)} models, {len({r[0] for r in rows})} (model, batch) groups")
    held = args.hold_out or []
    folds = [held] if held else [models[i::args.folds] for i in range(args.folds)]
    results = []
    for fold in folds:
        train_rows = [r for r in rows if r[1] not in fold]
        test_rows = [r for r in rows if r[1] in fold]
        if not train_rows or not test_rows:
            continue
        results += evaluate(np, fit(np, xgb, train_rows), test_rows)
    if results:
        print("held out: model, batch, candidates, rank correlation, predicted best's time / best time")
        for g, n, rho, regret in results:
            print(f"  {g[0]:32} {g[1]:>6} {n:4} {rho:6.2f} {regret:6.2f}")
        rhos = sorted(r[2] for r in results if not math.isnan(r[2]))
        regrets = sorted(r[3] for r in results)
        print(f"median rank correlation {rhos[len(rhos) // 2]:.2f} (mean {sum(rhos) / len(rhos):.2f}); "
              f"predicted best within {regrets[len(regrets) // 2]:.2f}x of the best (median), "
              f"{regrets[int(0.9 * (len(regrets) - 1))]:.2f}x (90th percentile)")
    model = fit(np, xgb, [r for r in rows if r[1] not in held])  # held-out models stay out, for `evaluate`
    model.get_booster().feature_names = [n[2:] for n in names]
    model.save_model(args.out)
    # A few logged candidates and XGBoost's predictions of them: tests/cost.py checks grove's compile of the model.
    import numpy as np
    check = np.array([r[2] for r in rows[:: max(1, len(rows) // CHECK_ROWS)][:CHECK_ROWS]], dtype=np.float32)
    stem = os.path.splitext(args.out)[0]
    np.savetxt(stem + ".rows.csv", check, delimiter=",", fmt="%.9g")
    np.savetxt(stem + ".pred.csv", model.predict(check), fmt="%.9g")
    print(f"wrote {args.out}: {PARAMS['n_estimators']} trees on {len(names)} features, {len(rows)} candidates")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("models", nargs="+")
    c.add_argument("--log", default=DEFAULT_LOG)
    c.add_argument("--budget", type=int, default=30)
    c.add_argument("--batch", type=int, nargs="+", default=[1, 64, 512, 4096])
    c.add_argument("--threads", type=int, default=1)
    c.add_argument("--ranked", action="store_true", help="time the model's own picks, not the whole descent")
    c.add_argument("--grove", help="the grove that tunes (default build/grove; a copy keeps rebuilding apart)")
    e = sub.add_parser("evaluate")
    e.add_argument("models", nargs="+")
    e.add_argument("--batch", type=int, nargs="+", default=[64, 4096])
    e.add_argument("--quick", type=int, default=5)
    e.add_argument("--long", type=int, default=60)
    e.add_argument("--threads", type=int, default=1)
    e.add_argument("--grove")
    t = sub.add_parser("train")
    t.add_argument("--log", action="append")
    t.add_argument("--out", default=os.path.join(ROOT, "lower", "cost_model.json"))
    t.add_argument("--hold-out", action="append", help="model file names held out of training (default: folds)")
    t.add_argument("--folds", type=int, default=4)
    t.add_argument("--absolute", action="store_true",
                   help="learn log2 us/row itself, not each time over its (model, batch)'s median (ranked better)")
    args = ap.parse_args()
    if args.command == "collect":
        os.makedirs(os.path.dirname(os.path.abspath(args.log)), exist_ok=True)
        collect(args)
    elif args.command == "evaluate":
        evaluate_tuning(args)
    else:
        train(args)


if __name__ == "__main__":
    main()
