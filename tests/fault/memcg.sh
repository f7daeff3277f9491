#!/bin/bash
# fault.memcg — in a memory cgroup the plain program fits, the preloaded
# program fits too.  Copies of text windows (thp,
# collapse) are anonymous memory charged to the cgroup and, with no swap,
# never reclaimed; the library copies only what the cgroup's limits leave
# (libenormoustext/src/core/memcg.c) and says which windows stayed small and why.
#
# In a REAL cgroup (cgroup2 where it has the memory controller, else the
# cgroup v1 memory controller; the test says which ran), each run in a new
# child of the test's own cgroup (v1), or of the nearest cgroup above it
# that hands the memory controller down (cgroup2), on fresh `cp` copies of bigtext and
# libbigtext.so (IT_BIN), with ENORMOUSTEXT_BACKEND=thp (every window a copy):
#   1. plain, no limit: its peak usage P;
#   2. plain under the tight limit P + 4 MiB: it fits (the premise);
#   3. preloaded under the tight limit: not OOM-killed, exit status and
#      results as the plain run, nothing copied, every window's reason
#      "memcg: ..." in ENORMOUSTEXT_REPORT and on the verbose lines;
#   4. preloaded under a middle limit (P + the margin's 16 MiB floor +
#      7 MiB: room for three copies): some windows copied, the others
#      "memcg: ...", not OOM-killed;
#   5. with an ENORMOUSTEXT_PROFILE of bigtext and room for two copies: the
#      hottest of its windows are the ones copied, whichever end of its
#      text the samples favour; libbigtext.so (not profiled) after them;
#   6. preloaded under a generous limit (P + 512 MiB): every window copied,
#      huge, no "memcg" reason; its peak is above P (the copies are charged).
# Without the library's check, run 3 is OOM-killed (status 137).
# Needs root (creates cgroups); removes them at exit (processes moved out first).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "creating a memory cgroup needs root"
for f in bigtext libbigtext.so json_flat; do
	[ -x "$IT_BIN/$f" ] || [ -f "$IT_BIN/$f" ] || fail "$IT_BIN/$f is missing (build the integration programs)"
done

MIB=$((1024 * 1024))

# ---- which hierarchy: mount points from mountinfo, the cgroup from /proc/self/cgroup
unesc() { printf '%b' "${1//\\/\\0}"; }   # mountinfo's \040 etc.
mount_of() {   # mount_of cgroup2 | mount_of memory -> "ROOT MOUNTPOINT" (first match)
	local want=$1 l pre post f
	while IFS= read -r l; do
		pre=${l%% - *}
		post=${l#* - }
		read -r -a f <<<"$pre"
		local fs super
		fs=$(awk '{print $1}' <<<"$post")
		super=$(awk '{print $3}' <<<"$post")
		if [ "$want" = cgroup2 ] && [ "$fs" = cgroup2 ]; then
			echo "$(unesc "${f[3]}") $(unesc "${f[4]}")"
			return 0
		fi
		if [ "$want" = memory ] && [ "$fs" = cgroup ] && [[ ",$super," == *,memory,* ]]; then
			echo "$(unesc "${f[3]}") $(unesc "${f[4]}")"
			return 0
		fi
	done </proc/self/mountinfo
	return 1
}
cgroup_of() {  # cgroup_of 2 | cgroup_of 1 -> the path in that hierarchy
	local id ctl path
	while IFS=: read -r id ctl path; do
		if [ "$1" = 2 ] && [ "$id" = 0 ] && [ -z "$ctl" ]; then echo "$path"; return 0; fi
		if [ "$1" = 1 ] && [[ ",$ctl," == *,memory,* ]]; then echo "$path"; return 0; fi
	done </proc/self/cgroup
	return 1
}
# The directory of this shell's cgroup in a hierarchy whose mount shows it.
cg_dir() {
	local mr mp p
	read -r mr mp <<<"$1" || return 1
	p=$2
	if [ "$mr" != / ]; then
		case "$p" in "$mr" | "$mr"/*) p=${p#"$mr"} ;; *) return 1 ;; esac
	fi
	echo "${mp%/}${p%/}"
}

V=
PARENT=   # where the test's cgroups are made
ORIG=     # this shell's own cgroup: where leftover processes go back to
if m2=$(mount_of cgroup2) && p2=$(cgroup_of 2) && d2=$(cg_dir "$m2" "$p2"); then
	# A child gets the memory controller only from a parent that hands it
	# down (memory in its cgroup.subtree_control); a cgroup with processes
	# cannot (except the root), so look from our own cgroup upwards.  The
	# test's cgroups are then siblings of ours: every limit above still
	# applies to them.  Nothing here changes a subtree_control.
	a=$d2
	while :; do
		if grep -qw memory "$a/cgroup.subtree_control" 2>/dev/null; then
			V=2 PARENT=$a ORIG=$d2
			break
		fi
		[ "$a" = "${m2#* }" ] || [ "$a" = / ] && break
		a=${a%/*}
		[ -n "$a" ] || a=/
	done
	[ -n "$V" ] || note "cgroup2 at ${m2#* }: no cgroup from $d2 up hands the memory controller down"
fi
if [ -z "$V" ] && m1=$(mount_of memory) && p1=$(cgroup_of 1) && d1=$(cg_dir "$m1" "$p1"); then
	[ -f "$d1/memory.limit_in_bytes" ] && V=1 PARENT=$d1 ORIG=$d1
fi
[ -n "$V" ] || skip "no memory cgroup controller this test can use (neither cgroup2 with memory for children nor cgroup v1 memory)"
note "cgroup v$V: children of $PARENT"
if [ "$V" = 2 ]; then
	LIMIT_FILE=memory.max PEAK_FILE=memory.peak
else
	LIMIT_FILE=memory.limit_in_bytes PEAK_FILE=memory.max_usage_in_bytes
fi

# ---- cgroups of our own, removed at exit (their processes moved out first)
CGS=()
cg_remove() {
	local cg=$1 pid
	[ -d "$cg" ] || return 0
	while read -r pid; do
		[ -n "$pid" ] && echo "$pid" >"$ORIG/cgroup.procs" 2>/dev/null
	done <"$cg/cgroup.procs"
	rmdir "$cg" 2>/dev/null || note "could not remove $cg"
}
cleanup_cgs() { local c; for c in "${CGS[@]}"; do cg_remove "$c"; done; }
at_exit cleanup_cgs
NCG=0
new_cg() {   # new_cg LIMIT_BYTES|max -> CG
	NCG=$((NCG + 1))
	CG=$PARENT/et-fault-memcg.$$.$NCG
	mkdir "$CG" || fail "cannot create the cgroup $CG"
	CGS+=("$CG")
	if [ "$1" != max ]; then
		echo "$1" >"$CG/$LIMIT_FILE" || fail "cannot set $CG/$LIMIT_FILE to $1"
	fi
	[ "$V" = 1 ] || [ -f "$CG/$PEAK_FILE" ] || skip "cgroup2 without memory.peak (Linux < 5.19): no way to measure the plain run's peak"
}
oom_kills() {
	if [ "$V" = 2 ]; then
		awk '$1 == "oom_kill" {print $2}' "$CG/memory.events"
	else
		awk '$1 == "oom_kill" {print $2}' "$CG/memory.oom_control"
	fi
}

# runcg LABEL LIMIT [VAR=VALUE...] -- COMMAND... — COMMAND in $D, inside a
# new cgroup with that limit; $OUT $ERR $RC, $PEAK (bytes), $OOM (kills).
runcg() {
	local label=$1 limit=$2 envs=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	new_cg "$limit"
	OUT=$WORK/$label.out
	ERR=$WORK/$label.err
	echo "-- $label (limit $limit): cd $D && ${envs[*]:+${envs[*]} }$*"
	(cd "$D" && exec bash -c 'echo $$ >"$1/cgroup.procs" || exit 125; shift; exec env "$@"' _ \
		"$CG" "${envs[@]}" "$@") >"$OUT" 2>"$ERR"
	RC=$?
	PEAK=$(cat "$CG/$PEAK_FILE")
	OOM=$(oom_kills)
	grep -vE '^bigtext: (exe|lib): ' "$OUT" | sed 's/^/   | /'
	[ -s "$ERR" ] && sed 's/^/   stderr| /' "$ERR"
	echo "   exit status $RC, peak $((PEAK / 1024)) KiB, oom kills ${OOM:-?}"
	[ "$RC" -ne 125 ] || fail "$label: could not move the process into $CG"
	cg_remove "$CG"
}
results() { grep '^bigtext: results:' "$OUT"; }
kinds() {   # the report's window kinds of the two bigtext objects, one string
	"$IT_BIN/json_flat" "$1" | awk -F'\t' '
		$1 ~ /^\.objects\[[0-9]+\]\.path$/ { n = $1; sub(/\.path$/, "", n); keep[n] = ($3 ~ /\/(bigtext|libbigtext\.so)$/) }
		$1 ~ /\.window_kinds$/ { n = $1; sub(/\.window_kinds$/, "", n); if (keep[n]) s = s $3 }
		END { print s }'
}
memcg_reasons() {   # how many of the two objects give the memcg reason
	"$IT_BIN/json_flat" "$1" | grep -cE $'\\.reasons\\[[0-9]+\\]\tstring\tmemcg: '
}
count() { local s=${1//[^$2]/}; echo ${#s}; }

EXPECT_OK=(--expect-loaded)
PRE_ENV=(LD_PRELOAD="$PRE" ENORMOUSTEXT_BACKEND=thp ENORMOUSTEXT_VERBOSE=2)

# ---- 1. the plain program's peak
fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
runcg plain max -- ./bigtext --expect-none --expect-not-loaded
[ "$RC" -eq 0 ] || fail "the plain run failed (exit $RC): $(grep -E '^bigtext: (FAIL|ERROR)' "$OUT" | head -3)"
BASE=$(results)
[ -n "$BASE" ] || fail "the plain run printed no results line"
P=$PEAK
[ "$P" -gt 0 ] || fail "no peak usage read from $PEAK_FILE"
TIGHT=$((P + 4 * MIB))
note "plain peak $((P / 1024)) KiB: tight limit $((TIGHT / 1024)) KiB"

# ---- 2. the plain program fits the tight limit
fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
runcg plain-tight "$TIGHT" -- ./bigtext --expect-none --expect-not-loaded
[ "$RC" -eq 0 ] && [ "${OOM:-0}" = 0 ] ||
	fail "the premise: the plain program does not fit its own peak + 4 MiB (exit $RC, oom kills $OOM)"
[ "$(results)" = "$BASE" ] || fail "plain-tight: results differ from the plain run's"

# ---- 3. preloaded, tight: nothing copied, not killed, said why
fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
runcg tight "$TIGHT" "${PRE_ENV[@]}" ENORMOUSTEXT_REPORT="$WORK/tight.json" -- \
	./bigtext "${EXPECT_OK[@]}" --expect-none
[ "${OOM:-0}" = 0 ] || fail "tight: the preloaded program was OOM-killed ($OOM kill(s), exit $RC) where the plain one fits"
[ "$RC" -eq 0 ] || fail "tight: exit status $RC, the plain run's was 0: $(grep -E '^bigtext: (FAIL|ERROR)' "$OUT" | head -3)"
[ "$(results)" = "$BASE" ] || fail "tight: results differ from the plain run's"
[ -f "$WORK/tight.json" ] || fail "tight: no report written"
K=$(kinds "$WORK/tight.json")
[ -n "$K" ] || fail "tight: the report has no window kinds for bigtext and libbigtext.so"
[ "$(count "$K" c)" -eq 0 ] || fail "tight: windows were copied ($K) under a limit with no room for them"
[ "$(memcg_reasons "$WORK/tight.json")" -ge 2 ] || fail "tight: the report does not give the memcg reason for both objects"
[ "$(grep -cE '(bigtext|libbigtext\.so): .*left small: memcg: ' "$ERR")" -ge 2 ] ||
	fail "tight: the verbose lines do not say the windows stayed small for the memcg"
note "tight: windows $K, reason memcg, peak $((PEAK / 1024)) KiB of $((TIGHT / 1024))"

# ---- 4. preloaded, a middle limit: some copied, the rest held back
MID=$((P + 16 * MIB + 7 * MIB))
fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
runcg middle "$MID" "${PRE_ENV[@]}" ENORMOUSTEXT_VERBOSE=3 ENORMOUSTEXT_REPORT="$WORK/middle.json" -- ./bigtext "${EXPECT_OK[@]}"
[ "${OOM:-0}" = 0 ] || fail "middle: OOM-killed ($OOM kill(s), exit $RC)"
[ "$RC" -eq 0 ] || fail "middle: exit status $RC: $(grep -E '^bigtext: (FAIL|ERROR)' "$OUT" | head -3)"
[ "$(results)" = "$BASE" ] || fail "middle: results differ from the plain run's"
K=$(kinds "$WORK/middle.json")
nc=$(count "$K" c)
[ "$nc" -ge 1 ] || fail "middle: nothing copied ($K) with room for three copies"
[ "$nc" -lt "${#K}" ] || fail "middle: every window copied ($K): the limit was not applied"
[ "$(memcg_reasons "$WORK/middle.json")" -ge 1 ] || fail "middle: no memcg reason for the windows left small"
note "middle: windows $K ($nc copied), peak $((PEAK / 1024)) KiB of $((MID / 1024))"

# ---- 5. the hottest first: a profile of bigtext whose samples grow with
# the address; a limit with room for two copies (from the usage and margin
# the middle run's library saw) -> the copied windows of bigtext are its
# last ones, and libbigtext.so (not in the profile) comes after them.  The
# reversed profile gives the first ones.
if command -v readelf >/dev/null; then
	read -r U M < <(sed -n 's/.*memcg: v[12] .*: limit [0-9]*, usage \([0-9]*\), margin \([0-9]*\): .*/\1 \2/p' "$WORK/middle.err" | head -1)
	[ -n "${U:-}" ] || fail "middle: no 'memcg: ... usage U, margin M' line at ENORMOUSTEXT_VERBOSE=3"
	TWO=$((U + M + 5 * MIB))
	BID=$(readelf -n "$IT_BIN/bigtext" | awk '/Build ID/ {print $3}')
	read -r VA MS < <(readelf -lW "$IT_BIN/bigtext" | awk '$1 == "LOAD" && / R E / {print $3, $6}')
	[ -n "$BID" ] && [ -n "${VA:-}" ] || fail "readelf: no build-id or executable segment in $IT_BIN/bigtext"
	for order in up down; do
		{
			echo "enormoustext-profile 1"
			echo "granule 4096"
			echo "object $BID /bigtext"
			awk -v va=$((VA)) -v ms=$((MS)) -v order=$order 'BEGIN {
				n = int(ms / 4096)
				for (i = 0; i < n; i++)
					printf "%x %d\n", va + i * 4096, order == "up" ? i + 1 : n - i }'
		} >"$WORK/prof-$order"
		fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
		runcg "hot-$order" "$TWO" "${PRE_ENV[@]}" ENORMOUSTEXT_PROFILE="$WORK/prof-$order" \
			ENORMOUSTEXT_HOT_COVERAGE=100 ENORMOUSTEXT_REPORT="$WORK/hot-$order.json" -- ./bigtext "${EXPECT_OK[@]}"
		[ "${OOM:-0}" = 0 ] && [ "$RC" -eq 0 ] || fail "hot-$order: exit status $RC, oom kills $OOM"
		[ "$(results)" = "$BASE" ] || fail "hot-$order: results differ from the plain run's"
		EK=$("$IT_BIN/json_flat" "$WORK/hot-$order.json" | awk -F'\t' '
			$1 ~ /\.path$/ { n = $1; sub(/\.path$/, "", n); keep[n] = ($3 ~ /\/bigtext$/) }
			$1 ~ /\.window_kinds$/ { n = $1; sub(/\.window_kinds$/, "", n); if (keep[n]) print $3 }')
		LK=$(kinds "$WORK/hot-$order.json")
		LK=${LK#"$EK"}
		note "hot-$order: bigtext $EK, libbigtext.so $LK"
		[[ "$EK" == *c* && "$EK" == *.* ]] || fail "hot-$order: bigtext's windows '$EK': room for two copies should copy some, not all"
		[ "$(count "$LK" c)" -eq 0 ] || fail "hot-$order: libbigtext.so (not in the profile) copied before bigtext's profiled windows"
		if [ $order = up ]; then
			[[ "$EK" =~ ^\.+c+$ ]] || fail "hot-up: the hottest windows are bigtext's last, copied are '$EK'"
		else
			[[ "$EK" =~ ^c+\.+$ ]] || fail "hot-down: the hottest windows are bigtext's first, copied are '$EK'"
		fi
	done
else
	note "no readelf: the profile order (5) is not checked"
fi

# ---- 6. preloaded, generous: every window copied
BIG=$((P + 512 * MIB))
fresh "$IT_BIN/bigtext" "$IT_BIN/libbigtext.so"
runcg generous "$BIG" "${PRE_ENV[@]}" ENORMOUSTEXT_REPORT="$WORK/generous.json" -- \
	./bigtext "${EXPECT_OK[@]}" --expect-huge 100 --kind anon
[ "$RC" -eq 0 ] || fail "generous: exit status $RC: $(grep -E '^bigtext: (FAIL|ERROR)' "$OUT" | head -3)"
[ "$(results)" = "$BASE" ] || fail "generous: results differ from the plain run's"
K=$(kinds "$WORK/generous.json")
[ -n "$K" ] && [ "$(count "$K" c)" -eq "${#K}" ] || fail "generous: not every window copied ($K)"
[ "$(memcg_reasons "$WORK/generous.json")" -eq 0 ] || fail "generous: a memcg reason under a generous limit"
[ "$PEAK" -gt $((P + 2 * MIB)) ] || fail "generous: peak $PEAK not above the plain $P: are copies not charged?"
note "generous: windows $K, peak $((PEAK / 1024)) KiB (plain $((P / 1024)))"
note "PASS (cgroup v$V)"
