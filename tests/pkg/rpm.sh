#!/bin/bash
# rpm.sh — the RPM packages (tools/rpm/enormoustext.spec): built with
# rpmbuild from a copy of the tree, inspected, and working as installed.
#
#   tests/pkg/rpm.sh [SRCDIR]        (SRCDIR: the tree, default this script's)
#
# 1. copies the tree (git's tracked and untracked-but-not-ignored files) to
#    a work directory and runs `rpmbuild -bb --build-in-place --with tests`
#    there (its own _topdir; --nodeps: the build requirements carry RPM
#    names, which a Debian host's rpm database does not have): %check runs
#    the unit tests, which must all pass;
# 2. inspects the four packages (enormoustext, -libs, -devel, -static) with
#    rpm -qlp / -qp: the files each must hold and none in two; -libs
#    provides libenormoustext.so.0 and its version node ENORMOUSTEXT_0 (as
#    rpm's ELF dependency generator writes them), and requires nothing but
#    the C library; the SONAME; the exported symbols are exactly those
#    debian/libenormoustext0.symbols lists (one ABI for both families);
#    the units name /usr/bin/enormoustext and the packaged library; the
#    package's version is the project's;
# 3. runs -libs' %preun scriptlet on a root of its own: on erase the entries
#    naming the library leave /etc/ld.so.preload and the rest stays; on
#    upgrade nothing changes;
# 4. unpacks the packages into a throwaway root (rpm2cpio | cpio: no rpm
#    database, nothing of the host touched) and from there: a program with
#    6 MiB of text preloaded with ROOT/usr/lib64/libenormoustext.so.0 gets
#    its text huge; ROOT/usr/bin/enormoustext --version and `run` find the
#    library beside the command.
#
# Exit 0 pass, 1 fail, 77 when a tool it needs is missing (the line says
# which).  ET_RPM_KEEP=1 keeps the work directory.
set -u
src=$(cd "${1:-$(dirname "$0")/../..}" && pwd) || exit 2

# tests/lib/lib.sh (fail, skip, exit hooks, the work directory) and the
# package tests' helpers
ET_TEST_NAME=pkg.rpm
. "$(dirname "$0")/lib.sh"
say() { echo "pkg.rpm: $*"; }
t0=$(date +%s)
lap() { say "$* ($(($(date +%s) - t0)) s so far)"; }

for c in rpmbuild rpm rpm2cpio cpio cmake cc readelf nm git; do
	command -v "$c" >/dev/null || {
		skip "$c is missing (Debian: apt-get install rpm cpio cmake gcc binutils git)"
	}
done
spec=$src/tools/rpm/enormoustext.spec
[ -f "$spec" ] || fail "$spec: no spec file"
version=$(sed -n 's/^project(enormoustext VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project(enormoustext VERSION ...) in $src/CMakeLists.txt"
specv=$(sed -n 's/^Version: *//p' "$spec")
[ "$specv" = "$version" ] || fail "the spec says Version: $specv, CMakeLists.txt says $version"
arch=$(rpm --eval '%{_arch}')
case $arch in
x86_64) bits='(64bit)' ;;
aarch64) bits='(64bit)' ;;
*) skip "the spec is for x86_64 and aarch64 (ExclusiveArch), this is $arch" ;;
esac
libdir=$(rpm --eval '%{_libdir}')

unset LD_PRELOAD LD_LIBRARY_PATH
et_clear_env
# the installed library moves the text before main, so that the program
# here sees it at once (by default it waits until a process has lived a
# second: ENORMOUSTEXT_DEFER, with tests of its own)
export ENORMOUSTEXT_DEFER=0

et_workdir "${TMPDIR:-/tmp}" ET_RPM_KEEP
W=$ET_WORK

# ---------------------------------------------------------------- 1. build
tree=$W/src
pkg_copy_tree "$src" "$tree"
(cd "$tree" && rpmbuild -bb --build-in-place --nodeps --with tests --define "_topdir $W/top" \
	--define "_smp_mflags -j${ET_RPM_JOBS:-2}" tools/rpm/enormoustext.spec) >"$W/build.log" 2>&1 ||
	{ tail -n 60 "$W/build.log"; fail "rpmbuild -bb --build-in-place failed (the last 60 lines above)"; }
rpmf() { echo "$W/top/RPMS/$arch/$1-$version-1.$arch.rpm"; }
pkgs=(enormoustext enormoustext-libs enormoustext-devel enormoustext-static)
for p in "${pkgs[@]}"; do
	[ -s "$(rpmf "$p")" ] || fail "no $(basename "$(rpmf "$p")") from rpmbuild: $(ls "$W/top/RPMS/$arch" 2>&1)"
done
# --with tests: %check ran the unit tests in the build root
units=$(sed -n 's/^\(100% tests passed, 0 tests failed out of [0-9]*\)$/\1/p' "$W/build.log")
[ -n "$units" ] || { grep -n 'tests passed\|tests failed\|No tests' "$W/build.log"; fail "%check (--with tests) did not pass the unit tests"; }
lap "built ${pkgs[*]} with rpmbuild -bb --build-in-place --with tests; %check: $units"

# ---------------------------------------------------------------- 2. inspect
for p in "${pkgs[@]}"; do
	rpm -qlp "$(rpmf "$p")" 2>/dev/null | sort >"$W/$p.files"
done
dup=$(cat "$W"/*.files | sort | uniq -d)
[ -z "$dup" ] || fail "files in two packages: $dup"
has() { grep -qxF "$2" "$W/$1.files" || fail "$1 lacks $2 (it has: $(tr '\n' ' ' <"$W/$1.files"))"; }
# a manual page: compressed or not (brp-compress runs where the distribution's
# macros say so)
has_man() { grep -qx "$2\(\.gz\|\.xz\|\.bz2\)\?" "$W/$1.files" || fail "$1 lacks $2 (it has: $(tr '\n' ' ' <"$W/$1.files"))"; }
lacks() { ! grep -q "$2" "$W/$1.files" || fail "$1 holds $(grep "$2" "$W/$1.files" | head -n1), which belongs elsewhere"; }
unitdir=$(rpm --eval '%{?_unitdir}%{!?_unitdir:/usr/lib/systemd/system}')
has enormoustext-libs "$libdir/libenormoustext.so.0"
has enormoustext-libs "$libdir/libenormoustext.so.$version"
lacks enormoustext-libs '^/usr/include/\|\.a$\|\.so$\|pkgconfig\|/cmake/\|/man/\|/bin/'
for f in /usr/include/enormoustext.h "$libdir/libenormoustext.so" "$libdir/pkgconfig/enormoustext.pc" \
	"$libdir/cmake/enormoustext/enormoustextConfig.cmake" "$libdir/cmake/enormoustext/EnormoustextHelpers.cmake" \
	/usr/share/enormoustext/enormous.ld /usr/share/enormoustext/enormous-32m.ld; do
	has enormoustext-devel "$f"
done
has_man enormoustext-devel /usr/share/man/man3/libenormoustext.3
for f in "$src"/libenormoustext/man/*.3; do has_man enormoustext-devel "/usr/share/man/man3/${f##*/}"; done
has enormoustext-static "$libdir/libenormoustext.a"
has_man enormoustext /usr/share/man/man1/enormoustext.1
for f in /usr/bin/enormoustext /usr/share/bash-completion/completions/enormoustext \
	"$unitdir/enormoustext.service" "$unitdir/enormoustext-prometheus.service" "$unitdir/enormoustext-prometheus.timer" \
	/usr/share/doc/enormoustext/examples/systemd/mariadb-hugetext.conf \
	/usr/share/doc/enormoustext/examples/oci/enormoustext.json; do
	has enormoustext "$f"
done
lacks enormoustext '\.so\|/include/'

provides=$(rpm -qp --provides "$(rpmf enormoustext-libs)" 2>/dev/null)
for want in "libenormoustext.so.0()$bits" "libenormoustext.so.0(ENORMOUSTEXT_0)$bits" "enormoustext-libs = $version-1"; do
	grep -qxF "$want" <<<"$provides" || fail "enormoustext-libs does not provide '$want': $(tr '\n' ' ' <<<"$provides")"
done
requires=$(rpm -qp --requires "$(rpmf enormoustext-libs)" 2>/dev/null | grep -v '^rpmlib(' | grep -v '^/bin/sh$')
other=$(grep -v '^libc\.so\.6\|^rtld(GNU_HASH)$\|^ld-linux' <<<"$requires")
[ -z "$other" ] || fail "enormoustext-libs requires more than the C library: $(tr '\n' ' ' <<<"$other")"
grep -q '^libc\.so\.6' <<<"$requires" || fail "enormoustext-libs does not require libc.so.6: $(tr '\n' ' ' <<<"$requires")"
creq=$(rpm -qp --requires "$(rpmf enormoustext)" 2>/dev/null)
grep -qxF "enormoustext-libs(x86-64) = $version-1" <<<"$creq" || grep -qxF "enormoustext-libs(aarch-64) = $version-1" <<<"$creq" ||
	grep -qxF "enormoustext-libs = $version-1" <<<"$creq" || fail "enormoustext does not require enormoustext-libs of its version: $(tr '\n' ' ' <<<"$creq")"
dreq=$(rpm -qp --requires "$(rpmf enormoustext-devel)" 2>/dev/null)
grep -q "^enormoustext-libs.* = $version-1$" <<<"$dreq" || fail "enormoustext-devel does not require enormoustext-libs of its version: $(tr '\n' ' ' <<<"$dreq")"
lap "contents: $(wc -l <"$W/enormoustext-libs.files") + $(wc -l <"$W/enormoustext-devel.files") + $(wc -l <"$W/enormoustext-static.files") + $(wc -l <"$W/enormoustext.files") files, none in two; -libs provides libenormoustext.so.0(ENORMOUSTEXT_0)$bits, requires libc only"

# ---------------------------------------------------------------- 3. %preun
rpm -qp --queryformat '%{PREUN}' "$(rpmf enormoustext-libs)" >"$W/preun" 2>/dev/null
grep -q ld.so.preload "$W/preun" || fail "enormoustext-libs has no %preun that looks after /etc/ld.so.preload: $(head -3 "$W/preun")"
mkdir -p "$W/pr/etc"
printf '%s\n' /usr/lib/other.so:/x.so /etc/enormoustext/preload/libenormoustext.so.0 '#  a comment' \
	"/a.so $libdir/libenormoustext.so.0 /b.so" >"$W/pr/etc/ld.so.preload"
cp "$W/pr/etc/ld.so.preload" "$W/pr.before"
ENORMOUSTEXT_PKG_ROOT=$W/pr sh "$W/preun" 1 || fail "%preun 1 (an upgrade) failed"
cmp -s "$W/pr.before" "$W/pr/etc/ld.so.preload" || fail "%preun on upgrade changed /etc/ld.so.preload"
ENORMOUSTEXT_PKG_ROOT=$W/pr sh "$W/preun" 0 2>"$W/preun.err" || fail "%preun 0 (an erase) failed: $(cat "$W/preun.err")"
want=$(printf '%s\n' /usr/lib/other.so:/x.so '#  a comment' "/a.so /b.so")
[ "$(cat "$W/pr/etc/ld.so.preload")" = "$want" ] ||
	fail "%preun on erase left /etc/ld.so.preload as: $(cat "$W/pr/etc/ld.so.preload") (expected the other entries, as they were)"
printf '%s\n' /etc/enormoustext/preload/libenormoustext.so.0 >"$W/pr/etc/ld.so.preload"
ENORMOUSTEXT_PKG_ROOT=$W/pr sh "$W/preun" 0 2>/dev/null || fail "%preun 0 failed"
[ ! -e "$W/pr/etc/ld.so.preload" ] || fail "%preun on erase left an /etc/ld.so.preload with nothing in it"
lap "%preun: the library's entries out of ld.so.preload on erase, the rest kept; nothing on upgrade"

# ---------------------------------------------------------------- 4. installed
R=$W/root
mkdir -p "$R"
for p in "${pkgs[@]}"; do
	(cd "$R" && rpm2cpio "$(rpmf "$p")" | cpio -idm --quiet) || fail "rpm2cpio | cpio of $p failed"
done
lib=$R$libdir/libenormoustext.so.0
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libenormoustext.so.0 ] || fail "the SONAME of $lib is '$soname'"
readelf -d "$lib" | grep -q 'NEEDED.*libelf' && fail "$lib needs libelf: the runtime library must need libc only"
have=$(nm -D --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sed 's/@@*.*//' | sort -u)
listed=$(sed -n 's/^ \([^@ ]*\)@.*/\1/p' "$src/debian/libenormoustext0.symbols" | sort -u)
[ "$have" = "$listed" ] || fail "the RPM's library exports differ from debian/libenormoustext0.symbols: $(diff <(echo "$listed") <(echo "$have") | grep '^[<>]' | tr '\n' ' ')"
grep -qx "ExecStart=/usr/bin/enormoustext stat --prometheus --all -o /var/lib/prometheus/node-exporter/enormoustext.prom" \
	"$R$unitdir/enormoustext-prometheus.service" || fail "the packaged service does not run /usr/bin/enormoustext"
grep -qx "Environment=LD_PRELOAD=$libdir/libenormoustext.so.0" "$R/usr/share/doc/enormoustext/examples/systemd/mariadb-hugetext.conf" ||
	fail "the packaged drop-in does not preload $libdir/libenormoustext.so.0: $(grep LD_PRELOAD "$R/usr/share/doc/enormoustext/examples/systemd/mariadb-hugetext.conf")"

pkg_program
pkg_preloaded "$lib"
lap "preloaded from the root: $sum"

cmd=$R/usr/bin/enormoustext
pkg_command "$cmd" "$R$libdir"
lap "$cmd --version and run -n: the library beside it"
say "ok"
exit 0
