# shellcheck shell=bash
# tests/deploy/lib.sh — what the fleet tests share (ansible.sh; kubernetes.sh
# may use it too).  Sourced with ET_TEST_NAME set; it sources
# tests/lib/lib.sh (strict mode, fail / skip / pass, at_exit, et_workdir).
#
#   deploy_in_namespace "$@"   re-runs the calling script in a private mount
#                              namespace (unshare -m, mounts private) and a
#                              PID namespace of its own with its own /proc
#                              (unshare -p -f --mount-proc --kill-child),
#                              once: whatever it mounts is gone when it ends,
#                              and so is every process started in it (a
#                              hosts' daemon too, even when the test is
#                              killed), which sees only the test's own
#                              processes (never primes another test's files)
#   deploy_host DIR            a host of its own under DIR: DIR/root is an
#                              overlayfs over / (its writes in DIR/upper, so
#                              the real /etc and /var are never written), with
#                              /proc, /dev and /sys, and a fresh /run and /tmp
#   deploy_host_stop DIR       kills the processes whose root is DIR/root
#                              (a daemon started there) and unmounts it
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

deploy_in_namespace() {
	[ "${ET_DEPLOY_NS:-}" = 1 ] && return 0
	command -v unshare >/dev/null || skip "unshare is missing (util-linux)"
	[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace with overlayfs hosts)"
	ET_DEPLOY_NS=1 exec unshare -m --propagation private -p -f --mount-proc --kill-child "$BASH" "$0" "$@"
}

deploy_host() {
	local d=$1
	mkdir -p "$d/upper" "$d/work" "$d/root" || exit 2
	mount -t overlay overlay -o "lowerdir=/,upperdir=$d/upper,workdir=$d/work" "$d/root" ||
		skip "cannot mount an overlayfs over / (no overlay support here?)"
	mount -t proc proc "$d/root/proc" || fail "cannot mount /proc in $d/root"
	mount --rbind /dev "$d/root/dev" || fail "cannot bind /dev in $d/root"
	mount --rbind /sys "$d/root/sys" || fail "cannot bind /sys in $d/root"
	mount -t tmpfs tmpfs "$d/root/run" || fail "cannot mount /run in $d/root"
	mount -t tmpfs tmpfs "$d/root/tmp" || fail "cannot mount /tmp in $d/root"
}

deploy_host_pids() {
	local root=$1 p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && echo "${p#/proc/}"
	done
}

deploy_host_stop() {
	local root=$1/root pids p
	pids=$(deploy_host_pids "$root")
	if [ -n "$pids" ]; then
		for p in $pids; do kill "$p" 2>/dev/null; done
		wait_until 5 sh -c "! ls -l /proc/[0-9]*/root 2>/dev/null | grep -q ' -> $root\$'"
		for p in $(deploy_host_pids "$root"); do kill -KILL "$p" 2>/dev/null; done
	fi
	umount -R "$root" 2>/dev/null || umount -R -l "$root" 2>/dev/null
}
