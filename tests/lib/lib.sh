# shellcheck shell=bash
# tests/lib/lib.sh — what every shell test of libenormoustext shares, whatever
# its folder.  Each folder's lib.sh (tests/fault, integration, linker, pkg,
# tools) sources it first and adds what its own tests need; a test sources
# its folder's lib.sh, never this file directly.
#
# Before sourcing, a caller may set ET_TEST_NAME (default: the script's name
# without .sh), the name that every verdict line carries.
#
# Strict mode: set -u (an unset variable is an error, so that a mistyped name
# cannot make a check pass).  Not set -e: a test runs commands that must fail
# and checks their status itself; not pipefail: the tests read the status of
# a pipeline's last command (grep -q ending a reader early is no failure).
#
# Defines:
#   T                          the test's name
#   fail MSG...                "FAIL [T]: MSG", exit 1
#   skip MSG...                "SKIP [T]: MSG", exit 77 (the machine lacks
#                              something the test needs; the line says what)
#   pass                       "PASS [T]", exit 0 (the last line of a test)
#   note MSG...                "[T] MSG": a line of information
#   at_exit CMD                run CMD (with eval) when the test ends; the last
#                              added runs first, so that a hook may still use
#                              what an earlier one undoes (a uprobe is removed
#                              before its tracefs is unmounted).  The array
#                              EXIT_HOOKS holds them (EXIT_HOOKS+=("CMD") is
#                              the same as at_exit CMD).
#   et_workdir ROOT KEEPVAR    make a work directory ROOT/T.XXXXXX, in
#                              $ET_WORK, removed when the test ends (after the
#                              hooks) unless the variable named KEEPVAR is 1
#   et_clear_env               unset every ENORMOUSTEXT* variable and
#                              LD_PRELOAD / LD_LIBRARY_PATH (nothing from the
#                              caller's environment may steer the library)
#   wait_line FILE ERE [SECS [PID]]
#                              until FILE has a line matching ERE: status 0,
#                              or 1 after SECS whole seconds (default 10), or
#                              as soon as process PID (the one that writes
#                              FILE) has ended without writing it
#   wait_until SECS CMD...     until CMD succeeds: status 0, or 1 after SECS
#                              whole seconds; CMD is run every 50 ms
#   no_foreign_primer WHAT     skip unless no `enormoustext daemon` that can
#                              see this test runs on the host (its PID
#                              namespace, any root: a package's service, one
#                              left behind; not one told --only DIR):
#                              every 5 s it primes the files any process
#                              maps executable (fdatasync, POSIX_FADV_DONTNEED,
#                              read back huge), the test's own files too
# Both waits measure the deadline on the clock, not by counting polls, so a
# loaded machine (where each poll takes longer) does not stretch it.
#   et_text VAR FILE           FILE's bytes into VAR; false where FILE is
#                              missing or holds a NUL byte
#   et_same_file A B           A and B hold the same bytes (as cmp -s)
#   et_show FILE PREFIX [BYTES]  FILE's lines (of its first BYTES, or all),
#                              each after PREFIX (as head -c BYTES | sed 's/^/PREFIX/')
# These three use bash's builtins only (cmp where a file holds a NUL): the
# harnesses call them thousands of times, and a process forked costs about
# a millisecond here.
#   et_drop_cache FILE...      FILEs' clean, unmapped pages dropped from the
#                              page cache (POSIX_FADV_DONTNEED; those files
#                              only, not the host's whole cache)
#   et_big_static OUT CC LDSCRIPT
#                              a static program with 64 MiB of text (nops,
#                              every page of it run, so each window is
#                              mapped) linked with LDSCRIPT (enormous.ld:
#                              congruent), built with CC from OUT.c; it
#                              prints "ready PID" and, given an argument,
#                              waits for a signal.  False where it cannot
#                              be linked (the compiler's words in OUT.log)
set -u

T=${ET_TEST_NAME:-$(basename "$0" .sh)}

fail() { echo "FAIL [$T]: $*"; exit 1; }
skip() { echo "SKIP [$T]: $*"; exit 77; }
pass() { echo "PASS [$T]"; exit 0; }
note() { echo "[$T] $*"; }

EXIT_HOOKS=()
ET_WORK=
ET_WORK_KEEP=
at_exit() { EXIT_HOOKS+=("$*"); }
# shellcheck disable=SC2317 # called by the EXIT trap
et_on_exit() {
	local i
	for ((i = ${#EXIT_HOOKS[@]} - 1; i >= 0; i--)); do eval "${EXIT_HOOKS[$i]}"; done
	[ -n "$ET_WORK" ] || return 0
	if [ "${!ET_WORK_KEEP:-0}" = 1 ]; then echo "(work directory kept: $ET_WORK)"; else rm -rf "$ET_WORK"; fi
}
trap et_on_exit EXIT
trap 'exit 130' INT TERM

et_workdir() {
	mkdir -p "$1" || exit 2
	ET_WORK=$(mktemp -d "$1/$T.XXXXXX") || exit 2
	ET_WORK_KEEP=$2
}

et_clear_env() {
	local v
	while read -r v; do unset "$v"; done < <(env | sed -n 's/^\(ENORMOUSTEXT[A-Za-z0-9_]*\)=.*/\1/p')
	unset LD_PRELOAD LD_LIBRARY_PATH
}

et_text() { [ -r "$2" ] && ! IFS= read -r -d '' "$1" <"$2"; }
et_same_file() {
	local x y
	if et_text x "$1" && et_text y "$2"; then [ "$x" == "$y" ]; else cmp -s "$1" "$2"; fi
}
et_show() {
	local x lines n=${3:-65536}
	[ -r "$1" ] || return 0
	IFS= read -r -d '' -N "$n" x <"$1"
	# (a long file, whole: awk is quicker there than bash's read)
	if [ -z "${3:-}" ] && [ "${#x}" -ge "$n" ]; then awk -v p="$2" '{ print p $0 }' "$1"; return 0; fi
	[ -n "$x" ] || return 0
	mapfile -t lines <<<"${x%$'\n'}"
	printf '%s\n' "${lines[@]/#/"$2"}"
}

# The clock in microseconds (bash 5's EPOCHREALTIME; date where it is absent).
et_now_us() {
	local t=${EPOCHREALTIME:-}
	[ -n "$t" ] || t=$(date +%s.%N)
	t=${t/,/.}
	local s=${t%.*} f=${t#*.}000000
	echo $((s * 1000000 + 10#${f:0:6}))
}

wait_until() {
	local end=$(($(et_now_us) + ${1%.*} * 1000000))
	shift
	while :; do
		"$@" && return 0
		[ "$(et_now_us)" -lt "$end" ] || return 1
		sleep 0.05
	done
}

et_drop_cache() {
	python3 -c 'import os, sys
for f in sys.argv[1:]:
    fd = os.open(f, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)' "$@"
}

et_big_static() {
	cat >"$1.c" <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
__asm__(".text\n.globl big_text\nbig_text:\n.fill 67108864, 1, 0x90\nret\n");
void big_text(void);
int main(int argc, char **argv)
{
	(void)argv;
	big_text();   /* every page of its text touched: each window mapped */
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (argc > 1)
		pause();
	return 0;
}
EOF
	"$2" -O1 -static -o "$1" "$1.c" -Wl,-T,"$3" -Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code 2>"$1.log"
}

no_foreign_primer() {
	local p a pids="" me
	me=$(readlink /proc/self/ns/pid)
	for p in /proc/[0-9]*; do
		a=()
		mapfile -d '' -t a <"$p/cmdline" 2>/dev/null || continue
		[ "${#a[@]}" -ge 2 ] && [ "${a[0]##*/}" = enormoustext ] && [ "${a[1]}" = daemon ] || continue
		# one in a PID namespace of its own (tests/deploy's hosts) sees
		# none of this test's processes; one told --only DIR primes
		# nothing outside DIR
		[ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$me" ] || continue
		case " ${a[*]} " in *" --only "*) continue ;; esac
		pids+=" ${p#/proc/}"
	done
	[ -z "$pids" ] ||
		skip "$1: an enormoustext daemon runs on this host (pid$pids): it writes out, drops and reads back huge the page cache of the files processes map, this test's too; the library cannot be judged here"
}

# mem_facts: one line on the host's memory as a huge page needs it, for a
# failure's message where a window read back small (free 2 MiB-or-larger
# blocks, free memory, compaction so far)
mem_facts() {
	local big free cs cf
	big=$(awk '{ for (i = 14; i <= NF; i++) n += $i * 2 ^ (i - 14) } END { print n + 0 }' /proc/buddyinfo 2>/dev/null)
	free=$(awk '$1 == "MemFree:" { print int($2 / 1024) }' /proc/meminfo 2>/dev/null)
	cs=$(awk '$1 == "compact_success" { print $2 }' /proc/vmstat 2>/dev/null)
	cf=$(awk '$1 == "compact_fail" { print $2 }' /proc/vmstat 2>/dev/null)
	echo "memory: ${free:-?} MiB free, ${big:-?} free 2 MiB blocks, compaction ${cs:-?} succeeded ${cf:-?} failed"
}

et_line_or_gone() {
	grep -qE -- "$2" "$1" 2>/dev/null && return 0
	[ -z "$3" ] || kill -0 "$3" 2>/dev/null || { ET_GONE=1; return 0; }
	return 1
}
wait_line() {
	ET_GONE=0
	wait_until "${3:-10}" et_line_or_gone "$1" "$2" "${4:-}" && [ "$ET_GONE" = 0 ] && return 0
	# the last word: the writer may have written the line just before ending
	grep -qE -- "$2" "$1" 2>/dev/null
}
