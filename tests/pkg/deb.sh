#!/bin/bash
# deb.sh — the Debian packages (debian/): built from a copy of the tree, clean
# under lintian, and working as installed.
#
#   tests/pkg/deb.sh [SRCDIR]        (SRCDIR: the tree, default this script's)
#
# 1. copies the tree (git's tracked and untracked-but-not-ignored files, or,
#    outside git, everything but build*/ and .git) to a work directory, so
#    that nothing is written into the tree itself;
# 2. builds the source package (dpkg-source -b) and the binary packages
#    (dpkg-buildpackage -us -uc -b, DEB_BUILD_OPTIONS="nocheck parallel=2"):
#    libenormoustext0, libenormoustext-dev, enormoustext, and on amd64
#    enormoustext-itlbgrind (the model, installed beside Valgrind's tools,
#    depending on the Valgrind it was built with); with ET_DEB_BUILT=DIR
#    (tests/deploy/debs.sh's OUTDIR-build, as tools/run-tests passes it)
#    it takes that build instead, where the digest of its copy of the tree
#    (tests/pkg/lib.sh pkg_tree_digest) is this copy's, and says so;
# 3. runs lintian on the .dsc and the .changes: an error or a warning that
#    no override explains fails the test (info and pedantic tags are shown);
# 4. checks what each package holds (no file in two of them; the SONAME
#    and the package name agree; the -dev package has a man 3 page for each
#    function of enormoustext.h);
#    libenormoustext0's prerm (run with DPKG_ROOT): on removal it takes the
#    library's entries out of /etc/ld.so.preload and keeps the others;
# 5. unpacks the packages into a throwaway root with `dpkg -x`: no
#    package database, no maintainer script, nothing of the host's /usr or
#    /var/lib/dpkg touched, no root needed (`dpkg --root` would also want
#    libc6 and libelf1 "installed" in that root, for nothing more to check
#    here); and from that root:
#    - a program with 6 MiB of text, preloaded with
#      ROOT/usr/lib/<multiarch>/libenormoustext.so.0 and ENORMOUSTEXT_VERBOSE=1:
#      the summary line says text went huge, and the program's own smaps
#      agree (a run without the library first: nothing huge);
#    - the systemd units (the Prometheus service and timer, the MariaDB
#      drop-in example) name /usr/bin/enormoustext and the packaged
#      library, and `systemd-analyze verify --root=ROOT` accepts them;
#    - on amd64, the packaged `enormoustext compare --counters model` with the
#      packaged itlbgrind: fewer L1 iTLB misses with the library;
#    - ROOT/usr/bin/enormoustext --version and `run`: the command finds the
#      library beside itself (also in a root with only libenormoustext0 and
#      enormoustext unpacked: no development link needed);
#    - the same program linked against the -dev package through pkg-config
#      and through CMake's find_package(enormoustext) (+ enormoustext_huge_text),
#      run: the API says the text is huge and gives the library's version;
#    - man -k (apropos, after mandb into an index of that root's own) finds
#      libenormoustext(3), a page for each function, and enormoustext(1);
#      each page renders with man -l without a warning and parses with lexgrog.
#
# Exit 0 pass, 1 fail, 77 when a tool it needs is missing (the line says
# which; tools/run-tests installs them).  ET_DEB_KEEP=1 keeps the work
# directory; ET_DEB_JOBS (default 2) is the build's parallelism.
set -u
src=$(cd "${1:-$(dirname "$0")/../..}" && pwd) || exit 2
jobs=${ET_DEB_JOBS:-2}

# tests/lib/lib.sh (fail, skip, exit hooks, the work directory) and the
# package tests' helpers
ET_TEST_NAME=pkg.deb
. "$(dirname "$0")/lib.sh"
say() { echo "pkg.deb: $*"; }
t0=$(date +%s)
lap() { say "$* ($(($(date +%s) - t0)) s so far)"; }

for c in dpkg-buildpackage dpkg-source dh lintian cmake pkg-config cc man mandb apropos lexgrog readelf; do
	command -v "$c" >/dev/null || {
		skip "$c is missing (Debian: apt-get install debhelper dpkg-dev lintian cmake pkg-config gcc man-db binutils)"
	}
done
[ -f "$src/debian/control" ] || fail "$src/debian/control: not a tree with Debian packaging"

et_workdir "${TMPDIR:-/tmp}" ET_DEB_KEEP
W=$ET_WORK
unset LD_PRELOAD LD_LIBRARY_PATH PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR MANPATH
et_clear_env
# the installed library moves the text before main, so that each program
# here sees it at once (by default it waits until a process has lived a
# second: ENORMOUSTEXT_DEFER, with tests of its own)
export ENORMOUSTEXT_DEFER=0

version=$(sed -n 's/^project(enormoustext VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project(enormoustext VERSION ...) in $src/CMakeLists.txt"
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH) || fail "dpkg-architecture gives no multiarch triplet"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)

# ---------------------------------------------------------------- 1. copy
tree=$W/src/libenormoustext-$version
ingit=0
git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 && ingit=1
# what git sees in the tree, to show at the end that nothing was written there
tree_state() { ((ingit)) && git -C "$src" status --porcelain --ignored=matching -- debian . 2>/dev/null | grep -v ' build[^/]*/$'; }
before=$(tree_state)
pkg_copy_tree "$src" "$tree"
digest=$(pkg_tree_digest "$tree") || fail "cannot take the digest of $tree"

# ---------------------------------------------------------------- 2. build
# (or tests/deploy/debs.sh's build, ET_DEB_BUILT=DIR: the same two commands
# with the same options on a copy whose digest is this copy's; tools/run-tests
# passes the one ctest's deploy.debs made, so the packages are built once)
built=${ET_DEB_BUILT:-}
if [ -n "$built" ]; then
	if [ "$(cat "$built/tree.sha256" 2>/dev/null)" != "$digest" ]; then
		say "not reusing $built: not a build of this tree (its digest $(cat "$built/tree.sha256" 2>/dev/null || echo missing), this tree's $digest): building"
		built=
	elif ! ls "$built/src/libenormoustext_$version.dsc" "$built/src/libenormoustext_${version}_$arch.changes" >/dev/null 2>&1; then
		say "not reusing $built: no .dsc and .changes there (its build failed?): building"
		built=
	fi
fi
if [ -n "$built" ]; then
	rm -rf "$W/src" && cp -a "$built/src" "$W/src" && cp "$built/source.log" "$built/build.log" "$W/" ||
		fail "cannot copy the build of $built"
	lap "the source package and the binary packages: tests/deploy/debs.sh's build of this same tree (digest $digest), from $built"
else
	(cd "$W/src" && dpkg-source -b "libenormoustext-$version") >"$W/source.log" 2>&1 ||
		{ cat "$W/source.log"; fail "dpkg-source -b failed"; }
	(cd "$tree" && DEB_BUILD_OPTIONS="nocheck parallel=$jobs" dpkg-buildpackage -us -uc -b) >"$W/build.log" 2>&1 ||
		{ tail -n 60 "$W/build.log"; fail "dpkg-buildpackage -us -uc -b failed (the last 60 lines above)"; }
	lap "built the source package and the binary packages"
fi
grep -q "make -j$jobs" "$W/build.log" || fail "the package build did not run make -j$jobs (DEB_BUILD_OPTIONS parallel=$jobs)"
grep -q "dpkg-source: info: building libenormoustext in libenormoustext_$version" "$W/source.log" ||
	fail "dpkg-source -b did not say it built libenormoustext_$version: $(tail -n 3 "$W/source.log")"
deb() { echo "$W/src/${1}_${version}_$arch.deb"; }
# enormoustext-itlbgrind (the model, a Valgrind tool) on amd64 only
pkgs=(libenormoustext0 libenormoustext-dev enormoustext)
[ "$arch" = amd64 ] && pkgs+=(enormoustext-itlbgrind)
for p in "${pkgs[@]}"; do
	[ -s "$(deb $p)" ] || fail "no $(basename "$(deb $p)") from dpkg-buildpackage: $(ls "$W/src")"
done

# ---------------------------------------------------------------- 3. lintian
# --fail-on error,warning: an error, or a warning not overridden (with its
# reason) in debian/*.lintian-overrides, fails.
lintian --fail-on error,warning --display-info --pedantic --no-cfg \
	"$W/src/libenormoustext_$version.dsc" "$W/src/libenormoustext_${version}_$arch.changes" \
	>"$W/lintian.log" 2>&1
lrc=$?
grep -v '^running with root privileges' "$W/lintian.log" | sed 's/^/  lintian: /'
[ $lrc = 0 ] || fail "lintian found errors or unexplained warnings (status $lrc, tags above)"
grep -q '^[EW]: ' "$W/lintian.log" && fail "lintian printed an error or a warning tag"
lap "lintian: no error, no unexplained warning ($(grep -c '^[IPX]: ' "$W/lintian.log") info/pedantic/experimental tags)"

# ---------------------------------------------------------------- 4. contents
for p in "${pkgs[@]}"; do
	dpkg-deb -c "$(deb $p)" | awk '{ print $6 }' | sed 's|^\./||; /\/$/d' | sort >"$W/$p.files"
done
dup=$(sort "$W"/*.files | uniq -d)
[ -z "$dup" ] || fail "files in two packages: $dup"
has() { grep -qxF "$2" "$W/$1.files" || fail "$1 lacks $2 (it has: $(tr '\n' ' ' <"$W/$1.files"))"; }
lacks() { ! grep -q "$2" "$W/$1.files" || fail "$1 holds $(grep "$2" "$W/$1.files" | head -n1), which belongs elsewhere"; }
L=usr/lib/$ma
has libenormoustext0 "$L/libenormoustext.so.0"
has libenormoustext0 "$L/libenormoustext.so.$version"
lacks libenormoustext0 '^usr/include/\|\.a$\|\.so$\|pkgconfig\|/cmake/\|/man/'
for f in usr/include/enormoustext.h "$L/libenormoustext.a" "$L/libenormoustext.so" "$L/pkgconfig/enormoustext.pc" \
	"$L/cmake/enormoustext/enormoustextConfig.cmake" "$L/cmake/enormoustext/enormoustextConfigVersion.cmake" \
	"$L/cmake/enormoustext/enormoustextTargets.cmake" "$L/cmake/enormoustext/EnormoustextHelpers.cmake" \
	usr/share/enormoustext/enormous.ld usr/share/enormoustext/enormous-32m.ld \
	usr/share/man/man3/libenormoustext.3.gz; do
	has libenormoustext-dev "$f"
done
lacks libenormoustext-dev "\.so\.0"
api=$(grep -oE '\benormoustext_[a-z_]+\(' "$src/libenormoustext/include/enormoustext.h" | tr -d '(' | sort -u)
[ "$(echo "$api" | wc -l)" -ge 6 ] || fail "fewer than 6 functions found in enormoustext.h: $api"
for fn in $api; do has libenormoustext-dev "usr/share/man/man3/$fn.3.gz"; done
has enormoustext usr/bin/enormoustext
has enormoustext usr/share/man/man1/enormoustext.1.gz
has enormoustext usr/share/bash-completion/completions/enormoustext
lacks enormoustext '^usr/lib/\|^usr/include/'
dep=$(dpkg-deb -f "$(deb enormoustext)" Depends)
case ", $dep," in *", libenormoustext0 (= $version),"*) ;; *) fail "enormoustext does not depend on libenormoustext0 (= $version): $dep" ;; esac
dep=$(dpkg-deb -f "$(deb libenormoustext-dev)" Depends)
case ", $dep," in *", libenormoustext0 (= $version),"*) ;; *) fail "libenormoustext-dev does not depend on libenormoustext0 (= $version): $dep" ;; esac
# itlbgrind: beside Valgrind's own tools (where `valgrind --tool=NAME` looks),
# depending on the very Valgrind it was linked with
if [ "$arch" = amd64 ]; then
	vgdir=$(dirname "$(dpkg -L valgrind | grep '/memcheck-amd64-linux$' | head -n1)")
	[ "$vgdir" != . ] || fail "dpkg -L valgrind lists no memcheck-amd64-linux: where are Valgrind's tools?"
	has enormoustext-itlbgrind "${vgdir#/}/itlbgrind-amd64-linux"
	[ "$(wc -l <"$W/enormoustext-itlbgrind.files")" -le 8 ] ||
		fail "enormoustext-itlbgrind holds more than the tool and its docs: $(tr '\n' ' ' <"$W/enormoustext-itlbgrind.files")"
	vgv=$(dpkg-query -W -f='${Version}' valgrind)
	dep=$(dpkg-deb -f "$(deb enormoustext-itlbgrind)" Depends)
	case ", $dep," in *", valgrind (= $vgv),"*) ;; *) fail "enormoustext-itlbgrind does not depend on valgrind (= $vgv), the version it was built with: $dep" ;; esac
fi

# libenormoustext0's prerm: on removal the entries naming the library leave
# /etc/ld.so.preload (the loader would complain in every process after),
# the others stay as they were; on upgrade nothing changes (DPKG_ROOT: a
# root of our own)
dpkg-deb -e "$(deb libenormoustext0)" "$W/ctl" || fail "dpkg-deb -e libenormoustext0 failed"
[ -x "$W/ctl/prerm" ] || fail "libenormoustext0 has no prerm"
mkdir -p "$W/pr/etc"
printf '%s\n' /usr/lib/other.so:/x.so "/usr/lib/$ma/enormoustext/preload/libenormoustext.so" '#  a comment' \
	"/a.so /usr/lib/$ma/libenormoustext.so.0 /b.so" >"$W/pr/etc/ld.so.preload"
cp "$W/pr/etc/ld.so.preload" "$W/pr.before"
DPKG_ROOT=$W/pr sh "$W/ctl/prerm" upgrade 0.2.0 || fail "prerm upgrade failed"
cmp -s "$W/pr.before" "$W/pr/etc/ld.so.preload" || fail "prerm upgrade changed /etc/ld.so.preload"
DPKG_ROOT=$W/pr sh "$W/ctl/prerm" remove 2>"$W/prerm.err" || fail "prerm remove failed: $(cat "$W/prerm.err")"
want=$(printf '%s\n' /usr/lib/other.so:/x.so '#  a comment' "/a.so /b.so")
[ "$(cat "$W/pr/etc/ld.so.preload")" = "$want" ] ||
	fail "prerm remove left /etc/ld.so.preload as: $(cat "$W/pr/etc/ld.so.preload") (expected the other entries, as they were)"
printf '%s\n' /etc/enormoustext/preload/libenormoustext.so.0 "/usr/lib/$ma/enormoustext/preload/libenormoustext.so" >"$W/pr/etc/ld.so.preload"
DPKG_ROOT=$W/pr sh "$W/ctl/prerm" remove 2>/dev/null || fail "prerm remove failed"
[ ! -e "$W/pr/etc/ld.so.preload" ] || fail "prerm remove left an /etc/ld.so.preload with nothing in it: $(cat "$W/pr/etc/ld.so.preload")"
lap "prerm: the library's entries out of ld.so.preload on removal, the rest kept; nothing on upgrade"

# ---------------------------------------------------------------- 5. installed
R=$W/root
for p in "${pkgs[@]}"; do dpkg -x "$(deb $p)" "$R" || fail "dpkg -x $p failed"; done
lib=$R/$L/libenormoustext.so.0
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libenormoustext.so.0 ] || fail "the SONAME of $lib is '$soname', the package libenormoustext0 says libenormoustext.so.0"
readelf -d "$lib" | grep -q 'NEEDED.*libelf' && fail "$lib needs libelf: the runtime library must need libc only"
shlibs=$(dpkg-deb -I "$(deb libenormoustext0)" shlibs 2>/dev/null)
symbols=$(dpkg-deb -I "$(deb libenormoustext0)" symbols 2>/dev/null)
case $symbols in *"libenormoustext.so.0 libenormoustext0 #MINVER#"*) ;; *) fail "libenormoustext0 has no symbols file for libenormoustext.so.0: $symbols" ;; esac
case $shlibs in *"libenormoustext 0 libenormoustext0"*) ;; *) fail "libenormoustext0's shlibs file does not name libenormoustext 0: $shlibs" ;; esac
# the symbols file lists exactly what the library exports
have=$(nm -D --defined-only "$lib" | awk 'NF == 3 && $2 == "A" { print $3 "@" $3; next } NF == 3 { print $3 }' |
	sed 's/@@*/@/; /@/!s/$/@Base/' | sort -u)
listed=$(echo "$symbols" | sed -n 's/^ \([^ ]*\) .*/\1/p' | sort -u)
[ "$have" = "$listed" ] || fail "the symbols file and the library's exports differ: $(diff <(echo "$listed") <(echo "$have") | grep '^[<>]' | tr '\n' ' ')"

pkg_program
pkg_preloaded "$lib"
lap "preloaded from the root: $sum"

# the command, found and finding its library in the root
cmd=$R/usr/bin/enormoustext
pkg_command "$cmd" "$R/$L"
# the completion from the package: bash loads it, and it offers the
# subcommands (completing the first word after `enormoustext st`)
comp=$R/usr/share/bash-completion/completions/enormoustext
words=$(bash -c '. "$1" && complete -p enormoustext >/dev/null && f=$(complete -p enormoustext | sed -n "s/.*-F \([^ ]*\).*/\1/p") &&
	COMP_WORDS=(enormoustext st) COMP_CWORD=1 COMP_LINE="enormoustext st" COMP_POINT=15 && "$f" enormoustext st enormoustext &&
	printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" 2>&1) || fail "bash cannot load the packaged completion $comp: $words"
grep -qx stat <<<"$words" && grep -qx status <<<"$words" || fail "the packaged completion does not offer stat and status for 'enormoustext st': $words"
# the systemd units, with the packages' paths: the Prometheus service and
# timer in systemd's directory, the MariaDB drop-in among the examples; each
# names the packaged command and library, and systemd-analyze verifies them
# against the unpacked root (where those paths exist)
u=lib/systemd/system
for f in "$u/enormoustext.service" "$u/enormoustext-prometheus.service" "$u/enormoustext-prometheus.timer" \
	usr/share/doc/enormoustext/examples/systemd/mariadb-hugetext.conf; do
	has enormoustext "$f"
	! grep -q /usr/local "$R/$f" || fail "the packaged $f names /usr/local: $(grep /usr/local "$R/$f" | head -n1)"
done
grep -qx "ExecStart=/usr/bin/enormoustext stat --prometheus --all -o /var/lib/prometheus/node-exporter/enormoustext.prom" \
	"$R/$u/enormoustext-prometheus.service" || fail "the packaged service does not run /usr/bin/enormoustext: $(grep ExecStart "$R/$u/enormoustext-prometheus.service")"
dropin=$R/usr/share/doc/enormoustext/examples/systemd/mariadb-hugetext.conf
grep -qx "Environment=LD_PRELOAD=/$L/libenormoustext.so.0" "$dropin" ||
	fail "the packaged drop-in does not preload /$L/libenormoustext.so.0: $(grep LD_PRELOAD "$dropin")"
grep -qx "ExecStartPre=-/usr/bin/enormoustext prime /usr/sbin/mariadbd" "$dropin" ||
	fail "the packaged drop-in does not prime with /usr/bin/enormoustext: $(grep ExecStartPre "$dropin")"
if command -v systemd-analyze >/dev/null; then
	# a copy of the root, with the host's own units beside ours (verify
	# wants the targets they order after) and a /bin/true for the drop-in's
	# test unit; --man=no: the host's man cannot see the root's page (the
	# Documentation= key's page is the package's: checked here)
	grep -qx 'Documentation=man:enormoustext(1)' "$R/$u/enormoustext-prometheus.service" && has enormoustext usr/share/man/man1/enormoustext.1.gz ||
		fail "the packaged service names no documentation, or not the packaged man page"
	V=$W/root-verify
	mkdir -p "$V" && cp -a "$R/." "$V/" && mkdir -p "$V/etc/systemd/system" "$V/bin" &&
		cp -rn /lib/systemd/system/. "$V/$u/" && cp /bin/true "$V/bin/true" || fail "cannot make $V"
	{ printf '[Unit]\nDescription=check\n[Service]\nExecStart=/bin/true\n'
	  sed -n '/^\[Service\]/,$p' "$dropin" | tail -n +2; } >"$V/etc/systemd/system/hugetext-check.service"
	grep -qx "ExecStart=/usr/bin/enormoustext daemon" "$R/$u/enormoustext.service" ||
		fail "the packaged daemon's unit does not run /usr/bin/enormoustext daemon: $(grep ExecStart "$R/$u/enormoustext.service")"
	systemd-analyze verify --man=no --root="$V" "$u/enormoustext.service" "$u/enormoustext-prometheus.service" "$u/enormoustext-prometheus.timer" \
		etc/systemd/system/hugetext-check.service >"$W/verify.log" 2>&1 ||
		{ cat "$W/verify.log"; fail "systemd-analyze verify --root rejects the packaged units (above)"; }
	[ ! -s "$W/verify.log" ] || { cat "$W/verify.log"; fail "systemd-analyze verify has something to say of the packaged units (above)"; }
	rm -rf "$V"
	lap "systemd units with the packages' paths: systemd-analyze verify --root clean"
else
	say "systemd-analyze is not installed: the packaged units' paths checked, not verified"
fi
# the OCI hook's hooks.d file among the examples: JSON, naming the packaged
# command's oci-hook at createRuntime
hook=usr/share/doc/enormoustext/examples/oci/enormoustext.json
has enormoustext "$hook"
python3 -c 'import json, sys; h = json.load(open(sys.argv[1])); assert h["hook"]["path"] == "/usr/bin/enormoustext", h; assert h["hook"]["args"][1:] == ["oci-hook"], h; assert h["stages"] == ["createRuntime"], h' \
	"$R/$hook" 2>"$W/hook.err" || fail "the packaged OCI hook file is not right: $(tail -1 "$W/hook.err")"

# the dpkg trigger: interest in where programs live; its postinst, run as
# dpkg runs it (triggered), primes again the files the daemon knows, in a
# private mount namespace with a tmpfs over /var/lib (the host's state is
# never touched); a congruent library (enormous.ld), fresh: 0 of 3 windows
# huge before, 3 of 3 after
dpkg-deb -e "$(deb enormoustext)" "$W/ctl-cmd" || fail "dpkg-deb -e enormoustext failed"
for d in /usr/bin /usr/sbin /usr/lib /usr/libexec; do
	grep -qx "interest-noawait $d" "$W/ctl-cmd/triggers" || fail "enormoustext's triggers do not name $d: $(cat "$W/ctl-cmd/triggers" 2>&1)"
done
printf '#include "bigcode.h"\nint big_entry(void) { return bc_run(); }\n' >"$W/trig.c"
cc -O1 -fPIC -shared -I"$src/examples" "$W/trig.c" -Wl,-T,"$src/linker-scripts/enormous.ld" -Wl,-z,max-page-size=0x200000 \
	-Wl,-z,separate-code -o "$W/trig-built.so" && cp "$W/trig-built.so" "$W/trig.so" && sync "$W/trig.so" || fail "cannot build the trigger's library"
"$cmd" prime --check "$W/trig.so" | grep -q '0 of 3 windows' || fail "the fresh library is already huge: the trigger's check would test nothing"
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	W=$W R=$R L=$L unshare -m --propagation private -- sh -c '
		mount -t tmpfs tmpfs /var/lib && mkdir -p /var/lib/enormoustext && echo "$W/trig.so" >/var/lib/enormoustext/known &&
		PATH=$R/usr/bin:$PATH LD_LIBRARY_PATH=$R/$L sh "$W/ctl-cmd/postinst" triggered' || fail "the postinst failed when triggered"
	"$cmd" prime --check "$W/trig.so" | grep -q '3 of 3 windows' || fail "the triggered postinst did not prime the file the daemon knew: $("$cmd" prime --check "$W/trig.so")"
	lap "dpkg trigger: its postinst primed the daemon's known file (0 -> 3 of 3 windows huge)"
else
	say "not root: the trigger's postinst not run (its interest checked)"
fi

# the packaged model, used by the packaged command: `compare --counters model`
# (the tool from the root, with the host's Valgrind core files beside it, as
# they would be in Valgrind's directory)
if [ "$arch" = amd64 ]; then
	mkdir -p "$W/vglib"
	for f in "$vgdir"/*; do ln -s "$f" "$W/vglib/"; done
	rm -f "$W/vglib/itlbgrind-amd64-linux"
	ln -s "$R/${vgdir#/}/itlbgrind-amd64-linux" "$W/vglib/itlbgrind-amd64-linux"
	cmp=$(cd "$W" && ITLBGRIND_LIB=$W/vglib "$cmd" compare --runs 1 --warmup 0 --counters model --json -- "$W/big" 2>&1) ||
		fail "the packaged enormoustext compare --counters model with the packaged itlbgrind failed: $cmp"
	grep -q '"source": "model"' <<<"$cmp" || fail "compare did not count with the model: $cmp"
	pm=$(sed -n '/"plain": {/,/}/s/.*"itlb_misses": \([0-9]*\).*/\1/p' <<<"$cmp")
	lm=$(sed -n '/"library": {/,/}/s/.*"itlb_misses": \([0-9]*\).*/\1/p' <<<"$cmp")
	[ -n "$pm" ] && [ -n "$lm" ] && [ "$pm" -gt "$lm" ] ||
		fail "the packaged model counts '$pm' L1 iTLB misses plain and '$lm' with the library: expected fewer with the library"
	lap "the packaged itlbgrind through the packaged compare: L1 iTLB misses plain $pm, library $lm"
fi
R2=$W/root-nodev
for p in libenormoustext0 enormoustext; do dpkg -x "$(deb $p)" "$R2" || fail "dpkg -x $p failed"; done
# without the -dev package (no development link), the same
pkg_command "$R2/usr/bin/enormoustext" "$R2/$L"
fresh_run "$W/big" "$cmd" run --verbose 1 --
[ $RC = 0 ] || fail "enormoustext run failed (status $RC): $OUT $ERR"
grep -qE '^enormoustext: [0-9]+ of [0-9]+ objects?, [1-9][0-9.]* MiB of ' <<<"$ERR" || fail "enormoustext run --verbose 1: no summary line with text moved: $ERR"
[ "$(kb "$OUT")" -ge 4096 ] || fail "under enormoustext run the program's smaps shows $(kb "$OUT") kB huge: $OUT $ERR"
lap "$cmd --version and run: $(grep '^enormoustext:' <<<"$ERR")"

# linked against the -dev package: pkg-config
pc=$R/$L/pkgconfig
flags=$(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs enormoustext) || fail "pkg-config finds no enormoustext in $pc"
case $flags in *"-I$R/"*"-L$R/"*) ;; *) fail "pkg-config's flags do not point into the root $R: $flags" ;; esac
# shellcheck disable=SC2086 # the flags are words
cc -O1 -DWITH_API -o "$W/big-pc" "$W/big.c" $flags 2>"$W/cc.err" || { cat "$W/cc.err"; fail "cannot compile and link with pkg-config's flags: $flags"; }
readelf -d "$W/big-pc" | grep -q 'NEEDED.*\[libenormoustext\.so\.0\]' || fail "the program linked with -lenormoustext does not need libenormoustext.so.0"
check_api() {
	[ $RC = 0 ] || fail "$1: the linked program failed (status $RC): $OUT $ERR"
	grep -q "^api rc=0 ran=1 huge_bytes=[1-9][0-9]* version=$version header=$version\$" <<<"$OUT" ||
		fail "$1: the API does not say the text went huge with version $version: $OUT $ERR"
	[ "$(kb "$OUT")" -ge 4096 ] || fail "$1: the program's smaps shows $(kb "$OUT") kB huge: $OUT"
}
fresh_run "$W/big-pc" env LD_LIBRARY_PATH="$R/$L"
check_api "pkg-config"
lap "linked with pkg-config: $(grep '^api' <<<"$OUT")"

# linked against the -dev package: CMake
mkdir -p "$W/app"
cp "$W/big.c" "$W/app/big.c"
cat >"$W/app/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(app C)
find_package(enormoustext REQUIRED)
message(STATUS "enormoustext ${enormoustext_VERSION} from ${enormoustext_DIR}")
add_executable(app big.c)
target_compile_definitions(app PRIVATE WITH_API)
target_link_libraries(app PRIVATE enormoustext::enormoustext)
enormoustext_huge_text(app)
CM
cmake -S "$W/app" -B "$W/app/build" -DCMAKE_PREFIX_PATH="$R/usr" -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF \
	>"$W/app.log" 2>&1 || { cat "$W/app.log"; fail "configuring a project with find_package(enormoustext) in $R/usr failed"; }
grep -q "enormoustext $version from $R/$L/cmake/enormoustext\$" "$W/app.log" ||
	fail "find_package(enormoustext) did not take the package in the root: $(grep 'enormoustext ' "$W/app.log")"
cmake --build "$W/app/build" >>"$W/app.log" 2>&1 || { cat "$W/app.log"; fail "building it failed"; }
fresh_run "$W/app/build/app" env LD_LIBRARY_PATH="$R/$L"
check_api "CMake"
lap "linked with CMake's find_package: $(grep '^api' <<<"$OUT")"

# the manual pages
M=$R/usr/share/man
for f in "$M"/man3/*.3.gz "$M"/man1/enormoustext.1.gz; do
	warn=$(MANWIDTH=80 MANPATH=$M LC_ALL=C.UTF-8 man --warnings -l "$f" 2>&1 >/dev/null)
	[ -z "$warn" ] || fail "man -l $f warns: $warn"
	[ "$(MANWIDTH=80 LC_ALL=C.UTF-8 man -l "$f" 2>/dev/null | wc -l)" -gt 5 ] || fail "man -l $f renders nothing"
	(cd "$M" && lexgrog "$f") >/dev/null || fail "lexgrog cannot parse the NAME section of $f"
done
# mandb writes its index into a hierarchy that /etc/manpath.config does not
# name: give it a configuration of its own that puts the index in $W.
printf 'MANDB_MAP %s %s\n' "$M" "$W/mancache" >"$W/manpath.config"
mkdir -p "$W/mancache"
mandb -C "$W/manpath.config" -q "$M" >"$W/mandb.log" 2>&1 || { cat "$W/mandb.log"; fail "mandb on $M failed"; }
found=$(apropos -C "$W/manpath.config" -M "$M" enormoustext 2>&1)
# shellcheck disable=SC2001 # a prefix on every line
sed 's/^/  man -k: /' <<<"$found"
for fn in libenormoustext $api; do
	grep -qE "^$fn \(3\) +- " <<<"$found" || fail "man -k enormoustext does not list $fn(3): $found"
done
grep -qE '^enormoustext \(1\) +- ' <<<"$found" || fail "man -k enormoustext does not list enormoustext(1): $found"
lap "man -k lists libenormoustext(3), $(echo "$api" | wc -l) function pages and enormoustext(1)"

[ "$(tree_state)" = "$before" ] || fail "the build wrote into $src: $(diff <(echo "$before") <(tree_state) | grep '^[<>]' | tr '\n' ' ')"
echo "PASS [pkg.deb]: ${#pkgs[@]} packages built, lintian clean, installed into a throwaway root and used from there ($(($(date +%s) - t0)) s)"
