#!/bin/bash
# tool_check_big — tt_hold (6 MiB of text, 4 KiB-aligned): the script alone
# for GNU ld and lld, the flags for gold and mold, and the script as check
# prints it is the tree's.
. "$(dirname "$0")/lib.sh"

read -r off va fs ms al prev < <(seg_x "$HOLD")
t hold -- "$TOOL" check --json --pmd-size 2M "$HOLD"
expect_rc 0; expect_no_err; json "$OUT"
[ "$(jneed "$OUT.flat" .link_flags)" = "-Wl,-T,enormous.ld" ] || fail "tt_hold: link_flags is not the script alone"
[ "$(jneed "$OUT.flat" .link_flags_noscript)" = "-Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code" ] ||
	fail "tt_hold: link_flags_noscript is not the two -z flags"
[ "$(jneed "$OUT.flat" .layout_cost.padded)" = false ] && [ "$(jneed "$OUT.flat" .layout_cost.worth_it)" = true ] ||
	fail "tt_hold: 6 MiB of text: the script's layout seen, or not worth it"
[ "$(jneed "$OUT.flat" .layout_cost.file_bytes)" = $(( (H2 - off % H2) % H2 + $(up "$fs" $H2) - fs )) ] ||
	fail "tt_hold: file_bytes is not what the script adds"
grep -q $'^\\.advice\\[[0-9]*\\]\tstring\t.*link with GNU ld or lld: -Wl,-T,enormous.ld$' "$OUT.flat" ||
	fail "tt_hold: the advice does not say GNU ld or lld take the script alone"
grep -q $'^\\.advice\\[[0-9]*\\]\tstring\twith gold or mold (which cannot take the script) or a linker that ignores its alignment: -Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code instead .*libenormoustext pads its tail at run time' "$OUT.flat" ||
	fail "tt_hold: the advice does not give the -z flags for gold and mold"
# linker_script is linker-scripts/enormous.ld without its comments.
if command -v perl >/dev/null; then
	jneed "$OUT.flat" .linker_script | perl -0777 -pe 's/\s+//g' >"$W/printed"
	perl -0777 -pe 's{/\*.*?\*/}{}gs; s/\s+//g' "$SCRIPT" >"$W/tree"
	cmp -s "$W/printed" "$W/tree" ||
		fail "the script check prints (SCRIPT_FMT in tools/enormoustext/check_report.c) is not linker-scripts/enormous.ld: $(cat "$W/printed") against $(cat "$W/tree")"
else
	note "no perl: the printed script was not compared with linker-scripts/enormous.ld"
fi
t holdtext -- "$TOOL" check --pmd-size 2M "$HOLD"
expect_out '^  script cost +-T enormous.ld would add about [0-9.]+M of file and, mapped huge, [0-9.]+M of memory, for 6.0M of text$'
# Linked with the flags (GNU ld): aligned, the tail left to the library.
cc_link "$W/flags" "$TT_SRC/tt_hold.c" -Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code
t flags -- "$TOOL" check --json --pmd-size 2M "$W/flags"
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" .link_flags)" = "-Wl,-T,enormous.ld" ] && [ "$(jneed "$OUT.flat" .link_flags_noscript)" = null ] ||
	fail "linked with the flags: the advice is not the script alone (and no more flags)"
grep -q $'^\\.advice\\[[0-9]*\\]\tstring\twithout the script (gold, mold): libenormoustext pads the tail at run time (here the rest of its window is free)$' "$OUT.flat" ||
	fail "linked with the flags: the advice does not say the library pads the tail at run time"

pass
