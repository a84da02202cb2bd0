#!/bin/sh
# bench/run-in-vm.sh - guest side of `make bench` (busybox sh, runs as root).
#
# In one boot, runs every workload under every promotion policy, each time as
# a fresh workload process with the promotion state reset in between, and
# prints everything between markers on stdout:
#   @@BENCH-BEGIN / @@BENCH-END
#   @@ENV key=value                      once, environment facts
#   @@RUN-BEGIN workload=W policy=P args=...
#     <workload output: CFG/SETUP/T/PHASE/W/RESULT lines>
#     @@VMSTAT <counter> <delta>          /proc/vmstat deltas (nonzero, selected)
#     @@CPU <thread> <seconds>            promoter kthread utime+stime deltas
#     @@DAMOS <stat> <value>              DAMOS scheme stats (damos policy)
#     @@SKIP <reason>                     policy not available on this kernel
#   @@RUN-END workload=W policy=P rc=N wall=S
#
# Arguments are key=value words:
#   MODE=quick|full  DUR=<s per run>  SIZE_MB=<region>  SPARSE_MB=<map size>
#   SCAN_MB=<scan-cost map size>  WORKLOADS="<names>"  POLICIES="<names>"
#   SCANCOST=0|1  SEED=<n>
# Workloads: hotcold zipf phase flat multi thp thp-scatter scatter topfull sparse
# Policies:  none kmmscand numab2 damos kmm-nopmd kmm-tlb
# Scan-cost microbench (SCANCOST=1): workload "scancost" (sparse, SCAN_MB map,
# 64 MB hot set) under kmmscand (pmd_skip=1) and kmm-nopmd (pmd_skip=0).

MODE=quick
for a in "$@"; do
	case "$a" in
	MODE=*) MODE=${a#MODE=} ;;
	esac
done
if [ "$MODE" = full ]; then
	DUR=60; SIZE_MB=512; SPARSE_MB=4096; SCAN_MB=8192; SCANCOST=1
	WORKLOADS="hotcold zipf phase flat multi thp thp-scatter scatter topfull sparse"
	POLICIES="none kmmscand numab2 damos kmm-nopmd kmm-tlb"
else
	DUR=10; SIZE_MB=256; SPARSE_MB=4096; SCAN_MB=4096; SCANCOST=1
	WORKLOADS="hotcold zipf phase flat multi thp thp-scatter topfull"
	POLICIES="none kmmscand kmm-tlb numab2 damos"
fi
SEED=42
for a in "$@"; do
	case "$a" in
	*=*) eval "${a%%=*}=\"\${a#*=}\"" ;;
	*) echo "run-in-vm.sh: ignoring argument '$a'" >&2 ;;
	esac
done

HERE=$(cd "$(dirname "$0")" 2>/dev/null && pwd)
WL=""
for c in "$HERE/workload" /opt/prog/workload ./workload; do
	[ -x "$c" ] && { WL=$c; break; }
done
KMM=/sys/kernel/mm/kmmscand
DAMON=/sys/kernel/mm/damon/admin/kdamonds
NB=/proc/sys/kernel/numa_balancing
DEMOTE=/sys/kernel/mm/numa/demotion_enabled
HOTTH=/sys/kernel/debug/sched/numa_balancing/hot_threshold_ms
TMP=/tmp/bench.$$
mkdir -p "$TMP"

wr() {	# wr VALUE FILE: write, complain on failure (not fatal)
	if ! echo "$1" > "$2" 2>/dev/null; then
		echo "@@WARN write '$1' > $2 failed"
		return 1
	fi
	return 0
}

# ---------------------------------------------------------------- environment
have_kmm=0; [ -f "$KMM/enabled" ] && have_kmm=1
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
N1_RANGE=$(node_range 1)
N1_START=${N1_RANGE% *}
N1_END=${N1_RANGE#* }

lat() {	# lat NID -> read latency (ns) from HMAT-backed sysfs, or empty
	cat /sys/devices/system/node/node$1/access0/initiators/read_latency 2>/dev/null
}

echo "@@BENCH-BEGIN"
echo "@@ENV mode=$MODE dur=$DUR size_mb=$SIZE_MB sparse_mb=$SPARSE_MB scan_mb=$SCAN_MB seed=$SEED"
echo "@@ENV workloads=$(echo $WORKLOADS | tr ' ' ',') policies=$(echo $POLICIES | tr ' ' ',') scancost=$SCANCOST"
echo "@@ENV kernel=$(uname -r) ncpu=$(grep -c ^processor /proc/cpuinfo)"
echo "@@ENV kmmscand_present=$have_kmm numa_balancing_present=$have_nb damon_sysfs_present=$have_damon"
echo "@@ENV node1_paddr=${N1_START:-?}-${N1_END:-?}"
echo "@@ENV lat0_ns=$(lat 0) lat1_ns=$(lat 1)"
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
KMM_DEFAULTS="enabled=1 scan_period_min_ms=500 scan_period_max_ms=5000 scan_size=65536
hot_history=2 hot_threshold=2 pmd_skip=1 tlb_flush=0 migrate_batch=512
promote_rate_limit_mbps=256 target_node=-1"

kmm_set() {	# kmm_set key=value...
	for kv in "$@"; do
		[ -f "$KMM/${kv%%=*}" ] && wr "${kv#*=}" "$KMM/${kv%%=*}"
	done
}

kmm_defaults() {
	[ $have_kmm = 1 ] || return 0
	# scan_period_max before min so that the range check passes either way
	kmm_set enabled=0 scan_period_max_ms=5000 scan_period_min_ms=500 hot_history=2 \
		hot_threshold=2 scan_size=65536 pmd_skip=1 tlb_flush=0 migrate_batch=512 \
		promote_rate_limit_mbps=256 target_node=-1
}

damon_off() {
	[ $have_damon = 1 ] || return 0
	if [ -f "$DAMON/0/state" ] && [ "$(cat $DAMON/0/state)" = on ]; then
		wr off "$DAMON/0/state"
	fi
	wr 0 "$DAMON/nr_kdamonds" >/dev/null
}

# DAMOS migrate_hot, node 1 -> node 0, physical address space of node 1.
#   sampling 5 ms, aggregation 100 ms, regions update 1 s, 10..1000 regions,
#   access pattern: any size, nr_accesses >= 1 of 20 samples per aggregation,
#   any age; quota 256 MB per 1000 ms (same as kmmscand's default promotion
#   rate limit), no time quota, no watermarks.
damon_on() {
	[ -n "$N1_START" ] || { echo "@@WARN node 1 physical range unknown"; return 1; }
	wr 1 "$DAMON/nr_kdamonds" || return 1
	c=$DAMON/0/contexts
	wr 1 $c/nr_contexts || return 1
	c=$c/0
	wr paddr $c/operations || return 1
	wr 5000 $c/monitoring_attrs/intervals/sample_us
	wr 100000 $c/monitoring_attrs/intervals/aggr_us
	wr 1000000 $c/monitoring_attrs/intervals/update_us
	wr 1000 $c/monitoring_attrs/nr_regions/max
	wr 10 $c/monitoring_attrs/nr_regions/min
	wr 1 $c/targets/nr_targets
	wr 1 $c/targets/0/regions/nr_regions
	wr "$N1_START" $c/targets/0/regions/0/start
	wr "$N1_END" $c/targets/0/regions/0/end
	wr 1 $c/schemes/nr_schemes
	s=$c/schemes/0
	wr migrate_hot $s/action || return 1
	wr 0 $s/target_nid || return 1
	# the sysfs defaults of every min AND max are 0: set both
	wr 4096 $s/access_pattern/sz/min
	wr $((N1_END - N1_START)) $s/access_pattern/sz/max
	wr 1 $s/access_pattern/nr_accesses/min
	wr 1000 $s/access_pattern/nr_accesses/max
	wr 0 $s/access_pattern/age/min
	wr 4294967295 $s/access_pattern/age/max
	wr 0 $s/quotas/ms
	wr 268435456 $s/quotas/bytes
	wr 1000 $s/quotas/reset_interval_ms
	wr none $s/watermarks/metric
	wr on $DAMON/0/state || return 1
	echo "@@INFO damon state=$(cat $DAMON/0/state) pid=$(cat $DAMON/0/pid) range=$N1_START-$N1_END"
	return 0
}

damos_stats() {
	s=$DAMON/0/contexts/0/schemes/0/stats
	[ -d "$s" ] || return 0
	wr update_schemes_stats "$DAMON/0/state" >/dev/null
	for f in nr_tried sz_tried nr_applied sz_applied qt_exceeds; do
		[ -f $s/$f ] && echo "@@DAMOS $f $(cat $s/$f)"
	done
}

all_off() {
	kmm_defaults
	[ $have_nb = 1 ] && wr 0 $NB
	[ -f "$HOTTH" ] && wr 1000 "$HOTTH" >/dev/null
	damon_off
	[ -f "$DEMOTE" ] && wr 0 "$DEMOTE" >/dev/null
}

policy_available() {	# -> prints a reason when not
	case "$1" in
	none) ;;
	kmmscand|kmm-nopmd|kmm-tlb) [ $have_kmm = 1 ] || echo "kmmscand not present" ;;
	numab2) [ $have_nb = 1 ] || echo "NUMA balancing not present" ;;
	damos)
		if [ $have_damon = 0 ]; then echo "DAMON sysfs not present"
		elif [ -z "$N1_START" ]; then echo "node 1 physical range unknown"
		fi ;;
	*) echo "unknown policy $1" ;;
	esac
}

policy_on() {
	case "$1" in
	none) ;;
	kmmscand) kmm_set enabled=1 ;;
	kmm-nopmd) kmm_set pmd_skip=0 enabled=1 ;;
	kmm-tlb) kmm_set tlb_flush=1 enabled=1 ;;
	numab2) wr 2 $NB ;;
	damos) damon_on || echo "@@WARN damon_on failed" ;;
	esac
}

# ---------------------------------------------------------------- measuring
# promoter threads: "comm pid" for kmmscand* and kdamond*
promoters() {
	for d in /proc/[0-9]*; do
		read -r comm < $d/comm 2>/dev/null || continue
		case "$comm" in
		kmmscand*|kdamond*) echo "$comm ${d#/proc/}" ;;
		esac
	done
}

cpu_snapshot() {	# cpu_snapshot FILE: "comm pid ticks"
	promoters | while read -r comm pid; do
		# fields after the ")" : state(3) ... utime(14) stime(15)
		t=$(sed 's/^.*) //' /proc/$pid/stat 2>/dev/null | awk '{print $12 + $13}')
		[ -n "$t" ] && echo "$comm $pid $t"
	done > "$1"
}

cpu_delta() {	# cpu_delta BEFORE AFTER -> @@CPU lines (seconds, USER_HZ=100)
	awk -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" '
	FNR == NR { b[$1 " " $2] = $3; next }
	{ d = $3 - b[$1 " " $2]; name = $1; sub(/\.[0-9]+$/, "", name); s[name] += d }
	END { for (n in s) printf "@@CPU %s %.2f\n", n, s[n] / hz }' "$1" "$2"
}

VMSTAT_KEYS='^(pgpromote_|pgmigrate_|numa_|kmmscand_|pgdemote_|thp_migration_|pgscan_|pgsteal_|compact_|thp_fault_|thp_split_|pgfault|pgmajfault)'
vmstat_delta() {
	awk -v keys="$VMSTAT_KEYS" '
	FNR == NR { b[$1] = $2; next }
	$1 ~ keys { d = $2 - b[$1]; if (d != 0) printf "@@VMSTAT %s %d\n", $1, d }' "$1" "$2"
}

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
	common="--secs $DUR --seed $SEED"
	case "$1" in
	hotcold|zipf|phase|flat|multi|thp|thp-scatter|scatter|topfull)
		echo "--mode $1 --size-mb $SIZE_MB $common" ;;
	sparse) echo "--mode sparse --size-mb $SPARSE_MB $common" ;;
	scancost) echo "--mode sparse --size-mb $SCAN_MB --sparse-hot-mb 64 $common" ;;
	*) echo "" ;;
	esac
}

run_one() {	# run_one WORKLOAD POLICY
	w=$1; p=$2
	args=$(workload_args $w)
	echo "@@RUN-BEGIN workload=$w policy=$p args=$args"
	if [ -z "$args" ]; then
		echo "@@SKIP unknown workload $w"
		echo "@@RUN-END workload=$w policy=$p rc=-1 wall=0"
		return
	fi
	why=$(policy_available $p)
	if [ -n "$why" ]; then
		echo "@@SKIP $why"
		echo "@@RUN-END workload=$w policy=$p rc=-1 wall=0"
		return
	fi
	all_off
	settle
	[ $w = topfull ] && [ -f "$DEMOTE" ] && wr 1 "$DEMOTE" && echo "@@INFO demotion_enabled=1"
	echo "@@INFO before $(node_free)"
	# The workload places and faults in its memory first (policy off), then
	# waits; the policy goes on and the counters start right before the run.
	rm -f $TMP/go $TMP/go.ready
	t0=$(date +%s)
	# shellcheck disable=SC2086
	if command -v timeout >/dev/null 2>&1; then
		timeout $((DUR * 3 + 600)) "$WL" $args --go-file $TMP/go &
	else
		"$WL" $args --go-file $TMP/go &
	fi
	wpid=$!
	while [ ! -e $TMP/go.ready ] && kill -0 $wpid 2>/dev/null; do
		sleep 0.1 2>/dev/null || sleep 1
	done
	cat /proc/vmstat > $TMP/vm0
	cpu_snapshot $TMP/cpu0
	policy_on $p
	[ $have_kmm = 1 ] && echo "@@INFO kmmscand $(cd $KMM && for f in *; do printf '%s=%s ' $f "$(cat $f)"; done)"
	touch $TMP/go
	wait $wpid
	rc=$?
	t1=$(date +%s)
	cpu_snapshot $TMP/cpu1	# before DAMON stops: kdamond exits with it
	[ $p = damos ] && damos_stats
	cat /proc/vmstat > $TMP/vm1
	all_off
	vmstat_delta $TMP/vm0 $TMP/vm1
	cpu_delta $TMP/cpu0 $TMP/cpu1
	echo "@@INFO after $(node_free)"
	echo "@@RUN-END workload=$w policy=$p rc=$rc wall=$((t1 - t0))"
}

T_START=$(date +%s)
all_off
for w in $WORKLOADS; do
	for p in $POLICIES; do
		run_one $w $p
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
