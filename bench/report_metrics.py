"""bench/report_metrics.py - the metrics of each run and their medians
over the repeats, for bench/report.py."""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from placement import modelled_speedup, time_avg  # noqa: E402
from report_parse import at_time, kv, num  # noqa: E402

POLICY_ORDER = ["none", "kmmscand", "numab2", "numab2-async", "kmm+faults", "damos-tuned",
                "damos-naive", "kmm-nopmd", "kmm-tlb"]
DEFAULT_LAT0, DEFAULT_LAT1 = 10.0, 100.0
# slow/fast latency ratios of the modelled speedup: CXL-attached DRAM is
# about 2-3x local DRAM; the VM's HMAT ratio (10x) is added next to them
MODEL_RATIOS = (2.0, 3.0)

# metrics where None means "never" (counts as +infinity for medians)
NEVER_KEYS = {"t50_s", "t90_s", "phase_t90_before_s"}
INF = float("inf")


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
    cpu_extra(m, run)
    # the server's own time: NUMA balancing's scanning and hint faults are
    # charged to it
    m["task_sys_s"] = num(r.get("server_stime"), 0)
    m["task_user_s"] = num(r.get("server_utime"), 0)
    m["wall_s"] = run.get("wall", 0)
    return m


def cpu_extra(m, run):
    """The promoters' CPU over the last third of the run, and exact
    (time on a CPU) where the guest kernel reports it; the last third's
    total is the exact one when there is one."""
    for what in ("cpu_late", "cpu_exact", "cpu_exact_late"):
        for k, x in run.get(what, {}).items():
            m[what + "_" + k] = x
    late = run.get("cpu_exact_late") or run.get("cpu_late")
    m["kthread_cpu_late_s"] = sum(late.values()) if late else None
    m["kthread_cpu_exact_s"] = (sum(run["cpu_exact"].values())
                                if run.get("cpu_exact") else None)


def fast_free_start(run, fast):
    """MB free on the fast node before the run (@@INFO before ...)."""
    for line in run["info"]:
        if line.startswith("before "):
            return num(kv(line).get("node%s_free_mb" % fast))
    return None


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
    cpu_extra(m, run)
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
