#!/bin/bash
# integration.file.primed — after enormoustext prime,
# ENORMOUSTEXT_BACKEND=file: every window huge from the file, zero-copy.
#
# The zero-copy file backend: once the page cache holds the text as huge
# folios (enormoustext prime), windows are huge straight from the file —
# FilePmdMapped, nothing copied, reported as zero-copy.
. "$(dirname "$0")/lib.sh"

need_file_thp
layout_fresh script-bfd bigtext
baseline ENORMOUSTEXT=0 -- ./bigtext --expect-none --expect-loaded
run prime -- "$IT_TOOL" prime ./bigtext ./libbigtext.so
[ "$RC" -eq 0 ] || fail "enormoustext prime exited $RC"
grep -q '^./libbigtext.so: 5 of 5 window' "$OUT" || fail "prime did not make all 5 windows of libbigtext.so huge"
run lib ENORMOUSTEXT_BACKEND=file ENORMOUSTEXT_VERBOSE=2 ENORMOUSTEXT_REPORT="$D/r.json" -- ./bigtext \
	--kind file --expect-huge 100 --expect-seg-huge-exe 99 --expect-seg-huge-lib 99
[ "$RC" -eq 0 ] || fail "ENORMOUSTEXT_BACKEND=file after prime: $(bigtext_says)"
for role in exe lib; do
	z=$(obj_num "$D/r.json" "$role" zero_copy_bytes)
	h=$(obj_num "$D/r.json" "$role" huge_bytes)
	[ "$z" -ge "$h" ] && [ "$h" -gt 0 ] || fail "$role: zero_copy_bytes $z, huge_bytes $h: expected all of it zero-copy"
	k=$(obj_str "$D/r.json" "$role" window_kinds)
	[ "$k" = zzzzz ] || fail "$role: window_kinds '$k', expected zzzzz"
	echo "-- $role: $z bytes zero-copy, windows $k"
done
grep -q 'libbigtext.so: .* MiB zero-copy' "$ERR" || fail "no per-object zero-copy figure at ENORMOUSTEXT_VERBOSE=2"

pass
