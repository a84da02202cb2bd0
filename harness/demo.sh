#!/usr/bin/env bash
# demo.sh -- `make demo`: boot the patched kernel in the two-tier VM and run
# tierdemo: 64 MB on node 1, 8 MB of it hot; print per second where the hot
# pages are and kmmscand's counters, then a summary.
source "$(dirname "$0")/lib.sh"
DEMO_ARGS=${DEMO_ARGS:--m 64 -H 8 -t 20}
"$HARNESS/build-kernel.sh"
out=$BUILD/demo
mkdir -p "$out"
need_pkgs gcc libc6-dev
gcc -static -O2 -Wall -o "$out/tierdemo" "$HARNESS/demo/tierdemo.c" -lpthread
{ echo "DEMO_ARGS='$DEMO_ARGS'"; cat "$HARNESS/demo/demo-job.sh"; } > "$out/demo-job.sh"
VM_OUT=$out/vm FILES="$out/tierdemo" VM_TIMEOUT=${VM_TIMEOUT:-300} \
	exec "$HARNESS/vm-run.sh" "$out/demo-job.sh"
