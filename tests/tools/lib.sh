# shellcheck shell=bash disable=SC2034 # the variables are for the tests that source this
# lib.sh — what every tests/tools/*.sh test shares.  Each test file is one
# ctest test, tool_NAME for NAME.sh (see README.md in this folder for what
# each shows), and starts with
#   . "$(dirname "$0")/lib.sh"
#
# Every test runs the command as a user would, on processes and files it
# makes itself, and checks exit statuses, the exact shape of error output
# (one line naming the input), and the figures against an independent
# computation (awk over /proc/PID/smaps, the ELF headers, sysfs).
#
# Environment (set by CMakeLists.txt): TT_TOOL TT_LIB TT_BIN TT_SMALL TT_HOT
# TT_OBJ TT_TEXTREL TT_BUILD_ID TT_SRC TT_BUILD_DIR TT_CMAKE TT_CC TT_CFLAGS
# TT_INSTALL_* TT_WORK_ROOT.  TT_KEEP=1 keeps the work directory.  Without
# them a test says how to run it through ctest and exits 2.
#
# Exit: 0 pass, 1 fail, 77 skip (says why), 2 broken set-up.  A test ends
# with `pass` (prints "PASS [NAME]").
#
# It sources tests/lib/lib.sh (strict mode, the test's name T, fail / skip /
# pass / note, at_exit CMD or EXIT_HOOKS+=("CMD"), wait_line / wait_until:
# see there).  PIDS+=(PID) has PID killed when the test ends (after the
# other exit hooks).
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"
for v in TT_TOOL TT_LIB TT_BIN TT_WORK_ROOT; do
	if [ -z "${!v:-}" ]; then
		echo "$T: $v is not set: run the test through ctest: ctest --test-dir BUILD -R '^tool_$T\$' --output-on-failure"
		exit 2
	fi
done
TOOL=$TT_TOOL
JF=$TT_BIN/tt_json_flat
HOLD=$TT_BIN/tt_hold
H=$(cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size 2>/dev/null || echo 2097152)
# The library's option table (help, run_bad_input read its variables).
OPTIONS_C=${TT_SRC:-}/../../libenormoustext/src/core/options.c

# Nothing from the caller's environment may steer the library or the command.
et_clear_env
# The start-up path: the library moves the text in its constructor, so a
# program's own checks see the result at once, and copies stay copies (with
# priming a run on a file written out meanwhile — the kernel does that
# after 30 s — would leave the page cache huge for the next run, which
# would then be zero-copy).  The defaults (ENORMOUSTEXT_DEFER=1s,
# ENORMOUSTEXT_PRIME=auto) have tests of their own that unset these:
# integration.defaults.*, fault.syscalls' and fault.badvalues' defaults.
export ENORMOUSTEXT_DEFER=0 ENORMOUSTEXT_PRIME=0

et_workdir "$TT_WORK_ROOT" TT_KEEP
W=$ET_WORK
chmod 755 "$W"
PIDS=()
# The first hook added, so the last run.
# shellcheck disable=SC2016 # expanded when the hook runs
at_exit 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done'

[ -x "$TOOL" ] || fail "the command $TOOL does not exist (build the tool_tests target)"
for f in tt_hold tt_asuser tt_json_flat tt_thp_off tt_check_fuzz; do
	[ -x "$TT_BIN/$f" ] || fail "$TT_BIN/$f is missing: build the tool_tests target"
done

# ------------------------------------------------------------------ helpers

# t LABEL [VAR=VALUE...] -- COMMAND [ARGS...]: run it; stdout in $OUT,
# stderr in $ERR, exit status in $RC; everything echoed (ctest shows it).
N=0
t() {
	local label=$1 envs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	N=$((N + 1))
	OUT=$W/$N.$label.out
	ERR=$W/$N.$label.err
	echo "-- $label: ${envs[*]:+${envs[*]} }$*"
	env "${envs[@]}" "$@" >"$OUT" 2>"$ERR" </dev/null
	RC=$?
	et_show "$OUT" '   | ' 4000
	et_show "$ERR" '   stderr| '
	echo "   exit status $RC"
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "${2:-the command}: exit status $RC, expected $1"; }
expect_out() { grep -qE -- "$1" "$OUT" || fail "${2:-stdout} does not match /$1/"; }
expect_no_out() { [ ! -s "$OUT" ] || fail "${1:-the command} printed on stdout, expected nothing"; }
expect_no_err() { [ ! -s "$ERR" ] || fail "${1:-the command} wrote to stderr: $(head -3 "$ERR")"; }
# expect_bad RC WHAT REGEX: exit status RC and exactly one stderr line that
# starts with "enormoustext " and matches REGEX (which names the input).
expect_bad() {
	local rc=$1 what=$2 re=$3 n
	expect_rc "$rc" "$what"
	n=$(wc -l <"$ERR")
	[ "$n" -eq 1 ] || fail "$what: $n lines on stderr, expected exactly one"
	grep -qE -- "^enormoustext( [a-z][a-z-]*)?: " "$ERR" || fail "$what: the error line does not start with 'enormoustext ...: '"
	grep -qE -- "$re" "$ERR" || fail "$what: the error line does not match /$re/ (it should name the input and say what is wrong)"
}

# json FILE: validate with the strict checker; the flat listing in FILE.flat.
json() {
	"$JF" "$1" >"$1.flat" 2>"$1.jerr" || fail "$1 is not valid JSON: $(cat "$1.jerr")"
}
# jget FLAT PATH: the value at PATH (json_flat's notation, e.g. .objects[0].path).
jget() { awk -F'\t' -v p="$2" '$1 == p { print $3; found = 1; exit } END { if (!found) exit 1 }' "$1"; }
jneed() { jget "$1" "$2" || fail "no $2 in $(basename "$1" .flat)"; }
# jindex FLAT ARRAYPATH KEY VALUE: the index i with ARRAYPATH[i].KEY == VALUE.
jindex() {
	awk -F'\t' -v a="$2" -v k="$3" -v v="$4" '
		index($1, a "[") == 1 && $3 == v {
			rest = substr($1, length(a) + 2)
			i = substr(rest, 1, index(rest, "]") - 1)
			if (substr(rest, length(i) + 2) == "." k) { print i; exit }
		}' "$1"
}
# jcount FLAT ARRAYPATH KEY: how many elements have KEY.
jcount() { awk -F'\t' -v a="$2" -v k="$3" 'index($1, a "[") == 1 && $1 ~ ("\\]\\." k "$") { n++ } END { print n + 0 }' "$1"; }

# start_hold NAME [COMMAND PREFIX...] -- PROGRAM [ARGS]: start PROGRAM
# --wait (through the prefix, e.g. the command's `run`) in the background;
# its pid in $HPID, checked against its "ready PID" line (so a prefix that
# forked instead of exec'ing would be caught).  stop_hold NAME PID ends it.
start_hold() {
	local name=$1 pre=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do pre+=("$1"); shift; done
	shift
	# HOLD_SPIN=MS: the program runs MS ms before it waits (tt_hold --spin:
	# the library's deferral counts the main thread's CPU time by default)
	# (a NAME used before: its "ready" line must not be taken for this one's)
	rm -f "$W/$name.hold.out" "$W/$name.hold.err"
	"${pre[@]}" "$@" ${HOLD_SPIN:+--spin "$HOLD_SPIN"} --wait </dev/null >"$W/$name.hold.out" 2>"$W/$name.hold.err" &
	HPID=$!
	PIDS+=("$HPID")
	wait_line "$W/$name.hold.out" "^ready $HPID\$" 10 "$HPID"
	grep -q "^ready $HPID\$" "$W/$name.hold.out" ||
		fail "$* ($name) did not start as pid $HPID: $(cat "$W/$name.hold.out" "$W/$name.hold.err")"
	echo "-- started $name: ${pre[*]:+${pre[*]} }$* --wait: pid $HPID"
	[ -s "$W/$name.hold.err" ] && sed 's/^/   stderr| /' "$W/$name.hold.err"
}
stop_hold() {
	kill "$2" 2>/dev/null
	wait "$2" 2>/dev/null
	true
}

# ns_child PID: the process that `unshare -p -f` (pid PID) forked, the init
# of its new PID namespace (where it runs `chroot ROOT PROGRAM`, the
# program in its place): found by its parent, never by its name, which a
# test running beside this one may share (daemon_container's and oci_hook's
# containers both run /bin/app).
ns_child() { pgrep -P "$1" | head -n 1; }

# The bracketed choice of a sysfs file.
choice() { sed -n 's/.*\[\([^]]*\)\].*/\1/p' "$1"; }

# Hexadecimal in any awk (mawk has no strtonum); exact for page addresses.
AWK_HEX='function hex(s,  i, n) { n = 0; for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return n }'

# awk over smaps: the executable mappings' total size and huge bytes.
smaps_text_totals() {
	awk "$AWK_HEX"'
		/^[0-9a-f]+-[0-9a-f]+ / {
			split($1, r, "-"); x = (substr($2, 3, 1) == "x")
			if (x) text += hex(r[2]) - hex(r[1])
			next
		}
		x && /^(AnonHugePages|FilePmdMapped|ShmemPmdMapped|Private_Hugetlb|Shared_Hugetlb):/ { huge += $2 * 1024 }
		END { printf "%.0f %.0f\n", text, huge }' "$1"
}
# awk over smaps: the text of object PATH, counting anonymous executable
# mappings that lie between two of its file mappings; "text anon-copied huge".
smaps_object() {
	awk -v P="$2" "$AWK_HEX"'
		/^[0-9a-f]+-[0-9a-f]+ / {
			n++; split($1, r, "-"); len[n] = hex(r[2]) - hex(r[1])
			x[n] = (substr($2, 3, 1) == "x"); path[n] = (NF >= 6) ? $6 : ""
			for (i = 7; i <= NF; i++) path[n] = path[n] " " $i
			next
		}
		/^(AnonHugePages|FilePmdMapped|ShmemPmdMapped|Private_Hugetlb|Shared_Hugetlb):/ { huge[n] += $2 * 1024 }
		END {
			for (i = 1; i <= n; i++) {
				if (!x[i]) continue
				mine = (path[i] == P); copied = 0
				if (path[i] == "" || path[i] ~ /^\/anon_hugepage/) {
					for (a = i - 1; a >= 1 && (path[a] == "" || path[a] ~ /^\/anon_hugepage/ || path[a] ~ /^\[/); a--) ;
					for (b = i + 1; b <= n && (path[b] == "" || path[b] ~ /^\/anon_hugepage/ || path[b] ~ /^\[/); b++) ;
					if (a >= 1 && b <= n && path[a] == P && path[b] == P) { mine = 1; copied = 1 }
				}
				if (mine) { t += len[i]; h += huge[i]; if (copied) c += len[i] }
			}
			printf "%.0f %.0f %.0f\n", t, c, h
		}' "$1"
}

# fresh NAME: a `cp` copy of tt_hold in its own directory (a freshly linked
# file may sit in the page cache as huge folios; a copy does not).
fresh() {
	mkdir -p "$W/$1" && cp "$HOLD" "$W/$1/tt_hold" || fail "cannot copy $HOLD"
	F=$W/$1/tt_hold
}

# in_private_etc SCRIPT: run the rest of SCRIPT in a private mount namespace
# whose /etc is a copy (tests that write /etc/ld.so.preload: never the real
# one, whose state is taken before and compared after).  The outer run ends
# here (pass, or the inner run's status); the inner one returns with /etc
# the copy.  A sanitized build is skipped: its library cannot go into
# /etc/ld.so.preload (the sanitizer's runtime must be loaded first).
real_preload_state() { if [ -e /etc/ld.so.preload ]; then sha256sum </etc/ld.so.preload; else echo absent; fi; }
in_private_etc() {
	if [ "${ET_ENABLE_NS:-}" != 1 ]; then
		case " ${TT_CFLAGS:-} " in
		*sanitize*) skip "a sanitized library cannot go into /etc/ld.so.preload (the sanitizer's runtime must be loaded first)" ;;
		esac
		local before rc
		before=$(real_preload_state)
		command -v unshare >/dev/null || fail "unshare (util-linux) is missing: this test needs a private mount namespace, never the real /etc"
		unshare -m true 2>"$W/unshare.err" ||
			fail "unshare -m is not permitted here ($(head -1 "$W/unshare.err")): this test needs a private mount namespace, never the real /etc"
		ET_ENABLE_NS=1 unshare -m --propagation private -- bash "$1"
		rc=$?
		[ "$(real_preload_state)" = "$before" ] || fail "the real /etc/ld.so.preload changed ($before -> $(real_preload_state))"
		echo "   (the real /etc/ld.so.preload: $before, unchanged)"
		[ "$rc" = 0 ] || exit "$rc"
		pass
	fi
	mkdir "$W/etc" && cp -a /etc/. "$W/etc/" || fail "cannot copy /etc"
	mount --bind "$W/etc" /etc || fail "cannot bind-mount the copy over /etc"
	[ "$(stat -c %d:%i /etc)" = "$(stat -c %d:%i "$W/etc")" ] || fail "/etc is not the private copy: stopping before any write"
}

# ------------------------------------------------------------------ helpers of some tests

# --- what linker-scripts/enormous.ld costs: check_small, check_script, check_big
# (planned for 2 MiB pages whatever this system's are: the script's size).
SCRIPT=${TT_SRC:-}/../../linker-scripts/enormous.ld
H2=2097152
PG=$(getconf PAGESIZE)
up() { echo $(( ($1 + $2 - 1) / $2 * $2 )); }   # up N ALIGN: N rounded up
# seg_x FILE: "OFF VADDR FILESZ MEMSZ ALIGN PREV" of its executable LOAD, in
# decimal, from readelf; PREV is where the LOADs before it end in the file.
seg_x() {
	readelf -lW "$1" | awk '$1 == "LOAD"' >"$W/loads" || fail "readelf -lW $1 failed"
	local off va fs ms al prev=0 o f
	read -r off va fs ms al < <(awk '/ R E / { print $2, $3, $5, $6, $NF; exit }' "$W/loads")
	[ -n "$off" ] || fail "$1 has no R E LOAD segment: $(cat "$W/loads")"
	while read -r o f; do
		if (( o < off && o + f > prev )); then prev=$((o + f)); fi
	done < <(awk '{ print $2, $5 }' "$W/loads")
	echo $((off)) $((va)) $((fs)) $((ms)) $((al)) "$prev"
}
# sec_end FILE NAME: the address where section NAME ends, in decimal.
sec_end() {
	local a z
	read -r a z < <(readelf -SW "$1" | sed 's/^ *\[ *[0-9]*\] *//' | awk -v n="$2" '$1 == n { print $3, $5; exit }')
	[ -n "$a" ] || fail "$1 has no section $2"
	echo $((16#$a + 16#$z))
}
# cc_link OUT SOURCE FLAGS...: link a test program, or fail saying how.
cc_link() {
	local out=$1 src=$2
	shift 2
	"$TT_CC" -O1 -o "$out" "$src" "$@" >"$W/cc.out" 2>&1 ||
		fail "linking $(basename "$src") with '$*' failed: $(head -5 "$W/cc.out")"
}
have_lld() { "$TT_CC" -fuse-ld=lld -x c /dev/null -shared -o "$W/probe.so" 2>/dev/null; }

# The backends `auto` tries, by the rule in docs/backends.md, from the
# facts in a sysfs tree: "file thp collapse", "file collapse hugetlb", ...
# (status, status_saved)
expected_chain() {
	local en=$1 df=$2 free=$3 c
	case $en in
	always|madvise) case $df in defer|never) c="file collapse thp" ;; *) c="file thp collapse" ;; esac ;;
	*) c="file collapse" ;;
	esac
	[ "${free:-0}" -gt 0 ] && c="$c hugetlb"
	echo "$c"
}

# bracket SELECTED WORD...: a sysfs choice line, "always [madvise] never".
bracket() {
	local sel=$1 w out=""
	shift
	for w in "$@"; do
		if [ "$w" = "$sel" ]; then out="$out${out:+ }[$w]"; else out="$out${out:+ }$w"; fi
	done
	echo "$out"
}

# fake_sysfs DIR ENABLED DEFRAG FREE: a sysfs tree for --root (status_saved,
# setup_saved).
fake_sysfs() {
	local r=$1 t=$1/sys/kernel/mm/transparent_hugepage h=$1/sys/kernel/mm/hugepages
	mkdir -p "$t/khugepaged" "$t/hugepages-64kB" "$h/hugepages-2048kB" "$h/hugepages-1048576kB"
	bracket "$2" always madvise never >"$t/enabled"
	bracket "$3" always defer defer+madvise madvise never >"$t/defrag"
	echo "always within_size advise [never] deny force" >"$t/shmem_enabled"
	echo 2097152 >"$t/hpage_pmd_size"
	echo "always inherit madvise [never]" >"$t/hugepages-64kB/enabled"
	echo 4096 >"$t/khugepaged/pages_to_scan"
	echo 10000 >"$t/khugepaged/scan_sleep_millisecs"
	echo 1 >"$t/khugepaged/defrag"
	echo 10 >"$h/hugepages-2048kB/nr_hugepages"
	echo "$4" >"$h/hugepages-2048kB/free_hugepages"
	echo 1 >"$h/hugepages-2048kB/resv_hugepages"
	echo 0 >"$h/hugepages-2048kB/surplus_hugepages"
	echo 0 >"$h/hugepages-1048576kB/nr_hugepages"
	echo 0 >"$h/hugepages-1048576kB/free_hugepages"
	: "$r"
}

# bigdso NAME [LINKER FLAGS...] — a shared library with ~4.4 MiB of code
# (examples/bigcode.h), linked with enormous.ld unless flags are given
# (prime, prime_bad_input, systemd_example).
bigdso() {
	local name=$1
	shift
	local ex=$TT_SRC/../../examples
	printf '#include "bigcode.h"\nint big_entry(void) { return bc_run(); }\n' >"$W/big.c"
	local how=("$@")
	[ ${#how[@]} -gt 0 ] || how=(-Wl,-T,"$TT_SRC/../../linker-scripts/enormous.ld" -Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code)
	"$TT_CC" -O1 -fPIC -shared -I"$ex" "$W/big.c" "${how[@]}" -o "$W/$name" 2>"$W/$name.log" ||
		fail "cannot build $name: $(head -3 "$W/$name.log")"
	sync "$W/$name"
}

# need_huge_folios — skip the test where this kernel and the filesystem of
# $W give no huge page-cache folios (status's file probe: what prime, the
# daemon and the OCI hook are for)
need_huge_folios() {
	t probe -- "$TOOL" status --json --probe-dir "$W"
	expect_rc 0; json "$OUT"
	[ "$(jneed "$OUT.flat" .probes.file.works)" = true ] ||
		skip "this kernel and filesystem give no huge page-cache folios here: $(jneed "$OUT.flat" .probes.file.detail)"
}

# bigstatic OUT — a static program with ~4.4 MiB of code (examples/bigcode.h)
# linked with enormous.ld: prints "ready PID", then with an argument waits
# for a signal (daemon, daemon_container, oci_hook).  Skips the test where
# no static C library can be linked.
bigstatic() {
	local ex=$TT_SRC/../../examples
	printf '#include <signal.h>\n#include <stdio.h>\n#include <unistd.h>\n#include "bigcode.h"\nint main(int argc, char **argv) { (void)argv; bc_run(); printf("ready %%d\\n", (int)getpid()); fflush(stdout); if (argc > 1) pause(); return 0; }\n' >"$W/bigstatic.c"
	"$TT_CC" -O1 -static -I"$ex" -o "$1" "$W/bigstatic.c" -Wl,-T,"$TT_SRC/../../linker-scripts/enormous.ld" \
		-Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code 2>"$W/bigstatic.log" ||
		skip "no static C library to link a static program with: $(head -2 "$W/bigstatic.log")"
}

# copied_attributed PID REPORT: stat --json, stat --prometheus, perfmap
# --json (the map in $W/perf.map) and collapse --dry-run of PID, checked by
# tt_copied.py against the library's REPORT of that process (its copies
# credited to their files); false, with its lines above, when they are not
copied_attributed() {
	t json -- "$TOOL" stat --json "$1"
	expect_rc 0; cp "$OUT" "$W/stat.json"; json "$W/stat.json"
	t prom -- "$TOOL" stat --prometheus "$1"
	expect_rc 0; cp "$OUT" "$W/stat.prom"
	t map -- "$TOOL" perfmap --json -o "$W/perf.map" "$1"
	expect_rc 0; cp "$OUT" "$W/perfmap.json"; json "$W/perfmap.json"
	t dry -- "$TOOL" collapse --dry-run "$1"
	cp "$OUT" "$W/collapse.out"
	/usr/bin/python3 "$TT_SRC/tt_copied.py" "$2" "$W/stat.json" "$W/perfmap.json" "$W/stat.prom" "$W/collapse.out"
}
