#!/usr/bin/env bash
# Host-side checks of the bench's bookkeeping, run by `make test`: the
# placement formulas (bench/test_placement.py); a run during which the
# guest logged a CPU stall is reported by run-in-vm.sh's vm_stalls() and
# left out of report.py's medians and of every summary (REPEAT=3 and
# REPEAT=1); t50/t90 ties within one sampling period; the seeded policy
# order; every results.md table from one synthetic log; the pure helpers
# of the guest library (harness/guest/lib.sh); bench.sh's 0/1 switches.
# Prints "ok NAME" or "not ok NAME: why" per check.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# result_100ms MODE HOT T90 [EXTRA]: the sampler's RESULT line of a
# synthetic 10 s run sampled every 100 ms, HOT the final hot share.
result_100ms() {
	echo "RESULT mode=$1 secs=10 setup_s=1 hot_final=$2 cold_final=0.0" \
	     "acc_on0=$2 t50=$3 t90=$3 sample_ms=100 p50_us=10 p90_us=20" \
	     "p99_us=30 max_us=40 nbatch=10 ops=100${4:+ $4}"
}

check() {	# check NAME CONDITION-EXIT-STATUS WHY
	if [ "$2" = 0 ]; then echo "ok $1"; else echo "not ok $1: $3"; fi
}

# The placement metric and the modelled speedup (bench/placement.py):
# hand-computed cases.
if python3 "$here/test_placement.py" > "$tmp/ut.out" 2>&1; then
	echo "ok bench:placement-unittest: $(grep -o "^Ran [0-9]* tests" "$tmp/ut.out")"
else
	echo "not ok bench:placement-unittest: $(grep -E '^(FAIL|ERROR):|Error' "$tmp/ut.out" |
		head -3 | tr '\n' ' ')"
fi

# vm_stalls() of the guest library run-in-vm.sh sources, with dmesg
# replaced by a fixed log: only stall lines stamped at or after the run's
# start may be reported.
# shellcheck source=../harness/guest/lib.sh
. "$here/../harness/guest/lib.sh"
cat > "$tmp/dmesg" <<'LOG'
[    5.000000] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [before:1]
[   15.100000] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [kmmscand_migrat:34]
[   16.000000] rcu: INFO: rcu_sched self-detected stall on CPU
[   17.000000] some other line
LOG
# shellcheck disable=SC2317 # dmesg is called by vm_stalls
got=$(dmesg() { cat "$tmp/dmesg"; }; vm_stalls 10.5)
want='@@VMSTALL watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [kmmscand_migrat:34]
@@VMSTALL rcu: INFO: rcu_sched self-detected stall on CPU'
[ "$got" = "$want" ]
check bench:vm-stalls-since-start $? "got: $(echo "$got" | tr '\n' '|')"
# the same log without timestamps: the lines after the two that dmesg
# printed at the start of the run
sed 's/^\[[^]]*\] //' "$tmp/dmesg" > "$tmp/dmesg-nots"
# shellcheck disable=SC2317
got=$(dmesg() { cat "$tmp/dmesg-nots"; }; vm_stalls 10.5 1)
[ "$got" = "$want" ]
check bench:vm-stalls-without-timestamps $? "got: $(echo "$got" | tr '\n' '|')"

# report.py: three rounds of none and kmmscand; kmmscand's third round
# (t90 9 s) stalled.  Its median t90 must come from rounds 1 and 2 only.
{
	echo "@@ENV workloads=hotcold policies=none,kmmscand scancost=0 repeat=3 dur=10"
	for r in 1 2 3; do
		for p in none kmmscand; do
			t90=-1
			[ $p = kmmscand ] && t90=$r
			[ $p = kmmscand ] && [ $r = 3 ] && t90=9
			echo "@@RUN-BEGIN workload=hotcold policy=$p rep=$r args=--mode hotcold"
			echo "T 1.0 hot_on0=0.5 cold_on0=0.0 acc_on0=0.5 ops=100"
			echo "W 0 nbatch=10 p50_us=10 p90_us=20 p99_us=30 max_us=40 utime=1 stime=0.1 ops=100"
			echo "RESULT mode=hotcold secs=10 setup_s=1 hot_final=1.0 cold_final=0.0" \
			     "acc_on0=1.0 t50=$t90 t90=$t90 p50_us=10 p90_us=20 p99_us=30 max_us=40" \
			     "nbatch=10 ops=100"
			[ $p = kmmscand ] && [ $r = 3 ] &&
				echo "@@VMSTALL watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [kmmscand_migrat:34]"
			echo "@@RUN-END workload=hotcold policy=$p rep=$r rc=0 wall=12"
		done
	done
} > "$tmp/raw.log"
if ! python3 "$here/report.py" "$tmp/raw.log" "$tmp/out" > "$tmp/report.out" 2>&1; then
	echo "not ok bench:report-vm-stall: report.py failed: $(tail -1 "$tmp/report.out")"
fi
row=$(python3 - "$tmp/out" <<'PY'
import csv, sys
d = sys.argv[1]
runs = {(r["policy"], r["rep"]): r["status"] for r in csv.DictReader(open(d + "/results.csv"))}
med = {r["policy"]: r for r in csv.DictReader(open(d + "/results-median.csv"))}
print(runs[("kmmscand", "3")], runs[("kmmscand", "1")], med["kmmscand"]["runs"],
      med["kmmscand"]["t90_s"])
PY
)
[ "$row" = "vm-stall ok 2 1.5" ]
check bench:report-vm-stall-status-and-median $? "status rep3, rep1, runs, t90 median: $row (want vm-stall ok 2 1.5)"
grep -q '^- hotcold / kmmscand rep 3: vm-stall: watchdog: BUG: soft lockup' "$tmp/out/results.md"
check bench:report-vm-stall-listed $? "results.md does not list the stalled run"

# t50/t90 are known to one sampling period: with 100 ms sampling, t90 1.00
# and 1.05 s are a tie in the summary's wins (both named), 1.00 and 1.25 not.
{
	echo "@@ENV workloads=hotcold,zipf policies=none,kmmscand,numab2 scancost=0 repeat=1 dur=10 sample_ms=100"
	for w in hotcold zipf; do
		for p in none kmmscand numab2; do
			case $p/$w in
			none/*) t90=-1 ;;
			kmmscand/*) t90=1.000 ;;
			numab2/hotcold) t90=1.050 ;;
			numab2/zipf) t90=1.250 ;;
			esac
			echo "@@RUN-BEGIN workload=$w policy=$p rep=1 args=--mode $w"
			awk 'BEGIN { for (i = 0; i <= 100; i++)
				printf "T %.3f hot_on0=%.1f cold_on0=0.0 acc_on0=%.1f ops=100 q_ms=5\n",
					i / 10 + 0.01, (i > 9), (i > 9) }'
			result_100ms "$w" 1.0 "$t90"
			echo "@@RUN-END workload=$w policy=$p rep=1 rc=0 wall=12"
		done
	done
} > "$tmp/ties.log"
if python3 "$here/report.py" "$tmp/ties.log" "$tmp/ties" > "$tmp/ties.out" 2>&1; then
	a=$(grep -o '^hotcold: t90_s: [^ ;]*' "$tmp/ties/summary.txt")
	b=$(grep -o '^zipf: t90_s: [^ ;]*' "$tmp/ties/summary.txt")
	[ "$a" = "hotcold: t90_s: kmmscand/numab2" ] && [ "$b" = "zipf: t90_s: kmmscand" ]
	check bench:report-t90-ties-within-period $? "got '$a' and '$b'"
	grep -q '| t50 s (±0.1) | t90 s (±0.1) |' "$tmp/ties/results.md"
	check bench:report-t90-period-shown $? "results.md header lacks the ±0.1 s period"
else
	echo "not ok bench:report-t90-ties-within-period: report.py failed: $(tail -1 "$tmp/ties.out")"
fi

# Cost next to speed: the summary gives each policy's peak history memory
# (kmmscand_history_peak_bytes, sampled by run-in-vm.sh) and its TLB
# flushes per second of run (kmmscand_tlb_flush over wall).
{
	echo "@@ENV workloads=hotcold policies=none,kmmscand scancost=0 repeat=1 dur=10 sample_ms=100"
	for p in none kmmscand; do
		echo "@@RUN-BEGIN workload=hotcold policy=$p rep=1 args=--mode hotcold"
		echo "T 1.0 hot_on0=0.5 cold_on0=0.0 acc_on0=0.5 ops=100"
		result_100ms hotcold 1.0 1.000
		if [ $p = kmmscand ]; then
			echo "@@VMSTAT kmmscand_history_peak_bytes 131072"
			echo "@@VMSTAT kmmscand_tlb_flush 24"
		fi
		echo "@@RUN-END workload=hotcold policy=$p rep=1 rc=0 wall=12"
	done
} > "$tmp/cost.log"
if python3 "$here/report.py" "$tmp/cost.log" "$tmp/cost" > "$tmp/cost.out" 2>&1; then
	grep -q '^kmmscand .*history peak 128 kB, TLB flushes 2.0/s' "$tmp/cost/summary.txt"
	check bench:report-history-and-flush-rate $? \
		"summary: $(grep '^kmmscand  *over' "$tmp/cost/summary.txt")"
else
	echo "not ok bench:report-history-and-flush-rate: report.py failed: $(tail -1 "$tmp/cost.out")"
fi

# REPEAT=1 (quick, full): a run left out is the only run of its workload x
# policy.  zipf/kmmscand stalled (with a huge CPU time and all its hot set
# fast at once); it must not enter kmmscand's summary, and every policy's
# summary must cover the same workloads (hotcold only).
{
	echo "@@ENV workloads=hotcold,zipf policies=none,kmmscand,numab2 scancost=0 repeat=1 dur=10 sample_ms=100"
	echo "@@ENV lat0_ns=10 lat1_ns=100"
	for w in hotcold zipf; do
		for p in none kmmscand numab2; do
			case $p/$w in
			none/*) h=0.0; cpu=0.00 ;;
			kmmscand/hotcold) h=0.5; cpu=0.40 ;;
			kmmscand/zipf) h=1.0; cpu=5.00 ;;
			numab2/*) h=0.5; cpu=0.10 ;;
			esac
			echo "@@RUN-BEGIN workload=$w policy=$p rep=1 args=--mode $w"
			echo "T 0.000 hot_on0=$h cold_on0=0.0 acc_on0=$h ops=100 q_ms=5"
			echo "T 10.000 hot_on0=$h cold_on0=0.0 acc_on0=$h ops=100 q_ms=5"
			result_100ms "$w" "$h" -1 work_stime=0.1
			echo "@@CPU kmmscand $cpu"
			[ $p/$w = kmmscand/zipf ] &&
				echo "@@VMSTALL watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [kmmscand_migrat:34]"
			echo "@@RUN-END workload=$w policy=$p rep=1 rc=0 wall=12"
		done
	done
} > "$tmp/rep1.log"
if python3 "$here/report.py" "$tmp/rep1.log" "$tmp/rep1" > "$tmp/rep1.out" 2>&1; then
	k=$(grep -E '^kmmscand ' "$tmp/rep1/summary.txt")
	n=$(grep -E '^numab2 ' "$tmp/rep1/summary.txt")
	got="$(echo "$k" | grep -oE 'over [0-9]+ workloads?|CPU total [0-9.]+ s' | tr '\n' ,)"
	got="$got|$(echo "$n" | grep -oE 'over [0-9]+ workloads?' | tr '\n' ,)"
	[ "$got" = "over 1 workload,CPU total 0.4 s,|over 1 workload," ]
	check bench:report-repeat1-left-out-not-summarised $? "kmmscand/numab2 summary: $got (want over 1 workload, CPU total 0.4 s)"
	grep -qE '^runs left out.*kmmscand 1 of 2' "$tmp/rep1/summary.txt"
	check bench:report-repeat1-left-out-counted-per-policy $? \
		"summary: $(grep '^runs left out' "$tmp/rep1/summary.txt" || echo 'no runs-left-out line')"
else
	echo "not ok bench:report-repeat1-left-out-not-summarised: report.py failed: $(tail -1 "$tmp/rep1.out")"
fi

# run-in-vm.sh's policy order per round: seeded (same seed, same order), a
# permutation of the policies, and not the same order for every seed.
pols="none kmmscand numab2 damos-tuned damos-naive"
# shellcheck disable=SC2086
got=$(oseed=7; a=$(shuffled $pols | tr '\n' ' '); b=$(shuffled $pols | tr '\n' ' ')
	[ "$a" = "$b" ] || echo "seed 7 gave '$a' then '$b'"
	[ "$(echo $a | tr ' ' '\n' | sort | tr '\n' ' ')" = "$(echo $pols | tr ' ' '\n' | sort | tr '\n' ' ')" ] ||
		echo "'$a' is not a permutation of '$pols'"
	# shellcheck disable=SC2034 # oseed is read by shuffled()
	n=$(for oseed in 1 2 3 4 5 6 7 8; do shuffled $pols | tr '\n' ' '; echo; done | sort -u | wc -l)
	[ "$n" -ge 3 ] || echo "8 seeds gave only $n orders")
[ -z "$got" ]
check bench:policy-order-shuffled-seeded $? "$got"

# Every table of results.md from one synthetic log (main, both hint-fault
# source tables, redis, phase change, top-tier pressure, scan cost): the
# report runs through and writes each section.
python3 - "$tmp/all.log" <<'PY'
import sys
out = open(sys.argv[1], "w")
w = lambda s: out.write(s + "\n")
w("@@ENV mode=quick dur=10 size_mb=256 seed=42 sample_ms=100 shuffle=1 order_seed=42")
w("@@ENV redis_keys=1000 redis_value=512 redis_hot_pct=10 redis_clients=2 redis_loop_n=100")
w("@@ENV node0_total_mb=1000 slow_node=1 fast_node=0 lat0_ns=10 lat1_ns=100 scan_mb=4096")
pols = ["none", "kmmscand", "numab2", "numab2-async", "kmm+faults"]
for wl in ["hotcold", "phase", "topfull", "redis-get"]:
    w("@@ORDER workload=%s rep=1 policies=%s" % (wl, ",".join(pols)))
    for i, p in enumerate(pols):
        w("@@RUN-BEGIN workload=%s policy=%s rep=1 args=x" % (wl, p))
        w("@@INFO before node0_free_mb=800 node1_free_mb=900")
        if wl == "redis-get":
            for t in range(11):
                w("NM %d on0=%.2f anon_on0=%.2f rss_mb=150" % (t, t * i / 50, t * i / 50))
            w("REDIS-TEST test=GET rps=1000 rps_first=900 rps_last=1100 p50_ms=1 p99_ms=2 "
              "loops=10 requests=10000")
            w("REDIS-RESULT failed=0 on0_setup=0 on0_final=%.2f anon_on0_final=%.2f rss_mb=150 "
              "server_stime=0.5 server_utime=3" % (i / 5, i / 5))
        else:
            if wl == "phase":
                w("PHASE t=5.00")
            if wl == "topfull":
                w("BALLOON mb=900 node0_free_mb_after=32")
                w("@@RATE 256")
            t90 = -1
            for k in range(101):
                h = min(1.0, k * i / 100)
                if t90 < 0 and h >= 0.9 and i:
                    t90 = k / 10
                extra = " hotA_on0=%.2f hotB_on0=%.2f" % (h, h) if wl == "phase" else ""
                w("T %.3f hot_on0=%.4f cold_on0=0 acc_on0=%.4f%s ops=100 q_ms=3"
                  % (k / 10, h, h if k else -1, extra))
            w("RESULT mode=%s secs=10 setup_s=1 hot_final=%.2f cold_final=0 acc_on0=0.5 "
              "t50=%.3f t90=%.3f sample_ms=100 p50_us=10 p90_us=20 p99_us=30 max_us=40 "
              "nbatch=10 ops=1000 work_stime=0.2 hot_pages=6592" % (wl, h, t90 / 2, t90))
        w("@@VMSTAT pgmigrate_success %d" % (1000 * i))
        w("@@CPU kmmscand %.2f" % (0.1 * i))
        w("@@RUN-END workload=%s policy=%s rep=1 rc=0 wall=12" % (wl, p))
for p in ("kmmscand", "kmm-nopmd"):
    w("@@RUN-BEGIN workload=scancost policy=%s rep=1 args=x" % p)
    w("T 0.000 hot_on0=0 cold_on0=0 acc_on0=-1 ops=0 q_ms=3")
    w("T 10.000 hot_on0=1 cold_on0=0 acc_on0=1 ops=100 q_ms=3")
    w("RESULT mode=sparse secs=10 hot_final=1 cold_final=0 acc_on0=1 t50=1 t90=2 "
      "sample_ms=100 ops=100")
    w("@@VMSTAT kmmscand_pte_scanned 1000")
    w("@@CPU kmmscand 0.5")
    w("@@RUN-END workload=scancost policy=%s rep=1 rc=0 wall=12" % p)
for p in ("none", "kmmscand"):
    w("@@RUN-BEGIN workload=scale-10p-16g policy=%s rep=1 args=x" % p)
    w("T 0.000 hot_on0=0 cold_on0=0 acc_on0=-1 ops=0 q_ms=3")
    w("T 10.000 hot_on0=1 cold_on0=0 acc_on0=1 ops=100 q_ms=3")
    w("RESULT mode=sparse secs=10 hot_final=1 cold_final=0 acc_on0=1 t50=1 t90=2 "
      "sample_ms=100 ops=100 work_stime=0.2")
    w("@@VMSTAT kmmscand_pte_scanned 4000")
    w("@@CPU kmmscand %s" % ("0" if p == "none" else "0.8"))
    w("@@CPULATE kmmscand %s" % ("0" if p == "none" else "0.3"))
    w("@@CPUEXACTLATE kmmscand %s" % ("0" if p == "none" else "0.2512"))
    w("@@WAKELAT kmmscand waits=120 wait_s=0.340 p50_ms=1.20 p99_ms=30.00 "
      "max_ms=41.00 lost=0")
    w("@@RUN-END workload=scale-10p-16g policy=%s rep=1 rc=0 wall=12" % p)
PY
if python3 "$here/report.py" "$tmp/all.log" "$tmp/all" > "$tmp/all.out" 2>&1; then
	miss=""
	for h in '| workload | policy | t50 s (±0.1)' '**Hint-fault source: numab2-async' \
		'**Both sources against each alone**' '## Redis: redis-get' \
		'## Phase change (phase)' '## Top-tier pressure' '## Scan cost' \
		'| scale-10p-16g | 10 | 16 | kmmscand | 0.80 | 5.0 | 0.80 | 0.251 |' \
		'Policy order shuffled in every round (seed 42' 'never held' \
		'| scale-10p-16g | kmmscand | 1 | kmmscand | 120 | 0.340 | 1.20 | 30.00 | 41.00 | 0 |'; do
		grep -qF -- "$h" "$tmp/all/results.md" || miss="$miss [$h]"
	done
	[ -z "$miss" ]
	check bench:report-every-table $? "results.md lacks$miss"
else
	echo "not ok bench:report-every-table: report.py failed: $(tail -1 "$tmp/all.out")"
fi

# The guest library's pure helpers (harness/guest/lib.sh): vmstat_delta
# subtracts per name (a counter new in AFTER counts from 0); wr reports a
# failed write through wr_failed and returns 1; wr_check catches a value
# that does not read back.
got=$(vmstat_delta "a=1 b=5 " "a=4 b=5 c=2 ")
[ "$got" = "a=3 b=0 c=2 " ]
check guestlib:vmstat-delta $? "got '$got'"
# shellcheck disable=SC2317 # called by wr
got=$(wr_failed() { echo "failed:$1:$2:$3"; }
	wr "$tmp/no/such/dir/f" 7; echo "rc=$?"
	wr "$tmp/f" 8; echo "rc=$? $(cat "$tmp/f")")
[ "$got" = "failed:$tmp/no/such/dir/f:7:write failed
rc=1
rc=0 8" ]
check guestlib:wr $? "got '$(echo "$got" | tr '\n' '|')'"
# a knob that reads back something else than was written (one that
# clamps, say): cat shadowed to read "clamped"
# shellcheck disable=SC2317
got=$(wr_failed() { echo "failed:$3"; }
	cat() { echo clamped; }
	wr_check "$tmp/g" 9; echo "rc=$?")
[ "$got" = "failed:reads 'clamped' after the write
rc=1" ]
check guestlib:wr-check-reads-back $? "got '$(echo "$got" | tr '\n' '|')'"

# kmm_save / kmm_restore: the writable files of a fake kmmscand
# directory come back to their saved values, the read-only one (mode 444,
# which root could still write) is neither saved nor touched, and a value
# that cannot be written back is reported.
mkdir -p "$tmp/kmm"
echo 500 > "$tmp/kmm/scan_period_min_ms"; echo "abit" > "$tmp/kmm/sources"
echo 4096 > "$tmp/kmm/history_bytes"; chmod 444 "$tmp/kmm/history_bytes"
kmm_save "$tmp/kmm" "$tmp/kmm-boot"
echo 100 > "$tmp/kmm/scan_period_min_ms"; echo "abit fault" > "$tmp/kmm/sources"
chmod 644 "$tmp/kmm/history_bytes"; echo 0 > "$tmp/kmm/history_bytes"
kmm_restore "$tmp/kmm" "$tmp/kmm-boot"; rc=$?
got="rc=$rc saved=$(ls "$tmp/kmm-boot" | tr '\n' ' ')$(cat "$tmp/kmm/scan_period_min_ms" \
	"$tmp/kmm/sources" "$tmp/kmm/history_bytes" | tr '\n' ' ')"
[ "$got" = "rc=0 saved=scan_period_min_ms sources 500 abit 0 " ]
check guestlib:kmm-save-restore $? "got '$got'"
# shellcheck disable=SC2317 # called by wr
got=$(wr_failed() { echo "failed:${1##*/}:$2"; }
	mkdir "$tmp/kmm-boot/d"; echo 7 > "$tmp/kmm-boot/d/x"
	echo 8 > "$tmp/kmm-boot/gone"
	kmm_restore "$tmp/kmm/no-such-dir" "$tmp/kmm-boot"; echo "rc=$?")
[ "$(echo "$got" | tail -1)" = "rc=1" ] && echo "$got" | grep -q '^failed:gone:8$'
check guestlib:kmm-restore-reports $? "got '$(echo "$got" | tr '\n' '|')'"

# kmm_nice_arg: the nice value of kmm-nice<N>, nothing for a name that
# is not one (run-in-vm.sh then skips the policy as a bad name).
got=$(for p in kmm-nice-10 kmm-nice5 kmm-nice-20 kmm-nice19 kmm-nice kmm-nice- \
	kmm-nice-21 kmm-nice20 kmm-nice1-2 kmm-nice--3 kmm-nicex kmm-nice+1; do
	echo "$p=$(kmm_nice_arg $p)"; done | tr '\n' ' ')
[ "$got" = "kmm-nice-10=-10 kmm-nice5=5 kmm-nice-20=-20 kmm-nice19=19 kmm-nice= kmm-nice-= \
kmm-nice-21= kmm-nice20= kmm-nice1-2= kmm-nice--3= kmm-nicex= kmm-nice+1= " ]
check guestlib:kmm-nice-arg $? "got '$got'"

# wakelat_summary (WAKELAT=1) on a hand-made trace: a wait from a wake-up
# (2 ms) and one from a preemption in state R (10 ms) for kmmscand, none
# from a switch-out in state S; thread ids given one per line, as a list
# of processes gives them (the first version matched none that way).
cat > "$tmp/trace" <<'LOG'
# entries-in-buffer/entries-written: 6/6   #P:2
  <idle>-0  [000] d..2.  100.000000: sched_wakeup: comm=kmmscand pid=34 prio=120 target_cpu=000
  <idle>-0  [000] d..2.  100.002000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kmmscand next_pid=34 next_prio=120
  kmmscand-34  [000] d..2.  100.003000: sched_switch: prev_comm=kmmscand prev_pid=34 prev_prio=120 prev_state=R+ ==> next_comm=wl next_pid=99 next_prio=120
  wl-99  [000] d..2.  100.013000: sched_switch: prev_comm=wl prev_pid=99 prev_prio=120 prev_state=R ==> next_comm=kmmscand next_pid=34 next_prio=120
  kmmscand-34  [000] d..2.  100.014000: sched_switch: prev_comm=kmmscand prev_pid=34 prev_prio=120 prev_state=S ==> next_comm=wl next_pid=99 next_prio=120
  wl-99  [000] d..2.  100.020000: sched_switch: prev_comm=wl prev_pid=99 prev_prio=120 prev_state=R ==> next_comm=kmmscand next_pid=34 next_prio=120
LOG
got=$(wakelat_summary "$tmp/trace" "35
34" 0 "$tmp/waits")
[ "$got" = "@@WAKELAT kmmscand waits=2 wait_s=0.012 p50_ms=2.00 p99_ms=2.00 max_ms=10.00 lost=0" ]
check guestlib:wakelat-summary $? "got '$got'"

# bench.sh's switches: a bad value stops it with its usage line and exit
# status 2 before anything is built or booted.  BENCH_RAW names a log that
# does not exist, so a check that let the value through fails on the copy
# (status 1) instead of starting a VM.
for sw in INIT_ON_FREE BIG0; do
	got=$(env "$sw=2" BENCH=quick BENCH_RAW="$tmp/none.log" bash "$here/bench.sh" 2>&1)
	rc=$?
	[ $rc = 2 ] && printf '%s\n' "$got" | grep -q "bench: $sw must be 0 or 1"
	check "bench:switch-$sw" $? "status $rc, output '$(printf '%s' "$got" | head -c 200)'"
done
