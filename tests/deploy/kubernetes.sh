#!/bin/bash
# kubernetes.sh DEBDIR — deploy/kubernetes: the manifests validate, and the
# image's entry point, run here as the DaemonSet runs it, makes a host
# program's text huge.
#
# DEBDIR holds the .deb files built from the tree (tests/deploy/debs.sh, or
# dpkg-buildpackage): libenormoustext0_*.deb and enormoustext_*.deb.
#
# 1. The manifests (kustomization.yaml and canary/, rendered as kustomize
#    would) are validated offline by tests/deploy/kubernetes_manifests.mjs
#    against the Kubernetes API's schemas of the npm package
#    kubernetes-models (types, required fields, enums; unknown fields
#    refused), installed with npm into a cache the first time
#    ($ET_KUBERNETES_VALIDATOR, default DEBDIR/../kubernetes-validator).
# 2. The image: what Containerfile installs (dpkg -x of the two packages)
#    over a minimal root (the entry point's shell and tools, the libraries
#    they and the command need, copied from this machine), the entry point
#    where Containerfile puts it.
# 3. The pod: a new mount namespace (unshare -m) and no new PID namespace
#    (hostPID: true), the image's root read-only (readOnlyRootFilesystem),
#    this machine's / read-only at /host, a new /proc (of the host's PID
#    namespace), /sys, /dev, /var/lib/enormoustext from a work directory,
#    chroot, and only the capabilities daemonset.yaml adds (setpriv: the
#    bounding set is SYS_ADMIN, SYS_PTRACE, DAC_READ_SEARCH); the entry point
#    is started with the environment daemonset.yaml sets, plus
#    ENORMOUSTEXT_DAEMON_ARGS="--only WORK/bin --delay 100ms --verbose", so
#    that it learns only this test's program.
# 4. A static program with 64 MiB of text (linked with enormous.ld: its text
#    congruent), its page cache dropped, runs on the host (outside the
#    pod); the daemon in the pod learns it and primes it; the readiness
#    probe (entry point `ready`) says ready; a second run of the program has
#    >= 90% of its text FilePmdMapped.  STATE/known names it by its host
#    path (daemon --host-root), and after its page cache is dropped again,
#    the daemon started anew in a pod with --once (what a restarted pod does
#    first) primes it from that list: a third run is huge too.  After
#    SIGTERM the daemon has ended with status 0 and the probe says not ready.
#    The entry point refuses, saying why, a second daemon on the node and a
#    pod without the host's PID namespace.
#
# Exit: 0 pass, 1 fail, 77 skip (DEBDIR lacks the packages; not root; the
# kernel or filesystem gives no huge page-cache folios; no static C
# library).  Needs root, unshare, chroot, setpriv (util-linux), a C
# compiler, node and npm (Debian: nodejs npm).
# shellcheck disable=SC2034 # read by tests/lib/lib.sh
ET_TEST_NAME=deploy.kubernetes
# tests/deploy has no lib.sh of its own: the shared one, directly
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
k8s=$src/deploy/kubernetes

[ $# = 1 ] || { echo "usage: $0 DEBDIR"; exit 2; }
debdir=$(cd "$1" 2>/dev/null && pwd) || skip "$1: no such directory (build the packages: tests/deploy/debs.sh $1)"
lib_deb=$(ls "$debdir"/libenormoustext0_*.deb 2>/dev/null | head -1)
cmd_deb=$(ls "$debdir"/enormoustext_*.deb 2>/dev/null | head -1)
[ -n "$lib_deb" ] && [ -n "$cmd_deb" ] ||
	skip "$debdir holds no libenormoustext0_*.deb and enormoustext_*.deb (build them: tests/deploy/debs.sh $debdir)"

et_workdir "${TMPDIR:-/tmp}" ET_DEPLOY_KEEP
W=$ET_WORK
chmod 755 "$W"
et_clear_env
PIDS=()
# shellcheck disable=SC2016 # expanded when the hook runs
at_exit 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null'
t0=$(et_now_us)
lap() { note "$(( ($(et_now_us) - t0) / 1000 )) ms: $*"; }

# ------------------------------------------------------ 1. the manifests
# Where the validator cannot be had (no node or npm; npm's registry out
# of reach), the rest still runs and the test ends skipped, saying so:
# never a pass without the validation.
novalidate=
cache=${ET_KUBERNETES_VALIDATOR:-$debdir/../kubernetes-validator}
mkdir -p "$cache" || fail "$cache: cannot create the validator's cache"
cache=$(cd "$cache" && pwd)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	novalidate="node and npm are needed to validate the manifests (Debian: apt-get install nodejs npm)"
elif [ ! -f "$cache/node_modules/kubernetes-models/package.json" ] || [ ! -f "$cache/node_modules/yaml/package.json" ]; then
	note "installing the validator (npm: kubernetes-models 5.1.0, yaml 2) into $cache"
	npm install --prefix "$cache" --no-audit --no-fund --silent kubernetes-models@5.1.0 yaml@2 >"$W/npm.log" 2>&1 ||
		novalidate="npm could not install kubernetes-models and yaml into $cache: $(tail -3 "$W/npm.log" | tr '\n' ' ')"
fi
if [ -n "$novalidate" ]; then
	note "NOT VALIDATED: $novalidate (the rest runs; the test ends skipped)"
else
node "$src/tests/deploy/kubernetes_manifests.mjs" "$cache/node_modules" "$k8s" "$k8s/canary" >"$W/validate.out" 2>&1
vrc=$?
sed 's/^/  /' "$W/validate.out"
[ $vrc = 0 ] || fail "the manifests do not validate (status $vrc, above)"
grep -q 'valid DaemonSet/enormoustext' "$W/validate.out" || fail "the validator saw no DaemonSet"
# the validator refuses what it should: a misspelt field, a wrong type
mkdir -p "$W/bad" && cp "$k8s"/*.yaml "$W/bad/" &&
	sed -i 's/hostPID: true/hostPid: true/; s/readOnlyRootFilesystem: true/readOnlyRootFilesystem: "yes"/' "$W/bad/daemonset.yaml"
node "$src/tests/deploy/kubernetes_manifests.mjs" "$cache/node_modules" "$W/bad" >"$W/bad.out" 2>&1 &&
	fail "the validator took a DaemonSet with hostPid and a string for a boolean: $(cat "$W/bad.out")"
grep -q 'unknown field "hostPid"' "$W/bad.out" && grep -q 'readOnlyRootFilesystem must be boolean' "$W/bad.out" ||
	fail "the validator did not name both faults: $(cat "$W/bad.out")"
# what the entry point and the manifest must agree on
grep -q 'hostPID: true' "$k8s/daemonset.yaml" && grep -q 'mountPath: /host$' "$k8s/daemonset.yaml" &&
	grep -q 'value: /host$' "$k8s/daemonset.yaml" && grep -q 'enormoustext-entrypoint", "ready"' "$k8s/daemonset.yaml" &&
	grep -q '/usr/local/bin/enormoustext-entrypoint' "$k8s/Containerfile" ||
	fail "daemonset.yaml and Containerfile no longer say what this test runs (hostPID, /host, the entry point's path)"
lap "the manifests validate (kubernetes-models $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$cache/node_modules/kubernetes-models/package.json")); a misspelt field and a wrong type are refused"
fi

# -------------------------------------------------------- 2. the image
[ "$(id -u)" = 0 ] || skip "needs root (mounts, namespaces, fanotify)"
for c in unshare chroot setpriv dpkg cc ldd; do
	command -v "$c" >/dev/null || skip "needs $c"
done
img=$W/img
mkdir -p "$img"/{proc,sys,dev,host,tmp,var/lib/enormoustext,usr/bin,usr/local/bin}
dpkg -x "$lib_deb" "$img" && dpkg -x "$cmd_deb" "$img" || fail "dpkg -x of the packages failed"
cp "$k8s/entrypoint.sh" "$img/usr/local/bin/enormoustext-entrypoint" && chmod 755 "$img/usr/local/bin/enormoustext-entrypoint"
mkdir -p "$img/bin" && cp "$(readlink -f "$(command -v dash || command -v sh)")" "$img/bin/sh" || fail "no shell to copy"
for b in awk readlink mkdir cat uname head env setpriv; do
	p=$(command -v "$b") || fail "no $b to copy into the image"
	cp "$(readlink -f "$p")" "$img/usr/bin/$b" || fail "cannot copy $b"
done
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
# the libraries each program needs, at the paths the loader looks for them
for b in "$img"/bin/sh "$img"/usr/bin/*; do
	LD_LIBRARY_PATH=$img/usr/lib/$ma ldd "$b" 2>/dev/null | grep -o '/[^ ]*' | while read -r l; do
		case $l in "$img"/*) continue ;; esac
		[ -e "$img$l" ] || { mkdir -p "$img$(dirname "$l")" && cp -L "$l" "$img$l"; }
	done
done
chroot "$img" /usr/bin/enormoustext --version >"$W/version" 2>&1 || fail "the image's enormoustext does not run: $(cat "$W/version")"
lap "the image: $(head -1 "$W/version"), $(du -sh "$img" | cut -f1) ($(basename "$lib_deb"), $(basename "$cmd_deb"))"

# pod ROOT -- CMD...: become CMD in a new "pod" on the image (see the
# header; exec: `pod ... &` gives CMD's pid, `(pod ...)` waits for it); the
# environment is daemonset.yaml's, plus $PODARGS as the daemon's options
PODARGS=
pod() {
	local root=$1
	shift 2
	mkdir -p "$root"
	# shellcheck disable=SC2086 # $PODNS: more namespaces, split
	exec unshare -m --propagation private ${PODNS:-} -- /bin/sh -c '
		set -e
		img=$1 root=$2 state=$3; shift 3
		mount --bind "$img" "$root"
		mount -o remount,bind,ro "$root"
		mount --rbind / "$root/host"
		mount -o remount,bind,ro "$root/host"
		mount -t proc proc "$root/proc" 2>/dev/null || mount --rbind /proc "$root/proc"
		mount --rbind /sys "$root/sys"
		mount --rbind /dev "$root/dev"
		mount --bind "$state" "$root/var/lib/enormoustext"
		exec chroot "$root" /usr/bin/setpriv --bounding-set=-all,+sys_admin,+sys_ptrace,+dac_read_search --inh-caps=-all -- \
			/usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin ENORMOUSTEXT_HOST_ROOT=/host \
			ENORMOUSTEXT_STATE=/var/lib/enormoustext "ENORMOUSTEXT_DAEMON_ARGS=$PODARGS" "$@"
	' pod "$img" "$root" "$W/state" "$@"
}
export PODARGS

# -------------------------------------------------- 3. a program on the host
need_cc() { skip "no static C library to link the 64 MiB program with: $(head -2 "$W/app.log")"; }
mkdir -p "$W/bin" "$W/state"
# 64 MiB of text (nops), congruent: static, linked with enormous.ld
et_big_static "$W/app" cc "$src/linker-scripts/enormous.ld" || need_cc
cp "$W/app" "$W/bin/app" && sync "$W/bin/app" || fail "cannot copy the program"
# the probe: does this kernel and filesystem give huge page-cache folios?
LD_LIBRARY_PATH=$img/usr/lib/$ma "$img/usr/bin/enormoustext" status --json --probe-dir "$W" >"$W/probe.json" 2>&1 ||
	fail "status --json --probe-dir failed: $(tail -3 "$W/probe.json")"
probe=$(/usr/bin/python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["probes"]["file"]; print("yes" if f.get("works") is True else "no: " + str(f.get("detail")))' "$W/probe.json") ||
	fail "status --json gave no probes.file"
[ "$probe" = yes ] || skip "this kernel and filesystem give no huge page-cache folios here: ${probe#no: }"
# its page cache dropped: the first run maps small pages
drop() { dd if="$1" iflag=nocache count=0 status=none 2>/dev/null; }
drop "$W/bin/app"

# run NAME: the program on the host, its text's huge share: prints "HUGE_KB TEXT_KB"
run() {
	local name=$1 out=$W/$1.out
	"$W/bin/app" wait >"$out" 2>&1 </dev/null &
	local pid=$!
	PIDS+=("$pid")
	wait_until 10 grep -q '^ready ' "$out" || fail "$name: the program did not start: $(cat "$out")"
	awk -v app="$W/bin/app" '/^[0-9a-f]+-[0-9a-f]+ / { x = ($2 ~ /x/ && $6 == app); next }
		x && /^Size:/ { size += $2 } x && /^FilePmdMapped:/ { huge += $2 }
		END { print huge + 0, size + 0 }' "/proc/$pid/smaps"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	true
}
read -r h1 s1 <<<"$(run first)"
note "first run on the host, no daemon: $h1 of $s1 kB of its text huge"
[ "$s1" -ge 60000 ] || fail "the program maps only $s1 kB executable"

# ------------------------------------------ 4. the pod, as the DaemonSet runs it
PODARGS="--only $W/bin --delay 100ms --verbose"
pod "$W/root1" -- /usr/local/bin/enormoustext-entrypoint run >"$W/pod.out" 2>"$W/pod.err" </dev/null &
DP=$!
PIDS+=("$DP")
wait_line "$W/pod.err" 'watching [0-9]+ filesystems?.*the host.s / at /host' 10 "$DP" ||
	fail "the pod's daemon did not start: $(cat "$W/pod.err")"
sed 's/^/  pod| /' "$W/pod.err"
lap "the pod's daemon runs (pid $DP: the host's PID namespace)"
# only the capabilities daemonset.yaml adds: SYS_ADMIN (21), SYS_PTRACE (19),
# DAC_READ_SEARCH (2)
capeff=$(awk '/^CapEff:/ { print $2 }' "/proc/$DP/status")
[ "$((16#$capeff))" = "$(((1 << 21) | (1 << 19) | (1 << 2)))" ] ||
	fail "the pod's daemon holds capabilities $capeff, not SYS_ADMIN, SYS_PTRACE and DAC_READ_SEARCH alone"
grep -q "^NSpid:[[:space:]]*$DP\$" "/proc/$DP/status" || fail "the pod's daemon is in a PID namespace of its own"
PODARGS=
# the readiness probe, as the kubelet runs it: in the pod's mount namespace
probe_ready() {
	chroot "/proc/$DP/root" /usr/bin/setpriv --bounding-set=-all,+sys_admin,+sys_ptrace,+dac_read_search -- \
		/usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin /usr/local/bin/enormoustext-entrypoint ready
}
wait_until 10 probe_ready || fail "the readiness probe does not say ready: $(cat "$W/state/daemon.json" 2>&1)"
note "readiness probe: ready"
# one daemon per node: a second pod's entry point refuses while it runs
(pod "$W/root4" -- /usr/local/bin/enormoustext-entrypoint run) >"$W/second.out" 2>&1 </dev/null &&
	fail "a second pod's entry point started a second daemon: $(cat "$W/second.out")"
grep -q 'a daemon already runs on this host' "$W/second.out" ||
	fail "a second pod's entry point did not say why it refused: $(cat "$W/second.out")"
# a pod without hostPID: refused, said why
(PODNS="-p -f" pod "$W/root5" -- /usr/local/bin/enormoustext-entrypoint run) >"$W/nohostpid.out" 2>&1 </dev/null &&
	fail "the entry point ran in a PID namespace of its own: $(cat "$W/nohostpid.out")"
grep -q 'not in the host.s PID namespace' "$W/nohostpid.out" ||
	fail "the entry point in its own PID namespace did not say why it refused: $(cat "$W/nohostpid.out")"
note "refused, each with its line: a second daemon on the node; a pod without hostPID"

run learn >/dev/null   # the daemon learns it from its exec and maps
wait_line "$W/pod.err" "bin/app: primed \([1-9][0-9]* of [1-9][0-9]* windows" 30 "$DP" ||
	fail "the pod's daemon did not prime the host's program: $(tail -5 "$W/pod.err")"
sed -n 's/^/  pod| /; /bin\/app/p' "$W/pod.err"
lap "the pod's daemon primed the host's program"
read -r h3 s3 <<<"$(run second)"
share=$((h3 * 100 / s3))
note "second run on the host: $h3 of $s3 kB of its text huge ($share%)"
[ "$share" -ge 90 ] || fail "only $share% of the program's text huge after the pod's daemon primed it ($(mem_facts))"
wait_until 5 grep -qx "$W/bin/app" "$W/state/known" ||
	fail "STATE/known does not name the program by its host path (--host-root): $(cat "$W/state/known")"

# SIGTERM (the kubelet's): it ends, status 0; the probe no longer says ready
kill -TERM "$DP"
wait "$DP"
rc=$?
[ $rc = 0 ] || fail "the pod's daemon ended with status $rc after SIGTERM: $(tail -3 "$W/pod.err")"
(pod "$W/root2" -- /usr/local/bin/enormoustext-entrypoint ready) >/dev/null 2>&1 &&
	fail "the readiness probe says ready with no daemon running"
note "after SIGTERM: ended with status 0, the probe says not ready"

# a restarted pod primes what STATE/known names first, found under /host
drop "$W/bin/app"
read -r h4 _ <<<"$(run evicted)"
(pod "$W/root3" -- /usr/bin/enormoustext daemon --once --host-root /host --verbose) >"$W/once.out" 2>"$W/once.err" </dev/null ||
	fail "daemon --once in a pod failed: $(cat "$W/once.err")"
grep -q "bin/app: primed" "$W/once.err" || fail "daemon --once in a pod did not prime STATE/known's program: $(cat "$W/once.err")"
read -r h5 s5 <<<"$(run third)"
note "page cache dropped: $h4 kB huge; a new pod's daemon --once primed it from STATE/known: $h5 of $s5 kB huge"
[ $((h5 * 100 / s5)) -ge 90 ] || fail "only $h5 of $s5 kB huge after daemon --once in a pod"
lap "done"
[ -z "$novalidate" ] || skip "the entry point passed, but the manifests were not validated: $novalidate"
pass
