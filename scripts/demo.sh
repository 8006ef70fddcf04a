#!/usr/bin/env bash
# Builds runsc and runs a static busybox shell inside a Moat sandbox whose
# root file system is the host's /, served read-only.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup-deps.sh
mkdir -p bin
echo "demo: building runsc"
go build -o bin/runsc ./runsc

echo "demo: running busybox in the sandbox"
set -x
./bin/runsc do --rootfs / -- /bin/busybox sh -c \
	'echo hello from moat; busybox uname -a; busybox ls /; echo "pid $$, uid $(busybox id -u)"'
