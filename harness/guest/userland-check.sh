#!/bin/bash
# userland-check.sh -- run in the two-tier VM on the host's userland
# (vm.sh VM_HOSTFS=1, by `make test`): the tools a user watches kmmscand
# with work against this kernel. Prints one line per check:
#   ok NAME | not ok NAME: why | skip NAME: why
# and the evidence above it. Needs the workload (workload/build.sh) in
# /opt/prog.
K=/sys/kernel/mm/kmmscand
EV=/sys/kernel/tracing/events/kmmscand
T=/tmp/ul
mkdir -p $T
ok() { echo "ok userland:$1"; }
nok() { echo "not ok userland:$1: $2"; }
skp() { echo "skip userland:$1: $2"; }
have() { command -v "$1" >/dev/null 2>&1; }
vm() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
# wr: the guest library's (a failed write is reported on stderr)
# shellcheck source=lib.sh
. /opt/prog/lib.sh

# fieldsum FILE EVENT FIELD: the sum of FIELD=N over the EVENT lines of FILE
fieldsum() {
	grep "$2" "$1" | sed -n "s/.* $3=\([0-9]*\).*/\1/p" | awk '{ s += $1 } END { print s + 0 }'
}
# unparsed FILE: the first line a tool could not decode, if any
unparsed() { grep -i -m 1 -e 'unknown' -e 'FAILED TO PARSE' "$1" | head -c 200; }

# Wait (up to 20 s) until the kmmscand counters stand still for 1 s, so a
# vmstat snapshot is not taken in the middle of a batch.
settle() {
	local prev="" cur n=0
	while [ $n -lt 40 ]; do
		cur=$(grep '^kmmscand_' /proc/vmstat | tr '\n' ' ')
		[ "$cur" = "$prev" ] && return 0
		prev=$cur
		sleep 0.5
		n=$((n + 1))
	done
	return 1
}

events=$(ls $EV | grep -v -e '^enable$' -e '^filter$' | sort)
echo "# kmmscand trace events: $(echo $events)"
wr "$K/scan_period_min_ms" 500

# --- numactl --hardware: two nodes and their distances
if have numactl; then
	numactl --hardware > $T/hw 2>&1
	sed 's/^/# /' $T/hw
	if grep -q '^available: 2 nodes (0-1)' $T/hw && grep -q '^node distances:' $T/hw &&
	   grep -q '^ *0: *10 ' $T/hw; then
		ok numactl-hardware
	else
		nok numactl-hardware "expected 2 nodes (0-1) and a distance table"
	fi
else
	skp numactl-hardware "numactl not installed on the host"
fi

# --- perf list: every kmmscand event
if have perf; then
	perf list 'kmmscand:*' > $T/list 2>&1
	sed 's/^/# /' $T/list
	missing=""
	for e in $events; do
		grep -q "kmmscand:$e" $T/list || missing="$missing $e"
	done
	if [ -z "$missing" ] && [ -n "$events" ]; then
		ok perf-list
	else
		nok perf-list "not listed:${missing:- (no events in tracefs)}"
	fi
else
	skp perf-list "perf not installed on the host"
fi

# --- perf record/script around a workload that promotes; the migrate-batch
# events must add up to kmmscand_promote_success over the same interval,
# and there must be one scan-end event per kmmscand_mm_scan.  kmmscand is
# off when the interval starts and ends, so nothing is missed.  The PTEs
# of the scan-end events are shown next to kmmscand_pte_scanned, not
# compared: the counter moves at every visit, the event reports a whole
# pass, and a pass that began before the recording or was cut short by
# the workload's exit is in one and not in the other.
workload() { # workload OUT: 64 MB on node 1, 8 MB hot, 10 s
	wr "$K/enabled" 1
	/opt/prog/workload --mode hotcold --size-mb 64 --hot-mb 8 --secs 10 \
		--sample-ms 1000 > "$1" 2>&1
	wr "$K/enabled" 0
	settle
}
if have perf; then
	wr "$K/enabled" 0; settle
	p0=$(vm kmmscand_promote_success) s0=$(vm kmmscand_pte_scanned)
	m0=$(vm kmmscand_mm_scan)
	perf record -q -e 'kmmscand:*' -a -o $T/perf.data -- \
		bash -c "$(declare -f wr wr_failed settle workload); K=$K; workload $T/demo1" > $T/rec 2>&1
	rrc=$?
	p1=$(vm kmmscand_promote_success) s1=$(vm kmmscand_pte_scanned)
	m1=$(vm kmmscand_mm_scan)
	perf script -i $T/perf.data > $T/script 2> $T/script.err
	src=$?
	echo "# perf record status $rrc, perf script status $src, $(wc -l < $T/script) events"
	grep -m 3 'kmmscand:kmmscand_scan_end' $T/script | sed 's/^/# /'
	grep -m 3 'kmmscand:kmmscand_migrate_batch' $T/script | sed 's/^/# /'
	nscan=$(grep -c 'kmmscand:kmmscand_scan_end' $T/script)
	nbatch=$(grep -c 'kmmscand:kmmscand_migrate_batch' $T/script)
	if [ $rrc -ne 0 ] || [ $src -ne 0 ]; then
		nok perf-record "perf record $rrc, perf script $src: $(head -c 300 $T/rec $T/script.err | tr '\n' ' ')"
	elif [ "$nscan" -gt 0 ] && [ "$nbatch" -gt 0 ]; then
		ok perf-record
	else
		nok perf-record "scan_end events $nscan, migrate_batch events $nbatch (both must be > 0)"
	fi
	# Every field parsed: no "unknown" or raw-format fallbacks in the output.
	bad=$(unparsed $T/script)
	if [ -n "$bad" ]; then
		nok perf-script-fields "$bad"
	elif grep 'kmmscand_migrate_batch' $T/script | grep -q -v 'nr=[0-9]* succeeded=[0-9]* failed=[0-9]* target_nid=[0-9-]* reason=kmmscand'; then
		nok perf-script-fields "a migrate_batch line without all of its fields"
	else
		ok perf-script-fields
	fi
	ev_prom=$(fieldsum $T/script kmmscand_migrate_batch succeeded)
	ev_scan=$(fieldsum $T/script kmmscand_scan_end scanned)
	echo "# promoted: events $ev_prom, vmstat $((p1 - p0)); passes: events $nscan, vmstat $((m1 - m0)); PTEs scanned: events $ev_scan, vmstat $((s1 - s0))"
	if [ $((p1 - p0)) -gt 0 ] && [ "$ev_prom" -eq $((p1 - p0)) ]; then
		ok perf-vs-vmstat
	else
		nok perf-vs-vmstat "migrate_batch succeeded sums to $ev_prom, kmmscand_promote_success moved by $((p1 - p0))"
	fi
	if [ $((m1 - m0)) -gt 0 ] && [ "$nscan" -eq $((m1 - m0)) ]; then
		ok perf-scan-vs-vmstat
	else
		nok perf-scan-vs-vmstat "$nscan scan_end events, kmmscand_mm_scan moved by $((m1 - m0))"
	fi
else
	skp perf-record "perf not installed on the host"
fi

# --- trace-cmd record/report, same check
if have trace-cmd; then
	wr "$K/enabled" 0; settle
	p0=$(vm kmmscand_promote_success) m0=$(vm kmmscand_mm_scan)
	(cd $T && trace-cmd record -q -e kmmscand -o $T/trace.dat \
		bash -c "$(declare -f wr wr_failed settle workload); K=$K; workload $T/demo2") > $T/tcrec 2>&1
	trc=$?
	p1=$(vm kmmscand_promote_success) m1=$(vm kmmscand_mm_scan)
	trace-cmd report -i $T/trace.dat > $T/report 2> $T/report.err
	rrc=$?
	grep -m 2 'kmmscand_scan_end' $T/report | sed 's/^/# /'
	grep -m 2 'kmmscand_migrate_batch' $T/report | sed 's/^/# /'
	ev_prom=$(fieldsum $T/report kmmscand_migrate_batch succeeded)
	nscan=$(grep -c 'kmmscand_scan_end' $T/report)
	echo "# trace-cmd record status $trc, report status $rrc; promoted: events $ev_prom, vmstat $((p1 - p0)); passes: events $nscan, vmstat $((m1 - m0))"
	if [ $trc -ne 0 ] || [ $rrc -ne 0 ]; then
		nok trace-cmd "record $trc, report $rrc: $(head -c 300 $T/tcrec $T/report.err | tr '\n' ' ')"
	elif [ -n "$(unparsed $T/report)" ]; then
		nok trace-cmd "$(unparsed $T/report)"
	elif [ $((p1 - p0)) -gt 0 ] && [ "$ev_prom" -eq $((p1 - p0)) ] &&
	     [ $((m1 - m0)) -gt 0 ] && [ "$nscan" -eq $((m1 - m0)) ]; then
		ok trace-cmd
	else
		nok trace-cmd "migrate_batch succeeded sums to $ev_prom, kmmscand_promote_success moved by $((p1 - p0)); $nscan scan_end events, kmmscand_mm_scan moved by $((m1 - m0))"
	fi
else
	skp trace-cmd "trace-cmd not installed on the host"
fi

# --- numastat -p: a promoted process's pages move to node 0. kmmscand
# stays off until the first sample, so the sample shows the placement.
if have numastat; then
	node0_mb() { numastat -p "$1" 2>/dev/null | awk '$1 == "Total" { print int($2) }'; }
	wr "$K/enabled" 0
	/opt/prog/workload --mode hotcold --size-mb 64 --hot-mb 16 --secs 60 \
		--sample-ms 1000 > $T/demo3 2>&1 &
	wl=$!
	# The memory is the worker's, a child of the workload: its SETUP
	# line is printed once the worker has faulted everything in.
	n=0
	while [ $n -lt 100 ] && ! grep -q '^SETUP' $T/demo3; do sleep 0.2; n=$((n + 1)); done
	pid=$(awk -v p=$wl '$4 == p { print $1; exit }' /proc/[0-9]*/stat 2>/dev/null)
	pid=${pid:-$wl}
	echo "# workload $wl, its worker $pid"
	numastat -p $pid > $T/ns0 2>&1
	first=$(node0_mb $pid)
	wr "$K/enabled" 1
	last=$first n=0
	while [ $n -lt 60 ] && kill -0 $pid 2>/dev/null &&
	      ! [ "${last:-0}" -ge $((${first:-0} + 12)) ]; do
		sleep 0.5
		n=$((n + 1))
		last=$(node0_mb $pid)
	done
	numastat -p $pid > $T/ns1 2>&1
	kill $wl 2>/dev/null; wait $wl 2>/dev/null
	echo "# numastat -p before kmmscand ran:"
	sed 's/^/# /' $T/ns0
	echo "# numastat -p $((n / 2)) s later:"
	sed 's/^/# /' $T/ns1
	if [ -n "$first" ] && [ -n "$last" ] && [ "$last" -ge $((first + 12)) ]; then
		ok numastat
	else
		nok numastat "node 0 total of the process went from ${first:-?} MB to ${last:-?} MB in $((n / 2)) s (expected +12 MB of its 16 MB hot set)"
	fi
else
	skp numastat "numastat not installed on the host"
fi
wr "$K/enabled" 1
exit 0
