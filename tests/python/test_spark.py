"""grove.spark.predict on a local Spark (local[2]): predictions appended to the rows, equal to Model.predict's, in
the rows' order; the model loaded once per Python worker; a classifier estimator's labels; the columns checked."""
import os
import sys

import numpy as np
import pytest

import grove
import grove.model

pd = pytest.importorskip("pandas", reason="pandas is not installed")
pytest.importorskip("pyarrow", reason="pyarrow is not installed")
pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed")
if not any(os.access(os.path.join(d, "java"), os.X_OK) for d in os.environ.get("PATH", "").split(os.pathsep)):
    pytest.skip("no java on PATH (Spark needs it)", allow_module_level=True)
from pyspark.sql import SparkSession  # noqa: E402

import grove.spark  # noqa: E402

PARTITIONS = 8


@pytest.fixture(scope="module")
def spark():
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers' Python: this one (numpy, grove on PYTHONPATH)
    session = (SparkSession.builder.master("local[2]").appName("grove-test")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "1000").getOrCreate())
    yield session
    session.stop()


def frame_of(rows, ids=True):
    """The rows as a pandas DataFrame with columns f0, f1, ... (and an id column first)."""
    df = pd.DataFrame(rows, columns=[f"f{j}" for j in range(rows.shape[1])])
    if ids:
        df.insert(0, "id", np.arange(len(rows), dtype=np.int64))
    return df


def test_predictions_appended_in_order(spark, higgs, higgs_model):
    _, rows, _ = higgs
    rows = np.concatenate([rows] * 5)
    rows[::7, 3] = np.nan
    sdf = spark.createDataFrame(frame_of(rows)).repartition(PARTITIONS, "id").sortWithinPartitions("id")
    features = [f"f{j}" for j in range(rows.shape[1])]
    got = grove.spark.predict(sdf, higgs_model, features=features).toPandas().sort_values("id")
    assert list(got.columns) == ["id"] + features + ["prediction"]
    want = higgs_model.predict(rows)
    assert np.array_equal(got["prediction"].to_numpy(), want.astype(np.float64))
    assert np.array_equal(got[features].to_numpy(dtype=np.float32), rows, equal_nan=True)


def test_loaded_once_per_python_worker(spark, higgs, higgs_model):
    """Tasks after a worker's first, and later calls with the model, reuse it: no worker loads it more than once
    (the first test's call loaded it in them already, or this one's does)."""
    _, rows, _ = higgs
    features = [f"f{j}" for j in range(rows.shape[1])]
    sdf = spark.createDataFrame(frame_of(rows)).repartition(PARTITIONS)
    for _ in range(2):
        assert len(grove.spark.predict(sdf, higgs_model, features=features).collect()) == len(rows)

    def loads(frames):  # in the same kind of Python worker (Arrow batches) as the predictions
        for _ in frames:
            yield pd.DataFrame({"pid": [os.getpid()], "loads": [grove.model.loads_from_bytes]})

    counts = dict(sdf.mapInPandas(loads, "pid long, loads long").toPandas().itertuples(index=False))
    assert max(counts.values()) == 1, counts


def test_classifier_labels_and_outputs(spark):
    xgboost = pytest.importorskip("xgboost", reason="xgboost is not installed")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 4)).astype(np.float32)
    y = np.array(["low", "mid", "high"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)]
    classes, codes = np.unique(y, return_inverse=True)
    estimator = xgboost.XGBClassifier(n_estimators=8, max_depth=3).fit(X, codes)
    model = grove.compile(estimator)
    sdf = spark.createDataFrame(frame_of(X, ids=False)).coalesce(1)
    labels = grove.spark.predict(sdf, model).toPandas()
    assert np.array_equal(labels["prediction"].to_numpy(), model.predict(X))
    margins = grove.spark.predict(sdf, model, margin=True, name="m").toPandas()
    assert [c for c in margins.columns if c.startswith("m_")] == ["m_0", "m_1", "m_2"]
    assert np.array_equal(margins[["m_0", "m_1", "m_2"]].to_numpy(), model.predict(X, margin=True).astype(np.float64))


def test_columns_checked_before_running(spark, higgs_model):
    sdf = spark.createDataFrame(pd.DataFrame({"a": [1.0], "prediction": [2.0]}))
    with pytest.raises(grove.GroveArgumentError, match="no column 'f0'"):
        grove.spark.predict(sdf, higgs_model, features=["f0"])
    with pytest.raises(grove.GroveArgumentError, match="needs 28"):
        grove.spark.predict(sdf, higgs_model, features=["a"])
    with pytest.raises(grove.GroveArgumentError, match="column 'prediction' already"):
        grove.spark.predict(sdf.withColumnRenamed("a", "x"), higgs_model, features=["x"] * 28)
    with pytest.raises(TypeError):
        grove.spark.predict(sdf, "model.so")
