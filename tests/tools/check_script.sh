#!/bin/bash
# tool_check_script — linked with the script alone: check sees the layout and
# how much of it is padding; for 100 KiB of code, not worth it; for tt_hold's
# 6 MiB, it is.
. "$(dirname "$0")/lib.sh"

for ld in bfd lld; do
	if [ $ld = lld ] && ! have_lld; then note "no lld: the script with lld was not checked"; continue; fi
	cc_link "$W/small.$ld" "$TT_SRC/tt_smallprog.c" -fuse-ld=$ld -Wl,-T,"$SCRIPT"
	read -r off va fs ms al prev < <(seg_x "$W/small.$ld")
	(( va % H2 == 0 && off % H2 == 0 && fs % H2 == 0 && fs == ms && al >= H2 )) ||
		fail "$ld: the script did not lay the text out 2 MiB-aligned and padded: $(grep ' R E ' "$W/loads")"
	t "small.$ld" -- "$TOOL" check --json --pmd-size 2M "$W/small.$ld"
	expect_rc 0; expect_no_err; json "$OUT"
	jneed "$OUT.flat" '.advice[0]' | grep -qE '^not worth it: laid out for 2M pages \(linked with enormous.ld\), 10[0-9.]*K of code fills a 2M executable segment: 1.9M of padding, which takes about [0-9.]+M of the file and, when the text is mapped huge, 1.9M of memory$' ||
		fail "$ld: the advice does not say the layout is not worth it and what it costs"
	jneed "$OUT.flat" '.advice[1]' | grep -q '^relink without -Wl,-T,enormous.ld: ' || fail "$ld: the advice does not say to relink without the script"
	[ "$(jneed "$OUT.flat" .link_flags)" = null ] || fail "$ld: link flags for a file already linked with the script"
	[ "$(jneed "$OUT.flat" .layout_cost.padded)" = true ] || fail "$ld: the script's layout not seen"
	[ "$(jneed "$OUT.flat" .layout_cost.worth_it)" = false ] || fail "$ld: 100 KiB of code padded to 2 MiB called worth it"
	code=$(jneed "$OUT.flat" .layout_cost.code_bytes); pad=$(jneed "$OUT.flat" .layout_cost.padding_bytes)
	te=$(( $(sec_end "$W/small.$ld" .text) - va ))
	(( code + pad == fs )) || fail "$ld: code $code + padding $pad is not the segment's $fs bytes"
	(( code >= te && code <= te + 4096 )) || fail "$ld: $code bytes of code, but .text ends $te bytes into the segment"
	# What is called padding is filler: zeros, int3 or NOPs, nothing else.
	tail -c +$((off + code + 1)) "$W/small.$ld" | head -c "$pad" | od -An -v -tx1 | tr -s ' ' '\n' | sort -u |
		grep -vxE '|00|cc|66|2e|0f|1f|84|90' && fail "$ld: the padding holds bytes that are not filler"
	[ "$(jneed "$OUT.flat" .layout_cost.file_bytes)" = $(( off - $(up "$prev" "$PG") + pad )) ] ||
		fail "$ld: file_bytes is not the gap before the text and the padding"
	[ "$(jneed "$OUT.flat" .layout_cost.memory_bytes)" = $(( ms - $(up "$code" "$PG") )) ] ||
		fail "$ld: memory_bytes is not the segment less the code's pages"
	t "smalltext.$ld" -- "$TOOL" check --pmd-size 2M "$W/small.$ld"
	expect_out "^  layout +enormous.ld's: 10[0-9.]*K of code, 1.9M of padding to the end of its last window; .*: not worth it for so little code\$"
	expect_out '^  advice +not worth it: '

	cc_link "$W/hold.$ld" "$TT_SRC/tt_hold.c" -fuse-ld=$ld -Wl,-T,"$SCRIPT"
	read -r off va fs ms al prev < <(seg_x "$W/hold.$ld")
	t "hold.$ld" -- "$TOOL" check --json --pmd-size 2M "$W/hold.$ld"
	expect_rc 0; expect_no_err; json "$OUT"
	[ "$(jneed "$OUT.flat" .layout_cost.padded)" = true ] && [ "$(jneed "$OUT.flat" .layout_cost.worth_it)" = true ] ||
		fail "$ld: tt_hold with the script: not seen as the script's layout, worth it"
	code=$(jneed "$OUT.flat" .layout_cost.code_bytes)
	(( code >= 6291456 && code + $(jneed "$OUT.flat" .layout_cost.padding_bytes) == fs )) || fail "$ld: tt_hold: $code bytes of code"
	[ "$(jneed "$OUT.flat" .all_text_eligible)" = true ] || fail "$ld: tt_hold with the script: not all text eligible"
	jneed "$OUT.flat" '.advice[0]' | grep -q '^nothing to do: ' || fail "$ld: tt_hold with the script: not 'nothing to do'"
	jneed "$OUT.flat" '.advice[1]' | grep -qE '^laid out for 2M pages \(linked with enormous.ld\): [0-9.]+M of padding after 6.0M of code' ||
		fail "$ld: tt_hold with the script: the padding is not reported"
done

pass
