#!/bin/bash
# tool_install — `cmake --install` to a fresh prefix: the command, the man
# page and the bash completion where they belong; `check`'s advice names the
# installed linker script (the build tree's command: the source tree's); the installed command preloads the library installed
# beside it and runs with it; the build tree's command uses the build tree's
# library; a copy with no library near it uses the configured LIBDIR or says
# it cannot find one; ENORMOUSTEXT_LIB.  The command looks for the SONAME
# file (libenormoustext.so.0), which a runtime package without the
# development link has.
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

pass
