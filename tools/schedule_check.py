#!/usr/bin/env python3
"""Random schedules against the default schedule.

For each model (a model file of any format with MODEL.rows.csv beside it, as in tests/models),
write random schedules (loop structure first: tile, split, reorder; then directives on
the loops that exist), and predict the rows under each one. A schedule grove refuses
must be refused with exit status 1 and a message (not an IR verifier's: the lowering made
code it should not have); a schedule it accepts must predict
what the default schedule predicts (within 1e-5, relative). Exits 1 on any other
outcome and prints the schedule, so it can be replayed with --schedule-text.

With --target gpusim, the schedules map loops to a GPU's grid and blocks (gpuDimension),
with the GPU's reductions and caches, and run on libgrove's SIMT simulator against the
host's default schedule.

    tools/schedule_check.py [--grove build/grove] [--count 200] [--seed 1] [--target gpusim] MODEL ...
"""
import argparse
import os
import random
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def random_schedule(rng):
    directives = []
    loops = structure(rng, directives, 4, [1, 2, 3, 4, 5, 8, 16, 64, 300, "N_t/2"])
    for _ in range(rng.randint(1, 4)):
        names = list(loops)
        var = rng.choice(names)
        kind = rng.choice(["parallel", "parallel", "parallel", "interleave", "atomicReduce", "vectorReduce", "specialize",
                           "unroll", "cache", "cache", "peelWalk", "unrollWalk"])
        if kind in ("atomicReduce", "vectorReduce"):
            var = rng.choice([n for n in names if loops[n]])
            if f"parallel({var})" not in directives:
                directives.append(f"parallel({var})")
        if kind == "vectorReduce":
            directive = f"vectorReduce({var}, {rng.choice([2, 4, 8])})"
        elif kind in ("peelWalk", "unrollWalk"):
            directive = f"{kind}({var}, {rng.randint(1, 9)})"
        elif kind == "cache" and rng.random() < 0.5:
            directive = f"cache({var}, prefetch)"
        else:
            directive = f"{kind}({var})"
        if directive not in directives:
            directives.append(directive)
    if rng.random() < 0.3:  # the trees sorted by depth (its place among the directives does not matter)
        directives.insert(rng.randint(0, len(directives)), "sortTrees(depth)")
    if rng.random() < 0.2:  # the trees tiled, and walked by the representation that walks tiles
        directives.insert(rng.randint(0, len(directives)), f"tileTrees(uniform, {rng.randint(1, 8)})")
    return "; ".join(directives)


def structure(rng, directives, steps, sizes):
    """Tiles, splits and reorders of batch and tree; returns the loops: name -> runs over trees."""
    loops, fresh = {"batch": False, "tree": True}, 0
    for _ in range(rng.randint(0, steps)):
        kind, names = rng.choice(["tile", "tile", "tile", "split", "reorder"]), list(loops)
        if kind == "reorder":
            directives.append(f"reorder({', '.join(rng.sample(names, min(len(names), rng.randint(2, 4))))})")
            continue
        var, first, second = rng.choice(names), f"v{fresh}", f"v{fresh + 1}"
        fresh += 2
        size = rng.choice(sizes) if kind == "tile" else rng.choice([1, 2, 3, "N_t/2"])
        directives.append(f"{kind}({var}, {first}, {second}, {size})")
        loops[first] = loops[second] = loops.pop(var)
    return loops


GPU_DIMENSIONS = ["grid.x", "grid.y", "block.x", "block.y", "block.z"]


def random_template_schedule(rng):
    """SilvanForge's GPU template and its neighbours: a block per tile of rows (a thread per row on block.x), the
    trees over tree threads on block.y (in tiles or strided), rows or trees cached, walks interleaved, peeled or
    unrolled, the tree threads' sums in shared or global memory or added atomically, each representation."""
    rows = rng.choice([8, 16, 32, 64, 128, "ROWS_PER_TB"])
    threads = rng.choice([1, 2, 4, 8])
    directives = [f"tile(batch, b0, b1, {rows})"]
    if threads > 1 and rng.random() < 0.3:  # strided: tree thread t1 takes trees t1, t1 + threads, ...
        directives += [f"tile(tree, t0, t1, {threads})", "reorder(b0, b1, t1, t0)"]
        thread_loop, walk_loop = "t1", "t0"
        if rng.random() < 0.5:
            directives += ["reorder(b0, t1, b1, t0)"]
    else:
        directives += [f"tile(tree, t0, t1, N_t-N_t/{threads})" if threads > 1 else "tile(tree, t0, t1, N_t)",
                       "reorder(b0, t0, b1, t1)"]
        thread_loop, walk_loop = "t0", "t1"
    if rng.random() < 0.4:
        width = rng.choice([2, 4])
        directives.append(f"tile({walk_loop}, t2, t3, {width})")
        walk_loop = "t3"
        if rng.random() < 0.7:
            directives.append("interleave(t3)")
    directives += ["gpuDimension(b0, grid.x)", "gpuDimension(b1, block.x)"]
    if threads > 1:
        directives.append(f"gpuDimension({thread_loop}, block.y)")
        reduction = rng.choice(["sharedReduce", "sharedReduce", "atomicReduce", None])
        if reduction:
            directives.append(f"{reduction}({thread_loop})")
    if rng.random() < 0.6:
        directives.append("cache(b0)")
    walk = rng.choice([None, "peelWalk", "unrollWalk"])
    if walk:
        directives.append(f"{walk}({walk_loop}, {rng.randint(1, 8)})")
    if rng.random() < 0.7:
        directives.insert(0, f"representation({rng.choice(['array', 'sparse', 'reorg'])})")
    return "; ".join(directives)


def random_gpu_schedule(rng):
    """A perfect nest of batch and tree loops (each maybe tiled, the nest permuted), some of them mapped to a
    GPU's grid and blocks, with the GPU's reductions and caches and walk directives on the innermost loop."""
    if rng.random() < 0.5:
        return random_template_schedule(rng)
    directives, nest, trees = [], [], {}
    for var, sizes in (("batch", [1, 4, 8, 32, 64, "ROWS_PER_TB"]), ("tree", [2, 4, 8, 32, "N_t/2", "N_t/4"])):
        if rng.random() < 0.75:
            outer, inner = var[0] + "0", var[0] + "1"
            directives.append(f"tile({var}, {outer}, {inner}, {rng.choice(sizes)})")
            nest += [outer, inner]
        else:
            nest.append(var)
    trees = {name: name.startswith("t") for name in nest}
    if rng.random() < 0.5:
        rng.shuffle(nest)
        directives.append(f"reorder({', '.join(nest)})")
    mapped = rng.sample(nest, rng.randint(0, min(3, len(nest))))
    for var, dim in zip(mapped, rng.sample(GPU_DIMENSIONS, 3)):
        directives.append(f"gpuDimension({var}, {dim})")
    innermost = nest[-1]
    for _ in range(rng.randint(0, 3)):
        kind = rng.choice(["sharedReduce", "atomicReduce", "cache", "cache", "interleave", "peelWalk", "unrollWalk",
                           "unroll", "specialize"])
        if kind in ("sharedReduce", "atomicReduce"):  # (a tree loop whose iterations run at once)
            nest_of = [n for n in mapped if trees[n]] or [n for n in nest if trees[n]]
        else:
            nest_of = [n for n in nest if trees[n]] if kind in ("unroll", "specialize") else nest
        var = rng.choice(nest_of)
        if kind in ("interleave", "peelWalk", "unrollWalk"):
            var = innermost
        directive = f"{kind}({var}, {rng.randint(1, 9)})" if kind in ("peelWalk", "unrollWalk") else f"{kind}({var})"
        if directive not in directives:
            directives.append(directive)
    if rng.random() < 0.3:
        directives.insert(0, f"representation({rng.choice(['array', 'sparse', 'reorg', 'code', 'breadth_first', 'layered'])})")
    if rng.random() < 0.2:
        directives.insert(rng.randint(0, len(directives)), "sortTrees(depth)")
    return "; ".join(directives)


def predict(grove, model, rows, *options):
    p = subprocess.run([grove, "predict", model, "--input", rows, *options], capture_output=True, text=True, timeout=600)
    return p, [float(x) for x in p.stdout.replace(",", " ").split()] if p.returncode == 0 else None


def check(grove, model, rows, want, schedule, target, batch=None):
    """One schedule, the rows in calls of `batch` rows (None: one call): "accepted", "refused", or what went wrong."""
    p, got = predict(grove, model, rows, "--schedule-text", schedule, "-D", "ROWS_PER_TB=32",
                     *(["--target", "gpusim"] if target == "gpusim" else []),
                     *(["--batch", str(batch)] if batch else []))
    if got is None:
        if p.returncode == 1 and p.stderr.startswith("grove: ") and not re.search(r": [lm]ir: ", p.stderr):
            return "refused"
        return f"{model}: exit {p.returncode} without a message of the schedule's under: {schedule}\n{p.stderr[-500:]}"
    if len(got) == len(want) and all(abs(g - w) <= 1e-5 * max(1.0, abs(w)) for g, w in zip(got, want)):
        return "accepted"
    return f"{model}: predictions differ from the default's under: {schedule}" + (f" (calls of {batch} rows)" if batch else "")


def check_model(grove, model, count, rng, target, rows=None):
    """count random schedules on model, on rows (a CSV; MODEL.rows.csv beside it where None): (accepted, refused,
    failures)."""
    rows = rows or os.path.splitext(model)[0] + ".rows.csv"
    p, want = predict(grove, model, rows)
    if want is None:
        return 0, 0, [f"{model}: the default schedule fails: {p.stderr.strip()}"]
    accepted, refused, failures = 0, 0, []
    for _ in range(count):
        schedule = random_gpu_schedule(rng) if target == "gpusim" else random_schedule(rng)
        # half the schedules predict in calls of a few rows, whose last tiles are short
        outcome = check(grove, model, rows, want, schedule, target, rng.randint(2, 40) if rng.random() < 0.5 else None)
        accepted += outcome == "accepted"
        refused += outcome == "refused"
        if outcome not in ("accepted", "refused"):
            failures.append(outcome)
    return accepted, refused, failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grove", default=os.path.join(ROOT, "build", "grove"))
    ap.add_argument("--count", type=int, default=200, help="schedules per model")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--target", choices=["host", "gpusim"], default="host")
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    accepted = refused = failed = 0
    for model in args.models:
        a, r, failures = check_model(args.grove, model, args.count, rng, args.target)
        accepted, refused, failed = accepted + a, refused + r, failed + len(failures)
        for failure in failures:
            print(failure)
    print(f"{accepted} schedules predicted as the default, {refused} refused, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
