#!/bin/bash
# tool_check_files — `check` on ELF files: build-id exact, shared library or
# PIE, .text.hot found (and not where absent), text relocations found and
# first in the advice, tt_hold's eligible range 4..6 MiB (4 MiB when 2
# MiB-aligned) and its link flags the script alone, several files give a list,
# --pmd-size 1G.
. "$(dirname "$0")/lib.sh"

t small -- "$TOOL" check --json "$TT_SMALL"
expect_rc 0; expect_no_err; json "$OUT"
[ "$(jneed "$OUT.flat" .build_id)" = "$TT_BUILD_ID" ] || fail "build-id $(jget "$OUT.flat" .build_id), linked with $TT_BUILD_ID"
[ "$(jneed "$OUT.flat" .type)" = shared-library ] || fail "tt_small.so is not a shared library"
[ "$(jneed "$OUT.flat" .text_hot)" = false ] || fail "tt_small.so has no .text.hot"
[ "$(jneed "$OUT.flat" .textrel)" = false ] || fail "tt_small.so has no text relocations"
[ "$(jneed "$OUT.flat" .file)" = "$TT_SMALL" ] || fail ".file is not the path given"
[ "$(jneed "$OUT.flat" '.eligible_bytes.glibc.max')" = 0 ] || fail "tt_small.so has no whole window"
jneed "$OUT.flat" '.advice[0]' | grep -q '^nothing worth doing: [0-9.]*[BKM] of text, under ' ||
	fail "tt_small.so (a few hundred bytes of text): not 'nothing worth doing'"
[ "$(jneed "$OUT.flat" .layout_cost.worth_it)" = false ] || fail "tt_small.so: the script's layout worth it for a few hundred bytes of text"
t smalltext -- "$TOOL" check "$TT_SMALL"
expect_rc 0
expect_out "^  build-id +$TT_BUILD_ID\$"
expect_out '^  text relocations no$'

t hot -- "$TOOL" check --json "$TT_HOT"
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" .text_hot)" = true ] || fail "tt_hot.so: .text.hot not found"
[ "$(jneed "$OUT.flat" .text_hot_bytes)" -gt 0 ] || fail "tt_hot.so: .text.hot of 0 bytes"

if [ -n "${TT_TEXTREL:-}" ]; then
	t textrel -- "$TOOL" check --json "$TT_TEXTREL"
	expect_rc 0; json "$OUT"
	[ "$(jneed "$OUT.flat" .textrel)" = true ] || fail "tt_textrel.so: text relocations not found"
	jneed "$OUT.flat" '.advice[0]' | grep -q 'text relocations' || fail "tt_textrel.so: the advice does not start with the text relocations"
else
	note "no library with text relocations on this architecture: that check was not made"
fi

# tt_hold: a PIE with 6 MiB + a little of text, 4 KiB-aligned: 2 or 3
# whole windows depending on where it is loaded, 3 when aligned.
t hold -- "$TOOL" check --json "$HOLD"
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" .type)" = pie ] || fail "tt_hold is not a PIE"
[ "$(jneed "$OUT.flat" .interpreter)" != null ] || fail "tt_hold has no interpreter"
min=$(jneed "$OUT.flat" '.eligible_bytes.glibc.min'); max=$(jneed "$OUT.flat" '.eligible_bytes.glibc.max')
al=$(jneed "$OUT.flat" '.eligible_bytes.aligned')
if [ "$H" = 2097152 ]; then
	# Linked at 0x1000: loaded 2 MiB-aligned, the first 2 MiB - 4 KiB are head.
	[ "$min" = $((2 * H)) ] && [ "$max" = $((3 * H)) ] && [ "$al" = $((2 * H)) ] ||
		fail "tt_hold: eligible $min..$max (aligned $al), expected 4 MiB..6 MiB (4 MiB)"
else
	[ "$min" -le "$max" ] || fail "tt_hold: eligible min > max"
	note "PMD size $H: the exact 2 MiB figures were not checked"
fi
[ "$(jneed "$OUT.flat" '.eligible_bytes.glibc.exact')" = false ] || fail "tt_hold: 4 KiB-aligned, yet exact"
[ "$(jneed "$OUT.flat" .link_flags)" = "-Wl,-T,enormous.ld" ] || fail "tt_hold: the link flags are not the script alone"
jneed "$OUT.flat" .link_flags_noscript | grep -q 'max-page-size=0x' || fail "tt_hold: no max-page-size in the flags without the script"
t holdtext -- "$TOOL" check "$HOLD"
expect_out '^  eligible \(glibc\) 4M to 6M of 6.0M, depending on the load address'
expect_out '^  advice +to put all 6.0M of the text on huge pages, link with GNU ld or lld: -Wl,-T,enormous.ld$'

# Several files: a list, in order.
t several -- "$TOOL" check --json "$TT_SMALL" "$TT_HOT" "$HOLD"
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" '[0].file')" = "$TT_SMALL" ] && [ "$(jneed "$OUT.flat" '[2].file')" = "$HOLD" ] ||
	fail "three files: not a list of the three in order"
t severaltext -- "$TOOL" check "$TT_SMALL" "$TT_HOT"
[ "$(grep -c '^[^ ].*: \(shared library\|PIE executable\|executable\), ' "$OUT")" = 2 ] || fail "two files: not two reports"
# --pmd-size: the same file planned for 1 GiB pages has no window.
t pmd -- "$TOOL" check --json --pmd-size 1G "$HOLD"
json "$OUT"
[ "$(jneed "$OUT.flat" .pmd_size)" = $((1 << 30)) ] && [ "$(jneed "$OUT.flat" '.eligible_bytes.glibc.max')" = 0 ] ||
	fail "--pmd-size 1G: not planned with 1 GiB"

pass
