#!/usr/bin/env python3
"""Scan a kernel console log for reports that must fail a run.

Usage: klog.py CONSOLE_LOG   -- prints each offending line, exit 1 if any.
Importable: bad_lines(text) -> list of (kind, line).
"""
import re
import sys

PATTERNS = [
    ("panic", re.compile(r"Kernel panic")),
    ("oops", re.compile(r"\bOops\b|general protection fault")),
    ("bug", re.compile(r"\bBUG[: ]|kernel BUG at")),
    ("warning", re.compile(r"WARNING: CPU: |------------\[ cut here \]------------")),
    ("lockdep", re.compile(r"possible circular locking|possible recursive locking|"
                           r"inconsistent lock state|suspicious RCU usage|"
                           r"lock held when returning|INFO: possible irq lock inversion|"
                           r"bad unlock balance detected|held lock freed|still has locks held|"
                           r"Nested lock was not taken|bad contention detected|"
                           r"lock order detected|chain_key collision")),
    ("kasan", re.compile(r"KASAN:")),
    ("ubsan", re.compile(r"UBSAN:")),
    ("softlockup", re.compile(r"soft lockup|hard LOCKUP|rcu_sched self-detected stall|"
                              r"rcu: INFO: rcu_preempt|rcu: INFO: rcu_sched detected stalls")),
    ("refcount", re.compile(r"refcount_t: (underflow|overflow|saturated|addition on 0|decrement hit 0)")),
    ("hung_task", re.compile(r"blocked for more than \d+ seconds")),
    ("kmemleak", re.compile(r"kmemleak: \d+ new suspected memory leaks")),
    # A debug checker that switched itself off: the rest of the run is unchecked.
    ("checker-off", re.compile(r"Kernel memory leak detector disabled|ODEBUG: Out of memory|"
                               r"ODEBUG disabled|turning off the locking correctness validator")),
]
TS = re.compile(r"^\[\s*\d+\.\d+\]\s?")


def bad_lines(text, allow=()):
    """allow: kinds not to report (a caller that judges them itself)."""
    out = []
    for raw in text.splitlines():
        line = TS.sub("", raw.rstrip("\r"))
        for kind, pat in PATTERNS:
            if kind in allow:
                continue
            if pat.search(line):
                out.append((kind, line))
                break
    return out


def main():
    if len(sys.argv) != 2:
        print("usage: klog.py CONSOLE_LOG", file=sys.stderr)
        return 2
    with open(sys.argv[1], errors="replace") as f:
        bad = bad_lines(f.read())
    for kind, line in bad:
        print(f"kernel log: {kind}: {line}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
