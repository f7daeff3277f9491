# lib.sh — what every tests/fault/*.sh test shares.  Source it first:
#   . "$(dirname "$0")/lib.sh"
# It checks the variables ctest sets (FAULT_BIN IT_BIN FAULT_PRELOAD
# FAULT_SOURCE_DIR FAULT_WORK_ROOT), clears every ENORMOUSTEXT* variable and
# LD_PRELOAD/LD_LIBRARY_PATH, makes a work directory $WORK (removed at exit
# unless FAULT_KEEP=1), and defines:
#   fail MSG...   print "FAIL [name]: MSG" and exit 1
#   skip MSG...   print "SKIP [name]: MSG" and exit 77 (the machine lacks something)
#   note MSG...   print a line
#   at_exit CMD   run CMD when the test ends (restore a setting, remove a cgroup)
#   fresh FILE... copy FILEs (paths) into a new directory $D with cp, so
#                 that their page cache is written small (see tests/integration/lib.sh)
set -u
T=$(basename "$0" .sh)
for v in FAULT_BIN IT_BIN FAULT_PRELOAD FAULT_WORK_ROOT; do
	if [ -z "${!v:-}" ]; then
		echo "$T: $v is not set: run the test through ctest (ctest -R '^fault\\.$T\$')"
		exit 2
	fi
done
PRE=$FAULT_PRELOAD
while read -r v; do unset "$v"; done < <(env | sed -n 's/^\(ENORMOUSTEXT[A-Za-z0-9_]*\)=.*/\1/p')
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
unset LD_PRELOAD LD_LIBRARY_PATH
mkdir -p "$FAULT_WORK_ROOT" || exit 2
WORK=$(mktemp -d "$FAULT_WORK_ROOT/$T.XXXXXX") || exit 2
FAULT_EXIT_HOOKS=()
at_exit() { FAULT_EXIT_HOOKS+=("$*"); }
# shellcheck disable=SC2317 # called by the EXIT trap
fault_on_exit() {
	local i
	for ((i = ${#FAULT_EXIT_HOOKS[@]} - 1; i >= 0; i--)); do eval "${FAULT_EXIT_HOOKS[$i]}"; done
	if [ "${FAULT_KEEP:-0}" = 1 ]; then echo "(work directory kept: $WORK)"; else rm -rf "$WORK"; fi
}
trap fault_on_exit EXIT
trap 'exit 130' INT TERM
fail() { echo "FAIL [$T]: $*"; exit 1; }
skip() { echo "SKIP [$T]: $*"; exit 77; }
note() { echo "[$T] $*"; }
[ -e "$PRE" ] || fail "the library $PRE does not exist (build the 'enormoustext' target)"
N=0
fresh() {
	N=$((N + 1))
	D=$WORK/run$N
	mkdir "$D" || exit 2
	local f
	for f in "$@"; do cp "$f" "$D/" || fail "cannot copy $f"; done
}
