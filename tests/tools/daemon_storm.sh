#!/bin/bash
# tool_daemon_storm — a storm of short programs under the daemon: as many
# runs as the machine can start for 30 s (one loop per CPU, each run
# starting as the last ends) of a static program with 4 MiB of text (two
# windows, enormous.ld), which compares its own mapped text with the file's
# bytes (pread of /proc/self/exe) and says whether its text is huge.
# Before it, the daemon (--only this test's directory, --recheck 5s) runs.
# Shown:
#   - every run read its text as the file has it (a run whose bytes differ
#     exits 3) and exited 0;
#   - the daemon lived through it and ends with status 0 on SIGTERM;
#   - its CPU over the storm (utime + stime of /proc/PID/stat) is under
#     2% of all the CPUs' time over the storm (which keeps every CPU busy);
#   - the program's windows, held small by one run or another all along,
#     are not given up on: primed within 15 s of the storm's end (the
#     daemon polls the pidfds of the processes that hold them, and tries
#     held windows again at least every 8 s), and the run after is huge.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "the daemon needs root (fanotify on the filesystem)"
need_huge_folios

mkdir -p "$W/run" "$W/state"
cat >"$W/storm.c" <<'EOF'
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
__asm__(".text\n.globl storm_pad\nstorm_pad:\n.fill 4194304, 1, 0xcc\n");
/* exit 0: the executable segment as mapped equals the file's bytes (and
 * "huge KB" on stdout: its text mapped huge); 3: they differ; 4: cannot tell */
int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	size_t n = getauxval(AT_PHNUM);
	int fd = open("/proc/self/exe", O_RDONLY);
	if (!ph || fd < 0)
		return 4;
	for (size_t i = 0; i < n; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		char *buf = malloc(ph[i].p_filesz);
		if (!buf || pread(fd, buf, ph[i].p_filesz, (off_t)ph[i].p_offset) != (ssize_t)ph[i].p_filesz)
			return 4;
		if (memcmp(buf, (const void *)ph[i].p_vaddr, ph[i].p_filesz))
			return 3;
		free(buf);
	}
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	long kb = 0, v;
	int x = 0;
	while (f && fgets(line, sizeof line, f)) {
		char perm[8];
		unsigned long a, b;
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) == 3)
			x = perm[2] == 'x';
		else if (x && sscanf(line, "FilePmdMapped: %ld", &v) == 1)
			kb += v;
	}
	printf("huge %ld\n", kb);
	return 0;
}
EOF
"$TT_CC" -O1 -static -o "$W/run/storm" "$W/storm.c" -Wl,-T,"$TT_SRC/../../linker-scripts/enormous.ld" \
	-Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code 2>"$W/storm.log" ||
	skip "no static C library to link the storm's program with: $(head -2 "$W/storm.log")"
sync "$W/run/storm"
et_drop_cache "$W/run/storm"
"$W/run/storm" >"$W/first.out" || fail "the storm's program fails on its own (status $?)"
note "the program alone, before the daemon: $(sed -n "s/^huge //p" "$W/first.out") kB of its text huge"

"$TOOL" daemon --only "$W/run" --state "$W/state" --delay 100ms --recheck 5s --verbose >/dev/null 2>"$W/d.err" </dev/null &
DP=$!
PIDS+=("$DP")
wait_line "$W/d.err" 'watching [0-9]+ filesystems?' 10 "$DP" || fail "the daemon did not start: $(cat "$W/d.err")"
cpu_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
ticks() { awk '{ print $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat | head -1; }

d0=$(cpu_of "$DP") c0=$(ticks)
end=$(($(et_now_us) + 30000000))
storm() {  # OUT: run the program until the end, one line per run: its status and its huge kB
	local rc out
	while [ "$(et_now_us)" -lt "$end" ]; do
		out=$("$W/run/storm")
		rc=$?
		echo "$rc ${out#huge }"
	done >"$1"
}
loops=()
for ((i = 0; i < $(nproc); i++)); do
	storm "$W/loop.$i" &
	loops+=($!)
done
wait "${loops[@]}"
d1=$(cpu_of "$DP") c1=$(ticks)
kill -0 "$DP" 2>/dev/null || fail "the daemon died during the storm: $(tail -3 "$W/d.err")"
cat "$W"/loop.* >"$W/runs"
runs=$(wc -l <"$W/runs")
bad=$(awk '$1 != 0' "$W/runs" | wc -l)
huge=$(awk '$1 == 0 && $2 > 0' "$W/runs" | wc -l)
share=$(awk -v d=$((d1 - d0)) -v c=$((c1 - c0)) 'BEGIN { printf "%.2f", c ? 100 * d / c : 0 }')
note "storm: $runs runs in 30 s on $(nproc) CPUs, $bad failed, $huge with their text huge; the daemon's CPU $((d1 - d0)) ticks of $((c1 - c0)) ($share%)"
[ "$runs" -ge 100 ] || fail "only $runs runs in 30 s: no storm"
[ "$bad" = 0 ] || fail "$bad runs read text that differs from the file, or failed: $(awk '$1 != 0' "$W/runs" | sort | uniq -c | head -3)"
awk -v s="$share" 'BEGIN { exit !(s < 2) }' || fail "the daemon took $share% of the CPU time during the storm (2% at most)"

# after the storm: the windows primed once their last holder has ended
wait_line "$W/d.err" "$W/run/storm: primed \(([0-9]+) of \1 windows" 15 "$DP" ||
	fail "the program was not primed within 15 s of the storm's end: $(tail -3 "$W/d.err"); $(grep -A9 '"path"' "$W/state/daemon.json" | tr -d '\n ')"
grep -q "$W/run/storm: gave up" "$W/d.err" && fail "the daemon gave up on the program during the storm: $(grep 'gave up' "$W/d.err")"
"$W/run/storm" >"$W/after.out" || fail "the run after the storm failed (status $?)"
note "the run after the storm: $(sed -n "s/^huge //p" "$W/after.out") kB of its text huge"
[ "$(sed -n 's/^huge //p' "$W/after.out")" -ge 4096 ] || fail "the run after the storm is not huge: $(cat "$W/after.out")"
kill -TERM "$DP"
wait_until 10 bash -c "! kill -0 $DP 2>/dev/null" || fail "the daemon did not end within 10 s of SIGTERM"
rc=0
wait "$DP" || rc=$?
[ "$rc" = 0 ] || fail "the daemon ended with status $rc"
pass
