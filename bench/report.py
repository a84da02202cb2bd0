#!/usr/bin/env python3
"""bench/report.py - turn the guest output of bench/run-in-vm.sh into
results.csv, results.md, summary.txt and coverage.png (gnuplot).

The redis workloads (bench/redis-workload.sh) get their own table and plot
panels: placement of the server's resident pages over time, requests/s and
latency percentiles from redis-benchmark, promoter CPU, hint faults and
migrations.

usage: report.py RAW_LOG OUTDIR
"""
import csv
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from placement import modelled_speedup, time_avg  # noqa: E402

POLICY_ORDER = ["none", "kmmscand", "numab2", "numab2-async", "kmm+faults", "damos-tuned",
                "damos-naive", "kmm-nopmd", "kmm-tlb"]
DEFAULT_LAT0, DEFAULT_LAT1 = 10.0, 100.0
# slow/fast latency ratios of the modelled speedup: CXL-attached DRAM is
# about 2-3x local DRAM; the VM's HMAT ratio (10x) is added next to them
MODEL_RATIOS = (2.0, 3.0)


def kv(s):
    return dict(m.groups() for m in re.finditer(r"(\S+?)=(\S*)", s))


def num(x, default=None):
    try:
        return float(x)
    except (TypeError, ValueError):
        return default


def parse(path):
    env, runs, cur = {}, [], None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            # the guest may interleave kernel messages; find our markers anywhere
            i = line.find("@@")
            tag = line[i:] if i >= 0 else line
            if tag.startswith("@@BENCH-END"):
                env["bench_end"] = True
            elif tag.startswith("@@BENCH-BEGIN"):
                env["bench_begin"] = True
            elif tag.startswith("@@ENV "):
                rest = tag[6:]
                if rest.startswith("kmmscand"):
                    env["kmmscand_info"] = rest
                env.update(kv(rest))
            elif tag.startswith("@@ORDER "):
                env.setdefault("orders", []).append(kv(tag[8:]))
            elif tag.startswith("@@RUN-BEGIN "):
                d = kv(tag[12:].split(" args=")[0])
                pol = d.get("policy")
                cur = {"workload": d.get("workload"),
                       "policy": "damos-naive" if pol == "damos" else pol,
                       "rep": int(num(d.get("rep"), 1)), "rate": None, "balloon": {},
                       "args": tag.split(" args=", 1)[1] if " args=" in tag else "",
                       "T": [], "result": {}, "W": [], "vmstat": {}, "cpu": {},
                       "damos": {}, "skip": None, "info": [], "warn": [], "vmstall": [],
                       "wakelat": {},
                       "phase": None,
                       "setup": {}, "NM": [], "BM": [], "redis_tests": [], "redis": None,
                       "load": {}, "move": {}}
            elif cur is None:
                continue
            elif tag.startswith("@@RUN-END "):
                d = kv(tag[10:])
                cur["rc"] = int(num(d.get("rc"), -1))
                cur["wall"] = num(d.get("wall"), 0)
                runs.append(cur)
                cur = None
            elif tag.startswith("@@SKIP "):
                cur["skip"] = tag[7:]
            elif tag.startswith("@@VMSTAT "):
                _, k, v = tag.split()
                cur["vmstat"][k] = int(v)
            elif tag.startswith("@@CPU "):
                _, k, v = tag.split()
                cur["cpu"][k] = num(v, 0)
            elif tag.startswith("@@DAMOS "):
                _, k, v = tag.split()
                cur["damos"][k] = int(v)
            elif tag.startswith("@@RATE"):
                cur["rate"] = num(tag[6:].strip())
            elif tag.startswith("@@INFO "):
                cur["info"].append(tag[7:])
            elif tag.startswith("@@WARN "):
                cur["warn"].append(tag[7:])
            elif tag.startswith("@@VMSTALL "):
                cur["vmstall"].append(tag[10:])
            elif tag.startswith("@@WAKELAT "):
                w = tag[10:].split()
                if w:
                    cur["wakelat"][w[0]] = kv(" ".join(w[1:]))
            elif line.startswith("NM "):
                d = kv(line)
                cur["NM"].append((num(line.split()[1], 0), num(d.get("on0"), 0),
                                  num(d.get("anon_on0"), 0), num(d.get("rss_mb"), 0)))
            elif line.startswith("BM "):
                d = kv(line)
                d["t"] = num(line.split()[1], 0)
                cur["BM"].append(d)
            elif line.startswith("REDIS-TEST "):
                cur["redis_tests"].append(kv(line))
            elif line.startswith("REDIS-RESULT "):
                cur["redis"] = kv(line)
            elif line.startswith("LOAD "):
                cur["load"] = kv(line)
            elif line.startswith("MOVE "):
                cur["move"] = kv(line)
            elif line.startswith("T "):
                p = line.split()
                d = kv(line)
                cur["T"].append((num(p[1], 0), num(d.get("hot_on0"), 0),
                                 num(d.get("cold_on0"), 0), num(d.get("acc_on0"), 0),
                                 num(d.get("ops"), 0)))
                cur.setdefault("Tq", []).append(num(d.get("q_ms")))
                if "hotA_on0" in d:
                    cur.setdefault("TP", []).append((num(p[1], 0), num(d.get("hotA_on0"), 0),
                                                     num(d.get("hotB_on0"), 0)))
            elif line.startswith("PHASE "):
                cur["phase"] = num(kv(line).get("t"))
            elif line.startswith("BALLOON "):
                cur["balloon"] = kv(line)
            elif line.startswith("SETUP "):
                cur["setup"] = kv(line)
            elif line.startswith("W "):
                cur["W"].append(kv(line))
            elif line.startswith("RESULT "):
                cur["result"] = kv(line)
    return env, runs


def at_time(series, t):
    """The value of the last (time, value) sample taken by time t."""
    before = [v for ts, v in series if ts <= t + 0.25]
    return before[-1] if before else (series[0][1] if series else None)


def run_status(run, ok):
    """ok, or why the run is left out of the medians: skipped, failed, or
    vm-stall (the guest logged a soft lockup or an RCU stall meanwhile)."""
    if run["skip"]:
        return "skipped"
    if not ok:
        return "failed"
    return "vm-stall" if run["vmstall"] else "ok"


def run_note(run):
    if run["skip"]:
        return run["skip"]
    return "; ".join((run["vmstall"] + run["warn"])[:3])


def redis_metrics(run, dur):
    """Metrics of a redis workload run (bench/redis-workload.sh)."""
    r = run["redis"] or {}
    ok = bool(r) and run.get("rc") == 0 and r.get("failed") == "0"
    m = {"workload": run["workload"], "policy": run["policy"], "rep": run.get("rep", 1),
         "kind": "redis",
         "status": run_status(run, ok), "note": run_note(run)}
    if not r:
        return m
    nm = [(t, on0) for t, on0, _, _ in run["NM"]]
    m["on0_setup_pct"] = 100 * num(r.get("on0_setup"), 0)
    tavg = time_avg(nm)
    m["on0_tavg_pct"] = 100 * tavg if tavg is not None else None
    m["on0_final_pct"] = 100 * num(r.get("on0_final"), 0)
    m["anon_on0_final_pct"] = 100 * num(r.get("anon_on0_final"), 0)
    for q, name in ((0.25, "q1"), (0.5, "q2"), (0.75, "q3")):
        v = at_time(nm, q * dur) if dur else None
        m["on0_%s_pct" % name] = 100 * v if v is not None else None
    m["rss_mb"] = num(r.get("rss_mb"))
    m["load_s"] = num(run["load"].get("secs"))
    m["move_s"] = num(run["setup"].get("move_s"))
    m["setup_s"] = num(run["setup"].get("secs"))
    m["ops"] = 0
    for t in run["redis_tests"]:
        name = t.get("test", "?").lower()
        for k in ("rps", "rps_first", "rps_last", "p50_ms", "p99_ms"):
            m["%s_%s" % (name, k)] = num(t.get(k))
        m["%s_loops" % name] = num(t.get("loops"), 0)
        m["ops"] += num(t.get("requests"), 0)
    m["rps"] = sum(m.get("%s_rps" % t.get("test", "?").lower()) or 0 for t in run["redis_tests"])
    v = run["vmstat"]
    m["numa_hint_faults"] = v.get("numa_hint_faults", 0)
    m["pgpromote_success"] = v.get("pgpromote_success", 0)
    m["pgmigrate_success"] = v.get("pgmigrate_success", 0)
    m["pgdemote"] = sum(x for k, x in v.items() if k.startswith("pgdemote_"))
    m["promoted_pages"] = max(0, m["pgmigrate_success"] - m["pgdemote"])
    m["kmmscand_pte_scanned"] = v.get("kmmscand_pte_scanned", 0)
    m["kmmscand_young"] = v.get("kmmscand_young", 0)
    m["damos_sz_applied"] = run["damos"].get("sz_applied", 0)
    m["kthread_cpu_s"] = sum(run["cpu"].values())
    for k, x in run["cpu"].items():
        m["cpu_" + k] = x
    # the server's own time: NUMA balancing's scanning and hint faults are
    # charged to it
    m["task_sys_s"] = num(r.get("server_stime"), 0)
    m["task_user_s"] = num(r.get("server_utime"), 0)
    m["wall_s"] = run.get("wall", 0)
    return m


def fast_free_start(run, fast):
    """MB free on the fast node before the run (@@INFO before ...)."""
    for line in run["info"]:
        if line.startswith("before "):
            return num(kv(line).get("node%s_free_mb" % fast))
    return None


def regime(env, rows):
    """results.md line: node 0's size and whether NUMA balancing's
    first-access rule could hold in this VM."""
    fast = env.get("fast_node", "0")
    total = num(env.get("node%s_total_mb" % fast))
    free = [m["fast_free_start_mb"] for m in rows if m.get("fast_free_start_mb") is not None
            and not special(m.get("workload", ""))]
    if total is None and not free:
        return None
    s = "Fast node %s: %s MB, free at the start of the runs %s MB.  " % (
        fast, fmt(total, 0, "?"), "%s–%s" % (fmt(min(free), 0), fmt(max(free), 0)) if free
        else "?")
    if not free:
        s += "Which NUMA balancing regime applied is unknown (no free memory logged)."
    elif max(free) < 1024:
        s += ("NUMA balancing's first-access rule (promote any slow page on its first hint "
              "fault while the fast node has >= 1 GB free above its promotion watermark, "
              "`pgdat_free_space_enough()`) **never held**: numab2 promoted only pages "
              "that passed its hot threshold.  `BIG0=1` / `BENCH=quick-bignode` run the "
              "other regime.")
    else:
        s += ("More than 1 GB was free: NUMA balancing's first-access rule "
              "(`pgdat_free_space_enough()`: >= 1 GB free above the promotion watermark) "
              "can hold, numab2 then promotes a slow page on its first hint fault, "
              "without its hot threshold, while that much stays free (topfull's balloon "
              "leaves 32 MB: never there).")
    return s


def metrics(run, dur=None, fast="0"):
    if run.get("redis") is not None or run["workload"].startswith("redis"):
        return redis_metrics(run, dur)
    r = run["result"]
    m = {"workload": run["workload"], "policy": run["policy"], "rep": run.get("rep", 1),
         "status": run_status(run, bool(r) and run.get("rc") == 0), "note": run_note(run)}
    if not r:
        return m
    t50, t90 = num(r.get("t50"), -1), num(r.get("t90"), -1)
    m["t50_s"] = t50 if t50 >= 0 else None
    m["t90_s"] = t90 if t90 >= 0 else None
    # the placement sampling period: t50/t90 are known to within one period
    # (logs of workloads without sample_ms= sampled once a second).  A
    # sampler whose queries outlast the period skips samples: the period
    # that counts is then the median spacing of the samples actually taken
    ts = [x[0] for x in run["T"]]
    gaps = [b - a for a, b in zip(ts, ts[1:])]
    m["sample_s"] = num(r.get("sample_ms"), 1000) / 1000
    if gaps:
        m["sample_gap_median_s"] = statistics.median(gaps)
        m["sample_gap_max_s"] = max(gaps)
        m["sample_s"] = max(m["sample_s"], round(m["sample_gap_median_s"], 2))
    q = [x for x in run.get("Tq", []) if x is not None]
    if q:
        m["sample_query_ms_median"] = statistics.median(q)
    m["hot_final_pct"] = 100 * num(r.get("hot_final"), 0)
    m["cold_promoted_pct"] = 100 * num(r.get("cold_final"), 0)
    # the old whole-run figure: accesses weighted by the workload's own
    # throughput, credited to the placement at the end of each interval
    m["acc_on0_pct"] = 100 * num(r.get("acc_on0"), 0)
    # time-weighted over the sampled run (bench/placement.py): the hot set's
    # share on the fast node, and the share of the accesses it served (an
    # interval without counted accesses takes the hot-set share)
    hot = time_avg([(t, h) for t, h, _, _, _ in run["T"]])
    acc = time_avg([(t, a if a >= 0 else h) for t, h, _, a, _ in run["T"]])
    m["hot_tavg_pct"] = 100 * hot if hot is not None else None
    m["acc_tavg"] = acc
    v = run["vmstat"]
    m["pgmigrate_success"] = v.get("pgmigrate_success", 0)
    m["pgpromote_success"] = v.get("pgpromote_success", 0)
    m["kmmscand_promote_success"] = v.get("kmmscand_promote_success", 0)
    m["pgdemote"] = sum(x for k, x in v.items() if k.startswith("pgdemote_"))
    m["numa_hint_faults"] = v.get("numa_hint_faults", 0)
    m["kmmscand_pte_scanned"] = v.get("kmmscand_pte_scanned", 0)
    m["kmmscand_pmd_skipped"] = v.get("kmmscand_pmd_skipped", 0)
    m["kmmscand_young"] = v.get("kmmscand_young", 0)
    m["kmmscand_candidate"] = v.get("kmmscand_candidate", 0)
    # peak history memory (sampled every 0.1 s) and TLB flushes per second
    m["history_peak_bytes"] = v.get("kmmscand_history_peak_bytes", 0)
    m["tlb_flush_per_s"] = (v.get("kmmscand_tlb_flush", 0) / run["wall"]
                            if run.get("wall") else None)
    for k in ("kmmscand_abit_promoted", "kmmscand_fault_promoted", "kmmscand_fault_recorded",
              "kmmscand_fault_fallback", "kmmscand_record_lost", "pgpromote_candidate"):
        m[k] = v.get(k, 0)
    m["damos_sz_applied"] = run["damos"].get("sz_applied", 0)
    m["kthread_cpu_s"] = sum(run["cpu"].values())
    for k, x in run["cpu"].items():
        m["cpu_" + k] = x
    m["fast_free_start_mb"] = fast_free_start(run, fast)
    m["task_sys_s"] = num(r.get("work_stime"), 0)
    m["task_user_s"] = num(r.get("work_utime"), 0)
    m["p50_us"] = num(r.get("p50_us"))
    m["p99_us"] = num(r.get("p99_us"))
    m["max_us"] = num(r.get("max_us"))
    m["ops"] = num(r.get("ops"), 0)
    m["setup_s"] = num(r.get("setup_s"), 0)
    m["wall_s"] = run.get("wall", 0)
    m["threads"] = num(r.get("threads"))
    m["thp_mb_setup"] = num(run["setup"].get("thp_mb"))
    m["thp_mb_end"] = num(r.get("thp_mb_end"))
    if run.get("move"):
        m["moved_on_slow_pages"] = num(run["move"].get("on_slow"))
        m["move_s"] = num(run["move"].get("secs"))
    # pages promoted: every migration that was not a demotion (DAMOS promotions
    # are not counted in pgpromote_success, MR_DAMON)
    m["promoted_pages"] = max(0, m["pgmigrate_success"] - m["pgdemote"])
    m["rate_mbps"] = run.get("rate")
    m["hot_mb"] = num(r.get("hot_pages"), 0) * 4096 / 2 ** 20
    if run.get("balloon"):
        m["balloon_mb"] = num(run["balloon"].get("mb"))
        # the fast node's free memory: node0_... in the VM, nodeN_... with FAST_NODE=N
        free = [v for k, v in run["balloon"].items()
                if re.fullmatch(r"node\d+_free_mb_after", k)]
        m["free0_mb"] = num(free[0]) if free else None
        # copy-and-demote bound for t90: 90% of the hot set copied at the
        # promotion rate limit, plus demoting as much at the same rate
        if m["rate_mbps"]:
            m["bound_t90_s"] = 2 * 0.9 * m["hot_mb"] / m["rate_mbps"]
    tp = run.get("TP")
    ph = run.get("phase")
    if tp and ph is not None:
        before = [x for x in tp if x[0] < ph]
        if before:
            m["phase_hotA_at_move_pct"] = 100 * before[-1][1]
            m["phase_t90_before_s"] = next((x[0] for x in before if x[1] >= 0.9), None)
        m["phase_hotA_final_pct"] = 100 * tp[-1][1]
        m["phase_hotB_final_pct"] = 100 * tp[-1][2]
    return m


def ratio(a, b):
    """a / b for the target ratios; None when either is missing or b is 0."""
    if a is None or b is None or b == 0:
        return None
    return a / b


def t90_within(b, a, factor, period):
    """b <= factor * a for times known to one sampling period: met when b is
    within one period of factor * a.  None (never) counts as infinity."""
    if a is None and b is None:
        return None		# neither got there: no verdict
    if b is None:
        return False
    if a is None:
        return True
    return b <= factor * a + period + 1e-9


def t_order(a, b, period):
    """-1 when a is faster than b by more than one sampling period, 1 when
    slower, 0 a tie (None = never = infinity)."""
    a = INF if a is None else a
    b = INF if b is None else b
    if a == b or abs(a - b) <= period + 1e-9:
        return 0
    return -1 if a < b else 1


def sources_tables(by, wls, period=1.0):
    """numab2-async against numab2 (the targets: task sys <= 0.5x, t90 <= 1.5x,
    p99 vs none no worse) and both sources against each alone.  t90 is known
    to one sampling period (period s): differences within it are ties."""
    def ok(wl, p):
        m = by.get((wl, p))
        return m if m and m.get("status") == "ok" else None

    out = []
    rows = []
    for wl in wls:
        a, b = ok(wl, "numab2"), ok(wl, "numab2-async")
        if not a or not b:
            continue
        sys_r = ratio(b.get("task_sys_s"), a.get("task_sys_s"))
        t90_r = ratio(b.get("t90_s"), a.get("t90_s"))
        per = max(a.get("sample_s") or period, b.get("sample_s") or period)
        t90_ok = t90_within(b.get("t90_s"), a.get("t90_s"), 1.5, per)
        p99_ok = None
        if a.get("p99_vs_none") is not None and b.get("p99_vs_none") is not None:
            p99_ok = b["p99_vs_none"] <= a["p99_vs_none"]
        verdict = {None: "n/a", True: "met", False: "**not met**"}
        rows.append("| %s | %s / %s = %s %s | %s / %s = %s %s | %s / %s %s | %s / %s | %s / %s | "
                    "%s / %s |" % (
            wl, fmt(b.get("task_sys_s"), 2), fmt(a.get("task_sys_s"), 2), fmt(sys_r, 2, "-"),
            verdict[None if sys_r is None else sys_r <= 0.5],
            fmt(b.get("t90_s")), fmt(a.get("t90_s")), fmt(t90_r, 2, "-"), verdict[t90_ok],
            fmt(b.get("p99_vs_none"), 2, "-"), fmt(a.get("p99_vs_none"), 2, "-"),
            verdict[p99_ok], fmt(b.get("hot_tavg_pct"), 1, "-"), fmt(a.get("hot_tavg_pct"), 1, "-"),
            fmt(b.get("hot_final_pct")), fmt(a.get("hot_final_pct")),
            "%d" % b.get("numa_hint_faults", 0), "%d" % a.get("numa_hint_faults", 0)))
    if rows:
        out.append("**Hint-fault source: numab2-async against numab2** (targets: the "
                   "workload's system time <= 0.5x, t90 <= 1.5x within one sampling "
                   "period (%g s), p99 vs none no worse):\n" % period)
        out.append("| workload | task sys s async / numab2 | t90 s async / numab2 | "
                   "p99 vs none async / numab2 | hot on node0 time-avg % async / numab2 | "
                   "hot on node0 end % async / numab2 | hint faults async / numab2 |")
        out.append("|---|---|---|---|---|---|---|")
        out += rows
        out.append("")
    rows = []
    for wl in wls:
        ms = {p: ok(wl, p) for p in ("kmmscand", "numab2-async", "kmm+faults")}
        if not all(ms.values()):
            continue
        cells = []
        for p in ("kmmscand", "numab2-async", "kmm+faults"):
            m = ms[p]
            cells.append("%s / %s / %s / %s" % (
                fmt(m.get("t90_s")), fmt(m.get("hot_tavg_pct"), 1, "-"),
                fmt(m.get("hot_final_pct")), fmt(m.get("promoter_cpu_s"), 2, "-")))
        t = {p: ms[p].get("t90_s") for p in ms}
        alone = min((x for x in (t["kmmscand"], t["numab2-async"]) if x is not None),
                    default=None)
        verdict = {-1: "both faster", 0: "tie on t90", 1: "both slower"}[
            t_order(t["kmm+faults"], alone,
                    max(ms[p].get("sample_s") or period for p in ms))]
        f = ms["kmm+faults"]
        rows.append("| %s | %s | %s | %d / %d |" % (
            wl, " | ".join(cells), verdict, f.get("kmmscand_abit_promoted", 0),
            f.get("kmmscand_fault_promoted", 0)))
    if rows:
        out.append("**Both sources against each alone** (t90 s / hot on node0 %% time-avg / "
                   "at the end / "
                   "promoter CPU s; kmm+faults promotions found by the scanner / by hint "
                   "faults; t90 within one sampling period, %g s, is a tie):\n" % period)
        out.append("| workload | kmmscand | numab2-async | kmm+faults | kmm+faults vs the "
                   "faster alone | abit / fault promoted |")
        out.append("|---|---|---|---|---|---|")
        out += rows
        out.append("")
    return out


def special(wl):
    """Workloads with a table of their own, out of the headline table and
    the summary: the scan-cost microbench and the scale curve."""
    return wl == "scancost" or wl.startswith("scale-")


def scale_shape(wl):
    """(processes, GB mapped, dense?) of a scale-* workload name, or None."""
    m = re.match(r"scale-(?:(\d+)p|(dense))-(\d+)g$", wl)
    if not m:
        return None
    return (int(m.group(1) or 1), int(m.group(3)), bool(m.group(2)))


def fmt(x, nd=1, none="never"):
    if x is None:
        return none
    if isinstance(x, str):
        return x
    if abs(x) >= 1e6:
        return "%.3g" % x
    return ("%." + str(nd) + "f") % x


# metrics where None means "never" (counts as +infinity for medians)
NEVER_KEYS = {"t50_s", "t90_s", "phase_t90_before_s"}
INF = float("inf")


def speedup_key(ratio):
    return "model_speedup_%gx" % ratio


def relative(rows, ratios=()):
    """Columns relative to the 'none' run of the same workload and repeat
    (or, when that one is missing, the first 'none' run of the workload);
    the modelled speedup at every slow/fast latency ratio of ratios."""
    nones = {}
    for m in rows:
        if m["policy"] == "none" and m["status"] == "ok":
            nones.setdefault((m["workload"], m["rep"]), m)
            nones.setdefault((m["workload"], None), m)
    for m in rows:
        base = nones.get((m["workload"], m["rep"])) or nones.get((m["workload"], None))
        if not base or m.get("ops") is None or base.get("ops") is None:
            continue
        for k in ("p99_us", "max_us"):
            if m.get(k) and base.get(k):
                m[k.replace("_us", "_vs_none")] = m[k] / base[k]
        if base.get("ops"):
            m["ops_vs_none"] = m["ops"] / base["ops"]
        if m.get("kthread_cpu_s") is not None and base.get("task_sys_s") is not None:
            m["promoter_cpu_s"] = m["kthread_cpu_s"] + max(0.0, m["task_sys_s"] - base["task_sys_s"])
        for q in ratios:
            m[speedup_key(q)] = modelled_speedup(m.get("acc_tavg"), base.get("acc_tavg"), q)


def aggregate(rows):
    """(workload, policy) -> median row over the repeats, and the ranges.
    Returns (by, rng, nrep): by[k][key] = median, rng[k][key] = (min, max);
    for NEVER_KEYS None stands for never (+inf)."""
    groups = {}
    for m in rows:
        groups.setdefault((m["workload"], m["policy"]), []).append(m)
    by, rng, nrep = {}, {}, 1
    for k, ms in groups.items():
        ok = [m for m in ms if m["status"] == "ok"]
        if not ok:
            # every run left out: the status only, no metric that a
            # summary could pick up
            by[k] = {"workload": k[0], "policy": k[1], "status": ms[0]["status"],
                     "note": ms[0]["note"], "runs": 0, "failed_runs": len(ms)}
            continue
        nrep = max(nrep, len(ok))
        agg = {"workload": k[0], "policy": k[1], "status": "ok", "runs": len(ok),
               "note": "; ".join(sorted({m["note"] for m in ok if m["note"]})),
               "failed_runs": len(ms) - len(ok)}
        r = {}
        keys = []
        for m in ok:
            keys += [x for x in m if x not in keys]
        for key in keys:
            if key == "rep":
                continue
            vals = []
            for m in ok:
                if key not in m:
                    continue
                v = m[key]
                if key in NEVER_KEYS and v is None:
                    v = INF
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    continue
                vals.append(v)
            if not vals:
                if key in NEVER_KEYS and any(key in m for m in ok):
                    agg[key] = None
                continue
            med = statistics.median(vals)
            if key in NEVER_KEYS and med == INF:
                med = None
            agg[key] = med
            r[key] = (min(vals), max(vals))
        by[k] = agg
        rng[k] = r
    return by, rng, nrep


def fmt_range(by, rng, k, key, nd=1, none="never", show_range=True):
    m = by.get(k, {})
    v = m.get(key)
    cell = fmt(v, nd, none)
    r = rng.get(k, {}).get(key)
    if show_range and r and r[0] != r[1]:
        lo, hi = [None if (x == INF) else x for x in r]
        cell += " (%s–%s)" % (fmt(lo, nd, none), fmt(hi, nd, none))
    return cell


def redis_table(env, rows, by, rng, wls, pols, multi):
    """results.md section of the redis workloads."""
    def med(key):
        v = [m[key] for m in rows if m.get("kind") == "redis" and m["status"] == "ok"
             and m.get(key) is not None]
        return statistics.median(v) if v else None

    md = ["## Redis: %s\n" % ", ".join(wls)]
    hot = int(num(env.get("redis_keys"), 0) * num(env.get("redis_hot_pct"), 0) / 100)
    md.append("redis-server %s loaded with %s keys of %s bytes (server RSS %s MB; load %s s, "
              "`migratepages` of everything to node 1 %s s, medians over the runs), then "
              "redis-benchmark for %s s over key:0..%d (`-r`, %s%% of the keyspace; the "
              "load order scatters those keys through the heap), %s connections, loops of "
              "%s requests.  redis-get: GET only; redis-mix: GET and SET clients side by "
              "side (half of the connections each).\n" % (
                  env.get("redis_version", "?"), env.get("redis_keys", "?"),
                  env.get("redis_value", "?"), fmt(med("rss_mb"), 0, "?"),
                  fmt(med("load_s"), 1, "?"), fmt(med("move_s"), 1, "?"), env.get("dur"),
                  max(hot - 1, 0), env.get("redis_hot_pct", "?"), env.get("redis_clients", "?"),
                  env.get("redis_loop_n", "?")))
    hdr = ["workload", "policy", "server RSS on node0 time-avg %",
           "server RSS on node0 % at ¼ / ½ / ¾ / end",
           "anon on node0 % end", "req/s", "req/s last ¼", "GET p50 / p99 ms",
           "SET p50 / p99 ms", "promoter CPU s", "kthread CPU s", "server sys s",
           "hint faults", "pages promoted", "pages migrated"]
    md.append("| " + " | ".join(hdr) + " |")
    md.append("|" + "---|" * len(hdr))
    for wl in wls:
        for p in pols:
            m = by.get((wl, p))
            if not m:
                continue
            if m["status"] != "ok":
                md.append("| %s | %s | %s |" % (wl, p, m["status"] + (
                    ": " + m["note"] if m["note"] else "")) + " |" * (len(hdr) - 3))
                continue
            over_time = " / ".join(fmt(m.get(k), 1, "-") for k in (
                "on0_q1_pct", "on0_q2_pct", "on0_q3_pct", "on0_final_pct"))
            if multi:
                over_time += " (end %s)" % fmt_range(by, rng, (wl, p), "on0_final_pct", 1, "-")

            def lat(t):
                if m.get(t + "_p50_ms") is None:
                    return "-"
                return "%s / %s" % (fmt(m.get(t + "_p50_ms"), 2), fmt(m.get(t + "_p99_ms"), 2))
            last = sum(m.get(t + "_rps_last") or 0 for t in ("get", "set"))

            def c(key, nd, none="-"):
                return fmt_range(by, rng, (wl, p), key, nd, none, multi)
            md.append("| " + " | ".join([
                wl, p, fmt_range(by, rng, (wl, p), "on0_tavg_pct", 1, "-", multi), over_time,
                c("anon_on0_final_pct", 1), c("rps", 0), fmt(last, 0, "-"),
                lat("get"), lat("set"), c("promoter_cpu_s", 2), c("kthread_cpu_s", 2),
                c("task_sys_s", 2), c("numa_hint_faults", 0, "0"), c("promoted_pages", 0, "0"),
                c("pgmigrate_success", 0, "0")]) + " |")
    md.append("")
    md.append("server RSS on node0: share of the server's resident pages (all mappings, from "
              "/proc/<pid>/numa_maps, sampled once a second) on node 0, averaged over the "
              "run with equal weight per unit of time (time-avg), and at a quarter, half, "
              "three quarters and the end of the run; anon: the same for its anonymous "
              "memory (the dataset).  req/s: requests of the completed redis-benchmark loops "
              "divided by their time, GET and SET together; last ¼: the loops that ended in "
              "the last quarter of the run.  p50/p99: the median over the loops of each "
              "loop's percentile.  Under TCG req/s and latencies are emulator numbers (both "
              "nodes are host DRAM, the host may be busy): compare placement, CPU and "
              "counters; on tiered hardware they are the measurement.  promoter CPU: kthread "
              "CPU + the server's system time above the 'none' run (NUMA balancing's "
              "scanning and hint faults are charged to the server).  pages promoted: "
              "pgmigrate_success - pgdemote (DAMOS migrations are not in "
              "pgpromote_success).\n")
    return md


def redis_summary(rows, by, wls, pols):
    """summary.txt lines of the redis workloads."""
    out = []
    for wl in wls:
        ok = [(p, by[(wl, p)]) for p in pols if (wl, p) in by and by[(wl, p)]["status"] == "ok"]
        if not ok:
            out.append("%s: no runs" % wl)
            continue
        out.append("%s: server RSS on node0 at the end: %s; promoter CPU: %s; req/s (TCG): %s" % (
            wl, ", ".join("%s %s%%" % (p, fmt(m.get("on0_final_pct"), 1, "-")) for p, m in ok),
            ", ".join("%s %s s" % (p, fmt(m.get("promoter_cpu_s"), 2, "-")) for p, m in ok),
            ", ".join("%s %s" % (p, fmt(m.get("rps"), 0, "-")) for p, m in ok)))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    raw, out = sys.argv[1], sys.argv[2]
    env, runs = parse(raw)
    if not runs:
        sys.exit("report.py: no @@RUN blocks found in %s" % raw)
    lat0 = num(env.get("lat0_ns")) or DEFAULT_LAT0
    lat1 = num(env.get("lat1_ns")) or DEFAULT_LAT1
    lat_src = "HMAT sysfs" if num(env.get("lat0_ns")) and num(env.get("lat1_ns")) else \
        "assumed (HMAT sysfs absent)"
    dur = num(env.get("dur"))
    rows = [metrics(r, dur, env.get("fast_node", "0")) for r in runs]
    ratios = list(MODEL_RATIOS) + [lat1 / lat0]
    relative(rows, ratios)
    by, rng, nrep = aggregate(rows)
    multi = nrep > 1
    workloads = []
    for m in rows:
        if m["workload"] not in workloads:
            workloads.append(m["workload"])
    pols = [p for p in POLICY_ORDER if any(m["policy"] == p for m in rows)]
    pols += sorted({m["policy"] for m in rows} - set(pols))
    # the placement sampling period (s): t50/t90 are the first sample at or
    # above the level, the crossing lies within one period before it
    # (the median over the runs for the headers; a comparison of runs uses
    # the longest period among them)
    period = statistics.median([m["sample_s"] for m in rows if m.get("sample_s")] or [1.0])
    pm = "±%g" % period

    os.makedirs(out, exist_ok=True)
    # results.csv: one row per run; results-median.csv: one per workload x policy
    for fn, data in (("results.csv", rows),
                     ("results-median.csv", [by[(wl, p)] for wl in workloads for p in pols
                                             if (wl, p) in by])):
        keys = []
        for m in data:
            for k in m:
                if k not in keys:
                    keys.append(k)
        with open(os.path.join(out, fn), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            for m in data:
                w.writerow({k: ("" if m.get(k) is None else m.get(k)) for k in keys})

    def cell(wl, p, key, nd=1, none="never"):
        return fmt_range(by, rng, (wl, p), key, nd, none, multi)

    kmm_present = env.get("kmmscand_present") == "1"
    md = []
    md.append("# kmmscand bench results\n")
    md.append("Mode `%s`, %s s per run, region %s MB, kernel %s, %s.  "
              "Under TCG both nodes are host DRAM: placement, counts and CPU are "
              "measured; speed is **modelled** at slow/fast latency ratios of 2x and 3x "
              "(CXL-like) and at the VM's node latencies %g ns (node 0) / "
              "%g ns (node 1), %s.\n" % (env.get("mode"), env.get("dur"), env.get("size_mb"),
                                          env.get("kernel"), "kmmscand present" if kmm_present
                                          else "**kmmscand not present** in this kernel",
                                          lat0, lat1, lat_src))
    if multi:
        md.append("Every workload x policy ran %d times in this boot (rounds of all policies "
                  "per workload); cells are the **median**, with (min–max) where the runs "
                  "differ; 'never' counts as the slowest.  results.csv has every run, "
                  "results-median.csv the medians.\n" % nrep)
    partial = env.get("bench_begin") and not env.get("bench_end")
    if partial:
        md.append("**Incomplete**: the guest's output ends without @@BENCH-END (VM timeout "
                  "or crash): %d runs, the last %s / %s; the rows of the runs that did not "
                  "happen are missing.\n" % (len(runs), runs[-1]["workload"], runs[-1]["policy"]))
    reg = regime(env, rows)
    if reg:
        md.append(reg + "\n")
    if env.get("shuffle") == "1":
        md.append("Policy order shuffled in every round (seed %s; the order of each round is "
                  "in raw.log's @@ORDER lines).\n" % env.get("order_seed", "?"))
    elif env.get("orders"):
        md.append("Policy order fixed in every round (SHUFFLE=0).\n")
    redis_wls = [wl for wl in workloads if any(m["workload"] == wl and m.get("kind") == "redis"
                                               for m in rows)]
    main_wls = [wl for wl in workloads if not special(wl) and wl not in redis_wls]
    if main_wls:
        hdr = ["workload", "policy", "t50 s (%s)" % pm, "t90 s (%s)" % pm,
               "hot on node0 time-avg %", "hot on node0 end %", "cold promoted %",
               "pages migrated", "promoter CPU s", "kthread CPU s", "task sys s", "p99 vs none",
               "max vs none", "TCG ops vs none",
               "modelled speedup %s" % " / ".join("%gx" % q for q in ratios)]
        md.append("| " + " | ".join(hdr) + " |")
        md.append("|" + "---|" * len(hdr))
        for wl in main_wls:
            for p in pols:
                m = by.get((wl, p))
                if not m:
                    continue
                if m["status"] != "ok":
                    md.append("| %s | %s | %s |" % (wl, p, m["status"] + (": " + m["note"] if m["note"] else "")) +
                              " |" * (len(hdr) - 3))
                    continue
                md.append("| " + " | ".join([
                    wl, p, cell(wl, p, "t50_s"), cell(wl, p, "t90_s"),
                    cell(wl, p, "hot_tavg_pct", 1, "-"), cell(wl, p, "hot_final_pct"),
                    cell(wl, p, "cold_promoted_pct"), cell(wl, p, "pgmigrate_success", 0, "0"),
                    cell(wl, p, "promoter_cpu_s", 2, "-"),
                    cell(wl, p, "kthread_cpu_s", 2, "-"), cell(wl, p, "task_sys_s", 2, "-"),
                    cell(wl, p, "p99_vs_none", 2, "-"), cell(wl, p, "max_vs_none", 2, "-"),
                    cell(wl, p, "ops_vs_none", 2, "-"),
                    " / ".join(cell(wl, p, speedup_key(q), 2, "-") for q in ratios)]) + " |")
        md.append("")
        md.append("t50/t90: seconds until 50%%/90%% of the hot set sat on node 0 (phase: measured "
                  "from the phase change, for the new hot set; 'never' = not within the run): "
                  "the first placement sample at or above the level, sampled every %g s, so "
                  "the crossing lies up to one period earlier and differences within one "
                  "period are ties.  "
                  "hot on node0 end: at the end of the run.  cold promoted: share of the "
                  "(sampled) cold pages on node 0 at the end.  pages migrated: pgmigrate_success "
                  "delta (promotion + demotion).  promoter CPU: kthread CPU + the workload's system time above the 'none' run (so NUMA balancing's in-task work counts too).  kthread CPU: utime+stime of kmmscand* and "
                  "kdamond* threads during the run; task sys: the workload's own system time "
                  "(where NUMA balancing's scanning and hint faults are charged).  p99/max: "
                  "batch latency (%s accesses per batch) relative to the policy 'none'.  TCG ops: "
                  "accesses done in the run relative to 'none' (emulator throughput, includes "
                  "interference).  hot on node0 time-avg: the hot set's share on node 0 "
                  "averaged over the run with equal weight per unit of time (linear between "
                  "samples), no model; end: at the end of the run.  modelled speedup: with "
                  "f = the share of accesses served by node 0, averaged over time the same "
                  "way, time per access f*L0+(1-f)*L1, 'none' divided by the policy, at "
                  "L1/L0 = %s (%s the VM's HMAT ratio, %g/%g ns, %s); a memory-bound model, "
                  "not a measurement.\n" % (
                      period, "4096", ", ".join("%gx" % q for q in ratios),
                      "%gx" % ratios[-1], lat1, lat0, lat_src))

    # ---------------------------------------------------------- hint-fault source
    md += sources_tables(by, main_wls, period)

    # ---------------------------------------------------------- redis
    if redis_wls:
        md += redis_table(env, rows, by, rng, redis_wls, pols, multi)

    # ---------------------------------------------------------- phase change
    phw = [wl for wl in workloads if any(by.get((wl, p), {}).get("phase_hotB_final_pct")
                                         is not None for p in pols)]
    for wl in phw:
        md.append("## Phase change (%s): convergence on the new hot set\n" % wl)
        md.append("The hot set moves to a disjoint set at half time.  Before the move: "
                  "t90 of the first hot set (from the start) and its share on node 0 at "
                  "the move.  After the move: t50/t90 of the new hot set measured from "
                  "the move, the new set's share on node 0 at the end, and what is left "
                  "of the old set on node 0 (nothing demotes it here).\n")
        md.append("| policy | t90 old set s (%s) | old set at move %% | t50 new s (%s) | t90 new s (%s) | "
                  "new set final %% | old set final %% | hot time-avg %% | cold promoted %% |"
                  % (pm, pm, pm))
        md.append("|---|---|---|---|---|---|---|---|---|")
        for p in pols:
            m = by.get((wl, p))
            if not m or m["status"] != "ok":
                continue
            md.append("| %s | " % p + " | ".join([
                cell(wl, p, "phase_t90_before_s"), cell(wl, p, "phase_hotA_at_move_pct", 1, "-"),
                cell(wl, p, "t50_s"), cell(wl, p, "t90_s"),
                cell(wl, p, "phase_hotB_final_pct", 1, "-"),
                cell(wl, p, "phase_hotA_final_pct", 1, "-"),
                cell(wl, p, "hot_tavg_pct", 1, "-"),
                cell(wl, p, "cold_promoted_pct")]) + " |")
        md.append("")

    # ---------------------------------------------------------- top-tier pressure
    tfw = [wl for wl in workloads if any(by.get((wl, p), {}).get("free0_mb") is not None
                                         for p in pols)]
    if tfw:
        md.append("## Top-tier pressure (balloon on node 0, demotion enabled)\n")
        md.append("free node0: MB left free by the balloon before the run.  bound: the "
                  "copy-and-demote bound for t90, 2 x 0.9 x hot MB / rate limit (90% of the "
                  "hot set copied at the policy's promotion rate limit, plus demoting as "
                  "much at the same rate); rate limit: kmmscand promote_rate_limit_mbps, "
                  "numab2 numa_balancing_promote_rate_limit_MBps, DAMOS quota bytes per "
                  "reset interval.  promoted: pgmigrate_success - pgdemote (base pages); "
                  "demoted: pgdemote_kswapd+direct+khugepaged.\n")
        md.append("| workload | policy | hot MB | free node0 MB | rate MB/s | bound s | "
                  "t90 s (%s) | hot on node0 time-avg %% | hot on node0 end %% | "
                  "cold promoted %% | pages promoted | pages demoted |" % pm)
        md.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for wl in tfw:
            for p in pols:
                m = by.get((wl, p))
                if not m or m["status"] != "ok":
                    continue
                md.append("| %s | %s | " % (wl, p) + " | ".join([
                    cell(wl, p, "hot_mb", 0, "-"), cell(wl, p, "free0_mb", 0, "-"),
                    cell(wl, p, "rate_mbps", 0, "-"), cell(wl, p, "bound_t90_s", 2, "-"),
                    cell(wl, p, "t90_s"), cell(wl, p, "hot_tavg_pct", 1, "-"),
                    cell(wl, p, "hot_final_pct"),
                    cell(wl, p, "cold_promoted_pct"), cell(wl, p, "promoted_pages", 0, "-"),
                    cell(wl, p, "pgdemote", 0, "-")]) + " |")
        md.append("")

    sc = [m for m in rows if m["workload"] == "scancost"]
    if sc:
        md.append("## Scan cost: sparse %s MB mapping, 64 MB hot set\n" % env.get("scan_mb"))
        md.append("| policy | status | kthread CPU s | pte_scanned | pmd_skipped | young | "
                  "hot on node0 time-avg %% | hot on node0 end %% | t90 s (%s) |" % pm)
        md.append("|---|---|---|---|---|---|---|---|---|")
        for m in sc:
            md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                m["policy"], m["status"] + (": " + m["note"] if m["note"] else ""),
                fmt(m.get("kthread_cpu_s"), 2, "-"), m.get("kmmscand_pte_scanned", "-"),
                m.get("kmmscand_pmd_skipped", "-"), m.get("kmmscand_young", "-"),
                fmt(m.get("hot_tavg_pct"), 1, "-"), fmt(m.get("hot_final_pct"), 1, "-"),
                fmt(m.get("t90_s"))))
        md.append("")

    scale = [wl for wl in workloads if scale_shape(wl)]
    if scale:
        md.append("## Scale: scan cost by processes and GB mapped, %s MB hot set\n"
                  % env.get("scale_hot_mb", "?"))
        md.append("Sparse mappings touch one page per 2 MB besides the hot set; dense "
                  "ones are populated on the slow node.  CPU per GB is promoter CPU "
                  "(kthreads + task sys above `none`) per GB mapped per second of run.\n")
        md.append("| workload | processes | GB mapped | policy | promoter CPU s | "
                  "ms per GB per s | kthread CPU s | PTEs scanned | t90 s (%s) | "
                  "hot on node0 end %% | history peak B |" % pm)
        md.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for wl in scale:
            procs, gb, dense = scale_shape(wl)
            for p in pols:
                m = by.get((wl, p))
                if not m or p == "none":
                    continue
                cpu = m.get("promoter_cpu_s")
                per_gb = (cpu * 1000.0 / gb / dur if cpu is not None and dur else None)
                md.append("| %s | %d | %d%s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    wl, procs, gb, " dense" if dense else "", p,
                    cell(wl, p, "promoter_cpu_s", 2, "-"), fmt(per_gb, 1, "-"),
                    cell(wl, p, "kthread_cpu_s", 2, "-"),
                    cell(wl, p, "kmmscand_pte_scanned", 0, "-"), cell(wl, p, "t90_s"),
                    cell(wl, p, "hot_final_pct", 1, "-"),
                    cell(wl, p, "history_peak_bytes", 0, "-")))
        md.append("")

    # WAKELAT=1: how long kmmscand's threads waited for a CPU, per run
    waits = [r for r in runs if r.get("wakelat")]
    if waits:
        md.append("## kmmscand's threads waiting for a CPU (WAKELAT=1)\n")
        md.append("From wake-up (or preemption while runnable) to the next switch-in, "
                  "sched_wakeup/sched_switch tracepoints over the run.  lost > 0: the "
                  "trace buffer overflowed and the figures are a lower bound.\n")
        md.append("| workload | policy | rep | thread | waits | wait s | p50 ms | p99 ms | "
                  "max ms | lost |")
        md.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in waits:
            for comm in sorted(r["wakelat"]):
                d = r["wakelat"][comm]
                md.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                    r["workload"], r["policy"], r["rep"], comm, d.get("waits", "-"),
                    d.get("wait_s", "-"), d.get("p50_ms", "-"), d.get("p99_ms", "-"),
                    d.get("max_ms", "-"), d.get("lost", "-")))
        md.append("")

    # ---------------------------------------------------------- summary
    summ = []
    summ.append("kmmscand bench summary (mode %s, %s s per run%s, placement sampled every "
                "%g s; speed is modelled, not measured)" % (
                    env.get("mode"), env.get("dur"),
                    ", medians of %d repeats" % nrep if multi else "", period))
    if not kmm_present:
        summ.append("NOTE: kmmscand not present in this kernel; its rows are skipped.")
    if partial:
        summ.append("NOTE: incomplete bench (no @@BENCH-END): %d runs reported" % len(runs))
    if reg:
        summ.append(reg.split("  ")[0].rstrip(".") + " " + ("(NUMA balancing's first-access rule "
                                                "never held)" if "never held" in reg else
                                                "(NUMA balancing's first-access rule can hold)"))
    cmp_pols = [p for p in pols if p != "none"]

    def okm(wl, p):
        m = by.get((wl, p))
        return m if m and m["status"] == "ok" else None

    # The summaries compare like with like: only workloads where 'none' and
    # every policy that has any result got a run that was not left out.
    sum_wls = [wl for wl in workloads if not special(wl) and wl not in redis_wls]
    have = [p for p in cmp_pols if any(okm(wl, p) for wl in sum_wls)]
    common = [wl for wl in sum_wls if all(okm(wl, p) for p in ["none"] + have)]
    # (label, key, best-of, 'never' counts as worst, cost metric: only
    # policies that got >= 50% of the hot set to node 0 compete)
    crit = [
        ("fastest to 90% hot coverage (t90, lower is better, ties within one sampling "
         "period)", "t90_s", min, True, False),
        ("highest final hot coverage", "hot_final_pct", max, False, False),
        ("highest time-averaged hot coverage", "hot_tavg_pct", max, False, False),
        ("fewest cold pages promoted", "cold_promoted_pct", min, False, True),
        ("least promoter CPU (kthreads + extra task sys)", "promoter_cpu_s", min, False, True),
        ("lowest p99 batch latency", "p99_us", min, False, True),
    ]
    wins = {p: 0 for p in cmp_pols}
    for wl in workloads:
        if special(wl) or wl in redis_wls:
            continue
        ok = [okm(wl, p) for p in cmp_pols if okm(wl, p)]
        if not ok:
            summ.append("%s: no comparable runs" % wl)
            continue
        parts = []
        eff = [m for m in ok if (m.get("hot_final_pct") or 0) >= 50]
        for label, key, fn, never_is_worst, cost in crit:
            pool = eff if cost else ok
            if cost and not pool:
                parts.append("%s: no policy reached 50%% hot coverage" % key)
                continue
            vals = [(m.get(key), m["policy"]) for m in pool]
            if never_is_worst:
                vals = [(v if v is not None else INF, p) for v, p in vals]
            vals = [(v, p) for v, p in vals if v is not None]
            if not vals:
                continue
            best = fn(v for v, _ in vals)
            if best == INF:
                parts.append("%s: none" % key)
                continue
            # t50/t90 are known to one sampling period: closer is a tie
            tol = max(m.get("sample_s") or period for m in pool) if key in NEVER_KEYS \
                else 1e-6 * abs(best)
            tied = [p for v, p in vals if abs(v - best) <= 1e-9 + tol]
            if wl in common:
                for p in tied:
                    wins[p] += 1
            parts.append("%s: %s (%s)" % (key, "/".join(tied), fmt(best, 2)))
        summ.append("%s: %s" % (wl, "; ".join(parts)))
    summ.append("(cost metrics - cold promoted, promoter CPU, p99 - only among policies that "
                "reached >= 50% hot coverage)")
    summ += redis_summary(rows, by, redis_wls, pols)
    summ.append("")
    # per policy over the common workload set (medians of the runs kept):
    # mean time-averaged hot share, geometric-mean modelled speedup, CPU
    if sum_wls:
        dropped = [wl for wl in sum_wls if wl not in common]
        summ.append("per policy over the same %d workload%s (%s)%s; metric wins over those:" % (
            len(common), "" if len(common) == 1 else "s", ", ".join(common) or "-",
            "; left out of every policy's summary: " + ", ".join(
                "%s (%s)" % (wl, ", ".join(p for p in ["none"] + have if not okm(wl, p)))
                for wl in dropped) if dropped else ""))
    for p in cmp_pols:
        if not any(m["policy"] == p and m["workload"] in sum_wls for m in rows):
            continue
        if p not in have:
            summ.append("%-12s no results (every run left out or skipped)" % p)
            continue
        if not common:
            summ.append("%-12s no workload with a kept run of every policy" % p)
            continue
        ms = [okm(wl, p) for wl in common]
        gs = []
        for q in ratios:
            sp = [m.get(speedup_key(q)) for m in ms]
            gs.append("%.2fx" % math.exp(sum(math.log(x) for x in sp) / len(sp))
                      if all(sp) else "-")
        hot = statistics.mean(m.get("hot_tavg_pct") or 0 for m in ms)
        cpu = sum(m.get("promoter_cpu_s") or 0 for m in ms)
        hist = max(m.get("history_peak_bytes") or 0 for m in ms)
        flush = [m.get("tlb_flush_per_s") for m in ms if m.get("tlb_flush_per_s") is not None]
        summ.append("%-12s over %d workload%s: hot time-avg mean %.1f%%, geomean modelled "
                    "speedup %s (L1/L0 %s), promoter CPU total %.1f s, metric wins %d, "
                    "history peak %d kB, TLB flushes %.1f/s (mean)" % (
                        p, len(ms), "" if len(ms) == 1 else "s", hot, " / ".join(gs),
                        " / ".join("%gx" % q for q in ratios), cpu, wins[p], hist // 1024,
                        statistics.mean(flush) if flush else 0.0))
    if sc:
        on = {m["policy"]: m for m in sc if m["status"] == "ok"}
        if "kmmscand" in on and "kmm-nopmd" in on:
            a, b = on["kmmscand"], on["kmm-nopmd"]
            summ.append("scan cost: pmd_skip=1 %.2f s CPU, %d PTEs scanned, %d tables skipped; "
                        "pmd_skip=0 %.2f s CPU, %d PTEs scanned; hot coverage %.0f%% vs %.0f%%" % (
                            a.get("kthread_cpu_s", 0), a.get("kmmscand_pte_scanned", 0),
                            a.get("kmmscand_pmd_skipped", 0), b.get("kthread_cpu_s", 0),
                            b.get("kmmscand_pte_scanned", 0), a.get("hot_final_pct", 0),
                            b.get("hot_final_pct", 0)))
        else:
            summ.append("scan cost: not measured (%s)" % "; ".join(
                "%s: %s" % (m["policy"], m["note"] or m["status"]) for m in sc))
    left = [m for m in rows if m["status"] not in ("ok", "skipped")]
    if left:
        md.append("## Runs left out of the tables and medians\n")
        for m in left:
            md.append("- %s / %s rep %s: %s%s" % (m["workload"], m["policy"], m.get("rep", 1),
                                                m["status"], ": " + m["note"] if m["note"] else ""))
        md.append("")
        summ.append("runs left out (failed or vm-stall): %d of %d: %s" % (
            len(left), len(rows), ", ".join(
                "%s %d of %d (%s)" % (p, len(lp), len([m for m in rows if m["policy"] == p]),
                                      ", ".join("%s %d" % (st, n) for st, n in sorted(
                                          {m["status"]: sum(1 for x in lp if x["status"] ==
                                                            m["status"]) for m in lp}.items())))
                for p in pols for lp in [[m for m in left if m["policy"] == p]] if lp)))
    summ.append("total guest wall time %s s" % env.get("total_wall", "?"))
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(summ) + "\n")
    md.append("## Summary\n")
    md.append("```\n" + "\n".join(summ) + "\n```\n")
    md.append("![hot-set coverage over time](coverage.png)%s\n" % (
        " (first repeat of every run)" if multi else ""))
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md))

    plot(out, [r for r in runs if r.get("rep", 1) == 1], workloads, pols, redis_wls)
    print("\n".join(md))


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


if __name__ == "__main__":
    main()
