#!/usr/bin/env bash
# Installs what building and testing Moat needs on Debian: gcc and the C
# library headers (static test programs), man pages for syscalls, static
# busybox, python3, sqlite3, make, tar and util-linux's flock (end-to-end
# tests), containerd (the shim's tests drive a private containerd 1.6 with
# ctr), docker.io (the Docker tests start a private dockerd), runc (the
# reference those tests and the startup benchmark compare against), and for
# the CRI tests (test/cri) docker-registry, umoci, skopeo and
# containernetworking-plugins (a private registry, images built here, a
# bridge pod network).
# Idempotent, and quick when
# everything is already there. Go itself must already be installed.
set -euo pipefail

pkgs=(busybox-static gcc libc6-dev make manpages-dev python3 sqlite3 tar util-linux containerd docker.io runc
	docker-registry umoci skopeo containernetworking-plugins iproute2)

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "setup-deps: all present (${pkgs[*]})"
else
	echo "setup-deps: installing ${missing[*]}"
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	export DEBIAN_FRONTEND=noninteractive
	# Update the package lists only if an install fails without it (a
	# fresh machine has none).
	if ! $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null; then
		$sudo apt-get update -q </dev/null
		$sudo apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
	fi
fi

for tool in go gcc /bin/busybox /usr/bin/python3 containerd ctr dockerd runc docker-registry umoci skopeo /usr/lib/cni/bridge ip; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "setup-deps: $tool is still missing" >&2
		exit 1
	fi
done
