#!/bin/sh
# enormoustext-entrypoint — the DaemonSet's container (deploy/kubernetes):
#
#   enormoustext-entrypoint [run]   check what the pod was given, then become
#                                   `enormoustext daemon --host-root $HOST_ROOT`
#   enormoustext-entrypoint ready   the readiness probe: exit 0 while
#                                   `enormoustext status --json` says the
#                                   daemon runs (hostwide.daemon.running)
#
# Environment (daemonset.yaml sets them):
#   ENORMOUSTEXT_HOST_ROOT    where the host's / is mounted (default /host)
#   ENORMOUSTEXT_STATE        the daemon's state, the host's
#                             /var/lib/enormoustext (default that path: the
#                             path `status` reads)
#   ENORMOUSTEXT_DAEMON_ARGS  more options for the daemon, split on blanks
#                             (e.g. "--verbose", "--only /opt/app")
#
# The daemon runs as the container's main process (exec: SIGTERM from the
# kubelet reaches it and it stops at once).  It needs the host's PID
# namespace (hostPID: it learns the host's programs from /proc), the
# capabilities daemonset.yaml adds, and nothing else of the host but its /
# read-only at HOST_ROOT and the state directory.  It writes nothing on the
# host outside the state directory.
set -eu
HOST_ROOT=${ENORMOUSTEXT_HOST_ROOT:-/host}
STATE=${ENORMOUSTEXT_STATE:-/var/lib/enormoustext}
me=enormoustext-entrypoint

# daemon_running: hostwide.daemon.running of `status --json` (pretty-printed:
# "daemon": { then its members one a line)
daemon_running() {
	enormoustext status --json 2>/dev/null |
		awk '/"daemon": *\{/ { d = 1; next } d && /"running":/ { print ($2 ~ /^true/) ? "yes" : "no"; exit }'
}

case ${1:-run} in
ready)
	[ "$(daemon_running)" = yes ]
	exit
	;;
run) ;;
*)
	echo "$me: usage: $me [run|ready]" >&2
	exit 2
	;;
esac

fail() {
	echo "$me: $*" >&2
	exit 1
}
command -v enormoustext >/dev/null || fail "no enormoustext in the image (install the project's packages)"
[ -d "$HOST_ROOT" ] || fail "$HOST_ROOT: the host's / is not mounted there (a hostPath volume of /)"
# hostPID: without it the daemon would see only this container's processes
# (its own PID namespace: this script is PID 1 there)
[ "$$" != 1 ] || fail "PID 1: the pod is not in the host's PID namespace (hostPID: true)"
# the host's init in another mount namespace than ours: a container, so the
# paths the host's processes name are the host's, found under HOST_ROOT
if [ "$(readlink /proc/1/ns/mnt 2>/dev/null || true)" = "$(readlink /proc/self/ns/mnt)" ]; then
	echo "$me: this runs in the host's mount namespace: the host's paths are taken as they are" >&2
	HOST_ROOT=/
fi
mkdir -p "$STATE" || fail "$STATE: cannot create the state directory"
# one daemon per host: a host whose own enormoustext.service (enable --all)
# runs one writes the same state directory
if [ "$(daemon_running)" = yes ]; then
	fail "a daemon already runs on this host ($STATE/daemon.json): disable the host's (enormoustext disable --all) or leave this node out of the DaemonSet"
fi
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo "no THP")
echo "$me: $(enormoustext --version 2>/dev/null | head -1); kernel $(uname -r); THP $thp; the host's / at $HOST_ROOT; state in $STATE" >&2
# shellcheck disable=SC2086 # ENORMOUSTEXT_DAEMON_ARGS: options split on blanks
exec enormoustext daemon --host-root "$HOST_ROOT" --state "$STATE" ${ENORMOUSTEXT_DAEMON_ARGS:-}
