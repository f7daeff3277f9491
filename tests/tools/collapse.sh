#!/bin/bash
# tool_collapse — `collapse`: a running JIT (tt_jit: 8 MiB of anonymous code,
# made read+execute, on small pages) collapsed from outside: its smaps, read
# here, goes from 0 to whole huge pages, the command's figures are smaps',
# and every generated function still returns what it should; --dry-run
# changes nothing; --watch collapses the code a growing JIT adds and ends
# when it exits; a bad, unknown or nonexistent PID, an unknown option, a
# missing profile: one line naming it, status 2 (usage) or 1 (no such
# process, no such file); as nobody, the error names
# CAP_SYS_NICE (own process) or ptrace access (root's), status 1; a
# file-backed text range: collapsed, or stayed small with the kernel's
# reason (this kernel: EINVAL, no CONFIG_READ_ONLY_THP_FOR_FS), either way
# as smaps says; --profile picks the hot window of a file.
. "$(dirname "$0")/lib.sh"

JIT=$TT_BIN/tt_jit
[ -x "$JIT" ] || fail "$JIT is missing: build the tool_tests target"

# What the command needs of the kernel: MADV_COLLAPSE (6.1), tried here.
t probe -- "$TOOL" status --json
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" .probes.collapse.works)" = true ] ||
	skip "MADV_COLLAPSE does not work here: $(jneed "$OUT.flat" .probes.collapse.detail)"

# start_jit NAME [PREFIX...]: tt_jit --wait in the background (through the
# prefix, e.g. tt_asuser, which execs it); its pid in $JPID, its code in
# [$CLO, $CHI) (hexadecimal, no 0x).
start_jit() {
	local name=$1
	shift
	start_hold "$name" "$@" -- "$JIT"
	JPID=$HPID
	read -r CLO CHI < <(awk '$1 == "code" { sub(/^0x/, "", $2); sub(/^0x/, "", $3); print $2, $3; exit }' "$W/$name.hold.out")
	[ -n "$CLO" ] || fail "tt_jit ($name) printed no code line"
	echo "-- tt_jit $name: code $CLO-$CHI"
}
# end_jit NAME PID: SIGUSR1 makes it call every function again; it must
# exit 0 having found them all right.
end_jit() {
	local rc
	kill -USR1 "$2" 2>/dev/null
	wait "$2"
	rc=$?
	sed 's/^/   tt_jit| /' "$W/$1.hold.out"
	[ "$rc" -eq 0 ] || fail "tt_jit ($1) exited $rc after the collapse: $(tail -3 "$W/$1.hold.out")"
	grep -q '^checked [0-9]* functions: all right$' "$W/$1.hold.out" || fail "tt_jit ($1) did not check its functions"
}
# kb PID FIELD LO HI: FIELD (AnonHugePages, FilePmdMapped) in kB, summed over
# the mappings of PID that overlap [LO, HI) (hexadecimal): read here, from
# smaps, not through the command.
kb() {
	awk -v F="$2:" -v LO="$3" -v HI="$4" "$AWK_HEX"'
		BEGIN { lo = hex(LO); hi = hex(HI) }
		/^[0-9a-f]+-[0-9a-f]+ / { split($1, r, "-"); in_ = hex(r[1]) < hi && lo < hex(r[2]); next }
		in_ && $1 == F { s += $2 }
		END { print s + 0 }' "/proc/$1/smaps"
}
# windows LO HI: how many whole huge pages lie in [LO, HI).
windows() {
	awk -v LO="$1" -v HI="$2" -v H="$H" "$AWK_HEX"'
		BEGIN { lo = hex(LO); hi = hex(HI); a = int((lo + H - 1) / H) * H; b = int(hi / H) * H; print (b > a) ? (b - a) / H : 0 }'
}

# --- the JIT: dry run first (nothing changes), then the collapse ----------------
start_jit a
A=$JPID; ALO=$CLO; AHI=$CHI
nwin=$(windows "$ALO" "$AHI")
[ "$nwin" -ge 1 ] || fail "tt_jit's code $ALO-$AHI holds no whole huge page"
before=$(kb "$A" AnonHugePages "$ALO" "$AHI")
[ "$before" -eq 0 ] || skip "tt_jit's code is on huge pages already ($before kB AnonHugePages): nothing to show here"
t dry -- "$TOOL" collapse --dry-run --jit "$A"
expect_rc 0 "--dry-run"; expect_no_err "--dry-run"
expect_out "^  $ALO-$AHI anon +$((nwin * 2))M +0 -> \(dry\) +\[anon:jit\]\$" "--dry-run's line for the JIT code"
expect_out "would ask $((nwin * 2))M in 1 mapping\(s\) \(0 of it huge now\); nothing changed \(--dry-run\)"
sleep 0.2
after=$(kb "$A" AnonHugePages "$ALO" "$AHI")
[ "$after" -eq 0 ] || fail "--dry-run changed the target: AnonHugePages of its code $after kB, was 0"
t dryjson -- "$TOOL" collapse --dry-run --jit --json "$A"
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" .dry_run)" = true ] || fail "--dry-run --json: dry_run is not true"
[ "$(jneed "$OUT.flat" '.processes[0].ranges[0].huge_after')" = null ] || fail "--dry-run --json gives a huge_after"
[ "$(kb "$A" AnonHugePages "$ALO" "$AHI")" -eq 0 ] || fail "--dry-run --json changed the target"

t jit -- "$TOOL" collapse --jit "$A"
expect_rc 0 "collapse --jit"; expect_no_err "collapse --jit"
after=$(kb "$A" AnonHugePages "$ALO" "$AHI")
echo "   smaps of $A, $ALO-$AHI: AnonHugePages $before kB before, $after kB after"
[ "$after" -ge 2048 ] || fail "after collapse --jit the code has $after kB AnonHugePages, expected at least 2048"
[ "$after" -eq $((nwin * H / 1024)) ] || fail "after collapse --jit: $after kB huge, expected all $nwin huge pages ($((nwin * H / 1024)) kB)"
expect_out "^  $ALO-$AHI anon +$((nwin * 2))M +0 -> $((nwin * 2))M +\[anon:jit\]\$" "the JIT code's line"
expect_out "^PID $A \(tt_jit\): $((nwin * 2))M asked in 1 mapping\(s\): huge 0 before, $((nwin * 2))M after: all huge\$" "the summary"
# again, as JSON: huge already, the figures smaps'
t again -- "$TOOL" collapse --jit --json "$A"
expect_rc 0; json "$OUT"
i=$(jindex "$OUT.flat" '.processes[0].ranges' start "0x$ALO")
[ -n "$i" ] || fail "--json: no range starting at 0x$ALO"
[ "$(jneed "$OUT.flat" ".processes[0].ranges[$i].huge_after")" = $((after * 1024)) ] || fail "--json huge_after is not smaps' $after kB"
[ "$(jneed "$OUT.flat" ".processes[0].ranges[$i].huge_before")" = $((after * 1024)) ] || fail "--json huge_before (the second time) is not smaps' $after kB"
[ "$(jneed "$OUT.flat" ".processes[0].ranges[$i].huge")" = true ] || fail "--json: huge is not true"
[ "$(jneed "$OUT.flat" ".processes[0].ranges[$i].what")" = "[anon:jit]" ] || fail "--json: what is not [anon:jit]"
[ "$(jneed "$OUT.flat" ".processes[0].pid")" = "$A" ] || fail "--json: pid"
end_jit a "$A"

# --- bad input: one line naming it, status 2 (usage) or 1 (a PID, a file) -------------------------------------
t nan -- "$TOOL" collapse 12x
expect_bad 2 "a PID that is not a number" "'12x' is not a process id"
gone=$(sh -c 'echo $$')
kill -0 "$gone" 2>/dev/null && fail "pid $gone is in use again already"
t nopid -- "$TOOL" collapse "$gone"
expect_bad 1 "a PID of no process" "PID $gone: no such process"
t badopt -- "$TOOL" collapse --frobnicate 1
expect_bad 2 "an unknown option" "unknown option '--frobnicate'"
t none -- "$TOOL" collapse
expect_bad 2 "no PID" "no PID given"
t watch0 -- "$TOOL" collapse --watch 0 1
expect_bad 2 "--watch 0" "--watch takes .*'0'"
t noprof -- "$TOOL" collapse --profile "$W/no.prof" 1
expect_bad 1 "a missing profile" "$W/no.prof: "
t jitprof -- "$TOOL" collapse --jit --profile "$W/no.prof" 1
expect_bad 2 "--jit with --profile" "--jit or --profile"

# --- without the rights: the error says which ---------------------------------------
start_jit b "$TT_BIN/tt_asuser" nobody
B=$JPID
t nobody -- "$TT_BIN/tt_asuser" nobody "$TOOL" collapse --jit "$B"
[ "$RC" -ne 77 ] || skip "tt_asuser cannot switch users here: $(cat "$OUT")"
expect_bad 1 "collapse as nobody (its own process)" "CAP_SYS_NICE"
expect_out "EPERM" "the range's reason"
[ "$(kb "$B" AnonHugePages "$CLO" "$CHI")" -eq 0 ] || fail "as nobody, the target's code became huge"
t nobodyroot -- "$TT_BIN/tt_asuser" nobody "$TOOL" collapse --jit "$$"
expect_bad 1 "collapse as nobody (root's process)" "ptrace read access"
end_jit b "$B"

# --- --watch: a JIT that grows; the watch ends when it exits ---------------------------
start_jit c
C=$JPID
"$TOOL" collapse --jit --watch 0.3 "$C" >"$W/watch.out" 2>"$W/watch.err" &
WPID=$!
PIDS+=("$WPID")
wait_line "$W/watch.out" 'all huge$' 10
grep -q 'all huge$' "$W/watch.out" || fail "--watch: no first round: $(cat "$W/watch.out" "$W/watch.err")"
kill -USR2 "$C"
lines_at_least() { [ "$(grep -c -- "$2" "$1")" -ge "$3" ]; }   # FILE ERE N
wait_until 10 lines_at_least "$W/c.hold.out" '^code ' 2 || true
read -r NLO NHI < <(awk '$1 == "code" { n++; if (n == 2) { sub(/^0x/, "", $2); sub(/^0x/, "", $3); print $2, $3; exit } }' "$W/c.hold.out")
[ -n "$NLO" ] || fail "tt_jit did not grow"
wait_until 10 lines_at_least "$W/watch.out" 'all huge$' 2 || true
# the new code may have merged with the old into one mapping: all of the
# mapping that holds it must be huge
read -r VLO VHI < <(awk -v A="$NLO" "$AWK_HEX"'{ split($1, r, "-"); if (hex(r[1]) <= hex(A) && hex(A) < hex(r[2])) { print r[1], r[2]; exit } }' "/proc/$C/maps")
[ -n "$VLO" ] || fail "no mapping holds tt_jit's new code at $NLO"
new=$(kb "$C" AnonHugePages "$VLO" "$VHI")
want=$(( $(windows "$VLO" "$VHI") * H / 1024 ))
echo "   --watch: the JIT grew by $NLO-$NHI (its mapping now $VLO-$VHI): AnonHugePages $new kB of $want kB"
[ "$new" -ge 2048 ] && [ "$new" -eq "$want" ] || fail "--watch did not collapse the new code $NLO-$NHI ($new kB of $want kB huge): $(cat "$W/watch.out")"
end_jit c "$C"
gone() { ! kill -0 "$1" 2>/dev/null; }
wait_until 5 gone "$WPID" || true
kill -0 "$WPID" 2>/dev/null && fail "--watch still runs after its process exited"
wait "$WPID"
wrc=$?
sed 's/^/   watch| /' "$W/watch.out"
[ -s "$W/watch.err" ] && sed 's/^/   watch stderr| /' "$W/watch.err"
[ "$wrc" -eq 0 ] || fail "--watch exited $wrc"
grep -q "^PID $C (tt_jit): exited\$" "$W/watch.out" || fail "--watch did not say its process exited"
[ "$(grep -c 'executable mappings, huge page size' "$W/watch.out")" -eq 1 ] || fail "--watch printed its whole table more than once (only changes after the first round)"

# --- file-backed text: what this kernel does, said as smaps says -----------------------
mkdir -p "$W/f"
cc_link "$W/f/built" "$TT_SRC/tt_hold.c" -Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code
cp "$W/f/built" "$W/f/hold"     # a copy: its page cache in small pages
start_hold file -- "$W/f/hold"
F=$HPID
read -r FLO FHI < <(awk -v P="$W/f/hold" '$2 ~ /x/ && $6 == P { split($1, r, "-"); print r[1], r[2]; exit }' "/proc/$F/maps")
[ -n "$FLO" ] || fail "no executable mapping of $W/f/hold in its process"
fb=$(kb "$F" FilePmdMapped "$FLO" "$FHI")
t file -- "$TOOL" collapse --json "$F"
[ "$RC" -eq 0 ] || [ "$RC" -eq 1 ] || fail "collapse of file-backed text: exit status $RC"
json "$OUT"
i=$(jindex "$OUT.flat" '.processes[0].ranges' start "0x$FLO")
[ -n "$i" ] || fail "--json: no range for $W/f/hold at 0x$FLO"
fa=$(kb "$F" FilePmdMapped "$FLO" "$FHI")
asked=$(jneed "$OUT.flat" ".processes[0].ranges[$i].asked_bytes")
huge=$(jneed "$OUT.flat" ".processes[0].ranges[$i].huge")
reason=$(jneed "$OUT.flat" ".processes[0].ranges[$i].reason")
echo "   file-backed $FLO-$FHI: FilePmdMapped $fb kB before, $fa kB after; asked $asked bytes; huge $huge; reason: $reason"
[ "$(jneed "$OUT.flat" ".processes[0].ranges[$i].huge_after")" = $((fa * 1024)) ] || fail "file range: huge_after is not smaps' $fa kB"
if [ "$huge" = true ]; then
	[ $((fa * 1024)) -ge "$asked" ] || fail "file range said huge, but smaps has $fa kB FilePmdMapped of $asked bytes asked"
	[ "$RC" -eq 0 ] || fail "file range huge, but exit status $RC"
	note "this kernel collapsed file-backed text ($fa kB FilePmdMapped)"
else
	[ "$reason" != null ] || fail "file range stayed small without a reason"
	[ "$(jneed "$OUT.flat" ".processes[0].ranges[$i].errno")" != null ] || fail "file range stayed small without an errno"
	[ "$RC" -eq 1 ] || fail "file range stayed small, but exit status $RC"
	note "this kernel left file-backed text small: $reason"
	t filetext -- "$TOOL" collapse "$F"
	expect_rc 1
	expect_out "^      stayed small \([0-9]+ of [0-9]+ windows failed\): " "the reason line"
	expect_out "stayed small: $FLO-$FHI \(" "the summary naming the range"
fi
kill -0 "$F" 2>/dev/null || fail "the file-backed process died"

# --- --profile: only the window it names hot ---------------------------------------
bid=$(readelf -n "$W/f/hold" | awk '/Build ID/ { print $3; exit }')
if [ -n "$bid" ] && [ "$asked" -ge $((2 * H)) ]; then
	# the text's second whole window, in the file's own (ELF) addresses
	off=$(awk -v P="$W/f/hold" '$2 ~ /x/ && $6 == P { print $3; exit }' "/proc/$F/maps")
	read -r poff pva _ < <(seg_x "$W/f/hold")
	lo=$(( (16#$FLO + H - 1) / H * H ))
	hot=$(printf '%x' $(( lo + H + 4096 - 16#$FLO + 16#$off - poff + pva )))
	printf 'enormoustext-profile 1\ngranule 64\nobject %s %s\n%s 50\n' "$bid" "$W/f/hold" "$hot" >"$W/hot.prof"
	t prof -- "$TOOL" collapse --dry-run --profile "$W/hot.prof" "$F"
	expect_rc 0 "--profile --dry-run"
	expect_out "^  $FLO-$FHI file +2M " "--profile: one window asked"
	expect_out "^      1 of $((asked / H)) windows hot in the profile\$"
	printf 'enormoustext-profile 1\ngranule 64\nobject 00112233 /other\n1000 5\n' >"$W/other.prof"
	t profother -- "$TOOL" collapse --dry-run --profile "$W/other.prof" "$F"
	expect_rc 0
	expect_out "left out: not in the profile" "a file the profile does not have"
else
	note "--profile not tried: no build-id or fewer than 2 windows"
fi
stop_hold file "$F"

pass
