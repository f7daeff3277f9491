#!/bin/bash
# tool_check_fuzz — tt_check_fuzz (check's analysis linked in) on
# libtt_small.so (3000 flips) and libtt_hot.so (1500): every prefix and every
# flipped copy rejected with one line or accepted, never a crash; and the
# driver itself fails on a file it must reject.
. "$(dirname "$0")/lib.sh"

t small -- "$TT_BIN/tt_check_fuzz" "$TT_SMALL" 3000 1
expect_rc 0 "every prefix and 3000 byte flips of tt_small.so"
t hot -- "$TT_BIN/tt_check_fuzz" "$TT_HOT" 1500 100000
expect_rc 0 "every prefix and 1500 byte flips of tt_hot.so"
# The fuzz driver can fail: a file it must reject whole is caught.
printf 'not ELF' >"$W/x"
t selftest -- "$TT_BIN/tt_check_fuzz" "$W/x" 0
expect_rc 1 "the fuzz driver on a file that is not ELF"

pass
