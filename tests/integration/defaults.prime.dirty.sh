#!/bin/bash
# integration.defaults.prime.dirty — issue 32, point 1, priming case (b):
# a file with dirty pages (written, not yet written back) is left alone.
#
# bigtext and libbigtext.so linked with 2 MiB-aligned segments (flags-bfd),
# copied, written out and dropped from the page cache; then the second
# window of libbigtext.so written again with its own bytes, 4 KiB at a
# time: its pages are dirty (cachestat), small, and say what they said.
# bigtext runs 3 s with the library preloaded and no ENORMOUSTEXT_*
# variable but the report, under strace (the calls that write out or drop
# page cache: fsync, fdatasync, sync, syncfs, sync_file_range, msync,
# fadvise64).  At 1 s it copies its 8 windows (the page cache holds them
# small) and primes them: every clean window is read back huge ('z'), the
# dirty one must stay a copy ('c': "zczz" for the library); nothing of the
# file may be written out by the library: no sync call of any kind, no
# POSIX_FADV_DONTNEED over the dirty window (it starts a write-out), and
# the dirty page count the same at the end (no flusher writes back a page
# younger than vm.dirty_expire_centisecs, 30 s by default).
# (The same without cachestat(2): defaults.prime.nocachestat.)
# The control, on fresh copies dirtied alike: ENORMOUSTEXT_PRIME=1 (write
# out first, then prime) must show up in every one of those measurements
# (an fdatasync, no dirty page left, "zzzz") — what the default run's
# assertions would see of a library that wrote the file out.  A sentinel
# file, dirtied alike and touched by nothing, tells a write-back by
# someone else (a sync(1) of another test running meanwhile): that run is
# then done again (three times at most).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defaults.bash"

need_file_thp
command -v strace >/dev/null 2>&1 || echo "-- strace is not installed: the calls the library makes are not checked, only cachestat's dirty count"

# the defaults: the dirty window left alone, the others primed
judged defaults
left_alone "the defaults"
[ "$KL" = "$EXPECT_L" ] ||
	fail "libbigtext.so's window kinds are '$KL', expected '$EXPECT_L': the dirty window must stay a copy ('c'), the clean ones be primed ('z')"
[ "$KX" = zzzz ] || fail "bigtext's window kinds are '$KX': its file is clean, every window must be primed ('z')"
DEF="lib '$KL', dirty pages $DIRTY0 -> $DIRTY1, no sync call, no drop of the dirty window"

# the control: ENORMOUSTEXT_PRIME=1 writes the file out first
dirty_case prime1 ENORMOUSTEXT_PRIME=1
[ "$KL" = zzzz ] || fail "control, ENORMOUSTEXT_PRIME=1: libbigtext.so's window kinds '$KL': written out first, every window must be primed"
[ "$DIRTY1" -eq 0 ] || fail "control, ENORMOUSTEXT_PRIME=1: $DIRTY1 dirty page(s) left: the write-out must show in cachestat"
if command -v strace >/dev/null 2>&1; then
	grep -q 'fdatasync' <<<"$SYNCS" || fail "control, ENORMOUSTEXT_PRIME=1: no fdatasync seen by strace: ${SYNCS:-no sync call}"
fi
echo "-- (b) a dirty window: with the defaults $DEF;" \
	"with ENORMOUSTEXT_PRIME=1 (the control) lib '$KL', dirty pages $DIRTY0 -> $DIRTY1, ${SYNCS:-no sync call}"
pass
