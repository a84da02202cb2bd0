#!/usr/bin/env bash
# demo.sh -- `make demo`: boot the patched kernel in the two-tier VM and run
# the workload (workload/): 64 MB on node 1, 8 MB of it hot; it prints once
# a second where the hot and cold pages are, then kmmscand's counters and a
# summary.  DEMO_ARGS are the workload's options (workload --help).
source "$(dirname "$0")/lib.sh"
DEMO_ARGS=${DEMO_ARGS:---mode hotcold --size-mb 64 --hot-mb 8 --secs 20 --sample-ms 1000}
"$HARNESS/build-kernel.sh"
out=$BUILD/demo
mkdir -p "$out"
need_pkgs gcc libc6-dev
"$TOP/workload/build.sh" "$out/workload"
{ echo "DEMO_ARGS='$DEMO_ARGS'"; cat "$HARNESS/demo/demo-job.sh"; } > "$out/demo-job.sh"
VM_OUT=$out/vm FILES="$out/workload" VM_TIMEOUT=${VM_TIMEOUT:-300} \
	exec "$HARNESS/vm-run.sh" "$out/demo-job.sh"
