#!/bin/bash
# integration.pad.threshold — ENORMOUSTEXT_PAD_THRESHOLD: padded above the
# threshold, not at it, never over another mapping.
#
# The rule on the bytes of text in the partial window: padded when more
# than the threshold, not when equal; never when the rest of the window
# is not free (the default layout, where the next segment shares it).
. "$(dirname "$0")/lib.sh"

layout_fresh flags-bfd bigtext
read -r va msz < <(readelf -lW "$D/bigtext" | awk '$1 == "LOAD" && / R E / { print $3, $6; exit }')
tail=$(( (va + msz) % (H_MIB * 1048576) ))
[ -n "$tail" ] && [ "$tail" -gt 1 ] || fail "cannot read the text's tail from readelf ('$tail')"
echo "-- the executable's text has $tail bytes in its last window"
run over ENORMOUSTEXT_VERBOSE=2 ENORMOUSTEXT_PAD_THRESHOLD=$((tail - 1)) ENORMOUSTEXT_REPORT="$D/over.json" -- ./bigtext
[ "$RC" -eq 0 ] || fail "threshold $((tail - 1)): bigtext exited $RC"
p=$(obj_num "$D/over.json" exe padded_bytes)
[ "$p" -gt 0 ] || fail "threshold $((tail - 1)) < $tail bytes of tail: not padded (padded_bytes $p)"
run equal ENORMOUSTEXT_PAD_THRESHOLD=$tail ENORMOUSTEXT_REPORT="$D/equal.json" -- ./bigtext
[ "$RC" -eq 0 ] || fail "threshold $tail: bigtext exited $RC"
p=$(obj_num "$D/equal.json" exe padded_bytes)
[ "$p" = 0 ] || fail "threshold $tail = the tail: padded anyway (padded_bytes $p)"
# not free: the default layout (4 KiB max-page-size) puts the next
# segment in the text's last window
fresh "$IT_BIN" bigtext
run notfree ENORMOUSTEXT_PAD_THRESHOLD=1 ENORMOUSTEXT_REPORT="$D/notfree.json" LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95
[ "$RC" -eq 0 ] || fail "default layout: bigtext exited $RC: $(bigtext_says)"
for role in exe lib; do
	p=$(obj_num "$D/notfree.json" "$role" padded_bytes)
	[ "$p" = 0 ] || fail "$role: padded over another mapping (padded_bytes $p)"
done
! grep -q 'the rest of the partial window is not free' "$D/notfree.json" ||
	fail "a window that cannot be padded must not count as a window left small: $(grep -o '"reasons": \[[^]]*\]' "$D/notfree.json" | head -2)"

pass
