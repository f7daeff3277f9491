#!/bin/bash
# fault.inv-core — the core dump of a process whose text the library
# copied holds no more of that text than the plain run's.
#
# The kernel dumps private file mappings without their contents (the file
# has them; coredump_filter's default 0x33 has no bit 2), but anonymous
# private memory whole (bit 0).  An anonymous copy of the text is
# anonymous memory: unless the library marks it MADV_DONTDUMP, every
# copied 2 MiB window goes into every core, and a small program's core
# grows from a few hundred kB to ten MiB.
#
# How: the kernel's own dump, the one a crash produces — dp_prog (8 MiB of
# text) --hold, plain and preloaded (ENORMOUSTEXT_BACKEND=thp, moved at
# start-up; the test checks in smaps that it was), with ulimit -c
# unlimited, killed with SIGABRT once running.  /proc/sys/kernel/
# core_pattern is used as it is when it names a plain file in the
# process's directory (as "core" does); a pipe or a path elsewhere is set
# to "core" for the test and put back at exit.  The measure is the bytes
# of the core's PT_LOAD segments (readelf -l: FileSiz) that are
# executable and lie in dp_prog's span in /proc/PID/maps (the text, its
# copies between): 0 plain.  The test fails when the preloaded core holds
# more than 1 MiB more of them (a copied window is 2 MiB).  The whole
# core's size is shown beside.  gcore (gdb), when present, is shown too
# (informational: it follows coredump_filter and the VmFlags "dd" as the
# kernel does, but it is gdb's reading of the process, not the kernel's).
. "$(dirname "$0")/lib.sh"
command -v readelf >/dev/null || skip "no readelf (binutils)"
DP=$FAULT_BIN/dp_prog
[ -x "$DP" ] || fail "$DP is missing: build the tests first"
fresh "$DP"
R=$WORK/res
mkdir "$R" || exit 2

# ---- where cores go ------------------------------------------------------------------
CP=/proc/sys/kernel/core_pattern
pat=$(cat $CP) || skip "cannot read $CP"
case $pat in
'' | *'|'* | */* | *%*)
	[ "$(id -u)" = 0 ] || skip "core_pattern '$pat' does not write a file in the process's directory, and only root may change it"
	printf '%s\n' "$pat" >"$WORK/core_pattern.saved"
	echo core >$CP 2>/dev/null || skip "cannot set $CP (read-only here)"
	at_exit "cat '$WORK/core_pattern.saved' >$CP"
	note "core_pattern was '$pat': set to 'core' for the test (put back at exit)"
	;;
esac
(ulimit -c unlimited) 2>/dev/null || skip "ulimit -c unlimited is not allowed here (hard RLIMIT_CORE $(ulimit -H -c))"
cf=$(cat /proc/self/coredump_filter 2>/dev/null)
[ "$cf" = 00000033 ] || note "coredump_filter here is $cf: dp_prog gets the kernel's default 0x33 (set in its shell before exec)"

# text_span PID — "LO HI" (decimal): from the first to the end of the last
# mapping of dp_prog in /proc/PID/maps
text_span() {
	local lo='' hi='' range rest
	while read -r range _ _ _ _ rest; do
		[ "$rest" = "$D/dp_prog" ] || continue
		[ -z "$lo" ] && lo=$((16#${range%-*}))
		hi=$((16#${range#*-}))
	done <"/proc/$1/maps"
	echo "$lo $hi"
}
# huge_text_kb PID — AnonHugePages + FilePmdMapped in dp_prog's span
huge_text_kb() {
	local lo hi kb=0 in=0 k v
	read -r lo hi < <(text_span "$1")
	while read -r k v _; do
		case $k in
		AnonHugePages: | FilePmdMapped:) [ "$in" = 1 ] && kb=$((kb + v)) ;;
		esac
		if [[ $k =~ ^([0-9a-f]+)-([0-9a-f]+)$ ]]; then
			local s=$((16#${BASH_REMATCH[1]}))
			in=0
			((s >= lo && s < hi)) && in=1
		fi
	done <"/proc/$1/smaps"
	echo $kb
}
# core_text CORE LO HI — "EXEC_IN_SPAN ALL_LOADS" bytes of CORE's PT_LOADs
core_text() {
	local typ va fs rest ex=0 all=0
	while read -r typ _ va _ fs _ rest; do
		[ "$typ" = LOAD ] || continue
		all=$((all + fs))
		[[ $rest == *E* ]] && ((va >= $2 && va < $3)) && ex=$((ex + fs))
	done < <(readelf -lW "$1" 2>/dev/null)
	echo "$ex $all"
}

# dump LABEL [VAR=VALUE...] — dp_prog --hold 20000 in $D/LABEL (its own
# directory), preloaded or not, killed with SIGABRT once it runs (and,
# preloaded, once its text is huge): CORE (the file), SPAN ("LO HI"),
# HUGE (kB of text huge then), GC (the gcore file or empty)
dump() {
	local label=$1 dir=$D/$1 p i
	shift
	mkdir "$dir" || exit 2
	(ulimit -c unlimited && echo 0x33 >/proc/self/coredump_filter && cd "$dir" && exec env "$@" "$D/dp_prog" --hold 20000 --pidfile "$dir/pid" \
		>"$R/$label.out" 2>"$R/$label.err") &
	local bg=$!
	LIVE=$bg
	for i in $(seq 200); do [ -s "$dir/pid" ] && break; sleep 0.05; done
	p=$(cat "$dir/pid" 2>/dev/null)
	[ -n "$p" ] || fail "$label: dp_prog did not start: $(head -3 "$R/$label.err")"
	sleep 0.3
	SPAN=$(text_span "$p")
	HUGE=$(huge_text_kb "$p")
	GC=
	if command -v gcore >/dev/null; then
		gcore -o "$R/$label.gcore" "$p" >"$R/$label.gcore.log" 2>&1 && GC=$(ls "$R/$label.gcore".* 2>/dev/null | head -1)
	fi
	kill -ABRT "$p"
	wait $bg
	local rc=$?
	LIVE=
	[ $rc = $((128 + 6)) ] || fail "$label: dp_prog ended with status $rc, not by SIGABRT"
	CORE=$(ls "$dir"/core* 2>/dev/null | head -1)
	[ -n "$CORE" ] || fail "$label: no core file in $dir after SIGABRT (core_pattern '$(cat $CP)', ulimit -c unlimited)"
}
LIVE=    # dp_prog while it runs
# shellcheck disable=SC2016 # expanded when the hook runs
at_exit '[ -n "$LIVE" ] && kill -KILL $LIVE 2>/dev/null'
mib() { awk -v b="$1" 'BEGIN { printf "%.2f MiB", b / 1048576 }'; }

dump plain
read -r plo phi <<<"$SPAN"
read -r p_ex p_all < <(core_text "$CORE" "$plo" "$phi")
p_size=$(stat -c %s "$CORE")
note "plain: core $(mib "$p_size") (PT_LOAD contents $(mib "$p_all")), executable bytes in dp_prog's span: $p_ex"
[ -n "$GC" ] && read -r pg_ex pg_all < <(core_text "$GC" "$plo" "$phi")

dump thp LD_PRELOAD="$PRE" ENORMOUSTEXT_BACKEND=thp ENORMOUSTEXT_VERBOSE=1
[ "$HUGE" -gt 0 ] || skip "the library moved none of dp_prog's text here (thp backend): $(head -2 "$R/thp.err")"
read -r lo hi <<<"$SPAN"
read -r ex all < <(core_text "$CORE" "$lo" "$hi")
size=$(stat -c %s "$CORE")
note "preloaded (thp, $HUGE kB of text on huge pages: $(head -1 "$R/thp.err")): core $(mib "$size") (PT_LOAD contents $(mib "$all")), executable bytes in dp_prog's span: $ex"
if [ -n "$GC" ]; then
	read -r g_ex g_all < <(core_text "$GC" "$lo" "$hi")
	note "gcore (gdb, informational): plain $(mib "${pg_all:-0}") with ${pg_ex:-?} executable bytes in the span; preloaded $(mib "$g_all") with $g_ex"
fi
[ "$ex" -le $((p_ex + 1048576)) ] ||
	fail "the preloaded core holds the copies of the text: $(mib "$ex") of executable memory in dp_prog's span (plain $(mib "$p_ex")); core $(mib "$size") vs plain $(mib "$p_size")"
echo "PASS [$T]: the preloaded core holds $(mib "$ex") of dp_prog's text (plain $(mib "$p_ex")); core $(mib "$size") vs plain $(mib "$p_size")"
