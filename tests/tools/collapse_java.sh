#!/bin/bash
# tool_collapse_java — `collapse --jit` on a real JIT: a running OpenJDK
# whose compiled code sits in its code cache (anonymous rwx memory, on small
# pages: THP madvise and no -XX:+UseTransparentHugePages).  From outside,
# with no restart and no flag to the JVM, the command collapses the code
# cache's touched windows: smaps, read here, shows AnonHugePages on the
# code cache go from 0 to at least one huge page, the command's figure is
# smaps', and the program computes what it computed before (the same sum
# on every pass, before and after the collapse).  One code cache of 16 MiB
# (-XX:-SegmentedCodeCache -XX:InitialCodeCacheSize=16m), so that it holds
# whole 2 MiB windows whatever the JVM's layout.  Needs java and javac
# (openjdk-17-jdk-headless; tools/run-tests installs it).
. "$(dirname "$0")/lib.sh"

command -v java >/dev/null && command -v javac >/dev/null ||
	skip "no java/javac here (Debian: openjdk-17-jdk-headless): the JIT check needs a JVM"

cat >"$W/Spin.java" <<'JAVA'
import java.nio.file.*;
public class Spin {
	static long work(int n) { long s = 0; for (int i = 0; i < n; i++) s += (i ^ (i >>> 3)) % 7; return s; }
	public static void main(String[] a) throws Exception {
		Path stop = Paths.get(a[0]);
		long first = work(20000000), passes = 1;
		while (!Files.exists(stop)) {
			if (work(20000000) != first) { System.out.println("WRONG after " + passes + " passes"); System.exit(1); }
			passes++;
		}
		for (int k = 0; k < 20; k++)
			if (work(20000000) != first) { System.out.println("WRONG after the collapse"); System.exit(1); }
		System.out.println("sum " + first + ": the same on every pass");
	}
}
JAVA
(cd "$W" && javac Spin.java) >"$W/javac.out" 2>&1 || fail "javac failed: $(head -3 "$W/javac.out")"
java -XX:-SegmentedCodeCache -XX:InitialCodeCacheSize=16m -cp "$W" Spin "$W/stop" >"$W/java.out" 2>&1 &
J=$!
PIDS+=("$J")

# the code cache: the rwx anonymous mapping; its AnonHugePages
cache_kb() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { on = ($2 == "rwxp" && $6 == ""); if (on) r = $1; next }
		on && /^AnonHugePages:/ { kb += $2 } END { print kb + 0 }' "/proc/$J/smaps"
}
cache_range() { awk '$2 == "rwxp" && $6 == "" { print $1; exit }' "/proc/$J/maps"; }
for _ in $(seq 100); do
	[ -n "$(cache_range 2>/dev/null)" ] && break
	kill -0 "$J" 2>/dev/null || fail "java exited early: $(head -3 "$W/java.out")"
	sleep 0.1
done
R=$(cache_range)
[ -n "$R" ] || fail "no rwx anonymous mapping (code cache) in java's maps after 10 s"
sleep 2   # let the JIT compile the loop
before=$(cache_kb)
[ "$before" -eq 0 ] || skip "java's code cache is on huge pages already ($before kB): nothing to show"

t jit -- "$TOOL" collapse --jit --json "$J"
[ "$RC" -le 1 ] || fail "collapse --jit exited $RC: $(head -3 "$OUT")"
json "$OUT"
after=$(cache_kb)
[ "$after" -ge 2048 ] || fail "java's code cache $R: $after kB AnonHugePages after collapse --jit (want >= 2048): $(head -c 600 "$OUT")"
lo=0x${R%-*}
i=$(jindex "$OUT.flat" '.processes[0].ranges' start "$lo")
[ -n "$i" ] || fail "--json names no range starting at $lo (the code cache)"
said=$(jneed "$OUT.flat" ".processes[0].ranges[$i].huge_after")
[ "$said" = $((after * 1024)) ] || fail "the command says $said bytes huge in the code cache, smaps $after kB"

touch "$W/stop"
wait "$J"
jrc=$?
[ "$jrc" = 0 ] || fail "java exited $jrc after the collapse: $(tail -3 "$W/java.out")"
grep -q 'the same on every pass' "$W/java.out" || fail "java's results: $(tail -3 "$W/java.out")"
note "OpenJDK code cache $R: AnonHugePages 0 -> $after kB from outside (collapse --jit, exit $RC); $(cat "$W/java.out")"
pass
