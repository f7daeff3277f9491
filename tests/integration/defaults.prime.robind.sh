#!/bin/bash
# integration.defaults.prime.robind — issue 32, point 1, priming case (c):
# a program run from a read-only bind mount.
#
# Fresh copies of bigtext and libbigtext.so linked with 2 MiB-aligned
# segments (flags-bfd), written out and dropped from the page cache, bind
# mounted elsewhere and the bind remounted read-only (writing there fails
# with EROFS: checked).  bigtext runs from the read-only mount for 3 s with
# the library preloaded and no ENORMOUSTEXT_* variable but the report
# (and VERBOSE=3, to see the priming).  What happens: priming only reads
# (open O_RDONLY, POSIX_FADV_DONTNEED of clean pages, a read-only mapping
# read back huge), and a read-only mount refuses none of that: the 8
# windows copied at 1 s are primed into zero-copy ('z' for every window,
# its own smaps --kind file), with the text identical to the files
# (bigtext's check) and its results right.  Nothing is written: the files'
# bytes (cmp with the build's), size, mtime and ctime are as before, no
# page of them dirty (cachestat), the mount still read-only.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defaults.bash"

need_file_thp
layout_fresh flags-bfd bigtext
cold "$D/bigtext" "$D/libbigtext.so"
M=$WORK/ro
mkdir "$M" || exit 2
mount --bind "$D" "$M" || skip "cannot bind mount here (not root, or in a container that forbids it)"
EXIT_HOOKS+=("umount '$M'")
mount -o remount,bind,ro "$M" || fail "cannot remount the bind mount read-only"
if touch "$M/written" 2>"$WORK/touch.err"; then fail "the bind mount $M is writable after remount,ro"; fi
echo "-- $D bind mounted on $M, read-only: $(findmnt -no OPTIONS "$M" 2>/dev/null | cut -d, -f1) ($(cat "$WORK/touch.err"))"
before=$(stat -c '%n %s %Y %Z' "$D/bigtext" "$D/libbigtext.so")

run robind ENORMOUSTEXT_REPORT="$D/robind.json" ENORMOUSTEXT_VERBOSE=3 LD_PRELOAD="$PRE" -- \
	"$M/bigtext" --run 3 --expect-huge 100 --kind file
[ "$RC" -eq 0 ] || fail "bigtext from the read-only mount exited $RC: $(bigtext_says)"
grep -q "^bigtext: exe: .* identical to $M/bigtext\$" "$OUT" || fail "bigtext did not run from $M"
k=""
for f in bigtext libbigtext.so; do
	kk=$(kinds_of "$D/robind.json" "$M/$f") || fail "${kk#FAIL*: }"
	k="$k $f:$kk"
	[ "$kk" = zzzz ] || fail "$f: window kinds '$kk': priming only reads, every window must be zero-copy from a read-only mount"
	cmp -s "$D/$f" "$IT_BIN/flags-bfd/$f" || fail "$f is not the build's any more"
done
after=$(stat -c '%n %s %Y %Z' "$D/bigtext" "$D/libbigtext.so")
[ "$after" = "$before" ] || fail "the files' size, mtime or ctime changed: '$before' -> '$after'"
dirty=$(pagecache stat "$D/bigtext" "$D/libbigtext.so" | awk '{ s += $5 + $7 } END { print s + 0 }')
[ "$dirty" -eq 0 ] || fail "$dirty page(s) of the files dirty or under writeback after the run"
findmnt -no OPTIONS "$M" | grep -qw ro || fail "$M is no longer read-only"
echo "-- (c) read-only bind mount: primed into zero-copy:$k; $(grep -c 'now zero-copy' "$ERR") priming round(s):" \
	"$(grep 'prime:' "$ERR" | sed 's/^enormoustext: //' | tr '\n' ';') files unchanged (bytes, size, mtime, ctime), 0 dirty pages"
pass
