#!/bin/sh
# mkvdso.sh builds vdso.so, Moat's vDSO image, from vdso.c with gcc.
# Run through `go generate ./sentry/vdso`; the result is committed so that
# `go build` needs no C compiler. An argument names another output file
# (the tests rebuild into a temporary directory to check vdso.so is fresh).
set -eu
out=$(realpath -m "${1:-$(dirname "$0")/vdso.so}")
cd "$(dirname "$0")"

CC=${CC:-gcc}
tmp=$out.tmp.$$
trap 'rm -f "$tmp"' EXIT

"$CC" -std=gnu11 -O2 -fPIC -nostdlib -shared -ffreestanding -fno-builtin \
	-fno-stack-protector -fasynchronous-unwind-tables -fno-plt \
	-fcf-protection=none -fvisibility=hidden -mcmodel=small \
	-Wall -Wextra -Werror \
	-Wl,-soname=linux-vdso.so.1 \
	-Wl,--version-script=vdso.map \
	-Wl,--hash-style=both \
	-Wl,--eh-frame-hdr \
	-Wl,--build-id=sha1 \
	-Wl,-Bsymbolic \
	-Wl,--no-undefined \
	-Wl,-z,max-page-size=4096 -Wl,-z,common-page-size=4096 \
	-Wl,-z,noexecstack \
	-Wl,-T,vdso.lds \
	-o "$tmp" vdso.c

# A vDSO is mapped, never relocated: refuse any dynamic relocation.
if command -v readelf >/dev/null 2>&1; then
	if readelf -rW "$tmp" | grep -q 'Relocation section'; then
		echo "mkvdso.sh: $out has relocations:" >&2
		readelf -rW "$tmp" >&2
		exit 1
	fi
fi
mv "$tmp" "$out"
trap - EXIT
