#!/bin/bash
# run.sh CASE — one test of the enormoustext command (run through ctest as
# tool_CASE; see README.md in this folder for what each case shows).
#
# Every case runs the command as a user would, on processes and files it
# makes itself, and checks exit statuses, the exact shape of error output
# (one line naming the input), and the figures against an independent
# computation (awk over /proc/PID/smaps, the ELF headers, sysfs).
#
# Environment (set by CMakeLists.txt): TT_TOOL TT_LIB TT_BIN TT_SMALL TT_HOT
# TT_OBJ TT_TEXTREL TT_BUILD_ID TT_SRC TT_BUILD_DIR TT_CMAKE TT_CC TT_CFLAGS
# TT_INSTALL_* TT_WORK_ROOT.  TT_KEEP=1 keeps the work directory.
#
# Exit: 0 pass, 1 fail, 77 skip (says why), 2 broken set-up.
set -u

T=${1:?usage: run.sh CASE}
for v in TT_TOOL TT_LIB TT_BIN TT_WORK_ROOT; do
	if [ -z "${!v:-}" ]; then
		echo "run.sh: $v is not set: run the tests through ctest"
		exit 2
	fi
done
TOOL=$TT_TOOL
JF=$TT_BIN/tt_json_flat
HOLD=$TT_BIN/tt_hold
H=$(cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size 2>/dev/null || echo 2097152)

# Nothing from the caller's environment may steer the library or the command.
while read -r v; do unset "$v"; done < <(env | sed -n 's/^\(ENORMOUSTEXT[A-Za-z0-9_]*\)=.*/\1/p')
unset LD_PRELOAD LD_LIBRARY_PATH

mkdir -p "$TT_WORK_ROOT" || exit 2
W=$(mktemp -d "$TT_WORK_ROOT/$T.XXXXXX") || exit 2
chmod 755 "$W"
PIDS=()
EXIT_HOOKS=()
# shellcheck disable=SC2317 # called by the EXIT trap
on_exit() {
	local h p
	for h in "${EXIT_HOOKS[@]}"; do eval "$h"; done
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	if [ "${TT_KEEP:-0}" = 1 ]; then echo "(work directory kept: $W)"; else rm -rf "$W"; fi
}
trap on_exit EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL [$T]: $*"; exit 1; }
skip() { echo "SKIP [$T]: $*"; exit 77; }
note() { echo "   note: $*"; }

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
	head -c 4000 "$OUT" | sed 's/^/   | /'
	[ -s "$ERR" ] && sed 's/^/   stderr| /' "$ERR"
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
	grep -qE -- "^enormoustext( [a-z]+)?: " "$ERR" || fail "$what: the error line does not start with 'enormoustext ...: '"
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
	local name=$1 pre=() i
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do pre+=("$1"); shift; done
	shift
	"${pre[@]}" "$@" --wait </dev/null >"$W/$name.hold.out" 2>"$W/$name.hold.err" &
	HPID=$!
	PIDS+=("$HPID")
	for i in $(seq 1 400); do
		grep -q '^ready ' "$W/$name.hold.out" 2>/dev/null && break
		kill -0 "$HPID" 2>/dev/null || break
		sleep 0.025
	done
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

# ------------------------------------------------------------------ cases

case_help() {
	t top -- "$TOOL" --help
	expect_rc 0 "--help"; expect_no_err "--help"
	for c in run stat check status setup; do expect_out "^  $c " "--help lists $c"; done
	t version -- "$TOOL" --version
	expect_rc 0; expect_out '^enormoustext [0-9]+\.[0-9]+\.[0-9]+$'
	t none -- "$TOOL"
	expect_rc 2 "no command"; [ -s "$ERR" ] || fail "no command: no usage on stderr"
	t bogus_cmd -- "$TOOL" frobnicate
	expect_bad 2 "an unknown command" "'frobnicate'"
	t bogus_opt -- "$TOOL" --frobnicate
	expect_bad 2 "an unknown option" "'--frobnicate'"

	local man=$TT_SRC/../../tools/enormoustext.1
	[ -s "$man" ] || fail "no man page $man"
	for c in run stat check status setup; do
		t "$c.help" -- "$TOOL" "$c" --help
		expect_rc 0 "$c --help"; expect_no_err "$c --help"
		head -1 "$OUT" | grep -q "^usage: enormoustext $c" || fail "$c --help does not start with its usage line"
		cp "$OUT" "$W/$c.help"
		t "$c.h" -- "$TOOL" "$c" -h
		cmp -s "$OUT" "$W/$c.help" || fail "$c -h differs from $c --help"
		t "help.$c" -- "$TOOL" help "$c"
		cmp -s "$OUT" "$W/$c.help" || fail "'help $c' differs from '$c --help'"
		t "$c.unknown" -- "$TOOL" "$c" --no-such-option
		expect_bad 2 "$c --no-such-option" "unknown option '--no-such-option'"
		# Every option the help names is one the command knows (it may say the
		# value is missing or the call is incomplete, never "unknown"), and
		# the man page names it too.
		grep -q "^\.SS .*$c" "$man" || fail "the man page has no section for '$c'"
		for o in $(grep -oE -- '(^|[ ,(])--[a-z][a-z-]+' "$W/$c.help" | sed 's/^[ ,(]//' | sort -u); do
			[ "$o" = --help ] && continue
			if [ "$c" = run ] || [ "$c" = setup ]; then
				t "$c$o" -- "$TOOL" "$c" "$o"
			else
				t "$c$o" -- "$TOOL" "$c" "$o" --no-such-option
			fi
			grep -q "unknown option '$o'" "$ERR" && fail "$c --help names $o but $c does not know it"
			grep -q -- "$(printf '%s' "$o" | sed 's/-/\\\\\\?-/g')" "$man" || fail "the man page does not mention $c's option $o"
		done
	done
	# run's options are the library's variables: every variable of its option
	# table is in `run --help`, under its name.
	local vars
	vars=$(grep -oE '\] = \{ "ENORMOUSTEXT(_[A-Z_]+)?"' "$TT_SRC/../../libenormoustext/src/options.c" | grep -oE 'ENORMOUSTEXT[A-Z_]*' | sort -u)
	[ -n "$vars" ] || fail "no variable found in options.c"
	for v in $vars; do
		grep -q "\[$v\]" "$W/run.help" || fail "run --help does not offer $v"
	done
	grep -qF "$TT_LIB" "$W/run.help" || fail "run --help does not name the library it would use ($TT_LIB)"
	local hs
	hs=$(( H >> 20 ))M
	grep -q "default $hs" "$W/check.help" || fail "check --help does not give this system's PMD size ($hs) as default"
	if command -v groff >/dev/null; then
		groff -man -Tutf8 -ww -z "$man" 2>"$W/groff.err"
		[ -s "$W/groff.err" ] && fail "the man page has groff warnings: $(head -3 "$W/groff.err")"
	else
		note "groff is not installed: the man page's roff was not checked"
	fi
}

case_run_dry_run() {
	t dry -- "$TOOL" run --dry-run --backend thp --verbose 2 --exclude '*libc*' --exclude '*ld-linux*' \
		--min-bytes 4M --report "$W/r.json" --enable 1 -- prog a 'b c'
	expect_rc 0; expect_no_err
	cat >"$W/expected" <<-EOF
	LD_PRELOAD=$TT_LIB
	ENORMOUSTEXT=1
	ENORMOUSTEXT_VERBOSE=2
	ENORMOUSTEXT_BACKEND=thp
	ENORMOUSTEXT_EXCLUDE='*libc*:*ld-linux*'
	ENORMOUSTEXT_MIN_BYTES=4M
	ENORMOUSTEXT_REPORT=$W/r.json
	exec prog a 'b c'
	EOF
	diff -u "$W/expected" "$OUT" || fail "--dry-run printed something else than expected (diff above)"

	t keep -- LD_PRELOAD="$TT_SMALL" "$TOOL" run -n -- true
	expect_rc 0
	expect_out "^LD_PRELOAD=$TT_LIB:$TT_SMALL\$" "an existing LD_PRELOAD comes after the library"
	t nodup -- LD_PRELOAD="$TT_SMALL $TT_LIB" "$TOOL" run -n -- true
	expect_out "^LD_PRELOAD=$TT_LIB:$TT_SMALL\$" "the library is not listed twice"
	t v -- "$TOOL" run -n -v -v -- true
	expect_out '^ENORMOUSTEXT_VERBOSE=2$' "-v -v"
	t vv -- "$TOOL" run -n -v --verbose 3 -v -- true
	expect_out '^ENORMOUSTEXT_VERBOSE=3$' "--verbose wins over -v"
	t lib -- "$TOOL" run -n --lib "$TT_SMALL" -- true
	expect_out "^LD_PRELOAD=$TT_SMALL\$" "--lib"
	t rel -- bash -c "cd '$(dirname "$TT_SMALL")' && exec '$TOOL' run -n --lib ./$(basename "$TT_SMALL") -- true"
	expect_out "^LD_PRELOAD=$(dirname "$TT_SMALL")/./$(basename "$TT_SMALL")\$" "a relative --lib made absolute"
	t envlib -- ENORMOUSTEXT_LIB="$TT_SMALL" "$TOOL" run -n -- true
	expect_out "^LD_PRELOAD=$TT_SMALL\$" "ENORMOUSTEXT_LIB"
	t libwins -- ENORMOUSTEXT_LIB=/nonexistent.so "$TOOL" run -n --lib "$TT_SMALL" -- true
	expect_rc 0 "--lib over ENORMOUSTEXT_LIB"; expect_out "^LD_PRELOAD=$TT_SMALL\$"
	t quote -- "$TOOL" run -n --include "a b:it's" -- 'x y'
	expect_out "^ENORMOUSTEXT_INCLUDE='a b:it'\\\\''s'\$" "a value with spaces and a quote, shell-quoted"
	expect_out "^exec 'x y'\$" "the command, shell-quoted"
	# An option given in the environment stays (not printed); options win.
	t envkept -- ENORMOUSTEXT_BACKEND=collapse "$TOOL" run -n -- true
	grep -q ENORMOUSTEXT_BACKEND "$OUT" && fail "--dry-run printed a variable no option set"
	true
}

case_run_exec() {
	t status -- "$TOOL" run -- "$HOLD" --exit 7
	expect_rc 7 "the command's exit status"
	t status0 -- "$TOOL" run --enable 0 -- "$HOLD"
	expect_rc 0
	t env -- "$TOOL" run --backend collapse --include '*tt_hold*' --min-bytes 1K -- "$HOLD" \
		--print-env ENORMOUSTEXT_BACKEND --print-env ENORMOUSTEXT_INCLUDE \
		--print-env ENORMOUSTEXT_MIN_BYTES --print-env LD_PRELOAD --print-env ENORMOUSTEXT_REPORT
	expect_rc 0
	expect_out '^ENORMOUSTEXT_BACKEND=collapse$'
	expect_out '^ENORMOUSTEXT_INCLUDE=\*tt_hold\*$'
	expect_out '^ENORMOUSTEXT_MIN_BYTES=1K$'
	expect_out "^LD_PRELOAD=$TT_LIB\$"
	expect_out '^ENORMOUSTEXT_REPORT unset$'
	t path -- PATH="$TT_BIN:$PATH" "$TOOL" run -- tt_hold --exit 3
	expect_rc 3 "a command found through PATH"
	# exec, not fork: the program has the command's process id.
	start_hold p "$TOOL" run -- "$HOLD"
	stop_hold p "$HPID"
	t notfound -- "$TOOL" run -- "$W/no-such-program"
	expect_bad 127 "a command that does not exist" "no-such-program: command not found"
	printf 'x' >"$W/notexec"
	chmod 644 "$W/notexec"
	t notexec -- "$TOOL" run -- "$W/notexec"
	expect_bad 126 "a file that is not executable" "notexec: Permission denied"
}

case_run_library() {
	fresh a
	start_hold base -- "$F"
	t base -- "$TOOL" stat --json "$HPID"
	expect_rc 0; json "$OUT"
	local i
	i=$(jindex "$OUT.flat" .objects path "$F")
	[ -n "$i" ] || fail "stat does not list $F"
	[ "$(jneed "$OUT.flat" ".objects[$i].huge_by_kind.anon")" = 0 ] || fail "BASELINE: $F has anonymous huge text without the library"
	stop_hold base "$HPID"

	fresh b
	t lib -- "$TOOL" run --verbose 1 --report "$W/r.json" -- "$F" --exit 3
	expect_rc 3 "the program's exit status through the library"
	[ "$(wc -l <"$ERR")" -eq 1 ] || fail "--verbose 1: expected exactly one line from the library on stderr"
	grep -qE '^enormoustext: [0-9]+ objects?, .* text on [0-9]+ (MiB|KiB) pages' "$ERR" ||
		fail "--verbose 1: not the library's summary line"
	[ -s "$W/r.json" ] || fail "--report: no report written"
	json "$W/r.json"
	i=$(jindex "$W/r.json.flat" .objects path "$F")
	[ -n "$i" ] || fail "the report does not list $F"
	local huge
	huge=$(jneed "$W/r.json.flat" ".objects[$i].huge_bytes")
	[ "$huge" -ge "$H" ] || fail "the library moved no window of $F ($huge bytes huge): $(jget "$W/r.json.flat" ".objects[$i].reasons[0]")"

	fresh c
	t exclude -- "$TOOL" run --exclude '*/c/tt_hold' --report "$W/r2.json" -- "$F"
	expect_rc 0; json "$W/r2.json"
	i=$(jindex "$W/r2.json.flat" .objects path "$F")
	[ "$(jneed "$W/r2.json.flat" ".objects[$i].huge_bytes")" = 0 ] || fail "--exclude: $F was moved all the same"
	grep -q 'excluded' "$W/r2.json" || fail "--exclude: the report does not say it was excluded"
}

case_run_bad_input() {
	t unknown -- "$TOOL" run --frobnicate -- true
	expect_bad 2 "an unknown option" "unknown option '--frobnicate'"
	t backend -- "$TOOL" run --backend bogus -- true
	expect_bad 2 "a bad --backend" "'--backend bogus' is not valid: it accepts auto, file, thp, collapse, hugetlb"
	t verbose -- "$TOOL" run --verbose 9 -- true
	expect_bad 2 "a bad --verbose" "'--verbose 9' is not valid"
	t size -- "$TOOL" run --min-bytes 12Q -- true
	expect_bad 2 "a bad --min-bytes" "'--min-bytes 12Q' is not valid"
	t enable -- "$TOOL" run --enable maybe -- true
	expect_bad 2 "a bad --enable" "'--enable maybe' is not valid"
	t noval -- "$TOOL" run --backend
	expect_bad 2 "--backend without a value" "'--backend' needs a value"
	t nocmd -- "$TOOL" run --backend thp
	expect_bad 2 "no command" "no command to run"
	t nocmd2 -- "$TOOL" run
	expect_bad 2 "no command" "no command to run"
	t report -- "$TOOL" run --report /nonexistent-dir/r.json -- true
	expect_bad 1 "a report in a missing directory" "/nonexistent-dir"
	t nolib -- "$TOOL" run --lib "$W/missing.so" -- true
	expect_bad 1 "--lib that does not exist" "--lib $W/missing.so: No such file or directory"
	t envnolib -- ENORMOUSTEXT_LIB="$W/missing.so" "$TOOL" run -- true
	expect_bad 1 "ENORMOUSTEXT_LIB that does not exist" "ENORMOUSTEXT_LIB=$W/missing.so: No such file"
	echo "not a library" >"$W/text.so"
	t notelf -- "$TOOL" run --lib "$W/text.so" -- true
	expect_bad 1 "--lib that is not ELF" "text.so: not an ELF shared library"
	t dirlib -- "$TOOL" run --lib "$W" -- true
	expect_bad 1 "--lib that is a directory" "not a regular file"
	# --profile: the library has no such variable yet, and says so; when its
	# table gains ENORMOUSTEXT_PROFILE the option maps onto it.
	if grep -q 'ENORMOUSTEXT_PROFILE' "$TT_SRC/../../libenormoustext/src/options.c"; then
		t profile -- "$TOOL" run -n --profile "$W/p" -- true
		expect_rc 0; expect_out "^ENORMOUSTEXT_PROFILE=$W/p\$"
	else
		t profile -- "$TOOL" run --profile "$W/p" -- true
		expect_bad 2 "--profile without library support" "'--profile': this libenormoustext has no profile support"
	fi
}

case_stat_process() {
	fresh a
	start_hold a -- "$F"
	cp "/proc/$HPID/smaps" "$W/smaps.after"
	t text -- "$TOOL" stat "$HPID"
	expect_rc 0; expect_no_err
	expect_out "^PID $HPID \\(tt_hold\\): "
	expect_out " $F\$" "the object table"
	t json -- "$TOOL" stat --json "$HPID"
	expect_rc 0; expect_no_err
	json "$OUT"
	[ "$(jneed "$OUT.flat" .pid)" = "$HPID" ] || fail ".pid is not $HPID"
	[ "$(jneed "$OUT.flat" .command)" = tt_hold ] || fail ".command is not tt_hold"
	local want text huge
	read -r text huge < <(smaps_text_totals "$W/smaps.after")
	[ "$(jneed "$OUT.flat" .text_bytes)" = "$text" ] || fail ".text_bytes $(jget "$OUT.flat" .text_bytes), smaps says $text"
	[ "$(jneed "$OUT.flat" .huge_bytes)" = "$huge" ] || fail ".huge_bytes $(jget "$OUT.flat" .huge_bytes), smaps says $huge"
	local i sum=0 k
	i=$(jindex "$OUT.flat" .objects path "$F")
	[ -n "$i" ] || fail "no object $F"
	read -r want _ _ < <(smaps_object "$W/smaps.after" "$F")
	[ "$(jneed "$OUT.flat" ".objects[$i].text_bytes")" = "$want" ] || fail "$F: text_bytes $(jget "$OUT.flat" ".objects[$i].text_bytes"), smaps says $want"
	[ "$want" -ge 6291456 ] || fail "$F: less than its 6 MiB of text"
	[ "$(jneed "$OUT.flat" ".objects[$i].huge_by_kind.anon")" = 0 ] || fail "$F: anonymous huge text without the library"
	[ "$(jneed "$OUT.flat" ".objects[$i].copied_text_bytes")" = 0 ] || fail "$F: copied text without the library"
	[ "$(jneed "$OUT.flat" ".objects[$i].kind")" = file ] || fail "$F: kind is not file"
	jindex "$OUT.flat" .objects path '[vdso]' | grep -q . || fail "no [vdso] object"
	# The objects add up to the process.
	for k in $(awk -F'\t' '$1 ~ /^\.objects\[[0-9]+\]\.text_bytes$/ { print $3 }' "$OUT.flat"); do sum=$((sum + k)); done
	[ "$sum" = "$text" ] || fail "the objects' text_bytes add up to $sum, the process has $text"
	stop_hold a "$HPID"
}

case_perfmap() {
	# A perf map for a process whose text the library moved: the moved
	# function (tt_big_text) named at its address; none without the library;
	# bad inputs.
	fresh a
	start_hold lib "$TOOL" run -- "$F"
	local addr
	addr=$(nm "$F" | awk '$3 == "tt_big_text" { print $1 }')
	[ -n "$addr" ] || fail "no tt_big_text symbol in $F"
	t map -- "$TOOL" perfmap --output "$W/perf.map" "$HPID"
	expect_rc 0; expect_no_err
	expect_out "functions in the moved text of 1 object"
	sed 's/^/   map| /' "$W/perf.map"
	# The map names tt_big_text once, at load base + its symbol value.
	local base start
	base=$(awk -v f="$F" '$6 == f && $3 == "00000000" { split($1, r, "-"); print r[1]; exit }' "/proc/$HPID/maps")
	start=$(printf '%x' $((0x$base + 0x$addr)))
	[ "$(grep -c ' tt_big_text$' "$W/perf.map")" = 1 ] || fail "tt_big_text is not named exactly once"
	grep -q "^$start 600000 tt_big_text\$" "$W/perf.map" || fail "tt_big_text not at $start (base $base + $addr)"
	stop_hold lib "$HPID"
	start_hold base -- "$F"
	t none -- "$TOOL" perfmap --output "$W/none.map" "$HPID"
	expect_rc 0
	expect_out "has no moved text"
	[ ! -e "$W/none.map" ] || fail "a map was written for a process without moved text"
	stop_hold base "$HPID"
	t nopid -- "$TOOL" perfmap 4194000
	expect_rc 1
	t badpid -- "$TOOL" perfmap 12x
	expect_rc 2
	t help -- "$TOOL" perfmap --help
	expect_rc 0
	expect_out "^usage: enormoustext perfmap"
}

case_stat_library() {
	fresh a
	start_hold lib "$TOOL" run --report "$W/r.json" -- "$F"
	cp "/proc/$HPID/smaps" "$W/smaps"
	t json -- "$TOOL" stat --json "$HPID"
	expect_rc 0; expect_no_err; json "$OUT"
	json "$W/r.json"
	local i r text copied huge
	i=$(jindex "$OUT.flat" .objects path "$F")
	r=$(jindex "$W/r.json.flat" .objects path "$F")
	[ -n "$i" ] && [ -n "$r" ] || fail "$F missing from stat or from the library's report"
	local rhuge
	rhuge=$(jneed "$W/r.json.flat" ".objects[$r].huge_bytes")
	[ "$rhuge" -ge "$H" ] || fail "the library moved nothing of $F: $(jget "$W/r.json.flat" ".objects[$r].reasons[0]")"
	read -r text copied huge < <(smaps_object "$W/smaps" "$F")
	[ "$(jneed "$OUT.flat" ".objects[$i].text_bytes")" = "$text" ] || fail "$F: text_bytes $(jget "$OUT.flat" ".objects[$i].text_bytes"), expected $text (file and copied mappings)"
	[ "$(jneed "$OUT.flat" ".objects[$i].copied_text_bytes")" = "$copied" ] || fail "$F: copied_text_bytes, expected $copied"
	[ "$(jneed "$OUT.flat" ".objects[$i].huge_bytes")" = "$huge" ] || fail "$F: huge_bytes, smaps says $huge"
	[ "$copied" -ge "$rhuge" ] || fail "$F: $copied bytes in anonymous copies, the library moved $rhuge"
	# The kinds: what the library did is what stat calls anon (+ hugetlb).
	local anon tlb
	anon=$(jneed "$OUT.flat" ".objects[$i].huge_by_kind.anon")
	tlb=$(jneed "$OUT.flat" ".objects[$i].huge_by_kind.hugetlb")
	[ $((anon + tlb)) = "$rhuge" ] || fail "$F: stat has anon $anon + hugetlb $tlb, the library's report $rhuge"
	# The object's text is its whole executable segment, page-rounded.
	t check -- "$TOOL" check --json "$F"
	json "$OUT"
	local va sz lo hi
	va=$(jneed "$OUT.flat" ".segments[1].vaddr"); sz=$(jneed "$OUT.flat" ".segments[1].memsz")
	[ "$(jneed "$OUT.flat" ".segments[1].text")" = true ] || fail "tt_hold's second segment is not its text"
	lo=$((va & ~4095)); hi=$(((va + sz + 4095) & ~4095))
	[ "$text" = $((hi - lo)) ] || fail "$F: $text bytes of text mapped, its segment is $((hi - lo))"
	t text -- "$TOOL" stat "$HPID"
	expect_out " $F \\([0-9.]+[KMG] of it in anonymous copies\\)\$" "the text output shows the copies"
	stop_hold lib "$HPID"

	# The library off: the same program, nothing copied.
	fresh b
	start_hold off "$TOOL" run --enable 0 -- "$F"
	t off -- "$TOOL" stat --json "$HPID"
	json "$OUT"
	i=$(jindex "$OUT.flat" .objects path "$F")
	[ "$(jneed "$OUT.flat" ".objects[$i].copied_text_bytes")" = 0 ] || fail "--enable 0: text was copied"
	stop_hold off "$HPID"
}

case_stat_several() {
	fresh a
	start_hold one "$TOOL" run -- "$F"
	local p1=$HPID
	fresh b
	start_hold two -- "$F"
	local p2=$HPID
	t two -- "$TOOL" stat --json "$p1" "$p2"
	expect_rc 0; json "$OUT"
	[ "$(jneed "$OUT.flat" '[0].pid')" = "$p1" ] && [ "$(jneed "$OUT.flat" '[1].pid')" = "$p2" ] ||
		fail "two PIDs: not a list of both, in order"
	jget "$OUT.flat" '[2].pid' >/dev/null && fail "two PIDs gave three entries"
	t one -- "$TOOL" stat --json "$p1"
	json "$OUT"
	jget "$OUT.flat" .pid >/dev/null || fail "one PID: not a single object"
	t text -- "$TOOL" stat "$p1" "$p2"
	[ "$(grep -c '^PID ' "$OUT")" = 2 ] || fail "two PIDs: not two sections"
	t all -- "$TOOL" stat --all --json
	expect_rc 0; json "$OUT"
	local pids
	pids=" $(awk -F'\t' '$1 ~ /^\[[0-9]+\]\.pid$/ { printf "%s ", $3 }' "$OUT.flat")"
	[[ $pids == *" $p1 "* && $pids == *" $p2 "* ]] || fail "--all does not list $p1 and $p2"
	t summary -- "$TOOL" stat --all --summary
	expect_rc 0
	expect_out '^ +PID +TEXT +HUGE +ANON +FILE +SHMEM +HUGETLB +COMMAND$' "the summary header"
	expect_out "^ *$p1 .* tt_hold\$"; expect_out "^ *$p2 .* tt_hold\$"
	t sum1 -- "$TOOL" stat -s "$p2"
	[ "$(wc -l <"$OUT")" = 2 ] || fail "--summary of one PID: not a header and one line"
	stop_hold one "$p1"
	stop_hold two "$p2"
}

case_stat_saved() {
	# A saved smaps with every kind and every attribution case (see README).
	local d=$W/proc/4242
	mkdir -p "$d"
	echo app >"$d/comm"
	kb() { printf 'Size: 0 kB\nAnonHugePages: %d kB\nShmemPmdMapped: %d kB\nFilePmdMapped: %d kB\nShared_Hugetlb: %d kB\nPrivate_Hugetlb: %d kB\n' "$@"; }
	{
		echo "555500000000-555500001000 r--p 00000000 fe:00 100                        /opt/app/bin/app"; kb 0 0 0 0 0
		echo "555500001000-555500200000 r-xp 00001000 fe:00 100                        /opt/app/bin/app"; kb 0 0 0 0 0
		echo "555500200000-555500400000 r-xp 00000000 00:00 0 "; kb 2048 0 0 0 0
		echo "555500400000-555500600000 r-xp 00000000 00:0f 5000                       /anon_hugepage (deleted)"; kb 0 0 0 0 2048
		echo "555500600000-555500700000 r-xp 00600000 fe:00 100                        /opt/app/bin/app"; kb 0 0 0 0 0
		echo "555500700000-555500800000 r--p 00700000 fe:00 100                        /opt/app/bin/app"; kb 0 0 0 0 0
		echo "555500800000-555500c00000 rw-p 00000000 00:00 0                          [heap]"; kb 4096 0 0 0 0
		echo "7f0000000000-7f0000400000 r-xp 00000000 fe:00 200                        /opt/app/lib/lib big.so"; kb 0 0 4096 0 0
		echo "7f0000400000-7f0000500000 r--p 00400000 fe:00 200                        /opt/app/lib/lib big.so"; kb 0 0 0 0 0
		echo "7f0000600000-7f0000800000 r-xs 00000000 00:01 300                        /memfd:jit (deleted)"; kb 0 2048 0 0 0
		echo "7f0000a00000-7f0000a01000 r-xp 00000000 00:00 0 "; kb 0 0 0 0 0
		echo "7f0000b00000-7f0000b02000 r-xp 00000000 00:00 0                          [anon:jit]"; kb 0 0 0 0 0
		echo "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]"; kb 0 0 0 0 0
	} >"$d/smaps"
	t saved -- "$TOOL" stat --json --proc "$W/proc" 4242
	expect_rc 0; expect_no_err; json "$OUT"
	cat >"$W/expected" <<-EOF
	.pid	number	4242
	.command	string	app
	.text_bytes	number	$((0x1ff000 + 0x200000 + 0x200000 + 0x100000 + 0x400000 + 0x200000 + 0x1000 + 0x2000 + 0x2000))
	.huge_bytes	number	$((10 << 20))
	.huge_by_kind.anon	number	$((2 << 20))
	.huge_by_kind.file	number	$((4 << 20))
	.huge_by_kind.shmem	number	$((2 << 20))
	.huge_by_kind.hugetlb	number	$((2 << 20))
	.objects[0].path	string	/opt/app/bin/app
	.objects[0].kind	string	file
	.objects[0].text_bytes	number	$((0x1ff000 + 0x200000 + 0x200000 + 0x100000))
	.objects[0].huge_bytes	number	$((4 << 20))
	.objects[0].huge_by_kind.anon	number	$((2 << 20))
	.objects[0].huge_by_kind.file	number	0
	.objects[0].huge_by_kind.shmem	number	0
	.objects[0].huge_by_kind.hugetlb	number	$((2 << 20))
	.objects[0].copied_text_bytes	number	$((4 << 20))
	.objects[0].mappings	number	4
	.objects[1].path	string	/opt/app/lib/lib big.so
	.objects[1].kind	string	file
	.objects[1].text_bytes	number	$((4 << 20))
	.objects[1].huge_bytes	number	$((4 << 20))
	.objects[1].huge_by_kind.anon	number	0
	.objects[1].huge_by_kind.file	number	$((4 << 20))
	.objects[1].huge_by_kind.shmem	number	0
	.objects[1].huge_by_kind.hugetlb	number	0
	.objects[1].copied_text_bytes	number	0
	.objects[1].mappings	number	1
	.objects[2].path	string	/memfd:jit (deleted)
	.objects[2].kind	string	file
	.objects[2].text_bytes	number	$((2 << 20))
	.objects[2].huge_bytes	number	$((2 << 20))
	.objects[2].huge_by_kind.anon	number	0
	.objects[2].huge_by_kind.file	number	0
	.objects[2].huge_by_kind.shmem	number	$((2 << 20))
	.objects[2].huge_by_kind.hugetlb	number	0
	.objects[2].copied_text_bytes	number	0
	.objects[2].mappings	number	1
	.objects[3].path	string	[anonymous]
	.objects[3].kind	string	anonymous
	.objects[3].text_bytes	number	$((0x1000 + 0x2000))
	.objects[3].huge_bytes	number	0
	.objects[3].huge_by_kind.anon	number	0
	.objects[3].huge_by_kind.file	number	0
	.objects[3].huge_by_kind.shmem	number	0
	.objects[3].huge_by_kind.hugetlb	number	0
	.objects[3].copied_text_bytes	number	0
	.objects[3].mappings	number	2
	.objects[4].path	string	[vdso]
	.objects[4].kind	string	pseudo
	.objects[4].text_bytes	number	$((0x2000))
	.objects[4].huge_bytes	number	0
	.objects[4].huge_by_kind.anon	number	0
	.objects[4].huge_by_kind.file	number	0
	.objects[4].huge_by_kind.shmem	number	0
	.objects[4].huge_by_kind.hugetlb	number	0
	.objects[4].copied_text_bytes	number	0
	.objects[4].mappings	number	1
	EOF
	diff -u "$W/expected" "$OUT.flat" || fail "the saved smaps gave other figures (diff above)"
	t text -- "$TOOL" stat --proc "$W/proc" 4242
	expect_rc 0
	expect_out '^PID 4242 \(app\): 13.0M of text, 10M on huge pages \(77%\): anon 2M, file 4M, shmem 2M, hugetlb 2M$'
	expect_out '^ +7.0M +4M +2M +0 +0 +2M  /opt/app/bin/app \(4M of it in anonymous copies\)$'
	t missing -- "$TOOL" stat --proc "$W/proc" 4243
	expect_bad 1 "a PID not in the saved tree" "PID 4243: no such process"
}

case_stat_bad_input() {
	local maxpid
	maxpid=$(cat /proc/sys/kernel/pid_max)
	t nopid -- "$TOOL" stat "$maxpid"
	expect_bad 1 "a PID that cannot exist" "PID $maxpid: no such process"
	expect_no_out
	t abc -- "$TOOL" stat abc
	expect_bad 2 "a PID that is not a number" "'abc' is not a process id"
	t zero -- "$TOOL" stat 0
	expect_bad 2 "PID 0" "'0' is not a process id"
	t big -- "$TOOL" stat 99999999999999999999
	expect_bad 2 "a PID too large" "is not a process id"
	t none -- "$TOOL" stat
	expect_bad 2 "no PID" "no PID given"
	t both -- "$TOOL" stat --all 1
	expect_bad 2 "--all and PIDs" "give PIDs or --all, not both"
	t opt -- "$TOOL" stat --frobnicate 1
	expect_bad 2 "an unknown option" "unknown option '--frobnicate'"
	t noproc -- "$TOOL" stat --proc
	expect_bad 2 "--proc without a value" "'--proc' needs a value"
	# One good, one bad: the good one is shown, the bad one named, status 1.
	start_hold a -- "$HOLD"
	t mixed -- "$TOOL" stat --json "$HPID" "$maxpid"
	expect_bad 1 "a good and a bad PID" "PID $maxpid: no such process"
	json "$OUT"
	[ "$(jneed "$OUT.flat" '[0].pid')" = "$HPID" ] || fail "the good PID is missing from the output"
	jget "$OUT.flat" '[1].pid' >/dev/null && fail "the bad PID has an entry"
	# A process that ends: gone is gone.
	stop_hold a "$HPID"
	t gone -- "$TOOL" stat "$HPID"
	expect_bad 1 "a process that has ended" "PID $HPID: no such process"
	# No permission: as nobody, a root process's smaps cannot be read.
	[ "$(id -u)" = 0 ] || skip "not root: cannot run the command as another user to test 'permission denied' (everything else passed)"
	start_hold b -- "$HOLD"
	t perm -- "$TT_BIN/tt_asuser" nobody "$TOOL" stat "$HPID"
	expect_bad 1 "another user's process" "PID $HPID: permission denied reading /proc/$HPID/smaps"
	t permall -- "$TT_BIN/tt_asuser" nobody "$TOOL" stat --all --summary
	expect_rc 0 "--all as nobody"
	grep -qE 'process(es)? not shown: permission denied' "$ERR" || fail "--all as nobody does not say processes were left out"
	grep -qE "^ *$HPID " "$OUT" && fail "--all as nobody shows a root process"
	stop_hold b "$HPID"
}

case_check_files() {
	t small -- "$TOOL" check --json "$TT_SMALL"
	expect_rc 0; expect_no_err; json "$OUT"
	[ "$(jneed "$OUT.flat" .build_id)" = "$TT_BUILD_ID" ] || fail "build-id $(jget "$OUT.flat" .build_id), linked with $TT_BUILD_ID"
	[ "$(jneed "$OUT.flat" .type)" = shared-library ] || fail "tt_small.so is not a shared library"
	[ "$(jneed "$OUT.flat" .text_hot)" = false ] || fail "tt_small.so has no .text.hot"
	[ "$(jneed "$OUT.flat" .textrel)" = false ] || fail "tt_small.so has no text relocations"
	[ "$(jneed "$OUT.flat" .file)" = "$TT_SMALL" ] || fail ".file is not the path given"
	[ "$(jneed "$OUT.flat" '.eligible_bytes.glibc.max')" = 0 ] || fail "tt_small.so has no whole window"
	jneed "$OUT.flat" '.advice[0]' | grep -q '^nothing worth doing: [0-9.]*[BKM] of text, under ' ||
		fail "tt_small.so (a few hundred bytes of text): not 'nothing worth doing'"
	[ "$(jneed "$OUT.flat" .layout_cost.worth_it)" = false ] || fail "tt_small.so: the script's layout worth it for a few hundred bytes of text"
	t smalltext -- "$TOOL" check "$TT_SMALL"
	expect_rc 0
	expect_out "^  build-id +$TT_BUILD_ID\$"
	expect_out '^  text relocations no$'

	t hot -- "$TOOL" check --json "$TT_HOT"
	expect_rc 0; json "$OUT"
	[ "$(jneed "$OUT.flat" .text_hot)" = true ] || fail "tt_hot.so: .text.hot not found"
	[ "$(jneed "$OUT.flat" .text_hot_bytes)" -gt 0 ] || fail "tt_hot.so: .text.hot of 0 bytes"

	if [ -n "${TT_TEXTREL:-}" ]; then
		t textrel -- "$TOOL" check --json "$TT_TEXTREL"
		expect_rc 0; json "$OUT"
		[ "$(jneed "$OUT.flat" .textrel)" = true ] || fail "tt_textrel.so: text relocations not found"
		jneed "$OUT.flat" '.advice[0]' | grep -q 'text relocations' || fail "tt_textrel.so: the advice does not start with the text relocations"
	else
		note "no library with text relocations on this architecture: that check was not made"
	fi

	# tt_hold: a PIE with 6 MiB + a little of text, 4 KiB-aligned: 2 or 3
	# whole windows depending on where it is loaded, 3 when aligned.
	t hold -- "$TOOL" check --json "$HOLD"
	expect_rc 0; json "$OUT"
	[ "$(jneed "$OUT.flat" .type)" = pie ] || fail "tt_hold is not a PIE"
	[ "$(jneed "$OUT.flat" .interpreter)" != null ] || fail "tt_hold has no interpreter"
	local min max al
	min=$(jneed "$OUT.flat" '.eligible_bytes.glibc.min'); max=$(jneed "$OUT.flat" '.eligible_bytes.glibc.max')
	al=$(jneed "$OUT.flat" '.eligible_bytes.aligned')
	if [ "$H" = 2097152 ]; then
		# Linked at 0x1000: loaded 2 MiB-aligned, the first 2 MiB - 4 KiB are head.
		[ "$min" = $((2 * H)) ] && [ "$max" = $((3 * H)) ] && [ "$al" = $((2 * H)) ] ||
			fail "tt_hold: eligible $min..$max (aligned $al), expected 4 MiB..6 MiB (4 MiB)"
	else
		[ "$min" -le "$max" ] || fail "tt_hold: eligible min > max"
		note "PMD size $H: the exact 2 MiB figures were not checked"
	fi
	[ "$(jneed "$OUT.flat" '.eligible_bytes.glibc.exact')" = false ] || fail "tt_hold: 4 KiB-aligned, yet exact"
	[ "$(jneed "$OUT.flat" .link_flags)" = "-Wl,-T,enormous.ld" ] || fail "tt_hold: the link flags are not the script alone"
	jneed "$OUT.flat" .link_flags_noscript | grep -q 'max-page-size=0x' || fail "tt_hold: no max-page-size in the flags without the script"
	t holdtext -- "$TOOL" check "$HOLD"
	expect_out '^  eligible \(glibc\) 4M to 6M of 6.0M, depending on the load address'
	expect_out '^  advice +to put all 6.0M of the text on huge pages, link with GNU ld or lld: -Wl,-T,enormous.ld$'

	# Several files: a list, in order.
	t several -- "$TOOL" check --json "$TT_SMALL" "$TT_HOT" "$HOLD"
	expect_rc 0; json "$OUT"
	[ "$(jneed "$OUT.flat" '[0].file')" = "$TT_SMALL" ] && [ "$(jneed "$OUT.flat" '[2].file')" = "$HOLD" ] ||
		fail "three files: not a list of the three in order"
	t severaltext -- "$TOOL" check "$TT_SMALL" "$TT_HOT"
	[ "$(grep -c '^[^ ].*: \(shared library\|PIE executable\|executable\), ' "$OUT")" = 2 ] || fail "two files: not two reports"
	# --pmd-size: the same file planned for 1 GiB pages has no window.
	t pmd -- "$TOOL" check --json --pmd-size 1G "$HOLD"
	json "$OUT"
	[ "$(jneed "$OUT.flat" .pmd_size)" = $((1 << 30)) ] && [ "$(jneed "$OUT.flat" '.eligible_bytes.glibc.max')" = 0 ] ||
		fail "--pmd-size 1G: not planned with 1 GiB"
}

case_check_advice() {
	# Apply the advice `check` gives for tt_hold, exactly as printed, and
	# check the result: all of its text eligible, and all of it huge once the
	# library has run.
	t advice -- "$TOOL" check --json "$HOLD"
	json "$OUT"
	local flags script
	flags=$(jneed "$OUT.flat" .link_flags); script=$(jneed "$OUT.flat" .linker_script)
	[ "$flags" != null ] && [ "$script" != null ] || fail "no link flags or script in the advice"
	printf '%s\n' "$script" >"$W/enormous.ld"
	# shellcheck disable=SC2086 # the flags and CFLAGS are lists of words
	(cd "$W" && "$TT_CC" ${TT_CFLAGS:-} -O1 -o advised "$TT_SRC/tt_hold.c" $flags) >"$W/cc.out" 2>&1 ||
		fail "linking tt_hold with the advice ($flags) failed: $(head -5 "$W/cc.out")"
	t after -- "$TOOL" check --json "$W/advised"
	expect_rc 0; json "$OUT"
	[ "$(jneed "$OUT.flat" .all_text_eligible)" = true ] || fail "after the advice, not all text is eligible"
	jneed "$OUT.flat" '.advice[0]' | grep -q '^nothing to do' || fail "after the advice, more advice: $(jget "$OUT.flat" '.advice[0]')"
	[ "$(jneed "$OUT.flat" .link_flags)" = null ] || fail "after the advice, still link flags"
	local tb
	tb=$(jneed "$OUT.flat" .text_file_bytes)
	[ $((tb % H)) = 0 ] || fail "after the advice, the text ($tb bytes) is not whole huge pages"
	mkdir "$W/copy" && cp "$W/advised" "$W/copy/advised"
	start_hold adv "$TOOL" run -- "$W/copy/advised"
	t stat -- "$TOOL" stat --json "$HPID"
	json "$OUT"
	local i text huge
	i=$(jindex "$OUT.flat" .objects path "$W/copy/advised")
	text=$(jneed "$OUT.flat" ".objects[$i].text_bytes"); huge=$(jneed "$OUT.flat" ".objects[$i].huge_bytes")
	[ "$text" = "$tb" ] || fail "the advised program maps $text bytes of text, its segment has $tb"
	[ "$huge" = "$text" ] || fail "with the advice and the library, $huge of $text bytes of text are huge, expected all"
	stop_hold adv "$HPID"
}

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

case_check_small() {
	# 100 KiB of text linked plainly: the script is not worth it, and check
	# says what it would cost (estimated from the program headers).
	local P=$TT_SRC/tt_smallprog.c off va fs ms al prev f m
	cc_link "$W/plain" "$P"
	read -r off va fs ms al prev < <(seg_x "$W/plain")
	t small -- "$TOOL" check --json --pmd-size 2M "$W/plain"
	expect_rc 0; expect_no_err; json "$OUT"
	[ "$(jneed "$OUT.flat" .link_flags)" = null ] && [ "$(jneed "$OUT.flat" .linker_script)" = null ] ||
		fail "100 KiB of text: link flags or a script in the advice"
	jneed "$OUT.flat" '.advice[0]' | grep -qE '^nothing worth doing: 10[0-9.]*K of text, under 1M \(half a 2M page\): -Wl,-T,enormous.ld would add about [0-9.]+M to the file and, when mapped huge, [0-9.]+M of memory' ||
		fail "100 KiB of text: the advice does not say the script is not worth it and what it costs"
	jneed "$OUT.flat" '.advice[1]' | grep -q '^instead: leave it linked as it is' || fail "100 KiB of text: the advice does not say what to do instead"
	[ "$(jneed "$OUT.flat" .layout_cost.padded)" = false ] || fail "a plain link taken for the script's layout"
	[ "$(jneed "$OUT.flat" .layout_cost.worth_it)" = false ] || fail "100 KiB of text: the script worth it"
	[ "$(jneed "$OUT.flat" .layout_cost.worth_it_from)" = $((H2 / 2)) ] || fail "the threshold is not half a 2 MiB page"
	[ "$(jneed "$OUT.flat" .layout_cost.code_bytes)" = "$fs" ] || fail "code_bytes is not the segment's $fs bytes"
	f=$(( (H2 - off % H2) % H2 + $(up "$fs" $H2) - fs )); m=$(( $(up "$fs" $H2) - $(up "$fs" "$PG") ))
	[ "$(jneed "$OUT.flat" .layout_cost.file_bytes)" = "$f" ] || fail "file_bytes: $(jget "$OUT.flat" .layout_cost.file_bytes), expected $f"
	[ "$(jneed "$OUT.flat" .layout_cost.memory_bytes)" = "$m" ] || fail "memory_bytes: $(jget "$OUT.flat" .layout_cost.memory_bytes), expected $m"
	t smalltext -- "$TOOL" check --pmd-size 2M "$W/plain"
	expect_rc 0
	expect_out '^  script cost +-T enormous.ld would add about [0-9.]+M of file and, mapped huge, [0-9.]+M of memory, for 10[0-9.]*K of text: not worth it'
	expect_out '^  advice +nothing worth doing: '
	# The estimate against the real thing: with the script alone the file
	# grows by about that much (GNU ld; lld too where it is).
	local ld g
	for ld in bfd lld; do
		if [ $ld = lld ] && ! have_lld; then note "no lld: its growth was not checked"; continue; fi
		cc_link "$W/plain.$ld" "$P" -fuse-ld=$ld
		cc_link "$W/script.$ld" "$P" -fuse-ld=$ld -Wl,-T,"$SCRIPT"
		t "est.$ld" -- "$TOOL" check --json --pmd-size 2M "$W/plain.$ld"
		json "$OUT"
		f=$(jneed "$OUT.flat" .layout_cost.file_bytes)
		g=$(( $(stat -c %s "$W/script.$ld") - $(stat -c %s "$W/plain.$ld") ))
		echo "   $ld: estimated $f, grew by $g bytes"
		(( g > f - 65536 && g < f + 65536 )) || fail "$ld: the file grew by $g bytes with the script, check estimated $f"
	done
}

case_check_script() {
	# Linked with the script alone: check sees the layout and how much of it
	# is padding; for 100 KiB of code, not worth it; for tt_hold's 6 MiB, it is.
	local ld off va fs ms al prev code pad te
	for ld in bfd lld; do
		if [ $ld = lld ] && ! have_lld; then note "no lld: the script with lld was not checked"; continue; fi
		cc_link "$W/small.$ld" "$TT_SRC/tt_smallprog.c" -fuse-ld=$ld -Wl,-T,"$SCRIPT"
		read -r off va fs ms al prev < <(seg_x "$W/small.$ld")
		(( va % H2 == 0 && off % H2 == 0 && fs % H2 == 0 && fs == ms && al >= H2 )) ||
			fail "$ld: the script did not lay the text out 2 MiB-aligned and padded: $(grep ' R E ' "$W/loads")"
		t "small.$ld" -- "$TOOL" check --json --pmd-size 2M "$W/small.$ld"
		expect_rc 0; expect_no_err; json "$OUT"
		jneed "$OUT.flat" '.advice[0]' | grep -qE '^not worth it: laid out for 2M pages \(linked with enormous.ld\), 10[0-9.]*K of code fills a 2M executable segment: 1.9M of padding, which takes about [0-9.]+M of the file and, when the text is mapped huge, 1.9M of memory$' ||
			fail "$ld: the advice does not say the layout is not worth it and what it costs"
		jneed "$OUT.flat" '.advice[1]' | grep -q '^relink without -Wl,-T,enormous.ld: ' || fail "$ld: the advice does not say to relink without the script"
		[ "$(jneed "$OUT.flat" .link_flags)" = null ] || fail "$ld: link flags for a file already linked with the script"
		[ "$(jneed "$OUT.flat" .layout_cost.padded)" = true ] || fail "$ld: the script's layout not seen"
		[ "$(jneed "$OUT.flat" .layout_cost.worth_it)" = false ] || fail "$ld: 100 KiB of code padded to 2 MiB called worth it"
		code=$(jneed "$OUT.flat" .layout_cost.code_bytes); pad=$(jneed "$OUT.flat" .layout_cost.padding_bytes)
		te=$(( $(sec_end "$W/small.$ld" .text) - va ))
		(( code + pad == fs )) || fail "$ld: code $code + padding $pad is not the segment's $fs bytes"
		(( code >= te && code <= te + 4096 )) || fail "$ld: $code bytes of code, but .text ends $te bytes into the segment"
		# What is called padding is filler: zeros, int3 or NOPs, nothing else.
		tail -c +$((off + code + 1)) "$W/small.$ld" | head -c "$pad" | od -An -v -tx1 | tr -s ' ' '\n' | sort -u |
			grep -vxE '|00|cc|66|2e|0f|1f|84|90' && fail "$ld: the padding holds bytes that are not filler"
		[ "$(jneed "$OUT.flat" .layout_cost.file_bytes)" = $(( off - $(up "$prev" "$PG") + pad )) ] ||
			fail "$ld: file_bytes is not the gap before the text and the padding"
		[ "$(jneed "$OUT.flat" .layout_cost.memory_bytes)" = $(( ms - $(up "$code" "$PG") )) ] ||
			fail "$ld: memory_bytes is not the segment less the code's pages"
		t "smalltext.$ld" -- "$TOOL" check --pmd-size 2M "$W/small.$ld"
		expect_out "^  layout +enormous.ld's: 10[0-9.]*K of code, 1.9M of padding to the end of its last window; .*: not worth it for so little code\$"
		expect_out '^  advice +not worth it: '

		cc_link "$W/hold.$ld" "$TT_SRC/tt_hold.c" -fuse-ld=$ld -Wl,-T,"$SCRIPT"
		read -r off va fs ms al prev < <(seg_x "$W/hold.$ld")
		t "hold.$ld" -- "$TOOL" check --json --pmd-size 2M "$W/hold.$ld"
		expect_rc 0; expect_no_err; json "$OUT"
		[ "$(jneed "$OUT.flat" .layout_cost.padded)" = true ] && [ "$(jneed "$OUT.flat" .layout_cost.worth_it)" = true ] ||
			fail "$ld: tt_hold with the script: not seen as the script's layout, worth it"
		code=$(jneed "$OUT.flat" .layout_cost.code_bytes)
		(( code >= 6291456 && code + $(jneed "$OUT.flat" .layout_cost.padding_bytes) == fs )) || fail "$ld: tt_hold: $code bytes of code"
		[ "$(jneed "$OUT.flat" .all_text_eligible)" = true ] || fail "$ld: tt_hold with the script: not all text eligible"
		jneed "$OUT.flat" '.advice[0]' | grep -q '^nothing to do: ' || fail "$ld: tt_hold with the script: not 'nothing to do'"
		jneed "$OUT.flat" '.advice[1]' | grep -qE '^laid out for 2M pages \(linked with enormous.ld\): [0-9.]+M of padding after 6.0M of code' ||
			fail "$ld: tt_hold with the script: the padding is not reported"
	done
}

case_check_big() {
	# tt_hold (6 MiB of text, 4 KiB-aligned): the script alone for GNU ld and
	# lld, the flags for gold and mold, and the script as check prints it is
	# the tree's.
	local off va fs ms al prev
	read -r off va fs ms al prev < <(seg_x "$HOLD")
	t hold -- "$TOOL" check --json --pmd-size 2M "$HOLD"
	expect_rc 0; expect_no_err; json "$OUT"
	[ "$(jneed "$OUT.flat" .link_flags)" = "-Wl,-T,enormous.ld" ] || fail "tt_hold: link_flags is not the script alone"
	[ "$(jneed "$OUT.flat" .link_flags_noscript)" = "-Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code" ] ||
		fail "tt_hold: link_flags_noscript is not the two -z flags"
	[ "$(jneed "$OUT.flat" .layout_cost.padded)" = false ] && [ "$(jneed "$OUT.flat" .layout_cost.worth_it)" = true ] ||
		fail "tt_hold: 6 MiB of text: the script's layout seen, or not worth it"
	[ "$(jneed "$OUT.flat" .layout_cost.file_bytes)" = $(( (H2 - off % H2) % H2 + $(up "$fs" $H2) - fs )) ] ||
		fail "tt_hold: file_bytes is not what the script adds"
	grep -q $'^\\.advice\\[[0-9]*\\]\tstring\t.*link with GNU ld or lld: -Wl,-T,enormous.ld$' "$OUT.flat" ||
		fail "tt_hold: the advice does not say GNU ld or lld take the script alone"
	grep -q $'^\\.advice\\[[0-9]*\\]\tstring\twith gold or mold (which cannot take the script) or a linker that ignores its alignment: -Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code instead .*libenormoustext pads its tail at run time' "$OUT.flat" ||
		fail "tt_hold: the advice does not give the -z flags for gold and mold"
	# linker_script is linker-scripts/enormous.ld without its comments.
	if command -v perl >/dev/null; then
		jneed "$OUT.flat" .linker_script | perl -0777 -pe 's/\s+//g' >"$W/printed"
		perl -0777 -pe 's{/\*.*?\*/}{}gs; s/\s+//g' "$SCRIPT" >"$W/tree"
		cmp -s "$W/printed" "$W/tree" ||
			fail "the script check prints (SCRIPT_FMT in tools/enormoustext/check_elf.c) is not linker-scripts/enormous.ld: $(cat "$W/printed") against $(cat "$W/tree")"
	else
		note "no perl: the printed script was not compared with linker-scripts/enormous.ld"
	fi
	t holdtext -- "$TOOL" check --pmd-size 2M "$HOLD"
	expect_out '^  script cost +-T enormous.ld would add about [0-9.]+M of file and, mapped huge, [0-9.]+M of memory, for 6.0M of text$'
	# Linked with the flags (GNU ld): aligned, the tail left to the library.
	cc_link "$W/flags" "$TT_SRC/tt_hold.c" -Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code
	t flags -- "$TOOL" check --json --pmd-size 2M "$W/flags"
	expect_rc 0; json "$OUT"
	[ "$(jneed "$OUT.flat" .link_flags)" = "-Wl,-T,enormous.ld" ] && [ "$(jneed "$OUT.flat" .link_flags_noscript)" = null ] ||
		fail "linked with the flags: the advice is not the script alone (and no more flags)"
	grep -q $'^\\.advice\\[[0-9]*\\]\tstring\twithout the script (gold, mold): libenormoustext pads the tail at run time (here the rest of its window is free)$' "$OUT.flat" ||
		fail "linked with the flags: the advice does not say the library pads the tail at run time"
}

case_check_bad_input() {
	bad_file() { # LABEL FILE REGEX
		t "$1" -- "$TOOL" check "$2"
		expect_bad 1 "check $1" "^enormoustext check: $(printf '%s' "$2" | sed 's/[][\.*^$()+?{}|]/\\&/g'): $3"
		expect_no_out "check $1"
		t "$1.json" -- "$TOOL" check --json "$2"
		expect_bad 1 "check --json $1" "$3"
		expect_no_out "check --json $1"
	}
	local s=$TT_SMALL size
	size=$(stat -c %s "$s")
	bad_file missing "$W/no-such-file" "No such file or directory"
	bad_file directory "$W" "is a directory"
	: >"$W/empty"
	bad_file empty "$W/empty" "empty file"
	echo "hello, not an ELF file" >"$W/text"
	bad_file text "$W/text" "not an ELF file"
	printf '\177EL' >"$W/magic3"
	bad_file magic3 "$W/magic3" "not an ELF file"
	head -c 20 "$s" >"$W/ident"
	bad_file ident "$W/ident" "truncated ELF header"
	head -c 40 "$s" >"$W/header"
	bad_file header "$W/header" "truncated ELF header"
	head -c $((size / 2)) "$s" >"$W/half"
	bad_file half "$W/half" "truncated: "
	head -c $((size - 1)) "$s" >"$W/minus1"
	bad_file minus1 "$W/minus1" "truncated: "
	cp "$s" "$W/phoff"   # e_phoff (offset 32) far past the end
	printf '\377\377\377\000' | dd of="$W/phoff" bs=1 seek=32 conv=notrunc status=none
	bad_file phoff "$W/phoff" "truncated: the program headers"
	cp "$s" "$W/class"   # EI_CLASS 9
	printf '\011' | dd of="$W/class" bs=1 seek=4 conv=notrunc status=none
	bad_file class "$W/class" "corrupt ELF header: unknown class 9"
	cp "$s" "$W/phent"   # e_phentsize 7
	printf '\007\000' | dd of="$W/phent" bs=1 seek=54 conv=notrunc status=none
	bad_file phent "$W/phent" "corrupt ELF header: program header entry size 7"
	local shoff
	shoff=$(od -An -t u8 -j 40 -N 8 "$s" | tr -d ' ')
	cp "$s" "$W/secoff"  # section 1's sh_offset far past the end
	printf '\377\377\377\177' | dd of="$W/secoff" bs=1 seek=$((shoff + 64 + 24)) conv=notrunc status=none
	bad_file secoff "$W/secoff" "truncated: section 1 \\(.*\\) extends past the end of the file"
	cp "$s" "$W/bare"    # no section headers: valid, then cut inside a segment
	printf '\000\000\000\000\000\000\000\000' | dd of="$W/bare" bs=1 seek=40 conv=notrunc status=none
	printf '\000\000\000\000' | dd of="$W/bare" bs=1 seek=60 conv=notrunc status=none
	t bare -- "$TOOL" check "$W/bare"
	expect_rc 0 "a library without section headers"
	head -c 4100 "$W/bare" >"$W/bare4100"
	bad_file bare4100 "$W/bare4100" "truncated: segment [0-9]+ \\((LOAD|NOTE)"
	bad_file object "$TT_OBJ" "a relocatable object file"
	bad_file devnull /dev/null "not a regular file"
	# The good ones are still checked; the status says one was bad.
	t mixed -- "$TOOL" check "$s" "$W/empty"
	expect_bad 1 "a good and a bad file" "$W/empty: empty file"
	expect_out "^$s: shared library"
	t mixedjson -- "$TOOL" check --json "$W/text" "$s"
	expect_bad 1 "a bad and a good file (json)" "$W/text: not an ELF file"
	json "$OUT"
	[ "$(jneed "$OUT.flat" '[0].file')" = "$s" ] || fail "the good file is missing from the list"
	# Usage errors.
	t nofile -- "$TOOL" check
	expect_bad 2 "no file" "no FILE given"
	t pmd -- "$TOOL" check --pmd-size 3M "$s"
	expect_bad 2 "a PMD size that is not a power of two" "--pmd-size 3M"
	t pad -- "$TOOL" check --pad-threshold lots "$s"
	expect_bad 2 "a bad pad threshold" "--pad-threshold lots"
	t opt -- "$TOOL" check --frobnicate "$s"
	expect_bad 2 "an unknown option" "unknown option '--frobnicate'"
}

case_check_fuzz() {
	t small -- "$TT_BIN/tt_check_fuzz" "$TT_SMALL" 3000 1
	expect_rc 0 "every prefix and 3000 byte flips of tt_small.so"
	t hot -- "$TT_BIN/tt_check_fuzz" "$TT_HOT" 1500 100000
	expect_rc 0 "every prefix and 1500 byte flips of tt_hot.so"
	# The fuzz driver can fail: a file it must reject whole is caught.
	printf 'not ELF' >"$W/x"
	t selftest -- "$TT_BIN/tt_check_fuzz" "$W/x" 0
	expect_rc 1 "the fuzz driver on a file that is not ELF"
}

# The backends `auto` tries, by the rule in README.md (Backends), from the
# facts in a sysfs tree: "file thp collapse", "file collapse hugetlb", ...
expected_chain() {
	local en=$1 df=$2 free=$3 c
	case $en in
	always|madvise) case $df in defer|never) c="file collapse thp" ;; *) c="file thp collapse" ;; esac ;;
	*) c="file collapse" ;;
	esac
	[ "${free:-0}" -gt 0 ] && c="$c hugetlb"
	echo "$c"
}

case_status() {
	local sys=/sys/kernel/mm/transparent_hugepage
	mkdir "$W/probe"
	local t0 t1
	t0=$(date +%s%N)
	t json -- "$TOOL" status --json --probe-dir "$W/probe"
	t1=$(date +%s%N)
	expect_rc 0; expect_no_err; json "$OUT"
	echo "   (status with probes took $(( (t1 - t0) / 1000000 )) ms)"
	[ $(( (t1 - t0) / 1000000 )) -lt 5000 ] || fail "status took more than 5 s"
	[ -z "$(ls -A "$W/probe")" ] || fail "the file probe left files behind: $(ls -A "$W/probe")"
	local f=$OUT.flat
	[ "$(jneed "$f" .pmd_size)" = "$H" ] || fail ".pmd_size is not hpage_pmd_size ($H)"
	local en df sh
	en=$(choice $sys/enabled); df=$(choice $sys/defrag); sh=$(choice $sys/shmem_enabled)
	[ "$(jneed "$f" .thp.enabled)" = "$en" ] || fail ".thp.enabled is not $en"
	[ "$(jneed "$f" .thp.defrag)" = "$df" ] || fail ".thp.defrag is not $df"
	[ "$(jneed "$f" .thp.shmem_enabled)" = "$sh" ] || fail ".thp.shmem_enabled is not $sh"
	[ "$(jneed "$f" .khugepaged.pages_to_scan)" = "$(cat $sys/khugepaged/pages_to_scan)" ] || fail "khugepaged pages_to_scan"
	local d k=0 size
	for d in $(ls -d /sys/kernel/mm/hugepages/hugepages-*kB 2>/dev/null | sort -t- -k2 -n); do
		size=$(( $(basename "$d" | tr -dc 0-9) * 1024 ))
		[ "$(jneed "$f" ".hugetlb[$k].size")" = "$size" ] || fail "hugetlb pool $k: size"
		[ "$(jneed "$f" ".hugetlb[$k].total")" = "$(cat "$d/nr_hugepages")" ] || fail "hugetlb pool $size: total"
		[ "$(jneed "$f" ".hugetlb[$k].free")" = "$(cat "$d/free_hugepages")" ] || fail "hugetlb pool $size: free"
		k=$((k + 1))
	done
	local free chain
	free=$(cat "/sys/kernel/mm/hugepages/hugepages-$((H >> 10))kB/free_hugepages" 2>/dev/null || echo 0)
	chain=$(awk -F'\t' '$1 ~ /^\.auto\.backends\[/ { printf "%s%s", sep, $3; sep = " " }' "$f")
	[ "$chain" = "$(expected_chain "$en" "$df" "$free")" ] || fail "auto: '$chain', expected '$(expected_chain "$en" "$df" "$free")'"
	[ "$(jneed "$f" .probes.file.dir)" = "$W/probe" ] || fail "--probe-dir not used"
	# The probes agree with what the library's backends get on this machine.
	local b p works huge i
	for b in collapse thp; do
		p=$([ $b = thp ] && echo thp_fault || echo collapse)
		works=$(jneed "$f" ".probes.$p.works")
		fresh "$b"
		t "lib.$b" -- "$TOOL" run --backend "$b" --report "$W/$b.json" -- "$F"
		json "$W/$b.json"
		i=$(jindex "$W/$b.json.flat" .objects path "$F")
		huge=$(jneed "$W/$b.json.flat" ".objects[$i].huge_bytes")
		if [ "$works" = true ] && [ "$huge" = 0 ]; then
			fail "the $p probe says yes, but the library's $b backend got no huge page"
		elif [ "$works" = false ] && [ "$huge" != 0 ]; then
			fail "the $p probe says no, but the library's $b backend got huge pages"
		fi
	done
	jneed "$f" .probes.file.works | grep -qE '^(true|false)$' || fail "the file probe did not run"
	t text -- "$TOOL" status --probe-dir "$W/probe"
	expect_rc 0
	expect_out "^  enabled +$en\$"; expect_out "^  defrag +$df\$"
	expect_out '^  MADV_COLLAPSE +(yes|no): '
	expect_out '^  file-backed text +(yes|no): '
	expect_out "^backend auto would use: "
	# THP disabled for the process (PR_SET_THP_DISABLE, inherited): the
	# probes must see it, and `auto` has only the pool left.
	t thpoff -- "$TT_BIN/tt_thp_off" "$TOOL" status --json --probe-dir "$W/probe"
	expect_rc 0; json "$OUT"
	[ "$(jneed "$OUT.flat" .thp.disabled_for_process)" = true ] || fail "THP off: not seen"
	[ "$(jneed "$OUT.flat" .probes.thp_fault.works)" = false ] || fail "THP off: the thp probe still works"
	[ "$(jneed "$OUT.flat" .probes.collapse.works)" = false ] || fail "THP off: MADV_COLLAPSE still works"
	chain=$(awk -F'\t' '$1 ~ /^\.auto\.backends\[/ { printf "%s%s", sep, $3; sep = " " }' "$OUT.flat")
	[ "$chain" = "$([ "${free:-0}" -gt 0 ] && echo hugetlb)" ] || fail "THP off: auto would use '$chain'"
	t noprobe -- "$TOOL" status --json --no-probe
	json "$OUT"
	[ "$(jneed "$OUT.flat" .probes.collapse.works)" = null ] || fail "--no-probe probed"
	# Bad input.
	t pdir -- "$TOOL" status --probe-dir "$W/nope"
	expect_bad 1 "a probe directory that does not exist" "--probe-dir $W/nope: not a directory"
	t extra -- "$TOOL" status now
	expect_bad 2 "an extra argument" "unexpected argument 'now'"
	t opt -- "$TOOL" status --frobnicate
	expect_bad 2 "an unknown option" "unknown option '--frobnicate'"
	t root -- "$TOOL" status --root "$W/nope"
	expect_bad 1 "a --root that does not exist" "--root $W/nope: not a directory"
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

# fake_sysfs DIR ENABLED DEFRAG FREE: a sysfs tree for --root.
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

case_status_saved() {
	local en df free n=0
	for c in "never always 5" "madvise defer 0" "always madvise 0" "madvise never 3"; do
		read -r en df free <<<"$c"
		n=$((n + 1))
		fake_sysfs "$W/root$n" "$en" "$df" "$free"
		t "root$n" -- "$TOOL" status --json --root "$W/root$n"
		expect_rc 0; expect_no_err; json "$OUT"
		local f=$OUT.flat chain
		[ "$(jneed "$f" .thp.enabled)" = "$en" ] && [ "$(jneed "$f" .thp.defrag)" = "$df" ] || fail "root$n: the policy was not read from the tree"
		[ "$(jneed "$f" .thp.shmem_enabled)" = never ] || fail "root$n: shmem_enabled"
		[ "$(jneed "$f" '.hugetlb[0].size')" = 2097152 ] && [ "$(jneed "$f" '.hugetlb[0].total')" = 10 ] &&
			[ "$(jneed "$f" '.hugetlb[0].free')" = "$free" ] && [ "$(jneed "$f" '.hugetlb[0].reserved')" = 1 ] &&
			[ "$(jneed "$f" '.hugetlb[1].size')" = 1073741824 ] || fail "root$n: the hugetlb pools"
		[ "$(jneed "$f" '.mthp[0].size')" = 65536 ] && [ "$(jneed "$f" '.mthp[0].enabled')" = never ] || fail "root$n: mTHP sizes"
		[ "$(jneed "$f" .khugepaged.pages_to_scan)" = 4096 ] || fail "root$n: khugepaged"
		[ "$(jneed "$f" .khugepaged.running)" = null ] || fail "root$n: khugepaged running is not unknown in a tree"
		[ "$(jneed "$f" .probes.collapse.works)" = null ] || fail "root$n: probes ran with --root"
		chain=$(awk -F'\t' '$1 ~ /^\.auto\.backends\[/ { printf "%s%s", sep, $3; sep = " " }' "$f")
		[ "$chain" = "$(expected_chain "$en" "$df" "$free")" ] || fail "root$n: auto '$chain', expected '$(expected_chain "$en" "$df" "$free")'"
	done
	t text -- "$TOOL" status --root "$W/root1"
	expect_rc 0
	expect_out '^  enabled +never$'
	expect_out '^  2M +10 pages, 5 free, 1 reserved, 0 surplus'
	expect_out '^backend auto would use: file, then collapse, then hugetlb$'
	expect_out 'not probed \(--root\)'
}

case_setup_saved() {
	local r=$W/root s=$W/root/sys/kernel/mm
	fake_sysfs "$r" madvise madvise 0
	cp -r "$r" "$W/orig"
	t dry -- "$TOOL" setup --root "$r" --dry-run --thp never --defrag defer --hugetlb-pages 3
	expect_rc 0; expect_no_err
	cat >"$W/expected" <<-EOF
	would write $s/transparent_hugepage/enabled: never (was madvise)
	would write $s/transparent_hugepage/defrag: defer (was madvise)
	would write $s/hugepages/hugepages-2048kB/nr_hugepages: 3 (was 10)
	EOF
	diff -u "$W/expected" "$OUT" || fail "--dry-run printed something else (diff above)"
	diff -r "$W/orig" "$r" >/dev/null || fail "--dry-run changed the tree"
	t write -- "$TOOL" setup --root "$r" --thp never --defrag defer --hugetlb-pages 3
	expect_rc 0; expect_no_err
	sed 's/^would write/write/' "$W/expected" | diff -u - "$OUT" || fail "the writes printed are not the expected ones (diff above)"
	[ "$(cat "$s/transparent_hugepage/enabled")" = never ] || fail "enabled not written"
	[ "$(cat "$s/transparent_hugepage/defrag")" = defer ] || fail "defrag not written"
	[ "$(cat "$s/hugepages/hugepages-2048kB/nr_hugepages")" = 3 ] || fail "nr_hugepages not written"
	t size -- "$TOOL" setup --root "$r" --hugetlb-pages 1 --hugetlb-size 1G
	expect_rc 0; expect_out "^write $s/hugepages/hugepages-1048576kB/nr_hugepages: 1 \\(was 0\\)\$"
	t nosize -- "$TOOL" setup --root "$r" --hugetlb-pages 1 --hugetlb-size 64K
	expect_bad 1 "a pool size that does not exist" "hugepages-64kB/nr_hugepages: No such file or directory"
	# A setting that does not read back what was written is an error.
	rm "$s/transparent_hugepage/defrag" && ln -s /dev/null "$s/transparent_hugepage/defrag"
	t noreadback -- "$TOOL" setup --root "$r" --defrag madvise
	expect_bad 1 "a write that does not take" "defrag: wrote 'madvise' but it reads back"
}

case_setup_real() {
	[ "$(id -u)" = 0 ] || skip "not root: the real settings cannot be written (setup_saved tests the writes on a tree)"
	local sys=/sys/kernel/mm/transparent_hugepage pool
	pool=/sys/kernel/mm/hugepages/hugepages-$((H >> 10))kB/nr_hugepages
	local en df np
	en=$(choice $sys/enabled); df=$(choice $sys/defrag); np=$(cat "$pool")
	[ -n "$en" ] && [ -n "$df" ] || skip "no THP settings on this kernel"
	# Whatever happens, the settings are put back.
	EXIT_HOOKS+=("[ \"\$(choice $sys/enabled)\" = $en ] || echo $en >$sys/enabled; [ \"\$(choice $sys/defrag)\" = $df ] || echo $df >$sys/defrag")
	t dry -- "$TOOL" setup --dry-run --thp "$en" --defrag "$df" --hugetlb-pages "$np"
	expect_rc 0; expect_no_err
	expect_out "^would write $sys/enabled: $en \\(was $en\\)\$"
	expect_out "^would write $sys/defrag: $df \\(was $df\\)\$"
	expect_out "^would write $pool: $np \\(was $np\\)\$"
	# Real writes of the values already set: printed, made, read back.
	t write -- "$TOOL" setup --thp "$en" --defrag "$df" --hugetlb-pages "$np"
	expect_rc 0; expect_no_err
	expect_out "^write $sys/enabled: $en \\(was $en\\)\$"
	expect_out "^write $sys/defrag: $df \\(was $df\\)\$"
	expect_out "^write $pool: $np \\(was $np\\)\$"
	[ "$(choice $sys/enabled)" = "$en" ] && [ "$(choice $sys/defrag)" = "$df" ] && [ "$(cat "$pool")" = "$np" ] ||
		fail "the settings changed"
	# Not root: refused, and --dry-run still works.
	t nobody -- "$TT_BIN/tt_asuser" nobody "$TOOL" setup --thp "$en"
	expect_bad 1 "setup as nobody" "needs root to write $sys/enabled"
	expect_no_out
	t nobodydry -- "$TT_BIN/tt_asuser" nobody "$TOOL" setup --dry-run --thp "$en"
	expect_rc 0 "setup --dry-run as nobody"
}

case_setup_bad_input() {
	t none -- "$TOOL" setup
	expect_bad 2 "no setting" "nothing to do"
	t thp -- "$TOOL" setup --thp sometimes
	expect_bad 2 "a bad --thp" "--thp sometimes: give always, madvise or never"
	t defrag -- "$TOOL" setup --defrag hard --dry-run
	expect_bad 2 "a bad --defrag" "--defrag hard: give always, defer"
	t pages -- "$TOOL" setup --hugetlb-pages -1
	expect_bad 2 "a negative page count" "--hugetlb-pages -1: give a number"
	t pages2 -- "$TOOL" setup --hugetlb-pages 12x
	expect_bad 2 "a page count that is not a number" "--hugetlb-pages 12x"
	t size -- "$TOOL" setup --hugetlb-pages 1 --hugetlb-size 3M
	expect_bad 2 "a page size that is not a power of two" "--hugetlb-size 3M"
	t sizealone -- "$TOOL" setup --hugetlb-size 2M
	expect_bad 2 "--hugetlb-size alone" "--hugetlb-size goes with --hugetlb-pages"
	t extra -- "$TOOL" setup --thp never now
	expect_bad 2 "an extra argument" "unexpected argument 'now'"
	t opt -- "$TOOL" setup --frobnicate
	expect_bad 2 "an unknown option" "unknown option '--frobnicate'"
	t noval -- "$TOOL" setup --thp
	expect_bad 2 "--thp without a value" "'--thp' needs a value"
	t root -- "$TOOL" setup --root "$W/nope" --thp never
	expect_bad 1 "a --root that does not exist" "--root $W/nope: not a directory"
}

case_install() {
	local p=$W/prefix
	t install -- "$TT_CMAKE" --install "$TT_BUILD_DIR" --prefix "$p"
	expect_rc 0 "cmake --install"
	local cmd=$p/$TT_INSTALL_BINDIR/enormoustext lib=$p/$TT_INSTALL_LIBDIR/libenormoustext.so
	[ -x "$cmd" ] || fail "the command was not installed as $cmd"
	[ -s "$p/$TT_INSTALL_MANDIR/man1/enormoustext.1" ] || fail "the man page was not installed in $TT_INSTALL_MANDIR/man1"
	[ -e "$lib" ] || fail "no $lib installed"
	t version -- "$cmd" --version
	expect_rc 0
	# The installed command uses the library installed beside it...
	t dry -- "$cmd" run -n -- true
	expect_rc 0; expect_out "^LD_PRELOAD=$lib\$" "the installed command's default library"
	# ... and really runs with it.
	fresh a
	t runs -- "$cmd" run --report "$W/r.json" -- "$F"
	expect_rc 0; json "$W/r.json"
	# The build tree's command uses the build tree's library.
	t build -- "$TOOL" run -n -- true
	expect_out "^LD_PRELOAD=$TT_LIB\$" "the build tree's command's default library"
	# A copy with no library beside it: the configured LIBDIR, or a clear error.
	mkdir -p "$W/elsewhere/bin" && cp "$cmd" "$W/elsewhere/bin/"
	t elsewhere -- "$W/elsewhere/bin/enormoustext" run -n -- true
	if [ -e "$TT_INSTALL_FULL_LIBDIR/libenormoustext.so" ]; then
		expect_rc 0; expect_out "^LD_PRELOAD=$TT_INSTALL_FULL_LIBDIR/libenormoustext.so\$"
	else
		expect_bad 1 "no library anywhere" "cannot find libenormoustext.so .*give --lib PATH or set ENORMOUSTEXT_LIB"
	fi
	t elsewhere_env -- ENORMOUSTEXT_LIB="$lib" "$W/elsewhere/bin/enormoustext" run -n -- true
	expect_rc 0; expect_out "^LD_PRELOAD=$lib\$"
}

# bigdso NAME [LINKER FLAGS...] — a shared library with ~4.4 MiB of code
# (examples/bigcode.h), linked with enormous.ld unless flags are given.
bigdso() {
	local name=$1
	shift
	local ex=$TT_SRC/../../examples
	printf '#include "bigcode.h"\nint big_entry(void) { return bc_run(); }\n' >"$W/big.c"
	local how=("$@")
	[ ${#how[@]} -gt 0 ] || how=(-Wl,-T,"$TT_SRC/../../linker-scripts/enormous.ld" -Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code)
	"$TT_CC" -O1 -fPIC -shared -I"$ex" "$W/big.c" "${how[@]}" -o "$W/$name" 2>"$W/$name.log" ||
		fail "cannot build $name: $(head -3 "$W/$name.log")"
	sync
}

case_prime() {
	# what prime is for: page-cache folios of 2 MiB on this filesystem
	t probe -- "$TOOL" status --json --probe-dir "$W"
	expect_rc 0; json "$OUT"
	[ "$(jneed "$OUT.flat" .probes.file.works)" = true ] ||
		skip "this kernel and filesystem give no huge page-cache folios here: $(jneed "$OUT.flat" .probes.file.detail)"
	bigdso big.so
	# a copy: its page cache is written in small pages
	cp "$W/big.so" "$W/a.so"
	t check -- "$TOOL" prime --check "$W/a.so"
	expect_rc 0; expect_no_err
	expect_out "^$W/a.so: 0 of 3 window\(s\) of 2M huge in the page cache\$"
	expect_out "^  3 cached in small pages\$"
	t check2 -- "$TOOL" prime --check "$W/a.so"
	expect_out "^  3 cached in small pages\$" "--check changed the page cache"
	t prime -- "$TOOL" prime "$W/a.so"
	expect_rc 0; expect_no_err
	expect_out "^$W/a.so: 3 of 3 window\(s\) of 2M huge in the page cache \(3 primed now, 0 already\)\$"
	t after -- "$TOOL" prime --check --json "$W/a.so"
	expect_rc 0; json "$OUT"
	[ "$(jneed "$OUT.flat" '.files[0].huge')" = 3 ] || fail "--check after prime: not 3 huge windows"
	[ "$(jneed "$OUT.flat" '.files[0].huge_before')" = 3 ] || fail "--check after prime: huge_before is not 3"
	# the file is unchanged
	cmp -s "$W/big.so" "$W/a.so" || fail "prime changed the file's contents"
	# not in the cache at all: --check says so and reads nothing in
	cp "$W/big.so" "$W/b.so" && sync && dd if="$W/b.so" iflag=nocache count=0 status=none
	t cold -- "$TOOL" prime --check "$W/b.so"
	expect_out "^  3 not \(wholly\) cached"
	t cold2 -- "$TOOL" prime --check "$W/b.so"
	expect_out "^  3 not \(wholly\) cached" "--check read the file into the cache"
	# held by a running process: reported with its PID, not broken
	cp "$W/big.so" "$W/c.so"
	"$TT_BIN/tt_maptouch" "$W/c.so" 30 >"$W/holder.out" &
	local holder=$!
	for _ in $(seq 50); do grep -q ready "$W/holder.out" && break; sleep 0.1; done
	t held -- "$TOOL" prime "$W/c.so"
	kill $holder; wait $holder 2>/dev/null
	expect_rc 0
	expect_out "^  3 held in small pages by running processes\$"
	expect_out "^  mapped by PID .*\b$holder\b" "the holder's PID"
	# open for writing by another process: left alone, and said
	cp "$W/big.so" "$W/d.so"
	(exec 3>>"$W/d.so"; sleep 30) &
	local writer=$!
	sleep 0.3
	t writing -- "$TOOL" prime "$W/d.so"
	kill $writer; wait $writer 2>/dev/null
	expect_rc 0
	expect_out "^  3 left alone: the file is open for writing by a process\$"
	# a filesystem without large folios: tmpfs with shmem_enabled never
	local shm=/dev/shm
	if [ -d $shm ] && [ "$(stat -f -c %T $shm)" = tmpfs ] &&
	   grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null; then
		local sf
		sf=$(mktemp "$shm/tt_prime.XXXXXX")
		cp "$W/big.so" "$sf"
		t tmpfs -- "$TOOL" prime "$sf"
		rm -f "$sf"
		expect_rc 0
		expect_out "^  3 stayed small after reading back: this filesystem gives no huge folios\$"
	else
		echo "   (no tmpfs with shmem_enabled=never here: the no-large-folios case is not checked)"
	fi
	# any user who can read the file (not root)
	cp "$W/big.so" "$W/e.so" && chmod 644 "$W/e.so" && chmod 755 "$W"
	t nobody -- "$TT_BIN/tt_asuser" nobody "$TOOL" prime "$W/e.so"
	[ "$RC" -ne 77 ] || skip "tt_asuser cannot switch users here: $(cat "$ERR")"
	expect_rc 0 "prime as nobody"
	expect_out "^$W/e.so: 3 of 3 window\(s\) of 2M huge in the page cache \(3 primed now, 0 already\)\$"
	# not congruent: lld's own layout of the same code
	if "$TT_CC" -fuse-ld=lld -x c /dev/null -shared -o "$W/probe.so" 2>/dev/null; then
		bigdso nc.so -fuse-ld=lld
		t nc -- "$TOOL" prime "$W/nc.so"
		expect_rc 0; expect_out "^  not congruent:"
	else
		echo "   (no lld: the not-congruent case is not checked)"
	fi
}

case_prime_bad_input() {
	printf 'not ELF at all\n' >"$W/text"
	t text -- "$TOOL" prime "$W/text"
	expect_bad 1 "a file that is not ELF" "$W/text: not an ELF file"
	bigdso big.so
	head -c 100 "$W/big.so" >"$W/trunc.so"
	t trunc -- "$TOOL" prime "$W/trunc.so"
	expect_bad 1 "a truncated ELF file" "$W/trunc.so: .*(truncated|not an ELF)"
	head -c 3000000 "$W/big.so" >"$W/half.so"
	t half -- "$TOOL" prime "$W/half.so"
	expect_bad 1 "an ELF file cut in the middle of its text" "$W/half.so: .*truncated"
	t missing -- "$TOOL" prime "$W/nope.so"
	expect_bad 1 "a missing file" "$W/nope.so: No such file"
	t dir -- "$TOOL" prime "$W"
	expect_bad 1 "a directory" "$W: not a regular file"
	mkfifo "$W/fifo"
	t fifo -- timeout 10 "$TOOL" prime "$W/fifo"
	expect_bad 1 "a FIFO (no hang)" "$W/fifo: not a regular file"
	t none -- "$TOOL" prime
	expect_rc 2
	t opt -- "$TOOL" prime --bogus "$W/big.so"
	expect_rc 2
	# one bad file among good ones: the good ones are still done, exit 1
	cp "$W/big.so" "$W/ok.so"
	t mixed -- "$TOOL" prime "$W/ok.so" "$W/text"
	expect_rc 1 "one bad file among good ones"
	expect_out "^$W/ok.so: 3 of 3 window"
}

case_systemd_example() {
	# examples/systemd/mariadb-hugetext.conf is a valid drop-in: its
	# [Service] lines in a unit, checked by systemd-analyze (no warning).
	command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
	local ex=$TT_SRC/../../examples/systemd/mariadb-hugetext.conf
	{ printf '[Unit]\nDescription=check\n[Service]\nExecStart=/bin/true\n'
	  sed -n '/^\[Service\]/,$p' "$ex" | tail -n +2; } >"$W/hugetext-check.service"
	grep -q '^ExecStartPre=.*enormoustext prime ' "$W/hugetext-check.service" || fail "the example has no ExecStartPre prime line"
	grep -q '^Environment=LD_PRELOAD=.*libenormoustext.so' "$W/hugetext-check.service" || fail "the example does not preload the library"
	t verify -- systemd-analyze verify "$W/hugetext-check.service"
	expect_rc 0 "systemd-analyze verify"
	[ ! -s "$ERR" ] || fail "systemd-analyze has something to say: $(head -3 "$ERR")"
	# the command line it runs is a valid one (here on a file of ours)
	local cmd
	cmd=$(sed -n 's/^ExecStartPre=-\/usr\/local\/bin\/enormoustext //p' "$ex")
	[ -n "$cmd" ] || fail "cannot read the ExecStartPre command"
	bigdso big.so
	# shellcheck disable=SC2086 # the command's words
	t run -- "$TOOL" ${cmd%% *} --check "$W/big.so"
	expect_rc 0 "enormoustext ${cmd%% *} from the example"
}

case_record() {
	# A program that spends its time in one function: the profile names the
	# program by its build-id, and most samples fall in that function.
	cat >"$W/spin.c" <<'C'
#include <stdio.h>
#include <time.h>
__attribute__((noinline)) unsigned spin_here(unsigned x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 2654435761u + (unsigned)i;
	return x;
}
int main(void)
{
	unsigned x = 1;
	time_t end = time(NULL) + 1;
	while (time(NULL) <= end)
		x = spin_here(x);
	printf("%u\n", x & 1);
	return 0;
}
C
	"$TT_CC" -O1 -g -Wl,--build-id "$W/spin.c" -o "$W/spin" || fail "cannot build the spinning program"
	t rec -- "$TOOL" record -o "$W/spin.prof" -- "$W/spin"
	if [ "$RC" -ne 0 ] && grep -q 'perf_event_open' "$ERR"; then
		skip "this machine refuses perf_event_open here: $(head -1 "$ERR")"
	fi
	expect_rc 0 "record"
	# (the program calls time(): samples in the vdso belong to no file)
	local total outside
	read -r total outside < <(sed -n 's/^enormoustext record: \([0-9]*\) samples (\([0-9]*\) outside any file) written to .*/\1 \2/p' "$ERR")
	[ -n "$total" ] || fail "record's last line: $(tail -1 "$ERR")"
	[ "$total" -ge 200 ] || fail "only $total samples in a second of spinning"
	[ $((outside * 50)) -le "$total" ] || fail "$outside of $total samples outside any file (more than 2%)"
	sed 's/^/   profile| /' "$W/spin.prof" | head -8
	local bid
	bid=$(readelf -n "$W/spin" | sed -n 's/.*Build ID: *//p')
	grep -q "^object $bid $W/spin\$" "$W/spin.prof" || fail "the profile does not name the program by its build-id ($bid)"
	local fn
	fn=$(nm "$W/spin" | awk '$3 == "spin_here" { print $1 }')
	[ -n "$fn" ] || fail "no spin_here symbol"
	# the program's samples: the hottest granule lies in spin_here
	local size top
	size=$(nm -S "$W/spin" | awk '$4 == "spin_here" { print $2 }')
	top=$(awk -v b="$bid" '$1 == "object" { o = ($2 == b) } o && $1 ~ /^[0-9a-f]+$/ { if ($2 > m) { m = $2; a = $1 } } END { print a }' "$W/spin.prof")
	[ -n "$top" ] && [ -n "$size" ] || fail "no samples for the program, or no size for spin_here"
	[ $((16#$top + 64)) -gt $((16#$fn)) ] && [ $((16#$top)) -lt $((16#$fn + 16#$size)) ] ||
		fail "the hottest granule is at $top, spin_here is [$fn, +$size)"
	# the same from an existing perf record, through perf script
	if command -v perf >/dev/null && perf record -q -e cpu-clock -o "$W/perf.data" -- "$W/spin" >/dev/null 2>&1; then
		perf script -i "$W/perf.data" -F pid,ip --show-mmap-events >"$W/ps.txt" 2>/dev/null
		t import -- "$TOOL" record -o "$W/imp.prof" --from-perf-script "$W/ps.txt"
		expect_rc 0 "record --from-perf-script"
		grep -q "^object $bid $W/spin\$" "$W/imp.prof" || fail "the imported profile does not name the program"
		top=$(awk -v b="$bid" '$1 == "object" { o = ($2 == b) } o && $1 ~ /^[0-9a-f]+$/ { if ($2 > m) { m = $2; a = $1 } } END { print a }' "$W/imp.prof")
		[ $((16#$top + 64)) -gt $((16#$fn)) ] && [ $((16#$top)) -lt $((16#$fn + 16#$size)) ] ||
			fail "imported: the hottest granule is at $top, spin_here is [$fn, +$size)"
		printf 'nothing useful\n' >"$W/junk.txt"
		t junk -- "$TOOL" record -o "$W/j.prof" --from-perf-script "$W/junk.txt"
		expect_bad 1 "perf script output without samples" "junk.txt: no samples or mappings"
	else
		echo "   (perf cannot record here: --from-perf-script is not checked)"
	fi
	# usage errors
	t noout -- "$TOOL" record -- true
	expect_rc 2
	t nocmd -- "$TOOL" record -o "$W/x.prof"
	expect_rc 2
	t missing -- "$TOOL" record -o "$W/x.prof" -- "$W/no-such-program"
	expect_rc 127 "a command that does not exist"
	t baddir -- "$TOOL" record -o "$W/no/such/dir/x.prof" -- true
	expect_rc 1 "an output in a directory that does not exist"
}

case_profile() {
	printf 'enormoustext-profile 1\ngranule 4096\nobject aa /bin/a\n200000 10\n400000 30\n401000 20\nobject bb /lib/b.so\n1000 5\n' >"$W/a.prof"
	printf 'enormoustext-profile 1\ngranule 4096\nobject aa /bin/a\n200000 40\nobject cc /lib/c.so\n3000 1\n' >"$W/b.prof"
	t show -- "$TOOL" profile show "$W/a.prof"
	expect_rc 0; expect_no_err
	expect_out "^$W/a.prof: 2 object\\(s\\), granule 4096, windows of 2M\$"
	expect_out "^/bin/a  build-id aa  60 samples\$"
	# hottest first: the window at 0x400000 (50 of 60), then 0x200000
	[ "$(grep -A2 '^/bin/a ' "$OUT" | sed -n 2p)" = "  window 0x400000               50 samples   83.3%  cumulative  83.3%" ] ||
		fail "show: the hottest window is not first: $(grep -A2 '^/bin/a ' "$OUT" | sed -n 2p)"
	expect_out "^  window 0x200000               10 samples   16.7%  cumulative 100.0%\$"
	t svg -- "$TOOL" profile show --svg "$W/a.svg" "$W/a.prof"
	expect_rc 0
	head -c 4 "$W/a.svg" | grep -q '<svg' && tail -1 "$W/a.svg" | grep -q '</svg>' || fail "--svg did not write an SVG document"
	[ "$(grep -c '<rect ' "$W/a.svg")" = 4 ] || fail "--svg: expected a background and 3 window cells, got $(grep -c '<rect ' "$W/a.svg") rects"
	# --png: a valid PNG (tt_png checks every CRC, the stored deflate blocks,
	# the Adler-32 and the rows), the same heat map: cells at the places of
	# profile.c's PNG layout (left 10, rows from 40, 60 apart, cells 12 wide
	# from 12 below a row's top, 20 high); x 16 and 28 are cells 0 and 1 of
	# the first object, y 62 the middle of its cells.
	local tp=$TT_BIN/tt_png
	[ -x "$tp" ] || fail "$tp is missing: build the tool_tests target"
	t png -- "$TOOL" profile show --png "$W/a.png" "$W/a.prof"
	expect_rc 0; expect_no_err
	expect_out "^  window 0x400000               50 samples" "--png: the listing"
	[ "$(head -c 8 "$W/a.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "--png: no PNG signature"
	[ "$(dd if="$W/a.png" bs=1 skip=12 count=4 2>/dev/null)" = IHDR ] || fail "--png: the first chunk is not IHDR"
	local pw ph size
	pw=$(od -An -tu1 -j16 -N4 "$W/a.png" | awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }')
	ph=$(od -An -tu1 -j20 -N4 "$W/a.png" | awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }')
	if ! { [ "$pw" -ge 640 ] && [ "$pw" -le 4000 ] && [ "$ph" -ge 100 ] && [ "$ph" -le 400 ]; }; then
		fail "--png: a picture of $pw x $ph pixels for 2 objects of at most 2 windows"
	fi
	size=$("$tp" "$W/a.png") || fail "--png: not a valid PNG: $("$tp" "$W/a.png" 2>&1)"
	[ "$size" = "$pw $ph" ] || fail "--png: tt_png reads $size, the IHDR says $pw x $ph"
	if command -v file >/dev/null; then
		file "$W/a.png" | grep -q "PNG image data, $pw x $ph, 8-bit/color RGB, non-interlaced" ||
			fail "--png: file(1) says: $(file "$W/a.png")"
	fi
	local hot cold
	hot=$("$tp" "$W/a.png" 28 62) || fail "--png: cannot read the hottest window's pixel"
	cold=$("$tp" "$W/a.png" 16 62) || fail "--png: cannot read the colder window's pixel"
	echo "   hottest window $hot, the colder one $cold"
	[ "$hot" != "$cold" ] || fail "--png: the hottest window (0x400000, 50 samples) and a cold one (0x200000, 10) have the same colour $hot"
	# shellcheck disable=SC2086 # the colours are words
	set -- $hot $cold
	if ! { [ "$1" = 255 ] && [ "$4" = 255 ] && [ "$2" -lt "$5" ] && [ "$5" -lt 255 ]; }; then
		fail "--png: expected red cells, the hotter darker: $hot (hot) and $cold (cold)"
	fi
	# a window without samples between two with: white, inside the span
	printf 'enormoustext-profile 1\ngranule 4096\nobject aa /bin/a\n200000 10\n600000 50\n' >"$W/gap.prof"
	t pnggap -- "$TOOL" profile show --png "$W/gap.png" "$W/gap.prof"
	expect_rc 0
	"$tp" "$W/gap.png" >/dev/null || fail "--png (a gap): not a valid PNG: $("$tp" "$W/gap.png" 2>&1)"
	[ "$("$tp" "$W/gap.png" 28 62)" = "255 255 255" ] || fail "--png: the window without samples is $("$tp" "$W/gap.png" 28 62), not white"
	[ "$("$tp" "$W/gap.png" 40 62)" = "$hot" ] || fail "--png: the hottest window of this profile is $("$tp" "$W/gap.png" 40 62), not $hot"
	# the checker itself refuses a damaged PNG
	cp "$W/a.png" "$W/bad.png"
	printf '\001' | dd of="$W/bad.png" bs=1 seek=$(($(wc -c <"$W/a.png") / 2)) conv=notrunc 2>/dev/null
	! "$tp" "$W/bad.png" >/dev/null 2>&1 || fail "tt_png accepted a PNG with a byte changed"
	# both pictures at once, and a finer window: a wider picture
	t both -- "$TOOL" profile show --window 4K --svg "$W/b.svg" --png "$W/b.png" "$W/a.prof"
	expect_rc 0; expect_no_err
	grep -q '</svg>' "$W/b.svg" || fail "--svg with --png: no SVG"
	size=$("$tp" "$W/b.png") || fail "--png --window 4K: not a valid PNG: $("$tp" "$W/b.png" 2>&1)"
	[ "${size% *}" -gt "$pw" ] || fail "--png: 4K windows (/bin/a spans 514 of them) give no wider a picture than 2M ones ($size)"
	# an output that cannot be written: one line naming it, exit 1
	t pngdir -- "$TOOL" profile show --png "$W/no/such/dir/x.png" "$W/a.prof"
	expect_bad 1 "--png into a directory that does not exist" "$W/no/such/dir/x.png: No such file or directory"
	if [ -w /dev/full ]; then
		t pngfull -- "$TOOL" profile show --png /dev/full "$W/a.prof"
		expect_bad 1 "--png to a full device" "/dev/full: No space left on device"
	fi
	# a write that fails half-way (a file size limit, its signal ignored):
	# said, and no truncated PNG left behind
	# shellcheck disable=SC2016 # expanded by the inner shell
	t pngcut -- bash -c 'trap "" XFSZ; ulimit -f 100; exec "$0" profile show --png "$1" "$2"' "$TOOL" "$W/cut.png" "$W/a.prof"
	expect_bad 1 "--png cut short by a file size limit" "$W/cut.png: File too large"
	[ ! -e "$W/cut.png" ] || fail "--png left a PNG cut short: $W/cut.png ($(wc -c <"$W/cut.png") bytes)"
	t merge -- "$TOOL" profile merge -o "$W/m.prof" "$W/a.prof" "$W/b.prof"
	expect_rc 0; expect_no_err
	t showm -- "$TOOL" profile show "$W/m.prof"
	expect_out "^/bin/a  build-id aa  100 samples\$"
	expect_out "^/lib/c.so  build-id cc  1 samples\$"
	expect_out "^  window 0x200000               50 samples"
	# an object with no counts (loaded, never run) stays in the merge, and
	# counts found for it in another profile are kept
	printf 'enormoustext-profile 1\ngranule 4096\nobject dd /lib/idle.so\nobject bb /lib/b.so\n' >"$W/idle.prof"
	t mergeidle -- "$TOOL" profile merge -o "$W/mi.prof" "$W/idle.prof" "$W/a.prof"
	grep -qx 'object dd /lib/idle.so' "$W/mi.prof" || fail "merge dropped an object with no samples: $(tr '\n' '|' <"$W/mi.prof")"
	[ "$(grep -A1 '^object bb ' "$W/mi.prof" | tail -1)" = "1000 5" ] ||
		fail "merge lost the counts of an object that another profile lists without any"
	[ "$(grep -c '^object ' "$W/mi.prof")" -eq 3 ] || fail "merge: expected 3 objects: $(tr '\n' '|' <"$W/mi.prof")"
	t showidle -- "$TOOL" profile show "$W/mi.prof"
	expect_out "^/lib/idle.so  build-id dd  0 samples\$"
	# bad input
	printf 'enormoustext-profile 1\ngranule 8192\nobject aa /bin/a\n2000 1\n' >"$W/g.prof"
	t granule -- "$TOOL" profile merge -o "$W/x.prof" "$W/a.prof" "$W/g.prof"
	expect_bad 1 "profiles with different granules" "$W/g.prof: granule 8192, the others have 4096"
	[ ! -e "$W/x.prof" ] || fail "a failed merge left $W/x.prof"
	printf 'enormoustext-profile 1\ngranule 4096\nobject aa /bin/a\n2000 lots\n' >"$W/bad.prof"
	t bad -- "$TOOL" profile show "$W/bad.prof"
	expect_bad 1 "a corrupt profile" "$W/bad.prof: line 4: expected"
	t missing -- "$TOOL" profile show "$W/none.prof"
	expect_bad 1 "a missing profile" "$W/none.prof: [Nn]o such file"
	t usage -- "$TOOL" profile frobnicate
	expect_rc 2
}

case_profile_order() {
	# A program whose time goes to hot_b, defined after a big cold_a: record
	# it, ask for the order, relink with it (lld and GNU ld): hot_b now
	# comes before cold_a, at the start of the text.
	cat >"$W/ord.c" <<'C'
#include <stdio.h>
#include <time.h>
__attribute__((noinline)) unsigned cold_a(unsigned x) { __asm__ volatile("jmp 1f\n.skip 65536, 0xcc\n1:"); return x + 1; }
__attribute__((noinline)) unsigned hot_b(unsigned x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 2654435761u + (unsigned)i;
	return x;
}
__attribute__((noinline)) unsigned cold_c(unsigned x) { __asm__ volatile("jmp 1f\n.skip 65536, 0xcc\n1:"); return x + 3; }
int main(void)
{
	unsigned x = cold_a(1) + cold_c(2);
	time_t end = time(NULL) + 1;
	while (time(NULL) <= end)
		x = hot_b(x);
	printf("%u\n", x & 1);
	return 0;
}
C
	"$TT_CC" -O1 -ffunction-sections -Wl,--build-id "$W/ord.c" -o "$W/ord" || fail "cannot build the program"
	addr() { nm "$1" | awk -v f="$2" '$3 == f { print $1 }'; }
	[ $((16#$(addr "$W/ord" cold_a))) -lt $((16#$(addr "$W/ord" hot_b))) ] || fail "cold_a is not before hot_b to begin with"
	t rec -- "$TOOL" record -o "$W/ord.prof" -- "$W/ord"
	if [ "$RC" -ne 0 ] && grep -q 'perf_event_open' "$ERR"; then
		skip "this machine refuses perf_event_open here: $(head -1 "$ERR")"
	fi
	expect_rc 0 "record"
	t order -- "$TOOL" profile order --object "$W/ord" "$W/ord.prof"
	expect_rc 0; expect_no_err
	[ "$(head -1 "$OUT")" = hot_b ] || fail "the hottest function is not first: $(head -3 "$OUT" | tr '\n' ' ')"
	cp "$OUT" "$W/order.txt"
	t orderld -- "$TOOL" profile order --format ld --object "$W/ord" "$W/ord.prof"
	expect_rc 0
	cp "$OUT" "$W/order.ld"
	grep -q '\*(.text.hot_b ' "$W/order.ld" || fail "the GNU ld script does not place hot_b"
	# relink: GNU ld with the script, and lld with the ordering file where lld exists
	"$TT_CC" -O1 -ffunction-sections "$W/ord.c" -Wl,-T,"$W/order.ld" -o "$W/ord-ld" || fail "linking with the ld order failed"
	[ $((16#$(addr "$W/ord-ld" hot_b))) -lt $((16#$(addr "$W/ord-ld" cold_a))) ] ||
		fail "GNU ld with the order: hot_b is not before cold_a"
	"$W/ord-ld" >/dev/null || fail "the reordered program does not run"
	if "$TT_CC" -fuse-ld=lld -x c /dev/null -shared -o "$W/probe.so" 2>/dev/null; then
		"$TT_CC" -O1 -ffunction-sections -fuse-ld=lld "$W/ord.c" -Wl,--symbol-ordering-file="$W/order.txt" \
			-o "$W/ord-lld" || fail "linking with the lld order failed"
		[ $((16#$(addr "$W/ord-lld" hot_b))) -lt $((16#$(addr "$W/ord-lld" cold_a))) ] ||
			fail "lld with the order: hot_b is not before cold_a"
	else
		echo "   (no lld: the --symbol-ordering-file link is not checked)"
	fi
	# a file the profile does not have
	t other -- "$TOOL" profile order --object "$TOOL" "$W/ord.prof"
	expect_bad 1 "an object the profile does not have" "the profile has no samples for this file"
}

case_package() {
	# What a build uses: enormous.ld installed, the pkg-config flags, and a
	# CMake consumer with find_package(enormoustext) + enormoustext_huge_text.
	local p=$W/prefix
	t install -- "$TT_CMAKE" --install "$TT_BUILD_DIR" --prefix "$p"
	expect_rc 0 "cmake --install"
	local ld=$p/share/enormoustext/enormous.ld
	[ -s "$ld" ] || fail "enormous.ld was not installed as $ld"
	local pc=$p/$TT_INSTALL_LIBDIR/pkgconfig
	command -v pkg-config >/dev/null || fail "pkg-config is missing (Debian: apt-get install pkg-config)"
	t pcnoscript -- env PKG_CONFIG_PATH="$pc" pkg-config --variable=huge_text_ldflags_noscript enormoustext
	expect_rc 0; expect_out "^-Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code\$" "huge_text_ldflags_noscript"
	t pcflags -- env PKG_CONFIG_PATH="$pc" pkg-config --variable=huge_text_ldflags enormoustext
	expect_rc 0; expect_out "^-Wl,-T,[^ ]*/enormous.ld\$" "huge_text_ldflags (the script alone)"
	local flags script
	flags=$(PKG_CONFIG_PATH="$pc" pkg-config --variable=huge_text_ldflags enormoustext)
	script=$(sed -n 's/^-Wl,-T,\([^ ]*\)$/\1/p' "$OUT")
	[ "$(realpath "$script")" = "$(realpath "$ld")" ] || fail "huge_text_ldflags names $script, not the installed $ld"
	printf 'int main(void) { return 0; }\n' >"$W/m.c"
	# shellcheck disable=SC2086 # the flags are words
	t pclink -- "$TT_CC" "$W/m.c" $flags -o "$W/m"
	expect_rc 0; expect_no_err
	readelf -lW "$W/m" | awk '$1 == "LOAD" && / R E / { exit !($NF == "0x200000" && $6 == "0x200000") }' ||
		fail "linked with the pkg-config flags, the text is not one padded 2 MiB-aligned window: $(readelf -lW "$W/m" | grep LOAD)"
	# a CMake project that uses the installed package
	mkdir -p "$W/app"
	cp "$TT_SRC/../../examples/script.c" "$TT_SRC/../../examples/bigcode.h" "$TT_SRC/../../examples/example_text.h" "$W/app/"
	cat >"$W/app/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(app C)
find_package(enormoustext 0.2 REQUIRED)
add_executable(app script.c)
enormoustext_huge_text(app)
CM
	# (in a sanitized tree the installed library needs the sanitizer runtime)
	t configure -- "$TT_CMAKE" -S "$W/app" -B "$W/app/build" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_C_COMPILER="$TT_CC" \
		-DCMAKE_C_FLAGS="${TT_CFLAGS:-}" -DCMAKE_EXE_LINKER_FLAGS="${TT_CFLAGS:-}"
	expect_rc 0 "configuring a project with find_package(enormoustext)"
	t build -- "$TT_CMAKE" --build "$W/app/build"
	expect_rc 0 "building it with enormoustext_huge_text(app)"
	cp "$W/app/build/app" "$W/app/copy"
	t off -- env LD_LIBRARY_PATH="$p/$TT_INSTALL_LIBDIR" ENORMOUSTEXT=0 "$W/app/copy"
	expect_rc 0; expect_out "on huge pages \(0%\)\$" "with the library off"
	t on -- env LD_LIBRARY_PATH="$p/$TT_INSTALL_LIBDIR" "$W/app/copy"
	expect_rc 0; expect_out "on huge pages \(100%\)\$" "linked with enormous.ld and -lenormoustext: all of its text huge"
}

fn=case_$T
declare -F "$fn" >/dev/null || { echo "run.sh: no test case '$T'"; exit 2; }
"$fn"
echo "PASS [$T]"
exit 0
