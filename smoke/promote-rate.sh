# Guest side (busybox sh) of the promotion-throughput measurement:
#   gcc -O2 -static -o build/memcpy_bw smoke/memcpy_bw.c
#   gcc -O2 -static -pthread -o build/tierdemo harness/demo/tierdemo.c
#   NODE0_MB=3072 NODE1_MB=2048 make vm-run PROG=smoke/promote-rate.sh \
#       FILES="build/memcpy_bw build/tierdemo" ARGS="256 1024"
# For each size MB (default 256), in one boot: memcpy_bw gives the copy
# bandwidth node 1 -> node 0 and the rate of move_pages(2) moving MB the
# same way (the kernel's migration without detection); then an all-hot
# set of MB on node 1 with the rate limit at its maximum and 4096-page
# batches: tierdemo prints once a second how much of it is on node 0, and
# the fastest second is the promotion throughput.
K=/sys/kernel/mm/kmmscand
for MB in ${@:-256}; do
	echo "=== $MB MB"
	/opt/prog/memcpy_bw "$MB" || exit 1
	echo 1048576 > $K/promote_rate_limit_mbps
	echo 4096 > $K/migrate_batch
	echo 500 > $K/scan_period_min_ms
	/opt/prog/tierdemo -m "$MB" -H "$MB" -t 25 || exit 1
	grep -E '^kmmscand_(promote|defer|fail)' /proc/vmstat
done
