#!/bin/bash
# integration.verbose.helpers — ENORMOUSTEXT_VERBOSE=1 in a preloaded tree:
# the helpers with no whole window of text (sh, env, true) say nothing; the
# one program that moves text says its one summary line.  At 2 each
# process speaks.
. "$(dirname "$0")/lib.sh"

std_baseline bigtext
run tree ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" -- \
	sh -c 'env true; true; ./bigtext --expect-huge 95 --kind "$1" --expect-loaded' sh "$AUTO_KIND"
expect_pass "a preloaded tree at ENORMOUSTEXT_VERBOSE=1"
stderr_one_line "^enormoustext: [0-9]+ of [0-9]+ objects?, .* MiB of .* MiB text on $H_MIB MiB pages" \
	"only bigtext moves text, so only bigtext speaks"
run tree2 ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE" -- sh -c 'env true'
[ "$RC" -eq 0 ] || fail "sh -c 'env true' preloaded exited $RC"
n=$(grep -cE '^enormoustext: [0-9]+ of [0-9]+ objects?, ' "$ERR")
[ "$n" -eq 3 ] || fail "ENORMOUSTEXT_VERBOSE=2: sh, env and true each print a summary; got $n"
pass
