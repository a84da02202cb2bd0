# bench/bench.mk -- `make bench` (included from the root Makefile with
# "-include bench/bench.mk").  Not part of `make test`.
#   make bench                 full preset (all workloads x 6 policies, 60 s runs)
#   BENCH=quick make bench     quick preset (~30-40 min incl. boot)
#   BENCH=medium make bench    medium preset (30 s runs, 3 repeats, medians; ~1.5-2 h)
#   make bench BENCH_ARGS="DUR=20 WORKLOADS='hotcold zipf'"   override the guest driver
#   make bench-report BENCH_RAW=bench-results/<ts>/raw.log    re-run the report only
BENCH ?= full
export BENCH BENCH_ARGS BENCH_RAW

.PHONY: bench bench-report bench-workload

bench: ## Compare kmmscand / NUMA balancing tiering / DAMOS migrate_hot / none in one VM boot (BENCH=quick|medium|full)
	@bench/bench.sh

bench-report: ## Re-run the bench report on BENCH_RAW=<raw.log>
	@test -n "$(BENCH_RAW)" || { echo "set BENCH_RAW=bench-results/<ts>/raw.log"; exit 2; }
	@bench/bench.sh

bench-workload: ## Build the bench workload binary (build/bench/workload)
	@mkdir -p build/bench && gcc -static -O2 -Wall -Wextra -pthread -o build/bench/workload bench/workload.c -lm
