#!/bin/bash
# tool_hostwide_startup — what `enable --all` costs a program with too
# little text, and the decision it puts off until the program's first
# dlopen.  In a private mount namespace whose /etc is a copy:
#  - page faults, counted (the child's ru_minflt, the least of 2x51 runs,
#    alternated; a count, not a time): /bin/true's copies with the
#    library host-wide, a program that acts, one that is excluded and one
#    outside --programs, take at most four page faults more than the same
#    copy with an empty library in /etc/ld.so.preload (fault-around
#    windows move with the random addresses: 0 to 3 more measured; the
#    path before the start-up section took 10 more);
#  - a small program whose environment is empty (env -i) reads none of the
#    host's files at start (strace: no open of /etc/enormoustext/*, no
#    readlink), and at its first dlopen the host's settings decide: the
#    library it loads goes onto huge pages where --programs names it
#    (the settings' DEFER=0 and COPY_MIN=0 used), not where
#    --exclude-programs or the absence from --programs says no;
#  - with a variable of the library's in its environment the host's
#    files are read at start, as before.
. "$(dirname "$0")/lib.sh"

in_private_etc "$0"
rm -rf /etc/enormoustext
rm -f /etc/ld.so.preload

mkdir -p "$W/on" "$W/excl" "$W/out"
cat >"$W/dl_hold.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
/* dl_hold LIB --wait: dlopen LIB, call big_entry, say "ready PID", hold */
int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	int (*entry)(void) = h ? (int (*)(void))dlsym(h, "big_entry") : NULL;
	if (!entry) {
		fprintf(stderr, "dl_hold: %s\n", dlerror());
		return 3;
	}
	int r = entry();
	printf("ready %ld\n", (long)getpid());
	if (r == 12345)
		puts("(that number)");
	fflush(stdout);
	if (argc > 2 && strcmp(argv[2], "--wait") == 0)
		sleep(60);
	return 0;
}
EOF
cat >"$W/minflt.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
/* minflt N PROGRAM...: the least minor-fault count of N runs */
int main(int argc, char **argv)
{
	long best = -1;
	for (int i = 0; i < atoi(argv[1]); i++) {
		pid_t p = fork();
		if (p == 0) {
			execv(argv[2], argv + 2);
			_exit(127);
		}
		int st;
		struct rusage ru;
		if (wait4(p, &st, 0, &ru) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
		if (best < 0 || ru.ru_minflt < best)
			best = ru.ru_minflt;
	}
	printf("%ld\n", best);
	return 0;
}
EOF
"$TT_CC" -O1 -o "$W/dl_hold" "$W/dl_hold.c" -ldl 2>"$W/cc.log" || fail "cannot build dl_hold: $(head -3 "$W/cc.log")"
"$TT_CC" -O1 -o "$W/minflt" "$W/minflt.c" 2>"$W/cc.log" || fail "cannot build minflt: $(head -3 "$W/cc.log")"
echo 'void tt_empty(void) {}' >"$W/empty.c"
"$TT_CC" -O1 -shared -fPIC -o "$W/libempty.so" "$W/empty.c" 2>"$W/cc.log" || fail "cannot build libempty.so: $(head -3 "$W/cc.log")"
bigdso big.so
# each program its own copy of the library (a copy moved by one process
# leaves its file's page cache huge, for every process that maps it)
for d in on excl out; do cp "$W/dl_hold" /bin/true "$W/big.so" "$W/$d/" || fail "cannot copy the programs"; done

# --- page faults: an empty library against the host-wide library, each
# program copy against itself (its path's length moves the stack's
# strings, and where a page boundary falls)
faults() { "$W/minflt" 51 "$1" || fail "minflt $1 failed"; }
t en -- "$TOOL" enable --all --preload --programs "$W/on/*:$W/excl/*" --exclude-programs "$W/excl/*" --env DEFER=0 --env COPY_MIN=0
expect_rc 0 "enable --all"
grep -q 'enormoustext/preload/' /etc/ld.so.preload || fail "no host-wide entry: $(cat /etc/ld.so.preload)"
cp /etc/ld.so.preload "$W/preload.ours"
echo "$W/libempty.so" >"$W/preload.empty"
line="page faults of /bin/true (least of 2x51, alternated), an empty library / host-wide:"
for v in on:acting excl:excluded "out:outside --programs"; do
	d=${v%%:*} what=${v#*:}
	cp "$W/preload.empty" /etc/ld.so.preload
	e1=$(faults "$W/$d/true")
	cp "$W/preload.ours" /etc/ld.so.preload
	o1=$(faults "$W/$d/true")
	cp "$W/preload.empty" /etc/ld.so.preload
	e2=$(faults "$W/$d/true")
	cp "$W/preload.ours" /etc/ld.so.preload
	o2=$(faults "$W/$d/true")
	e=$((e1 < e2 ? e1 : e2)) o=$((o1 < o2 ? o1 : o2))
	line="$line $what $e / $o;"
	# four faults of slack: the kernel maps a file's pages 64 KiB at a
	# time around a fault, in windows aligned on the virtual address, and
	# the loader's addresses are random, so the least of a batch moves by
	# one or two between batches of the same program (measured: 0 to 3
	# more than an empty library, 1-2 mostly); before the start-up
	# section the host-wide path took 10 more
	[ "$o" -le $((e + 4)) ] || fail "host-wide, $what: $o page faults, more than an empty library's $e ($e1 $e2 / $o1 $o2)"
done
echo "$line"

# --- no file of the host's read at start by a small program (env -i)
if command -v strace >/dev/null; then
	env -i strace -f -e trace=openat,open,readlink,readlinkat -o "$W/st.small" "$W/excl/true" ||
		fail "strace of a small program failed"
	# (the loader's own open of the entry, /etc/enormoustext/preload/, is not ours)
	hostfiles='/etc/enormoustext/(binaries|enormoustext\.conf)|/proc/self/exe'
	! grep -E "$hostfiles" "$W/st.small" >/dev/null ||
		fail "a small program read the host's files at start: $(grep -E "$hostfiles" "$W/st.small" | head -3)"
	env -i ENORMOUSTEXT_VERBOSE=0 strace -f -e trace=openat,open,readlink,readlinkat -o "$W/st.env" "$W/excl/true" ||
		fail "strace of a small program with a variable failed"
	grep -q '/etc/enormoustext/binaries' "$W/st.env" ||
		fail "with ENORMOUSTEXT_VERBOSE in its environment the list was not read at start"
	echo "strace: no host file read at start by a small program with an empty environment; read with a variable set"
else
	echo "(strace is not installed: the system-call half of this check is left out; the page faults above and the decisions below still show it)"
fi

# --- the first dlopen decides
# huge_of PID PATH: bytes of PATH's text on huge pages in PID
huge_of() { smaps_object /proc/"$1"/smaps "$2" | awk '{ print $3 }'; }
for d in excl out on; do
	start_hold "$d" env -i -- "$W/$d/dl_hold" "$W/$d/big.so"
	grep -q '^ready ' "$W/$d.hold.out" || fail "$d: dl_hold did not start: $(head -3 "$W/$d.hold.err")"
	h=$(huge_of "$HPID" "$W/$d/big.so")
	case $d in
	on) [ "${h:-0}" -ge "$H" ] || fail "listed by --programs: the library dlopened was not moved at the dlopen ($h bytes huge)" ;;
	*) [ "${h:-0}" -eq 0 ] || fail "$d: the library dlopened was moved ($h bytes huge)" ;;
	esac
	[ ! -s "$W/$d.hold.err" ] || fail "$d: something was said: $(head -2 "$W/$d.hold.err")"
	echo "$d: $h bytes of big.so huge after its dlopen"
	kill "$HPID" 2>/dev/null
	wait "$HPID" 2>/dev/null
done

"$TOOL" disable --all >/dev/null || fail "disable --all"
[ ! -e /etc/ld.so.preload ] || fail "disable --all left /etc/ld.so.preload: $(cat /etc/ld.so.preload)"
pass
