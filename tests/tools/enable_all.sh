#!/bin/bash
# tool_enable_all — `enable --all` and `disable --all` end to end, in a
# private mount namespace whose /etc is a copy (the real /etc is never
# written: its ld.so.preload's state is taken before and compared after).
# Inside, with no --root: bad settings refused before anything is
# written; with --all on (the settings restricted to this test's programs
# by --programs, so that the commands the test runs are not among them),
# a program started with no environment at all has its text on huge pages
# within seconds and says the summary line the settings ask for
# (ENORMOUSTEXT_VERBOSE=1 from the host's file); its environment wins
# (ENORMOUSTEXT_VERBOSE=0: silent, ENORMOUSTEXT=0: nothing moved); an
# excluded program and one outside --programs load the library and it
# does nothing, silently; a setuid program run by another user does
# nothing; a program under a seccomp filter that kills on readlink (the
# host-wide check's call) lives, the library standing down; a bad value in the file draws no message from any process;
# a file, a list or a directory writable by others is not trusted (the
# library stands down, status says why), nor an off switch in such a
# directory; --binary acts beside --all whatever its globs say; status and
# its JSON, and enable --list, say what is on; `disable --all` puts
# /etc/ld.so.preload back byte for byte (blanks without a final newline,
# mode 0640).  All of that with --preload; `enable --all` alone is the
# daemon: no line in /etc/ld.so.preload, the daemon's unit written (none
# is installed here) and enabled with `systemctl --root` (systemd does not
# run here), the output saying how to start it, status saying it is wanted
# and not running, a second run writing nothing; the daemon started by
# hand as the output says, status sees it run; `disable --all` stops it and
# removes the unit, its enablement and the settings.
. "$(dirname "$0")/lib.sh"
# the held programs run 2.5 s before they wait: the deferral (by default on
# the program's own thread) counts the main thread's CPU time
HOLD_SPIN=2500

# --- the rest runs in a private mount namespace whose /etc is a copy
in_private_etc "$0"
rm -rf /etc/enormoustext
# an ld.so.preload of the host's own: blank lines and blanks, no final
# newline (the loader reads no comments: every word is a library)
printf '\n  \n\t ' >/etc/ld.so.preload
chmod 0640 /etc/ld.so.preload
orig_sum=$(sha256sum </etc/ld.so.preload)

lib=$("$TOOL" run --dry-run -- true | sed -n 's/^LD_PRELOAD=//p')
[ -f "$lib" ] || fail "cannot tell which library run uses ($lib)"
entry=/etc/enormoustext/preload/${lib##*/}
mkdir -p "$W/on" "$W/excl" "$W/out"
cp "$HOLD" "$W/on/tt_hold" && cp "$HOLD" "$W/excl/tt_hold" && cp "$HOLD" "$W/out/tt_hold" || fail "cannot copy $HOLD"
ON=$W/on/tt_hold EX=$W/excl/tt_hold OUTP=$W/out/tt_hold
nothing_written() {
	[ "$(sha256sum </etc/ld.so.preload)" = "$orig_sum" ] || fail "$1: /etc/ld.so.preload was written: $(cat /etc/ld.so.preload)"
	[ ! -e /etc/enormoustext ] || fail "$1: /etc/enormoustext was made: $(ls -A /etc/enormoustext)"
}
# huge_of PID PATH: bytes of PATH's text on huge pages in PID
huge_of() { smaps_object /proc/"$1"/smaps "$2" | awk '{ print $3 }'; }
# wait_huge PID PATH: up to 10 s for its text to be huge (the default
# deferral moves it after a second, wait_until of tests/lib); the bytes,
# and the seconds waited (to a tenth)
huge_reached() { [ "$(huge_of "$1" "$2")" -ge "$H" ]; }
wait_huge() {
	local t0
	t0=$(et_now_us)
	wait_until 10 huge_reached "$1" "$2" || true
	echo "$(huge_of "$1" "$2") $(( ($(et_now_us) - t0) / 100000 ))"
}

# --- refused before anything is written
t bad_report -- "$TOOL" enable --all --env REPORT=/tmp/r.json
expect_bad 2 "a per-process file as a host setting" "ENORMOUSTEXT_REPORT: not a setting for every program"
nothing_written "--env REPORT"
t bad_mode -- "$TOOL" enable --all --mode 4
expect_rc 2 "--mode 4"
nothing_written "--mode 4"
t bad_pad -- "$TOOL" enable --all --pad-threshold lots
expect_bad 2 "a bad --pad-threshold" "ENORMOUSTEXT_PAD_THRESHOLD=lots' is not valid"
nothing_written "--pad-threshold lots"
t mode_alone -- "$TOOL" enable --binary "$ON" --mode 1
expect_bad 2 "--mode without --all" "--mode is a setting of --all"
nothing_written "--mode without --all"
t both -- "$TOOL" enable --all --binary "$ON"
expect_bad 2 "--all and --binary" "give one of UNIT, --binary PATH and --all"
t empty_glob -- "$TOOL" enable --all --programs ''
expect_bad 2 "an empty --programs" "give colon-separated globs"
# settings that would make every process with text to move speak (issue
# #39 point 5: each was accepted, and each such process said a line)
t speak_rate -- "$TOOL" enable --all --env DEFER=0 --env DEFER_RATE=64
expect_bad 2 "DEFER_RATE with DEFER=0" "not a setting for every program: ENORMOUSTEXT_DEFER_RATE with ENORMOUSTEXT_DEFER=0"
t speak_hot -- "$TOOL" enable --all --env HOT=auto --env DEFER=0
expect_bad 2 "HOT=auto with DEFER=0" "not a setting for every program: ENORMOUSTEXT_HOT=auto with ENORMOUSTEXT_DEFER=0"
t speak_profile -- "$TOOL" enable --all --env PROFILE="$W/missing.profile"
expect_bad 2 "a PROFILE that is not there" "not a setting for every program: ENORMOUSTEXT_PROFILE=$W/missing.profile: "
head -c 300 /dev/urandom >"$W/binary.profile"
t speak_profile2 -- "$TOOL" enable --all --env PROFILE="$W/binary.profile"
expect_bad 2 "a PROFILE that is no profile" "not a setting for every program: ENORMOUSTEXT_PROFILE=$W/binary.profile: "
t speak_perfmap -- "$TOOL" enable --all --env PERFMAP=1
expect_bad 2 "PERFMAP host-wide" "not a setting for every program: ENORMOUSTEXT_PERFMAP on for every program"
nothing_written "refusals"
t dry -- "$TOOL" enable --all --dry-run --programs "$W/on/*"
expect_rc 0 "enable --all --dry-run"
expect_out "^would write /etc/enormoustext/enormoustext.conf:"
expect_out "^programs=$W/on/\\*\$"
nothing_written "--dry-run"

# --- on: only this test's programs (--programs), one of them excluded
t en -- "$TOOL" enable --all --preload --programs "$W/on/*:$W/excl/*" --exclude-programs "$W/excl/*" --env VERBOSE=1 --env COPY_MIN=0 --json
expect_rc 0 "enable --all --preload"
json "$OUT"; cp "$OUT.flat" "$W/en.flat"
[ "$(jget "$W/en.flat" .all)" = true ] || fail "enable --all --json: all is not true"
[ "$(jget "$W/en.flat" .preload)" = true ] || fail "enable --all --preload --json: preload is not true"
[ "$(jget "$W/en.flat" .settings.ENORMOUSTEXT_VERBOSE)" = 1 ] || fail "enable --all --json: no ENORMOUSTEXT_VERBOSE in settings"
jget "$W/en.flat" .note | grep -q "verify_asan_link_order=0" || fail "enable --all does not say what ASan programs need"
grep -qx "$entry" /etc/ld.so.preload || fail "/etc/ld.so.preload does not name $entry: $(cat /etc/ld.so.preload)"
grep -qx '\*' /etc/enormoustext/binaries || fail "the list has no '*' line: $(cat /etc/enormoustext/binaries)"
grep -qx "ENORMOUSTEXT_VERBOSE=1" /etc/enormoustext/enormoustext.conf || fail "the settings: $(cat /etc/enormoustext/enormoustext.conf)"
[ "$(stat -c %a:%u /etc/enormoustext/enormoustext.conf)" = 644:0 ] || fail "the settings file is $(stat -c %a:%u /etc/enormoustext/enormoustext.conf)"

# a program with no environment at all (running: the deferral counts the
# program's CPU time): huge within seconds, and the
# settings' summary line
start_hold on env -i -- "$ON"
read -r huge waited < <(wait_huge "$HPID" "$ON")
note "no environment: $huge bytes huge after ${waited}x0.1 s waited"
[ "$huge" -ge "$H" ] || fail "a program with no environment did not get its text huge in 10 s ($huge bytes)"
[ -z "$(tr '\0' '\n' </proc/"$HPID"/environ)" ] || fail "the program has an environment"
stop_hold on "$HPID"
grep -qE '^enormoustext: ' "$W/on.hold.err" || fail "no summary line: the settings' ENORMOUSTEXT_VERBOSE=1 was not used ($(head -2 "$W/on.hold.err"))"
# its environment wins
start_hold quiet env -i ENORMOUSTEXT_VERBOSE=0 -- "$ON"
read -r huge waited < <(wait_huge "$HPID" "$ON")
[ "$huge" -ge "$H" ] || fail "with ENORMOUSTEXT_VERBOSE=0 the text did not move ($huge bytes)"
stop_hold quiet "$HPID"
[ ! -s "$W/quiet.hold.err" ] || fail "ENORMOUSTEXT_VERBOSE=0 in the environment did not win: $(head -2 "$W/quiet.hold.err")"
start_hold offenv env -i ENORMOUSTEXT=0 -- "$ON"
sleep 1.5
[ "$(huge_of "$HPID" "$ON")" = 0 ] || fail "ENORMOUSTEXT=0 in the environment did not turn it off"
stop_hold offenv "$HPID"
# excluded, and outside --programs: loaded, standing down, silent
for p in "$EX" "$OUTP"; do
	start_hold down env -i ENORMOUSTEXT_VERBOSE=2 -- "$p"
	grep -qF "${lib##*/}" /proc/"$HPID"/maps || fail "the library is not loaded in $p"
	sleep 1.5
	[ "$(huge_of "$HPID" "$p")" = 0 ] || fail "$p's text moved"
	thr=$(awk '/^Threads:/ { print $2 }' /proc/"$HPID"/status)
	[ "$thr" = 1 ] || fail "$p has $thr threads"
	stop_hold down "$HPID"
	[ ! -s "$W/down.hold.err" ] || fail "the library spoke in $p: $(head -2 "$W/down.hold.err")"
done
note "excluded and unnamed programs: library mapped, 0 bytes huge, 1 thread, nothing said"
# a setuid program (one of --programs) run by another user: nothing
mkdir "$W/on/suid" && cp "$HOLD" "$W/on/suid/tt_hold" && chmod 4755 "$W/on/suid/tt_hold"
start_hold suid "$TT_BIN/tt_asuser" nobody -- "$W/on/suid/tt_hold"
[ "$(awk '/^Uid:/ { print $2 }' /proc/"$HPID"/status)" != 0 ] || fail "the setuid test did not run as another user"
sleep 1.5
[ "$(huge_of "$HPID" "$W/on/suid/tt_hold")" = 0 ] || fail "the library moved text in a secure-execution process"
stop_hold suid "$HPID"
[ ! -s "$W/suid.hold.err" ] || fail "the library spoke in a secure-execution process: $(head -2 "$W/suid.hold.err")"

# a seccomp filter that kills on readlink (the host-wide check's call), put
# in before exec as systemd's SystemCallFilter= does: the program lives as
# it would without the library (its text stays small, nothing said)
cat >"$W/nolink.c" <<'EOF'
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#endif
/* nolink COMMAND...: run COMMAND under a filter killing readlink(at) */
int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef __NR_readlink
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_readlink, 2, 0),
#else
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_readlinkat, 2, 0),
#endif
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_readlinkat, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = sizeof f / sizeof f[0], .filter = f };
	if (argc < 2 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
		perror("nolink");
		return 125;
	}
	execvp(argv[1], argv + 1);
	perror("nolink: exec");
	return 127;
}
EOF
"$TT_CC" -O1 -o "$W/nolink" "$W/nolink.c" 2>"$W/cc.log" || fail "cannot build nolink: $(head -3 "$W/cc.log")"
sysrc=$((128 + $(kill -l SYS)))
t nolink_shown -- "$W/nolink" readlink /proc/self/exe
expect_rc "$sysrc" "the filter on readlink itself (it must kill)"
t nolink -- env -i "$W/nolink" "$ON" --exit 0
expect_rc 0 "a program under a filter that kills on readlink, --all on"
expect_no_err "a program under a seccomp filter, --all on"
t nolink_verbose -- env -i ENORMOUSTEXT_VERBOSE=2 "$W/nolink" "$ON" --exit 0
expect_rc 0 "a program under a filter that kills on readlink, a variable in its environment"
note "under a filter that kills on readlink: the filter kills readlink (rc $sysrc), the library's program lives (rc 0)"

# status and enable --list
t status -- "$TOOL" status --no-probe
expect_rc 0
expect_out "acts in every program \\(enable --all\\)"
expect_out "settings +programs=$W/on/\\*:$W/excl/\\*, exclude-programs=$W/excl/\\*, ENORMOUSTEXT_VERBOSE=1, ENORMOUSTEXT_COPY_MIN=0"
t status_json -- "$TOOL" status --no-probe --json
json "$OUT"; cp "$OUT.flat" "$W/st.flat"
[ "$(jget "$W/st.flat" .hostwide.all)" = true ] || fail "status --json: hostwide.all is not true"
jget "$W/st.flat" .hostwide.settings | grep -q "ENORMOUSTEXT_VERBOSE=1" || fail "status --json: no settings"
t list -- "$TOOL" enable --list
expect_rc 0
expect_out "^  \\*  every program \\(enable --all\\)"
expect_out "^  exclude-programs=$W/excl/\\*"

# a bad value in the file: no process says anything of it; status does
sed -i 's/^ENORMOUSTEXT_VERBOSE=1$/ENORMOUSTEXT_VERBOSE=0\nENORMOUSTEXT_MODE=9\nnot a setting/' /etc/enormoustext/enormoustext.conf
t badval -- env -i "$ON" --exit 0
expect_rc 0
expect_no_err "a bad value in the host's settings"
t status_bad -- "$TOOL" status --no-probe
expect_out "line [0-9]+ is no setting"

# the settings enable --all refuses, written by hand: no process says a
# word of them (nor leaves a perf map behind), status does
sed -i '/^ENORMOUSTEXT_VERBOSE=0$/d; s/^ENORMOUSTEXT_MODE=9$/ENORMOUSTEXT_PROFILE=\/nonexistent\/p.profile\nENORMOUSTEXT_PERFMAP=1\nENORMOUSTEXT_DEFER_RATE=64\nENORMOUSTEXT_HOT=auto/; s/^ENORMOUSTEXT_COPY_MIN=0$/ENORMOUSTEXT_DEFER=0/' /etc/enormoustext/enormoustext.conf
ls /tmp/perf-*.map >"$W/maps.before" 2>/dev/null
t speaking -- env -i "$ON" --exit 0
expect_rc 0
expect_no_err "settings that enable --all refuses, written by hand (PROFILE missing, PERFMAP, DEFER=0 with DEFER_RATE and HOT=auto)"
ls /tmp/perf-*.map 2>/dev/null | comm -13 "$W/maps.before" - | grep . && fail "a host-wide PERFMAP left a perf map behind"
t status_speak -- "$TOOL" status --no-probe
expect_out "warning +/etc/enormoustext/enormoustext.conf: ENORMOUSTEXT_"
said=$(grep -o 'warning .*' "$OUT" | head -c 160)
t status_speak_json -- "$TOOL" status --no-probe --json
json "$OUT"
jget "$OUT.flat" .hostwide.settings_speak | grep -q "ENORMOUSTEXT_" || fail "status --json: no settings_speak"
note "settings that speak, by hand: the program silent; status: $said"
sed -i '/^ENORMOUSTEXT_\(PROFILE\|PERFMAP\|DEFER_RATE\|HOT\)=/d; s/^ENORMOUSTEXT_DEFER=0$/ENORMOUSTEXT_COPY_MIN=0\nENORMOUSTEXT_VERBOSE=0/' /etc/enormoustext/enormoustext.conf

# trust: a settings file, a list, a directory others can write
chmod 0666 /etc/enormoustext/enormoustext.conf
start_hold untrusted env -i -- "$ON"
sleep 1.5
[ "$(huge_of "$HPID" "$ON")" = 0 ] || fail "the library used a settings file others can write"
stop_hold untrusted "$HPID"
t status_conf -- "$TOOL" status --no-probe
expect_out "IGNORED +/etc/enormoustext/enormoustext.conf is writable by group or others"
chmod 0644 /etc/enormoustext/enormoustext.conf
chmod 0777 /etc/enormoustext
start_hold untrusted2 env -i -- "$ON"
sleep 1.5
[ "$(huge_of "$HPID" "$ON")" = 0 ] || fail "the library used a list in a directory others can write"
stop_hold untrusted2 "$HPID"
# ... nor an off switch there (a copy loaded by LD_PRELOAD still acts)
: >/etc/enormoustext/off
start_hold offignored env -i LD_PRELOAD="$lib" ENORMOUSTEXT_DEFER=0 -- "$OUTP"
[ "$(huge_of "$HPID" "$OUTP")" -ge "$H" ] || fail "an off switch in a directory others can write was obeyed"
stop_hold offignored "$HPID"
t status_dir -- "$TOOL" status --no-probe
expect_out "off switch +/etc/enormoustext/off exists but is ignored"
expect_out "IGNORED +/etc/enormoustext is writable by group or others"
chmod 0755 /etc/enormoustext
start_hold offobeyed env -i LD_PRELOAD="$lib" ENORMOUSTEXT_DEFER=0 -- "$OUTP"
[ "$(huge_of "$HPID" "$OUTP")" = 0 ] || fail "the off switch in root's directory was not obeyed"
stop_hold offobeyed "$HPID"
rm /etc/enormoustext/off

# --binary beside --all: acts whatever the globs say
t enb -- "$TOOL" enable --binary "$OUTP"
expect_rc 0 "enable --binary beside --all"
start_hold listed env -i -- "$OUTP"
read -r huge waited < <(wait_huge "$HPID" "$OUTP")
[ "$huge" -ge "$H" ] || fail "a --binary program outside --all's globs did not act ($huge bytes)"
stop_hold listed "$HPID"

# --- off: --all first (the --binary program stays), then the last one
t dis -- "$TOOL" disable --all
expect_rc 0 "disable --all"
expect_out "removed /etc/enormoustext/enormoustext.conf"
[ ! -e /etc/enormoustext/enormoustext.conf ] || fail "the settings file is still there"
grep -qx '\*' /etc/enormoustext/binaries && fail "the '*' line is still in the list"
grep -qx "$entry" /etc/ld.so.preload || fail "disable --all took the entry the --binary program needs"
t dis_again -- "$TOOL" disable --all
expect_bad 1 "disable --all twice" "--all: not enabled"
t disb -- "$TOOL" disable --binary "$OUTP"
expect_rc 0
[ "$(sha256sum </etc/ld.so.preload)" = "$orig_sum" ] || fail "/etc/ld.so.preload is not put back byte for byte: $(cat /etc/ld.so.preload)"
[ "$(stat -c %a /etc/ld.so.preload)" = 640 ] || fail "/etc/ld.so.preload's mode is $(stat -c %a /etc/ld.so.preload), was 640"
[ ! -e /etc/enormoustext ] || fail "/etc/enormoustext is left: $(ls -A /etc/enormoustext)"

# --all --preload alone, then disable --all: back byte for byte too
t en2 -- "$TOOL" enable --all --preload --programs "$W/on/*"
expect_rc 0
t dis2 -- "$TOOL" disable --all
expect_rc 0
nothing_written "enable --all --preload then disable --all"
[ ! -e /etc/systemd/system/enormoustext.service ] || fail "disable --all left the daemon's unit"

# --- --all alone: the daemon, no code in any process.  Its state
# (/var/lib/enormoustext) in this namespace only.
mount -t tmpfs -o mode=0755 tmpfs /var/lib || fail "cannot mount a tmpfs over /var/lib in this namespace"
unit=/etc/systemd/system/enormoustext.service
t den -- "$TOOL" enable --all
expect_rc 0 "enable --all (the daemon)"
expect_out "^wrote $unit \\(no unit of the daemon was installed\\)"
expect_out "start the daemon now with"
[ "$(sha256sum </etc/ld.so.preload)" = "$orig_sum" ] || fail "enable --all (no --preload) wrote /etc/ld.so.preload: $(cat /etc/ld.so.preload)"
[ ! -e /etc/enormoustext/binaries ] || fail "enable --all (no --preload) wrote the list: $(cat /etc/enormoustext/binaries)"
[ -f /etc/enormoustext/enormoustext.conf ] || fail "enable --all wrote no settings"
grep -qx "ExecStart=$(readlink -f "$TOOL") daemon" "$unit" || fail "the unit written does not run this command: $(grep ExecStart "$unit")"
if command -v systemctl >/dev/null; then
	[ -L /etc/systemd/system/multi-user.target.wants/enormoustext.service ] ||
		fail "systemctl --root enable did not enable the unit: $(ls /etc/systemd/system/multi-user.target.wants 2>&1)"
fi
t dstatus -- "$TOOL" status --no-probe
expect_out "daemon +NOT RUNNING, though enable --all wants it"
expect_out "/etc/ld.so.preload does not load the library"
t dagain -- "$TOOL" enable --all --json
expect_rc 0 "enable --all a second time"
json "$OUT"
grep -q '"action": "write"' "$OUT" && fail "enable --all a second time wrote a file: $(grep '"path"' "$OUT")"
[ "$(jget "$OUT.flat" .preload)" = false ] || fail "enable --all --json: preload is not false"
# started by hand, as the output says (only this test's programs learnt)
"$TOOL" daemon --only "$W/on" >"$W/daemon.out" 2>&1 &
dpid=$!
at_exit "kill $dpid 2>/dev/null"
daemon_up() { [ -s /var/lib/enormoustext/daemon.json ]; }
wait_until 10 daemon_up || fail "the daemon wrote no state in 10 s: $(head -3 "$W/daemon.out")"
t dstatus2 -- "$TOOL" status --no-probe --json
json "$OUT"
[ "$(jget "$OUT.flat" .hostwide.daemon.running)" = true ] || fail "status --json: the daemon is not seen running"
[ "$(jget "$OUT.flat" .hostwide.daemon.wanted)" = true ] || fail "status --json: hostwide.daemon.wanted is not true"
t ddis -- "$TOOL" disable --all
expect_rc 0 "disable --all (the daemon)"
expect_out "stopped the daemon \\(pid $dpid\\)"
gone() { ! kill -0 "$dpid" 2>/dev/null; }
wait_until 10 gone || fail "the daemon (pid $dpid) still runs 10 s after disable --all"
[ ! -e "$unit" ] || fail "disable --all left the unit it wrote"
[ ! -e /etc/systemd/system/multi-user.target.wants/enormoustext.service ] || fail "disable --all left the unit enabled"
nothing_written "enable --all then disable --all"
note "enable --all alone: /etc/ld.so.preload untouched, unit written and enabled, the daemon stopped by disable --all"
pass
