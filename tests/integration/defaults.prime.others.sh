#!/bin/bash
# integration.defaults.prime.others — issue 32, point 1, priming case (a):
# another process maps the file's small pages.
#
# bigtext and libbigtext.so linked with 2 MiB-aligned segments (flags-bfd:
# every window congruent with its file offset), copied, written out and
# dropped from the page cache.  The holder, bigtext run plain for 4 s
# (every function every 20 ms: it maps every page of its text, small),
# and, once it runs, the subject: bigtext with the library preloaded and no
# ENORMOUSTEXT_* variable but the report, running 9 s.  At 1 s the subject
# copies its 8 windows (the page cache holds them small) and tries to prime
# them: POSIX_FADV_DONTNEED cannot drop pages another process maps, so the
# windows must stay copies while the holder runs (the pass, and the try
# 1 s later), and the holder must keep every page it maps (its Rss of the
# two files never falls; its text identical to the files and its results
# right, checked by itself at its end).  Once the holder is gone the
# worker's next try (4 s after the first) reads the windows back as 2 MiB
# folios: at its end the subject's text is all zero-copy (its own smaps,
# --kind file), and the report says so ('z' for every window).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defaults.bash"

need_file_thp
layout_fresh flags-bfd bigtext
cold "$D/bigtext" "$D/libbigtext.so"
PAIR_FILES=("$D/bigtext" "$D/libbigtext.so")
SUBJ_ARGS=(--expect-huge 100 --kind file)
prime_pair ./bigtext 4 9
pair_end
expect_pass "the subject (defaults), once the holder is gone, must have all of its text zero-copy"
stderr_empty "the subject: ENORMOUSTEXT_VERBOSE unset"
k=""
for role in exe lib; do
	k="$k $role:$(kinds "$D/subject.json" "$role")"
	[ "$(kinds "$D/subject.json" "$role")" = zzzz ] ||
		fail "$role: window kinds '$(kinds "$D/subject.json" "$role")' in the report: every window must be zero-copy ('z') at the end ($(mem_facts))"
done
echo "-- the subject's report: window kinds$k"

[ "$T_COPY" -ge 0 ] || fail "the subject's text was never seen copied while the holder ran (a loaded machine? the holder ended at $T_HOLDER_END ms)"
[ "$HELD_ANON" -ge $((8 * H_MIB * 1024)) ] ||
	fail "while the holder ran, only $(mib "$HELD_ANON") MiB of the subject's text were copies: all 8 windows must be copied"
[ "$HELD_FILE" -eq 0 ] ||
	fail "while the holder mapped the small pages, $(mib "$HELD_FILE") MiB of the subject's text were zero-copy: the page cache cannot hold them huge unless the holder's pages were dropped"
[ "$RSS_MIN" -ge "$RSS_START" ] ||
	fail "the holder's Rss of the files fell from $(mib "$RSS_START") to $(mib "$RSS_MIN") MiB while the subject primed: pages it maps were taken from it"
[ "$T_ZERO" -gt "$T_HOLDER_END" ] ||
	fail "the subject's text became zero-copy at $T_ZERO ms, not after the holder ended ($T_HOLDER_END ms)"
echo "-- (a) another process maps the small pages: the subject's 8 windows copies while it ran (up to $(mib "$HELD_ANON") MiB, 0 zero-copy)," \
	"its Rss of the files kept ($(mib "$RSS_START") -> min $(mib "$RSS_MIN") MiB), primed $((T_ZERO - T_HOLDER_END)) ms after it ended (the worker's next try)"
pass
