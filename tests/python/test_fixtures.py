"""grove.compile on model files of every format: the fixtures of tests/models against the predictions, margins and
labels their training library (or the ONNX specification) gave; no library needed."""
import concurrent.futures
import os

import numpy as np
import pytest

import grove
from conftest import assert_close, fixtures, read_rows

FIXTURES = list(fixtures())


@pytest.fixture(scope="module")
def compiled():
    """Every fixture compiled, on all cores at once (libgrovec compiles on several threads, without the GIL)."""
    def one(m):
        try:
            return grove.compile(m["model"])
        except grove.GroveError as exc:
            return exc
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(zip((m["name"] for m in FIXTURES), pool.map(one, FIXTURES)))


@pytest.mark.parametrize("m", FIXTURES, ids=[m["name"] for m in FIXTURES])
def test_fixture(m, compiled):
    model = compiled[m["name"]]
    if isinstance(model, Exception):
        raise model
    # float32 rows unless the model compares doubles (as `grove predict` and `--f64` read them)
    rows = read_rows(m["rows"]).astype(np.float64 if m["f64"] else np.float32)
    got = model.predict(rows)
    assert_close(got.reshape(len(rows), -1), read_rows(m["pred"]), m["probability"])
    if os.path.exists(m["margin"]):
        assert_close(model.predict(rows, margin=True).reshape(len(rows), -1), read_rows(m["margin"]), False)
    if os.path.exists(m["label"]):
        with open(m["label"]) as f:
            want_labels = f.read().splitlines()
        assert [str(label) for label in model.predict_labels(rows)] == want_labels
