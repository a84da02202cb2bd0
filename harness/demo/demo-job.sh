# Guest side of `make demo` (busybox sh).
echo "== topology =="
for n in /sys/devices/system/node/node[0-9]*; do
	echo "$(basename "$n"): cpus=[$(cat "$n/cpulist")] $(grep MemTotal "$n/meminfo" | awk '{print $4, $5}')"
done
for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	[ -d "$t" ] && echo "$(basename "$t"): nodes $(cat "$t/nodelist")"
done
dmesg | grep -i 'demotion targets' | sed 's/^\[[^]]*\] //'
echo "== kmmscand =="
if [ -d /sys/kernel/mm/kmmscand ]; then
	for f in /sys/kernel/mm/kmmscand/*; do echo "$(basename "$f") = $(cat "$f")"; done
	ps -o pid,comm | grep kmmscand
else
	echo "this kernel has no kmmscand"
fi
echo "== workload: tierdemo $DEMO_ARGS =="
/opt/prog/tierdemo $DEMO_ARGS
rc=$?
echo "== kmmscand counters =="
grep '^kmmscand_' /proc/vmstat || echo "(no kmmscand_* counters in /proc/vmstat yet)"
grep -E '^(pgpromote_success|pgmigrate_success|pgdemote_kswapd) ' /proc/vmstat
exit $rc
