# lib.sh — what every tests/fault/*.sh test shares.  Source it first:
#   . "$(dirname "$0")/lib.sh"
# It sources tests/lib/lib.sh (strict mode, the test's name T, fail / skip /
# pass / note, at_exit, wait_line / wait_until: see there), checks the
# variables ctest sets (FAULT_BIN IT_BIN FAULT_PRELOAD FAULT_SOURCE_DIR
# FAULT_WORK_ROOT), clears every ENORMOUSTEXT* variable and
# LD_PRELOAD/LD_LIBRARY_PATH, makes a work directory $WORK (removed at exit
# unless FAULT_KEEP=1), and defines:
#   fresh FILE... copy FILEs (paths) into a new directory $D with cp, so
#                 that their page cache is written small (see tests/integration/lib.sh)
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"
for v in FAULT_BIN IT_BIN FAULT_PRELOAD FAULT_WORK_ROOT; do
	if [ -z "${!v:-}" ]; then
		echo "$T: $v is not set: run the test through ctest (ctest -R '^fault\\.$T\$')"
		exit 2
	fi
done
PRE=$FAULT_PRELOAD
et_clear_env
# The start-up path: the library moves the text in its constructor, so a
# program's own checks see the result at once, and copies stay copies (with
# priming a run on a file written out meanwhile — the kernel does that
# after 30 s — would leave the page cache huge for the next run, which
# would then be zero-copy).  The defaults (ENORMOUSTEXT_DEFER=1s,
# ENORMOUSTEXT_PRIME=auto) have tests of their own that unset these:
# integration.defaults.*, fault.syscalls' and fault.badvalues' defaults.
# The fault tests that defer (fault.defer-*) move every window, whatever
# has run when their 1 ms deferral ends (ENORMOUSTEXT_COPY_MIN=0).
export ENORMOUSTEXT_DEFER=0 ENORMOUSTEXT_PRIME=0 ENORMOUSTEXT_COPY_MIN=0
et_workdir "$FAULT_WORK_ROOT" FAULT_KEEP
WORK=$ET_WORK
[ -e "$PRE" ] || fail "the library $PRE does not exist (build the 'enormoustext' target)"
N=0
fresh() {
	N=$((N + 1))
	D=$WORK/run$N
	mkdir "$D" || exit 2
	local f
	for f in "$@"; do cp "$f" "$D/" || fail "cannot copy $f"; done
}
