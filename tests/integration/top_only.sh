#!/bin/bash
# integration.top_only — ENORMOUSTEXT_TOP_ONLY=1 (`enormoustext run
# --top-only`): the library works in the process it was preloaded into,
# and the programs that process starts get an LD_PRELOAD without it (other
# entries kept, in order): a big-text child stays small.
. "$(dirname "$0")/lib.sh"

std_baseline bigtext
# the top process is a shell: it has the library mapped; its child does not
script='grep -c libenormoustext /proc/$$/maps; echo "child LD_PRELOAD=[$LD_PRELOAD]"; ./bigtext --expect-none --expect-not-loaded'
run top ENORMOUSTEXT_TOP_ONLY=1 LD_PRELOAD="$PRE" -- sh -c "$script"
[ "$RC" -eq 0 ] || fail "the child of a --top-only process must run without the library: $(bigtext_says)"
same_results
[ "$(head -1 "$OUT")" -ge 1 ] || fail "the top process itself must have the library mapped"
grep -qx 'child LD_PRELOAD=\[\]' "$OUT" || fail "the child's LD_PRELOAD must be empty: $(grep child "$OUT")"

# other entries stay, in order, whatever the spelling of ours
other=$(ldd /bin/sh | awk '$1 ~ /^libc\.so/ { print $3 }')
[ -n "$other" ] || fail "cannot find the libc of /bin/sh"
ln -s "$PRE" "$D/alias.so"
run mixed ENORMOUSTEXT_TOP_ONLY=1 LD_PRELOAD="$other $D/alias.so:$PRE" -- sh -c 'echo "[$LD_PRELOAD]"'
grep -qx "\[$other\]" "$OUT" || fail "expected the child to keep [$other], got $(cat "$OUT")"

# without the option, the child is preloaded and moves its text
fresh "$IT_BIN" bigtext
run nested LD_PRELOAD="$PRE" -- sh -c "./bigtext --expect-huge 95 --kind $AUTO_KIND --expect-loaded"
expect_pass "without ENORMOUSTEXT_TOP_ONLY the child is preloaded"

# the command's flag
if [ -n "${IT_TOOL:-}" ] && [ -x "$IT_TOOL" ]; then
	fresh "$IT_BIN" bigtext
	run tool -- "$IT_TOOL" run --lib "$PRE" --top-only -- sh -c "$script"
	[ "$RC" -eq 0 ] || fail "enormoustext run --top-only: the child must run without the library: $(bigtext_says)"
	grep -qx 'child LD_PRELOAD=\[\]' "$OUT" || fail "run --top-only: child LD_PRELOAD: $(grep child "$OUT")"
fi
pass
