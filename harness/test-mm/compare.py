#!/usr/bin/env python3
"""Compare the two passes of `make test-mm` (kmmscand off / on).

compare.py --stdout stdout.log --console console.log --host host.txt
           --tests tests.list --expected expected-diffs [--known known-limits]
           [--set full|ci] [--vm-rc N] [--table table.txt] [--passes "off on"]
           [--repros a,b]

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
Per test:
  * a subtest (or "(exit)") that differs between the passes is one FAIL,
    unless an entry of the expected-differences file matches it AND that
    entry's evidence holds in this run AND its reproducer reproduced in
    this boot; then it is a PASS that names the entry's reason;
  * a subtest that failed, timed out or was absent with kmmscand off and
    passed with it on has no baseline: one SKIP per test lists them, a
    FAIL in MM_SET=ci or when more than MAX_NO_BASELINE of them occur in
    the run (a skip with kmmscand on is never granted this);
  * no signal: subtests (or the exit status) failing identically in both
    passes are one FAIL unless known-limits lists them as "broken" (then
    a SKIP with the reason); a test with no subtest passing in both passes
    and nothing else failing is a SKIP "no signal: skipped in both passes";
    a test with signal and no difference is a PASS;
  * evidence that kmmscand had the test's memory to work on: the share of
    the test's sampled pages on node 1 in the "off" pass and the pages seen
    promoted (numa_maps, per process) in the "on" pass; below
    MIN_TEST_NODE1_SHARE or no promotion is "not exercised", a FAIL in
    MM_SET=ci and a SKIP otherwise, unless known-limits lists the test;
  * THP splits by kmmscand's migrations in the "on" pass: a FAIL unless
    known-limits allows them for the test ("thp-split").
Also judged: the host-side checks (host.txt), the kernel log of each pass
(klog.py patterns, attributed to the test that ran), that the tests' pages
sat mostly on node 1 over the whole "off" pass, that kmmscand promoted in
the "on" pass and nothing in the "off" one, and that every reproducer
reproduced (one that exits 4, "cannot run here", fails).
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
MIG = re.compile(r"^@@MM-MIG (\S+) (\S+) line=(\d+) reason=(\S+) thp_succeeded=(\d+) "
                 r"thp_failed=(\d+) thp_split=(\d+)(?: succeeded=(\d+) failed=(\d+))?@@$")
# Statuses of the "off" pass that give no baseline for a subtest.
NO_BASELINE = ("fail", "timeout", "absent")
# More subtests without a baseline than this in one run: the "off" pass is
# no baseline for the run (a broken layout, an OOM, ...).
MAX_NO_BASELINE = 3
# Minimum share of the tests' sampled pages on node 1 in the "off" pass,
# over all tests and per test.
MIN_NODE1_SHARE = 0.5
MIN_TEST_NODE1_SHARE = 0.5
# What an expected difference may ask of the run (expected-diffs EVIDENCE):
EVIDENCE = {
    "no-kmmscand-split": "kmmscand's migrations split no THP while the test ran "
                         "(migration trace, complete)",
    "other-thp-migration": "a migration of another reason moved, failed to move or split "
                           "a THP while the subtest ran",
    "migration-around": "a migration of any reason (kmmscand's included) moved or failed "
                        "to move pages while the subtest ran",
    "listed-subtest-failed": "a subtest of the same test failed in the same pass and was "
                             "accepted by another entry",
}
KNOWN_KINDS = ("broken", "not-exercised", "self-placed", "thp-split")


class Run:
    def __init__(self):
        self.subs = {}          # key -> status
        self.order = []
        self.line = {}          # key -> line of the test's output with its result
        self.nlines = 0
        self.rc = None
        self.secs = None
        self.timeout = False
        self.stat = {}
        self.numa = {}
        # (line, reason, thp_succeeded, thp_failed, thp_split, succeeded, failed)
        self.mig = []
        self.status = "missing"


def tap_status(verdict, directive):
    if directive and directive.strip().upper().startswith("SKIP"):
        return "skip"
    if directive and directive.strip().upper().startswith("XFAIL"):
        return "pass"
    return "pass" if verdict == "ok" else "fail"


class Parser:
    """The markers of guest.sh and the results of the tests in stdout.log."""

    def __init__(self):
        self.runs = {}          # (pass, id) -> Run
        self.passes = {}        # pass -> dict of PASS-END values
        self.fatal = []
        self.infos = []
        self.repro = {}         # name -> rc
        self.cur = None
        self.seen = {}
        self.label = None
        self.kh_run = None

    def result(self, desc, status):
        n = self.seen.get(desc, 0) + 1
        self.seen[desc] = n
        key = desc if n == 1 else f"{desc}@{n}"
        self.cur.subs[key] = status
        self.cur.order.append(key)
        self.cur.line[key] = self.cur.nlines

    def marker(self, line):
        """A guest.sh marker line; True when it was one."""
        m = re.match(r"^@@MM-BEGIN (\S+) (\S+)@@$", line)
        if m:
            self.cur = Run()
            self.runs[(m.group(1), m.group(2))] = self.cur
            self.seen = {}
            self.label = None
            self.kh_run = None
            return True
        m = re.match(r"^@@MM-END (\S+) (\S+) (.*)@@$", line)
        if m and self.cur is not None:
            cur = self.cur
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
            self.cur = None
            return True
        m = re.match(r"^@@MM-(STAT|NUMA) (\S+) (\S+) (.*)@@$", line)
        if m:
            r = self.runs.get((m.group(2), m.group(3)))
            if r:
                kv = dict((k, int(v)) for k, v in KV.findall(m.group(4)))
                if m.group(1) == "STAT":
                    r.stat = kv
                else:
                    r.numa = kv
            return True
        m = MIG.match(line)
        if m:
            r = self.runs.get((m.group(1), m.group(2)))
            if r:
                r.mig.append((int(m.group(3)), m.group(4), int(m.group(5)), int(m.group(6)),
                              int(m.group(7)), int(m.group(8) or 0), int(m.group(9) or 0)))
            return True
        m = re.match(r"^@@MM-PASS-END (\S+) (.*)@@$", line)
        if m:
            self.passes[m.group(1)] = dict((k, int(v)) for k, v in KV.findall(m.group(2)))
            return True
        m = re.match(r"^@@MM-REPRO-END (\S+) rc=(\d+)@@$", line)
        if m:
            self.repro[m.group(1)] = int(m.group(2))
            return True
        m = re.match(r"^@@MM-FATAL (.*)@@$", line)
        if m:
            self.fatal.append(m.group(1))
            return True
        m = re.match(r"^@@MM-INFO (.*)@@$", line)
        if m:
            self.infos.append(m.group(1))
            return True
        return line.startswith("@@MM-")

    def output(self, line):
        """A line (or a "\r" piece of one) of a test's output."""
        if line.startswith("# [RUN] "):
            self.label = line[len("# [RUN] "):].strip()
            return
        plain = ANSI.sub("", line)
        m = KH_RUN.match(plain)
        if m:
            self.kh_run = m.group(1)
            return
        m = UFFD_RES.match(plain)
        if m:
            self.result(m.group(1), {"done": "pass", "skipped": "skip", "failed": "fail"}[m.group(2)])
            return
        m = KH_RES.match(plain)
        if m and not RES.match(plain):
            desc = f"{self.kh_run}: {m.group(1).strip()}" if self.kh_run else m.group(1).strip()
            self.result(desc, {"OK": "pass", "Fail": "fail", "Skip": "skip"}[m.group(2)])
            return
        m = RES.match(line)
        if m:
            # cow and friends print "# [RUN] what" before a generic (and
            # status-dependent) "ok N Longterm R/O pin is reliable".
            # Numbers in a bare description are measurements
            # (pagemap_ioctl: "transact_test Extra pages 37 (0.1%)").
            desc = self.label or NUM.sub("N", m.group(3).strip()) or f"#{m.group(2)}"
            self.label = None
            self.result(desc, tap_status(m.group(1), m.group(4)))

    def feed(self, text):
        # Lines end at "\n" only, as guest.sh's mark_lines numbers them; a
        # "\r" (progress output) cuts one into pieces parsed one by one.
        for line in text.split("\n"):
            line = line.rstrip("\r")
            if self.marker(line):
                continue
            if self.cur is None:
                continue
            self.cur.nlines += 1
            for piece in line.split("\r"):
                self.output(piece)


def parse_stdout(text):
    p = Parser()
    p.feed(text)
    return p.runs, p.passes, p.fatal, p.infos, p.repro


def load_tests(path):
    ids = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if w and not w[0].startswith("#"):
                ids.append(w[0])
    return ids


def records(path):
    """(line number, shell-split words) of each line of @path that is not
    blank or a comment; nothing when @path is unset or missing."""
    if not path or not os.path.exists(path):
        return
    with open(path) as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if s and not s.startswith("#"):
                yield n, shlex.split(s)


def load_expected(path, base):
    """ID-GLOB SUBTEST-GLOB STATUSES EVIDENCE REPRODUCER REASON..., shell-quoted."""
    out = []
    for n, w in records(path):
        if len(w) < 6:
            raise SystemExit(f"{path}:{n}: need ID SUBTEST STATUSES EVIDENCE REPRODUCER REASON")
        ev = w[3].split(",")
        bad = [e for e in ev if e not in EVIDENCE]
        if bad:
            raise SystemExit(f"{path}:{n}: unknown evidence {','.join(bad)} "
                             f"(one or more of: {', '.join(EVIDENCE)})")
        repro = w[4]
        if not os.path.exists(os.path.join(base, repro)):
            raise SystemExit(f"{path}:{n}: reproducer {repro} does not exist")
        out.append({"id": w[0], "sub": w[1], "statuses": set(w[2].split(",")),
                    "evidence": ev, "repro": repro, "reason": " ".join(w[5:]),
                    "line": n, "hits": 0})
    return out


def load_known(path):
    """ID-GLOB KIND SUBTEST-GLOB REASON..., shell-quoted (SUBTEST-GLOB "-"
    for the kinds about the whole test)."""
    out = []
    for n, w in records(path):
        if len(w) < 4:
            raise SystemExit(f"{path}:{n}: need ID KIND SUBTEST REASON")
        if w[1] not in KNOWN_KINDS:
            raise SystemExit(f"{path}:{n}: unknown kind {w[1]} (one of: {', '.join(KNOWN_KINDS)})")
        out.append({"id": w[0], "kind": w[1], "sub": w[2], "reason": " ".join(w[3:]), "line": n})
    return out


def find_known(known, kind, tid, sub="-"):
    for k in known:
        if k["kind"] == kind and fnmatch.fnmatchcase(tid, k["id"]) and \
                (k["sub"] == "-" or fnmatch.fnmatchcase(sub, k["sub"])):
            return k
    return None


def match_expected(exp, tid, sub, on_status):
    for e in exp:
        if fnmatch.fnmatchcase(tid, e["id"]) and fnmatch.fnmatchcase(sub, e["sub"]) \
                and on_status in e["statuses"]:
            return e
    return None


def window(run, key):
    """Lines [S, E) of the run's output around the result of subtest key:
    from the previous result line to the next one (generous: a migration
    that isolated a page before a result line is traced after it)."""
    at = run.line.get(key)
    if at is None:
        return 0, float("inf")
    before = [n for n in run.line.values() if n < at]
    after = [n for n in run.line.values() if n > at]
    return (max(before) if before else 0), (min(after) if after else float("inf"))


def other_thp_migrations(run, key):
    """THPs moved, failed or split by migrations of reasons other than
    kmmscand within the window of subtest key."""
    lo, hi = window(run, key)
    return sum(ok + fl + sp for ln, r, ok, fl, sp, _, _ in run.mig
               if lo <= ln < hi and r != "kmmscand")


def migrations_around(run, key):
    """Pages (base pages and THPs) that migrations of any reason moved or
    failed to move, and THPs they split, within the window of subtest key."""
    lo, hi = window(run, key)
    return sum(ok + fl + sp + bok + bfl for ln, r, ok, fl, sp, bok, bfl in run.mig
               if lo <= ln < hi)


def evidence_holds(ev, run, key, accepted_fail):
    """Whether one kind of evidence holds in the "on" run for subtest key;
    returns (ok, what was seen)."""
    if ev == "no-kmmscand-split":
        if "thp_split_kmmscand" not in run.stat:
            return False, "no migration trace for the test"
        if run.stat.get("overrun", 0):
            return False, f"migration trace incomplete ({run.stat['overrun']} events lost)"
        n = run.stat["thp_split_kmmscand"]
        return n == 0, f"THPs split by kmmscand during the test: {n}"
    if ev == "other-thp-migration":
        if key not in run.line:
            return False, "subtest not found in the output"
        n = other_thp_migrations(run, key)
        return n > 0, f"THP migrations of other reasons around the subtest: {n}"
    if ev == "migration-around":
        if key not in run.line:
            return False, "subtest not found in the output"
        n = migrations_around(run, key)
        return n > 0, f"pages and THPs migrations moved, failed or split around the subtest: {n}"
    if ev == "listed-subtest-failed":
        return bool(accepted_fail), ("accepted failing subtest(s): " + ", ".join(accepted_fail)
                                     if accepted_fail else "no accepted failing subtest in this pass")
    return False, f"unknown evidence {ev}"


def repro_name(path):
    return os.path.splitext(os.path.basename(path))[0]


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


def node1_share(run):
    """(node-1 share of the run's sampled pages or None, text)."""
    if not run or not run.numa.get("samples"):
        return None, "-"
    tot = run.numa.get("n0", 0) + run.numa.get("n1", 0)
    if not tot:
        return None, "-"
    sh = run.numa.get("n1", 0) / tot
    return sh, f"{int(100 * sh)}%"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--stdout", required=True)
    ap.add_argument("--console", required=True)
    ap.add_argument("--host")
    ap.add_argument("--tests", required=True)
    ap.add_argument("--expected")
    ap.add_argument("--known")
    ap.add_argument("--set", default="full")
    ap.add_argument("--vm-rc", type=int)
    ap.add_argument("--table")
    ap.add_argument("--passes", default="off on")
    ap.add_argument("--repros", default="", help="comma-separated reproducer names that must reproduce")
    a = ap.parse_args(argv)
    base = os.path.dirname(os.path.abspath(a.expected)) if a.expected else "."
    exp = load_expected(a.expected, base)
    known = load_known(a.known)
    ids = load_tests(a.tests)
    p_off, p_on = a.passes.split()
    ci = a.set == "ci"

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

    with open(a.stdout, errors="replace", newline="") as f:
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

    # The reproducers: one that did not reproduce, or could not run, leaves
    # its expected differences unproven.
    # A reproducer no entry of expected-diffs names proves nothing here:
    # it is reported, and its failure to run fails nothing.
    repro_ok = {}
    named = {repro_name(e["repro"]) for e in exp}
    for name in sorted(a.repros.split(",") if a.repros else []):
        rc = repro.get(name)
        repro_ok[name] = rc == 0
        if name not in named:
            if rc == 0:
                add("pass", f"mm:repro:{name}", "reproduced with kmmscand disabled (no expected difference rests on it)")
            else:
                add("skip", f"mm:repro:{name}", f"exit {rc}: no expected difference rests on it")
        elif rc is None:
            add("fail", f"mm:repro:{name}", "did not run: its expected differences are unproven")
        elif rc == 0:
            add("pass", f"mm:repro:{name}", "reproduced with kmmscand disabled")
        elif rc == 4:
            add("fail", f"mm:repro:{name}", "cannot run here (exit 4): its expected differences are unproven")
        else:
            add("fail", f"mm:repro:{name}", f"did not reproduce (exit {rc}): its expected differences are unproven")

    table = []
    hdr = (f"{'test':28} {'off (status p/f/s time)':26} {'on (status p/f/s time)':26} "
           f"{'node1 off/on':>12} {'promoted':>8} {'vmstat':>7} {'thp kmm mig/split':>17}  verdict")
    table.append(hdr)
    table.append("-" * len(hdr))
    diffs_table = []
    share = {p_off: [0, 0], p_on: [0, 0]}
    split_by = {p: {"kmmscand": 0, "demotion": 0, "other": 0} for p in (p_off, p_on)}
    nobase_total = []
    for tid in ids:
        off, on = runs.get((p_off, tid)), runs.get((p_on, tid))
        verdict = []
        for p, r in ((p_off, off), (p_on, on)):
            if r and r.numa.get("samples") and not find_known(known, "self-placed", tid):
                share[p][0] += r.numa.get("n1", 0)
                share[p][1] += r.numa.get("n0", 0) + r.numa.get("n1", 0)
            for why in ("kmmscand", "demotion", "other"):
                if r:
                    split_by[p][why] += r.stat.get(f"thp_split_{why}", 0)
        sh_off, t_off = node1_share(off)
        _, t_on = node1_share(on)
        prom = on.numa.get("promoted") if on and on.numa.get("samples") else None
        kprom = on.stat.get("kmmscand_promote_success", 0) if on else 0
        ksplit = on.stat.get("thp_split_kmmscand") if on else None
        kthp = on.stat.get("thp_kmmscand") if on else None
        thp_col = f"{'-' if kthp is None else kthp}/{'-' if ksplit is None else ksplit}"
        row = [tid, summary(off), summary(on), f"{t_off}/{t_on}", "-" if prom is None else str(prom),
               str(kprom), thp_col, verdict]
        table.append(row)

        if off is None or on is None or off.status == "missing" or on.status == "missing":
            which = [p for p, r in ((p_off, off), (p_on, on)) if r is None or r.status == "missing"]
            add("fail", f"mm:{tid}", f"did not finish in pass {'/'.join(which)} (VM died or timed out?)")
            verdict.append("did not finish")
            continue

        # Evidence that kmmscand had this test's memory to work on.
        sp = find_known(known, "self-placed", tid)
        ne = find_known(known, "not-exercised", tid)
        why_not = []
        if sh_off is None:
            why_not.append(f"no numa_maps sample in pass {p_off}")
        elif sh_off < MIN_TEST_NODE1_SHARE:
            why_not.append(f"only {t_off} of its sampled pages on node 1 in pass {p_off} "
                           f"(< {int(MIN_TEST_NODE1_SHARE * 100)}%)")
        if not prom:
            why_not.append(f"no page seen promoted in pass {p_on}")
        name = f"mm:{tid}:exercised"
        if sp:
            add("skip", name, f"places its pages itself (known-limits:{sp['line']}: {sp['reason']})")
            verdict.append("self-placed")
        elif not why_not:
            add("pass", name, f"{t_off} of its sampled pages on node 1 in pass {p_off}, "
                              f"{prom} seen promoted in pass {p_on}")
        elif ne:
            add("skip", name, f"not exercised: {'; '.join(why_not)} "
                              f"(known-limits:{ne['line']}: {ne['reason']})")
            verdict.append("not exercised (known)")
        else:
            add("fail" if ci else "skip", name, "not exercised: " + "; ".join(why_not))
            verdict.append("NOT EXERCISED")

        # THP splits by kmmscand's own migrations.
        if ksplit:
            ts = find_known(known, "thp-split", tid)
            if ts:
                add("pass", f"mm:{tid}:thp-split",
                    f"kmmscand split {ksplit} THP(s), allowed (known-limits:{ts['line']}: {ts['reason']})")
            else:
                add("fail", f"mm:{tid}:thp-split", f"kmmscand's migrations split {ksplit} THP(s)")
                verdict.append("THP SPLIT")

        pairs = [("(exit)", off.status, on.status)]
        for k in off.order + [k for k in on.order if k not in off.subs]:
            pairs.append((k, off.subs.get(k, "absent"), on.subs.get(k, "absent")))
        differing = [(k, so, sn) for k, so, sn in pairs if so != sn]
        same_fail = [k for k, so, sn in pairs if so == sn and so in ("fail", "timeout")]
        if off.subs:
            signal = any(so == sn == "pass" for k, so, sn in pairs[1:])
        else:
            signal = off.status == on.status == "pass"

        # No signal: what fails in both passes says nothing about kmmscand.
        if same_fail:
            subs_failing = [k for k in same_fail if k != "(exit)"]
            unknown = []
            reasons = []
            for k in same_fail:
                kb = find_known(known, "broken", tid, k)
                if kb:
                    reasons.append(f"known-limits:{kb['line']}: {kb['reason']}")
                elif k == "(exit)" and subs_failing:
                    continue    # the exit status of the failing subtests
                else:
                    unknown.append(k)
            what = ", ".join(same_fail[:4]) + (f" (+{len(same_fail) - 4})" if len(same_fail) > 4 else "")
            if unknown:
                add("fail", f"mm:{tid}:no-signal", f"fails identically in both passes: {what}")
                verdict.append("FAILS IN BOTH")
            else:
                add("skip", f"mm:{tid}:no-signal", f"fails identically in both passes: {what} "
                                                  f"({'; '.join(sorted(set(reasons)))})")
                verdict.append("fails in both (known)")
        if not differing:
            if signal:
                c = {"pass": 0, "fail": 0, "skip": 0}
                for st in off.subs.values():
                    c[st] += 1
                why = f"identical in both passes ({off.status}"
                if off.subs:
                    why += f"; {len(off.subs)} subtests: {c['pass']} pass, {c['fail']} fail, {c['skip']} skip"
                add("pass", f"mm:{tid}", why + ")")
                verdict.append("same")
            elif not same_fail:
                add("skip", f"mm:{tid}", "no signal: skipped in both passes")
                verdict.append("no signal (skipped)")
            continue

        # A subtest that failed (or never ran) with kmmscand off and passed
        # with it on has no baseline in this run. A skip with kmmscand on
        # is no pass: it may be kmmscand's doing.
        nobase = [(k, so, sn) for k, so, sn in differing if so in NO_BASELINE and sn == "pass"]
        if off.subs:
            # The exit status follows the subtests: not a subtest of its own.
            nobase = [d for d in nobase if d[0] != "(exit)"]
            differing = [d for d in differing if not (d[0] == "(exit)" and d[1] in NO_BASELINE
                                                      and d[2] == "pass")]
        if nobase:
            k0, so0, _ = nobase[0]
            why = (f"{len(nobase)} subtest(s) failed or did not run with kmmscand off and passed "
                   f"with it on, so they were not compared (first: {k0}: off={so0})")
            if ci:
                add("fail", f"mm:{tid}:no-baseline", why + "; MM_SET=ci needs a baseline for every subtest")
            else:
                add("skip", f"mm:{tid}:no-baseline", why)
            nobase_total.extend((tid, k) for k, _, _ in nobase)
            for k, so, sn in nobase:
                diffs_table.append((tid, k, so, sn, "no baseline"))
            verdict.append("no baseline")
        rest = [d for d in differing if d not in nobase]
        # (exit) last: it may only ride on a subtest accepted before it.
        rest.sort(key=lambda d: d[0] == "(exit)")
        accepted_fail = []
        for k, so, sn in rest:
            e = match_expected(exp, tid, k, sn)
            if not e:
                add("fail", f"mm:{tid}:{k}", f"off={so} on={sn}")
                diffs_table.append((tid, k, so, sn, "UNEXPECTED"))
                verdict.append("DIFFERS")
                continue
            e["hits"] += 1
            where = f"expected-diffs:{e['line']}"
            seen = []
            missing = []
            for ev in e["evidence"]:
                ok, what = evidence_holds(ev, on, k, accepted_fail)
                (seen if ok else missing).append(f"{ev}: {what}")
            name = repro_name(e["repro"])
            if a.repros and not repro_ok.get(name):
                missing.append(f"reproducer {name} did not reproduce in this boot")
            if missing:
                add("fail", f"mm:{tid}:{k}", f"off={so} on={sn}, listed ({where}) but without evidence: "
                                              + "; ".join(missing))
                diffs_table.append((tid, k, so, sn, "listed, NO EVIDENCE: " + "; ".join(missing)))
                verdict.append("DIFFERS (no evidence)")
                continue
            add("pass", f"mm:{tid}:{k}",
                f"off={so} on={sn}, expected ({where}, {e['repro']}): {e['reason']}; evidence: "
                + "; ".join(seen))
            diffs_table.append((tid, k, so, sn, f"expected ({'; '.join(seen)})"))
            verdict.append("expected diff")
            if sn == "fail" and k != "(exit)":
                accepted_fail.append(k)

    if len(nobase_total) > MAX_NO_BASELINE:
        add("fail", "mm:no-baseline",
            f"{len(nobase_total)} subtests without a baseline (more than {MAX_NO_BASELINE}): "
            f"the \"{p_off}\" pass is no baseline for this run")

    # Placement and promotion over the whole pass: the comparison means
    # something only if the tests' pages sat on node 1 and kmmscand moved
    # some of them. The layout is the same in both passes; in the "on" pass
    # kmmscand moves pages to node 0, so the share is asserted on the "off"
    # pass only.
    left = [t for t in ids if find_known(known, "self-placed", t)]
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
    out = []
    for row in table:
        if isinstance(row, list):
            row = (f"{row[0]:28} {row[1]:26} {row[2]:26} {row[3]:>12} {row[4]:>8} {row[5]:>7} "
                   f"{row[6]:>17}  {', '.join(row[7]) or '-'}")
        out.append(row)
    table = out
    table.append("")
    table.append(f"node1 off/on: share of the test's numa_maps page-samples on node 1 per pass; "
                 f"promoted: pages seen moving from node 1 to node 0 in pass {p_on} (numa_maps of the "
                 f"test's processes); vmstat: kmmscand_promote_success over the test (global); "
                 f"thp kmm mig/split: THPs kmmscand's migrations moved or tried to / split in pass {p_on}")
    table.extend(pass_info)
    table.extend(f"info: {i}" for i in infos)
    if diffs_table:
        table.append("")
        table.append("differing subtests:")
        for tid, k, so, sn, v in diffs_table:
            table.append(f"  {tid}: {k}: off={so} on={sn} -> {v}")
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
