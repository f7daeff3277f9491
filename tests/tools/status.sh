#!/bin/bash
# tool_status — `status` equal to sysfs (policy, PMD size, khugepaged, every
# hugetlb pool), auto's order by docs/backends.md's rule, the file probe in
# --probe-dir leaves nothing behind, under 5 s; the collapse and thp probes
# agree with what the library's collapse and thp backends get; under
# PR_SET_THP_DISABLE the probes fail and auto has only the pool; --no-probe;
# bad input.
. "$(dirname "$0")/lib.sh"

sys=/sys/kernel/mm/transparent_hugepage
mkdir "$W/probe"
t0=$(date +%s%N)
t json -- "$TOOL" status --json --probe-dir "$W/probe"
t1=$(date +%s%N)
expect_rc 0; expect_no_err; json "$OUT"
echo "   (status with probes took $(( (t1 - t0) / 1000000 )) ms)"
[ $(( (t1 - t0) / 1000000 )) -lt 5000 ] || fail "status took more than 5 s"
[ -z "$(ls -A "$W/probe")" ] || fail "the file probe left files behind: $(ls -A "$W/probe")"
f=$OUT.flat
[ "$(jneed "$f" .pmd_size)" = "$H" ] || fail ".pmd_size is not hpage_pmd_size ($H)"
en=$(choice $sys/enabled); df=$(choice $sys/defrag); sh=$(choice $sys/shmem_enabled)
[ "$(jneed "$f" .thp.enabled)" = "$en" ] || fail ".thp.enabled is not $en"
[ "$(jneed "$f" .thp.defrag)" = "$df" ] || fail ".thp.defrag is not $df"
[ "$(jneed "$f" .thp.shmem_enabled)" = "$sh" ] || fail ".thp.shmem_enabled is not $sh"
[ "$(jneed "$f" .khugepaged.pages_to_scan)" = "$(cat $sys/khugepaged/pages_to_scan)" ] || fail "khugepaged pages_to_scan"
k=0
for d in $(ls -d /sys/kernel/mm/hugepages/hugepages-*kB 2>/dev/null | sort -t- -k2 -n); do
	size=$(( $(basename "$d" | tr -dc 0-9) * 1024 ))
	[ "$(jneed "$f" ".hugetlb[$k].size")" = "$size" ] || fail "hugetlb pool $k: size"
	[ "$(jneed "$f" ".hugetlb[$k].total")" = "$(cat "$d/nr_hugepages")" ] || fail "hugetlb pool $size: total"
	[ "$(jneed "$f" ".hugetlb[$k].free")" = "$(cat "$d/free_hugepages")" ] || fail "hugetlb pool $size: free"
	k=$((k + 1))
done
free=$(cat "/sys/kernel/mm/hugepages/hugepages-$((H >> 10))kB/free_hugepages" 2>/dev/null || echo 0)
chain=$(awk -F'\t' '$1 ~ /^\.auto\.backends\[/ { printf "%s%s", sep, $3; sep = " " }' "$f")
[ "$chain" = "$(expected_chain "$en" "$df" "$free")" ] || fail "auto: '$chain', expected '$(expected_chain "$en" "$df" "$free")'"
[ "$(jneed "$f" .probes.file.dir)" = "$W/probe" ] || fail "--probe-dir not used"
# The probes agree with what the library's backends get on this machine.
for b in collapse thp; do
	p=$([ $b = thp ] && echo thp_fault || echo collapse)
	works=$(jneed "$f" ".probes.$p.works")
	fresh "$b"
	t "lib.$b" -- "$TOOL" run --backend "$b" --report "$W/$b.json" -- "$F"
	json "$W/$b.json"
	i=$(jindex "$W/$b.json.flat" .objects path "$F")
	huge=$(jneed "$W/$b.json.flat" ".objects[$i].huge_bytes")
	if [ "$works" = true ] && [ "$huge" = 0 ]; then
		fail "the $p probe says yes, but the library's $b backend got no huge page"
	elif [ "$works" = false ] && [ "$huge" != 0 ]; then
		fail "the $p probe says no, but the library's $b backend got huge pages"
	fi
done
jneed "$f" .probes.file.works | grep -qE '^(true|false)$' || fail "the file probe did not run"
t text -- "$TOOL" status --probe-dir "$W/probe"
expect_rc 0
expect_out "^  enabled +$en\$"; expect_out "^  defrag +$df\$"
expect_out '^  MADV_COLLAPSE +(yes|no): '
expect_out '^  file-backed text +(yes|no): '
expect_out "^backend auto would use: "
# THP disabled for the process (PR_SET_THP_DISABLE, inherited): the
# probes must see it, and `auto` has only the pool left.
t thpoff -- "$TT_BIN/tt_thp_off" "$TOOL" status --json --probe-dir "$W/probe"
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" .thp.disabled_for_process)" = true ] || fail "THP off: not seen"
[ "$(jneed "$OUT.flat" .probes.thp_fault.works)" = false ] || fail "THP off: the thp probe still works"
[ "$(jneed "$OUT.flat" .probes.collapse.works)" = false ] || fail "THP off: MADV_COLLAPSE still works"
chain=$(awk -F'\t' '$1 ~ /^\.auto\.backends\[/ { printf "%s%s", sep, $3; sep = " " }' "$OUT.flat")
[ "$chain" = "$([ "${free:-0}" -gt 0 ] && echo hugetlb)" ] || fail "THP off: auto would use '$chain'"
t noprobe -- "$TOOL" status --json --no-probe
json "$OUT"
[ "$(jneed "$OUT.flat" .probes.collapse.works)" = null ] || fail "--no-probe probed"
# Bad input.
t pdir -- "$TOOL" status --probe-dir "$W/nope"
expect_bad 1 "a probe directory that does not exist" "--probe-dir $W/nope: not a directory"
t extra -- "$TOOL" status now
expect_bad 2 "an extra argument" "unexpected argument 'now'"
t opt -- "$TOOL" status --frobnicate
expect_bad 2 "an unknown option" "unknown option '--frobnicate'"
t root -- "$TOOL" status --root "$W/nope"
expect_bad 1 "a --root that does not exist" "--root $W/nope: not a directory"

pass
