#!/bin/busybox sh
# debug-checks.sh start|finish -- guest side of `make test-debug`.
#   start:  trace kmmscand_mm_enter/kmmscand_mm_exit (to find mms kmmscand never lets go)
#   finish: TAP checks: every traced mm that entered kmmscand also left it
#           (except live processes), kmemleak active and no unreferenced
#           object attributable to kmmscand (backtrace mentions kmmscand, or
#           an mm_struct from dup_mm/mm_alloc: kmmscand holds mm references).
T=/sys/kernel/tracing
K=/sys/kernel/debug/kmemleak
n=0
ok()   { n=$((n + 1)); echo "ok $n $*"; }
nok()  { n=$((n + 1)); echo "not ok $n $*"; rc=1; }
rc=0

case "$1" in
start)
	# Lockups must be reported, not panic (the host fails the run on them).
	echo 0 > /proc/sys/kernel/hung_task_panic 2>/dev/null
	echo 0 > /proc/sys/kernel/softlockup_panic 2>/dev/null
	if [ -d $T/events/kmmscand/kmmscand_mm_enter ]; then
		echo 0 > $T/tracing_on
		echo 16384 > $T/buffer_size_kb
		echo > $T/trace
		echo 1 > $T/events/kmmscand/kmmscand_mm_enter/enable
		echo 1 > $T/events/kmmscand/kmmscand_mm_exit/enable
		echo 1 > $T/tracing_on
	fi
	exit 0 ;;
finish) ;;
*) echo "usage: debug-checks.sh start|finish" >&2; exit 2 ;;
esac

# 1. mm registrations: enter/exit pairs per mm (an address may be reused
# after an exit, so count per id in event order).
if [ -d $T/events/kmmscand/kmmscand_mm_enter ]; then
	echo 0 > $T/tracing_on
	overrun=0
	for s in $T/per_cpu/cpu*/stats; do
		o=$(sed -n 's/^overrun: //p' "$s")
		overrun=$((overrun + ${o:-0}))
	done
	cat $T/trace > /tmp/mmtrace.txt
	set -- $(awk '
		/ kmmscand_mm_enter: / { for (i = 1; i <= NF; i++) if ($i ~ /^mm=/) id = $i; live[id]++; enter++ }
		/ kmmscand_mm_exit: /  { for (i = 1; i <= NF; i++) if ($i ~ /^mm=/) id = $i; live[id]--; exit_++ }
		END { left = 0; neg = 0
		      for (k in live) { if (live[k] > 0) left += live[k]; if (live[k] < 0) neg++ }
		      print enter + 0, exit_ + 0, left, neg }' /tmp/mmtrace.txt)
	enter=$1 exits=$2 left=$3 neg=$4
	# Processes alive now that have an mm (kernel threads have no VmSize):
	# each holds at most one registration that was never traced out.
	procs=$(grep -l '^VmSize:' /proc/[0-9]*/status 2>/dev/null | wc -l)
	echo "# kmmscand_mm_enter $enter, kmmscand_mm_exit $exits, still registered $left (of $procs user processes alive), exit without enter $neg, trace overrun $overrun"
	# Every unregistration is traced, by __kmmscand_exit() or, when the
	# scanner saw mm_users drop to 0 first, by the scanner.  Still
	# registered at the end: only the mms of live processes ("exit without
	# enter" are mms registered before tracing began).  A lost event would
	# hide a leak, so an overrun fails too.
	limit=$procs
	if [ "$overrun" -ne 0 ]; then
		nok "mm registrations balanced: trace buffer overran ($overrun events lost; raise buffer_size_kb)"
	elif [ "$enter" -lt 10 ]; then
		nok "mm registrations balanced: only $enter kmmscand_mm_enter events traced"
	elif [ "$left" -le "$limit" ]; then
		ok "mm registrations balanced ($enter entered, $exits traced exits, $left not traced out, limit $limit live user processes)"
	else
		nok "mm registrations balanced: $left of $enter mms never left kmmscand (limit $limit live user processes)"
	fi
else
	nok "mm registrations balanced: no kmmscand tracepoints in the debug kernel"
fi

# 2. The checkers are still on (a lockdep report or an internal limit
# switches lockdep off for the rest of the run).
if [ -r /proc/lockdep_stats ]; then
	dl=$(sed -n 's/^ *debug_locks: *//p' /proc/lockdep_stats)
	if [ "$dl" = 1 ]; then
		ok "lockdep still active (debug_locks 1)"
	else
		nok "lockdep still active: debug_locks ${dl:-?} (see the console log)"
	fi
else
	nok "lockdep still active: no /proc/lockdep_stats (PROVE_LOCKING off in the debug kernel?)"
fi

# 3. kmemleak.
if [ ! -e $K ]; then
	nok "kmemleak: no /sys/kernel/debug/kmemleak (DEBUG_KMEMLEAK off in the debug kernel?)"
	exit $rc
fi
if ! echo scan > $K 2>/dev/null; then
	nok "kmemleak active (scan refused: disabled at runtime? see the console log)"
	exit 1
fi
sleep 6		# objects younger than 5 s are never reported
echo scan > $K
cat $K > /tmp/kmemleak.txt
total=$(grep -c '^unreferenced object' /tmp/kmemleak.txt)
awk '
	function flush() {
		if (rec != "" && rec ~ /kmmscand|dup_mm|mm_alloc/) { bad++; print rec > "/tmp/kmemleak.bad" }
		rec = ""
	}
	/^unreferenced object/ { flush(); rec = $0; next }
	{ if (rec != "") rec = rec "\n" $0 }
	END { flush(); print bad + 0 > "/tmp/kmemleak.nbad" }' /tmp/kmemleak.txt
bad=$(cat /tmp/kmemleak.nbad)
ok "kmemleak active ($total unreferenced objects in all)"
if [ "$bad" -eq 0 ]; then
	ok "no kmemleak report attributable to kmmscand ($total others)"
else
	sed 's/^/# /' /tmp/kmemleak.bad | head -60
	nok "kmemleak: $bad unreferenced objects attributable to kmmscand"
fi
if [ "$total" -gt "$bad" ]; then
	echo "# unreferenced objects not attributed to kmmscand (first 3 backtrace heads):"
	awk '/^unreferenced object/ { c++; p = (c <= 3) } p' /tmp/kmemleak.txt | head -45 | sed 's/^/#   /'
fi
exit $rc
