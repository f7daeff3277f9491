#!/bin/bash
# test.sh — itlbgrind against known answers.
#
#   test.sh --itlb BUILD/bench/itlb/itlb --pages PATH/itlb_pages --json-flat PATH/json_flat
#           [--datamix PATH/itlb_datamix]
#           [--lib libenormoustext.so --bigtext PATH/bigtext --libbigtext PATH/libbigtext.so]
#
# 1. itlb_pages runs a loop over exactly N code pages (stride S, on 4 KiB or
#    on 2 MiB pages) and takes snapshots (ITLBGRIND_SNAPSHOT) that isolate
#    10 steady-state iterations (with threads: two runs, of 10 and of 20
#    iterations, are subtracted); that must equal, exactly, what the
#    documented geometry of each model gives for that page sequence under
#    LRU (computed here, independently of the tool: a set holding more
#    pages of the loop than it has ways misses on every one of them, a set
#    holding no more hits; the second level sees only the first level's
#    misses).  N runs below and above each array's capacity and
#    associativity; instructions must be 10 * (N + 3) per thread.  These
#    runs leave data translations out (--data=no): on a core whose second
#    level is shared, the program's own loads and stores between
#    snapshots would take entries of a set the loop fills exactly.  Every
#    core of --model=all is checked, Arm's included.
# 2. The same with the page sizes read from smaps instead of PAGEMAP_SCAN,
#    and with page sizes ignored (--huge-source=none), which must give the
#    4 KiB answer for code that is on 2 MiB pages (the test can fail).
# 3. Threads (one empty TLB per thread), fork (one record per process),
#    exec (a record per image, appended to the same file), valid JSON.
# 4. --snapshot-file (built here with CC, else cc: a program that waits
#    for the test between loops): a snapshot record labelled with the file's
#    first line each time the test rewrites it, none for the file as it was
#    at the start, none without the option, a forked child not reporting
#    again what its parent did; the wrapper's short spellings --json,
#    --model NAME, --per-object (all 16 libraries of a program listed),
#    --children.
# 5. With --lib/--bigtext: bigtext plain and with libenormoustext.so
#    preloaded, twice each: identical counts run to run, the plain text on
#    4 KiB pages, the preloaded windows seen as 2 MiB pages, fewer misses.
# 5b. With --datamix: data translations.  itlb_datamix calls 6 MiB of
#    code (1536 4 KiB pages) at random, alone and with a random read of
#    256 MiB of 4 KiB data pages per call.  Golden Cove (a 2048-entry STLB
#    shared with data) must walk for code rarely without the data (at most
#    2% of calls) and several-fold more with it (at least 3x, and at least
#    20% of calls); Zen 4 (a 512-entry L2 iTLB of its own) walks for code
#    on about two calls in three either way, within 5%; every core misses
#    its L1 dTLB on at least 90% of the data reads; with --data=no the
#    same data run gives Golden Cove the code walks of the run without
#    data (the rise is the data model's).  The data arrays reported must be
#    the documented ones.
# 6. payback on hand-made records and a report whose answers are worked out
#    here: the cycles saved (each model at the costs in its estimate_basis),
#    the move's cycles at --ghz, when it pays back; an object not moved not
#    listed, one that saved nothing 'never'; bad input exits 2 naming the file.
# Exit 0 = all passed, 1 = a check failed, 2 = bad usage, 77 = cannot run here.
set -u
# the text moved before main (the default deferral would move it 1 s in),
# as copies every run (not primed into zero-copy by an earlier run)
export ENORMOUSTEXT_DEFER=0 ENORMOUSTEXT_PRIME=0

ITLB= PAGES= JSON_FLAT= LIB= BIGTEXT= LIBBIGTEXT= DATAMIX=
while (($#)); do
	case $1 in
	--itlb) ITLB=$2; shift 2 ;;
	--pages) PAGES=$2; shift 2 ;;
	--json-flat) JSON_FLAT=$2; shift 2 ;;
	--datamix) DATAMIX=$2; shift 2 ;;
	--lib) LIB=$2; shift 2 ;;
	--bigtext) BIGTEXT=$2; shift 2 ;;
	--libbigtext) LIBBIGTEXT=$2; shift 2 ;;
	*) echo "test.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
[[ -x $ITLB && -x $PAGES && -x $JSON_FLAT ]] || { echo "test.sh: --itlb, --pages and --json-flat are needed" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "test.sh: SKIP: valgrind is not installed"; exit 77; }

tmp=$(mktemp -d /tmp/itlb-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failures=0 checks=0 skips=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { checks=$((checks + 1)); }

# The cited geometry of each model (itlb_model.h): L1 4K sets ways, L1 2M
# sets ways, L2 sets ways, L2 ways a 2M entry may take.  A core with one L1
# array for both page sizes repeats it.
MODELS="goldencove 32 8 1 32 128 16 8
zen4 1 64 1 64 64 8 8
zen3 1 64 1 64 64 8 8
skylake 16 8 1 8 128 12 12
neoverse-n1 1 48 1 48 256 5 5
neoverse-v1 1 48 1 48 256 8 8
neoverse-v2 1 48 1 48 256 8 8"
# The data side (itlb_model.h): L1 dTLB 4K sets ways, 2M sets ways (the
# same again for one array), the second level's sets ways, and whether it
# is the one shared with instructions.
DMODELS="goldencove 16 6 8 4 128 16 true
zen4 1 72 1 72 128 24 false
zen3 1 64 1 64 128 16 false
skylake 16 4 8 4 128 12 true
neoverse-n1 1 48 1 48 256 5 true
neoverse-v1 1 48 1 48 256 8 true
neoverse-v2 1 48 1 48 256 8 true"
# One L1 array for both page sizes.
single_l1() { [[ $1 == zen* || $1 == neoverse-* ]]; }

# flat FILE: validate FILE as JSON and write FILE.flat (PATH TAB TYPE TAB VALUE).
flat() {
	"$JSON_FLAT" "$1" > "$1.flat" 2> "$1.err" || { fail "$1 is not valid JSON: $(cat "$1.err")"; return 1; }
}
# jv FILE PATH: a value from FILE.flat.
jv() { awk -F'\t' -v k="$2" '$1 == k { print $3; exit }' "$1.flat"; }
# model_index FILE NAME
model_index() { awk -F'\t' -v n="$2" '$1 ~ /^\.models\[[0-9]+\]\.name$/ && $3 == n { sub(/^\.models\[/, "", $1); sub(/\].*/, "", $1); print $1; exit }' "$1.flat"; }

# expected N STRIDE HUGE BASE THREADS: "model l1 walks" per model, per iteration.
expected() {
	echo "$MODELS" | awk -v n="$1" -v stride="$2" -v huge="$3" -v b4="$4" -v threads="$5" '
	{
		m = 0; st4 = stride / 4096; delete seq
		for (k = 0; k < n; k++) {
			v = b4 + k * st4
			if (huge) { v = int(v / 512); if (m > 0 && seq[m - 1] == v) continue }
			seq[m++] = v
		}
		if (huge && m > 1 && seq[m - 1] == seq[0]) m--
		s1 = huge ? $4 : $2; w1 = huge ? $5 : $3; w2 = huge ? $8 : $7
		delete c1; delete c2; delete miss
		for (i = 0; i < m; i++) c1[seq[i] % s1]++
		l1 = 0; mm = 0
		for (i = 0; i < m; i++) if (c1[seq[i] % s1] > w1) { l1++; miss[mm++] = seq[i] }
		for (i = 0; i < mm; i++) c2[miss[i] % $6]++
		walks = 0
		for (i = 0; i < mm; i++) if (c2[miss[i] % $6] > w2) walks++
		print $1, l1 * threads, walks * threads
	}'
}

# The geometry the tool reports must be the one above.
check_geometry() {
	local f=$1 name s1 w1 s2 w2 s3 w3 w3h i
	while read -r name s1 w1 s2 w2 s3 w3 w3h; do
		i=$(model_index "$f" "$name")
		[[ -n $i ]] || { fail "model $name missing from the record"; continue; }
		local got="$(jv "$f" ".models[$i].l1[0].sets") $(jv "$f" ".models[$i].l1[0].ways")"
		local want="$s1 $w1"
		if ! single_l1 "$name"; then
			got+=" $(jv "$f" ".models[$i].l1[1].sets") $(jv "$f" ".models[$i].l1[1].ways")"
			want+=" $s2 $w2"
		fi
		got+=" $(jv "$f" ".models[$i].l2.sets") $(jv "$f" ".models[$i].l2.ways") $(jv "$f" ".models[$i].l2.ways_2m")"
		want+=" $s3 $w3 $w3h"
		[[ $got == "$want" ]] && ok || fail "$name geometry reported as '$got', documented '$want'"
	done <<< "$MODELS"
	local d1s d1w d2s d2w dls dlw shared
	while read -r name d1s d1w d2s d2w dls dlw shared; do
		i=$(model_index "$f" "$name")
		[[ -n $i ]] || continue
		local got="$(jv "$f" ".models[$i].data_l1[0].sets") $(jv "$f" ".models[$i].data_l1[0].ways")"
		local want="$d1s $d1w"
		if ! single_l1 "$name"; then
			got+=" $(jv "$f" ".models[$i].data_l1[1].sets") $(jv "$f" ".models[$i].data_l1[1].ways")"
			want+=" $d2s $d2w"
		fi
		got+=" $(jv "$f" ".models[$i].data_l2.sets") $(jv "$f" ".models[$i].data_l2.ways") $(jv "$f" ".models[$i].data_l2_shared")"
		want+=" $dls $dlw $shared"
		[[ $got == "$want" ]] && ok || fail "$name data geometry reported as '$got', documented '$want'"
	done <<< "$DMODELS"
}

# pages_run OUT ARGS...: one run of itlb_pages under itlbgrind (its options
# in TOOLOPT); prints the exit status.
TOOLOPT=()
pages_run() {
	local out=$1
	shift
	rm -f "$out"
	"$ITLB" -q --model=all --json=yes --data=no --out="$out" ${TOOLOPT[@]+"${TOOLOPT[@]}"} "$PAGES" "$@" \
		> "$out.stdout" 2> "$out.stderr"
	echo $?
}

# The difference of 10 steady-state iterations, from one run's snapshots
# ((c - b) - (b - a): itlb_pages --snapshots) or, with threads, from two
# runs of 10 and 20 iterations.  MEASURE holds the record files.
MEASURE=()
delta() {
	local key=$1
	if ((${#MEASURE[@]} == 3)); then
		local a b c
		a=$(jv "${MEASURE[0]}" "$key") b=$(jv "${MEASURE[1]}" "$key") c=$(jv "${MEASURE[2]}" "$key")
		echo $(( (c - b) - (b - a) ))
	else
		echo $(( $(jv "${MEASURE[1]}" "$key") - $(jv "${MEASURE[0]}" "$key") ))
	fi
}

# check_measure NAME HUGE N STRIDE BASE THREADS: compare MEASURE with
# the expectation.
check_measure() {
	local name=$1 ehuge=$2 n=$3 stride=$4 base=$5 threads=$6
	local di=$(delta .instructions)
	local want_i=$(( 10 * (n + 3) * threads ))
	if ((threads == 1)); then
		[[ $di == "$want_i" ]] && ok || fail "$name: instructions for 10 iterations $di, expected $want_i"
	else
		# With threads, pthread_create and pthread_join take a few dozen to a
		# few hundred instructions more or less from run to run (whether the
		# joined thread has finished yet): the process total is not exact.
		# The generated loop is the only anonymous code, so its own object
		# ("[anon]") must be exact; the misses below are exact too (each
		# thread has its own TLB).
		local j0 j1 da
		j0=$(awk -F'\t' '$1 ~ /^\.objects\[[0-9]+\]\.name$/ && $3 == "[anon]" { sub(/^\.objects\[/, "", $1); sub(/\].*/, "", $1); print $1; exit }' "${MEASURE[0]}.flat")
		j1=$(awk -F'\t' '$1 ~ /^\.objects\[[0-9]+\]\.name$/ && $3 == "[anon]" { sub(/^\.objects\[/, "", $1); sub(/\].*/, "", $1); print $1; exit }' "${MEASURE[1]}.flat")
		da=$(( $(jv "${MEASURE[1]}" ".objects[$j1].instructions") - $(jv "${MEASURE[0]}" ".objects[$j0].instructions") ))
		echo "  $name: instructions for 10 iterations: the loop's object $da (expected $want_i), the process $di"
		[[ $da == "$want_i" ]] && ok || fail "$name: the loop's object ran $da instructions in 10 iterations, expected $want_i"
	fi
	local model el1 ewalks i dl1 dw
	while read -r model el1 ewalks; do
		i=$(model_index "${MEASURE[0]}" "$model")
		dl1=$(delta ".models[$i].itlb_misses")
		dw=$(delta ".models[$i].stlb_misses")
		printf '  %-22s %-10s L1 misses/iteration %6s expected %6s   walks/iteration %6s expected %6s\n' \
		       "$name" "$model" "$((dl1 / 10))" "$el1" "$((dw / 10))" "$ewalks"
		[[ $dl1 == $((10 * el1)) && $dw == $((10 * ewalks)) ]] && ok ||
			fail "$name $model: 10 iterations gave $dl1 L1 misses and $dw walks, expected $((10 * el1)) and $((10 * ewalks))"
	done < <(expected "$n" "$stride" "$ehuge" "$(( base >> 12 ))" "$threads")
}

# case_pages NAME HUGE N STRIDE ARGS...: the known-answer check.  HUGE: 0
# (expect 4 KiB pages), 1 (2 MiB pages), collapse (the loop on 4 KiB pages,
# then on 2 MiB pages after MADV_COLLAPSE, each checked).  Exit 3 from
# itlb_pages (the kernel did not give the pages asked for: no free huge
# page, a transient MADV_COLLAPSE failure) is tried again, then skipped.
case_pages() {
	local name=$1 ehuge=$2 n=$3 stride=$4
	shift 4
	local threads=1 prev= a
	for a in "$@"; do [[ $prev == --threads ]] && threads=$a; prev=$a; done
	local r="$tmp/$name" rc rc2 attempt
	for attempt in 1 2 3; do
		if ((threads == 1)); then
			rc=$(pages_run "$r.json" --pages "$n" --stride "$stride" --iters 10 --snapshots "$@")
		else
			rc=$(pages_run "$r.10.json" --pages "$n" --stride "$stride" --iters 10 "$@")
			[[ $rc == 0 ]] && rc=$(pages_run "$r.20.json" --pages "$n" --stride "$stride" --iters 20 "$@")
		fi
		[[ $rc == 3 ]] || break
	done
	local out=$r.json
	((threads == 1)) || out=$r.10.json
	if [[ $rc == 3 ]]; then
		echo "skip: $name: $(grep itlb_pages "$out.stderr" | tail -1)"
		skips=$((skips + 1))
		return
	fi
	[[ $rc == 0 ]] || { fail "$name: itlb_pages exited $rc: $(tail -3 "$out.stderr")"; return; }
	local base
	base=$(sed -n 's/.*code at \(0x[0-9a-f]*\).*/\1/p' "$out.stdout")
	[[ -n $base ]] || { fail "$name: no code address in the output"; return; }
	if ((threads == 1)); then
		# One record per line: the snapshots, then the exit record.
		local k=0 line
		while IFS= read -r line; do
			k=$((k + 1))
			printf '%s\n' "$line" > "$r.rec$k.json"
			flat "$r.rec$k.json" || return
		done < "$r.json"
		if [[ $ehuge == collapse ]]; then
			((k == 7)) || { fail "$name: $k records, expected 6 snapshots and the exit"; return; }
			MEASURE=("$r.rec1.json" "$r.rec2.json" "$r.rec3.json")
			check_measure "$name-before" 0 "$n" "$stride" "$base" 1
			MEASURE=("$r.rec4.json" "$r.rec5.json" "$r.rec6.json")
			check_measure "$name-after" 1 "$n" "$stride" "$base" 1
		else
			((k == 4)) || { fail "$name: $k records, expected 3 snapshots and the exit"; return; }
			[[ $(jv "$r.rec1.json" .label) == loop-a && $(jv "$r.rec4.json" .ended) == exit ]] && ok ||
				fail "$name: the records are not loop-a, loop-b, loop-c, exit"
			MEASURE=("$r.rec1.json" "$r.rec2.json" "$r.rec3.json")
			check_measure "$name" "$ehuge" "$n" "$stride" "$base" 1
		fi
	else
		flat "$r.10.json" && flat "$r.20.json" || return
		MEASURE=("$r.10.json" "$r.20.json")
		check_measure "$name" "$ehuge" "$n" "$stride" "$base" "$threads"
	fi
	check_geometry_once "$r.rec1.json"
}

geometry_checked=0
check_geometry_once() {
	((geometry_checked)) && return
	[[ -f $1.flat ]] || return
	geometry_checked=1
	check_geometry "$1"
}

echo "== known answers: N code pages in a loop, per steady-state iteration"
K=4096 M=$((2 << 20)) G=$((256 << 20))
case_pages small-64 0 64 $K
case_pages small-65 0 65 $K
case_pages small-257 0 257 $K
case_pages small-1024 0 1024 $K
case_pages small-2048 0 2048 $K
case_pages small-4096 0 4096 $K
case_pages small-17x2M 0 17 $M
case_pages huge-4096 1 4096 $K --backing huge
case_pages huge-72x2M 1 72 $M --backing huge
case_pages huge-33x256M 1 33 $G --backing huge
echo "== the page size changing under the program (MADV_COLLAPSE after the first loop)"
case_pages collapse-4096 collapse 4096 $K --backing collapse
echo "== page sizes from smaps + kpageflags instead of PAGEMAP_SCAN, and page sizes ignored"
TOOLOPT=(--huge-source=smaps)
case_pages huge-4096-smaps 1 4096 $K --backing huge
# Negative control: told nothing about page sizes, the tool must give the
# 4 KiB answer for the same huge-backed code (so the huge cases above do
# depend on what the kernel mapped).
TOOLOPT=(--huge-source=none)
case_pages huge-4096-ignored 0 4096 $K --backing huge
TOOLOPT=()

echo "== threads, fork, exec, dlopen"
# Three threads one after the other: each starts with an empty TLB.
case_pages threads-3x512 0 512 $K --threads 3

# fork: the child's record counts from the fork, with an empty TLB.
fork_run() {
	rm -f "$tmp"/fork$1.*.json
	"$ITLB" -q --model=all --json=yes --data=no --out="$tmp/fork$1.%p.json" "$PAGES" --iters "$1" --pages 1024 --fork \
		> "$tmp/fork$1.stdout" 2> "$tmp/fork$1.stderr" || { fail "fork run ($1 iterations) failed"; return 1; }
	local f n=0
	for f in "$tmp"/fork$1.*.json; do
		flat "$f" || return 1
		n=$((n + 1))
		if [[ $(jv "$f" .forked) == true ]]; then cp "$f" "$tmp/fork$1.child.json"; cp "$f.flat" "$tmp/fork$1.child.json.flat"
		else cp "$f" "$tmp/fork$1.parent.json"; cp "$f.flat" "$tmp/fork$1.parent.json.flat"; fi
	done
	[[ $n == 2 ]] || { fail "fork run: $n records, expected 2 (parent and child)"; return 1; }
}
if fork_run 10 && fork_run 20; then
	for who in parent child; do
		a="$tmp/fork10.$who.json" b="$tmp/fork20.$who.json"
		for model in goldencove zen4 skylake neoverse-n1; do
			i=$(model_index "$a" "$model")
			d=$(( $(jv "$b" ".models[$i].itlb_misses") - $(jv "$a" ".models[$i].itlb_misses") ))
			want=$(expected 1024 $K 0 0 1 | awk -v m="$model" '$1 == m { print 10 * $2 }')
			printf '  fork-1024 %-6s %-10s L1 misses/iteration %6s expected %6s\n' "$who" "$model" "$((d / 10))" "$((want / 10))"
			[[ $d == "$want" ]] && ok || fail "fork $who $model: $d L1 misses for 10 iterations, expected $want"
		done
	done
	[[ $(jv "$tmp/fork10.child.json" .pid) != $(jv "$tmp/fork10.parent.json" .pid) ]] && ok || fail "fork: one pid for both records"
fi

# exec: one process, two images, two records appended to one file.
rm -f "$tmp"/exec.*.json
"$ITLB" -q --trace-children=yes --json=yes --out="$tmp/exec.%p.json" /bin/sh -c "exec '$PAGES' --pages 64 --iters 10" \
	> "$tmp/exec.stdout" 2> "$tmp/exec.stderr" || fail "exec run failed: $(tail -2 "$tmp/exec.stderr")"
files=("$tmp"/exec.*.json)
if [[ ${#files[@]} == 1 && -f ${files[0]} ]]; then
	f=${files[0]}
	n=$(wc -l < "$f")
	head -1 "$f" > "$tmp/exec1.json"
	tail -1 "$f" > "$tmp/exec2.json"
	if [[ $n == 2 ]] && flat "$tmp/exec1.json" && flat "$tmp/exec2.json"; then
		e1=$(jv "$tmp/exec1.json" .ended) e2=$(jv "$tmp/exec2.json" .ended)
		c2=$(jv "$tmp/exec2.json" .cmd) i2=$(jv "$tmp/exec2.json" .instructions)
		echo "  exec: records '$e1' ($(jv "$tmp/exec1.json" .cmd)) and '$e2' ($c2, $i2 instructions)"
		[[ $e1 == exec && $e2 == exit && $c2 == *itlb_pages && $i2 -gt $((10 * 67)) ]] && ok ||
			fail "exec: records ended '$e1' and '$e2', second command '$c2' with $i2 instructions"
	else
		fail "exec: $n records in $f, expected 2"
	fi
else
	fail "exec: ${#files[@]} record files, expected 1 (one pid)"
fi

# dlopen: a library loaded (and unloaded) at run time is an object of its own.
rm -f "$tmp/dl.json"
if "$ITLB" -q --json=yes --out="$tmp/dl.json" "$PAGES" --pages 8 --iters 10 --dlopen libm.so.6:cos \
	> "$tmp/dl.stdout" 2> "$tmp/dl.stderr" && flat "$tmp/dl.json"; then
	i=$(awk -F'\t' '$1 ~ /^\.objects\[[0-9]+\]\.name$/ && $3 ~ /\/libm\.so\.6$/ {
		sub(/^\.objects\[/, "", $1); sub(/\].*/, "", $1); print $1; exit }' "$tmp/dl.json.flat")
	n=${i:+$(jv "$tmp/dl.json" ".objects[$i].instructions")}
	echo "  dlopen: libm.so.6 object with ${n:-no} instructions"
	[[ -n $i && ${n:-0} -gt 1000 ]] && ok || fail "dlopen: no libm.so.6 object with instructions in the record"
else
	fail "dlopen run failed: $(tail -2 "$tmp/dl.stderr")"
fi

echo "== snapshots on request from outside (--snapshot-file), the wrapper's short options"
# Test programs built here with the C compiler (CC, else cc): snapwait runs
# a loop, marks where it is (DIR/at1, DIR/at2; the child of --fork DIR/at2c)
# and polls (nanosleep) for the test's go-ahead (DIR/go1, DIR/go2) between
# three loops of N iterations; manyobj calls into 16 shared libraries.
CC=${CC:-cc}
have_cc=0
if command -v "$CC" >/dev/null; then
	mkdir -p "$tmp/src"
	cat > "$tmp/src/snapwait.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void work(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i * 3;
}

static void path(char *p, size_t size, const char *dir, const char *name)
{
	snprintf(p, size, "%s/%s", dir, name);
}

static void mark(const char *dir, const char *name)
{
	char p[4096];
	path(p, sizeof p, dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(p);
		exit(2);
	}
	close(fd);
}

static void wait_for(const char *dir, const char *name)
{
	char p[4096];
	path(p, sizeof p, dir, name);
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	for (int k = 0; k < 12000; k++) {
		if (access(p, F_OK) == 0)
			return;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "snapwait: no %s after 120 s\n", p);
	exit(3);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: snapwait DIR N [--fork]\n");
		return 2;
	}
	const char *dir = argv[1];
	long n = atol(argv[2]);
	int do_fork = argc > 3 && strcmp(argv[3], "--fork") == 0;
	work(n);
	mark(dir, "at1");
	wait_for(dir, "go1");
	pid_t child = do_fork ? fork() : -1;
	work(n);
	mark(dir, child == 0 ? "at2c" : "at2");
	wait_for(dir, "go2");
	work(n);
	if (child > 0) {
		int st;
		if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 4;
	}
	return 0;
}
EOF
	{
		echo '#include <stdio.h>'
		for k in $(seq 16); do echo "int many$k(int);"; done
		echo 'int main(void) { int s = 0;'
		for k in $(seq 16); do echo "s += many$k(s);"; done
		echo 'printf("manyobj: %d\n", s); return 0; }'
	} > "$tmp/src/manyobj.c"
	have_cc=1
	"$CC" -O1 -o "$tmp/snapwait" "$tmp/src/snapwait.c" 2> "$tmp/cc.err" || have_cc=0
	libs=()
	for k in $(seq 16); do
		((have_cc)) || break
		echo "int many$k(int x) { int s = x; for (int i = 0; i < 100; i++) s = s * 7 + $k; return s; }" > "$tmp/src/many$k.c"
		"$CC" -O1 -shared -fPIC -o "$tmp/libmany$k.so" "$tmp/src/many$k.c" 2>> "$tmp/cc.err" || have_cc=0
		libs+=(-lmany$k)
	done
	((have_cc)) && { "$CC" -O1 -o "$tmp/manyobj" "$tmp/src/manyobj.c" -L"$tmp" "${libs[@]}" -Wl,-rpath,"$tmp" \
		2>> "$tmp/cc.err" || have_cc=0; }
	((have_cc)) || fail "the test programs did not build with $CC: $(tail -3 "$tmp/cc.err")"
else
	echo "skip: no C compiler ($CC): the --snapshot-file and --per-object checks are left out"
	skips=$((skips + 1))
fi

# wait_file PATH: up to 120 s for PATH to exist.
wait_file() {
	local k
	for k in $(seq 1200); do [[ -e $1 ]] && return 0; sleep 0.1; done
	return 1
}
# label_count DIR LABEL: records labelled LABEL in DIR/r.*.json.
label_count() { cat "$1"/r.*.json 2>/dev/null | grep -cF "\"label\":\"$2\"" || true; }
# wait_label DIR LABEL N: up to 120 s for N records labelled LABEL.
wait_label() {
	local k
	for k in $(seq 1200); do (( $(label_count "$1" "$2") >= $3 )) && return 0; sleep 0.1; done
	return 1
}
# records FILE STEM: one file per record (STEM.1.json, ...), flattened; prints their number.
records() {
	local k=0 line
	while IFS= read -r line; do
		k=$((k + 1))
		printf '%s\n' "$line" > "$2.$k.json"
		"$JSON_FLAT" "$2.$k.json" > "$2.$k.json.flat" 2> /dev/null || { echo "bad"; return; }
	done < "$1"
	echo $k
}

# snap_run NAME yes|no [--fork]: snapwait under the tool, with or without
# --snapshot-file=DIR/snap.  The file is there from the start ("stale": the
# baseline, no snapshot), is rewritten with "first label" while the program
# waits at at1 and with 'second\001label' CRLF and a second line at at2;
# the test waits for each snapshot record (with the option) before the
# go-ahead, so each one falls in its wait.
N=200000
snap_run() {
	local name=$1 opt=$2 fork=${3:-} d=$tmp/$1
	rm -rf "$d"
	mkdir -p "$d"
	echo stale > "$d/snap"
	local o=()
	[[ $opt == yes ]] && o=(--snapshot-file="$d/snap")
	"$ITLB" -q --json=yes --out="$d/r.%p.json" ${o[@]+"${o[@]}"} "$tmp/snapwait" "$d" $N $fork \
		> "$d/stdout" 2> "$d/stderr" &
	local pid=$! procs=1
	[[ -n $fork ]] && procs=2
	wait_file "$d/at1" || fail "$name: snapwait did not reach its first wait: $(tail -2 "$d/stderr")"
	echo "first label" > "$d/snap"
	if [[ $opt == yes ]]; then
		wait_label "$d" "first label" 1 || fail "$name: no snapshot 'first label' 120 s after the file was written"
	else
		sleep 1
	fi
	touch "$d/go1"
	wait_file "$d/at2" && { [[ -z $fork ]] || wait_file "$d/at2c"; } ||
		fail "$name: snapwait did not reach its second wait: $(tail -2 "$d/stderr")"
	printf 'second\001label\r\nnot the label\n' > "$d/snap"
	if [[ $opt == yes ]]; then
		wait_label "$d" "second?label" $procs || fail "$name: $(label_count "$d" "second?label") snapshots 'second?label' 120 s after the rewrite, expected $procs"
	else
		sleep 1
	fi
	touch "$d/go2"
	wait $pid || fail "$name: the run exited $?: $(tail -2 "$d/stderr")"
}

if ((have_cc)); then
	# One process: snapshots 'first label' and 'second?label', then the exit.
	snap_run snapfile yes
	d=$tmp/snapfile
	files=("$d"/r.*.json)
	if [[ ${#files[@]} == 1 && -f ${files[0]} ]] && n=$(records "${files[0]}" "$d/rec") && [[ $n == 3 ]]; then
		e="$(jv "$d/rec.1.json" .ended)/$(jv "$d/rec.1.json" .label) $(jv "$d/rec.2.json" .ended)/$(jv "$d/rec.2.json" .label) $(jv "$d/rec.3.json" .ended)"
		i1=$(jv "$d/rec.1.json" .instructions) i2=$(jv "$d/rec.2.json" .instructions) i3=$(jv "$d/rec.3.json" .instructions)
		echo "  snapshot-file: records $e; instructions $i1, $i2, $i3"
		[[ $e == "snapshot/first label snapshot/second?label exit" ]] && ok ||
			fail "snapshot-file: records '$e', expected 'snapshot/first label snapshot/second?label exit'"
		# The counters are not reset: each record holds the loops before it.
		[[ $i1 -ge $N && $i2 -ge $i1 && $((i2 - i1)) -ge $N && $((i3 - i2)) -ge $N ]] && ok ||
			fail "snapshot-file: instructions $i1, $i2, $i3 do not grow by the loop ($N iterations) between the records"
	else
		fail "snapshot-file: ${#files[@]} record files, ${n:-no} records; expected one file with 3 (two snapshots and the exit)"
	fi
	# Negative control: without the option the file is never read.
	snap_run snapfile-off no
	d=$tmp/snapfile-off
	files=("$d"/r.*.json)
	if [[ ${#files[@]} == 1 && -f ${files[0]} ]] && n=$(records "${files[0]}" "$d/rec") && [[ $n == 1 ]]; then
		[[ $(jv "$d/rec.1.json" .ended) == exit && -z $(jv "$d/rec.1.json" .label) ]] && ok ||
			fail "snapshot-file off: the one record is not the exit record"
	else
		fail "snapshot-file off: ${#files[@]} record files, ${n:-no} records; expected one file with the exit record only"
	fi
	# fork: the child reports 'second?label' but not 'first label', which
	# its parent reported before the fork.
	snap_run snapfile-fork yes --fork
	d=$tmp/snapfile-fork
	parent= child=
	for f in "$d"/r.*.json; do
		[[ -f $f ]] || continue
		n=$(records "$f" "$f.rec")
		if [[ $(jv "$f.rec.1.json" .forked) == true ]]; then child="$n"; cf=$f; else parent="$n"; pf=$f; fi
	done
	if [[ $parent == 3 && $child == 2 ]]; then
		e="$(jv "$pf.rec.1.json" .label) $(jv "$pf.rec.2.json" .label) $(jv "$pf.rec.3.json" .ended)"
		c="$(jv "$cf.rec.1.json" .label) $(jv "$cf.rec.2.json" .ended)"
		echo "  snapshot-file, fork: parent '$e', child '$c'"
		[[ $e == "first label second?label exit" && $c == "second?label exit" ]] && ok ||
			fail "snapshot-file, fork: parent records '$e', child '$c'; expected 'first label second?label exit' and 'second?label exit'"
	else
		fail "snapshot-file, fork: parent ${parent:-no} records, child ${child:-no}; expected 3 and 2"
	fi

	# --per-object: every object that ran is listed; by default 12 are.
	po() { # NAME OPTIONS...
		local out=$tmp/$1.txt
		shift
		rm -f "$out"
		"$ITLB" -q --out="$out" "$@" "$tmp/manyobj" > "$out.stdout" 2> "$out.stderr" || { fail "manyobj under the tool ($*) failed: $(tail -2 "$out.stderr")"; return 1; }
		grep -q '^manyobj:' "$out.stdout" || { fail "manyobj ($*) printed nothing"; return 1; }
	}
	if po po-default && po po-all --per-object; then
		nd=$(grep -c '/libmany[0-9]*\.so$' "$tmp/po-default.txt") na=$(grep -c '/libmany[0-9]*\.so$' "$tmp/po-all.txt")
		echo "  per-object: the 16 libraries listed by default $nd, with --per-object $na"
		[[ $nd -lt 16 ]] && grep -q 'more objects, see --objects=N' "$tmp/po-default.txt" && ok ||
			fail "per-object: by default $nd of the 16 libraries listed, and no '(N more objects, see --objects=N' line"
		[[ $na == 16 ]] && ! grep -q 'more objects, see --objects=N' "$tmp/po-all.txt" && ok ||
			fail "per-object: --per-object lists $na of the 16 libraries: $(grep -o '(.*more objects, see[^;]*' "$tmp/po-all.txt")"
	fi
fi

# The wrapper's short spellings: --json, --model NAME, --children.
alias_run() { # NAME OPTIONS... -- COMMAND...
	local out=$tmp/$1
	shift
	rm -f "$out".*
	"$ITLB" -q --out="$out.%p.json" "$@" > "$out.stdout" 2> "$out.stderr" || { fail "itlb $* failed: $(tail -2 "$out.stderr")"; return 1; }
}
if alias_run al-json --json "$PAGES" --pages 8 --iters 1; then
	f=$(ls "$tmp"/al-json.*.json | head -1)
	flat "$f" && [[ $(jv "$f" .tool) == itlbgrind && $(jv "$f" .model) == goldencove ]] && ok ||
		fail "itlb --json: the record is not JSON from itlbgrind with goldencove primary"
fi
for spelling in "--model zen4" "--model=zen4"; do
	# shellcheck disable=SC2086
	if alias_run al-model --json $spelling "$PAGES" --pages 8 --iters 1; then
		f=$(ls "$tmp"/al-model.*.json | head -1)
		flat "$f" && [[ $(jv "$f" .model) == zen4 && $(jv "$f" '.models[0].name') == zen4 && -z $(jv "$f" '.models[1].name') ]] && ok ||
			fail "itlb $spelling: primary model '$(jv "$f" .model)', models '$(jv "$f" '.models[0].name') $(jv "$f" '.models[1].name')', expected zen4 alone"
	fi
done
# --children: the command's own child (sh forks and execs itlb_pages) has records too.
for spelling in "" --children; do
	# shellcheck disable=SC2086
	if alias_run al-children --json $spelling /bin/sh -c "'$PAGES' --pages 8 --iters 1; true"; then
		n=$(cat "$tmp"/al-children.*.json | grep -c '"cmd":"[^"]*itlb_pages"' || true)
		if [[ -n $spelling ]]; then
			[[ $n -ge 1 ]] && ok || fail "itlb --children: no record of itlb_pages, the shell's child"
		else
			[[ $n == 0 ]] && ok || fail "itlb without --children: $n records of the shell's child"
		fi
	fi
done

if [[ -n $LIB && -n $BIGTEXT && -n $LIBBIGTEXT ]]; then
	echo "== bigtext plain and with libenormoustext.so preloaded"
	# Fresh copies: a file the linker has just written may sit in the page
	# cache as 2 MiB folios and be mapped huge with no help.
	mkdir -p "$tmp/bt"
	cp "$BIGTEXT" "$tmp/bt/bigtext" && cp "$LIBBIGTEXT" "$tmp/bt/libbigtext.so"
	bt_run() { # OUT plain|preload
		local pre=
		[[ $2 == preload ]] && pre=$LIB
		rm -f "$1"
		# LD_PRELOAD reaches the valgrind launcher too (harmless: the library
		# finds nothing to move there) and, through the environment, the guest.
		LD_PRELOAD=$pre LD_LIBRARY_PATH="$tmp/bt" "$ITLB" -q --json=yes --out="$1" "$tmp/bt/bigtext" \
			> "$1.stdout" 2> "$1.stderr" || { fail "bigtext under itlbgrind ($2): $(tail -3 "$1.stdout" "$1.stderr")"; return 1; }
		grep -q '^bigtext: PASS' "$1.stdout" || { fail "bigtext ($2) did not pass its own checks"; return 1; }
		flat "$1"
	}
	# obj FILE NAME-SUFFIX FIELD: a field of the object whose name ends so.
	obj() {
		local i
		i=$(awk -F'\t' -v s="$2" '$1 ~ /^\.objects\[[0-9]+\]\.name$/ && substr($3, length($3) - length(s) + 1) == s {
			sub(/^\.objects\[/, "", $1); sub(/\].*/, "", $1); print $1; exit }' "$1.flat")
		[[ -n $i ]] && jv "$1" ".objects[$i].$3"
	}
	if bt_run "$tmp/bt-plain1.json" plain && bt_run "$tmp/bt-plain2.json" plain &&
	   bt_run "$tmp/bt-pre1.json" preload && bt_run "$tmp/bt-pre2.json" preload; then
		# The misses must be identical run to run.  The instruction count may
		# move by a few dozen: bigtext prints figures it reads from its own
		# smaps (Valgrind's mappings included), whose digits vary.
		sig() { local f=$1; echo "$(jv "$f" '.models[0].itlb_misses') $(jv "$f" '.models[0].stlb_misses') $(jv "$f" '.models[1].itlb_misses') $(jv "$f" '.models[1].stlb_misses')"; }
		close() { local a=$1 b=$2; local d=$(( a > b ? a - b : b - a )); (( d * 1000 <= a )); }
		for kind in plain pre; do
			a="$tmp/bt-${kind}1.json" b="$tmp/bt-${kind}2.json"
			echo "  $kind: instructions $(jv "$a" .instructions) | $(jv "$b" .instructions);" \
			     "goldencove L1 misses, walks, zen4 L1 misses, walks: $(sig "$a") | $(sig "$b")"
			[[ $(sig "$a") == "$(sig "$b")" ]] && ok || fail "bigtext $kind: the misses of two runs differ"
			close "$(jv "$a" .instructions)" "$(jv "$b" .instructions)" && ok ||
				fail "bigtext $kind: instructions differ by more than 0.1%"
		done
		for o in /bigtext /libbigtext.so; do
			hp=$(obj "$tmp/bt-plain1.json" "$o" huge_text_bytes) hq=$(obj "$tmp/bt-pre1.json" "$o" huge_text_bytes)
			cq=$(obj "$tmp/bt-pre1.json" "$o" page_changes_2m)
			mp=$(obj "$tmp/bt-plain1.json" "$o" 'models[0].itlb_misses_4k') mq=$(obj "$tmp/bt-pre1.json" "$o" 'models[0].itlb_misses_4k')
			mq2=$(obj "$tmp/bt-pre1.json" "$o" 'models[0].itlb_misses_2m')
			echo "  $o: text on 2 MiB pages plain $hp, preloaded $hq bytes; lookups on 2M pages $cq;" \
			     "goldencove L1 misses plain $mp, preloaded $mq (4K) + $mq2 (2M)"
			[[ $hp == 0 ]] && ok || fail "$o: plain run already has $hp bytes of huge text (the baseline must be small)"
			[[ ${hq:-0} -ge $((2 << 20)) && ${cq:-0} -gt 0 ]] && ok ||
				fail "$o: preloaded, the tool saw ${hq:-?} bytes on 2 MiB pages and ${cq:-?} lookups on them"
			[[ $(( mq + mq2 )) -lt $mp ]] && ok || fail "$o: preloaded misses $((mq + mq2)) not below plain $mp"
		done
	fi
else
	echo "(no --lib/--bigtext/--libbigtext: the preloaded-library check is left out)"
fi

if [[ -n $DATAMIX ]]; then
	echo "== data translations: 6 MiB of code called at random, with and without a random read of 256 MiB"
	# dm_run NAME DATA-MIB OPTIONS...: the two snapshots of one run, flattened.
	dm_run() {
		local name=$1 mib=$2 r="$tmp/dm-$1"
		shift 2
		rm -f "$r.json"
		"$ITLB" -q --model=all --json=yes "$@" --out="$r.json" "$DATAMIX" --data-mib "$mib" \
			> "$r.stdout" 2> "$r.stderr" || { fail "itlb_datamix ($name) failed: $(tail -3 "$r.stderr")"; return 1; }
		[[ $(wc -l < "$r.json") == 3 ]] || { fail "itlb_datamix ($name): $(wc -l < "$r.json") records, expected 3"; return 1; }
		sed -n 1p "$r.json" > "$r.a.json"
		sed -n 2p "$r.json" > "$r.b.json"
		flat "$r.a.json" && flat "$r.b.json"
	}
	# dm NAME MODEL FIELD: the field's growth over the measured calls.
	dm() {
		local r="$tmp/dm-$1" i
		i=$(model_index "$r.a.json" "$2")
		echo $(( $(jv "$r.b.json" ".models[$i].$3") - $(jv "$r.a.json" ".models[$i].$3") ))
	}
	calls=50000
	if dm_run code 0 && dm_run data 256 && dm_run nodata-model 256 --data=no; then
		check_geometry "$tmp/dm-data.b.json"
		printf '  %-12s %9s %9s %9s %9s %9s   (per %d calls)\n' core "L1i miss" "walks" "+data" "dTLB miss" "data walk" "$calls"
		while read -r model _; do
			printf '  %-12s %9s %9s %9s %9s %9s\n' "$model" "$(dm data "$model" itlb_misses)" \
			       "$(dm code "$model" stlb_misses)" "$(dm data "$model" stlb_misses)" \
			       "$(dm data "$model" dtlb_misses)" "$(dm data "$model" data_walks)"
			dl=$(dm data "$model" dtlb_misses)
			((dl * 10 >= calls * 9)) && ok || fail "$model: $dl L1 dTLB misses for $calls random reads of 256 MiB (expected at least 90%)"
			dc=$(dm code "$model" dtlb_misses)
			((dc * 100 <= calls)) && ok || fail "$model: $dc L1 dTLB misses in the run without data (expected at most 1% of calls)"
		done <<< "$MODELS"
		w0=$(dm code goldencove stlb_misses) w1=$(dm data goldencove stlb_misses) wn=$(dm nodata-model goldencove stlb_misses)
		((w0 * 50 <= calls)) && ok || fail "goldencove: $w0 code walks without data for $calls calls of 6 MiB of code (expected at most 2%: it fits the STLB)"
		((w1 >= 3 * w0 && w1 * 5 >= calls)) && ok ||
			fail "goldencove: $w1 code walks with the data reads, $w0 without (expected at least 3x and 20% of calls)"
		[[ $wn == "$w0" ]] && ok || fail "goldencove with --data=no: $wn code walks with the data reads, expected $w0 (the run without)"
		z0=$(dm code zen4 stlb_misses) z1=$(dm data zen4 stlb_misses)
		d=$(( z1 > z0 ? z1 - z0 : z0 - z1 ))
		((z0 * 10 >= calls * 3 && d * 20 <= z0)) && ok ||
			fail "zen4: $z0 code walks without data, $z1 with (expected the same within 5%, at least 30% of calls: its L2 iTLB is its own)"
		dw=$(dm data goldencove data_walks)
		((dw * 10 >= calls * 9)) && ok || fail "goldencove: $dw data walks for $calls random reads of 256 MiB (expected at least 90%)"
		[[ $(jv "$tmp/dm-data.b.json" .data_model) == true && $(jv "$tmp/dm-nodata-model.b.json" .data_model) == false &&
		   $(jv "$tmp/dm-nodata-model.b.json" .dtlb_misses) == 0 ]] && ok ||
			fail "data_model / dtlb_misses at the top of the record do not follow --data"
		echo "  goldencove code walks: $w0 without the data, $w1 with it ($wn with --data=no); zen4: $z0 and $z1"
	fi
else
	echo "(no --datamix: the data-translation check is left out)"
fi

echo "== payback: the cycles saved and the cost of the move, from hand-made records"
# Two records (plain, preloaded) and a report with numbers whose answers are
# worked out here: /opt/pb/bin/app moved (6 of its 8 MiB), libnot.so not
# moved (it has misses to save, so listing it would show), libsame.so.1
# moved but missing as often as before.  goldencove costs 8 cycles per
# second-level hit and 30 per walk, zen4 here 5 and 50 (not the defaults).
PAYBACK=$(dirname "${BASH_SOURCE[0]}")/payback
pb=$tmp/pb
mkdir -p "$pb"
# pb_obj NAME INSTRUCTIONS TEXT HUGE, then per model (goldencove, zen4) the
# L1 misses and the walks, each as 4K 2M.
pb_obj() {
	printf '{"name":"%s","instructions":%s,"text_bytes":%s,"huge_text_bytes":%s,"page_changes_4k":0,"page_changes_2m":0,"models":[' "$1" "$2" "$3" "$4"
	printf '{"name":"goldencove","itlb_misses_4k":%s,"itlb_misses_2m":%s,"stlb_misses_4k":%s,"stlb_misses_2m":%s},' "$5" "$6" "$7" "$8"
	printf '{"name":"zen4","itlb_misses_4k":%s,"itlb_misses_2m":%s,"stlb_misses_4k":%s,"stlb_misses_2m":%s}]}' "$9" "${10}" "${11}" "${12}"
}
# pb_record PID INSTRUCTIONS OBJECTS: a record with the real one's fields
# (the per-model totals are not what payback reads).
pb_record() {
	printf '{"tool":"itlbgrind","format":1,"pid":%s,"ppid":1,"forked":false,"record":0,"cmd":"/opt/pb/bin/app","ended":"exit","exit_status":0,' "$1"
	printf '"instructions":%s,"itlb_misses":0,"stlb_misses":0,"itlb_mpki":0,"stlb_mpki":0,"model":"goldencove","page_sizes_from":"pagemap-scan","threads":1,"models":[' "$2"
	printf '{"name":"goldencove","itlb_misses":0,"stlb_hits":0,"stlb_misses":0,"estimated_cycles":0,"estimate_basis":"estimate only: 8 cycles per second-level hit and 30 per walk, assumed"},'
	printf '{"name":"zen4","itlb_misses":0,"stlb_hits":0,"stlb_misses":0,"estimated_cycles":0,"estimate_basis":"estimate only: 5 cycles per second-level hit and 50 per walk, assumed"}],'
	printf '"objects":[%s]}\n' "$3"
}
MiB=1048576
pb_record 101 100000000 "$(pb_obj /opt/pb/bin/app 90000000 $((8 * MiB)) 0  1000000 0 100000 0  200000 0 20000 0),$(
	pb_obj /opt/pb/lib/libnot.so 5000000 $((4 * MiB)) 0  300000 0 30000 0  300000 0 30000 0),$(
	pb_obj /opt/pb/lib/libsame.so.1 5000000 $((4 * MiB)) 0  5000 0 500 0  5000 0 500 0)" > "$pb/plain.json"
# Preloaded: the misses split between 4K and 2M pages (payback adds them);
# a second record (a child) after the first, which payback must not read.
{
	pb_record 102 101898000 "$(pb_obj /opt/pb/bin/app 90000000 $((8 * MiB)) $((6 * MiB))  400 600 60 40  1500 500 150 50),$(
		pb_obj /opt/pb/lib/libnot.so 5000000 $((4 * MiB)) 0  1000 0 100 0  1000 0 100 0),$(
		pb_obj /opt/pb/lib/libsame.so.1 5000000 $((4 * MiB)) $((2 * MiB))  4000 1000 400 100  5000 1000 500 100)"
	pb_record 103 1000 ""
} > "$pb/pre.json"
pb_robj() { # PATH TEXT HUGE TIME_NS
	printf '    {"path": "%s", "build_id": "", "text_start": "0x0", "text_end": "0x0", "text_bytes": %s, "windows": %s, "windows_huge": %s, "eligible_bytes": %s, "remapped_bytes": %s, "huge_bytes": %s, "zero_copy_bytes": 0, "padded_bytes": 0, "backend": "thp", "time_ns": %s, "reasons": []}' \
		"$1" "$2" $(($3 / MiB / 2)) $(($3 / MiB / 2)) "$3" "$3" "$3" "$4"
}
{
	echo '{'
	echo '  "version": "0.2.0", "pid": 104, "ran": true, "reason": "", "pmd_size": 2097152, "backend": "thp", "objects_huge": 2,'
	echo '  "objects": ['
	pb_robj /opt/pb/bin/app $((8 * MiB)) $((6 * MiB)) 1000000; echo ','
	pb_robj /opt/pb/lib/libnot.so $((4 * MiB)) 0 0; echo ','
	pb_robj /opt/pb/lib/libsame.so.1 $((4 * MiB)) $((2 * MiB)) 500000; echo
	echo '  ]'
	echo '}'
} > "$pb/report.json"
# The hand-made files must be JSON (the records one a line).
head -1 "$pb/plain.json" > "$pb/plain.1.json"
tail -1 "$pb/pre.json" > "$pb/pre.2.json"
head -1 "$pb/pre.json" > "$pb/pre.1.json"
for f in plain.1 pre.1 pre.2 report; do flat "$pb/$f.json"; done
ITLB_JSON_FLAT=$JSON_FLAT "$PAYBACK" --ghz 2 "$pb/plain.json" "$pb/pre.json" "$pb/report.json" > "$pb/out" 2> "$pb/err"
rc=$?
sed 's/^/  | /' "$pb/out"
[[ $rc == 0 ]] || fail "payback exited $rc: $(tail -2 "$pb/err")"
# pb_row MODEL OBJECT: text MiB, huge MiB, saved Mcyc, move Mcyc, pays back
# (the rest of the line) of OBJECT in MODEL's table.
pb_row() {
	awk -v m="$1" -v o="$2" '/^model / { cur = $2; next } cur == m && $1 == o {
		r = $2 " " $3 " " $4 " " $5; for (k = 6; k <= NF; k++) r = r " " $k; print r }' "$pb/out"
}
# The app in goldencove: L1 misses that hit the STLB 1,000,000 - 100,000
# plain, 1,000 - 100 preloaded; walks 100,000 and 100.  The move: 1 ms at
# 2 GHz; it pays back after cost / saved of this run's instructions.
saved=$(( (900000 - 900) * 8 + (100000 - 100) * 30 ))   # 10,189,800
cost=$(( 1000000 * 2 ))
want_saved=$(awk -v s=$saved 'BEGIN { printf "%.2f", s / 1e6 }')
want_cost=$(awk -v c=$cost 'BEGIN { printf "%.2f", c / 1e6 }')
want_pays=$(awk -v s=$saved -v c=$cost 'BEGIN { printf "%.3g (%.2f runs)", c / s * 101898000, c / s }')
read -r t h s c p <<< "$(pb_row goldencove /opt/pb/bin/app)"
echo "  payback: app in goldencove: text $t, huge $h MiB, saved $s Mcyc (expected $want_saved), move $c (expected $want_cost), pays back after $p (expected $want_pays)"
[[ $t == 8.0 && $h == 6.0 ]] && ok || fail "payback: app text '$t' and huge '$h' MiB, expected 8.0 and 6.0"
[[ $s == "$want_saved" ]] && ok || fail "payback: app in goldencove saved '$s' Mcyc, expected $want_saved"
[[ $c == "$want_cost" ]] && ok || fail "payback: app's move '$c' Mcyc, expected $want_cost (1 ms at --ghz 2)"
[[ $p == "$want_pays" ]] && ok || fail "payback: app in goldencove pays back after '$p', expected '$want_pays'"
# zen4 at its own 5 and 50 (the defaults, 8 and 30, would give 2.02).
zsaved=$(( ((200000 - 20000) - (2000 - 200)) * 5 + (20000 - 200) * 50 ))   # 1,881,000
want_z=$(awk -v s=$zsaved 'BEGIN { printf "%.2f", s / 1e6 }')
read -r t h s c p <<< "$(pb_row zen4 /opt/pb/bin/app)"
[[ $s == "$want_z" ]] && ok || fail "payback: app in zen4 saved '$s' Mcyc, expected $want_z (5 cycles per hit and 50 per walk, its estimate_basis)"
grep -q '^model zen4 (estimate: 5 cycles per second-level hit, 50 per walk, from its record; the move at 2 GHz)' "$pb/out" && ok ||
	fail "payback: the zen4 table does not say 5 cycles per hit and 50 per walk at 2 GHz"
# Not moved: not listed; moved and saving nothing (zen4: more misses): 'never'.
n=$(grep -c 'libnot\.so' "$pb/out")
[[ $n == 0 ]] && ok || fail "payback: libnot.so, not moved, is listed $n times"
for model in goldencove zen4; do
	read -r t h s c p <<< "$(pb_row $model /opt/pb/lib/libsame.so.1)"
	[[ $c == 1.00 && $p == never* ]] && ok ||
		fail "payback: libsame.so.1 in $model (saved '$s') moved at '$c' Mcyc pays back after '$p', expected 1.00 and 'never'"
done
# Bad input: exit 2 and a message naming the file.
echo 'not JSON' > "$pb/notjson"
pb_bad() { # WHAT FILE ARGS...
	local what=$1 file=$2 rc
	shift 2
	ITLB_JSON_FLAT=$JSON_FLAT "$PAYBACK" "$@" > "$pb/bad.out" 2> "$pb/bad.err"
	rc=$?
	[[ $rc == 2 ]] && grep -qF "$file" "$pb/bad.err" && ok ||
		fail "payback with $what: exit $rc (expected 2), said '$(head -2 "$pb/bad.err")' (expected the name $file)"
}
pb_bad "a missing report" "$pb/none.json" "$pb/plain.json" "$pb/pre.json" "$pb/none.json"
pb_bad "a plain record that is not JSON" "$pb/notjson" "$pb/notjson" "$pb/pre.json" "$pb/report.json"
pb_bad "a preloaded record that is not JSON" "$pb/notjson" "$pb/plain.json" "$pb/notjson" "$pb/report.json"
pb_bad "a report that is not JSON" "$pb/notjson" "$pb/plain.json" "$pb/pre.json" "$pb/notjson"

echo "== $checks checks passed, $failures failed, $skips skipped"
((failures == 0)) || exit 1
exit 0
