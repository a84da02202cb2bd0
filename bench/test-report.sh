#!/usr/bin/env bash
# Host-side checks of the bench's bookkeeping, run by `make test`: a run
# during which the guest logged a CPU stall is reported by run-in-vm.sh's
# vm_stalls() and left out of report.py's medians.  Prints "ok NAME" or
# "not ok NAME: why" per check.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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

# vm_stalls() from run-in-vm.sh, with dmesg replaced by a fixed log: only
# stall lines stamped at or after the run's start may be reported.
fn=$(sed -n '/^vm_stalls() {/,/^}/p' "$here/run-in-vm.sh")
cat > "$tmp/dmesg" <<'LOG'
[    5.000000] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [before:1]
[   15.100000] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [kmmscand_migrat:34]
[   16.000000] rcu: INFO: rcu_sched self-detected stall on CPU
[   17.000000] some other line
LOG
# shellcheck disable=SC2317 # dmesg is called by the eval'd function
got=$(dmesg() { cat "$tmp/dmesg"; }; eval "$fn"; vm_stalls 10.5)
want='@@VMSTALL watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [kmmscand_migrat:34]
@@VMSTALL rcu: INFO: rcu_sched self-detected stall on CPU'
[ -n "$fn" ] && [ "$got" = "$want" ]
check bench:vm-stalls-since-start $? "got: $(echo "$got" | tr '\n' '|')"

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
	exit 0
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
			echo "RESULT mode=$w secs=10 setup_s=1 hot_final=1.0 cold_final=0.0" \
			     "acc_on0=1.0 t50=$t90 t90=$t90 sample_ms=100 p50_us=10 p90_us=20" \
			     "p99_us=30 max_us=40 nbatch=10 ops=100"
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
			echo "RESULT mode=$w secs=10 setup_s=1 hot_final=$h cold_final=0.0" \
			     "acc_on0=$h t50=-1 t90=-1 sample_ms=100 p50_us=10 p90_us=20" \
			     "p99_us=30 max_us=40 nbatch=10 ops=100 work_stime=0.1"
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
fn=$(sed -n '/^shuffled() {/,/^}/p' "$here/run-in-vm.sh")
pols="none kmmscand numab2 damos-tuned damos-naive"
# shellcheck disable=SC2086
got=$(eval "$fn"; oseed=7; a=$(shuffled $pols | tr '\n' ' '); b=$(shuffled $pols | tr '\n' ' ')
	[ "$a" = "$b" ] || echo "seed 7 gave '$a' then '$b'"
	[ "$(echo $a | tr ' ' '\n' | sort | tr '\n' ' ')" = "$(echo $pols | tr ' ' '\n' | sort | tr '\n' ' ')" ] ||
		echo "'$a' is not a permutation of '$pols'"
	n=$(for oseed in 1 2 3 4 5 6 7 8; do shuffled $pols | tr '\n' ' '; echo; done | sort -u | wc -l)
	[ "$n" -ge 3 ] || echo "8 seeds gave only $n orders")
[ -n "$fn" ] && [ -z "$got" ]
check bench:policy-order-shuffled-seeded $? "${got:-shuffled() not found in run-in-vm.sh}"
