#!/bin/bash
# debs.sh — the Debian packages, built once for the fleet tests (ctest's
# fixture deploy.debs; ansible.sh and kubernetes.sh use them) and for
# tests/pkg/deb.sh, which checks the same build rather than making its own.
#
#   tests/deploy/debs.sh OUTDIR [SRCDIR]   (SRCDIR: the tree, default this script's)
#
# Copies the tree (tests/pkg/lib.sh pkg_copy_tree: git's tracked and
# untracked-but-not-ignored files) to OUTDIR-build/src, so that nothing is
# written into the tree, and builds there what tests/pkg/deb.sh checks: the
# source package (dpkg-source -b) and the binary packages (dpkg-buildpackage
# -us -uc -b, DEB_BUILD_OPTIONS="nocheck parallel=2"), their logs in
# OUTDIR-build (source.log, build.log) with the digest of the copied tree
# (tree.sha256, pkg_tree_digest) taken before the build.  The .deb files go
# to OUTDIR too (older .deb files removed first), with a Packages index so
# that OUTDIR is also a local apt repository ("deb [trusted=yes] file:OUTDIR ./").
#
# Exit 0 built, 1 failed, 77 when a tool it needs is missing (the line says
# which; tools/run-tests installs them).  ET_DEB_JOBS (default 2) is the
# build's parallelism.
set -u
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [SRCDIR]" >&2; exit 2; }
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd) || exit 2
src=$(cd "${2:-$(dirname "$0")/../..}" && pwd) || exit 2
jobs=${ET_DEB_JOBS:-2}

ET_TEST_NAME=deploy.debs
. "$(dirname "$0")/../pkg/lib.sh"
t0=$(date +%s)

for c in dpkg-buildpackage dpkg-source dh dpkg-scanpackages cmake; do
	command -v "$c" >/dev/null || skip "$c is missing (Debian: apt-get install debhelper dpkg-dev cmake)"
done
[ -f "$src/debian/control" ] || fail "$src/debian/control: not a tree with Debian packaging"
# (beside OUTDIR, not in it: dpkg-scanpackages indexes every .deb below it)
W=$out-build
rm -rf "$W" || fail "cannot remove the build of before, $W"
unset LD_PRELOAD LD_LIBRARY_PATH
et_clear_env

version=$(sed -n 's/^project(enormoustext VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project(enormoustext VERSION ...) in $src/CMakeLists.txt"

tree=$W/src/libenormoustext-$version
pkg_copy_tree "$src" "$tree"
pkg_tree_digest "$tree" >"$W/tree.sha256" || fail "cannot take the digest of $tree"
(cd "$W/src" && dpkg-source -b "libenormoustext-$version") >"$W/source.log" 2>&1 ||
	{ cat "$W/source.log"; fail "dpkg-source -b failed"; }
(cd "$tree" && DEB_BUILD_OPTIONS="nocheck parallel=$jobs" dpkg-buildpackage -us -uc -b) >"$W/build.log" 2>&1 ||
	{ tail -n 60 "$W/build.log"; fail "dpkg-buildpackage -us -uc -b failed (the last 60 lines above)"; }
ls "$W"/src/*.deb >/dev/null 2>&1 || fail "dpkg-buildpackage made no .deb: $(ls "$W/src")"
rm -f "$out"/*.deb "$out"/Packages
cp "$W"/src/*.deb "$out"/ || fail "cannot copy the packages to $out"
(cd "$out" && dpkg-scanpackages --multiversion . >Packages 2>/dev/null) || fail "dpkg-scanpackages failed in $out"
for p in libenormoustext0 enormoustext; do
	ls "$out/${p}_${version}_"*.deb >/dev/null 2>&1 || fail "no ${p}_${version}_*.deb in $out"
done
note "$(cd "$out" && echo *.deb) in $out, the build in $W ($(($(date +%s) - t0)) s)"
pass
