#!/bin/bash
# integration.baseline — the cp copies of every variant run right and come up
# small without the library.
#
# The copies come up small without the library; the freshly linked
# originals are shown for information only (the kernel may map those
# huge by itself).
. "$(dirname "$0")/lib.sh"

for exe in bigtext bigtext-nopie; do
	std_baseline "$exe"
done
fresh "$IT_BIN" bigtext-linked
baseline ENORMOUSTEXT=0 -- ./bigtext-linked --expect-none --expect-loaded
echo "-- for information: the originals in the build directory, not copied:"
D=$IT_BIN
OUT=$WORK/orig.out
(cd "$IT_BIN" && ./bigtext) >"$OUT" 2>&1
sed -n 's/^bigtext: \(exe\|lib\) /   | \1 /p' "$OUT"

pass
