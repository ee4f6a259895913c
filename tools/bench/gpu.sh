#!/bin/bash
# grove on an NVIDIA GPU, for real: run on a machine with the CUDA driver (libcuda.so.1).
#
#   tools/bench/gpu.sh [--arch sm_90] [--tune SECONDS] [--schedules DIR] [--no-timing] [--out DIR] [--rows N] MODEL[:ROWS.csv] ...
#   (--target gpusim runs the same steps on the simulator, to try the script without a GPU)
#
# For each model:
#   1. rows: ROWS.csv's rows repeated (with one column more than the model's features,
#      the last is the training library's prediction, as in ../shared/models/real's test
#      rows; an empty field is a missing value), or, for the synthetic
#      models of tools/bench/models.py (syn-NAME.json, syn-lgb-NAME.txt), rows drawn
#      from their shape with numpy;
#   2. `grove compile` for the CPU and for CUDA (the heuristic's GPU schedule);
#   3. the GPU's predictions of 4096 rows against the CPU's (largest difference, relative
#      above 1), and against ROWS.csv's last column where there is one;
#   4. (not with --no-timing) timer.c: grove_predict on the CUDA artifact with rows in host memory (copies in
#      and out and the call's device allocations included) and grove_predict_device with
#      rows already on the GPU, over batches up to about a million rows; the CPU
#      artifact on all of this machine's cores beside them, up to 65536 rows;
#   5. with --tune S (default 30; 0 skips it): `grove tune --target cuda --estimate` for the
#      largest batch, timing its candidates on the GPU, each beside the device-less
#      estimate (its ranking in the log: the data to check the estimate on), and the best
#      schedule timed as in 4;
#   6. with --schedules DIR (tests/schedules/gpu, say): each DIR/*.sched (its "# options:"
#      line read as compile options), and the default schedule in each representation,
#      compiled for the GPU and checked as in 3 (a compile refused for the model is
#      counted apart, with its message).
# Prints one line per measurement and writes DIR/gpu.md (a table) and DIR/gpu.log.
# GROVE (build/grove), TIMER (build/bench/timer) and PYTHON (python3, with numpy) say
# which programs to run.
set -u -o pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
GROVE=${GROVE:-$ROOT/build/grove}
TIMER=${TIMER:-$ROOT/build/bench/timer}
PYTHON=${PYTHON:-python3}
ARCH=sm_90
TARGET=
TUNE=30
OUT=gpu-out
MAX_ROWS=$((1 << 20))
SCHEDULES=
TIMING=1
SECONDS_PER_TIMING=0.4
MODELS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--arch) ARCH=$2; shift 2 ;;
	--target) TARGET=$2; shift 2 ;;
	--tune) TUNE=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--rows) MAX_ROWS=$2; shift 2 ;;
	--schedules) SCHEDULES=$2; shift 2 ;;
	--no-timing) TIMING=0 TUNE=0; shift ;;
	-*) echo "gpu.sh: unknown option $1" >&2; exit 2 ;;
	*) MODELS+=("$1"); shift ;;
	esac
done
TARGET=${TARGET:-cuda:$ARCH}
[ ${#MODELS[@]} -gt 0 ] || { sed -n '2,20p' "$0" >&2; exit 2; }
mkdir -p "$OUT/work"
W=$OUT/work
LOG=$OUT/gpu.log
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }

# Rows for model $1 (optional CSV $2, $3 features): $W/NAME.f32 (up to MAX_ROWS rows, at most 512 MiB) and $W/NAME.csv (4096 rows).
make_rows() {
	"$PYTHON" - "$1" "$2" "$W" "$HERE" "$MAX_ROWS" "$3" <<'EOF'
import os, re, sys
import numpy as np
model, csv, work, here, most, features = sys.argv[1:7]
sys.path.insert(0, here)
name = re.sub(r"\.(json|txt|onnx|ubj)$", "", os.path.basename(model))
if csv:
    table = np.genfromtxt(csv, delimiter=",", dtype=np.float64, ndmin=2)
    if table.shape[1] == int(features) + 1:  # the last column is the training library's prediction
        np.savetxt(os.path.join(work, name + ".expected"), np.resize(table[:, -1], min(int(most), 4096)), fmt="%.9g")
        table = table[:, :-1]
    elif table.shape[1] != int(features):
        sys.exit(f"{csv}: {table.shape[1]} columns for a model of {features} features")
    base = table.astype(np.float32)
else:
    import models
    shape = models.LIGHTGBM.get(name[4:], name[4:])
    base = models.make_rows(np, shape, 1 << 16, seed=1)
n = min(int(most), (512 << 20) // (4 * base.shape[1]))
X = np.ascontiguousarray(np.resize(base, (n, base.shape[1])))
X.astype("<f4").tofile(os.path.join(work, name + ".f32"))
np.savetxt(os.path.join(work, name + ".csv"), X[:min(n, 4096)], delimiter=",", fmt="%.9g")
print(n)
EOF
}

# Largest difference between two prediction CSVs, and whether it is within float tolerance.
compare() {
	"$PYTHON" - "$1" "$2" <<'EOF'
import sys
import numpy as np
a = np.loadtxt(sys.argv[1], delimiter=",", ndmin=2)
b = np.loadtxt(sys.argv[2], delimiter=",", ndmin=2)
d = float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)))) if a.shape == b.shape else float("inf")
print(f"{d:.3g} {'ok' if d <= 1e-5 else 'WRONG'}")
EOF
}

# Median µs/row of `timer ENGINE LIB ROWS BATCH`, or "-" when it fails (the error in the log).
time_one() {
	local line
	if line=$("$TIMER" "$1" "$2" "$3" "$4" "$SECONDS_PER_TIMING" 2>>"$LOG"); then
		echo "$line" >>"$LOG"
		echo "$line" | sed -n 's/.*median \([^ ]*\) us\/row.*/\1/p'
	else
		echo "-"
	fi
}

# Seconds a command takes, its output in the log; "-" when it fails.
timed() {
	local t0 t1
	t0=$(date +%s.%N)
	if "$@" >>"$LOG" 2>&1; then
		t1=$(date +%s.%N)
		"$PYTHON" -c "print(f'{$t1 - $t0:.2f}')"
	else
		echo "-"
	fi
}

# Step 6 for model $1 (name $2): every schedule of $SCHEDULES and every representation, against the CPU's predictions.
PASSED=0 WRONG=0 REFUSED=0
check_schedules() {
	local model=$1 name=$2 v label lib result args
	for v in representation:array representation:sparse representation:reorg "$SCHEDULES"/*.sched; do
		case $v in
		representation:*) label=${v#*:} args=(--representation "${v#*:}") ;;
		*) label=$(basename "$v" .sched); read -r -a args <<<"$(sed -n 's/^# options: //p' "$v") --schedule $v" ;;
		esac
		lib=$W/$name-$label.so
		if ! "$GROVE" compile "$model" --target "$TARGET" "${args[@]}" -o "$lib" >"$W/message" 2>&1; then
			result="refused: $(head -c 200 "$W/message" | tr '\n' ' ')"
			REFUSED=$((REFUSED + 1))
		elif ! "$GROVE" predict "$lib" --input "$W/$name.csv" --output "$W/$name-$label.out" >"$W/message" 2>&1; then
			result="WRONG: the prediction failed: $(head -c 300 "$W/message" | tr '\n' ' ')"
			WRONG=$((WRONG + 1))
		else
			result=$(compare "$W/$name-$label.out" "$W/$name-cpu.out")
			case $result in *ok) PASSED=$((PASSED + 1)) ;; *) WRONG=$((WRONG + 1)) ;; esac
		fi
		say "$name $label: $result"
	done
}

say "# grove on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'an unknown GPU'), $ARCH; CPU: $(nproc) cores of $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
TABLE=$OUT/gpu.md
{
	echo "| model | rows | check | compile cpu / cuda (s) | schedule | batch | cuda, host rows (µs/row) | cuda, rows on GPU (µs/row) | cpu, $(nproc) cores (µs/row) |"
	echo "|---|---|---|---|---|---|---|---|---|"
} >"$TABLE"

for spec in "${MODELS[@]}"; do
	model=${spec%%:*}
	csv=
	[ "$spec" != "$model" ] && csv=${spec#*:}
	name=$(basename "$model" | sed -E 's/\.(json|txt|onnx|ubj)$//')
	say "## $name"
	features=$("$GROVE" dump --level hir "$model" 2>>"$LOG" | sed -n '1s/.* features=\([0-9]*\).*/\1/p')
	if ! pool=$(make_rows "$model" "$csv" "$features" 2>>"$LOG"); then
		say "$name: cannot make rows (see $LOG)"
		continue
	fi
	cpu=$W/$name-cpu.so cuda=$W/$name-cuda.so
	tc=$(timed "$GROVE" compile "$model" -o "$cpu")
	tg=$(timed "$GROVE" compile "$model" --target "$TARGET" -o "$cuda")
	check="-"
	if [ -f "$cuda" ] && [ -f "$cpu" ] &&
		"$GROVE" predict "$cuda" --input "$W/$name.csv" --output "$W/$name-cuda.out" >>"$LOG" 2>&1 &&
		"$GROVE" predict "$cpu" --input "$W/$name.csv" --output "$W/$name-cpu.out" >>"$LOG" 2>&1; then
		check=$(compare "$W/$name-cuda.out" "$W/$name-cpu.out")
		[ -f "$W/$name.expected" ] && check="$check; library $(compare "$W/$name-cuda.out" "$W/$name.expected")"
	fi
	say "$name: $pool rows; compile cpu ${tc}s, cuda ${tg}s; cuda against cpu: $check"
	[ -n "$SCHEDULES" ] && [ -f "$W/$name-cpu.out" ] && check_schedules "$model" "$name"
	schedules=("heuristic:$cuda")
	if [ "$TUNE" != 0 ] && [ -f "$cuda" ]; then
		big=$((pool < 65536 ? pool : 65536))
		tt=$(timed "$GROVE" tune "$model" --target "$TARGET" --estimate --batch "$big" --budget "$TUNE" --input "$W/$name.csv" \
			-o "$W/$name.sched" --log "$OUT/tune.csv")
		say "$name: grove tune --target $TARGET --batch $big: ${tt}s; best: $(tr '\n' ' ' <"$W/$name.sched" 2>/dev/null)"
		if [ -f "$W/$name.sched" ] &&
			"$GROVE" compile "$model" --target "$TARGET" --schedule "$W/$name.sched" -o "$W/$name-tuned.so" >>"$LOG" 2>&1; then
			schedules+=("tuned:$W/$name-tuned.so")
		fi
	fi
	[ "$TIMING" = 1 ] || continue
	for s in "${schedules[@]}"; do
		label=${s%%:*} lib=${s#*:}
		for batch in 1 64 4096 65536 1048576; do
			[ "$batch" -le "$pool" ] || continue
			[ "$label" = tuned ] && [ "$batch" -lt 4096 ] && continue
			host=$(time_one grove "$lib" "$W/$name.f32" "$batch")
			dev="-"
			[ "$batch" -ge 64 ] && dev=$(time_one grove-device "$lib" "$W/$name.f32" "$batch")
			cpu_t="-"
			[ "$label" = heuristic ] && [ -f "$cpu" ] && [ "$batch" -le 65536 ] &&
				cpu_t=$(time_one grove "$cpu" "$W/$name.f32" "$batch")
			say "$name $label batch $batch: cuda host rows $host, rows on GPU $dev, cpu $cpu_t us/row"
			echo "| $name | $pool | $check | $tc / $tg | $label | $batch | $host | $dev | $cpu_t |" >>"$TABLE"
		done
	done
done
[ -n "$SCHEDULES" ] && say "schedules and representations: $PASSED predicted as the CPU, $WRONG wrong or failed, $REFUSED refused"
say "table: $TABLE"
