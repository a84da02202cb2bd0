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
#   @@MM-NUMA pass id n0=P n1=P samples=N promoted=P@@ page-samples of
#                          the test's processes per node (numa_maps, twice a
#                          second); promoted: pages seen moving from node 1
#                          to node 0 between two samples of one process
#                          (the smaller of its N0 growth and N1 shrink)
#   @@MM-MIG pass id line=L reason=R thp_succeeded=N thp_failed=N thp_split=N succeeded=N failed=N@@
#                          migrate_pages() calls of any reason that touched a
#                          THP, summed per reason and per line of the test's
#                          output they followed (L: the last line printed
#                          before them, 0 before the first)
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
# wr_check, vmstat_snap, vmstat_delta: the guest library.  A knob that
# does not take its value ends the run.
. /opt/prog/lib.sh
wr_failed() { fatal "cannot write '$2' to $1: $3"; }
STATS_RE="^($(echo $STATS | tr ' ' '|'))\$"
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

# Node placement sampler: twice a second, the pages of every test process
# by node, from numa_maps (binaries' own file pages and hugetlb left out):
# one line "pass:id round pid n0 n1" per process and round.
sampler() {
	round=0
	while [ -e /tmp/mm.sampling ]; do
		cur=$(cat /tmp/mm.cur 2>/dev/null)
		if [ -n "$cur" ]; then
			round=$((round + 1))
			for p in $(test_pids); do echo "@pid $p"; cat /proc/$p/numa_maps 2>/dev/null; done |
				awk -v id="$cur" -v r=$round '
					function out() { if (pid != "" && seen) printf "%s %d %s %d %d\n", id, r, pid, n[0], n[1] }
					$1 == "@pid" { out(); pid = $2; n[0] = n[1] = 0; seen = 0; next }
					{ seen = 1 }
					/file=\/opt\// || / huge / { next }
					{ for (i = 1; i <= NF; i++) if ($i ~ /^N[0-9]+=/) { split(substr($i, 2), kv, "="); n[kv[1]] += kv[2] } }
					END { out() }' >> /tmp/mm.numa
		fi
		sleep 0.5
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
	wr_check $K/enabled 0
}
# Aggressive: every scan period 100 ms, one access makes a page hot, TLB
# flushed after clearing Accessed bits (so the next access sets it again),
# no rate limit. Order matters: each bound is checked against the other.
kmm_on() {
	wr_check $K/scan_period_min_ms 100
	wr_check $K/scan_period_max_ms 100
	wr_check $K/hot_threshold 1
	wr_check $K/hot_history 1
	wr_check $K/tlb_flush 1
	wr_check $K/promote_rate_limit_mbps 1048576
	wr_check $K/enabled 1
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
	# Only this test's migrations in the trace (not the top-up's).
	[ -f $SPLIT_TR/trace ] && : > $SPLIT_TR/trace
	before=$(vmstat_snap "$STATS_RE")
	echo "$pass:$id" > /tmp/mm.cur
	kmsg "BEGIN $pass $id"
	echo "@@MM-BEGIN $pass $id@@"
	start=$(date +%s)
	lpid=""
	if [ -n "$rc" ]; then
		echo "# SKIP: no la57 in /proc/cpuinfo (as va_high_addr_switch.sh)"
	else
		# The output goes through mark_lines, which numbers its lines in
		# the trace instance so that migrations can be placed between them.
		mark_lines < /tmp/mm.out &
		lpid=$!
		if [ $as_nobody = 1 ]; then
			timeout -s TERM -k 10 "$tmo" su -s /bin/sh nobody -c "exec $T/$bin $*" </dev/null >/tmp/mm.out 2>&1
			rc=$?
		else
			timeout -s TERM -k 10 "$tmo" "$T/$bin" "$@" </dev/null >/tmp/mm.out 2>&1
			rc=$?
		fi
	fi
	secs=$(( $(date +%s) - start ))
	: > /tmp/mm.cur
	to=0
	if [ "$secs" -ge "$tmo" ] && { [ "$rc" = 143 ] || [ "$rc" = 137 ]; }; then
		to=1
	fi
	# Leftovers may still hold the output pipe open: kill them first.
	kill_leftovers "$id"
	[ -n "$lpid" ] && wait "$lpid"
	echo
	echo "@@MM-END $pass $id rc=$rc secs=$secs timeout=$to@@"
	kmsg "END $pass $id rc=$rc"
	for r in $restore; do echo "${r#*=}" > "${r%%=*}"; done
	echo "@@MM-STAT $pass $id $(vmstat_delta "$before" "$(vmstat_snap "$STATS_RE")")$(split_by_reason "$pass" "$id")$BALLOON@@"
	cat /tmp/mm.mig 2>/dev/null
	awk -v key="$pass:$id" -v id="$id" -v pass="$pass" '$1 == key {
			n0 += $4; n1 += $5
			if (!($2 in round)) { round[$2] = 1; s++ }
			if ($3 in p0) { d0 = $4 - p0[$3]; d1 = p1[$3] - $5; if (d0 > 0 && d1 > 0) prom += (d0 < d1 ? d0 : d1) }
			p0[$3] = $4; p1[$3] = $5 }
		END { printf "@@MM-NUMA %s %s n0=%d n1=%d samples=%d promoted=%d@@\n", pass, id, n0, n1, s, prom }' /tmp/mm.numa
}

# Copy the test's output to stdout and write "mm-line N" for its N-th line
# to the trace instance's marker.
mark_lines() {
	m=""
	[ -w $SPLIT_TR/trace_marker ] && m=$SPLIT_TR/trace_marker
	awk -v m="$m" '{ print; fflush(); if (m != "") { printf "mm-line %d\n", NR > m; fflush(m) } }'
}

# thp_migration_split counts the splits of every migration; the
# migrate:mm_migrate_pages event says which migration asked. SPLIT_TR is
# a trace instance that keeps the calls that moved, failed to move or
# split anything (base pages or THPs), and the line markers of mark_lines.
SPLIT_TR=/sys/kernel/tracing/instances/mm_split
split_trace_on() {
	ev=events/migrate/mm_migrate_pages
	[ -d /sys/kernel/tracing/$ev ] || { info "no migrate:mm_migrate_pages event: splits not attributed"; return 0; }
	mkdir -p $SPLIT_TR 2>/dev/null
	echo 4096 > $SPLIT_TR/buffer_size_kb
	echo 'succeeded > 0 || failed > 0 || thp_split > 0 || thp_succeeded > 0 || thp_failed > 0' \
		> $SPLIT_TR/$ev/filter || fatal "cannot filter $ev"
	echo 1 > $SPLIT_TR/$ev/enable || fatal "cannot enable $ev"
}
# split_by_reason PASS ID: print " thp_split_kmmscand=N thp_split_demotion=N
# thp_split_other=N thp_kmmscand=N overrun=N" (thp_kmmscand: THPs that
# kmmscand's migrations moved, failed to move or split), write the
# @@MM-MIG lines of the test to /tmp/mm.mig, then clear the trace.
split_by_reason() {
	: > /tmp/mm.mig
	[ -f $SPLIT_TR/trace ] || return 0
	ovr=$(awk '/^overrun:/ { s += $2 } END { print s + 0 }' $SPLIT_TR/per_cpu/cpu*/stats 2>/dev/null)
	awk -v pass="$1" -v id="$2" -v ovr="${ovr:-0}" '
		/tracing_mark_write: mm-line / { line = $NF + 0; next }
		/mm_migrate_pages:/ { r = "other"; ok = fl = sp = bok = bfl = 0
			for (i = 1; i <= NF; i++) {
				split($i, kv, "=")
				if (kv[1] == "nr_thp_succeeded") ok = kv[2] + 0
				if (kv[1] == "nr_thp_failed") fl = kv[2] + 0
				if (kv[1] == "nr_thp_split") sp = kv[2] + 0
				if (kv[1] == "nr_succeeded") bok = kv[2] + 0
				if (kv[1] == "nr_failed") bfl = kv[2] + 0
				if (kv[1] == "reason") r = kv[2]
			}
			k = line " " r
			if (!(k in S)) { order[++no] = k; S[k] = F[k] = P[k] = BS[k] = BF[k] = 0 }
			S[k] += ok; F[k] += fl; P[k] += sp; BS[k] += bok; BF[k] += bfl
			w = (r == "kmmscand" || r == "demotion") ? r : "other"
			split_n[w] += sp
			if (r == "kmmscand") kmm += ok + fl + sp
		}
		END {
			for (j = 1; j <= no; j++) {
				split(order[j], a, " ")
				printf "@@MM-MIG %s %s line=%d reason=%s thp_succeeded=%d thp_failed=%d thp_split=%d succeeded=%d failed=%d@@\n",
					pass, id, a[1], a[2], S[order[j]], F[order[j]], P[order[j]],
					BS[order[j]], BF[order[j]] > "/tmp/mm.mig"
			}
			printf " thp_split_kmmscand=%d thp_split_demotion=%d thp_split_other=%d thp_kmmscand=%d overrun=%d",
				split_n["kmmscand"], split_n["demotion"], split_n["other"], kmm, ovr
		}' $SPLIT_TR/trace
	: > $SPLIT_TR/trace
}

# ---- setup, once ----
[ -d /sys/devices/system/node/node1 ] || fatal "no NUMA node 1"
[ -d $K ] || fatal "no $K (kernel without kmmscand?)"
kmm_off
wr_check /sys/kernel/mm/numa/demotion_enabled true
# Watermark gaps of 2% of a zone (20 MB of node 0) rather than 0.1%: the
# band between WMARK_HIGH and WMARK_PROMO that kswapd keeps free for
# promotion must hold a whole THP or batch, or kmmscand defers for ever.
wr_check /proc/sys/vm/watermark_scale_factor 200
# No watermark boosting: a fragmentation fallback on the nearly full node 0
# would boost its watermarks and wake kswapd, which would then demote (and
# so migrate) the tests' pages in the "off" pass too.
wr_check /proc/sys/vm/watermark_boost_factor 0
split_trace_on
mkfifo /tmp/balloon.cmd /tmp/balloon.ack /tmp/mm.out || fatal "mkfifo"
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
	pbefore=$(vmstat_snap "$STATS_RE")
	while read -r id tmo rest; do
		case "$id" in ''|'#'*) continue ;; esac
		# shellcheck disable=SC2086
		run_test "$pass" "$id" "$tmo" $rest
	done < /opt/prog/tests.list
	echo "@@MM-PASS-END $pass secs=$(( $(date +%s) - pstart )) $(vmstat_delta "$pbefore" "$(vmstat_snap "$STATS_RE")")@@"
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
