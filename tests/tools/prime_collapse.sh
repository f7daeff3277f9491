#!/bin/bash
# tool_prime_collapse — priming uses MADV_COLLAPSE on file text where the
# kernel does it (CONFIG_READ_ONLY_THP_FOR_FS, or a page cache that
# collapses large folios of any file), probed at run time by the first
# window primed.  A static program linked with enormous.ld, fresh copies
# (page cache dropped):
#   - `prime --json`'s collapse_file_text (works, error) is what the test's
#     own probe (tt_fcollapse: one window mapped read-only and executable,
#     MADV_COLLAPSE) finds on another copy;
#   - where it works: a copy whose small pages a running process maps is
#     primed anyway (collapsed in place: "collapsed" = the windows primed,
#     none "held"), while that process runs;
#   - where it does not (this project's machines: no
#     CONFIG_READ_ONLY_THP_FOR_FS, EINVAL): said in a line; the held copy's
#     windows are "held" and none "collapsed", and the tool made one
#     MADV_COLLAPSE call on file text for the whole run (the probe),
#     however many windows it primed;
#   - either way the running program's bytes read back equal the file's.
. "$(dirname "$0")/lib.sh"
need_huge_folios
[ -x "$TT_BIN/tt_fcollapse" ] || fail "$TT_BIN/tt_fcollapse is missing: build the tool_tests target"

bigstatic "$W/src"
drop() { python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"; }
for c in probe p1 held; do
	cp "$W/src" "$W/$c" && sync "$W/$c" && drop "$W/$c" || fail "cannot copy"
done

# the first whole window of the text: the test's probe's offset
t check -- "$TOOL" prime --check --json "$W/probe"
expect_rc 0; json "$OUT"
toff=$(jneed "$OUT.flat" '.files[0].text_offset')
woff=$(((toff + H - 1) / H * H))
t probe -- "$TT_BIN/tt_fcollapse" "$W/probe" "$woff"
expect_rc 0
mine=$(cat "$OUT")

t prime -- "$TOOL" prime --json "$W/p1"
expect_rc 0; json "$OUT"
works=$(jneed "$OUT.flat" .collapse_file_text.works)
primed=$(jneed "$OUT.flat" '.files[0].primed')
note "MADV_COLLAPSE of file text: the test's probe says '$mine'; prime --json says works=$works$(jget "$OUT.flat" .collapse_file_text.error | sed 's/^/, error=/'); $primed windows primed"
[ "$primed" -ge 1 ] || fail "prime primed no window of a fresh copy: the probe was never made"
case $mine in
works) [ "$works" = true ] || fail "the kernel collapses file text (the test's probe) but prime says it does not" ;;
error\ *)
	[ "$works" = false ] || fail "the kernel refuses MADV_COLLAPSE on file text ($mine) but prime says works=$works"
	[ "$(jneed "$OUT.flat" .collapse_file_text.error)" = "${mine#error }" ] ||
		fail "prime's error ($(jneed "$OUT.flat" .collapse_file_text.error)) is not the probe's (${mine#error })" ;;
*) fail "the test's probe printed '$mine'" ;;
esac

# a copy whose small pages a running process maps
"$W/held" wait >"$W/held.out" 2>&1 </dev/null &
HP=$!
PIDS+=("$HP")
wait_line "$W/held.out" '^ready ' 10 "$HP" || fail "the holding program did not start: $(cat "$W/held.out")"
# (LeakSanitizer cannot run under ptrace: off for this run of an ASan build)
t strace ASAN_OPTIONS=detect_leaks=0 -- strace -f -qq -e trace=madvise -o "$W/held.strace" "$TOOL" prime --json "$W/held"
expect_rc 0; json "$OUT"
held=$(jneed "$OUT.flat" '.files[0].held')
collapsed=$(jneed "$OUT.flat" '.files[0].collapsed')
wins=$(jneed "$OUT.flat" '.files[0].windows')
calls=$(grep -c 'MADV_COLLAPSE' "$W/held.strace")
kill -0 "$HP" 2>/dev/null || fail "the holding program ended before the prime was over"
note "held copy ($wins windows, mapped small by pid $HP): held $held, collapsed $collapsed, MADV_COLLAPSE calls $calls"
if [ "$works" = true ]; then
	[ "$held" = 0 ] && [ "$collapsed" -ge 1 ] ||
		fail "the kernel collapses file text, yet windows a process maps were left held ($held) and $collapsed collapsed"
else
	note "this kernel does not collapse file text in place (${mine#error }): windows a process maps wait until it ends; the collapsing branch cannot run here"
	[ "$held" -ge 1 ] && [ "$collapsed" = 0 ] ||
		fail "without file-text collapse the held copy gave held $held, collapsed $collapsed"
	# make room (et_os_make_room) collapses anonymous memory: only calls
	# on file text count, and there is one, the probe, for the whole run
	[ "$(grep 'MADV_COLLAPSE' "$W/held.strace" | grep -c -- '= -1 EINVAL')" -le 1 ] ||
		fail "the tool tried MADV_COLLAPSE on file text more than once although the kernel refuses it: $(grep MADV_COLLAPSE "$W/held.strace" | head -3)"
fi
cmp -s "$W/held" "$W/src" || fail "the held copy's bytes read back differ from the source"
kill "$HP"; wait "$HP" 2>/dev/null
pass
