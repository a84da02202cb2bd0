"""bench/report_parse.py - read the guest output of bench/run-in-vm.sh
(raw.log) into the environment and the runs, for bench/report.py."""
import re


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
                       "T": [], "result": {}, "W": [], "vmstat": {}, "cpu": {}, "cpu_late": {},
                       "cpu_exact": {}, "cpu_exact_late": {},
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
            elif tag.startswith(("@@CPULATE ", "@@CPUEXACT ", "@@CPUEXACTLATE ")):
                t, k, v = tag.split()
                key = {"@@CPULATE": "cpu_late", "@@CPUEXACT": "cpu_exact",
                       "@@CPUEXACTLATE": "cpu_exact_late"}[t]
                cur[key][k] = num(v, 0)
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
