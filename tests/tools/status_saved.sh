#!/bin/bash
# tool_status_saved — `status --root` on four written sysfs trees
# (never/always, madvise/defer, always/madvise, madvise/never; pool free or
# not): every value read from the tree, auto as the rule says, no probe.
. "$(dirname "$0")/lib.sh"

n=0
for c in "never always 5" "madvise defer 0" "always madvise 0" "madvise never 3"; do
	read -r en df free <<<"$c"
	n=$((n + 1))
	fake_sysfs "$W/root$n" "$en" "$df" "$free"
	t "root$n" -- "$TOOL" status --json --root "$W/root$n"
	expect_rc 0; expect_no_err; json "$OUT"
	f=$OUT.flat
	[ "$(jneed "$f" .thp.enabled)" = "$en" ] && [ "$(jneed "$f" .thp.defrag)" = "$df" ] || fail "root$n: the policy was not read from the tree"
	[ "$(jneed "$f" .thp.shmem_enabled)" = never ] || fail "root$n: shmem_enabled"
	[ "$(jneed "$f" '.hugetlb[0].size')" = 2097152 ] && [ "$(jneed "$f" '.hugetlb[0].total')" = 10 ] &&
		[ "$(jneed "$f" '.hugetlb[0].free')" = "$free" ] && [ "$(jneed "$f" '.hugetlb[0].reserved')" = 1 ] &&
		[ "$(jneed "$f" '.hugetlb[1].size')" = 1073741824 ] || fail "root$n: the hugetlb pools"
	[ "$(jneed "$f" '.mthp[0].size')" = 65536 ] && [ "$(jneed "$f" '.mthp[0].enabled')" = never ] || fail "root$n: mTHP sizes"
	[ "$(jneed "$f" .khugepaged.pages_to_scan)" = 4096 ] || fail "root$n: khugepaged"
	[ "$(jneed "$f" .khugepaged.running)" = null ] || fail "root$n: khugepaged running is not unknown in a tree"
	[ "$(jneed "$f" .probes.collapse.works)" = null ] || fail "root$n: probes ran with --root"
	chain=$(awk -F'\t' '$1 ~ /^\.auto\.backends\[/ { printf "%s%s", sep, $3; sep = " " }' "$f")
	[ "$chain" = "$(expected_chain "$en" "$df" "$free")" ] || fail "root$n: auto '$chain', expected '$(expected_chain "$en" "$df" "$free")'"
done
t text -- "$TOOL" status --root "$W/root1"
expect_rc 0
expect_out '^  enabled +never$'
expect_out '^  2M +10 pages, 5 free, 1 reserved, 0 surplus'
expect_out '^backend auto would use: file, then collapse, then hugetlb$'
expect_out 'not probed \(--root\)'

pass
