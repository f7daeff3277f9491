#!/bin/bash
# pmu-device.sh — one prepared run on a machine with a hardware PMU (issue
# #33 point 6): the real iTLB counts of the synthetic probe and of a
# compiler, plain and with the library, to set beside the model's counts of
# the same runs (made on the development machine, where Valgrind is).
#
#   bench/itlb/pmu-device.sh CARRY OUT
#
# CARRY holds binaries built on the development machine (x86-64, glibc
# 2.34 or later): bin/enormoustext, lib/ (libenormoustext.so.0 and the
# command's libelf, protobuf-c, zlib), bench/synth64.tgz (synth64 and
# libsynth64.so, the demo's 64 MiB-text probe) and bench/itlb_pages.  OUT
# gets at most 8 files:
#   facts.txt    the machine: kernel, CPU, virtualisation, perf's PMUs and
#                perf_event_paranoid, which tools it has;
#   true.json    `compare --counters pmu -- true`: do the counters open;
#   synth.json   `compare --counters pmu` of synth64 with 2,000,000 random
#                calls (the demo's modelled run), 3 pairs, ENORMOUSTEXT_DEFER=0;
#   cc.json      the same of a compile of bench/zero-copy.d/work.cpp with
#                clang++ where it is installed, else g++;
#   validate.txt pmu-validate.sh where perf and valgrind are installed, else
#                why not;
#   *.err        what each command said.
# The counts are user-space counts of the whole process tree (compare's own
# perf_event_open: the generic iTLB read-miss event, and Intel's
# itlb_misses.walk_completed or AMD's bp_l1_tlb_miss_l2_tlb_miss).
set -u
C=$(cd "$1" && pwd) O=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$O"
export LD_LIBRARY_PATH=$C/lib
T=$C/bin/enormoustext
L=$C/lib/libenormoustext.so.0
w=$(mktemp -d)
{
	echo "== uname"; uname -a
	echo "== os"; head -4 /etc/os-release 2>/dev/null
	echo "== cpu"; grep -m1 -E '^model name' /proc/cpuinfo; grep -m1 -E '^vendor_id|^cpu family' /proc/cpuinfo
	grep -m1 -E '^cpu family' /proc/cpuinfo; grep -m1 -E '^model\s' /proc/cpuinfo
	grep -m1 -o -w hypervisor /proc/cpuinfo || echo "no hypervisor flag"
	echo "nproc $(nproc)"
	echo "== perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
	echo "== PMUs: $(ls /sys/bus/event_source/devices/ 2>/dev/null | tr '\n' ' ')"
	echo "== THP enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
	echo "== tools:"; for t in perf valgrind clang++ g++ cc cmake; do printf '%s: %s\n' "$t" "$(command -v $t || echo none)"; done
	echo "== glibc: $(ldd --version 2>&1 | head -1)"
	echo "== the command: $("$T" --version 2>&1)"
} >"$O/facts.txt" 2>&1
cat "$O/facts.txt"

"$T" compare --runs 1 --warmup 0 --counters pmu --json --lib "$L" -- true >"$O/true.json" 2>"$O/true.err"
echo "== true: rc $?"; cat "$O/true.err"

(cd "$w" && tar xzf "$C/bench/synth64.tgz") || echo "cannot unpack synth64"
ENORMOUSTEXT_DEFER=0 "$T" compare --runs 3 --counters pmu --json --lib "$L" -- "$w/synth64" 2000000 >"$O/synth.json" 2>"$O/synth.err"
echo "== synth64: rc $?"; grep -E '"(time_ratio|itlb_ratio|source|itlb_misses|walks|instructions|verdict)"' "$O/synth.json"; tail -3 "$O/synth.err"

cxx=$(command -v clang++ || command -v g++ || true)
if [ -n "$cxx" ]; then
	ENORMOUSTEXT_DEFER=0 "$T" compare --runs 3 --counters pmu --json --lib "$L" -- \
		"$cxx" -std=c++17 -O2 -c "$here/../zero-copy.d/work.cpp" -o "$w/work.o" >"$O/cc.json" 2>"$O/cc.err"
	echo "== $cxx: rc $?"; grep -E '"(time_ratio|itlb_ratio|source|itlb_misses|walks|instructions|verdict)"' "$O/cc.json"
else
	echo "no clang++ or g++ on this machine" >"$O/cc.err"
fi

if command -v perf >/dev/null && command -v valgrind >/dev/null; then
	"$here/pmu-validate.sh" --itlb "$C/bench/itlb" --pages "$C/bench/itlb_pages" >"$O/validate.txt" 2>&1
else
	echo "pmu-validate.sh not run: perf $(command -v perf || echo missing), valgrind $(command -v valgrind || echo missing) (it runs the model beside the counters)" >"$O/validate.txt"
fi
cat "$O/validate.txt"
rm -rf "$w"
