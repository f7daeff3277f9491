#!/bin/bash
# tool_profile_order — a program whose time goes to hot_b, defined after a big
# cold_a: record it, ask for the order, relink with it (lld and GNU ld): hot_b
# now comes before cold_a, at the start of the text.
. "$(dirname "$0")/lib.sh"

cat >"$W/ord.c" <<'C'
#include <stdio.h>
#include <time.h>
__attribute__((noinline)) unsigned cold_a(unsigned x) { __asm__ volatile("jmp 1f\n.skip 65536, 0xcc\n1:"); return x + 1; }
__attribute__((noinline)) unsigned hot_b(unsigned x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 2654435761u + (unsigned)i;
	return x;
}
__attribute__((noinline)) unsigned cold_c(unsigned x) { __asm__ volatile("jmp 1f\n.skip 65536, 0xcc\n1:"); return x + 3; }
int main(void)
{
	unsigned x = cold_a(1) + cold_c(2);
	time_t end = time(NULL) + 1;
	while (time(NULL) <= end)
		x = hot_b(x);
	printf("%u\n", x & 1);
	return 0;
}
C
"$TT_CC" -O1 -ffunction-sections -Wl,--build-id "$W/ord.c" -o "$W/ord" || fail "cannot build the program"
addr() { nm "$1" | awk -v f="$2" '$3 == f { print $1 }'; }
[ $((16#$(addr "$W/ord" cold_a))) -lt $((16#$(addr "$W/ord" hot_b))) ] || fail "cold_a is not before hot_b to begin with"
t rec -- "$TOOL" record -o "$W/ord.prof" -- "$W/ord"
if [ "$RC" -ne 0 ] && grep -q 'perf_event_open' "$ERR"; then
	skip "this machine refuses perf_event_open here: $(head -1 "$ERR")"
fi
expect_rc 0 "record"
t order -- "$TOOL" profile order --object "$W/ord" "$W/ord.prof"
expect_rc 0; expect_no_err
[ "$(head -1 "$OUT")" = hot_b ] || fail "the hottest function is not first: $(head -3 "$OUT" | tr '\n' ' ')"
cp "$OUT" "$W/order.txt"
t orderld -- "$TOOL" profile order --format ld --object "$W/ord" "$W/ord.prof"
expect_rc 0
cp "$OUT" "$W/order.ld"
grep -q '\*(.text.hot_b ' "$W/order.ld" || fail "the GNU ld script does not place hot_b"
# -o and --json: the same order into the file, and what was written as JSON
# (valid; its figures those of the file and of the profile)
t orderj -- "$TOOL" profile order --json -o "$W/order.j" --object "$W/ord" "$W/ord.prof"
expect_rc 0 "profile order --json -o"; expect_no_err
json "$OUT"
python3 -m json.tool "$OUT" >/dev/null || fail "order --json: python3 -m json.tool refuses it"
cmp -s "$W/order.j" "$W/order.txt" || fail "order -o wrote another order than the one on stdout"
obid=$(readelf -n "$W/ord" | sed -n 's/.*Build ID: *//p')
[ "$(jneed "$OUT.flat" .build_id)" = "$obid" ] || fail "order --json: build_id is not readelf's $obid"
[ "$(jneed "$OUT.flat" .ordered)" = "$(wc -l <"$W/order.txt")" ] || fail "order --json: ordered $(jget "$OUT.flat" .ordered), the order has $(wc -l <"$W/order.txt") lines"
osamples=$(awk -v b="$obid" '$1 == "object" { o = ($2 == b); next } o { n += $2 } END { print n + 0 }' "$W/ord.prof")
[ "$(jneed "$OUT.flat" .samples)" = "$osamples" ] || fail "order --json: samples $(jget "$OUT.flat" .samples), the profile has $osamples for the object"
[ "$(jneed "$OUT.flat" .functions)" -ge "$(jneed "$OUT.flat" .ordered)" ] || fail "order --json: fewer functions than ordered"
[ "$(jneed "$OUT.flat" .output)" = "$W/order.j" ] && [ "$(jneed "$OUT.flat" .format)" = lld ] || fail "order --json: output or format"
t orderj_noout -- "$TOOL" profile order --json --object "$W/ord" "$W/ord.prof"
expect_bad 2 "order --json without -o" "--json goes with -o OUT"
expect_no_out "order --json without -o"
# relink: GNU ld with the script, and lld with the ordering file where lld exists
"$TT_CC" -O1 -ffunction-sections "$W/ord.c" -Wl,-T,"$W/order.ld" -o "$W/ord-ld" || fail "linking with the ld order failed"
[ $((16#$(addr "$W/ord-ld" hot_b))) -lt $((16#$(addr "$W/ord-ld" cold_a))) ] ||
	fail "GNU ld with the order: hot_b is not before cold_a"
"$W/ord-ld" >/dev/null || fail "the reordered program does not run"
if "$TT_CC" -fuse-ld=lld -x c /dev/null -shared -o "$W/probe.so" 2>/dev/null; then
	"$TT_CC" -O1 -ffunction-sections -fuse-ld=lld "$W/ord.c" -Wl,--symbol-ordering-file="$W/order.txt" \
		-o "$W/ord-lld" || fail "linking with the lld order failed"
	[ $((16#$(addr "$W/ord-lld" hot_b))) -lt $((16#$(addr "$W/ord-lld" cold_a))) ] ||
		fail "lld with the order: hot_b is not before cold_a"
else
	echo "   (no lld: the --symbol-ordering-file link is not checked)"
fi
# a file the profile does not have
t other -- "$TOOL" profile order --object "$TOOL" "$W/ord.prof"
expect_bad 1 "an object the profile does not have" "the profile has no samples for this file"

pass
