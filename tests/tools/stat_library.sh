#!/bin/bash
# tool_stat_library — `stat` of a process run through `enormoustext run`: the
# program's text counts its anonymous copies (as awk attributes them) and
# equals its page-rounded segment (from `check`), its huge bytes equal the
# library's report; with --enable 0 nothing is copied.
. "$(dirname "$0")/lib.sh"

fresh a
start_hold lib "$TOOL" run --report "$W/r.json" -- "$F"
cp "/proc/$HPID/smaps" "$W/smaps"
t json -- "$TOOL" stat --json "$HPID"
expect_rc 0; expect_no_err; json "$OUT"
json "$W/r.json"
i=$(jindex "$OUT.flat" .objects path "$F")
r=$(jindex "$W/r.json.flat" .objects path "$F")
[ -n "$i" ] && [ -n "$r" ] || fail "$F missing from stat or from the library's report"
rhuge=$(jneed "$W/r.json.flat" ".objects[$r].huge_bytes")
[ "$rhuge" -ge "$H" ] || fail "the library moved nothing of $F: $(jget "$W/r.json.flat" ".objects[$r].reasons[0]")"
read -r text copied huge < <(smaps_object "$W/smaps" "$F")
[ "$(jneed "$OUT.flat" ".objects[$i].text_bytes")" = "$text" ] || fail "$F: text_bytes $(jget "$OUT.flat" ".objects[$i].text_bytes"), expected $text (file and copied mappings)"
[ "$(jneed "$OUT.flat" ".objects[$i].copied_text_bytes")" = "$copied" ] || fail "$F: copied_text_bytes, expected $copied"
[ "$(jneed "$OUT.flat" ".objects[$i].huge_bytes")" = "$huge" ] || fail "$F: huge_bytes, smaps says $huge"
[ "$copied" -ge "$rhuge" ] || fail "$F: $copied bytes in anonymous copies, the library moved $rhuge"
# The kinds: what the library did is what stat calls anon (+ hugetlb).
anon=$(jneed "$OUT.flat" ".objects[$i].huge_by_kind.anon")
tlb=$(jneed "$OUT.flat" ".objects[$i].huge_by_kind.hugetlb")
[ $((anon + tlb)) = "$rhuge" ] || fail "$F: stat has anon $anon + hugetlb $tlb, the library's report $rhuge"
# The object's text is its whole executable segment, page-rounded.
t check -- "$TOOL" check --json "$F"
json "$OUT"
va=$(jneed "$OUT.flat" ".segments[1].vaddr"); sz=$(jneed "$OUT.flat" ".segments[1].memsz")
[ "$(jneed "$OUT.flat" ".segments[1].text")" = true ] || fail "tt_hold's second segment is not its text"
lo=$((va & ~4095)); hi=$(((va + sz + 4095) & ~4095))
[ "$text" = $((hi - lo)) ] || fail "$F: $text bytes of text mapped, its segment is $((hi - lo))"
t text -- "$TOOL" stat "$HPID"
expect_out " $F \\([0-9.]+[KMG] of it in anonymous copies\\)\$" "the text output shows the copies"
stop_hold lib "$HPID"

# The library off: the same program, nothing copied.
fresh b
start_hold off "$TOOL" run --enable 0 -- "$F"
t off -- "$TOOL" stat --json "$HPID"
json "$OUT"
i=$(jindex "$OUT.flat" .objects path "$F")
[ "$(jneed "$OUT.flat" ".objects[$i].copied_text_bytes")" = 0 ] || fail "--enable 0: text was copied"
stop_hold off "$HPID"

pass
