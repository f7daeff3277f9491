# defaults.bash — what the integration.defaults.* tests share.  Source it
# after lib.sh:
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/defaults.bash"
# These tests are about the library as it comes, with no ENORMOUSTEXT_*
# variable: a deferral of 1 s (ENORMOUSTEXT_DEFER), priming of copied
# windows into zero-copy (ENORMOUSTEXT_PRIME=auto) with tries again 1, 4
# and 16 s after the pass, and copies only of windows of which 256 KiB
# have run (ENORMOUSTEXT_COPY_MIN).  lib.sh sets ENORMOUSTEXT_DEFER=0 and
# ENORMOUSTEXT_PRIME=0 for every other test: unset here.  Only ENORMOUSTEXT_REPORT (and, where a
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
unset ENORMOUSTEXT_DEFER ENORMOUSTEXT_PRIME

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
	et_show "$OUT" '   | '
	et_show "$ERR" '   stderr| '
	echo "   exit status $RC"
}

# wait_for FILE ERE [SECONDS]: wait_line (tests/lib/lib.sh), failing the
# test with the file's last lines when none comes.
wait_for() {
	wait_line "$1" "$2" "${3:-10}" ||
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
	# (0 when the process has just ended: awk cannot open its smaps)
	local v
	v=$(awk -v f="$(realpath "$2")" '/^[0-9a-f]+-[0-9a-f]+ / { m = ($6 == f) } m && $1 == "Rss:" { s += $2 } END { print s + 0 }' \
		"/proc/$1/smaps" 2>/dev/null)
	echo "${v:-0}"
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

# ---- the priming safety tests (defaults.prime.*) ------------------------------
# What the library may do to a file it primes, seen from outside:
#   text_huge PID                  "ANON FILE": kB of AnonHugePages and of
#                                  FilePmdMapped in the process's executable
#                                  mappings (copies vs zero-copy)
#   memtext PID MAPPED REF OTHER...   (python3) the executable segments
#                                  of the object PID maps from the path
#                                  MAPPED (as /proc/PID/maps names it,
#                                  " (deleted)" or not), read from
#                                  /proc/PID/mem, compared byte for byte
#                                  with the file REF and page for page with
#                                  OTHER ("-": none); more triples for more
#                                  objects, in one run; prints the figures,
#                                  sets the arrays MT_BYTES, MT_DIFF (bytes
#                                  that differ from REF), MT_OTHER (pages
#                                  that differ from OTHER), one per triple
#   pad_mark FILE                  (python3) in the second half of each
#                                  2 MiB window of FILE's executable segment,
#                                  the first 16 bytes of nop padding after a
#                                  function (offset 0x800 of a page: the
#                                  generated functions are 0x15 bytes, one a
#                                  page) set to int3: a file that differs
#                                  from the old one only in bytes that never
#                                  run; then fsync and dropped from the page
#                                  cache (clean: nothing stops priming it);
#                                  PAD_OFFS the offsets changed
#   rewrite_same FILE OFF LEN...   (python3) the bytes [OFF, OFF + LEN)
#                                  written again, unchanged, 4 KiB at a time:
#                                  dirty pages (small folios), same contents
#                                  (more FILE OFF LEN triples: the same)
#   windows FILE                   (python3) the file offsets of FILE's
#                                  windows (congruent: as the test binaries
#                                  are linked), one a line
#   nocachestat [VAR=VALUE...] -- CMD...   (python3) CMD, with those
#                                  variables, under a seccomp filter that
#                                  fails cachestat(2) with ENOSYS (a kernel
#                                  older than 6.5)
#   maps_inodes PID                the inode numbers of its file mappings
# (lib.sh sets ENORMOUSTEXT_PRIME=0 for the start-up tests: these are about
# the default, auto)
unset ENORMOUSTEXT_PRIME
PRIME_PY=$WORK/prime.py
cat >"$PRIME_PY" <<'EOF_PY'
import os, struct, sys
H = int(os.environ.get("PRIME_H", str(2 << 20)))
def loads(hdr):
    phoff, = struct.unpack_from("<Q", hdr, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", hdr, 0x36)
    out = []
    for i in range(phnum):
        t, fl, off, va, _, fsz = struct.unpack_from("<IIQQQQ", hdr, phoff + i * phentsize)
        if t == 1:
            out.append((fl, off, va, fsz))
    return out
cmd = sys.argv[1]
if cmd == "pad":
    path = sys.argv[2]
    nop = set(b"\x66\x2e\x0f\x1f\x84\x00\x90")
    fd = os.open(path, os.O_RDWR)
    changed = []
    for fl, off, va, fsz in loads(os.pread(fd, 4096, 0)):
        if not fl & 1:
            continue
        w = (va + H - 1) // H * H
        while w + H <= va + fsz:
            o = w - va + off
            for pg in range(o + H // 2, o + H, 4096):
                if all(b in nop for b in os.pread(fd, 16, pg + 0x800)):
                    os.pwrite(fd, b"\xcc" * 16, pg + 0x800)
                    changed.append(pg + 0x800)
                    break
            w += H
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    print(" ".join(hex(c) for c in changed))
elif cmd == "nocachestat":
    # nocachestat [VAR=VALUE...] -- CMD...: CMD under a seccomp filter that
    # fails cachestat(2) (451 on x86-64 and AArch64) with ENOSYS, as a
    # kernel older than 6.5 does
    import ctypes
    args = sys.argv[2:]
    while args[0] != "--":
        k, v = args.pop(0).split("=", 1)
        os.environ[k] = v
    args.pop(0)
    libc = ctypes.CDLL(None, use_errno=True)
    ins = lambda code, jt, jf, k: struct.pack("=HBBI", code, jt, jf, k)
    prog = (ins(0x20, 0, 0, 0) +                  # ld [nr]
            ins(0x15, 0, 1, 451) +                # jeq 451
            ins(0x06, 0, 0, 0x00050000 | 38) +    # ret ERRNO(ENOSYS)
            ins(0x06, 0, 0, 0x7fff0000))          # ret ALLOW
    buf = ctypes.create_string_buffer(prog)
    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    fp = Fprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fp), 0, 0) != 0:
        sys.exit("nocachestat: cannot install the seccomp filter: " + os.strerror(ctypes.get_errno()))
    if libc.syscall(451, -1, None, None, 0) != -1 or ctypes.get_errno() != 38:
        sys.exit("nocachestat: the seccomp filter does not fail cachestat(2) with ENOSYS")
    os.execvp(args[0], args)
elif cmd == "windows":
    with open(sys.argv[2], "rb") as f:
        hdr = f.read(4096)
    for fl, off, va, fsz in loads(hdr):
        if fl & 1:
            w = (va + H - 1) // H * H
            while w + H <= va + fsz:
                print(hex(w - va + off))
                w += H
elif cmd == "rewrite":
    a = sys.argv[2:]
    while a:
        path, off, n = a[0], int(a[1], 0), int(a[2], 0)
        a = a[3:]
        fd = os.open(path, os.O_RDWR)
        for o in range(off, off + n, 4096):
            b = os.pread(fd, 4096, o)
            os.pwrite(fd, b, o)
        os.close(fd)
elif cmd == "mem":
    # mem PID MAPPED REF OTHER [MAPPED REF OTHER...] (OTHER may be "-")
    pid, a = sys.argv[2], sys.argv[3:]
    with open(f"/proc/{pid}/maps") as m:
        maps = m.read().splitlines()
    mem = open(f"/proc/{pid}/mem", "rb")
    while a:
        mapped, ref, other = a[:3]
        a = a[3:]
        with open(ref, "rb") as f:
            d = f.read()
        segs = loads(d)
        base = None
        for line in maps:
            f = line.split(maxsplit=5)
            if len(f) == 6 and int(f[2], 16) == 0 and f[5].removesuffix(" (deleted)") == mapped:
                base = int(f[0].split("-")[0], 16) - (segs[0][2] & ~0xfff)
                break
        if base is None:
            sys.exit(f"memtext: process {pid} maps no {mapped} at offset 0")
        od = None
        if other != "-":
            with open(other, "rb") as f:
                od = f.read()
        tot = diff = diffo = 0
        first = None
        for fl, off, va, fsz in segs:
            if not fl & 1:
                continue
            mem.seek(base + va)
            b = mem.read(fsz)
            if len(b) != fsz:
                sys.exit(f"memtext: read {len(b)} of {fsz} bytes of {mapped}'s text in process {pid}")
            r = d[off:off + fsz]
            tot += fsz
            for i in range(0, fsz, 4096):
                if b[i:i + 4096] != r[i:i + 4096]:
                    for j in range(i, min(i + 4096, fsz)):
                        if b[j] != r[j]:
                            diff += 1
                            if first is None:
                                first = (off + j, b[j], r[j])
                if od is not None and b[i:i + 4096] != od[off + i:off + min(i + 4096, fsz)]:
                    diffo += 1
        print(tot, diff, diffo if od is not None else "-",
              f"(first at file offset {first[0]:#x}: memory {first[1]:02x}, file {first[2]:02x})" if first else "")
EOF_PY

prime_py() { PRIME_H=$((H_MIB * 1048576)) python3 "$PRIME_PY" "$@"; }

text_huge() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { x = ($2 ~ /x/) }
	     x && $1 == "AnonHugePages:" { a += $2 } x && $1 == "FilePmdMapped:" { f += $2 }
	     END { print a + 0, f + 0 }' "/proc/$1/smaps" 2>/dev/null
}

memtext() {
	local pid=$1 r b d o first
	shift
	r=$(prime_py mem "$pid" "$@" 2>&1) || fail "memtext $pid $*: $r"
	MT_BYTES=() MT_DIFF=() MT_OTHER=()
	while read -r b d o first; do
		MT_BYTES+=("$b") MT_DIFF+=("$d") MT_OTHER+=("$o")
		echo "-- process $pid's text of ${1##*/}: $b bytes; $d of them differ from $2 ${first:-}$([ "$3" != - ] && echo "; $o page(s) differ from $3")"
		shift 3
	done <<<"$r"
}

pad_mark() {
	PAD_OFFS=$(prime_py pad "$1") || fail "cannot change $1"
	[ -n "$PAD_OFFS" ] || fail "pad_mark: no nop padding found at offset 0x800 of a page in $1's windows"
	echo "-- $1: 16 bytes of padding set to int3 at file offset(s) $PAD_OFFS; written out and dropped from the page cache"
}

windows() { prime_py windows "$1" || fail "cannot read $1's program headers"; }

nocachestat() { prime_py nocachestat "$@"; }

rewrite_same() { prime_py rewrite "$@" || fail "cannot rewrite $1"; }

maps_inodes() { awk '$5 != 0 { print $5 }' "/proc/$1/maps" 2>/dev/null | sort -u; }

# prime_pair EXE HOLD_S RUN_S [HOOK] — the scene of the defaults.prime.*
# tests where another process maps the file's small pages.  In $D: the
# holder, EXE run plain (ENORMOUSTEXT=0: flags-bfd's bigtext is linked with
# the library) with --run HOLD_S, which maps every page of its text small;
# once it runs, the subject, EXE with the library preloaded and no
# ENORMOUSTEXT_* variable but the report ($D/subject.json) and those in
# SUBJ_ENV (ENORMOUSTEXT_VERBOSE), with --run RUN_S --hold PAIR_HOLD (3)
# and the arguments in SUBJ_ARGS.  Until the subject holds
# (its checks done), every 0.1 s: the holder's Rss of the text files
# (PAIR_FILES) and the subject's copies and zero-copy text (text_huge).
# HOOK, a command, runs once, as soon as the subject's 8 windows are copied
# while the holder still runs (PAIR_T0: the subject's start, in
# date +%s%N).  Returns with the subject holding (memtext may look at
# it); pair_end waits for both.  Sets: HOLDER_PID SUBJ_PID,
# RSS_START RSS_MIN (kB, the holder's), T_COPY T_HOLDER_END T_ZERO (ms
# since the subject started: its copies in; the holder gone; its text all
# zero-copy, or -1), HELD_ANON HELD_FILE (kB: the subject's copies and
# zero-copy text at their largest while the holder ran after T_COPY),
# SERIES (the samples where a figure moved).
PAIR_FILES=()
SUBJ_ARGS=()
SUBJ_ENV=()
PAIR_HOLD=3
prime_pair() {
	local exe=$1 hold=$2 runs=$3 hook=${4:-} t0 t a f f2 r hook_done=0 last=""
	bg holder ENORMOUSTEXT=0 -- "$exe" --run "$hold" --expect-none
	HOLDER_PID=$BG_PID
	wait_for "$D/holder.out" '^bigtext: running for' 20
	RSS_START=0
	for f in "${PAIR_FILES[@]}"; do RSS_START=$((RSS_START + $(file_rss "$HOLDER_PID" "$f"))); done
	RSS_MIN=$RSS_START
	bg subject LD_PRELOAD="$PRE" ENORMOUSTEXT_REPORT="$D/subject.json" "${SUBJ_ENV[@]}" -- \
		"$exe" --run "$runs" --hold "$PAIR_HOLD" "${SUBJ_ARGS[@]}"
	SUBJ_PID=$BG_PID
	t0=$(date +%s%N)
	PAIR_T0=$t0
	T_COPY=-1 T_HOLDER_END=-1 T_ZERO=-1 HELD_ANON=0 HELD_FILE=0 SERIES=""
	while kill -0 "$SUBJ_PID" 2>/dev/null && ! grep -q '^bigtext: holding' "$D/subject.out"; do
		t=$((($(date +%s%N) - t0) / 1000000))
		read -r a f < <(text_huge "$SUBJ_PID")
		r=0
		if [ "$T_HOLDER_END" -lt 0 ] && [ -d "/proc/$HOLDER_PID" ] && ! grep -q '^State:.*Z' "/proc/$HOLDER_PID/status" 2>/dev/null; then
			r=0
			for f2 in "${PAIR_FILES[@]}"; do r=$((r + $(file_rss "$HOLDER_PID" "$f2"))); done
			# (a holder that has just ended reads 0: not a drop)
			if [ -d "/proc/$HOLDER_PID" ] && [ "$r" -gt 0 ]; then
				[ "$r" -lt "$RSS_MIN" ] && RSS_MIN=$r
				if [ "$T_COPY" -lt 0 ] && [ "${a:-0}" -gt 0 ]; then T_COPY=$t; fi
				if [ "$T_COPY" -ge 0 ]; then
					[ "${a:-0}" -gt "$HELD_ANON" ] && HELD_ANON=${a:-0}
					[ "${f:-0}" -gt "$HELD_FILE" ] && HELD_FILE=${f:-0}
					if [ "$hook_done" = 0 ] && [ -n "$hook" ] && [ "${a:-0}" -ge $((8 * H_MIB * 1024)) ]; then
						hook_done=1
						echo "-- at $t ms: the subject's text is copied, the holder still runs: $hook"
						eval "$hook"
					fi
				fi
			else
				T_HOLDER_END=$t
			fi
		elif [ "$T_HOLDER_END" -lt 0 ]; then
			T_HOLDER_END=$t
		fi
		if [ "$T_ZERO" -lt 0 ] && [ "${f:-0}" -gt 0 ] && [ "${a:-0}" -eq 0 ]; then T_ZERO=$t; fi
		if [ "${a:-0}/${f:-0}/$r" != "$last" ]; then
			SERIES="$SERIES ${t}ms:copies=$(mib "${a:-0}"),zero-copy=$(mib "${f:-0}"),holder-rss=$(mib "$r")"
			last="${a:-0}/${f:-0}/$r"
		fi
		sleep 0.1
	done
	kill -0 "$SUBJ_PID" 2>/dev/null || { bg_wait subject "$SUBJ_PID"; fail "the subject ended before its checks were done: $(bigtext_says)"; }
	echo "-- samples (MiB; holder-rss: the holder's Rss of ${PAIR_FILES[*]##*/}):$SERIES"
	echo "-- the holder's Rss of the files: $(mib "$RSS_START") MiB when the subject started, never below $(mib "$RSS_MIN") MiB while it ran;" \
		"the subject's copies in at ${T_COPY} ms; the holder gone at ${T_HOLDER_END} ms; the subject's text all zero-copy from ${T_ZERO} ms" \
		"(-1: never); while both ran: copies up to $(mib "$HELD_ANON") MiB, zero-copy up to $(mib "$HELD_FILE") MiB"
}
# pair_end [killed] — both waited for.  The holder must have passed (its
# results, its text identical to its files: BASE_RESULTS from it), or,
# with "killed", have been ended by the hook (SIGTERM).  The subject's
# status in RC, its output in OUT.
pair_end() {
	bg_wait holder "$HOLDER_PID"
	if [ "${1:-}" = killed ]; then
		[ "$RC" -eq 143 ] || fail "the holder was to be ended by SIGTERM, its exit status is $RC: $(bigtext_says)"
	else
		[ "$RC" -eq 0 ] || fail "the holder (no library) failed: $(bigtext_says)"
		BASE_RESULTS=$(grep '^bigtext: results:' "$OUT")
		[ -n "$BASE_RESULTS" ] || fail "the holder printed no results line"
	fi
	bg_wait subject "$SUBJ_PID"
}

# fails_only ERE WHAT — the bigtext run in OUT (status RC) failed, and
# only checks whose FAIL lines match ERE (at least one)
fails_only() {
	local n other
	n=$(grep -c '^bigtext: FAIL' "$OUT")
	other=$(grep '^bigtext: FAIL' "$OUT" | grep -vE "$1")
	[ "$RC" -eq 1 ] && [ "$n" -gt 0 ] && [ -z "$other" ] ||
		fail "$2: exit status $RC, $n failed check(s), expected to fail only /$1/: $(bigtext_says)"
}

# kinds_of REPORT PATH — window_kinds of the object the report names PATH,
# or PATH " (deleted)" (a file replaced since it was loaded)
kinds_of() {
	local obj
	"$JSON_FLAT" "$1" >"$1.flat" || fail "$1 is not valid JSON"
	obj=$(awk -F '\t' -v p="$2" '$2 == "string" && ($3 == p || $3 == p " (deleted)") { sub(/\.[^.\[]*$/, "", $1); print $1; exit }' "$1.flat")
	[ -n "$obj" ] || fail "the report $1 does not name $2"
	awk -F '\t' -v k="$obj.window_kinds" '$1 == k { print $3; f = 1 } END { exit !f }' "$1.flat" ||
		fail "the report's entry for $2 has no window_kinds"
}

# ---- defaults.prime.dirty*: a file with dirty pages --------------------------
# flags-bfd's bigtext and libbigtext.so, fresh and cold; the second window
# of libbigtext.so written again with its own bytes (dirty, small pages,
# the same contents); bigtext --run 3 with the library, under strace where
# it is installed (the calls that write out or drop page cache).
DIRTY_TRACE=fadvise64,fsync,fdatasync,sync,syncfs,sync_file_range,msync
# dirty_case LABEL [nocachestat] [VAR=VALUE...] — fresh copies, the lib's second window
# dirtied, bigtext --run 3 with the library; sets KX KL (window kinds of
# exe and lib), DIRTY0 DIRTY1 (the lib's dirty + writeback pages before
# and after), SYNCS (sync calls of the process), DROPS (its
# POSIX_FADV_DONTNEED calls on the lib), DROPS_DIRTY (those over the dirty
# window)
dirty_case() {
	local label=$1 pre=() H=$((H_MIB * 1048576))
	shift
	# (a daemon priming host-wide writes the dirty window out itself)
	no_foreign_primer "$label"
	layout_fresh flags-bfd bigtext
	cold "$D/bigtext" "$D/libbigtext.so"
	if [ "${1:-}" = nocachestat ]; then
		shift
		pre=(python3 "$PRIME_PY" nocachestat "$@" LD_PRELOAD="$PRE" ENORMOUSTEXT_REPORT="$D/$label.json" --)
	fi
	mapfile -t WINS < <(windows "$D/libbigtext.so")
	[ "${#WINS[@]}" -ge 3 ] || fail "libbigtext.so has ${#WINS[@]} windows: the test needs 3 or more"
	DOFF=$((WINS[1]))
	# a file nobody else touches, dirtied alike: if its pages are written
	# back during the run, someone else wrote back dirty pages (sync(1)
	# of another test), and this run says nothing about the library
	head -c "$H" /dev/zero >"$D/sentinel" || fail "cannot write $D/sentinel"
	cold "$D/sentinel"
	# both clean at once right after the rewrite: a sync(1) of another
	# test wrote them back just then; written again (three times at most)
	local w
	for w in 1 2 3; do
		rewrite_same "$D/libbigtext.so" "$DOFF" "$H" "$D/sentinel" 0 "$H"
		read -r DIRTY0 SENT0 < <(dirty_both)
		[ "$DIRTY0" != unavailable ] || skip "cachestat(2) is not available on this kernel (< 6.5): the test cannot see which pages are dirty"
		[ "$DIRTY0" -eq 0 ] && [ "$SENT0" -eq 0 ] || break
		echo "   (the lib's and the sentinel's rewritten pages were both clean at once: written back by someone else; again)"
	done
	[ "$DIRTY0" -gt 0 ] || fail "rewriting libbigtext.so's window at $(printf %#x "$DOFF") left no dirty page (cachestat), three times (sentinel: $SENT0): this file system writes through?"
	echo "-- $label: libbigtext.so's window at file offset $(printf %#x "$DOFF") written again with its own bytes: $DIRTY0 dirty page(s)"
	# the command: under strace (its variables with -E, for the traced
	# process alone), or plainly with env
	local vars=("$@" LD_PRELOAD="$PRE" ENORMOUSTEXT_REPORT="$D/$label.json") cmd=() v
	if command -v strace >/dev/null 2>&1; then
		cmd=(strace -f -y -qq -o "$D/$label.st" -e trace=$DIRTY_TRACE)
		[ ${#pre[@]} -gt 0 ] || for v in "${vars[@]}"; do cmd+=(-E "$v"); done
	else
		cmd=(env)
		[ ${#pre[@]} -gt 0 ] || cmd+=("${vars[@]}")
	fi
	run "$label" -- "${cmd[@]}" "${pre[@]}" ./bigtext --run 3 --expect-huge 100
	read -r DIRTY1 SENT1 < <(dirty_both)
	[ "$RC" -eq 0 ] || fail "$label: bigtext exited $RC: $(bigtext_says)"
	stderr_empty "$label: ENORMOUSTEXT_VERBOSE unset"
	KX=$(kinds "$D/$label.json" exe) || fail "$label: ${KX#FAIL*: }"
	KL=$(kinds "$D/$label.json" lib) || fail "$label: ${KL#FAIL*: }"
	SYNCS="" DROPS="" DROPS_DIRTY=""
	if [ -s "$D/$label.st" ]; then
		SYNCS=$(grep -E '^[0-9]+ +(fsync|fdatasync|sync|syncfs|sync_file_range|msync)\(' "$D/$label.st" | sed 's/^[0-9]* *//' | tr '\n' ' ')
		DROPS=$(grep -E 'fadvise64\([0-9]+<[^>]*/libbigtext\.so>, [0-9]+, [0-9]+, POSIX_FADV_DONTNEED' "$D/$label.st" |
			sed 's/.*fadvise64([0-9]*<[^>]*>, \([0-9]*\), \([0-9]*\),.*/\1 \2/')
		DROPS_DIRTY=$(awk -v lo="$DOFF" -v hi=$((DOFF + H)) 'NF { e = $2 ? $1 + $2 : 2^62 } NF && $1 < hi && e > lo { printf "%#x+%#x ", $1, $2 }' <<<"$DROPS")
	fi
	echo "-- $label: window kinds exe '$KX', lib '$KL'; the lib's dirty pages $DIRTY0 before, $DIRTY1 after;" \
		"sync calls: ${SYNCS:-none}; POSIX_FADV_DONTNEED on libbigtext.so: $(grep -c . <<<"$DROPS") (over the dirty window: ${DROPS_DIRTY:-none});" \
		"the sentinel's dirty pages $SENT0 before, $SENT1 after"
}

# the dirty + writeback pages of the lib and of the sentinel (one python run)
dirty_both() {
	pagecache stat "$D/libbigtext.so" "$D/sentinel" |
		awk '/cachestat unavailable/ { printf "unavailable " ; next } { printf "%d ", $5 + $7 } END { print "" }'
}

# judged LABEL ARGS... — dirty_case LABEL ARGS..., done again (three times
# at most) while someone else writes dirty pages back meanwhile
judged() {
	local try
	for try in 1 2 3; do
		dirty_case "$@"
		[ "$SENT1" -ge "$SENT0" ] && return
		echo "   (the sentinel's dirty pages were written back during the run: someone else wrote back dirty pages; again)"
	done
	skip "three times in a row dirty pages were written back by someone else during the run (sync(1) by other tests?): the library cannot be judged here"
}
# left_alone WHAT — the dirty window was left alone: no write-out, a copy
left_alone() {
	local w expect=""
	[ -z "$SYNCS" ] || fail "$1: the library wrote the file out: $SYNCS"
	[ -z "$DROPS_DIRTY" ] || fail "$1: the library dropped the dirty window from the page cache (POSIX_FADV_DONTNEED writes it out first): $DROPS_DIRTY"
	[ "$DIRTY1" -ge "$DIRTY0" ] ||
		fail "$1: the lib's dirty pages went from $DIRTY0 to $DIRTY1 during the run, while the sentinel's stayed dirty: the library wrote them out"
	for w in "${WINS[@]}"; do
		if [ $((w)) -eq "$DOFF" ]; then expect+=c; else expect+=z; fi
	done
	[ "${KL:1:1}" = c ] || fail "$1: libbigtext.so's window kinds are '$KL': the dirty (second) window must stay a copy ('c')"
	EXPECT_L=$expect
}

