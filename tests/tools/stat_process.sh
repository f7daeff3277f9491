#!/bin/bash
# tool_stat_process — `stat` of a process without the library, text and JSON:
# the totals equal awk's over its smaps, the program's text equal to its
# mappings, no anonymous huge text, the objects adding up to the process.
. "$(dirname "$0")/lib.sh"

fresh a
start_hold a -- "$F"
cp "/proc/$HPID/smaps" "$W/smaps.after"
t text -- "$TOOL" stat "$HPID"
expect_rc 0; expect_no_err
expect_out "^PID $HPID \\(tt_hold\\): "
expect_out " $F\$" "the object table"
t json -- "$TOOL" stat --json "$HPID"
expect_rc 0; expect_no_err
json "$OUT"
[ "$(jneed "$OUT.flat" .pid)" = "$HPID" ] || fail ".pid is not $HPID"
[ "$(jneed "$OUT.flat" .command)" = tt_hold ] || fail ".command is not tt_hold"
read -r text huge < <(smaps_text_totals "$W/smaps.after")
[ "$(jneed "$OUT.flat" .text_bytes)" = "$text" ] || fail ".text_bytes $(jget "$OUT.flat" .text_bytes), smaps says $text"
[ "$(jneed "$OUT.flat" .huge_bytes)" = "$huge" ] || fail ".huge_bytes $(jget "$OUT.flat" .huge_bytes), smaps says $huge"
sum=0
i=$(jindex "$OUT.flat" .objects path "$F")
[ -n "$i" ] || fail "no object $F"
read -r want _ _ < <(smaps_object "$W/smaps.after" "$F")
[ "$(jneed "$OUT.flat" ".objects[$i].text_bytes")" = "$want" ] || fail "$F: text_bytes $(jget "$OUT.flat" ".objects[$i].text_bytes"), smaps says $want"
[ "$want" -ge 6291456 ] || fail "$F: less than its 6 MiB of text"
[ "$(jneed "$OUT.flat" ".objects[$i].huge_by_kind.anon")" = 0 ] || fail "$F: anonymous huge text without the library"
[ "$(jneed "$OUT.flat" ".objects[$i].copied_text_bytes")" = 0 ] || fail "$F: copied text without the library"
[ "$(jneed "$OUT.flat" ".objects[$i].kind")" = file ] || fail "$F: kind is not file"
jindex "$OUT.flat" .objects path '[vdso]' | grep -q . || fail "no [vdso] object"
# The objects add up to the process.
for k in $(awk -F'\t' '$1 ~ /^\.objects\[[0-9]+\]\.text_bytes$/ { print $3 }' "$OUT.flat"); do sum=$((sum + k)); done
[ "$sum" = "$text" ] || fail "the objects' text_bytes add up to $sum, the process has $text"
stop_hold a "$HPID"

pass
