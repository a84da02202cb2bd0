# Scan-cost measurement: 512 MB on node 1, 1 MB hot, scan period pinned
# to 500 ms; counters and CPU sampled after a 10 s warm-up.  Once with
# pmd_skip=1, once with pmd_skip=0, once with tlb_flush=1.
K=/sys/kernel/mm/kmmscand
echo 500 > $K/scan_period_max_ms
for cfg in "1 0" "0 0" "1 1"; do
	set -- $cfg
	echo $1 > $K/pmd_skip; echo $2 > $K/tlb_flush
	echo "=== pmd_skip=$1 tlb_flush=$2"
	/opt/prog/kmmscand_smoke 40 512 1 10 | grep -E "end:|deltas|pte_scanned|pmd_skipped|kmmscand_young|mm_scan |cpu|PTEs|RESULT"
done
ls -ld /sys /sys/kernel /sys/kernel/mm /sys/kernel/mm/kmmscand /sys/kernel/mm/transparent_hugepage
ls -l /sys/kernel/mm/kmmscand/ /sys/kernel/mm/transparent_hugepage/enabled
