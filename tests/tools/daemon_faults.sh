#!/bin/bash
# tool_daemon_faults — the daemon where things go wrong.  A static program
# with 64 MiB of text (32 or 33 windows, linked with enormous.ld) is primed by the
# daemon from STATE/known at its start (as at boot); after each fault below
# every byte of the file read back equals a copy made before (another file:
# not the same page cache), the program runs and prints its line, and a
# daemon started afterwards primes the file whole (the program's next run
# huge):
#   1. killed (SIGKILL) at 1/8, 2/8 ... 7/8 of the time a whole prime
#      takes here (daemon --once, timed): at least one kill leaves the file
#      part primed (else no kill fell mid-prime: the case tested nothing);
#   2. the file truncated to 16 MiB in place during its prime (at 1/8,
#      2/8 ... of that time, until twice the prime had not finished): the
#      daemon lives on (it reads with MADV_POPULATE_READ, which fails where
#      a touch would take SIGBUS) and ends with status 0 on SIGTERM; the
#      file's 16 MiB equal the copy's first 16;
#   3. the file replaced (a new file renamed over it) half-way through its
#      prime: the new file is learnt from its next exec and primed;
#   4. memory pressure: the daemon in a v1 memory cgroup limited to 24 MiB
#      while it primes the 64 MiB file (the page cache it reads is charged
#      there): the cgroup hits its limit (failcnt > 0), no OOM kill, the
#      daemon ends with status 0 on SIGTERM;
#   5. a read-only filesystem (a read-only bind mount): a program run from
#      it is learnt and primed as from any other (the page cache is read).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "the daemon needs root (fanotify on the filesystem)"
need_huge_folios

mkdir -p "$W/run" "$W/state"
et_big_static "$W/ref" "$TT_CC" "$TT_SRC/../../linker-scripts/enormous.ld" ||
	skip "no static C library to link the 64 MiB program with: $(head -2 "$W/ref.log")"
APP=$W/run/app
fresh() { cp "$W/ref" "$APP.new" && sync "$APP.new" && mv "$APP.new" "$APP" || fail "cannot copy the program"; }
fresh
echo "$APP" >"$W/state/known"

drop() { et_drop_cache "$1"; }
windows() {  # FILE: its windows huge in the page cache now ("N of M")
	"$TOOL" prime --check "$1" 2>&1 | sed -n 's/.*: \([0-9]*\) of \([0-9]*\) windows.*/\1 \2/p'
}
# same WHAT: the file reads back as the copy, and the program runs
same() {
	cmp -s "$APP" "$W/ref" || fail "$1: the program's bytes read back differ from the copy made before: $(cmp "$APP" "$W/ref" 2>&1 | head -1)"
	"$APP" >"$W/run.out" 2>&1 && grep -q '^ready ' "$W/run.out" || fail "$1: the program did not run: $(head -3 "$W/run.out")"
}
huge_share() {  # the share of the program's text mapped huge, running (percent)
	# (its own "ready PID": a line the run before left in the file, read
	# before the shell's redirection emptied it, once made a run that had
	# not yet started its text read as 0% huge)
	rm -f "$W/hs.out"
	"$APP" wait >"$W/hs.out" 2>&1 </dev/null &
	local p=$!
	PIDS+=("$p")
	wait_line "$W/hs.out" "^ready $p\$" 10 "$p" || fail "the program did not start: $(cat "$W/hs.out")"
	awk -v app="$APP" '/^[0-9a-f]+-[0-9a-f]+ / { x = ($2 ~ /x/ && $6 == app); next }
		x && /^Size:/ { s += $2 } x && /^FilePmdMapped:/ { h += $2 } END { printf "%d\n", s ? 100 * h / s : 0 }' "/proc/$p/smaps"
	kill "$p"; wait "$p" 2>/dev/null
	true
}
# run_share WHAT: huge_share of a run right after a prime.  This host
# reclaims cold page cache on its own (a DAMON pageout scheme runs here:
# kdamond), and a freshly primed window can go before the run maps it:
# where the run is not huge and prime --check shows windows gone from the
# cache (the eviction proven), the file is primed once more (daemon --once)
# and run again, said in a line.  Windows still huge in the cache and a run
# that maps them small fails.
run_share() {
	local s n2 m2
	s=$(huge_share)
	if [ "$s" -lt 90 ]; then
		read -r n2 m2 < <(windows "$APP")
		[ "$n2" -lt "$m2" ] || { echo "$s"; return; }
		mkdir -p "$W/again" && echo "$APP" >"$W/again/known"
		"$TOOL" daemon --once --state "$W/again" 2>/dev/null
		note "$1: $((m2 - n2)) of $m2 windows were evicted between the prime and the run ($s% huge; this host reclaims cold page cache: $(pgrep -c kdamond) kdamond): primed once more" >&2
		s=$(huge_share)
	fi
	echo "$s"
}
DP=
daemon_start() {  # [PREFIX...]: the daemon (after PREFIX: a command that execs it), its stderr in $W/d.err
	rm -f "$W/state/daemon.json" "$W/d.err"   # (no line of the daemon before may be read as this one's)
	"$@" "$TOOL" daemon --only "$W/run" --state "$W/state" --delay 100ms --verbose >/dev/null 2>"$W/d.err" </dev/null &
	DP=$!
	PIDS+=("$DP")
}
daemon_primed() {  # until its state is written (after STATE/known's files are primed): status 0, 1 after 60 s
	wait_until 60 test -s "$W/state/daemon.json"
}
daemon_stop() {  # WHAT: SIGTERM, status 0 expected
	kill -TERM "$DP"
	wait_until 10 bash -c "! kill -0 $DP 2>/dev/null" || fail "$1: the daemon did not end within 10 s of SIGTERM"
	local rc=0
	wait "$DP" || rc=$?
	[ "$rc" = 0 ] || fail "$1: the daemon ended with status $rc (stderr: $(tail -3 "$W/d.err"))"
}
# whole FILE LOG: LOG (a daemon's --verbose stderr) says it primed FILE
# whole, "primed (M of M windows"; prints "M M".  (Its own count when it
# primed: prime --check afterwards can find a window this host's reclaim
# took meanwhile, see run_share.)
whole_in_log() {
	sed -n "s|^enormoustext daemon: $1: primed (\([0-9]*\) of \1 windows.*|\1 \1|p" "$2" | tail -1
}
primed_whole() {  # WHAT: a daemon started now primes the file whole; its next run is huge
	daemon_start
	daemon_primed || fail "$1: the daemon wrote no state within 60 s: $(tail -3 "$W/d.err")"
	daemon_stop "$1"
	read -r n m < <(whole_in_log "$APP" "$W/d.err")
	[ -n "$m" ] && [ "$m" -ge 30 ] || fail "$1: a daemon started afterwards did not prime the file whole: $(tail -3 "$W/d.err")"
	local s
	s=$(run_share "$1")
	note "$1: then a daemon's start primed $n of $m windows; the next run ${s}% huge"
	[ "$s" -ge 90 ] || fail "$1: the program's next run has only ${s}% of its text huge"
}

# ---- cases 1 and 2 slow the daemon down to a tenth of a CPU (a v1 cpu
# cgroup: 1 ms every 10 ms), so that a whole prime takes long enough for a
# kill or a truncation to fall within it
SLOW=()
CPUCG=/sys/fs/cgroup/cpu/tt_daemon_faults.$$
if [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] && mkdir "$CPUCG" 2>/dev/null; then
	at_exit "rmdir '$CPUCG' 2>/dev/null"
	echo 10000 >"$CPUCG/cpu.cfs_period_us" && echo 1000 >"$CPUCG/cpu.cfs_quota_us" || fail "cannot limit the cpu cgroup"
	SLOW=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CPUCG")
else
	note "no v1 cpu controller here: cases 1 and 2 run the daemon at full speed"
fi
# how long a whole prime takes so (daemon --once: the same priming from
# STATE/known as at the daemon's start, timed without polling)
drop "$APP"
read -r n m < <(windows "$APP")
[ "$n" = 0 ] || fail "the program's windows were not dropped from the cache ($n of $m huge)"
t0=$(et_now_us)
"${SLOW[@]}" "$TOOL" daemon --once --verbose --state "$W/state" 2>"$W/once.err" || fail "daemon --once failed: $(cat "$W/once.err")"
TP=$(($(et_now_us) - t0))
read -r n m < <(whole_in_log "$APP" "$W/once.err")
note "a whole prime (daemon --once${SLOW[*]:+, a tenth of a CPU}): $((TP / 1000)) ms, ${n:-?} of ${m:-?} windows"
[ -n "$m" ] && [ "$m" -ge 30 ] || fail "daemon --once did not prime the file whole: $(cat "$W/once.err")"
mapfile -t EIGHTHS < <(awk -v t="$TP" 'BEGIN { for (q = 1; q <= 7; q++) printf "%.3f\n", t * q / 8 / 1e6 }')

# ---- 1. SIGKILL mid-prime, at 1/8 ... 7/8 of that time after its start
part=0 seen=""
for q in 1 2 3 4 5 6 7; do
	drop "$APP"
	daemon_start "${SLOW[@]}"
	sleep "${EIGHTHS[q - 1]}"
	kill -KILL "$DP"; wait "$DP" 2>/dev/null
	read -r n m < <(windows "$APP")
	seen+=" $n/$m"
	[ "$n" -gt 0 ] && [ "$n" -lt "$m" ] && part=$((part + 1))
	same "killed at $q/8 of a prime"
done
note "killed at 1/8 ... 7/8 of a prime: windows huge after each:$seen"
[ "$part" -ge 1 ] || fail "no kill fell mid-prime (windows huge after each:$seen): the case tested nothing"
primed_whole "after the kills"

# ---- 2. truncated during the prime, at 1/8, 2/8 ... of its time, until
# twice the daemon had not finished it when the file shrank (its log has no
# "primed (M of M" for the whole file)
mid=0 seen=""
for q in 1 2 3 4 5 6 7; do
	fresh
	# (a file it gave up on is not kept in STATE/known: named again, as
	# a host's daemon knows it from before)
	echo "$APP" >"$W/state/known"
	drop "$APP"
	daemon_start "${SLOW[@]}"
	sleep "${EIGHTHS[q - 1]}"
	truncate -s 16M "$APP" || fail "cannot truncate the program"
	sleep 2   # the daemon's retry of a window it could not prime comes after 1 s
	kill -0 "$DP" 2>/dev/null || fail "the daemon died when the file it primed was truncated at $q/8 (stderr: $(tail -3 "$W/d.err"))"
	daemon_stop "truncated at $q/8"
	cmp -s "$APP" <(head -c 16M "$W/ref") || fail "truncated at $q/8: the file's 16 MiB differ from the copy's first 16"
	if grep -qE "$APP: primed \(([0-9]+) of \1 windows" "$W/d.err" && [ "$(grep -cE "$APP: primed \((3[0-9]) of" "$W/d.err")" -ge 1 ]; then
		seen+=" $q/8:after"
	else
		seen+=" $q/8:during($(grep -c . "$W/d.err") lines: $(tail -1 "$W/d.err" | sed 's/.*app: //'))"
		mid=$((mid + 1))
		[ "$mid" -lt 2 ] || break
	fi
done
note "truncated to 16 MiB while the daemon primed it; the daemon lived and ended with status 0 each time:$seen"
[ "$mid" -ge 1 ] || fail "every truncation came after the prime had finished:$seen: the case tested nothing"
fresh
echo "$APP" >"$W/state/known"
primed_whole "after the truncation"

# ---- 3. replaced during the prime
drop "$APP"
daemon_start
sleep "$(awk -v t="$TP" 'BEGIN { printf "%.3f", t / 2 / 1e6 }')"
fresh
"$APP" >"$W/r1.out" 2>&1 || fail "the replaced program did not run: $(cat "$W/r1.out")"
wait_until 30 bash -c "[ \$(grep -c 'learnt $APP\$' '$W/d.err') -ge 2 ]" ||
	fail "the new file was not learnt from its exec: $(tail -3 "$W/d.err")"
whole() { read -r n m < <(windows "$APP"); [ "$n" = "$m" ]; }
wait_until 30 whole || fail "the new file was not primed whole: $(tail -3 "$W/d.err"); $(windows "$APP")"
daemon_stop "replaced"
same "replaced"
s=$(run_share replaced)
note "replaced half-way through its prime: the new file learnt from its exec and primed; its next run ${s}% huge"
[ "$s" -ge 90 ] || fail "the replacing file's next run has only ${s}% of its text huge"

# ---- 4. memory pressure: a v1 memory cgroup smaller than the file
CG=/sys/fs/cgroup/memory/tt_daemon_faults.$$
if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ] && mkdir "$CG" 2>/dev/null; then
	at_exit "rmdir '$CG' 2>/dev/null"
	echo $((24 << 20)) >"$CG/memory.limit_in_bytes" || fail "cannot limit the cgroup"
	drop "$APP"
	daemon_start sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG"
	daemon_primed || fail "under memory pressure: the daemon wrote no state within 60 s: $(tail -3 "$W/d.err")"
	fc=$(cat "$CG/memory.failcnt")
	ooms=$(awk '$1 == "oom_kill" { print $2 }' "$CG/memory.oom_control")
	read -r n m < <(windows "$APP")
	daemon_stop "under memory pressure"
	note "under memory pressure (24 MiB cgroup, 64 MiB file): failcnt $fc, OOM kills ${ooms:-?}, $n of $m windows huge at the end; $(grep -c 'primed\|gave up\|pending' "$W/d.err") lines of its log"
	[ "$fc" -gt 0 ] || fail "the cgroup never reached its limit: no pressure, the case tested nothing"
	[ "${ooms:-0}" = 0 ] || fail "the daemon's cgroup had $ooms OOM kills"
	same "under memory pressure"
	primed_whole "after the memory pressure"
else
	note "no v1 memory controller here (or no cgroup could be made): case 4 not run"
	[ -d /sys/fs/cgroup/memory ] && fail "/sys/fs/cgroup/memory exists but no cgroup could be made in it"
fi

# ---- 5. a read-only filesystem
mkdir -p "$W/rosrc" "$W/run/ro"
cp "$W/ref" "$W/rosrc/app" && sync "$W/rosrc/app" || fail "cannot copy"
mount --bind "$W/rosrc" "$W/run/ro" && mount -o remount,bind,ro "$W/run/ro" || fail "cannot make a read-only bind mount"
# (lazily where something, a daemon the test failed to stop, still holds it)
at_exit "umount '$W/run/ro' 2>/dev/null || umount -l '$W/run/ro'"
touch "$W/run/ro/x" 2>/dev/null && fail "the read-only bind mount is writable"
drop "$W/rosrc/app"
daemon_start
daemon_primed || fail "read-only: the daemon did not start: $(tail -3 "$W/d.err")"
"$W/run/ro/app" >/dev/null 2>&1 || fail "the program on the read-only mount did not run"
wait_line "$W/d.err" "$W/run/ro/app: primed \(([0-9]+) of \1 windows" 30 "$DP" ||
	fail "the program on the read-only mount was not primed: $(tail -3 "$W/d.err")"
daemon_stop "read-only"
APP=$W/run/ro/app
cmp -s "$APP" "$W/ref" || fail "read-only: the bytes read back differ from the copy"
s=$(run_share read-only)
note "on a read-only bind mount: learnt from its exec, primed; its next run ${s}% huge"
[ "$s" -ge 90 ] || fail "the program on the read-only mount: only ${s}% of its text huge after the daemon primed it"
pass
