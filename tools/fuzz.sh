#!/bin/bash
# Run grove's libFuzzer harnesses (tests/fuzz) for as long as asked.
#
#   tools/fuzz.sh [-t SECONDS] [-j JOBS] [-b BUILDDIR] [HARNESS...]
#
# -t: seconds per harness (default 60); -j: harnesses at once (default: the CPU count);
# -b: the fuzz build (default build-fuzz; configured and built here when missing:
# clang-16, ASan + UBSan, libFuzzer). HARNESS: model-FORMAT for each format of the readers'
# table (front/front.c), schedule, csv, csv-header, artifact (default: every one the build has). Each starts from
# its committed seeds (tests/fuzz/corpus/HARNESS, with tests/fuzz/HARNESS.dict) and the
# corpus of earlier runs (BUILDDIR/corpus/HARNESS), which it grows. A finding (crash,
# leak, sanitizer report, timeout, memory past 2 GB) is saved under BUILDDIR/findings/
# and makes the script exit 1; add it to tests/bad with the message it should give.
# Prints per harness: executions, seconds, corpus size, findings.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60 jobs=$(nproc) build=build-fuzz
while getopts "t:j:b:" opt; do
	case $opt in
	t) seconds=$OPTARG ;;
	j) jobs=$OPTARG ;;
	b) build=$OPTARG ;;
	*) sed -n '2,16p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
harnesses=("$@")

if [ ! -f "$build.ninja" ]; then
	./configure.py --cc clang-16 --asan --fuzz --builddir "$build" --output "$build.ninja" >/dev/null
fi
ninja -f "$build.ninja" >/dev/null
((${#harnesses[@]})) || mapfile -t harnesses < <(ls "$build/fuzz") # (configure.py's FUZZ_HARNESSES)
mkdir -p "$build/findings" "$build/logs"
for h in "${harnesses[@]}"; do
	[ -x "$build/fuzz/$h" ] || { echo "fuzz.sh: no harness '$h' (see tools/fuzz.sh -h)" >&2; exit 2; }
	mkdir -p "$build/corpus/$h"
done
# The artifact harness starts from a real artifact, sealed, and cut short.
if [[ " ${harnesses[*]} " == *" artifact "* ]]; then
	"$build/grove" compile tests/golden/lightgbm.txt -o "$build/corpus/artifact/seed.so" --cpu x86-64 -O1
	head -c 4096 "$build/corpus/artifact/seed.so" > "$build/corpus/artifact/seed-cut"
fi

# One harness: fuzz it, then print its line of the summary.
run() {
	local h=$1 log=$build/logs/$1.log dict=tests/fuzz/$1.dict status=0 extra=()
	# The seal is a checksum against damage, not a signature against forgery (an artifact is code: whoever can
	# write one can run anything). libFuzzer's comparison tracing sees the checksum compared and writes the expected
	# value into the input, forging it; without it the artifact harness fuzzes what damage does.
	[ "$h" = artifact ] && extra=(-use_cmp=0 -use_value_profile=0)
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
		"$build/fuzz/$h" "${extra[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
		-print_final_stats=1 -dict="$dict" -artifact_prefix="$build/findings/$h-" \
		"$build/corpus/$h" "tests/fuzz/corpus/$h" > "$log" 2>&1 || status=$?
	local execs corpus findings
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	corpus=$(find "$build/corpus/$h" -type f | wc -l)
	# crash-, leak-, timeout- and oom- files; libFuzzer's slow-unit- files only note the slowest input
	findings=$(find "$build/findings" -name "$h-*" ! -name "$h-slow-unit-*" -newer "$build/logs/started" | wc -l)
	printf '%-18s %12s execs %6ss corpus %6s findings %s%s\n' "$h" "${execs:-?}" "$seconds" "$corpus" "$findings" \
		"$( ((status)) && echo " (exit $status, see $log)")"
	((status == 0 && findings == 0))
}
export -f run
export build seconds
touch "$build/logs/started"
if printf '%s\n' "${harnesses[@]}" | xargs -P "$jobs" -I{} bash -c 'run {}'; then
	echo "fuzz: no findings"
else
	echo "fuzz: findings (or a failed run) above; inputs in $build/findings/" >&2
	exit 1
fi
