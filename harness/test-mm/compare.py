#!/usr/bin/env python3
"""Compare the two passes of `make test-mm` (kmmscand off / on).

compare.py --stdout stdout.log --console console.log --host host.txt
           --tests tests.list --expected expected-diffs [--vm-rc N]
           [--table table.txt] [--passes "off on"]

stdout.log holds the markers written by harness/test-mm/guest.sh. Per test
(ID of harness/test-mm/tests) and pass the result is
  * the overall status, "(exit)": pass (exit 0), skip (exit 4), fail, or
    timeout (killed by the guest's timeout), missing (never finished);
  * every top-level kselftest TAP line "ok N desc" / "not ok N desc" /
    "ok N desc # SKIP ...", keyed by the "# [RUN] what" line before it when
    there is one (cow, ...), else by its description, else by "#N"; a
    repeated key gets "@2", "@3"...; khugepaged, which prints no TAP, by
    its "Run test: name" and "What.... OK|Fail" lines, uffd-unit-tests by
    its "Testing what... done|skipped|failed" lines.
A test whose results are identical in both passes is one PASS (or SKIP when
it skipped in both). Every subtest that differs is one FAIL unless an entry
of the expected-differences file matches it; then it is a PASS that names
the entry's reason and reproducer. Subtests that failed, timed out or were
absent with kmmscand off and passed or skipped with it on have no
baseline: one SKIP per test lists them (the "on" pass is not worse, and a failure with
kmmscand disabled is not kmmscand's). Also judged: the host-side checks
(host.txt), the kernel log of each pass (klog.py patterns, attributed to
the test that ran), that the tests' pages sat mostly on node 1 (numa_maps
samples) and that kmmscand promoted in the "on" pass.
Prints one line per check and ends with "N passed, N failed[, N skipped]";
exit status 1 when anything failed.
"""
import argparse
import fnmatch
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import klog  # noqa: E402

RES = re.compile(r"^(not ok|ok)\s+(\d+)\s*(?:-\s*)?([^#]*?)\s*(?:#\s*(.*))?$")
KV = re.compile(r"(\w+)=(-?\d+)")
TS = re.compile(r"^\[\s*\d+\.\d+\]\s?")
NUM = re.compile(r"\d+")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# khugepaged (no TAP): "Run test: name (mode)" then "What is checked.... OK|Fail"
KH_RUN = re.compile(r"^Run test: (.+?)\s*$")
# uffd-unit-tests (no TAP): "Testing move on anon... done|skipped [...]|failed [...]"
UFFD_RES = re.compile(r"^Testing (.+?)\.\.\. (done|skipped|failed)")
# ("Fail: why" when the test says why; progress lines end with "...")
KH_RES = re.compile(r"^(?:.*\.\.\.)?([A-Z][^.]*?)\.{3,}\s*(OK|Fail|Skip)(?::.*)?\s*$")
# Statuses of the "off" pass that give no baseline for a subtest.
NO_BASELINE = ("fail", "timeout", "absent")
# Minimum share of the tests' sampled pages on node 1, per pass.
MIN_NODE1_SHARE = 0.5
# Tests that place their pages on nodes themselves; where their pages sit
# says nothing about the balloon, so the placement share leaves them out
# (they would dominate it: migration runs 120 s with the most pages).
SELF_PLACED = {
    "migration": "moves its pages between the two nodes with move_pages() in a loop",
}


class Run:
    def __init__(self):
        self.subs = {}          # key -> status
        self.order = []
        self.rc = None
        self.secs = None
        self.timeout = False
        self.stat = {}
        self.numa = {}
        self.status = "missing"


def tap_status(verdict, directive):
    if directive and directive.strip().upper().startswith("SKIP"):
        return "skip"
    if directive and directive.strip().upper().startswith("XFAIL"):
        return "pass"
    return "pass" if verdict == "ok" else "fail"


def parse_stdout(text):
    runs = {}            # (pass, id) -> Run
    passes = {}          # pass -> dict of PASS-END values
    fatal = []
    infos = []
    repro = {}           # name -> rc
    cur = None
    seen = {}
    label = None
    kh_run = None
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        m = re.match(r"^@@MM-BEGIN (\S+) (\S+)@@$", line)
        if m:
            cur = Run()
            runs[(m.group(1), m.group(2))] = cur
            seen = {}
            label = None
            kh_run = None
            continue
        m = re.match(r"^@@MM-END (\S+) (\S+) (.*)@@$", line)
        if m and cur is not None:
            kv = dict((k, int(v)) for k, v in KV.findall(m.group(3)))
            cur.rc, cur.secs = kv.get("rc"), kv.get("secs")
            cur.timeout = kv.get("timeout") == 1
            if cur.timeout:
                cur.status = "timeout"
            elif cur.rc == 0:
                cur.status = "pass"
            elif cur.rc == 4:
                cur.status = "skip"
            else:
                cur.status = "fail"
            cur = None
            continue
        m = re.match(r"^@@MM-STAT (\S+) (\S+) (.*)@@$", line)
        if m and (m.group(1), m.group(2)) in runs:
            runs[(m.group(1), m.group(2))].stat = dict(
                (k, int(v)) for k, v in KV.findall(m.group(3)))
            continue
        m = re.match(r"^@@MM-NUMA (\S+) (\S+) (.*)@@$", line)
        if m and (m.group(1), m.group(2)) in runs:
            runs[(m.group(1), m.group(2))].numa = dict(
                (k, int(v)) for k, v in KV.findall(m.group(3)))
            continue
        m = re.match(r"^@@MM-PASS-END (\S+) (.*)@@$", line)
        if m:
            passes[m.group(1)] = dict((k, int(v)) for k, v in KV.findall(m.group(2)))
            continue
        m = re.match(r"^@@MM-REPRO-END (\S+) rc=(\d+)@@$", line)
        if m:
            repro[m.group(1)] = int(m.group(2))
            continue
        m = re.match(r"^@@MM-FATAL (.*)@@$", line)
        if m:
            fatal.append(m.group(1))
            continue
        m = re.match(r"^@@MM-INFO (.*)@@$", line)
        if m:
            infos.append(m.group(1))
            continue
        if cur is None:
            continue
        if line.startswith("# [RUN] "):
            label = line[len("# [RUN] "):].strip()
            continue
        plain = ANSI.sub("", line)
        m = KH_RUN.match(plain)
        if m:
            kh_run = m.group(1)
            continue
        m = UFFD_RES.match(plain)
        if m:
            desc = m.group(1)
            n = seen.get(desc, 0) + 1
            seen[desc] = n
            key = desc if n == 1 else f"{desc}@{n}"
            cur.subs[key] = {"done": "pass", "skipped": "skip", "failed": "fail"}[m.group(2)]
            cur.order.append(key)
            continue
        m = KH_RES.match(plain)
        if m and not RES.match(plain):
            desc = f"{kh_run}: {m.group(1).strip()}" if kh_run else m.group(1).strip()
            n = seen.get(desc, 0) + 1
            seen[desc] = n
            key = desc if n == 1 else f"{desc}@{n}"
            cur.subs[key] = {"OK": "pass", "Fail": "fail", "Skip": "skip"}[m.group(2)]
            cur.order.append(key)
            continue
        m = RES.match(line)
        if m:
            # cow and friends print "# [RUN] what" before a generic (and
            # status-dependent) "ok N Longterm R/O pin is reliable".
            # Numbers in a bare description are measurements
            # (pagemap_ioctl: "transact_test Extra pages 37 (0.1%)").
            desc = label or NUM.sub("N", m.group(3).strip()) or f"#{m.group(2)}"
            label = None
            n = seen.get(desc, 0) + 1
            seen[desc] = n
            key = desc if n == 1 else f"{desc}@{n}"
            cur.subs[key] = tap_status(m.group(1), m.group(4))
            cur.order.append(key)
    return runs, passes, fatal, infos, repro


def load_tests(path):
    ids = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if w and not w[0].startswith("#"):
                ids.append(w[0])
    return ids


def load_expected(path, base):
    """ID-GLOB SUBTEST-GLOB STATUSES REPRODUCER REASON..., shell-quoted."""
    out = []
    if not path or not os.path.exists(path):
        return out
    with open(path) as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            w = shlex.split(s)
            if len(w) < 5:
                raise SystemExit(f"{path}:{n}: need ID SUBTEST STATUSES REPRODUCER REASON")
            repro = w[3]
            if not os.path.exists(os.path.join(base, repro)):
                raise SystemExit(f"{path}:{n}: reproducer {repro} does not exist")
            out.append({"id": w[0], "sub": w[1], "statuses": set(w[2].split(",")),
                        "repro": repro, "reason": " ".join(w[4:]), "line": n,
                        "hits": 0})
    return out


def match_expected(exp, tid, sub, on_status):
    for e in exp:
        if fnmatch.fnmatchcase(tid, e["id"]) and fnmatch.fnmatchcase(sub, e["sub"]) \
                and on_status in e["statuses"]:
            e["hits"] += 1
            return e
    return None


def klog_by_test(console):
    """Kernel-log error lines, attributed to (pass, id) by guest markers."""
    where = ("boot", "-")
    out = {}
    for raw in console.splitlines():
        line = TS.sub("", raw.rstrip("\r"))
        m = re.search(r"mm-test: BEGIN (\S+) (\S+)", line)
        if m:
            where = (m.group(1), m.group(2))
            continue
        m = re.search(r"mm-test: END (\S+) (\S+)", line)
        if m:
            where = (m.group(1), "between tests")
            continue
        bad = klog.bad_lines(line)
        if bad:
            out.setdefault(where, []).append(bad[0])
    return out


def summary(run):
    if run is None:
        return "missing"
    c = {"pass": 0, "fail": 0, "skip": 0}
    for s in run.subs.values():
        c[s] += 1
    parts = [run.status if run.status != "fail" else f"fail(rc={run.rc})"]
    if run.subs:
        parts.append(f"{c['pass']}/{c['fail']}/{c['skip']}")
    if run.secs is not None:
        parts.append(f"{run.secs}s")
    return " ".join(parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stdout", required=True)
    ap.add_argument("--console", required=True)
    ap.add_argument("--host")
    ap.add_argument("--tests", required=True)
    ap.add_argument("--expected")
    ap.add_argument("--vm-rc", type=int)
    ap.add_argument("--table")
    ap.add_argument("--passes", default="off on")
    ap.add_argument("--repros", default="", help="comma-separated reproducer names that must reproduce")
    a = ap.parse_args()
    base = os.path.dirname(os.path.abspath(a.expected)) if a.expected else "."
    exp = load_expected(a.expected, base)
    ids = load_tests(a.tests)
    p_off, p_on = a.passes.split()

    lines = []
    counts = {"pass": 0, "fail": 0, "skip": 0}

    def add(st, name, why=""):
        counts[st] += 1
        tag = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}[st]
        lines.append(f"{tag} {name}" + (f": {why}" if why else ""))

    if a.host and os.path.exists(a.host):
        with open(a.host) as f:
            for line in f:
                line = line.rstrip("\n")
                for prefix, st in (("not ok ", "fail"), ("ok ", "pass"), ("skip ", "skip")):
                    if line.startswith(prefix):
                        name, _, why = line[len(prefix):].partition(": ")
                        add(st, name, why)
                        break

    with open(a.stdout, errors="replace") as f:
        runs, passes, fatal, infos, repro = parse_stdout(f.read())
    with open(a.console, errors="replace") as f:
        console = f.read()

    for m in fatal:
        add("fail", "mm:guest", m)
    if a.vm_rc == 124:
        add("fail", "mm:vm", "timed out (wall-clock budget exceeded)")
    elif a.vm_rc == 125:
        add("fail", "mm:vm", "died without reporting (panic? see console log)")
    elif a.vm_rc is not None and not fatal:
        add("pass" if a.vm_rc == 0 else "fail", "mm:vm", "" if a.vm_rc == 0 else f"job exit status {a.vm_rc}")

    table = []
    hdr = f"{'test':28} {'off (status p/f/s time)':28} {'on (status p/f/s time)':28} {'promoted':>8} {'node1 off/on':>12} {'thp_split (by kmmscand)':>23}"
    table.append(hdr)
    table.append("-" * len(hdr))
    diffs_table = []
    share = {p_off: [0, 0], p_on: [0, 0]}
    split_by = {p: {"kmmscand": 0, "demotion": 0, "other": 0} for p in (p_off, p_on)}
    for tid in ids:
        off, on = runs.get((p_off, tid)), runs.get((p_on, tid))
        n1 = []
        for p, r in ((p_off, off), (p_on, on)):
            if r and r.numa.get("samples"):
                tot = r.numa.get("n0", 0) + r.numa.get("n1", 0)
                if tid not in SELF_PLACED:
                    share[p][0] += r.numa.get("n1", 0)
                    share[p][1] += tot
                n1.append(f"{100 * r.numa.get('n1', 0) // tot}%" if tot else "-")
            else:
                n1.append("-")
        prom = on.stat.get("kmmscand_promote_success", 0) if on else 0
        split = on.stat.get("thp_migration_split", 0) if on else 0
        if on and "thp_split_kmmscand" in on.stat:
            split = f"{split} ({on.stat['thp_split_kmmscand']})"
        for p, r in ((p_off, off), (p_on, on)):
            for why in ("kmmscand", "demotion", "other"):
                if r:
                    split_by[p][why] += r.stat.get(f"thp_split_{why}", 0)
        table.append(f"{tid:28} {summary(off):28} {summary(on):28} {prom:>8} {'/'.join(n1):>12} {split:>23}")
        if off is None or on is None or off.status == "missing" or on.status == "missing":
            which = [p for p, r in ((p_off, off), (p_on, on)) if r is None or r.status == "missing"]
            add("fail", f"mm:{tid}", f"did not finish in pass {'/'.join(which)} (VM died or timed out?)")
            continue
        pairs = [("(exit)", off.status, on.status)]
        for k in off.order + [k for k in on.order if k not in off.subs]:
            pairs.append((k, off.subs.get(k, "absent"), on.subs.get(k, "absent")))
        differing = [(k, so, sn) for k, so, sn in pairs if so != sn]
        if not differing:
            if off.status == "skip" and not off.subs:
                add("skip", f"mm:{tid}", "skipped in both passes")
            else:
                c = {"pass": 0, "fail": 0, "skip": 0}
                for s in off.subs.values():
                    c[s] += 1
                why = f"identical in both passes ({off.status}"
                if off.subs:
                    why += f"; {len(off.subs)} subtests: {c['pass']} pass, {c['fail']} fail, {c['skip']} skip"
                why += ")"
                if off.status in ("fail", "timeout") or c["fail"]:
                    why += " -- fails with kmmscand off too"
                add("pass", f"mm:{tid}", why)
            continue
        # A subtest that failed (or never ran) with kmmscand off and passed
        # with it on has no baseline in this run: the difference says
        # nothing about kmmscand. One SKIP per test names them.
        nobase = [(k, so, sn) for k, so, sn in differing
                  if so in NO_BASELINE and sn in ("pass", "skip")]
        if nobase:
            k0, so0, _ = nobase[0]
            add("skip", f"mm:{tid}:no-baseline",
                f"{len(nobase)} subtest(s) failed or did not run with kmmscand off and passed "
                f"or skipped with it on, so they were not compared (first: {k0}: off={so0})")
            for k, so, sn in nobase:
                diffs_table.append((tid, k, so, sn, "no-baseline"))
        for k, so, sn in differing:
            if (k, so, sn) in nobase:
                continue
            e = match_expected(exp, tid, k, sn)
            diffs_table.append((tid, k, so, sn, e))
            if e:
                add("pass", f"mm:{tid}:{k}",
                    f"off={so} on={sn}, expected (expected-diffs:{e['line']}, {e['repro']}): {e['reason']}")
            else:
                add("fail", f"mm:{tid}:{k}", f"off={so} on={sn}")

    # Placement and promotion: the comparison means something only if the
    # tests' pages sat on node 1 and kmmscand moved some of them.
    # The layout is the same in both passes; in the "on" pass kmmscand moves
    # pages to node 0, so the share is asserted on the "off" pass only.
    left = [t for t in SELF_PLACED if t in ids]
    note = f" (not counted: {', '.join(left)}: places its pages itself)" if left else ""
    for p in (p_off, p_on):
        n1, tot = share[p]
        pct = f"{100 * n1 // tot}%" if tot else "-"
        if p != p_off:
            lines.append(f"  info: {pct} of the tests' sampled pages on node 1 in pass {p}{note}")
        elif not tot:
            add("fail", f"mm:placement:{p}", "no numa_maps samples of the tests")
        elif n1 / tot < MIN_NODE1_SHARE:
            add("fail", f"mm:placement:{p}",
                f"only {pct} of the tests' sampled pages on node 1 (< {int(MIN_NODE1_SHARE * 100)}%){note}")
        else:
            add("pass", f"mm:placement:{p}", f"{pct} of the tests' sampled pages on node 1{note}")
    pe_on = passes.get(p_on, {})
    pe_off = passes.get(p_off, {})
    if p_on in passes:
        got = pe_on.get("kmmscand_promote_success", 0)
        add("pass" if got > 0 else "fail", f"mm:promotion:{p_on}",
            f"kmmscand_promote_success +{got} over the pass" if got else "kmmscand promoted nothing")
    if p_off in passes:
        got = pe_off.get("kmmscand_promote_success", 0)
        add("pass" if got == 0 else "fail", f"mm:promotion:{p_off}",
            "kmmscand promoted nothing" if got == 0 else f"kmmscand_promote_success +{got} although disabled")

    # Every reproducer must still show its failure with kmmscand disabled;
    # one that stopped reproducing leaves its expected differences unproven.
    for name in sorted(a.repros.split(",") if a.repros else []):
        rc = repro.get(name)
        if rc is None:
            add("fail", f"mm:repro:{name}", "did not run")
        elif rc == 0:
            add("pass", f"mm:repro:{name}", "reproduced with kmmscand disabled")
        elif rc == 4:
            add("skip", f"mm:repro:{name}", "cannot run here")
        else:
            add("fail", f"mm:repro:{name}", f"did not reproduce (exit {rc}): its expected differences are unproven")

    bad = klog_by_test(console)
    for (p, tid), items in sorted(bad.items()):
        for kind, line in items[:5]:
            lines.append(f"  kernel log ({p} {tid}): {kind}: {line}")
        add("fail", f"mm:kernel-log:{p}:{tid}", f"{len(items)} error line(s) in the console log")
    if not bad:
        add("pass", "mm:kernel-log")

    for e in exp:
        if not e["hits"]:
            lines.append(f"  note: expected difference of expected-diffs:{e['line']} ({e['id']} {e['sub']}) did not occur this run")

    pass_info = []
    for p in (p_off, p_on):
        v = passes.get(p)
        if v:
            pass_info.append(f"pass {p}: {v.get('secs', 0)}s, " + ", ".join(
                f"{k} +{v.get(k, 0)}" for k in ("kmmscand_promote_success", "pgdemote_kswapd",
                                                 "pgmigrate_success", "thp_migration_success",
                                                 "thp_migration_split"))
                + " (splits by migration reason: " + ", ".join(
                    f"{k} {n}" for k, n in split_by[p].items()) + ")")
    table.append("")
    table.extend(pass_info)
    table.extend(f"info: {i}" for i in infos)
    if diffs_table:
        table.append("")
        table.append("differing subtests:")
        for tid, k, so, sn, e in diffs_table:
            if e == "no-baseline":
                verdict = "no baseline (failed with kmmscand off)"
            elif e:
                verdict = f"expected ({e['repro']})"
            else:
                verdict = "UNEXPECTED"
            table.append(f"  {tid}: {k}: off={so} on={sn} -> {verdict}")
    if a.table:
        with open(a.table, "w") as f:
            f.write("\n".join(table) + "\n")
    for t in table:
        print(t, file=sys.stderr)
    for line in lines:
        print(line)
    s = f"{counts['pass']} passed, {counts['fail']} failed"
    if counts["skip"]:
        s += f", {counts['skip']} skipped"
    print(s)
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
