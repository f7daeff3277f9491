#!/bin/bash
# tool_oci_hook — `oci-hook`, run as a runtime runs an OCI hook: the
# container's state (JSON) on standard input, a bundle whose config.json
# names its root, the root on overlayfs over an image layer (a static
# program linked with enormous.ld, its page cache small).  A container on a
# fresh layer, no hook: 0 kB of its text huge on its first run (the
# premise).  Then, on another fresh layer: the hook with the state of a
# container not yet running (its bundle: createRuntime before the process
# has a root of its own) primes it, and the container's first run has >= 90%
# of its text huge; the hook with a state naming the container's process
# (its root through /proc/PID/root) says what it found.  Bad states and an
# operand: the hook still exits 0 (a hook never fails a container), or 2
# for usage.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (mounts, namespaces)"
command -v unshare >/dev/null || skip "needs unshare (util-linux)"

if [ "${ET_OCI_INNER:-}" != 1 ]; then
	need_huge_folios
	t usage -- "$TOOL" oci-hook extra
	expect_rc 2
	t nostate -- "$TOOL" oci-hook </dev/null
	expect_rc 0
	grep -q "no container root in the state" "$ERR" || fail "an empty state: no line saying why nothing was primed: $(cat "$ERR")"
	bigstatic "$W/st.bin"
	for b in plain hooked; do
		mkdir -p "$W/$b/layer/bin" "$W/$b/up" "$W/$b/work" "$W/$b/bundle/rootfs"
		cp "$W/st.bin" "$W/$b/layer/bin/app" || fail "cannot copy"
		printf '{"ociVersion": "1.0.2", "root": {"path": "rootfs", "readonly": false}, "process": {"args": ["/bin/app"]}}\n' \
			>"$W/$b/bundle/config.json"
	done
	sync "$W"/*/layer/bin/app
	ET_OCI_INNER=1 ET_OCI_W=$W unshare -m --propagation private -- bash "$0"
	exit $?
fi
rmdir "$W" 2>/dev/null
W=$ET_OCI_W
for b in plain hooked; do
	mount -t overlay overlay -o "lowerdir=$W/$b/layer,upperdir=$W/$b/up,workdir=$W/$b/work" "$W/$b/bundle/rootfs" ||
		skip "cannot mount overlayfs here"
done
# first_run BUNDLE NAME: /bin/app in a new PID namespace, chrooted in the
# bundle's root; prints "HUGE_KB TEXT_KB" of its text, then ends it
first_run() {
	local root=$1/rootfs name=$2
	unshare -p -f --kill-child -- chroot "$root" /bin/app wait >"$W/$name.out" 2>&1 </dev/null &
	local up=$!
	PIDS+=("$up")
	wait_until 10 grep -q '^ready ' "$W/$name.out" || fail "$name: the program did not start: $(cat "$W/$name.out")"
	local pid
	pid=$(ns_child "$up") && [ -n "$pid" ] || fail "$name: no process /bin/app under unshare (pid $up)"
	awk '/^[0-9a-f]+-[0-9a-f]+ / { mine = ($6 ~ /\/bin\/app$/ && $2 ~ /x/); next }
		mine && /^Size:/ { t += $2 } mine && /^FilePmdMapped:/ { kb += $2 } END { print kb + 0, t + 0 }' "/proc/$pid/smaps"
	kill -KILL "$pid" 2>/dev/null   # the init of its PID namespace: SIGTERM is ignored
	wait "$up" 2>/dev/null
	true
}
read -r h0 t0 < <(first_run "$W/plain/bundle" plain)
note "no hook, first run: $h0 of $t0 kB of its text huge"
[ "$h0" = 0 ] || fail "a fresh layer's program was already huge: the test would test nothing"

# createRuntime before the container has a process of its own: the bundle
printf '{"ociVersion": "1.0.2", "id": "c1", "status": "creating", "bundle": "%s", "annotations": {}}\n' \
	"$W/hooked/bundle" >"$W/state.json"
# (t runs a command with no standard input: the state goes in through sh)
t hook -- sh -c 'exec "$0" oci-hook --verbose <"$1"' "$TOOL" "$W/state.json"
expect_rc 0
grep -q "bin/app: [1-9][0-9]* of [1-9][0-9]* windows huge" "$ERR" || fail "the hook did not prime the container's program: $(cat "$ERR")"
read -r h1 t1 < <(first_run "$W/hooked/bundle" hooked)
note "with the hook, first run: $h1 of $t1 kB of its text huge"
[ $((h1 * 10)) -ge $((t1 * 9)) ] || fail "only $h1 of $t1 kB of the program's text huge on its first run after the hook (< 90%)"

# a state that names the container's process: its root through /proc/PID/root
unshare -p -f --kill-child -- chroot "$W/hooked/bundle/rootfs" /bin/app wait >"$W/running.out" 2>&1 </dev/null &
RP=$!
PIDS+=("$RP")
wait_until 10 grep -q '^ready ' "$W/running.out" || fail "the running container did not start"
cpid=$(ns_child "$RP") && [ -n "$cpid" ] || fail "no process /bin/app under unshare (pid $RP)"
printf '{"ociVersion": "1.0.2", "id": "c2", "status": "created", "pid": %d, "bundle": "/nonexistent"}\n' "$cpid" >"$W/state2.json"
t hookpid -- sh -c 'exec "$0" oci-hook <"$1"' "$TOOL" "$W/state2.json"
expect_rc 0
grep -q "^enormoustext oci-hook: /proc/$cpid/root/: 1 ELF file with a huge page of text or more, 1 primed: 3 of 3 windows huge" "$ERR" ||
	fail "the hook through /proc/PID/root: $(cat "$ERR")"
kill -KILL "$cpid" 2>/dev/null
pass
