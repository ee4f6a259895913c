"""The package's interface on the real higgs model and the fixtures: layouts and dtypes of rows, DataFrames, errors,
save/load/pickle, the struct the compiler takes."""
import concurrent.futures
import ctypes
import json
import multiprocessing
import os
import pickle
import re

import numpy as np
import pytest

import grove
from grove import _lib
from conftest import MODELS, ROOT, assert_close, read_rows


def test_predict_matches_xgboost_probabilities(higgs, higgs_model):
    _, rows, want = higgs
    assert higgs_model.num_features == 28 and higgs_model.num_outputs() == 1
    assert_close(higgs_model.predict(rows), want, True)


def test_layouts_and_dtypes_agree(higgs, higgs_model):
    _, rows, _ = higgs
    reference = higgs_model.predict(rows)
    assert reference.dtype == np.float32 and reference.shape == (len(rows),)
    for variant in (np.asfortranarray(rows), rows.astype(np.float64), np.asfortranarray(rows.astype(np.float64)),
                    rows.tolist()):
        assert np.array_equal(higgs_model.predict(variant), reference)
    # a strided view (every other row) is copied, and gives those rows' predictions
    assert np.array_equal(higgs_model.predict(rows[::2]), reference[::2])
    # a column-sliced view of a wider array
    wide = np.concatenate([rows, np.ones((len(rows), 3), np.float32)], axis=1)
    assert np.array_equal(higgs_model.predict(wide[:, :28]), reference)
    # integers are converted; one row at a time gives what the batch gives
    assert np.array_equal(higgs_model.predict(rows[:1]), reference[:1])
    assert higgs_model.predict(np.zeros((3, 28), np.int64)).shape == (3,)
    assert higgs_model.predict(np.zeros((0, 28), np.float32)).shape == (0,)


def test_float64_rows_reach_the_f64_entry():
    # LightGBM compares doubles: 57 of these rows lie between a threshold and its float32 rounding
    base = os.path.join(MODELS, "lightgbm", "f64_thresholds")
    model = grove.compile(base + ".txt")
    rows, want = read_rows(base + ".rows.csv"), read_rows(base + ".pred.csv")
    assert_close(model.predict(rows).reshape(want.shape), want, False)
    as_float = model.predict(rows.astype(np.float32)).reshape(want.shape)
    assert not np.allclose(as_float, want, rtol=0, atol=1e-5), "float32 rows should lose the f64 thresholds"


def test_shapes_of_several_outputs_and_labels():
    base = os.path.join(MODELS, "onnx", "classifier_strings")
    model = grove.compile(base + ".onnx")
    rows = read_rows(base + ".rows.csv").astype(np.float32)
    assert model.predict(rows).shape == (len(rows), model.num_outputs())
    assert model.num_outputs() > 1
    assert all(isinstance(label, str) for label in model.labels)
    with open(base + ".label.csv") as f:
        assert list(model.predict_labels(rows)) == f.read().splitlines()
    with pytest.raises(grove.GroveArgumentError, match="no class labels"):
        grove.compile(os.path.join(MODELS, "binary_logistic.x3.json")).predict_labels(rows[:, :1])


def test_wrong_width_and_dimensions(higgs, higgs_model):
    _, rows, _ = higgs
    with pytest.raises(grove.GroveArgumentError, match="X has 27 columns, the model needs 28"):
        higgs_model.predict(rows[:, :27])
    with pytest.raises(grove.GroveArgumentError, match=r"X has 1 dimension, expected 2 .*reshape\(1, -1\)"):
        higgs_model.predict(rows[0])
    with pytest.raises(grove.GroveArgumentError, match="holds <U1 values"):
        higgs_model.predict(np.full((2, 28), "a"))
    with pytest.raises(grove.GroveArgumentError, match="threads=0"):
        higgs_model.predict(rows, threads=0)
    assert np.array_equal(higgs_model.predict(rows, threads=1), higgs_model.predict(rows))


def test_bad_models_and_options(higgs, tmp_path):
    path = higgs[0]
    with pytest.raises(grove.GroveFormatError, match=r"cycle\.json: .*cycle"):
        grove.compile(os.path.join(ROOT, "tests", "bad", "cycle.json"))
    with pytest.raises(grove.GroveFormatError, match="unknown model format"):
        grove.compile(os.path.join(ROOT, "README.md"))
    with pytest.raises(grove.GroveIOError, match="nothing.json"):
        grove.compile(str(tmp_path / "nothing.json"))
    with pytest.raises(grove.GroveArgumentError, match="unknown directive 'frob'"):
        grove.compile(path, schedule="frob(batch)")
    with pytest.raises(grove.GroveArgumentError, match="'b1' is no longer a loop"):
        grove.compile(path, schedule="tile(batch, b0, b1, 64); tile(b1, c0, c1, 8); reorder(b0, tree, b1)")
    with pytest.raises(grove.GroveArgumentError, match="unknown x86-64 CPU"):
        grove.compile(path, cpu="pentium9")
    with pytest.raises(grove.GroveArgumentError, match="unknown representation 'tiled9'"):
        grove.compile(path, representation="tiled9")
    with pytest.raises(grove.GroveArgumentError, match="interleave 99"):
        grove.compile(path, interleave=99)
    with pytest.raises(grove.GroveArgumentError, match="opt_level=-1"):
        grove.compile(path, opt_level=-1)
    with pytest.raises(grove.GroveFormatError, match="the model has 100 trees, more than grove's limit of 10"):
        grove.compile(path, limits="trees=10")
    with pytest.raises(grove.GroveArgumentError, match="frob=1: expected NAME=N"):
        grove.compile(path, limits="frob=1")
    with pytest.raises(TypeError, match="unknown option emit"):
        grove.compile(path, emit="asm")
    with pytest.raises(TypeError, match="cannot compile a builtins.dict"):
        grove.compile({"trees": []})
    # the errors are GroveError, and the standard exceptions they stand for
    assert issubclass(grove.GroveFormatError, grove.GroveError) and issubclass(grove.GroveArgumentError, ValueError)
    assert issubclass(grove.GroveIOError, OSError) and issubclass(grove.GroveMemoryError, MemoryError)


def test_options_reach_the_compiler(higgs, tmp_path):
    path, rows, want = higgs
    schedule = tmp_path / "xgboost.sched"
    schedule.write_text("tile(batch, b0, b1, 64)\nreorder(b0, tree, b1)\nparallel(b0)\n")
    for model in (grove.compile(path, schedule=schedule), grove.compile(path, schedule=schedule.read_text()),
                  grove.compile(path, cpu="x86-64", opt_level=1, representation="sparse", interleave=4,
                                interleave_trees=2, tile_trees=10, format="xgboost")):
        assert_close(model.predict(rows), want, True)
    with pytest.raises(grove.GroveFormatError):
        grove.compile(path, format="lightgbm")  # a JSON model read as LightGBM text


def test_sizes_name_a_schedules_arguments(higgs):
    """The sizes a schedule names, as grove compile -D gives them: a dict or "NAME=N,..." text."""
    path, rows, want = higgs
    schedule = "tile(batch, b0, b1, ROWS); tile(tree, t0, t1, N_t/PARTS); reorder(b0, t0, b1, t1); parallel(b0)"
    for sizes in ({"ROWS": 64, "PARTS": 4}, "ROWS=32,PARTS=2"):
        assert_close(grove.compile(path, schedule=schedule, sizes=sizes).predict(rows), want, True)
    with pytest.raises(grove.GroveArgumentError, match="'N_t/PARTS' is not a number, nor a size the schedule knows"):
        grove.compile(path, schedule=schedule, sizes={"ROWS": 64})
    with pytest.raises(grove.GroveArgumentError, match="'N_t/PARTS' divides by zero"):
        grove.compile(path, schedule=schedule, sizes="ROWS=64,PARTS=0")
    with pytest.raises(grove.GroveArgumentError, match="sizes ROWS: expected NAME=NUMBER"):
        grove.compile(path, schedule=schedule, sizes="ROWS")
    with pytest.raises(grove.GroveArgumentError, match="expected a name and a whole number"):
        grove.compile(path, schedule=schedule, sizes={"ROWS": 6.5})


def test_save_load_pickle(higgs, higgs_model, tmp_path):
    _, rows, _ = higgs
    reference = higgs_model.predict(rows)
    path = tmp_path / "higgs.so"
    higgs_model.save(path)
    with grove.load(path) as loaded:
        assert np.array_equal(loaded.predict(rows), reference)
        assert loaded.artifact == higgs_model.artifact
    with pytest.raises(grove.GroveArgumentError, match="the model is closed"):
        loaded.predict(rows)
    again = pickle.loads(pickle.dumps(higgs_model))
    assert np.array_equal(again.predict(rows), reference)
    assert repr(again) == "<grove.Model 28 features, 1 output>"
    # another process (a pool worker) loads the pickled model; spawned, not forked: GNU OpenMP's threads (started by
    # the batches above) do not survive a fork, and a forked child that predicts in parallel waits for them forever
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        assert np.array_equal(pool.submit(again.predict, rows).result(), reference)
    # grove's message names the file the caller gave, not the private copy
    not_artifact = tmp_path / "notes.so"
    not_artifact.write_bytes(b"not an artifact")
    with pytest.raises(grove.GroveError, match=re.escape(str(not_artifact))):
        grove.load(not_artifact)
    with pytest.raises(FileNotFoundError):
        grove.load(tmp_path / "missing.so")


def test_models_loaded_one_after_another_stay_apart():
    """Loading from bytes writes each artifact under a fresh name: the dynamic loader must not hand back an earlier
    model's code (it matches libraries by name)."""
    first = grove.compile(os.path.join(MODELS, "reg_squarederror.x3.json"))
    second = grove.compile(os.path.join(MODELS, "count_poisson.x3.json"))
    rows = read_rows(os.path.join(MODELS, "count_poisson.x3.rows.csv")).astype(np.float32)
    want = second.predict(rows)
    assert not np.array_equal(first.predict(rows), want)
    for _ in range(3):
        a = pickle.loads(pickle.dumps(first))
        a.close()
        b = pickle.loads(pickle.dumps(second))
        assert np.array_equal(b.predict(rows), want)
        b.close()


def test_dataframes(higgs, higgs_model):
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    _, rows, _ = higgs
    reference = higgs_model.predict(rows)
    # higgs.json was trained on a DataFrame with columns 0..27: XGBoost wrote them as the names '0'..'27'
    assert higgs_model.feature_names == [str(i) for i in range(28)]
    frame = pd.DataFrame(rows)
    assert np.array_equal(higgs_model.predict(frame), reference)
    assert np.array_equal(higgs_model.predict(frame[frame.columns[::-1]]), reference)
    assert np.array_equal(higgs_model.predict(frame.astype("float64")), reference)
    with pytest.raises(grove.GroveArgumentError, match="missing '0', '1', .* and 18 more; not in the model 'c0'"):
        higgs_model.predict(frame.set_axis([f"c{i}" for i in range(28)], axis=1))

    # a model without feature names takes a table's columns by position
    base = os.path.join(MODELS, "binary_logistic.x3")
    unnamed = grove.compile(base + ".json")
    assert unnamed.feature_names is None
    rows = read_rows(base + ".rows.csv")
    reference = unnamed.predict(rows)
    frame = pd.DataFrame(rows, columns=[f"c{i}" for i in range(rows.shape[1])])
    assert np.array_equal(unnamed.predict(frame), reference)
    assert np.array_equal(unnamed.predict(frame.astype("float32")), unnamed.predict(rows.astype(np.float32)))
    with pytest.raises(grove.GroveArgumentError, match=f"the table has {rows.shape[1] - 1} columns, the model needs"):
        unnamed.predict(frame.iloc[:, 1:])
    with pytest.raises(grove.GroveArgumentError, match=r"columns that are not numbers: c0 \((object|str)\)"):
        unnamed.predict(frame.assign(c0="x"))
    # nullable columns: pd.NA is a missing value
    nullable = frame.astype("Float64")
    nullable.iloc[0, 0] = pd.NA
    missing = rows[:1].copy()
    missing[0, 0] = np.nan
    assert unnamed.predict(nullable)[0] == unnamed.predict(missing)[0]


def test_dataframe_columns_matched_by_name(tmp_path):
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    # an XGBoost fixture given feature names, as XGBoost writes them for a model trained on a DataFrame
    with open(os.path.join(MODELS, "missing_directions.x3.json")) as f:
        document = json.load(f)
    count = int(document["learner"]["learner_model_param"]["num_feature"])
    names = [f"feature {chr(ord('a') + i)}" for i in range(count)]
    document["learner"]["feature_names"] = names
    document["learner"]["feature_types"] = ["float"] * count
    path = tmp_path / "named.json"
    path.write_text(json.dumps(document))
    model = grove.compile(path)
    assert model.feature_names == names
    rows = read_rows(os.path.join(MODELS, "missing_directions.x3.rows.csv")).astype(np.float32)
    reference = model.predict(rows)
    assert_close(reference, read_rows(os.path.join(MODELS, "missing_directions.x3.pred.csv")).ravel(), True)
    frame = pd.DataFrame(rows, columns=names)
    assert np.array_equal(model.predict(frame), reference)
    assert np.array_equal(model.predict(frame[list(reversed(names))]), reference)
    with pytest.raises(grove.GroveArgumentError, match=f"missing '{names[0]}'; not in the model 'other'"):
        model.predict(frame.rename(columns={names[0]: "other"}))
    with pytest.raises(grove.GroveArgumentError, match=f"4 feature names: missing '{names[-1]}'" if count == 4
                       else f"missing '{names[-1]}'"):
        model.predict(frame.iloc[:, :-1])
    with pytest.raises(grove.GroveArgumentError, match=f"repeated '{names[0]}'"):
        model.predict(pd.concat([frame, frame.iloc[:, :1]], axis=1))
    # numpy rows are taken by position whatever the names
    assert np.array_equal(model.predict(rows), reference)


def test_compile_options_struct_matches_the_header():
    """GroveCompileOptions in ctypes must list rt/grove_compile.h's fields in order with their C types."""
    with open(os.path.join(ROOT, "rt", "grove_compile.h")) as f:
        header = f.read()
    body = re.search(r"typedef struct GroveCompileOptions \{(.*?)\} GroveCompileOptions;", header, re.S).group(1)
    fields = re.findall(r"^\s*(const char \*|int |unsigned )\s*(\w+);", body, re.M)
    c_types = {"const char *": ctypes.c_char_p, "int ": ctypes.c_int, "unsigned ": ctypes.c_uint}
    assert [(name, c_types[t]) for t, name in fields] == list(_lib.CompileOptions._fields_)


def test_gpu_targets(higgs, higgs_model):
    """A GPU artifact compiled for the simulator predicts what the CPU's does; one for CUDA or ROCm, where no driver is,
    fails to load with GroveUnavailableError naming the missing library."""
    path, rows, want = higgs
    assert higgs_model.device == "cpu"
    sim = grove.compile(path, target="gpusim", schedule="tile(batch, b0, b1, 32); gpuDimension(b0, grid.x); "
                                                        "gpuDimension(b1, block.x)")
    assert sim.device == "gpusim"
    assert_close(sim.predict(rows[:200]), want[:200], True)
    for target, library in (("cuda", "libcuda.so.1"), ("rocm", "libhsa-runtime64.so.1")):
        try:
            model = grove.compile(path, target=target)
        except grove.GroveUnavailableError as e:
            assert library in e.message
        else:  # a machine with the driver and a device
            assert model.device == target
            assert_close(model.predict(rows[:200]), want[:200], True)
    with pytest.raises(grove.GroveArgumentError, match="the simulator has no architectures"):
        grove.compile(path, target="gpusim:sm_80")
