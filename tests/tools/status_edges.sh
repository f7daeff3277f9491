#!/bin/bash
# tool_status_edges — `status --explain FILE` with a FILE that is no ELF
# program: one line, status's own, naming the file and why, before any
# advice (it printed seven lines of advice, then an error naming `check`);
# the backends `auto` would use are explained in the order they are named
# ("file, then thp, then collapse" was followed by "thp first"), in text
# and JSON, on this host and on test trees of each THP policy and defrag.
. "$(dirname "$0")/lib.sh"

printf 'root:x:0:0:root:/root:/bin/sh\n' >"$W/passwd"
t notelf -- "$TOOL" status --explain "$W/passwd"
expect_bad 1 "status --explain of a text file" "^enormoustext status: --explain $W/passwd: not an ELF file"
expect_no_out
grep -q "enormoustext check" "$ERR" && fail "the error names check"
t missing -- "$TOOL" status --explain "$W/none"
expect_bad 1 "status --explain of a missing file" "^enormoustext status: $W/none: No such file or directory\$"
expect_no_out

# a library of the program that check's analysis cannot parse (its section
# header table past the end of the file: the loader reads no section
# headers, so the program runs): one line, status's own, naming the library
# and who loads it; never check's prefix; the plan goes on without it
printf 'int lib_fn(void) { return 3; }\n' >"$W/badsh.c"
printf 'int lib_fn(void);\nint main(void) { return lib_fn() - 3; }\n' >"$W/usebad.c"
cc_link "$W/libbadsh.so" "$W/badsh.c" -shared -fPIC
cc_link "$W/usebad" "$W/usebad.c" -L"$W" -lbadsh -Wl,-rpath,"$W"
python3 - "$W/libbadsh.so" <<'PY' || fail "cannot corrupt e_shoff"
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
assert b[4] == 2, "not ELF64"
struct.pack_into("<Q", b, 0x28, len(b) + 0x100000)   # e_shoff past the end
open(p, "wb").write(b)
PY
"$W/usebad" || fail "BASELINE: the program does not run with the library's section headers gone"
t badlib -- "$TOOL" status --explain "$W/usebad"
expect_rc 0 "status --explain of a program with a library check cannot parse"
[ "$(wc -l <"$ERR")" = 1 ] || fail "not one line on stderr: $(cat "$ERR")"
grep -qE "^enormoustext status: $W/libbadsh.so \\(loaded by $W/usebad\\): truncated: the section header table .*: left out of the plan\$" "$ERR" ||
	fail "the library's error is not status's own line naming it: $(cat "$ERR")"
grep -q "enormoustext check" "$ERR" && fail "the library's error names check"
grep -q "$W/usebad" "$OUT" || fail "the plan does not go on with the program"

# a path with ": " in it: the reason is the analysis's own (a code and its
# words), not cut out of check's line ("PATH: why") at the first ": " after
# the prefix, which gave "a: b/passwd: b/passwd: not an ELF file"
mkdir -p "$W/a: b"
cp "$W/passwd" "$W/a: b/passwd"
t colon -- "$TOOL" status --explain "$W/a: b/passwd"
expect_bad 1 "status --explain of a text file under a name with ': '" \
	"^enormoustext status: --explain $W/a: b/passwd: not an ELF file \\(PROGRAM is an ELF program or library\\)\$"
# and a library the plan leaves out, named by its path (no SONAME: the
# program's DT_NEEDED is the path it was linked with; an rpath cannot hold
# a ':')
cc_link "$W/a: b/libbadsh.so" "$W/badsh.c" -shared -fPIC
cc_link "$W/usecolon" "$W/usebad.c" "$W/a: b/libbadsh.so"
cp "$W/libbadsh.so" "$W/a: b/libbadsh.so"   # the one with e_shoff past the end
t badcolon -- "$TOOL" status --explain "$W/usecolon"
expect_rc 0 "status --explain of a program with a library under a name with ': '"
grep -qE "^enormoustext status: $W/a: b/libbadsh.so \\(loaded by $W/usecolon\\): truncated: the section header table .*: left out of the plan\$" "$ERR" ||
	fail "the library's reason is not the analysis's own words: $(cat "$ERR")"

# "backend auto would use: A, then B, then C" / "  A first: ...; then B...;
# then C..." : the same names in the same order
order_ok() { # FILE-with-the-two-lines LABEL
	local chain reason
	chain=$(sed -n 's/^backend auto would use: //p' "$1" | sed 's/, then / /g')
	reason=$(grep -A1 '^backend auto would use: ' "$1" | tail -1 |
		grep -oE '(^ *[a-z]+ first|; then [a-z]+)' | sed 's/^ *//; s/ first$//; s/^; then //' | tr '\n' ' ' | sed 's/ $//')
	[ -n "$chain" ] || fail "$2: no 'backend auto would use' line"
	[ "$chain" = "$reason" ] || fail "$2: the order named ($chain) is not the order explained ($reason)"
}
t host -- "$TOOL" status --no-probe
expect_rc 0; order_ok "$OUT" "this host"
t hostjson -- "$TOOL" status --no-probe --json
expect_rc 0; json "$OUT"
jb=$(awk -F'\t' '$1 ~ /^\.auto\.backends\[[0-9]+\]$/ { printf "%s%s", n++ ? " " : "", $3 }' "$OUT.flat")
jr=$(jneed "$OUT.flat" .auto.reason | grep -oE '(^[a-z]+ first|; then [a-z]+)' | sed 's/ first$//; s/^; then //' | tr '\n' ' ' | sed 's/ $//')
[ "$jb" = "$jr" ] || fail "JSON: auto.backends ($jb) is not the order auto.reason explains ($jr)"

# test trees: every THP policy and defrag mode, with and without a pool
for en in always madvise never; do
	for df in always defer defer+madvise madvise never; do
		for pool in 0 4; do
			r=$W/t.$en.$df.$pool
			mkdir -p "$r/sys/kernel/mm/transparent_hugepage" "$r/sys/kernel/mm/hugepages/hugepages-2048kB"
			echo "$en" | sed "s/\\b$en\\b/[$en]/" >"$r/sys/kernel/mm/transparent_hugepage/enabled"
			echo "$df" | sed "s/^/[/; s/\$/]/" >"$r/sys/kernel/mm/transparent_hugepage/defrag"
			echo 2097152 >"$r/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
			for f in nr_hugepages free_hugepages; do
				echo "$pool" >"$r/sys/kernel/mm/hugepages/hugepages-2048kB/$f"
			done
			echo 0 >"$r/sys/kernel/mm/hugepages/hugepages-2048kB/resv_hugepages"
			echo 0 >"$r/sys/kernel/mm/hugepages/hugepages-2048kB/surplus_hugepages"
			t "tree.$en.$df.$pool" -- "$TOOL" status --root "$r"
			expect_rc 0; order_ok "$OUT" "enabled=$en defrag=$df pool=$pool"
			cat "$OUT" >>"$W/trees"
		done
	done
done
# the trees gave more than one order (the check above compared something)
[ "$(sed -n 's/^backend auto would use: //p' "$W/trees" | sort -u | wc -l)" -ge 3 ] ||
	fail "the test trees all gave the same order: $(sed -n 's/^backend auto would use: //p' "$W/trees" | sort -u)"
grep -q "then hugetlb: a copy in the hugetlb pool, 4 free" "$W/trees" || fail "a pool of 4 free pages is not in the explanation"

pass
