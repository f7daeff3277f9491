#!/bin/bash
# tool_record_pid — `record -p PID` samples a process that runs already
# (as `perf record -p` does; it could only run a COMMAND): started before
# the recording, spinning in one function of its own (its mappings made
# before the recording, read from /proc/PID/maps), and in another function
# in a thread it starts after the recording began (found and sampled too); --duration ends it; the process is
# left running.  The profile names the program by its build-id and its
# hottest granule lies in the spinning function (nm says where).  A PID
# that does not exist, --pid with a COMMAND, --duration without --pid:
# refused.
. "$(dirname "$0")/lib.sh"

cat >"$W/spin.c" <<'C'
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
__attribute__((noinline)) unsigned spin_here(unsigned x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 2654435761u + (unsigned)i;
	return x;
}
__attribute__((noinline)) unsigned spin_later(unsigned x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 2246822519u + (unsigned)i;
	return x;
}
static void *later(void *a)
{
	(void)a;
	for (unsigned x = 1;;)
		sink = x = spin_later(x);
	return NULL;
}
int main(void)
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	/* a second thread, in a function of its own, once the recording has
	 * started (the test sends SIGUSR1 then): one it must find by itself */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, NULL);
	pthread_t t;
	for (unsigned x = 1;;) {
		sink = x = spin_here(x);
		struct timespec z = { 0, 0 };
		if (sigtimedwait(&s, NULL, &z) == SIGUSR1)
			pthread_create(&t, NULL, later, NULL);
	}
}
C
"$TT_CC" -O1 -g -pthread -Wl,--build-id "$W/spin.c" -o "$W/spin" || fail "cannot build the spinning program"
"$W/spin" >"$W/spin.out" 2>&1 &
SPID=$!
PIDS+=("$SPID")
wait_line "$W/spin.out" '^ready' 10
(sleep 0.5; kill -USR1 "$SPID") &
t rec -- "$TOOL" record -o "$W/p.prof" --pid "$SPID" --duration 1.5
if [ "$RC" -ne 0 ] && grep -q 'perf_event_open' "$ERR"; then
	skip "this machine refuses perf_event_open here: $(head -1 "$ERR")"
fi
expect_rc 0 "record --pid"
kill -0 "$SPID" 2>/dev/null || fail "record --pid stopped the process"
grep -q "^enormoustext record: sampling PID $SPID (1 thread)" "$ERR" || fail "record --pid does not say what it samples: $(head -1 "$ERR")"
read -r total < <(sed -n 's/^enormoustext record: \([0-9]*\) samples\{0,1\} .* written to .*/\1/p' "$ERR")
[ -n "$total" ] || fail "record's last line: $(tail -1 "$ERR")"
# 1.5 s at 999 Hz a thread, less on a busy machine (CPU time is sampled)
[ "$total" -ge 300 ] || fail "only $total samples of a spinning process in 1.5 s"
bid=$(readelf -n "$W/spin" | sed -n 's/.*Build ID: *//p')
grep -q "^object $bid $W/spin\$" "$W/p.prof" || fail "the profile does not name the program by its build-id ($bid): $(head -5 "$W/p.prof")"
fn=$(nm "$W/spin" | awk '$3 == "spin_here" { print $1 }')
size=$(nm -S "$W/spin" | awk '$4 == "spin_here" { print $2 }')
top=$(awk -v b="$bid" '$1 == "object" { o = ($2 == b) } o && $1 ~ /^[0-9a-f]+$/ { if ($2 > m) { m = $2; a = $1 } } END { print a }' "$W/p.prof")
[ -n "$top" ] && [ -n "$fn" ] && [ -n "$size" ] || fail "no samples for the program, or no spin_here"
[ $((16#$top + 64)) -gt $((16#$fn)) ] && [ $((16#$top)) -lt $((16#$fn + 16#$size)) ] ||
	fail "the hottest granule is at $top, spin_here is [$fn, +$size)"
# the thread started during the recording was found and sampled: samples in
# spin_later, which only it runs
fl=$(nm "$W/spin" | awk '$3 == "spin_later" { print $1 }')
sl=$(nm -S "$W/spin" | awk '$4 == "spin_later" { print $2 }')
later=$(awk -v b="$bid" -v lo=$((16#$fl)) -v hi=$((16#$fl + 16#$sl)) "$AWK_HEX"'
	$1 == "object" { o = ($2 == b) }
	o && $1 ~ /^[0-9a-f]+$/ && hex($1) + 64 > lo && hex($1) < hi { n += $2 }
	END { print n + 0 }' "$W/p.prof")
[ "$later" -gt 0 ] || fail "no samples in spin_later: the thread started during the recording was not sampled"
kill "$SPID"; wait "$SPID" 2>/dev/null

t nopid -- "$TOOL" record -o "$W/x.prof" --pid 4194000
expect_bad 1 "record --pid of no process" "PID 4194000: no such process"
t withcmd -- "$TOOL" record -o "$W/x.prof" --pid "$$" -- true
expect_bad 2 "--pid and a COMMAND" "--pid takes no COMMAND"
t duration -- "$TOOL" record -o "$W/x.prof" --duration 1 -- true
expect_bad 2 "--duration without --pid" "--duration goes with --pid"
t both -- "$TOOL" record -o "$W/x.prof" --pid "$$" --from-perf-script "$W/x"
expect_bad 2 "--pid and --from-perf-script" "give --pid or --from-perf-script, not both"
[ ! -e "$W/x.prof" ] || fail "a refused record wrote $W/x.prof"

pass
