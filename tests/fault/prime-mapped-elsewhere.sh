#!/bin/bash
# fault.prime-mapped-elsewhere — issue #39 point 6: priming never drops
# pages of a window another process maps part of.
#
# bigtext and libbigtext.so linked with 2 MiB-aligned segments (flags-bfd:
# every window congruent), copied, written out (clean) and read whole into
# the page cache, small.  A holder maps both files and touches the first
# half of every 2 MiB of them, and holds.  The subject, bigtext with the
# library preloaded (copies at start-up, ENORMOUSTEXT_PRIME=auto), copies
# its 8 windows and would prime them: POSIX_FADV_DONTNEED of a window drops
# the half the holder does not map, and the read back cannot make a 2 MiB
# folio while the holder maps the other half, so the dropped half is read
# from disk again, small, for nothing (and the holder takes a major fault
# for each page of it it touches meanwhile).  Checked first, no window is
# dropped: the subject reads 0 bytes from the disk (/proc/PID/io
# read_bytes; 8 MiB before the check), says why at ENORMOUSTEXT_VERBOSE=3,
# keeps its 8 windows as copies; the files stay in the cache (less than
# the 1 MiB a dropped window would take gone: a stray page the kernel
# reclaims on a loaded machine aside).  Then,
# the holder gone, the same subject primes all 8 windows (zero-copy), so
# the check blocks only what it must.
. "$(dirname "$0")/lib.sh"
command -v fincore >/dev/null || skip "fincore (util-linux) is not installed: the page cache of the files cannot be read"
[ -d "$IT_BIN/flags-bfd" ] || fail "$IT_BIN/flags-bfd is missing: build the tests first"
fresh "$IT_BIN/flags-bfd/bigtext" "$IT_BIN/flags-bfd/libbigtext.so"
cp -P "$(dirname "$PRE")"/libenormoustext.so* "$D/" 2>/dev/null
sync "$D/bigtext" "$D/libbigtext.so" "$D"/libenormoustext.so*
cat "$D/bigtext" "$D/libbigtext.so" >/dev/null
cached() { fincore --bytes --noheadings --output RES "$D/bigtext" "$D/libbigtext.so" | awk '{ s += $1 } END { print s + 0 }'; }
c0=$(cached)

cat >"$WORK/hold.py" <<'PY'
import mmap, os, sys, time
H = 2 << 20
maps = []
for path in sys.argv[1:]:
    with open(path, 'rb') as f:
        m = mmap.mmap(f.fileno(), os.fstat(f.fileno()).st_size, prot=mmap.PROT_READ)
    for off in range(0, len(m), 4096):
        if off % H < H // 2:
            m[off]
    maps.append(m)
print('ready', flush=True)
time.sleep(60)
PY
python3 "$WORK/hold.py" "$D/bigtext" "$D/libbigtext.so" >"$WORK/hold.out" &
HP=$!
at_exit "kill $HP 2>/dev/null"
wait_line "$WORK/hold.out" 'ready' 10
grep -q ready "$WORK/hold.out" || fail "the holder did not map the files"

# subject S: its read_bytes once its start-up pass (copies, then the prime
# or not) is done, which the summary line says
subject() {   # NAME: runs bigtext --hold 3, sets RB (read_bytes after its pass), waits for it
	(cd "$D" && exec env ENORMOUSTEXT_PRIME=auto ENORMOUSTEXT_VERBOSE=3 LD_PRELOAD="$PRE" ./bigtext --expect-huge 100 --hold 3 \
		>"$WORK/$1.out" 2>"$WORK/$1.err") &
	local sp=$!
	wait_line "$WORK/$1.err" ' objects, .* text on ' 10
	RB=$(awk '$1 == "read_bytes:" { print $2 }' "/proc/$sp/io" 2>/dev/null)
	wait "$sp" || fail "$1: bigtext failed: $(grep -v '^enormoustext' "$WORK/$1.out" "$WORK/$1.err" | tail -3 | tr '\n' '|')"
	[[ $RB =~ ^[0-9]+$ ]] || fail "$1: its /proc/PID/io could not be read after its pass: '$RB'"
}
subject held
c1=$(cached)
grep 'prime:' "$WORK/held.err" | sed 's/^/   /'
grep -q 'prime: 8 copied window(s) stay copies: another process maps some of their pages' "$WORK/held.err" ||
	fail "with the holder mapping half of each window, the subject did not say its 8 windows stay copies for that: $(grep prime: "$WORK/held.err" | tr '\n' '|')"
[ "$RB" -eq 0 ] ||
	fail "with the holder mapping half of each window, the subject read $RB bytes from the disk: it dropped pages it could not make huge"
# a window dropped is 1 MiB gone (its half the holder does not map); the
# kernel's own reclaim may take a stray page of a loaded machine's cache
[ $((c0 - c1)) -lt 1048576 ] || fail "the files' cached bytes fell from $c0 to $c1 while the holder mapped half of them"
note "holder maps half of each window: 8 windows stay copies, the subject read $RB bytes from disk, cache $c0 -> $c1 bytes"

kill "$HP"; wait "$HP" 2>/dev/null
subject alone
grep -q 'prime: 8 of 8 now zero-copy' "$WORK/alone.err" ||
	fail "with no other process mapping the files, the subject did not prime its 8 windows: $(grep prime: "$WORK/alone.err" | tr '\n' '|')"
note "holder gone: $(grep -o 'prime: 8 of 8 now zero-copy' "$WORK/alone.err"), the subject read $RB bytes from disk"
echo "PASS [$T]"
