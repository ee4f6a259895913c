#!/bin/bash
# Install what is missing (apt; the Python tests' build/venv from PyPI), build grove, compile the bundled example model and predict
# with it, printing grove's predictions next to XGBoost's and the time per row.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup --python
./configure.py
ninja
model=tests/models/binary_logistic.x3
echo "== grove compile $model.json"
start=$(date +%s%N)
./build/grove compile "$model.json" -o build/example.so
echo "compiled in $(( ($(date +%s%N) - start) / 1000000 )) ms"
echo "== grove predict (first 8 rows: grove, XGBoost 3.1.3)"
./build/grove predict build/example.so --input "$model.rows.csv" --output build/example.out.csv --time --repeat 2000
paste -d' ' build/example.out.csv "$model.pred.csv" | head -8
