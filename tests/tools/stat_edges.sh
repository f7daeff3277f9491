#!/bin/bash
# tool_stat_edges — what a new user hit with `stat` and `perfmap`: a kernel
# thread given as a PID is an error that says it is one (it has no user
# memory: it was "no executable mappings", status 0), in one line by one
# rule in every command that takes a PID (stat, perfmap, collapse, record
# --pid); `stat --all` as a
# user names, by PID, the processes it could not read (it gave only a
# count); `perfmap` of a process it may not read explains why as `stat`
# does (it said "Permission denied" alone).  The kernel threads and the
# processes nobody cannot read are found here from /proc (PF_KTHREAD in
# /proc/PID/stat, the owner of /proc/PID), not from the command.
. "$(dirname "$0")/lib.sh"

# a kernel thread: flags (the 9th field of /proc/PID/stat) & PF_KTHREAD
kt=""
for p in /proc/[0-9]*; do
	f=$(sed 's/.*) //' "$p/stat" 2>/dev/null | awk '{ print $7 }')
	[ -n "$f" ] && [ $((f & 0x200000)) -ne 0 ] && { kt=${p#/proc/}; break; }
done
if [ -n "$kt" ]; then
	comm=$(cat "/proc/$kt/comm")
	t kthread -- "$TOOL" stat "$kt"
	expect_bad 1 "stat of a kernel thread" "^enormoustext stat: PID $kt \\(.*\\): a kernel thread: it has no user memory"
	grep -qF "($comm)" "$ERR" || fail "stat $kt does not name the thread ($comm)"
	expect_no_out
	# with another PID, the other is still shown, and the status is still 1
	t kthread2 -- "$TOOL" stat --summary "$$" "$kt"
	expect_rc 1; expect_out "^ *$$ "
	# one rule for a kernel thread in every command that takes a PID
	# (collapse, perfmap and record --pid accepted one: exit 0, nothing)
	for c in "perfmap $kt" "collapse $kt" "collapse --dry-run $kt" "record --pid $kt --duration 1 -o $W/kt.profile"; do
		# shellcheck disable=SC2086 # the words of c are the command's
		t "kthread-${c%% *}" -- "$TOOL" $c
		expect_bad 1 "$c (a kernel thread)" "^enormoustext ${c%% *}: PID $kt \\($comm\\): a kernel thread: it has no user memory"
		expect_no_out
	done
	[ ! -e "$W/kt.profile" ] || fail "record --pid $kt (a kernel thread) wrote a profile"
	# --all leaves kernel threads out, as before
	t all -- "$TOOL" stat --summary --all
	grep -qE "^ *$kt " "$OUT" && fail "stat --all lists the kernel thread $kt"
else
	note "no kernel thread visible in /proc here (a PID namespace): the kernel-thread case not run"
fi
# a process that is not a kernel thread and has text: no such message
t self -- "$TOOL" stat --summary "$$"
expect_rc 0; grep -q "kernel thread" "$ERR" && fail "stat of this shell calls it a kernel thread"

# as nobody: the processes of others that have text cannot be read; each
# is named by PID
start_hold h -- "$HOLD"
t nobody -- "$TT_BIN/tt_asuser" nobody "$TOOL" stat --summary --all
[ "$RC" -ne 77 ] || skip "tt_asuser cannot switch users here: $(cat "$OUT")"
expect_rc 0
[ "$(wc -l <"$ERR")" = 1 ] || fail "stat --all as nobody: $(wc -l <"$ERR") lines on stderr, expected one"
grep -qE "^enormoustext stat: [0-9]+ process(es)? not shown: permission denied \\(run as root to see them\\): PIDs? [0-9]" "$ERR" ||
	fail "stat --all as nobody does not name the PIDs it could not read: $(cat "$ERR")"
named=$(sed 's/.*: PIDs\{0,1\} //; s/ and [0-9]* more$//' "$ERR")
count=$(sed -n 's/^enormoustext stat: \([0-9]*\) process.*/\1/p' "$ERR")
# the test's own root process holding tt_hold is one nobody cannot read
case " $named " in *" $HPID "*) ;; *) grep -q " and [0-9]* more" "$ERR" || fail "PID $HPID (root's) is not among those named: $named" ;; esac
n=$(echo "$named" | wc -w)
grep -q " and [0-9]* more" "$ERR" || [ "$n" = "$count" ] || fail "$count processes not shown but $n named"
for p in $named; do
	[ -d "/proc/$p" ] || continue           # ended since
	[ "$(stat -c %u "/proc/$p")" = 65534 ] && fail "PID $p is nobody's own, yet named as not readable"
done

# perfmap of a process nobody may not read: the same explanation as stat's
t perfmap -- "$TT_BIN/tt_asuser" nobody "$TOOL" perfmap "$HPID"
expect_bad 1 "perfmap as nobody" "^enormoustext perfmap: process $HPID: permission denied reading /proc/$HPID/smaps \\(the process belongs to another user: run as root or as its owner\\)\$"
t statone -- "$TT_BIN/tt_asuser" nobody "$TOOL" stat "$HPID"
expect_bad 1 "stat as nobody" "permission denied reading /proc/$HPID/smaps \\(the process belongs to another user: run as root or as its owner\\)"
stop_hold h "$HPID"

pass
