#!/usr/bin/env bash
# fuzz.sh FUZZTIME: runs every Fuzz target of the module for FUZZTIME
# each, one at a time (go test -fuzz takes one target per run). Targets
# are found in the sources, so a new one is fuzzed without a Makefile edit.
# A failing input is kept under the package's testdata/fuzz/ by go test;
# commit it and it becomes a regression test that `make test` runs.
set -euo pipefail
fuzztime=${1:?usage: fuzz.sh FUZZTIME}
go=${GO:-go}
cd "$(dirname "$0")/../.."

count=0
while IFS= read -r file; do
	pkg=./$(dirname "$file")
	for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		echo "== $target ($pkg)"
		"$go" test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" "$pkg"
		count=$((count + 1))
	done
done < <(git ls-files --cached --others --exclude-standard '*_test.go' | xargs grep -l '^func Fuzz' | sort)
echo "fuzzed $count targets for $fuzztime each"
