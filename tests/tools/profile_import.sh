#!/bin/bash
# tool_profile_import — `profile import` of perf.data, pprof and perf script
# text.  A pprof profile written here (tt_pprof.py, its own protobuf
# encoder) with known samples imports to exactly those counts, gzip'd or
# not, by the "count" sample type or --value's, --pid by its labels; a
# program with 3 MiB of cold text before its hot loop, recorded by `perf
# record -e cpu-clock`: its build-id is readelf's, its hottest window the
# one the loop is in, perf.data and `perf script` of it give the same
# counts granule by granule; pipe mode; --pid and --comm; a program
# replaced after recording is read from perf's build-id cache, or left out
# with one line; the merge of two imports is their sum, granule by granule;
# truncated and corrupt files of each kind are one line naming the file,
# exit 1, never a crash.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is not installed (run-tests installs it)"
PPROF="python3 $TT_SRC/tt_pprof.py"
# perf's build-id cache (~/.debug): this test's own
export HOME=$W/home
unset PERF_BUILDID_DIR
mkdir -p "$HOME"

cat >"$W/big.c" <<'C'
#include <stdio.h>
#include <time.h>
/* 3 MiB of cold text first: the hot function lies in the second 2 MiB window */
__asm__(".text\n.globl filler\n.type filler,@function\nfiller:\n.skip 3145728, 0x90\nret\n.size filler, .-filler\n");
__attribute__((noinline, aligned(64))) unsigned spin_here(unsigned x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 2654435761u + (unsigned)i;
	return x;
}
int main(int argc, char **argv)
{
	unsigned x = (unsigned)argc;
	(void)argv;
	/* a second of its own CPU time (not of the clock: on a busy machine
	 * that would be a fraction of a second of samples) */
	while (clock() < CLOCKS_PER_SEC)
		x = spin_here(x);
	printf("%u\n", x & 1);
	return 0;
}
C
"$TT_CC" -O1 -Wl,--build-id "$W/big.c" -o "$W/big" || fail "cannot build the test program"
bid=$(readelf -n "$W/big" | sed -n 's/.*Build ID: *//p')
sym() { nm "$W/big" | awk -v s="$1" '$3 == s { print $1 }'; }
spin=$((16#$(sym spin_here))) filler=$((16#$(sym filler)))
[ -n "$bid" ] && [ "$spin" -gt $((3 << 20)) ] || fail "the test program: no build-id, or spin_here ($spin) not past 3 MiB"
# the text segment (R E): its offset and address, for the pprof mapping
read -r toff tva tsz < <(readelf -lW "$W/big" | awk '$1 == "LOAD" && ($7 ~ /E/ || $8 ~ /E/) { print $2, $3, $5; exit }')
[ -n "$tsz" ] || fail "no executable PT_LOAD in the test program"
toff=$((toff)) tva=$((tva)) tsz=$((tsz))
body() { grep -v '^#' "$1"; }
# count FILE ADDR: the count of granule ADDR (hex, no 0x) of the program
count() { awk -v b="$bid" -v a="$2" '$1 == "object" { o = ($2 == b) } o && $1 == a { print $2 }' "$1"; }
hex() { printf '%x' "$1"; }

# ---- pprof: known samples ----------------------------------------------------
BASE=$((0x555555554000))
maddr() { echo $((BASE + toff + $1 - tva)); }   # the run-time address of vaddr $1
mapargs=(--type cpu/nanoseconds --type samples/count
	--mapping "1:$((BASE + toff)):$((BASE + toff + tsz)):$toff:$W/big:$bid"
	--mapping "2:$((0x7fff00000000)):$((0x7fff00002000)):0:[vdso]:"
	--mapping "3:$((0x7f0000000000)):$((0x7f0000100000)):4096:/no/such/lib.so:abababababababababababababababababababab")
samples=(--sample "$(maddr $((spin + 4))):1:100,7:pid=42:comm=big"
	--sample "$(maddr $((spin + 8))):1:200,5:pid=43:comm=other"
	--sample "$(maddr $((filler + 0x100010))):1:50,3:pid=42:comm=big"
	--sample "$(maddr $((filler + 0x100020))):0:60,4:pid=42:comm=big"
	--sample "$((0x7fff00000100)):2:10,2:pid=42:comm=big"
	--sample "$((0x1234)):0:10,6:pid=42:comm=big"
	--sample "$(maddr $((spin + 12))):1:0,0:pid=42:comm=big"
	--sample "$((0x7f0000000040)):3:90,9:pid=42:comm=big")
$PPROF "$W/p.pb" "${mapargs[@]}" "${samples[@]}" || fail "tt_pprof.py"
$PPROF "$W/p.pb.gz" --gzip "${mapargs[@]}" "${samples[@]}" || fail "tt_pprof.py --gzip"
gs=$(hex $((spin & ~63))) gf=$(hex $(((filler + 0x100000) & ~63)))
for f in p.pb p.pb.gz; do
	t "pprof-$f" -- "$TOOL" profile import -o "$W/$f.prof" "$W/$f"
	expect_rc 0 "import of $f"
	sed 's/^/   profile| /' "$W/$f.prof"
	# spin: 7 + 5; filler: 3 + 4 (one by its mapping, one by its address alone)
	[ "$(count "$W/$f.prof" "$gs")" = 12 ] && [ "$(count "$W/$f.prof" "$gf")" = 7 ] ||
		fail "$f: spin_here's granule $gs has '$(count "$W/$f.prof" "$gs")' (expected 12), filler's $gf '$(count "$W/$f.prof" "$gf")' (expected 7)"
	[ "$(awk -v b="$bid" '$1 == "object" { o = ($2 == b) } o && $1 != "object" { n++ } END { print n + 0 }' "$W/$f.prof")" = 2 ] ||
		fail "$f: the program has other counts than the two"
	grep -q "^object $bid $W/big\$" "$W/$f.prof" || fail "$f: the program is not named by its build-id"
	grep -q abababab "$W/$f.prof" && fail "$f: the object whose file is not here was written (it would be all cold)"
	grep -q "/no/such/lib.so (build-id abab.*): 9 samples left out" "$ERR" ||
		fail "$f: the 9 samples of the missing library are not said to be left out"
	grep -q "^enormoustext profile: 36 samples (8 outside any file, 9 left out) from $W/$f written to" "$ERR" ||
		fail "$f: the summary: $(tail -1 "$ERR")"
done
cmp -s "$W/p.pb.prof" "$W/p.pb.gz.prof" || fail "gzip'd and plain pprof give different profiles"
t pprof-value -- "$TOOL" profile import --value cpu -o "$W/cpu.prof" "$W/p.pb.gz"
expect_rc 0 "--value cpu"
[ "$(count "$W/cpu.prof" "$gs")" = 300 ] && [ "$(count "$W/cpu.prof" "$gf")" = 110 ] || fail "--value cpu: not 300 and 110"
t pprof-pid -- "$TOOL" profile import --pid 43 -o "$W/pid.prof" "$W/p.pb.gz"
expect_rc 0 "--pid 43"
[ "$(count "$W/pid.prof" "$gs")" = 5 ] && [ -z "$(count "$W/pid.prof" "$gf")" ] || fail "--pid 43: not spin_here's 5 alone"
t pprof-comm -- "$TOOL" profile import --comm big -o "$W/comm.prof" "$W/p.pb.gz"
expect_rc 0 "--comm big"
[ "$(count "$W/comm.prof" "$gs")" = 7 ] && [ "$(count "$W/comm.prof" "$gf")" = 7 ] || fail "--comm big: not 7 and 7"
t pprof-novalue -- "$TOOL" profile import --value bytes -o "$W/x.prof" "$W/p.pb"
expect_bad 1 "--value of a type it lacks" "p.pb: no sample type 'bytes' \(it has: cpu/nanoseconds, samples/count\)"
[ -e "$W/x.prof" ] && fail "a failed import wrote its output"
# corrupt and truncated pprof
head -c $(($(stat -c %s "$W/p.pb") / 2)) "$W/p.pb" >"$W/half.pb"
t pprof-half -- "$TOOL" profile import -o "$W/x.prof" "$W/half.pb"
expect_bad 1 "a truncated pprof profile" "half.pb: .*(does not decode|not a valid pprof)"
head -c $(($(stat -c %s "$W/p.pb.gz") - 20)) "$W/p.pb.gz" >"$W/half.pb.gz"
t pprof-half-gz -- "$TOOL" profile import -o "$W/x.prof" "$W/half.pb.gz"
expect_bad 1 "a truncated gzip'd pprof profile" "half.pb.gz: gzip data cut short"
python3 -c "import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[len(b)//2] ^= 0xff; b[len(b)//2 + 1] ^= 0x55; open(sys.argv[2], 'wb').write(b)" "$W/p.pb.gz" "$W/bad.pb.gz"
t pprof-bad-gz -- "$TOOL" profile import -o "$W/x.prof" "$W/bad.pb.gz"
expect_bad 1 "a corrupt gzip'd pprof profile" "bad.pb.gz: "
$PPROF "$W/nomap.pb" --type samples/count --sample "4096:9:1" || fail "tt_pprof.py"
t pprof-nomap -- "$TOOL" profile import -o "$W/x.prof" "$W/nomap.pb"
expect_bad 1 "a location of a missing mapping" "nomap.pb: not a valid pprof profile: location 1 names mapping 9"
[ -e "$W/x.prof" ] && fail "a failed import wrote its output"

# ---- bad input of any kind --------------------------------------------------
: >"$W/empty"
t empty -- "$TOOL" profile import -o "$W/x.prof" "$W/empty"
expect_bad 1 "an empty file" "empty: empty"
printf 'nothing useful\n' >"$W/junk.txt"
t junk -- "$TOOL" profile import -o "$W/x.prof" "$W/junk.txt"
expect_bad 1 "text that is no perf script output" "junk.txt: .*no samples or mappings"
t dir -- "$TOOL" profile import -o "$W/x.prof" "$W"
expect_bad 1 "a directory" "$W: a directory"
t missing -- "$TOOL" profile import -o "$W/x.prof" "$W/no-such"
expect_bad 1 "a missing file" "no-such: No such file"
t usage -- "$TOOL" profile import
expect_rc 2 "no FILE"
t usage2 -- "$TOOL" profile import --pid x "$W/p.pb"
expect_rc 2 "a bad --pid"
t help -- "$TOOL" profile import --help
expect_rc 0 "--help"
expect_out "perf.data" "--help"

# ---- perf.data ---------------------------------------------------------------
if ! command -v perf >/dev/null; then
	skip "perf is not installed (linux-perf): the pprof import passed, perf.data is not checked"
fi
if ! perf record -q -e cpu-clock -F 999 -o "$W/perf.data" -- "$W/big" >/dev/null 2>"$W/perf.err"; then
	skip "perf cannot record here ($(head -1 "$W/perf.err")): the pprof import passed, perf.data is not checked"
fi
t perfdata -- "$TOOL" profile import -o "$W/pd.prof" "$W/perf.data"
expect_rc 0 "import of perf.data"
sed 's/^/   profile| /' "$W/pd.prof" | head -6
grep -q "^object $bid $W/big\$" "$W/pd.prof" || fail "perf.data: the program is not named by readelf's build-id $bid"
t show -- "$TOOL" profile show "$W/pd.prof"
expect_rc 0 "profile show"
topwin=$(awk -v p="$W/big" '$1 == p { o = 1; next } o && $1 == "window" { print $2; exit }' "$OUT")
[ "$topwin" = "0x$(hex $((spin & ~(H - 1))))" ] ||
	fail "the hottest window is $topwin, spin_here ($(hex "$spin")) is in 0x$(hex $((spin & ~(H - 1))))"
n=$(awk -v b="$bid" '$1 == "object" { o = ($2 == b) } o && $1 != "object" { n += $2 } END { print n + 0 }' "$W/pd.prof")
[ "$n" -ge 200 ] || fail "only $n samples in the program in a second of CPU time spinning"
# --json with -o: what was imported, valid, the figures of the stderr line
# and of the file; refused without -o (the profile would share stdout)
t perfdata-json -- "$TOOL" profile import --json -o "$W/pdj.prof" "$W/perf.data"
expect_rc 0 "import --json"
json "$OUT"
python3 -m json.tool "$OUT" >/dev/null || fail "import --json: python3 -m json.tool refuses it"
cmp -s "$W/pdj.prof" "$W/pd.prof" || fail "import --json wrote another profile"
read -r it io < <(sed -n 's/^enormoustext profile: \([0-9]*\) samples\{0,1\} (\([0-9]*\) outside any file[^)]*) from .*/\1 \2/p' "$ERR")
[ -n "$it" ] || fail "import --json: no summary line on stderr: $(tail -1 "$ERR")"
[ "$(jneed "$OUT.flat" .samples)" = "$it" ] && [ "$(jneed "$OUT.flat" .outside)" = "$io" ] ||
	fail "import --json: samples/outside $(jget "$OUT.flat" .samples)/$(jget "$OUT.flat" .outside), the line says $it/$io"
[ "$(jneed "$OUT.flat" '.files[0].kind')" = perf.data ] || fail "import --json: the kind is not perf.data"
[ "$(jneed "$OUT.flat" '.files[0].samples')" = "$it" ] || fail "import --json: the file's samples are not the total"
[ "$(jneed "$OUT.flat" .objects)" = "$(grep -c '^object ' "$W/pdj.prof")" ] || fail "import --json: objects is not the file's"
t import-json-noout -- "$TOOL" profile import --json "$W/perf.data"
expect_bad 2 "import --json without -o" "--json goes with -o OUT"
expect_no_out "import --json without -o"
# the same samples through perf script: the same counts, granule by granule
perf script -i "$W/perf.data" -F pid,ip --show-mmap-events >"$W/ps.txt" 2>/dev/null
t script -- "$TOOL" profile import -o "$W/ps.prof" "$W/ps.txt"
expect_rc 0 "import of perf script text"
diff <(body "$W/pd.prof") <(body "$W/ps.prof") >"$W/diff" || fail "perf.data and perf script differ: $(head -5 "$W/diff")"
t kinds-json -- "$TOOL" profile import --json -o "$W/kinds.prof" "$W/perf.data" "$W/ps.txt"
expect_rc 0 "import --json of two kinds"
json "$OUT"
[ "$(jneed "$OUT.flat" '.files[0].kind') $(jneed "$OUT.flat" '.files[1].kind')" = "perf.data perf script" ] ||
	fail "import --json: the kinds are not perf.data and perf script"
[ $(( $(jneed "$OUT.flat" '.files[0].samples') + $(jneed "$OUT.flat" '.files[1].samples') )) = "$(jneed "$OUT.flat" .samples)" ] ||
	fail "import --json: the files' samples do not add up to the total"
[ "$(jneed "$OUT.flat" '.files[0].samples')" = "$(jneed "$OUT.flat" '.files[1].samples')" ] ||
	fail "import --json: perf.data and its perf script text have different samples"
t record-script -- "$TOOL" record -o "$W/rs.prof" --from-perf-script "$W/ps.txt"
expect_rc 0 "record --from-perf-script"
diff <(body "$W/pd.prof") <(body "$W/rs.prof") >/dev/null || fail "record --from-perf-script and profile import differ"
t record-script-json -- "$TOOL" record --json -o "$W/rsj.prof" --from-perf-script "$W/ps.txt"
expect_rc 0 "record --from-perf-script --json"
json "$OUT"
[ "$(jneed "$OUT.flat" .source)" = "perf script" ] && [ "$(jneed "$OUT.flat" .samples)" = "$it" ] ||
	fail "record --from-perf-script --json: source or samples ($(jget "$OUT.flat" .samples), perf.data had $it)"
# --pid and --comm
pid=$(awk '$1 ~ /^[0-9]+$/ && $2 !~ /PERF_RECORD/ { print $1; exit }' "$W/ps.txt")
t pid -- "$TOOL" profile import --pid "$pid" -o "$W/pid.prof" "$W/perf.data"
expect_rc 0 "--pid $pid"
[ "$(count "$W/pid.prof" "$(hex $((spin & ~63)))")" = "$(count "$W/pd.prof" "$(hex $((spin & ~63)))")" ] ||
	fail "--pid of the program: spin_here's count differs"
t pid-other -- "$TOOL" profile import --pid 1 -o "$W/x.prof" "$W/perf.data"
expect_bad 1 "--pid of a process it has no samples of" "perf.data: no samples of pid 1"
t comm -- "$TOOL" profile import --comm big -o "$W/comm.prof" "$W/perf.data"
expect_rc 0 "--comm big"
[ "$(count "$W/comm.prof" "$(hex $((spin & ~63)))")" = "$(count "$W/pd.prof" "$(hex $((spin & ~63)))")" ] ||
	fail "--comm big: spin_here's count differs"
t comm-other -- "$TOOL" profile import --comm nosuch -o "$W/x.prof" "$W/perf.data"
expect_bad 1 "--comm of no thread" "perf.data: no samples of comm nosuch"
# pipe mode
if perf record -q -e cpu-clock -F 999 -o - -- "$W/big" 2 >"$W/pipe.data" 2>/dev/null; then
	t pipe -- "$TOOL" profile import -o "$W/pipe.prof" "$W/pipe.data"
	expect_rc 0 "import of pipe-mode perf.data"
	top=$(awk -v b="$bid" '$1 == "object" { o = ($2 == b) } o && $1 != "object" { if ($2 > m) { m = $2; a = $1 } } END { print a }' "$W/pipe.prof")
	[ "$top" = "$(hex $((spin & ~63)))" ] || [ "$top" = "$(hex $(((spin & ~63) + 64)))" ] ||
		fail "pipe mode: the hottest granule is $top, not spin_here's"
else
	note "perf record -o - failed: pipe mode not checked"
fi
# merge of two imports: the sums, granule by granule
perf record -q -e cpu-clock -F 999 -o "$W/perf2.data" -- "$W/big" 3 >/dev/null 2>&1 || fail "the second perf record"
t import2 -- "$TOOL" profile import -o "$W/pd2.prof" "$W/perf2.data"
expect_rc 0 "the second import"
t merge -- "$TOOL" profile merge -o "$W/m.prof" "$W/pd.prof" "$W/pd2.prof" "$W/p.pb.prof"
expect_rc 0 "merge of the imports"
sums() { awk '$1 == "object" { o = $2 } $1 ~ /^[0-9a-f]+$/ && NF == 2 { s[o " " $1] += $2 } END { for (k in s) print k, s[k] }' "$@" | sort; }
diff <(sums "$W/pd.prof" "$W/pd2.prof" "$W/p.pb.prof") <(sums "$W/m.prof") >"$W/diff" || fail "the merge is not the sum: $(head -5 "$W/diff")"
t both -- "$TOOL" profile import -o "$W/both.prof" "$W/perf.data" "$W/perf2.data" "$W/p.pb.gz"
expect_rc 0 "one import of three files"
diff <(sums "$W/m.prof") <(sums "$W/both.prof") >/dev/null || fail "importing three files at once is not their merge"
echo "   merged: $(sums "$W/m.prof" | awk '{ n += $3 } END { print n }') samples, the sum of the three"
# the program replaced after recording: from perf's build-id cache, or left out
ls "$HOME/.debug/.build-id/${bid:0:2}/${bid:2}/elf" >/dev/null 2>&1 || fail "perf did not fill its build-id cache"
cp "$W/big" "$W/big.orig"
"$TT_CC" -O2 -Wl,--build-id "$W/big.c" -o "$W/big" || fail "rebuilding"
[ "$(readelf -n "$W/big" | sed -n 's/.*Build ID: *//p')" != "$bid" ] || fail "the rebuilt program has the same build-id"
t cache -- "$TOOL" profile import -o "$W/cache.prof" "$W/perf.data"
expect_rc 0 "import with the program replaced"
diff <(body "$W/pd.prof") <(body "$W/cache.prof") >/dev/null || fail "the program replaced: not read from perf's build-id cache"
t nocache PERF_BUILDID_DIR="$W/empty" -- "$TOOL" profile import -o "$W/nocache.prof" "$W/perf.data"
expect_rc 0 "import with the program replaced and no cache"
grep -q "$W/big (build-id $bid): [0-9]* samples\{0,1\} left out" "$ERR" || fail "the program's samples are not said to be left out"
grep -q "^object $bid" "$W/nocache.prof" && fail "the program was written without its samples"
cp "$W/big.orig" "$W/big"

# ---- corrupt and truncated perf.data: one line, exit 1, never a crash ------
doff=$(od -An -t u8 -j 40 -N 8 "$W/perf.data" | tr -d ' ') dsize=$(od -An -t u8 -j 48 -N 8 "$W/perf.data" | tr -d ' ')
cuts="0 7 16 50 103 104 $((doff - 1)) $doff $((doff + 5))"
for k in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do cuts="$cuts $((doff + dsize * k / 21))"; done
for c in $cuts; do
	head -c "$c" "$W/perf.data" >"$W/cut.data"
	t "cut-$c" -- "$TOOL" profile import -o "$W/x.prof" "$W/cut.data"
	if [ "$c" = 0 ]; then expect_bad 1 "an empty perf.data" "cut.data: empty"; continue; fi
	expect_bad 1 "perf.data cut at $c bytes" "cut.data: .*(truncated|not a perf.data|cut short|past)"
done
[ -e "$W/x.prof" ] && fail "a failed import wrote its output"
python3 - "$W/perf.data" "$W/mut" <<'PY'
import random, sys
b = open(sys.argv[1], "rb").read()
random.seed(7)
for i in range(150):
    m = bytearray(b)
    for _ in range(random.choice((1, 4, 16))):
        m[random.randrange(len(m))] = random.randrange(256)
    open("%s.%d" % (sys.argv[2], i), "wb").write(m)
PY
ok=0 bad=0
for f in "$W"/mut.*; do
	"$TOOL" profile import -o "$W/mut.prof" "$f" >/dev/null 2>"$W/mut.err"
	rc=$?
	case $rc in
	0) ok=$((ok + 1)) ;;
	1) bad=$((bad + 1)); [ "$(wc -l <"$W/mut.err")" -ge 1 ] && grep -q "mut\.[0-9]*: " "$W/mut.err" || fail "$f: exit 1 without a line naming it: $(cat "$W/mut.err")" ;;
	*) fail "$f (a mutated perf.data): exit status $rc (a crash?): $(head -2 "$W/mut.err")" ;;
	esac
done
echo "   150 mutated perf.data files: $ok imported, $bad refused with one line, none crashed"

pass
