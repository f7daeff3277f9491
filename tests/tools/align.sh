#!/bin/bash
# tool_align — `enormoustext align`: a PIE executable opted in to huge text
# from the page cache, and put back byte for byte.
#   - refused, each with one line naming the file and why, the file's bytes
#     unchanged: a fixed-address (non-PIE) program, a shared library, a
#     file that is no ELF, a missing one, a program that runs (ETXTBSY);
#     usage errors: no FILE, --list with a FILE, --undo with --list;
#   - --dry-run says what would change and changes nothing;
#   - align: only the executable PT_LOAD's p_align changes (readelf), its
#     record is kept in --state DIR/aligned; again: "aligned already";
#   - the program, run three times, is loaded at a 2 MiB-aligned base
#     each time, and prints what it printed before;
#   - primed, a run maps its text huge from the page cache (FilePmdMapped:
#     every whole 2 MiB window of its 8 MiB), where the same program not
#     aligned maps none (its base is random to 4 KiB: checked only where it
#     fell off 2 MiB, 511 times in 512);
#   - --undo: the file's checksum is the one before align; the record is
#     gone; --undo again is refused; a file changed after align is not
#     touched by --undo (its record kept) until it is as align left it.
. "$(dirname "$0")/lib.sh"
need_huge_folios

S=$W/state
cat >"$W/pie.c" <<'EOF'
#include <stdio.h>
#include <unistd.h>
__asm__(".text\n.p2align 12\n.globl big_text\n.type big_text, @function\nbig_text:\n"
        ".skip 8388608, 0xc3\n.size big_text, 8388608\n");
extern void big_text(void);
/* every page of its text read (so that each is mapped), then "ready PID";
 * with an argument, waits for a signal */
int main(int argc, char **argv)
{
	volatile const unsigned char *p = (const unsigned char *)big_text;
	unsigned s = 0;
	for (long i = 0; i < 8388608; i += 4096)
		s += p[i];
	big_text();
	printf("ready %d %u\n", (int)getpid(), s);
	fflush(stdout);
	if (argc > 1)
		pause();
	(void)argv;
	return 0;
}
EOF
"$TT_CC" -O1 -fPIE -pie -o "$W/pie" "$W/pie.c" 2>"$W/cc.log" || fail "cannot build the PIE program: $(head -3 "$W/cc.log")"
"$TT_CC" -O1 -fno-pie -no-pie -o "$W/nopie" "$W/pie.c" 2>"$W/cc.log" || fail "cannot build the non-PIE program: $(head -3 "$W/cc.log")"
echo 'int f(void) { return 1; }' | "$TT_CC" -shared -fPIC -o "$W/lib.so" -x c - || fail "cannot build a library"
cp "$W/pie" "$W/plain" && cp "$W/pie" "$W/p" || fail "cannot copy"
P=$W/p
sum() { sha256sum <"$1"; }
sum0=$(sum "$P")
pt_align() {  # FILE: the p_align of its R E PT_LOAD (readelf)
	readelf -lW "$1" | awk '$1 == "LOAD" && $(NF - 1) ~ /E/ { print $NF }'
}
[ "$(pt_align "$P")" = 0x1000 ] || fail "the test program's text is not 4 KiB-aligned to begin with: $(pt_align "$P")"

# --- refused
for f in nopie lib.so pie.c missing; do
	cp "$W/$f" "$W/$f.before" 2>/dev/null
	t "bad_$f" -- "$TOOL" align --state "$S" "$W/$f"
	case $f in
	nopie) expect_bad 1 "a non-PIE program" "$W/nopie: not a PIE executable \\(a fixed-address program\\)" ;;
	lib.so) expect_bad 1 "a library" "$W/lib.so: not a PIE executable \\(no interpreter" ;;
	pie.c) expect_bad 1 "a C file" "$W/pie.c: not an ELF file" ;;
	missing) expect_bad 1 "a missing file" "$W/missing: No such file" ;;
	esac
	[ "$f" = missing ] || cmp -s "$W/$f" "$W/$f.before" || fail "align changed $f though it refused it"
done
t none -- "$TOOL" align --state "$S"
expect_bad 2 "no FILE" "give the FILE to align"
t listfile -- "$TOOL" align --list "$P"
expect_bad 2 "--list with a FILE" "--list takes no FILE"
t both -- "$TOOL" align --undo --list
expect_rc 2 "--undo with --list"
"$P" wait >"$W/run.out" &
rp=$!
wait_until 5 grep -q ready "$W/run.out" || fail "the program did not start"
t running -- "$TOOL" align --state "$S" "$P"
expect_bad 1 "a program that runs" "$P: Text file busy \\(it runs"
kill "$rp"; wait "$rp" 2>/dev/null
[ "$(sum "$P")" = "$sum0" ] || fail "a refused align changed the file"
[ ! -e "$S/aligned" ] || [ -z "$(ls -A "$S/aligned")" ] || fail "a refused align left a record: $(ls "$S/aligned")"

# --- dry run, then align
t dry -- "$TOOL" align --dry-run --state "$S" "$P"
expect_rc 0
expect_out "p_align 0x1000 -> 0x200000 \\(dry run: not changed\\)"
[ "$(sum "$P")" = "$sum0" ] || fail "--dry-run changed the file"
t align -- "$TOOL" align --state "$S" "$P"
expect_rc 0
expect_out "$P: aligned \\(8.0 MiB of text\\)"
[ "$(pt_align "$P")" = 0x200000 ] || fail "the text's p_align is $(pt_align "$P") after align"
# only that field: the headers of every other segment as they were
diff <(readelf -lW "$W/pie" | grep -v ' R E ') <(readelf -lW "$P" | grep -v ' R E ') >"$W/hdr.diff" ||
	fail "align changed more than the text's p_align: $(head -5 "$W/hdr.diff")"
cmp -l "$W/pie" "$P" | wc -l >"$W/nbytes"
[ "$(cat "$W/nbytes")" -le 8 ] || fail "align changed $(cat "$W/nbytes") bytes (p_align is 8)"
[ "$(ls "$S/aligned" | wc -l)" = 1 ] || fail "no record in $S/aligned"
t again -- "$TOOL" align --state "$S" "$P"
expect_rc 0
expect_out "aligned already"
t list -- "$TOOL" align --list --state "$S"
expect_out "^$P\$"

# --- it runs the same, at a 2 MiB-aligned base
base_of() { awk -v f="$2" '$6 == f { split($1, a, "-"); print a[1]; exit }' "/proc/$1/maps"; }
kb_huge() { awk -v f="$2" '/^[0-9a-f]+-[0-9a-f]+ / { mine = ($6 == f); next } mine && /^FilePmdMapped:/ { kb += $2 } END { print kb + 0 }' "/proc/$1/smaps"; }
run_held() {  # FILE: starts it waiting; HPID
	rm -f "$W/held.out"   # (the run before's "ready" must not be taken for this one's)
	"$1" wait >"$W/held.out" &
	HPID=$!
	wait_until 5 grep -q "^ready $HPID " "$W/held.out" || fail "$1 did not start: $(cat "$W/held.out")"
}
out_plain=$("$W/plain" | awk '{ print $3 }')
for i in 1 2 3; do
	run_held "$P"
	b=$(base_of "$HPID" "$P")
	kill "$HPID"; wait "$HPID" 2>/dev/null
	[ $((0x$b % H)) = 0 ] || fail "run $i: the aligned program's base 0x$b is not 2 MiB-aligned"
done
[ "$("$P" | awk '{ print $3 }')" = "$out_plain" ] || fail "the aligned program prints another sum"
note "aligned: loaded at a 2 MiB-aligned base three times out of three (last 0x$b)"

# --- primed: huge from the page cache, where the unaligned copy is not
t prime -- "$TOOL" prime "$P" "$W/plain"
expect_rc 0
run_held "$P"
kb=$(kb_huge "$HPID" "$P")
kill "$HPID"; wait "$HPID" 2>/dev/null
[ "$kb" -ge 6144 ] || fail "the aligned, primed program has $kb kB of text huge from the page cache (expected its three whole windows: 6144)"
run_held "$W/plain"
kbp=$(kb_huge "$HPID" "$W/plain")
b=$(base_of "$HPID" "$W/plain")
kill "$HPID"; wait "$HPID" 2>/dev/null
if [ $((0x$b % H)) != 0 ]; then
	[ "$kbp" = 0 ] || fail "the unaligned program (base 0x$b) has $kbp kB huge from the page cache"
fi
note "primed: aligned $kb kB of text huge from the page cache, not aligned (base 0x$b) $kbp kB"

# --- undo
cp "$P" "$W/p.aligned"
printf x >>"$P"
t undo_changed -- "$TOOL" align --undo --state "$S" "$P"
expect_bad 1 "--undo of a file changed since" "$P: changed since align"
[ "$(ls "$S/aligned" | wc -l)" = 1 ] || fail "the record went with a refused --undo"
cp "$W/p.aligned" "$P"
t undo -- "$TOOL" align --undo --state "$S" "$P"
expect_rc 0
expect_out "put back as it was before align, byte for byte"
[ "$(sum "$P")" = "$sum0" ] || fail "--undo did not put the file back byte for byte"
[ -z "$(ls -A "$S/aligned")" ] || fail "--undo left the record"
t undo_again -- "$TOOL" align --undo --state "$S" "$P"
expect_bad 1 "--undo twice" "$P: align changed nothing in it"
pass
