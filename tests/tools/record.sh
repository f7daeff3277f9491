#!/bin/bash
# tool_record — a program that spends its time in one function: the profile
# names the program by its build-id, and most samples fall in that function;
# a COMMAND that cannot start (127, 126) leaves an existing profile as it was
# and says nothing was written; an output that cannot be written is refused
# before COMMAND runs.
. "$(dirname "$0")/lib.sh"

cat >"$W/spin.c" <<'C'
#include <stdio.h>
#include <time.h>
__attribute__((noinline)) unsigned spin_here(unsigned x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 2654435761u + (unsigned)i;
	return x;
}
int main(void)
{
	unsigned x = 1;
	time_t end = time(NULL) + 1;
	while (time(NULL) <= end)
		x = spin_here(x);
	printf("%u\n", x & 1);
	return 0;
}
C
"$TT_CC" -O1 -g -Wl,--build-id "$W/spin.c" -o "$W/spin" || fail "cannot build the spinning program"
# A COMMAND that cannot be started writes nothing: an existing profile stays
# byte for byte, no "written" line, the status a shell gives (127, 126).
printf 'enormoustext-profile 1\ngranule 64\nobject ab /bin/keep\n400000 7\n' >"$W/good.prof"
cp "$W/good.prof" "$W/good.ref"
t notfound -- "$TOOL" record -o "$W/good.prof" -- "$W/no-such-program"
expect_rc 127 "a command that does not exist"
cmp -s "$W/good.prof" "$W/good.ref" || fail "a command that does not exist: the existing profile was changed"
grep -q 'written' "$ERR" && fail "a command that does not exist: record says a profile was written"
grep -q "no-such-program" "$ERR" || fail "a command that does not exist: not named"
for f in "$W"/good.prof?*; do [ -e "$f" ] && fail "a temporary was left beside the profile: $f"; done
printf '#!/bin/sh\n' >"$W/noexec"; chmod 644 "$W/noexec"
t noexec -- "$TOOL" record -o "$W/good.prof" -- "$W/noexec"
expect_rc 126 "a command that cannot be executed"
cmp -s "$W/good.prof" "$W/good.ref" || fail "a command that cannot be executed: the existing profile was changed"
grep -q 'written' "$ERR" && fail "a command that cannot be executed: record says a profile was written"
# An output that cannot be written is refused before COMMAND runs.
t baddir1 -- "$TOOL" record -o "$W/no/such/dir/x.prof" -- touch "$W/ran"
expect_bad 1 "an output in a directory that does not exist" "$W/no/such/dir/x.prof: "
[ -e "$W/ran" ] && fail "an output that cannot be written: COMMAND ran anyway"
t rec -- "$TOOL" record -o "$W/spin.prof" -- "$W/spin"
if [ "$RC" -ne 0 ] && grep -q 'perf_event_open' "$ERR"; then
	skip "this machine refuses perf_event_open here: $(head -1 "$ERR")"
fi
expect_rc 0 "record"
# (the program calls time(): samples in the vdso belong to no file)
read -r total outside < <(sed -n 's/^enormoustext record: \([0-9]*\) samples\{0,1\} (\([0-9]*\) outside any file) written to .*/\1 \2/p' "$ERR")
[ -n "$total" ] || fail "record's last line: $(tail -1 "$ERR")"
[ "$total" -ge 200 ] || fail "only $total samples in a second of spinning"
[ $((outside * 50)) -le "$total" ] || fail "$outside of $total samples outside any file (more than 2%)"
sed 's/^/   profile| /' "$W/spin.prof" | head -8
bid=$(readelf -n "$W/spin" | sed -n 's/.*Build ID: *//p')
grep -q "^object $bid $W/spin\$" "$W/spin.prof" || fail "the profile does not name the program by its build-id ($bid)"
fn=$(nm "$W/spin" | awk '$3 == "spin_here" { print $1 }')
[ -n "$fn" ] || fail "no spin_here symbol"
# the program's samples: the hottest granule lies in spin_here
size=$(nm -S "$W/spin" | awk '$4 == "spin_here" { print $2 }')
top=$(awk -v b="$bid" '$1 == "object" { o = ($2 == b) } o && $1 ~ /^[0-9a-f]+$/ { if ($2 > m) { m = $2; a = $1 } } END { print a }' "$W/spin.prof")
[ -n "$top" ] && [ -n "$size" ] || fail "no samples for the program, or no size for spin_here"
[ $((16#$top + 64)) -gt $((16#$fn)) ] && [ $((16#$top)) -lt $((16#$fn + 16#$size)) ] ||
	fail "the hottest granule is at $top, spin_here is [$fn, +$size)"
# --json: what was recorded, valid (json.tool and the strict checker), the
# figures of the stderr line and of the file written; stdout is the JSON
# alone (COMMAND's own output sent elsewhere); refused where FILE is stdout
t recj -- "$TOOL" record --json -o "$W/spinj.prof" -- sh -c "exec \"$W/spin\" >/dev/null"
expect_rc 0 "record --json"
json "$OUT"
python3 -m json.tool "$OUT" >/dev/null || fail "record --json: python3 -m json.tool refuses it"
read -r jt jo < <(sed -n 's/^enormoustext record: \([0-9]*\) samples\{0,1\} (\([0-9]*\) outside any file) written to .*/\1 \2/p' "$ERR")
[ -n "$jt" ] || fail "record --json: no 'written' line on stderr: $(tail -1 "$ERR")"
[ "$(jneed "$OUT.flat" .samples)" = "$jt" ] || fail "record --json: samples $(jget "$OUT.flat" .samples), the line says $jt"
[ "$(jneed "$OUT.flat" .outside)" = "$jo" ] || fail "record --json: outside $(jget "$OUT.flat" .outside), the line says $jo"
[ "$(jneed "$OUT.flat" .output)" = "$W/spinj.prof" ] || fail "record --json: output is not the file written"
[ "$(jneed "$OUT.flat" .objects)" = "$(grep -c '^object ' "$W/spinj.prof")" ] || fail "record --json: objects is not the file's"
[ "$(jneed "$OUT.flat" .exit_status)" = 0 ] || fail "record --json: exit_status"
[ "$(jneed "$OUT.flat" .source)" = "perf events" ] || fail "record --json: source $(jget "$OUT.flat" .source)"
[ "$(jneed "$OUT.flat" '.command[0]')" = sh ] || fail "record --json: the command's words"
[ "$(jneed "$OUT.flat" .frequency)" = 999 ] || fail "record --json: frequency"
[ "$(jneed "$OUT.flat" .threads)" -ge 1 ] || fail "record --json: no thread sampled"
ms=$(jneed "$OUT.flat" .duration_ms)
[ "$ms" -ge 900 ] && [ "$ms" -le 30000 ] || fail "record --json: duration_ms $ms for a program that spins a second"
n=$(awk '$1 != "object" && $1 ~ /^[0-9a-f]+$/ { n += $2 } END { print n + 0 }' "$W/spinj.prof")
[ "$n" -le "$jt" ] && [ $((n + jo)) -ge "$jt" ] || fail "record --json: the file holds $n samples, the JSON $jt ($jo outside)"
t recj_stdout -- "$TOOL" record --json -o /dev/stdout -- true
expect_bad 2 "record --json -o /dev/stdout" "--json: -o /dev/stdout is standard output"
expect_no_out "record --json -o /dev/stdout"
# the same from an existing perf record, through perf script
if command -v perf >/dev/null && perf record -q -e cpu-clock -o "$W/perf.data" -- "$W/spin" >/dev/null 2>&1; then
	perf script -i "$W/perf.data" -F pid,ip --show-mmap-events >"$W/ps.txt" 2>/dev/null
	t import -- "$TOOL" record -o "$W/imp.prof" --from-perf-script "$W/ps.txt"
	expect_rc 0 "record --from-perf-script"
	grep -q "^object $bid $W/spin\$" "$W/imp.prof" || fail "the imported profile does not name the program"
	top=$(awk -v b="$bid" '$1 == "object" { o = ($2 == b) } o && $1 ~ /^[0-9a-f]+$/ { if ($2 > m) { m = $2; a = $1 } } END { print a }' "$W/imp.prof")
	[ $((16#$top + 64)) -gt $((16#$fn)) ] && [ $((16#$top)) -lt $((16#$fn + 16#$size)) ] ||
		fail "imported: the hottest granule is at $top, spin_here is [$fn, +$size)"
	printf 'nothing useful\n' >"$W/junk.txt"
	t junk -- "$TOOL" record -o "$W/j.prof" --from-perf-script "$W/junk.txt"
	expect_bad 1 "perf script output without samples" "junk.txt: no samples or mappings"
else
	echo "   (perf cannot record here: --from-perf-script is not checked)"
fi
# usage errors
t noout -- "$TOOL" record -- true
expect_rc 2
t nocmd -- "$TOOL" record -o "$W/x.prof"
expect_rc 2
t missing -- "$TOOL" record -o "$W/x.prof" -- "$W/no-such-program"
expect_rc 127 "a command that does not exist"
t baddir -- "$TOOL" record -o "$W/no/such/dir/x.prof" -- true
expect_rc 1 "an output in a directory that does not exist"

pass
