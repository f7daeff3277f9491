#!/bin/bash
# debs.sh — the Debian binary packages, built once for the fleet tests
# (ctest's fixture deploy.debs; ansible.sh and kubernetes.sh use them).
#
#   tests/deploy/debs.sh OUTDIR [SRCDIR]   (SRCDIR: the tree, default this script's)
#
# Copies the tree (git's tracked and untracked-but-not-ignored files, or,
# outside git, everything but build*/ and .git) to a work directory, so that
# nothing is written into the tree, builds the binary packages there
# (dpkg-buildpackage -us -uc -b, DEB_BUILD_OPTIONS="nocheck parallel=2"; no
# source package, no lintian: tests/pkg/deb.sh checks the packages
# themselves) and puts the .deb files in OUTDIR (emptied of older .deb files
# first), with a Packages index so that OUTDIR is also a local apt
# repository ("deb [trusted=yes] file:OUTDIR ./").
#
# Exit 0 built, 1 failed, 77 when a tool it needs is missing (the line says
# which; tools/run-tests installs them).  ET_DEBS_KEEP=1 keeps the work
# directory; ET_DEB_JOBS (default 2) is the build's parallelism.
set -u
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [SRCDIR]" >&2; exit 2; }
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd) || exit 2
src=$(cd "${2:-$(dirname "$0")/../..}" && pwd) || exit 2
jobs=${ET_DEB_JOBS:-2}

ET_TEST_NAME=deploy.debs
. "$(dirname "$0")/../pkg/lib.sh"
t0=$(date +%s)

for c in dpkg-buildpackage dh dpkg-scanpackages cmake; do
	command -v "$c" >/dev/null || skip "$c is missing (Debian: apt-get install debhelper dpkg-dev cmake)"
done
[ -f "$src/debian/control" ] || fail "$src/debian/control: not a tree with Debian packaging"
et_workdir "${TMPDIR:-/tmp}" ET_DEBS_KEEP
W=$ET_WORK
unset LD_PRELOAD LD_LIBRARY_PATH
et_clear_env

version=$(sed -n 's/^project(enormoustext VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project(enormoustext VERSION ...) in $src/CMakeLists.txt"

tree=$W/src/libenormoustext-$version
mkdir -p "$tree"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z -co --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done |
		tar -cf - --null -T -) | tar -xf - -C "$tree" || fail "cannot copy $src (git ls-files) to $tree"
else
	(cd "$src" && tar -cf - --exclude='./build*' --exclude=./.git --exclude=./obj-* .) |
		tar -xf - -C "$tree" || fail "cannot copy $src to $tree"
fi

(cd "$tree" && DEB_BUILD_OPTIONS="nocheck parallel=$jobs" dpkg-buildpackage -us -uc -b) >"$W/build.log" 2>&1 ||
	{ tail -n 60 "$W/build.log"; fail "dpkg-buildpackage -us -uc -b failed (the last 60 lines above)"; }
ls "$W"/src/*.deb >/dev/null 2>&1 || fail "dpkg-buildpackage made no .deb: $(ls "$W/src")"
rm -f "$out"/*.deb "$out"/Packages
cp "$W"/src/*.deb "$out"/ || fail "cannot copy the packages to $out"
(cd "$out" && dpkg-scanpackages --multiversion . >Packages 2>/dev/null) || fail "dpkg-scanpackages failed in $out"
for p in libenormoustext0 enormoustext; do
	ls "$out/${p}_${version}_"*.deb >/dev/null 2>&1 || fail "no ${p}_${version}_*.deb in $out"
done
note "$(cd "$out" && echo *.deb) in $out ($(($(date +%s) - t0)) s)"
pass
