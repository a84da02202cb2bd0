#!/usr/bin/env bash
# vm-run.sh PROG [ARG...] -- run PROG (a static binary or a script) in the
# two-tier VM and return its stdout, stderr and exit status.
# Environment: FILES (extra files copied next to PROG, /opt/prog in the guest),
# NODE0_MB, NODE1_MB, CPUS, ACCEL=tcg|kvm, VM_TIMEOUT (s), APPEND (kernel
# command line additions), VM_OUT (where logs are kept).
source "$(dirname "$0")/lib.sh"
usage() { echo "usage: make vm-run PROG=<static binary or script> [ARGS=\"...\"] [FILES=\"...\"]" >&2; exit 2; }
[ $# -ge 1 ] && [ -n "$1" ] || usage
prog=$1; shift
[ -f "$prog" ] || { echo "vm-run: PROG '$prog' is not a file" >&2; usage; }
if head -c 4 "$prog" | grep -q 'ELF'; then
	if readelf -l "$prog" 2>/dev/null | grep -q 'INTERP'; then
		echo "vm-run: $prog is dynamically linked; the VM has no libc: build it with -static" >&2
		exit 2
	fi
fi
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
"$HARNESS/mkinitramfs.sh" "$out/initramfs.cpio" "$out/job" "$prog" "${files[@]}"
set +e
"$HARNESS/vm.sh" "$out/initramfs.cpio" "$out"
rc=$?
set -e
cat "$out/stdout.log"
cat "$out/stderr.log" >&2
# The program's status is returned unchanged; kernel trouble is reported.
if ! python3 "$HARNESS/klog.py" "$out/console.log" >"$out/klog.txt"; then
	echo "vm-run: warning: the kernel log shows errors (full log: $out/console.log):" >&2
	cat "$out/klog.txt" >&2
fi
exit $rc
