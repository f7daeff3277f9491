#!/bin/bash
# fault.defer-rate — ENORMOUSTEXT_DEFER_RATE paces the worker: one window a
# piece, the locks let go between pieces.  Checked from outside, in the
# running process's smaps:
#   1. at 4 MiB/s (a 2 MiB window every half second) the text goes huge a
#      window at a time (a sample sees some but not all of it huge), then
#      all of it, and the program prints what its plain run prints;
#   2. with a profile, the hottest window moves first (the profile's
#      order, not the address order);
#   3. a worker still pacing stands down for unshare(CLONE_NEWUSER): the
#      call succeeds as in the plain run, the windows not moved yet stay
#      small, and the report says why.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defer.bash"
R=$WORK/res
mkdir "$R" || exit 2
H=2097152
dp_plain "$R/plain" --hold 2600
[ "$(cat "$R/plain.rc")" = 0 ] || fail "plain run exited $(cat "$R/plain.rc"): $(cat "$R/plain.err")"

# the start of each huge VMA of dp_prog's text, relative to its load base
huge_starts() {
	local base="" s
	while read -r s; do
		[ -n "$base" ] || { base=$s; continue; }
		printf '%x\n' $(( 16#$s - 16#$base ))
	done < <(awk -v exe="$D/dp_prog" '
		/^[0-9a-f]+-[0-9a-f]+ / { split($1, a, "-"); start = a[1]
			mine = ($6 == exe) || ($6 == "" && prev_mine); if ($6 != "") prev_mine = mine
			if ($6 == exe && !based) { print start; based = 1 } next }
		mine && /^(AnonHugePages|FilePmdMapped):/ && $2 > 0 { print start }' "/proc/$1/smaps") | sort -u
}

# 1. a window at a time
dp_start "$R/paced" ENORMOUSTEXT_DEFER=100ms ENORMOUSTEXT_DEFER_RATE=4 ENORMOUSTEXT_VERBOSE=1 LD_PRELOAD="$PRE" \
	-- ./dp_prog --hold 2600
seen=""
for _ in $(seq 26); do
	kb=$(huge_kb "$P" 2>/dev/null) || break
	seen+="$kb "
	sleep 0.1
done
wait
dp_same "$R/paced" "$R/plain"
final=$(grep -oE '[0-9.]+ MiB of [0-9.]+ MiB text' "$R/paced.err" | awk '{ print $1 }')
[ -n "$final" ] && [ "${final%.*}" -ge 4 ] || fail "the paced worker did not move the text: $(cat "$R/paced.err")"
max=$(tr ' ' '\n' <<<"$seen" | sort -n | tail -1)
mid=$(tr ' ' '\n' <<<"$seen" | awk -v m="$max" '$1 > 0 && $1 < m' | head -1)
[ "$max" -ge $((final * 1024 - 1024)) ] || fail "the samples never saw all $final MiB huge: $seen"
[ -n "$mid" ] || fail "at 4 MiB/s the text must go huge a window at a time; samples (kB): $seen"
note "1. samples of huge kB every 100 ms at 4 MiB/s: $seen"

# 2. the hottest first: a profile with three windows, the last the hottest.
# Without ASLR (setarch -R) the load base is the same in every run: the
# windows are found from a first run's maps.
command -v setarch >/dev/null || fail "setarch (util-linux) is missing"
norand=(setarch "$(uname -m)" -R ./dp_prog --hold 2600)
dp_start "$R/probe" ENORMOUSTEXT=0 LD_PRELOAD="$PRE" -- "${norand[@]}"
base=$(awk -v exe="$D/dp_prog" '$6 == exe { split($1, a, "-"); print a[1]; exit }' "/proc/$P/maps")
wait
[ -n "$base" ] || fail "cannot read dp_prog's load base"
read -r va sz < <(readelf -lW "$D/dp_prog" | awk '$1 == "LOAD" && / R E / { print $3, $6; exit }')
w0=$(( ((16#$base + va + H - 1) & ~(H - 1)) - 16#$base ))   # the first whole window, as a link-time address
(( w0 + 3 * H <= va + sz )) || fail "dp_prog has fewer than three whole windows of text"
bid=$(readelf -n "$D/dp_prog" | sed -n 's/.*Build ID: *//p')
printf 'enormoustext-profile 1\ngranule 4096\nobject %s dp_prog\n%x 10\n%x 1\n%x 100\n' \
	"$bid" "$w0" $((w0 + H)) $((w0 + 2 * H)) >"$R/hot.prof"
dp_start "$R/hot" ENORMOUSTEXT_DEFER=100ms ENORMOUSTEXT_DEFER_RATE=2 ENORMOUSTEXT_PROFILE="$R/hot.prof" \
	ENORMOUSTEXT_HOT_COVERAGE=100 LD_PRELOAD="$PRE" -- "${norand[@]}"
first=""
for _ in $(seq 100); do
	first=$(huge_starts "$P" 2>/dev/null)
	[ -n "$first" ] && break
	sleep 0.02
done
wait
dp_same "$R/hot" "$R/plain"
hot=$(printf '%x' $((w0 + 2 * H)))
[ "$first" = "$hot" ] ||
	fail "the first window moved must be the hottest, $hot; it was '${first//$'\n'/ }' (windows from $(printf '%x' "$w0"))"
note "2. the first window moved: $first (the profile's hottest; address order starts at $(printf '%x' "$w0"))"

# 3. stand down while pacing
dp_plain "$R/plain-u" --hold 2600 --unshare-at 800
grep -q 'during the hold: ok' "$R/plain-u.out" ||
	skip "unshare(CLONE_NEWUSER) fails here even without the library: $(cat "$R/plain-u.out")"
(cd "$D" && ENORMOUSTEXT_DEFER=100ms ENORMOUSTEXT_DEFER_RATE=4 ENORMOUSTEXT_REPORT="$R/u.json" LD_PRELOAD="$PRE" \
	./dp_prog --hold 2600 --unshare-at 800 >"$R/u.out" 2>"$R/u.err"; echo $? >"$R/u.rc")
dp_same "$R/u" "$R/plain-u"
[ -s "$R/u.json" ] || fail "no report: $(cat "$R/u.err")"
grep -q "waiting for the worker's next piece" "$R/u.json" ||
	fail "the report must say windows were left waiting: $(grep -o '"reasons": \[[^]]*\]' "$R/u.json" | head -2)"
huge=$(grep -o '"huge_bytes": [0-9]*' "$R/u.json" | head -1 | awk '{ print $2 }')
[ "$huge" -gt 0 ] && [ "$huge" -lt $((3 * H)) ] || fail "expected some but not all windows moved before unshare, huge_bytes $huge"
note "3. unshare at 800 ms while pacing: $(grep unshare "$R/u.out"), $huge bytes huge, the rest waiting"
echo "PASS [$T]"
