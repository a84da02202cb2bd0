#!/usr/bin/env bash
# workload/build.sh OUT -- build the workload (workload/*.c) into the static
# binary OUT.  The bench (bench/bench.sh, make bench-workload), make demo and
# the userland checks of make test build it with this; the same sources,
# flags and binary everywhere.
set -euo pipefail
if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: workload/build.sh OUT" >&2
	exit 2
fi
src=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$(dirname "$1")"
exec gcc -static -O2 -Wall -Wextra -pthread -o "$1" "$src/workload.c" \
	"$src"/workload_*.c -lm
