#!/bin/bash
# integration.pad.flags — the flag-only layout: the partial last window
# padded, the whole segment huge.
#
# Linked with only -z max-page-size=0x200000 -z separate-code (no
# script): the text's last window is partial and the rest of it is free
# address space, so the library pads it (ENORMOUSTEXT_PAD_THRESHOLD,
# default 4096) and the whole segment goes huge; with 0, it does not.
. "$(dirname "$0")/lib.sh"

layout_fresh flags-bfd bigtext
baseline ENORMOUSTEXT=0 -- ./bigtext --expect-none --expect-loaded
run pad ENORMOUSTEXT_REPORT="$D/pad.json" -- ./bigtext --expect-seg-huge-exe 99 --expect-seg-huge-lib 99
expect_pass "padded: >= 99% of each whole executable segment huge"
stderr_empty "ENORMOUSTEXT_VERBOSE unset"
for role in exe lib; do
	p=$(obj_num "$D/pad.json" "$role" padded_bytes)
	[ "$p" -gt 0 ] || fail "$role: padded_bytes = $p in the report, expected > 0"
	echo "-- $role: padded_bytes $p"
done
run nopad ENORMOUSTEXT_PAD_THRESHOLD=0 ENORMOUSTEXT_REPORT="$D/nopad.json" -- ./bigtext --expect-huge 95
expect_pass "ENORMOUSTEXT_PAD_THRESHOLD=0"
for role in exe lib; do
	p=$(obj_num "$D/nopad.json" "$role" padded_bytes)
	[ "$p" = 0 ] || fail "$role: padded_bytes = $p with ENORMOUSTEXT_PAD_THRESHOLD=0"
	pct=$(sed -n "s/^bigtext: $role: whole executable segment: .* = \([0-9.]*\)%/\1/p" "$OUT")
	awk -v p="$pct" 'BEGIN { exit !(p < 99) }' ||
		fail "$role: $pct% of the segment huge without padding: the tail was not partial, the test proves nothing"
done

pass
