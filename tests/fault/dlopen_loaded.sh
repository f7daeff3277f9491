#!/bin/bash
# dlopen_loaded — a dlopen of a library that is already loaded (and the
# dlclose that leaves it loaded) costs no pass: the loader's add/remove
# counts did not move.  An earlier version ran a full pass each time (a
# scratch mapping and a walk over every object, twice per cycle: the
# dlopen/dlclose rate fell about 1000x).  Counted with strace: the memory
# system calls of 2000 such cycles, plain and preloaded.
. "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || skip "strace is not installed (apt-get install strace)"
fresh "$FAULT_BIN/dl_reopen" "$IT_BIN/libbigtext.so"
cd "$D" || exit 2
count() {   # LABEL [VAR=VALUE...]: mmap+munmap calls of the whole run
	local label=$1
	shift
	env "$@" strace -f -qq -c -U name,calls -e trace=mmap,munmap -o "$label.strace" ./dl_reopen ./libbigtext.so 2000 >"$label.out" 2>"$label.err" ||
		fail "$label: dl_reopen failed: $(head -3 "$label.out" "$label.err" | tr '\n' ' ')"
	awk '$1 == "mmap" || $1 == "munmap" { n += $2 } END { print n + 0 }' "$label.strace"
}
plain=$(count plain)
pre=$(count preloaded LD_PRELOAD="$PRE")
note "mmap+munmap calls for 2000 dlopen/dlclose cycles of a loaded library: plain $plain, preloaded $pre"
# The preloaded run has start-up and the first load's pass (a few dozen
# calls); one pass per cycle would be thousands.
[ $((pre - plain)) -lt 400 ] || fail "preloaded: $((pre - plain)) more memory system calls than plain: a pass per dlopen/dlclose of a loaded library?"
[ -s preloaded.err ] && fail "the library wrote to stderr: $(head -2 preloaded.err)"
note "$(cat preloaded.out) preloaded, $(cat plain.out) plain (for information)"
