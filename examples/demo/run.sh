#!/usr/bin/env bash
# run.sh RALPH — run the demo in a scratch git repository and show the result.
set -euo pipefail
ralph="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/ralph-demo.XXXXXX")"
cp "$here/ralph.yml" "$here/agent.sh" "$work/"
cd "$work"
git init -q . && git add -A && git -c user.name=demo -c user.email=demo@example.com commit -qm "demo start"

echo "== ralph loop -c ralph.yml   (in $work)"
set +e
"$ralph" loop -c ralph.yml
code=$?
set -e
echo
echo "== exit status: $code"
echo "== greeting.txt:"
cat greeting.txt
echo
echo "== the event log (ralph events --topic '*'):"
"$ralph" events
echo
echo "== the demo's workspace is kept for you to look at: $work (rm -rf it when done)"
exit "$code"
