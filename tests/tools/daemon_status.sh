#!/bin/bash
# tool_daemon_status — `status` says whether `enormoustext daemon` runs and
# what it knows, from its state (/var/lib/enormoustext/daemon.json): in a
# private mount namespace with a tmpfs over /var/lib (the host's state is
# never touched), before the daemon (not running, nothing known), while it
# runs with the default state (running, its pid, the files it learnt), after
# SIGTERM (not running, its last state named); text and --json; and stat
# --prometheus's enormoustext_daemon_up and enormoustext_daemon_files.  A
# static program (enormous.ld) whose page cache was dropped, running: its
# file is pending and status names it and the program that maps its small
# pages (pid and name; --json's pending_files); once that program ends,
# the daemon primes it and status names nothing pending.  A file open for
# writing (known from STATE/known to a daemon started again): pending,
# untouched, status says why (text and --json); primed once closed.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace, fanotify)"
command -v unshare >/dev/null || skip "needs unshare (util-linux)"
if [ "${ET_DS_INNER:-}" != 1 ]; then
	ET_DS_INNER=1 ET_DS_W=$W unshare -m --propagation private -- bash "$0"
	exit $?
fi
rmdir "$W" 2>/dev/null
W=$ET_DS_W
mount -t tmpfs tmpfs /var/lib || fail "cannot mount a tmpfs over /var/lib"
mkdir -p "$W/run" && cp "$HOLD" "$W/run/tt_hold" || fail "cannot copy tt_hold"

t before -- "$TOOL" status --no-probe
expect_rc 0
expect_out '^  daemon +not running \(enormoustext daemon' "status before the daemon"
t beforej -- "$TOOL" status --no-probe --json
json "$OUT"
[ "$(jneed "$OUT.flat" .hostwide.daemon.running)" = false ] || fail "--json says a daemon runs before one was started"

"$TOOL" daemon --only "$W/run" --delay 50ms >"$W/d.out" 2>"$W/d.err" </dev/null &
DP=$!
PIDS+=("$DP")
wait_line "$W/d.err" 'watching [0-9]+ filesystems?' 10 "$DP" || fail "the daemon did not start: $(cat "$W/d.err")"
"$W/run/tt_hold" --exit 0 >/dev/null
wait_until 10 grep -q '"state"' /var/lib/enormoustext/daemon.json || fail "the daemon wrote no file into its state: $(cat /var/lib/enormoustext/daemon.json 2>&1)"
t running -- "$TOOL" status --no-probe
expect_rc 0
expect_out "^  daemon +running \(pid $DP\): 1 file known, " "status while the daemon runs"
t runningj -- "$TOOL" status --no-probe --json
json "$OUT"
[ "$(jneed "$OUT.flat" .hostwide.daemon.running)" = true ] || fail "--json: not running"
[ "$(jneed "$OUT.flat" .hostwide.daemon.pid)" = "$DP" ] || fail "--json: not its pid"
[ "$(jneed "$OUT.flat" .hostwide.daemon.files)" = 1 ] || fail "--json: not the 1 file it learnt"

# its figures among stat --prometheus's host metrics
t prom -- "$TOOL" stat --prometheus "$DP"
expect_rc 0
expect_out '^enormoustext_daemon_up 1$' "stat --prometheus while the daemon runs"
[ "$(awk '/^enormoustext_daemon_files\{/ { n += $2 } END { print n + 0 }' "$OUT")" = 1 ] ||
	fail "stat --prometheus: enormoustext_daemon_files does not add up to the 1 file learnt: $(grep daemon_files "$OUT")"

# a file whose small pages a running program maps: pending, its holder named
bigstatic "$W/big"
cp "$W/big" "$W/run/held" && sync "$W/run/held" || fail "cannot copy the static program"
et_drop_cache "$W/run/held"
"$W/run/held" wait >"$W/held.out" 2>&1 </dev/null &
HP=$!
PIDS+=("$HP")
wait_line "$W/held.out" '^ready ' 10 "$HP" || fail "the holding program did not start: $(cat "$W/held.out")"
wait_until 10 grep -q '"held_by"' /var/lib/enormoustext/daemon.json ||
	fail "the daemon does not say who holds the program's file: $(grep -A8 held /var/lib/enormoustext/daemon.json)"
t held -- "$TOOL" status --no-probe
expect_rc 0
expect_out "^  pending +$W/run/held: its small pages mapped by pid $HP \(held\) \(primed once they end\)$" "status while a program maps the file small"
t heldj -- "$TOOL" status --no-probe --json
json "$OUT"
[ "$(jneed "$OUT.flat" '.hostwide.daemon.pending_files[0].path')" = "$W/run/held" ] || fail "--json: the pending file not named"
[ "$(jneed "$OUT.flat" '.hostwide.daemon.pending_files[0].held_by')" = "pid $HP (held)" ] ||
	fail "--json: its holder not named: $(jget "$OUT.flat" '.hostwide.daemon.pending_files[0].held_by')"
kill "$HP"; wait "$HP" 2>/dev/null
# its holder gone, the daemon primes it (it polls the holder's pidfd)
wait_until 10 bash -c "! grep -q '\"pending\"' /var/lib/enormoustext/daemon.json" ||
	fail "the file was not primed once its holder ended: $(grep -B2 -A8 pending /var/lib/enormoustext/daemon.json)"
t unheld -- "$TOOL" status --no-probe
expect_rc 0
grep -q '^  pending ' "$OUT" && fail "status still names a pending file after its holder ended"

kill -TERM "$DP"
wait "$DP" || fail "the daemon ended with status $? after SIGTERM"
t after -- "$TOOL" status --no-probe
expect_out '^  daemon +not running \(its last state is in /var/lib/enormoustext\)' "status after SIGTERM"
t promafter -- "$TOOL" stat --prometheus "$$"
expect_out '^enormoustext_daemon_up 0$' "stat --prometheus after SIGTERM"

# a file open for writing (an install under way): never touched, pending
# with why, tried again, primed once the writer closes it
cp "$W/big" "$W/run/w" && sync "$W/run/w" || fail "cannot copy the static program"
et_drop_cache "$W/run/w"
echo "$W/run/w" >/var/lib/enormoustext/known
exec 7>>"$W/run/w"
# (the daemon must not inherit the writer's descriptor: 7>&-)
"$TOOL" daemon --only "$W/run" --delay 50ms --verbose >"$W/d2.out" 2>"$W/d2.err" </dev/null 7>&- &
DP=$!
PIDS+=("$DP")
wait_line "$W/d2.err" "$W/run/w: open for writing: primed once it is closed" 10 "$DP" ||
	fail "the daemon did not say the file is open for writing: $(cat "$W/d2.err")"
wait_until 10 grep -q '"why": "open for writing' /var/lib/enormoustext/daemon.json ||
	fail "daemon.json does not say why the file waits: $(grep -A8 '"path"' /var/lib/enormoustext/daemon.json)"
read -r n m < <("$TOOL" prime --check "$W/run/w" | sed -n 's/.*: \([0-9]*\) of \([0-9]*\) windows.*/\1 \2/p')
[ "${n:-x}" = 0 ] || fail "the daemon made ${n:-?} of ${m:-?} windows of a file open for writing huge"
t writing -- "$TOOL" status --no-probe
expect_rc 0
expect_out "^  pending +$W/run/w: open for writing: primed once it is closed$" "status while the file is open for writing"
t writingj -- "$TOOL" status --no-probe --json
json "$OUT"
[ "$(jneed "$OUT.flat" '.hostwide.daemon.pending_files[0].why')" = "open for writing: primed once it is closed" ] ||
	fail "--json: why the file waits not said: $(jget "$OUT.flat" '.hostwide.daemon.pending_files[0].why')"
exec 7>&-
# (tried again at most 8 s apart)
wait_line "$W/d2.err" "$W/run/w: primed \(([0-9]+) of \1 windows" 20 "$DP" ||
	fail "the file was not primed once its writer closed it: $(grep -v "watching /" "$W/d2.err")"
note "a file open for writing: pending ($(grep -c "$W/run/w" "$W/d2.err") lines of the daemon's log), then $(grep "$W/run/w: primed" "$W/d2.err" | sed 's/^enormoustext daemon: //')"
kill -TERM "$DP"
wait "$DP" || fail "the daemon ended with status $? after SIGTERM"
cmp -s "$W/run/w" "$W/big" || fail "the file's bytes read back differ from the program's"
pass
