# Guest side (busybox sh) of the exit-with-a-full-queue measurement,
# `make smoke NAME=exit-queue` (smoke/smoke.sh builds fork_exit and the
# workload and puts them next to it).
# A 64 MB all-hot set on node 1 with the rate limit at 1 MB/s fills the
# promotion queue (8192 candidates); fork_exit then measures fork + exit +
# wait of registered processes while it is full, and again once the limit
# is lifted and the queue has drained.  Exit used to scan the whole queue
# under the lock that hint faults take; the difference between the two
# lines is what a full queue adds to every exit.
K=/sys/kernel/mm/kmmscand
held() { cat $K/queued 2>/dev/null || echo "?"; }
wait_held() {	# wait_held full|empty: poll up to 30 s
	i=0
	while [ $i -lt 300 ]; do
		q=$(held)
		[ "$q" = "?" ] && { sleep 15; return; }
		[ "$1" = full ] && [ "$q" -ge 8000 ] && return
		[ "$1" = empty ] && [ "$q" -eq 0 ] && return
		sleep 0.1; i=$((i + 1))
	done
}
echo 1 > $K/promote_rate_limit_mbps
echo 32 > $K/migrate_batch
/opt/prog/workload --mode hotcold --size-mb 64 --hot-pct 100 --secs 120 \
	--sample-ms 1000 > /tmp/workload.log 2>&1 &
td=$!
wait_held full
echo "queue full: queued $(held): fork+exit+wait $(/opt/prog/fork_exit 2000 5 0)"
echo 1048576 > $K/promote_rate_limit_mbps
wait_held empty
echo "queue empty: queued $(held): fork+exit+wait $(/opt/prog/fork_exit 2000 5 0)"
kill $td 2>/dev/null
wait
grep -E '^kmmscand_(candidate|promote_success|fail)' /proc/vmstat
