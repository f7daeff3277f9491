#!/bin/bash
# tool_profile — `profile show` (the hottest window first; --svg; --png
# checked by tt_png: valid, the heat map's colours at their places, a window
# without samples white, a damaged PNG refused; --window), output errors (a
# missing directory, /dev/full, a file size limit: no PNG cut short left),
# `profile merge` (counts added, objects without samples kept), different
# granules, a corrupt or missing profile.
. "$(dirname "$0")/lib.sh"

printf 'enormoustext-profile 1\ngranule 4096\nobject aa /bin/a\n200000 10\n400000 30\n401000 20\nobject bb /lib/b.so\n1000 5\n' >"$W/a.prof"
printf 'enormoustext-profile 1\ngranule 4096\nobject aa /bin/a\n200000 40\nobject cc /lib/c.so\n3000 1\n' >"$W/b.prof"
t show -- "$TOOL" profile show "$W/a.prof"
expect_rc 0; expect_no_err
expect_out "^$W/a.prof: 2 objects, granule 4096, windows of 2M\$"
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
tp=$TT_BIN/tt_png
[ -x "$tp" ] || fail "$tp is missing: build the tool_tests target"
t png -- "$TOOL" profile show --png "$W/a.png" "$W/a.prof"
expect_rc 0; expect_no_err
expect_out "^  window 0x400000               50 samples" "--png: the listing"
[ "$(head -c 8 "$W/a.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "--png: no PNG signature"
[ "$(dd if="$W/a.png" bs=1 skip=12 count=4 2>/dev/null)" = IHDR ] || fail "--png: the first chunk is not IHDR"
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
expect_out "^/lib/c.so  build-id cc  1 sample\$" "one sample: singular"
expect_out "^  window 0x[0-9a-f]+ +1 sample +100\.0%" "a window of one sample: singular"
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
# one object: singular
printf 'enormoustext-profile 1\ngranule 64\nobject ee /bin/one\n400000 1\n' >"$W/one.prof"
t showone -- "$TOOL" profile show "$W/one.prof"
expect_rc 0
expect_out "^$W/one.prof: 1 object, granule 64, windows of " "one object: singular"
expect_out "^/bin/one  build-id ee  1 sample\$" "one sample: singular"
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

pass
