#!/bin/bash
# tool_prime — `prime` (skips where this filesystem gives no huge page-cache
# folios): --check of a fresh copy (all small, unchanged by looking), prime
# makes every window huge and leaves the contents alone; an uncached file not
# read in by --check; a file mapped by a running process (its PID named) or
# open for writing (left alone); a window read back small read again with
# room made, small every time: no huge folios; tmpfs without huge pages (stays small); as
# nobody; lld's layout not congruent.
. "$(dirname "$0")/lib.sh"

# what prime is for: page-cache folios of 2 MiB on this filesystem
need_huge_folios
bigdso big.so
# a copy: its page cache is written in small pages
cp "$W/big.so" "$W/a.so"
t check -- "$TOOL" prime --check "$W/a.so"
expect_rc 0; expect_no_err
expect_out "^$W/a.so: 0 of 3 windows of 2M huge in the page cache\$"
expect_out "^  3 cached in small pages\$"
t check2 -- "$TOOL" prime --check "$W/a.so"
expect_out "^  3 cached in small pages\$" "--check changed the page cache"
t prime -- "$TOOL" prime "$W/a.so"
expect_rc 0; expect_no_err
expect_out "^$W/a.so: 3 of 3 windows of 2M huge in the page cache \(3 primed now, 0 already\)\$"
t after -- "$TOOL" prime --check --json "$W/a.so"
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" '.files[0].huge')" = 3 ] || fail "--check after prime: not 3 huge windows"
[ "$(jneed "$OUT.flat" '.files[0].huge_before')" = 3 ] || fail "--check after prime: huge_before is not 3"
# the file is unchanged
cmp -s "$W/big.so" "$W/a.so" || fail "prime changed the file's contents"
# not in the cache at all: --check says so and reads nothing in
cp "$W/big.so" "$W/b.so" && sync "$W/b.so" && dd if="$W/b.so" iflag=nocache count=0 status=none
t cold -- "$TOOL" prime --check "$W/b.so"
expect_out "^  3 not \(wholly\) cached"
t cold2 -- "$TOOL" prime --check "$W/b.so"
expect_out "^  3 not \(wholly\) cached" "--check read the file into the cache"
# held by a running process: reported with its PID, not broken
cp "$W/big.so" "$W/c.so"
"$TT_BIN/tt_maptouch" "$W/c.so" 30 >"$W/holder.out" &
holder=$!
wait_line "$W/holder.out" 'ready' 5
t held -- "$TOOL" prime "$W/c.so"
kill $holder; wait $holder 2>/dev/null
expect_rc 0
expect_out "^  3 held in small pages by running processes\$"
expect_out "^  mapped by PID .*\b$holder\b" "the holder's PID"
# open for writing by another process: left alone, and said
cp "$W/big.so" "$W/d.so"
(exec 3>>"$W/d.so"; sleep 30) &
writer=$!
sleep 0.3
t writing -- "$TOOL" prime "$W/d.so"
kill $writer; wait $writer 2>/dev/null
expect_rc 0
expect_out "^  3 left alone: the file is open for writing by a process\$"
# read back small, as when readahead finds no free huge page (tt_nohuge:
# the first 2 MADV_HUGEPAGE are no-ops: the look at the cached window, then
# its read-back): room is made (MADV_COLLAPSE) and the window read again
cp "$W/big.so" "$W/f.so"
t room -- env LD_PRELOAD="$TT_BIN/libtt_nohuge.so" TT_NOHUGE=2 TT_NOHUGE_LOG="$W/room.log" "$TOOL" prime "$W/f.so"
expect_rc 0; expect_no_err
expect_out "^$W/f.so: 3 of 3 windows of 2M huge in the page cache \(3 primed now, 0 already\)\$" \
	"a window read back small was not read again with room made"
[ "$(grep -c skipped "$W/room.log")" = 2 ] || fail "tt_nohuge skipped $(grep -c skipped "$W/room.log") calls, not 2"
# small every time, room made or not: the filesystem gives no huge folios,
# said; the file's next windows are read back once (2 calls each), not tried again
cp "$W/big.so" "$W/g.so"
t nofolios -- env LD_PRELOAD="$TT_BIN/libtt_nohuge.so" TT_NOHUGE=1000 TT_NOHUGE_LOG="$W/nof.log" "$TOOL" prime --json "$W/g.so"
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" '.files[0].no_huge_folios')" = 3 ] || fail "small with room made: not 3 no_huge_folios: $(cat "$OUT")"
[ "$(jneed "$OUT.flat" '.files[0].no_room')" = 0 ] || fail "small with room made: no_room is not 0"
[ "$(wc -l <"$W/nof.log")" = 7 ] ||
	fail "small with room made: $(wc -l <"$W/nof.log") MADV_HUGEPAGE calls, not 7 (3 for the first window, 2 for each next)"
# a filesystem without large folios: tmpfs with shmem_enabled never
shm=/dev/shm
if [ -d $shm ] && [ "$(stat -f -c %T $shm)" = tmpfs ] &&
   grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null; then
	sf=$(mktemp "$shm/tt_prime.XXXXXX")
	cp "$W/big.so" "$sf"
	t tmpfs -- "$TOOL" prime "$sf"
	rm -f "$sf"
	expect_rc 0
	expect_out "^  3 stayed small after reading back: this filesystem gives no huge folios\$"
else
	echo "   (no tmpfs with shmem_enabled=never here: the no-large-folios case is not checked)"
fi
# any user who can read the file (not root)
cp "$W/big.so" "$W/e.so" && chmod 644 "$W/e.so" && chmod 755 "$W"
t nobody -- "$TT_BIN/tt_asuser" nobody "$TOOL" prime "$W/e.so"
[ "$RC" -ne 77 ] || skip "tt_asuser cannot switch users here: $(cat "$ERR")"
expect_rc 0 "prime as nobody"
expect_out "^$W/e.so: 3 of 3 windows of 2M huge in the page cache \(3 primed now, 0 already\)\$"
# not congruent: lld's own layout of the same code
if "$TT_CC" -fuse-ld=lld -x c /dev/null -shared -o "$W/probe.so" 2>/dev/null; then
	bigdso nc.so -fuse-ld=lld
	t nc -- "$TOOL" prime "$W/nc.so"
	expect_rc 0; expect_out "^  not congruent:"
else
	echo "   (no lld: the not-congruent case is not checked)"
fi

pass
