# Top tier nearly full and demotion on: watch the watermark and ping-pong
# guards.  filler keeps ~950 MB of node 0 busy with cold memory.
echo 1 > /sys/kernel/mm/numa/demotion_enabled
/opt/prog/filler 950 150 2>/tmp/filler.log &
while ! grep -q written /tmp/filler.log; do sleep 1; done
grep -E "MemFree" /sys/devices/system/node/node*/meminfo
grep -E "pgdemote_kswapd" /proc/vmstat
zi() { awk '/^Node 0, zone/{z=$4} /^Node 1/{z=""} z!="" && /pages free|^ +min|^ +low|^ +high|^ +promo|protection/ {print z": "$0}' /proc/zoneinfo; }
zi
( sleep 20; echo "--- mid-run"; zi ) &
/opt/prog/kmmscand_smoke 40 64 16 0 | grep -E "start:|t=|end:|kmmscand_|RESULT"
grep -E "MemFree" /sys/devices/system/node/node*/meminfo
grep -E "pgdemote|pgpromote|pgmigrate_success" /proc/vmstat
kill %1 2>/dev/null
