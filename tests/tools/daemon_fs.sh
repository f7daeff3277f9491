#!/bin/bash
# tool_daemon_fs — files on FUSE filesystems are primed only when asked
# (--fuse; network filesystems likewise with --network-fs: no server here
# to show it with).  A static program linked with enormous.ld, in a
# squashfs image mounted with squashfuse (a FUSE filesystem), run from the
# mount:
#   - without --fuse: the mount is not watched (the daemon's --verbose
#     lines name each filesystem it watches: not this one; counts would
#     not do, other tests mount and unmount beside this one), the running
#     program is found by
#     the scan of /proc, and its file is "left alone" (the daemon's log and
#     daemon.json's state and why, which names --fuse): never primed;
#   - with --fuse: the mount is watched (named in its lines), the program,
#     run for a few milliseconds (too short for the scan), is learnt from
#     its exec and the daemon primes it (a "primed" or
#     "gave up" line for it, whatever huge folios FUSE gives);
#   - either way the program's bytes read back equal the image's source.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "the daemon needs root (fanotify on the filesystem)"
command -v squashfuse >/dev/null && command -v mksquashfs >/dev/null ||
	skip "no squashfuse and mksquashfs here (Debian: squashfuse, squashfs-tools) to make a FUSE filesystem with"
[ -c /dev/fuse ] || skip "no /dev/fuse here"

mkdir -p "$W/img" "$W/mnt" "$W/s1" "$W/s2"
bigstatic "$W/img/app"
mksquashfs "$W/img" "$W/app.sqfs" -quiet -noappend >"$W/mksq.log" 2>&1 || fail "mksquashfs failed: $(tail -2 "$W/mksq.log")"
squashfuse "$W/app.sqfs" "$W/mnt" 2>"$W/sqf.log" || fail "squashfuse could not mount the image: $(cat "$W/sqf.log")"
at_exit "umount '$W/mnt' 2>/dev/null || fusermount -u '$W/mnt' 2>/dev/null || umount -l '$W/mnt'"
type=$(awk -v m="$W/mnt" '$5 == m { for (i = 7; i <= NF; i++) if ($i == "-") { print $(i + 1); exit } }' /proc/self/mountinfo)
note "the image mounted at $W/mnt: type $type"
case $type in fuse | fuse.* | fuseblk) ;; *) fail "squashfuse's mount is of type '$type', not FUSE" ;; esac
APP=$W/mnt/app

DP=
start() {  # STATE [OPTIONS...]: the daemon, --only the mount
	local st=$1
	shift
	"$TOOL" daemon --only "$W/mnt" --state "$st" --delay 100ms --verbose "$@" >/dev/null 2>"$st.err" </dev/null &
	DP=$!
	PIDS+=("$DP")
	wait_line "$st.err" 'watching [0-9]+ filesystems?' 10 "$DP" || fail "the daemon did not start: $(cat "$st.err")"
}
watched() {  # STATE: the daemon started with STATE says it watches the mount
	grep -qxF "enormoustext daemon: watching $W/mnt ($type)" "$1.err"
}
stop() {
	kill -TERM "$DP"
	wait_until 10 bash -c "! kill -0 $DP 2>/dev/null" || fail "the daemon did not end within 10 s of SIGTERM"
	local rc=0
	wait "$DP" || rc=$?
	[ "$rc" = 0 ] || fail "the daemon ended with status $rc"
}

# ---- without --fuse: left alone
start "$W/s1"
watched "$W/s1" && fail "without --fuse the daemon watches the FUSE mount: $(grep -F "$W/mnt" "$W/s1.err")"
"$APP" wait >"$W/a1.out" 2>&1 </dev/null &
AP=$!
PIDS+=("$AP")
wait_line "$W/a1.out" '^ready ' 10 "$AP" || fail "the program on the FUSE mount did not start: $(cat "$W/a1.out")"
# its exec is not seen (the mount is not watched): the scan of /proc, every 5 s, finds it
wait_line "$W/s1.err" "$APP: left alone" 15 "$DP" ||
	fail "without --fuse, the program's file was not found left alone: $(tail -3 "$W/s1.err")"
kill "$AP"; wait "$AP" 2>/dev/null
sleep 1.2   # its state is written within a second
stop
grep -qE "$APP: (primed|gave up|nothing to prime)" "$W/s1.err" && fail "without --fuse, the daemon primed the file: $(grep "$APP" "$W/s1.err")"
json "$W/s1/daemon.json"
i=$(jindex "$W/s1/daemon.json.flat" .files path "$APP") || fail "daemon.json has no entry for the program's file"
st=$(jneed "$W/s1/daemon.json.flat" ".files[$i].state")
why=$(jneed "$W/s1/daemon.json.flat" ".files[$i].why")
note "without --fuse: watching $(grep -c '^enormoustext daemon: watching /' "$W/s1.err") filesystems, not the mount; the file: $st ($why)"
[ "$st" = "left alone" ] || fail "daemon.json says '$st' for the file, not 'left alone'"
case $why in *--fuse*) ;; *) fail "daemon.json's why does not name --fuse: $why" ;; esac

# ---- with --fuse: watched, learnt from its exec, primed
start "$W/s2" --fuse
watched "$W/s2" || fail "with --fuse the daemon does not watch the FUSE mount: $(grep 'watching' "$W/s2.err")"
note "with --fuse: watching $(grep -c '^enormoustext daemon: watching /' "$W/s2.err") filesystems, the mount among them"
"$APP" >"$W/a2.out" 2>&1 || fail "the program on the FUSE mount failed: $(cat "$W/a2.out")"
wait_line "$W/s2.err" "$APP: (primed|gave up)" 15 "$DP" ||
	fail "with --fuse, the program's file was not primed: $(tail -3 "$W/s2.err")"
note "with --fuse: $(grep "$APP: " "$W/s2.err" | tail -1 | sed 's/^enormoustext daemon: //')"
# a run of a few milliseconds: the scan of /proc (every 5 s) cannot have
# seen it, so it was learnt from its exec (the mount watched)
grep -q "learnt $APP" "$W/s2.err" || fail "with --fuse, the daemon did not learn the file"
stop
cmp -s "$APP" "$W/img/app" || fail "the program's bytes read from the FUSE mount differ from the image's source"
pass
