#!/bin/bash
# linker.alternative.lld — the flag-only layout, without the script
# (lld: -z max-page-size=0x200000 -z separate-code; also with
# -z separate-loadable-segments).
. "$(dirname "$0")/lib.sh"

have_lld || skip "no lld here (Debian: apt-get install lld)"
alternative_test lld "${FLAGS[@]}"
# lld's other flag: every segment on its own pages, in the file too
for kind in pie dso; do
	link "alt-sls-$kind" "$LT_CC" $kind -fuse-ld=lld -Wl,-z,max-page-size=0x200000 \
		-Wl,-z,separate-loadable-segments
	check "$W/alt-sls-$kind" flags
done

pass
