# defaults.bash — what the integration.defaults.* tests share.  Source it
# after lib.sh:
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/defaults.bash"
# These tests are about the library as it comes, with no ENORMOUSTEXT_*
# variable: a deferral of 1 s (ENORMOUSTEXT_DEFER), priming of copied
# windows into zero-copy (ENORMOUSTEXT_PRIME=auto) with tries again 1, 4
# and 16 s after the pass, and copies only of windows of which 256 KiB
# have run (ENORMOUSTEXT_COPY_MIN).  lib.sh sets ENORMOUSTEXT_DEFER=0 for
# every other test: unset here.  Only ENORMOUSTEXT_REPORT (and, where a
# test says so, _VERBOSE) is ever set on a library run.
#
# Defines:
#   pagecache clean|stat FILE...   (python3) clean: fsync, then drop from
#                                  the page cache (POSIX_FADV_DONTNEED), as
#                                  after a boot; both print "FILE cache N
#                                  dirty N writeback N" (pages; cachestat(2))
#                                  or "FILE cachestat unavailable: ..."
#   cold FILE...                   pagecache clean, and fail unless each
#                                  file then has no page cached
#   dirty_pages FILE               dirty + writeback pages (cachestat), or
#                                  "unavailable"
#   bg LABEL [VAR=VALUE...] -- CMD...   CMD started in $D in the background
#                                  ($D/LABEL.out, .err; its pid in BG_PID,
#                                  killed at exit if still running)
#   bg_wait LABEL PID              wait for it: its output echoed as run
#                                  echoes, its status in RC, OUT/ERR set
#   wait_for FILE ERE [SECONDS]    until FILE has a line matching ERE (10 s)
#   text_pss PID...                kB: the Pss of every executable mapping
#                                  of these processes, summed
#   file_rss PID FILE              kB: the Rss of the process's mappings of FILE
#   kinds REPORT exe|lib           the object's window_kinds
#   report_val REPORT FILE KEY     a value of FILE's object in REPORT (JSON),
#                                  strings and numbers; REPORT.flat is the
#                                  flattened report (json_flat)
#   report_reasons REPORT FILE     its reasons, one a line
#   mib KB                         kB as MiB with one decimal
unset ENORMOUSTEXT_DEFER

command -v python3 >/dev/null 2>&1 ||
	skip "python3 is needed to write the copies out (fsync), drop them from the page cache and read cachestat(2)"
PC_PY=$WORK/pagecache.py
cat >"$PC_PY" <<'EOF'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]
class Stat(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("cache", "dirty", "writeback", "evicted", "recently_evicted")]
SYS_cachestat = 451  # x86-64 and AArch64 alike
cmd, files = sys.argv[1], sys.argv[2:]
status = 0
for path in files:
    fd = os.open(path, os.O_RDONLY)
    if cmd == "clean":
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    rng, st = Range(0, 0), Stat()
    if libc.syscall(SYS_cachestat, fd, ctypes.byref(rng), ctypes.byref(st), 0) != 0:
        e = ctypes.get_errno()
        print(path, "cachestat unavailable:", os.strerror(e))
    else:
        print(path, "cache", st.cache, "dirty", st.dirty, "writeback", st.writeback)
    os.close(fd)
EOF

pagecache() { python3 "$PC_PY" "$@"; }

cold() {
	local line
	pagecache clean "$@" >"$WORK/cold.txt" || fail "cannot fsync and drop $*"
	while read -r line; do
		case $line in
		*" cache 0 "*|*"cachestat unavailable"*) ;;
		*) fail "still in the page cache after fsync and POSIX_FADV_DONTNEED: $line" ;;
		esac
	done <"$WORK/cold.txt"
}

dirty_pages() {
	pagecache stat "$1" | awk '/cachestat unavailable/ { print "unavailable"; exit } { print $5 + $7 }'
}

bg() {
	local label=$1 envs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	echo "-- $label (in the background): cd $D && ${envs[*]:+${envs[*]} }$*"
	(cd "$D" && exec env "${envs[@]}" "$@") >"$D/$label.out" 2>"$D/$label.err" &
	BG_PID=$!
	EXIT_HOOKS+=("kill $BG_PID 2>/dev/null")
}

bg_wait() {
	local label=$1 pid=$2
	wait "$pid"
	RC=$?
	OUT=$D/$label.out
	ERR=$D/$label.err
	echo "-- $label (pid $pid) ended:"
	sed 's/^/   | /' "$OUT"
	[ -s "$ERR" ] && sed 's/^/   stderr| /' "$ERR"
	echo "   exit status $RC"
}

wait_for() {
	local i
	for ((i = 0; i < ${3:-10} * 20; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "no line /$2/ in $1 after ${3:-10} s: $(tail -3 "$1" 2>/dev/null | tr '\n' '|')"
}

# The smaps of several processes: a mapping's header line starts with its
# range; its 'x' permission decides whether its Pss counts.
text_pss() {
	local p
	for p in "$@"; do cat "/proc/$p/smaps" 2>/dev/null; done |
		awk '/^[0-9a-f]+-[0-9a-f]+ / { x = ($2 ~ /x/) } x && $1 == "Pss:" { s += $2 } END { print s + 0 }'
}

file_rss() {
	awk -v f="$(realpath "$2")" '/^[0-9a-f]+-[0-9a-f]+ / { m = ($6 == f) } m && $1 == "Rss:" { s += $2 } END { print s + 0 }' \
		"/proc/$1/smaps" 2>/dev/null
}

kinds() { obj_str "$1" "$2" window_kinds; }

report_val() {
	local rep=$1 f obj
	[ -s "$rep" ] || fail "no report $rep"
	"$JSON_FLAT" "$rep" >"$rep.flat" || fail "$rep is not valid JSON"
	f=$(realpath "$2")
	obj=$(awk -F '\t' -v p="$f" '$2 == "string" && $3 == p { sub(/\.[^.\[]*$/, "", $1); print $1; exit }' "$rep.flat")
	[ -n "$obj" ] || fail "the report $rep does not name $f"
	awk -F '\t' -v k="$obj.$3" '$1 == k { print $3; f = 1 } END { exit !f }' "$rep.flat" ||
		fail "the report's entry for $f has no $3"
}

report_reasons() {
	local obj
	report_val "$1" "$2" path >/dev/null
	obj=$(awk -F '\t' -v p="$(realpath "$2")" '$2 == "string" && $3 == p { sub(/\.[^.\[]*$/, "", $1); print $1; exit }' "$1.flat")
	awk -F '\t' -v k="$obj.reasons[" 'index($1, k) == 1 && $2 == "string" { print $3 }' "$1.flat"
}

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
