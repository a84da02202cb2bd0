#!/usr/bin/env bash
# vm.sh INITRAMFS OUTDIR -- boot the kmmscand kernel in the two-tier VM.
#
# Topology: node 0 = the vCPUs + NODE0_MB of DRAM; node 1 = CPU-less slow
# tier of NODE1_MB, with HMAT giving it 10x the latency and 1/10 the
# bandwidth of node 0, so the kernel puts it in a lower memory tier.
# NODE2_MB > 0 adds node 2: CPU-less DRAM as fast as node 0 (the same
# HMAT figures), so a second top-tier node, as on a two-socket machine.
# Node 1 also gets a hot-pluggable pc-dimm of DIMM1_MB (0: none), which the
# kernel onlines into ZONE_MOVABLE (memhp_default_state=online_movable), so
# tests can offline it like a CXL device that is about to be removed.
# VM_HOSTFS=1 exports the host's root filesystem read-only over virtio-9p
# (tag hostroot) and has the guest run its job there (harness/guest/init),
# so that the host's programs, dynamically linked ones included, run in
# the guest. SHELL_VM=1 gives an interactive shell on the terminal instead
# of a job (the kernel console shares it, no VM_TIMEOUT); it needs a
# terminal on stdin.  VM_CPU overrides the -cpu model (default max; host
# with KVM).
# Writes OUTDIR/console.log (kernel console), stdout.log, stderr.log.
# Exits with the guest job's status; 124 when the wall-clock budget
# (VM_TIMEOUT seconds) ran out, 125 when the guest died without reporting.
source "$(dirname "$0")/lib.sh"
[ $# -eq 2 ] || die "usage: vm.sh INITRAMFS OUTDIR"
initrd=$1 outdir=$2
NODE0_MB=${NODE0_MB:-1024}
NODE1_MB=${NODE1_MB:-1024}
NODE2_MB=${NODE2_MB:-0}
DIMM1_MB=${DIMM1_MB:-256}
CPUS=${CPUS:-2}
ACCEL=${ACCEL:-tcg}
VM_TIMEOUT=${VM_TIMEOUT:-600}
KERNEL=${KERNEL:-$KOBJ/arch/x86/boot/bzImage}
APPEND=${APPEND:-}
for v in NODE0_MB CPUS VM_TIMEOUT; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')"
done
# NODE1_MB=0: node 1 has no memory at boot, only the dimm (which then
# needs DIMM1_MB > 0): the slow tier appears when the dimm is onlined.
[[ $NODE1_MB =~ ^(0|[1-9][0-9]*)$ ]] || die "NODE1_MB must be a non-negative integer (got '$NODE1_MB')"
[[ $NODE2_MB =~ ^(0|[1-9][0-9]*)$ ]] || die "NODE2_MB must be a non-negative integer (got '$NODE2_MB')"
[ "$NODE1_MB" -gt 0 ] || [ "$DIMM1_MB" -gt 0 ] ||
	die "NODE1_MB=0 needs a dimm on node 1 (DIMM1_MB > 0)"
# A memory block (and sparsemem section) of x86-64 is 128 MB: the kernel
# refuses to add a dimm that is not made of whole blocks.
[[ $DIMM1_MB =~ ^(0|[1-9][0-9]*)$ ]] && [ $((DIMM1_MB % 128)) -eq 0 ] ||
	die "DIMM1_MB must be 0 (no dimm) or a multiple of 128 (got '$DIMM1_MB')"
case "$ACCEL" in tcg|kvm) ;; *) die "ACCEL must be tcg or kvm (got '$ACCEL')" ;; esac
VM_HOSTFS=${VM_HOSTFS:-0}
SHELL_VM=${SHELL_VM:-0}
[[ $VM_HOSTFS =~ ^[01]$ ]] || die "VM_HOSTFS must be 0 or 1 (got '$VM_HOSTFS')"
[[ $SHELL_VM =~ ^[01]$ ]] || die "SHELL_VM must be 0 or 1 (got '$SHELL_VM')"
if [ "$SHELL_VM" = 1 ] && ! [ -t 0 ]; then
	die "an interactive VM (make vm-shell) needs a terminal on standard input; make vm-run runs a program"
fi
[ -f "$KERNEL" ] || die "no kernel at $KERNEL; run 'make kernel' first"
need_pkgs qemu-system-x86
mkdir -p "$outdir"
rm -f "$outdir"/{console,stdout,stderr}.log
cpu=max
[ "$ACCEL" = kvm ] && cpu=host
# VM_CPU: another -cpu model (e.g. max,-erms,-fsrm: no string-instruction
# page copies, see bench/README.md).
if [ -n "${VM_CPU:-}" ]; then
	[[ $VM_CPU =~ ^[A-Za-z0-9][A-Za-z0-9_.,+=-]*$ ]] ||
		die "VM_CPU must be a QEMU -cpu model and its flags (got '$VM_CPU')"
	cpu=$VM_CPU
fi

mem=$((NODE0_MB + NODE1_MB + NODE2_MB))M
dimm=()
if [ "$DIMM1_MB" -gt 0 ]; then
	mem+=",slots=2,maxmem=$((NODE0_MB + NODE1_MB + NODE2_MB + DIMM1_MB))M"
	dimm=(-object memory-backend-ram,id=dimm1,size="${DIMM1_MB}M"
	      -device pc-dimm,id=dimm1,memdev=dimm1,node=1)
	APPEND="memhp_default_state=online_movable $APPEND"
fi

node1=(-numa node,nodeid=1,initiator=0)
if [ "$NODE1_MB" -gt 0 ]; then
	node1=(-object memory-backend-ram,id=m1,size="${NODE1_MB}M"
	       -numa node,nodeid=1,memdev=m1,initiator=0)
fi
node2=()
if [ "$NODE2_MB" -gt 0 ]; then
	node2=(-object memory-backend-ram,id=m2,size="${NODE2_MB}M"
	       -numa node,nodeid=2,memdev=m2,initiator=0
	       -numa hmat-lb,initiator=0,target=2,hierarchy=memory,data-type=access-latency,latency=10
	       -numa hmat-lb,initiator=0,target=2,hierarchy=memory,data-type=access-bandwidth,bandwidth=10G)
fi

fs=()
if [ "$VM_HOSTFS" = 1 ]; then
	fs=(-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap)
	APPEND="kmm.hostfs=1 $APPEND"
fi
console=(-serial "file:$outdir/console.log")
if [ "$SHELL_VM" = 1 ]; then
	console=(-serial mon:stdio)
	APPEND="kmm.shell=1 loglevel=4 $APPEND"
fi

qemu=(qemu-system-x86_64 -machine q35,hmat=on -accel "$ACCEL" -cpu "$cpu"
	-smp "$CPUS" -m "$mem"
	-object memory-backend-ram,id=m0,size="${NODE0_MB}M"
	-numa node,nodeid=0,memdev=m0,cpus=0-$((CPUS - 1)),initiator=0
	"${node1[@]}"
	-numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-latency,latency=10
	-numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-bandwidth,bandwidth=10G
	-numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-latency,latency=100
	-numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-bandwidth,bandwidth=1G
	"${node2[@]}"
	"${dimm[@]}" "${fs[@]}"
	-kernel "$KERNEL" -initrd "$initrd"
	-append "console=ttyS0 panic=-1 oops=panic rdinit=/init numa_balancing=disable $APPEND"
	-display none -monitor none -no-reboot
	"${console[@]}"
	-serial "file:$outdir/stdout.log"
	-serial "file:$outdir/stderr.log")

start=$(date +%s)
if [ "$SHELL_VM" = 1 ]; then
	log "interactive VM: Ctrl-A X quits QEMU, 'exit' powers the guest off"
	exec "${qemu[@]}"
fi
set +e
timeout -k 5 "$VM_TIMEOUT" "${qemu[@]}" </dev/null >"$outdir/qemu.log" 2>&1
qrc=$?
set -e
echo "$(( $(date +%s) - start ))" > "$outdir/seconds"
rc=$(sed -n 's/.*@@KMM-EXIT \([0-9]*\)@@.*/\1/p' "$outdir/console.log" 2>/dev/null | tail -n 1)
if [ -n "$rc" ]; then
	exit "$rc"
fi
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	log "VM exceeded its ${VM_TIMEOUT}s budget and was killed (console: $outdir/console.log)"
	exit 124
fi
log "VM ended without reporting an exit status (qemu rc=$qrc; console: $outdir/console.log)"
sed -n '1,20p' "$outdir/qemu.log" >&2
exit 125
