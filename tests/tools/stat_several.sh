#!/bin/bash
# tool_stat_several — `stat` of several processes: two PIDs give a list in
# order, one PID an object, --all lists both, the most huge text first,
# and ends with their total (text, --summary, and --json's object of
# processes and total: each figure the sum of the processes'), --summary,
# --json --summary (the summary's fields only).
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
# --all: an object of the processes, the most huge text first, and their
# total (the sums of theirs, figure by figure).
t all -- "$TOOL" stat --all --json
expect_rc 0; json "$OUT"
pids=" $(awk -F'\t' '$1 ~ /^\.processes\[[0-9]+\]\.pid$/ { printf "%s ", $3 }' "$OUT.flat")"
[[ $pids == *" $p1 "* && $pids == *" $p2 "* ]] || fail "--all does not list $p1 and $p2"
awk -F'\t' '
	$1 ~ /^\.processes\[[0-9]+\]\.(text_bytes|huge_bytes|huge_by_kind\.[a-z]+)$/ {
		f = $1; sub(/^\.processes\[[0-9]+\]\./, "", f); sum[f] += $3; n[f]++
		if (f == "huge_bytes") { if (seen && $3 > last) bad = bad " " $3 " after " last; last = $3; seen = 1 }
	}
	$1 ~ /^\.processes\[[0-9]+\]\.objects\[[0-9]+\]\.copied_text_bytes$/ { sum["copied_text_bytes"] += $3 }
	$1 ~ /^\.total\./ { f = $1; sub(/^\.total\./, "", f); tot[f] = $3 }
	END {
		if (bad != "") { print "not the most huge text first:" bad; exit 1 }
		if (tot["processes"] != n["huge_bytes"]) { print "total.processes " tot["processes"] ", listed " n["huge_bytes"]; exit 1 }
		for (f in sum) if (tot[f] != sum[f]) { print "total." f " " tot[f] ", the sum " sum[f]; exit 1 }
		printf "   --all: %d processes, total text %.0f, huge %.0f, copied %.0f: the sums\n", n["huge_bytes"], tot["text_bytes"], tot["huge_bytes"], tot["copied_text_bytes"]
	}' "$OUT.flat" >"$W/all.check" || fail "stat --all --json: $(cat "$W/all.check")"
cat "$W/all.check"
# p1's text is moved (huge), p2's is not: p1 comes first
i1=$(jindex "$OUT.flat" .processes pid "$p1"); i2=$(jindex "$OUT.flat" .processes pid "$p2")
[ "$(jneed "$OUT.flat" ".processes[$i1].huge_bytes")" -gt 0 ] || fail "--all: $p1 has no huge text (the library moved nothing?)"
[ "$i1" -lt "$i2" ] || fail "--all lists $p2 (no huge text) before $p1 (huge text)"
# --prometheus: the enormoustext_total_* families are the sums of the
# processes' (read here from the text, label by label)
t allprom -- "$TOOL" stat --all --prometheus --summary
expect_rc 0
awk '
	# the labels may hold blanks (a comm such as "tmux: server"): the
	# value is the last field, the kind is looked for in the whole line
	/^enormoustext_process_(text|huge|copied_text)_bytes\{/ {
		f = $1; sub(/\{.*/, "", f); sub(/^enormoustext_process_/, "", f)
		k = ""; if (match($0, /kind="[a-z]+"\}/)) k = substr($0, RSTART, RLENGTH - 1)
		sum[f " " k] += $NF
	}
	/^enormoustext_total_/ {
		f = $1; sub(/\{.*/, "", f); sub(/^enormoustext_total_/, "", f)
		k = ""; if (match($0, /kind="[a-z]+"\}/)) k = substr($0, RSTART, RLENGTH - 1)
		tot[f " " k] = $NF; n++
	}
	END {
		if (n != 6) { print n " enormoustext_total_ samples, expected 6"; exit 1 }
		for (f in tot) if (tot[f] != sum[f]) { print "enormoustext_total_" f " " tot[f] ", the sum " sum[f]; exit 1 }
		printf "   --prometheus: the 6 total samples are the sums (text %.0f)\n", tot["text_bytes "]
	}' "$OUT" >"$W/prom.check" || fail "stat --all --prometheus: $(cat "$W/prom.check")"
cat "$W/prom.check"
t summary -- "$TOOL" stat --all --summary
expect_rc 0
expect_out '^ +PID +TEXT +HUGE +ANON +FILE +SHMEM +HUGETLB +COMMAND$' "the summary header"
expect_out "^ *$p1 .* tt_hold\$"; expect_out "^ *$p2 .* tt_hold\$"
expect_out '^ +TOTAL +[0-9.]+[KMG]? .*\([0-9]+ process(es)?\)$' "the summary's total line"
[ "$(tail -1 "$OUT" | awk '{ print $1 }')" = TOTAL ] || fail "--all --summary: the total is not the last line"
[ "$(grep -n "^ *$p1 " "$OUT" | cut -d: -f1)" -lt "$(grep -n "^ *$p2 " "$OUT" | cut -d: -f1)" ] ||
	fail "--all --summary lists $p2 before $p1"
t alltext -- "$TOOL" stat --all
expect_rc 0
expect_out '^TOTAL \([0-9]+ process(es)?\): .* of text, .* on huge pages .*: anon .*, file .*, shmem .*, hugetlb .*; .* in anonymous copies$' "the total line"
# PIDs given: in that order, no total
t twotext -- "$TOOL" stat -s "$p2" "$p1"
grep -q TOTAL "$OUT" && fail "a total for PIDs given (only --all has one)"
[ "$(sed -n 2p "$OUT" | awk '{ print $1 }')" = "$p2" ] || fail "PIDs given: not in the order given"
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
