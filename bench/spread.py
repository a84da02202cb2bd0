#!/usr/bin/env python3
"""bench/spread.py - spread of key metrics over several bench runs.

usage: spread.py bench-results/<ts1> bench-results/<ts2> ...
Prints, per workload x policy, min / median / max of t90, final hot coverage,
kthread CPU and modelled speedup over every run of the given result
directories (one directory is enough when it was run with REPEAT > 1).
"""
import csv
import os
import statistics
import sys

KEYS = [("t90_s", "t90 s"), ("hot_final_pct", "hot %"), ("cold_promoted_pct", "cold %"),
        ("kthread_cpu_s", "kthread CPU s"), ("task_sys_s", "task sys s"),
        ("model_speedup", "modelled speedup")]


def load(d):
    with open(os.path.join(d, "results.csv")) as f:
        return list(csv.DictReader(f))


def main():
    dirs = sys.argv[1:]
    if not dirs:
        sys.exit(__doc__)
    vals, order = {}, []
    for d in dirs:
        for r in load(d):
            k = (r["workload"], r["policy"])
            if k not in order:
                order.append(k)
            for key, _ in KEYS:
                v = r.get(key, "")
                if r.get("status") == "ok":
                    vals.setdefault((k, key), []).append(
                        float(v) if v not in ("", None) else float("nan"))
    print("spread over %d result directories: min / median / max (nan = never or n/a)\n"
          % len(dirs))
    print("| workload | policy | " + " | ".join(h for _, h in KEYS) + " |")
    print("|---|---|" + "---|" * len(KEYS))
    for k in order:
        cells = []
        for key, _ in KEYS:
            v = vals.get((k, key))
            if not v:
                cells.append("-")
                continue
            good = sorted(x for x in v if x == x)
            if not good:
                cells.append("never" if key == "t90_s" else "-")
                continue
            tag = "" if len(good) == len(v) else " (%d never)" % (len(v) - len(good))
            cells.append("%.2f / %.2f / %.2f%s" % (good[0], statistics.median(good), good[-1], tag))
        print("| %s | %s | %s |" % (k[0], k[1], " | ".join(cells)))


if __name__ == "__main__":
    main()
