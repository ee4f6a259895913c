#!/usr/bin/env python3
"""grove's test suite: `python3 tests/run.py [--builddir build] [--update] [-k PATTERN] [-v]`.

Groups:
  unit    every build/tests/* program (exit status 0 = pass)
  golden  `grove dump --level hir|mir|lir --representation array` of each model tests/golden/NAME.* against NAME.LEVEL
          (--update rewrites them)
  real    compile + predict the XGBoost and ONNX models in ../shared/models/real against
          their reference rows (last column = the library's prediction)
  models  compile + predict the fixtures of tests/models/manifest.json and
          tests/models/*/manifest.json (written by the scripts in tests/gen/) against the
          training library's predictions and margins
  bad     every model tests/bad/**/NAME.* must fail to compile with the message in NAME.err
  cli     the command line's own errors and options
  aot     an object from `--emit obj` linked into tests/aot/main.c without libgrove
  tsan    8 threads predicting at once on one model (mixed batch sizes, OpenMP and not) under
          ThreadSanitizer (tests/tsan), each result against a single-threaded reference
  oom     allocation failures injected at every allocation while reading and lowering a model of
          each format (tests/oom/failmalloc.c; a sanitizer build: the first from each call stack), and at
          some while compiling: a message, no file left; and at every allocation of the runtime's load
          and predictions: an error or the right answer (under ASan, also no leak on any of these paths)
  io      output that cannot be written (/dev/full, a file-size limit): a message, no file left
  rows    memory bounded by the work and CSV edges (tests/rows.py): models from pipes and devices read to --limit
          stream; predict's chunks by rows x (features + outputs); byte-order marks, one-line files, headers matched
          to feature names (--header), labels quoted
  cpu     artifacts record the CPU features their code uses; grove_load refuses them on a CPU without (tests/cpu.py:
          x86-64-v4 code, host and gpusim, here without AVX-512; native and x86-64-v3 code under qemu-x86_64 -cpu
          Nehalem; AArch64 neoverse-n1 code under qemu-aarch64 -cpu cortex-a53)
  cost    the learned cost model (tests/cost.py): lower/cost_model.json compiles and predicts as XGBoost did; grove
          tune ranks by it and reports predictions
  files   output files as compilers handle them (tests/files.py): devices and FIFOs written into, never replaced; an
          output that is an input, or two outputs that are one file, refused; names beginning with '-'; no temporary
          file left by SIGINT, SIGTERM or SIGHUP; modes 0755/0644 & ~umask; write errors reported (also as nobody)
  install tools/install.sh (ninja install) into a staging DESTDIR: the shared libraries' SONAMEs,
          links and needed libraries; tests/install/deploy.c built with `pkg-config --cflags --libs
          grove-compiler` against it compiles a model in-process and predicts, and built with
          `grove` alone (and deploy.cpp, through grove.hpp) predicts with an artifact of the
          installed grove
  schedules every tests/schedules/*.sched on every real and generated model, against the
          training library's predictions; the schedule printed by `dump --level hir`
          read back gives the same dump; golden MIR of each on tests/golden/binary.json
          (tests/golden/schedules/NAME.mir); random schedules (tools/schedule_check.py, fixed seeds) on three
          fixtures, for the host and the simulator: each refused with a message or predicting as the default does
  gpu     GPU code: every model of the schedule matrix under the default GPU schedule and tests/schedules/gpu/*.sched,
          every other fixture under three of them, run by the SIMT simulator (--target gpusim) against the library; each real model's PTX (sm_70, sm_80,
          sm_90) through ptxas -v with no spills, its HSACO (gfx90a, gfx1100) listing every kernel; bad GPU
          schedules refused with their message; CUDA and ROCm artifacts failing cleanly where no driver is
  scale   a synthetic 26,000-tree model (tests/gen/gen_large.py) through the whole pipeline
  aarch64 `compile --target aarch64-linux-gnu` of the real models and two fixtures (LightGBM,
          ONNX), run by the cross-built runtime and driver (build/aarch64/predict) under
          qemu-aarch64 against the libraries' predictions; --emit obj linked into tests/aot/main.c
          by aarch64-linux-gnu-gcc; the vectorReduce schedule's NEON code; lgb_edges with rows side by side in
          vectors (code_row_lanes.sched); bad --target and --cpu
          (needs qemu-user and gcc-aarch64-linux-gnu: bash .ci/setup)
  python  the Python package's pytest tests (tests/python) in build/venv (made by `bash .ci/setup --python`), on the
          build under test; each pytest test is one result. Skipped for a sanitizer build (Python cannot load it)

Tolerance: 1e-5 absolute for probabilities, 1e-5 relative (to max(1, |expected|)) for
margins and regression outputs. Ends with "N passed, N failed".
"""
import argparse
import concurrent.futures
import csv
import fnmatch
import glob
import io
import itertools
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

import cost as cost_group
import cpu as cpu_group
import files as file_group
import rows as row_group

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import schedule_check  # noqa: E402 (tools/, on the path above)
REAL = os.path.join(ROOT, "..", "shared", "models", "real")
TOLERANCE = 1e-5


class Suite:
    def __init__(self, args, scratch):
        self.args = args
        self.scratch = scratch
        self.grove = os.path.join(ROOT, args.builddir, "grove")
        self.results = []  # (group, name, ok, detail)
        self.errors = []   # (model, largest absolute error, largest relative error)
        with open(os.path.join(ROOT, args.builddir, "config.json")) as f:
            self.sanitized = json.load(f)["asan"]  # ASan reserves terabytes of address space: no RLIMIT_AS, no qemu

    def record(self, group, name, ok, detail=""):
        self.results.append((group, name, ok, detail))
        if not ok or self.args.verbose:
            print(f"{'PASS' if ok else 'FAIL'} {group}/{name}" + (f": {detail}" if detail else ""), flush=True)

    def wanted(self, group, name):
        return not self.args.k or any(fnmatch.fnmatch(f"{group}/{name}", f"*{k}*") for k in self.args.k)

    def run(self, *argv, stdin=None, env=None):
        return subprocess.run([self.grove, *argv], capture_output=True, text=True, input=stdin, timeout=600,
                              env=None if env is None else {**os.environ, **env})

    def path(self, name):
        return os.path.join(self.scratch, name)


def read_table(path, drop_last=False):
    rows = []
    with open(path) as f:
        for row in csv.reader(f):
            if not row:
                continue
            if drop_last:
                row = row[:-1]
            rows.append([float(x) if x.strip() not in ("", "nan", "NaN") else math.nan for x in row])
    return rows


def write_table(path, rows):
    with open(path, "w") as f:
        for row in rows:
            f.write(",".join("" if math.isnan(v) else repr(v) for v in row) + "\n")


def compare(got, want, probability):
    """(ok, largest absolute error, largest relative error, first bad place)."""
    if len(got) != len(want):
        return False, math.inf, math.inf, f"{len(got)} rows, expected {len(want)}"
    worst_abs = worst_rel = 0.0
    bad = None
    for r, (g_row, w_row) in enumerate(zip(got, want)):
        if len(g_row) != len(w_row):
            return False, math.inf, math.inf, f"row {r}: {len(g_row)} values, expected {len(w_row)}"
        for c, (g, w) in enumerate(zip(g_row, w_row)):
            if math.isfinite(g) and math.isfinite(w):
                err = abs(g - w)
                rel = err / max(1.0, abs(w))
            else:  # inf and NaN match only themselves (abs(inf - inf) is NaN, which no test would catch)
                err = rel = 0.0 if g == w or (math.isnan(g) and math.isnan(w)) else math.inf
            worst_abs, worst_rel = max(worst_abs, err), max(worst_rel, rel)
            if (err if probability else rel) > TOLERANCE and bad is None:
                bad = f"row {r} column {c}: got {g!r}, expected {w!r}"
    return bad is None, worst_abs, worst_rel, bad or ""


def judge(s, group, name, got, expected, probability, note=""):
    """Compare predictions with the expected rows, keep the largest error for the table, and record the result."""
    ok, worst_abs, worst_rel, detail = compare(got, expected, probability)
    s.errors.append((f"{group}/{name}", worst_abs, worst_rel))
    s.record(group, name, ok, detail or f"largest error {worst_abs:.3g} abs, {worst_rel:.3g} rel{note}")


def artifact_path(s, group, name):
    """Where check_predictions keeps the artifact of test group/name (compiled once, reused by later checks)."""
    return s.path(f"{group}-{name}.so")


def check_predictions(s, group, name, model, rows_csv, expected, probability, margin=False, options=(), num_trees=None,
                      f64=False, refusals=(), batch=None):
    """Compile model (with options), predict rows_csv (with --margin, --f64 if asked; calls of at most batch rows, NAME.few)
    and compare with expected rows.

    With num_trees, a schedule that splits the tree loop at or past the model's last tree
    must be refused with the message that says so (and nothing else is checked); a compile
    failing with a message that contains one of refusals is a refusal the test allows."""
    # --margin, --batch: the same artifact
    artifact = artifact_path(s, group, name.removesuffix(".margin") if margin else name.split(".few")[0] if batch else name)
    if not os.path.exists(artifact):
        p = s.run("compile", model, "-o", artifact, *options)
        too_few = re.search(r"split point \d+ is outside the range: '[^']*' runs at most (\d+) iterations", p.stderr)
        if p.returncode != 0 and num_trees is not None and too_few and int(too_few.group(1)) == num_trees:
            return s.record(group, name, True, f"refused as it should: the model has {num_trees} trees")
        if p.returncode != 0 and any(text in p.stderr for text in refusals):
            return s.record(group, name, True, f"refused as the schedule allows: {p.stderr.strip()}")
        if p.returncode != 0:
            return s.record(group, name, False, f"compile failed: {p.stderr.strip()}")
    out = s.path(f"{group}-{name}{'.margin' if margin else ''}.out.csv")
    p = s.run("predict", artifact, "--input", rows_csv, "--output", out, *(["--margin"] if margin else []),
              *(["--f64"] if f64 else []), *(["--batch", str(batch)] if batch else []))
    if p.returncode != 0:
        return s.record(group, name, False, f"predict failed: {p.stderr.strip()}")
    judge(s, group, name, read_table(out), expected, probability and not margin)


def unit_tests(s):
    directory = os.path.join(ROOT, s.args.builddir, "tests")
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        if not s.wanted("unit", name) or not os.path.isfile(os.path.join(directory, name)):
            continue
        p = subprocess.run([os.path.join(directory, name)], capture_output=True, text=True, timeout=600,
                           cwd=s.scratch)
        s.record("unit", name, p.returncode == 0, (p.stdout + p.stderr).strip()[-2000:] if p.returncode else "")


def check_lines(text, checks):
    """Match the dump `text` against CHECK lines in the style of LLVM's FileCheck; None where they hold, else what
    failed. `CHECK: P` matches the first line after the last match that contains P, `CHECK-NEXT: P` the line right
    after it, and `CHECK-NOT: P` says that no line between the last match and the next one contains P. In P, `%_`
    stands for any value (%N) and `{{RE}}` for a regular expression; leading tabs count (they are the nesting)."""
    lines = text.split("\n")
    at, nots = 0, []  # the line after the last match; CHECK-NOTs waiting for the next match

    def pattern(p):
        parts = re.split(r"(\{\{.*?\}\})", p)
        return re.compile("".join(part[2:-2] if part.startswith("{{") else re.escape(part).replace("%_", "%[0-9]+")
                                  for part in parts))

    def clear(until):
        for number, text_, regex in nots:
            hit = next((i for i in range(at, until) if regex.search(lines[i])), None)
            if hit is not None:
                return f"line {number}: CHECK-NOT: {text_} found at dump line {hit + 1}: {lines[hit]!r}"
        nots.clear()
        return None

    for number, line in enumerate(checks.split("\n"), 1):
        found = re.match(r"(CHECK(?:-NEXT|-NOT)?): ?(.*)$", line)
        if not found:
            continue
        kind, text_ = found.groups()
        regex = pattern(text_)
        if kind == "CHECK-NOT":
            nots.append((number, text_, regex))
            continue
        window = range(at, min(at + 1, len(lines))) if kind == "CHECK-NEXT" else range(at, len(lines))
        hit = next((i for i in window if regex.search(lines[i])), None)
        if hit is None:
            near = lines[at] if at < len(lines) else "the end"
            return f"line {number}: {kind}: {text_} not found after dump line {at} (next: {near!r})"
        problem = clear(hit)
        if problem:
            return problem
        at = hit + 1
    return clear(len(lines))


def golden_compare(s, group, name, expected_path, text):
    """Record whether text (a dump) is the golden at expected_path, or, where expected_path.check exists instead, holds
    its CHECK lines (check_lines). --update rewrites whole goldens; checks are written by hand and only run."""
    checks = expected_path + ".check"
    if os.path.exists(checks):
        with open(checks) as f:
            problem = check_lines(text, f.read())
        if problem:
            got = s.path(name.replace("/", "-"))
            with open(got, "w") as f:
                f.write(text)
            problem += f" ({checks}; the dump: {got})"
        return s.record(group, name, problem is None, problem or "")
    if s.args.update:
        os.makedirs(os.path.dirname(expected_path), exist_ok=True)
        with open(expected_path, "w") as f:
            f.write(text)
        return s.record(group, name, True, "updated")
    if not os.path.exists(expected_path):
        return s.record(group, name, False, f"no {expected_path} (run with --update)")
    with open(expected_path) as f:
        ok = f.read() == text
    detail = ""
    if not ok:
        got = s.path(name.replace("/", "-"))
        with open(got, "w") as f:
            f.write(text)
        detail = f"differs: diff -u {expected_path} {got}"
    s.record(group, name, ok, detail)


# Real models whose LIR is a golden for a CPU with AVX-512 and one with AVX2 (tests/golden/cpus/MODEL.CPU.lir): the
# walks' tops and keys as those vectors take them. CI's clang build compares its LIR with these, made by gcc's.
CPU_GOLDENS = [("airline.json", "znver4"), ("airline.json", "znver3")]
# Real models whose MIR is a golden for a CPU (tests/golden/cpus/MODEL.CPU.mir): what mir_plan_blocks plans of each
# block's rows (keys, tiles, tops, the next block's prefetch), with tops (AVX-512) and without (baseline x86-64).
MIR_CPU_GOLDENS = [("airline.json", "znver4"), ("airline.json", "x86-64")]


def golden_tests(s):
    """Each model's HIR, MIR and LIR under grove's own schedule with the array layout (these small models would
    otherwise be compiled into code; tests/golden/schedules/code_row_tiles.* has that lowering); and CPU_GOLDENS.
    A model's LIR is a targeted check (MODEL.lir.check) but binary.lir's, which stays a whole dump as a smoke test,
    as do CPU_GOLDENS; and MIR_CPU_GOLDENS."""
    directory = os.path.join(ROOT, "tests", "golden")
    levels = (".hir", ".mir", ".lir")
    cases = [(f"{os.path.splitext(model)[0]}.{level}", os.path.join(directory, f"{os.path.splitext(model)[0]}.{level}"),
              ["--level", level, os.path.join("tests", "golden", model), "--representation", "array"])
             for model in sorted(f for f in os.listdir(directory) if os.path.isfile(os.path.join(directory, f))
                                 and not f.endswith(levels) and not f.endswith(".lir.check"))
             for level in ("hir", "mir", "lir")]
    cases += [(f"cpus/{model[:-5]}.{cpu}.lir", os.path.join(directory, "cpus", f"{model[:-5]}.{cpu}.lir"),
               ["--level", "lir", os.path.join(REAL, model), "--cpu", cpu]) for model, cpu in CPU_GOLDENS]
    cases += [(f"cpus/{model[:-5]}.{cpu}.mir", os.path.join(directory, "cpus", f"{model[:-5]}.{cpu}.mir"),
               ["--level", "mir", os.path.join(REAL, model), "--cpu", cpu]) for model, cpu in MIR_CPU_GOLDENS]
    if s.wanted("golden", "check_lines"):  # the matcher itself: each kind of check fails where it should
        text = "a\nb %3 = x\nc\nd"
        holds = ["CHECK: a\nCHECK-NEXT: b %_ = x", "CHECK: a\nCHECK-NOT: y\nCHECK: d", "CHECK: {{^c$}}"]
        fails = ["CHECK: a\nCHECK-NEXT: c", "CHECK: a\nCHECK-NOT: x\nCHECK: d", "CHECK: d\nCHECK: a", "CHECK: b %4"]
        wrong = [c for c in holds if check_lines(text, c)] + [c for c in fails if not check_lines(text, c)]
        s.record("golden", "check_lines", not wrong, f"misjudged: {wrong}")
    for name, expected_path, argv in cases:
        if not s.wanted("golden", name):
            continue
        p = s.run("dump", *argv)
        if p.returncode != 0:
            s.record("golden", name, False, p.stderr.strip())
        else:
            golden_compare(s, "golden", name, expected_path, p.stdout)

REAL_MODELS = [  # model, rows, probability
    ("higgs.json", "higgs.test.csv", True),
    ("airline.json", "airline.test.csv", True),
    ("year_prediction_msd.json", "year_prediction_msd.random.csv", False),
]


# ONNX conversions of real models: model, rows, probability, expected value from the rows' last column. They stay
# out of the schedule matrix (the XGBoost models of the same forests are in it). onnxmltools 1.13 converted higgs and
# airline to TreeEnsembleRegressor without post_transform and with XGBoost's base_score 0.5 taken as a margin, so
# onnxruntime predicts logit(p) + 0.5 where XGBoost's probability p is in the last column.
REAL_ONNX_MODELS = [
    ("abalone.onnx", "abalone.onnx.csv", False, lambda y: y),
    ("higgs.onnx", "higgs.test.csv", False, lambda p: math.log(p / (1 - p)) + 0.5),
    ("airline.onnx", "airline.test.csv", False, lambda p: math.log(p / (1 - p)) + 0.5),
]


def real_cases():
    """Every real model: (name, model file, rows file, probability, expected value from the rows' last column)."""
    same = lambda y: y  # noqa: E731
    return [(model[:-5] if model.endswith(".json") else model, model, rows, probability, expected)
            for model, rows, probability, expected in [(*m, same) for m in REAL_MODELS] + REAL_ONNX_MODELS]


def real_tests(s, pool):
    jobs = []
    for name, model, rows, probability, expected in real_cases():
        if not s.wanted("real", name):
            continue
        if not os.path.exists(os.path.join(REAL, model)):
            s.record("real", name, False, f"{REAL}/{model} is missing (../shared must sit beside the project)")
            continue
        table = read_table(os.path.join(REAL, rows))
        inputs = s.path(f"real-{name}.rows.csv")
        write_table(inputs, [r[:-1] for r in table])
        jobs.append(pool.submit(check_predictions, s, "real", name, os.path.join(REAL, model), inputs,
                                [[expected(r[-1])] for r in table], probability))
        # calls of 1 to 15 rows (the last of each 16 rows with one): grove's schedule walks them a row at a time
        for batch in (15, 1) if s.wanted("real", f"{name}.few") else ():
            jobs.append(pool.submit(check_predictions, s, "real", f"{name}.few{batch}", os.path.join(REAL, model), inputs,
                                    [[expected(r[-1])] for r in table], probability, batch=batch))
        if s.wanted("real", f"{name}-O2"):  # -O2 is grove's own pass pipeline for CPUs (target/host.c)
            jobs.append(pool.submit(check_predictions, s, "real", f"{name}-O2", os.path.join(REAL, model), inputs,
                                    [[expected(r[-1])] for r in table], probability, False, ("-O", "2")))
    return jobs


MODELS = os.path.join(ROOT, "tests", "models")


def fixtures():
    """The generated fixtures: every entry of tests/models/manifest.json (XGBoost JSON) and of
    tests/models/*/manifest.json (one folder per format or generator).

    An entry has name, probability, and optionally model (the file, default NAME.json),
    num_trees, schedules (false: not part of the schedule matrix; default true),
    f64_rows (true: predict with --f64, the rows being doubles the model compares as such) and
    representations (each also compiled with --representation R, tested as NAME.R). Its
    files are NAME.rows.csv, NAME.pred.csv and, where the library has them, NAME.margin.csv
    and NAME.label.csv (a classifier's label per row)."""
    manifests = [os.path.join(MODELS, "manifest.json")]
    manifests += sorted(glob.glob(os.path.join(MODELS, "*", "manifest.json")))
    for manifest in manifests:
        directory = os.path.dirname(manifest)
        with open(manifest) as f:
            for m in json.load(f):
                base = os.path.join(directory, m["name"])
                yield {"name": m["name"], "model": os.path.join(directory, m.get("model", m["name"] + ".json")),
                       "rows": base + ".rows.csv", "pred": base + ".pred.csv", "margin": base + ".margin.csv",
                       "label": base + ".label.csv",
                       "probability": m["probability"], "num_trees": m.get("num_trees"),
                       "schedules": m.get("schedules", True), "f64": m.get("f64_rows", False),
                       "representations": m.get("representations", [])}


def check_labels(s, m):
    """`predict --label` gives the library's label of every row, exactly."""
    name = m["name"] + ".label"
    artifact = artifact_path(s, "models", m["name"])  # check_predictions compiled it (if it could)
    p = s.run("predict", artifact if os.path.exists(artifact) else m["model"], "--input", m["rows"], "--label",
              *(["--f64"] if m["f64"] else []))
    with open(m["label"]) as f:
        want = f.read().split("\n")
    got = p.stdout.split("\n")
    if p.returncode != 0:
        return s.record("models", name, False, f"predict failed: {p.stderr.strip()}")
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    ok = len(got) == len(want) and not bad
    s.record("models", name, ok, "" if ok else f"{len(got)} lines, expected {len(want)}" if len(got) != len(want)
             else f"row {bad[0]}: got {got[bad[0]]!r}, expected {want[bad[0]]!r} ({len(bad)} rows differ)")


def model_tests(s, pool):
    # A sanitizer build compiles at -O0: it checks grove's own code, which runs the same at every level (LLVM, not
    # instrumented, only takes longer at -O3); the normal build checks -O3's code.
    options = ("-O", "0") if s.sanitized else ()
    jobs = []
    for m in fixtures():
        def both(m=m):
            check_predictions(s, "models", m["name"], m["model"], m["rows"], read_table(m["pred"]), m["probability"],
                              options=options, f64=m["f64"])
            if os.path.exists(m["margin"]):
                check_predictions(s, "models", m["name"] + ".margin", m["model"], m["rows"], read_table(m["margin"]),
                                  False, margin=True, options=options, f64=m["f64"])
            # calls of 7 rows, fewer than are interleaved: grove's schedule walks them a row at a time (splitSize)
            check_predictions(s, "models", m["name"] + ".few", m["model"], m["rows"], read_table(m["pred"]),
                              m["probability"], options=options, f64=m["f64"], batch=7)
            if os.path.exists(m["label"]):
                check_labels(s, m)
            for rep in m["representations"]:
                check_predictions(s, "models", f"{m['name']}.{rep}", m["model"], m["rows"], read_table(m["pred"]),
                                  m["probability"], options=("--representation", rep) + options, f64=m["f64"])
        if s.wanted("models", m["name"]):
            jobs.append(pool.submit(both))
    return jobs


def bad_tests(s, pool):
    """tests/bad/**/NAME.err: the model NAME.* beside it must fail to compile with that message (an artifact NAME.so
    must fail to load)."""
    directory = os.path.join(ROOT, "tests", "bad")

    def one(err):
        name = os.path.relpath(err, directory)[:-4]
        with open(err) as f:
            expected = f.read().strip()
        models = [p for p in glob.glob(glob.escape(err[:-4]) + ".*") if p != err]
        if len(models) != 1:
            return s.record("bad", name, False, f"expected one model file beside {name}.err, found {len(models)}")
        if models[0].endswith(".so"):
            p = s.run("predict", models[0], "--input", os.devnull)
        else:
            p = s.run("compile", models[0], "-o", s.path(f"bad-{name.replace('/', '.')}.so"))
        crashed = p.returncode < 0 or p.returncode > 1
        ok = p.returncode == 1 and expected in p.stderr and p.stderr.startswith("grove: ")
        s.record("bad", name, ok and not crashed, "" if ok else f"exit {p.returncode}, stderr {p.stderr.strip()!r}, "
                 f"expected {expected!r}")
    errs = sorted(glob.glob(os.path.join(directory, "**", "*.err"), recursive=True))
    return [pool.submit(one, e) for e in errs if s.wanted("bad", os.path.relpath(e, directory)[:-4])]


def write_complete_tree(path, depth):
    """An XGBoost model (JSON) of one complete tree of `depth` levels of splits over 4 features."""
    n = 2 ** (depth + 1) - 1
    split = [i < n // 2 for i in range(n)]
    tree = {"base_weights": [0] * n, "categories": [], "categories_nodes": [], "categories_segments": [],
            "categories_sizes": [], "default_left": [1] * n, "id": 0, "loss_changes": [0] * n,
            "left_children": [2 * i + 1 if split[i] else -1 for i in range(n)],
            "right_children": [2 * i + 2 if split[i] else -1 for i in range(n)],
            "parents": [2147483647] + [(i - 1) // 2 for i in range(1, n)],
            "split_conditions": [(i % 7) / 7 if split[i] else i / n for i in range(n)],
            "split_indices": [i % 4 if split[i] else 0 for i in range(n)], "split_type": [0] * n,
            "sum_hessian": [1] * n,
            "tree_param": {"num_deleted": "0", "num_feature": "4", "num_nodes": str(n), "size_leaf_vector": "0"}}
    model = {"learner": {"attributes": {}, "feature_names": [], "feature_types": [], "gradient_booster": {
        "model": {"gbtree_model_param": {"num_parallel_tree": "1", "num_trees": "1"}, "tree_info": [0],
                  "trees": [tree]}, "name": "gbtree"},
        "learner_model_param": {"base_score": "5E-1", "boost_from_average": "1", "num_class": "0", "num_feature": "4",
                                "num_target": "1"},
        "objective": {"name": "binary:logistic", "reg_loss_param": {"scale_pos_weight": "1"}}}, "version": [1, 7, 4]}
    with open(path, "w") as f:
        json.dump(model, f)


def symmetric_trees(num_trees, depth, features, seed, width=1, even=False):
    """Symmetric (oblivious) trees as CatBoost grows them: per tree and level one split (feature, threshold, default
    direction), the same at every node of the level; 2^depth leaves, each a value (or a list of `width` values: a
    vector leaf). Trees as (levels, leaves), for write_symmetric. Every third tree is shallower, but where `even`."""
    rng = random.Random(seed)
    trees = []
    for t in range(num_trees):
        d = depth if t % 3 or even else max(1, depth - 2)  # some shallower trees: the walks pad them, level by level
        levels = [(rng.randrange(features), round(rng.uniform(-1, 1), 3), rng.randrange(2)) for _ in range(d)]
        leaves = [[round(rng.uniform(-1, 1), 4) for _ in range(width)] for _ in range(2 ** d)]
        trees.append((levels, [leaf[0] for leaf in leaves] if width == 1 else leaves))
    return trees


def symmetric_margin(trees, row, base=0.5, width=1):
    """XGBoost's margin of row (None: missing) for symmetric_trees: x < threshold goes left, a missing value its default;
    a list of `width` margins for vector leaves."""
    margin = [base] * width
    for levels, leaves in trees:
        index = 0
        for feature, threshold, default_left in levels:
            x = row[feature]
            left = bool(default_left) if x is None else x < threshold
            index = 2 * index + (0 if left else 1)
        margin = [m + v for m, v in zip(margin, leaves[index] if width > 1 else [leaves[index]])]
    return margin if width > 1 else margin[0]


def write_symmetric(path, trees, features, width=1):
    """An XGBoost model (JSON, reg:squarederror, base_score 0.5) of symmetric_trees; of `width` targets with vector
    leaves (multi_strategy="multi_output_tree") where width > 1."""
    out = []
    for t, (levels, leaves) in enumerate(trees):
        n = 2 ** (len(levels) + 1) - 1
        split = [i < n // 2 for i in range(n)]
        level = [(i + 1).bit_length() - 1 for i in range(n)]
        weights = [0] * n if width == 1 else [v for i in range(n) for v in (leaves[i - n // 2] if not split[i] else [0] * width)]
        out.append({"base_weights": weights, "categories": [], "categories_nodes": [], "categories_segments": [],
                    "categories_sizes": [], "id": t, "loss_changes": [0] * n,
                    "default_left": [levels[level[i]][2] if split[i] else 0 for i in range(n)],
                    "left_children": [2 * i + 1 if split[i] else -1 for i in range(n)],
                    "right_children": [2 * i + 2 if split[i] else -1 for i in range(n)],
                    "parents": [2147483647] + [(i - 1) // 2 for i in range(1, n)],
                    "split_conditions": [levels[level[i]][1] if split[i] else leaves[i - n // 2] if width == 1 else 0
                                         for i in range(n)],
                    "split_indices": [levels[level[i]][0] if split[i] else 0 for i in range(n)],
                    "split_type": [0] * n, "sum_hessian": [1] * n,
                    "tree_param": {"num_deleted": "0", "num_feature": str(features), "num_nodes": str(n),
                                   "size_leaf_vector": str(width)}})
    model = {"learner": {"attributes": {}, "feature_names": [], "feature_types": [], "gradient_booster": {
        "model": {"gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(len(out))},
                  "iteration_indptr": list(range(len(out) + 1)), "tree_info": [0] * len(out), "trees": out},
        "name": "gbtree"},
        "learner_model_param": {"base_score": "5E-1", "boost_from_average": "1", "num_class": "0",
                                "num_feature": str(features), "num_target": str(width)},
        "objective": {"name": "reg:squarederror", "reg_loss_param": {"scale_pos_weight": "1"}}}, "version": [2, 1, 0]}
    with open(path, "w") as f:
        json.dump(model, f)


def write_many_classes(path, classes):
    """An XGBoost 3.x model (JSON) of `classes` classes, one single-leaf tree each (leaf c / 1024), whose base_score is
    a list of one number per class (c / 4096): about 10 bytes a class of text."""
    def leaf(c):
        return {"base_weights": [c / 1024], "categories": [], "categories_nodes": [], "categories_segments": [],
                "categories_sizes": [], "default_left": [0], "id": c, "left_children": [-1], "loss_changes": [0],
                "parents": [2147483647], "right_children": [-1], "split_conditions": [c / 1024], "split_indices": [0],
                "split_type": [0], "sum_hessian": [1],
                "tree_param": {"num_deleted": "0", "num_feature": "2", "num_nodes": "1", "size_leaf_vector": "1"}}
    model = {"learner": {"attributes": {}, "feature_names": [], "feature_types": [], "gradient_booster": {
        "model": {"gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(classes)},
                  "iteration_indptr": [0, classes], "tree_info": list(range(classes)),
                  "trees": [leaf(c) for c in range(classes)]}, "name": "gbtree"},
        "learner_model_param": {"base_score": "[" + ",".join(f"{c / 4096:.6E}" for c in range(classes)) + "]",
                                "boost_from_average": "1", "num_class": str(classes), "num_feature": "2",
                                "num_target": "1"},
        "objective": {"name": "multi:softprob", "softmax_multiclass_param": {"num_class": str(classes)}}},
        "version": [3, 1, 0]}
    with open(path, "w") as f:
        json.dump(model, f)


def tables_listed(s, model):
    """Every entry of grove's tables (formats, representations, passes, directives, GPU devices and architectures), as
    the messages refusing an unknown name list them, appears in grove compile --help and in the README; the directives
    and representations also in the schedule fuzzer's dictionary (tests/fuzz/make_seeds.py writes it)."""
    out = s.path("cli-tables.so")
    provoke = {  # table: (arguments naming an unknown entry, the list in the message, the list's separator)
        "formats": (["--format", "x"], r"\(expected ([^)]*)\)", r", | or "),
        "representations": (["--representation", "x"], r"\(expected one of ([^)]*)\)", r", "),
        "passes": (["-d", "x"], r"\(expected (.*), or all\)", r", "),
        "directives": (["--schedule-text", "x(b)"], r"\(expected ([^)]*)\)", r", | or "),
        "cuda": (["--target", "cuda:x"], r"grove knows ([^;]*);", r" "),
        "rocm": (["--target", "rocm:x"], r"grove knows ([^;]*);", r" "),
    }
    tables = {}
    for table, (argv, pattern, sep) in provoke.items():
        found = re.search(pattern, s.run("compile", model, *argv, "-o", out).stderr)
        tables[table] = re.split(sep, found.group(1)) if found else []
    found = re.search(r"\(([a-z, ]*), with :ARCH", s.run("tune", model, "--target", "x").stderr)
    tables["devices"] = re.split(r", | or ", found.group(1)) if found else []
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    with open(os.path.join(ROOT, "tests", "fuzz", "schedule.dict")) as f:
        dictionary = f.read()
    where = {"README": readme, "compile --help": s.run("compile", "--help").stdout}
    for table, names in tables.items():
        name = f"tables_listed_{table}"
        if not s.wanted("cli", name):
            continue
        texts = {**where, **({"schedule.dict": dictionary} if table in ("directives", "representations") else {})}
        missing = [f"{n} ({place})" for n in names for place, text in texts.items()
                   if not re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text)]
        s.record("cli", name, len(names) >= 3 and not missing, f"{table} {names}, not listed: {missing}")


def cli_tests(s):
    higgs = os.path.join(REAL, "higgs.json")
    narrow = s.path("cli-narrow.csv")
    write_table(narrow, [[0.5] * 27, [1.0] * 27])
    ragged = s.path("cli-ragged.csv")
    with open(ragged, "w") as f:
        f.write("1,2,3\n4,5\n")
    words = s.path("cli-words.csv")
    with open(words, "w") as f:
        f.write("1,2\n3,abc\n")
    text_so = s.path("readme.so")
    shutil.copyfile(os.path.join(ROOT, "README.md"), text_so)
    deep = s.path("cli-depth12.json")
    write_complete_tree(deep, 12)
    cases = [  # name, argv, expected exit, text expected in stderr (or stdout for exit 0)
        ("narrow_rows", ["predict", higgs, "--input", narrow], 1, "rows have 27 columns, the model needs 28"),
        ("ragged_rows", ["predict", higgs, "--input", ragged], 1, "cli-ragged.csv:2: 2 fields, earlier rows have 3"),
        ("not_a_number", ["predict", higgs, "--input", words], 1, "cli-words.csv:2: field 2: 'abc' is not a number"),
        ("missing_model", ["compile", s.path("nothing.json")], 1, "nothing.json: No such file or directory"),
        ("bad_cpu", ["compile", higgs, "--cpu", "pentium9", "-o", s.path("x.so")], 1, "unknown x86-64 CPU"),
        ("bad_level", ["compile", higgs, "-O", "7", "-o", s.path("x.so")], 1, "-O 7: expected a whole number from 0 to 3"),
        ("bad_emit", ["compile", higgs, "--emit", "exe"], 1, "--emit exe: expected so, obj, asm, llvm, ptx or hsaco"),
        ("bad_representation", ["compile", higgs, "--representation", "tiled9", "-o", s.path("x.so")], 1,
         "unknown representation 'tiled9'"),
        ("unknown_command", ["frobnicate"], 1, "unknown command 'frobnicate'"),
        ("empty_rows", ["predict", higgs, "--input", os.devnull], 0, ""),
        ("predict_batch_zero", ["predict", higgs, "--input", os.devnull, "--batch", "0"], 1,
         "--batch 0: at least one row a call"),
        ("limit_trees", ["compile", higgs, "--limit", "trees=99", "-o", s.path("x.so")], 1,
         "the model has 100 trees, more than grove's limit of 99 (raise it with --limit trees=N)"),
        ("limit_raised", ["compile", higgs, "--limit", "trees=100,nodes=1000000", "-o", s.path("x.so")], 0, ""),
        ("limit_bad", ["compile", higgs, "--limit", "leaves=3"], 1,
         "--limit leaves=3: expected NAME=N,... with NAME one of features, outputs, trees, nodes"),
        ("missing_artifact", ["predict", os.path.join(ROOT, "README.md") + ".so", "--input", narrow], 1, "cannot open"),
        ("not_an_artifact", ["predict", text_so, "--input", narrow], 1, "not a grove artifact (not an ELF shared library)"),
        # schedules the language accepts but the host lowering cannot give what they ask for
        ("schedule_workspace_per_iteration",
         ["compile", higgs, "-o", s.path("x.so"), "--schedule-text",
          "tile(tree, t0, t1, 4); reorder(t0, t1, batch); parallel(t0); parallel(t1)"], 1,
         "--schedule-text:1:48: parallel(t0): each iteration would need its own buffer of all N rows"),
        ("schedule_stack_buffer_too_large",
         ["compile", higgs, "-o", s.path("x.so"), "--schedule-text", "tile(batch, b0, b1, 4096); reorder(b0, tree, b1); parallel(tree)"],
         1, "schedule: buffer m1 (100 copies of 4096 rows x 1 margins) takes 1638400 bytes"),
        ("schedule_row_cache_too_large",
         ["compile", higgs, "-o", s.path("x.so"), "--schedule-text", "tile(batch, b0, b1, 4096); cache(b0)"], 1,
         "--schedule-text:1:28: cache(b0): 4096 rows of 28 features take 458752 bytes, more than the 262144 a copy on a "
         "thread's stack may take; cache fewer rows"),
        ("schedule_row_cache_twice",
         ["compile", higgs, "-o", s.path("x.so"), "--schedule-text", "tile(batch, b0, b1, 64); tile(b1, b2, b3, 16); cache(b0); cache(b2)"], 1,
         "cache(b2): a loop around it caches its rows already"),
        ("schedule_row_cache_strided",
         ["compile", higgs, "-o", s.path("x.so"), "--schedule-text", "tile(batch, b0, b1, 4); reorder(b1, b0); cache(b1)"], 1,
         "--schedule-text:1:42: cache(b1): an iteration's rows are not consecutive"),
        ("schedule_unroll_pads_too_much",
         ["compile", os.path.join(SCHEDULES, "models", "caterpillar24.json"), "-o", s.path("x.so"), "--schedule-text",
          "unrollWalk(tree, 24)"], 1,
         "--schedule-text:1:1: unrollWalk(tree, 24): padding trees 0 to 7 so that no leaf is shallower than 24 would "
         "make the forest 268435448 nodes, more than 16777216"),
        ("array_too_large",
         ["compile", os.path.join(SCHEDULES, "models", "caterpillar24.json"), "-o", s.path("x.so"), "--representation",
          "array"], 1,
         "array representation: the trees, each stored complete to its depth, take more than 1024 MiB by tree 3 (of "
         "depth 24); use the sparse representation"),
        ("schedule_gpu_on_host", ["compile", higgs, "-o", s.path("x.so"), "--schedule-text", "gpuDimension(batch, grid.x)"],
         1, "gpuDimension(batch, grid.x): the host target has no GPU grid or blocks"),
        ("schedule_tiles_untiled_representation",
         ["compile", higgs, "-o", s.path("x.so"), "--schedule-text", "tileTrees(uniform, 4); representation(array)"], 1,
         "--schedule-text:1:1: tileTrees(uniform, 4): the array representation walks a split a step; tiles need representation(tiled) or representation(tiled_array)"),
        ("schedule_split_past_trees", ["compile", higgs, "-o", s.path("x.so"), "--schedule-text", "split(tree, a, b, 100)"],
         1, "split point 100 is outside the range: 'tree' runs at most 100 iterations"),
        # the code representation compiles each tree into code: only trees known when compiling, and not too many
        ("code_tree_at_run_time", ["compile", higgs, "-o", s.path("x.so"), "--representation", "code", "--schedule-text",
                                   "tile(tree, t0, t1, 10); specialize(t1)"], 1,
         "schedule: loop t0: representation code: the walks inside it take a tree chosen at run time, and this "
         "representation compiles each tree into code of its own: specialize it and every tree loop around it"),
        ("code_too_large", ["compile", higgs, "-o", s.path("x.so"), "--representation", "code", "--schedule-text",
                            "tile(tree, t0, t1, 50); specialize(t0); specialize(t1)"], 1,
         "the walks the schedule puts in one function come to more than 2048 splits of code"),
        # a function holds a tile of trees, but a tree's code is never split
        ("code_tree_too_large", ["compile", deep, "-o", s.path("x.so"), "--representation", "code"], 1,
         "representation code: tree 0 alone has 4095 splits, more than the 2048 of code one function may hold"),
        ("code_cache_trees", ["compile", os.path.join(ROOT, "tests", "golden", "binary.json"), "-o", s.path("x.so"),
                              "--representation", "code", "--schedule-text", "tile(tree, t0, t1, 2); specialize(t1); "
                              "cache(t0)"], 1,
         "cache of a tree loop: the code representation keeps no trees in memory to prefetch"),
        ("version", ["--version"], 0, "grove 0.1.0 (artifact ABI 6, LLVM 16."),
        ("compile_help", ["compile", "--help"], 0, "usage: grove compile"),
        ("predict_help", ["predict", "--help"], 0, "usage: grove predict"),
        ("dump_help", ["dump", "--help"], 0, "usage: grove dump"),
    ]
    for name, argv, code, text in cases:
        if not s.wanted("cli", name):
            continue
        p = s.run(*argv)
        stream = p.stdout if code == 0 else p.stderr
        ok = p.returncode == code and text in stream
        s.record("cli", name, ok, "" if ok else f"exit {p.returncode}, stderr {p.stderr.strip()!r}")
    tables_listed(s, higgs)
    name = "notes_what_the_schedule_says_otherwise"
    if s.wanted("cli", name):
        # binary.json's trees padded to depth 2 (padding pays): peelWalk(tree, 1)'s walks take both steps straight
        binary, out = os.path.join(ROOT, "tests", "golden", "binary.json"), s.path("cli-notes.so")
        said = "peelWalk(tree, 1): the forest is padded to depth 2 (padding pays)"
        quiet = s.run("compile", binary, "--schedule-text", "peelWalk(tree, 1)", "-o", out)
        loud = s.run("compile", binary, "--schedule-text", "peelWalk(tree, 1)", "-o", out, "-v")
        dump = s.run("dump", "--level", "mir", binary, "--schedule-text", "peelWalk(tree, 1)")
        plain = s.run("compile", binary, "--schedule-text", "peelWalk(tree, 2)", "-o", out, "-v")
        ok = (quiet.returncode == loud.returncode == dump.returncode == plain.returncode == 0 and said not in quiet.stderr
              and f"grove: note: --schedule-text:1:1: {said}" in loud.stderr and f"# note: --schedule-text:1:1: {said}"
              in dump.stderr and "note" not in plain.stderr)
        s.record("cli", name, ok, f"{quiet.stderr}|{loud.stderr}|{dump.stderr}|{plain.stderr}")
    name = "notes_branchfree_trees_as_ifs"
    if s.wanted("cli", name):
        # branchfree tests every split only of trees of at most 64 leaves: deep.x3's five trees of 68 to 128 leaves walk
        # as ifs, and -v says so; binary_logistic.x3's twenty trees of at most 8 leaves all walk branch-free
        out = s.path("cli-branchfree.so")
        deep, small = (os.path.join(ROOT, "tests", "models", f"{m}.json") for m in ("deep.x3", "binary_logistic.x3"))
        wide = s.run("compile", deep, "--representation", "branchfree", "-v", "-o", out)
        narrow = s.run("compile", small, "--representation", "branchfree", "-v", "-o", out)
        ok = (wide.returncode == narrow.returncode == 0 and "grove: note: representation branchfree: 5 of 5 trees walk "
              "as ifs (code's), having more than 64 leaves" in wide.stderr and "note" not in narrow.stderr)
        s.record("cli", name, ok, f"{wide.stderr}|{narrow.stderr}")
    name = "notes_block_without_keys"
    if s.wanted("cli", name):
        # higgs' keys, 28 of 4 bytes a row, fit the stack's 128 KiB for 1024 rows, not for 2048: such a block walks
        # floats, and -v and dump say so; the 1024-row block gets its keys and no note
        text = "tile(batch, b0, b1, {}); reorder(b0, tree, b1)"
        higgs, out = os.path.join(REAL, "higgs.json"), s.path("cli-keyless.so")
        big = s.run("compile", higgs, "--schedule-text", text.format(2048), "-o", out, "-v")
        dump = s.run("dump", "--level", "mir", "--cpu", "native", higgs, "--schedule-text", text.format(2048))
        small = s.run("dump", "--level", "mir", "--cpu", "native", higgs, "--schedule-text", text.format(1024))
        said = "schedule: a block of 2048 rows walks them as floats, without keys, tops or leaf masks: their keys (28 a row"
        fits = "more than the 131072 bytes of stack a block's keys may (blocks of up to 1170 rows get them)"
        ok = (big.returncode == dump.returncode == small.returncode == 0 and f"grove: note: {said}" in big.stderr and
              f"# note: {said}" in dump.stderr and fits in big.stderr and "ifComplete rows[b0, +2048) {" in dump.stdout and
              "note" not in small.stderr and "ifComplete rows[b0, +1024) keys=i32" in small.stdout)
        s.record("cli", name, ok, f"{big.stderr}|{dump.stderr}|{small.stderr}")
    name = "fil_orders"
    if s.wanted("cli", name):
        # FIL's orders of sparse's records: breadth first, a split's children 2i + 1 and 2i + 2 in higgs' complete
        # trees (depth first along the hot path: 1, 3, 257); layered, every root first, then their children in pairs
        higgs = os.path.join(REAL, "higgs.json")
        dumps = {rep: s.run("dump", "--level", "lir", "--representation", rep, higgs).stdout
                 for rep in ("sparse", "breadth_first", "layered")}
        ok = ("sparse.children i32 x 51100 [1, 3, 257, 131, ...]" in dumps["sparse"] and
              "sparse.children i32 x 51100 [1, 3, 5, 7, ...]" in dumps["breadth_first"] and
              "sparse.roots i32 x 101 [0, 511, 1022, 1533, ...]" in dumps["breadth_first"] and
              "sparse.children i32 x 51100 [100, 102, 104, 106, ...]" in dumps["layered"] and
              "sparse.roots i32 x 101 [0, 1, 2, 3, ...]" in dumps["layered"])
        s.record("cli", name, ok, "".join(re.findall(r"^buffer.*$\n", "\n".join(dumps.values()), re.M)))
    name = "notes_grid_loops_reordered"
    if s.wanted("cli", name):
        # on a GPU, a tree loop over grid.y alone inside a batch loop over grid.x runs outside it, and -v says so;
        # the schedule printed is the one compiled
        binary, out = os.path.join(ROOT, "tests", "golden", "binary.json"), s.path("cli-grid.so")
        text = "tile(batch, b0, b1, 32); tile(tree, t0, t1, 1); reorder(b0, t0, b1, t1); gpuDimension(b0, grid.x); " \
               "gpuDimension(t0, grid.y); gpuDimension(b1, block.x)"
        said = "gpuDimension(t0, grid.y): 't0' runs outside 'b0' (loops over grid dimensions nest in any order)"
        loud = s.run("compile", binary, "--target", "gpusim", "--schedule-text", text, "-o", out, "-v")
        dump = s.run("dump", "--level", "hir", binary, "--target", "gpusim", "--schedule-text", text)
        host = s.run("dump", "--level", "hir", binary, "--schedule-text", text.split("; gpu")[0])
        ok = (loud.returncode == dump.returncode == host.returncode == 0 and said in loud.stderr and said in dump.stderr
              and "reorder(t0, b0)" in dump.stdout and "note" not in host.stderr)
        s.record("cli", name, ok, f"{loud.stderr}|{dump.stderr}|{dump.stdout[:400]}")
    name = "schedule_sizes_named"
    if s.wanted("cli", name):
        # a size argument names the model's numbers and -D's: ROWS*2 with -D ROWS=16, N_t/2 of binary.json's 2 trees
        binary, text = os.path.join(ROOT, "tests", "golden", "binary.json"), "tile(batch, b0, b1, ROWS*2); tile(tree, t0, t1, N_t/2)"
        named = s.run("dump", "--level", "hir", binary, "--schedule-text", text, "-D", "ROWS=16")
        joined = s.run("dump", "--level", "hir", binary, "--schedule-text", text, "-DROWS=16")
        unnamed = s.run("dump", "--level", "hir", binary, "--schedule-text", text)
        bad = s.run("dump", "--level", "hir", binary, "--schedule-text", text, "-D", "ROWS")
        # spaces around the operators, as papers write them: the same sizes; an operator with nothing after it refused
        spaced = s.run("dump", "--level", "hir", binary, "--schedule-text", text.replace("*", " * ").replace("/", " / "),
                       "-D", "ROWS=16")
        dangling = s.run("dump", "--level", "hir", binary, "--schedule-text", "tile(tree, t0, t1, N_t / )")
        ok = (spaced.stdout == named.stdout and dangling.returncode == 1 and "'N_t / ' is not a number" in dangling.stderr
              and named.returncode == 0 and "tile(batch, b0, b1, 32)" in named.stdout and "tile(tree, t0, t1, 1)" in named.stdout
              and joined.stdout == named.stdout and unnamed.returncode == 1 and "'ROWS*2' is not a number, nor a size the "
              "schedule knows (N_t, N_f, N_c, or a parameter given with -D)" in unnamed.stderr and bad.returncode == 1
              and "-D ROWS: expected NAME=NUMBER" in bad.stderr)
        s.record("cli", name, ok, f"{named.stdout[:300]}|{unnamed.stderr}|{bad.stderr}")
    name = "empty_forest_predicts_base_score"
    if s.wanted("cli", name):
        rows = s.path("cli-empty.csv")
        write_table(rows, [[1.0, 2.0, 3.0, 4.0], [math.nan] * 4])
        p = s.run("predict", os.path.join(ROOT, "tests", "golden", "empty.json"), "--input", rows)
        s.record("cli", name, p.returncode == 0 and p.stdout.split() == ["3.5", "3.5"], p.stdout + p.stderr)
    name = "symmetric_trees_oblivious"
    if s.wanted("cli", name):
        # CatBoost's shape: the heuristic lays symmetric trees out a split per level (oblivious); the predictions are the
        # trees' as walked here and the array layout's, for rows with missing values, at batches that take tops or not
        trees, features = symmetric_trees(60, 6, 9, 7), 9
        model = s.path("cli-symmetric.json")
        write_symmetric(model, trees, features)
        rng = random.Random(8)
        dump = s.run("dump", "--level", "hir", model)
        got, want = {}, {}
        for missing in (0, 0.05):  # rows without missing values take the tops of 16 rows at once
            rows = s.path(f"cli-symmetric-{missing}.csv")
            table = [[None if rng.random() < missing else round(rng.uniform(-1.2, 1.2), 3) for _ in range(features)]
                     for _ in range(300)]
            write_table(rows, [[math.nan if x is None else x for x in row] for row in table])
            want[missing] = [symmetric_margin(trees, row) for row in table]
            for rep, batch in (("auto", None), ("auto", "1"), ("auto", "7"), ("array", None)):
                p = s.run("predict", model, "--input", rows, *([] if batch is None else ["--batch", batch]),
                          *([] if rep == "auto" else ["--representation", rep]))
                got[missing, rep, batch] = [float(v) for v in p.stdout.split()] if p.returncode == 0 else p.stderr
        bad = {k: v for k, v in got.items() if isinstance(v, str) or len(v) != len(want[k[0]]) or
               max(abs(a - b) for a, b in zip(v, want[k[0]])) > 1e-5}
        s.record("cli", name, "representation(oblivious)" in dump.stdout and not bad,
                 f"{dump.stdout[:200]} {str(bad)[:400]}")
    # Symmetric trees of depth 8 take every level in their tops, and trees of depth 10 take 8 levels there and walk two
    # steps; both predict the trees' margins walked here, in one call, a row a call and calls of 7 and 19 rows. So do
    # leaf vectors of 3 targets: depth 8's from tables with AVX-512, depth 10's too many leaves for tables, whose
    # margins lie row by row (lower_buffer, vectors_by_row).
    name = "symmetric_trees_top8"
    if s.wanted("cli", name):
        flags = open("/proc/cpuinfo").read()
        features, rng, wrong = 9, random.Random(12), []
        rows = s.path("cli-symmetric8.csv")
        table = [[round(rng.uniform(-1.2, 1.2), 3) for _ in range(features)] for _ in range(300)]
        write_table(rows, table)
        for depth, width in ((8, 1), (10, 1), (8, 3), (10, 3)):
            trees = symmetric_trees(40, depth, features, depth, width)
            model = s.path(f"cli-symmetric{depth}x{width}.json")
            write_symmetric(model, trees, features, width)
            lir = s.run("dump", "--level", "lir", "--cpu", "native", model).stdout
            # Taken ahead (AVX2; depth 10, which steps on after it) its tag says 8 levels; in place (AVX-512, depth 8)
            # its nodes start at 2^8 and the first level sets bit 7.
            ahead = r"= mul i64 %\d+, 16\n\s*%\d+ = add i64 %\d+, 8\n"
            in_place = r"= or <16 x i32> \{256\}, \{128\}\n"
            if "avx2" in flags and not re.search(in_place if depth == 8 and "avx512f" in flags else ahead, lir):
                wrong.append(f"depth {depth}: no top of 8 levels in the LIR")
            want = [symmetric_margin(trees, row, width=width) for row in table]
            want = [v for w in want for v in (w if width > 1 else [w])]
            for batch in (None, "1", "7", "19"):
                p = s.run("predict", model, "--input", rows, *([] if batch is None else ["--batch", batch]))
                got = [float(v) for v in p.stdout.replace(",", " ").split()] if p.returncode == 0 else []
                if len(got) != len(want) or max(abs(a - b) for a, b in zip(got, want)) > 1e-5:
                    wrong.append(f"depth {depth} x {width}, batch {batch}: {p.stderr.strip() or 'predictions differ'}")
        s.record("cli", name, not wrong, "; ".join(wrong))
    # Where the tops take every level, 16 rows' leaves come from their tree's leaves by permutes (LIR gathers from
    # tables): 64 floats in 2 tables of 32 with AVX-512 (a two-vector permute each), 32 in 4 of 8 with AVX2; 64 with
    # AVX2 would take 8, and the rows load their leaves one by one; depth 8's 256 floats take 8 with AVX-512. Vector
    # leaves (3 targets), where the reduce adds 16 rows' margins at once (a tile of rows, margins output by output),
    # take one table gather an output (2 tables each), output after output, from tables laid out output by output.
    # Each against the margins walked here, rows with and without missing values.
    flags = open("/proc/cpuinfo").read()
    for depth, cpu, feature, tables, width in ((6, "x86-64-v4", "avx512f", 2, 1), (5, "x86-64-v3", "avx2", 4, 1),
                                               (6, "x86-64-v3", "avx2", 0, 1), (6, "x86-64-v4", "avx512f", 6, 3),
                                               (8, "x86-64-v4", "avx512f", 8, 1)):
        name = f"symmetric_leaf_tables_{depth}_{cpu}" + (f"_{width}_outputs" if width > 1 else "")
        if not s.wanted("cli", name):
            continue
        trees, features = symmetric_trees(40, depth, 9, depth, width), 9
        model, so, rows = s.path(f"cli-{name}.json"), s.path(f"cli-{name}.so"), s.path(f"cli-{name}.csv")
        write_symmetric(model, trees, features, width)
        rng = random.Random(depth)  # missing values in the last rows only: the first blocks of 16 take the tops
        table = [[None if i >= 160 and rng.random() < 0.05 else round(rng.uniform(-1.2, 1.2), 3) for _ in range(features)]
                 for i in range(200)]
        write_table(rows, [[math.nan if x is None else x for x in row] for row in table])
        schedule = [] if width == 1 else [
            "--schedule-text", "representation(oblivious); tile(batch, b0, b1, 64); tile(tree, t0, t1, 8); "
            "tile(b1, b2, b3, 16); interleave(b3); reorder(b0, t0, b2, b3, t1); parallel(b0); unrollWalk(t1, 6)"]
        lir = s.run("dump", "--level", "lir", model, "--cpu", cpu, *schedule)
        gathers = re.findall(r"gather <16 x f32> (%\d+)\[.* table (\d+)", lir.stdout)
        tables_at = re.findall(r"(%\d+) = buffer \d+ \(oblivious.leaf_tables\)", lir.stdout)
        # The tops' compares: unsigned with AVX-512, signed on biased keys with AVX2 (RepLayout.signed_tiles).
        compares = set(re.findall(r"icmp ([us]lt) <16 x i32>", lir.stdout))
        shape = lir.returncode == 0 and len(gathers) == tables and \
            {g[1] for g in gathers} <= {"32" if cpu == "x86-64-v4" else "8"} and \
            all((g[0] in tables_at) == (width > 1) for g in gathers) and \
            compares == ({"ult"} if cpu == "x86-64-v4" else {"slt"})
        if feature not in flags:
            s.record("cli", name, shape, f"predictions skipped: this CPU has no {feature}; tables {gathers}")
            continue
        p = s.run("compile", model, "--cpu", cpu, *schedule, "-o", so)
        q = s.run("predict", so, "--input", rows) if p.returncode == 0 else p
        got = [float(v) for v in q.stdout.replace(",", " ").split()] if q.returncode == 0 else []
        want = [m for row in table for m in (symmetric_margin(trees, row, width=width) if width > 1 else
                                             [symmetric_margin(trees, row)])]
        ok = shape and len(got) == len(want) and max(abs(a - b) for a, b in zip(got, want)) <= 1e-5
        s.record("cli", name, ok, q.stderr.strip() or f"tables {gathers}, compares {compares}, largest difference "
                                                     f"{max((abs(a - b) for a, b in zip(got, want)), default=None)}")
    # With AVX2, walks of 32 rows of trees of one depth up to 7 read the rows' bins (a byte a feature) and take their
    # leaves from the trees' leaves in byte planes: 4 gathers of bytes from tables of 16 a plane, joined by zips in
    # halves (RepLayout.byte_tops). Rows without missing values take them (batches of 64: the first two); the rows
    # with some walk as before. Against the margins walked here, with the blocks' rows in groups of 32, in a short run
    # of 31 padded to 32 and alone. Trees of 3 outputs (vector leaves) take each output from planes of their own,
    # which the reduce adds output by output. Trees of depth 8 load their 32 leaves one by one by their index bytes
    # (a gather of floats by i8), from their leaves or their vectors' tables, with no planes, the bins' rows in order
    # (RepLayout.bins_in_order); calls of up to 16 rows walk a tile of 16 by their keys' tops (splitSize's few half,
    # rows side by side). (The heuristic compiles 60 trees of depth 3 into code: the representation is named.)
    for depth, width in ((3, 1), (6, 1), (7, 1), (4, 3), (8, 1), (8, 3)):
        name = f"symmetric_bins_{depth}" + (f"x{width}" if width > 1 else "")
        if not s.wanted("cli", name):
            continue
        trees, features = symmetric_trees(60, depth, 7, 10 + depth, width=width, even=True), 7
        model, so, rows = s.path(f"cli-{name}.json"), s.path(f"cli-{name}.so"), s.path(f"cli-{name}.csv")
        write_symmetric(model, trees, features, width)
        rng = random.Random(depth)
        table = [[None if i >= 130 and rng.random() < 0.05 else round(rng.uniform(-1.2, 1.2), 3) for _ in range(features)]
                 for i in range(200)]
        write_table(rows, [[math.nan if x is None else x for x in row] for row in table])
        named = ["--representation", "oblivious"] if depth < 6 else []
        lir = s.run("dump", "--level", "lir", model, "--cpu", "x86-64-v3", *named).stdout
        gathers = re.findall(r"gather <32 x i8> %\d+\[.* table 16", lir)
        shape = len(gathers) > 0 and len(gathers) % (4 * max(1, 2 ** depth // 16)) == 0 and \
            "zip <32 x i8>" in lir and " halves" in lir
        if depth == 8:
            gathers = re.findall(r"gather <32 x f32> %\d+\[%\d+ \+ <32 x i8> %\d+\]$", lir, re.M)
            hir = s.run("dump", "--level", "hir", model, "--cpu", "x86-64-v3").stdout
            shape = len(gathers) == width and "leaf_planes" not in lir and "zip" not in lir and \
                ("oblivious.leaf_tables" in lir) == (width > 1) and \
                "splitSize(batch, few, many, 17)" in hir and "tile(few, r0, r1, 16)" in hir
        if "avx2" not in flags:
            s.record("cli", name, shape, f"predictions skipped: this CPU has no avx2; {len(gathers)} gathers")
            continue
        p = s.run("compile", model, "--cpu", "x86-64-v3", *named, "-o", so)
        want = [m for row in table for m in (symmetric_margin(trees, row, width=width) if width > 1 else
                                             [symmetric_margin(trees, row)])]
        wrong = [] if p.returncode == 0 else [p.stderr.strip()]
        for batch in ("64", "200", "45", "31", "9", "1"):
            q = s.run("predict", so, "--input", rows, "--batch", batch) if p.returncode == 0 else p
            got = [float(v) for v in q.stdout.replace(",", " ").split()] if q.returncode == 0 else []
            if len(got) != len(want) or max(abs(a - b) for a, b in zip(got, want)) > 1e-5:
                wrong.append(f"batch {batch}: {q.stderr.strip() or 'predictions differ'}")
        s.record("cli", name, shape and not wrong, "; ".join(wrong) or f"{len(gathers)} gathers of bytes")
    name = "many_classes_base_score_list"
    if s.wanted("cli", name):
        # XGBoost 3.x writes one base score per class in one string (8000 classes: 100 KB of it)
        many, rows = s.path("cli-many-classes.json"), s.path("cli-many-classes.csv")
        write_many_classes(many, 6000)
        write_table(rows, [[1.0, 2.0]])
        p = s.run("predict", many, "--input", rows, "--margin")
        got = [float(v) for v in p.stdout.strip().split(",")] if p.returncode == 0 else []
        want = [c / 4096 + c / 1024 for c in range(6000)]
        s.record("cli", name, len(got) == len(want) and max(abs(a - b) for a, b in zip(got, want)) < 1e-5,
                 f"exit {p.returncode}: {p.stderr.strip()[:300]} {len(got)} margins")
        # named, the code representation cannot specialize 6000 trees it cannot tile (6000 outputs): an error, not a crash
        p = s.run("compile", many, "--representation", "code", "-o", s.path("cli-many-classes.so"))
        s.record("cli", "code_refuses_too_many_trees", p.returncode == 1 and "representation code:" in p.stderr and
                 "6000 iterations" in p.stderr, f"exit {p.returncode}: {p.stderr.strip()[:300]}")
    name = "failed_compile_leaves_no_artifact"
    if s.wanted("cli", name):
        # The link fails (GROVE_LINKER=false, a driver that fails): the artifact already there stays as it was, and nothing
        # else is left behind.
        directory = s.path("cli-atomic")
        os.makedirs(directory, exist_ok=True)
        artifact = os.path.join(directory, "model.so")
        with open(artifact, "w") as f:
            f.write("the previous artifact")
        p = s.run("compile", higgs, "-o", artifact, env={"GROVE_LINKER": "false"})
        with open(artifact) as f:
            kept = f.read() == "the previous artifact"
        left = sorted(os.listdir(directory))
        s.record("cli", name, p.returncode == 1 and "linking the shared library" in p.stderr and kept and left == ["model.so"],
                 f"exit {p.returncode}, files {left}, kept {kept}: {p.stderr.strip()}")
    csv_chunk_tests(s, higgs)
    cache_tests(s)
    tune_tests(s)
    tune_gpu_tests(s)
    for emit, marker in (("asm", "grove_model_predict:"), ("llvm", "define void @grove_model_predict")):
        name = f"emit_{emit}"
        if not s.wanted("cli", name):
            continue
        out = s.path(f"cli-higgs.{emit}")
        p = s.run("compile", higgs, "--emit", emit, "--cpu", "x86-64", "-o", out)
        ok = p.returncode == 0 and marker in open(out).read()
        s.record("cli", name, ok, p.stderr.strip())
    # x86 code gathers nothing (target/machine.c: X86_FEATURES): on CPUs where LLVM takes gathers as legal, the
    # 16 interleaved rows' loads became gathers, 2-3x slower; the lone-row walks of sparse must stay scalar too.
    for cpu, representation in (("skylake-avx512", "array"), ("skylake", "array"), ("znver4", "sparse")):
        name = f"no_gathers_{cpu}_{representation}"
        if not s.wanted("cli", name):
            continue
        out = s.path(f"cli-higgs-{cpu}.s")
        p = s.run("compile", higgs, "--emit", "asm", "--cpu", cpu, "--representation", representation, "-o", out)
        gathers = [line.strip() for line in open(out) if "gather" in line] if p.returncode == 0 else []
        s.record("cli", name, p.returncode == 0 and not gathers, p.stderr.strip() or f"{len(gathers)} gathers: {gathers[:2]}")
    # A parallel loop over blocks larger than 256 rows takes smaller blocks where the batch would leave threads
    # without one (lower/mir_to_lir.c: lower_loop): higgs' 2000 rows in blocks of up to 1000 rows on 1, 2, 3 and 8
    # threads (blocks of 1000, 1000, 672 and 256 rows, the last short), each against XGBoost.
    if s.wanted("cli", "row_blocks_shrink"):
        table = read_table(os.path.join(REAL, "higgs.test.csv"))
        rows = s.path("cli-blocks.rows.csv")
        write_table(rows, [r[:-1] for r in table])
        so = s.path("cli-blocks.so")
        p = s.run("compile", higgs, "-o", so, "--schedule", os.path.join(SCHEDULES, "big_row_blocks.sched"))
        for threads in ("1", "2", "3", "8"):
            out = s.path(f"cli-blocks-{threads}.csv")
            q = s.run("predict", so, "--input", rows, "--output", out, env={"OMP_NUM_THREADS": threads}) if p.returncode == 0 else p
            if q.returncode != 0:
                s.record("cli", f"row_blocks_shrink_{threads}", False, q.stderr.strip())
            else:
                judge(s, "cli", f"row_blocks_shrink_{threads}", read_table(out), [[r[-1]] for r in table], True)
    # A step of a complete tree takes its child 2i + right off the compare's carry flag (lower/rep.c:
    # rep_complete_step): one adc where the carry says "right" (XGBoost's <), an lea and an sbb where it
    # says "left" (<= and >=, which the float forest of LightGBM's missing type Zero keeps); never a flag set
    # into a byte and turned back into a carry (addb $-1).
    for model, step, fewest in ((higgs, r"adcq\s+(%r\w+), \1$", 100), ("tests/models/lightgbm/missing_zero.txt", r"sbbq\s+\$", 50)):
        name = f"carry_step_{os.path.basename(model).split('.')[0]}"
        if not s.wanted("cli", name):
            continue
        out = s.path(f"cli-{name}.s")
        p = s.run("compile", model, "--emit", "asm", "--cpu", "x86-64-v3", "--representation", "array", "-o", out)
        text = open(out).read() if p.returncode == 0 else ""
        steps, rebuilt = len(re.findall(step, text, re.M)), len(re.findall(r"addb\s+\$-1", text))
        s.record("cli", name, p.returncode == 0 and steps >= fewest and rebuilt == 0,
                 p.stderr.strip() or f"{steps} steps of the carry ({fewest} expected at least), {rebuilt} carries rebuilt")

    # Walks of 16 rows take the top levels of a tree at once, with compares of 16 keys in 512-bit vectors, where the
    # CPU has them (lower/lower_tops.c: lower_tops): in place (LIR_IF_WIDE), only the functions that hold tops
    # generated with AVX-512, after an optimisation without it (no gathers anywhere); on a CPU without it, no
    # vector of 512 bits anywhere, the tops' compares in pairs of 256 bits (AVX2). Rows of higgs' 28 features walk
    # keys of i64, year_prediction_msd's 90 keys of i32. With AVX-512 the masks of candidates that a top's splits
    # clear come from a buffer (RepLayout.top_masks) and stay in registers: no AND of the tops reads a constant of
    # the code's own (a broadcast {1to16} from the constant pool, which AVX2 keeps).
    year = os.path.join(REAL, "year_prediction_msd.json")
    for model, cpu, wide in ((higgs, "x86-64-v4", True), (higgs, "sapphirerapids", True), (higgs, "x86-64-v3", False),
                             (year, "x86-64-v4", True)):
        name = f"walk_tops_{cpu}" if model == higgs else f"walk_tops_year_{cpu}"
        if not s.wanted("cli", name):
            continue
        out = s.path(f"cli-{name}.s")
        p = s.run("compile", model, "--emit", "asm", "--cpu", cpu, "-o", out)
        text = open(out).read() if p.returncode == 0 else ""
        split = re.split(r"^([A-Za-z_][\w.]*):\n", text, flags=re.M)  # functions (not .L labels)
        functions = list(zip(split[1::2], split[2::2]))
        tops = [label for label, body in functions if ".array.tops" in body]  # the tops' splits are read there only
        compares = [label for label, body in functions if re.search(r"vpcmp\w*ud\s.*%zmm", body)]
        elsewhere = [label for label, body in functions if "%zmm" in body and label not in tops]
        gathers = [label for label, body in functions if "gather" in body]
        masks = ".array.top_masks" in text
        folded = [label for label, body in functions if re.search(r"vpandd\s+\.LCPI\w*\(%rip\)\{1to16\}", body)]
        ok = p.returncode == 0 and bool(tops) and bool(compares) == wide and set(compares) <= set(tops) and \
            not elsewhere and not gathers and masks == wide and not (wide and folded)
        s.record("cli", name, ok, p.stderr.strip() or f"tops in {tops}, compares of 16 keys in {compares}, 512-bit "
                                                      f"vectors also in {elsewhere}, gathers in {gathers}, masks "
                                                      f"buffer {masks}, ANDs of constants in {folded}")
    # Walks of 16 rows side by side of a tree of at most 32 leaves compare all its splits at once (lower/rep_masks.c):
    # a loop over the tree's splits, each a compare of 16 keys (one 512-bit vector with AVX-512, unsigned; a pair of
    # 256-bit ones with AVX2, signed on biased keys, RepLayout.signed_masks: no unsigned max); its leaves come by
    # scalar loads, no gather. A CPU without AVX2 has no leaf masks. LightGBM's 31 leaves grown deep, 3 classes (the
    # rows past the last tile of 16 walk node by node).
    leafwise = os.path.join(MODELS, "lightgbm", "leafwise_multiclass.txt")
    for cpu, compare in (("x86-64-v4", r"vpcmp\w*ud\s.*%zmm"), ("x86-64-v3", r"vpcmpgtd\s.*%ymm"), ("x86-64", None)):
        name = f"leaf_masks_{cpu}"
        if not s.wanted("cli", name):
            continue
        out = s.path(f"cli-{name}.s")
        p = s.run("compile", leafwise, "--emit", "asm", "--cpu", cpu, "--representation", "sparse", "-o", out)
        text = open(out).read() if p.returncode == 0 else ""
        masks, compares = ".masks.splits" in text, bool(compare and re.search(compare, text))
        gathers = [line.strip() for line in text.splitlines() if "gather" in line]
        unsigned = cpu == "x86-64-v3" and "vpmaxud" in text
        ok = p.returncode == 0 and masks == bool(compare) and compares == bool(compare) and not gathers and not unsigned
        s.record("cli", name, ok, p.stderr.strip() or f"masks {masks}, compares of 16 keys {compares}, gathers "
                 f"{gathers[:2]}, unsigned maxima {unsigned}")
    # And they predict as the libraries do, with AVX-512's unsigned compares and AVX2's signed ones on biased keys (a
    # split's record the bound of one compare), where this CPU has them: LightGBM's category sets with NaN and
    # XGBoost's `<` splits that send NaN either way (the keys less one), all rows in one call.
    fixtures = (os.path.join(MODELS, "lightgbm", "leafwise_categorical_masks"), os.path.join(MODELS, "missing_directions.x3"))
    for fixture, (cpu, feature) in itertools.product(fixtures, (("x86-64-v4", "avx512f"), ("x86-64-v3", "avx2"))):
        name = f"leaf_masks_predict_{os.path.basename(fixture).split('.')[0]}_{cpu}"
        if not s.wanted("cli", name):
            continue
        if feature not in flags:
            s.record("cli", name, True, f"skipped: this CPU has no {feature}")
            continue
        model = fixture + (".txt" if os.path.exists(fixture + ".txt") else ".json")
        so, out = s.path(f"cli-{name}.so"), s.path(f"cli-{name}.csv")
        lir = s.run("dump", "--level", "lir", model, "--representation", "sparse", "--cpu", cpu).stdout
        p = s.run("compile", model, "--representation", "sparse", "--cpu", cpu, "-o", so)
        q = s.run("predict", so, "--input", fixture + ".rows.csv", "--output", out, "--margin") if p.returncode == 0 else p
        if q.returncode != 0 or "masks.splits" not in lir:
            s.record("cli", name, False, q.stderr.strip() or "no masks.splits buffer in the LIR")
        else:
            judge(s, "cli", name, read_table(out), read_table(fixture + ".margin.csv"), False)
    # Their category splits pick each row's set word from tables of the set's words (LIR `gather ... table N`), which
    # x86 permutes: 16 words a register with AVX-512, two tables of 8 with AVX2, none without (a load a lane). AVX2's
    # permutes read the word's index by its low bits (`table 8 low`) and pick the second table by its sign: the index
    # is a column of the leaf masks' copy of the keys (RepLayout.set_features), loaded and used as it is, with no
    # shift, AND or compare of bits between the load and the permutes and their select.
    leafwise_cat = os.path.join(MODELS, "lightgbm", "leafwise_categorical.txt")
    for cpu, table in (("x86-64-v4", 16), ("x86-64-v3", 8), ("x86-64", None)):
        name = f"set_tables_{cpu}"
        if not s.wanted("cli", name):
            continue
        out = s.path(f"cli-{name}.s")
        p = s.run("compile", leafwise_cat, "--emit", "asm", "--cpu", cpu, "--representation", "sparse", "-o", out,
                  "-d", "lower-lir")
        text = open(out).read() if p.returncode == 0 else ""
        tables = set(int(n) for n in re.findall(r"\] table (\d+)", p.stderr))
        permutes = bool(re.search(r"vperm(d|ps)\s.*%ymm", text))
        defs = dict(re.findall(r"^\s*(%\d+) = (.*)$", p.stderr, re.M))
        indices = re.findall(r"\+ <16 x i32> (%\d+)\] table 8 low$", p.stderr, re.M)
        computed = [defs.get(i, "") for i in indices if not defs.get(i, "").startswith("load <16 x i32>")]
        picks = re.findall(r"= icmp slt <16 x i32> (%\d+), \{0\}$", p.stderr, re.M)
        low = cpu != "x86-64-v3" or (indices and len(indices) == p.stderr.count("table 8") and not computed and
                                     set(indices) <= set(picks))
        ok = p.returncode == 0 and tables == ({table} if table else set()) and (permutes or cpu != "x86-64-v3") and low
        s.record("cli", name, ok, f"tables {sorted(tables)}, ymm permutes {permutes}, {len(indices)} indices by low "
                 f"bits, not loaded: {computed[:2]}, picks by sign {len(set(indices) & set(picks))}"
                 if p.returncode == 0 else p.stderr.strip()[-300:])
    # Splits that send NaN either way, walked as keys in the sparse layout: each step's compare decides NaN, those
    # that send it the other way reading their feature's key less one in a column of its own (RepLayout.nan_columns),
    # and leaves stay, for lone rows, 7 rows a call (no full tile of 16: walks node by node) and all rows at once
    # (leaf masks), each against LightGBM's margins.
    leafwise_nan = os.path.join(MODELS, "lightgbm", "leafwise_nan")
    if any(s.wanted("cli", f"nan_columns_{batch}") for batch in ("1", "7", "0")):
        so = s.path("cli-nan-columns.so")
        p = s.run("compile", leafwise_nan + ".txt", "--representation", "sparse", "-o", so)
        for batch in ("1", "7", "0"):
            out = s.path(f"cli-nan-columns-{batch}.csv")
            q = s.run("predict", so, "--input", leafwise_nan + ".rows.csv", "--output", out, "--margin",
                      *(("--batch", batch) if batch != "0" else ())) if p.returncode == 0 else p
            if q.returncode != 0:
                s.record("cli", f"nan_columns_{batch}", False, q.stderr.strip())
            else:
                judge(s, "cli", f"nan_columns_{batch}", read_table(out), read_table(leafwise_nan + ".margin.csv"), False)
    # A lone row walks its trees side by side, and where their leaves cannot stay (category splits) one loop steps
    # them all to their leaves (finish_together), in two versions: its row with NaN and without (a forest past 512
    # splits, which grove's schedule walks by leaf masks where rows come in batches). One row a call and 7, a third of
    # the rows with NaN, against LightGBM's margins.
    leafwise_cat_masks = os.path.join(MODELS, "lightgbm", "leafwise_categorical_masks.txt")
    if any(s.wanted("cli", f"category_lone_rows_{batch}") for batch in ("1", "7")):
        so = s.path("cli-category-lone-rows.so")
        p = s.run("compile", leafwise_cat_masks, "-o", so)
        for batch in ("1", "7"):
            out = s.path(f"cli-category-lone-rows-{batch}.csv")
            rows = leafwise_cat_masks.replace(".txt", ".rows.csv")
            q = s.run("predict", so, "--input", rows, "--output", out, "--margin", "--batch", batch) \
                if p.returncode == 0 else p
            if q.returncode != 0:
                s.record("cli", f"category_lone_rows_{batch}", False, q.stderr.strip())
            else:
                judge(s, "cli", f"category_lone_rows_{batch}", read_table(out),
                      read_table(leafwise_cat_masks.replace(".txt", ".margin.csv")), False)
    # The sparse layout's tops: every tree's first four levels complete in its first slots (a leaf above the fourth,
    # as this model has at depth 2, copied below it), taken for 16 rows at once where leaves stay; the rows past the
    # last tile of 16 walk from the root. Against LightGBM's margins, all rows in one call and 100 a call.
    leafwise_plain = os.path.join(MODELS, "lightgbm", "leafwise")
    for cpu, feature in (("x86-64-v4", "avx512f"), ("x86-64-v3", "avx2")):
        name = f"sparse_tops_{cpu}"
        if not any(s.wanted("cli", f"{name}_{batch}") for batch in ("0", "100")):
            continue
        if feature not in flags:
            s.record("cli", name, True, f"skipped: this CPU has no {feature}")
            continue
        so = s.path(f"cli-{name}.so")
        lir = s.run("dump", "--level", "lir", leafwise_plain + ".txt", "--representation", "sparse", "--cpu", cpu)
        p = s.run("compile", leafwise_plain + ".txt", "--representation", "sparse", "--cpu", cpu, "-o", so)
        for batch in ("0", "100"):
            out = s.path(f"cli-{name}-{batch}.csv")
            q = s.run("predict", so, "--input", leafwise_plain + ".rows.csv", "--output", out, "--margin",
                      *(("--batch", batch) if batch != "0" else ())) if p.returncode == 0 else p
            if q.returncode != 0 or "sparse.tops" not in lir.stdout:
                s.record("cli", f"{name}_{batch}", False, q.stderr.strip() or "no sparse.tops buffer in the LIR")
            else:
                judge(s, "cli", f"{name}_{batch}", read_table(out), read_table(leafwise_plain + ".margin.csv"), False)
    # And they predict as the walks step by step do, with AVX-512 and with AVX2 (its tops in pairs of 256-bit
    # vectors), where this CPU has them: higgs' 2000 rows against XGBoost, in one call (blocks of 256 rows, tiles of
    # 8 trees) and 100 rows a call (a last group of 4).
    for cpu, feature in (("x86-64-v4", "avx512f"), ("x86-64-v3", "avx2")):
        name = "walk_tops_predict" if cpu == "x86-64-v4" else f"walk_tops_predict_{cpu}"
        if not s.wanted("cli", name):
            continue
        if feature not in flags:
            s.record("cli", name, True, f"skipped: this CPU has no {feature}")
            continue
        table = read_table(os.path.join(REAL, "higgs.test.csv"))
        rows = s.path("cli-tops.rows.csv")
        write_table(rows, [r[:-1] for r in table])
        so = s.path(f"cli-tops-{cpu}.so")
        p = s.run("compile", higgs, "--cpu", cpu, "-o", so)
        for batch in ("0", "100"):
            out = s.path(f"cli-tops-{cpu}-{batch}.csv")
            q = s.run("predict", so, "--input", rows, "--output", out, *(("--batch", batch) if batch != "0" else ())) \
                if p.returncode == 0 else p
            if q.returncode != 0:
                s.record("cli", f"{name}_{batch}", False, q.stderr.strip())
            else:
                judge(s, "cli", f"{name}_{batch}", read_table(out), [[r[-1]] for r in table], True)
    # The sparse layout's second key copy for rows side by side (RepLayout.child_word): each split's left child placed
    # where its offset's low byte is the feature, the step adding the whole word (an addc of i32) after a zero extension
    # of its byte, the tops' last level a table of slots; lone rows walk store_tree's copy. higgs (one missing rule,
    # 28 features) against XGBoost; and splits that send NaN either way (sparse_nan_columns), whose rows' keys less one
    # lie in columns of their own (RepLayout.nan_columns: the scan stores each i64 key less 2^32 past the row's keys),
    # the 255-leaf lossguide fixture against XGBoost's margins. In one call (tops, tiles of rows), 100 rows a call and
    # a row a call (the other copy).
    nan_words = os.path.join(MODELS, "lossguide_nan_words.x3")
    copies = [("sparse_word_copy", os.path.join(REAL, "higgs.json"), None, ()),
              ("sparse_nan_columns", nan_words + ".json", nan_words, ("--margin",))]
    for (test, model, fixture, margin), (cpu, feature) in itertools.product(
            copies, (("x86-64-v4", "avx512f"), ("x86-64-v3", "avx2"))):
        name = f"{test}_{cpu}"
        if not any(s.wanted("cli", f"{name}_{batch}") for batch in ("0", "100", "1")):
            continue
        if feature not in flags:
            s.record("cli", name, True, f"skipped: this CPU has no {feature}")
            continue
        if fixture:
            rows, expected = fixture + ".rows.csv", read_table(fixture + ".margin.csv")
        else:
            table = read_table(os.path.join(REAL, "higgs.test.csv"))[:600]
            rows, expected = s.path(f"cli-{name}.rows.csv"), [[r[-1]] for r in table]
            write_table(rows, [r[:-1] for r in table])
        so = s.path(f"cli-{name}.so")
        lir = s.run("dump", "--level", "lir", model, "--representation", "sparse", "--cpu", cpu).stdout
        p = s.run("compile", model, "--representation", "sparse", "--cpu", cpu, "-o", so)
        wanted = ("sparse.word_keys", "sparse.top_slots", "addc i32") + ((", 4294967296\n",) if fixture else ())
        for batch in ("0", "100", "1"):
            out = s.path(f"cli-{name}-{batch}.csv")
            q = s.run("predict", so, "--input", rows, "--output", out, *margin,
                      *(("--batch", batch) if batch != "0" else ())) if p.returncode == 0 else p
            if q.returncode != 0 or not all(x in lir for x in wanted):
                s.record("cli", f"{name}_{batch}", False,
                         q.stderr.strip() or "no word copy, top slots, addc i32 or keys less one in the LIR")
            else:
                judge(s, "cli", f"{name}_{batch}", read_table(out), expected, not fixture)
    # Walks of 16 rows side by side that finish together (lower_walks.c, finish_together, where cost_finish_together
    # says it pays) take blocks of 3 straight steps, each where some lane still walks (its 15 ANDs of 16 leaf tests),
    # up to 6 of them, then a loop, unless the blocks reach the forest's deepest leaf:
    # * the 255-leaf lossguide fixture (leaves at most 14 deep) after 2 straight steps: 4 blocks, no loop;
    # * after 12 few walks go on, and each lane loops alone: no leaf tests ANDed;
    # * deep_lossguide (leaves 26 deep) after 2 straight steps: 6 blocks and the loop; after 8, 6 blocks.
    # Each against XGBoost's margins, in one call, 100 rows and a row a call.
    deep = os.path.join(MODELS, "deep_lossguide.x3")
    for name, model, peel, tests in (("rows_finish_together", nan_words, 2, 4), ("rows_finish_alone", nan_words, 12, 0),
                                     ("rows_finish_loop", deep, 2, 7), ("rows_finish_blocks", deep, 8, 6)):
        if not any(s.wanted("cli", f"{name}_{batch}") for batch in ("0", "100", "1")):
            continue
        text = f"tile(batch, b0, b1, 16); interleave(b1); reorder(b0, tree, b1); peelWalk(b1, {peel})"
        lir = s.run("dump", "--level", "lir", model + ".json", "--schedule-text", text).stdout
        so = s.path(f"cli-{name}.so")
        p = s.run("compile", model + ".json", "--schedule-text", text, "-o", so)
        anded = lir.count(" = and i1 ") // 15
        for batch in ("0", "100", "1"):
            out = s.path(f"cli-{name}-{batch}.csv")
            q = s.run("predict", so, "--input", model + ".rows.csv", "--output", out, "--margin",
                      *(("--batch", batch) if batch != "0" else ())) if p.returncode == 0 else p
            if q.returncode != 0 or anded != tests:
                s.record("cli", f"{name}_{batch}", False, q.stderr.strip() or
                         f"the LIR has {anded} tests of 16 lanes' leaves ANDed, not {tests}")
            else:
                judge(s, "cli", f"{name}_{batch}", read_table(out), read_table(model + ".margin.csv"), False)
    # Rows side by side whose walks finish together take 3 straight steps fewer than the peel rule's, where the nodes
    # fit L2 (hir_choose_schedule.c, rows_peel): deep_lossguide's default schedule, 16 rows side by side against one.
    if s.wanted("cli", "rows_peel_together"):
        def peel_of(rows):
            q = s.run("dump", "--level", "hir", deep + ".json", "--interleave", rows)
            m = re.search(r"peelWalk\(\w+, (\d+)\)", q.stdout)
            return int(m.group(1)) if q.returncode == 0 and m else None
        sixteen, one = peel_of("16"), peel_of("1")
        s.record("cli", "rows_peel_together", sixteen is not None and one is not None and sixteen == one - 3,
                 f"16 rows side by side take {sixteen} straight steps, one row {one}")
    # A tile of 16 rows side by side left short walks all its lanes, those past the rows on copies of its first row's
    # keys, from cost_pad_rows's rows on (lower_lanes_padded), and splitSize's lone rows end there: LightGBM's
    # leaf-wise multiclass fixture by leaf masks from 3 (lone rows below 5), its category sets from 2, the even
    # depth_groups forest node by node from 8, deep_lossguide (uneven; its 5 trees walk no lone rows apart, and its
    # margins are transformed after a tree loop around the rows side by side) from 11, CatBoost's symmetric trees from
    # 3 (every level in their tops; the lanes transform their rows, those past the rows a scratch row's:
    # lower_padded_row). Each against its library's margins, in calls of 5 to 29 rows: padded tiles, short ones a row
    # at a time, and both; the symmetric trees' probabilities too.
    lgb = os.path.join(MODELS, "lightgbm")
    cb = os.path.join(MODELS, "catboost", "cb_binary")
    rows_inside = ("--schedule-text", "tile(batch, b0, b1, 64); tile(b1, b2, b3, 16); interleave(b3); "
                   "reorder(b0, b2, tree, b3)")
    for name, model, margins, pad, few, options in (
            ("masks", os.path.join(lgb, "leafwise_multiclass.txt"), os.path.join(lgb, "leafwise_multiclass"), 3, 5, ()),
            ("sets", os.path.join(lgb, "leafwise_categorical_masks.txt"), os.path.join(lgb, "leafwise_categorical_masks"),
             2, 2, ()),
            ("even", os.path.join(MODELS, "depth_groups.x3.json"), os.path.join(MODELS, "depth_groups.x3"), 8, 8, ()),
            ("uneven", os.path.join(MODELS, "deep_lossguide.x3.json"), os.path.join(MODELS, "deep_lossguide.x3"), 11,
             None, rows_inside),
            ("symmetric", cb + ".json", cb, 3, None, ("--representation", "oblivious"))):
        batches = ("5", "7", "18", "19", "27", "29")
        if not any(s.wanted("cli", f"padded_tiles_{name}_{batch}") for batch in batches):
            continue
        if "avx2" not in open("/proc/cpuinfo").read():
            for batch in batches:
                s.record("cli", f"padded_tiles_{name}_{batch}", True, "skipped: this CPU has no avx2 (no tiles of keys)")
            continue
        lir = s.run("dump", "--level", "lir", "--cpu", "native", model, *options).stdout
        hir = s.run("dump", "--level", "hir", "--cpu", "native", model, *options).stdout
        split = re.search(r"splitSize\(batch, few, many, (\d+)\)", hir)
        wrong = (f"no tile of rows padded from {pad} rows in the LIR"  # (the copy of keys, and the tile's test)
                 if len(re.findall(rf"= icmp sge i64 %\d+, {pad}$", lir, re.M)) < 2 else
                 f"lone rows below {split.group(1) if split else None}, not {few}"
                 if (int(split.group(1)) if split else None) != few else None)
        so = s.path(f"cli-padded-{name}.so")
        p = s.run("compile", model, "--cpu", "native", "-o", so, *options)
        for batch in batches:
            out = s.path(f"cli-padded-{name}-{batch}.csv")
            q = s.run("predict", so, "--input", margins + ".rows.csv", "--output", out, "--margin", "--batch", batch) \
                if p.returncode == 0 else p
            if q.returncode == 0 and not wrong and name == "symmetric":
                q = s.run("predict", so, "--input", margins + ".rows.csv", "--batch", batch)
                got = [float(v) for v in q.stdout.replace(",", " ").split()] if q.returncode == 0 else []
                want = [v for r in read_table(margins + ".pred.csv") for v in r]
                if len(got) != len(want) or max(abs(a - b) for a, b in zip(got, want)) > 1e-5:
                    wrong = "probabilities differ from CatBoost's"
            if q.returncode != 0 or wrong:
                s.record("cli", f"padded_tiles_{name}_{batch}", False, q.stderr.strip() or wrong)
            else:
                judge(s, "cli", f"padded_tiles_{name}_{batch}", read_table(out), read_table(margins + ".margin.csv"),
                      False)
    # Walks that read rows' keys in tiles (rows of more than 16 features: RepLayout.tile_words) predict exactly as
    # walks of floats do, byte for byte: the 40-feature LightGBM model in the array layout, padded to depth 8 (its
    # double leaves then lie in the records whose words the tiles change) in 16 rows side by side, and
    # year_prediction_msd with grove's schedule; compiled for this CPU and for x86-64 (no tops, no tiles), predicting
    # in one call, 100 rows and a row a call.
    lightgbm = os.path.join(MODELS, "lightgbm")
    padded = ("--representation", "array", "--schedule-text",
              "tile(batch, b0, b1, 256); tile(b1, b2, b3, 16); interleave(b3); reorder(b0, b2, tree, b3); unrollWalk(b3, 8)")
    for name, model, rows, options in (("tiles_exact_lightgbm", os.path.join(lightgbm, "wide_multiclass.txt"),
                                        os.path.join(lightgbm, "wide_multiclass.rows.csv"), padded),
                                       ("tiles_exact_year", os.path.join(REAL, "year_prediction_msd.json"),
                                        os.path.join(REAL, "year_prediction_msd.random.csv"), ())):
        if not s.wanted("cli", name):
            continue
        if "avx2" not in flags:
            s.record("cli", name, True, "skipped: this CPU has no avx2 (no tops, no tiles)")
            continue
        if name.endswith("year"):  # its rows' last column is the expected value
            table = read_table(rows)
            rows = s.path("cli-tiles-year.rows.csv")
            write_table(rows, [r[:-1] for r in table])
        outputs, failed = {}, None
        for cpu in ("native", "x86-64"):
            so = s.path(f"cli-{name}-{cpu}.so")
            p = s.run("compile", model, "--cpu", cpu, "-o", so, *options)
            for batch in ("0", "100", "1"):
                out = s.path(f"cli-{name}-{cpu}-{batch}.csv")
                q = s.run("predict", so, "--input", rows, "--output", out, "--margin",
                          *(("--batch", batch) if batch != "0" else ())) if p.returncode == 0 else p
                if q.returncode != 0:
                    failed = failed or f"{cpu}, batch {batch}: {q.stderr.strip()}"
                else:
                    outputs[cpu, batch] = open(out).read()
        differ = [batch for batch in ("0", "100", "1") if not failed and outputs["native", batch] != outputs["x86-64", "0"]]
        s.record("cli", name, not failed and not differ,
                 failed or (f"batches {differ} differ from x86-64's predictions" if differ else
                            f"{len(outputs['x86-64', '0'].splitlines())} rows alike"))


def cache_tests(s):
    """The code cache (docs/cli.md: Code cache): a model whose trees and base score differ but whose shape is the same
    reuses the code compiled for another and predicts what it predicts compiled afresh; a damaged entry, an unusable
    directory and GROVE_CACHE_DIR=off compile without it."""
    model = os.path.join(MODELS, "base_score.x1")
    rows = model + ".rows.csv"
    with open(model + ".json") as f:
        variant = json.load(f)
    variant["learner"]["learner_model_param"]["base_score"] = "7E-1"
    for tree in variant["learner"]["gradient_booster"]["model"]["trees"]:
        tree["split_conditions"] = [1.25 * v for v in tree["split_conditions"]]
        tree["default_left"] = [1 - d for d in tree["default_left"]]
    other = s.path("cache-variant.json")
    with open(other, "w") as f:
        json.dump(variant, f)
    cache = s.path("cache-dir")

    def compile_predict(name, path, *options, env=None):
        so = s.path(f"cache-{name}.so")
        # the array layout: the code representation's code holds the trees, so no two models share it
        p = s.run("compile", path, "-o", so, "--time", "--representation", "array", *options, env=env)
        q = s.run("predict", so, "--input", rows) if p.returncode == 0 else p
        return p.returncode == 0 and q.returncode == 0, p.stderr, q.stdout

    if s.wanted("cli", "cache_same_shape"):
        ok1, log1, _ = compile_predict("first", model + ".json", "--cache", cache)
        entries = len(os.listdir(cache)) if os.path.isdir(cache) else 0  # one per part compiled apart
        ok2, log2, hit = compile_predict("hit", other, "--cache", cache)
        ok3, log3, fresh = compile_predict("fresh", other, "--no-cache")
        ok = (ok1 and ok2 and ok3 and "cache-miss" in log1 and "cache-hit" in log2 and "cache" not in log3 and
              "llvm-opt" not in log2 and hit == fresh and entries >= 1 and len(os.listdir(cache)) == entries)
        s.record("cli", "cache_same_shape", ok, f"{log1}{log2}{log3}{hit[:200]} against {fresh[:200]}")
        if ok:  # the variant's predictions are its own, not the first model's
            check_predictions(s, "cli", "cache_hit_first_model", model + ".json", rows, read_table(model + ".pred.csv"),
                              True, options=["--cache", cache, "--representation", "array"])
    if s.wanted("cli", "cache_damaged_entry"):
        compile_predict("seed", model + ".json", "--cache", cache)
        for entry in os.listdir(cache):
            with open(os.path.join(cache, entry), "r+b") as f:
                f.seek(100)
                byte = f.read(1)
                f.seek(100)
                f.write(bytes([byte[0] ^ 0x55]))
        ok, log, got = compile_predict("damaged", model + ".json", "--cache", cache)
        _, _, want = compile_predict("undamaged", model + ".json", "--no-cache")
        s.record("cli", "cache_damaged_entry", ok and "cache-miss" in log and got == want, log)
    if s.wanted("cli", "cache_unusable"):
        not_a_directory = s.path("cache-file")
        with open(not_a_directory, "w") as f:
            f.write("a file where the cache would go")
        ok, log, _ = compile_predict("unusable", model + ".json", "--cache", not_a_directory)
        s.record("cli", "cache_unusable", ok and "cache-miss" in log, log)
    if s.wanted("cli", "cache_off"):
        home = s.path("cache-home")
        ok, log, _ = compile_predict("off", model + ".json", env={"GROVE_CACHE_DIR": "off", "HOME": home})
        ok2, log2, _ = compile_predict("home", model + ".json", env={"GROVE_CACHE_DIR": "", "HOME": home})
        s.record("cli", "cache_off", ok and ok2 and "cache" not in log + log2 and not os.path.exists(home), log + log2)


def tune_tests(s):
    """grove tune: a short search on a multiclass fixture, whose best schedule compiles and predicts as the library
    does, whose log has a row per timed candidate, and whose bad options get messages. (How fast the winner is, is
    the benchmark's business, not a test's.)"""
    base = os.path.join(MODELS, "multi_softprob7.x1")
    if s.wanted("cli", "tune"):
        sched, log = s.path("tune.sched"), s.path("tune.csv")
        p = s.run("tune", base + ".json", "--batch", "64", "--budget", "3", "--input", base + ".rows.csv", "-o", sched,
                  "--log", log)
        with open(log) if os.path.exists(log) else io.StringIO() as f:
            logged = list(csv.reader(f))
        ok = (p.returncode == 0 and "(heuristic)" in p.stdout and os.path.exists(sched) and len(logged) >= 2 and
              logged[0][0] == "time" and all(len(r) == len(logged[0]) for r in logged))
        s.record("cli", "tune", ok, f"exit {p.returncode}, {len(logged)} log lines: {p.stdout[-1000:]}{p.stderr.strip()}")
        if ok:
            check_predictions(s, "cli", "tune_schedule", base + ".json", base + ".rows.csv", read_table(base + ".pred.csv"),
                              True, options=["--schedule", sched])
    if s.wanted("cli", "tune_heuristic_is_compiles"):
        # tune's heuristic candidate is compile's schedule: for an ONNX binary classifier (margins mirrored, which both
        # fold before scheduling), its rows side by side and lone rows' bound as `grove dump` shows them (with AVX2 and
        # no AVX-512, symmetric trees' walks of 32 rows; 16 elsewhere)
        model, named = os.path.join(MODELS, "onnx", "catboost_binary.onnx"), ["--representation", "oblivious"]
        hir = s.run("dump", "--level", "hir", "--cpu", "native", model, *named).stdout
        p = s.run("tune", model, "--batch", "64", "--budget", "1", "-o", s.path("mirror.sched"), *named)
        row = next((line for line in p.stdout.splitlines() if "(heuristic)" in line), "")
        interleaved = re.findall(r"interleave\((\w+)\)", hir)
        rows = [n for inner, n in re.findall(r"tile\(\w+, \w+, (\w+), (\d+)\)", hir) if inner in interleaved]
        few = re.search(r"splitSize\(batch, few, many, (\d+)\)", hir)
        want = [rows[0] if len(rows) == 1 else None, few.group(1) if few else "0"]
        got = [m.group(1) if m else None for m in (re.search(r" rows (\d+) ", row), re.search(r" few_rows (\d+) ", row))]
        s.record("cli", "tune_heuristic_is_compiles", None not in want and want == got,
                 f"compile's rows and few rows {want}, tune's heuristic: {row.strip()} {p.stderr.strip()[-300:]}")
    if s.wanted("cli", "tune_deep_trees"):  # chains 24 deep: a tile of trees' bytes, and padding, are out of bounds
        p = s.run("tune", os.path.join(SCHEDULES, "models", "caterpillar24.json"), "--budget", "2", "-o",
                  s.path("deep.sched"), "--log", s.path("deep.csv"))
        s.record("cli", "tune_deep_trees", p.returncode == 0 and "(heuristic)" in p.stdout,
                 f"exit {p.returncode}: {p.stdout[-500:]}{p.stderr.strip()[-500:]}")
    narrow = s.path("tune-narrow.csv")
    write_table(narrow, [[0.5] * 3])
    for name, argv, message in [
            ("tune_no_rows", ["--batch", "0"], "--batch 0: at least one row"),
            ("tune_narrow_rows", ["--input", narrow], "tune-narrow.csv: rows of 3 values, the model takes"),
            ("tune_bad_representation", ["--representation", "tiled9"], "--representation tiled9: unknown representation"),
            ("tune_bad_log", ["--log", s.path("no/such/dir/log.csv")], "no/such/dir/log.csv: No such file or directory"),
            ("tune_estimate_on_host", ["--estimate"], "--estimate is for --target cuda")]:
        if s.wanted("cli", name):
            p = s.run("tune", base + ".json", "--budget", "1", "-o", s.path("never.sched"), *argv)
            s.record("cli", name, p.returncode == 1 and message in p.stderr and not os.path.exists(s.path("never.sched")),
                     f"exit {p.returncode}: {p.stderr.strip()}")


def tune_gpu_tests(s):
    """grove tune --target: on gpusim a multiclass fixture's best template schedule (ranked by ptxas, every candidate
    checked on the simulator) compiles for gpusim and predicts as the library does, and the log names the target; for
    cuda, with no GPU here, higgs is ranked by the estimate (ptxas' spills, then a time from its resources and the
    simulator's memory requests: the ranking ascends) after a message saying there is no device."""
    base = os.path.join(MODELS, "multi_softprob7.x1")
    if s.wanted("cli", "tune_gpusim"):
        sched, log = s.path("tune-gpusim.sched"), s.path("tune-gpusim.csv")
        p = s.run("tune", base + ".json", "--target", "gpusim", "--batch", "64", "--budget", "120", "--input",
                  base + ".rows.csv", "-o", sched, "--log", log)
        with open(log) if os.path.exists(log) else io.StringIO() as f:
            logged = list(csv.reader(f))
        header = logged[0] if logged else []
        targets = {r[header.index("target")] for r in logged[1:]} if "target" in header else set()
        # every candidate judged is logged, sharedReduce's among them (which of them rank first follows ptxas' registers)
        shared = {r[header.index("shared_reduce")] for r in logged[1:]} if "shared_reduce" in header else set()
        with open(sched) if os.path.exists(sched) else io.StringIO() as f:
            representation = re.search(r"^representation\((\w+)\)$", f.read(), re.M)
        ok = (p.returncode == 0 and "gpusim's speed is no GPU's" in p.stderr and "1" in shared and
              representation and len(logged) >= 4 and targets == {"gpusim"} and
              all(len(r) == len(header) for r in logged))
        s.record("cli", "tune_gpusim", ok, f"exit {p.returncode}, {len(logged)} log lines, targets {targets}: "
                 f"{p.stdout[-1500:]}{p.stderr.strip()}")
        if ok:
            check_predictions(s, "cli", "tune_gpusim_schedule", base + ".json", base + ".rows.csv",
                              read_table(base + ".pred.csv"), True,
                              options=["--target", "gpusim", "--schedule", sched])
    if s.wanted("cli", "tune_cuda_static"):
        if not os.access(PTXAS, os.X_OK):
            print(f"SKIP cli/tune_cuda_static: {PTXAS} is missing (it comes with the CUDA toolkit)", flush=True)
            return
        sched = s.path("tune-cuda.sched")
        p = s.run("tune", os.path.join(REAL, "higgs.json"), "--target", "cuda:sm_80", "--budget", "120", "-o", sched,
                  "--log", "")
        # rank, registers, shared bytes, spilled bytes, occupancy, memory requests a row, estimated ns a row
        ranked = re.findall(r"^\s+(\d+)\s+\d+\s+\d+\s+(\d+)\s+\d+%\s+([\d.]+)\s+([\d.]+)\s", p.stdout, re.M)
        ordered = all((int(a[1]), float(a[3])) <= (int(b[1]), float(b[3])) for a, b in zip(ranked, ranked[1:]))
        ok = (p.returncode == 0 and "no CUDA device here" in p.stderr and "libcuda.so.1" in p.stderr and
              "ranked by an estimate from ptxas and the simulator" in p.stdout and len(ranked) >= 2 and
              all(float(r[2]) > 0 and float(r[3]) > 0 for r in ranked) and ordered and os.path.exists(sched))
        s.record("cli", "tune_cuda_static", ok, f"exit {p.returncode}: {p.stdout[-1500:]}{p.stderr.strip()}")


def csv_chunk_tests(s, higgs):
    """grove predict streams its CSV a chunk at a time: 160,000 rows span two chunks of higgs's 28 columns."""
    artifact = s.path("cli-chunks.so")
    pattern = [[0.25 * ((i * 7 + j) % 9) - 1 for j in range(28)] for i in range(5)]
    rows = s.path("cli-chunks.csv")
    with open(rows, "w") as f:
        text = "".join(",".join(repr(x) for x in row) + "\n" for row in pattern)
        # a header line: higgs names its features "0" to "27", which a header must match (numbers: --header yes)
        f.write(",".join(str(j) for j in range(28)) + "\n")
        f.write(text * 32000)
    bad = s.path("cli-chunks-bad.csv")
    with open(bad, "w") as f:
        f.write(text * 31000 + "1,2,x" + ",0" * 25 + "\n")
    name = "csv_streamed_in_chunks"
    if s.wanted("cli", name):
        p = s.run("compile", higgs, "-o", artifact)
        q = s.run("predict", artifact, "--input", rows, "--header", "yes") if p.returncode == 0 else p
        lines = q.stdout.split()
        ok = q.returncode == 0 and len(lines) == 160000 and all(lines[i] == lines[i % 5] for i in range(len(lines)))
        s.record("cli", name, ok, f"exit {q.returncode}, {len(lines)} lines: {q.stderr.strip()}")
    name = "csv_bad_field_late"
    if s.wanted("cli", name):
        p = s.run("predict", higgs, "--input", bad)
        ok = p.returncode == 1 and "cli-chunks-bad.csv:155001: field 3: 'x' is not a number" in p.stderr
        s.record("cli", name, ok, f"exit {p.returncode}: {p.stderr.strip()}")


def aot_tests(s):
    """An object from --emit obj, linked into a C program against its generated header (no libgrove)."""
    for model, rows, probability in REAL_MODELS[:1] + REAL_MODELS[2:]:
        name = model[:-5]
        if s.wanted("aot", name):
            aot_check(s, "aot", name, model, rows, probability, os.environ.get("CC", "cc"), ("--cpu", "x86-64"))


def aot_check(s, group, name, model, rows, probability, cc, options, runner=()):
    """Compile the real model with --emit obj (and options), link it into tests/aot/main.c with cc, run the program
    (under runner, e.g. qemu) on the model's rows and compare with their last column."""
    stem = f"{group}_{name}"
    obj = s.path(f"{stem}.o")
    p = s.run("compile", os.path.join(REAL, model), "--emit", "obj", "--prefix", "aot_model", *options, "-o", obj)
    if p.returncode != 0:
        return s.record(group, name, False, p.stderr.strip())
    exe = s.path(stem)
    link = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", f"-I{s.scratch}", "-include", s.path(f"{stem}.h"),
                           os.path.join(ROOT, "tests", "aot", "main.c"), obj, "-o", exe, "-fopenmp", "-lm"],
                          capture_output=True, text=True)
    if link.returncode != 0:
        return s.record(group, name, False, f"linking failed: {link.stderr.strip()}")
    table = read_table(os.path.join(REAL, rows))
    inputs = s.path(f"{stem}.rows.csv")
    write_table(inputs, [r[:-1] for r in table])
    run = subprocess.run([*runner, exe, inputs], capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        return s.record(group, name, False, f"exit {run.returncode}: {run.stderr.strip()}")
    judge(s, group, name, [[float(x)] for x in run.stdout.split()], [[r[-1]] for r in table], probability)


def build_config(s):
    """How configure.py configured the build under test: {"cc", "asan", "fuzz"}."""
    with open(os.path.join(ROOT, s.args.builddir, "config.json")) as f:
        return json.load(f)


def cxx_of(cc):
    """The C++ compiler beside C compiler cc (clang-16: clang++-16, gcc: g++, cc: c++)."""
    head, name = os.path.split(cc)
    for c, cxx in (("clang", "clang++"), ("gcc", "g++"), ("cc", "c++")):
        if name.startswith(c):
            return os.path.join(head, cxx + name[len(c):])
    return "c++"


def installed_library(path, soname, needed):
    """'' if path is a link to soname beside it, whose SONAME is soname and which needs needed; else what is wrong."""
    real = os.path.join(os.path.dirname(path), soname)
    if not os.path.islink(path) or os.readlink(path) != soname or not os.path.isfile(real):
        return f"{path} is not a link to {soname} beside it"
    dynamic = subprocess.run(["readelf", "-d", real], capture_output=True, text=True).stdout
    if f"Library soname: [{soname}]" not in dynamic:
        return f"{real}: no SONAME {soname}: {dynamic.strip()[:400]}"
    missing = [n for n in needed if f"Shared library: [{n}]" not in dynamic]
    return f"{real} does not name {', '.join(missing)} as needed" if missing else ""


def install_tests(s):
    """tools/install.sh into a staging DESTDIR: the libraries' SONAMEs and links, then C programs built with pkg-config
    against it (compiling in-process with grove-compiler; loading with grove alone, in C and through grove.hpp in C++)
    predict as the library does."""
    if not s.wanted("install", "pkg-config"):
        return
    dest, prefix = s.path("destdir"), "/opt/grove"
    root = dest + prefix
    env = {**os.environ, "DESTDIR": dest, "PREFIX": prefix}
    p = subprocess.run([os.path.join(ROOT, "tools", "install.sh"), s.args.builddir], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return s.record("install", "pkg-config", False, p.stderr.strip())
    grove = os.path.join(root, "bin", "grove")
    version = subprocess.run([grove, "--version"], capture_output=True, text=True)
    if version.returncode != 0 or not version.stdout.startswith("grove "):
        return s.record("install", "pkg-config", False, f"installed grove --version: {version.stderr.strip()}")
    with open(os.path.join(ROOT, "rt", "grove.h")) as f:
        abi = re.search(r"^#define GROVE_ABI_VERSION (\d+)$", f.read(), re.M).group(1)
    lib = os.path.join(root, "lib")
    wrong = [w for w in (installed_library(os.path.join(lib, "libgrove.so"), f"libgrove.so.{abi}", ["libm.so.6"]),
                         installed_library(os.path.join(lib, "libgrovec.so"), f"libgrovec.so.{abi}", []))
             if w]
    if os.path.exists(os.path.join(ROOT, s.args.builddir, "aarch64", f"libgrove.so.{abi}")):
        wrong += [w for w in [installed_library(os.path.join(lib, "aarch64-linux-gnu", "libgrove.so"),
                                                f"libgrove.so.{abi}", ["libc.so.6"])] if w]
    s.record("install", "libraries", not wrong, "; ".join(wrong) or f"libgrove.so.{abi} and libgrovec.so.{abi}")
    config = build_config(s)  # a sanitized library needs a program built by the same compiler, sanitized
    asan = ["-fsanitize=address,undefined"] if config["asan"] else []
    model, rows, probability = REAL_MODELS[0]
    table = read_table(os.path.join(REAL, rows))[:2000]
    inputs = s.path("install.rows.csv")
    write_table(inputs, [r[:-1] for r in table])
    artifact = s.path("installed.so")
    made = subprocess.run([grove, "compile", os.path.join(REAL, model), "-o", artifact, "--cpu", "x86-64", "--no-cache"],
                          capture_output=True, text=True)
    pc = {**os.environ, "PKG_CONFIG_PATH": os.path.join(lib, "pkgconfig"), "PKG_CONFIG_SYSROOT_DIR": dest}
    for name, package, compiler, source, args in [
            ("pkg-config", "grove-compiler", [config["cc"], "-std=c11", "-DDEPLOY_COMPILE"], "deploy.c",
             [os.path.join(REAL, model), s.path("deploy.so")]),
            ("runtime", "grove", [config["cc"], "-std=c11"], "deploy.c", [artifact]),
            ("c++", "grove", [cxx_of(config["cc"]), "-std=c++11"], "deploy.cpp", [artifact])]:
        if not s.wanted("install", name):
            continue
        if name != "pkg-config" and made.returncode != 0:
            s.record("install", name, False, f"installed grove compile: {made.stderr.strip()}")
            continue
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", package], capture_output=True, text=True, env=pc)
        if flags.returncode != 0:
            s.record("install", name, False, f"pkg-config {package}: {flags.stderr.strip()}")
            continue
        exe = s.path("deploy-" + name)
        link = subprocess.run([*compiler, "-Wall", "-Werror", *asan, os.path.join(ROOT, "tests", "install", source),
                               "-o", exe, *flags.stdout.split()], capture_output=True, text=True)
        if link.returncode != 0:
            s.record("install", name, False, f"building against the installed tree: {link.stderr.strip()}")
            continue
        run = subprocess.run([exe, *args, inputs], capture_output=True, text=True, timeout=600,
                             env={**os.environ, "LD_LIBRARY_PATH": lib})
        if run.returncode != 0:
            s.record("install", name, False, f"exit {run.returncode}: {run.stderr.strip()}")
            continue
        ok, worst_abs, worst_rel, detail = compare([[float(x)] for x in run.stdout.split()], [[r[-1]] for r in table],
                                                   probability)
        s.record("install", name, ok, detail or f"{len(table)} rows, largest error {worst_abs:.3g}")


def tsan_tests(s):
    """tests/tsan/threads.c and rt/runtime.c (with cpu.c and fork.c) built with ThreadSanitizer: 8 threads predicting at once on one model."""
    name = "threads"
    if not s.wanted("tsan", name) or s.sanitized:
        return  # ASan and TSan do not mix; the test builds its own runtime, so one run (the normal build's) is enough
    exe, artifact = s.path("tsan-threads"), s.path("tsan-higgs.so")
    build = subprocess.run(["clang-16", "-fsanitize=thread", "-g", "-O1", "-std=c11", "-D_GNU_SOURCE", f"-I{ROOT}",
                            os.path.join(ROOT, "tests", "tsan", "threads.c"), os.path.join(ROOT, "rt", "runtime.c"),
                            os.path.join(ROOT, "rt", "cpu.c"), os.path.join(ROOT, "rt", "fork.c"), "-o", exe, "-ldl", "-lpthread", "-lm"], capture_output=True, text=True)
    if build.returncode != 0:
        return s.record("tsan", name, False, f"building with -fsanitize=thread (bash .ci/setup installs clang-16 and "
                        f"libclang-rt-16-dev): {build.stderr.strip()}")
    p = s.run("compile", os.path.join(REAL, "higgs.json"), "-o", artifact)
    if p.returncode != 0:
        return s.record("tsan", name, False, p.stderr.strip())
    options = f"suppressions={os.path.join(ROOT, 'tests', 'tsan', 'suppressions.txt')} halt_on_error=1 exitcode=66"
    run = subprocess.run([exe, artifact, "10"], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "TSAN_OPTIONS": options})
    s.record("tsan", name, run.returncode == 0, run.stdout.strip() if run.returncode == 0 else
             f"exit {run.returncode}: {(run.stdout + run.stderr).strip()[-3000:]}")


# Models whose every allocation the oom group fails in turn: one per reader.
OOM_MODELS = ["tests/golden/lightgbm.txt", "tests/golden/binary.json", "tests/golden/onnx_binary.onnx",
              "tests/models/xgboost/ubj_dart.ubj", os.path.join(REAL, "higgs.json")]
# Artifacts the oom group loads and predicts with under allocation failures: one whose double rows go through float
# chunks, one with a workspace, one that reads doubles as they are.
OOM_RUNTIME = [("tests/golden/binary.json", None), ("tests/golden/binary.json", "tests/schedules/parallel_trees.sched"),
               ("tests/golden/lightgbm.txt", None)]


def oom_tests(s, pool):
    """Allocation failures injected (tests/oom/failmalloc.c, linked into build/tests/oom/) at every allocation grove's
    code makes while reading and lowering each of OOM_MODELS, and at some while compiling: each run succeeds or exits 1
    with a message, never with a signal, and a failed compile leaves no file behind. The runtime (tests/oom/runtime.c)
    fails each of its allocations in turn while loading and predicting: each call returns an error or the right answer.
    In an AddressSanitizer build the leak check runs at every exit, so a path that leaks fails the test; there only the
    first allocation from each call stack fails."""
    grove = os.path.join(ROOT, s.args.builddir, "tests", "oom", "grove")
    thin = s.sanitized

    def run(k, *argv):
        return subprocess.run([grove, *argv], capture_output=True, text=True, timeout=600,
                              env={**os.environ, "GROVE_FAIL_ALLOC": str(k)})

    def one(model):
        name = os.path.basename(model)
        count = run(0, "dump", "--level", "lir", model)
        found = re.search(r"allocations: (\d+)", count.stderr)
        if count.returncode != 0 or not found:
            return s.record("oom", name, False, f"counting allocations: exit {count.returncode}: {count.stderr.strip()}")
        n = int(found.group(1))
        firsts = re.search(r"new stacks:([ \d]*)", count.stderr)
        bad = []
        # A sanitizer build (five times slower to start and to run) fails only the allocations made from a call stack
        # no earlier one was made from: 78 of higgs.json's 639, whose others repeat a path per tree.
        failed = [int(k) for k in firsts.group(1).split()] if thin and firsts else range(1, n + 1)
        for k in failed:
            p = run(k, "dump", "--level", "lir", model)
            if p.returncode not in (0, 1) or (p.returncode == 1 and not p.stderr.startswith("grove: ")):
                bad.append(f"allocation {k}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
        # Compiling: a failure anywhere leaves the directory as it was (empty).
        directory = s.path(f"oom-{name}")
        os.makedirs(directory, exist_ok=True)
        for k in range(1, n + 1, max(1, n // 8)):  # -O0: LLVM's allocations are not grove's, and -O3 only takes longer
            p = run(k, "compile", model, "-o", os.path.join(directory, "model.so"), "-O", "0")
            left = os.listdir(directory)
            if p.returncode == 0:
                os.unlink(os.path.join(directory, "model.so"))
            elif p.returncode != 1 or left:
                bad.append(f"compile, allocation {k}: exit {p.returncode}, left {left}: {p.stderr.strip()[-300:]}")
        s.record("oom", name, not bad, "; ".join(bad[:3]) if bad else f"{len(failed)} of {n} allocations failed in turn")

    def runtime(model, schedule):
        name = f"runtime-{os.path.basename(model)}" + (f"-{os.path.basename(schedule)}" if schedule else "")
        artifact = s.path(f"oom-{name}.so")
        c = s.run("compile", model, "-o", artifact, *(["--schedule", schedule] if schedule else []))
        if c.returncode != 0:
            return s.record("oom", name, False, c.stderr.strip())
        p = subprocess.run([os.path.join(ROOT, s.args.builddir, "tests", "oom", "runtime"), artifact],
                           capture_output=True, text=True, timeout=600)
        s.record("oom", name, p.returncode == 0, p.stdout.strip() if p.returncode == 0 else
                 f"exit {p.returncode}: {(p.stdout + p.stderr).strip()[-2000:]}")

    jobs = [pool.submit(one, m) for m in OOM_MODELS if s.wanted("oom", os.path.basename(m))]
    for model, schedule in OOM_RUNTIME:
        if s.wanted("oom", f"runtime-{os.path.basename(model)}"):
            jobs.append(pool.submit(runtime, model, schedule and os.path.join(ROOT, schedule)))
    return jobs


def io_failure_tests(s):
    """Output that cannot be written (a full disk, a file-size limit) gives an error and leaves no partial file."""
    import resource
    import signal
    higgs = os.path.join(REAL, "higgs.json")
    rows = s.path("io-rows.csv")
    write_table(rows, [[0.25 * (i % 7)] * 28 for i in range(20000)])

    def limited(*argv):  # writes past 64 KiB fail with EFBIG (SIGXFSZ ignored, as a service would)
        def limit():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
        return subprocess.run([s.grove, *argv], capture_output=True, text=True, preexec_fn=limit, timeout=600)

    directory = s.path("io")
    os.makedirs(directory, exist_ok=True)
    artifact = s.path("io-higgs.so")
    if s.run("compile", higgs, "-o", artifact).returncode != 0:
        return s.record("io", "compile", False, "cannot compile higgs")
    cases = [
        ("predict_disk_full", lambda: s.run("predict", higgs, "--input", rows, "--output", "/dev/full"),
         "/dev/full: No space left on device"),
        ("predict_file_too_large", lambda: limited("predict", artifact, "--input", rows, "--output",
                                                   os.path.join(directory, "out.csv")), "out.csv: File too large"),
        ("compile_file_too_large", lambda: limited("compile", higgs, "-o", os.path.join(directory, "model.so")),
         "cannot write"),
    ]
    for name, command, text in cases:
        if not s.wanted("io", name):
            continue
        p = command()
        left = os.listdir(directory)
        s.record("io", name, p.returncode == 1 and text in p.stderr and not left,
                 f"exit {p.returncode}, files left {left}: {p.stderr.strip()}")


SCHEDULES = os.path.join(ROOT, "tests", "schedules")
# A sanitizer build, which compiles two to three times slower (CI runs it before the normal build), runs each schedule
# of the matrices on every ASAN_THIN-th model (GPU schedules: every 2 * ASAN_THIN-th), a different share for each
# schedule, so that every schedule and every model still meet the sanitizers.
ASAN_THIN = 8  # 4 until CI passed 20 minutes on a slow day (25 min; 21 with three more schedules), 6 until 21 min again


# Three cases in four of the schedule matrices (CPU and GPU) compile at -O0: what they check is the lowering of the
# schedule, which LLVM's level does not change, and -O0 takes a fifth of -O3's time (the fourth case, the models and
# the real models keep -O3, under which IR that is poison or undefined somewhere would show: each schedule still meets
# a quarter of the models at -O3). Half were at -O3 until CI neared its 20 minutes again (18 on a slow day). A
# sanitizer build compiles them all at -O0, as it does the models: it checks grove's own code, which runs the same at
# every level.
MATRIX_O = ((), ("-O", "0"), ("-O", "0"), ("-O", "0"))


def matrix_level(sanitized, k):
    """The -O options of the k-th case of a schedule matrix (in a sanitizer build where sanitized)."""
    return MATRIX_O[1] if sanitized else MATRIX_O[k % len(MATRIX_O)]


def schedule_test_options(path):
    """What a schedule file asks of its tests: `# options: ARGS` lines add compile options (--representation reorg),
    `# refused: TEXT` lines name messages with which a model the schedule cannot serve (a forest too deep for a
    block's shared memory) may be refused, and a `# batch: N` line has the rows predicted again in calls of at most N
    rows (as NAME.few)."""
    options, refusals, batch = [], [], None
    with open(path) as f:
        for line in f:
            if line.startswith("# options:"):
                options += line[len("# options:"):].split()
            elif line.startswith("# refused:"):
                refusals.append(line[len("# refused:"):].strip())
            elif line.startswith("# batch:"):
                batch = int(line[len("# batch:"):])
    return tuple(options), tuple(refusals), batch


def schedule_model(path, default):
    """The model a schedule's single-model tests compile: the real model `default`, or the one a `# model: NAME` line
    names (a real model's file name, or a path from the repository's root)."""
    with open(path) as f:
        model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("# model:")), default)
    return os.path.join(ROOT, model) if "/" in model else os.path.join(REAL, model)


def matrix_models(s, group, rows):
    """The models schedule matrices run on: the real ones (their first `rows` rows) and the fixtures marked for it, as
    (name, model, rows csv, expected rows, probability, number of trees, f64)."""
    models = []
    for model, table_name, probability in REAL_MODELS:
        table = read_table(os.path.join(REAL, table_name))[:rows]
        inputs = s.path(f"{group}-{model[:-5]}.rows.csv")
        write_table(inputs, [r[:-1] for r in table])
        models.append((model[:-5], os.path.join(REAL, model), inputs, [[r[-1]] for r in table], probability, None, False))
    for m in fixtures():
        if m["schedules"]:
            models.append((m["name"], m["model"], m["rows"], read_table(m["pred"]), m["probability"], m["num_trees"],
                           m["f64"]))
    return models


def schedule_tests(s, pool):
    """Every schedule in tests/schedules on every model: predictions, round trip, golden MIR (a sanitizer build: on
    every ASAN_THIN-th model)."""
    names = sorted(f[:-6] for f in os.listdir(SCHEDULES) if f.endswith(".sched"))
    thin = s.sanitized
    models = matrix_models(s, "schedules", 300)
    jobs = []
    for i, sched in enumerate(names):
        path = os.path.join(SCHEDULES, sched + ".sched")
        extra, refusals, batch = schedule_test_options(path)
        options = ("--schedule", path) + extra
        for j, (name, model, rows, expected, probability, num_trees, f64) in enumerate(models):
            if s.wanted("schedules", f"{sched}/{name}") and not (thin and (i + j) % ASAN_THIN):
                for few in (False, True) if batch else (False,):
                    jobs.append(pool.submit(check_predictions, s, "schedules", f"{sched}/{name}{'.few' if few else ''}"
                                            .replace("/", "."), model, rows, expected, probability, False,
                                            options + matrix_level(thin, i + j), num_trees, f64, refusals,
                                            batch if few else None))
        if s.wanted("schedules", f"{sched}/roundtrip"):
            jobs.append(pool.submit(schedule_round_trip, s, sched, options))
        if s.wanted("schedules", f"{sched}/golden"):
            jobs.append(pool.submit(schedule_golden, s, sched, options))
    for target in ("host", "gpusim"):
        for k, model in enumerate(RANDOM_SCHEDULE_MODELS):
            name = f"random/{target}/{os.path.basename(model)}"
            if s.wanted("schedules", name) and not thin:
                jobs.append(pool.submit(random_schedules, s, name, os.path.join(ROOT, "tests", "models", model), target,
                                        1000 * k + (target == "gpusim")))
    return jobs


# tools/schedule_check.py's random schedules, RANDOM_SCHEDULES on each of these models for the host and the simulator
RANDOM_SCHEDULE_MODELS = ["missing_directions.x3.json", "multi_softprob3.x3.json", "lightgbm/leafwise_categorical.txt"]
RANDOM_SCHEDULES = 30
RANDOM_SCHEDULE_ROWS = 600


def random_schedules(s, name, model, target, seed):
    """Random schedules (fixed seeds): each is refused with a message of the schedule's, or predicts what the default
    schedule predicts. On the model's rows repeated to RANDOM_SCHEDULE_ROWS or more: bounds of blocks and tiles of
    hundreds of rows (a parallel loop's blocks are 256 rows at most) show only in batches larger than theirs."""
    with open(os.path.splitext(model)[0] + ".rows.csv") as f:  # (rows without a header)
        table = f.read().splitlines()
    rows = s.path(name.replace("/", "-") + ".rows.csv")
    with open(rows, "w") as f:
        f.write("\n".join(table * -(-RANDOM_SCHEDULE_ROWS // max(1, len(table)))) + "\n")
    accepted, refused, failures = schedule_check.check_model(s.grove, model, RANDOM_SCHEDULES, random.Random(seed), target,
                                                             rows)
    s.record("schedules", name, not failures and accepted > 0,
             "; ".join(failures) or f"none of {RANDOM_SCHEDULES} schedules was accepted ({refused} refused)")


def schedule_round_trip(s, sched, options):
    """The schedule `dump --level hir` prints, read back, prints the same HIR."""
    binary = os.path.join(ROOT, "tests", "golden", "binary.json")
    first = s.run("dump", "--level", "hir", binary, *options)
    if first.returncode != 0:
        return s.record("schedules", f"{sched}/roundtrip", False, first.stderr.strip())
    text = first.stdout.split("schedule {\n", 1)[1].split("}\n", 1)[0]
    again = s.run("dump", "--level", "hir", binary, "--schedule-text", text.replace("\n", ";"))
    s.record("schedules", f"{sched}/roundtrip", again.returncode == 0 and again.stdout == first.stdout,
             again.stderr.strip() or "the dump differs after reading the schedule back")


def schedule_golden(s, sched, options):
    """tests/golden/binary.json under the schedule, against tests/golden/schedules/NAME.{hir,mir,lir}: the HIR, the
    MIR before and after reduction legalization and after the last MIR pass, and the LIR."""
    binary = os.path.join(ROOT, "tests", "golden", "binary.json")
    for level in ("hir", "mir", "lir"):
        passes = ("-d", "lower-mir,legalize") if level == "mir" else ()
        p = s.run("dump", "--level", level, binary, *passes, *options)
        name, expected_path = f"{sched}/golden.{level}", os.path.join(ROOT, "tests", "golden", "schedules", f"{sched}.{level}")
        if p.returncode != 0:
            s.record("schedules", name, False, p.stderr.strip())
            continue
        text = p.stderr + "# after the MIR passes\n" + p.stdout if level == "mir" else p.stdout
        golden_compare(s, "schedules", name, expected_path, text)

GPU_SCHEDULES = os.path.join(SCHEDULES, "gpu")
PTXAS = "/usr/local/cuda/bin/ptxas"
# ptxas of CUDA 13 assembles sm_75 and later: sm_70's PTX is checked as sm_75 code.
PTX_ARCHS = [("sm_70", "sm_75"), ("sm_80", "sm_80"), ("sm_90", "sm_90")]
HSACO_ARCHS = ["gfx90a", "gfx1100"]
GPU_REPRESENTATIONS = ["array", "sparse", "reorg", "breadth_first", "layered"]
# GPU schedules every end-to-end model runs under (the others: the schedule matrix's models): the default, threads
# over trees with a shuffle reduction, and rows x trees blocks in lockstep
GPU_EVERY_MODEL = ["default", "shared_data", "rows_and_trees_2d"]


def gpu_tests(s, pool):
    """GPU code from the same pipeline: (a) every model of the schedule matrix under the default GPU schedule and each
    tests/schedules/gpu/*.sched (every other end-to-end fixture under GPU_EVERY_MODEL's), compiled for the SIMT
    simulator and predicted against the library (again in calls of N rows, NAME.few, where the schedule has a
    `# batch: N` line); (b) each real
    model's default-schedule PTX for sm_70, sm_80 and sm_90 through ptxas -v, with no spills; (c) its HSACO for gfx90a
    and gfx1100, whose metadata lists every kernel; (d) tests/schedules/gpu/bad/NAME.sched refused with NAME.err's
    message; (e) the CUDA and ROCm artifacts where no driver is: a clear error; (f) golden MIR and LIR of
    tests/golden/binary.json under each GPU schedule. A sanitizer build runs (a) on every 2 * ASAN_THIN-th model
    of the schedule matrix per schedule, and (b) for the default schedules only."""
    thin = s.sanitized
    names = ["default"] + sorted(f[:-6] for f in os.listdir(GPU_SCHEDULES) if f.endswith(".sched"))
    jobs = []
    # each schedule with the representation grove picks, and the default schedule with each representation
    variants = [(sched, None) for sched in names] + [("default", rep) for rep in GPU_REPRESENTATIONS]
    gpu_models = matrix_models(s, "gpu", 100)  # the simulator runs every thread as a fiber: fewer rows
    # the fixtures outside the schedule matrix meet the schedules of GPU_EVERY_MODEL
    other_fixtures = [(m["name"], m["model"], m["rows"], read_table(m["pred"]), m["probability"], m["num_trees"], m["f64"])
                      for m in fixtures() if not m["schedules"]]
    for i, (sched, rep) in enumerate(variants):
        path = os.path.join(GPU_SCHEDULES, sched + ".sched")
        extra, refusals, batch = schedule_test_options(path) if sched != "default" else ((), (), None)
        options = ("--target", "gpusim") + (() if sched == "default" else ("--schedule", path)) + extra
        options += ("--representation", rep) if rep else ()
        label = sched + (f"-{rep}" if rep else "")
        models = gpu_models + (other_fixtures if label in GPU_EVERY_MODEL and not thin else [])
        for j, (name, model, rows, expected, probability, num_trees, f64) in enumerate(models):
            if s.wanted("gpu", f"gpusim/{label}/{name}") and not (thin and (i + j) % (2 * ASAN_THIN)):
                for few in (False, True) if batch else (False,):
                    jobs.append(pool.submit(check_predictions, s, "gpu", f"gpusim.{label}.{name}{'.few' if few else ''}",
                                            model, rows, expected, probability, False, options + matrix_level(thin, i + j),
                                            num_trees, f64, refusals, batch if few else None))
    for model, _, _ in REAL_MODELS:
        for arch, assemble_as in PTX_ARCHS:
            if s.wanted("gpu", f"ptxas/{arch}/{model[:-5]}"):
                jobs.append(pool.submit(gpu_ptxas, s, model, arch, assemble_as))
        for arch in HSACO_ARCHS:
            if s.wanted("gpu", f"hsaco/{arch}/{model[:-5]}"):
                jobs.append(pool.submit(gpu_hsaco, s, model, arch))
    for sched in names[1:] if not thin else []:  # every GPU schedule's PTX too, on higgs for sm_80
        if s.wanted("gpu", f"ptxas/sm_80/higgs/{sched}"):
            jobs.append(pool.submit(gpu_ptxas, s, "higgs.json", "sm_80", "sm_80", sched))
    for sched in names:
        if s.wanted("gpu", f"golden/{sched}"):
            jobs.append(pool.submit(gpu_golden, s, sched))
    bad = os.path.join(GPU_SCHEDULES, "bad")
    for sched in sorted(f[:-6] for f in os.listdir(bad) if f.endswith(".sched")):
        if s.wanted("gpu", f"bad/{sched}"):
            jobs.append(pool.submit(gpu_bad_schedule, s, os.path.join(bad, sched)))
    if s.wanted("gpu", "default_halves"):
        jobs.append(pool.submit(gpu_default_halves, s))
    for target in ("cuda", "rocm"):
        if s.wanted("gpu", f"unavailable/{target}"):
            jobs.append(pool.submit(gpu_unavailable, s, target))
    return jobs


def gpu_ptxas(s, model, arch, assemble_as, sched=None):
    """The default schedule's PTX assembles for arch with no spills (another schedule's, on the model its `# model:`
    line names if any: assembles; its spills are reported); ptxas' resource lines are kept in the log."""
    name = f"ptxas/{arch}/{model[:-5]}" + (f"/{sched}" if sched else "")
    ptx = s.path(f"gpu-{model[:-5]}-{arch}-{sched or 'default'}.ptx")
    path = os.path.join(GPU_SCHEDULES, f"{sched}.sched")
    options = ("--schedule", path) + schedule_test_options(path)[0] if sched else ()
    p = s.run("compile", schedule_model(path, model) if sched else os.path.join(REAL, model), "--target", f"cuda:{arch}",
              "--emit", "ptx", "-o", ptx, *options)
    if p.returncode != 0:
        return s.record("gpu", name, False, f"compile failed: {p.stderr.strip()}")
    if not os.access(PTXAS, os.X_OK):
        return s.record("gpu", name, False, f"{PTXAS} is missing (it comes with the CUDA toolkit)")
    q = subprocess.run([PTXAS, f"-arch={assemble_as}", "-v", ptx, "-o", os.devnull], capture_output=True, text=True)
    report = q.stdout + q.stderr
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", report)
    ok = q.returncode == 0 and spills and (sched or all(a == "0" and b == "0" for a, b in spills))
    if model == "higgs.json" and not sched:
        # a float model's kernels take no double arithmetic (its sigmoid in float), a padded tree's root is computed
        # (t x stride), not loaded from the offsets (a 4-byte load scaled to an address), the block's cached rows
        # of 28 features lie 29 floats apart (an odd stride: a warp's loads of one feature meet no bank twice), a
        # step's child (2n + right, an or) is computed in 32 bits (lower/gpu_ints.c), and shared memory is read through
        # 32-bit addresses (-nvptx-short-ptr)
        with open(ptx) as f:
            text = f.read()
        doubles = re.findall(r"^\s*\S+\.f64\b.*$", text, re.M)
        wide = re.findall(r"^\s*or\.b64\b.*$", text, re.M) + ([] if re.search(r"^\s*or\.b32\b", text, re.M) else ["no or.b32"])
        wide += re.findall(r"^\s*ld\.shared\.\w+\s+%\w+, \[%rd.*$", text, re.M)
        roots = re.findall(r"ld\.global\.nc\.u32\s+(%r\d+),.*\n\s*mul\.wide\.s32\s+%rd\d+, \1, 4;", text)
        shared = [int(n) for n in re.findall(r"\.shared \.align \d+ \.b8 \S+\[(\d+)\];", text)]
        rows = {k * 29 * 4 for k in (8, 16, 32, 64, 128)}
        ok = ok and not doubles and not roots and any(n in rows for n in shared) and not wide
        report += "".join(f"\ndouble arithmetic: {d.strip()}" for d in doubles[:3])
        report += "".join(f"\n64 bits where 32 do: {w.strip()}" for w in wide[:3])
        report += "".join(f"\na root's offset loaded into {r}" for r in roots[:3])
        report += "" if any(n in rows for n in shared) else f"\nno shared copy of rows 29 floats apart: {shared}"
    used = "; ".join(re.findall(r"Used \d+ registers[^\n]*", report))
    spilled = [f"{a}/{b}" for a, b in spills if a != "0" or b != "0"]
    s.record("gpu", name, ok, report.strip()[-1500:] if not ok else used + (f"; spills (bytes stored/loaded): {spilled}" if spilled else ""))


def gpu_hsaco(s, model, arch):
    """The default schedule's HSACO links, and its metadata names every kernel of the LIR."""
    name = f"hsaco/{arch}/{model[:-5]}"
    hsaco = s.path(f"gpu-{model[:-5]}-{arch}.hsaco")
    path = os.path.join(REAL, model)
    p = s.run("compile", path, "--target", f"rocm:{arch}", "--emit", "hsaco", "-o", hsaco)
    if p.returncode != 0:
        return s.record("gpu", name, False, f"compile failed: {p.stderr.strip()}")
    lir = s.run("dump", "--level", "lir", "--target", "rocm", path)
    kernels = re.findall(r"^kernel (\w+)\(", lir.stdout, re.M)
    q = subprocess.run(["llvm-readelf-16", "--notes", hsaco], capture_output=True, text=True)
    missing = [k for k in kernels if f"grove_model_{k}" not in q.stdout]
    ok = q.returncode == 0 and kernels and not missing and ".amdhsa_kernels" not in q.stderr
    s.record("gpu", name, ok, f"kernels {kernels}, missing from the metadata: {missing} {q.stderr.strip()[-500:]}")


def gpu_golden(s, sched):
    """tests/golden/binary.json's kernels under a GPU schedule: MIR and LIR against tests/golden/gpu/NAME.{mir,lir}."""
    binary = os.path.join(ROOT, "tests", "golden", "binary.json")
    path = os.path.join(GPU_SCHEDULES, sched + ".sched")
    options = ("--target", "gpusim") + (() if sched == "default" else ("--schedule", path) + schedule_test_options(path)[0])
    for level in ("mir", "lir"):
        p = s.run("dump", "--level", level, binary, *options)
        name, expected_path = f"golden/{sched}.{level}", os.path.join(ROOT, "tests", "golden", "gpu", f"{sched}.{level}")
        if p.returncode != 0:
            s.record("gpu", name, False, p.stderr.strip())
        else:
            golden_compare(s, "gpu", name, expected_path, p.stdout)

def gpu_bad_schedule(s, base):
    """A GPU schedule a GPU cannot run as written is refused (compiling higgs, or the real model a `# model:` line
    names) with the message in NAME.err."""
    name = os.path.basename(base)
    with open(base + ".err") as f:
        want = f.read().strip()
    p = s.run("compile", schedule_model(base + ".sched", "higgs.json"), "--target", "gpusim", "--schedule", base + ".sched",
              *schedule_test_options(base + ".sched")[0], "-o", s.path(f"gpu-bad-{name}.so"))
    s.record("gpu", f"bad/{name}", p.returncode != 0 and want in p.stderr,
             f"expected a failure with '{want}', got exit {p.returncode}: {p.stderr.strip()}")


def gpu_unavailable(s, target):
    """A CUDA or ROCm artifact compiles here, and predicting with it where no driver is says what is missing."""
    artifact = s.path(f"gpu-{target}.so")
    p = s.run("compile", os.path.join(ROOT, "tests", "golden", "binary.json"), "--target", target, "-o", artifact)
    if p.returncode != 0:
        return s.record("gpu", f"unavailable/{target}", False, f"compile failed: {p.stderr.strip()}")
    rows = s.path("gpu-unavailable.csv")
    write_table(rows, [[0.5, 0.5, 0.5]])
    q = s.run("predict", artifact, "--input", rows)
    library = "libcuda.so.1" if target == "cuda" else "libhsa-runtime64.so.1"
    s.record("gpu", f"unavailable/{target}", q.returncode != 0 and library in q.stderr,
             f"expected an error naming {library}, got exit {q.returncode}: {q.stderr.strip()}")


def gpu_default_halves(s):
    """The default GPU schedule of a forest of more trees than its large batches' tree threads splits by batch size
    (splitSize: small batches spread a row's trees over more threads); both halves predict as the CPU does on the
    simulator: 100 rows take the small batches' kernel, 40,000 the large ones'."""
    model = os.path.join(ROOT, "tests", "models", "deep.x3.json")
    dump = s.run("dump", "--level", "hir", model, "--target", "gpusim")
    artifact = s.path("gpu-halves.so")
    p = s.run("compile", model, "--target", "gpusim", "-o", artifact)
    problems = [] if "splitSize(batch, few, many, 32768)" in dump.stdout else [f"no split by batch size: {dump.stdout[:300]}"]
    if p.returncode != 0:
        problems.append(f"compile failed: {p.stderr.strip()}")
    for n in (100, 40000) if not problems else ():
        rows = s.path(f"gpu-halves-{n}.csv")
        rng = random.Random(n)
        write_table(rows, [[rng.uniform(-3, 3) for _ in range(4)] for _ in range(n)])
        want, got = s.run("predict", model, "--input", rows), s.run("predict", artifact, "--input", rows)
        a, b = [[float(x) for x in line.split(",")] for line in want.stdout.split()], [[float(x) for x in line.split(",")] for line in got.stdout.split()]
        if got.returncode != 0 or len(a) != n or len(b) != n or any(abs(x - y) > 1e-5 * max(1.0, abs(x)) for r, q in zip(a, b) for x, y in zip(r, q)):
            problems.append(f"{n} rows differ from the CPU's: {got.stderr.strip()[:300]}")
    s.record("gpu", "default_halves", not problems, "; ".join(problems))


def scale_tests(s, pool):
    """A 26,000-tree model: compile and predict (the compile time is reported, not asserted)."""
    name = "trees26000"
    if not s.wanted("scale", name):
        return []

    def one():
        base = s.path(name)
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "gen", "gen_large.py"), "26000", "5", "40", base,
                        "--rows", "24"], check=True)
        start = time.monotonic()
        p = s.run("compile", base + ".json", "-o", s.path(f"scale-{name}.so"))
        seconds = time.monotonic() - start
        if p.returncode != 0:
            return s.record("scale", name, False, p.stderr.strip())
        check_predictions(s, "scale", name, base + ".json", base + ".rows.csv", read_table(base + ".pred.csv"), True)
        print(f"scale/{name}: compiled in {seconds:.2f} s", flush=True)
    return [pool.submit(one)]

# AArch64: artifacts cross-compiled by grove, run by the cross-built runtime under qemu-aarch64.

QEMU_AARCH64 = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]
AARCH64_CC = os.environ.get("GROVE_CC_AARCH64", "aarch64-linux-gnu-gcc")
AARCH64_CPUS = ["generic", "neoverse-n1", "cortex-a72"]  # the models take turns, so that named CPUs are tried too
AARCH64_FIXTURES = ["f64_binary", "sk_rf_multiclass"]  # LightGBM compared in double (--f64 rows), an ONNX classifier


def aarch64_missing(s):
    """What the aarch64 group needs and does not find, as a message; None when all is there."""
    driver = os.path.join(ROOT, s.args.builddir, "aarch64", "predict")
    for what, there in ((f"{driver} (./configure.py builds it where {AARCH64_CC} is installed)", os.path.exists(driver)),
                        ("qemu-aarch64 (package qemu-user)", shutil.which("qemu-aarch64")),
                        (f"{AARCH64_CC} (package gcc-aarch64-linux-gnu)", shutil.which(AARCH64_CC)),
                        ("/usr/aarch64-linux-gnu (package libc6-dev-arm64-cross)", os.path.isdir("/usr/aarch64-linux-gnu"))):
        if not there:
            return f"{what} is missing: run bash .ci/setup, then ./configure.py && ninja"
    return None


def check_aarch64(s, name, model, rows_csv, expected, probability, options=(), f64=False):
    """Compile model for aarch64-linux-gnu (with options), predict rows_csv with the cross-built driver under
    qemu-aarch64 and compare with expected."""
    artifact = s.path(f"aarch64-{name}.so")
    p = s.run("compile", model, "--target", "aarch64-linux-gnu", "-o", artifact, *options)
    if p.returncode != 0:
        return s.record("aarch64", name, False, f"compile failed: {p.stderr.strip()}")
    driver = os.path.join(ROOT, s.args.builddir, "aarch64", "predict")
    run = subprocess.run([*QEMU_AARCH64, driver, artifact, rows_csv, *(["--f64"] if f64 else [])], capture_output=True,
                         text=True, timeout=600)
    if run.returncode != 0:
        return s.record("aarch64", name, False, f"qemu-aarch64 {driver}: exit {run.returncode}: {run.stderr.strip()}")
    got = [[float(x) for x in line.split(",")] for line in run.stdout.splitlines() if line]
    judge(s, "aarch64", name, got, expected, probability, f" ({' '.join(options)})" if options else "")


def aarch64_prediction_jobs(s, pool):
    """Every real model and the AARCH64_FIXTURES, compiled for AArch64 and run under qemu."""
    jobs = []
    for i, (name, model, rows, probability, expected) in enumerate(real_cases()):
        if s.wanted("aarch64", name):
            table = read_table(os.path.join(REAL, rows))
            inputs = s.path(f"aarch64-{name}.rows.csv")
            write_table(inputs, [r[:-1] for r in table])
            jobs.append(pool.submit(check_aarch64, s, name, os.path.join(REAL, model), inputs,
                                    [[expected(r[-1])] for r in table], probability,
                                    ("--cpu", AARCH64_CPUS[i % len(AARCH64_CPUS)])))
            if name == "higgs" and s.wanted("aarch64", "higgs_big_row_blocks"):  # tiles that shrink: the threads op
                jobs.append(pool.submit(check_aarch64, s, "higgs_big_row_blocks", os.path.join(REAL, model), inputs,
                                        [[expected(r[-1])] for r in table], probability,
                                        ("--schedule", os.path.join(SCHEDULES, "big_row_blocks.sched"))))
    for m in fixtures():
        if m["name"] in AARCH64_FIXTURES and s.wanted("aarch64", m["name"]):
            jobs.append(pool.submit(check_aarch64, s, m["name"], m["model"], m["rows"], read_table(m["pred"]),
                                    m["probability"], f64=m["f64"]))
        if m["name"] == "lgb_edges" and s.wanted("aarch64", "lgb_edges_code_lanes"):  # rows side by side in NEON vectors
            jobs.append(pool.submit(check_aarch64, s, "lgb_edges_code_lanes", m["model"], m["rows"], read_table(m["pred"]),
                                    m["probability"], ("--schedule", os.path.join(SCHEDULES, "code_row_lanes.sched")),
                                    m["f64"]))
    return jobs


def neon_fadds(s, name, options):
    """How many NEON float adds (fadd vN.4s) the aarch64 assembly of higgs has under options; None if it fails."""
    out = s.path(f"aarch64-{name}.s")
    p = s.run("compile", os.path.join(REAL, "higgs.json"), "--target", "aarch64-linux-gnu", "--emit", "asm", *options,
              "-o", out)
    if p.returncode != 0:
        s.record("aarch64", name, False, p.stderr.strip())
        return None
    with open(out) as f:
        return len(re.findall(r"^\s+fadd\s+v\d+\.4s", f.read(), re.M))


def aarch64_vector_tests(s, pool):
    """vectorReduce folds its copies 8 floats at a time: its predictions under qemu, and its NEON code. At -O0 (no
    LLVM vectoriser) NEON adds come from the schedule alone, so the default schedule there must have none."""
    schedule = ("--schedule", os.path.join(SCHEDULES, "vector_reduce.sched"))
    jobs = []
    if s.wanted("aarch64", "vector_reduce"):
        table = read_table(os.path.join(REAL, "higgs.test.csv"))
        inputs = s.path("aarch64-vector_reduce.rows.csv")
        write_table(inputs, [r[:-1] for r in table])
        jobs.append(pool.submit(check_aarch64, s, "vector_reduce", os.path.join(REAL, "higgs.json"), inputs,
                                [[r[-1]] for r in table], True, (*schedule, "--cpu", "neoverse-n1")))
    if s.wanted("aarch64", "vector_reduce.neon"):
        scheduled, default = neon_fadds(s, "vector_reduce.neon", (*schedule, "-O0")), neon_fadds(s, "default.O0", ("-O0",))
        optimised = neon_fadds(s, "vector_reduce.O3", schedule)
        if None not in (scheduled, default, optimised):
            s.record("aarch64", "vector_reduce.neon", scheduled > 0 and default == 0 and optimised > 0,
                     f"fadd vN.4s: {scheduled} with vectorReduce at -O0, {default} without, {optimised} at -O3")
    return jobs


def aarch64_cli_cases(s):
    """Bad --target and --cpu, a missing cross compiler, predict and grove_load refusing AArch64: (name, argv,
    environment, text expected in stderr with exit status 1)."""
    higgs = os.path.join(REAL, "higgs.json")
    return [
        ("bad_target", ["compile", higgs, "--target", "sparc-sun-solaris"], None,
         "--target sparc-sun-solaris: unknown target triple (grove emits code for x86_64-linux-gnu or"),
        ("bad_cpu", ["compile", higgs, "--target", "aarch64-linux-gnu", "--cpu", "skylake", "-o", s.path("x.so")], None,
         "--cpu skylake: unknown aarch64 CPU (try generic, neoverse-n1"),
        ("native_cpu", ["compile", higgs, "--target", "aarch64-linux-gnu", "--cpu", "native", "-o", s.path("x.so")], None,
         "--cpu native: tunes for the machine grove runs on, which is not aarch64-linux-gnu"),
        ("missing_cross_compiler", ["compile", higgs, "--target", "aarch64-linux-gnu", "-o", s.path("x.so")],
         {"GROVE_CC_AARCH64": "aarch64-nowhere-gcc"}, "cannot run aarch64-nowhere-gcc to link the aarch64 shared "
         "library: No such file or directory (install gcc-aarch64-linux-gnu"),
        ("predict_target", ["predict", higgs, "--target", "aarch64-linux-gnu", "--input", "-"], None,
         "predict: --target aarch64-linux-gnu: predict runs its artifact on this host or its GPU"),
        ("load_foreign_artifact", ["predict", s.path("aarch64-higgs.so"), "--input", "-"], None,
         "an artifact for AArch64; this library runs on x86-64"),
    ]


def aarch64_cli_tests(s):
    """The command line's errors for other targets (aarch64_cli_cases)."""
    for name, argv, env, text in aarch64_cli_cases(s):
        if not s.wanted("aarch64", name):
            continue
        if name == "load_foreign_artifact":  # an artifact of its own, whatever else -k selects
            s.run("compile", os.path.join(REAL, "higgs.json"), "--target", "aarch64-unknown-linux-gnu", "-o", argv[1])
        p = s.run(*argv, stdin="", env=env)
        ok = p.returncode == 1 and text in p.stderr and p.stderr.startswith("grove: ")
        s.record("aarch64", name, ok, "" if ok else f"exit {p.returncode}, stderr {p.stderr.strip()!r}, expected {text!r}")


def aarch64_tests(s, pool):
    """The aarch64 group: predictions, the AOT object, NEON and the command line's errors (jobs for the pool)."""
    names = [c[0] for c in real_cases()] + AARCH64_FIXTURES + ["vector_reduce", "vector_reduce.neon", "aot.higgs"]
    if not any(s.wanted("aarch64", n) for n in names + [c[0] for c in aarch64_cli_cases(s)]):
        return []
    missing = aarch64_missing(s)
    if missing:
        s.record("aarch64", "setup", False, missing)
        return []
    jobs = aarch64_prediction_jobs(s, pool) + aarch64_vector_tests(s, pool)
    if s.wanted("aarch64", "aot.higgs"):
        jobs.append(pool.submit(aot_check, s, "aarch64", "aot.higgs", "higgs.json", "higgs.test.csv", True, AARCH64_CC,
                                ("--target", "aarch64-linux-gnu", "--cpu", "neoverse-n1"), QEMU_AARCH64))
    aarch64_cli_tests(s)
    return jobs


VENV_PYTHON = os.path.join(ROOT, "build", "venv", "bin", "python")


def python_tests(s):
    """tests/python under build/venv's pytest, one result per pytest test (read from its JUnit XML)."""
    import xml.etree.ElementTree as ElementTree
    ks = s.args.k or []
    if ks and not any(fnmatch.fnmatch("python/", f"*{k}*") or k.startswith("python/") for k in ks):
        return
    if s.sanitized:
        print(f"python: skipped: {s.args.builddir} is a sanitizer build, which Python cannot load", flush=True)
        return
    if not os.access(VENV_PYTHON, os.X_OK) or not os.path.exists(os.path.join(ROOT, "build", "venv", ".complete")):
        return s.record("python", "venv", False, "build/venv is missing or incomplete: run `bash .ci/setup --python`")
    report = s.path("python-junit.xml")
    argv = [VENV_PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", f"--junitxml={report}",
            os.path.join(ROOT, "tests", "python")]
    names = [k.removeprefix("python/") for k in ks if k.startswith("python/")]
    argv += ["-k", " or ".join(names)] if names else []  # -k python/NAME: pytest's -k NAME
    env = {**os.environ, "GROVE_BUILDDIR": os.path.join(ROOT, s.args.builddir),
           "PYTHONPATH": os.path.join(ROOT, "rt", "python"), "TMPDIR": s.scratch}
    start = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=1200, env=env, cwd=s.scratch)
    except subprocess.TimeoutExpired:
        return s.record("python", "pytest", False, "pytest ran past 20 minutes")
    if not os.path.exists(report):
        return s.record("python", "pytest", False, f"pytest exited {p.returncode} without a report:\n"
                        f"{(p.stdout + p.stderr)[-3000:]}")
    count = 0
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname', '').removeprefix('tests.python.')}.{case.get('name')}"
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        skipped = case.find("skipped")
        if skipped is not None:
            print(f"SKIP python/{name}: {skipped.get('message', '')}", flush=True)
            continue
        count += 1
        detail = "" if problem is None else f"{problem.get('message', '')}\n{(problem.text or '')[-2000:]}"
        s.record("python", name, problem is None, detail)
    if count == 0 and p.returncode not in (0, 5):
        s.record("python", "pytest", False, f"pytest exited {p.returncode}:\n{(p.stdout + p.stderr)[-3000:]}")
    if s.args.verbose:
        print(f"python: {count} tests in {time.monotonic() - start:.1f} s", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builddir", default="build")
    ap.add_argument("--update", action="store_true", help="rewrite the golden dumps")
    ap.add_argument("-k", action="append", help="run only tests whose group/name matches (repeatable)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print passing tests and the error table")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = ap.parse_args()
    os.chdir(ROOT)
    scratch = tempfile.mkdtemp(prefix="grove-tests-")
    os.environ["GROVE_CACHE_DIR"] = os.path.join(scratch, "cache")  # each run compiles afresh, into its own cache
    s = Suite(args, scratch)
    if not os.access(s.grove, os.X_OK):
        sys.exit(f"tests/run.py: {s.grove} is not built (run ./configure.py && ninja)")
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            jobs = (scale_tests(s, pool) + real_tests(s, pool) + model_tests(s, pool) + bad_tests(s, pool) +
                    schedule_tests(s, pool) + gpu_tests(s, pool) + aarch64_tests(s, pool) + oom_tests(s, pool))
            unit_tests(s)
            golden_tests(s)
            cli_tests(s)
            aot_tests(s)
            install_tests(s)
            tsan_tests(s)
            io_failure_tests(s)
            file_group.file_tests(s)
            row_group.row_tests(s, write_many_classes)
            cpu_group.cpu_tests(s, aarch64_missing)
            cost_group.cost_tests(s)
            for job in jobs:
                job.result()
        python_tests(s)  # after the rest: its compiles and the Dask cluster take every core
    finally:
        if args.keep:
            print(f"scratch kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    if args.verbose and s.errors:
        print("\nlargest errors (absolute, relative):")
        for name, a, r in sorted(s.errors):
            print(f"  {name:48} {a:10.3g} {r:10.3g}")
    passed = sum(1 for r in s.results if r[2])
    failed = len(s.results) - passed
    if s.errors:
        name, a, r = max(s.errors, key=lambda e: e[2])
        print(f"largest relative error: {r:.3g} ({name})")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
