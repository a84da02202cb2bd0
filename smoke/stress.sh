# Debug-kernel stress: selftests plus knob flapping while processes fork,
# exec, opt out and exit.  Look for lockdep / sleeping-in-atomic splats.
K=/sys/kernel/mm/kmmscand
echo 100 > $K/scan_period_min_ms; echo 500 > $K/scan_period_max_ms
( for i in $(seq 1 60); do
	echo 0 > $K/enabled; echo 1 > $K/enabled
	echo $((i % 2)) > $K/tlb_flush; echo $(((i + 1) % 2)) > $K/pmd_skip
	echo $((i % 3 * 64)) > $K/promote_rate_limit_mbps
	sleep 0.5
  done; echo 256 > $K/promote_rate_limit_mbps; echo 1 > $K/pmd_skip ) &
( for i in $(seq 1 40); do /opt/prog/kmmscand_smoke 3 16 4 >/dev/null & sleep 0.7; done; wait ) &
/opt/prog/kmmscand_smoke 30 64 8 | grep -E "RESULT|end:"
wait
cd /opt/prog
for t in ./kmmscand_*_test; do
	[ -x "$t" ] || continue
	echo "$t"
	"$t" 2>&1 | grep -E "^(ok|not ok|# Totals)"
done
dmesg | grep -iE "lockdep|possible|BUG|WARNING|sleeping function|circular|inconsistent" | head -20
echo "stress done"
