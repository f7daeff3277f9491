#!/bin/bash
# tool_profile — `profile show` (the hottest window first; --svg: its
# labels, the hottest framed, the colours; --png gone, usage; --window),
# show --json with every figure of the text,
# output errors (a missing directory, /dev/full, a file size limit: no SVG
# cut short left),
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
# --json: valid JSON (python3's json.tool and the strict checker) with every
# figure of the text, window by window, for 2M and 4K windows
for win in 2M 4K; do
	t "showtext.$win" -- "$TOOL" profile show --window "$win" "$W/a.prof"
	expect_rc 0; cp "$OUT" "$W/show.$win.text"
	t "showjson.$win" -- "$TOOL" profile show --window "$win" --json "$W/a.prof"
	expect_rc 0; expect_no_err; json "$OUT"
	python3 - "$OUT" "$W/show.$win.text" <<'PY' || fail "profile show --json ($win) and the text disagree"
import json, re, sys
j = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
m = re.match(r"^(.*): (\d+) objects?, granule (\d+), windows of (\S+)$", lines[0])
if not m or m.group(1) != j["file"] or int(m.group(2)) != len(j["objects"]) or int(m.group(3)) != j["granule"]:
    sys.exit("head: %s vs %s" % (lines[0], {k: j[k] for k in ("file", "granule", "window")}))
text = []
for l in lines[1:]:
    o = re.match(r"^(\S+)  build-id (\S+)  (\d+) samples?$", l)
    if o:
        text.append({"path": o.group(1), "build_id": o.group(2), "samples": int(o.group(3)), "windows": []})
        continue
    w = re.match(r"^  window 0x([0-9a-f]+) +(\d+) samples? +([0-9.]+)%  cumulative +([0-9.]+)%$", l)
    if not w:
        sys.exit("a line the test does not know: %r" % l)
    text[-1]["windows"].append({"start": "0x" + w.group(1), "samples": int(w.group(2)),
                                "share_permille": round(float(w.group(3)) * 10),
                                "cumulative_permille": round(float(w.group(4)) * 10)})
if text != j["objects"]:
    sys.exit("objects: text %s, json %s" % (text, j["objects"]))
if sum(len(o["windows"]) for o in text) < 2:
    sys.exit("too few windows to compare")
PY
done
t svg -- "$TOOL" profile show --svg "$W/a.svg" "$W/a.prof"
expect_rc 0
head -c 4 "$W/a.svg" | grep -q '<svg' && tail -1 "$W/a.svg" | grep -q '</svg>' || fail "--svg did not write an SVG document"
[ "$(grep -c '<rect ' "$W/a.svg")" = 4 ] || fail "--svg: expected a background and 3 window cells, got $(grep -c '<rect ' "$W/a.svg") rects"
# the heat map says in its text what a picture (rsvg-convert -o a.png
# a.svg) cannot show in tooltips: each object's samples, its hottest window
# and that window's share, the addresses its row spans; the hottest framed
grep -q '>/bin/a (60 samples; the hottest window 0x400000 has 83.3%)</text>' "$W/a.svg" ||
	fail "--svg: /bin/a's label does not give its samples and hottest window: $(grep '/bin/a' "$W/a.svg")"
grep -q '>0x200000 - 0x600000: 2 windows of 2M, 2 with samples</text>' "$W/a.svg" ||
	fail "--svg: /bin/a's row does not say the addresses it spans"
[ "$(grep -c 'stroke="black"' "$W/a.svg")" = 2 ] || fail "--svg: not one framed (hottest) window per object"
grep 'stroke="black"' "$W/a.svg" | grep -q '<title>0x400000: 50 samples</title>' ||
	fail "--svg: the framed window of /bin/a is not its hottest (0x400000)"
# the colours: red, the hotter darker; a window without samples drawn not at all
hot=$(sed -n 's/.*fill="rgb(\([0-9,]*\))".*<title>0x400000: .*/\1/p' "$W/a.svg")
cold=$(sed -n 's/.*fill="rgb(\([0-9,]*\))".*<title>0x200000: .*/\1/p' "$W/a.svg")
echo "   hottest window rgb($hot), the colder one rgb($cold)"
if ! { [ "${hot%%,*}" = 255 ] && [ "${cold%%,*}" = 255 ] && [ "$(echo "$hot" | cut -d, -f2)" -lt "$(echo "$cold" | cut -d, -f2)" ]; }; then
	fail "--svg: expected red cells, the hotter darker: rgb($hot) (hot) and rgb($cold) (cold)"
fi
if command -v xmllint >/dev/null; then
	xmllint --noout "$W/a.svg" || fail "--svg: xmllint rejects the SVG"
fi
# the PNG the docs say how to make, where rsvg-convert exists
if command -v rsvg-convert >/dev/null; then
	rsvg-convert -o "$W/converted.png" "$W/a.svg" || fail "rsvg-convert cannot convert the SVG"
	[ "$(head -c 8 "$W/converted.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		fail "rsvg-convert -o converted.png a.svg made no PNG"
fi
# PNG output was dropped for the SVG (a PNG: rsvg-convert -o OUT.png OUT.svg)
t png -- "$TOOL" profile show --png "$W/a.png" "$W/a.prof"
expect_bad 2 "--png (gone: --svg, then rsvg-convert)" "unknown option '--png'"
[ ! -e "$W/a.png" ] || fail "--png wrote $W/a.png"
t pnghelp -- "$TOOL" profile show --help
grep -q -- '--png' "$OUT" && fail "profile show --help still names --png"
grep -q 'rsvg-convert' "$OUT" || fail "profile show --help does not say how to make a PNG of the SVG"
# a finer window: a wider picture (/bin/a spans 514 windows of 4K, 400 drawn)
t fine -- "$TOOL" profile show --window 4K --svg "$W/b.svg" "$W/a.prof"
expect_rc 0; expect_no_err
width() { sed -n '1s/.* width="\([0-9]*\)".*/\1/p' "$1"; }
[ "$(width "$W/b.svg")" -gt "$(width "$W/a.svg")" ] || fail "--svg: 4K windows give no wider a picture than 2M ones"
grep -q '514 windows of 4K, 3 with samples (the first 400 drawn)' "$W/b.svg" || fail "--svg --window 4K: the span line does not say 400 of 514 are drawn"
# an output that cannot be written: one line naming it, exit 1
t svgdir -- "$TOOL" profile show --svg "$W/no/such/dir/x.svg" "$W/a.prof"
expect_bad 1 "--svg into a directory that does not exist" "$W/no/such/dir/x.svg: No such file or directory"
if [ -w /dev/full ]; then
	t svgfull -- "$TOOL" profile show --svg /dev/full "$W/a.prof"
	expect_bad 1 "--svg to a full device" "/dev/full: No space left on device"
fi
# a write that fails half-way (a file size limit, its signal ignored):
# said, and no SVG cut short left behind (a heat map of 20 objects of 400
# windows each: some 1.2 MB)
{
	printf 'enormoustext-profile 1\ngranule 4096\n'
	for o in $(seq 1 20); do
		printf 'object %02x /lib/big%d.so\n' "$o" "$o"
		seq 0 399 | awk '{ printf "%x %d\n", $1 * 4096, $1 + 1 }'
	done
} >"$W/big.prof"
# shellcheck disable=SC2016 # expanded by the inner shell
t svgcut -- bash -c 'trap "" XFSZ; ulimit -f 100; exec "$0" profile show --window 4K --svg "$1" "$2"' "$TOOL" "$W/cut.svg" "$W/big.prof"
expect_bad 1 "--svg cut short by a file size limit" "$W/cut.svg: File too large"
[ ! -e "$W/cut.svg" ] || fail "--svg left an SVG cut short: $W/cut.svg ($(wc -c <"$W/cut.svg") bytes)"
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
# --json: what was written, valid, each input's and the sum's figures those of the files
t mergej -- "$TOOL" profile merge --json -o "$W/mj.prof" "$W/a.prof" "$W/b.prof"
expect_rc 0 "merge --json"; expect_no_err
json "$OUT"
python3 -m json.tool "$OUT" >/dev/null || fail "merge --json: python3 -m json.tool refuses it"
cmp -s "$W/mj.prof" "$W/m.prof" || fail "merge --json wrote another profile"
psum() { awk '$1 != "object" && $1 ~ /^[0-9a-f]+$/ && NF == 2 { n += $2 } END { print n + 0 }' "$1"; }
for i in 0 1; do
	f=$(jneed "$OUT.flat" ".inputs[$i].file")
	[ "$(jneed "$OUT.flat" ".inputs[$i].samples")" = "$(psum "$f")" ] || fail "merge --json: $f's samples"
	[ "$(jneed "$OUT.flat" ".inputs[$i].objects")" = "$(grep -c '^object ' "$f")" ] || fail "merge --json: $f's objects"
done
[ "$(jneed "$OUT.flat" .samples)" = "$(psum "$W/mj.prof")" ] || fail "merge --json: samples $(jget "$OUT.flat" .samples), the file has $(psum "$W/mj.prof")"
[ "$(jneed "$OUT.flat" .objects)" = "$(grep -c '^object ' "$W/mj.prof")" ] || fail "merge --json: objects is not the file's"
[ "$(jneed "$OUT.flat" .output)" = "$W/mj.prof" ] || fail "merge --json: output"
t mergej_stdout -- "$TOOL" profile merge --json -o /dev/stdout "$W/a.prof"
expect_bad 2 "merge --json -o /dev/stdout" "is standard output"
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
