#!/bin/bash
# fault.btrfs-identity — issue #39 point 7: a program on a btrfs
# subvolume is the file it maps.
#
# stat(2) gives a btrfs subvolume's files a device of their own (the
# subvolume's), while /proc/PID/maps gives the file system's: an identity
# check by (device, inode) took every such object for "not the file
# mapped" — no priming, no zero-copy, copies read from memory under the
# loader's lock, and that reason given.  The library now also takes the
# device of the mount the file is on (statx's mount id in mountinfo).
# bigtext and libbigtext.so (2 MiB-aligned segments) in a subvolume of a
# btrfs image on a loop device: ENORMOUSTEXT_BACKEND=file and the default
# copies with priming: no window's reason is "not the one mapped"; the
# reason the windows stay small is the page cache's (btrfs holds file text
# in small folios on this kernel), or they are zero-copy where it can; and
# `enormoustext prime` names the process that holds the file small.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "not root: a btrfs image cannot be mounted"
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs (Debian: btrfs-progs) is not installed"
grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null; grep -qw btrfs /proc/filesystems ||
	skip "this kernel has no btrfs"
[ -d "$IT_BIN/flags-bfd" ] || fail "$IT_BIN/flags-bfd is missing: build the tests first"
IMG=$WORK/btrfs.img MNT=$WORK/mnt
mkdir "$MNT" || exit 2
truncate -s 160M "$IMG" && mkfs.btrfs -q "$IMG" >/dev/null 2>&1 || fail "mkfs.btrfs failed"
mount -o loop "$IMG" "$MNT" || skip "the btrfs image could not be mounted (no loop device?)"
at_exit "umount '$MNT' 2>/dev/null || umount -l '$MNT'"
btrfs subvolume create "$MNT/sv" >/dev/null || fail "btrfs subvolume create failed"
S=$MNT/sv
cp "$IT_BIN/flags-bfd/bigtext" "$IT_BIN/flags-bfd/libbigtext.so" "$S/" || fail "cannot copy bigtext"
cp -P "$(dirname "$PRE")"/libenormoustext.so* "$S/" 2>/dev/null
sync -f "$S/bigtext"
sdev=$(stat -c '%Hd:%Ld' "$S/bigtext")
(cd "$S" && ENORMOUSTEXT=0 exec ./bigtext --hold 4 >/dev/null) & hp=$!
sleep 0.5
md=$(awk -v f="$S/bigtext" '$6 == f { print $4; exit }' "/proc/$hp/maps")
mdev=$(printf '%d:%d' "0x${md%:*}" "0x${md#*:}" 2>/dev/null)
# the command's prime names the processes that hold the file small: by
# maps' device, which is not stat's here
TOOL=${FAULT_TOOL:-}
if [ -x "$TOOL" ]; then
	"$TOOL" prime "$S/libbigtext.so" >"$WORK/prime.out" 2>&1
	grep -q "mapped by PID $hp\b" "$WORK/prime.out" ||
		fail "enormoustext prime did not name PID $hp, which maps the file: $(tr '\n' '|' <"$WORK/prime.out")"
	note "prime: $(grep 'mapped by' "$WORK/prime.out")"
fi
wait "$hp"
note "stat gives $sdev, maps $mdev"
[ "$sdev" != "$mdev" ] || note "(this kernel gives the subvolume's files the file system's device: the case cannot arise, the rest still checks the reasons)"

for backend in file default; do
	env=(ENORMOUSTEXT_VERBOSE=3 ENORMOUSTEXT_REPORT="$WORK/$backend.json" LD_PRELOAD="$PRE")
	[ "$backend" = file ] && env+=(ENORMOUSTEXT_BACKEND=file) || env+=(ENORMOUSTEXT_PRIME=auto)
	(cd "$S" && env "${env[@]}" ./bigtext >"$WORK/$backend.out" 2>"$WORK/$backend.err") ||
		fail "$backend: bigtext failed: $(grep -v '^enormoustext' "$WORK/$backend.err" | tail -3 | tr '\n' '|')"
	if grep -q "not the one mapped" "$WORK/$backend.json" "$WORK/$backend.err"; then
		fail "$backend: on a btrfs subvolume the library took bigtext for another file: $(grep -h 'not the one mapped' "$WORK/$backend.err" | head -2 | tr '\n' '|')"
	fi
	why=$(grep -o '"reasons": \[[^]]*\]' "$WORK/$backend.json" | grep -v 'vdso\|itself\|no whole' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
	note "$backend: $(grep -E 'prime: [0-9]+ of|objects, ' "$WORK/$backend.err" | tr '\n' ' ') reasons:$why"
done
grep -q 'the page cache holds this part of the file in small pages\|"window_kinds": "z' "$WORK/file.json" ||
	fail "BACKEND=file on btrfs: neither zero-copy nor the page cache's reason: $(grep -o '"reasons": \[[^]]*\]' "$WORK/file.json" | tr '\n' ' ')"
echo "PASS [$T]"
