#!/bin/bash
# tool_stat_bad_input — `stat`'s bad input: PID pid_max (cannot exist), a
# process that ended, `abc`, `0`, too large, none, --all with PIDs, unknown
# option, missing value, a --proc DIR that is missing or a file (named);
# good and bad PIDs together (the good shown, status 1); as nobody (root
# only, else skip): a root process is "permission denied" (run as root),
# --all leaves it out and says so; root refused (without CAP_SYS_PTRACE, or
# by the kernel's ptrace check, where this system has such a process) is
# told why, never to run as root.
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
# A --proc DIR that is not there is named, not taken for a missing PID.
t nodir -- "$TOOL" stat --proc "$W/nonexist" 1
expect_bad 1 "--proc DIR that does not exist" "^enormoustext stat: $W/nonexist: no such directory \(--proc\)\$"
expect_no_out
: >"$W/afile"
t notdir -- "$TOOL" stat --proc "$W/afile" --all
expect_bad 1 "--proc FILE" "^enormoustext stat: $W/afile: not a directory \(--proc\)\$"
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
expect_bad 1 "another user's process" "run as root or as its owner"
t permall -- "$TT_BIN/tt_asuser" nobody "$TOOL" stat --all --summary
expect_rc 0 "--all as nobody"
grep -qE 'process(es)? not shown: permission denied' "$ERR" || fail "--all as nobody does not say processes were left out"
grep -qE "^ *$HPID " "$OUT" && fail "--all as nobody shows a root process"
stop_hold b "$HPID"
# Root refused: never told to "run as root".  Without CAP_SYS_PTRACE
# (capsh drops it) another user's process cannot be read on most kernels;
# with it, a process may still be refused (a security module, hidepid).
start_hold c "$TT_BIN/tt_asuser" nobody -- "$HOLD"
if ! command -v capsh >/dev/null; then
	note "no capsh: root without CAP_SYS_PTRACE not checked"
elif capsh --drop=cap_sys_ptrace -- -c "head -c1 /proc/$HPID/smaps" >/dev/null 2>&1; then
	note "this kernel lets root without CAP_SYS_PTRACE read another user's smaps: that message not checked"
else
	t nocap -- capsh --drop=cap_sys_ptrace -- -c "exec '$TOOL' stat $HPID"
	expect_bad 1 "root without CAP_SYS_PTRACE" "PID $HPID: permission denied reading /proc/$HPID/smaps \(root without CAP_SYS_PTRACE"
	grep -q 'run as root' "$ERR" && fail "root without CAP_SYS_PTRACE is told to run as root"
fi
stop_hold c "$HPID"
den=""
for d in /proc/[0-9]*; do
	p=${d#/proc/}
	[ -r "$d/smaps" ] || continue
	head -c1 "$d/smaps" >/dev/null 2>&1 && continue
	grep -qs '^Name:' "$d/status" || continue
	den=$p; break
done
if [ -n "$den" ]; then
	t rootdenied -- "$TOOL" stat "$den"
	if grep -q 'permission denied' "$ERR"; then
		expect_bad 1 "a process refused to root" "PID $den: permission denied reading /proc/$den/smaps \((refused even to root|root without CAP_SYS_PTRACE)"
		grep -q 'run as root' "$ERR" && fail "root is told to run as root"
	fi
else
	note "no process here refuses root: the message for that case is not checked"
fi

pass
