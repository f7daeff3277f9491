#!/bin/bash
# tool_daemon_container — `daemon` and a program in a container, modelled
# as a runtime runs one: a root on overlayfs (the image's layer below, an
# empty upper), a new mount and PID namespace, chroot.  The static program
# (linked with enormous.ld, its page cache small) runs there first with no
# daemon: none of its text huge (the premise); then the daemon (started in
# the same mount namespace, --only the test's directory) learns it — from
# its exec on the overlay, or from /proc — and primes it through
# /proc/PID/map_files (the overlay's file: the layer's page cache); run
# again in a new container on the same layer, plain, its text is huge.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (mounts, namespaces, fanotify)"
command -v unshare >/dev/null || skip "needs unshare (util-linux)"

if [ "${ET_CONTAINER_INNER:-}" != 1 ]; then
	need_huge_folios
	bigstatic "$W/st.bin"
	mkdir -p "$W/layer/bin" "$W/up1" "$W/work1" "$W/up2" "$W/work2" "$W/root1" "$W/root2" "$W/state"
	cp "$W/st.bin" "$W/layer/bin/app" && sync "$W/layer/bin/app" || fail "cannot copy"
	ET_CONTAINER_INNER=1 ET_CONTAINER_W=$W unshare -m --propagation private -- bash ${ET_CONTAINER_X:+-x} "$0"
	exit $?
fi
# the outer run's directory (lib.sh made a new one for this run: unused)
rmdir "$W" 2>/dev/null
W=$ET_CONTAINER_W

# ---- inside a private mount namespace
mount -t overlay overlay -o "lowerdir=$W/layer,upperdir=$W/up1,workdir=$W/work1" "$W/root1" ||
	skip "cannot mount overlayfs here"
mount -t overlay overlay -o "lowerdir=$W/layer,upperdir=$W/up2,workdir=$W/work2" "$W/root2" || fail "the second overlay"
# container ROOT NAME: /bin/app wait in a new PID namespace, chrooted in
# ROOT; prints kB of its text mapped huge, then ends it
container() {
	local root=$1 name=$2
	unshare -p -f --kill-child -- chroot "$root" /bin/app wait >"$W/$name.out" 2>&1 </dev/null &
	local up=$!
	PIDS+=("$up")
	wait_until 10 grep -q '^ready ' "$W/$name.out" || fail "$name: the program did not start: $(cat "$W/$name.out")"
	local pid
	pid=$(ns_child "$up") && [ -n "$pid" ] || fail "$name: no process /bin/app under unshare (pid $up)"
	awk '/^[0-9a-f]+-[0-9a-f]+ / { mine = ($6 ~ /\/bin\/app$/); next } mine && /^FilePmdMapped:/ { kb += $2 } END { print kb + 0 }' \
		"/proc/$pid/smaps"
	kill -KILL "$pid" 2>/dev/null   # the init of its PID namespace: SIGTERM is ignored
	wait "$up" 2>/dev/null
	true
}
before=$(container "$W/root1" before)
note "in a container, no daemon: ${before} kB of the program's text huge"
[ "$before" = 0 ] || fail "the fresh layer's program was already huge: the test would test nothing"

"$TOOL" daemon --only "$W" --state "$W/state" --delay 100ms --verbose >"$W/d.out" 2>"$W/d.err" </dev/null &
DP=$!
PIDS+=("$DP")
wait_line "$W/d.err" 'watching [0-9]+ filesystems?' 10 "$DP" || fail "the daemon did not start: $(cat "$W/d.err")"
container "$W/root1" learn >/dev/null
wait_line "$W/d.err" "bin/app: primed \([1-9][0-9]* of [1-9][0-9]* windows" 20 "$DP" ||
	fail "the container's program was not primed: $(tail -5 "$W/d.err")"
note "the daemon: $(grep -o '[^ ]*bin/app: primed.*' "$W/d.err" | head -1)"
after=$(container "$W/root2" after)
note "in a new container on the same layer, plain: ${after} kB huge"
[ "$after" -ge 2048 ] || fail "only $after kB of the container's program huge after the daemon primed it"
kill -TERM "$DP"
wait "$DP" || fail "the daemon ended with status $? after SIGTERM"
pass
