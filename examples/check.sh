#!/bin/bash
# check.sh WAY PROGRAM LIBRARY — run one example as its README says, on a
# fresh copy (a freshly linked file can be mapped huge by the kernel alone),
# first with the library off (nothing huge), then on.
#   preload: >= 1 whole 2 MiB window of its ~4.3 MiB of text huge
#   linked:  the same, the library linked in
#   script:  100% of its text huge (aligned and padded at link time)
set -u
way=$1 prog=$2 lib=$3
W=$(mktemp -d) || exit 2
trap 'rm -rf "$W"' EXIT
cp "$prog" "$W/prog" && cp "$lib" "$W/libenormoustext.so.0" || exit 2
env=(LD_LIBRARY_PATH="$W")
[ "$way" = preload ] && env+=(LD_PRELOAD="$W/libenormoustext.so.0")
pct() { sed -n 's/.*on huge pages (\([0-9]*\)%)$/\1/p' "$1"; }
env "${env[@]}" ENORMOUSTEXT=0 "$W/prog" >"$W/off" 2>&1 || { cat "$W/off"; echo "FAIL: exit status $? with ENORMOUSTEXT=0"; exit 1; }
env "${env[@]}" "$W/prog" >"$W/on" 2>&1 || { cat "$W/on"; echo "FAIL: exit status $?"; exit 1; }
sed 's/^/off| /' "$W/off"; sed 's/^/on | /' "$W/on"
[ "$(pct "$W/off")" = 0 ] || { echo "FAIL: huge with the library off: the test cannot tell what the library did"; exit 1; }
[ "$(grep checksum "$W/off")" = "$(grep checksum "$W/on")" ] || { echo "FAIL: results differ"; exit 1; }
case $way in
script) want=100 ;;
*) want=40 ;;      # 2 of its ~4.3 MiB (one window) at the least
esac
[ "$(pct "$W/on")" -ge $want ] || { echo "FAIL: $(pct "$W/on")% of the text huge, expected >= $want%"; exit 1; }
echo "PASS [example.$way]"
