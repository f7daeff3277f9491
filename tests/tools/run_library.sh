#!/bin/bash
# tool_run_library — `run` with the library: a baseline without it has no
# anonymous huge text; with it, the library's one summary line, the program's
# exit status, a valid report with the program's text moved; --exclude
# honoured and reported.
. "$(dirname "$0")/lib.sh"

fresh a
start_hold base -- "$F"
t base -- "$TOOL" stat --json "$HPID"
expect_rc 0; json "$OUT"
i=$(jindex "$OUT.flat" .objects path "$F")
[ -n "$i" ] || fail "stat does not list $F"
[ "$(jneed "$OUT.flat" ".objects[$i].huge_by_kind.anon")" = 0 ] || fail "BASELINE: $F has anonymous huge text without the library"
stop_hold base "$HPID"

fresh b
t lib -- "$TOOL" run --verbose 1 --report "$W/r.json" -- "$F" --exit 3
expect_rc 3 "the program's exit status through the library"
[ "$(wc -l <"$ERR")" -eq 1 ] || fail "--verbose 1: expected exactly one line from the library on stderr"
grep -qE '^enormoustext: [0-9]+ of [0-9]+ objects?, .* text on [0-9]+ (MiB|KiB) pages' "$ERR" ||
	fail "--verbose 1: not the library's summary line"
[ -s "$W/r.json" ] || fail "--report: no report written"
json "$W/r.json"
i=$(jindex "$W/r.json.flat" .objects path "$F")
[ -n "$i" ] || fail "the report does not list $F"
huge=$(jneed "$W/r.json.flat" ".objects[$i].huge_bytes")
[ "$huge" -ge "$H" ] || fail "the library moved no window of $F ($huge bytes huge): $(jget "$W/r.json.flat" ".objects[$i].reasons[0]")"

fresh c
t exclude -- "$TOOL" run --exclude '*/c/tt_hold' --report "$W/r2.json" -- "$F"
expect_rc 0; json "$W/r2.json"
i=$(jindex "$W/r2.json.flat" .objects path "$F")
[ "$(jneed "$W/r2.json.flat" ".objects[$i].huge_bytes")" = 0 ] || fail "--exclude: $F was moved all the same"
grep -q 'excluded' "$W/r2.json" || fail "--exclude: the report does not say it was excluded"

pass
