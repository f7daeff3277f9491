#!/bin/bash
# integration.script.lld — bigtext (PIE and not) and libbigtext.so linked with
# -T enormous.ld (lld) and -lenormoustext: >= 99% of each whole executable
# segment huge.
#
# Linked with -T enormous.ld (and -lenormoustext): the whole executable
# segment, head and tail, on huge pages — in the executable (PIE and
# not) and in the shared library, also linked with the script.
. "$(dirname "$0")/lib.sh"

[ -d "$IT_BIN/script-lld" ] || skip "the lld linker was not found when the build was configured (Debian: apt-get install lld)"
for exe in bigtext bigtext-nopie; do
	layout_fresh script-lld "$exe"
	baseline ENORMOUSTEXT=0 -- "./$exe" --expect-none --expect-loaded
	run lib -- "./$exe" --expect-loaded --expect-seg-huge-exe 99 --expect-seg-huge-lib 99
	expect_pass "linked with enormous.ld (lld, $exe): >= 99% of each whole executable segment huge"
	stderr_empty "ENORMOUSTEXT_VERBOSE unset"
done

pass
