#!/bin/bash
# fault.memcg-cgroup2 — fault.memcg and fault.memcg-growth again, under
# cgroup v2, where this host cannot give them one: its memory controller is
# bound to cgroup v1 (and cannot be moved while its own processes live in
# v1 groups), so those tests take their v1 path here.
#
# Both scripts run unchanged in a small virtual machine (tools/cgroup2-vm:
# a Debian kernel under qemu, this host's files read-only over 9p, cgroup2
# at /sys/fs/cgroup with the memory controller), with the same build; this
# test passes when both pass there and each says it used cgroup v2.
#  - Where this host's own cgroup2 has the memory controller, the two tests
#    already run their v2 path here: this one says so and is skipped.
#  - Without qemu-system-x86_64, a static busybox or a kernel (ET_VM_KERNEL,
#    else the newest /boot/vmlinuz-*, with its /lib/modules), it is skipped
#    with what to install (Debian: apt-get install qemu-system-x86
#    busybox-static linux-image-amd64; the host keeps booting its own).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "the virtual machine reads the host's files as root"
if [ -r /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
	skip "this host's cgroup2 has the memory controller: fault.memcg and fault.memcg-growth run their v2 path here"
fi
vm=$FAULT_SOURCE_DIR/tools/cgroup2-vm
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is missing: the cgroup2 runs need it (Debian: apt-get install qemu-system-x86 busybox-static linux-image-amd64)"
command -v busybox >/dev/null || skip "busybox is missing (Debian: apt-get install busybox-static)"
kernel=${ET_VM_KERNEL:-$(ls -1v /boot/vmlinuz-* 2>/dev/null | tail -n 1)}
[ -n "$kernel" ] || skip "no kernel for the virtual machine: set ET_VM_KERNEL or apt-get install linux-image-amd64"

bld=$(dirname "$FAULT_PRELOAD")
vars=()
for v in FAULT_BIN IT_BIN FAULT_PRELOAD FAULT_SOURCE_DIR FAULT_WORK_ROOT FAULT_TOOL FAULT_CC; do
	[ -n "${!v:-}" ] && vars+=(--env "$v=${!v}")
done
for t in memcg memcg-growth; do
	out=$WORK/$t.out
	rc=0
	"$vm" --kernel "$kernel" --timeout 400 --rw "$FAULT_WORK_ROOT" "${vars[@]}" -- \
		bash "$FAULT_SOURCE_DIR/tests/fault/$t.sh" >"$out" 2>&1 || rc=$?
	sed "s/^/  $t| /" "$out"
	[ "$rc" = 0 ] || fail "fault.$t in the cgroup2 machine: exit $rc (its output above)"
	grep -q '^cgroup2-vm: kernel .*cgroup2 controllers: .*memory' "$out" ||
		fail "the machine's cgroup2 had no memory controller: $(head -n 1 "$out")"
	grep -qE '^\[(memcg|memcg-growth)\] (memory )?cgroup v2|PASS \(cgroup v2\)' "$out" ||
		fail "fault.$t passed in the machine without saying it used cgroup v2"
	note "fault.$t passed under cgroup v2 ($(sed -n 's/^cgroup2-vm: kernel \([^,]*\),.*/kernel \1/p' "$out"))"
done
note "(build: $bld)"
pass
