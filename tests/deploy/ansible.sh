#!/bin/bash
# ansible.sh — deploy/ansible's role and playbook, run with the real
# ansible-playbook against hosts of their own on this machine.
#
#   tests/deploy/ansible.sh DEBSDIR     (DEBSDIR: tests/deploy/debs.sh's output)
#
# The whole test runs in a private mount namespace.  Each host is a root of
# its own: an overlayfs over / (its writes in the test's work directory, so
# nothing of the real /etc or /var is written) with /proc, /dev, /sys and a
# fresh /run and /tmp, reached with the community.general.chroot connection
# (ansible_host = the root).  No systemd runs there, so the role starts
# `enormoustext daemon` itself (enormoustext_service_manager: auto -> direct).
#
# 1. ansible-lint (deploy/ansible/.ansible-lint: production profile, offline)
#    passes;
# 2. --check --diff on three fresh hosts: no failure, changes reported, and
#    no host written (no package, no settings);
# 3. the roll-out (one canary, then batches): every host has the packages,
#    the settings of enable --all, the daemon running in that root, and
#    passed its gate (status --json: daemon running, no errors, huge share);
# 4. the same again: changed=0 on every host;
# 5. --check --diff again: changed=0, failed=0;
# 6. three more fresh hosts, the second with a gate it cannot pass
#    (enormoustext_gate_min_huge_percent: 101) and
#    enormoustext_rollback_packages: remove: the first is rolled out, the
#    second rolled back (no settings, daemon stopped, packages removed) and
#    the roll-out stops: the third is untouched (no package, no settings).
#
# Exit 0 pass, 1 fail, 77 when something it needs is missing (root,
# overlayfs, ansible-playbook, ansible-lint, the chroot connection; the
# line says which).  ET_ANSIBLE_KEEP=1 keeps the work directory (its hosts'
# upper layers, the playbook logs).
set -u
ET_TEST_NAME=deploy.ansible
. "$(dirname "$0")/lib.sh"
[ $# -ge 1 ] || { echo "usage: $0 DEBSDIR" >&2; exit 2; }
debs=$(cd "$1" 2>/dev/null && pwd) || skip "$1: no such directory (tests/deploy/debs.sh DIR builds the packages)"
src=$(cd "$(dirname "$0")/../.." && pwd)
for c in ansible-playbook ansible-lint python3 setsid; do
	command -v "$c" >/dev/null || skip "$c is missing (Debian: apt-get install ansible ansible-lint)"
done
ansible-doc -t connection community.general.chroot >/dev/null 2>&1 ||
	skip "the community.general.chroot connection is missing (Debian: apt-get install ansible)"
command -v dpkg >/dev/null || skip "dpkg is missing: the hosts here are Debian ones"
lib_deb=$(ls "$debs"/libenormoustext0_*.deb 2>/dev/null | head -n 1)
cmd_deb=$(ls "$debs"/enormoustext_*.deb 2>/dev/null | head -n 1)
[ -n "$lib_deb" ] && [ -n "$cmd_deb" ] || fail "no libenormoustext0_*.deb and enormoustext_*.deb in $debs"
deploy_in_namespace "$@"

t0=$(et_now_us)
lap() { note "$* ($((($(et_now_us) - t0) / 1000)) ms so far)"; }
et_workdir "${TMPDIR:-/tmp}" ET_ANSIBLE_KEEP
W=$ET_WORK
et_clear_env

hosts=(a1 a2 a3 b1 b2 b3)
for h in "${hosts[@]}"; do
	deploy_host "$W/$h"
	at_exit "deploy_host_stop $W/$h"
	# as in slim images, no man-db index rebuilt by dpkg's trigger (about 3 s
	# of each install and removal here)
	rm -f "$W/$h/root/var/lib/man-db/auto-update"
done
lap "six hosts, each an overlayfs root"

# ansible's own files in the work directory, nothing in ~/.ansible
export ANSIBLE_LOCAL_TEMP=$W/ansible-local ANSIBLE_REMOTE_TMP=/tmp/.ansible
export ANSIBLE_CONFIG=$src/deploy/ansible/ansible.cfg ANSIBLE_ROLES_PATH=$src/deploy/ansible/roles
export ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_HOST_KEY_CHECKING=0
export ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks ANSIBLE_PIPELINING=1 ANSIBLE_GATHERING=explicit ANSIBLE_COLLECTIONS_PATH=/usr/lib/python3/dist-packages
export HOME=$W/home
mkdir -p "$HOME"

# an inventory: GROUP HOST... [-- HOST:VAR=VALUE ...]
inventory() {
	local f=$1 h
	shift
	{
		echo "enormoustext_fleet:"
		echo "  hosts:"
		for h in "$@"; do
			echo "    $h:"
			echo "      ansible_host: $W/$h/root"
			case $h in
			a2) echo "      enormoustext_gate_prometheus: always" ;;
			a3) echo "      enormoustext_units: [mariadb]" ;;
			b2)
				echo "      enormoustext_gate_min_huge_percent: 101"
				echo "      enormoustext_gate_retries: 2"
				echo "      enormoustext_units: [mariadb]"
				;;
			esac
		done
		cat <<EOF
  vars:
    ansible_connection: community.general.chroot
    ansible_python_interpreter: /usr/bin/python3
    enormoustext_batch: "50%"
    enormoustext_package_source: file
    enormoustext_package_files: ["$lib_deb", "$cmd_deb"]
    enormoustext_rollback_packages: remove
EOF
	} >"$f"
}
inventory "$W/a.yml" a1 a2 a3
inventory "$W/b.yml" b1 b2 b3

N=0
# play INVENTORY ARGS...: ansible-playbook site.yml; $LOG, $RC
play() {
	local inv=$1
	shift
	N=$((N + 1))
	LOG=$W/play$N.log
	(cd "$src/deploy/ansible" && ansible-playbook -i "$inv" site.yml "$@") >"$LOG" 2>&1
	RC=$?
}
# recap HOST: "ok=.. changed=.. ..." of the last play
recap() { sed -n "s/^$1 *: \(ok=.*\)/\1/p" "$LOG" | tr -s ' '; }
field() { recap "$1" | sed -n "s/.*$2=\([0-9]*\).*/\1/p"; }
show_recap() { sed -n '/^PLAY RECAP/,$p' "$LOG" | sed "s/^/  /"; }

# what a host has of enormoustext: its dpkg state, settings, daemon
installed() { chroot "$W/$1/root" dpkg-query -W -f='${Status}' "$2" 2>/dev/null | grep -q 'install ok installed'; }
has_settings() { [ -e "$W/$1/root/etc/enormoustext/enormoustext.conf" ] || [ -e "$W/$1/root/etc/enormoustext/daemon" ]; }
daemon_pid() {
	local p
	for p in $(deploy_host_pids "$W/$1/root"); do
		grep -q '^/usr/bin/enormoustext.daemon' <(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) && echo "$p"
	done
}
untouched() {
	! installed "$1" enormoustext && ! installed "$1" libenormoustext0 && ! has_settings "$1" &&
		[ -z "$(daemon_pid "$1")" ] && [ ! -e "$W/$1/upper/usr/bin/enormoustext" ]
}

# ---------------------------------------------------------------- 1. lint
(cd "$src/deploy/ansible" && ansible-lint --nocolor) >"$W/lint.log" 2>&1 ||
	{ cat "$W/lint.log"; fail "ansible-lint found problems in deploy/ansible (above)"; }
lap "ansible-lint: $(grep -o 'Passed.*' "$W/lint.log" | head -n 1)"

# ---------------------------------------------------------------- 6. (started now) a failed gate
# Fleet b shares nothing with fleet a: its play runs beside a's (2 cores;
# ansible mostly waits), and its results are read at the end.
(cd "$src/deploy/ansible" && ansible-playbook -i "$W/b.yml" site.yml) >"$W/play-b.log" 2>&1 &
bpid=$!
at_exit "kill $bpid 2>/dev/null"

# ---------------------------------------------------------------- 2. check mode, fresh hosts
play "$W/a.yml" --check --diff
[ $RC = 0 ] || { tail -n 40 "$LOG"; fail "--check --diff on fresh hosts: ansible-playbook exited $RC (the log's end above)"; }
for h in a1 a2 a3; do
	[ "$(field $h failed)" = 0 ] || fail "--check --diff: $h: $(recap $h)"
	[ "$(field $h changed)" -ge 1 ] || fail "--check --diff on a fresh host reports no change: $h: $(recap $h)"
	untouched $h || fail "--check --diff wrote to $h (its upper layer: $(cd "$W/$h/upper" && find . -path ./tmp -prune -o -print | head -n 20))"
done
lap "--check --diff on fresh hosts: $(for h in a1 a2 a3; do printf '%s changed=%s; ' $h "$(field $h changed)"; done)none written"

# ---------------------------------------------------------------- 3. roll-out
play "$W/a.yml"
[ $RC = 0 ] || { tail -n 60 "$LOG"; fail "the roll-out: ansible-playbook exited $RC (the log's end above)"; }
show_recap
# the batches: one canary, then 50% (one host of three), then the rest
[ "$(grep -c '^PLAY \[Roll out enormoustext\]' "$LOG")" = 3 ] ||
	fail "the roll-out ran in $(grep -c '^PLAY \[Roll out enormoustext\]' "$LOG") batches, 3 expected (1, then 50% of 3)"
first_changed=
for h in a1 a2 a3; do
	[ "$(field $h failed)" = 0 ] && [ "$(field $h rescued)" = 0 ] || fail "the roll-out: $h: $(recap $h)"
	first_changed+="$h changed=$(field $h changed) "
	installed $h enormoustext && installed $h libenormoustext0 || fail "the roll-out: $h lacks the packages"
	[ -e "$W/$h/root/etc/enormoustext/daemon" ] || fail "the roll-out: $h has no /etc/enormoustext/daemon (enable --all)"
	[ -n "$(daemon_pid $h)" ] || fail "the roll-out: no enormoustext daemon runs in $h's root"
	grep -q "gate passed" <(sed -n "/ok: \[$h\]/,/^\$/p" "$LOG") || fail "the roll-out: no 'gate passed' for $h in $LOG"
	st=$(chroot "$W/$h/root" enormoustext status --json --no-probe) || fail "status --json in $h failed: $st"
	python3 -c 'import json,sys; d=json.load(sys.stdin)["hostwide"]["daemon"]; sys.exit(not (d["running"] and d["wanted"]))' <<<"$st" ||
		fail "status --json in $h: the daemon not running or not wanted: $st"
	[ ! -e "/etc/enormoustext/daemon" ] || [ -e "$W/$h/upper/etc/enormoustext/daemon" ] || fail "$h's settings are not in its own upper layer"
done
[ -e "$W/a3/root/etc/systemd/system/mariadb.service.d/enormoustext.conf" ] || fail "a3: enormoustext_units [mariadb]: no drop-in"
lap "rolled out: $first_changed; $(grep -o 'gate passed[^"]*' "$LOG" | head -n 1)"

# ---------------------------------------------------------------- 4. idempotent
play "$W/a.yml"
[ $RC = 0 ] || { tail -n 40 "$LOG"; fail "the second run: ansible-playbook exited $RC"; }
for h in a1 a2 a3; do
	[ "$(field $h changed)" = 0 ] && [ "$(field $h failed)" = 0 ] ||
		{ grep -B2 -A3 '^changed:' "$LOG" | head -n 40; fail "the second run is not idempotent: $h: $(recap $h)"; }
done
lap "the second run: $(for h in a1 a2 a3; do printf '%s changed=%s; ' $h "$(field $h changed)"; done)"

# ---------------------------------------------------------------- 5. check mode, rolled out
play "$W/a.yml" --check --diff
[ $RC = 0 ] || { tail -n 40 "$LOG"; fail "--check --diff after the roll-out: ansible-playbook exited $RC"; }
for h in a1 a2 a3; do
	[ "$(field $h changed)" = 0 ] && [ "$(field $h failed)" = 0 ] || fail "--check --diff after the roll-out: $h: $(recap $h)"
done
lap "--check --diff after the roll-out: changed=0 failed=0 on each host"

# ---------------------------------------------------------------- 6. a failed gate
wait $bpid
RC=$?
LOG=$W/play-b.log
[ $RC != 0 ] || { tail -n 40 "$LOG"; fail "a run whose second host cannot pass its gate exited 0"; }
show_recap
[ "$(field b1 failed)" = 0 ] && [ "$(field b1 changed)" -ge 1 ] || fail "the canary b1 should pass: $(recap b1)"
[ -n "$(daemon_pid b1)" ] && has_settings b1 && installed b1 enormoustext || fail "b1 (the canary, passed) is not rolled out"
[ "$(field b2 failed)" = 1 ] && [ "$(field b2 rescued)" = 1 ] || fail "b2 should be rescued (rolled back) then failed: $(recap b2)"
grep -q "gate failed" "$LOG" || fail "no 'gate failed' message in $LOG"
grep -q "enormoustext rolled back on b2" "$LOG" || fail "no 'rolled back on b2' in $LOG"
! has_settings b2 || fail "b2 rolled back but keeps $(ls "$W/b2/root/etc/enormoustext")"
[ ! -e "$W/b2/root/etc/systemd/system/mariadb.service.d/enormoustext.conf" ] || fail "b2 rolled back but keeps the mariadb drop-in"
[ -z "$(daemon_pid b2)" ] || fail "b2 rolled back but its daemon still runs (pid $(daemon_pid b2))"
! installed b2 enormoustext && ! installed b2 libenormoustext0 || fail "b2 rolled back with rollback_packages=remove but keeps the packages"
[ -z "$(recap b3)" ] || fail "b3 (after the failed batch) was played: $(recap b3)"
untouched b3 || fail "b3 (after the failed batch) was touched"
lap "a failed gate: b1 rolled out, b2 rolled back (no settings, no daemon, packages removed), b3 untouched; ansible-playbook exited $RC"
pass
