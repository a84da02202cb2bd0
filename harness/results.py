#!/usr/bin/env python3
"""Turn one `make test` run into per-test results and the final count.

results.py --console console.log --stdout stdout.log --host host.txt
           [--suites kunit-suites] [--selftests name,name] [--vm-rc N]
           [--expected-skips FILE]

 * KUnit: the KTAP printed on the console at boot. Every test case of
   every suite counts; a suite listed in --suites that never ran fails.
 * kselftests: TAP between "@@KMM-BEGIN name@@" / "@@KMM-END name rc@@"
   markers on the guest's stdout channel; each "ok"/"not ok" line counts,
   "# SKIP" directives are skips; a binary fails that exits non-zero
   without a failed test line, prints no TAP result, prints a plan
   ("1..N") that does not match its results, or never ran.
 * host.txt: lines "ok NAME", "not ok NAME: why" or "skip NAME: why" from
   host-side checks (build, checkpatch).
 * the kernel log: any panic/Oops/BUG/WARNING/lockdep/KASAN/lockup line.
 * the VM: any exit status but 0 fails.
 * --expected-skips: lines "NAME | reason" (NAME may hold * wildcards);
   a skip whose name no line matches fails ("unexpected skip").  Without
   the option every skip is only counted.
Prints one line per test, then the last lines each failed selftest case
printed, and ends with "N passed, N failed, N skipped";
exit status 1 when anything failed.
"""
import argparse
import fnmatch
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import klog  # noqa: E402

TS = re.compile(r"^\[\s*\d+\.\d+\]\s?")
RES = re.compile(r"^(\s*)(not ok|ok)\s+\d+\s*(?:-\s*)?([^#]*?)\s*(?:#\s*(.*))?$")
SUBTEST = re.compile(r"^(\s*)# Subtest:\s*(\S+)")


class Tally:
    def __init__(self, expected_skips=None):
        self.passed = self.failed = self.skipped = 0
        self.lines = []
        self.details = []
        self.expected_skips = expected_skips

    def add(self, status, name, why=""):
        if status == "skip" and self.expected_skips is not None and not any(
                fnmatch.fnmatchcase(name, pat) for pat in self.expected_skips):
            status = "fail"
            why = f"unexpected skip ({why or 'no reason given'}); " \
                "an allowed skip is listed in harness/expected-skips"
        if status == "pass":
            self.passed += 1
        elif status == "skip":
            self.skipped += 1
        else:
            self.failed += 1
        tag = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}[status]
        self.lines.append(f"{tag} {name}" + (f": {why}" if why else ""))


def status_of(verdict, directive):
    if directive and directive.upper().startswith("SKIP"):
        return "skip"
    return "pass" if verdict == "ok" else "fail"


def parse_kunit(text, expected, t):
    lines = [TS.sub("", line.rstrip("\r")) for line in text.splitlines()]
    seen = set()
    suite = None
    suite_indent = None
    for line in lines:
        m = SUBTEST.match(line)
        if m and len(m.group(1)) == 4:
            suite, suite_indent = m.group(2), 4
            continue
        m = RES.match(line)
        if not m or suite is None:
            continue
        indent = len(m.group(1))
        verdict, name, directive = m.group(2), m.group(3).strip(), m.group(4)
        if indent == suite_indent:
            t.add(status_of(verdict, directive), f"kunit:{suite}.{name}",
                  "" if verdict == "ok" else "see console log")
        elif indent == 0 and name == suite:
            seen.add(suite)
            if verdict != "ok" and not any(
                    line.startswith(f"FAIL kunit:{suite}.") for line in t.lines):
                t.add("fail", f"kunit:{suite}", "suite failed")
            suite = None
    for s in expected:
        if s not in seen:
            t.add("fail", f"kunit:{s}", "expected suite did not run "
                  "(not built in? boot crashed?)")


DETAIL_LINES = 12


def parse_selftests(text, expected, t):
    """Also keeps, for each failed test case, the last DETAIL_LINES
    lines it printed (from its "# RUN" on) in t.details."""
    cur = None
    ran = {}
    case = []
    counted = 0
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        m = re.match(r"^@@KMM-BEGIN (\S+)@@$", line)
        if m:
            cur, counted, failed_seen, plan = m.group(1), 0, False, None
            continue
        m = re.match(r"^@@KMM-END (\S+) (\d+)@@$", line)
        if m and cur:
            rc = int(m.group(2))
            ran[cur] = rc
            if counted == 0:
                t.add("fail", f"selftest:{cur}",
                      f"exit status {rc}, no TAP results")
            elif rc not in (0, 4) and not failed_seen:
                t.add("fail", f"selftest:{cur}", f"exit status {rc}")
            if counted and plan is not None and plan != counted:
                t.add("fail", f"selftest:{cur}",
                      f"TAP plan 1..{plan}, {counted} result(s)")
            cur = None
            continue
        if cur is None:
            continue
        if re.match(r"^#\s+RUN\s", line):
            case = []
        case.append(line)
        m = re.match(r"^1\.\.(\d+)\s*$", line)
        if m:
            plan = int(m.group(1))
            continue
        m = RES.match(line)
        if m and m.group(1) == "":
            st = status_of(m.group(2), m.group(4))
            why = (m.group(4) or "") if st == "skip" else (
                "see its last lines below" if st == "fail" else "")
            name = f"selftest:{cur}:{m.group(3).strip()}"
            t.add(st, name, why)
            if st == "fail":
                t.details.append((name, case[-DETAIL_LINES:]))
            case = []
            counted += 1
            failed_seen = failed_seen or st == "fail"
    if cur is not None:
        t.add("fail", f"selftest:{cur}", "did not finish (VM died or timed out)")
        ran[cur] = -1
    for name in expected:
        if name not in ran:
            t.add("fail", f"selftest:{name}", "never ran")


def parse_host(path, t):
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            for prefix, st in (("not ok ", "fail"), ("ok ", "pass"), ("skip ", "skip")):
                if line.startswith(prefix):
                    name, _, why = line[len(prefix):].partition(": ")
                    t.add(st, name, why)
                    break


def read_expected_skips(path):
    """The NAME patterns of a "NAME | reason" file; a line without a
    reason is an error, so that every allowed skip says why."""
    pats = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, why = line.partition(" | ")
            if not sep or not name.strip() or not why.strip():
                sys.exit(f"{path}:{n}: expected \"NAME | reason\", got: {line}")
            pats.append(name.strip())
    return pats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--console")
    ap.add_argument("--stdout")
    ap.add_argument("--host")
    ap.add_argument("--suites")
    ap.add_argument("--selftests", default="")
    ap.add_argument("--vm-rc", type=int)
    ap.add_argument("--allow", default="",
                    help="comma-separated klog kinds judged elsewhere (e.g. kmemleak)")
    ap.add_argument("--expected-skips",
                    help='file of "NAME | reason" lines: any other skip fails')
    a = ap.parse_args()
    t = Tally(read_expected_skips(a.expected_skips) if a.expected_skips else None)
    if a.host:
        parse_host(a.host, t)
    if a.console:
        with open(a.console, errors="replace") as f:
            console = f.read()
        expected = []
        if a.suites:
            with open(a.suites) as f:
                expected = [s.split("#")[0].strip() for s in f]
                expected = [s for s in expected if s]
        parse_kunit(console, expected, t)
        bad = klog.bad_lines(console, allow=[k for k in a.allow.split(",") if k])
        if bad:
            for kind, line in bad[:20]:
                t.lines.append(f"  kernel log: {kind}: {line}")
            t.add("fail", "kernel-log", f"{len(bad)} error line(s) in the console log")
        else:
            t.add("pass", "kernel-log")
        if a.vm_rc is not None:
            if a.vm_rc == 124:
                t.add("fail", "vm", "timed out (wall-clock budget exceeded)")
            elif a.vm_rc == 125:
                t.add("fail", "vm", "died without reporting (panic? see console log)")
            elif a.vm_rc:
                t.add("fail", "vm", f"exit status {a.vm_rc}")
            else:
                t.add("pass", "vm")
    if a.stdout:
        with open(a.stdout, errors="replace") as f:
            out = f.read()
        names = [n for n in a.selftests.split(",") if n]
        parse_selftests(out, names, t)
    for line in t.lines:
        print(line)
    # The failed cases' own words last, so that a log cut to its tail
    # still says why.
    for name, lines in t.details:
        print(f"--- {name}, its last lines:")
        for line in lines:
            print(f"  | {line}")
    summary = f"{t.passed} passed, {t.failed} failed"
    if t.skipped:
        summary += f", {t.skipped} skipped"
    print(summary)
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
