#!/bin/sh
# bench/run-in-vm.sh - guest side of `make bench` (busybox sh, runs as root).
#
# In one boot, runs every workload under every promotion policy, each time as
# a fresh workload process with the promotion state reset in between, and
# prints everything between markers on stdout:
#   @@BENCH-BEGIN / @@BENCH-END
#   @@ENV key=value                      once, environment facts
#   @@RUN-BEGIN workload=W policy=P args=...
#     <workload output: CFG/SETUP/T/PHASE/W/RESULT lines; the redis
#      workloads: CFG/LOAD/SETUP/NM/BM/REDIS-TEST/REDIS-RESULT lines>
#     @@VMSTAT <counter> <delta>          /proc/vmstat deltas (nonzero, selected)
#     @@CPU <thread> <seconds>            promoter kthread utime+stime deltas
#     @@CPUEXACT <thread> <seconds>       the same, exact (time on a CPU)
#     @@CPULATE / @@CPUEXACTLATE <thread> <seconds>  both over the run's
#                                         last third (DUR - 2*DUR/3 s): the
#                                         steady state
#     @@DAMOS <stat> <value>              DAMOS scheme stats (damos-* policies)
#     @@RATE <MB/s>                       the policy's promotion rate limit
#     @@SKIP <reason>                     policy not available on this kernel
#   @@RUN-END workload=W policy=P rep=R rc=N wall=S
#
# Arguments are key=value words:
#   MODE=quick|quick-bignode|medium|full|scale|scale-medium  DUR=<s per run>  SIZE_MB=<region>  SPARSE_MB=<map size>
#   SCAN_MB=<scan-cost map size>  WORKLOADS="<names>"  POLICIES="<names>"
#   SCANCOST=0|1  SEED=<n>  REPEAT=<runs of each workload x policy>
#   SAMPLE_MS=<placement sampling period of the workload, ms; default 100>
#   SHUFFLE=1|0  ORDER_SEED=<n>  (policy order shuffled per round, seeded;
#   default on, seed = SEED)
#   SCALE_HOT_MB=<hot set of the scale-* workloads>
#   WAKELAT=1  (how long kmmscand's threads waited for a CPU while
#   runnable, from the sched_wakeup/sched_switch tracepoints: @@WAKELAT lines)
#   PERF=1  (perf record -a during every run: @@PERF lines, the top 40
#   (comm, symbol) pairs by CPU samples; needs perf in the VM, HOSTFS=1)
#   HARD_HOT_MB=<topfull-hard hot set>  DAMOS_MIN_NR=<n>  DAMOS_MIN_AGE=<n>
#   SLOW_NODE=<n> FAST_NODE=<n>  (default 1 and 0, the VM's; on a real
#   tiered machine: the CXL/slow node and the DRAM node the CPUs sit on)
#   REDIS_KEYS=<n> REDIS_VALUE=<bytes> REDIS_HOT_PCT=<% of the keys used>
#   REDIS_CLIENTS=<connections> REDIS_LOOP_N=<requests per benchmark loop>
#   FILE_PATH=<file for file-shared: used as it is if it exists, else created>
#   FILE_RW_PATH=<file for file-shared-rw: must be writable, or is created>
#   (paths without blanks)
# Workloads: hotcold zipf phase flat multi thp thp-scatter scatter topfull
#            topfull-hard sparse
#            vmas (hotcold with one VMA per 64 KB: many small mappings
#            share each PTE table; in no preset)
#            uniform populate file-shared file-shared-rw thp-move (the
#            microbenchmarks, workload/workload.c)
#            scale-<N>p-<G>g (N processes sharing a sparse G GB mapping),
#            scale-dense-<G>g (G GB densely on the slow node); both with a
#            SCALE_HOT_MB hot set
#            redis-get redis-mix (bench/redis-workload.sh: redis-server,
#            redis-benchmark and migratepages from the host, VM needs HOSTFS)
# Policies:  none kmmscand numab2 damos-naive damos-tuned kmm-nopmd kmm-tlb
#            numab2-async (NUMA balancing's hint faults, promoted by
#            kmmscand_migrate: kmmscand sources=fault, scanner idle)
#            kmm+faults (kmmscand sources="abit fault" + numa_balancing=2)
#            damos-tuned-n<NR>a<AGE> (damos-tuned with min nr_accesses NR and
#            min age AGE, for threshold sweeps); "damos" = damos-naive
#            kmm-nice<N> (kmmscand with both threads at nice N, -20..19,
#            e.g. kmm-nice-10: their weight against many busy tasks)
# REPEAT=N: for each workload, N rounds of all policies (rep=1..N), each
# round in its own order (SHUFFLE=1, seeded by ORDER_SEED; @@ORDER lines).
# Scan-cost microbench (SCANCOST=1): workload "scancost" (sparse, SCAN_MB map,
# 64 MB hot set) under kmmscand (pmd_skip=1) and kmm-nopmd (pmd_skip=0).

MODE=quick
for a in "$@"; do
	case "$a" in
	MODE=*) MODE=${a#MODE=} ;;
	esac
done
REPEAT=1
# redis: keys x value bytes (~150 MB of server RSS per 200000 keys of 512
# bytes), the share of the keyspace redis-benchmark uses (-r), its
# connections and requests per loop (sizes and load times: bench/README.md)
REDIS_KEYS=200000
REDIS_VALUE=512
REDIS_HOT_PCT=10
REDIS_CLIENTS=8
REDIS_LOOP_N=2000
case "$MODE" in
full)
	DUR=60; SIZE_MB=512; SPARSE_MB=4096; SCAN_MB=8192; SCANCOST=1
	WORKLOADS="hotcold zipf phase flat multi thp thp-scatter scatter topfull topfull-hard sparse
		uniform populate file-shared file-shared-rw thp-move redis-get redis-mix"
	POLICIES="none kmmscand numab2 damos-naive damos-tuned kmm-nopmd kmm-tlb"
	REDIS_KEYS=1000000 ;;
quick-bignode)
	# the headline workloads for a VM whose node 0 is large enough for NUMA
	# balancing's first-access rule (make bench BENCH=quick-bignode boots
	# it with NODE0_MB=3072)
	DUR=10; SIZE_MB=256; SPARSE_MB=4096; SCAN_MB=4096; SCANCOST=0
	WORKLOADS="hotcold zipf phase multi thp thp-scatter topfull"
	POLICIES="none kmmscand numab2 damos-tuned" ;;
scale|scale-medium)
	# the scan-cost curve: 1, 10 and 100 processes, 1, 4 and 16 GB mapped
	# (sparse), and 4 GB densely on the slow node, each with a small hot
	# set (make bench BENCH=scale boots node 1 with 5120 MB for it)
	DUR=10; SCANCOST=0
	[ "$MODE" = scale-medium ] && { DUR=30; REPEAT=3; }
	WORKLOADS="scale-1p-1g scale-10p-1g scale-100p-1g scale-1p-4g scale-1p-16g
		scale-10p-16g scale-100p-16g scale-dense-4g"
	POLICIES="none kmmscand numab2 damos-tuned" ;;
medium)
	DUR=30; SIZE_MB=256; SPARSE_MB=4096; SCAN_MB=4096; SCANCOST=0; REPEAT=3
	WORKLOADS="hotcold zipf phase multi thp topfull redis-get redis-mix"
	POLICIES="none kmmscand numab2 damos-tuned damos-naive" ;;
*)
	DUR=10; SIZE_MB=256; SPARSE_MB=4096; SCAN_MB=4096; SCANCOST=1
	WORKLOADS="hotcold zipf phase flat multi thp thp-scatter topfull topfull-hard
		uniform populate file-shared file-shared-rw thp-move redis-get redis-mix"
	POLICIES="none kmmscand kmm-tlb numab2 damos-naive damos-tuned" ;;
esac
SEED=42
SAMPLE_MS=100
PERF=0
WAKELAT=0
SHUFFLE=1
ORDER_SEED=
# topfull-hard: hot set in MB; the balloon leaves 32 MB of node 0 free
HARD_HOT_MB=112
# scale-*: the hot set in MB, shared by the processes
SCALE_HOT_MB=16
# damos-tuned access thresholds (of 20 samples per 100 ms aggregation; age in
# aggregation intervals), chosen by the sweep recorded in bench/README.md
DAMOS_MIN_NR=1
DAMOS_MIN_AGE=0
SLOW_NODE=1
FAST_NODE=0
# file-shared reads FILE_PATH (make bench passes a file of the host, i.e.
# page cache of the VM's 9p root); file-shared-rw maps FILE_RW_PATH writable
FILE_PATH=/tmp/kmmscand-bench.file
FILE_RW_PATH=/tmp/kmmscand-bench-rw.file
for a in "$@"; do
	case "$a" in
	*=*) eval "${a%%=*}=\"\${a#*=}\"" ;;
	*) echo "run-in-vm.sh: ignoring argument '$a'" >&2 ;;
	esac
done
[ -n "$ORDER_SEED" ] || ORDER_SEED=$SEED
for v in "$ORDER_SEED" "$SHUFFLE"; do
	case "$v" in
	''|*[!0-9]*) echo "run-in-vm.sh: ORDER_SEED and SHUFFLE must be numbers (got '$ORDER_SEED', '$SHUFFLE')" >&2; exit 2 ;;
	esac
done
case "$SAMPLE_MS" in
''|*[!0-9]*) echo "run-in-vm.sh: SAMPLE_MS must be a number of ms (got '$SAMPLE_MS')" >&2; exit 2 ;;
esac
[ "$SAMPLE_MS" -ge 10 ] || { echo "run-in-vm.sh: SAMPLE_MS must be at least 10" >&2; exit 2; }
case "$PERF$WAKELAT" in
00|01|10|11) ;;
*) echo "run-in-vm.sh: PERF and WAKELAT must be 0 or 1 (got '$PERF', '$WAKELAT')" >&2; exit 2 ;;
esac
for v in "$SLOW_NODE" "$FAST_NODE"; do
	case "$v" in
	''|*[!0-9]*) echo "run-in-vm.sh: SLOW_NODE and FAST_NODE must be node numbers (got '$SLOW_NODE', '$FAST_NODE')" >&2; exit 2 ;;
	esac
	[ -d /sys/devices/system/node/node$v ] ||
		{ echo "run-in-vm.sh: there is no node $v" >&2; exit 2; }
done
[ "$SLOW_NODE" != "$FAST_NODE" ] ||
	{ echo "run-in-vm.sh: SLOW_NODE and FAST_NODE must differ" >&2; exit 2; }

HERE=$(cd "$(dirname "$0")" 2>/dev/null && pwd)
WL=""
for c in "$HERE/workload" /opt/prog/workload ./workload; do
	[ -x "$c" ] && { WL=$c; break; }
done
RWL=""
for c in "$HERE/redis-workload.sh" /opt/prog/redis-workload.sh ./redis-workload.sh; do
	[ -f "$c" ] && { RWL=$c; break; }
done
KMM=/sys/kernel/mm/kmmscand
DAMON=/sys/kernel/mm/damon/admin/kdamonds
NB=/proc/sys/kernel/numa_balancing
DEMOTE=/sys/kernel/mm/numa/demotion_enabled
NBDBG=/sys/kernel/debug/sched/numa_balancing
NBRATE=/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps
TMP=/tmp/bench.$$
mkdir -p "$TMP"

# wr, vmstat_snap/vmstat_delta, vm_stalls, shuffled, kmm_nice_arg (harness/guest/lib.sh,
# shipped next to this script).  A failed write is a marker line in the
# run's log, not fatal.
. "$HERE/lib.sh"
wr_failed() {
	echo "@@WARN write '$2' > $1 failed ($3)"
}

# ---------------------------------------------------------------- environment
have_kmm=0; [ -f "$KMM/enabled" ] && have_kmm=1
# kmmscand's tunables as the kernel booted with them, the state every run
# starts from (kmm_defaults); enabled is set per policy
KMM_BOOT=/tmp/kmm-boot
if [ $have_kmm = 1 ]; then
	kmm_save "$KMM" "$KMM_BOOT" || echo "@@WARN cannot save the tunables of boot"
	rm -f "$KMM_BOOT/enabled"
fi
have_nb=0; [ -w "$NB" ] && have_nb=1
have_damon=0; [ -f "$DAMON/nr_kdamonds" ] && have_damon=1

# Physical range of the slow node from /proc/zoneinfo (start_pfn, spanned).
node_range() {	# node_range NID -> "start end" (bytes) or nothing
	awk -v want="$1" '
	/^Node [0-9]+, zone/ { n = $2; sub(",", "", n); inz = (n == want); sp = 0; next }
	inz && $1 == "spanned" { sp = $2 }
	inz && $1 == "start_pfn:" && sp > 0 {
		s = $2; e = $2 + sp
		if (lo == "" || s < lo) lo = s
		if (e > hi) hi = e
	}
	END { if (lo != "") printf "%.0f %.0f\n", lo * 4096, hi * 4096 }' /proc/zoneinfo
}
N1_RANGE=$(node_range $SLOW_NODE)
N1_START=${N1_RANGE% *}
N1_END=${N1_RANGE#* }

lat() {	# lat NID -> read latency (ns) from HMAT-backed sysfs, or empty
	cat /sys/devices/system/node/node$1/access0/initiators/read_latency 2>/dev/null
}

echo "@@BENCH-BEGIN"
echo "@@ENV mode=$MODE dur=$DUR size_mb=$SIZE_MB sparse_mb=$SPARSE_MB scan_mb=$SCAN_MB seed=$SEED sample_ms=$SAMPLE_MS"
echo "@@ENV workloads=$(echo $WORKLOADS | tr ' ' ',') policies=$(echo $POLICIES | tr ' ' ',') scancost=$SCANCOST repeat=$REPEAT"
echo "@@ENV shuffle=$SHUFFLE order_seed=$ORDER_SEED"
echo "@@ENV scale_hot_mb=$SCALE_HOT_MB hard_hot_mb=$HARD_HOT_MB damos_min_nr=$DAMOS_MIN_NR damos_min_age=$DAMOS_MIN_AGE"
echo "@@ENV redis_keys=$REDIS_KEYS redis_value=$REDIS_VALUE redis_hot_pct=$REDIS_HOT_PCT redis_clients=$REDIS_CLIENTS redis_loop_n=$REDIS_LOOP_N"
echo "@@ENV file_path=$FILE_PATH file_rw_path=$FILE_RW_PATH"
command -v redis-server >/dev/null 2>&1 &&
	echo "@@ENV redis_version=$(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')"
echo "@@ENV kernel=$(uname -r) ncpu=$(grep -c ^processor /proc/cpuinfo)"
_iof=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^init_on_free=//p' | tail -n 1)
echo "@@ENV init_on_free=${_iof:-0}"
echo "@@ENV kmmscand_present=$have_kmm numa_balancing_present=$have_nb damon_sysfs_present=$have_damon"
echo "@@ENV node1_paddr=${N1_START:-?}-${N1_END:-?}"
echo "@@ENV slow_node=$SLOW_NODE fast_node=$FAST_NODE"
echo "@@ENV lat0_ns=$(lat $FAST_NODE) lat1_ns=$(lat $SLOW_NODE)"
for n in /sys/devices/system/node/node[0-9]*; do
	echo "@@ENV $(basename $n)_total_mb=$(awk '/MemTotal/ {print int($4/1024)}' $n/meminfo) $(basename $n)_cpus=$(cat $n/cpulist)"
done
for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	[ -d "$t" ] && echo "@@ENV $(basename $t)_nodes=$(cat $t/nodelist)"
done
[ -f /sys/kernel/mm/transparent_hugepage/enabled ] &&
	echo "@@ENV thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled | tr ' ' ',')"
if [ $have_kmm = 1 ]; then
	echo "@@ENV kmmscand: $(cd $KMM && for f in *; do printf '%s=%s ' $f "$(cat $f)"; done)"
else
	echo "@@ENV kmmscand not present"
fi
if [ -z "$WL" ]; then
	echo "@@ERROR workload binary not found next to $0"
	echo "@@BENCH-END"
	exit 2
fi

# ---------------------------------------------------------------- policies
kmm_set() {	# kmm_set key=value...
	for kv in "$@"; do
		[ -f "$KMM/${kv%%=*}" ] && wr "$KMM/${kv%%=*}" "${kv#*=}"
	done
}

kmm_defaults() {
	[ $have_kmm = 1 ] || return 0
	kmm_set enabled=0
	kmm_restore "$KMM" "$KMM_BOOT"
	kmm_renice 0
}

kmm_renice() {	# kmm_renice N: both kmmscand threads at nice N
	promoters | while read -r comm pid; do
		case "$comm" in kmmscand*) ;; *) continue ;; esac
		renice "$1" -p "$pid" >/dev/null 2>&1
		n=$(sed 's/^.*) //' /proc/$pid/stat 2>/dev/null | awk '{print $17}')
		[ -z "$n" ] || [ "$n" = "$1" ] || echo "@@WARN $comm nice $n, not $1"
	done
}

damon_off() {
	[ $have_damon = 1 ] || return 0
	if [ -f "$DAMON/0/state" ] && [ "$(cat $DAMON/0/state)" = on ]; then
		wr "$DAMON/0/state" off
	fi
	wr "$DAMON/nr_kdamonds" 0 >/dev/null
}

# DAMON on node 1's physical address range (paddr), one DAMOS migrate_hot
# scheme to node 0.  damon_ctx_setup UPDATE_US: the context (sampling 5 ms,
# aggregation 100 ms, 10..1000 regions) up to the scheme directory.
damon_ctx_setup() {
	[ -n "$N1_START" ] || { echo "@@WARN node 1 physical range unknown"; return 1; }
	wr "$DAMON/nr_kdamonds" 1 || return 1
	c=$DAMON/0/contexts
	wr $c/nr_contexts 1 || return 1
	c=$c/0
	wr $c/operations paddr || return 1
	wr $c/monitoring_attrs/intervals/sample_us 5000
	wr $c/monitoring_attrs/intervals/aggr_us 100000
	wr $c/monitoring_attrs/intervals/update_us "$1"
	wr $c/monitoring_attrs/nr_regions/max 1000
	wr $c/monitoring_attrs/nr_regions/min 10
	wr $c/targets/nr_targets 1
	wr $c/targets/0/regions/nr_regions 1
	wr $c/targets/0/regions/0/start "$N1_START"
	wr $c/targets/0/regions/0/end "$N1_END"
	wr $c/schemes/nr_schemes 1
	s=$c/schemes/0
	wr $s/action migrate_hot || return 1
	wr $s/target_nid $FAST_NODE || return 1
	# the sysfs defaults of every min AND max are 0: set both
	wr $s/access_pattern/sz/min 4096
	wr $s/access_pattern/sz/max $((N1_END - N1_START))
	wr $s/access_pattern/nr_accesses/max 1000
	wr $s/access_pattern/age/max 4294967295
	wr $s/quotas/ms 0
	wr $s/watermarks/metric none
	return 0
}

damon_start() {
	wr $DAMON/0/state on || return 1
	echo "@@INFO damon state=$(cat $DAMON/0/state) pid=$(cat $DAMON/0/pid) range=$N1_START-$N1_END"
	return 0
}

# damos-naive: update 1 s; access pattern any size, nr_accesses >= 1 (of 20
# samples per aggregation), any age; applied every aggregation (100 ms);
# quota 256 MiB per 1000 ms (= kmmscand's default rate limit), all quota
# weights 0, no filter, no time quota, no watermarks.
damon_naive_on() {
	damon_ctx_setup 1000000 || return 1
	wr $s/access_pattern/nr_accesses/min 1
	wr $s/access_pattern/age/min 0
	wr $s/quotas/bytes 268435456
	wr $s/quotas/reset_interval_ms 1000
	damon_start
}

# damos-tuned MIN_NR MIN_AGE: as close to samples/damon/mtier.c's promotion
# context (v6.16+) as the 6.12 sysfs allows: paddr on node 1, sampling 5 ms,
# aggregation 100 ms, ops update 60 s, 10..1000 regions; migrate_hot to node
# 0 applied every 1 s; quota 200 MiB per 1000 ms prioritised by weights
# sz 0 / nr_accesses 100 / age 100 (permil), no watermarks; a "young" page
# filter with matching=N, i.e. pages whose Accessed bit is clear are filtered
# out (6.12 filters only exclude; mtier's allow-young filter needs 6.14+).
# Not expressible in 6.12: mtier's quota goal node_mem_used_bp(node 0) =
# 99.7% (only user_input/some_mem_psi_us exist) - with node 0 not full the
# goal keeps the quota at its 200 MiB/s cap, which is what this sets - and
# the monitoring intervals auto-tuning (access_bp 400).  mtier's second
# context (migrate_cold from node 0) is not a promotion policy and is left
# out: demotion here is the kernel's reclaim-based demotion (topfull*).
# Access thresholds: mtier uses nr_accesses >= 1 and any age; here they are
# DAMOS_MIN_NR / DAMOS_MIN_AGE (sweep in bench/README.md).
damon_tuned_on() {
	damon_ctx_setup 60000000 || return 1
	wr $s/access_pattern/nr_accesses/min "$1"
	wr $s/access_pattern/age/min "$2"
	wr $s/apply_interval_us 1000000
	wr $s/quotas/bytes 209715200
	wr $s/quotas/reset_interval_ms 1000
	wr $s/quotas/weights/sz_permil 0
	wr $s/quotas/weights/nr_accesses_permil 100
	wr $s/quotas/weights/age_permil 100
	wr $s/filters/nr_filters 1 || return 1
	wr $s/filters/0/type young || return 1
	wr $s/filters/0/matching N || return 1
	damon_start
}

damos_stats() {
	s=$DAMON/0/contexts/0/schemes/0/stats
	[ -d "$s" ] || return 0
	wr "$DAMON/0/state" update_schemes_stats >/dev/null
	for f in nr_tried sz_tried nr_applied sz_applied qt_exceeds; do
		[ -f $s/$f ] && echo "@@DAMOS $f $(cat $s/$f)"
	done
}

# NUMA balancing back to the kernel's defaults (kernel/sched/fair.c of
# 6.12): off, promotion rate limit 65536 MB/s, and the debugfs knobs hot
# threshold 1000 ms, scan delay 1000 ms, scan period 1000..60000 ms, scan
# size 256 MB.  Its per-node tiering state (pgdat->nbp_threshold, the
# threshold the kernel adjusts itself, with nbp_th_start/nbp_th_nr_cand)
# cannot be written from user space: the sysctl clears it when
# numa_balancing goes from a mode without tiering to one with it
# (reset_memory_tiering()), i.e. when policy_on writes 2 after this 0, right
# before every run that uses it.  The rate-limit window (nbp_rl_start,
# nbp_rl_nr_cand) is not cleared; it is a 1 s window that restarts on the
# first candidate more than 1 s after the last, and settle() alone waits
# 1 s.  Page access times live in the folios of the run's own fresh
# process.
numab_defaults() {
	[ $have_nb = 1 ] || return 0
	wr $NB 0
	[ -f "$NBRATE" ] && wr "$NBRATE" 65536 >/dev/null
	[ -d "$NBDBG" ] || return 0
	wr $NBDBG/hot_threshold_ms 1000 >/dev/null
	wr $NBDBG/scan_delay_ms 1000 >/dev/null
	# max before min, as for kmmscand's period range
	wr $NBDBG/scan_period_max_ms 60000 >/dev/null
	wr $NBDBG/scan_period_min_ms 1000 >/dev/null
	wr $NBDBG/scan_size_mb 256 >/dev/null
}

numab_state() {	# one line: the knobs numab_defaults sets, as read back
	printf 'numa_balancing=%s rate_limit_MBps=%s' "$(cat $NB 2>/dev/null)" \
		"$(cat $NBRATE 2>/dev/null)"
	for f in hot_threshold_ms scan_delay_ms scan_period_min_ms scan_period_max_ms scan_size_mb; do
		printf ' %s=%s' $f "$(cat $NBDBG/$f 2>/dev/null)"
	done
	echo
}

all_off() {
	kmm_defaults
	numab_defaults
	damon_off
	[ -f "$DEMOTE" ] && wr "$DEMOTE" 0 >/dev/null
}

policy_available() {	# -> prints a reason when not
	case "$1" in
	none) ;;
	kmmscand|kmm-nopmd|kmm-tlb) [ $have_kmm = 1 ] || echo "kmmscand not present" ;;
	kmm-nice*)
		if [ $have_kmm = 0 ]; then echo "kmmscand not present"
		elif [ -z "$(kmm_nice_arg $1)" ]; then echo "bad policy name $1"
		fi ;;
	numab2-async|kmm+faults)
		if [ ! -f "$KMM/sources" ]; then echo "kmmscand without the sources file"
		elif [ $have_nb = 0 ]; then echo "NUMA balancing not present"
		fi ;;
	numab2) [ $have_nb = 1 ] || echo "NUMA balancing not present" ;;
	damos-naive|damos-tuned|damos-tuned-n*a*)
		if [ $have_damon = 0 ]; then echo "DAMON sysfs not present"
		elif [ -z "$N1_START" ]; then echo "node 1 physical range unknown"
		elif [ -z "$(damos_tuned_args $1)" ]; then echo "bad policy name $1"
		fi ;;
	*) echo "unknown policy $1" ;;
	esac
}

damos_tuned_args() {	# damos_tuned_args POLICY -> "MIN_NR MIN_AGE"
	case "$1" in
	damos-tuned) echo "$DAMOS_MIN_NR $DAMOS_MIN_AGE" ;;
	damos-tuned-n*a*)
		v=${1#damos-tuned-n}
		n=${v%%a*}; a=${v#*a}
		case "$n$a" in ''|*[!0-9]*) return ;; esac
		echo "$n $a" ;;
	*) echo "-" ;;
	esac
}

policy_rate() {	# policy_rate POLICY -> promotion rate limit in MB/s (2^20 B)
	case "$1" in
	kmmscand|kmm-*|kmm+*|numab2-async) cat $KMM/promote_rate_limit_mbps 2>/dev/null ;;
	numab2) cat /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps 2>/dev/null ;;
	damos*)
		q=$DAMON/0/contexts/0/schemes/0/quotas
		b=$(cat $q/bytes 2>/dev/null); i=$(cat $q/reset_interval_ms 2>/dev/null)
		[ -n "$b" ] && [ -n "$i" ] && [ "$i" -gt 0 ] && [ "$b" -gt 0 ] &&
			echo $((b / 1048576 * 1000 / i)) ;;
	esac
}

policy_on() {
	case "$1" in
	none) ;;
	kmmscand) kmm_set enabled=1 ;;
	kmm-nopmd) kmm_set pmd_skip=0 enabled=1 ;;
	kmm-tlb) kmm_set tlb_flush=1 enabled=1 ;;
	kmm-nice*) kmm_set enabled=1; kmm_renice "$(kmm_nice_arg $1)" ;;
	numab2) wr $NB 2 ;;
	# kmmscand takes the hint faults before NUMA balancing starts making them
	numab2-async) kmm_set sources=fault enabled=1; wr $NB 2 ;;
	kmm+faults) kmm_set "sources=abit fault" enabled=1; wr $NB 2 ;;
	damos-naive) damon_naive_on || echo "@@WARN damon_naive_on failed" ;;
	damos-tuned*)
		# shellcheck disable=SC2046
		damon_tuned_on $(damos_tuned_args $1) || echo "@@WARN damon_tuned_on failed" ;;
	esac
}

# ---------------------------------------------------------------- measuring
# promoter threads: "comm pid" for kmmscand* and kdamond*
promoters() {
	for d in /proc/[0-9]*; do
		# the redirection fails when the process is gone: its message too is hidden
		{ read -r comm < "$d/comm"; } 2>/dev/null || continue
		case "$comm" in
		kmmscand*|kdamond*) echo "$comm ${d#/proc/}" ;;
		esac
	done
}

# "comm pid ticks ms": utime + stime in clock ticks, sampled at the
# timer tick (USER_HZ=100 in /proc), and the thread's exact time on a CPU
# in ms (se.sum_exec_runtime of /proc/<pid>/sched, CONFIG_SCHED_DEBUG;
# "-" without it).  A thread that runs in bursts shorter than a tick is
# counted by the ticks only statistically: 0.04 s of ticks over 20 s is
# 4 of them.
cpu_snapshot() {	# cpu_snapshot FILE
	promoters | while read -r comm pid; do
		# fields after the ")" : state(3) ... utime(14) stime(15)
		t=$(sed 's/^.*) //' /proc/$pid/stat 2>/dev/null | awk '{print $12 + $13}')
		ms=$(awk '$1 == "se.sum_exec_runtime" { print $3 }' /proc/$pid/sched 2>/dev/null)
		[ -n "$t" ] && echo "$comm $pid $t ${ms:--}"
	done > "$1"
}

# cpu_delta BEFORE AFTER [TAG]: @@CPU<TAG> lines (seconds, from the ticks)
# and, where both snapshots have the exact time, @@CPUEXACT<TAG> lines
cpu_delta() {
	awk -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" -v tag="${3:-}" '
	FNR == NR { b[$1 " " $2] = $3; bm[$1 " " $2] = $4; next }
	{
		k = $1 " " $2; name = $1; sub(/\.[0-9]+$/, "", name)
		s[name] += $3 - b[k]
		# a thread started during the run counts from 0, as for the ticks
		if ($4 == "-" || ((k in bm) && bm[k] == "-")) noexact[name] = 1
		else e[name] += $4 - ((k in bm) ? bm[k] : 0)
	}
	END {
		for (n in s) {
			printf "@@CPU%s %s %.2f\n", tag, n, s[n] / hz
			if (!(n in noexact)) printf "@@CPUEXACT%s %s %.4f\n", tag, n, e[n] / 1000
		}
	}' "$1" "$2"
}

VMSTAT_KEYS='^(pgpromote_|pgmigrate_|numa_|kmmscand_|pgdemote_|thp_migration_|pgscan_|pgsteal_|compact_|thp_fault_|thp_split_|pgfault|pgmajfault)'


node_free() {
	for n in /sys/devices/system/node/node[0-9]*; do
		printf '%s=%s ' "$(basename $n)_free_mb" \
			"$(awk '/MemFree/ {print int($4/1024)}' $n/meminfo)"
	done
}

settle() {
	sync
	echo 3 > /proc/sys/vm/drop_caches 2>/dev/null
	[ -w /proc/sys/vm/compact_memory ] && echo 1 > /proc/sys/vm/compact_memory 2>/dev/null
	sleep 1
}

workload_args() {	# workload_args NAME -> args for the workload binary
	common="--secs $DUR --seed $SEED --slow-node $SLOW_NODE --fast-node $FAST_NODE --sample-ms $SAMPLE_MS"
	case "$1" in
	hotcold|zipf|phase|flat|multi|thp|thp-scatter|scatter|topfull)
		echo "--mode $1 --size-mb $SIZE_MB $common" ;;
	topfull-hard) echo "--mode $1 --size-mb $SIZE_MB --hot-mb $HARD_HOT_MB $common" ;;
	vmas) echo "--mode hotcold --size-mb $SIZE_MB --split-kb 64 $common" ;;
	sparse) echo "--mode sparse --size-mb $SPARSE_MB $common" ;;
	scancost) echo "--mode sparse --size-mb $SCAN_MB --sparse-hot-mb 64 $common" ;;
	scale-dense-*g)
		g=${1#scale-dense-}; g=${g%g}
		is_count "$g" && echo "--mode hotcold --size-mb $((g * 1024)) --hot-mb $SCALE_HOT_MB $common" ;;
	scale-*p-*g)
		n=${1#scale-}; n=${n%%p-*}; g=${1#scale-*p-}; g=${g%g}
		is_count "$n" && is_count "$g" &&
			echo "--mode sparse --procs $n --size-mb $((g * 1024)) --sparse-hot-mb $SCALE_HOT_MB $common" ;;
	uniform|populate|thp-move) echo "--mode $1 --size-mb $SIZE_MB $common" ;;
	file-shared) echo "--mode $1 --size-mb $SIZE_MB --file $FILE_PATH $common" ;;
	file-shared-rw) echo "--mode $1 --size-mb $SIZE_MB --file $FILE_RW_PATH $common" ;;
	redis-get|redis-mix)
		echo "--mix ${1#redis-} --secs $DUR --keys $REDIS_KEYS --value-bytes $REDIS_VALUE" \
			"--hot-pct $REDIS_HOT_PCT --clients $REDIS_CLIENTS --loop-n $REDIS_LOOP_N" \
			"--slow-node $SLOW_NODE --fast-node $FAST_NODE" ;;
	*) echo "" ;;
	esac
}

workload_prog() {	# workload_prog NAME -> the program that runs it
	case "$1" in
	redis-*) echo "sh $RWL" ;;
	*) echo "$WL" ;;
	esac
}

is_count() {	# is_count V: V is a positive decimal number
	case "$1" in ''|*[!0-9]*|0*) return 1 ;; esac
}

workload_missing() {	# -> prints a reason when the workload cannot run here
	case "$1" in
	scale-dense-*g)
		# the dense mapping must fit in the slow node, with 256 MB to spare
		g=${1#scale-dense-}; g=${g%g}
		free=$(awk '/MemFree/ { print int($4 / 1024) }' \
			/sys/devices/system/node/node$SLOW_NODE/meminfo)
		[ "$free" -ge $((g * 1024 + 256)) ] ||
			echo "node $SLOW_NODE has $free MB free, $1 needs $((g * 1024 + 256)) (BENCH=scale boots it with NODE1_MB=5120)" ;;
	redis-*)
		if [ -z "$RWL" ]; then
			echo "redis-workload.sh not found next to $0"
			return
		fi
		for t in redis-server redis-cli redis-benchmark migratepages stdbuf timeout; do
			command -v "$t" >/dev/null 2>&1 && continue
			echo "$t not found (the VM needs the host's root, HOSTFS=1; Debian packages redis-server redis-tools numactl)"
			return
		done ;;
	esac
}

perf_top() {	# perf_top PID: stop perf record PID, print the top (comm, symbol)
	kill -INT "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	perf report -i $TMP/perf.data --stdio --no-children --sort comm,sym -g none \
		--percent-limit 0.5 2>/dev/null |
		awk '/^ *[0-9.]+%/ { print "@@PERF " $0; if (++n == 40) exit }'
	rm -f $TMP/perf.data
}

# WAKELAT=1: trace when kmmscand's threads become runnable (woken, or
# preempted while runnable) and when they next get a CPU.  The waits say
# whether the threads kept up or were kept from a CPU by the workload.
TR=/sys/kernel/tracing
wakelat_start() {
	wl_pids=$(promoters | awk '$1 ~ /^kmmscand/ { printf "%s ", $2 }')
	[ -n "$wl_pids" ] && [ -d $TR/events/sched/sched_switch ] || return 1
	fw='' fs=''
	for q in $wl_pids; do
		fw="$fw${fw:+ || }pid == $q"
		fs="$fs${fs:+ || }next_pid == $q || prev_pid == $q"
	done
	wr $TR/tracing_on 0
	wr $TR/buffer_size_kb 8192
	: > $TR/trace
	wr $TR/events/sched/sched_wakeup/filter "$fw"
	wr $TR/events/sched/sched_switch/filter "$fs"
	wr $TR/events/sched/sched_wakeup/enable 1
	wr $TR/events/sched/sched_switch/enable 1
	wr $TR/tracing_on 1
}

# wakelat_stop -> "@@WAKELAT comm waits=N wait_s=S p50_ms= p99_ms= max_ms=
# lost=L" per kmmscand thread: N waits for a CPU, S seconds in all; lost:
# events the ring buffer overwrote (then the figures are a lower bound)
wakelat_stop() {
	wr $TR/tracing_on 0
	wr $TR/events/sched/sched_wakeup/enable 0
	wr $TR/events/sched/sched_switch/enable 0
	lost=$(awk '/^# entries-in-buffer\/entries-written:/ {
		split($3, a, "/"); print a[2] - a[1]; exit }' $TR/trace)
	wakelat_summary $TR/trace "$wl_pids" "${lost:-0}" $TMP/waits
	: > $TR/trace
	wr $TR/events/sched/sched_wakeup/filter 0
	wr $TR/events/sched/sched_switch/filter 0
}

run_one() {	# run_one WORKLOAD POLICY REP
	w=$1; p=$2; r=${3:-1}
	args=$(workload_args $w)
	echo "@@RUN-BEGIN workload=$w policy=$p rep=$r args=$args"
	if [ -z "$args" ]; then
		echo "@@SKIP unknown workload $w"
		echo "@@RUN-END workload=$w policy=$p rep=$r rc=-1 wall=0"
		return
	fi
	why=$(workload_missing "$w")
	[ -n "$why" ] || why=$(policy_available $p)
	if [ -n "$why" ]; then
		echo "@@SKIP $why"
		echo "@@RUN-END workload=$w policy=$p rep=$r rc=-1 wall=0"
		return
	fi
	all_off
	settle
	case $w in
	topfull*) [ -f "$DEMOTE" ] && wr "$DEMOTE" 1 && echo "@@INFO demotion_enabled=1" ;;
	esac
	echo "@@INFO before $(node_free)"
	# The workload places and faults in its memory first (policy off), then
	# waits; the policy goes on and the counters start right before the run.
	rm -f $TMP/go $TMP/go.ready
	t0=$(date +%s)
	prog=$(workload_prog "$w")
	# shellcheck disable=SC2086
	if command -v timeout >/dev/null 2>&1; then
		timeout $((DUR * 3 + 600)) $prog $args --go-file $TMP/go &
	else
		$prog $args --go-file $TMP/go &
	fi
	wpid=$!
	while [ ! -e $TMP/go.ready ] && kill -0 $wpid 2>/dev/null; do
		sleep 0.1 2>/dev/null || sleep 1
	done
	vm0=$(vmstat_snap "$VMSTAT_KEYS")
	cpu_snapshot $TMP/cpu0
	up0=$(cut -d' ' -f1 /proc/uptime)
	dm0=$(dmesg 2>/dev/null | wc -l)
	[ $have_nb = 1 ] && echo "@@INFO numab $(numab_state)"
	policy_on $p
	echo "@@RATE $(policy_rate $p)"
	[ $have_kmm = 1 ] && echo "@@INFO kmmscand $(cd $KMM && for f in *; do printf '%s=%s ' $f "$(cat $f)"; done)"
	# The peak of kmmscand's history memory, sampled every 0.1 s under
	# every policy alike (the sampler's own cost is the same for all).
	hpid=
	rm -f $TMP/hist.stop $TMP/hist.peak
	if [ -r $KMM/history_bytes ]; then
		(
			peak=0
			while [ ! -e $TMP/hist.stop ]; do
				b=$(cat $KMM/history_bytes 2>/dev/null || echo 0)
				[ "$b" -gt "$peak" ] && peak=$b && echo $peak > $TMP/hist.peak
				sleep 0.1 2>/dev/null || sleep 1
			done
		) &
		hpid=$!
	fi
	# PERF=1: where the CPU went during the run (every CPU, kernel call
	# chains; the host's perf, so HOSTFS=1)
	ppid=
	if [ "$PERF" = 1 ] && command -v perf >/dev/null 2>&1; then
		perf record -q -e cpu-clock -F 499 -g -a -o $TMP/perf.data >/dev/null 2>&1 &
		ppid=$!
	fi
	wl_on=0
	[ "$WAKELAT" = 1 ] && wakelat_start && wl_on=1
	# The promoters' CPU over the last third of the run, once the hot
	# set has usually settled: what the policy costs while nothing
	# changes.
	rm -f $TMP/cpuL
	( sleep $((DUR * 2 / 3)) && cpu_snapshot $TMP/cpuL.new &&
	  mv $TMP/cpuL.new $TMP/cpuL ) &
	lpid=$!
	touch $TMP/go
	wait $wpid
	rc=$?
	kill $lpid 2>/dev/null
	wait $lpid 2>/dev/null
	t1=$(date +%s)
	[ $wl_on = 1 ] && wakelat_stop
	[ -n "$ppid" ] && perf_top $ppid
	if [ -n "$hpid" ]; then
		touch $TMP/hist.stop
		wait $hpid
		echo "@@VMSTAT kmmscand_history_peak_bytes $(cat $TMP/hist.peak 2>/dev/null || echo 0)"
	fi
	cpu_snapshot $TMP/cpu1	# before DAMON stops: kdamond exits with it
	case $p in damos*) damos_stats ;; esac
	vm1=$(vmstat_snap "$VMSTAT_KEYS")
	all_off
	vmstat_delta "$vm0" "$vm1" | tr ' ' '\n' |
		awk -F= 'NF == 2 && $2 != 0 { print "@@VMSTAT " $1 " " $2 }'
	cpu_delta $TMP/cpu0 $TMP/cpu1
	[ -s $TMP/cpuL ] && cpu_delta $TMP/cpuL $TMP/cpu1 LATE
	# The guest's CPUs stalled during the run: under TCG on a loaded host
	# an emulated string instruction (the kernel's page copy or clear) has
	# been seen to stall a vCPU for 20-50 s, in kmmscand's thread, in NUMA
	# balancing's tasks and in unrelated ones.  What such a run measured is
	# the host, not the policy: report.py keeps it out of the medians and
	# lists it.
	vm_stalls "$up0" "$dm0"
	echo "@@INFO after $(node_free)"
	echo "@@RUN-END workload=$w policy=$p rep=$r rc=$rc wall=$((t1 - t0))"
}

T_START=$(date +%s)
all_off
# "damos" is the old name of damos-naive
POLICIES=$(for p in $POLICIES; do [ "$p" = damos ] && p=damos-naive; echo $p; done)
POLICIES=$(echo $POLICIES)

oseed=$ORDER_SEED
for w in $WORKLOADS; do
	rr=1
	while [ $rr -le "$REPEAT" ]; do
		order=$POLICIES
		if [ "$SHUFFLE" = 1 ]; then
			# shellcheck disable=SC2086
			order=$(shuffled $POLICIES)
			oseed=$((oseed + 1))
		fi
		echo "@@ORDER workload=$w rep=$rr policies=$(echo $order | tr ' ' ',')"
		for p in $order; do
			run_one $w $p $rr
		done
		rr=$((rr + 1))
	done
done
if [ "$SCANCOST" = 1 ]; then
	for p in kmmscand kmm-nopmd; do
		run_one scancost $p
	done
fi
all_off
echo "@@ENV total_wall=$(( $(date +%s) - T_START ))"
echo "@@BENCH-END"
rm -rf "$TMP"
exit 0
