#!/bin/bash
# integration.defaults.prime.replaced — issue 32, point 1, priming case (e):
# a file replaced on disk since it was mapped.
#
# bigtext and libbigtext.so linked with 2 MiB-aligned segments (flags-bfd),
# copied, written out and dropped from the page cache, and their
# replacements made beside them: bigtext.new, a copy with the same bytes
# (another inode), libbigtext.so.new, a copy in which 16 bytes of nop
# padding per window (never run) are int3; both written out and dropped:
# clean, cold, mapped by no one — nothing but the identity of the file
# stops priming from reading them back huge and swapping them in.
# As in integration.defaults.prime.others, a holder (bigtext run plain)
# maps the small pages, so that the subject (bigtext with the library
# preloaded, no ENORMOUSTEXT_* variable but the report and VERBOSE=3 to
# see the tries, 9 s) copies its 8 windows at 1 s and cannot prime them.
# Then, the copies in, both files are replaced by rename(2), as a package
# upgrade does (the old inodes kept as *.old for the comparisons), and the
# holder is ended: the worker's next try finds nothing mapping the small
# pages, and files at the paths that are not the ones mapped.  It must
# leave them: the subject's text stays what it loaded — read from
# /proc/PID/mem while it holds, byte for byte the old files' (none of the
# new lib's int3) — no mapping of the subject is of a new inode, its
# windows stay copies ('c'), a try said so after the replacement
# ("stay copies: the file at the object's path is not the one mapped"),
# and it runs right.  bigtext's own check (memory == the file at its path)
# then fails for the lib only, at the first changed byte: memory the old
# byte, file 0xcc.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defaults.bash"

need_file_thp
layout_fresh flags-bfd bigtext
cp "$D/libbigtext.so" "$D/libbigtext.so.new" && cp "$D/bigtext" "$D/bigtext.new" || fail "cannot copy the new files"
pad_mark "$D/libbigtext.so.new"
cold "$D/bigtext" "$D/libbigtext.so" "$D/bigtext.new" "$D/libbigtext.so.new"

# the old files kept under other names, the new ones renamed over them;
# then the holder ended
replace_both() {
	ln "$D/libbigtext.so" "$D/libbigtext.so.old" && ln "$D/bigtext" "$D/bigtext.old" &&
		mv -f "$D/libbigtext.so.new" "$D/libbigtext.so" && mv -f "$D/bigtext.new" "$D/bigtext" ||
		fail "cannot replace the files"
	T_REPLACED=$((($(date +%s%N) - PAIR_T0) / 1000000))
	kill "$HOLDER_PID"
	NEW_INODES=$(stat -c %i "$D/bigtext" "$D/libbigtext.so" | tr '\n' ' ')
	echo "-- bigtext and libbigtext.so replaced (rename) at $T_REPLACED ms, the holder ended: new inodes $NEW_INODES;" \
		"old $(stat -c %i "$D/bigtext.old" "$D/libbigtext.so.old" | tr '\n' ' ')"
}
PAIR_FILES=("$D/bigtext" "$D/libbigtext.so")
SUBJ_ENV=(ENORMOUSTEXT_VERBOSE=3)
PAIR_HOLD=5
prime_pair ./bigtext 20 9 replace_both
[ -n "${NEW_INODES:-}" ] || fail "the files were never replaced: the subject's copies were not seen while the holder ran (a loaded machine?)"

# the subject holds: what it maps, its text byte for byte
mapped_new=$(comm -12 <(maps_inodes "$SUBJ_PID") <(tr ' ' '\n' <<<"$NEW_INODES" | grep . | sort -u) | tr '\n' ' ')
read -r anon file < <(text_huge "$SUBJ_PID")
memtext "$SUBJ_PID" "$D/libbigtext.so" "$D/libbigtext.so.old" "$D/libbigtext.so" "$D/bigtext" "$D/bigtext.old" -
pair_end killed
BAD='lib: text in memory differs from .*libbigtext\.so: first at address 0x[0-9a-f]+ \(file offset '"${PAD_OFFS%% *}"'\): memory [0-9a-f]{2}, file cc$'
fails_only "$BAD" "the subject (its check against the file now at the path)"
grep -q '^bigtext: ran every function every 20 ms for 9 s: every round right' "$OUT" || fail "the subject's functions did not all run right: $(bigtext_says)"
tries=$(grep -c "prime: [0-9]* copied window(s) stay copies: the file at the object's path is not the one mapped" "$ERR")
k=""
for f in bigtext libbigtext.so; do
	kk=$(kinds_of "$D/subject.json" "$D/$f") || fail "${kk#FAIL*: }"
	k="$k $f:$kk"
	[ "$kk" = cccc ] || fail "$f: window kinds '$kk': the file at its path is not the one mapped, every window must stay a copy ('c')"
done
echo "-- the subject at its end: window kinds$k; copies $(mib "$anon") MiB, zero-copy $(mib "$file") MiB;" \
	"mappings of the new inodes: ${mapped_new:-none}; tries that found the files replaced: $tries"
[ "${MT_DIFF[0]}" -eq 0 ] || fail "the subject's lib text differs from the file it loaded in ${MT_DIFF[0]} byte(s): the new file's contents were mapped into it"
[ "${MT_OTHER[0]}" -gt 0 ] || fail "the subject's lib text is the new file's in every page: the new file's contents were mapped into it"
[ "${MT_DIFF[1]}" -eq 0 ] || fail "the subject's exe text differs from the file it loaded in ${MT_DIFF[1]} byte(s)"
[ -z "$mapped_new" ] || fail "the subject maps the new inode(s) $mapped_new: files that replaced the ones it loaded"
[ "$file" -eq 0 ] || fail "$(mib "$file") MiB of the subject's text is zero-copy: mapped from the file at the path, which is not the one it loaded"
[ "$tries" -ge 1 ] || fail "no try of priming after the replacement said that the files at the paths are not the ones mapped (ENORMOUSTEXT_VERBOSE=3): the case was not exercised"
echo "-- (e) files replaced on disk since mapped: the subject's text identical to the old files (lib: 0 bytes differ, ${MT_OTHER[0]} page(s) differ from the new one;" \
	"exe: 0 bytes differ), no new inode mapped, every window still a copy after $tries try(s); bigtext's check fails for the lib alone, at ${PAD_OFFS%% *}"
pass
