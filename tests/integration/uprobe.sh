#!/bin/bash
# integration.uprobe — a uprobe inside a window: that window is left alone,
# the program runs right.
#
# A uprobe (an int3 the kernel keeps per file and offset) in a window:
# copied into anonymous memory it would no longer be the kernel's and
# kill the process when hit.  The library must see the text was changed
# in memory and leave that window alone; the program runs right.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root to add a uprobe"
tfs=/sys/kernel/tracing
if [ ! -w "$tfs/uprobe_events" ]; then
	tfs=$WORK/tracefs
	mkdir -p "$tfs" && mount -t tracefs nodev "$tfs" 2>/dev/null ||
		skip "cannot mount tracefs here (no uprobes)"
	EXIT_HOOKS+=("umount '$tfs' 2>/dev/null")
fi
[ -w "$tfs/uprobe_events" ] || skip "no uprobe_events in tracefs"
fresh "$IT_BIN" bigtext
# bt_exe_f1050: in the middle of the executable's 8 MiB, inside a window.
read -r vaddr <<<"$(nm "$D/bigtext" | awk '$3 == "bt_exe_f1050" { print $1 }')"
[ -n "$vaddr" ] || fail "no bt_exe_f1050 in bigtext"
read -r segv sego <<<"$(readelf -lW "$D/bigtext" | awk '$1 == "LOAD" && $7 ~ /E/ { print $3, $2; exit }')"
off=$(printf '0x%x' $((0x$vaddr - segv + sego)))
baseline -- ./bigtext --expect-none --expect-not-loaded
ev="p:etit_$$/f1050 $D/bigtext:$off"
echo "-- uprobe: $ev"
echo "$ev" >>"$tfs/uprobe_events" || skip "the kernel refused the uprobe ($ev)"
EXIT_HOOKS+=("echo 0 > '$tfs/events/etit_$$/f1050/enable' 2>/dev/null; echo '-:etit_$$/f1050' >> '$tfs/uprobe_events' 2>/dev/null")
echo 1 >"$tfs/events/etit_$$/f1050/enable" || fail "cannot enable the uprobe"
run lib ENORMOUSTEXT_VERBOSE=2 LD_PRELOAD="$PRE" -- ./bigtext --expect-huge 30 --kind anon --expect-loaded
[ "$RC" -eq 0 ] || [ "$RC" -eq 1 ] ||
	fail "with a uprobe in its text, bigtext exited $RC (133 = SIGTRAP: the probe was copied)"
# bigtext compares its text in memory with the file: the probe's int3
# at $off is the one difference allowed.
others=$(grep '^bigtext: FAIL' "$OUT" | grep -v "text in memory differs .*(file offset $off): memory cc" || true)
[ -z "$others" ] || fail "bigtext: $others"
same_results
grep -q 'changed in memory' "$ERR" || fail "no 'changed in memory' reason at ENORMOUSTEXT_VERBOSE=2"
hits=$(cat "$tfs/events/etit_$$/f1050/../../../uprobe_profile" 2>/dev/null | awk '/f1050/ { print $NF }')
echo "   uprobe hits: ${hits:-?}"

pass
