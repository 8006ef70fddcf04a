#!/usr/bin/env bash
# Runs the OCI runtime validation suite (github.com/opencontainers/runtime-tools
# v0.9.0, the version the module proxy serves) against runsc and prints one
# line per validation program with its TAP counts; the full TAP output of
# each goes to $OUT/<name>.tap.
#
#   runsc/container/testdata/oci-validation.sh [RUNSC] [PROGRAM...]
#
# RUNSC defaults to a fresh CGO_ENABLED=0 build. The runtime is run as
# `runsc --overlay=none --root $OUT/root`, so that the container and the
# hooks write into the bundle as the tests expect. Building the suite the
# first time takes about a minute; it is cached under $CACHE.
set -euo pipefail
cd "$(dirname "$0")/../../.."

CACHE="${MOAT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/moat}/runtime-tools"
OUT="${OUT:-$(mktemp -d /tmp/oci-validation.XXXXXX)}"
mkdir -p "$OUT"
RUNSC="${1:-}"
shift || true
if [ -z "$RUNSC" ]; then
	RUNSC="$OUT/runsc"
	CGO_ENABLED=0 go build -o "$RUNSC" ./runsc
fi

if [ ! -x "$CACHE/runtimetest" ]; then
	dir=$(go mod download -json github.com/opencontainers/runtime-tools@v0.9.0 | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
	rm -rf "$CACHE"
	mkdir -p "$(dirname "$CACHE")"
	cp -r "$dir" "$CACHE"
	chmod -R u+w "$CACHE"
	(
		cd "$CACHE"
		rm -rf Godeps vendor
		go mod init github.com/opencontainers/runtime-tools >/dev/null 2>&1
		go mod edit -require github.com/opencontainers/runtime-spec@v1.0.2 -require github.com/opencontainers/selinux@v1.2.2
		go mod tidy >/dev/null 2>&1
		go mod edit -require github.com/opencontainers/runtime-spec@v1.0.2 -require github.com/opencontainers/selinux@v1.2.2
		mkdir -p vbin
		for d in validation/*/; do
			name=$(basename "$d")
			[ -f "$d/$name.go" ] || continue
			go build -o "vbin/$name" "./$d" || echo "oci-validation: cannot build $name" >&2
		done
		CGO_ENABLED=0 go build -o runtimetest ./cmd/runtimetest
	)
fi

wrapper="$OUT/runsc-wrapper"
printf '#!/bin/sh\nexec %q --overlay=none --root %q "$@"\n' "$RUNSC" "$OUT/root" >"$wrapper"
chmod +x "$wrapper"

programs=("$@")
if [ ${#programs[@]} -eq 0 ]; then
	mapfile -t programs < <(ls "$CACHE/vbin")
fi
pass=0 fail=0
cd "$CACHE"
for p in "${programs[@]}"; do
	RUNTIME="$wrapper" timeout 300 "./vbin/$p" >"$OUT/$p.tap" 2>&1 || true
	ok=$(grep -c '^ok' "$OUT/$p.tap" || true)
	notok=$(grep -c '^not ok' "$OUT/$p.tap" || true)
	pass=$((pass + ok)) fail=$((fail + notok))
	printf '%-40s ok %4d  not ok %3d\n' "$p" "$ok" "$notok"
done
echo "total: ok $pass, not ok $fail (TAP in $OUT)"
