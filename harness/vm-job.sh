#!/usr/bin/env bash
# vm-job.sh [-q] DIR JOB [FILE...] -- run one job in the two-tier VM, the
# one way every harness target does it:
#   1. pack JOB (a shell script, /etc/kmm/job in the guest) and the FILEs
#      (mkinitramfs.sh: /opt/prog, or /opt/DIR for DIR=FILE) into
#      DIR/initramfs.cpio;
#   2. boot it (vm.sh, with the caller's environment: KERNEL, VM_TIMEOUT,
#      VM_HOSTFS, NODE0_MB, ...), which writes DIR/console.log,
#      DIR/stdout.log, DIR/stderr.log and DIR/seconds;
#   3. judge the kernel log: klog.py's findings go to DIR/klog.txt (empty
#      when the log is clean; a klog.py that fails, or no console.log,
#      is a finding).
# Logs how long the VM ran and, unless -q, the job's output (stdout.log,
# indented) on stderr.  Exits with the job's status as vm.sh returns it:
# 124 when VM_TIMEOUT ran out, 125 when the guest died without reporting.
source "$(dirname "$0")/lib.sh"
quiet=0
[ "${1:-}" = -q ] && { quiet=1; shift; }
[ $# -ge 2 ] || die "usage: vm-job.sh [-q] DIR JOB [FILE...]"
dir=$1 job=$2
shift 2
[ -f "$job" ] || die "vm-job.sh: no job script '$job'"
mkdir -p "$dir"
"$HARNESS/mkinitramfs.sh" "$dir/initramfs.cpio" "$job" "$@"
set +e
"$HARNESS/vm.sh" "$dir/initramfs.cpio" "$dir"
rc=$?
set -e
log "VM finished in $(cat "$dir/seconds" 2>/dev/null || echo '?')s (status $rc); logs in $dir/"
[ $quiet = 1 ] || sed 's/^/    | /' "$dir/stdout.log" >&2
# klog.py exits 1 with its findings; if it fails without printing one (no
# console.log, a crash), that is a finding too, never a clean log.
if ! python3 "$HARNESS/klog.py" "$dir/console.log" > "$dir/klog.txt" &&
   ! [ -s "$dir/klog.txt" ]; then
	echo "kernel log: not judged (klog.py failed on $dir/console.log)" > "$dir/klog.txt"
fi
exit $rc
