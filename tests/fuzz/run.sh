#!/bin/bash
# run.sh RUNS — build the profile parser's libFuzzer target with clang
# (-fsanitize=fuzzer,address,undefined) and run it RUNS executions from the
# seed corpus in corpus/.  Exit 0 when no input crashed it; 77 (skip) when
# clang cannot build a libFuzzer target here.
#   tests/fuzz/run.sh 1000000      # the long run
set -u
runs=${1:-200000}
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../../libenormoustext/src
W=$(mktemp -d) || exit 2
trap 'rm -rf "$W"' EXIT
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null || { echo "SKIP [fuzz.profile]: clang not installed"; exit 77; }
if ! "$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I"$src" -I"$here/../../libenormoustext/include" \
	"$here/fuzz_profile.c" "$src/core/profile.c" "$src/core/util.c" "$src/core/log.c" "$src/os/mm.c" -o "$W/fuzz_profile" 2>"$W/cc.log"; then
	if grep -q "fuzzer" "$W/cc.log"; then
		echo "SKIP [fuzz.profile]: $CLANG cannot build a libFuzzer target here: $(head -1 "$W/cc.log")"
		exit 77
	fi
	cat "$W/cc.log"
	echo "FAIL [fuzz.profile]: the fuzz target does not build"
	exit 1
fi
mkdir "$W/corpus" && cp "$here"/corpus/* "$W/corpus/"
"$W/fuzz_profile" -runs="$runs" -max_len=4096 -seed=1 "$W/corpus" 2>"$W/log"
rc=$?
grep -E '^#[0-9]+ *(DONE|pulse)|Done|ERROR|SUMMARY' "$W/log" | tail -4
[ $rc -eq 0 ] || { tail -40 "$W/log"; echo "FAIL [fuzz.profile]: a crash (exit $rc)"; exit 1; }
echo "PASS [fuzz.profile]: $runs executions, no crash"
