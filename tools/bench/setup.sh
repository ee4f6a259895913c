#!/bin/sh
# Make the benchmark's Python environment, build/bench-venv, with the pinned peers of
# tools/bench/requirements.txt (from PyPI; about a minute). Installs nothing elsewhere:
# the venv is made by $PYTHON (default python3, 3.10 or later; Debian's needs the
# python3-venv package). Running it again installs only what changed.
#
#   tools/bench/setup.sh && build/bench-venv/bin/python tools/bench/bench.py
set -eu
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
VENV=build/bench-venv

if [ ! -x "$VENV/bin/python" ]; then
	mkdir -p build
	"$PYTHON" -m venv "$VENV" || {
		echo "setup.sh: '$PYTHON -m venv' failed (on Debian: apt-get install python3-venv)" >&2
		exit 1
	}
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r tools/bench/requirements.txt
"$VENV/bin/python" - <<'PY'
from importlib import metadata
# module: its distribution's name where that differs
mods = ["numpy", "xgboost", "treelite", "tl2cgen", "onnxruntime", "onnxmltools", "lightgbm", "lleaves", "catboost",
        "skl2onnx", "pandas", "daal4py", "matplotlib"]
dist = {"daal4py": "scikit-learn-intelex"}
for m in mods:
    __import__(m)
    print(f"{m} {metadata.version(dist.get(m, m))}", end="; " if m != mods[-1] else "\n")
PY
for tool in gcc cc; do
	command -v $tool >/dev/null || echo "setup.sh: note: no $tool: TL2cgen and tools/bench/timer.c need a C compiler with OpenMP" >&2
done
[ -e build/libgrove.so ] || echo "setup.sh: note: build grove before benchmarking it: ./configure.py && ninja" >&2
echo "build/bench-venv is ready: build/bench-venv/bin/python tools/bench/bench.py [--quick]"
