#!/bin/bash
# tool_daemon — `daemon`: a program's text huge with no code of ours in it.
# A dynamic program that dlopens a 4.4 MiB congruent library (enormous.ld)
# and a static program linked with enormous.ld, fresh copies (page cache
# small): run before the daemon, neither has a byte of text huge (the
# premise); the daemon (--only this test's directory, so that it primes
# nothing of the other tests') learns a process that ran before it started
# (its first look at /proc) and primes that one's library once it ends;
# it learns the two programs from their exec, primes the
# static program at once and the library once no process maps its small
# pages; run again, plain (no library anywhere), both have their text huge
# from the page cache.  A settled program run 20 times more, 0.1 s apart,
# is reported to it only around each --recheck's flush (its exec quieted
# by an ignore mark; the daemon before heard all 20).  The library's windows dropped from the cache
# (as the kernel evicts them), its next user is seen --recheck after the
# priming: the daemon checks it, waits for that user to end, primes it
# again, and the run after is huge again.  SIGTERM ends it with status 0;
# STATE/known names both files, STATE/daemon.json says primed (the library
# primed again once); with the library's windows dropped again, `daemon
# --once` primes them again from STATE/known.  Bad input: an operand, a
# relative --only, a bad --delay, a --recheck under 1 s.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "the daemon needs root (fanotify on the filesystem)"

need_huge_folios

# ---- bad input
expect_daemon_bad() {  # PATTERN ARGS...
	local pat=$1
	shift
	t bad -- "$TOOL" daemon "$@"
	expect_rc 2
	grep -qE -- "$pat" "$ERR" || fail "daemon $*: stderr does not say /$pat/: $(cat "$ERR")"
}
expect_daemon_bad "no operand" extra
expect_daemon_bad "--only: 'rel' is not an absolute path" --only rel
expect_daemon_bad "--delay: 'soon' is not a duration" --delay soon
expect_daemon_bad "--recheck: '10ms' is not a duration of 1s or more" --recheck 10ms

# ---- the programs
bigdso big.so
cat >"$W/user.c" <<'EOF'
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	int (*f)(void) = h ? (int (*)(void))dlsym(h, "big_entry") : NULL;
	if (!f)
		return 1;
	f();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (argc > 2)
		pause();
	return 0;
}
EOF
"$TT_CC" -O1 -o "$W/user.bin" "$W/user.c" -ldl 2>"$W/user.log" || fail "cannot build the dlopen program: $(head -3 "$W/user.log")"
bigstatic "$W/st.bin"
mkdir "$W/run"
cp "$W/big.so" "$W/run/big.so" && cp "$W/user.bin" "$W/run/user" && cp "$W/st.bin" "$W/run/static" || fail "cannot copy"
sync "$W/run/big.so" "$W/run/user" "$W/run/static"

huge_of() {  # PID FILE: kB of FILE's mappings in PID mapped huge from the page cache
	awk -v f="$2" '/^[0-9a-f]+-[0-9a-f]+ / { mine = ($6 == f); next } mine && /^FilePmdMapped:/ { kb += $2 } END { print kb + 0 }' "/proc/$1/smaps"
}
both() {  # NAME [ERE]: run both programs (until the daemon's log has a line matching ERE), print "LIB_KB STATIC_KB", end them
	local name=$1 until=${2:-}
	"$W/run/user" "$W/run/big.so" wait >"$W/$name.u.out" 2>&1 </dev/null &
	local up=$!
	PIDS+=("$up")
	"$W/run/static" wait >"$W/$name.s.out" 2>&1 </dev/null &
	local sp=$!
	PIDS+=("$sp")
	wait_line "$W/$name.u.out" '^ready ' 10 "$up" || fail "$name: the dlopen program did not start: $(cat "$W/$name.u.out")"
	wait_line "$W/$name.s.out" '^ready ' 10 "$sp" || fail "$name: the static program did not start: $(cat "$W/$name.s.out")"
	[ -z "$until" ] || wait_line "$W/d.err" "$until" 20 >/dev/null || fail "$name: the daemon's log has no /$until/ while the programs run: $(tail -3 "$W/d.err")"
	echo "$(huge_of "$up" "$W/run/big.so") $(huge_of "$sp" "$W/run/static")"
	kill "$up" "$sp" 2>/dev/null
	wait "$up" "$sp" 2>/dev/null
	true
}
read -r lib0 st0 < <(both before)
note "without the daemon: big.so ${lib0} kB, the static program ${st0} kB huge"
[ "$lib0" = 0 ] && [ "$st0" = 0 ] || fail "fresh copies already huge before the daemon ran: the test would test nothing"

# a process that runs before the daemon starts: learnt by its first look at /proc
cp "$W/big.so" "$W/run/early.so" || fail "cannot copy"
"$W/run/user" "$W/run/early.so" wait >"$W/early.out" 2>&1 </dev/null &
EP=$!
PIDS+=("$EP")
wait_line "$W/early.out" '^ready ' 10 "$EP" || fail "the early program did not start: $(cat "$W/early.out")"

# ---- the daemon
mkdir "$W/state"
"$TOOL" daemon --only "$W/run" --state "$W/state" --delay 100ms --recheck 3s --verbose >"$W/d.out" 2>"$W/d.err" </dev/null &
DP=$!
PIDS+=("$DP")
wait_line "$W/d.err" 'watching [0-9]+ filesystems?' 10 "$DP" || fail "the daemon did not start: $(cat "$W/d.err")"
wait_line "$W/d.err" "learnt $W/run/early.so" 10 "$DP" || fail "a process running before the daemon was not learnt: $(cat "$W/d.err")"
kill "$EP"; wait "$EP" 2>/dev/null
wait_line "$W/d.err" "$W/run/early.so: primed \(3 of 3 windows" 20 "$DP" ||
	fail "the early process's library was not primed once it ended: $(tail -5 "$W/d.err")"
read -r lib1 st1 < <(both learn "learnt $W/run/big.so")
note "first run with the daemon: big.so ${lib1} kB, the static program ${st1} kB huge"
wait_line "$W/d.err" "$W/run/big.so: primed \(3 of 3 windows" 20 "$DP" ||
	fail "the library was not primed once its holder ended: $(tail -5 "$W/d.err")"
grep -qE "$W/run/static: primed \(([1-9][0-9]*) of \1 windows" "$W/d.err" || fail "the static program was not primed: $(tail -5 "$W/d.err")"
read -r lib2 st2 < <(both after)
note "again, plain: big.so ${lib2} kB, the static program ${st2} kB huge"
[ "$lib2" -ge 6144 ] || fail "big.so: only $lib2 kB huge after the daemon primed it (3 windows: 6144)"
[ "$st2" -ge 2048 ] || fail "the static program: only $st2 kB huge after the daemon primed it"
grep -c "learnt " "$W/d.err" | grep -qx 4 || fail "the daemon learnt other files than the four under --only: $(grep learnt "$W/d.err")"

# ---- a settled program run again and again: quiet
events() {  # the daemon's count of the static program's exec events (its figures are written within a second)
	sleep 1.5
	json "$W/state/daemon.json"
	local i
	i=$(jindex "$W/state/daemon.json.flat" .files path "$W/run/static") || fail "daemon.json has no entry for the static program"
	jneed "$W/state/daemon.json.flat" ".files[$i].exec_events"
}
"$W/run/static" >/dev/null || fail "the static program failed"
e0=$(events)
for i in $(seq 20); do "$W/run/static" >/dev/null || fail "the static program failed on run $i"; sleep 0.1; done
e1=$(events)
note "20 runs of the primed static program, 0.1 s apart: $((e1 - e0)) exec events of it read by the daemon"
# each --recheck (3 s) the marks are flushed: the next exec is read, and
# those queued behind it within the daemon's quarter-second batch
[ $((e1 - e0)) -le 8 ] || fail "the daemon read $((e1 - e0)) exec events for 20 runs of a program it had primed (its exec not quieted)"

# ---- the library's windows evicted: primed again once its next user is seen and has ended
et_drop_cache "$W/run/big.so"
t evicted -- "$TOOL" prime --check "$W/run/big.so"
expect_out "0 of 3 windows" "the library's windows were not dropped from the cache"
sleep 3   # --recheck since the priming, and since the program's maps were last read
read -r lib3 _ < <(both evicted "$W/run/big.so: checked again")
note "the first run after the eviction: big.so ${lib3} kB huge (read back small: the daemon waits for it to end)"
wait_until 20 bash -c "[ \$(grep -c '$W/run/big.so: primed (3 of 3 windows' '$W/d.err') -ge 2 ]" ||
	fail "the evicted library was not primed again: $(tail -5 "$W/d.err")"
read -r lib4 _ < <(both again)
note "the run after: big.so ${lib4} kB huge"
[ "$lib4" -ge 6144 ] || fail "big.so: only $lib4 kB huge after the daemon primed it again (3 windows: 6144)"

# ---- SIGTERM, what it kept
kill -TERM "$DP"
wait_until 5 bash -c "! kill -0 $DP 2>/dev/null" || fail "the daemon did not end within 5 s of SIGTERM"
wait "$DP"
rc=$?
[ "$rc" = 0 ] || fail "the daemon ended with status $rc after SIGTERM"
grep -qx "$W/run/big.so" "$W/state/known" && grep -qx "$W/run/static" "$W/state/known" ||
	fail "STATE/known does not name both files: $(cat "$W/state/known")"
json "$W/state/daemon.json"
[ "$(awk -F'\t' '$1 ~ /^\.files\[[0-9]+\]\.state$/ && $3 == "primed"' "$W/state/daemon.json.flat" | wc -l)" = 3 ] ||
	fail "daemon.json does not say the three libraries and programs are primed: $(grep state "$W/state/daemon.json.flat")"
i=$(jindex "$W/state/daemon.json.flat" .files path "$W/run/big.so") || fail "daemon.json has no entry for big.so"
[ "$(jneed "$W/state/daemon.json.flat" ".files[$i].primed_again")" = 1 ] ||
	fail "daemon.json does not say big.so was primed again once: $(grep "files\[$i\]" "$W/state/daemon.json.flat")"

# ---- --once: primed again from STATE/known
et_drop_cache "$W/run/big.so"
t dropped -- "$TOOL" prime --check "$W/run/big.so"
expect_out "0 of 3 windows" "the library's windows were not dropped from the cache"
t once -- "$TOOL" daemon --once --state "$W/state"
expect_rc 0
t recheck -- "$TOOL" prime --check "$W/run/big.so"
expect_out "3 of 3 windows of 2M huge" "daemon --once did not prime the library again"
pass
