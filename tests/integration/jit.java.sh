#!/bin/bash
# integration.jit.java — ENORMOUSTEXT_MODE=3 on real JITs, checked from
# outside.  OpenJDK 17 (a hot loop; its code cache is rwx anonymous
# memory): without the library, and with mode 1, its code cache has no
# AnonHugePages (THP madvise, no -XX:+UseTransparentHugePages); with mode
# 3, read from /proc/PID/smaps while it runs, at least one 2 MiB page —
# with the default segmented code cache (HotSpot starts its segments at
# unaligned offsets: the first one, in the aligned reservation, gets a
# window) and with one 16 MiB cache (-XX:-SegmentedCodeCache
# -XX:InitialCodeCacheSize=16m); the program's results the same in every
# run.  Node 20 (bench/run.d/node-work.js): its checksum the same with
# mode 3; its code space is reported (V8's holds no whole window here, and
# V8 places its code range at an address hint the library leaves alone).
# Needs java/javac (openjdk-17-jdk-headless: tools/run-tests installs it);
# Node where installed.
. "$(dirname "$0")/lib.sh"

command -v java >/dev/null && command -v javac >/dev/null ||
	skip "no java/javac here (Debian: openjdk-17-jdk-headless): the JIT check needs a JVM"
grep -q '\[always\]' /sys/kernel/mm/transparent_hugepage/enabled &&
	skip "THP is always here: the code cache would be huge without the library, nothing to show"
D=$WORK
cat >"$D/Spin.java" <<'JAVA'
public class Spin {
	static long work(int n) { long s = 0; for (int i = 0; i < n; i++) s += (i ^ (i >>> 3)) % 7; return s; }
	public static void main(String[] a) throws Exception {
		long first = work(20000000);
		long end = System.nanoTime() + Long.parseLong(a[0]) * 1000000L;
		while (System.nanoTime() < end)
			if (work(20000000) != first) { System.out.println("WRONG"); System.exit(1); }
		System.out.println("sum " + first + ": the same on every pass");
	}
}
JAVA
(cd "$D" && javac Spin.java) >"$D/javac.out" 2>&1 || fail "javac failed: $(head -3 "$D/javac.out")"

# cache_kb PID — kB of AnonHugePages in the rwx anonymous mappings (the code cache)
cache_kb() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { on = ($2 == "rwxp" && $6 == ""); next }
		on && /^AnonHugePages:/ { kb += $2 } END { print kb + 0 }' "/proc/$1/smaps"
}
# jvm LABEL WANT_MIN WANT_MAX [VAR=VALUE...] -- JAVA_FLAGS... : run Spin 5 s, read its code cache at 3.5 s
jvm() {
	local label=$1 lo=$2 hi=$3 envs=()
	shift 3
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	(cd "$D" && exec env "${envs[@]}" java "$@" -cp "$D" Spin 5000) >"$D/$label.out" 2>"$D/$label.err" &
	local p=$!
	sleep 3.5
	local kb
	kb=$(cache_kb "$p" 2>/dev/null)
	wait "$p"
	local rc=$?
	echo "-- $label: ${envs[*]} java $*: exit $rc, code cache AnonHugePages ${kb:-?} kB; $(cat "$D/$label.out")"
	[ "$rc" = 0 ] || fail "$label: java exited $rc: $(tail -3 "$D/$label.err")"
	grep -q 'the same on every pass' "$D/$label.out" || fail "$label: java's results: $(cat "$D/$label.out")"
	[ -s "$D/$label.err" ] && fail "$label: stderr not empty: $(head -3 "$D/$label.err")"
	[ -n "$kb" ] || fail "$label: could not read java's smaps"
	[ "$kb" -ge "$lo" ] && [ "$kb" -le "$hi" ] || fail "$label: code cache AnonHugePages $kb kB, expected $lo..$hi"
}
BIG=(-XX:-SegmentedCodeCache -XX:InitialCodeCacheSize=16m)
jvm plain 0 0 -- -XX:+UseSerialGC
jvm mode1 0 0 ENORMOUSTEXT_MODE=1 LD_PRELOAD="$PRE" -- -XX:+UseSerialGC
jvm mode3 2048 999999 ENORMOUSTEXT_MODE=3 LD_PRELOAD="$PRE" -- -XX:+UseSerialGC
jvm plain-big 0 0 -- -XX:+UseSerialGC "${BIG[@]}"
jvm mode3-big 2048 999999 ENORMOUSTEXT_MODE=3 LD_PRELOAD="$PRE" -- -XX:+UseSerialGC "${BIG[@]}"

if command -v node >/dev/null; then
	W=$IT_SOURCE_DIR/bench/run.d/node-work.js
	[ -f "$W" ] || fail "$W is missing"
	for v in plain mode3; do
		envs=()
		[ $v = mode3 ] && envs=(ENORMOUSTEXT_MODE=3 LD_PRELOAD="$PRE")
		env "${envs[@]}" node "$W" 60 >"$D/node-$v.out" 2>"$D/node-$v.err" &
		p=$!
		sleep 2
		code=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { split($1, a, "-"); on = ($2 ~ /x/ && $6 == ""); next }
			on && /^Size:/ { s += $2 } on && /^AnonHugePages:/ { h += $2 } END { printf "%d kB, %d kB huge", s, h }' "/proc/$p/smaps" 2>/dev/null)
		wait "$p" || fail "node ($v) exited $?: $(head -3 "$D/node-$v.err")"
		echo "-- node $v: executable anonymous memory $code; $(cat "$D/node-$v.out")"
		[ -s "$D/node-$v.err" ] && fail "node ($v): stderr not empty: $(head -3 "$D/node-$v.err")"
	done
	[ "$(cut -d' ' -f2 "$D/node-plain.out")" = "$(cut -d' ' -f2 "$D/node-mode3.out")" ] ||
		fail "node's checksum differs with mode 3: $(cat "$D/node-plain.out") vs $(cat "$D/node-mode3.out")"
else
	echo "-- node: not installed here (Debian: nodejs): the Node check is not run"
fi
pass
