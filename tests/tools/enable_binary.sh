#!/bin/bash
# tool_enable_binary — `enable --binary PATH` end to end, in a private mount
# namespace whose /etc is a copy (the real /etc/ld.so.preload is never
# written: its state is taken before and compared after).  Inside, with no
# --root: bad programs refused before anything is written; the listed
# program gets its text on huge pages through /etc/ld.so.preload alone (no
# LD_PRELOAD), an unlisted one loads the library and it does nothing (no
# text moved, no thread, not a word even with ENORMOUSTEXT_VERBOSE=2, the
# same output; dlopen, pthread_create, sigaction, prctl reach the library's
# wrappers and behave as without it); the link /etc/ld.so.preload names is
# in /etc, and the library's directory is read-only throughout (a read-only
# /usr); status says what is on; with the off switch
# (/etc/enormoustext/off) every copy of the library does nothing, silently,
# until it is removed; a listed setuid program run by
# another user does nothing either; `disable --binary` puts
# /etc/ld.so.preload back byte for byte (none, or a file of comments
# without a final newline), and takes out only its own line when the file
# changed since.
. "$(dirname "$0")/lib.sh"

# --- the rest runs in a private mount namespace whose /etc is a copy
in_private_etc "$0"
[ -e /etc/ld.so.preload ] && cp -p /etc/ld.so.preload "$W/real.preload"
rm -f /etc/ld.so.preload
rm -rf /etc/enormoustext

lib=$("$TOOL" run --dry-run -- true | sed -n 's/^LD_PRELOAD=//p')
[ -f "$lib" ] || fail "cannot tell which library run uses ($lib)"
entry=/etc/enormoustext/preload/${lib##*/}
# The link lives in /etc (here the private copy), never beside the library
# (case 4: the library in a read-only directory, as on a read-only /usr).
[ ! -e "${lib%/*}/enormoustext" ] || note "${lib%/*}/enormoustext exists (an older version's link?): left alone"
fresh listed; L=$F
fresh other; U=$F
nothing_written() {
	[ ! -e /etc/ld.so.preload ] || fail "$1: /etc/ld.so.preload was written: $(cat /etc/ld.so.preload)"
	[ ! -e /etc/enormoustext ] || fail "$1: /etc/enormoustext was made: $(ls -A /etc/enormoustext)"
	[ ! -e "$entry" ] && [ ! -L "$entry" ] || fail "$1: the link $entry was made"
}

# A program that calls the functions the library wraps.
cat >"$W/pt.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
static void *thr(void *a) { return (char *)a + 1; }
static void h(int s) { (void)s; }
static void threads(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "Threads:", 8))
			fputs(line, stdout);
	if (f)
		fclose(f);
}
int main(void)
{
	threads();
	void *m = dlopen("libm.so.6", RTLD_NOW);
	double (*c)(double) = m ? (double (*)(double))dlsym(m, "cos") : NULL;
	printf("dlopen libm: %s, cos(0) = %g\n", m ? "ok" : dlerror(), c ? c(0) : -1.0);
	pthread_t t;
	void *r = NULL;
	int e = pthread_create(&t, NULL, thr, (void *)0x10);
	if (!e)
		pthread_join(t, &r);
	printf("pthread_create: %d, result %p\n", e, r);
	struct sigaction sa = { .sa_handler = h }, old;
	int s = sigaction(SIGPROF, &sa, NULL);
	sigaction(SIGPROF, NULL, &old);
	printf("sigaction SIGPROF: %d, handler kept %d\n", s, old.sa_handler == h);
	int p = prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	printf("prctl THP_DISABLE: %d, now %d\n", p, prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0));
	printf("dlclose: %d\n", m ? dlclose(m) : -1);
	threads();
	const char *names[] = { "dlopen", "pthread_create", "sigaction", "prctl", "dlclose" };
	for (int i = 0; i < 5; i++) {
		Dl_info di;
		void *f = dlsym(RTLD_DEFAULT, names[i]);
		printf("def %s %s\n", names[i], f && dladdr(f, &di) ? di.dli_fname : "?");
	}
	return 0;
}
C
cc_link "$W/pt" "$W/pt.c" -ldl -lpthread

# --- baselines, before anything is written
t base_u -- "$U" --print-env HOME --exit 3
cp "$OUT" "$W/base_u.out"; cp "$ERR" "$W/base_u.err"
t base_pt -- "$W/pt"
expect_rc 0 "the wrapper program without the library"
grep -v '^def ' "$OUT" >"$W/base_pt.out"
grep -q '^def sigaction .*libc' "$OUT" || fail "BASELINE: sigaction is not libc's without the library"

# --- refused before anything is written
printf '#!/bin/sh\necho hi\n' >"$W/script.sh"; chmod +x "$W/script.sh"
t notelf -- "$TOOL" enable --binary "$W/script.sh"
expect_bad 1 "a script" "script.sh: not an ELF file"
nothing_written "a script"
t missing -- "$TOOL" enable --binary "$W/nope"
expect_bad 1 "a missing program" "/nope: No such file"
nothing_written "a missing program"
t solib -- "$TOOL" enable --binary "$lib"
expect_bad 1 "a shared library" "${lib##*/}: a shared library"
nothing_written "a shared library"
if "$TT_CC" -static -O1 -o "$W/static" -x c - <<<'int main(void) { return 0; }' 2>/dev/null; then
	t static -- "$TOOL" enable --binary "$W/static"
	expect_bad 1 "a static program" "static: statically linked"
	nothing_written "a static program"
else
	note "no static C library: the static-program refusal is not checked"
fi
t badlib -- "$TOOL" enable --binary "$L" --lib "$W/script.sh"
expect_bad 1 "a library that is not one" "script.sh: not an ELF"
nothing_written "a bad --lib"
t dry -- "$TOOL" enable --binary "$L" --dry-run
expect_rc 0 "enable --binary --dry-run"
expect_out "^would write /etc/ld.so.preload:"
expect_out "^$entry\$"
nothing_written "--dry-run"

# --- case 1: no /etc/ld.so.preload before
t en -- "$TOOL" enable --binary "$L"
expect_rc 0 "enable --binary"
[ "$(cat /etc/ld.so.preload)" = "$entry" ] || fail "/etc/ld.so.preload is '$(cat /etc/ld.so.preload)', expected '$entry'"
[ "$(stat -c %a /etc/ld.so.preload)" = 644 ] || fail "/etc/ld.so.preload is mode $(stat -c %a /etc/ld.so.preload)"
[ "$(readlink "$entry")" = "$lib" ] || fail "the link $entry points to '$(readlink "$entry")'"
grep -qxF "$(readlink -f "$L")" /etc/enormoustext/binaries || fail "the list does not hold $L: $(cat /etc/enormoustext/binaries)"
[ -f /etc/enormoustext/ld.so.preload.none ] || fail "no note that there was no /etc/ld.so.preload"

# the listed program: its text moves, with the loader's list alone
start_hold listed env ENORMOUSTEXT_VERBOSE=1 -- "$L"
[ -z "$(tr '\0' '\n' </proc/"$HPID"/environ | grep '^LD_PRELOAD=')" ] || fail "LD_PRELOAD is set in the listed program"
read -r text copied huge < <(smaps_object /proc/"$HPID"/smaps "$L")
note "listed: $text bytes of text, $huge on huge pages"
[ "$huge" -ge "$H" ] || fail "the listed program's text did not move ($huge bytes huge)"
grep -qE '^enormoustext: .* on [0-9]+ MiB pages' "$W/listed.hold.err" || fail "the listed program's summary line is missing"
stop_hold listed "$HPID"

# an unlisted one: the library is loaded and does nothing at all
start_hold other env ENORMOUSTEXT_VERBOSE=2 -- "$U"
grep -qF "${lib##*/}" /proc/"$HPID"/maps || fail "the library is not loaded in the unlisted program"
read -r text copied huge < <(smaps_object /proc/"$HPID"/smaps "$U")
[ "$huge" = 0 ] || fail "the unlisted program's text moved ($huge bytes)"
thr=$(awk '/^Threads:/ { print $2 }' /proc/"$HPID"/status)
[ "$thr" = 1 ] || fail "the unlisted program has $thr threads"
[ ! -s "$W/other.hold.err" ] || fail "the library spoke in the unlisted program: $(head -2 "$W/other.hold.err")"
note "unlisted: library mapped, 0 bytes huge, $thr thread, nothing said"
stop_hold other "$HPID"
t after_u ENORMOUSTEXT_VERBOSE=2 -- "$U" --print-env HOME --exit 3
expect_rc 3 "the unlisted program's exit status"
cmp -s "$OUT" "$W/base_u.out" && cmp -s "$ERR" "$W/base_u.err" || fail "the unlisted program's output changed"
t after_pt ENORMOUSTEXT_VERBOSE=2 -- "$W/pt"
expect_rc 0 "the wrapper program with the library standing down"
expect_no_err "the library standing down"
grep -v '^def ' "$OUT" | cmp -s - "$W/base_pt.out" || fail "the wrappers changed what the calls do: $(grep -v '^def ' "$OUT" | diff "$W/base_pt.out" -)"
for f in dlopen pthread_create sigaction prctl dlclose; do
	grep -q "^def $f .*${lib##*/}\$" "$OUT" || fail "$f is not the library's wrapper in the unlisted program: $(grep "^def $f" "$OUT")"
done

# a listed setuid program run by another user: secure execution, nothing done
mkdir "$W/suid" && cp "$HOLD" "$W/suid/tt_hold" && chmod 4755 "$W/suid/tt_hold"
t en_suid -- "$TOOL" enable --binary "$W/suid/tt_hold"
expect_rc 0 "enable --binary of a setuid program"
start_hold suid env ENORMOUSTEXT_VERBOSE=1 "$TT_BIN/tt_asuser" nobody -- "$W/suid/tt_hold"
[ "$(awk '/^Uid:/ { print $2 }' /proc/"$HPID"/status)" != 0 ] || fail "the setuid test did not run as another user"
grep -qF "${lib##*/}" /proc/"$HPID"/maps || fail "the library is not loaded in the setuid program"
read -r text copied huge < <(smaps_object /proc/"$HPID"/smaps "$W/suid/tt_hold")
[ "$huge" = 0 ] || fail "the library moved text in a secure-execution process ($huge bytes)"
[ ! -s "$W/suid.hold.err" ] || fail "the library spoke in a secure-execution process: $(head -2 "$W/suid.hold.err")"
stop_hold suid "$HPID"
t dis_suid -- "$TOOL" disable --binary "$W/suid/tt_hold"
expect_rc 0; expect_out "1 program left"
[ "$(cat /etc/ld.so.preload)" = "$entry" ] || fail "disable of one of two changed /etc/ld.so.preload"

# status says what is on host-wide
t status -- "$TOOL" status --no-probe
expect_rc 0 "status"
expect_out "^  /etc/ld.so.preload names $entry: the library acts in the 1 program of /etc/enormoustext/binaries\$"
expect_out "^  off switch       off \\(/etc/enormoustext/off does not exist\\)\$"

# the off switch: while /etc/enormoustext/off exists, the library does
# nothing in any process, listed or preloaded by hand, and says nothing
: >/etc/enormoustext/off
start_hold offl env ENORMOUSTEXT_VERBOSE=2 -- "$L"
read -r text copied huge < <(smaps_object /proc/"$HPID"/smaps "$L")
[ "$huge" = 0 ] || fail "the off switch is on and the listed program's text moved ($huge bytes)"
[ "$(awk '/^Threads:/ { print $2 }' /proc/"$HPID"/status)" = 1 ] || fail "the off switch is on and the library started a thread"
[ ! -s "$W/offl.hold.err" ] || fail "the off switch is on and the library spoke: $(head -2 "$W/offl.hold.err")"
stop_hold offl "$HPID"
t offp ENORMOUSTEXT_VERBOSE=2 ENORMOUSTEXT_DEFER=0 LD_PRELOAD="$lib" -- "$U" --exit 0
expect_rc 0 "a preloaded program with the off switch on"
expect_no_err "the off switch on, ENORMOUSTEXT_VERBOSE=2"
t status_off -- "$TOOL" status --no-probe --json
expect_rc 0
expect_out '"off_switch": true'
rm /etc/enormoustext/off
t offp2 ENORMOUSTEXT_VERBOSE=1 ENORMOUSTEXT_DEFER=0 LD_PRELOAD="$lib" -- "$U" --exit 0
grep -qE '^enormoustext: .* on [0-9]+ MiB pages' "$ERR" || fail "the off switch removed, a preloaded program did not act: $(head -2 "$ERR")"
note "off switch: the listed program 0 bytes huge, 1 thread, silent; a preloaded one silent; acting again once removed"

t dis_dry -- "$TOOL" disable --binary "$L" --dry-run
expect_rc 0; expect_out "would remove /etc/ld.so.preload"
[ -e /etc/ld.so.preload ] || fail "disable --dry-run removed /etc/ld.so.preload"
t dis -- "$TOOL" disable --binary "$L"
expect_rc 0 "disable --binary"
nothing_written "after disable (none before)"
t dis_again -- "$TOOL" disable --binary "$L"
expect_bad 1 "disable when nothing is enabled" "binaries does not exist"

# --- case 2: a file there before: blank lines and one comment, without a
# final newline (one '#' only: glibc 2.36 blanks only the first comment it
# finds reliably, later ones become words it tries to load)
printf ' \n# the site list: kept as it is\n\n\t' >/etc/ld.so.preload
chmod 600 /etc/ld.so.preload
cp -p /etc/ld.so.preload "$W/orig"
t en2 -- "$TOOL" enable --binary "$L"
expect_rc 0
cmp -s /etc/enormoustext/ld.so.preload.orig "$W/orig" || fail "the backup is not the file as it was"
{ cat "$W/orig"; printf '\n%s\n' "$entry"; } | cmp -s - /etc/ld.so.preload || fail "enable did not keep what was there: $(cat -A /etc/ld.so.preload)"
t en2u -- "$TOOL" enable --binary "$U"
expect_rc 0
[ "$(grep -c . /etc/enormoustext/binaries)" = 4 ] || fail "the list does not hold two programs: $(cat /etc/enormoustext/binaries)"
[ "$(grep -cxF "$entry" /etc/ld.so.preload)" = 1 ] || fail "a second enable added the entry again"
t listed2 ENORMOUSTEXT_VERBOSE=1 -- "$U" --exit 0
grep -qE '^enormoustext: .* on [0-9]+ MiB pages' "$ERR" || fail "the second listed program did not act"
t dis2a -- "$TOOL" disable --binary "$L"
expect_rc 0
t dis2b -- "$TOOL" disable --binary "$U"
expect_rc 0
cmp -s /etc/ld.so.preload "$W/orig" || fail "disable did not put /etc/ld.so.preload back byte for byte: $(cat -A /etc/ld.so.preload)"
[ "$(stat -c %a /etc/ld.so.preload)" = 600 ] || fail "the restored file's mode is $(stat -c %a /etc/ld.so.preload), was 600"
[ ! -e /etc/enormoustext ] && [ ! -L "$entry" ] || fail "disable left its files: $(ls -A /etc/enormoustext 2>&1) $entry"

# --- case 3: the file changed since enable: only our line goes
t en3 -- "$TOOL" enable --binary "$L"
expect_rc 0
printf '  \n' >>/etc/ld.so.preload
t dis3 -- "$TOOL" disable --binary "$L"
expect_rc 0; expect_out "changed since enable"
{ cat "$W/orig"; printf '\n  \n'; } | cmp -s - /etc/ld.so.preload ||
	fail "only the entry should have gone: $(cat -A /etc/ld.so.preload)"
grep -qF "$entry" /etc/ld.so.preload && fail "the entry is still there"

# --- case 4: the library in a read-only directory (a read-only /usr): the
# link goes into /etc, the program acts, disable leaves no trace
ro=$W/ro-lib
mkdir -p "$ro" && cp "$lib" "$ro/" && mount --bind "$ro" "$ro" && mount -o remount,bind,ro "$ro" ||
	fail "cannot make $ro a read-only copy of the library's directory"
touch "$ro/.probe" 2>/dev/null && fail "$ro is still writable"
rm -f /etc/ld.so.preload
t en4 -- "$TOOL" enable --binary "$L" --lib "$ro/${lib##*/}"
expect_rc 0 "enable --binary with the library in a read-only directory"
[ "$(readlink "$entry")" = "$ro/${lib##*/}" ] || fail "the link $entry points to '$(readlink "$entry")', not the read-only library"
t listed4 ENORMOUSTEXT_VERBOSE=1 -- "$L" --exit 0
grep -qE '^enormoustext: .* on [0-9]+ MiB pages' "$ERR" || fail "the listed program did not act with the library in a read-only directory: $(head -3 "$ERR")"
t dis4 -- "$TOOL" disable --binary "$L"
expect_rc 0
[ ! -e /etc/ld.so.preload ] && [ ! -e /etc/enormoustext ] || fail "disable left $(ls -A /etc/enormoustext 2>&1) $(cat /etc/ld.so.preload 2>&1)"
umount "$ro"
pass
