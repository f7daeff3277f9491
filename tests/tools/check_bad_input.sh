#!/bin/bash
# tool_check_bad_input — `check`'s bad input: missing, directory, empty, text,
# 3-byte magic, truncated identification or header, half, one byte short,
# program headers past the end, bad class, bad entry size, a section past the
# end, no section headers (valid) then cut inside a segment, a .o, /dev/null;
# text and JSON; a good and a bad file together; usage errors.
. "$(dirname "$0")/lib.sh"

bad_file() { # LABEL FILE REGEX
	t "$1" -- "$TOOL" check "$2"
	expect_bad 1 "check $1" "^enormoustext check: $(printf '%s' "$2" | sed 's/[][\.*^$()+?{}|]/\\&/g'): $3"
	expect_no_out "check $1"
	t "$1.json" -- "$TOOL" check --json "$2"
	expect_bad 1 "check --json $1" "$3"
	expect_no_out "check --json $1"
}
s=$TT_SMALL
size=$(stat -c %s "$s")
bad_file missing "$W/no-such-file" "No such file or directory"
bad_file directory "$W" "is a directory"
: >"$W/empty"
bad_file empty "$W/empty" "empty file"
echo "hello, not an ELF file" >"$W/text"
bad_file text "$W/text" "not an ELF file"
printf '\177EL' >"$W/magic3"
bad_file magic3 "$W/magic3" "not an ELF file"
head -c 20 "$s" >"$W/ident"
bad_file ident "$W/ident" "truncated ELF header"
head -c 40 "$s" >"$W/header"
bad_file header "$W/header" "truncated ELF header"
head -c $((size / 2)) "$s" >"$W/half"
bad_file half "$W/half" "truncated: "
head -c $((size - 1)) "$s" >"$W/minus1"
bad_file minus1 "$W/minus1" "truncated: "
cp "$s" "$W/phoff"   # e_phoff (offset 32) far past the end
printf '\377\377\377\000' | dd of="$W/phoff" bs=1 seek=32 conv=notrunc status=none
bad_file phoff "$W/phoff" "truncated: the program headers"
cp "$s" "$W/class"   # EI_CLASS 9
printf '\011' | dd of="$W/class" bs=1 seek=4 conv=notrunc status=none
bad_file class "$W/class" "corrupt ELF header: unknown class 9"
cp "$s" "$W/phent"   # e_phentsize 7
printf '\007\000' | dd of="$W/phent" bs=1 seek=54 conv=notrunc status=none
bad_file phent "$W/phent" "corrupt ELF header: program header entry size 7"
shoff=$(od -An -t u8 -j 40 -N 8 "$s" | tr -d ' ')
cp "$s" "$W/secoff"  # section 1's sh_offset far past the end
printf '\377\377\377\177' | dd of="$W/secoff" bs=1 seek=$((shoff + 64 + 24)) conv=notrunc status=none
bad_file secoff "$W/secoff" "truncated: section 1 \\(.*\\) extends past the end of the file"
cp "$s" "$W/bare"    # no section headers: valid, then cut inside a segment
printf '\000\000\000\000\000\000\000\000' | dd of="$W/bare" bs=1 seek=40 conv=notrunc status=none
printf '\000\000\000\000' | dd of="$W/bare" bs=1 seek=60 conv=notrunc status=none
t bare -- "$TOOL" check "$W/bare"
expect_rc 0 "a library without section headers"
head -c 4100 "$W/bare" >"$W/bare4100"
bad_file bare4100 "$W/bare4100" "truncated: segment [0-9]+ \\((LOAD|NOTE)"
bad_file object "$TT_OBJ" "a relocatable object file"
bad_file devnull /dev/null "not a regular file"
# The good ones are still checked; the status says one was bad.
t mixed -- "$TOOL" check "$s" "$W/empty"
expect_bad 1 "a good and a bad file" "$W/empty: empty file"
expect_out "^$s: shared library"
t mixedjson -- "$TOOL" check --json "$W/text" "$s"
expect_bad 1 "a bad and a good file (json)" "$W/text: not an ELF file"
json "$OUT"
[ "$(jneed "$OUT.flat" '[0].file')" = "$s" ] || fail "the good file is missing from the list"
# Usage errors.
t nofile -- "$TOOL" check
expect_bad 2 "no file" "no FILE given"
t pmd -- "$TOOL" check --pmd-size 3M "$s"
expect_bad 2 "a PMD size that is not a power of two" "--pmd-size 3M"
t pad -- "$TOOL" check --pad-threshold lots "$s"
expect_bad 2 "a bad pad threshold" "--pad-threshold lots"
t opt -- "$TOOL" check --frobnicate "$s"
expect_bad 2 "an unknown option" "unknown option '--frobnicate'"

pass
