#!/bin/bash
# tool_install — `cmake --install` to a fresh prefix: the command, the man
# page and the bash completion where they belong; `check`'s advice names the
# installed linker script (the build tree's command: the source tree's); the installed command preloads the library installed
# beside it and runs with it; the build tree's command uses the build tree's
# library; a copy with no library near it uses the configured LIBDIR or says
# it cannot find one; ENORMOUSTEXT_LIB.  The command looks for the SONAME
# file (libenormoustext.so.0), which a runtime package without the
# development link has.  docs/install.md's recipes: a program linked with
# pkg-config's flags against the prefix does not find the library at run
# time; with -Wl,-rpath,$(pkg-config --variable=libdir enormoustext) it
# loads the installed one, and so with LD_LIBRARY_PATH.  The uninstall
# target removes every file the install wrote (install_manifest.txt), says
# each, leaves the prefix with no file; the same after a DESTDIR install;
# with no manifest it fails saying so.
. "$(dirname "$0")/lib.sh"

p=$W/prefix
t install -- "$TT_CMAKE" --install "$TT_BUILD_DIR" --prefix "$p"
expect_rc 0 "cmake --install"
cmd=$p/$TT_INSTALL_BINDIR/enormoustext lib=$p/$TT_INSTALL_LIBDIR/libenormoustext.so.0
[ -x "$cmd" ] || fail "the command was not installed as $cmd"
[ -s "$p/$TT_INSTALL_MANDIR/man1/enormoustext.1" ] || fail "the man page was not installed in $TT_INSTALL_MANDIR/man1"
[ -e "$lib" ] || fail "no $lib installed"
t version -- "$cmd" --version
expect_rc 0
# the bash completion, where bash-completion looks for it by the command's name
comp=$p/${TT_INSTALL_DATADIR:-share}/bash-completion/completions/enormoustext
[ -s "$comp" ] || fail "the bash completion was not installed as $comp"
cmp -s "$comp" "$TT_SRC/../../tools/enormoustext.bash-completion" || fail "the installed completion is not tools/enormoustext.bash-completion"
# the systemd units of examples/systemd, with the paths configured for this
# build (a /usr/local prefix by default: systemd reads /usr/local/lib/systemd/system)
for f in lib/systemd/system/enormoustext-prometheus.service lib/systemd/system/enormoustext-prometheus.timer \
	"${TT_INSTALL_DATADIR:-share}/doc/enormoustext/examples/systemd/mariadb-hugetext.conf"; do
	[ -s "$p/$f" ] || fail "$f was not installed under $p"
done
grep -qx "ExecStart=$TT_INSTALL_FULL_BINDIR/enormoustext stat --prometheus --all -o /var/lib/prometheus/node-exporter/enormoustext.prom" \
	"$p/lib/systemd/system/enormoustext-prometheus.service" ||
	fail "the installed service does not run $TT_INSTALL_FULL_BINDIR/enormoustext: $(grep ExecStart "$p/lib/systemd/system/enormoustext-prometheus.service")"
grep -qx "Environment=LD_PRELOAD=$TT_INSTALL_FULL_LIBDIR/libenormoustext.so.0" \
	"$p/${TT_INSTALL_DATADIR:-share}/doc/enormoustext/examples/systemd/mariadb-hugetext.conf" ||
	fail "the installed drop-in does not preload $TT_INSTALL_FULL_LIBDIR/libenormoustext.so.0"
# `check`'s advice names the linker script where this installation has it:
# the installed command, the installed script (not the source tree's
# linker-scripts/enormous.ld, which a package's user does not have)
script=$p/${TT_INSTALL_DATADIR:-share}/enormoustext/enormous.ld
[ -s "$script" ] || fail "no $script installed"
t advice -- "$cmd" check "$HOLD"
expect_rc 0
grep -q "where enormous.ld is $script " "$OUT" || fail "the installed check does not advise the installed $script: $(grep 'where enormous' "$OUT")"
grep -q "linker-scripts/" "$OUT" && fail "the installed check advises the source tree's linker-scripts/"
t advicejson -- "$cmd" check --json "$HOLD"
expect_rc 0; json "$OUT"
jneed "$OUT.flat" '.advice[1]' | grep -qF "$script" || fail "the installed check --json does not name $script: $(jget "$OUT.flat" '.advice[1]')"
# the build tree's command: its source tree's script
t advicebuild -- "$TOOL" check "$HOLD"
grep -q "where enormous.ld is $(cd "$TT_SRC/../.." && pwd)/linker-scripts/enormous.ld " "$OUT" ||
	fail "the build tree's check does not advise its source tree's script: $(grep 'where enormous' "$OUT")"
# The installed command uses the library installed beside it...
t dry -- "$cmd" run -n -- true
expect_rc 0; expect_out "^LD_PRELOAD=$lib\$" "the installed command's default library"
# ... and really runs with it.
fresh a
t runs -- "$cmd" run --report "$W/r.json" -- "$F"
expect_rc 0; json "$W/r.json"
# The build tree's command uses the build tree's library.
t build -- "$TOOL" run -n -- true
expect_out "^LD_PRELOAD=$TT_LIB\$" "the build tree's command's default library"
# A copy with no library beside it: the configured LIBDIR, or a clear error.
mkdir -p "$W/elsewhere/bin" && cp "$cmd" "$W/elsewhere/bin/"
t elsewhere -- "$W/elsewhere/bin/enormoustext" run -n -- true
if [ -e "$TT_INSTALL_FULL_LIBDIR/libenormoustext.so.0" ]; then
	expect_rc 0; expect_out "^LD_PRELOAD=$TT_INSTALL_FULL_LIBDIR/libenormoustext.so.0\$"
else
	expect_bad 1 "no library anywhere" "cannot find libenormoustext\.so\.0 .*give --lib PATH or set ENORMOUSTEXT_LIB"
fi
t elsewhere_env -- ENORMOUSTEXT_LIB="$lib" "$W/elsewhere/bin/enormoustext" run -n -- true
expect_rc 0; expect_out "^LD_PRELOAD=$lib\$"

# --- docs/install.md's recipes for a prefix the loader does not search: a
# program linked with the pkg-config flags alone does not find the
# library at run time; with the rpath of pkg-config's libdir it does (the
# installed file, not another), and with LD_LIBRARY_PATH.
pc=$p/$TT_INSTALL_LIBDIR/pkgconfig
command -v pkg-config >/dev/null || fail "pkg-config is missing (Debian: apt-get install pkg-config)"
cat >"$W/useapi.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <enormoustext.h>
#include <stdio.h>
int main(void)
{
	Dl_info d;
	if (!dladdr((void *)enormoustext_version, &d) || !d.dli_fname)
		return 3;
	printf("%s %s\n", enormoustext_version(), d.dli_fname);
	return 0;
}
C
t pclibdir PKG_CONFIG_PATH="$pc" -- pkg-config --variable=libdir enormoustext
expect_rc 0
libdir=$(cat "$OUT")
[ "$(realpath "$libdir")" = "$(realpath "$p/$TT_INSTALL_LIBDIR")" ] || fail "pkg-config's libdir $libdir is not $p/$TT_INSTALL_LIBDIR"
pcflags=$(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs enormoustext) || fail "pkg-config --cflags --libs enormoustext"
# shellcheck disable=SC2086 # the flags are words
t link_plain -- "$TT_CC" ${TT_CFLAGS:-} -o "$W/useapi" "$W/useapi.c" $pcflags
expect_rc 0 "linking with the pkg-config recipe"
t run_plain -- "$W/useapi"
if [ "$RC" = 0 ]; then
	# a libenormoustext.so.0 the loader finds by itself (installed on this
	# host): not the one under $p all the same
	read -r ver file <"$OUT"
	[ "$(realpath "$file")" != "$(realpath "$lib")" ] || fail "without an rpath the program found $lib under $p"
	note "the loader finds $file by itself on this host: the program without an rpath runs with it, not with $lib"
else
	expect_rc 127 "a program linked against $p without an rpath"
	grep -q "libenormoustext\.so\.0: cannot open shared object file" "$ERR" || fail "the program without an rpath did not fail to find the library: $(cat "$ERR")"
fi
# shellcheck disable=SC2086
t link_rpath -- "$TT_CC" ${TT_CFLAGS:-} -o "$W/useapi.rpath" "$W/useapi.c" $pcflags "-Wl,-rpath,$libdir"
expect_rc 0 "linking with the rpath recipe"
t run_rpath -- "$W/useapi.rpath"
expect_rc 0 "the program linked with the rpath recipe"
read -r ver file <"$OUT"
[ "$ver" = "$("$cmd" --version | cut -d' ' -f2)" ] || fail "the program reports version $ver, the installed command $("$cmd" --version)"
[ "$(realpath "$file")" = "$(realpath "$lib")" ] || fail "the program loaded $file, not the installed $lib"
t run_ldpath LD_LIBRARY_PATH="$p/$TT_INSTALL_LIBDIR" -- "$W/useapi"
expect_rc 0 "the program without an rpath, with LD_LIBRARY_PATH"
read -r ver file <"$OUT"
[ "$(realpath "$file")" = "$(realpath "$lib")" ] || fail "with LD_LIBRARY_PATH the program loaded $file, not the installed $lib"

# --- the uninstall target removes exactly what the install wrote (the
# build tree's install_manifest.txt: tool_package, which installs from the
# same tree, never runs beside this test, RESOURCE_LOCK), and says so.
man=$TT_BUILD_DIR/install_manifest.txt
find "$p" ! -type d | sort >"$W/installed"
sort "$man" >"$W/manifest"
cmp -s "$W/installed" "$W/manifest" || fail "install_manifest.txt is not the files installed under $p: $(diff "$W/installed" "$W/manifest" | head -5)"
n=$(wc -l <"$W/manifest")
t uninstall -- "$TT_CMAKE" --build "$TT_BUILD_DIR" --target uninstall
expect_rc 0 "the uninstall target"
[ "$(grep -c -- "-- Removed: $p/" "$OUT")" = "$n" ] || fail "the uninstall target did not say each of the $n files it removed"
expect_out "uninstall: removed $n file\\(s\\) listed in "
left=$(find "$p" ! -type d)
[ -z "$left" ] || fail "files left under $p after uninstall: $(echo "$left" | head -5)"
# again: nothing to remove, each file said to be gone, status 0
t uninstall_again -- "$TT_CMAKE" --build "$TT_BUILD_DIR" --target uninstall
expect_rc 0; expect_out "uninstall: removed 0 file\\(s\\) .*; $n were already gone"

# --- DESTDIR: installed under the staging directory, nothing at the
# prefix itself; uninstall with the same DESTDIR leaves it with no file.
stage=$W/stage dprefix=/opt/enormoustext-install-test-$$
t dinstall DESTDIR="$stage" -- "$TT_CMAKE" --install "$TT_BUILD_DIR" --prefix "$dprefix"
expect_rc 0 "cmake --install with DESTDIR"
[ -x "$stage$dprefix/$TT_INSTALL_BINDIR/enormoustext" ] || fail "DESTDIR: no $stage$dprefix/$TT_INSTALL_BINDIR/enormoustext"
[ ! -e "$dprefix" ] || fail "DESTDIR: $dprefix was written"
dn=$(find "$stage" ! -type d | wc -l)
[ "$dn" = "$(grep -c "" "$man")" ] || fail "DESTDIR: $dn files under $stage, the manifest lists $(grep -c "" "$man")"
t duninstall DESTDIR="$stage" -- "$TT_CMAKE" --build "$TT_BUILD_DIR" --target uninstall
expect_rc 0 "the uninstall target with DESTDIR"
[ "$(grep -c -- "-- Removed: $stage$dprefix/" "$OUT")" = "$dn" ] || fail "uninstall with DESTDIR did not say each of the $dn files"
left=$(find "$stage" ! -type d)
[ -z "$left" ] || fail "files left under $stage after uninstall with DESTDIR: $(echo "$left" | head -5)"

# --- no manifest (nothing installed from this tree): a clear failure
rm -f "$man"
t nomanifest -- "$TT_CMAKE" --build "$TT_BUILD_DIR" --target uninstall
[ "$RC" -ne 0 ] || fail "the uninstall target with no install_manifest.txt exits 0"
cat "$OUT" "$ERR" | tr -s ' \n' '  ' | grep -q "uninstall: no $man: nothing was installed from this build tree" ||
	fail "the uninstall target with no manifest does not say so"

pass
