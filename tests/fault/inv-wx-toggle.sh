#!/bin/bash
# fault.inv-wx-toggle — a JIT's W^X toggling must not run the program out
# of mappings.  wx_toggle (wx_toggle.c) writes code into every other page of
# a 256 MiB read-write region, makes the page read+execute, runs it, makes
# it read-write again: 40,000 toggles (more pages than vm.max_map_count / 2,
# so a program left with a mapping or two per toggled page fails an
# mprotect with ENOMEM); then whole 2 MiB windows of a 2 MiB-aligned region,
# every other one, 4 rounds.  It prints the number of mappings
# (/proc/self/maps) after 1,000 toggles and at the end, as the difference
# from before its first toggle (the library's own mappings are not the
# program's).  With ENORMOUSTEXT_MODE=2 and 3 (the library watches every
# mprotect to executable) it must finish as the plain run does: every
# mprotect succeeded, every call right, exit 0 — and no difference above
# the plain run's (plainly the pieces merge back: +0).
#
# Environment: FAULT_WX_TOGGLES (40000), FAULT_WX_MIB (256).
. "$(dirname "$0")/lib.sh"
WXT=$FAULT_BIN/wx_toggle
[ -x "$WXT" ] || fail "$WXT is missing: build the tests first"
R=$WORK/res
mkdir "$R" || exit 2
ARGS=(--mib "${FAULT_WX_MIB:-256}" --toggles "${FAULT_WX_TOGGLES:-40000}" --checkpoint 1000 --windows 16 --rounds 4)
mmc=$(cat /proc/sys/vm/max_map_count 2>/dev/null)
note "vm.max_map_count ${mmc:-?}; wx_toggle ${ARGS[*]}"

# go NAME [VAR=VALUE...]: NAME.out NAME.err NAME.rc
go() {
	local name=$1
	shift
	(cd "$WORK" && exec env "$@" timeout -k 5 60 "$WXT" "${ARGS[@]}") >"$R/$name.out" 2>"$R/$name.err" </dev/null
	echo $? >"$R/$name.rc"
}
# delta NAME WHAT N: the +D after N toggles of WHAT (pages, windows); "" if not printed
delta() { sed -n "s/^wx_toggle: $2: after $3 toggles: mappings \([-+][0-9]*\)\$/\1/p" "$R/$1.out" | head -1; }
# last NAME WHAT: "N D" at the end (the last line of WHAT)
last() { sed -n "s/^wx_toggle: $2: after \([0-9]*\) toggles: mappings \([-+][0-9]*\)\$/\1 \2/p" "$R/$1.out" | tail -1; }

go plain
[ "$(cat "$R/plain.rc")" = 0 ] || fail "the plain run exited $(cat "$R/plain.rc"): $(grep -m2 -E 'FAILED|WRONG' "$R/plain.out") $(head -2 "$R/plain.err")"
p1=$(delta plain pages 1000)
read -r pn pe <<<"$(last plain pages)"
read -r wn we <<<"$(last plain windows)"
[ -n "$p1" ] && [ -n "$pe" ] && [ -n "$we" ] || fail "the plain run printed no mapping counts: $(head -3 "$R/plain.out")"
note "plain: mappings $p1 after 1000 page toggles, $pe after $pn, $we after $wn window toggles ($(grep -o '[0-9]* mappings (' "$R/plain.err" | head -1 | tr -d '(')in all)"

nfail=0
for mode in 2 3; do
	name=mode$mode
	go "$name" LD_PRELOAD="$PRE" ENORMOUSTEXT_MODE=$mode ENORMOUSTEXT_VERBOSE=1
	rc=$(cat "$R/$name.rc")
	m1=$(delta "$name" pages 1000)
	read -r mn me <<<"$(last "$name" pages)"
	read -r mwn mwe <<<"$(last "$name" windows)"
	why=()
	[ "$rc" = 0 ] || why+=("exit $rc$([ "$rc" = 124 ] && echo ' (timed out)'), plain 0: $(grep -m1 -E 'FAILED|WRONG' "$R/$name.out")")
	[ "${mn:-0}" = "$pn" ] || why+=("stopped after $mn page toggles, plain did $pn")
	[ -n "$m1" ] && [ "$((m1))" -le "$((p1))" ] || why+=("mappings ${m1:-?} after 1000 page toggles, plain $p1")
	[ -n "$me" ] && [ "$((me))" -le "$((pe))" ] || why+=("mappings ${me:-?} after ${mn:-?} page toggles, plain $pe after $pn")
	[ -n "$mwe" ] && [ "$((mwe))" -le "$((we))" ] || why+=("mappings ${mwe:-?} after ${mwn:-?} whole-window toggles, plain $we")
	said=$(grep -m1 '^enormoustext: jit:' "$R/$name.err" | cut -c1-200)
	if [ ${#why[@]} = 0 ]; then
		note "ENORMOUSTEXT_MODE=$mode: as plain: mappings ${m1} after 1000 page toggles, $me after $mn, $mwe after $mwn window toggles  [${said:-the library said nothing}]"
	else
		nfail=$((nfail + 1))
		echo "FAIL ENORMOUSTEXT_MODE=$mode: $(printf '%s; ' "${why[@]}")"
		echo "   the library: ${said:-nothing}"
		echo "   reproduce: LD_PRELOAD=$PRE ENORMOUSTEXT_MODE=$mode $WXT ${ARGS[*]}"
	fi
done
[ "$nfail" = 0 ] || fail "$nfail of 2 modes left the program more mappings than the plain run (or failed an mprotect)"
echo "PASS [$T]: MODE=2 and MODE=3 toggle as plain, with no more mappings"
