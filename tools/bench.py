#!/usr/bin/env python3
"""Benchmark grove against XGBoost (and treelite/tl2cgen and onnxruntime when importable).

    ./configure.py && ninja                       # build/grove, build/libgrove.so
    python3 tools/bench.py                        # the three real models, batches 1 64 4096 full
    python3 tools/bench.py M.json --batch 1 full --threads 1 --json out.json

Each model is compiled with `grove compile` into a temp dir (wall time reported) and loaded
through ctypes on libgrove; OMP_NUM_THREADS is set to --threads before anything loads
OpenMP. In one process, on the same float32 C-contiguous rows, grove_predict and the
peers' predict calls are timed in alternation: after warm-up, each repetition runs one
engine's calls for about --budget/--repeat seconds, and the table shows the median (and
min) over repetitions in microseconds per row. Batches smaller than the row set cycle
over different slices of it (up to 4096 rows); larger ones tile it. Rows come from the
reference CSV beside the model (last column = XGBoost's prediction, dropped), else are
random. Every engine's output is checked against XGBoost's; a grove mismatch exits 1.
Times include each library's Python call overhead (about 1.5 us for grove's ctypes
call), which dominates at batch 1. Peers (`pip install treelite tl2cgen onnxruntime
onnxmltools`; skipped with a note when not importable): tl2cgen compiles treelite's model
with gcc (~30 s a model) and gets a prebuilt tl2cgen.DMatrix; onnxruntime runs
onnxmltools' conversion of the booster.
"""
import argparse, ctypes, itertools, json, os, platform, statistics, subprocess, sys, tempfile, time, warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL = os.path.join(ROOT, "..", "shared", "models", "real")
CSVS = {"higgs": "higgs.test.csv", "airline": "airline.test.csv", "year_prediction_msd": "year_prediction_msd.random.csv"}


class GroveError(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 512)]


def load_libgrove(builddir):
    lib = ctypes.CDLL(os.path.join(builddir, "libgrove.so"))
    P, S = ctypes.c_void_p, ctypes.c_size_t
    lib.grove_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(P), ctypes.POINTER(GroveError)]
    lib.grove_num_features.argtypes, lib.grove_num_features.restype = [P], S
    lib.grove_num_outputs.argtypes, lib.grove_num_outputs.restype = [P, ctypes.c_uint], S
    lib.grove_predict.argtypes = [P, P, S, S, P, S, ctypes.c_uint, ctypes.POINTER(GroveError)]
    lib.grove_free.argtypes, lib.grove_free.restype = [P], None
    return lib


def machine_info(np, xgb, peers):
    with open("/proc/cpuinfo") as f:
        lines = [l.split(":", 1) for l in f if ":" in l]
    field = lambda k: next((v.strip() for n, v in lines if n.strip() == k), "?")
    git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
    return {"cpu": field("model name"), "isa": " ".join(x for x in ("avx2", "avx512f") if x in field("flags").split()),
            "cores": os.cpu_count(), "usable_cores": len(os.sched_getaffinity(0)), "loadavg": os.getloadavg(),
            "platform": platform.platform(), "python": platform.python_version(), "numpy": np.__version__,
            "xgboost": xgb.__version__, **peers, "grove_git": git}


def load_rows(np, model_path, nfeat, nrows=4096):
    """The model's reference rows (without the prediction column), else seeded random ones."""
    stem = os.path.splitext(os.path.basename(model_path))[0]
    here = os.path.dirname(os.path.abspath(model_path))
    for name in [CSVS.get(stem, ""), stem + ".test.csv", stem + ".random.csv", stem + ".csv"]:
        path = os.path.join(here, name)
        if name and os.path.exists(path):
            X = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)[:, :-1]
            return np.ascontiguousarray(X, dtype=np.float32), os.path.basename(path)
    return np.random.default_rng(0).standard_normal((nrows, nfeat), dtype=np.float32), "random"


def chunks_for(np, X, batch):
    """Contiguous float32 batches to cycle over: slices of X, or X tiled up to batch rows."""
    n = len(X)
    if batch >= n:
        return [np.ascontiguousarray(np.tile(X, (-(-batch // n), 1))[:batch])]
    k = max(1, min(n // batch, 4096 // batch))
    return [np.ascontiguousarray(X[i * batch:(i + 1) * batch]) for i in range(k)]


def grove_engine(lib, so, nfeat_check):
    model, err = ctypes.c_void_p(), GroveError()
    if lib.grove_load(so.encode(), ctypes.byref(model), ctypes.byref(err)) != 0:
        sys.exit(f"grove_load {so}: {err.message.decode()}")
    nf, nout = lib.grove_num_features(model), lib.grove_num_outputs(model, 0)
    if nf != nfeat_check:
        sys.exit(f"{so}: grove says {nf} features, xgboost {nfeat_check}")

    def prepare(np, X):
        out = np.empty(len(X) * nout, dtype=np.float32)
        args = (model, X.ctypes.data, len(X), X.shape[1], out.ctypes.data, out.size, 0, ctypes.byref(err))
        f = lib.grove_predict

        def call(_keep=(X, out)):  # keeps the buffers alive; result() checks the status
            return f(*args)

        def result():
            if f(*args) != 0:
                sys.exit(f"grove_predict: {err.message.decode()}")
            return out.reshape(len(X), -1) if nout > 1 else out
        return call, result
    return prepare, lambda: lib.grove_free(model)


def xgb_engine(booster):
    return lambda np, X: (lambda: booster.inplace_predict(X),) * 2


def treelite_engine(model_path, tmp, threads):
    import treelite, tl2cgen
    tm = treelite.frontend.load_xgboost_model(model_path)
    lib = os.path.join(tmp, "tl2cgen.so")
    t0 = time.perf_counter()
    tl2cgen.export_lib(tm, toolchain="gcc", libpath=lib, params={"parallel_comp": threads}, nthread=threads, verbose=False)
    compile_s = time.perf_counter() - t0
    pred = tl2cgen.Predictor(lib, nthread=threads, verbose=False)

    def prepare(np, X):
        dm = tl2cgen.DMatrix(X)
        return (lambda: pred.predict(dm),) * 2
    return prepare, compile_s


def onnx_engine(booster, nfeat, threads):
    import onnxmltools, onnxruntime as ort
    from onnxmltools.convert.common.data_types import FloatTensorType
    onx = onnxmltools.convert_xgboost(booster, initial_types=[("input", FloatTensorType([None, nfeat]))], target_opset=15)
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    sess = ort.InferenceSession(onx.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    out = ["probabilities"] if "probabilities" in names else names[-1:]

    def prepare(np, X):
        call = lambda: sess.run(out, {"input": X})

        def result():  # binary classifiers give [P(0), P(1)]: XGBoost predicts P(1)
            r = call()[0]
            return r[:, 1] if out == ["probabilities"] and r.shape[1] == 2 else r
        return call, result
    return prepare


def per_call(calls, n):
    """Seconds per call over n calls, cycling through the batches."""
    t0 = time.perf_counter()
    for f in itertools.islice(itertools.cycle(calls), n):
        f()
    return (time.perf_counter() - t0) / n


def measure(engines, budget, repeat):
    """engines: name -> list of zero-argument calls. Returns name -> seconds per call."""
    inner = {}
    for name, calls in engines.items():  # warm up, then size each repetition
        per_call(calls, len(calls) + 2)
        n, t = 1, per_call(calls, 1)
        while n * t < 0.02 and n < 1 << 20:
            n *= 4
            t = per_call(calls, n)
        inner[name] = max(1, int(budget / repeat / t))
    times = {name: [] for name in engines}
    names = list(engines)
    for r in range(max(5, repeat)):
        for name in names[r % len(names):] + names[:r % len(names)]:  # rotate the order
            time.sleep(0.01)  # let the last engine's idle worker threads stop spinning
            times[name].append(per_call(engines[name], inner[name]))
    return {name: {"median": statistics.median(t), "min": min(t), "reps": len(t), "calls_per_rep": inner[name]}
            for name, t in times.items()}


def bench_model(np, xgb, lib, args, path, tmp, peers, notes):
    """Compile, load and time one model over every batch size; returns the table rows."""
    stem = os.path.splitext(os.path.basename(path))[0]
    so = os.path.join(tmp, stem + ".so")
    t0 = time.perf_counter()
    subprocess.run([os.path.join(args.builddir, "grove"), "compile", path, "-o", so], check=True)
    extra = {"grove_compile_s": time.perf_counter() - t0}
    booster = xgb.Booster(model_file=path)
    booster.set_param({"nthread": args.threads})
    nfeat = booster.num_features()
    X, source = load_rows(np, path, nfeat)
    grove_prep, grove_free = grove_engine(lib, so, nfeat)
    preps = {"grove": grove_prep, "xgboost": xgb_engine(booster)}
    os.makedirs(os.path.join(tmp, stem))
    for name, make in [("treelite", lambda: treelite_engine(path, os.path.join(tmp, stem), args.threads)),
                       ("onnxruntime", lambda: (onnx_engine(booster, nfeat, args.threads), None))]:
        try:
            if name in peers:
                preps[name], cs = make()
                if cs is not None:
                    extra[name + "_compile_s"] = cs
                    notes.append(f"{name} (tl2cgen, gcc) compile of {stem}: {cs:.1f} s")
        except Exception as e:
            notes.append(f"{name} failed on {stem}: {type(e).__name__}: {e}")
    rows = []
    for batch in sorted({len(X) if b == "full" else int(b) for b in args.batch}):
        chunks = chunks_for(np, X, batch)
        engines, outs = {}, {}
        for name, prep in preps.items():
            pairs = [prep(np, c) for c in chunks]
            engines[name] = [call for call, _ in pairs]
            outs[name] = np.concatenate([np.asarray(res(), np.float64).reshape(len(c), -1) for (_, res), c in zip(pairs, chunks)])
        ref = outs["xgboost"]
        diffs = {n: float((np.abs(o - ref) / np.maximum(1.0, np.abs(ref))).max()) for n, o in outs.items()}
        timing = measure(engines, args.budget, args.repeat)
        us = {n: {k: (v * 1e6 / batch if k in ("median", "min") else v) for k, v in t.items()} for n, t in timing.items()}
        rows.append({"model": stem, "rows_from": source, "batch": batch, "distinct_batches": len(chunks),
                     "max_rel_diff_vs_xgboost": diffs, **extra, "us_per_row": us})
        print(f"  {stem} batch {batch}: " + ", ".join(f"{n} {t['median']:.3f}" for n, t in us.items())
              + f" us/row; grove max diff {diffs['grove']:.2e}", file=sys.stderr)
    grove_free()
    return rows


def print_table(results):
    cols = ["grove", "xgboost"] + [p for p in ("treelite", "onnxruntime") if any(p in r["us_per_row"] for r in results)]
    head = ["model", "batch", "grove µs/row", "xgboost µs/row", "xgb/grove"] + [f"{c} µs/row" for c in cols[2:]] + \
           ["grove max diff", "grove compile s"]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in results:
        u = r["us_per_row"]
        cell = lambda c: f"{u[c]['median']:.4g} ({u[c]['min']:.4g})" if c in u else "—"
        print("| " + " | ".join([r["model"], str(r["batch"]), cell("grove"), cell("xgboost"),
                                 f"{u['xgboost']['median'] / u['grove']['median']:.2f}×"] + [cell(c) for c in cols[2:]]
                                + [f"{r['max_rel_diff_vs_xgboost']['grove']:.1e}", f"{r['grove_compile_s']:.2f}"]) + " |")
    print("\nµs/row: median (min) over repetitions; max diff: |grove - xgboost| / max(1, |xgboost|).")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", default=[os.path.join(REAL, m + ".json") for m in CSVS])
    ap.add_argument("--batch", nargs="+", default=["1", "64", "4096", "full"], help='row counts, or "full"')
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--repeat", type=int, default=10, help="repetitions per measurement (at least 5)")
    ap.add_argument("--budget", type=float, default=0.5, help="seconds per engine per measurement")
    ap.add_argument("--builddir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--skip", nargs="*", default=[], choices=["treelite", "onnxruntime"])
    ap.add_argument("--json", help="write the raw numbers here")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # before any OpenMP runtime loads
    warnings.filterwarnings("ignore", message=".*JSON model saved before XGBoost 1.6")
    import numpy as np, xgboost as xgb

    peers, notes = {}, []  # name -> versions of the modules it needs
    for name, mods in [("treelite", ["treelite", "tl2cgen"]), ("onnxruntime", ["onnxruntime", "onnxmltools"])]:
        try:
            if name in args.skip:
                raise RuntimeError("--skip")
            peers[name] = " / ".join(f"{m} {__import__(m).__version__}" for m in mods)
        except Exception as e:  # ImportError, or a broken install
            notes.append(f"{name} skipped: {type(e).__name__}: {e}")
    info = machine_info(np, xgb, peers)
    info.update(threads=args.threads, budget_s=args.budget, repeat=max(5, args.repeat))
    print("\n".join(f"- {k}: {v}" for k, v in info.items()) + "\n")
    lib = load_libgrove(args.builddir)
    results = []
    with tempfile.TemporaryDirectory(prefix="grove-bench-") as tmp:
        for path in args.models:
            results += bench_model(np, xgb, lib, args, path, tmp, peers, notes)
    print_table(results)
    for r in results:
        for n, d in r["max_rel_diff_vs_xgboost"].items():
            if n not in ("grove", "xgboost") and d > 1e-5:
                notes.append(f"{n} differs from xgboost on {r['model']} batch {r['batch']}: max rel diff {d:.1e}")
    print("".join(f"- note: {n}\n" for n in notes), end="")
    failed = any(r["max_rel_diff_vs_xgboost"]["grove"] > 1e-5 for r in results)
    if failed:
        print("- FAIL: grove's predictions differ from xgboost's (see max diff)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "notes": notes, "results": results}, f, indent=1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
