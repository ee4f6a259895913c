#!/usr/bin/env python3
"""Rows per second of grove.dask.predict on a LocalCluster of 1 and 2 worker processes.

    GROVE_BUILDDIR=build PYTHONPATH=rt/python build/venv/bin/python tools/dask_throughput.py \
        [--rows 4000000] [--files 16] [--workers 1 2] [--threads N]

Writes ROWS higgs-like rows (the real higgs test rows resampled, with noise) to FILES
Parquet files, compiles ../shared/models/real/higgs.json, and for each worker count
(threads_per_worker=1, processes) times, best of 3 after a warm-up:
  parquet: read the Parquet files, predict, bring the predictions to the client;
  memory:  the same on a DataFrame already persisted in the workers' memory;
and, for reference, Model.predict on all rows as one array in this process. --threads is
grove.dask.predict's threads (default: each worker's cores shared among its threads).
"""
import argparse
import os
import tempfile
import time

import numpy as np

import grove
import grove.dask

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL = os.path.join(ROOT, "..", "shared", "models", "real")


def best(f, repeat=3):
    """The best time of f(i) over repeat calls after a warm-up; i gives each call a column name of its own, so that
    Dask computes it afresh instead of handing back results it still holds under the same keys."""
    f(0)
    times = []
    for i in range(1, repeat + 1):
        start = time.perf_counter()
        f(i)
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--files", type=int, default=16)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    import dask.dataframe as dd
    import distributed
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = np.loadtxt(os.path.join(REAL, "higgs.test.csv"), delimiter=",")[:, :-1].astype(np.float32)
    rng = np.random.default_rng(0)
    X = table[rng.integers(0, len(table), args.rows)] + rng.normal(scale=0.05, size=(args.rows, 28)).astype(np.float32)
    model = grove.compile(os.path.join(REAL, "higgs.json"))
    local = best(lambda i: model.predict(X))
    print(f"in-process Model.predict, {args.rows} rows: {args.rows / local / 1e6:.2f} M rows/s ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as folder:
        names = [str(i) for i in range(28)]
        for k, part in enumerate(np.array_split(X, args.files)):
            pq.write_table(pa.Table.from_arrays([pa.array(part[:, j]) for j in range(28)], names=names),
                           os.path.join(folder, f"part{k:02}.parquet"))
        want = model.predict(X)
        for workers in args.workers:
            with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                          dashboard_address=None) as cluster, distributed.Client(cluster) as client:
                ddf = dd.read_parquet(folder)

                def from_parquet(i):
                    got = grove.dask.predict(ddf, model, threads=args.threads, name=f"p{i}").compute()
                    assert np.array_equal(got.to_numpy(), want)
                in_memory = ddf.persist()
                distributed.wait(in_memory)

                def from_memory(i):
                    got = grove.dask.predict(in_memory, model, threads=args.threads, name=f"p{i}").compute()
                    assert np.array_equal(got.to_numpy(), want)
                parquet, memory = best(from_parquet), best(from_memory)
                print(f"{workers} worker{'s' if workers > 1 else ''}: parquet {args.rows / parquet / 1e6:.2f} M rows/s "
                      f"({parquet:.2f} s), in memory {args.rows / memory / 1e6:.2f} M rows/s ({memory:.2f} s)",
                      flush=True)
                del client


if __name__ == "__main__":
    main()
