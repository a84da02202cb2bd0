#!/usr/bin/env bash
# bench/bench.sh -- host side of `make bench`.
#   BENCH=quick|quick-bignode|medium|full (default full) -- preset, see bench/README.md
#   BIG0=1                           -- node 0 of 3072 MB (NODE0_MB default) for any
#                                       preset: NUMA balancing's first-access rule holds
#   INIT_ON_FREE=1|0 (default 1)     -- boot the guest with init_on_free=1: a freed page is
#                                       zeroed then, so under TCG no measured thread pays
#                                       for the emulator's translated code at its first
#                                       write into a recycled page (bench/README.md)
#   BENCH_ARGS="KEY=VALUE ..."       -- passed to bench/run-in-vm.sh (DUR=, WORKLOADS=,
#                                       REPEAT=, ...)
#   NODE0_MB / NODE1_MB / VM_TIMEOUT -- VM sizing (defaults per preset)
#   BENCH_RAW=<log>                  -- skip the VM, re-run the report on an old raw log
# Builds the workload, boots the VM once through the harness (harness/vm-run.sh)
# with bench/run-in-vm.sh as the program, and writes
# bench-results/<timestamp>/{raw.log,results.csv,results.md,summary.txt,coverage.png}.
# The VM runs in the host's root filesystem (HOSTFS=1, see harness/vm.sh):
# the redis workloads use the host's redis-server, redis-benchmark and
# migratepages, which are installed here when missing.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
# need_pkgs (and the harness settings; bench.sh has its own log below)
source "$TOP/harness/lib.sh"
# what the guest runs from the host's root, and the workload's compiler
BENCH_PKGS=(redis-server redis-tools numactl gcc libc6-dev)
BENCH=${BENCH:-full}
# REPEAT=N in BENCH_ARGS multiplies the run time: the default VM budget
# scales with it (quick ~40 min, medium ~100 min, full ~175 min per repeat).
rep=$(printf '%s\n' "${BENCH_ARGS:-}" | sed -n 's/.*REPEAT=\([0-9][0-9]*\).*/\1/p')
# NUMA balancing promotes on first access only while node 0 has 1 GB free
# above its promotion watermark (pgdat_free_space_enough()): 1024 MB never
# allows it, 3072 MB does.  BIG0=1 (and the quick-bignode preset) boot that.
case "${BIG0:-0}" in
0) ;;
1) : "${NODE0_MB:=3072}" ;;
*) echo "bench: BIG0 must be 0 or 1" >&2; exit 2 ;;
esac
case "$BENCH" in
quick)  : "${NODE0_MB:=1024}" "${NODE1_MB:=1024}" "${VM_TIMEOUT:=$((600 + 3000 * ${rep:-1}))}" ;;
quick-bignode) : "${NODE0_MB:=3072}" "${NODE1_MB:=1024}" "${VM_TIMEOUT:=$((600 + 1800 * ${rep:-1}))}" ;;
medium) : "${NODE0_MB:=1024}" "${NODE1_MB:=1024}" "${VM_TIMEOUT:=$((900 + 2400 * ${rep:-3}))}" ;;
full)   : "${NODE0_MB:=1024}" "${NODE1_MB:=2048}" "${VM_TIMEOUT:=$((1800 + 12000 * ${rep:-1}))}" ;;
scale)  : "${NODE0_MB:=1024}" "${NODE1_MB:=5120}" "${VM_TIMEOUT:=$((900 + 1800 * ${rep:-1}))}" ;;
scale-medium) : "${NODE0_MB:=1024}" "${NODE1_MB:=5120}" "${VM_TIMEOUT:=$((900 + 3600 * ${rep:-3}))}" ;;
*) echo "bench: BENCH must be quick, quick-bignode, medium, full, scale or scale-medium" >&2; exit 2 ;;
esac
export NODE0_MB NODE1_MB VM_TIMEOUT
# A free page that last held program text costs ~2.7 ms at its first
# write under TCG (smoke/README.md, tcg_firstwrite); the reset's
# drop_caches frees such pages by the megabyte and the migrating thread
# was the one to write them.  Zeroing at free puts that on the freeing.
case "${INIT_ON_FREE:-1}" in
1) export APPEND="init_on_free=1${APPEND:+ $APPEND}" ;;
0) ;;
*) echo "bench: INIT_ON_FREE must be 0 or 1" >&2; exit 2 ;;
esac
# The hot-pluggable dimm of the test VM would change node 1: bench without it.
export DIMM1_MB=${DIMM1_MB:-0}
ts=$(date -u +%Y%m%dT%H%M%SZ)
out=$TOP/bench-results/$ts
mkdir -p "$out"
log() { printf '[bench] %s\n' "$*" >&2; }

ensure_gnuplot() {
	command -v gnuplot >/dev/null && return 0
	if [ "$(id -u)" -ne 0 ]; then
		log "gnuplot missing and not root: install gnuplot-nox for the plot"; return 0
	fi
	log "installing gnuplot-nox"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y gnuplot-nox >"$out/apt.log" 2>&1 ||
		{ apt-get update >>"$out/apt.log" 2>&1 && apt-get install -y gnuplot-nox >>"$out/apt.log" 2>&1; } ||
		log "apt-get install gnuplot-nox failed (see $out/apt.log); no plot"
}

start=$(date +%s)
if [ -n "${BENCH_RAW:-}" ]; then
	cp "$BENCH_RAW" "$out/raw.log"
else
	[ -x "$TOP/harness/vm-run.sh" ] ||
		{ log "harness/vm-run.sh not found: merge main (the harness) first"; exit 2; }
	need_pkgs "${BENCH_PKGS[@]}"
	"$TOP/workload/build.sh" "$out/workload"
	cp "$TOP/bench/run-in-vm.sh" "$TOP/bench/redis-workload.sh" "$TOP/harness/guest/lib.sh" "$out/"
	chmod +x "$out/run-in-vm.sh" "$out/redis-workload.sh"
	# file-shared maps a file of the host: in the guest it is page cache of
	# the 9p root (tmpfs, the guest's only writable place, would be shmem).
	# Sparse, as large as the largest region, removed after the run.
	size_mb=$(printf '%s\n' "${BENCH_ARGS:-}" | sed -n 's/.*SIZE_MB=\([0-9][0-9]*\).*/\1/p')
	shared_file=$out/file-shared.data
	truncate -s "$(( ${size_mb:-0} > 512 ? size_mb : 512 ))M" "$shared_file"
	trap 'rm -f "$shared_file"' EXIT
	# same as `make vm-run`: (re)build the kernel, then boot it
	"$TOP/harness/build-kernel.sh" >&2
	log "BENCH=$BENCH NODE0_MB=$NODE0_MB NODE1_MB=$NODE1_MB VM_TIMEOUT=$VM_TIMEOUT; guest output -> $out/raw.log"
	# BENCH_ARGS is shell-quoted: WORKLOADS='hotcold zipf' stays one word
	eval "set -- ${BENCH_ARGS:-}"
	set +e
	VM_OUT=$out/vm FILES="$out/workload $out/redis-workload.sh $out/lib.sh" HOSTFS=1 \
		"$TOP/harness/vm-run.sh" "$out/run-in-vm.sh" \
		MODE="$BENCH" FILE_PATH="$shared_file" "$@" 2>"$out/vm-stderr.log" | tee "$out/raw.log" |
		grep --line-buffered -E '^@@RUN-(BEGIN|END)|^RESULT|^REDIS-(TEST|RESULT)|^@@SKIP|^@@ERROR' >&2
	rc=${PIPESTATUS[0]}
	set -e
	rm -f "$shared_file"
	[ "$rc" -eq 0 ] || log "vm-run exited $rc (see $out/vm-stderr.log); reporting what ran"
	grep -q '@@BENCH-END' "$out/raw.log" || log "guest output incomplete (no @@BENCH-END)"
fi
ensure_gnuplot
python3 "$TOP/bench/report.py" "$out/raw.log" "$out" > /dev/null
end=$(date +%s)
echo "bench ($BENCH) took $((end - start)) s" >> "$out/summary.txt"
cat "$out/results.md"
log "results in $out (took $((end - start)) s)"
ln -sfn "$ts" "$TOP/bench-results/latest"
