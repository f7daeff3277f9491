#!/usr/bin/env bash
# deps.sh DIR — what tests/aarch64/run.sh needs on a Debian 12 x86_64 machine,
# installed beside the host's test packages (as root): arm64 as a second dpkg
# architecture, qemu-user, the arm64 C library and the Criterion runtime's
# co-installable dependencies; libcriterion3:arm64 and libnanomsg5:arm64
# cannot be installed beside the host's libcriterion-dev, so they are
# unpacked into DIR.  Prints the ET_AARCH64_CRITERION_LIBRARY setting for
# run.sh.
set -euo pipefail
dir=${1:?usage: deps.sh DIR}
export DEBIAN_FRONTEND=noninteractive
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64
	apt-get update -qq
fi
apt-get install -y -qq qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
	libc6:arm64 libffi8:arm64 libgit2-1.5:arm64 >/dev/null
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -qq libcriterion3:arm64 libnanomsg5:arm64 2>/dev/null)
for d in "$tmp"/*.deb; do dpkg-deb -x "$d" "$dir"; done
lib=$dir/usr/lib/aarch64-linux-gnu/libcriterion.so.3
[ -e "$lib" ] || { echo "deps.sh: $lib was not unpacked" >&2; exit 1; }
echo "ET_AARCH64_CRITERION_LIBRARY=$lib"
