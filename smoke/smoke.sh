#!/usr/bin/env bash
# smoke/smoke.sh NAME [ARG...] -- `make smoke NAME=<name> [ARGS="..."]`:
# build one measurement of smoke/ and run it, in the two-tier VM through
# harness/vm-run.sh (its output and exit status are the program's), or on
# the host for the two that boot kernels of their own (fork-cost, kcsan).
# ARGS replace the measurement's default arguments; the VM variables
# (NODE0_MB, NODE1_MB, APPEND, VM_TIMEOUT, ...) pass through, and a
# measurement that needs a larger VM sets its own unless they are given.
# smoke/README.md has what each one measures and its results.  Without
# NAME: the list.
source "$(dirname "$0")/../harness/lib.sh"
out=$BUILD/smoke

list() {
	cat <<'EOF'
usage: make smoke NAME=<name> [ARGS="..."]
  walk-cost       scanner CPU and ns per PTE on a scattered, promoted hot set  [512 10 10 6]
  steady-cost     idle cost per GB and re-detection after quiet spells        [512 20 45 60]
  promote-rate    promotion throughput against memcpy and move_pages(2)       [256 1024]
  exit-queue      fork+exit+wait with the promotion queue full, then empty
  register-cost   registering N processes that exist when kmmscand is enabled [10000]
  tcg-copy        the emulator's page copy by source/destination distance      [16 5]
  tcg-firstwrite  the emulator's first write into a page that held program text
  fork-cost       fork+exit: kmmscand on, off and CONFIG_KMMSCAND=n (host side)
  kcsan           KCSAN kernel running kmmscand_stress (host side)             [120]
EOF
}

# cc NAME [EXTRA...]: smoke/NAME.c into $out/NAME, static
cc() {
	local name=$1
	shift
	gcc -static -O2 -Wall -pthread -o "$out/$name" "$TOP/smoke/$name.c" "$@"
}

# vm PROG [FILE...] -- [ARG...]: the built kernel, PROG in the VM
vm() {
	local prog=$1 files=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		files+=("$1")
		shift
	done
	shift
	"$HARNESS/build-kernel.sh" >&2
	VM_OUT=${VM_OUT:-$out/vm} FILES="${files[*]}" exec "$HARNESS/vm-run.sh" "$prog" "$@"
}

name=${1:-}
[ $# -gt 0 ] && shift
case "$name" in
walk-cost|steady-cost|promote-rate|exit-queue|register-cost|tcg-copy|\
tcg-firstwrite)
	need_pkgs gcc libc6-dev
	mkdir -p "$out" ;;
fork-cost|kcsan) ;;
"") list; exit 0 ;;
*) echo "smoke: unknown measurement '$name'" >&2; list >&2; exit 2 ;;
esac
case "$name" in
walk-cost)
	cc walk_cost
	[ $# -gt 0 ] || set -- 512 10 10 6
	vm "$out/walk_cost" -- "$@" ;;
steady-cost)
	cc steady_cost
	[ $# -gt 0 ] || set -- 512 20 45 60
	vm "$out/steady_cost" -- "$@" ;;
promote-rate)
	cc memcpy_bw
	"$TOP/workload/build.sh" "$out/workload"
	[ $# -gt 0 ] || set -- 256 1024
	export NODE0_MB=${NODE0_MB:-3072} NODE1_MB=${NODE1_MB:-2048}
	vm "$TOP/smoke/promote-rate.sh" "$out/memcpy_bw" "$out/workload" -- "$@" ;;
exit-queue)
	cc fork_exit
	"$TOP/workload/build.sh" "$out/workload"
	vm "$TOP/smoke/exit-queue.sh" "$out/fork_exit" "$out/workload" -- "$@" ;;
register-cost)
	# kmmscand_status() is the selftests' (kmmscand_util.c)
	"$HARNESS/assemble.sh" >&2
	st=$TREE/tools/testing/selftests/mm
	cc register_cost -I "$st" "$st/kmmscand_util.c"
	[ $# -gt 0 ] || set -- 10000
	export NODE0_MB=${NODE0_MB:-3072}
	vm "$out/register_cost" -- "$@" ;;
tcg-copy)
	cc tcg_copy
	[ $# -gt 0 ] || set -- 16 5
	vm "$out/tcg_copy" -- "$@" ;;
tcg-firstwrite)
	cc tcg_firstwrite
	export HOSTFS=${HOSTFS:-1}
	vm "$TOP/smoke/tcg-firstwrite.sh" "$out/tcg_firstwrite" -- "$@" ;;
fork-cost)
	exec "$TOP/smoke/fork-cost.sh" "$@" ;;
kcsan)
	exec "$TOP/smoke/kcsan.sh" "$@" ;;
esac
