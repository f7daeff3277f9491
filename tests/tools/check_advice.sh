#!/bin/bash
# tool_check_advice — apply the advice `check` gives for tt_hold, exactly as
# printed, and check the result: all of its text eligible, and all of it huge
# once the library has run.
. "$(dirname "$0")/lib.sh"

t advice -- "$TOOL" check --json "$HOLD"
json "$OUT"
flags=$(jneed "$OUT.flat" .link_flags); script=$(jneed "$OUT.flat" .linker_script)
[ "$flags" != null ] && [ "$script" != null ] || fail "no link flags or script in the advice"
printf '%s\n' "$script" >"$W/enormous.ld"
# shellcheck disable=SC2086 # the flags and CFLAGS are lists of words
(cd "$W" && "$TT_CC" ${TT_CFLAGS:-} -O1 -o advised "$TT_SRC/tt_hold.c" $flags) >"$W/cc.out" 2>&1 ||
	fail "linking tt_hold with the advice ($flags) failed: $(head -5 "$W/cc.out")"
t after -- "$TOOL" check --json "$W/advised"
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" .all_text_eligible)" = true ] || fail "after the advice, not all text is eligible"
jneed "$OUT.flat" '.advice[0]' | grep -q '^nothing to do' || fail "after the advice, more advice: $(jget "$OUT.flat" '.advice[0]')"
[ "$(jneed "$OUT.flat" .link_flags)" = null ] || fail "after the advice, still link flags"
tb=$(jneed "$OUT.flat" .text_file_bytes)
[ $((tb % H)) = 0 ] || fail "after the advice, the text ($tb bytes) is not whole huge pages"
mkdir "$W/copy" && cp "$W/advised" "$W/copy/advised"
start_hold adv "$TOOL" run -- "$W/copy/advised"
t stat -- "$TOOL" stat --json "$HPID"
json "$OUT"
i=$(jindex "$OUT.flat" .objects path "$W/copy/advised")
text=$(jneed "$OUT.flat" ".objects[$i].text_bytes"); huge=$(jneed "$OUT.flat" ".objects[$i].huge_bytes")
[ "$text" = "$tb" ] || fail "the advised program maps $text bytes of text, its segment has $tb"
[ "$huge" = "$text" ] || fail "with the advice and the library, $huge of $text bytes of text are huge, expected all"
stop_hold adv "$HPID"

pass
