#!/bin/bash
# integration.file.prime_option — ENORMOUSTEXT_PRIME=1: copied windows read
# back huge and swapped in zero-copy.
#
# ENORMOUSTEXT_PRIME=1: windows copied because the page cache held them
# small are dropped from the cache and read back huge, and the file
# slot replaces the copy; then every later process, with the library
# or not, gets them zero-copy.  Pages another process holds cannot be
# dropped: those windows stay copies, and nothing breaks.
. "$(dirname "$0")/lib.sh"

need_file_thp
layout_fresh script-bfd bigtext
baseline ENORMOUSTEXT=0 -- ./bigtext --expect-none --expect-loaded
run prime ENORMOUSTEXT_PRIME=1 ENORMOUSTEXT_REPORT="$D/p.json" -- ./bigtext --expect-huge 100 --kind file
expect_pass "ENORMOUSTEXT_PRIME=1: every window zero-copy in the end"
for role in exe lib; do
	k=$(obj_str "$D/p.json" "$role" window_kinds)
	[ "$k" = zzzzz ] || fail "$role: window_kinds '$k', expected zzzzz"
	echo "-- $role: windows $k"
done
run after ENORMOUSTEXT=0 -- ./bigtext --expect-huge 100 --kind file
expect_pass "after one primed run, a run without the library gets the text huge from the page cache"
# held: a process without the library keeps the (small) pages mapped
layout_fresh script-bfd bigtext
(cd "$D" && exec env ENORMOUSTEXT=0 ./bigtext --hold 20 >"$D/holder.out" 2>&1) &
holder=$!
EXIT_HOOKS+=("kill $holder 2>/dev/null")
wait_line "$D/holder.out" 'holding' 10
grep -q holding "$D/holder.out" || fail "the holding process did not start"
run held ENORMOUSTEXT_PRIME=1 ENORMOUSTEXT_REPORT="$D/h.json" -- ./bigtext --expect-huge 100 --kind anon
kill $holder 2>/dev/null; wait $holder 2>/dev/null
[ "$RC" -eq 0 ] || fail "ENORMOUSTEXT_PRIME=1 while another process holds the pages: $(bigtext_says)"
k=$(obj_str "$D/h.json" lib window_kinds)
[ "$k" = ccccc ] || fail "lib: window_kinds '$k' while the pages are held, expected ccccc (copies)"
echo "-- held by another process: lib windows $k"

pass
