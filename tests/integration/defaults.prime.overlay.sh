#!/bin/bash
# integration.defaults.prime.overlay — issue 32, point 1, priming case (d):
# a program run from overlayfs.
#
# The lower directory holds fresh copies of bigtext and libbigtext.so
# linked with 2 MiB-aligned segments (flags-bfd), written out and dropped
# from the page cache; an overlay is mounted over it (empty upper
# directory), and bigtext runs from the merged directory, with the
# library preloaded and no ENORMOUSTEXT_* variable but the report (and
# VERBOSE=3, to see the tries).  What happens: overlayfs maps the lower
# file itself, and passes POSIX_FADV_DONTNEED and the read-back on to it,
# so priming works as on the lower file system:
#   1. alone, 3 s: the 8 windows copied at 1 s are primed into zero-copy
#      ('z' for every window, its own smaps --kind file), the text
#      identical to the files (bigtext's check), nothing copied up (the
#      upper directory stays empty: nothing was written through the
#      overlay) and the lower files as they were (cmp with the build's);
#   2. a copy-up under a running process: with a fresh lower directory and
#      overlay, a holder (bigtext run plain) maps the small pages, the
#      subject (9 s) copies its windows at 1 s and cannot prime them; then
#      libbigtext.so is opened for writing through the overlay — copied up
#      to the upper directory — and 16 bytes of nop padding per window
#      (never run) changed to int3 there, written out and dropped; the
#      holder is ended.  The path now opens the upper copy, with the same
#      st_dev and st_ino as the lower file the subject maps (overlayfs
#      keeps them across a copy-up): the identity of the file cannot tell.
#      The worker's next try must still not put the upper copy's bytes in
#      the subject: its lib text read from /proc/PID/mem is byte for byte
#      the lower file's, its lib windows stay copies ('c'), a try said
#      "stay copies: the file at the object's path is not the one mapped";
#      the exe, not copied up, is primed by that try ('z': a try did run
#      after the copy-up).  bigtext's own check (memory == the file at its
#      path) fails for the lib alone, at the first changed byte: memory
#      the old byte, file 0xcc.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defaults.bash"

need_file_thp
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null
grep -qw overlay /proc/filesystems || skip "this kernel has no overlayfs"

# overlay_fresh — fresh copies in a lower directory D, an overlay over it:
# LOWER UPPER MERGED
overlay_fresh() {
	layout_fresh flags-bfd bigtext
	cold "$D/bigtext" "$D/libbigtext.so" "$D/libenormoustext.so.0"
	LOWER=$D UPPER=$WORK/upper$N MERGED=$WORK/merged$N
	mkdir "$UPPER" "$WORK/work$N" "$MERGED" || exit 2
	mount -t overlay overlay -o "lowerdir=$LOWER,upperdir=$UPPER,workdir=$WORK/work$N" "$MERGED" ||
		skip "cannot mount an overlay here (not root, or in a container that forbids it)"
	EXIT_HOOKS+=("umount '$MERGED'")
	echo "-- overlay: lower $LOWER, upper $UPPER, merged $MERGED"
}

# 1. alone
overlay_fresh
run alone ENORMOUSTEXT_REPORT="$D/alone.json" ENORMOUSTEXT_VERBOSE=3 LD_PRELOAD="$PRE" -- \
	"$MERGED/bigtext" --run 3 --expect-huge 100 --kind file
[ "$RC" -eq 0 ] || fail "alone: bigtext from the overlay exited $RC: $(bigtext_says)"
k1=""
for f in bigtext libbigtext.so; do
	kk=$(kinds_of "$D/alone.json" "$MERGED/$f") || fail "${kk#FAIL*: }"
	k1="$k1 $f:$kk"
	[ "$kk" = zzzz ] || fail "alone: $f: window kinds '$kk': the overlay passes the priming on to the lower file, every window must be zero-copy ($(mem_facts))"
	cmp -s "$LOWER/$f" "$IT_BIN/flags-bfd/$f" || fail "alone: the lower $f is not the build's any more"
done
up=$(find "$UPPER" -mindepth 1 | wc -l)
[ "$up" -eq 0 ] || fail "alone: the upper directory holds $(find "$UPPER" -mindepth 1 | tr '\n' ' '): something was written through the overlay"
echo "-- 1. alone: window kinds$k1 (zero-copy); upper directory: $up entries; the lower files the build's"
ALONE=$k1

# 2. a copy-up under a running process
overlay_fresh
copy_up() {
	pad_mark "$MERGED/libbigtext.so"
	T_COPYUP=$((($(date +%s%N) - PAIR_T0) / 1000000))
	kill "$HOLDER_PID"
	[ -f "$UPPER/libbigtext.so" ] || fail "opening $MERGED/libbigtext.so for writing did not copy it up"
	echo "-- libbigtext.so copied up and changed by $T_COPYUP ms, the holder ended: through the merged path" \
		"st_dev:st_ino $(stat -c %d:%i "$MERGED/libbigtext.so"), as the subject's mapping says: $(awk -v f="$MERGED/libbigtext.so" '$6 == f && $3 == "00000000" { print $4 ":" $5; exit }' "/proc/$SUBJ_PID/maps")"
}
PAIR_FILES=("$MERGED/bigtext" "$MERGED/libbigtext.so")
SUBJ_ENV=(ENORMOUSTEXT_VERBOSE=3)
PAIR_HOLD=5
prime_pair "$MERGED/bigtext" 20 9 copy_up
[ -n "${T_COPYUP:-}" ] || fail "the copy-up never happened: the subject's copies were not seen while the holder ran (a loaded machine?)"
read -r anon file < <(text_huge "$SUBJ_PID")
memtext "$SUBJ_PID" "$MERGED/libbigtext.so" "$LOWER/libbigtext.so" "$UPPER/libbigtext.so" "$MERGED/bigtext" "$LOWER/bigtext" -
pair_end killed
BAD='lib: text in memory differs from .*libbigtext\.so: first at address 0x[0-9a-f]+ \(file offset '"${PAD_OFFS%% *}"'\): memory [0-9a-f]{2}, file cc$'
fails_only "$BAD" "the subject (its check against the file now at the path)"
grep -q '^bigtext: ran every function every 20 ms for 9 s: every round right' "$OUT" || fail "the subject's functions did not all run right: $(bigtext_says)"
tries=$(grep -c "stay copies: the file at the object's path is not the one mapped" "$ERR")
kx=$(kinds_of "$D/subject.json" "$MERGED/bigtext") || fail "${kx#FAIL*: }"
kl=$(kinds_of "$D/subject.json" "$MERGED/libbigtext.so") || fail "${kl#FAIL*: }"
echo "-- 2. copy-up: window kinds bigtext:$kx libbigtext.so:$kl; copies $(mib "$anon") MiB, zero-copy $(mib "$file") MiB;" \
	"tries that found the file changed: $tries; upper directory: $(cd "$UPPER" && find . -mindepth 1 | tr '\n' ' ')"
[ "${MT_DIFF[0]}" -eq 0 ] || fail "the subject's lib text differs from the lower file it loaded in ${MT_DIFF[0]} byte(s): the upper copy's bytes were put into it"
[ "${MT_OTHER[0]}" -gt 0 ] || fail "the subject's lib text is the upper copy's in every page"
[ "${MT_DIFF[1]}" -eq 0 ] || fail "the subject's exe text differs from the lower file in ${MT_DIFF[1]} byte(s)"
[ "$kl" = cccc ] || fail "libbigtext.so: window kinds '$kl': the file at its path (the upper copy) is not what the subject maps, every window must stay a copy"
[ "$kx" = zzzz ] || fail "bigtext: window kinds '$kx': not copied up, it must be primed by the try after the holder ended (else no try ran after the copy-up; $(mem_facts))"
[ "$tries" -ge 1 ] || fail "no try of priming said that the file at the path is not the one mapped (ENORMOUSTEXT_VERBOSE=3)"
[ ! -e "$UPPER/bigtext" ] || fail "bigtext was copied up: something wrote to it through the overlay"
echo "-- (d) overlayfs: alone, primed into zero-copy ($ALONE), nothing written through the overlay;" \
	"after a copy-up under a running process, its text stays the lower file's (0 bytes differ, ${MT_OTHER[0]} page(s) differ from the upper copy)," \
	"the lib's windows copies ($kl), the exe's primed ($kx)"
pass
