#!/usr/bin/env bash
# vm-run.sh PROG [ARG...] -- run PROG (a static binary or a script) in the
# two-tier VM and return its stdout, stderr and exit status.
# Environment: FILES (extra files copied next to PROG, /opt/prog in the guest),
# HOSTFS=0|1|auto (run in the busybox initramfs or in the host's root),
# NODE0_MB, NODE1_MB, NODE2_MB, DIMM1_MB, CPUS, ACCEL=tcg|kvm, VM_CPU (-cpu model), VM_TIMEOUT (s), APPEND (kernel
# command line additions), VM_OUT (where logs are kept).
source "$(dirname "$0")/lib.sh"
usage() { echo "usage: make vm-run PROG=<program or script> [ARGS=\"...\"] [FILES=\"...\"] [HOSTFS=0|1|auto]" >&2; exit 2; }
[ $# -ge 1 ] && [ -n "$1" ] || usage
prog=$1; shift
[ -f "$prog" ] || { echo "vm-run: PROG '$prog' is not a file" >&2; usage; }
# HOSTFS: 1 runs PROG in the host's root filesystem (9p, read-only, writes
# in tmpfs), so dynamically linked programs and scripts calling host tools
# work; 0 runs it in the busybox initramfs; auto (default) picks 1 for a
# dynamically linked ELF or a script whose #! names anything but
# /bin/sh or busybox, 0 otherwise.
HOSTFS=${HOSTFS:-auto}
case "$HOSTFS" in
0|1|auto) ;;
*) echo "vm-run: HOSTFS must be 0, 1 or auto (got '$HOSTFS')" >&2; usage ;;
esac
dynamic=0 foreign=0
if head -c 4 "$prog" | grep -q 'ELF'; then
	readelf -l "$prog" 2>/dev/null | grep -q 'INTERP' && dynamic=1
elif head -c 2 "$prog" | grep -q '#!'; then
	interp=$(head -n 1 "$prog" | sed 's/^#![[:space:]]*//; s/[[:space:]]*$//')
	case "$interp" in
	/bin/sh|"/bin/sh "*|/bin/busybox*|"/usr/bin/env sh") ;;
	*) foreign=1 ;;
	esac
fi
if [ "$HOSTFS" = auto ]; then
	HOSTFS=0
	[ $dynamic = 1 ] || [ $foreign = 1 ] && HOSTFS=1
fi
if [ "$HOSTFS" = 0 ] && [ $dynamic = 1 ]; then
	echo "vm-run: $prog is dynamically linked and HOSTFS=0 gives the VM no libc: build it with -static or use HOSTFS=1" >&2
	exit 2
fi
export VM_HOSTFS=$HOSTFS
out=${VM_OUT:-$BUILD/vm-run}
mkdir -p "$out"
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
name=$(basename "$prog")
{
	printf 'chmod +x /opt/prog/%s 2>/dev/null\n' "$(q "$name")"
	if head -c 2 "$prog" | grep -q '#!' || head -c 4 "$prog" | grep -q 'ELF'; then
		printf 'exec /opt/prog/%s' "$(q "$name")"
	else
		printf 'exec sh /opt/prog/%s' "$(q "$name")"
	fi
	for a in "$@"; do printf ' %s' "$(q "$a")"; done
	printf '\n'
} > "$out/job"
files=()
for f in ${FILES:-}; do files+=("$f"); done
rc=0
"$HARNESS/vm-job.sh" -q "$out" "$out/job" "$prog" "${files[@]}" || rc=$?
cat "$out/stdout.log"
cat "$out/stderr.log" >&2
# The program's status is returned unchanged; kernel trouble is reported.
if [ -s "$out/klog.txt" ]; then
	echo "vm-run: warning: the kernel log shows errors (full log: $out/console.log):" >&2
	cat "$out/klog.txt" >&2
fi
exit $rc
