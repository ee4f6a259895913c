#!/usr/bin/env python3
"""Random schedules against the default schedule.

For each model (a model file of any format with MODEL.rows.csv beside it, as in tests/models),
write random schedules (loop structure first: tile, split, reorder; then directives on
the loops that exist), and predict the rows under each one. A schedule grove refuses
must be refused with exit status 1 and a message; a schedule it accepts must predict
what the default schedule predicts (within 1e-5, relative). Exits 1 on any other
outcome and prints the schedule, so it can be replayed with --schedule-text.

    tools/schedule_check.py [--grove build/grove] [--count 200] [--seed 1] MODEL ...
"""
import argparse
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def random_schedule(rng):
    loops = {"batch": False, "tree": True}  # the loops that exist: name -> runs over trees
    directives, fresh = [], 0
    for _ in range(rng.randint(0, 4)):
        kind, names = rng.choice(["tile", "tile", "tile", "split", "reorder"]), list(loops)
        if kind == "reorder":
            directives.append(f"reorder({', '.join(rng.sample(names, min(len(names), rng.randint(2, 4))))})")
            continue
        var, first, second = rng.choice(names), f"v{fresh}", f"v{fresh + 1}"
        fresh += 2
        size = rng.choice([1, 2, 3, 4, 5, 8, 16, 64]) if kind == "tile" else rng.choice([1, 2, 3])
        directives.append(f"{kind}({var}, {first}, {second}, {size})")
        loops[first] = loops[second] = loops.pop(var)
    for _ in range(rng.randint(1, 4)):
        names = list(loops)
        var = rng.choice(names)
        kind = rng.choice(["parallel", "parallel", "parallel", "interleave", "atomicReduce", "vectorReduce", "specialize",
                           "cache", "peelWalk", "unrollWalk"])
        if kind in ("atomicReduce", "vectorReduce"):
            var = rng.choice([n for n in names if loops[n]])
            if f"parallel({var})" not in directives:
                directives.append(f"parallel({var})")
        if kind == "vectorReduce":
            directive = f"vectorReduce({var}, {rng.choice([2, 4, 8])})"
        elif kind in ("peelWalk", "unrollWalk"):
            directive = f"{kind}({var}, {rng.randint(1, 9)})"
        else:
            directive = f"{kind}({var})"
        if directive not in directives:
            directives.append(directive)
    if rng.random() < 0.3:  # the trees sorted by depth (its place among the directives does not matter)
        directives.insert(rng.randint(0, len(directives)), "sortTrees(depth)")
    if rng.random() < 0.2:  # the trees tiled, and walked by the representation that walks tiles
        directives.insert(rng.randint(0, len(directives)), f"tileTrees(uniform, {rng.randint(1, 8)})")
    return "; ".join(directives)


def predict(grove, model, rows, *options):
    p = subprocess.run([grove, "predict", model, "--input", rows, *options], capture_output=True, text=True)
    return p, [float(x) for x in p.stdout.replace(",", " ").split()] if p.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grove", default=os.path.join(ROOT, "build", "grove"))
    ap.add_argument("--count", type=int, default=200, help="schedules per model")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    accepted = refused = failed = 0
    for model in args.models:
        rows = os.path.splitext(model)[0] + ".rows.csv"
        p, want = predict(args.grove, model, rows)
        if want is None:
            sys.exit(f"{model}: the default schedule fails: {p.stderr.strip()}")
        for _ in range(args.count):
            schedule = random_schedule(rng)
            p, got = predict(args.grove, model, rows, "--schedule-text", schedule)
            if got is None:
                refused += 1
                if p.returncode == 1 and p.stderr.startswith("grove: "):
                    continue
                print(f"{model}: exit {p.returncode} without a message under: {schedule}\n{p.stderr[-500:]}")
            elif len(got) == len(want) and all(abs(g - w) <= 1e-5 * max(1.0, abs(w)) for g, w in zip(got, want)):
                accepted += 1
                continue
            else:
                print(f"{model}: predictions differ from the default's under: {schedule}")
            failed += 1
    print(f"{accepted} schedules predicted as the default, {refused} refused, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
