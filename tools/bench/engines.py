"""The engines the benchmark times: grove and its peers, each behind one small interface.

An engine has a name, `kind` ("C" when its calls are timed in C, "Python" when only a
Python call reaches it), `build` (what making it cost: compile seconds and whether they
were measured in this run or read from the cache), and two methods:

    predict(X)                  -> float64 array (rows, outputs), outputs as XGBoost's (or
                                   LightGBM's, for its models) predict gives them; for an
                                   ONNX or CatBoost model, every class's probability
    time(pool, batch, slices, calls) -> seconds that `calls` predictions take, call i on
                                   rows [i % slices * batch, ... + batch) of pool

Peers' compiled forms (TL2cgen libraries, lleaves objects, ONNX conversions) are cached
in build/bench/ under a digest of the model file and the library's version, with the
time they took to make; grove compiles every run.
"""
import ctypes
import hashlib
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def digest(path, *extra):
    """A short digest of a file's bytes and of the strings in extra."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    for e in extra:
        h.update(str(e).encode())
    return h.hexdigest()[:16]


def cpu_seconds():
    """CPU seconds this process and its waited-for children have used."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def timed(make, *args):
    """Run make(*args); {"compile_s": wall seconds, "cpu_s": CPU seconds, "loadavg": the highest seen}."""
    load = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), cpu_seconds()
    make(*args)
    return {"compile_s": round(time.perf_counter() - t0, 3), "cpu_s": round(cpu_seconds() - c0, 3),
            "loadavg": round(max(load, os.getloadavg()[0]), 2)}


def cached_build(cache_dir, stem, key, suffix, make):
    """The path of stem-key.suffix in cache_dir, made by make(path) if absent.

    Returns (path, {"compile_s": wall seconds, "cpu_s": CPU seconds, "loadavg": ..., "measured_at": ...,
    "cached": whether it was made by an earlier run}): CPU seconds, unlike wall seconds, hardly
    depend on what else the machine runs.
    """
    os.makedirs(cache_dir, exist_ok=True)
    path = os.path.join(cache_dir, f"{stem}-{key}{suffix}")
    meta_path = path + ".meta.json"
    if os.path.exists(path) and os.path.exists(meta_path):
        with open(meta_path) as f:
            return path, dict(json.load(f), cached=True)
    tmp = os.path.join(cache_dir, f"{stem}-{key}.{os.getpid()}.tmp{suffix}")  # two runs may build at once
    meta = dict(timed(make, tmp), measured_at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    os.replace(tmp, path)
    with open(meta_path, "w") as f:
        json.dump(meta, f)
    return path, dict(meta, cached=False)


class Timer:
    """tools/bench/timer.c, built against build/libgrove.so and loaded through ctypes."""

    def __init__(self, builddir, outdir):
        self.so = os.path.join(outdir, "timer.so")
        src = os.path.join(HERE, "timer.c")
        cc = os.environ.get("CC", "cc")
        common = ["-O2", "-fopenmp", "-I" + os.path.join(ROOT, "rt"), src, "-L" + builddir, "-lgrove", "-ldl", "-lm",
                  "-Wl,-rpath," + os.path.abspath(builddir)]
        os.makedirs(outdir, exist_ok=True)
        for out, flags in [(self.so, ["-fPIC", "-shared"]), (os.path.join(outdir, "timer"), ["-DBENCH_TIMER_MAIN"])]:
            subprocess.run([cc, *flags, *common, "-o", out], check=True)
        lib = self.lib = ctypes.CDLL(self.so)
        P, S, D = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_double
        msg = [ctypes.c_char_p, S]
        for name, args, res in [
                ("bench_grove_load", [ctypes.c_char_p, *msg], P), ("bench_grove_num_features", [P], S),
                ("bench_grove_num_outputs", [P], S), ("bench_grove_free", [P], None),
                ("bench_grove_predict", [P, P, S, P, *msg], ctypes.c_int), ("bench_grove_time", [P, P, S, S, S, P], D),
                ("bench_tl2cgen_load", [ctypes.c_char_p, *msg], P), ("bench_tl2cgen_num_features", [P], S),
                ("bench_tl2cgen_num_outputs", [P], S), ("bench_tl2cgen_free", [P], None),
                ("bench_tl2cgen_predict", [P, P, S, P], None), ("bench_tl2cgen_time", [P, P, S, S, S, P], D)]:
            f = getattr(lib, name)
            f.argtypes, f.restype = args, res


class CEngine:
    """grove or TL2cgen, loaded and timed by timer.c."""
    kind = "C"

    def __init__(self, name, timer, prefix, path, build):
        import numpy as np
        self.np, self.name, self.build, self.prefix = np, name, build, prefix
        self.f = lambda fn: getattr(timer.lib, f"bench_{prefix}_{fn}")
        msg = ctypes.create_string_buffer(512)
        self.handle = self.f("load")(path.encode(), msg, 512)
        if not self.handle:
            raise RuntimeError(f"{prefix}: {path}: {msg.value.decode()}")
        self.features = self.f("num_features")(self.handle)
        self.outputs = self.f("num_outputs")(self.handle)
        self.out = np.empty(0, np.float32)

    def _out(self, rows):
        if self.out.size < rows * self.outputs:
            self.out = self.np.empty(rows * self.outputs, self.np.float32)
        return self.out

    def predict(self, X):
        out = self.np.empty(len(X) * self.outputs, self.np.float32)
        if self.prefix == "grove":
            msg = ctypes.create_string_buffer(512)
            if self.f("predict")(self.handle, X.ctypes.data, len(X), out.ctypes.data, msg, 512) != 0:
                raise RuntimeError(f"grove_predict: {msg.value.decode()}")
        else:
            self.f("predict")(self.handle, X.ctypes.data, len(X), out.ctypes.data)
        return out.reshape(len(X), self.outputs).astype(self.np.float64)

    def time(self, pool, batch, slices, calls):
        t = self.f("time")(self.handle, pool.ctypes.data, batch, slices, calls, self._out(batch).ctypes.data)
        if t < 0:
            raise RuntimeError(f"{self.name}: a prediction failed")
        return t

    def close(self):
        self.f("free")(self.handle)


class PythonEngine:
    """A peer reached through Python: make_call(X) gives a zero-argument call predicting X."""
    kind = "Python"

    def __init__(self, name, make_call, convert, build):
        self.name, self.make_call, self.convert, self.build = name, make_call, convert, build
        self.calls_for = (None, None)

    def predict(self, X):
        return self.convert(self.make_call(X)())

    def time(self, pool, batch, slices, calls):
        key = (pool.ctypes.data, batch, slices)
        if self.calls_for[0] != key:
            self.calls_for = (key, [self.make_call(pool[i * batch:(i + 1) * batch]) for i in range(slices)])
        fs = self.calls_for[1]
        t0 = time.perf_counter()
        for f in itertools.islice(itertools.cycle(fs), calls):
            f()
        return time.perf_counter() - t0

    def close(self):
        self.calls_for = (None, None)


def as_2d(np, r):
    r = np.asarray(r, dtype=np.float64)
    return r.reshape(len(r), -1)


def positive(r):
    """A binary classifier's (rows, 2) probabilities as XGBoost and LightGBM give them: P(1) alone."""
    return r[:, 1:] if r.shape[1] == 2 else r


def grove_engine(name, timer, args, model, cache, schedule=None):
    """Compile model with `grove compile` (and --schedule) and load it; cold, without the code cache, so that the
    compile time is what a first compile takes."""
    out_dir = os.path.join(cache, "grove")
    os.makedirs(out_dir, exist_ok=True)
    so = os.path.join(out_dir, os.path.basename(model) + (".tuned" if schedule else "") + ".so")
    cmd = [os.path.join(args.builddir, "grove"), "compile", model, "-o", so, "--no-cache"]
    cmd += ["--schedule", schedule] if schedule else []
    done = []
    build = dict(timed(lambda: done.append(subprocess.run(cmd, capture_output=True, text=True))), cached=False)
    if done[0].returncode != 0:
        raise RuntimeError(f"grove compile ({done[0].returncode}): {done[0].stderr.strip()[-300:]}")
    if schedule:
        build["schedule"] = schedule
    return CEngine(name, timer, "grove", so, build)


def xgboost_engine(np, booster, threads):
    booster.set_param({"nthread": threads})
    return PythonEngine("xgboost", lambda X: (lambda: booster.inplace_predict(X)), lambda r: as_2d(np, r),
                        {"compile_s": None})


def tl2cgen_load_model(path):
    import treelite
    if path.endswith(".txt"):
        return treelite.frontend.load_lightgbm_model(path)
    return treelite.frontend.load_xgboost_model(path)


def tl2cgen_engine(timer, model, cache, threads, trees):
    """TL2cgen's C for the model, compiled by gcc -O3 -march=native (cached), called from timer.c."""
    import tl2cgen
    import treelite

    def make(path):
        tm = tl2cgen_load_model(model)
        # Translation units of about 25 trees each, compiled `threads` at a time.
        tl2cgen.export_lib(tm, toolchain="gcc", libpath=path, params={"parallel_comp": max(2, trees // 25)},
                           nthread=max(1, threads), verbose=False, options=["-march=native"])
    gcc = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    key = digest(model, tl2cgen.__version__, treelite.__version__, gcc, "-O3 -march=native", os.uname().machine)
    so, build = cached_build(os.path.join(cache, "tl2cgen"), os.path.basename(model), key, ".so", make)
    return CEngine("tl2cgen", timer, "tl2cgen", so, build)


def without_zipmap(path):
    """The ONNX model's bytes with its ZipMap (a list of {class: probability} per row, as CatBoost's export ends)
    cut off: the probabilities as the tensor that skl2onnx's zipmap=False gives; None if it has none."""
    import onnx
    m = onnx.load(path)
    zipmap = next((n for n in m.graph.node if n.op_type == "ZipMap"), None)
    if zipmap is None:
        return None
    m.graph.node.remove(zipmap)
    out = next(o for o in m.graph.output if o.name == zipmap.output[0])
    m.graph.output.remove(out)
    m.graph.output.append(onnx.helper.make_tensor_value_info(zipmap.input[0], onnx.TensorProto.FLOAT, None))
    return m.SerializeToString()


def onnx_engine(np, model, cache, threads, wait_policy, kind, booster=None, features=None):
    """onnxruntime on the model (an .onnx file as it is, less a ZipMap; XGBoost and LightGBM converted by
    onnxmltools, cached)."""
    import onnxruntime as ort
    if kind == "onnx":
        path, build = without_zipmap(model) or model, {"compile_s": None}
    else:
        import onnx
        import onnxmltools
        from onnxmltools.convert.common.data_types import FloatTensorType

        def make(path):
            types = [("input", FloatTensorType([None, features]))]
            if kind == "lightgbm":
                onx = onnxmltools.convert_lightgbm(booster, initial_types=types, zipmap=False, target_opset=15)
            else:
                onx = onnxmltools.convert_xgboost(booster, initial_types=types, target_opset=15)
            onnx.save_model(onx, path)
        key = digest(model, onnxmltools.__version__, onnx.__version__)
        path, build = cached_build(os.path.join(cache, "onnx"), os.path.basename(model), key, ".onnx", make)
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3  # errors only: not a warning per call (skl2onnx declares 10,000 targets' output as 1)
    if wait_policy == "passive":
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    t0 = time.perf_counter()
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    build["session_s"] = round(time.perf_counter() - t0, 3)
    inp = sess.get_inputs()[0].name
    names = [o.name for o in sess.get_outputs()]
    out = [n for n in names if "prob" in n.lower()][:1] or names[-1:]
    classifier = out[0] != names[-1] or "prob" in out[0].lower()

    def convert(r):
        r = as_2d(np, r[0])
        return positive(r) if classifier and kind != "onnx" else r  # a converted booster: as XGBoost, LightGBM give
    return PythonEngine("onnxruntime", lambda X: (lambda: sess.run(out, {inp: X})), convert, build)


def lightgbm_engine(np, booster, threads):
    return PythonEngine("lightgbm", lambda X: (lambda: booster.predict(X, num_threads=threads)), lambda r: as_2d(np, r),
                        {"compile_s": None})


def lleaves_engine(np, model, cache, threads):
    """lleaves' compiled model (cached object file); one thread below 128 rows, as lleaves advises for small batches."""
    import lleaves
    import llvmlite
    m = lleaves.Model(model_file=model)

    def make(path):
        m.compile(cache=path)
    from importlib import metadata
    key = digest(model, metadata.version("lleaves"), llvmlite.__version__)
    path, build = cached_build(os.path.join(cache, "lleaves"), os.path.basename(model), key, ".o", make)
    if build["cached"]:
        m.compile(cache=path)
    return PythonEngine("lleaves", lambda X: (lambda: m.predict(X, n_jobs=threads if len(X) >= 128 else 1)),
                        lambda r: as_2d(np, r), build)


def catboost_engine(np, model, threads):
    """CatBoost's own predictor on its .cbm model: probabilities of every class, as its ONNX export gives them."""
    import catboost
    m = catboost.CatBoost()
    t0 = time.perf_counter()
    m.load_model(model)
    build = {"compile_s": None, "session_s": round(time.perf_counter() - t0, 3)}
    classifier = m.get_param("loss_function") in ("Logloss", "CrossEntropy", "MultiClass")
    how = "Probability" if classifier else "RawFormulaVal"
    return PythonEngine("catboost", lambda X: (lambda: m.predict(X, prediction_type=how, thread_count=threads)),
                        lambda r: as_2d(np, r), build)


def daal4py_engine(np, booster, threads, binary_positive):
    """Intel oneDAL through daal4py.mb.convert_model(booster) (an XGBoost, LightGBM or CatBoost model):
    predict_proba for classifiers (binary_positive: P(1) alone, as XGBoost and LightGBM give it), predict for
    regressors."""
    import daal4py
    daal4py.daalinit(threads)
    t0 = time.perf_counter()
    m = daal4py.mb.convert_model(booster)
    build = {"compile_s": round(time.perf_counter() - t0, 3)}
    call = m.predict_proba if m.is_classifier_ else m.predict
    convert = (lambda r: positive(as_2d(np, r))) if binary_positive else (lambda r: as_2d(np, r))
    return PythonEngine("daal4py", lambda X: (lambda: call(X)), convert, build)


def python_call_floor(np, threads, wait_policy, available, reps=7):
    """Microseconds of a trivial call of each Python peer: one row through a one-split model (median of reps)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((256, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.float32)
    row = np.ascontiguousarray(X[:1])
    calls = {}
    if "xgboost" in available:
        import xgboost as xgb
        b = xgb.train({"max_depth": 1, "nthread": threads}, xgb.DMatrix(X, label=y), 1)
        calls["xgboost"] = lambda: b.inplace_predict(row)
    if "onnxruntime" in available:
        import onnxruntime as ort
        import onnxmltools
        from onnxmltools.convert.common.data_types import FloatTensorType
        import xgboost as xgb
        b2 = xgb.train({"max_depth": 1}, xgb.DMatrix(X, label=y), 1)
        onx = onnxmltools.convert_xgboost(b2, initial_types=[("input", FloatTensorType([None, 4]))], target_opset=15)
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
        if wait_policy == "passive":
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        sess = ort.InferenceSession(onx.SerializeToString(), so, providers=["CPUExecutionProvider"])
        oname = [sess.get_outputs()[0].name]
        calls["onnxruntime"] = lambda: sess.run(oname, {"input": row})
    if "lightgbm" in available or "lleaves" in available:
        import lightgbm as lgb
        lb = lgb.train({"num_leaves": 2, "verbose": -1, "min_data_in_leaf": 1}, lgb.Dataset(X, y), 1)
        if "lightgbm" in available:
            calls["lightgbm"] = lambda: lb.predict(row, num_threads=threads)
        if "lleaves" in available:
            import lleaves
            import tempfile
            with tempfile.TemporaryDirectory() as tmp:
                lb.save_model(os.path.join(tmp, "m.txt"))
                lm = lleaves.Model(model_file=os.path.join(tmp, "m.txt"))
                lm.compile()
            calls["lleaves"] = lambda: lm.predict(row, n_jobs=1)
    if "catboost" in available:
        import catboost
        cb = catboost.CatBoostRegressor(iterations=1, depth=1, verbose=0, allow_writing_files=False).fit(X, y)
        calls["catboost"] = lambda: cb.predict(row, thread_count=threads)
    if "daal4py" in available:
        import daal4py
        import xgboost as xgb
        daal4py.daalinit(threads)
        dm = daal4py.mb.convert_model(xgb.train({"max_depth": 1}, xgb.DMatrix(X, label=y), 1))
        calls["daal4py"] = lambda: dm.predict(row)
    floor = {}
    for name, f in calls.items():
        for _ in range(100):
            f()
        n, times = 200, []
        for _ in range(reps):
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            times.append((time.perf_counter() - t0) / n * 1e6)
        floor[name] = round(statistics.median(times), 2)
    return floor


def versions(names):
    """Installed versions of the Python modules the peers need (None for those that do not import)."""
    from importlib import metadata
    dist = {"daal4py": "scikit-learn-intelex"}  # module: its distribution's name where that differs
    out = {}
    for m in names:
        try:
            __import__(m)
            out[m] = metadata.version(dist.get(m, m))
        except Exception as e:  # ImportError, or a broken install
            out[m] = None
            print(f"note: {m} not importable: {type(e).__name__}: {e}", file=sys.stderr)
    return out
