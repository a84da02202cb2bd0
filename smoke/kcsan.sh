#!/usr/bin/env bash
# kcsan.sh -- a KCSAN (data race) run of kmmscand: the `make test` kernel
# configuration + harness/config/kcsan.config, built in build/kbuild-kcsan,
# boots the two-tier VM and runs kmmscand_stress for SECONDS (default 120)
# with aggressive knobs, then prints every KCSAN report of the kernel log
# and how many name a kmmscand function.  Run on the host:
#   smoke/kcsan.sh [SECONDS]
# Exit status: 0 no report naming kmmscand, 1 some, 2 setup failed.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
secs=${1:-120}
[[ $secs =~ ^[1-9][0-9]*$ ]] || { echo "usage: smoke/kcsan.sh [SECONDS]" >&2; exit 2; }
out=$top/build/kcsan
mkdir -p "$out"
KOBJ=$top/build/kbuild-kcsan harness/build-kernel.sh harness/config/kcsan.config >&2 || exit 2
KOBJ=$top/build/kbuild-kcsan harness/build-selftests.sh "$out/tests" >/dev/null || exit 2
cat > "$out/guest.sh" <<G
KMMSCAND_STRESS_SECONDS=$secs /opt/prog/kmmscand_stress > /tmp/stress.log 2>&1
echo "stress exit status \$?"
grep -E '^(ok|not ok)' /tmp/stress.log
dmesg > /tmp/dmesg.txt
echo "KCSAN reports: \$(grep -c 'BUG: KCSAN' /tmp/dmesg.txt)"
grep -A30 'BUG: KCSAN' /tmp/dmesg.txt || true
G
KERNEL=$top/build/kbuild-kcsan/arch/x86/boot/bzImage VM_TIMEOUT=$((secs * 4 + 600)) \
	FILES=$out/tests/kmmscand_stress harness/vm-run.sh "$out/guest.sh" | tee "$out/result.txt"
n=$(awk '/^BUG: KCSAN/ { n += /kmmscand/ } END { print n + 0 }' "$out/result.txt")
echo "KCSAN reports naming kmmscand: $n"
[ "$n" -eq 0 ]
