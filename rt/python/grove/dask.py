"""Scoring Dask DataFrames with a compiled model: grove.dask.predict(ddf, model).

Dask schedules, grove predicts: each partition becomes one grove.Model.predict call on
the worker that holds it. With a distributed Client, the model goes to every worker (and
to each that joins later) once, through a worker plugin, and stays loaded there for
the next calls; with Dask's local schedulers it is one task of the graph that every
partition's task depends on.

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


# The models the worker plugins below placed in this process, by their token.
_models = {}


class _ModelPlugin:
    """A worker plugin carrying one model: each worker, and each that joins later, unpickles (loads) it once in
    setup and keeps it until the plugin is removed. Dask's own data would not do: its memory manager drops the
    replicas no waiting task needs, and a worker that needs the model again fetches and loads it again."""

    def __init__(self, model, token):
        self.model, self.token = model, token

    def setup(self, worker):
        _models[self.token] = self.model

    def teardown(self, worker):
        _models.pop(self.token, None)


def _ship(model):
    """What the partitions' tasks take to find the model: with a distributed client, the model's token, after
    placing the model on every worker through a plugin (once per client, while the model lives here); with the
    local schedulers, the model as a task of its own."""
    try:
        from distributed import default_client
        client = default_client()
    except (ImportError, ValueError):
        return dask.delayed(model, pure=True)
    token = "grove-model-" + model.__dask_tokenize__()[1]
    shipped = model.__dict__.setdefault("_dask_clients", set())
    if client.id not in shipped:
        from distributed.diagnostics.plugin import WorkerPlugin
        plugin = type("GroveModelPlugin", (_ModelPlugin, WorkerPlugin), {})(model, token)
        register = getattr(client, "register_plugin", None) or client.register_worker_plugin
        register(plugin, name=token)
        shipped.add(client.id)
    return token


def _predict_partition(frame, model, margin, threads, name):
    """One partition's predictions, indexed as the partition is; model is a Model or the token of one that a plugin
    placed in this worker."""
    if isinstance(model, str):
        if model not in _models:
            raise RuntimeError(f"grove.dask: this worker has no model {model} (its plugin did not run here)")
        model = _models[model]
    values = model.predict(frame, margin=margin, threads=threads if threads is not None else _worker_threads())
    if values.ndim == 1:
        return pd.Series(values, index=frame.index, name=name)
    return pd.DataFrame(values, index=frame.index, columns=[f"{name}_{k}" for k in range(values.shape[1])])


def predict(ddf, model, margin=False, threads=None, name="prediction"):
    """Predict every row of the Dask DataFrame ddf with model (a grove.Model).

    Returns a Dask Series named name (a DataFrame with columns name_0, name_1, ... for
    models with several outputs per row; labels for a model compiled from a classifier
    estimator, as Model.predict gives them) whose partitions and index are ddf's, so row
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
    labels = model.classes_ is not None and not margin  # a classifier estimator's model: one label a row
    k = 1 if labels else model.num_outputs(margin)
    empty = pd.Series([], dtype=model.classes_.dtype if labels else "float32")
    meta = pd.Series(empty, name=name) if k == 1 else pd.DataFrame({f"{name}_{i}": empty for i in range(k)})
    shipped = _ship(model)
    return ddf.map_partitions(_predict_partition, shipped, margin, threads, name, meta=meta,
                              enforce_metadata=False, align_dataframes=False)
