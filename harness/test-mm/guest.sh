#!/bin/sh
# guest.sh -- the job of the `make test-mm` VM (busybox sh, run by
# harness/guest/init). Runs the upstream mm selftests listed in
# /opt/prog/tests.list ("ID TIMEOUT [PATH=VALUE...] [+la57] [@nobody] BINARY
# [ARG...]", already filtered by MM_SET on the host) once per pass of
# $MM_PASSES (from /opt/prog/mm.conf):
#   off  kmmscand disabled
#   on   kmmscand enabled and aggressive (see kmm_on below)
# Both passes run with the same memory layout: 128 huge pages reserved,
# demotion enabled, and mm_balloon holding node 0's free memory at its low
# watermark before every test, so that the tests' allocations under the
# default memory policy land on node 1 (the slow tier), the same starting
# point for both passes (reset_layout); in the "on" pass
# kmmscand promotes them back, kswapd demoting to make room.
#
# Output (stdout), parsed by harness/test-mm/compare.py:
#   @@MM-PASS-BEGIN pass@@ ... @@MM-PASS-END pass key=delta ...@@
#   @@MM-BEGIN pass id@@ <test output> @@MM-END pass id rc=N secs=S timeout=0|1@@
#   @@MM-STAT pass id key=delta ...@@      /proc/vmstat deltas over the test
#   @@MM-NUMA pass id n0=P n1=P samples=N@@ page-samples of the test's
#                                           processes per node (numa_maps, 1/s)
#   @@MM-REPRO-BEGIN name@@ ... @@MM-REPRO-END name rc=N@@  the reproducers
#                          (/opt/repro), after both passes, kmmscand off
#   @@MM-INFO text@@ / @@MM-FATAL text@@
# Markers also go to /dev/kmsg so kernel log lines can be attributed.
. /opt/prog/mm.conf
T=/opt/tests
K=/sys/kernel/mm/kmmscand
STATS="kmmscand_promote_success kmmscand_candidate kmmscand_fail_migrate kmmscand_fail_isolate kmmscand_defer_watermark kmmscand_defer_demotion pgdemote_kswapd pgdemote_direct pgmigrate_success pgmigrate_fail thp_migration_success thp_migration_split"

info() { echo "@@MM-INFO $*@@"; }
fatal() { echo "@@MM-FATAL $*@@"; echo "mm-test: FATAL $*" > /dev/kmsg; exit 1; }
kmsg() { echo "mm-test: $*" > /dev/kmsg; }
wr() { # wr FILE VALUE: write and check
	echo "$2" > "$1" 2>/dev/null || fatal "cannot write '$2' to $1"
	[ "$(cat "$1")" = "$2" ] || fatal "$1 reads '$(cat "$1")' after writing '$2'"
}
vmstat_snap() { # the STATS counters on one line, "k=v k=v ..."
	awk -v want=" $STATS " 'index(want, " " $1 " ") { printf "%s=%s ", $1, $2 }' /proc/vmstat
}
vmstat_delta() { # vmstat_delta "BEFORE" "AFTER"
	echo "$1 | $2" | awk '{ for (i = 1; i <= NF; i++) { if ($i == "|") { a = 1; continue }
		split($i, kv, "="); if (a) { printf "%s=%d ", kv[1], kv[2] - b[kv[1]] } else b[kv[1]] = kv[2] } }'
}
# PIDs of processes running a test binary (test children included).
test_pids() {
	ls -l /proc/[0-9]*/exe 2>/dev/null | awk '$NF ~ /^\/opt\/tests\// { split($(NF-2), p, "/"); print p[3] }'
}
kill_leftovers() { # kill what a test left behind; wait for it, with a deadline
	pids=$(test_pids)
	[ -z "$pids" ] && return 0
	info "killing leftover processes of $1: $pids"
	kill -9 $pids 2>/dev/null
	n=0
	while [ -n "$(test_pids)" ]; do
		n=$((n + 1))
		[ $n -gt 300 ] && fatal "processes of $1 survive SIGKILL: $(test_pids)"
		sleep 0.1
	done
}

# Node placement sampler: once a second, the pages of every test process by
# node, from numa_maps (binaries' own file pages and hugetlb left out).
sampler() {
	while [ -e /tmp/mm.sampling ]; do
		cur=$(cat /tmp/mm.cur 2>/dev/null)
		if [ -n "$cur" ]; then
			for p in $(test_pids); do cat /proc/$p/numa_maps 2>/dev/null; done |
				awk -v id="$cur" '/file=\/opt\// || / huge / { next }
					{ for (i = 1; i <= NF; i++) if ($i ~ /^N[0-9]+=/) { split(substr($i, 2), kv, "="); n[kv[1]] += kv[2] } }
					END { printf "%s %d %d\n", id, n[0], n[1] }' >> /tmp/mm.numa
		fi
		sleep 1
	done
}

# kswapd of node 0 still demoting (woken by the previous test's
# promotions) would undo a top-up at once and hand the next test's first
# allocations node 0: wait until its counters stand still for 0.4 s.
kswapd_idle() {
	n=0 prev=""
	while :; do
		cur=$(awk '/^(pgscan|pgsteal|pgdemote)_kswapd / { s = s $2 " " } END { print s }' /proc/vmstat)
		[ "$cur" = "$prev" ] && return 0
		prev=$cur
		n=$((n + 1))
		if [ $n -gt 150 ]; then
			info "kswapd still busy after 30s; topping up anyway"
			return 0
		fi
		sleep 0.2
	done
}

balloon_topup() {
	kswapd_idle
	echo topup > /tmp/balloon.cmd
	read -t 120 reply <&8 || fatal "mm_balloon did not answer a top-up within 120s"
	case "$reply" in ok*) ;; *) fatal "mm_balloon: $reply" ;; esac
	BALLOON="$reply"
}

kmm_off() {
	wr $K/enabled 0
}
# Aggressive: every scan period 100 ms, one access makes a page hot, TLB
# flushed after clearing Accessed bits (so the next access sets it again),
# no rate limit. Order matters: each bound is checked against the other.
kmm_on() {
	wr $K/scan_period_min_ms 100
	wr $K/scan_period_max_ms 100
	wr $K/hot_threshold 1
	wr $K/hot_history 1
	wr $K/tlb_flush 1
	wr $K/promote_rate_limit_mbps 1048576
	wr $K/enabled 1
}

run_test() { # run_test PASS ID TIMEOUT TOKENS...
	pass=$1 id=$2 tmo=$3
	shift 3
	restore=""
	as_nobody=0
	rc=""
	while [ $# -gt 0 ]; do
		case "$1" in
		/proc/*=*|/sys/*=*)
			f=${1%%=*} v=${1#*=}
			restore="$restore $f=$(cat "$f")"
			echo "$v" > "$f" || fatal "$id: cannot write $v to $f"
			shift ;;
		+la57)
			grep -qw la57 /proc/cpuinfo || rc=4
			shift ;;
		@nobody)
			as_nobody=1
			shift ;;
		*) break ;;
		esac
	done
	[ $# -ge 1 ] || fatal "$id: no command"
	bin=$1
	shift
	[ -x "$T/$bin" ] || fatal "$id: $T/$bin is missing"
	balloon_topup
	before=$(vmstat_snap)
	echo "$pass:$id" > /tmp/mm.cur
	kmsg "BEGIN $pass $id"
	echo "@@MM-BEGIN $pass $id@@"
	start=$(date +%s)
	if [ -n "$rc" ]; then
		echo "# SKIP: no la57 in /proc/cpuinfo (as va_high_addr_switch.sh)"
	elif [ $as_nobody = 1 ]; then
		timeout -s TERM -k 10 "$tmo" su -s /bin/sh nobody -c "exec $T/$bin $*" </dev/null 2>&1
		rc=$?
	else
		timeout -s TERM -k 10 "$tmo" "$T/$bin" "$@" </dev/null 2>&1
		rc=$?
	fi
	secs=$(( $(date +%s) - start ))
	: > /tmp/mm.cur
	to=0
	if [ "$secs" -ge "$tmo" ] && { [ "$rc" = 143 ] || [ "$rc" = 137 ]; }; then
		to=1
	fi
	echo
	echo "@@MM-END $pass $id rc=$rc secs=$secs timeout=$to@@"
	kmsg "END $pass $id rc=$rc"
	kill_leftovers "$id"
	for r in $restore; do echo "${r#*=}" > "${r%%=*}"; done
	echo "@@MM-STAT $pass $id $(vmstat_delta "$before" "$(vmstat_snap)")$(split_by_reason)$BALLOON@@"
	awk -v key="$pass:$id" -v id="$id" '$1 == key { n0 += $2; n1 += $3; s++ } END { printf "@@MM-NUMA '"$pass"' %s n0=%d n1=%d samples=%d@@\n", id, n0, n1, s }' /tmp/mm.numa
}

# thp_migration_split counts the splits of every migration; the
# migrate:mm_migrate_pages event says which migration asked. SPLIT_TR is
# a trace instance that keeps only the calls that split a THP.
SPLIT_TR=/sys/kernel/tracing/instances/mm_split
split_trace_on() {
	ev=events/migrate/mm_migrate_pages
	[ -d /sys/kernel/tracing/$ev ] || { info "no migrate:mm_migrate_pages event: splits not attributed"; return 0; }
	mkdir -p $SPLIT_TR 2>/dev/null
	echo 4096 > $SPLIT_TR/buffer_size_kb
	echo 'thp_split > 0' > $SPLIT_TR/$ev/filter || fatal "cannot filter $ev"
	echo 1 > $SPLIT_TR/$ev/enable || fatal "cannot enable $ev"
}
split_by_reason() { # " thp_split_kmmscand=N thp_split_demotion=N thp_split_other=N", then clear
	[ -f $SPLIT_TR/trace ] || return 0
	awk '/mm_migrate_pages:/ { n = 0; r = "other"
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^nr_thp_split=/) { sub(/^nr_thp_split=/, "", $i); n = $i + 0 }
			if ($i == "reason=kmmscand") r = "kmmscand"
			if ($i == "reason=demotion") r = "demotion"
		}
		s[r] += n }
		END { printf " thp_split_kmmscand=%d thp_split_demotion=%d thp_split_other=%d", s["kmmscand"], s["demotion"], s["other"] }' $SPLIT_TR/trace
	: > $SPLIT_TR/trace
}

# ---- setup, once ----
[ -d /sys/devices/system/node/node1 ] || fatal "no NUMA node 1"
[ -d $K ] || fatal "no $K (kernel without kmmscand?)"
kmm_off
wr /sys/kernel/mm/numa/demotion_enabled true
# Watermark gaps of 2% of a zone (20 MB of node 0) rather than 0.1%: the
# band between WMARK_HIGH and WMARK_PROMO that kswapd keeps free for
# promotion must hold a whole THP or batch, or kmmscand defers for ever.
wr /proc/sys/vm/watermark_scale_factor 200
# No watermark boosting: a fragmentation fallback on the nearly full node 0
# would boost its watermarks and wake kswapd, which would then demote (and
# so migrate) the tests' pages in the "off" pass too.
wr /proc/sys/vm/watermark_boost_factor 0
split_trace_on
mkfifo /tmp/balloon.cmd /tmp/balloon.ack || fatal "mkfifo"
exec 8<>/tmp/balloon.ack
/opt/prog/mm_balloon -n 0 /tmp/balloon.cmd /tmp/balloon.ack &
BALLOON_PID=$!

# The same starting point for every pass: tests change the huge page pool
# (compaction_test empties and refills it; with node 0 held by the balloon
# the refill comes up short), so the balloon lets go, the pool is refilled
# to run_vmtests.sh's 256 MB (spread over both nodes) and the balloon
# fills node 0 again.
reset_layout() {
	echo release > /tmp/balloon.cmd
	read -t 120 reply <&8 || fatal "mm_balloon did not answer a release within 120s"
	[ "$reply" = "ok released" ] || fatal "mm_balloon: $reply"
	echo 3 > /proc/sys/vm/drop_caches
	echo 1 > /proc/sys/vm/compact_memory
	echo 0 > /proc/sys/vm/nr_hugepages
	echo 128 > /proc/sys/vm/nr_hugepages || fatal "cannot write nr_hugepages"
	hp=$(awk '/^HugePages_Total/ { print $2 }' /proc/meminfo)
	[ "$hp" -eq 128 ] || fatal "only $hp of 128 huge pages could be reserved"
	balloon_topup
	info "$1: huge pages $hp, balloon on node 0: $BALLOON"
}
: > /tmp/mm.numa
: > /tmp/mm.cur
touch /tmp/mm.sampling
sampler &
info "cpus=$(nproc) la57=$(grep -qw la57 /proc/cpuinfo && echo yes || echo no) thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled)"

for pass in $MM_PASSES; do
	kmm_off
	reset_layout "$pass"
	case $pass in
	off) kmm_off ;;
	on) kmm_on ;;
	*) fatal "unknown pass $pass" ;;
	esac
	kmsg "PASS $pass"
	echo "@@MM-PASS-BEGIN $pass@@"
	pstart=$(date +%s)
	pbefore=$(vmstat_snap)
	while read -r id tmo rest; do
		case "$id" in ''|'#'*) continue ;; esac
		# shellcheck disable=SC2086
		run_test "$pass" "$id" "$tmo" $rest
	done < /opt/prog/tests.list
	echo "@@MM-PASS-END $pass secs=$(( $(date +%s) - pstart )) $(vmstat_delta "$pbefore" "$(vmstat_snap)")@@"
	for n in 0 1; do
		info "$pass: node$n $(awk '/MemFree|Active\(anon\)|Inactive\(anon\)/ { printf "%s%s ", $3, $4 }' /sys/devices/system/node/node$n/meminfo)"
	done
done
rm -f /tmp/mm.sampling
echo quit > /tmp/balloon.cmd
# The reproducers of harness/test-mm/repro/: the causes of the expected
# differences, shown without kmmscand (disabled) by plain move_pages(2).
kmm_off
for r in /opt/repro/*; do
	[ -x "$r" ] || continue
	n=${r##*/}
	kmsg "BEGIN repro $n"
	echo "@@MM-REPRO-BEGIN $n@@"
	timeout -s KILL 120 "$r" </dev/null 2>&1
	rc=$?
	echo
	echo "@@MM-REPRO-END $n rc=$rc@@"
	kmsg "END repro $n rc=$rc"
done
exit 0
