# Scanner CPU per GB of mapped memory for 1, 10 and 50 processes mapping
# 512 MB in all (64 MB of it on the slow node, one page in 64 of that kept
# hot), at default tunables, 20 s after a 10 s warm-up each.
#   gcc -O2 -static -o build/scan_cost smoke/scan_cost.c
#   make vm-run PROG=smoke/scan-cost.sh FILES=build/scan_cost
for n in 1 10 50; do
	/opt/prog/scan_cost "$n" 512 64 20 || echo "scan_cost $n failed: $?"
done
