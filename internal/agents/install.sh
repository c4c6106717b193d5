#!/usr/bin/env bash
# install.sh [DEST] — install the pinned coding-agent CLIs for ralph's e2e tests.
#
# Each CLI listed in versions.txt (next to this script) goes into a folder of
# its own, DEST/<name>/, with
#     npm install --prefix DEST/<name> --no-audit --no-fund PKG@VER
# so the CLIs never share (or fight over) one node_modules tree and nothing is
# installed globally. The binary ends up at DEST/<name>/node_modules/.bin/<name>.
#
# Idempotent: a CLI is skipped when its binary exists and DEST/<name>/.ralph-pin
# holds the same PKG@VER (npm itself would be slow to find out the same thing).
# Installs run JOBS at a time (default 3; set JOBS=1 to serialise). npm's cache
# is safe for concurrent use, and the prefixes are disjoint.
#
# DEST defaults to .cache/agents (relative to the current directory).
# Point the e2e tests at it with RALPH_AGENTS_DIR=DEST.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
versions="${VERSIONS_FILE:-$here/versions.txt}"
dest="${1:-.cache/agents}"
jobs="${JOBS:-3}"

die() { echo "install.sh: error: $*" >&2; exit 1; }

command -v npm >/dev/null 2>&1 || die "npm not found on PATH; install Node.js (20 or newer) first"
[[ -r "$versions" ]] || die "cannot read $versions"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"

# install_one NAME SPEC — installs SPEC (PKG@VER) into $dest/NAME unless the
# stamp says it is already there. Output goes to $dest/NAME/install.log so that
# parallel installs do not interleave; a summary line goes to stdout.
install_one() {
	local name="$1" spec="$2"
	local dir="$dest/$name" bin="$dest/$name/node_modules/.bin/$name"
	local stamp="$dir/.ralph-pin" log="$dir/install.log"

	if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$spec" ]]; then
		echo "ok      $name: $spec already installed ($bin)"
		return 0
	fi
	mkdir -p "$dir"
	rm -f "$stamp"
	echo "install $name: $spec ..."
	local start=$SECONDS
	if ! npm install --prefix "$dir" --no-audit --no-fund --no-progress "$spec" >"$log" 2>&1; then
		explain_failure "$name" "$spec" "$log"
		return 1
	fi
	if [[ ! -x "$bin" ]]; then
		echo "install.sh: error: $spec installed but $bin is missing (log: $log)" >&2
		return 1
	fi
	echo "$spec" >"$stamp"
	echo "done    $name: $spec in $((SECONDS - start))s ($bin)"
}

# explain_failure names the package and says whether the registry was the
# problem, because "npm ERR! code ENOTFOUND" buried in a log is easy to miss.
explain_failure() {
	local name="$1" spec="$2" log="$3"
	local registry
	registry="$(npm config get registry 2>/dev/null || echo 'the npm registry')"
	if grep -Eq 'ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|network|socket hang up' "$log"; then
		echo "install.sh: error: cannot reach $registry to install $spec (for $name)." >&2
		echo "install.sh: hint: check network access to the npm registry (npm config get registry, proxy settings)." >&2
	elif grep -Eq 'E404|ETARGET|No matching version' "$log"; then
		echo "install.sh: error: $spec (for $name) is not on $registry; fix the pin in $versions." >&2
	else
		echo "install.sh: error: npm install $spec (for $name) failed." >&2
	fi
	echo "install.sh: last lines of $log:" >&2
	tail -n 15 "$log" | sed 's/^/    /' >&2
}

names=() specs=()
while read -r name spec _; do
	[[ -z "$name" || "$name" == \#* ]] && continue
	[[ -n "$spec" ]] || die "$versions: line for '$name' has no PKG@VER"
	names+=("$name") specs+=("$spec")
done <"$versions"

echo "installing ${#names[@]} agent CLIs into $dest ($jobs at a time)"
failed=0
running=0
for i in "${!names[@]}"; do
	if ((running >= jobs)); then
		wait -n || failed=1
		running=$((running - 1))
	fi
	install_one "${names[$i]}" "${specs[$i]}" &
	running=$((running + 1))
done
while ((running > 0)); do
	wait -n || failed=1
	running=$((running - 1))
done

if ((failed)); then
	die "some agent CLIs were not installed (see the errors above)"
fi
echo "all agent CLIs ready in $dest (export RALPH_AGENTS_DIR=$dest)"
