#!/bin/bash
# tool_enable — `enable UNIT` / `disable UNIT` under --root: the drop-in's
# exact content (the library `run` uses, --env values as the library's
# parser takes them, %-escaping), written beside and renamed in (a new
# inode, no temporary left), a foreign file at the path refused and left
# byte for byte, disable removing exactly that file (and UNIT.d only when
# empty), --dry-run writing nothing, --prime's ExecStartPre naming the
# unit's program and the libraries the loader finds (checked against ldd),
# bad unit names and bad --env refused naming the input.  A real systemd
# cannot be checked here when it is not PID 1: the test says so.
. "$(dirname "$0")/lib.sh"

R=$W/root
mkdir -p "$R"
# the units enabled here exist in the tree's /usr/lib (a unit nobody knows
# draws a warning: tool_enable_edges)
mkdir -p "$R/usr/lib/systemd/system"
for u in mariadb redis; do printf '[Service]\nExecStart=/bin/true\n' >"$R/usr/lib/systemd/system/$u.service"; done
D=$R/etc/systemd/system/mariadb.service.d
DROP=$D/enormoustext.conf
pid1=$(ps -p 1 -o comm= 2>/dev/null)
[ "$pid1" = systemd ] || note "PID 1 is '$pid1', not systemd: daemon-reload and a real unit are not checked here"
lib=$("$TOOL" run --dry-run -- true | sed -n 's/^LD_PRELOAD=//p')
[ -f "$lib" ] || fail "cannot tell which library run uses ($lib)"

# --- dry run: prints the file and the path, writes nothing
t dry -- "$TOOL" enable mariadb --root "$R" --dry-run --env VERBOSE=1
expect_rc 0 "enable --dry-run"
expect_out "^would write $DROP:\$"
expect_out "^Environment=LD_PRELOAD=$lib\$"
[ -z "$(find "$R" -mindepth 1 -not -path "$R/usr*")" ] || fail "--dry-run wrote: $(find "$R" -mindepth 1 -not -path "$R/usr*" | head -3)"

# --- the drop-in
t en -- "$TOOL" enable mariadb --root "$R" --env VERBOSE=1 --env ENORMOUSTEXT_REPORT=/run/mysqld/et-%p.json --env 'INCLUDE=*/my sql/*'
expect_rc 0 "enable mariadb"
expect_out "^wrote $DROP\$"
expect_out "daemon-reload"
expect_out "restart .*mariadb.service"
[ -f "$DROP" ] || fail "no $DROP"
head -1 "$DROP" | grep -q '^# enormoustext enable:' || fail "the drop-in's first line is not the marker: $(head -1 "$DROP")"
sed -n '2,$p' "$DROP" | grep -v '^#' >"$W/body"
printf '%s\n' '[Service]' "Environment=LD_PRELOAD=$lib" 'Environment="ENORMOUSTEXT_INCLUDE=*/my sql/*"' \
	'Environment=ENORMOUSTEXT_VERBOSE=1' 'Environment=ENORMOUSTEXT_REPORT=/run/mysqld/et-%%p.json' >"$W/want"
sort "$W/body" >"$W/body.s"; sort "$W/want" >"$W/want.s"
cmp -s "$W/body.s" "$W/want.s" || fail "drop-in content: $(diff "$W/want.s" "$W/body.s")"
[ "$(stat -c %a "$DROP")" = 644 ] || fail "the drop-in is mode $(stat -c %a "$DROP"), expected 644"
if command -v systemd-analyze >/dev/null; then
	{ printf '[Unit]\nDescription=check\n[Service]\nExecStart=/bin/true\n'; sed -n '/^\[Service\]/,$p' "$DROP" | tail -n +2; } >"$W/et-check.service"
	t verify -- systemd-analyze verify "$W/et-check.service"
	expect_rc 0 "systemd-analyze verify of the drop-in's lines"
	[ ! -s "$ERR" ] || fail "systemd-analyze has something to say: $(head -3 "$ERR")"
fi

# --- written again: renamed in (a new inode), no temporary left, same bytes
ino=$(stat -c %i "$DROP"); cp "$DROP" "$W/first"
t again -- "$TOOL" enable mariadb.service --root "$R" --env VERBOSE=1 --env ENORMOUSTEXT_REPORT=/run/mysqld/et-%p.json --env 'INCLUDE=*/my sql/*'
expect_rc 0 "enable again (its own file)"
[ "$(stat -c %i "$DROP")" != "$ino" ] || fail "rewritten in place (same inode $ino): not renamed in"
cmp -s "$DROP" "$W/first" || fail "the same options wrote another file"
[ "$(find "$D" -mindepth 1 | wc -l)" = 1 ] || fail "something besides the drop-in in $D: $(ls -A "$D")"

# --- --env refused, naming the input; nothing changed
for bad in 'VERBOS=1|VERBOS.*did you mean ENORMOUSTEXT_VERBOSE' 'VERBOSE=7|VERBOSE=7.*accepts' \
	'MIN_BYTES=lots|MIN_BYTES=lots' 'noequals|noequals.*NAME=VALUE' 'ENORMOUSTEXT_LIB=/x|ENORMOUSTEXT_LIB is not a variable'; do
	t badenv -- "$TOOL" enable mariadb --root "$R" --env "${bad%%|*}"
	expect_bad 2 "--env ${bad%%|*}" "${bad#*|}"
	cmp -s "$DROP" "$W/first" || fail "a refused --env changed the drop-in"
done
t twice -- "$TOOL" enable mariadb --root "$R" --env VERBOSE=1 --env VERBOSE=2
expect_bad 2 "--env given twice" "VERBOSE.*twice"

# --- unit names systemd refuses
for bad in 'a/b|a/b.*/' '@x|@x' 'x.socket|socket' 'a@b@c|more than one' "$(printf 'x%.0s' $(seq 1 260))|255"; do
	t badunit -- "$TOOL" enable "${bad%%|*}" --root "$R"
	expect_bad 2 "unit ${bad%%|*}" "${bad#*|}"
done
[ "$(find "$R" -type f -not -path "$R/usr*" | wc -l)" = 1 ] || fail "a refused unit name wrote a file: $(find "$R" -type f -not -path "$R/usr*")"

# --- a foreign file at the path: never replaced nor removed
F=$R/etc/systemd/system/redis.service.d/enormoustext.conf
mkdir -p "${F%/*}"; printf '[Service]\nEnvironment=FOO=bar\n' >"$F"; cp "$F" "$W/foreign"
t foreign -- "$TOOL" enable redis --root "$R"
expect_bad 1 "enable over a foreign file" "redis.service.d/enormoustext.conf.*not written by"
cmp -s "$F" "$W/foreign" || fail "enable changed a foreign file"
t foreign_dis -- "$TOOL" disable redis --root "$R"
expect_bad 1 "disable of a foreign file" "redis.service.d/enormoustext.conf.*not written by.*not removed"
cmp -s "$F" "$W/foreign" || fail "disable changed a foreign file"

# --- disable: exactly the file, UNIT.d only when empty
printf '[Service]\nNice=5\n' >"$D/50-mine.conf"
t dis_dry -- "$TOOL" disable mariadb --root "$R" --dry-run
expect_rc 0; expect_out "^would remove $DROP\$"
[ -f "$DROP" ] || fail "disable --dry-run removed the drop-in"
t dis -- "$TOOL" disable mariadb --root "$R"
expect_rc 0 "disable"
expect_out "^removed $DROP\$"
[ ! -e "$DROP" ] || fail "disable left $DROP"
[ -f "$D/50-mine.conf" ] || fail "disable removed another drop-in"
rm "$D/50-mine.conf"
t en2 -- "$TOOL" enable mariadb --root "$R"
t dis2 -- "$TOOL" disable mariadb --root "$R" --no-reload
expect_rc 0; expect_out "removed $D \(empty\)"
[ ! -e "$D" ] || fail "disable left the empty $D"
t dis3 -- "$TOOL" disable mariadb --root "$R"
expect_bad 1 "disable when not enabled" "mariadb.service.d/enormoustext.conf.*not enabled"

# --- --prime: the program from ExecStart= (a drop-in resetting it wins),
# its libraries as the loader finds them (compared with ldd's)
prog=$TT_BIN/tt_hold
mkdir -p "$R/lib/systemd/system" "$R/etc/systemd/system/web.service.d"
printf '[Unit]\nDescription=web\n[Service]\nExecStart=/bin/false --x\nEnvironment=LD_PRELOAD=/opt/other.so\n' >"$R/lib/systemd/system/web.service"
printf '[Service]\nExecStart=\nExecStart=-%s --wait\n' "$prog" >"$R/etc/systemd/system/web.service.d/20-prog.conf"
t prime -- "$TOOL" enable web --prime --root "$R"
expect_rc 0 "enable --prime"
grep -q "already sets LD_PRELOAD.*web.service.*replaces" "$ERR" || fail "no warning about the unit's own LD_PRELOAD"
[ "$(wc -l <"$ERR")" = 1 ] || fail "the warning is not one line"
pre=$(sed -n 's/^ExecStartPre=//p' "$R/etc/systemd/system/web.service.d/enormoustext.conf")
libs=$(ldd "$prog" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | tr '\n' ' ')
want="-$(readlink -f "$TOOL") prime $prog ${libs% }"
[ "$pre" = "$want" ] || fail "ExecStartPre is '$pre', expected '$want'"
note "ExecStartPre=$pre"
# the line runs as systemd would run it (the '-' is systemd's)
read -r -a words <<<"${pre#-}"
t prime_run -- "${words[0]}" "${words[1]}" --check "${words[@]:2}"
expect_rc 0 "the ExecStartPre command (with --check)"
printf '[Unit]\nDescription=none\n[Service]\nType=oneshot\n' >"$R/lib/systemd/system/noexec.service"
t prime_noexec -- "$TOOL" enable noexec --prime --root "$R"
expect_bad 1 "--prime without ExecStart" "noexec.service: no ExecStart"
[ ! -e "$R/etc/systemd/system/noexec.service.d" ] || fail "a refused --prime wrote something"
# the loader cannot start the program (a library gone): one line with what
# the loader said, nothing written
printf 'int gone_fn(void) { return 0; }\n' >"$W/gone.c"
printf 'int gone_fn(void);\nint main(void) { return gone_fn(); }\n' >"$W/usegone.c"
cc_link "$W/libgone.so" "$W/gone.c" -shared -fPIC
cc_link "$W/usegone" "$W/usegone.c" -L"$W" -lgone
rm "$W/libgone.so"
printf '[Service]\nExecStart=%s\n' "$W/usegone" >"$R/lib/systemd/system/gone.service"
t prime_gone -- "$TOOL" enable gone --prime --root "$R"
expect_bad 1 "--prime, a library of the program gone" "--prime: .* --list $W/usegone failed \\(exit status [0-9]+\\).*libgone\\.so"
[ ! -e "$R/etc/systemd/system/gone.service.d" ] || fail "a --prime whose program cannot start wrote something"
# an interpreter that is no loader (a program of its own) is never run
if readelf -lW /bin/ls 2>/dev/null | grep -q 'Requesting program interpreter'; then
	cc_link "$W/oddinterp" "$W/gone.c" -Wl,--dynamic-linker=/bin/ls -Wl,-e,gone_fn -nostartfiles
	printf '[Service]\nExecStart=%s\n' "$W/oddinterp" >"$R/lib/systemd/system/odd.service"
	t prime_odd -- "$TOOL" enable odd --prime --root "$R"
	expect_bad 1 "--prime, /bin/ls as the program's interpreter" \
		"--prime: $W/oddinterp: its loader /bin/ls is not a loader \\(it has an interpreter of its own\\): not run"
fi


# --- --json: valid (json.tool and the strict checker), the lines' facts:
# each file with its action, the drop-in's environment, the reload, the
# warnings said on stderr; for a unit and (under --root) for --binary
jpair() { # LABEL ARGS...: the text form on a copy of the tree, the JSON on another
	local label=$1
	shift
	rm -rf "$W/ja" "$W/jb"; cp -a "$R" "$W/ja"; cp -a "$R" "$W/jb"
	t "$label.text" -- "$TOOL" "$@" --root "$W/ja"
	expect_rc 0 "$label (text)"
	sed "s|$W/ja|ROOT|g" "$OUT" >"$W/$label.text"; sed "s|$W/ja|ROOT|g" "$ERR" >"$W/$label.err"
	t "$label.json" -- "$TOOL" "$@" --root "$W/jb" --json
	expect_rc 0 "$label (--json)"
	json "$OUT"
	python3 -m json.tool "$OUT" >/dev/null || fail "$label: python3 -m json.tool refuses it"
	sed "s|$W/jb|ROOT|g" "$OUT" >"$W/$label.json"; sed "s|$W/jb|ROOT|g" "$ERR" >"$W/$label.jerr"
	cmp -s "$W/$label.err" "$W/$label.jerr" || fail "$label: --json changed what stderr says"
	diff -r --no-dereference "$W/ja" "$W/jb" >/dev/null || fail "$label: --json changed the tree otherwise than the text form"
	python3 - "$W/$label.json" "$W/$label.text" "$W/$label.err" "$@" <<'PY' || fail "$label: the JSON and the lines disagree"
import json, re, sys
j = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
err = [l for l in open(sys.argv[3]).read().splitlines()]
args = sys.argv[4:]
lines = text.splitlines()
def need(cond, what):
    if not cond:
        sys.exit(what)
need(j["command"] == args[0], "command %s" % j["command"])
need(j["dry_run"] == ("--dry-run" in args or "-n" in args), "dry_run")
need(j["root"] == "ROOT", "root %s" % j["root"])
warn = [re.sub(r"^enormoustext (enable|disable): warning: ", "", l) for l in err if ": warning: " in l]
need(j["warnings"] == warn, "warnings: json %s, stderr %s" % (j["warnings"], warn))
# each file: its path in the lines with the verb of its action
verbs = {"write": ("wrote", "listed", "already listed:"), "would write": ("would write",),
         "remove": ("removed",), "would remove": ("would remove",), "would link": ("would link",),
         "would keep": ("would keep",), "keep": ("kept",), "unchanged": ("",), "link": None,
         "put back": ("put back",), "would put back": ("would put back",),
         "remove the line": ("removed the line",), "would remove the line": ("would remove the line",)}
for f in j["files"]:
    need(f["action"] in verbs, "unknown action %s" % f["action"])
    if verbs[f["action"]] is None:
        continue       # the link: the lines do not say it (its target is in the 'wrote' line)
    hit = [l for l in lines if f["path"] in l and any(l.startswith(v) or v in l for v in verbs[f["action"]])]
    need(hit, "%s %s: not in the lines" % (f["action"], f["path"]))
    for k in ("target", "in", "from", "entry"):
        if k in f:
            need(any(f[k] in l for l in lines), "%s %s: its %s %s not in the lines" % (f["action"], f["path"], k, f[k]))
# every path the lines name as written or removed is a file of the JSON
paths = {f["path"] for f in j["files"]}
for l in lines:
    m = re.match(r"^(wrote|removed|would write|would remove) (ROOT[^\s,:]+)", l)
    if m:
        need(m.group(2) in paths, "'%s': %s is not among the JSON's files" % (l, m.group(2)))
if j["unit"]:
    envs = dict(re.findall(r'^"?Environment="?([A-Z_]+)=(.*?)"?$', text, re.M))
    if envs:   # the drop-in is printed (--dry-run): its variables
        want = {k: v.replace("%%", "%") for k, v in envs.items()}
        need(j["environment"] == want, "environment: json %s, drop-in %s" % (j["environment"], want))
    if "reload" in j and j["reload"]:
        need(j["reload"] == "not done: --root" and "(--root: not done)" in text, "reload %s" % j["reload"])
        need(("restart the unit for it to take effect: " + j["restart"]) in lines, "restart %s" % j["restart"])
if j["binary"]:
    need(("programs_left" not in j) or j["programs_left"] is None or j["programs_left"] == 0
         or ("(%d program" % j["programs_left"]) in text, "programs_left %s" % j.get("programs_left"))
PY
}
jpair jdry enable mariadb --dry-run --env VERBOSE=1 --env 'INCLUDE=*/my sql/*' --env ENORMOUSTEXT_REPORT=/run/et-%p.json
grep -q '"ENORMOUSTEXT_REPORT": "/run/et-%p.json"' "$W/jdry.json" || fail "--json: the environment does not hold the value given"
jpair jtypo enable mariadbb
[ "$(grep -c 'did you mean mariadb.service' "$W/jtypo.json")" = 1 ] || fail "enable --json of a typo: the warning is not in the JSON"
jpair jen enable mariadb --env VERBOSE=1
grep -q '"action": "write"' "$W/jen.json" || fail "enable --json does not say the drop-in was written"
cp -a "$W/jb/." "$R/"          # the drop-in written: now disable it
jpair jdisdry disable mariadb --dry-run
jpair jdis disable mariadb
grep -q '"action": "remove"' "$W/jdis.json" || fail "disable --json does not say the drop-in was removed"
t jprime -- "$TOOL" enable web --prime --root "$R" --dry-run --json
expect_rc 0; json "$OUT"
[ "$(jneed "$OUT.flat" '.prime[0]')" = "$prog" ] || fail "enable --prime --json: the program primed is not $prog"
grep -q '^\.warnings\[0\]' "$OUT.flat" || fail "enable --prime --json: the unit's own LD_PRELOAD warning is not in the JSON"
t jbad -- "$TOOL" disable nosuch --root "$R" --json
expect_bad 1 "disable --json of a unit not enabled" "not enabled"
expect_no_out "a failed disable --json"
# --binary, under --root (the link there too; the trial run loads the library)
case " ${TT_CFLAGS:-} " in
*sanitize*) note "a sanitized library cannot be preloaded into /bin/true: enable --binary --json not checked" ;;
*)
	fresh binprog
	jpair jbdry enable --binary "$F" --dry-run
	jpair jben enable --binary "$F"
	grep -q '"action": "link"' "$W/jben.json" || fail "enable --binary --json does not say the link was made"
	grep -q "\"binary\": \"$F\"" "$W/jben.json" || fail "enable --binary --json does not name the program"
	cp -a "$W/jb/." "$R/"
	jpair jbdis disable --binary "$F"
	grep -q '"programs_left": 0' "$W/jbdis.json" || fail "disable --binary --json: programs_left is not 0"
	;;
esac

pass
