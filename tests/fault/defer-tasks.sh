#!/bin/bash
# fault.defer-tasks — a program at its task limit makes every task it makes
# without the library.  By default (ENORMOUSTEXT_DEFER_ON=main: the deferral on
# the program's own thread while it has no other: the tick) no task of the library's exists
# for a fork, a posix_spawn or a system() to meet; a thread of the
# program's hands the deferral to a worker, whose task is given back if the
# thread finds no task free.  With a worker (ENORMOUSTEXT_DEFER_ON=thread)
# the worker's own task is given back (interpose/tasks.c, et_defer_give_way),
# and the worker leaves by itself once its work is done (runtime/defer.c).
#
# dp_prog --tasks 3 makes, one at a time, 3 forks, 3 posix_spawns, 3
# threads and 3 system()s, and prints how many of each succeeded:
#   1. in a pids cgroup with pids.max=2 (cgroup2 where it has the pids
#      controller, else cgroup v1's; the test says which), first thing in
#      main (the worker waits for its deferral), then during the hold once
#      the worker's work is done (--tasks-at, ENORMOUSTEXT_DEFER=100ms);
#   2. its work done, the worker leaves after 10 s with nothing to serve
#      (the threads of the process, read from /proc at 1 s and 11.5 s);
#   3. as a user with RLIMIT_NPROC=2 and no other process (root is not
#      held to it), first thing in main.
# Runs 1 and 3 both ways (thread, main), run 2 with a worker.  Each run
# prints what the plain run prints, with the same exit status.  Without
# the give-way every fork of run 1 fails with EAGAIN; with main no fork or
# spawn meets a task of the library's (no line about one).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
[ "$(id -u)" = 0 ] || skip "needs root (a pids cgroup; running the program as another user)"

# ---- a pids cgroup: cgroup2 if it hands out pids, else the v1 hierarchy
CG=
if [ -r /sys/fs/cgroup/cgroup.controllers ] && grep -qw pids /sys/fs/cgroup/cgroup.controllers; then
	grep -qw pids /sys/fs/cgroup/cgroup.subtree_control || echo +pids >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	CG=/sys/fs/cgroup/et-defer-tasks.$$ V=2
else
	V1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)pids(,|$)/ { print $2; exit }' /proc/mounts)
	[ -n "$V1" ] && CG=$V1/et-defer-tasks.$$ V=1
fi
[ -n "$CG" ] || skip "no pids controller (cgroup2 or v1) to limit a program's tasks"
mkdir "$CG" || fail "cannot create the cgroup $CG"
at_exit "rmdir '$CG' 2>/dev/null"
echo 2 >"$CG/pids.max" || fail "cannot set $CG/pids.max"
note "pids cgroup v$V: $CG, pids.max=2"

# in_cg OUT [VAR=VALUE...] -- ARGS...: dp_prog ARGS in the cgroup (the shell
# joins it, then execs env, which execs dp_prog: one task all along)
in_cg() {
	local out=$1 envs=()
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	(cd "$D" && sh -c 'echo $$ >"$1" && shift && exec env "$@"' sh "$CG/cgroup.procs" "${envs[@]}" ./dp_prog "$@" \
		>"$out.out" 2>"$out.err"; echo $? >"$out.rc")
}
all_made() {   # OUT: every task of every kind was made
	[ "$(grep -c ': 3 of 3$' "$1.out")" = 4 ] || fail "$(basename "$1"): not every task was made: $(grep ' of ' "$1.out" | tr '\n' ' ') $(head -3 "$1.err" | tr '\n' ' ')"
}

R=$WORK/res
mkdir "$R" || exit 2
in_cg "$R/plain" -- --tasks 3
all_made "$R/plain"
in_cg "$R/lib" ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=1s ENORMOUSTEXT_DEFER_ON=thread LD_PRELOAD="$PRE" -- --tasks 3
dp_same "$R/lib" "$R/plain"
grep -q 'ENORMOUSTEXT_DEFER: fork found no task free (EAGAIN) before the deferral ended: nothing moved' "$R/lib.err" ||
	fail "no line saying the waiting worker gave its task back: $(head -3 "$R/lib.err" | tr '\n' ' ')"
note "thread, at start: $(grep -c ' of ' "$R/lib.out") kinds of task, all made; $(grep -o 'fork found.*' "$R/lib.err")"
in_cg "$R/main" ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=1s ENORMOUSTEXT_DEFER_ON=main LD_PRELOAD="$PRE" -- --tasks 3
dp_same "$R/main" "$R/plain"
grep -qE '(fork|posix_spawn|system) found no task free' "$R/main.err" &&
	fail "main: a fork, spawn or system() met a task of the library's: $(head -3 "$R/main.err" | tr '\n' ' ')"
note "main, at start: all made; $(grep -o 'ENORMOUSTEXT_DEFER: .*' "$R/main.err" | head -1)"

# after the work: the worker moved the text, then gave its task back (or left)
in_cg "$R/plain2" -- --hold 2000 --tasks-at 1200 --tasks 3
all_made "$R/plain2"
for m in thread main; do
	in_cg "$R/lib2$m" ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=100ms ENORMOUSTEXT_DEFER_ON=$m LD_PRELOAD="$PRE" -- --hold 2000 --tasks-at 1200 --tasks 3
	dp_same "$R/lib2$m" "$R/plain2"
	grep -qE '^enormoustext: [0-9]+ of [0-9]+ objects, [1-9][0-9.]* [MK]iB of .* on 2 MiB pages' "$R/lib2$m.err" ||
		fail "$m: no text moved before the tasks: $(head -3 "$R/lib2$m.err" | tr '\n' ' ')"
	note "$m, after the work: all made; $(grep -o 'ENORMOUSTEXT_DEFER: .*' "$R/lib2$m.err" | head -1)"
done
grep -q 'no task free' "$R/lib2main.err" && fail "main: a task met a task of the library's after the work: $(cat "$R/lib2main.err")"

# ---- its work done and nothing to serve for 10 s, the worker leaves
fresh "$DP"
dp_start "$R/idle" ENORMOUSTEXT_DEFER=100ms ENORMOUSTEXT_DEFER_ON=thread LD_PRELOAD="$PRE" -- ./dp_prog --hold 12500
sleep 1
during=$(cat /proc/"$P"/task/*/comm 2>/dev/null | sort | tr '\n' ' ')
sleep 10.5
after=$(cat /proc/"$P"/task/*/comm 2>/dev/null | sort | tr '\n' ' ')
wait
case " $during " in *" enormoustext "*) ;; *) fail "no worker 1 s into the run (threads: $during)" ;; esac
case " $after " in *" enormoustext "*) fail "the worker is still there 11.5 s into the run, its work long done (threads: $after)" ;; esac
note "threads at 1 s: $during; at 11.5 s: $after"

# ---- RLIMIT_NPROC=2, as a user with no process of its own
command -v setpriv >/dev/null && command -v prlimit >/dev/null || skip "needs setpriv and prlimit (util-linux) for the RLIMIT_NPROC half"
pgrep -u 65534 >/dev/null && skip "uid 65534 has processes of its own: RLIMIT_NPROC would count them"
fresh "$DP"
cp "$PRE" "$D/lib.so" && chmod 755 "$WORK" "$D" "$D/lib.so" && chmod 777 "$R"
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups prlimit --nproc=2 -- "$@"; }
(cd "$D" && asnobody ./dp_prog --tasks 3 >"$R/np-plain.out" 2>"$R/np-plain.err"; echo $? >"$R/np-plain.rc")
all_made "$R/np-plain"
for m in thread main; do
	(cd "$D" && ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=1s ENORMOUSTEXT_DEFER_ON=$m LD_PRELOAD=$D/lib.so asnobody ./dp_prog --tasks 3 \
		>"$R/np-$m.out" 2>"$R/np-$m.err"; echo $? >"$R/np-$m.rc")
	dp_same "$R/np-$m" "$R/np-plain"
done
grep -q 'fork found no task free (EAGAIN)' "$R/np-thread.err" || fail "RLIMIT_NPROC=2: no line about the task given back: $(head -3 "$R/np-thread.err" | tr '\n' ' ')"
grep -qE '(fork|posix_spawn|system) found no task free' "$R/np-main.err" &&
	fail "RLIMIT_NPROC=2, main: a fork, spawn or system() met a task of the library's: $(head -3 "$R/np-main.err" | tr '\n' ' ')"
note "RLIMIT_NPROC=2 as nobody: all made, both ways"
echo "PASS [$T]"
