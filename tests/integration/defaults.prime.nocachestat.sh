#!/bin/bash
# integration.defaults.prime.nocachestat — issue 32, point 1, priming case
# (b) on a kernel without cachestat(2) (older than 6.5): a file with dirty
# pages is left alone there too.
#
# As integration.defaults.prime.dirty (flags-bfd's bigtext and
# libbigtext.so, fresh, written out and dropped; libbigtext.so's second
# window written again with its own bytes: dirty pages; bigtext --run 3
# with the library preloaded and the report, under strace), but bigtext
# runs under a seccomp filter that fails cachestat(2) with ENOSYS, as a
# kernel older than 6.5 does, and with ENORMOUSTEXT_SECCOMP=trust (without
# it the library stands down under any filter).  The library cannot tell
# which pages are dirty: it must not take the file for clean.  No sync
# call, no POSIX_FADV_DONTNEED over the dirty window (which would start
# its write-out), its dirty pages the same at the end (a sentinel file
# dirtied alike tells a write-back by someone else: then again), and the
# dirty window a copy.  The copies the library cannot check stay copies:
# no window of this run may be primed ('c' for every window).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defaults.bash"

need_file_thp
command -v strace >/dev/null 2>&1 || echo "-- strace is not installed: the calls the library makes are not checked, only cachestat's dirty count"

judged nocachestat nocachestat ENORMOUSTEXT_SECCOMP=trust
left_alone "without cachestat(2)"
[ "$KL" = cccc ] && [ "$KX" = cccc ] ||
	fail "without cachestat(2) the library cannot tell a clean window from a dirty one: every copy must stay a copy, window kinds are exe '$KX', lib '$KL'"
echo "-- (b) a dirty window, without cachestat(2): lib '$KL', exe '$KX', dirty pages $DIRTY0 -> $DIRTY1," \
	"${SYNCS:-no sync call}, drops of the dirty window: ${DROPS_DIRTY:-none}"
pass
