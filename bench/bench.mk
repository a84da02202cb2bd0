# bench/bench.mk -- `make bench` (included from the root Makefile with
# "-include bench/bench.mk").  Not part of `make test`.
#   make bench                 full preset (all workloads x 6 policies, 60 s runs)
#   BENCH=quick make bench     quick preset (~30-40 min incl. boot)
#   BENCH=medium make bench    medium preset (30 s runs, 3 repeats, medians; ~1.5-2 h)
#   BENCH=quick-bignode make bench   headline workloads, node 0 of 3072 MB (NUMA
#                              balancing's first-access rule can hold)
#   BIG0=1 BENCH=quick make bench    any preset with node 0 of 3072 MB
#   BENCH=scale make bench     1-100 processes, 1-16 GB mapped (scale-medium: 30 s x 3)
#   INIT_ON_FREE=0 make bench  boot the guest without init_on_free=1 (bench/README.md)
#   make bench BENCH_ARGS="DUR=20 WORKLOADS='hotcold zipf'"   override the guest driver
#   make bench-report BENCH_RAW=bench-results/<ts>/raw.log    re-run the report only
BENCH ?= full
export BENCH BENCH_ARGS BENCH_RAW BIG0 INIT_ON_FREE

.PHONY: bench bench-report bench-workload

bench: ## Compare kmmscand / NUMA balancing tiering / DAMOS migrate_hot / none in one VM boot (BENCH=quick|quick-bignode|medium|full|scale|scale-medium, BIG0=1, INIT_ON_FREE=0)
	@bench/bench.sh

bench-report: ## Re-run the bench report on BENCH_RAW=<raw.log>
	@test -n "$(BENCH_RAW)" || { echo "set BENCH_RAW=bench-results/<ts>/raw.log"; exit 2; }
	@bench/bench.sh

bench-workload: ## Build the workload binary (build/bench/workload, workload/build.sh)
	@workload/build.sh build/bench/workload
