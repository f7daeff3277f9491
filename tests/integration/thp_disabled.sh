#!/bin/bash
# integration.thp_disabled — under PR_SET_THP_DISABLE nothing goes huge and
# ENORMOUSTEXT_VERBOSE=2 says why.
. "$(dirname "$0")/lib.sh"

[ -x "$THP_OFF" ] || fail "$THP_OFF missing"
# With THP off, free pages in the hugetlb pool would be a legitimate way
# to go huge: this test needs the pool empty (the machine's default).
pool=/sys/kernel/mm/hugepages/hugepages-$((H_MIB * 1024))kB/free_hugepages
if [ -r "$pool" ] && [ "$(cat "$pool")" -gt 0 ]; then
	fail "precondition: $pool is $(cat "$pool"); with free hugetlb pages the library may rightly" \
	     "use them when THP is disabled, so this test cannot expect nothing huge"
fi
std_baseline bigtext
run lib -- "$THP_OFF" env LD_PRELOAD="$PRE" ENORMOUSTEXT_VERBOSE=2 ./bigtext --expect-none --expect-loaded
expect_pass "with THP disabled for the process (PR_SET_THP_DISABLE) nothing may go huge"
[ -s "$ERR" ] || fail "with ENORMOUSTEXT_VERBOSE=2 and THP disabled the library must say why it did nothing; stderr is empty"
if grep -qv '^enormoustext: ' "$ERR"; then
	fail "stderr has lines not from the library: '$(grep -v '^enormoustext: ' "$ERR" | head -2 | tr '\n' '|')'"
fi
grep -qi 'disabled' "$ERR" ||
	fail "with THP disabled, no 'enormoustext: ' line on stderr gives the reason (no 'disabled' in it)"

pass
