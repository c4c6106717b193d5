#!/usr/bin/env bash
# stress.sh RUNS CMD… — run CMD RUNS times in a row on a loaded machine.
#
# Beside CMD run four CPU-bound processes and one writer that fsyncs all the
# time, the load under which ralph's suite must not flake (a busy 2-core CI
# machine, two CPU-bound processes a core). The first failing run stops it;
# each run's output goes to $STRESS_LOGS/run-N.log (default .cache/stress).
# The load stops with it.
set -euo pipefail

runs="${1:?usage: stress.sh RUNS CMD…}"
shift
[[ $# -gt 0 ]] || { echo "usage: stress.sh RUNS CMD…" >&2; exit 2; }
logs="${STRESS_LOGS:-.cache/stress}"
mkdir -p "$logs"
scratch="$(mktemp -d)"

load=()
stop_load() {
	kill "${load[@]}" 2>/dev/null || true
	wait "${load[@]}" 2>/dev/null || true
	rm -rf "$scratch"
}
trap stop_load EXIT

for _ in 1 2 3 4; do
	bash -c 'while :; do :; done' &
	load+=($!)
done
bash -c 'while :; do dd if=/dev/zero of="$1/fsync.dat" bs=4k count=256 oflag=dsync conv=fsync 2>/dev/null; done' _ "$scratch" &
load+=($!)
echo "stress: load started (4 CPU-bound, 1 fsync writer: pids ${load[*]})"

for ((i = 1; i <= runs; i++)); do
	start=$SECONDS
	if "$@" >"$logs/run-$i.log" 2>&1; then
		echo "stress: run $i/$runs passed in $((SECONDS - start))s ($logs/run-$i.log)"
	else
		code=$?
		echo "stress: run $i/$runs FAILED with exit $code after $((SECONDS - start))s; the end of $logs/run-$i.log:"
		tail -40 "$logs/run-$i.log"
		exit "$code"
	fi
done
echo "stress: $runs of $runs runs passed under load"
