#!/usr/bin/env python3
"""The Python package's cost per call at batch 1, against grove's C path on the same model and row.

    GROVE_BUILDDIR=build PYTHONPATH=rt/python build/venv/bin/python tools/python_overhead.py [MODEL] [--calls N]

C: `grove predict ARTIFACT --input ONE_ROW.csv --time --repeat N` (grove_predict in a loop,
best and mean per call). Python: Model.predict on a (1, F) float32 array, timeit, best of
5 rounds of N calls; also a float64 row, and a one-row DataFrame.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import timeit

import numpy as np

import grove

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", default=os.path.join(ROOT, "..", "shared", "models", "real", "higgs.json"))
    ap.add_argument("--calls", type=int, default=100000)
    args = ap.parse_args()
    builddir = os.environ.get("GROVE_BUILDDIR", os.path.join(ROOT, "build"))
    model = grove.compile(args.model)
    row = np.random.default_rng(0).normal(size=(1, model.num_features)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        artifact, rows = os.path.join(tmp, "model.so"), os.path.join(tmp, "row.csv")
        model.save(artifact)
        np.savetxt(rows, row, delimiter=",", fmt="%.9g")
        p = subprocess.run([os.path.join(builddir, "grove"), "predict", artifact, "--input", rows, "--time",
                            "--repeat", str(args.calls), "--output", os.path.join(tmp, "out.csv")],
                           capture_output=True, text=True, check=True)
        print("C (grove predict --time):", (p.stdout + p.stderr).strip().splitlines()[-1])
    cases = [("Model.predict, float32 (1, F)", row), ("Model.predict, float64 (1, F)", row.astype(np.float64))]
    try:
        import pandas as pd
        cases.append(("Model.predict, 1-row DataFrame", pd.DataFrame(row)))
    except ImportError:
        pass
    for label, x in cases:
        n = args.calls if label.endswith("(1, F)") else args.calls // 10
        best = min(timeit.repeat(lambda: model.predict(x), number=n, repeat=5)) / n
        print(f"{label}: {best * 1e6:.2f} us per call (best of 5 x {n})")


if __name__ == "__main__":
    sys.exit(main())
