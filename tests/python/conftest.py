"""Shared by the Python package's tests (tests/python): where things are, reading the fixtures' CSV files, and the
tolerance the whole suite uses.

Run through `python3 tests/run.py -k python` (build/venv's pytest, GROVE_BUILDDIR = the build under test,
PYTHONPATH = rt/python), or directly: GROVE_BUILDDIR=build PYTHONPATH=rt/python build/venv/bin/pytest tests/python.
"""
import glob
import json
import math
import os

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(ROOT, "tests", "models")
REAL = os.path.join(ROOT, "..", "shared", "models", "real")
TOLERANCE = 1e-5


def number(field):
    """A CSV field as grove reads it: empty, nan, -nan or nan(PAYLOAD) is NaN (Python's float() takes no payload)."""
    field = field.strip()
    return math.nan if not field or field.lstrip("+-").lower().startswith("nan") else float(field)


def read_rows(path):
    """A CSV of numbers as a float64 array (an empty field or nan: NaN)."""
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append([number(x) for x in line.split(",")])
    return np.array(rows, dtype=np.float64)


def assert_close(got, want, probability):
    """The suite's tolerance: 1e-5 absolute for probabilities, 1e-5 relative to max(1, |want|) otherwise."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(got - want)
        if not probability:
            error = error / np.maximum(1.0, np.abs(want))
    # Non-finite values match only themselves: inf of the same sign, NaN with NaN (as tests/run.py's compare).
    finite = np.isfinite(got) & np.isfinite(want)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    error = np.where(finite, error, np.where(same, 0.0, np.inf))
    worst = np.unravel_index(np.argmax(error), error.shape) if error.size else None
    assert error.size == 0 or error.max() <= TOLERANCE, \
        f"largest error {error.max():.3g} at {worst}: got {got[worst]!r}, expected {want[worst]!r}"


def fixtures():
    """The generated fixtures of tests/models (as tests/run.py's fixtures() reads them)."""
    manifests = [os.path.join(MODELS, "manifest.json")] + sorted(glob.glob(os.path.join(MODELS, "*", "manifest.json")))
    for manifest in manifests:
        directory = os.path.dirname(manifest)
        with open(manifest) as f:
            for m in json.load(f):
                base = os.path.join(directory, m["name"])
                yield {"name": os.path.relpath(base, MODELS), "model": os.path.join(directory, m.get("model", m["name"] + ".json")),
                       "rows": base + ".rows.csv", "pred": base + ".pred.csv", "margin": base + ".margin.csv",
                       "label": base + ".label.csv", "probability": m["probability"], "f64": m.get("f64_rows", False)}


@pytest.fixture(scope="session")
def higgs():
    """(path of the real higgs.json model, its 2,000 test rows as float32, XGBoost's probabilities)."""
    path = os.path.join(REAL, "higgs.json")
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing (../shared must sit beside the project)")
    table = read_rows(os.path.join(REAL, "higgs.test.csv"))
    return path, np.ascontiguousarray(table[:, :-1], dtype=np.float32), table[:, -1]


@pytest.fixture(scope="session")
def higgs_model(higgs):
    import grove
    return grove.compile(higgs[0])
