#!/bin/bash
# integration.file.not_congruent — text not congruent with its file offset:
# file says so, auto copies it.
#
# lld's default layout puts the text at an address that differs from
# its file offset modulo 2 MiB: the kernel can never map it from the
# file with PMD entries, and the file backend says so.
. "$(dirname "$0")/lib.sh"

[ -d "$IT_BIN/plain-lld" ] || skip "the lld linker was not found when the build was configured (Debian: apt-get install lld)"
layout_fresh plain-lld bigtext
run fileonly ENORMOUSTEXT_BACKEND=file ENORMOUSTEXT_VERBOSE=2 -- ./bigtext --expect-none-lib
[ "$RC" -eq 0 ] || fail "ENORMOUSTEXT_BACKEND=file on non-congruent text: $(bigtext_says)"
grep -q 'libbigtext.so: .*address and file offset differ modulo the huge page size' "$ERR" ||
	fail "no 'differ modulo' reason for libbigtext.so at ENORMOUSTEXT_VERBOSE=2"
run auto -- ./bigtext --expect-huge-lib 100 --kind anon
[ "$RC" -eq 0 ] || fail "auto on non-congruent text: $(bigtext_says)"

pass
