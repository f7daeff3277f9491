#!/bin/bash
# fault.memcg-growth — a program that grows after the library copied its
# text still fits the memory cgroup it fits without the library: the
# copies are given back (mapped from their files again) when what the
# cgroup cannot reclaim nears its limit (runtime/giveback.c).
#
# dp_prog --alloc 40 --alloc-at 1500 60 --hold 2500: 40 MiB touched at
# start, 60 MiB more 1.5 s later.  In a new child of this shell's memory
# cgroup (cgroup2 where it has the memory controller, else cgroup v1's; the
# test says which): the plain run's peak P with no limit; then at limits
# P + 4, 8, 16 and 40 MiB the plain run ends ok (the premise), and the
# preloaded one (ENORMOUSTEXT_BACKEND=thp: every window a copy, made 100 ms
# in) ends ok too, with what plain prints.  At P + 4 the library's line
# says the copies were given back.  The library without the give-back was
# OOM-killed (137) at P + 4 every time.  Needs root; no swap (with swap the
# kernel would push anonymous memory out instead of killing).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
[ "$(id -u)" = 0 ] || skip "creating a memory cgroup needs root"
[ "$(awk 'NR > 1' /proc/swaps | wc -l)" = 0 ] || skip "swap is on: the kernel would swap rather than kill"

CG= V=
if [ -r /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
	own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	base=/sys/fs/cgroup${own%/}
	grep -qw memory "$base/cgroup.subtree_control" 2>/dev/null || echo +memory >"$base/cgroup.subtree_control" 2>/dev/null
	grep -qw memory "$base/cgroup.subtree_control" 2>/dev/null && CG=$base/et-memcg-growth.$$ V=2
fi
if [ -z "$CG" ]; then
	mp=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
	own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
	[ -n "$mp" ] && CG=$mp${own%/}/et-memcg-growth.$$ V=1
fi
[ -n "$CG" ] || skip "no memory controller (cgroup2 or v1) to put a limit on"
mkdir "$CG" || fail "cannot create the cgroup $CG"
at_exit "rmdir '$CG' 2>/dev/null"
note "memory cgroup v$V: $CG"
[ "$V" = 2 ] || note "(cgroup2 has no memory controller on this machine: the v2 path is not run here)"

setlimit() {  # BYTES, or max
	if [ "$V" = 2 ]; then echo "$1" >"$CG/memory.max"; else
		[ "$1" = max ] && set -- -1
		echo "$1" >"$CG/memory.limit_in_bytes"
	fi || fail "cannot set the limit $1"
}
peak() {
	if [ "$V" = 2 ]; then cat "$CG/memory.peak"; else cat "$CG/memory.max_usage_in_bytes"; fi
}
# run OUT [VAR=VALUE...]: dp_prog in the cgroup (the shell joins it, then
# execs env, which execs dp_prog)
ARGS=(--alloc 40 --alloc-at 1500 60 --hold 2500)
run() {
	local out=$1
	shift
	(cd "$D" && sh -c 'echo $$ >"$1" && shift && exec env "$@"' sh "$CG/cgroup.procs" "$@" ./dp_prog "${ARGS[@]}" \
		>"$out.out" 2>"$out.err"; echo $? >"$out.rc")
}
R=$WORK/res
mkdir "$R" || exit 2
setlimit max
[ "$V" = 1 ] && echo 0 >"$CG/memory.max_usage_in_bytes"
run "$R/free"
[ "$(cat "$R/free.rc")" = 0 ] || fail "dp_prog without a limit: exit $(cat "$R/free.rc"): $(head -3 "$R/free.err")"
P=$(peak)
[ "$V" = 2 ] && [ -z "$P" ] && skip "this kernel's cgroup2 has no memory.peak"
note "plain peak: $((P >> 20)) MiB"
for extra in 4 8 16 40; do
	L=$((P + extra * 1024 * 1024))
	setlimit "$L"
	run "$R/plain$extra"
	[ "$(cat "$R/plain$extra.rc")" = 0 ] || fail "the premise: plain at P + $extra MiB: exit $(cat "$R/plain$extra.rc")"
	run "$R/lib$extra" ENORMOUSTEXT_DEFER=100ms ENORMOUSTEXT_BACKEND=thp ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE"
	dp_same "$R/lib$extra" "$R/plain$extra"
	gave=$(grep -o 'near its limit.*given back' "$R/lib$extra.err" || true)
	copied=$(grep -oE '^enormoustext: [0-9]+ of [0-9]+ objects, [0-9.]+ [MK]iB' "$R/lib$extra.err" || true)
	note "P + $extra MiB: plain ok, preloaded ok (${copied#enormoustext: }; ${gave:-nothing given back})"
	[ "$extra" != 4 ] || [ -n "$gave" ] || fail "at P + 4 MiB no line says the copies were given back: $(head -3 "$R/lib$extra.err" | tr '\n' ' ')"
	[ -n "$copied" ] || fail "at P + $extra MiB the library moved nothing: the test tests nothing: $(head -3 "$R/lib$extra.err" | tr '\n' ' ')"
done
echo "PASS [$T]"
