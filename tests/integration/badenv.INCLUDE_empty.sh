#!/bin/bash
# integration.badenv.INCLUDE_empty — an empty ENORMOUSTEXT_INCLUDE or
# ENORMOUSTEXT_EXCLUDE counts as unset.
#
# Empty is not an error: the same as unset (include everything).
. "$(dirname "$0")/lib.sh"

for var in ENORMOUSTEXT_INCLUDE ENORMOUSTEXT_EXCLUDE; do
	std_baseline bigtext
	run "lib-$var" "$var=" LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 95 --kind "$AUTO_KIND" --expect-loaded
	expect_pass "an empty $var must count as unset"
	stderr_empty "an empty $var is no error"
done

pass
