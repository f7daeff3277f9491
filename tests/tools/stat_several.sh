#!/bin/bash
# tool_stat_several — `stat` of several processes: two PIDs give a list in
# order, one PID an object, --all lists both, --summary, --json --summary
# (the summary's fields only).
. "$(dirname "$0")/lib.sh"

fresh a
start_hold one "$TOOL" run -- "$F"
p1=$HPID
fresh b
start_hold two -- "$F"
p2=$HPID
t two -- "$TOOL" stat --json "$p1" "$p2"
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" '[0].pid')" = "$p1" ] && [ "$(jneed "$OUT.flat" '[1].pid')" = "$p2" ] ||
	fail "two PIDs: not a list of both, in order"
jget "$OUT.flat" '[2].pid' >/dev/null && fail "two PIDs gave three entries"
t one -- "$TOOL" stat --json "$p1"
json "$OUT"
jget "$OUT.flat" .pid >/dev/null || fail "one PID: not a single object"
t text -- "$TOOL" stat "$p1" "$p2"
[ "$(grep -c '^PID ' "$OUT")" = 2 ] || fail "two PIDs: not two sections"
t all -- "$TOOL" stat --all --json
expect_rc 0; json "$OUT"
pids=" $(awk -F'\t' '$1 ~ /^\[[0-9]+\]\.pid$/ { printf "%s ", $3 }' "$OUT.flat")"
[[ $pids == *" $p1 "* && $pids == *" $p2 "* ]] || fail "--all does not list $p1 and $p2"
t summary -- "$TOOL" stat --all --summary
expect_rc 0
expect_out '^ +PID +TEXT +HUGE +ANON +FILE +SHMEM +HUGETLB +COMMAND$' "the summary header"
expect_out "^ *$p1 .* tt_hold\$"; expect_out "^ *$p2 .* tt_hold\$"
t sum1 -- "$TOOL" stat -s "$p2"
[ "$(wc -l <"$OUT")" = 2 ] || fail "--summary of one PID: not a header and one line"
# --json --summary: what the summary line says, as JSON: no objects.
t jsum -- "$TOOL" stat --json --summary "$p1" "$p2"
expect_rc 0; expect_no_err "--json --summary"; json "$OUT"
for i in 0 1; do
	keys=$(awk -F'\t' -v p="[$i]." 'index($1, p) == 1 { print substr($1, length(p) + 1) }' "$OUT.flat" | tr '\n' ' ')
	[ "$keys" = "pid command text_bytes huge_bytes huge_by_kind.anon huge_by_kind.file huge_by_kind.shmem huge_by_kind.hugetlb " ] ||
		fail "--json --summary [$i]: fields '$keys', expected only the summary's"
done
[ "$(jneed "$OUT.flat" '[1].pid')" = "$p2" ] || fail "--json --summary: the second entry is not $p2"
t jsum1 -- "$TOOL" stat --json -s "$p2"
expect_rc 0; json "$OUT"
grep -q "^\.objects" "$OUT.flat" && fail "--json --summary of one PID has objects"
[ "$(jneed "$OUT.flat" .text_bytes)" -gt 0 ] || fail "--json --summary of one PID: no text_bytes"
stop_hold one "$p1"
stop_hold two "$p2"

pass
