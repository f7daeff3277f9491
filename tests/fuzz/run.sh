#!/bin/bash
# run.sh RUNS [TARGET] — build a libFuzzer target with clang
# (-fsanitize=fuzzer,address,undefined) and run it RUNS executions from its
# seed corpus.  Exit 0 when no input crashed it; 77 (skip) when clang
# cannot build a libFuzzer target here.  TARGET:
#   profile    the profile parser (libenormoustext/src/core/profile.c),
#              seeds in corpus/ (the default)
#   perfdata   the perf.data reader of `profile import`
#              (tools/enormoustext/perfdata.c), seeds made by
#              perfdata_seed.py
#   tests/fuzz/run.sh 1000000      # the long run
set -u
runs=${1:-200000}
target=${2:-profile}
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../../libenormoustext/src
tools=$here/../../tools/enormoustext
W=$(mktemp -d) || exit 2
trap 'rm -rf "$W"' EXIT
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null || { echo "SKIP [fuzz.$target]: clang not installed"; exit 77; }
mkdir "$W/corpus"
case $target in
profile)
	srcs=("$here/fuzz_profile.c" "$src/core/profile.c" "$src/core/util.c" "$src/core/log.c" "$src/os/mm.c" "$src/os/sys.c")
	cp "$here"/corpus/* "$W/corpus/"
	max_len=4096 ;;
perfdata)
	srcs=("$here/fuzz_perfdata.c" "$tools/perfdata.c")
	command -v python3 >/dev/null || { echo "FAIL [fuzz.perfdata]: python3 (for the seeds) not installed"; exit 1; }
	python3 "$here/perfdata_seed.py" "$W/corpus" || { echo "FAIL [fuzz.perfdata]: perfdata_seed.py"; exit 1; }
	max_len=8192 ;;
*) echo "run.sh: no fuzz target '$target' (profile, perfdata)"; exit 2 ;;
esac
if ! "$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I"$src" -I"$here/../../libenormoustext/include" \
	-I"$tools" "${srcs[@]}" -o "$W/fuzz_$target" 2>"$W/cc.log"; then
	if grep -q "fuzzer" "$W/cc.log"; then
		echo "SKIP [fuzz.$target]: $CLANG cannot build a libFuzzer target here: $(head -1 "$W/cc.log")"
		exit 77
	fi
	cat "$W/cc.log"
	echo "FAIL [fuzz.$target]: the fuzz target does not build"
	exit 1
fi
"$W/fuzz_$target" -runs="$runs" -max_len=$max_len -seed=1 "$W/corpus" 2>"$W/log"
rc=$?
grep -E '^#[0-9]+ *(DONE|pulse)|Done|ERROR|SUMMARY' "$W/log" | tail -4
[ $rc -eq 0 ] || { tail -40 "$W/log"; echo "FAIL [fuzz.$target]: a crash (exit $rc)"; exit 1; }
echo "PASS [fuzz.$target]: $runs executions, no crash"
