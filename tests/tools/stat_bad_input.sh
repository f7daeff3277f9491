#!/bin/bash
# tool_stat_bad_input — `stat`'s bad input: PID pid_max (cannot exist), a
# process that ended, `abc`, `0`, too large, none, --all with PIDs, unknown
# option, missing value; good and bad PIDs together (the good shown, status
# 1); as nobody (root only, else skip): a root process is "permission denied",
# --all leaves it out and says so.
. "$(dirname "$0")/lib.sh"

maxpid=$(cat /proc/sys/kernel/pid_max)
t nopid -- "$TOOL" stat "$maxpid"
expect_bad 1 "a PID that cannot exist" "PID $maxpid: no such process"
expect_no_out
t abc -- "$TOOL" stat abc
expect_bad 2 "a PID that is not a number" "'abc' is not a process id"
t zero -- "$TOOL" stat 0
expect_bad 2 "PID 0" "'0' is not a process id"
t big -- "$TOOL" stat 99999999999999999999
expect_bad 2 "a PID too large" "is not a process id"
t none -- "$TOOL" stat
expect_bad 2 "no PID" "no PID given"
t both -- "$TOOL" stat --all 1
expect_bad 2 "--all and PIDs" "give PIDs or --all, not both"
t opt -- "$TOOL" stat --frobnicate 1
expect_bad 2 "an unknown option" "unknown option '--frobnicate'"
t noproc -- "$TOOL" stat --proc
expect_bad 2 "--proc without a value" "'--proc' needs a value"
# One good, one bad: the good one is shown, the bad one named, status 1.
start_hold a -- "$HOLD"
t mixed -- "$TOOL" stat --json "$HPID" "$maxpid"
expect_bad 1 "a good and a bad PID" "PID $maxpid: no such process"
json "$OUT"
[ "$(jneed "$OUT.flat" '[0].pid')" = "$HPID" ] || fail "the good PID is missing from the output"
jget "$OUT.flat" '[1].pid' >/dev/null && fail "the bad PID has an entry"
# A process that ends: gone is gone.
stop_hold a "$HPID"
t gone -- "$TOOL" stat "$HPID"
expect_bad 1 "a process that has ended" "PID $HPID: no such process"
# No permission: as nobody, a root process's smaps cannot be read.
[ "$(id -u)" = 0 ] || skip "not root: cannot run the command as another user to test 'permission denied' (everything else passed)"
start_hold b -- "$HOLD"
t perm -- "$TT_BIN/tt_asuser" nobody "$TOOL" stat "$HPID"
expect_bad 1 "another user's process" "PID $HPID: permission denied reading /proc/$HPID/smaps"
t permall -- "$TT_BIN/tt_asuser" nobody "$TOOL" stat --all --summary
expect_rc 0 "--all as nobody"
grep -qE 'process(es)? not shown: permission denied' "$ERR" || fail "--all as nobody does not say processes were left out"
grep -qE "^ *$HPID " "$OUT" && fail "--all as nobody shows a root process"
stop_hold b "$HPID"

pass
