"""bench/report_tables.py - the tables of results.md and the lines of
summary.txt, each section a function of the Report, for bench/report.py."""
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_metrics import (DEFAULT_LAT0, DEFAULT_LAT1, INF, MODEL_RATIOS,  # noqa: E402
                            NEVER_KEYS, POLICY_ORDER, aggregate, metrics, ratio,
                            relative, scale_shape, special, speedup_key, t90_within,
                            t_order)
from report_parse import num  # noqa: E402


def fmt(x, nd=1, none="never"):
    if x is None:
        return none
    if isinstance(x, str):
        return x
    if abs(x) >= 1e6:
        return "%.3g" % x
    return ("%." + str(nd) + "f") % x


def fmt_range(by, rng, k, key, nd=1, none="never", show_range=True):
    m = by.get(k, {})
    v = m.get(key)
    cell = fmt(v, nd, none)
    r = rng.get(k, {}).get(key)
    if show_range and r and r[0] != r[1]:
        lo, hi = [None if (x == INF) else x for x in r]
        cell += " (%s–%s)" % (fmt(lo, nd, none), fmt(hi, nd, none))
    return cell


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
    iof = env.get("init_on_free")
    if iof == "1":
        s += ("  init_on_free=1: pages are zeroed when freed, so no measured thread pays "
              "the emulator's first write into a page that held program text.")
    elif iof == "0":
        s += ("  init_on_free=0: a measured thread's first write into a page that held "
              "program text costs ~2.7 ms under TCG (smoke/README.md): CPU outliers.")
    return s


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


class Report:
    """What the sections read: the bench's environment and runs, each run's
    metrics, their medians (and ranges) over the repeats, the workloads and
    policies in report order, and the sampling period of the placement."""

    def __init__(self, env, runs):
        self.env, self.runs = env, runs
        self.lat0 = num(env.get("lat0_ns")) or DEFAULT_LAT0
        self.lat1 = num(env.get("lat1_ns")) or DEFAULT_LAT1
        self.lat_src = "HMAT sysfs" if num(env.get("lat0_ns")) and num(env.get("lat1_ns")) \
            else "assumed (HMAT sysfs absent)"
        self.dur = num(env.get("dur"))
        self.rows = [metrics(r, self.dur, env.get("fast_node", "0")) for r in runs]
        self.ratios = list(MODEL_RATIOS) + [self.lat1 / self.lat0]
        relative(self.rows, self.ratios)
        self.by, self.rng, self.nrep = aggregate(self.rows)
        self.multi = self.nrep > 1
        self.workloads = []
        for m in self.rows:
            if m["workload"] not in self.workloads:
                self.workloads.append(m["workload"])
        pols = [p for p in POLICY_ORDER if any(m["policy"] == p for m in self.rows)]
        self.pols = pols + sorted({m["policy"] for m in self.rows} - set(pols))
        # the placement sampling period (s): t50/t90 are the first sample at
        # or above the level, the crossing lies within one period before it
        # (the median over the runs for the headers; a comparison of runs
        # uses the longest period among them)
        self.period = statistics.median([m["sample_s"] for m in self.rows
                                         if m.get("sample_s")] or [1.0])
        self.pm = "±%g" % self.period
        self.kmm_present = env.get("kmmscand_present") == "1"
        self.partial = env.get("bench_begin") and not env.get("bench_end")
        self.reg = regime(env, self.rows)
        self.redis_wls = [wl for wl in self.workloads
                          if any(m["workload"] == wl and m.get("kind") == "redis"
                                 for m in self.rows)]
        self.main_wls = [wl for wl in self.workloads
                         if not special(wl) and wl not in self.redis_wls]
        self.sc = [m for m in self.rows if m["workload"] == "scancost"]

    def cell(self, wl, p, key, nd=1, none="never"):
        """The median of KEY for WL x P, with its range over the repeats."""
        return fmt_range(self.by, self.rng, (wl, p), key, nd, none, self.multi)


def sources_md(r):
    """The hint-fault source's tables."""
    return sources_tables(r.by, r.main_wls, r.period)


def redis_md(r):
    """The redis workloads' table."""
    if not r.redis_wls:
        return []
    return redis_table(r.env, r.rows, r.by, r.rng, r.redis_wls, r.pols, r.multi)


def header_md(r):
    """The title paragraph: mode, kernel, latencies, repeats, order."""
    env, runs, multi, nrep, lat0, lat1, lat_src, kmm_present, partial, reg = r.env, r.runs, r.multi, r.nrep, r.lat0, r.lat1, r.lat_src, r.kmm_present, r.partial, r.reg
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
    if partial:
        md.append("**Incomplete**: the guest's output ends without @@BENCH-END (VM timeout "
                  "or crash): %d runs, the last %s / %s; the rows of the runs that did not "
                  "happen are missing.\n" % (len(runs), runs[-1]["workload"], runs[-1]["policy"]))
    if reg:
        md.append(reg + "\n")
    if env.get("shuffle") == "1":
        md.append("Policy order shuffled in every round (seed %s; the order of each round is "
                  "in raw.log's @@ORDER lines).\n" % env.get("order_seed", "?"))
    elif env.get("orders"):
        md.append("Policy order fixed in every round (SHUFFLE=0).\n")
    return md


def main_table_md(r):
    """The main table: placement, cost and latency per workload and policy."""
    by, pols, period, pm, ratios, lat0, lat1, lat_src, main_wls, cell = r.by, r.pols, r.period, r.pm, r.ratios, r.lat0, r.lat1, r.lat_src, r.main_wls, r.cell
    md = []
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

    return md


def phase_md(r):
    """Phase change: convergence on the new hot set, per workload."""
    by, workloads, pols, pm, cell = r.by, r.workloads, r.pols, r.pm, r.cell
    md = []
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

    return md


def pressure_md(r):
    """Top-tier pressure: promotion against a full node 0."""
    by, workloads, pols, pm, cell = r.by, r.workloads, r.pols, r.pm, r.cell
    md = []
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

    return md


def scancost_md(r):
    """Scan cost of a sparse mapping, pmd_skip on and off."""
    env, pm, sc = r.env, r.pm, r.sc
    md = []
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

    return md


def scale_md(r):
    """Scale: scan cost by processes and GB mapped."""
    env, by, workloads, pols, pm, cell, dur = r.env, r.by, r.workloads, r.pols, r.pm, r.cell, r.dur
    md = []
    scale = [wl for wl in workloads if scale_shape(wl)]
    if scale:
        md.append("## Scale: scan cost by processes and GB mapped, %s MB hot set\n"
                  % env.get("scale_hot_mb", "?"))
        md.append("Sparse mappings touch one page per 2 MB besides the hot set; dense "
                  "ones are populated on the slow node.  CPU per GB is promoter CPU "
                  "(kthreads + task sys above `none`) per GB mapped per second of run; "
                  "the last third is the kthreads' CPU over the run's last third, "
                  "the steady state once the hot set has settled: their exact time on "
                  "a CPU where the guest kernel reports it (/proc/<pid>/sched), else "
                  "timer ticks.\n")
        md.append("| workload | processes | GB mapped | policy | promoter CPU s | "
                  "ms per GB per s | kthread CPU s | kthread CPU s, last third | "
                  "PTEs scanned | t90 s (%s) | hot on node0 end %% | history peak B |" % pm)
        md.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for wl in scale:
            procs, gb, dense = scale_shape(wl)
            for p in pols:
                m = by.get((wl, p))
                if not m or p == "none":
                    continue
                cpu = m.get("promoter_cpu_s")
                per_gb = (cpu * 1000.0 / gb / dur if cpu is not None and dur else None)
                md.append("| %s | %d | %d%s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    wl, procs, gb, " dense" if dense else "", p,
                    cell(wl, p, "promoter_cpu_s", 2, "-"), fmt(per_gb, 1, "-"),
                    cell(wl, p, "kthread_cpu_s", 2, "-"),
                    cell(wl, p, "kthread_cpu_late_s", 3, "-"),
                    cell(wl, p, "kmmscand_pte_scanned", 0, "-"), cell(wl, p, "t90_s"),
                    cell(wl, p, "hot_final_pct", 1, "-"),
                    cell(wl, p, "history_peak_bytes", 0, "-")))
        md.append("")

    return md


def wakelat_md(r):
    """WAKELAT=1: how long kmmscand's threads waited for a CPU, per run."""
    runs = r.runs
    md = []
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

    return md


class Comparison:
    """The policies compared (all but 'none') and the workloads they are
    compared on: like with like, only workloads where 'none' and every
    policy that has any result got a run that was not left out."""

    def __init__(self, r):
        self.r = r
        self.pols = [p for p in r.pols if p != "none"]
        self.wls = [wl for wl in r.workloads if not special(wl) and wl not in r.redis_wls]
        self.have = [p for p in self.pols if any(self.okm(wl, p) for wl in self.wls)]
        self.common = [wl for wl in self.wls
                       if all(self.okm(wl, p) for p in ["none"] + self.have)]

    def okm(self, wl, p):
        """The medians of WL x P if its runs were kept, else None."""
        m = self.r.by.get((wl, p))
        return m if m and m["status"] == "ok" else None


# (label, key, best-of, 'never' counts as worst, cost metric: only
# policies that got >= 50% of the hot set to node 0 compete)
CRITERIA = [
    ("fastest to 90% hot coverage (t90, lower is better, ties within one sampling "
     "period)", "t90_s", min, True, False),
    ("highest final hot coverage", "hot_final_pct", max, False, False),
    ("highest time-averaged hot coverage", "hot_tavg_pct", max, False, False),
    ("fewest cold pages promoted", "cold_promoted_pct", min, False, True),
    ("least promoter CPU (kthreads + extra task sys)", "promoter_cpu_s", min, False, True),
    ("lowest p99 batch latency", "p99_us", min, False, True),
]


def wins_lines(r, c):
    """Per workload, the best policy on each criterion; and per policy the
    criteria it won on the workloads of the comparison."""
    workloads, redis_wls, period = r.workloads, r.redis_wls, r.period
    cmp_pols, okm, common = c.pols, c.okm, c.common
    summ = []
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
        for label, key, fn, never_is_worst, cost in CRITERIA:
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
    return summ, wins


def policy_lines(r, c, wins):
    """Per policy over the workloads of the comparison (medians of the runs
    kept): mean time-averaged hot share, geometric-mean modelled speedup,
    CPU, history and TLB flushes."""
    rows, ratios = r.rows, r.ratios
    cmp_pols, okm, sum_wls, have, common = c.pols, c.okm, c.wls, c.have, c.common
    summ = []
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
    return summ


def scancost_line(r):
    """pmd_skip on against off, from the scan-cost runs."""
    sc = r.sc
    summ = []
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
    return summ


def left_out_line(r):
    """How many runs each policy lost, and why."""
    rows, pols = r.rows, r.pols
    summ = []
    left = [m for m in rows if m["status"] not in ("ok", "skipped")]
    if left:
        summ.append("runs left out (failed or vm-stall): %d of %d: %s" % (
            len(left), len(rows), ", ".join(
                "%s %d of %d (%s)" % (p, len(lp), len([m for m in rows if m["policy"] == p]),
                                      ", ".join("%s %d" % (st, n) for st, n in sorted(
                                          {m["status"]: sum(1 for x in lp if x["status"] ==
                                                            m["status"]) for m in lp}.items())))
                for p in pols for lp in [[m for m in left if m["policy"] == p]] if lp)))
    return summ


def summary_lines(r):
    """summary.txt: the winners per workload and metric, and per policy the
    hot share, modelled speedup and CPU over the workloads all policies ran."""
    env, runs, multi, nrep, period, kmm_present, partial, reg = (
        r.env, r.runs, r.multi, r.nrep, r.period, r.kmm_present, r.partial, r.reg)
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
    c = Comparison(r)
    wl_lines, wins = wins_lines(r, c)
    summ += wl_lines
    summ += redis_summary(r.rows, r.by, r.redis_wls, r.pols)
    summ.append("")
    summ += policy_lines(r, c, wins)
    summ += scancost_line(r)
    summ += left_out_line(r)
    summ.append("total guest wall time %s s" % env.get("total_wall", "?"))
    return summ


def left_out_md(r):
    """The runs left out of the tables and medians, and why."""
    rows = r.rows
    md = []
    left = [m for m in rows if m["status"] not in ("ok", "skipped")]
    if left:
        md.append("## Runs left out of the tables and medians\n")
        for m in left:
            md.append("- %s / %s rep %s: %s%s" % (m["workload"], m["policy"], m.get("rep", 1),
                                                m["status"], ": " + m["note"] if m["note"] else ""))
        md.append("")
    return md
