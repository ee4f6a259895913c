"""Scoring Dask DataFrames with a compiled model: grove.dask.predict(ddf, model).

Dask schedules, grove predicts: each partition becomes one grove.Model.predict call on
the worker that holds it. The model enters the task graph once, as one task of its own
that every partition's task depends on, so that each worker receives (and loads) the
artifact once, however many partitions it scores.

    import dask.dataframe as dd, grove, grove.dask
    from distributed import Client
    client = Client(...)                              # a cluster: LocalCluster, SSH, Kubernetes, ...
    model = grove.compile("model.json", cpu="x86-64-v3")  # a CPU every worker has
    ddf = dd.read_parquet("rows/*.parquet")
    grove.dask.predict(ddf, model).to_parquet("predictions/")
"""
import os

import dask
import pandas as pd

from .errors import argument
from .model import Model


def _worker_threads():
    """The cores one task of a Dask worker may use: the worker's cores shared among its task threads; None outside a
    distributed worker (grove's default: all cores)."""
    try:
        from distributed import get_worker
        worker = get_worker()
    except (ImportError, ValueError):
        return None
    cores = len(os.sched_getaffinity(0))
    return max(1, cores // max(1, worker.state.nthreads))


def _predict_partition(frame, model, margin, threads, name):
    """One partition's predictions, indexed as the partition is."""
    values = model.predict(frame, margin=margin, threads=threads if threads is not None else _worker_threads())
    if values.ndim == 1:
        return pd.Series(values, index=frame.index, name=name)
    return pd.DataFrame(values, index=frame.index, columns=[f"{name}_{k}" for k in range(values.shape[1])])


def predict(ddf, model, margin=False, threads=None, name="prediction"):
    """Predict every row of the Dask DataFrame ddf with model (a grove.Model).

    Returns a Dask Series named name (a DataFrame with columns name_0, name_1, ... for
    models with several outputs per row) whose partitions and index are ddf's, so row
    order is kept. Columns are matched to the model's feature names as Model.predict
    matches them (checked here, before anything runs). threads: OpenMP threads per
    partition; default, on a distributed worker, its cores shared among its task threads
    (Dask's nanny sets OMP_NUM_THREADS=1 for worker processes, which this overrides),
    elsewhere all cores."""
    if not isinstance(model, Model):
        raise TypeError(f"grove.dask.predict: model must be a grove.Model (from grove.compile or grove.load), "
                        f"not {type(model).__name__}")
    order = model.column_order(ddf.columns)
    if order is None and model.feature_names is None and len(ddf.columns) != model.num_features:
        raise argument(f"the table has {len(ddf.columns)} columns, the model needs {model.num_features}")
    k = model.num_outputs(margin)
    empty = pd.Series([], dtype="float32")
    meta = pd.Series(empty, name=name) if k == 1 else pd.DataFrame({f"{name}_{i}": empty for i in range(k)})
    shipped = dask.delayed(model, pure=True)  # one task: each worker fetches its result once
    return ddf.map_partitions(_predict_partition, shipped, margin, threads, name, meta=meta,
                              enforce_metadata=False, align_dataframes=False)
