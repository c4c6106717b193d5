#!/usr/bin/env bash
# fuzz.sh FUZZTIME: runs every Fuzz target of the module for FUZZTIME
# each, one at a time (go test -fuzz takes one target per run). Targets
# are found in the sources, so a new one is fuzzed without a Makefile edit.
# A failing input is kept under the package's testdata/fuzz/ by go test;
# commit it and it becomes a regression test that `make test` runs.
#
# A target fails when go test writes a failing input, or fails for any
# reason but one: Go's fuzzing coordinator (go1.26, golang/go#75804) can
# report its own -fuzztime deadline as "context deadline exceeded" on a
# busy machine, with no input at fault. Such a run is reported and
# retried, up to three runs in all.
set -euo pipefail
fuzztime=${1:?usage: fuzz.sh FUZZTIME}
go=${GO:-go}
cd "$(dirname "$0")/../.."

# fuzz_once PKG TARGET: 0 passed, 1 failed, 2 only the coordinator's deadline.
fuzz_once() {
	local pkg=$1 target=$2 corpus="$1/testdata/fuzz/$2" before after out
	before=$(ls "$corpus" 2>/dev/null | wc -l)
	if out=$("$go" test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" "$pkg" 2>&1); then
		echo "$out"
		return 0
	fi
	echo "$out"
	after=$(ls "$corpus" 2>/dev/null | wc -l)
	if [ "$after" -eq "$before" ] && echo "$out" | grep -q '^    context deadline exceeded$' &&
		[ "$(echo "$out" | grep -c -- '--- FAIL')" -eq 1 ]; then
		return 2
	fi
	return 1
}

count=0
while IFS= read -r file; do
	pkg=./$(dirname "$file")
	for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		echo "== $target ($pkg)"
		for attempt in 1 2 3; do
			status=0
			fuzz_once "$pkg" "$target" || status=$?
			[ "$status" -eq 2 ] || break
			echo "fuzz.sh: $target: go's fuzzing deadline, no failing input (golang/go#75804); run $attempt of 3"
		done
		if [ "$status" -ne 0 ]; then
			echo "fuzz.sh: $target failed"
			exit 1
		fi
		count=$((count + 1))
	done
done < <(git ls-files --cached --others --exclude-standard '*_test.go' | xargs grep -l '^func Fuzz' | sort)
echo "fuzzed $count targets for $fuzztime each"
