#!/bin/bash
# tool_status_explain — `status --explain [PROGRAM]`: each sentence follows
# the facts this test reads itself: on this machine (THP mode and defrag
# from sysfs, the hugetlb pool, the file probe) and on --root trees made to
# differ (never on Linux 5.15 and 6.18, always, defrag never, a pool with
# free pages, one without); for a PROGRAM: the objects are what ldd finds
# (for a library too), a library found through RUNPATH $ORIGIN, a program
# its loader cannot start and one whose interpreter is no loader, the windows are check's for the
# program and prime --check's state decides zero-copy for the library linked
# with enormous.ld; the copy rate is measured (a start-up figure); JSON
# fields parse and agree with the text; a PROGRAM without a slash found
# along PATH (the first directory that has it, as `run` finds it, not the
# current directory); a script explained by what runs it, said in its
# first line (its interpreter, env's PROGRAM along PATH, a script's
# script), its line and chain in JSON, one line when it names nothing that
# runs; bad input.
. "$(dirname "$0")/lib.sh"

sys=/sys/kernel/mm/transparent_hugepage
en=$(choice $sys/enabled); df=$(choice $sys/defrag)
np=$(cat "/sys/kernel/mm/hugepages/hugepages-$((H >> 10))kB/nr_hugepages" 2>/dev/null || echo -)
mkdir "$W/probe"

# --- this machine
t host -- "$TOOL" status --explain --probe-dir "$W/probe"
expect_rc 0; expect_no_err
expect_out "^on this host \\(Linux $(uname -r), "
expect_out "^- THP is $en[: ]"
[ "$(grep -c '^- THP is ' "$OUT")" = 1 ] || fail "not exactly one THP-mode sentence"
case $en in
madvise) expect_out "^- THP is madvise: the library asks per mapping" ;;
always) expect_out "^- THP is always: .*enormoustext setup --thp madvise" ;;
never) expect_out "^- THP is never.*MADV_COLLAPSE" ;;
esac
case $en/$df in
never/*) expect_out "^- defrag=$df does not matter while THP is never" ;;
*/never|*/defer) expect_out "^- defrag=$df: a fault does not wait for compaction.*enormoustext setup --defrag defer\\+madvise" ;;
*/madvise|*/defer+madvise) expect_out "^- defrag=$df: a MADV_HUGEPAGE fault may compact memory" ;;
*/always) expect_out "^- defrag=always: every THP fault" ;;
esac
if [ "$np" = 0 ]; then
	expect_out "^- the hugetlb pool is empty: the hugetlb backend is not used .*enormoustext setup --hugetlb 1G --persist"
elif [ "$np" != - ]; then
	expect_out "^- the hugetlb pool (has [0-9]+ free of $np |\\($np )"
fi
grep -q "hugetlb pool is empty" "$OUT" && [ "$np" != 0 ] && fail "the pool is not empty ($np pages) but explain says it is"
# The file-system sentence follows the probe's own verdict (status --json).
t probe -- "$TOOL" status --json --probe-dir "$W/probe"
json "$OUT"
fw=$(jneed "$OUT.flat" .probes.file.works)
fs=$(jneed "$OUT.flat" .probes.file.filesystem)
if [ "$fw" = true ]; then
	grep -q "^- $fs at $W/probe gives the page cache huge folios: .*enormoustext prime" "$W/1.host.out" ||
		fail "the probe found huge folios on $fs, the sentence does not say so"
else
	grep -q "^- $fs at $W/probe gives the page cache no huge folios: text is copied" "$W/1.host.out" ||
		fail "the probe found no huge folios on $fs, the sentence does not say so"
fi

# --- trees made to differ: each sentence changes with its fact
r=$W/r
fake_sysfs "$r" never never 0
mkdir -p "$r/proc/sys/kernel"
echo 5.15.0-91-generic >"$r/proc/sys/kernel/osrelease"
t old -- "$TOOL" status --explain --root "$r"
expect_rc 0
expect_out "^on this host \\(Linux 5.15.0-91-generic, 2 MiB pages\\):\$"
expect_out "^- THP is never and Linux 5.15.0-91-generic has no MADV_COLLAPSE \\(it came in 6.1\\).*enormoustext setup --thp madvise --persist"
expect_out "^- defrag=never does not matter while THP is never"
expect_out "^- the hugetlb pool \\(10 2 MiB pages\\) has no free page that is not reserved now"
expect_out "^- whether the file system gives the page cache huge folios .* was not probed \\(--root\\)\$"
expect_out "^- auto would try file, then collapse: "
echo 6.18.2 >"$r/proc/sys/kernel/osrelease"
t new -- "$TOOL" status --explain --root "$r"
expect_out "^- THP is never: the library relies on MADV_COLLAPSE \\(Linux >= 6.1, this is 6.18.2\\), whatever the policy; whether it works was not probed \\(--root\\)\$"
grep -q "has no MADV_COLLAPSE" "$OUT" && fail "Linux 6.18 said to have no MADV_COLLAPSE"
fake_sysfs "$r" always never 4
t always -- "$TOOL" status --explain --root "$r"
expect_out "^- THP is always: .*\`enormoustext setup --thp madvise --persist\`\$"
expect_out "^- defrag=never: a fault does not wait for compaction, so expect fewer huge pages .*\`enormoustext setup --defrag defer\\+madvise --persist\`\$"
expect_out "^- the hugetlb pool has 3 free of 10 2 MiB pages \\(20M in all\\): auto uses it last"
expect_out "^- auto would try file, then collapse, then thp, then hugetlb: "
fake_sysfs "$r" madvise defer+madvise 0
echo 0 >"$r/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
t madv -- "$TOOL" status --explain --root "$r"
expect_out "^- THP is madvise: the library asks per mapping \\(MADV_HUGEPAGE\\), no other memory changes — fine\$"
expect_out "^- defrag=defer\\+madvise: a MADV_HUGEPAGE fault may compact memory"
expect_out "^- the hugetlb pool is empty: "
grep -q "expect fewer huge pages" "$OUT" && fail "defrag=defer+madvise got the fragmentation advice"
# The same facts as JSON.
t madvjson -- "$TOOL" status --json --explain --root "$r"
expect_rc 0; json "$OUT"
python3 -m json.tool "$OUT" >/dev/null || fail "python3 -m json.tool rejects the JSON"
f=$OUT.flat
[ "$(jneed "$f" .explain.kernel)" = 6.18.2 ] || fail ".explain.kernel"
[ "$(jneed "$f" .explain.sentences[0].topic)" = thp ] || fail ".explain.sentences[0].topic is not thp"
[ "$(jneed "$f" .explain.sentences[0].verdict)" = fine ] || fail "THP madvise is not 'fine'"
i=$(jindex "$f" .explain.sentences topic hugetlb)
[ -n "$i" ] && [ "$(jneed "$f" ".explain.sentences[$i].command")" = "enormoustext setup --hugetlb 1G --persist" ] ||
	fail "the empty pool's sentence has no command"
[ "$(jneed "$f" .explain.program)" = null ] || fail ".explain.program is not null without a PROGRAM"

# --- a PROGRAM: /bin/ls, and a program with a big library found by RUNPATH
t ls -- "$TOOL" status --json --explain /bin/ls
expect_rc 0; json "$OUT"
f=$OUT.flat
awk -F'\t' '$1 ~ /^\.explain\.program\.objects\[[0-9]+\]\.path$/ { print $3 }' "$f" |
	xargs -r readlink -f | sort >"$W/ls.ours"
{ readlink -f /bin/ls; ldd /bin/ls | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }' | xargs -r readlink -f; } |
	sort -u >"$W/ls.ldd"
diff -u "$W/ls.ldd" "$W/ls.ours" || fail "the objects of /bin/ls are not what ldd finds (diff above)"
tb=$(jneed "$f" .explain.program.text_bytes)
sum=$(awk -F'\t' '$1 ~ /^\.explain\.program\.objects\[[0-9]+\]\.text_bytes$/ { s += $3 } END { print s }' "$f")
[ "$tb" = "$sum" ] || fail "text_bytes $tb is not the sum over the objects ($sum)"

bigdso libbig.so
printf 'int big_entry(void);\nint main(void) { return big_entry() == 12345; }\n' >"$W/main.c"
cc_link "$W/prog" "$W/main.c" -L"$W" -lbig -Wl,-rpath,'$ORIGIN' -Wl,--enable-new-dtags
"$W/prog" || true
readelf -d "$W/prog" | grep -q 'RUNPATH.*\$ORIGIN' || fail "the test program has no RUNPATH \$ORIGIN"
t prime -- "$TOOL" prime --check --json "$W/libbig.so"
json "$OUT"
pw=$(jneed "$OUT.flat" .files[0].windows); ph=$(jneed "$OUT.flat" .files[0].huge); pnc=$(jneed "$OUT.flat" .files[0].not_cached)
t prog -- "$TOOL" status --json --explain --probe-dir "$W/probe" "$W/prog"
expect_rc 0; json "$OUT"
f=$OUT.flat
i=$(jindex "$f" .explain.program.objects path "$W/libbig.so")
[ -n "$i" ] || fail "libbig.so (RUNPATH \$ORIGIN) is not among the objects"
[ "$(jneed "$f" ".explain.program.objects[$i].needed_by")" = "$W/prog" ] || fail "libbig.so is not needed by the program"
[ "$(jneed "$f" ".explain.program.objects[$i].file_backed")" = true ] || fail "libbig.so (enormous.ld) is not file-backed"
w=$(jneed "$f" ".explain.program.objects[$i].windows")
zc=$(jneed "$f" ".explain.program.objects[$i].zero_copy_windows")
cw=$(jneed "$f" ".explain.program.objects[$i].copy_windows")
pad=$(jneed "$f" ".explain.program.objects[$i].padded_windows")
[ "$w" -ge 2 ] || fail "libbig.so: $w windows, expected at least 2 (4.4 MiB of code)"
[ "$w" = $((zc + cw)) ] || fail "libbig.so: $zc zero-copy + $cw copied is not its $w windows"
[ "$(jneed "$f" ".explain.program.objects[$i].page_cache.windows")" = "$pw" ] || fail "page_cache.windows is not prime --check's $pw"
[ "$(jneed "$f" ".explain.program.objects[$i].page_cache.huge")" = "$ph" ] || fail "page_cache.huge is not prime --check's $ph"
if [ "$ph" = "$pw" ]; then
	[ "$zc" = "$w" ] || fail "every window of libbig.so is huge in the page cache, yet $zc of $w are zero-copy"
fi
[ "$(jneed "$f" ".explain.program.objects[$i].huge_folios")" != false ] || [ "$zc" = "$ph" ] ||
	fail "no huge folios, yet more zero-copy windows ($zc) than huge in the cache ($ph)"
: "$pnc"
# The program itself: check's planner (a PIE: the windows glibc gets wherever it loads).
t chk -- "$TOOL" check --json "$W/prog"
json "$OUT"
emin=$(jneed "$OUT.flat" .eligible_bytes.glibc.min)
j0=$(jindex "$f" .explain.program.objects path "$W/prog")
[ "$(jneed "$f" ".explain.program.objects[$j0].windows")" = $((emin / H)) ] || fail "the program's windows are not check's ($((emin / H)))"
# Totals and the cost figures.
tw=$(jneed "$f" .explain.program.windows); tc=$(jneed "$f" .explain.program.copy_windows)
[ "$(jneed "$f" .explain.program.memory_per_process_bytes)" = $((tc * H)) ] || fail "memory per process is not the copied windows' size"
if [ "$tc" -gt 0 ]; then
	rate=$(jneed "$f" .explain.program.copy_rate.window_ns)
	[ "$rate" -gt 0 ] || fail "no copy rate measured"
	[ "$(jneed "$f" .explain.program.startup_ns)" = $((rate * tc)) ] || fail "startup_ns is not copied windows x the measured time"
fi
t progtext -- "$TOOL" status --explain --probe-dir "$W/probe" "$W/prog"
expect_rc 0
expect_out "^- $W/prog and the [0-9]+ objects it loads .*: .* of text; $tw whole 2 MiB windows? \\([^)]*\\) would move"
expect_out "^  $W/libbig.so +[0-9.]+[KM] +$w +$zc +$cw "
if [ "$tc" -gt 0 ]; then
	expect_out "^- $tc windows? \\([^)]*\\) (is|are) copied into anonymous memory by the [a-z]+ backend"
	expect_out "^- start-up: about [0-9.]+ ms to copy them, from [0-9]+ copies of 2 MiB measured here just now"
else
	grep -q "copied into anonymous memory" "$OUT" && fail "nothing to copy, yet a copy sentence"
fi
[ "$zc" -gt 0 ] && expect_out "^- [0-9]+ windows? \\([^)]*\\) comes? zero-copy from the page cache"

# The libraries are what the program's own loader lists (loader.c): a
# shared library (no interpreter of its own) is asked of this system's
# loader, and its objects are what ldd finds for it, each needed by the
# object whose DT_NEEDED names it.
t lib -- "$TOOL" status --json --explain --no-probe "$TT_LIB"
expect_rc 0; json "$OUT"
f=$OUT.flat
awk -F'\t' '$1 ~ /^\.explain\.program\.objects\[[0-9]+\]\.path$/ { print $3 }' "$f" |
	xargs -r readlink -f | sort >"$W/lib.ours"
{ readlink -f "$TT_LIB"; ldd "$TT_LIB" | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }' | xargs -r readlink -f; } |
	sort -u >"$W/lib.ldd"
diff -u "$W/lib.ldd" "$W/lib.ours" || fail "the objects of $TT_LIB are not what ldd finds (diff above)"
libc=$(ldd "$TT_LIB" | awk '$1 ~ /^libc\.so/ { print $3 }')
if [ -n "$libc" ]; then
	i=$(jindex "$f" .explain.program.objects path "$libc")
	[ -n "$i" ] || fail "$libc is not among the objects of $TT_LIB"
	[ "$(jneed "$f" ".explain.program.objects[$i].needed_by")" = "$TT_LIB" ] ||
		fail "$libc is not needed by $TT_LIB but by $(jget "$f" ".explain.program.objects[$i].needed_by")"
fi
# A program its loader cannot start (a library gone): the loader's words,
# and the program and its interpreter counted alone; status 0.
printf 'int gone_fn(void) { return 0; }\n' >"$W/gone.c"
printf 'int gone_fn(void);\nint main(void) { return gone_fn(); }\n' >"$W/usegone.c"
cc_link "$W/libgone.so" "$W/gone.c" -shared -fPIC
cc_link "$W/usegone" "$W/usegone.c" -L"$W" -lgone
rm "$W/libgone.so"
t gone -- "$TOOL" status --explain --no-probe "$W/usegone"
expect_rc 0; expect_no_err
expect_out "^- .* --list $W/usegone failed \\(exit status [0-9]+\\): .*libgone\\.so.*; only the program and its interpreter are counted\$"
expect_out "^- $W/usegone and the 1 object it loads "
# An interpreter that is no loader (a program of its own) is never run.
if readelf -lW /bin/ls 2>/dev/null | grep -q 'Requesting program interpreter'; then
	cc_link "$W/oddinterp" "$W/gone.c" -Wl,--dynamic-linker=/bin/ls -Wl,-e,gone_fn -nostartfiles
	t odd -- "$TOOL" status --explain --no-probe "$W/oddinterp"
	expect_rc 0
	expect_out "^- $W/oddinterp: its loader /bin/ls is not a loader \\(it has an interpreter of its own\\): not run to find its libraries; only the program and its interpreter are counted\$"
fi

# A program built with gcc's -fsanitize=address (the shared runtime
# libasan.so): the sentence that a preloaded library stops it, and its
# advice, checked: preloaded it exits 1 saying so, with the advice it runs.
printf '#include <stdio.h>\nint main(void) { puts("asan ok"); return 0; }\n' >"$W/asan.c"
if gcc -fsanitize=address -o "$W/asanprog" "$W/asan.c" 2>"$W/asan.err" && readelf -d "$W/asanprog" | grep -q 'NEEDED.*libasan\.so'; then
	t asan -- "$TOOL" status --explain --no-probe "$W/asanprog"
	expect_rc 0
	expect_out "^- $W/asanprog loads the shared AddressSanitizer runtime \(libasan\.so\.[0-9]+\), which stops the program at start when another library is preloaded before it .*: run it with ASAN_OPTIONS=verify_asan_link_order=0 in its environment: \`ASAN_OPTIONS=verify_asan_link_order=0 enormoustext run -- $W/asanprog\`\$"
	case " ${TT_CFLAGS:-} " in
	*sanitize*) note "a sanitized library: the advice is checked in the plain build" ;;
	*)
		t asan_pre LD_PRELOAD="$TT_LIB" -- "$W/asanprog"
		expect_rc 1 "an ASan program with the library preloaded"
		grep -q 'ASan runtime does not come first' "$ERR" || fail "the ASan program did not say why it stopped: $(head -2 "$ERR")"
		t asan_ok LD_PRELOAD="$TT_LIB" ASAN_OPTIONS=verify_asan_link_order=0 -- "$W/asanprog"
		expect_rc 0 "the ASan program with the advice"
		expect_out "^asan ok\$"
		;;
	esac
else
	note "gcc cannot build with -fsanitize=address here ($(head -1 "$W/asan.err")): the ASan sentence is not checked"
fi

# A PROGRAM without a slash is found along PATH, as `run` finds it (one
# search for both: spawn.c's et_tool_which): the first directory of PATH
# that has it, not the current directory.
pb=$W/pbin pb2=$W/pbin2
mkdir -p "$pb" "$pb2" "$W/cwd"
cp "$HOLD" "$pb2/etprog"; cp "$HOLD" "$pb/etprog"; cp "$HOLD" "$pb/etinterp"; cp "$HOLD" "$W/cwd/etlocal"
# shellcheck disable=SC2016 # $0 is the script's own
printf '#!/bin/sh\necho "ran $0"\n' >"$pb2/etwhich"; chmod +x "$pb2/etwhich"
P=$pb:$pb2:/usr/bin:/bin
t inpath PATH="$P" -- "$TOOL" status --explain --no-probe etprog
expect_rc 0; expect_no_err
expect_out "^for $pb/etprog:\$"
t inpathjson PATH="$P" -- "$TOOL" status --json --explain --no-probe etprog
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" .explain.program.path)" = "$pb/etprog" ] || fail "--explain etprog explains $(jget "$OUT.flat" .explain.program.path), not $pb/etprog (the first along PATH)"
[ "$(jneed "$OUT.flat" .script)" = null ] || fail ".script is not null for an ELF program"
# run finds what status finds: the same search
t runpath PATH="$P" -- "$TOOL" run -- etwhich
expect_rc 0; expect_out "^ran $pb2/etwhich\$"
t whichscript PATH="$P" -- "$TOOL" status --explain --no-probe etwhich
expect_rc 0; expect_out "^$pb2/etwhich is a script run by /bin/sh: what follows is for /bin/sh, "
# not along PATH: one line; the file of that name here is named, not taken
cd "$W/cwd" || fail "cd $W/cwd"
t local PATH="$P" -- "$TOOL" status --explain --no-probe etlocal
cd - >/dev/null || fail "cd back"
expect_bad 1 "a PROGRAM here but not along PATH" "^enormoustext status: --explain etlocal: not found along PATH \(.*the one here is \./etlocal\)\$"
t nowhere PATH="$P" -- "$TOOL" status --explain --no-probe etnosuch
expect_bad 1 "a PROGRAM found nowhere" "^enormoustext status: --explain etnosuch: not found along PATH\$"

# A script (#! line) is explained by what runs it, saying so: the
# interpreter it names, env's PROGRAM found along PATH, an interpreter
# that is a script itself (as the kernel follows it).
env=$(command -v env)
printf '#!%s etinterp\nbody\n' "$env" >"$W/viaenv"
printf '#!%s -S etinterp -u\n' "$env" >"$W/viaenvs"
printf '#!%s  -x \n' "$pb/etinterp" >"$W/direct"
printf '#!%s\n' "$W/direct" >"$W/nested"
chmod +x "$W/viaenv" "$W/viaenvs" "$W/direct" "$W/nested"
t viaenv PATH="$P" -- "$TOOL" status --explain --no-probe "$W/viaenv"
expect_rc 0; expect_no_err
head -1 "$OUT" | grep -qxF "$W/viaenv is a script run by $pb/etinterp (its line '#!$env etinterp': env finds etinterp along PATH): what follows is for $pb/etinterp, which the library is loaded into when the script runs" ||
	fail "a script run by env: the first line is not the one expected"
expect_out "^for $pb/etinterp:\$"
grep -q "not an ELF" "$OUT" "$ERR" && fail "a script is said to be no ELF file"
t viaenvjson PATH="$P" -- "$TOOL" status --json --explain --no-probe "$W/viaenv"
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" .script.path)" = "$W/viaenv" ] || fail ".script.path"
[ "$(jneed "$OUT.flat" .script.interpreter)" = "$env" ] || fail ".script.interpreter is not $env"
[ "$(jneed "$OUT.flat" .script.program)" = "$pb/etinterp" ] || fail ".script.program is not $pb/etinterp"
[ "$(jneed "$OUT.flat" .script.line)" = "#!$env etinterp" ] || fail ".script.line"
[ "$(jneed "$OUT.flat" .explain.program.path)" = "$pb/etinterp" ] || fail "the program explained is not the interpreter"
t viaenvs PATH="$P" -- "$TOOL" status --explain --no-probe "$W/viaenvs"
expect_rc 0; expect_out "^$W/viaenvs is a script run by $pb/etinterp \(its line '#!$env -S etinterp -u': env finds etinterp along PATH\)"
t direct -- "$TOOL" status --explain --no-probe "$W/direct"
expect_rc 0; expect_out "^$W/direct is a script run by $pb/etinterp: what follows is for $pb/etinterp, "
expect_out "^for $pb/etinterp:\$"
t nested -- "$TOOL" status --json --explain --no-probe "$W/nested"
expect_rc 0; json "$OUT"
[ "$(jget "$OUT.flat" '.script.chain[0]') $(jget "$OUT.flat" '.script.chain[1]')" = "$W/direct $pb/etinterp" ] ||
	fail "the nested script's chain is not $W/direct, $pb/etinterp"
[ "$(jneed "$OUT.flat" .explain.program.path)" = "$pb/etinterp" ] || fail "the nested script: not its last interpreter explained"
# scripts whose line names nothing that runs: one line each, status 1
printf '#!%s etnosuch\n' "$env" >"$W/envgone"
printf '#!%s/nosuch\n' "$W" >"$W/interpgone"
printf '#!\n' >"$W/emptyline"
t envgone PATH="$P" -- "$TOOL" status --explain --no-probe "$W/envgone"
expect_bad 1 "a script whose env PROGRAM is nowhere" "^enormoustext status: --explain $W/envgone: a script run by $env etnosuch .*env finds no etnosuch along PATH\$"
t interpgone -- "$TOOL" status --explain --no-probe "$W/interpgone"
expect_bad 1 "a script whose interpreter is missing" "^enormoustext status: --explain $W/interpgone: a script run by $W/nosuch .*: No such file or directory\$"
t emptyline -- "$TOOL" status --explain --no-probe "$W/emptyline"
expect_bad 1 "a script whose line is empty" "^enormoustext status: --explain $W/emptyline: a script whose line '#!' names no program to run\$"
printf '#!/bin/sh\r\necho\r\n' >"$W/dosline"
printf '#!%s etinterp\r\n' "$env" >"$W/dosenv"
for f in dosline dosenv; do
	t "$f" PATH="$P" -- "$TOOL" status --explain --no-probe "$W/$f"
	expect_bad 1 "a script with DOS line ends" "^enormoustext status: --explain $W/$f: its line '#![^']*' ends in a carriage return \\(DOS line ends\\): .*there is none\$"
	tr -d '\r' <"$ERR" | cmp -s - "$ERR" || fail "$f: the error line holds a carriage return"
done

# Bad input.
t missing -- "$TOOL" status --explain "$W/nope"
expect_bad 1 "a PROGRAM that does not exist" "$W/nope: No such file or directory"
t dir -- "$TOOL" status --explain "$W"
expect_bad 1 "a PROGRAM that is a directory" "$W: not a regular file"
t notelf -- "$TOOL" status --explain "$W/main.c"
expect_bad 1 "a PROGRAM that is not ELF" "main.c: not an ELF file"
t noexplain -- "$TOOL" status /bin/ls
expect_bad 2 "a PROGRAM without --explain" "unexpected argument '/bin/ls' \\(a PROGRAM goes with --explain\\)"

pass
