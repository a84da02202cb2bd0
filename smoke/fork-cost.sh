#!/usr/bin/env bash
# fork-cost.sh -- what kmmscand's mm registry costs fork() and exit():
# smoke/fork_exit (fork + _exit + waitpid, median of 5 runs of 3000) in the
# two-tier VM on the `make test` kernel (kmmscand enabled, then disabled)
# and on the same configuration with CONFIG_KMMSCAND=n (built in
# build/kbuild-nokmm). Run on the host: smoke/fork-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
out=$top/build/fork-cost
mkdir -p "$out"
gcc -O2 -Wall -static -o "$out/fork_exit" smoke/fork_exit.c
harness/build-kernel.sh >&2
grep -v '^CONFIG_KMMSCAND' harness/config/kmmscand.config > "$out/nokmm.config"
echo 'CONFIG_KMMSCAND=n' >> "$out/nokmm.config"
BASE_FRAGMENT=$out/nokmm.config KOBJ=$top/build/kbuild-nokmm harness/build-kernel.sh >&2

cat > "$out/guest.sh" <<'G'
k=/sys/kernel/mm/kmmscand/enabled
run() {
	for mb in 0 64; do
		echo "$1 $(/opt/prog/fork_exit 3000 5 $mb)"
	done
}
if [ -w $k ]; then
	echo 1 > $k; run kmmscand=y,enabled=1
	echo 0 > $k; run kmmscand=y,enabled=0
else
	run kmmscand=n
fi
G
for k in kbuild kbuild-nokmm; do
	KERNEL=$top/build/$k/arch/x86/boot/bzImage FILES=$out/fork_exit \
		harness/vm-run.sh "$out/guest.sh" | grep '^kmmscand='
done
