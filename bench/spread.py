#!/usr/bin/env python3
"""bench/spread.py - spread of key metrics over several bench runs.

usage: spread.py bench-results/<ts1> bench-results/<ts2> ...
Prints, per workload x policy, min / median / max of t90, the time-averaged
and final hot coverage, kthread CPU and the modelled speedup at 3x over every
kept run of the given result directories (one directory is enough when it
was run with REPEAT > 1).  'never' counts as the slowest t90, as in
report.py.
"""
import csv
import os
import statistics
import sys

KEYS = [("t90_s", "t90 s"), ("hot_tavg_pct", "hot time-avg %"), ("hot_final_pct", "hot end %"),
        ("cold_promoted_pct", "cold %"), ("kthread_cpu_s", "kthread CPU s"),
        ("task_sys_s", "task sys s"), ("model_speedup_3x", "modelled speedup 3x")]
NEVER = float("inf")


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
                    if v not in ("", None):
                        vals.setdefault((k, key), []).append(float(v))
                    elif key == "t90_s":
                        vals.setdefault((k, key), []).append(NEVER)
    print("spread over %d result directories: min / median / max of the kept runs "
          "(never = not within the run, the slowest)\n" % len(dirs))
    print("| workload | policy | " + " | ".join(h for _, h in KEYS) + " |")
    print("|---|---|" + "---|" * len(KEYS))
    for k in order:
        cells = []
        for key, _ in KEYS:
            v = vals.get((k, key))
            if not v:
                cells.append("-")
                continue
            v = sorted(v)

            def f(x):
                return "never" if x == NEVER else "%.2f" % x
            cells.append("%s / %s / %s" % (f(v[0]), f(statistics.median(v)), f(v[-1])))
        print("| %s | %s | %s |" % (k[0], k[1], " | ".join(cells)))


if __name__ == "__main__":
    main()
