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
echo "== workload $DEMO_ARGS =="
echo "(T lines: seconds, then the share of the hot and of the cold pages on node 0)"
# The workload's status, through the pipe that keeps a copy of its output.
{ /opt/prog/workload $DEMO_ARGS; echo $? > /tmp/demo.rc; } 2>&1 | tee /tmp/demo.out
rc=$(cat /tmp/demo.rc)
sed -n 's/^RESULT .* hot_final=\([^ ]*\) cold_final=\([^ ]*\) .* t90=\([^ ]*\) .*/summary: hot pages on node 0 at the end: \1, cold: \2; 90 % of the hot pages there after \3 s (-1: never)/p' /tmp/demo.out
echo "== kmmscand counters =="
grep '^kmmscand_' /proc/vmstat || echo "(no kmmscand_* counters in /proc/vmstat yet)"
grep -E '^(pgpromote_success|pgmigrate_success|pgdemote_kswapd) ' /proc/vmstat
exit $rc
