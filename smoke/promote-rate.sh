# Guest side (busybox sh) of the promotion-throughput measurement:
#   gcc -O2 -static -o build/memcpy_bw smoke/memcpy_bw.c
#   make demo   # builds build/demo/tierdemo
#   make vm-run PROG=smoke/promote-rate.sh FILES="build/memcpy_bw build/demo/tierdemo" NODE0_MB=2048 NODE1_MB=1024
# An all-hot 256 MB set on node 1 with the rate limit at its maximum and
# 4096-page batches: tierdemo prints once a second how much of it is on
# node 0; the fastest second is the promotion throughput. memcpy_bw gives
# the copy bandwidth of the same size for comparison.
MB=${1:-256}
K=/sys/kernel/mm/kmmscand
/opt/prog/memcpy_bw "$MB"
echo 1048576 > $K/promote_rate_limit_mbps
echo 4096 > $K/migrate_batch
echo 500 > $K/scan_period_min_ms
/opt/prog/tierdemo -m "$MB" -H "$MB" -t 30
grep -E '^kmmscand_(promote|defer|fail)' /proc/vmstat
