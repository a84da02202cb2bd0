# Guest side (busybox sh) of the promotion-throughput measurement,
# `make smoke NAME=promote-rate ARGS="256 1024"` (smoke/smoke.sh builds
# memcpy_bw and the workload, and boots node 0 of 3072 MB, node 1 of 2048):
# For each size MB (default 256), in one boot: memcpy_bw gives the copy
# bandwidth node 1 -> node 0 and the rate of move_pages(2) moving MB the
# same way (the kernel's migration without detection); then an all-hot
# set of MB on node 1 with the rate limit at its maximum and 4096-page
# batches: the workload samples once a second how much of it is on node 0
# (its T lines), and the fastest second is the promotion throughput.
K=/sys/kernel/mm/kmmscand
for MB in ${@:-256}; do
	echo "=== $MB MB"
	/opt/prog/memcpy_bw "$MB" || exit 1
	echo 1048576 > $K/promote_rate_limit_mbps
	echo 4096 > $K/migrate_batch
	echo 500 > $K/scan_period_min_ms
	/opt/prog/workload --mode hotcold --size-mb "$MB" --hot-pct 100 --secs 25 \
		--sample-ms 1000 > /tmp/promote.log 2>&1 || { cat /tmp/promote.log; exit 1; }
	grep -E '^(SETUP|T|RESULT) ' /tmp/promote.log
	# MB/s between successive samples: the share on node 0 times MB
	awk -v mb="$MB" '$1 == "T" {
		split($3, h, "="); t = $2 + 0; f = h[2] + 0
		if (n++ && t > pt) { r = (f - pf) * mb / (t - pt); if (r > best) best = r }
		pt = t; pf = f
	} END { printf "fastest second: %.0f MB/s\n", best }' /tmp/promote.log
	grep -E '^kmmscand_(promote|defer|fail)' /proc/vmstat
done
