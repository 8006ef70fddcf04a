#!/usr/bin/env bash
# Rewrites test/syscalls/known_failures.txt to match runsc as committed
# (HEAD, built from a clean export, so uncommitted work in the tree does
# not leak in): one full run drops cases that pass and adds new failures,
# then more runs only add, catching flaky failures. Review the diff, give
# new lines an issue number, and commit it.
#
#   ./scripts/update-known-failures.sh [RUNS]    (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-3}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive HEAD | tar -x -C "$tmp"
echo "update-known-failures: building runsc at $(git rev-parse --short HEAD)"
(cd "$tmp" && go build -o "$tmp/runsc-head" ./runsc)

for i in $(seq 1 "$runs"); do
	mode=add
	[ "$i" -eq 1 ] && mode=1
	echo "update-known-failures: run $i of $runs (MOAT_UPDATE_KNOWN=$mode)"
	MOAT_RUNSC="$tmp/runsc-head" MOAT_UPDATE_KNOWN="$mode" \
		go test -count=1 -timeout 30m ./test/syscalls >/dev/null 2>&1 || true
done
git diff --stat -- test/syscalls/known_failures.txt
