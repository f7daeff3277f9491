#!/bin/bash
# fault.defer-tick — the deferral on the program's own thread
# (ENORMOUSTEXT_DEFER_ON=main: a CPU-time timer sends the main thread
# SIGURG; runtime/defer.c) leaves the program as it is, and gives way to a
# worker when the program stops being alone.  dt_prog (6 MiB of text), the
# deferral 500 ms, each case against its plain run (the same stdout):
#
#   1. it sleeps 1.5 s through the deadline (nanosleep): it sleeps all of
#      it (no EINTR, no early return), then runs, and its text is moved on
#      its own thread: huge, __libc_single_threaded 1 at main and at end;
#   2. it asks for SIGURG's disposition (SIG_DFL, as plain), sets a handler
#      of its own and sends itself one SIGURG: its handler runs once (none
#      of the library's signals reach it), and a worker takes the deferral
#      over (its text huge all the same, one line at verbosity 3);
#   3. it makes a thread at 300 ms: a worker takes the deferral over.
#
# Checked failing: with the tick's handler left to the program (1 and 2)
# or the thread not handed over (3), the counts and the lines differ.
. "$(dirname "$0")/lib.sh"
DT=$FAULT_BIN/dt_prog
[ -x "$DT" ] || fail "$DT is missing: build the tests first"
R=$WORK/res
mkdir "$R" || exit 2
run() {   # run NAME plain|lib ARGS...
	local name=$1 how=$2
	shift 2
	fresh "$DT"
	if [ "$how" = plain ]; then
		(cd "$D" && ./dt_prog "$@" >"$R/$name.out" 2>"$R/$name.err"; echo $? >"$R/$name.rc")
	else
		(cd "$D" && ENORMOUSTEXT_VERBOSE=3 ENORMOUSTEXT_DEFER=500ms ENORMOUSTEXT_DEFER_ON=main ENORMOUSTEXT_COPY_MIN=0 LD_PRELOAD=$PRE \
			./dt_prog "$@" >"$R/$name.out" 2>"$R/$name.err"; echo $? >"$R/$name.rc")
	fi
}
same() {
	cmp -s "$R/$1.out" "$R/$2.out" && [ "$(cat "$R/$1.rc")" = "$(cat "$R/$2.rc")" ] ||
		fail "$1 differs from $2: exit $(cat "$R/$1.rc") vs $(cat "$R/$2.rc"): $(diff "$R/$2.out" "$R/$1.out" | head -5 | tr '\n' ' ')"
}
huge() { sed -n 's/^huge //p' "$R/$1.err"; }

# 1. sleeping through the deadline
run sleep-plain plain --sleep 1500 --spin 800
run sleep-lib lib --sleep 1500 --spin 800
same sleep-lib sleep-plain
grep -qx 'slept: all of it' "$R/sleep-lib.out" || fail "1. the sleep: $(head -1 "$R/sleep-lib.out")"
[ "$(huge sleep-lib)" -ge 4096 ] || fail "1. only $(huge sleep-lib) kB huge after the deferral: $(grep -v '^enormoustext: .*left' "$R/sleep-lib.err" | head -5)"
grep -qx 'single_threaded 1 1' "$R/sleep-lib.err" || fail "1. __libc_single_threaded: $(grep single "$R/sleep-lib.err")"
grep -q 'worker' "$R/sleep-lib.err" && fail "1. a worker was made: $(grep worker "$R/sleep-lib.err")"
note "1. slept all of 1.5 s, then $(huge sleep-lib) kB huge, $(grep single "$R/sleep-lib.err")"

# 2. the program's own SIGURG
run urg-plain plain --sigurg --spin 1500
run urg-lib lib --sigurg --spin 1500
same urg-lib urg-plain
grep -qx 'SIGURG before: SIG_DFL' "$R/urg-lib.out" || fail "2. $(head -1 "$R/urg-lib.out")"
grep -qx 'SIGURG handled: 1' "$R/urg-lib.out" || fail "2. $(grep handled "$R/urg-lib.out")"
grep -q 'sets its own SIGURG disposition: a worker thread takes the deferral over' "$R/urg-lib.err" ||
	fail "2. no line saying a worker took over: $(grep DEFER "$R/urg-lib.err")"
[ "$(huge urg-lib)" -ge 4096 ] || fail "2. only $(huge urg-lib) kB huge"
note "2. SIG_DFL reported, 1 SIGURG handled, a worker took over, $(huge urg-lib) kB huge"

# 3. a thread of the program's
run thr-plain plain --thread --spin 1500
run thr-lib lib --thread --spin 1500
same thr-lib thr-plain
grep -q 'the program makes a thread: a worker thread takes the deferral over' "$R/thr-lib.err" ||
	fail "3. no line saying a worker took over: $(grep DEFER "$R/thr-lib.err")"
[ "$(huge thr-lib)" -ge 4096 ] || fail "3. only $(huge thr-lib) kB huge"
note "3. a worker took over at the thread, $(huge thr-lib) kB huge"
echo "PASS [$T]"
