#!/bin/bash
# tool_stat_copied — text the library copied is attributed to the file it
# came from even where no mapping of that file comes before the copy: a
# program whose executable PT_LOAD starts at file offset 0 (linked with
# -z noseparate-code, 2 MiB max-page-size: the kernel loads it 2 MiB-aligned),
# so that its first 2 MiB window, copied, is the first mapping of the
# program.  Against the library's own report (ENORMOUSTEXT_REPORT):
# `stat --json` attributes >= 95% of the huge text to the file, perfmap
# covers >= 95% of the copied bytes, `collapse --dry-run` lists no copy as
# JIT code, the Prometheus per-object figures are stat's (tt_copied.py);
# the perf map names tt_big_text at its address; `collapse --dry-run --jit`
# asks nothing (a copy is no JIT code); `stat --all` lists the process
# under the file too.  tool_stat_copied_clang does the same to clang++.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || fail "python3 is missing (tools/run-tests installs it)"

# shellcheck disable=SC2086 # TT_CFLAGS: the tree's sanitizer flags, words
cc_link "$W/first.linked" "$TT_SRC/tt_hold.c" -fPIE -pie -Wl,-z,noseparate-code -Wl,-z,max-page-size=0x200000 $TT_CFLAGS
# a copy: a freshly linked file may sit in the page cache as huge folios
mkdir "$W/first" && cp "$W/first.linked" "$W/first/tt_first" || fail "cannot copy the program"
F=$W/first/tt_first
read -r off flags < <(readelf -lW "$F" | awk '$1 == "LOAD" { print $2, $7 $8; exit }')
[ "$off" = 0x000000 ] && [ "$flags" = RE ] ||
	fail "the linker did not make the first LOAD executable at offset 0 (-z noseparate-code): offset $off, flags $flags"

REPORT=$W/first.report.json
start_hold first env LD_PRELOAD="$TT_LIB" ENORMOUSTEXT_BACKEND=thp ENORMOUSTEXT_COPY_MIN=0 \
	ENORMOUSTEXT_REPORT="$REPORT" -- "$F"
P=$HPID
wait_until 5 test -s "$REPORT" || true
[ -s "$REPORT" ] || fail "the library wrote no report"
cp "/proc/$P/maps" "$W/first.maps"
sed 's/^/   maps| /' "$W/first.maps"
# What the test is about: the program's text starts with an anonymous copy,
# and no mapping of the program comes before it.
copy_lo=$("$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))
o = [o for o in r["objects"] if o["path"] == sys.argv[2]]
assert o, "no object " + sys.argv[2]
print("   report: text_start %s, window_kinds %s" % (o[0]["text_start"], o[0].get("window_kinds")), file=sys.stderr)
assert o[0].get("window_kinds", "").startswith("c"), "the first window was not copied"
print("%x" % int(o[0]["text_start"], 16))
' "$REPORT" "$F") || fail "the library's report does not say the first window was copied"
first=$(grep "^$copy_lo-" "$W/first.maps")
echo "   the mapping at the start of the text: $first"
[[ $first == *" r-xp 00000000 00:00 0 "* ]] || fail "the text does not start with an anonymous copy: $first"
before=$(awk -v f="$F" -v lo="$copy_lo" "$AWK_HEX"'$6 == f { split($1, r, "-"); if (hex(r[1]) < hex(lo)) print }' "$W/first.maps")
[ -z "$before" ] || fail "a mapping of the program comes before its first copy (the set-up does not show what the test is about): $before"

copied_attributed "$P" "$REPORT" ||
	fail "the command does not attribute the copied text to its file (above)"
t stat -- "$TOOL" stat "$P"
expect_rc 0; expect_no_err
expect_out "tt_first \(.* of it in anonymous copies\)$" "stat's line of the program"
grep -q '\[anonymous\]' "$OUT" && fail "stat lists the copied text as [anonymous]"

# The map names tt_big_text once, at the load base + its symbol value.
addr=$(nm "$F" | awk '$3 == "tt_big_text" { print $1 }')
want=$(printf '%x' $((0x$copy_lo + 0x$addr)))
grep -q "^$want 600000 tt_big_text\$" "$W/perf.map" ||
	fail "the perf map does not name tt_big_text at $want: $(grep tt_big_text "$W/perf.map")"
# --jit: JIT code only; a copy is none.
t jit -- "$TOOL" collapse --dry-run --jit "$P"
grep -q "anon" "$OUT" && fail "collapse --jit would ask for the library's copies"
# --all: the same attribution.
t all -- "$TOOL" stat --all --json
expect_rc 0; json "$OUT"
i=$(jindex "$OUT.flat" .processes pid "$P")
[ -n "$i" ] || fail "stat --all --json does not list $P"
j=$(jindex "$OUT.flat" ".processes[$i].objects" path "$F")
[ -n "$j" ] || fail "stat --all --json does not list $F in $P"
k=$(jindex "$W/stat.json.flat" .objects path "$F")
[ "$(jneed "$OUT.flat" ".processes[$i].objects[$j].copied_text_bytes")" = "$(jneed "$W/stat.json.flat" ".objects[$k].copied_text_bytes")" ] ||
	fail "stat --all and stat PID differ on the copied text of $F"
stop_hold first "$P"

pass
