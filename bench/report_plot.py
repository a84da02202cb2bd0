"""bench/report_plot.py - coverage.png: each run's hot-set residency on
node 0 over time (gnuplot), for bench/report.py."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from placement import time_avg  # noqa: E402
from report_metrics import POLICY_ORDER  # noqa: E402


def plot(out, runs, workloads, pols, redis_wls=()):
    dd = os.path.join(out, "data")
    os.makedirs(dd, exist_ok=True)
    panels = []
    for wl in workloads:
        lines = []
        for p in pols:
            r = next((x for x in runs if x["workload"] == wl and x["policy"] == p), None)
            if not r or not (r["T"] or r["NM"]):
                continue
            fn = os.path.join(dd, "%s.%s.dat" % (wl, p))
            with open(fn, "w") as f:
                if wl in redis_wls:
                    f.write("# t server_rss_on0 anon_on0 rss_mb\n")
                    for t in r["NM"]:
                        f.write("%.1f %.4f %.4f %.1f\n" % t)
                else:
                    f.write("# t hot_on0 cold_on0 acc_on0 ops\n")
                    for t in r["T"]:
                        f.write("%.3f %.4f %.4f %.4f %d\n" % t)
            if wl in redis_wls:
                avg = time_avg([(t[0], t[1]) for t in r["NM"]])
            else:
                avg = time_avg([(t[0], t[1]) for t in r["T"]])
            lines.append((p + ("" if avg is None else " (avg %.0f%%)" % (100 * avg)), fn,
                          r.get("phase")))
        if lines:
            panels.append((wl, lines))
    if not panels:
        return
    gp = shutil.which("gnuplot")
    cols = 3 if len(panels) > 4 else min(2, len(panels))
    rows_ = (len(panels) + cols - 1) // cols
    script = ["set terminal pngcairo noenhanced size %d,%d font ',9'" % (480 * cols, 330 * rows_)
              if gp and "pngcairo" in terminals(gp) else
              "set terminal png noenhanced size %d,%d" % (480 * cols, 330 * rows_),
              "set output '%s'" % os.path.join(out, "coverage.png"),
              "set multiplot layout %d,%d title 'hot-set residency on node 0 over time, "
              "key: its time average (TCG VM; placement measured with move_pages; redis: "
              "resident pages of the server, numa_maps)'" % (rows_, cols),
              "set yrange [0:1.05]", "set xlabel 's'", "set ylabel 'hot on node0'",
              "set key bottom right", "set grid"]
    for wl, lines in panels:
        if wl in redis_wls:
            script += ["set title '%s (server RSS on node 0)'" % wl, "set ylabel 'RSS on node0'"]
        else:
            script += ["set title '%s'" % wl, "set ylabel 'hot on node0'"]
        ph = next((x[2] for x in lines if x[2]), None)
        script.append("unset arrow")
        if ph:
            script.append("set arrow from %g,0 to %g,1.05 nohead dt 2" % (ph, ph))
        script.append("plot " + ", ".join(
            "'%s' using 1:2 with lines lw 2 lc %d title '%s'" % (
                fn, color(pols, p.split(" ")[0]), p)
            for p, fn, _ in lines))
    script.append("unset multiplot")
    with open(os.path.join(out, "coverage.gp"), "w") as f:
        f.write("\n".join(script) + "\n")
    if not gp:
        print("report.py: gnuplot not found; wrote coverage.gp only", file=sys.stderr)
        return
    res = subprocess.run([gp, os.path.join(out, "coverage.gp")], capture_output=True, text=True)
    if res.returncode:
        print("report.py: gnuplot failed: %s" % res.stderr.strip(), file=sys.stderr)


def color(pols, p):
    order = POLICY_ORDER + [x for x in pols if x not in POLICY_ORDER]
    return order.index(p) + 1


def terminals(gp):
    try:
        return subprocess.run([gp, "-e", "set terminal"], capture_output=True, text=True,
                              timeout=20).stderr + ""
    except Exception:
        return ""
