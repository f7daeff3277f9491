#!/bin/bash
# fault.library-truncated — issue #39 point 9: a library cut short is never
# named in /etc/ld.so.preload by `enable`, and `status` says when one is.
#
# A library file shorter than its headers say (a `cp` over it cut short, a
# full disk) named in /etc/ld.so.preload kills every dynamically linked
# program at start (SIGBUS), and nothing of the library's can help
# (docs/hosts.md).  Two copies of the library: one cut inside its loadable
# segments (50,000 bytes), one missing only its last byte (the section
# headers' end: the loader maps it, so the trial run of `enable` passes).
#   - `enable --all --preload`, `enable --binary` and `enable UNIT` refuse each, with
#     one line naming the file and what is wrong ("ends at N bytes, its ...
#     need M"), nothing written (under --root; then `enable --all --preload` in a
#     private mount namespace over a copy of /etc, its ld.so.preload
#     compared byte for byte: the real /etc is never written);
#   - `status` on an ld.so.preload naming each, or a missing file: an error
#     line naming the file and what is wrong, exit status 1, and the JSON's
#     hostwide.preload_libraries; a whole library: no error, status 0;
#   - `enable --binary` with a whole library writes /etc/ld.so.preload by
#     rename: a new inode, renamed from a file beside it after an fsync
#     (strace), and `disable` puts the bytes back.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "not root: the private mount namespace over /etc needs it"
TOOL=${FAULT_TOOL:-}
[ -x "$TOOL" ] || fail "the enormoustext command ($TOOL) is not built: build the enormoustext_tool target"
command -v readelf >/dev/null || fail "readelf (binutils) is missing"

# in_ns: the rest of this script, in a private mount namespace whose /etc
# is a copy (set up once, by the outer run, which then checks the real
# /etc/ld.so.preload is as it was).
preload_state() { if [ -e /etc/ld.so.preload ]; then sha256sum </etc/ld.so.preload; else echo absent; fi; }
if [ "${ET_LT_NS:-}" != 1 ]; then
	before=$(preload_state)
	command -v unshare >/dev/null || fail "unshare (util-linux) is missing: this test needs a private mount namespace, never the real /etc"
	unshare -m true 2>"$WORK/unshare.err" ||
		fail "unshare -m is not permitted here ($(head -1 "$WORK/unshare.err")): this test needs a private mount namespace"
	ET_LT_NS=1 FAULT_WORK_ROOT=$WORK unshare -m --propagation private -- bash "$0"
	rc=$?
	[ "$(preload_state)" = "$before" ] || fail "the real /etc/ld.so.preload changed ($before -> $(preload_state))"
	exit "$rc"
fi
mkdir "$WORK/etc" && cp -a /etc/. "$WORK/etc/" || fail "cannot copy /etc"
mount --bind "$WORK/etc" /etc || fail "cannot bind-mount the copy over /etc"
[ "$(stat -c %d:%i /etc)" = "$(stat -c %d:%i "$WORK/etc")" ] || fail "/etc is not the private copy: stopping before any write"
rm -rf /etc/enormoustext /etc/ld.so.preload

# --- the copies: whole, cut in its segments, cut by its last byte
name=$(basename "$(readlink -f "$PRE")")
size=$(stat -L -c %s "$PRE")
for k in whole seg sh; do mkdir "$WORK/$k" && cp -L "$PRE" "$WORK/$k/$name" || fail "cannot copy $PRE"; done
truncate -s 50000 "$WORK/seg/$name" && truncate -s $((size - 1)) "$WORK/sh/$name" || fail "truncate failed"
shend=$(readelf -hW "$PRE" | awk -F: '/Start of section headers/ { o = $2 + 0 } /Size of section headers/ { s = $2 + 0 }
	/Number of section headers/ { n = $2 + 0 } END { print o + s * n }')
[ "$shend" = "$size" ] || note "(the section headers end at $shend of $size bytes)"
loadend=0
while read -r off filesz; do
	((off + filesz > loadend)) && loadend=$((off + filesz))
done < <(readelf -lW "$PRE" | awk '$1 == "LOAD" { print $2, $5 }')
[ "${loadend:-0}" -gt 50000 ] || fail "the library's segments end at ${loadend:-?} bytes: a cut at 50,000 is not inside them"
cp /bin/true "$WORK/prog" || fail "cannot copy /bin/true"

# --- enable refuses a library cut short, naming it, nothing written
refused() { # refused WHAT LIB EXPECT -- COMMAND...: exit 1, one line naming LIB and EXPECT
	local what=$1 lib=$2 expect=$3 rc
	shift 4
	"$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	[ "$rc" = 1 ] || fail "$what: exit status $rc, not 1 (a library cut short accepted?): $(tr '\n' '|' <"$WORK/out" "$WORK/err" | head -c 600)"
	grep -q "library $lib: $expect" "$WORK/err" ||
		fail "$what: no line naming $lib and '$expect': $(tr '\n' '|' <"$WORK/err" | head -c 600)"
	note "$what: $(head -1 "$WORK/err")"
}
for k in seg sh; do
	lib=$WORK/$k/$name
	case $k in
	seg) expect="ends at 50000 bytes, its .* need [0-9]*" ;;
	sh) expect="ends at $((size - 1)) bytes, its section headers need $shend" ;;
	esac
	R=$WORK/root-$k
	mkdir -p "$R"
	refused "enable --all --root, cut $k" "$lib" "$expect" -- "$TOOL" enable --all --preload --lib "$lib" --root "$R"
	refused "enable --binary --root, cut $k" "$lib" "$expect" -- "$TOOL" enable --binary "$WORK/prog" --lib "$lib" --root "$R"
	refused "enable UNIT --root, cut $k" "$lib" "$expect" -- "$TOOL" enable --no-reload --lib "$lib" --root "$R" lt-test.service
	[ -z "$(find "$R" -mindepth 1 -print -quit)" ] || fail "cut $k: enable wrote under --root: $(find "$R" -mindepth 1 | head -5 | tr '\n' ' ')"
	# and with the real paths, in this namespace's copy of /etc
	printf '# the host'"'"'s own\n' >/etc/ld.so.preload
	sum=$(sha256sum </etc/ld.so.preload)
	refused "enable --all, cut $k" "$lib" "$expect" -- "$TOOL" enable --all --preload --lib "$lib"
	[ "$(sha256sum </etc/ld.so.preload)" = "$sum" ] || fail "enable --all, cut $k: /etc/ld.so.preload changed: $(cat /etc/ld.so.preload)"
	[ ! -e /etc/enormoustext ] || fail "enable --all, cut $k: /etc/enormoustext was made: $(ls -A /etc/enormoustext)"
done

# --- status: each library ld.so.preload names, checked whole
R=$WORK/st
mkdir -p "$R/etc" "$R/lib"
cp "$WORK/seg/$name" "$R/lib/libseg.so" && cp "$WORK/sh/$name" "$R/lib/libsh.so" && cp "$WORK/whole/$name" "$R/lib/libwhole.so" || fail "cannot copy the libraries"
st() { # st WHAT RC -- ARGS: status's exit status must be RC
	local what=$1 want=$2 rc
	shift 3
	"$TOOL" status --no-probe "$@" >"$WORK/st.out" 2>"$WORK/st.err"
	rc=$?
	[ "$rc" = "$want" ] || fail "status, $what: exit status $rc, not $want: $(tr '\n' '|' <"$WORK/st.err" | head -c 600)"
}
for k in seg sh missing; do
	case $k in
	seg) expect="ends at 50000 bytes, its .* need [0-9]*" ;;
	sh) expect="ends at $((size - 1)) bytes, its section headers need $shend" ;;
	missing) expect="No such file or directory" ;;
	esac
	printf '/lib/libwhole.so\n# a comment\n/lib/lib%s.so\n' "$k" >"$R/etc/ld.so.preload"
	st "ld.so.preload naming a library cut $k" 1 -- --root "$R"
	grep -q "/etc/ld.so.preload names /lib/lib$k.so: $expect" "$WORK/st.err" ||
		fail "status, cut $k: no error line naming /lib/lib$k.so and '$expect': $(tr '\n' '|' <"$WORK/st.err")"
	! grep -q "libwhole" "$WORK/st.err" || fail "status, cut $k: the whole library was said to be broken: $(tr '\n' '|' <"$WORK/st.err")"
	grep -q "BROKEN .*/lib/lib$k.so: $expect" "$WORK/st.out" || fail "status, cut $k: no BROKEN line in the report: $(grep -i 'ld.so.preload' "$WORK/st.out" | tr '\n' '|')"
	note "status, cut $k: $(head -1 "$WORK/st.err")"
	st "--json, a library cut $k" 1 -- --root "$R" --json
	"$IT_BIN/json_flat" "$WORK/st.out" >"$WORK/st.flat" 2>/dev/null || fail "status --json, cut $k: not JSON"
	jv() { awk -F'\t' -v k="$1" '$1 == k { print $3 }' "$WORK/st.flat"; }
	[ "$(jv '.hostwide.preload_libraries[1].path')" = "/lib/lib$k.so" ] &&
		jv '.hostwide.preload_libraries[1].problem' | grep -q "^$expect" &&
		[ "$(awk -F'\t' '$1 == ".hostwide.preload_libraries[0].problem" { print $2 }' "$WORK/st.flat")" = null ] ||
		fail "status --json, cut $k: hostwide.preload_libraries is not [whole, broken]: $(grep preload_libraries "$WORK/st.flat" | tr '\t\n' ' |')"
done
printf '/lib/libwhole.so\n' >"$R/etc/ld.so.preload"
st "ld.so.preload naming a whole library" 0 -- --root "$R"
grep -q "library .*/lib/libwhole.so: a whole shared object" "$WORK/st.out" || fail "status: the whole library is not said to be whole: $(grep -i 'ld.so.preload' "$WORK/st.out" | tr '\n' '|')"
# and the real path: this namespace's /etc/ld.so.preload naming the copy
# cut by its last byte (it still loads: the loader needs no section
# header; ENORMOUSTEXT=0: in this namespace every program loads it now)
export ENORMOUSTEXT=0
printf '%s\n' "$WORK/sh/$name" >/etc/ld.so.preload
"$TOOL" status --no-probe >"$WORK/st.out" 2>"$WORK/st.err"
rc=$?
[ "$rc" = 1 ] && grep -q "/etc/ld.so.preload names $WORK/sh/$name: ends at" "$WORK/st.err" ||
	fail "status with /etc/ld.so.preload naming a library cut short: exit status $rc: $(tr '\n' '|' <"$WORK/st.err")"
printf '# the host'"'"'s own\n' >/etc/ld.so.preload
unset ENORMOUSTEXT

# --- enable writes /etc/ld.so.preload by rename (a whole library)
sum=$(sha256sum </etc/ld.so.preload)
ino=$(stat -c %i /etc/ld.so.preload)
if command -v strace >/dev/null; then
	strace -f -qq -o "$WORK/strace" -e trace=openat,rename,renameat,renameat2,fsync,fdatasync \
		"$TOOL" enable --binary "$WORK/prog" --lib "$WORK/whole/$name" >"$WORK/out" 2>"$WORK/err" ||
		fail "enable --binary with a whole library failed: $(tr '\n' '|' <"$WORK/err")"
	# a file beside it opened, written, fsync'ed, renamed over it, then
	# /etc fsync'ed
	why=$(awk '
		{ line[NR] = $0 }
		!r && /rename[a-z0-9]*\(.*"\/etc\/[^"]*", .*"\/etc\/ld\.so\.preload"/ {
			r = NR; tmp = $0; sub(/^[^"]*"/, "", tmp); sub(/".*/, "", tmp)
		}
		END {
			if (!r) { print "no rename onto /etc/ld.so.preload"; exit }
			for (i = 1; i < r; i++)
				if (index(line[i], "openat(") && index(line[i], "\"" tmp "\"")) { o = i; fd = line[i]; sub(/.*= /, "", fd) }
			if (!o) { print tmp " was never opened"; exit }
			for (i = o + 1; i < r; i++) if (line[i] ~ ("fsync\\(" fd "\\)")) s = 1
			if (!s) { print "no fsync(" fd ") of " tmp " before its rename"; exit }
			for (i = r + 1; i <= NR; i++) {
				if (index(line[i], "openat(") && index(line[i], "\"/etc\"") && index(line[i], "O_DIRECTORY")) { d = line[i]; sub(/.*= /, "", d) }
				if (d != "" && line[i] ~ ("fsync\\(" d "\\)")) ds = 1
			}
			if (!ds) print "no fsync of /etc after the rename"
		}' "$WORK/strace")
	[ -z "$why" ] || fail "enable's write of /etc/ld.so.preload: $why: $(grep -E 'rename|ld.so.preload|fsync' "$WORK/strace" | tail -8 | tr '\n' '|')"
	! grep -E 'openat\(.*"/etc/ld\.so\.preload", [^)]*O_(WRONLY|RDWR)' "$WORK/strace" >/dev/null ||
		fail "enable opened /etc/ld.so.preload itself for writing: $(grep 'ld.so.preload' "$WORK/strace" | tr '\n' '|')"
	note "enable: $(grep -F '"/etc/ld.so.preload"' "$WORK/strace" | grep rename | head -1)"
else
	"$TOOL" enable --binary "$WORK/prog" --lib "$WORK/whole/$name" >"$WORK/out" 2>"$WORK/err" ||
		fail "enable --binary with a whole library failed: $(tr '\n' '|' <"$WORK/err")"
	note "(strace is not installed: the rename is checked by the inode alone)"
fi
[ "$(stat -c %i /etc/ld.so.preload)" != "$ino" ] || fail "enable wrote /etc/ld.so.preload in place (the same inode $ino)"
grep -qx "/etc/enormoustext/preload/$name" /etc/ld.so.preload || fail "enable did not name the library: $(cat /etc/ld.so.preload)"
"$TOOL" disable --binary "$WORK/prog" >"$WORK/out" 2>"$WORK/err" || fail "disable --binary failed: $(tr '\n' '|' <"$WORK/err")"
[ "$(sha256sum </etc/ld.so.preload)" = "$sum" ] || fail "disable did not put /etc/ld.so.preload back: $(cat /etc/ld.so.preload)"
echo "PASS [$T]"
