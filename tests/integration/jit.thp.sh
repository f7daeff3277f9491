#!/bin/bash
# integration.jit.thp — integration.jit's runs under THP `never` (mode 2
# and 3 collapse with MADV_COLLAPSE: the same figures) and `always` (the
# kernel makes some of it huge without the library; mode 2 and 3 must
# still reach the figures), the setting put back at the end.  Root only
# (the setting is the system's); RUN_SERIAL.
. "$(dirname "$0")/lib.sh"

J=$IT_BIN/jitprog
[ -x "$J" ] || fail "$J is missing: build the tests first"
t=/sys/kernel/mm/transparent_hugepage/enabled
[ -w "$t" ] || skip "$t is not writable (not root): THP cannot be switched for this test"
was=$(sed 's/.*\[\(.*\)\].*/\1/' "$t")
EXIT_HOOKS+=("echo $was > $t")
D=$WORK
PATS=(flip reserve grow memfd toggle churn)
declare -A want=([flip]=8192 [reserve]=8192 [grow]=8192 [memfd]=4096)
. "$(dirname "$0")/jit.bash"
for mode in never always; do
	echo "$mode" >"$t" || fail "cannot set THP $mode"
	jit_runs "$mode"
done
echo "$was" >"$t"
pass
