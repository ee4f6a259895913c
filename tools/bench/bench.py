#!/usr/bin/env python3
"""Benchmark grove against the predictors a user would otherwise use, in one process.

    tools/bench/setup.sh                                  # build/bench-venv, pinned peers (once)
    ./configure.py && ninja                               # build/grove, build/libgrove.so
    build/bench-venv/bin/python tools/bench/bench.py      # everything: ~11 min on 2 cores (see below)
    build/bench-venv/bin/python tools/bench/bench.py --quick
    build/bench-venv/bin/python tools/bench/bench.py --threads 1 --batch 4096   # one core
    build/bench-venv/bin/python tools/bench/bench.py --models higgs syn-epsilon --batch 1 512 \\
        --chart chart.png --schedules DIR       # DIR/MODEL.sched: also "grove-tuned"
    build/bench-venv/bin/python tools/bench/bench.py --corpus --batch 1 64 512 4096 16384
    build/bench-venv/bin/python tools/bench/bench.py corpus:lgb-reg-500 corpus:cat-default --quick

Engines (a peer whose modules are missing is skipped with a note):
  grove        `grove compile MODEL` (the heuristic schedule), timed from C (timer.c)
  grove-tuned  `grove compile MODEL --schedule DIR/MODEL.sched`, where --schedules has one
  xgboost      Booster.inplace_predict (XGBoost models)
  tl2cgen      TL2cgen's C code compiled by gcc -O3 -march=native, its predict() called from
               C (timer.c) as TL2cgen's runtime calls it (XGBoost and LightGBM models)
  onnxruntime  the model converted by onnxmltools (an ONNX model as it is)
  lightgbm     Booster.predict (LightGBM models)
  lleaves      lleaves' compiled model (LightGBM models)
  catboost     CatBoost's own predictor on its .cbm model (the corpus's CatBoost model)
  daal4py      Intel oneDAL: daal4py.mb.convert_model(booster), predict_proba (classifiers) or
               predict (XGBoost, LightGBM without categorical splits, CatBoost models)
A peer that cannot read a corpus model (TL2cgen and daal4py the scikit-learn ones: corpus.py
keeps their ONNX files, not the estimators treelite.sklearn would read; TL2cgen CatBoost's)
is skipped with a note, as is one that refuses it (daal4py LightGBM's categorical splits).

Models (--models; default all): the real ones in ../shared/models/real (higgs, airline,
year_prediction_msd: XGBoost; abalone.onnx: ONNX only), synthetic XGBoost models with
the shapes of SilvanForge's eight benchmarks (syn-abalone, syn-airline, syn-airline-ohe,
syn-covtype, syn-epsilon, syn-higgs, syn-letters, syn-year; depth 8) and LightGBM models
of three of them (lgb-higgs, lgb-year, lgb-covtype), made by models.py once and cached in
build/bench/models; or paths of model files (rows then gaussian). The corpus (corpus.py:
models as people train them with the libraries' defaults, trained once and cached in
build/bench/corpus): corpus:NAME for one of them, --corpus for all; their rows come from
corpus.make_rows with the seed of their test rows (categorical columns and missing values
included), their reference is the library itself (onnxruntime standing for scikit-learn);
a batch whose predictions would exceed MAX_VALUES values (skl-10k-targets: 16384 rows of
10,000) is skipped with a note.

Method. Environment variables set before anything loads a thread pool:
OMP_NUM_THREADS=--threads (default: every core), OMP_WAIT_POLICY=--wait-policy (passive:
idle OpenMP threads sleep, so one engine's threads do not spin on the cores the next one
needs; onnxruntime's spinning is turned off to match). Every engine predicts the same
float32 rows: a pool per model (the reference rows of a real model, then rows drawn from
them, or from the same uniform distribution for the random ones; for the synthetic
models, fresh rows from the generator), cut into max(2, min(1024, pool / batch))
distinct slices that successive calls cycle through. Per model and batch: every engine
predicts the first slices and is checked against the reference (XGBoost, LightGBM for
LightGBM models, onnxruntime for ONNX models); each engine's calls per repetition are
sized to about --budget / --repeat seconds (one call, where one call alone takes that: a slow
peer costs about --repeat of its calls, not 64 warm-up calls); then --repeat repetitions, the engines
taking turns in a rotating order. Tables show the median (min) over repetitions in
microseconds per row, ns per (row x tree) = us/row x 1000 / trees, and peer/grove
ratios (above 1: grove is faster), with geometric means per peer over batches >= 512 and
<= 64. grove and TL2cgen are called from C, one ctypes call per repetition; the Python
peers' times include their Python call, whose floor (one row through a one-split model)
is reported. At batch 4096 a table gives ns per (row x tree) per core (x --threads).
Compile times: grove's every run; TL2cgen's (gcc), lleaves' and the ONNX conversions are
cached in build/bench with the time they took when made (and the load average then).

Run time on the project's 2-core machine: ~11 minutes for everything (--quick: ~2; --threads 1
--batch 4096: ~3) once the models and the peers' builds are cached. The first run also
trains the synthetic models (~3 min) and builds the peers: ~27 CPU-minutes of gcc for
TL2cgen (2600-tree syn-letters alone: 12), ~9 of lleaves, ~1 of onnxmltools.

Output: the tables (Markdown) on stdout and in OUT/results.md, the raw numbers in
OUT/results.json (--out, default build/bench), a PNG chart with --chart. Exit status 1
if any grove prediction differs from the reference by more than --tolerance (relative
to max(1, |reference|)) or grove fails to compile a model (the model is then skipped);
other engines' differences are reported.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REAL_DIR = os.path.join(ROOT, "..", "shared", "models", "real")
# name: (file, reference rows, how further rows are made)
REAL = {
    "higgs": ("higgs.json", "higgs.test.csv", "resample"),
    "airline": ("airline.json", "airline.test.csv", "resample"),
    "year_prediction_msd": ("year_prediction_msd.json", "year_prediction_msd.random.csv", "uniform"),
    "abalone.onnx": ("abalone.onnx", "abalone.onnx.csv", "uniform"),
}
SYNTHETIC = ["abalone", "airline", "airline-ohe", "covtype", "epsilon", "higgs", "letters", "year"]
LIGHTGBM = ["lgb-higgs", "lgb-year", "lgb-covtype"]
ALL_MODELS = list(REAL) + ["syn-" + s for s in SYNTHETIC] + LIGHTGBM
QUICK_MODELS = ["higgs", "airline", "year_prediction_msd", "abalone.onnx", "syn-airline", "lgb-higgs"]
BATCHES = [1, 64, 512, 4096, 16384]
PEERS = ["xgboost", "tl2cgen", "onnxruntime", "lightgbm", "lleaves", "catboost", "daal4py"]
MODULES = {"xgboost": ["xgboost"], "tl2cgen": ["treelite", "tl2cgen"], "onnxruntime": ["onnxruntime", "onnxmltools", "onnx"],
           "lightgbm": ["lightgbm"], "lleaves": ["lleaves", "lightgbm"], "catboost": ["catboost"],
           "daal4py": ["daal4py"]}
CORPUS_PREFIX = "corpus:"
MAX_VALUES = 1 << 26  # predictions (rows x outputs) of one call at most: larger batches are skipped
CHECK_VALUES = 1 << 22  # predictions per engine that check() compares at most (at least one batch)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", help="model names (see above) or model files; default: all")
    ap.add_argument("--models", dest="model_list", nargs="+", default=None, help="as the positional names")
    ap.add_argument("--corpus", action="store_true", help="every corpus model (corpus.py), after the named ones")
    ap.add_argument("--batch", type=int, nargs="+", default=None, help=f"batch sizes (default {BATCHES})")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)), help="threads of every engine")
    ap.add_argument("--wait-policy", choices=["passive", "active"], default="passive", help="OMP_WAIT_POLICY")
    ap.add_argument("--repeat", type=int, default=7, help="repetitions per model and batch (at least 3)")
    ap.add_argument("--budget", type=float, default=0.35, help="seconds per engine per model and batch")
    ap.add_argument("--quick", action="store_true",
                    help=f"{', '.join(QUICK_MODELS)} at batches 1 64 4096, 5 repetitions of 0.15 s")
    ap.add_argument("--skip", nargs="+", default=[], choices=PEERS, help="peers to leave out")
    ap.add_argument("--schedules", help="directory of MODEL.sched files: adds grove-tuned for those models")
    ap.add_argument("--tolerance", type=float, default=1e-5, help="grove's largest relative difference allowed")
    ap.add_argument("--builddir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--cache", default=None, help="where models, peers' builds and results go (default BUILDDIR/bench)")
    ap.add_argument("--out", default=None, help="directory of results.json and results.md (default: the cache)")
    ap.add_argument("--chart", help="write a PNG chart of the peer/grove ratios here")
    ap.add_argument("--prepare", action="store_true", help="make the models and the peers' builds, time nothing")
    ap.add_argument("--merge", nargs="+", metavar="DIR",
                    help="time nothing: the tables (and --chart) of earlier runs' DIR/results.json together, each "
                         "cell the median of the runs' medians")
    args = ap.parse_args()
    names = (args.model_list or []) + args.models
    if args.corpus:
        import corpus
        names += [CORPUS_PREFIX + n for n in corpus.CORPUS if CORPUS_PREFIX + n not in names]
    if args.quick:
        args.batch = args.batch or [1, 64, 4096]
        args.repeat, args.budget = 5, 0.15
        names = names or QUICK_MODELS
    args.names = names or ALL_MODELS
    args.batch = sorted(set(args.batch or BATCHES))
    args.repeat = max(3, args.repeat)
    args.cache = args.cache or os.path.join(args.builddir, "bench")
    args.out = args.out or args.cache
    return args


def set_thread_environment(args):
    """Before numpy or any library with a thread pool is imported."""
    for var in ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"]:
        os.environ[var] = str(args.threads)
    os.environ["OMP_WAIT_POLICY"] = args.wait_policy.upper()


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class Model:
    """A model to benchmark: its file, format, trees, and how its rows are made."""

    def __init__(self, np, name, args):
        import corpus
        import models
        self.name, self.rows_note, self.entry = name, "", None
        if name.startswith(CORPUS_PREFIX) and name[len(CORPUS_PREFIX):] in corpus.CORPUS:
            self.name = name[len(CORPUS_PREFIX):]
            self.entry = corpus.CORPUS[self.name]
            self.path = corpus.model_path(self.name, args.cache)
        elif name in REAL:
            file, self.csv, self.more = REAL[name]
            self.path = os.path.normpath(os.path.join(REAL_DIR, file))
        elif name.startswith("syn-") and name[4:] in models.SHAPES:
            self.path, self.shape = models.model_path(name[4:], args.cache), name[4:]
        elif name in models.LIGHTGBM:
            self.path, self.shape = models.model_path(name, args.cache), models.LIGHTGBM[name]
        elif os.path.exists(name):
            self.path, self.name = name, os.path.basename(name)
        else:
            sys.exit(f"bench.py: {name}: neither a model of the benchmark ({', '.join(ALL_MODELS)}), "
                     f"{CORPUS_PREFIX}NAME of a corpus model ({', '.join(corpus.CORPUS)}) nor a file")
        ext = os.path.splitext(self.path)[1]
        self.kind = {".json": "xgboost", ".ubj": "xgboost", ".txt": "lightgbm", ".onnx": "onnx"}.get(ext)
        if not self.kind:
            sys.exit(f"bench.py: {self.path}: a .json or .ubj (XGBoost), .txt (LightGBM) or .onnx model, please")
        # the library that made it (xgboost, lightgbm, catboost, sklearn; onnx: unknown) and the file it reads itself
        self.library = corpus.library(self.entry) if self.entry else self.kind
        self.native = corpus.native_path(self.name, args.cache) if self.entry else self.path
        self.booster = None
        if self.kind == "xgboost":
            import xgboost as xgb
            self.booster = xgb.Booster(model_file=self.path)
            self.features = self.booster.num_features()
            self.trees = len(json.loads(self.booster.save_raw("json"))["learner"]["gradient_booster"]["model"]["trees"])
        elif self.kind == "lightgbm":
            import lightgbm as lgb
            self.booster = lgb.Booster(model_file=self.path)
            self.features, self.trees = self.booster.num_feature(), self.booster.num_trees()
        else:
            import onnx
            m = onnx.load(self.path)
            ids, roots = set(), 0
            for node in m.graph.node:
                attrs = {a.name: a for a in node.attribute}
                if "nodes_treeids" in attrs:  # TreeEnsembleRegressor / Classifier
                    ids.update(attrs["nodes_treeids"].ints)
                elif "tree_roots" in attrs:  # TreeEnsemble (ai.onnx.ml 5)
                    roots += len(attrs["tree_roots"].ints)
            dims = m.graph.input[0].type.tensor_type.shape.dim
            self.features, self.trees = dims[-1].dim_value, len(ids) + roots

    def pool(self, np, rows):
        """rows float32 rows to cycle through (see the module's description)."""
        import corpus
        import models
        if self.entry:
            return corpus.make_rows(np, self.entry, rows, 1)[0], "corpus.make_rows, the seed of its test rows"
        if hasattr(self, "shape"):
            return models.make_rows(np, self.shape, rows, seed=1), "generator"
        rng = np.random.default_rng(1)
        if not hasattr(self, "csv"):
            return rng.standard_normal((rows, self.features), dtype=np.float32), "gaussian"
        ref = np.loadtxt(os.path.join(REAL_DIR, self.csv), delimiter=",", dtype=np.float64, ndmin=2)[:, :-1]
        ref = ref.astype(np.float32)[:rows]
        extra = rows - len(ref)
        if extra <= 0:
            return np.ascontiguousarray(ref), self.csv
        if self.more == "uniform":
            more, how = rng.uniform(-10, 10, (extra, self.features)).astype(np.float32), "uniform in [-10, 10]"
        else:
            more, how = ref[rng.integers(0, len(ref), extra)], "drawn from them"
        return np.ascontiguousarray(np.concatenate([ref, more])), f"{self.csv} + {extra} rows {how}"


def make_engines(np, E, model, args, timer, available, notes):
    """The engines for a model (grove first), their failures noted."""
    engines = [E.grove_engine("grove", timer, args, model.path, args.cache)]
    sched = args.schedules and os.path.join(args.schedules, model.name + ".sched")
    if sched and os.path.exists(sched):
        engines.append(E.grove_engine("grove-tuned", timer, args, model.path, args.cache, schedule=sched))
    makers = []
    if model.kind == "xgboost":
        makers.append(("xgboost", lambda: E.xgboost_engine(np, model.booster, args.threads)))
    if model.kind in ("xgboost", "lightgbm"):
        makers.append(("tl2cgen", lambda: E.tl2cgen_engine(timer, model.path, args.cache, args.threads, model.trees)))
    makers.append(("onnxruntime", lambda: E.onnx_engine(np, model.path, args.cache, args.threads, args.wait_policy,
                                                        model.kind, model.booster, model.features)))
    if model.kind == "lightgbm":
        makers.append(("lightgbm", lambda: E.lightgbm_engine(np, model.booster, args.threads)))
        makers.append(("lleaves", lambda: E.lleaves_engine(np, model.path, args.cache, args.threads)))
    if model.library == "catboost":
        makers.append(("catboost", lambda: E.catboost_engine(np, model.native, args.threads)))
    if model.library in ("xgboost", "lightgbm", "catboost"):
        makers.append(("daal4py", lambda: E.daal4py_engine(np, native_booster(model), args.threads,
                                                            binary_positive=model.kind != "onnx")))
    cannot = {"sklearn": {"tl2cgen": "treelite.sklearn reads the fitted estimator; corpus.py keeps only its ONNX file",
                          "daal4py": "daal4py.mb.convert_model reads no scikit-learn model (only through "
                                     "treelite.sklearn, which needs the estimator)"},
              "catboost": {"tl2cgen": "treelite reads no CatBoost model"}}.get(model.library, {})
    for name, why in cannot.items():
        if name in available:
            notes.append(f"{name} skipped on {model.name}: {why}")
    for name, make in makers:
        if name not in available:
            continue
        log(f"  {model.name}: {name} ...")
        try:
            engines.append(make())
        except Exception as e:
            notes.append(f"{name} failed on {model.name}: {type(e).__name__}: {str(e)[:300]}")
            log("  " + notes[-1])
    return engines


def native_booster(model):
    """The model as its library loaded it: the XGBoost or LightGBM Booster, or CatBoost's from its .cbm file."""
    if model.booster is not None:
        return model.booster
    import catboost
    return catboost.CatBoost().load_model(model.native)


def reference_engine(model, engines):
    """The library that made the model (onnxruntime for an ONNX file of scikit-learn's or unknown)."""
    want = {"xgboost": "xgboost", "lightgbm": "lightgbm", "catboost": "catboost"}.get(model.library, "onnxruntime")
    return next((e for e in engines if e.name == want), None)


def check(np, engines, ref, pool, batch, slices):
    """Each engine's largest difference from ref over the first slices, relative to max(1, |ref|)."""
    k = min(slices, 16)
    outs = {e.name: np.concatenate([e.predict(pool[i * batch:(i + 1) * batch]) for i in range(k)]) for e in engines}
    r = outs[ref.name]
    diffs = {}
    for name, o in outs.items():
        if o.shape != r.shape:
            diffs[name] = float("inf")
        else:
            d = np.abs(o - r) / np.maximum(1.0, np.abs(r))
            diffs[name] = float(np.nan_to_num(d, nan=np.inf).max())
    return diffs


def measure(engines, pool, batch, slices, args):
    """name -> {median, min (us/row), reps, calls}: engines taking turns in a rotating order."""
    per_rep = args.budget / args.repeat
    calls = {}
    for e in engines:
        # Warm up: one call first; an engine whose one call takes a repetition's budget is timed a call a repetition
        # (XGBoost on 100 classes at 16384 rows takes seconds), the others over every slice first.
        t = e.time(pool, batch, slices, 1)
        if t >= per_rep:
            calls[e.name] = 1
            continue
        e.time(pool, batch, slices, min(slices, 64))
        n = 1
        while True:
            t = e.time(pool, batch, slices, n)
            if t >= per_rep / 4 or n >= 1 << 24:
                break
            n *= 4 if t < per_rep / 40 else 2
        calls[e.name] = max(1, round(n * per_rep / max(t, 1e-9)))
    times = {e.name: [] for e in engines}
    for r in range(args.repeat):
        order = engines[r % len(engines):] + engines[:r % len(engines)]
        for e in order:
            times[e.name].append(e.time(pool, batch, slices, calls[e.name]) / calls[e.name] / batch * 1e6)
    return {n: {"median": statistics.median(t), "min": min(t), "reps": len(t), "calls_per_rep": calls[n]}
            for n, t in times.items()}


def bench_model(np, E, model, args, timer, available, notes, results, failures):
    log(f"{model.name}: {model.kind}, {model.features} features, {model.trees} trees")
    try:
        engines = make_engines(np, E, model, args, timer, available, notes)
    except Exception as e:  # grove's compile or load: the model is skipped
        failures.append(f"grove failed on {model.name}: {type(e).__name__}: {str(e)[:300]}; skipped")
        log("  " + failures[-1])
        return
    ref = reference_engine(model, engines)
    if ref is None:
        notes.append(f"{model.name}: no reference engine ({model.kind}) available; skipped")
        return
    builds = {e.name: e.build for e in engines}
    pool_rows = max(4096, 2 * max(args.batch))
    pool, source = model.pool(np, pool_rows)
    outputs = engines[0].outputs
    for batch in args.batch:
        if batch * outputs > MAX_VALUES:
            notes.append(f"{model.name}: batch {batch} skipped: {batch} x {outputs} predictions per call "
                         f"(more than {MAX_VALUES})")
            continue
        slices = max(2, min(1024, pool_rows // batch))
        if len(pool) < slices * batch:
            pool = np.ascontiguousarray(np.tile(pool, (-(-slices * batch // len(pool)), 1)))
        diffs = check(np, engines, ref, pool, batch, min(slices, max(1, CHECK_VALUES // (batch * outputs))))
        timing = measure(engines, pool, batch, slices, args)
        results.append({"model": model.name, "kind": model.kind, "features": model.features, "trees": model.trees,
                        "batch": batch, "distinct_batches": slices, "rows": source, "reference": ref.name,
                        "max_rel_diff": diffs, "us_per_row": timing, "build": builds,
                        "loadavg": round(os.getloadavg()[0], 2)})
        log(f"  batch {batch}: " + ", ".join(f"{n} {t['median']:.4g}" for n, t in timing.items())
            + f" us/row; grove diff {diffs['grove']:.1e}")
        if diffs["grove"] > args.tolerance or diffs.get("grove-tuned", 0) > args.tolerance:
            failures.append(f"{model.name} batch {batch}: grove differs from {ref.name} by {diffs['grove']:.2e}")
    for e in engines:
        e.close()


def machine_info(np, vers, args):
    with open("/proc/cpuinfo") as f:
        lines = [line.split(":", 1) for line in f if ":" in line]
    field = lambda k: next((v.strip() for n, v in lines if n.strip() == k), "?")
    git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
    gcc = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    grove = subprocess.run([os.path.join(args.builddir, "grove"), "--version"], capture_output=True, text=True).stdout.strip()
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpu": field("model name"),
            "isa": " ".join(x for x in ("avx2", "avx512f") if x in field("flags").split()), "cores": os.cpu_count(),
            "threads": args.threads, "wait_policy": args.wait_policy, "loadavg_start": [round(x, 2) for x in os.getloadavg()],
            "platform": platform.platform(), "python": platform.python_version(), "numpy": np.__version__, "gcc": gcc,
            "grove": grove, "grove_git": git, **{k: v for k, v in vers.items() if v}, "repeat": args.repeat,
            "budget_s": args.budget, "batches": args.batch}


def main():
    args = parse_args()
    set_thread_environment(args)
    sys.path.insert(0, HERE)
    import warnings
    warnings.filterwarnings("ignore", message=".*JSON model saved before XGBoost")
    warnings.filterwarnings("ignore", category=UserWarning, module="onnxmltools")
    import numpy as np
    import engines as E
    import report
    if args.merge:
        docs = []
        for d in args.merge:
            with open(os.path.join(d, "results.json")) as f:
                docs.append(json.load(f))
        write_report(report.merge(docs), args, report)
        return
    vers = E.versions(sorted({m for p in PEERS if p not in args.skip for m in MODULES[p]}))
    available = [p for p in PEERS if p not in args.skip and all(vers.get(m) for m in MODULES[p])]
    notes = [f"{p} skipped: {', '.join(m for m in MODULES[p] if not vers.get(m))} not importable"
             for p in PEERS if p not in args.skip and p not in available]
    if not os.path.exists(os.path.join(args.builddir, "libgrove.so")):
        sys.exit(f"bench.py: no {args.builddir}/libgrove.so: run ./configure.py && ninja first")
    timer = E.Timer(args.builddir, args.cache)
    if args.prepare:
        for name in args.names:
            model = Model(np, name, args)
            log(f"{model.name}: {model.trees} trees")
            for e in make_engines(np, E, model, args, timer, available, notes):
                log(f"  {e.name}: {e.build}")
                e.close()
        print("\n".join("note: " + n for n in notes))
        return
    info = machine_info(np, vers, args)
    log("python call floor: measuring ...")
    floor = E.python_call_floor(np, args.threads, args.wait_policy, available)
    results, failures = [], []
    for name in args.names:
        bench_model(np, E, Model(np, name, args), args, timer, available, notes, results, failures)
    info["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    doc = {"machine": info, "python_call_floor_us": floor, "notes": notes, "failures": failures, "results": results}
    write_report(doc, args, report)


def write_report(doc, args, report):
    """The tables on stdout and in OUT/results.md, the numbers in OUT/results.json, the chart; exit 1 on a failure."""
    text = report.markdown(doc, args.tolerance)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(text)
    report.write_json(doc, os.path.join(args.out, "results.json"))
    if args.chart:
        report.chart(doc, args.chart)
        log(f"chart: {args.chart}")
    sys.exit(1 if doc["failures"] else 0)


if __name__ == "__main__":
    main()
