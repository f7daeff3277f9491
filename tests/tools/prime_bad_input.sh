#!/bin/bash
# tool_prime_bad_input — `prime`'s bad input: not ELF, a truncated header, cut
# inside the text, missing, a directory, a FIFO (no hang), no file, unknown
# option; one bad file among good ones: the good ones done, status 1.
. "$(dirname "$0")/lib.sh"

printf 'not ELF at all\n' >"$W/text"
t text -- "$TOOL" prime "$W/text"
expect_bad 1 "a file that is not ELF" "$W/text: not an ELF file"
bigdso big.so
head -c 100 "$W/big.so" >"$W/trunc.so"
t trunc -- "$TOOL" prime "$W/trunc.so"
expect_bad 1 "a truncated ELF file" "$W/trunc.so: .*(truncated|not an ELF)"
head -c 3000000 "$W/big.so" >"$W/half.so"
t half -- "$TOOL" prime "$W/half.so"
expect_bad 1 "an ELF file cut in the middle of its text" "$W/half.so: .*truncated"
t missing -- "$TOOL" prime "$W/nope.so"
expect_bad 1 "a missing file" "$W/nope.so: No such file"
t dir -- "$TOOL" prime "$W"
expect_bad 1 "a directory" "$W: not a regular file"
mkfifo "$W/fifo"
t fifo -- timeout 10 "$TOOL" prime "$W/fifo"
expect_bad 1 "a FIFO (no hang)" "$W/fifo: not a regular file"
t none -- "$TOOL" prime
expect_rc 2
t opt -- "$TOOL" prime --bogus "$W/big.so"
expect_rc 2
# one bad file among good ones: the good ones are still done, exit 1
cp "$W/big.so" "$W/ok.so"
t mixed -- "$TOOL" prime "$W/ok.so" "$W/text"
expect_rc 1 "one bad file among good ones"
expect_out "^$W/ok.so: 3 of 3 window"

pass
