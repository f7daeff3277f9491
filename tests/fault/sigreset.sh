#!/bin/bash
# sigreset — ENORMOUSTEXT_RECORD's CPU-time timers (perf_event_open refused
# by a seccomp filter: tests/integration's noperf) stop when the program
# sets SIGPROF to SIG_DFL through sysv_signal, bsd_signal or sigset, as they
# do for sigaction and signal: libc sets the disposition inside these with
# its own sigaction, which the library's wrapper does not see, so an
# earlier version's next SIGPROF killed the program.
. "$(dirname "$0")/lib.sh"
[ -x "$IT_BIN/noperf" ] || fail "$IT_BIN/noperf is missing: build the tests first"
fresh "$FAULT_BIN/sr_reset"
cd "$D" || exit 2
for how in sysv_signal bsd_signal sigset; do
	./sr_reset "$how" >"$how.plain" 2>&1 || fail "$how: the plain run failed: $(cat "$how.plain")"
	"$IT_BIN/noperf" env ENORMOUSTEXT_SECCOMP=trust ENORMOUSTEXT_RECORD="$D/$how.prof" ENORMOUSTEXT_VERBOSE=0 LD_PRELOAD="$PRE" \
		./sr_reset "$how" >"$how.out" 2>"$how.err"
	rc=$?
	[ "$rc" -eq 0 ] || fail "$how: exit status $rc with the recorder's timer (killed by SIGPROF is 155): $(cat "$how.err")"
	cmp -s "$how.out" "$how.plain" || fail "$how: output differs from the plain run"
	[ -s "$D/$how.prof" ] || fail "$how: no profile written: the recorder did not run, so this proves nothing"
	note "$how(SIGPROF, SIG_DFL): not killed, profile written"
done
