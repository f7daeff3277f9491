#!/bin/bash
# integration.textrel — a library with text relocations is left alone and
# still works.
#
# An object with text relocations is left alone (and still works).
. "$(dirname "$0")/lib.sh"

[ -x "$IT_BIN/textrel" ] || skip "no text-relocation test library on this architecture (x86-64 only)"
readelf -d "$IT_BIN/libtextrel.so" | grep -q TEXTREL || fail "libtextrel.so was built without DT_TEXTREL"
D=$WORK/textrel
mkdir "$D" && cp "$IT_BIN/textrel" "$IT_BIN/libtextrel.so" "$D/" || exit 2
run lib ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE" -- ./textrel
[ "$RC" -eq 0 ] || fail "textrel exited $RC: $(grep FAIL "$OUT")"
grep -q 'libtextrel.so: left alone: has text relocations' "$ERR" ||
	fail "no 'libtextrel.so: left alone: has text relocations' line at ENORMOUSTEXT_VERBOSE=2"

pass
