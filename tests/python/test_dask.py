"""grove.dask.predict on a LocalCluster of two worker processes: a few million rows read from Parquet, every
prediction checked against Model.predict on the same rows, partition order kept, the model loaded once per worker."""
import os

import numpy as np
import pytest

import grove
import grove.model
from conftest import MODELS, read_rows

dd = pytest.importorskip("dask.dataframe", reason="dask[dataframe] is not installed")
distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is not installed")
pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed")
pd = pytest.importorskip("pandas", reason="pandas is not installed")
import grove.dask  # noqa: E402  (needs dask)

ROWS = 3_000_000
FILES = 12


def test_local_scheduler_without_a_client(higgs, higgs_model):
    """Without a distributed client (the fixture below starts one for the later tests), the model is a task."""
    _, rows, _ = higgs
    assert distributed.client._get_global_client() is None
    ddf = dd.from_pandas(pd.DataFrame(rows), npartitions=4)
    got = grove.dask.predict(ddf, higgs_model).compute(scheduler="threads")
    assert np.array_equal(got.to_numpy(), higgs_model.predict(rows))
    assert list(got.index) == list(range(len(rows)))


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def parquet(higgs, tmp_path_factory):
    """ROWS higgs-like rows (the 2,000 test rows resampled, with noise, and 1% missing values) in FILES Parquet files;
    returns (folder, the rows as one float32 array in file order)."""
    _, rows, _ = higgs
    rng = np.random.default_rng(7)
    X = rows[rng.integers(0, len(rows), ROWS)] + rng.normal(scale=0.05, size=(ROWS, rows.shape[1])).astype(np.float32)
    X[rng.random(X.shape, dtype=np.float32) < 0.01] = np.nan
    folder = tmp_path_factory.mktemp("parquet")
    names = [str(i) for i in range(X.shape[1])]
    for k, part in enumerate(np.array_split(X, FILES)):
        table = pa.Table.from_arrays([pa.array(part[:, j]) for j in range(part.shape[1])], names=names)
        pq.write_table(table, folder / f"part{k:02}.parquet")
    return folder, X


def test_millions_of_rows_from_parquet(client, higgs_model, parquet):
    folder, X = parquet
    before = client.run(lambda: grove.model.loads_from_bytes)
    ddf = dd.read_parquet(str(folder))
    assert ddf.npartitions == FILES
    predictions = grove.dask.predict(ddf, higgs_model)
    got = predictions.compute()
    want = higgs_model.predict(X)
    assert got.name == "prediction" and got.dtype == np.float32 and len(got) == ROWS
    # every prediction, in the rows' order: partitions come back in ddf's order, each indexed as read
    assert np.array_equal(got.to_numpy(), want)
    # each file's rows are indexed from 0, as read_parquet reads them
    sizes = [len(p) for p in np.array_split(X, FILES)]
    assert np.array_equal(got.index.to_numpy(), np.concatenate([np.arange(n) for n in sizes]))
    # the model travelled to each worker, and was loaded there, once (for 12 partitions), and a second call sends
    # nothing more
    again = grove.dask.predict(ddf.partitions[:3], higgs_model, threads=1).compute()
    assert np.array_equal(again.to_numpy(), want[:len(again)])
    after = client.run(lambda: grove.model.loads_from_bytes)
    assert {w: after[w] - before.get(w, 0) for w in after} == {w: 1 for w in after}, after


def test_columns_matched_by_name_and_checked_before_running(client, higgs_model, parquet):
    folder, X = parquet
    ddf = dd.read_parquet(str(folder / "part00.parquet"))
    shuffled = ddf[list(reversed(ddf.columns))]  # higgs.json names its features '0'..'27'
    got = grove.dask.predict(shuffled, higgs_model).compute()
    assert np.array_equal(got.to_numpy(), higgs_model.predict(X[:len(got)]))
    with pytest.raises(grove.GroveArgumentError, match="missing '27'"):
        grove.dask.predict(ddf.drop(columns="27"), higgs_model)
    with pytest.raises(TypeError, match="must be a grove.Model"):
        grove.dask.predict(ddf, "higgs.json")


def test_several_outputs_and_margins(client):
    base = os.path.join(MODELS, "multi_softprob3.x3")
    model = grove.compile(base + ".json")
    rows = read_rows(base + ".rows.csv").astype(np.float32)
    ddf = dd.from_pandas(pd.DataFrame(rows, columns=[f"c{i}" for i in range(rows.shape[1])]), npartitions=3)
    got = grove.dask.predict(ddf, model).compute()
    assert list(got.columns) == ["prediction_0", "prediction_1", "prediction_2"]
    assert np.array_equal(got.to_numpy(), model.predict(rows))
    margins = grove.dask.predict(ddf, model, margin=True, threads=1, name="margin").compute()
    assert list(margins.columns) == ["margin_0", "margin_1", "margin_2"]
    assert np.array_equal(margins.to_numpy(), model.predict(rows, margin=True))


def test_classifier_estimator_labels(client):
    """A model compiled from a classifier estimator gives each row's label, in the classes' dtype, as Model.predict."""
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (XGBoost's estimators need it)")
    rng = np.random.default_rng(12)
    rows = rng.normal(size=(2000, 4)).astype(np.float32)
    y = np.digitize(rows[:, 0] + rows[:, 1], [-0.5, 0.5])
    model = grove.compile(xgb.XGBClassifier(n_estimators=8, max_depth=3, random_state=0).fit(rows, y))
    ddf = dd.from_pandas(pd.DataFrame(rows), npartitions=3)
    got = grove.dask.predict(ddf, model).compute()
    assert got.dtype == model.classes_.dtype
    assert np.array_equal(got.to_numpy(), model.predict(rows))
