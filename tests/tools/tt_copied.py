#!/usr/bin/python3
"""tt_copied.py REPORT STAT_JSON PERFMAP_JSON PROM COLLAPSE_OUT

What the command says of a process whose text the library copied, against
what the library itself says it did (its ENORMOUSTEXT_REPORT): the checks of
tool_stat_copied and tool_stat_copied_clang.

  REPORT        the library's JSON report of the process
  STAT_JSON     `enormoustext stat --json PID`
  PERFMAP_JSON  `enormoustext perfmap --json -o FILE PID`
  PROM          `enormoustext stat --prometheus PID`
  COLLAPSE_OUT  `enormoustext collapse --dry-run PID`

A file is known by its device and inode (the report names it as the loader
did, /lib/..., smaps by its real path, /usr/lib/...).  Checked:
  - stat attributes to each file at least 95% of the huge text the report
    says the library made of it (over all files together), and its
    [anonymous] (JIT) entry holds at most 5% of it;
  - every byte the report says was copied is in stat's copied_text_bytes of
    that file (95% over all);
  - perfmap's moved bytes are at least 95% of the copied bytes, in as many
    objects as the report has copied from;
  - collapse --dry-run lists no range as JIT code ([anon:jit]) and lists
    the copies as copies of their files;
  - the Prometheus per-object figures are stat --json's, object by object.
Prints each figure; exits 1 on the first check that fails.
"""
import json
import os
import re
import sys

rep_path, stat_path, pm_path, prom_path, col_path = sys.argv[1:6]
fails = []


def check(ok, msg):
    print(("   ok: " if ok else "   FAILED: ") + msg)
    if not ok:
        fails.append(msg)


def key(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


rep = json.load(open(rep_path))
want = {}   # key -> (path, huge, copied)
for o in rep.get("objects", []):
    huge = int(o.get("huge_bytes", 0))
    if not huge:
        continue
    copied = huge - int(o.get("zero_copy_bytes", 0))
    k = key(o["path"])
    if k is None:
        check(False, "the report's object %s cannot be found here" % o["path"])
        continue
    want[k] = (o["path"], huge, copied, o.get("window_kinds", ""))
    print("   report: %s: huge %d, copied %d, windows %s" % (o["path"], huge, copied, o.get("window_kinds", "")))
total_huge = sum(w[1] for w in want.values())
total_copied = sum(w[2] for w in want.values())
check(total_copied > 0, "the library copied something (%d bytes in %d objects)" % (total_copied, len(want)))

st = json.load(open(stat_path))
got = {}
anon_huge = 0
for o in st["objects"]:
    if o["kind"] == "jit":
        anon_huge += int(o["huge_bytes"])
        continue
    if o["kind"] != "file":
        continue
    k = key(o["path"])
    if k is None:
        continue
    g = got.setdefault(k, [o["path"], 0, 0])
    g[1] += int(o["huge_bytes"])
    g[2] += int(o["copied_text_bytes"])
att_huge = sum(min(got.get(k, [None, 0, 0])[1], w[1]) for k, w in want.items())
att_copied = sum(min(got.get(k, [None, 0, 0])[2], w[2]) for k, w in want.items())
for k, w in want.items():
    g = got.get(k, [None, 0, 0])
    print("   stat: %s: huge %d of the report's %d, copied %d of %d" % (w[0], g[1], w[1], g[2], w[2]))
print("   stat: [anonymous] (JIT) huge %d" % anon_huge)
check(att_huge * 100 >= total_huge * 95,
      "stat attributes %d of the %d huge bytes to the files they came from (>= 95%%)" % (att_huge, total_huge))
check(att_copied * 100 >= total_copied * 95,
      "stat's copied_text_bytes hold %d of the %d copied bytes (>= 95%%)" % (att_copied, total_copied))
check(anon_huge * 100 <= total_huge * 5,
      "stat's [anonymous] holds %d huge bytes, at most 5%% of %d" % (anon_huge, total_huge))

pm = json.load(open(pm_path))
nobj = sum(1 for w in want.values() if w[2] > 0)
check(int(pm["moved_bytes"]) * 100 >= total_copied * 95,
      "perfmap covers %d of the %d copied bytes (>= 95%%)" % (int(pm["moved_bytes"]), total_copied))
check(int(pm["objects"]) == nobj, "perfmap wrote the functions of %d objects, the report copied from %d"
      % (int(pm["objects"]), nobj))
check(int(pm["functions"]) >= nobj, "perfmap named %d functions" % int(pm["functions"]))

col = open(col_path).read()
jit = [l for l in col.splitlines() if "[anon:jit]" in l]
copies = [l for l in col.splitlines() if "[anon: copy of " in l]
check(not jit, "collapse --dry-run lists no copy as JIT code (%d [anon:jit] lines%s)"
      % (len(jit), (": " + jit[0].strip()) if jit else ""))
named = set()
for l in copies:
    m = re.search(r"\[anon: copy of (.*)\]$", l)
    if m and key(m.group(1)) is not None:
        named.add(key(m.group(1)))
check(named == {k for k, w in want.items() if w[2] > 0},
      "collapse --dry-run names the copies of the %d objects copied from (%d copy lines, %d files)"
      % (nobj, len(copies), len(named)))

# The exposition format, read here by hand (no parser needed): the object
# families, per object label, against stat --json.
prom = {}
for line in open(prom_path, encoding="utf-8"):
    m = re.match(r'(enormoustext_object_(huge|copied_text|text)_bytes)\{(.*)\} (\d+)$', line)
    if not m:
        continue
    labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3)))
    p = prom.setdefault(labels["object"], {"huge_bytes": 0, "copied_text_bytes": 0, "text_bytes": 0})
    p[{"huge": "huge_bytes", "copied_text": "copied_text_bytes", "text": "text_bytes"}[m.group(2)]] += int(m.group(4))
bad = []
nprom = 0
for o in st["objects"]:
    if o["kind"] != "file" or not int(o["huge_bytes"]):
        continue
    p = prom.get(o["path"])
    nprom += 1
    if p is None or any(p[f] != int(o[f]) for f in ("huge_bytes", "copied_text_bytes", "text_bytes")):
        bad.append("%s: prometheus %s, stat %s" % (o["path"], p, {f: o[f] for f in ("huge_bytes", "copied_text_bytes", "text_bytes")}))
check(nprom > 0 and not bad, "the Prometheus figures of the %d objects with huge text are stat's%s"
      % (nprom, (": " + "; ".join(bad)) if bad else ""))
sys.exit(1 if fails else 0)
