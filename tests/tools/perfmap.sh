#!/bin/bash
# tool_perfmap — a perf map for a process whose text the library moved: the
# moved function (tt_big_text) named at its address; none without the library;
# bad inputs; an --output in a missing directory (also through a dangling
# link) named as given in the one error line; --json with the line's figures.
. "$(dirname "$0")/lib.sh"

fresh a
start_hold lib "$TOOL" run -- "$F"
addr=$(nm "$F" | awk '$3 == "tt_big_text" { print $1 }')
[ -n "$addr" ] || fail "no tt_big_text symbol in $F"
t map -- "$TOOL" perfmap --output "$W/perf.map" "$HPID"
expect_rc 0; expect_no_err
expect_out ": [0-9]+ functions? in the moved text of 1 object \("
if grep -qE ": 1 functions |: [02-9][0-9]* function in|[0-9]+ functions? in the moved text of 1 objects" "$OUT"; then fail "perfmap: singular and plural wrong"; fi
sed 's/^/   map| /' "$W/perf.map"
# The map names tt_big_text once, at load base + its symbol value.
base=$(awk -v f="$F" '$6 == f && $3 == "00000000" { split($1, r, "-"); print r[1]; exit }' "/proc/$HPID/maps")
start=$(printf '%x' $((0x$base + 0x$addr)))
[ "$(grep -c ' tt_big_text$' "$W/perf.map")" = 1 ] || fail "tt_big_text is not named exactly once"
grep -q "^$start 600000 tt_big_text\$" "$W/perf.map" || fail "tt_big_text not at $start (base $base + $addr)"
# --json: valid JSON (python3's json.tool and the strict checker) with the
# line's figures, and the same map written
read -r nfn nobj moved < <(sed -n 's/.*: \([0-9]*\) functions\{0,1\} in the moved text of \([0-9]*\) objects\{0,1\} (\([0-9]*\) bytes\{0,1\})$/\1 \2 \3/p' "$W/$((N)).map.out")
[ -n "$moved" ] || fail "perfmap's line gives no figures: $(cat "$W/$((N)).map.out")"
t mapjson -- "$TOOL" perfmap --json --output "$W/perf2.map" "$HPID"
expect_rc 0; expect_no_err; json "$OUT"
python3 -m json.tool "$OUT" >/dev/null || fail "python3 -m json.tool refuses perfmap --json"
[ "$(jneed "$OUT.flat" .pid)" = "$HPID" ] || fail "perfmap --json: pid $(jget "$OUT.flat" .pid)"
[ "$(jneed "$OUT.flat" .file)" = "$W/perf2.map" ] || fail "perfmap --json: file $(jget "$OUT.flat" .file)"
[ "$(jneed "$OUT.flat" .functions)" = "$nfn" ] || fail "perfmap --json: $(jget "$OUT.flat" .functions) functions, the line says $nfn"
[ "$(jneed "$OUT.flat" .objects)" = "$nobj" ] || fail "perfmap --json: $(jget "$OUT.flat" .objects) objects, the line says $nobj"
[ "$(jneed "$OUT.flat" .moved_bytes)" = "$moved" ] || fail "perfmap --json: $(jget "$OUT.flat" .moved_bytes) bytes, the line says $moved"
cmp -s "$W/perf.map" "$W/perf2.map" || fail "perfmap --json wrote another map than the text form"
# An --output that cannot be written: one line naming the path as given
# (never the temporary beside it, nor where a link led), nothing made.
ln -s "$W/nodir/target.map" "$W/dangling.map"
for o in "$W/nodir/perf.map" "$W/dangling.map" "$W/nodir/"; do
	t badout -- "$TOOL" perfmap --output "$o" "$HPID"
	expect_bad 1 "perfmap --output $o" "^enormoustext perfmap: ${o//./\\.}: No such file or directory\$"
	grep -q '\.tmp' "$ERR" && fail "perfmap --output $o: the error names a temporary"
	expect_no_out
	[ ! -e "$W/nodir" ] || fail "perfmap --output $o made $W/nodir"
done
stop_hold lib "$HPID"
start_hold base -- "$F"
t none -- "$TOOL" perfmap --output "$W/none.map" "$HPID"
expect_rc 0
expect_out "has no moved text"
[ ! -e "$W/none.map" ] || fail "a map was written for a process without moved text"
t nonejson -- "$TOOL" perfmap --json --output "$W/none.map" "$HPID"
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" .file)" = null ] && [ "$(jneed "$OUT.flat" .moved_bytes)" = 0 ] ||
	fail "perfmap --json of a process without moved text: file $(jget "$OUT.flat" .file), moved $(jget "$OUT.flat" .moved_bytes)"
stop_hold base "$HPID"
t nopid -- "$TOOL" perfmap 4194000
expect_rc 1
t badpid -- "$TOOL" perfmap 12x
expect_rc 2
t help -- "$TOOL" perfmap --help
expect_rc 0
expect_out "^usage: enormoustext perfmap"

pass
