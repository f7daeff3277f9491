#!/bin/bash
# fault.defer-long — ENORMOUSTEXT_DEFER=1s on a process that lives 4 s,
# checked from outside in the running process, both ways the deferral runs:
#
#   thread (ENORMOUSTEXT_DEFER_ON=thread): during the deferral nothing of
#     its text is huge and a thread named "enormoustext" waits with every
#     signal it can block blocked (glibc keeps its two internal ones);
#     after it, its text is huge and the worker is still there, waiting
#     for the passes dlopen may ask for;
#   main (the default, ENORMOUSTEXT_DEFER_ON=main, a single-threaded program): the process has one
#     thread, the program's, all along (sampled over 2 s), and
#     its text is huge after the deferral all the same (the tick: SIGURG on
#     the main thread's CPU time; no thread, no task);
#
# and the program prints what its plain run prints.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
R=$WORK/res
mkdir "$R" || exit 2
dp_plain "$R/plain" --hold 4000
[ "$(cat "$R/plain.rc")" = 0 ] || fail "plain run exited $(cat "$R/plain.rc"): $(cat "$R/plain.err")"

start() {   # start MODE: dp_prog held 4 s with the library; P its pid
	rm -f "$D/pid"
	(cd "$D" && ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=1s ENORMOUSTEXT_DEFER_ON=$1 LD_PRELOAD=$PRE \
		./dp_prog --hold 4000 --pidfile "$D/pid" >"$R/$1.out" 2>"$R/$1.err"; echo $? >"$R/$1.rc") &
	# its own pid (not the newest dp_prog: another test may run one meanwhile)
	P=
	wait_until 1 test -s "$D/pid" && P=$(cat "$D/pid")
	[ -n "$P" ] || fail "dp_prog did not start ($1)"
}

# --- thread
start thread
sleep 0.1
worker= names=
for t in /proc/"$P"/task/*; do
	n=$(cat "$t/comm" 2>/dev/null)
	names+="$n "
	[ "$n" = enormoustext ] && worker=$t
done
before=$(huge_kb "$P")
[ -n "$worker" ] || fail "thread: no thread named enormoustext during the deferral (threads: $names)"
blk=$(sed -n 's/^SigBlk:\t*//p' "$worker/status")
# every signal but SIGKILL (9), SIGSTOP (19) and glibc's SIGCANCEL/SIGSETXID (32, 33)
[ "$blk" = fffffffe7ffbfeff ] || [ "$blk" = fffffffffffbfeff ] ||
	fail "thread: the worker's blocked signals are $blk: a program's handler could run on it"
[ "$before" = 0 ] || fail "thread: $before kB of text already huge during the deferral"
sleep 1.8
after=$(huge_kb "$P")
names_after=$(cat /proc/"$P"/task/*/comm 2>/dev/null | sort | tr '\n' ' ')
wait
[ "$after" -ge 4096 ] || fail "thread: after the deferral only $after kB of the running process's text is huge: $(cat "$R/thread.err")"
case " $names_after " in *" enormoustext "*) ;; *) fail "thread: the worker is gone after its work: $names_after" ;; esac
dp_same "$R/thread" "$R/plain"
grep -q 'MiB of .* text on 2 MiB pages' "$R/thread.err" || fail "thread: no summary line from the worker: $(cat "$R/thread.err")"
note "thread: during the deferral: threads $names, worker SigBlk $blk, 0 kB huge; after: $after kB huge, threads $names_after"

# --- main
start main
# Samples over 2 s by the clock, not by their count: on a loaded machine 20
# rounds of them once took past the program's 4 s, and the last sample found
# it gone.  A huge_kb sample counts as "during the deferral" when it ended
# before 0.9 s (the deferral is 1 s).
t0=$(et_now_us)
most=0 samples=0 early=0 nearly=0
while [ $(($(et_now_us) - t0)) -lt 2000000 ]; do
	n=$(ls /proc/"$P"/task 2>/dev/null | wc -l)
	[ "$n" -gt "$most" ] && most=$n
	samples=$((samples + 1))
	k=$(huge_kb "$P")
	if [ $(($(et_now_us) - t0)) -lt 900000 ]; then
		nearly=$((nearly + 1))
		[ "$k" = 0 ] || early=$k
	fi
	sleep 0.1
done
late=$(huge_kb "$P")   # at about 2 s; the program holds 4 s: it runs still
late_at=$((($(et_now_us) - t0) / 1000))
wait
[ "$most" = 1 ] || fail "main: the process had $most threads at once (the program has one)"
[ "$nearly" -ge 1 ] || fail "main: no sample within the first 0.9 s (the machine stalled): the deferral's start was not seen"
[ "$early" = 0 ] || fail "main: $early kB of text already huge during the deferral"
[ "${late:-0}" -ge 4096 ] || fail "main: after the deferral (at ${late_at} ms) only ${late:-no} kB of the running process's text is huge: $(cat "$R/main.err")"
dp_same "$R/main" "$R/plain"
grep -q 'MiB of .* text on 2 MiB pages' "$R/main.err" || fail "main: no summary line: $(cat "$R/main.err")"
note "main: threads at most $most ($samples samples over 2 s); 0 kB huge in the $nearly samples before 0.9 s, $late kB at $late_at ms"
echo "PASS [$T]"
