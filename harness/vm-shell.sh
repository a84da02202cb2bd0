#!/usr/bin/env bash
# vm-shell.sh -- an interactive shell in the two-tier VM, for a person at a
# terminal: the host's userland (HOSTFS=1, the default here: bash, perf,
# trace-cmd, numactl, whatever the host has installed) or the busybox
# initramfs (HOSTFS=0). FILES are copied to /opt/prog as for vm-run.
# The kernel console shares the terminal; Ctrl-A X quits QEMU.
source "$(dirname "$0")/lib.sh"
HOSTFS=${HOSTFS:-1}
[[ $HOSTFS =~ ^[01]$ ]] || die "HOSTFS must be 0 or 1 (got '$HOSTFS')"
out=${VM_OUT:-$BUILD/vm-shell}
mkdir -p "$out"
echo 'exit 0' > "$out/job"
files=()
for f in ${FILES:-}; do files+=("$f"); done
"$HARNESS/mkinitramfs.sh" "$out/initramfs.cpio" "$out/job" "${files[@]}"
VM_HOSTFS=$HOSTFS SHELL_VM=1 exec "$HARNESS/vm.sh" "$out/initramfs.cpio" "$out"
