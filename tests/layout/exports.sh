#!/bin/bash
# exports.sh LIBRARY SRCDIR — libenormoustext.so exports exactly the public
# API, in its version node (libenormoustext/libenormoustext.map), and the
# libc/loader functions it wraps (interpose/*.c, ET_EXPORT), without a
# version (a program's dlopen@GLIBC_2.34 must find the wrapper).  Nothing
# else: every internal et_ function is hidden.
set -u
lib=${1:?usage: exports.sh LIBRARY SRCDIR}
src=${2:?usage: exports.sh LIBRARY SRCDIR}
map=$src/libenormoustext/libenormoustext.map
[ -f "$lib" ] || { echo "FAIL [layout.exports]: $lib does not exist (build first)"; exit 1; }
node=$(sed -n 's/^\([A-Z_0-9.]*\) {.*/\1/p' "$map" | tail -n1)
[ -n "$node" ] || { echo "FAIL [layout.exports]: no version node in $map"; exit 1; }
want=$(
	sed -n '/^[A-Z_0-9.]* {/,/^}/p' "$map" | grep -oE '^\s+enormoustext_[a-z_]+;' | tr -d ' \t;' | sed "s/\$/@@$node/"
	# ET_EXPORT lines: the function's name, or its __asm__("name") label
	grep -hE '^ET_EXPORT ' "$src"/libenormoustext/src/interpose/*.c |
		sed -nE 's/.*__asm__\("([a-z_0-9]+)"\).*/\1/p; t; s/^ET_EXPORT [^(]*[ *]([a-z_0-9]+)\(.*/\1/p'
)
want=$(echo "$want" | sort -u)
have=$(nm -D --defined-only "$lib" | awk 'NF == 3 && $2 != "A" { print $3 }' | sort -u)
# the public header declares exactly the API the map lists
api=$(grep -oE '\benormoustext_[a-z_]+\(' "$src/libenormoustext/include/enormoustext.h" | tr -d '(' | sort -u)
mapped=$(echo "$want" | sed -n "s/@@$node\$//p" | sort -u)
fail=0
if [ "$api" != "$mapped" ]; then
	echo "FAIL [layout.exports]: enormoustext.h and $map disagree:"
	diff <(echo "$api") <(echo "$mapped") | sed 's/^/  /'
	fail=1
fi
if [ "$want" != "$have" ]; then
	echo "FAIL [layout.exports]: $lib exports (>) what it should not, or lacks (<):"
	diff <(echo "$want") <(echo "$have") | grep '^[<>]' | sed 's/^/  /'
	fail=1
fi
[ $fail = 0 ] || exit 1
echo "PASS [layout.exports]: $(echo "$mapped" | wc -l) API symbols in $node, $(echo "$want" | grep -vc @@) wrappers unversioned, nothing else"
