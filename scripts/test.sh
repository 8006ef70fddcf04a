#!/usr/bin/env bash
# The project's whole test run: formatting, vet, build, unit tests (with the
# race detector) and the native-vs-sandbox tests under test/. Fails loudly
# at the first broken step; prints a summary line at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
step() { echo; echo "=== $*"; }

step "dependencies"
./scripts/setup-deps.sh

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go') 2>&1 || true)
if [ -n "$unformatted" ]; then
	echo "these files need gofmt:" >&2
	echo "$unformatted" >&2
	exit 1
fi
echo "gofmt: clean"

step "go vet ./..."
go vet ./...

step "go build ./..."
go build ./...

# Unit tests of the kernel, the gofer, the shim and the shared internal
# packages, with the race detector. Packages
# that do not exist yet are skipped, packages without tests are fine.
unit=()
for d in sentry gofer shim internal; do
	if [ -d "$d" ]; then
		unit+=("./$d/...")
	fi
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ "${#unit[@]}" -gt 0 ]; then
	step "go test -race ${unit[*]}"
	go test -race -timeout 10m "${unit[@]}" 2>&1 | tee -a "$log"
fi

# The runtime's host side: seccomp compiler and filters (a denied syscall
# must kill a real child), pivot, capabilities, and `runsc do` end to end
# (including the self-test that an open from the Sentry is killed). Not
# under -race: the all-threads security calls need a pure-Go build.
step "go test ./runsc/..."
CGO_ENABLED=0 go test -count=1 -timeout 10m -skip 'TestOCIValidation$' ./runsc/... 2>&1 | tee -a "$log"

# The OCI runtime validation suite (opencontainers/runtime-tools) against
# runsc, verbose so that its per-program TAP counts stay in the output; it
# fails when an assertion of the committed baseline
# (runsc/container/testdata/oci-validation-baseline.txt) stops passing.
step "OCI validation suite"
MOAT_REQUIRE_ALL=1 CGO_ENABLED=0 go test -count=1 -timeout 15m -v -run 'TestOCIValidation$' ./runsc/container 2>&1 | tee -a "$log"

# Tools: the benchmark programs still build and run (no timing checks).
step "go test ./tools/..."
go test -timeout 5m ./tools/... 2>&1 | tee -a "$log"

# Conformance (test/syscalls) and end-to-end tests: every C program and
# real program natively and under runsc (test/e2e), containerd with our
# shim (test/shim, with Debian's containerd 1.6 and with containerd 2.4
# built from its module and cached under $MOAT_CACHE) and Docker with runsc
# as its runtime (test/docker).
step "go test ./test/..."
MOAT_REQUIRE_ALL=1 go test -count=1 -timeout 40m ./test/... 2>&1 | tee -a "$log"

# critest, cri-tools' CRI validation suite, through containerd's CRI plugin
# with runc and then with Moat (test/cri TestCritest; about 5 minutes on a
# quiet 2-core machine): fails when a spec of the committed baseline
# (test/cri/testdata/critest-baseline.txt) stops passing with Moat, naming
# the spec and the runtime handler.
step "critest (runc, then Moat)"
MOAT_CRITEST=1 MOAT_REQUIRE_ALL=1 go test -count=1 -timeout 40m -v -run 'TestCritest$' ./test/cri 2>&1 | tee -a "$log"

packages=$(grep -c -E '^ok ' "$log" || true)
echo
echo "test.sh: PASS: gofmt, vet, build and $packages test packages in $(( $(date +%s) - start ))s"
