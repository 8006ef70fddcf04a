#!/usr/bin/env bash
# Builds runsc and runs a static busybox shell inside a Moat sandbox whose
# root file system is the host's /, served read-only.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup-deps.sh
# Outside the work tree, so nothing stray shows up in git.
bindir="${MOAT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/moat}/bin"
mkdir -p "$bindir"
echo "demo: building runsc into $bindir"
go build -o "$bindir/runsc" ./runsc

echo "demo: running busybox in the sandbox"
set -x
"$bindir/runsc" do --rootfs / -- /bin/busybox sh -c \
	'echo hello from moat; busybox uname -a; busybox ls /; echo "pid $$, uid $(busybox id -u)"'
