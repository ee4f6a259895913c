"""Scoring Spark DataFrames with a compiled model: grove.spark.predict(sdf, model).

Spark schedules, grove predicts: mapInPandas hands each task's rows to a Python worker in
batches (pandas DataFrames), and each batch is one grove.Model.predict call. The model
goes to every executor once per call, as a broadcast variable (its pickle: the
artifact's bytes); each Python worker loads it at its first batch and keeps it, by the
pickle's digest, for the tasks and calls it runs after (Spark reuses its Python workers:
spark.python.worker.reuse).

    import grove, grove.spark
    model = grove.compile("model.json", cpu="x86-64-v3")   # a CPU every executor has
    sdf = spark.read.parquet("rows/")
    grove.spark.predict(sdf, model).write.parquet("predictions/")
"""
import hashlib
import pickle

import numpy as np

from .errors import argument
from .model import Model

# The models this Python worker has loaded, by the digest of their pickle: each once, whatever the calls.
_models = {}


def _loaded(broadcast):
    """The model of broadcast (its pickle's digest and the pickle), loaded once in this Python worker."""
    digest, blob = broadcast.value
    if digest not in _models:
        _models[digest] = pickle.loads(blob)
    return _models[digest]

def _spark_type(dtype):
    """The Spark SQL type of a column of numpy dtype (predictions, or a classifier's labels)."""
    from pyspark.sql import types as T
    if dtype.kind == "f":
        return T.DoubleType()
    if dtype.kind in "iu":
        return T.LongType()
    if dtype.kind == "b":
        return T.BooleanType()
    return T.StringType()


def predict(sdf, model, features=None, margin=False, threads=None, name="prediction"):
    """Predict every row of the Spark DataFrame sdf with model (a grove.Model).

    Returns sdf with the predictions appended: a column named name (columns name_0, name_1,
    ... for models with several outputs per row; labels for a model compiled from a
    classifier estimator, as Model.predict gives them), doubles, or the labels' type.
    features: the columns the model reads, in its order (whatever their names); default,
    the model's feature names where it has them, else every column of sdf. Checked here,
    before anything runs. threads: OpenMP threads per batch (default: all cores of the
    executor's machine; give the cores of one task where several tasks share one)."""
    if not isinstance(model, Model):
        raise TypeError(f"grove.spark.predict: model must be a grove.Model (from grove.compile or grove.load), "
                        f"not {type(model).__name__}")
    from pyspark.sql import types as T
    if features is None:
        features = model.feature_names if model.feature_names is not None else list(sdf.columns)
    features = list(features)
    missing = [c for c in features if c not in sdf.columns]
    if missing:
        raise argument(f"grove.spark.predict: the DataFrame has no column {', '.join(map(repr, missing))}")
    if len(features) != model.num_features:
        raise argument(f"grove.spark.predict: {len(features)} feature columns, the model needs {model.num_features}")
    labels = model.classes_ is not None and not margin  # a classifier estimator's model: one label a row
    k = 1 if labels else model.num_outputs(margin)
    names = [name] if k == 1 else [f"{name}_{i}" for i in range(k)]
    clash = [n for n in names if n in sdf.columns]
    if clash:
        raise argument(f"grove.spark.predict: the DataFrame has a column {clash[0]!r} already; name the predictions "
                       f"otherwise (name=...)")
    kind = _spark_type(np.asarray(model.classes_).dtype) if labels else T.DoubleType()
    schema = T.StructType(list(sdf.schema.fields) + [T.StructField(n, kind, True) for n in names])
    blob = pickle.dumps(model)
    broadcast = sdf.sparkSession.sparkContext.broadcast((hashlib.sha256(blob).hexdigest(), blob))

    def batches(frames):
        grove_model = _loaded(broadcast)
        for frame in frames:
            rows = frame[features]
            if grove_model.feature_names is not None:  # features are the model's, in its order, whatever their names
                rows = rows.set_axis(grove_model.feature_names, axis=1)
            values = grove_model.predict(rows, margin=margin, threads=threads)
            values = values.reshape(len(frame), -1) if values.ndim == 1 else values
            out = frame.copy()
            for i, n in enumerate(names):
                column = values[:, i]
                out[n] = column.astype(np.float64) if column.dtype.kind == "f" else column
            yield out

    return sdf.mapInPandas(batches, schema)
