#!/usr/bin/env python3
"""bench/report.py - turn the guest output of bench/run-in-vm.sh into
results.csv, results.md, summary.txt and coverage.png (gnuplot).

The redis workloads (bench/redis-workload.sh) get their own table and plot
panels: placement of the server's resident pages over time, requests/s and
latency percentiles from redis-benchmark, promoter CPU, hint faults and
migrations.

The parts: report_parse.py reads raw.log, report_metrics.py computes each
run's metrics and their medians, report_tables.py writes the sections of
results.md and summary.txt, report_plot.py draws coverage.png.

usage: report.py RAW_LOG OUTDIR
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_parse import parse  # noqa: E402
from report_plot import plot  # noqa: E402
import report_tables as tables  # noqa: E402

# The sections of results.md, in order; the summary and the plot follow.
SECTIONS = [tables.header_md, tables.main_table_md, tables.sources_md, tables.redis_md,
            tables.phase_md, tables.pressure_md, tables.scancost_md, tables.scale_md,
            tables.wakelat_md, tables.left_out_md]


def write_csv(path, data):
    """One row per dict of DATA, the union of their keys as columns."""
    keys = []
    for m in data:
        for k in m:
            if k not in keys:
                keys.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for m in data:
            w.writerow({k: ("" if m.get(k) is None else m.get(k)) for k in keys})


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    raw, out = sys.argv[1], sys.argv[2]
    env, runs = parse(raw)
    if not runs:
        sys.exit("report.py: no @@RUN blocks found in %s" % raw)
    r = tables.Report(env, runs)

    os.makedirs(out, exist_ok=True)
    # results.csv: one row per run; results-median.csv: one per workload x policy
    write_csv(os.path.join(out, "results.csv"), r.rows)
    write_csv(os.path.join(out, "results-median.csv"),
              [r.by[(wl, p)] for wl in r.workloads for p in r.pols if (wl, p) in r.by])

    md = []
    for section in SECTIONS:
        md += section(r)
    summ = tables.summary_lines(r)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(summ) + "\n")
    md.append("## Summary\n")
    md.append("```\n" + "\n".join(summ) + "\n```\n")
    md.append("![hot-set coverage over time](coverage.png)%s\n" % (
        " (first repeat of every run)" if r.multi else ""))
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md))

    plot(out, [x for x in runs if x.get("rep", 1) == 1], r.workloads, r.pols, r.redis_wls)
    print("\n".join(md))


if __name__ == "__main__":
    main()
