echo "--- tiers"; for t in /sys/devices/virtual/memory_tiering/memory_tier*; do echo "$t: $(cat $t/nodelist)"; done
echo "--- kunit"; dmesg | grep -E "kmmscand|# Subtest|^.*ok [0-9]+ kmmscand" | head -60
echo "--- sysfs"; for f in /sys/kernel/mm/kmmscand/*; do echo "$(basename $f)=$(cat $f)"; done
echo "--- threads"; ps | grep kmmscand | grep -v grep
echo "--- status"; grep Kmmscand /proc/self/status
echo 1 > /sys/kernel/tracing/events/kmmscand/enable 2>/dev/null
/opt/prog/kmmscand_smoke ${SMOKE_SECS:-30}
echo "--- trace sample"; head -c 3000 /sys/kernel/tracing/trace | tail -n 25
grep -c . /sys/kernel/tracing/trace
echo "--- dmesg tail"; dmesg | tail -15
