#!/bin/bash
# tool_buildid — one reader of a file's GNU build-id (elffile.c), one rule
# for its key: a build-id of any length is read, and `check` shows all of
# it; a profile keys the object by its first 20 bytes at most, in hex, as
# the library keys what it loads (core/util.c) and as perf's MMAP2 records
# carry it.  Libraries linked with build-ids of 32 bytes (longer than
# SHA-1's 20), 20, 16 (MD5's size) and 8 (xxHash's): `check` shows each
# whole; `profile import` keys their samples, and `profile order` finds
# them in a profile, by that key; a library without one is named so.
. "$(dirname "$0")/lib.sh"

cat >"$W/lib.c" <<'C'
__attribute__((noinline)) int hot_fn(int x)
{
	for (int i = 0; i < 100; i++)
		x = x * 31 + i;
	return x;
}
__attribute__((noinline)) int cold_fn(int x) { return x + 1; }
C
base=$((16#7f0000000000))
for id in 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff \
	0123456789abcdef0123456789abcdef01234567 fedcba9876543210fedcba9876543210 0011223344556677; do
	n=$((${#id} / 2))
	lib=$W/lib$n.so
	key=${id:0:40}
	cc_link "$lib" "$W/lib.c" -shared -fPIC "-Wl,--build-id=0x$id"
	readelf -n "$lib" | grep -q "Build ID: $id\$" || fail "the linker did not give $lib the build-id $id: $(readelf -n "$lib" | grep 'Build ID')"
	# check: the whole build-id
	t "check$n" -- "$TOOL" check --json "$lib"
	expect_rc 0; json "$OUT"
	[ "$(jneed "$OUT.flat" .build_id)" = "$id" ] ||
		fail "check: a build-id of $n bytes read as $(jget "$OUT.flat" .build_id), expected $id"
	# profile import (perf script text: the library mapped whole, samples
	# in hot_fn): the object keyed by the first 20 bytes
	hot=$((16#$(nm "$lib" | awk '$3 == "hot_fn" { print $1 }')))
	read -r off va _ < <(seg_x "$lib")
	size=$(stat -c %s "$lib")
	{
		printf 'PERF_RECORD_MMAP2 4242/4242: [0x%x(0x%x) @ 0 fd:01 1 0]: r-xp %s\n' "$base" "$size" "$lib"
		for _ in 1 2 3; do printf ' 4242 %x\n' $((base + hot - va + off)); done
	} >"$W/script$n.txt"
	t "import$n" -- "$TOOL" profile import -o "$W/imp$n.prof" "$W/script$n.txt"
	expect_rc 0 "profile import, a build-id of $n bytes"
	grep -qx "object $key $lib" "$W/imp$n.prof" ||
		fail "profile import, a build-id of $n bytes: no object keyed $key: $(grep '^object' "$W/imp$n.prof")"
	grep -q '3 samples (0 outside any file)' "$ERR" || fail "profile import, a build-id of $n bytes: $(cat "$ERR")"
	# profile order: found in a profile by that key
	t "order$n" -- "$TOOL" profile order --object "$lib" "$W/imp$n.prof"
	expect_rc 0 "profile order, a build-id of $n bytes"; expect_no_err
	[ "$(head -1 "$OUT")" = hot_fn ] || fail "profile order, a build-id of $n bytes: $(head -2 "$OUT" | tr '\n' ' ')"
done
# a build-id longer than 20 bytes keys by its first 20: a profile naming
# the whole of it is another object's
hot=$((16#$(nm "$W/lib32.so" | awk '$3 == "hot_fn" { print $1 }')))
printf 'enormoustext-profile 1\ngranule 64\nobject %s %s\n%x 7\n' 00112233445566778899aabbccddeeff00112233 \
	"$W/lib32.so" $((hot & ~63)) >"$W/key.prof"
t orderkey -- "$TOOL" profile order --object "$W/lib32.so" "$W/key.prof"
expect_rc 0 "profile order, the key written by hand"
[ "$(head -1 "$OUT")" = hot_fn ] || fail "profile order, the key written by hand: $(head -2 "$OUT" | tr '\n' ' ')"
# none
cc_link "$W/libnone.so" "$W/lib.c" -shared -fPIC -Wl,--build-id=none
t checknone -- "$TOOL" check --json "$W/libnone.so"
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" .build_id)" = null ] || fail "check: a library without a build-id has one: $(jget "$OUT.flat" .build_id)"
t ordernone -- "$TOOL" profile order --object "$W/libnone.so" "$W/key.prof"
expect_bad 1 "profile order, a library without a build-id" "libnone.so: the profile has no samples for this file \\(build-id none\\)"

pass
