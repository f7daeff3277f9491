#!/bin/bash
# tool_stat_prometheus — `stat --prometheus`: node_exporter's textfile format,
# read back by real parsers (python3-prometheus-client's, and promtool's
# `check metrics`): every family with # HELP and # TYPE, its samples
# together, no series twice; a process whose text the library moved has the
# huge bytes its smaps has (summed here), by kind; the THP mode is sysfs's;
# a path and a command name with a quote, a backslash and a newline come
# back as they are; the counts of processes read and unreadable (a copy of
# /proc with one that ended and one that cannot be read) and the vmstat
# counters of that copy; -o writes beside and renames in (strace), a new
# file readable by others (0644: node_exporter runs as another user), and a
# bad -o is refused naming it, with nothing written.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3   # Debian's, with its dist-packages (not a pyenv shim)
"$PY" -c 'import prometheus_client.parser' 2>/dev/null ||
	skip "python3-prometheus-client is not installed (tools/run-tests installs it)"
command -v promtool >/dev/null || skip "promtool is not installed (package prometheus; tools/run-tests installs it)"
umask 022

# check.py FILE [ASSERTION...]: parsed by prometheus_client; the format's
# rules checked on the text itself; then each assertion
#   NAME{l=v,...}=VALUE    one sample has these labels (and maybe more), it has VALUE
#   NAME{l=v,...}#N        N samples have at least these labels
# (label values as JSON strings, so that any character can be said).
cat >"$W/check.py" <<'EOF'
import json, re, sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1], encoding="utf-8").read()
def die(msg):
    print("check.py: " + msg); sys.exit(1)
fams = list(text_string_to_metric_families(text))
if not fams:
    die("no metric family")
samples = {}
for f in fams:
    if not f.documentation:
        die("family %s has no HELP" % f.name)
    if f.type not in ("gauge", "counter"):
        die("family %s has type %s (no TYPE line?)" % (f.name, f.type))
    if not f.name.startswith("enormoustext_"):
        die("family %s has no enormoustext_ prefix" % f.name)
    for s in f.samples:
        key = (s.name, tuple(sorted(s.labels.items())))
        if key in samples:
            die("series %s%s twice" % (s.name, dict(key[1])))
        samples[key] = s.value
# The text: HELP then TYPE then the family's samples, each family once.
seen, cur, state = set(), None, None
for line in text.split("\n"):
    if not line:
        continue
    m = re.match(r"# (HELP|TYPE) (\S+)", line)
    if m:
        if m.group(1) == "HELP":
            if m.group(2) in seen:
                die("family %s comes twice" % m.group(2))
            seen.add(m.group(2)); cur, state = m.group(2), "help"
        elif m.group(2) != cur or state != "help":
            die("TYPE of %s is not right after its HELP" % m.group(2))
        else:
            state = "type"
        continue
    name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
    if name != cur or state != "type":
        die("sample %s outside its family (after %s)" % (name, cur))
print("check.py: %d families, %d series" % (len(fams), len(samples)))
for a in sys.argv[2:]:
    m = re.match(r"(\w+)\{(.*)\}(=|#)(.*)$", a, re.S)
    name, want = m.group(1), {}
    for kv in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*")', m.group(2)):
        want[kv[0]] = json.loads(kv[1])
    hits = [(dict(k[1]), v) for k, v in samples.items() if k[0] == name and all(dict(k[1]).get(x) == y for x, y in want.items())]
    if m.group(3) == "#":
        if len(hits) != int(m.group(4)):
            die("%s%s: %d samples, expected %s" % (name, want, len(hits), m.group(4)))
        continue
    exact = [v for l, v in hits]
    if len(exact) != 1:
        die("%s%s: %d samples with these labels, expected 1" % (name, want, len(hits)))
    if exact[0] != float(m.group(4)):
        die("%s%s = %.0f, expected %s" % (name, want, exact[0], m.group(4)))
    print("check.py: %s%s = %s" % (name, want, m.group(4)))
EOF
py() { "$PY" "$W/check.py" "$@" || fail "the metrics in $1 do not pass: see above"; }
# q STRING: it as a JSON string (for check.py's labels).
q() { "$PY" -c 'import json, sys; print(json.dumps(sys.argv[1]), end="")' "$1"; }

# A program with moved text, and a copy of it under a name with a quote, a
# backslash, a space and a newline (its command name is that name: < 16 bytes).
fresh a
start_hold lib "$TOOL" run -- "$F"
LPID=$HPID
odd_dir="$W/odd dir"
odd_name=$'tt "q\\b\nn'
mkdir -p "$odd_dir" && cp "$HOLD" "$odd_dir/$odd_name" || fail "cannot copy $HOLD under an odd name"
ODD="$odd_dir/$odd_name"
start_hold odd "$TOOL" run -- "$ODD"
OPID=$HPID
[ "$(cat "/proc/$OPID/comm")" = "$odd_name" ] || fail "the odd copy's command name is not its file name: $(cat -A "/proc/$OPID/comm")"

kind_sum() {   # kind_sum SMAPS FIELD...: the executable mappings' FIELDs, bytes
	local sm=$1; shift
	awk -v F="$*" 'BEGIN { n = split(F, f, " "); for (i = 1; i <= n; i++) want[f[i] ":"] = 1 }
		/^[0-9a-f]+-[0-9a-f]+ / { x = (substr($2, 3, 1) == "x"); next }
		x && ($1 in want) { s += $2 * 1024 } END { printf "%.0f\n", s }' "$sm"
}
# smaps writes the newline as \012; awk -v reads backslashes as escapes
odd_smaps=${ODD//$'\n'/\\012}
odd_smaps=${odd_smaps//\\/\\\\}
# figures SMAPS ODDSMAPS: what the test wants of the two programs, one line
figures() {
	echo "$(smaps_text_totals "$1") $(smaps_object "$1" "$F")" \
		"$(kind_sum "$1" AnonHugePages) $(kind_sum "$1" FilePmdMapped) $(kind_sum "$1" ShmemPmdMapped)" \
		"$(kind_sum "$1" Private_Hugetlb Shared_Hugetlb) $(smaps_object "$2" "$odd_smaps")"
}

# --all, and the figures from smaps before and after (the same, or the
# test cannot tell what stat saw).
cp "/proc/$LPID/smaps" "$W/smaps.1"; cp "/proc/$OPID/smaps" "$W/odd.smaps.1"
t all -- "$TOOL" stat --prometheus --all
expect_rc 0; expect_no_err
cp "$OUT" "$W/all.prom"
cp "/proc/$LPID/smaps" "$W/smaps.2"; cp "/proc/$OPID/smaps" "$W/odd.smaps.2"
fig=$(figures "$W/smaps.1" "$W/odd.smaps.1")
[ "$fig" = "$(figures "$W/smaps.2" "$W/odd.smaps.2")" ] ||
	fail "the test programs' huge text changed while stat read it: run again"
read -r ptext phuge otext ocopied ohuge panon pfile pshm ptlb odtext _ odhuge <<<"$fig"
echo "-- promtool check metrics <all.prom"
promtool check metrics <"$W/all.prom" >"$W/promtool.out" 2>&1 || fail "promtool check metrics: $(head -5 "$W/promtool.out")"
[ ! -s "$W/promtool.out" ] || fail "promtool check metrics has something to say: $(head -5 "$W/promtool.out")"

[ "$ohuge" -ge "$H" ] || fail "the library moved nothing of $F ($ohuge bytes huge): the test has no huge text to see"
[ "$odhuge" -ge "$H" ] || fail "the library moved nothing of the odd copy"
[ $((panon + pfile + ptlb + pshm)) = "$phuge" ] || fail "the kinds do not add up in smaps ($panon + $pfile + $ptlb + $pshm != $phuge)"
note "smaps of $LPID: text $ptext, huge $phuge (anon $panon, file $pfile, hugetlb $ptlb); $F: text $otext, huge $ohuge"
thp=$(choice /sys/kernel/mm/transparent_hugepage/enabled)
defrag=$(choice /sys/kernel/mm/transparent_hugepage/defrag)
[ -n "$thp" ] && [ -n "$defrag" ] || fail "cannot read the THP mode from sysfs"
oq=$(q "$ODD"); cq=$(q "$odd_name")
py "$W/all.prom" \
	"enormoustext_process_text_bytes{pid=\"$LPID\",comm=\"tt_hold\"}=$ptext" \
	"enormoustext_process_huge_bytes{pid=\"$LPID\",comm=\"tt_hold\",kind=\"anon\"}=$panon" \
	"enormoustext_process_huge_bytes{pid=\"$LPID\",comm=\"tt_hold\",kind=\"file\"}=$pfile" \
	"enormoustext_process_huge_bytes{pid=\"$LPID\",comm=\"tt_hold\",kind=\"shmem\"}=$pshm" \
	"enormoustext_process_huge_bytes{pid=\"$LPID\",comm=\"tt_hold\",kind=\"hugetlb\"}=$ptlb" \
	"enormoustext_object_text_bytes{pid=\"$LPID\",comm=\"tt_hold\",object=$(q "$F")}=$otext" \
	"enormoustext_object_copied_text_bytes{pid=\"$LPID\",comm=\"tt_hold\",object=$(q "$F")}=$ocopied" \
	"enormoustext_object_huge_bytes{pid=\"$LPID\",comm=\"tt_hold\",object=$(q "$F")}#4" \
	"enormoustext_object_huge_bytes{pid=\"$OPID\",comm=$cq,object=$oq}#4" \
	"enormoustext_object_text_bytes{pid=\"$OPID\",comm=$cq,object=$oq}=$odtext" \
	"enormoustext_thp_enabled_info{mode=\"$thp\"}=1" \
	"enormoustext_thp_enabled_info{}#1" \
	"enormoustext_thp_defrag_info{mode=\"$defrag\"}=1" \
	"enormoustext_pmd_size_bytes{}=$H" \
	"enormoustext_processes_unreadable{}#1"
# The object's huge bytes: the four kinds add up to what smaps says.
"$PY" - "$W/all.prom" "$LPID" "$F" "$ohuge" "$OPID" "$ODD" "$odhuge" <<'EOF' || fail "an object's huge bytes are not its smaps's"
import sys
from prometheus_client.parser import text_string_to_metric_families
f = {m.name: m for m in text_string_to_metric_families(open(sys.argv[1], encoding="utf-8").read())}
for pid, path, want in ((sys.argv[2], sys.argv[3], sys.argv[4]), (sys.argv[5], sys.argv[6], sys.argv[7])):
    got = sum(s.value for s in f["enormoustext_object_huge_bytes"].samples
              if s.labels["pid"] == pid and s.labels["object"] == path)
    print("object huge bytes of %s %r: %.0f (smaps %s)" % (pid, path, got, want))
    if got != float(want):
        sys.exit(1)
EOF
# The vmstat counters: every thp_* of /proc/vmstat, as a counter.
nthp=$(grep -c '^thp_' /proc/vmstat)
[ "$nthp" -gt 0 ] || fail "no thp_ line in /proc/vmstat"
[ "$(grep -c '^# TYPE enormoustext_vmstat_thp_[a-z_]*_total counter$' "$W/all.prom")" = "$nthp" ] ||
	fail "not the $nthp thp_ counters of /proc/vmstat"
grep -q '^enormoustext_vmstat_nr_anon_transparent_hugepages [0-9]*$' "$W/all.prom" || fail "no nr_anon_transparent_hugepages"

# PIDs given: those only; --summary leaves the objects out.
t pids -- "$TOOL" stat --prometheus --summary "$LPID"
expect_rc 0; expect_no_err
py "$OUT" "enormoustext_process_text_bytes{}#1" "enormoustext_processes{}=1" "enormoustext_processes_unreadable{}=0"
grep -q '^enormoustext_object_' "$OUT" && fail "--summary wrote objects"

# A copy of /proc: one process read, one that ended (no smaps: not
# counted), one that cannot be read (its smaps a directory: counted);
# vmstat from the copy.
P=$W/proc
mkdir -p "$P/100" "$P/200" "$P/300/smaps"
cp "$W/smaps.1" "$P/100/smaps"; echo "tt_hold" >"$P/100/comm"; echo gone >"$P/200/comm"; echo bad >"$P/300/comm"
printf 'nr_anon_transparent_hugepages 7\nthp_fault_alloc 123456789012\nthp_collapse_alloc 5\npgfault 99\n' >"$P/vmstat"
t copy -- "$TOOL" stat --prometheus --proc "$P" --all
expect_rc 0; expect_no_err
py "$OUT" "enormoustext_processes{}=1" "enormoustext_processes_unreadable{}=1" \
	"enormoustext_process_text_bytes{pid=\"100\",comm=\"tt_hold\"}=$ptext" \
	"enormoustext_vmstat_thp_fault_alloc_total{}=123456789012" \
	"enormoustext_vmstat_thp_collapse_alloc_total{}=5" \
	"enormoustext_vmstat_nr_anon_transparent_hugepages{}=7"
grep -q pgfault "$OUT" && fail "a vmstat counter that is no huge page's was written"

# -o: a temporary beside it, renamed in; 0644; an old file replaced whole.
mkdir "$W/tf"
# (LeakSanitizer cannot run under ptrace: an ASan build of the command
# leaves leak checking to the runs above)
t out ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" -- \
	strace -f -e trace=openat,rename,renameat,renameat2 -o "$W/strace" -- "$TOOL" stat --prometheus -o "$W/tf/m.prom" "$LPID"
expect_rc 0; expect_no_out
[ -s "$W/tf/m.prom" ] || fail "-o wrote nothing"
py "$W/tf/m.prom" "enormoustext_process_text_bytes{pid=\"$LPID\"}=$ptext"
[ "$(stat -c %a "$W/tf/m.prom")" = 644 ] || fail "-o made a file of mode $(stat -c %a "$W/tf/m.prom"), expected 644 (umask 022)"
grep -E "openat\(.*\"$W/tf/\.m\.prom\.[0-9a-f]{12}\.tmp\", O_WRONLY\|O_CREAT\|O_EXCL" "$W/strace" >/dev/null ||
	fail "-o did not create a temporary beside the file: $(grep -F "$W/tf" "$W/strace")"
grep -E "rename(at2?)?\(.*\"$W/tf/\.m\.prom\.[0-9a-f]{12}\.tmp\", .*\"$W/tf/m\.prom\"" "$W/strace" >/dev/null ||
	fail "-o did not rename the temporary into place: $(grep -F "$W/tf" "$W/strace")"
grep -E "openat\(.*\"$W/tf/m\.prom\", O_WRONLY" "$W/strace" && fail "-o opened the file itself for writing"
[ "$(ls -A "$W/tf")" = m.prom ] || fail "-o left something beside the file: $(ls -A "$W/tf")"
ino=$(stat -c %i "$W/tf/m.prom")
t again -- "$TOOL" stat --prometheus -o "$W/tf/m.prom" --all
expect_rc 0; expect_no_out; expect_no_err
[ "$(stat -c %i "$W/tf/m.prom")" != "$ino" ] || fail "the second -o wrote into the old file instead of replacing it"
py "$W/tf/m.prom" "enormoustext_thp_enabled_info{mode=\"$thp\"}=1"

# A bad -o: refused naming it, nothing written, nothing read.
before=$(ls -A "$W" | sort)
t nodir -- "$TOOL" stat --prometheus -o "$W/nodir/m.prom" --all
expect_bad 1 "-o in a missing directory" "^enormoustext stat: $W/nodir/m\\.prom: "
expect_no_out
[ ! -e "$W/nodir" ] || fail "-o in a missing directory made it"
t isdir -- "$TOOL" stat --prometheus -o "$W/tf" "$LPID"
expect_bad 1 "-o a directory" "^enormoustext stat: $W/tf: a directory"
expect_no_out
[ "$(ls -A "$W/tf")" = m.prom ] || fail "-o a directory wrote into it: $(ls -A "$W/tf")"
after=$(ls -A "$W" | sort)
[ "$(echo "$before" | grep -vE '\.(out|err)$')" = "$(echo "$after" | grep -vE '\.(out|err)$')" ] ||
	fail "a refused -o left something: $(diff <(echo "$before") <(echo "$after"))"
t both -- "$TOOL" stat --prometheus --json "$LPID"
expect_bad 2 "--json with --prometheus" "give --(json or --prometheus|prometheus or --json), not both"
t noarg -- "$TOOL" stat --prometheus -o
expect_rc 2

stop_hold lib "$LPID"
stop_hold odd "$OPID"
pass
