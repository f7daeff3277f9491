#!/bin/bash
# tool_check_small — 100 KiB of text linked plainly: the script is not worth
# it, and check says what it would cost (estimated from the program headers).
. "$(dirname "$0")/lib.sh"

P=$TT_SRC/tt_smallprog.c
cc_link "$W/plain" "$P"
read -r off va fs ms al prev < <(seg_x "$W/plain")
t small -- "$TOOL" check --json --pmd-size 2M "$W/plain"
expect_rc 0; expect_no_err; json "$OUT"
[ "$(jneed "$OUT.flat" .link_flags)" = null ] && [ "$(jneed "$OUT.flat" .linker_script)" = null ] ||
	fail "100 KiB of text: link flags or a script in the advice"
jneed "$OUT.flat" '.advice[0]' | grep -qE '^nothing worth doing: 10[0-9.]*K of text, under 1M \(half a 2M page\): -Wl,-T,enormous.ld would add about [0-9.]+M to the file and, when mapped huge, [0-9.]+M of memory' ||
	fail "100 KiB of text: the advice does not say the script is not worth it and what it costs"
jneed "$OUT.flat" '.advice[1]' | grep -q '^instead: leave it linked as it is' || fail "100 KiB of text: the advice does not say what to do instead"
[ "$(jneed "$OUT.flat" .layout_cost.padded)" = false ] || fail "a plain link taken for the script's layout"
[ "$(jneed "$OUT.flat" .layout_cost.worth_it)" = false ] || fail "100 KiB of text: the script worth it"
[ "$(jneed "$OUT.flat" .layout_cost.worth_it_from)" = $((H2 / 2)) ] || fail "the threshold is not half a 2 MiB page"
[ "$(jneed "$OUT.flat" .layout_cost.code_bytes)" = "$fs" ] || fail "code_bytes is not the segment's $fs bytes"
f=$(( (H2 - off % H2) % H2 + $(up "$fs" $H2) - fs )); m=$(( $(up "$fs" $H2) - $(up "$fs" "$PG") ))
[ "$(jneed "$OUT.flat" .layout_cost.file_bytes)" = "$f" ] || fail "file_bytes: $(jget "$OUT.flat" .layout_cost.file_bytes), expected $f"
[ "$(jneed "$OUT.flat" .layout_cost.memory_bytes)" = "$m" ] || fail "memory_bytes: $(jget "$OUT.flat" .layout_cost.memory_bytes), expected $m"
t smalltext -- "$TOOL" check --pmd-size 2M "$W/plain"
expect_rc 0
expect_out '^  script cost +-T enormous.ld would add about [0-9.]+M of file and, mapped huge, [0-9.]+M of memory, for 10[0-9.]*K of text: not worth it'
expect_out '^  advice +nothing worth doing: '
# The estimate against the real thing: with the script alone the file
# grows by about that much (GNU ld; lld too where it is).
for ld in bfd lld; do
	if [ $ld = lld ] && ! have_lld; then note "no lld: its growth was not checked"; continue; fi
	cc_link "$W/plain.$ld" "$P" -fuse-ld=$ld
	cc_link "$W/script.$ld" "$P" -fuse-ld=$ld -Wl,-T,"$SCRIPT"
	t "est.$ld" -- "$TOOL" check --json --pmd-size 2M "$W/plain.$ld"
	json "$OUT"
	f=$(jneed "$OUT.flat" .layout_cost.file_bytes)
	g=$(( $(stat -c %s "$W/script.$ld") - $(stat -c %s "$W/plain.$ld") ))
	echo "   $ld: estimated $f, grew by $g bytes"
	(( g > f - 65536 && g < f + 65536 )) || fail "$ld: the file grew by $g bytes with the script, check estimated $f"
done

pass
