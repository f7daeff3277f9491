#!/bin/bash
# integration.secure — a setuid (AT_SECURE) program linked with the library:
# nothing done, printed or written.
#
# A setuid program (owner nobody, run by root: AT_SECURE) linked with the
# library: nothing done, nothing printed, no report written.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root to make a setuid copy owned by another user"
id nobody >/dev/null 2>&1 || skip "no user 'nobody' to own the setuid copy"
D=$WORK/secure
mkdir "$D" && cp "$IT_BIN/secure" "$D/" && chmod 755 "$WORK" "$D" || exit 2
chown nobody "$D/secure" && chmod 4755 "$D/secure" || skip "cannot make a setuid copy here"
run lib ENORMOUSTEXT_VERBOSE=3 ENORMOUSTEXT_REPORT="$D/report.json" ENORMOUSTEXT_BACKEND=bogus -- ./secure
[ "$RC" -eq 77 ] && skip "the setuid copy did not run in secure-execution mode (nosuid mount?)"
[ "$RC" -eq 0 ] || fail "$(grep FAIL "$OUT")"
stderr_empty "in a secure-execution process the library must print nothing"
[ ! -e "$D/report.json" ] || fail "in a secure-execution process the library wrote $D/report.json"
# The same program, not setuid, does the work: the test can tell.
run plain ENORMOUSTEXT_VERBOSE=1 -- "$IT_BIN/secure"
[ "$RC" -eq 77 ] || fail "the non-setuid control run should not be secure (exit $RC)"
grep -q '^enormoustext: ' "$ERR" || fail "the non-setuid control run printed no summary line"

pass
