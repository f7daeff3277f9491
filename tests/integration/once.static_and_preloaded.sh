#!/bin/bash
# integration.once.static_and_preloaded — bigtext-static (linked with
# libenormoustext.a) and the library preloaded at once: the work is done once.
#
# Linked and preloaded at once, the work is done once: one summary line
# at ENORMOUSTEXT_VERBOSE=1, and the API gives consistent figures.  With
# the shared library twice, the loader keeps one copy (same soname); with
# libenormoustext.a inside the program there are two copies, and the one
# in the program must leave the work (and its API) to the preloaded one.
. "$(dirname "$0")/lib.sh"

fresh "$IT_BIN" bigtext bigtext-static
baseline -- ./bigtext --expect-none --expect-not-loaded
run lib ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" -- ./bigtext-static --expect-huge 95 --kind "$AUTO_KIND" --check-api
expect_pass "linked and preloaded at once"
stderr_one_line '^enormoustext: [0-9]+ of [0-9]+ objects?, .* MiB of .* MiB text on [0-9]+ [MK]iB pages' \
	"linked and preloaded at once, the library must run once (one summary line)"

pass
