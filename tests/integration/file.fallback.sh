#!/bin/bash
# integration.file.fallback — a small page cache: file alone leaves the text
# small and says why, auto copies it.
#
# Where the page cache holds the text in small pages (fresh copies),
# `file` cannot help: alone it leaves the text small and says why;
# `auto` falls back to anonymous copies, window by window.
. "$(dirname "$0")/lib.sh"

layout_fresh script-bfd bigtext
baseline ENORMOUSTEXT=0 -- ./bigtext --expect-none --expect-loaded
run fileonly ENORMOUSTEXT_BACKEND=file ENORMOUSTEXT_VERBOSE=2 -- ./bigtext --expect-none
[ "$RC" -eq 0 ] || fail "ENORMOUSTEXT_BACKEND=file with a small page cache: something went huge: $(bigtext_says)"
grep -q 'libbigtext.so: .*page cache holds this part of the file in small pages' "$ERR" ||
	fail "no reason 'page cache holds ... small pages' for libbigtext.so at ENORMOUSTEXT_VERBOSE=2"
run auto ENORMOUSTEXT_REPORT="$D/r.json" -- ./bigtext --kind anon --expect-huge 100 --expect-seg-huge-exe 99 --expect-seg-huge-lib 99
[ "$RC" -eq 0 ] || fail "auto after the file backend failed: $(bigtext_says)"
for role in exe lib; do
	z=$(obj_num "$D/r.json" "$role" zero_copy_bytes)
	[ "$z" = 0 ] || fail "$role: zero_copy_bytes $z although the cache was small"
	k=$(obj_str "$D/r.json" "$role" window_kinds)
	[ "$k" = ccccc ] || fail "$role: window_kinds '$k', expected ccccc (copied)"
done

pass
