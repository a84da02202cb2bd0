#!/usr/bin/env bash
# test-mm.sh -- `make test-mm`: do the kernel's own mm selftests give the
# same results while kmmscand promotes their memory?
#
# Builds the kernel (the `make test` kernel: harness/config/kmmscand.config
# carries what the mm selftests need), the upstream selftests of
# tools/testing/selftests/mm listed in harness/test-mm/tests for MM_SET
# (static, harness/build-mm-selftests.sh) and harness/test-mm/mm_balloon,
# boots the two-tier VM once and runs the set twice (harness/test-mm/guest.sh):
#   off  kmmscand disabled
#   on   kmmscand aggressive (100 ms scans, one access = hot, TLB flush,
#        no rate limit)
# both with the tests' memory on node 1 under the default memory policy:
# mm_balloon holds node 0 at its low watermark before every test, demotion
# is enabled so that kswapd makes room for promotion.
# harness/test-mm/compare.py compares the passes per test and subtest; a
# difference fails the run unless harness/test-mm/expected-diffs lists it
# with its reason, the evidence this run must show that its cause lies
# outside kmmscand, and a reproducer (harness/test-mm/repro/) that shows
# the cause without kmmscand in the same boot; harness/test-mm/known-limits
# lists what single tests cannot show. compare.py's own rules are unit
# tested (harness/test-mm/test_compare.py) before the build.
#
# Variables: MM_SET=full|ci (default full), CPUS (default 3: `migration`
# needs 3), NODE1_MB (default 2048), VM_TIMEOUT (default: from the set),
# NODE0_MB/ACCEL as for every VM. Logs and the comparison table: build/test-mm/. Ends with
# "N passed, N failed[, N skipped]"; exit status 1 on any failure.
source "$(dirname "$0")/lib.sh"
usage() { echo "usage: make test-mm [MM_SET=full|ci]   (harness/test-mm.sh takes no arguments)" >&2; exit 2; }
[ $# -eq 0 ] || usage
MM_SET=${MM_SET:-full}
sets=$(awk '/^[^#]/ && NF >= 4 { print $2 }' "$HARNESS/test-mm/tests" | tr ',' '\n' | sort -u | paste -sd' ')
case " $sets " in
*" $MM_SET "*) ;;
*) echo "test-mm: unknown MM_SET '$MM_SET' (sets: $sets)" >&2; usage ;;
esac
export CPUS=${CPUS:-3}
# Node 1 of 2 GB: the tests run there, and khugepaged's
# collapse_compound_extreme alone holds 512 partially mapped THPs (1 GB).
export NODE1_MB=${NODE1_MB:-2048}
[[ $CPUS =~ ^[1-9][0-9]*$ ]] || { echo "test-mm: CPUS must be a positive integer" >&2; usage; }
td=$HARNESS/test-mm
results_dir test-mm
finish() {
	python3 "$td/compare.py" --host "$host" --tests "$out/tests.list" \
		--expected "$td/expected-diffs" --known "$td/known-limits" --set "$MM_SET" \
		--table "$out/table.txt" "$@" | tee "$out/results.txt"
	exit "${PIPESTATUS[0]}"
}

start=$(date +%s)
# compare.py's rules first, on synthetic passes (seconds): a broken
# comparison must not judge an hour of VM time.
if python3 -m unittest discover -s "$td" -p 'test_compare.py' > "$out/unit.txt" 2>&1; then
	echo "ok compare:unit: $(grep -m1 '^Ran ' "$out/unit.txt")" >> "$host"
else
	sed 's/^/    /' "$out/unit.txt" | tail -30 >&2
	echo "not ok compare:unit: see $out/unit.txt" >> "$host"
	: > "$out/stdout.log"; : > "$out/console.log"; : > "$out/tests.list"
	finish --stdout "$out/stdout.log" --console "$out/console.log"
fi
# The set: "ID TIMEOUT TOKENS..." lines, in order.
awk -v set="$MM_SET" '/^[^#]/ && NF >= 4 { n = split($2, s, ","); for (i = 1; i <= n; i++) if (s[i] == set) {
	line = $1 " " $3; for (j = 4; j <= NF; j++) line = line " " $j; print line; break } }' \
	"$td/tests" > "$out/tests.list"
ntests=$(wc -l < "$out/tests.list")
[ "$ntests" -gt 0 ] || die "MM_SET=$MM_SET selects no test"

if ! "$HARNESS/build-kernel.sh" 2>&1 | tee "$out/build.txt" >&2; then
	why=$(grep -m1 'error:' "$out/build.txt" | sed 's/^\[harness\] error: //')
	echo "not ok build:kernel: ${why:-see $out/build.txt}" >> "$host"
	: > "$out/stdout.log"; : > "$out/console.log"
	finish --stdout "$out/stdout.log" --console "$out/console.log"
fi
echo "ok build:kernel" >> "$host"
kernel_s=$(( $(date +%s) - start ))

# Binaries: the first token of each command that is no setting or flag.
mapfile -t bins < <(awk '{ for (i = 3; i <= NF; i++) if ($i !~ /=/ && $i !~ /^[+@]/) { print $i; break } }' \
	"$out/tests.list" | sort -u)
"$HARNESS/build-mm-selftests.sh" "$out/tests" "${bins[@]}" > "$out/build-mm.txt"
cat "$out/build-mm.txt" >> "$host"
# A test whose binary did not build cannot run: it is failed by the build
# line above and left out of the VM job.
if grep -q '^not ok' "$out/build-mm.txt"; then
	bad=$(sed -n 's/^not ok build:mm:\([^:]*\):.*/\1/p' "$out/build-mm.txt")
	cp "$out/tests.list" "$out/tests.all"
	awk -v bad=" $(echo $bad) " '{ for (i = 3; i <= NF; i++) if ($i !~ /=/ && $i !~ /^[+@]/) { if (index(bad, " " $i " ")) next; break } print }' \
		"$out/tests.all" > "$out/tests.list"
fi
if ! gcc -static -O2 -Wall -Wextra -Werror -isystem "$KOBJ/hdr/include" \
	-o "$out/mm_balloon" "$td/mm_balloon.c" >"$out/mm_balloon.build.log" 2>&1; then
	cat "$out/mm_balloon.build.log" >&2
	echo "not ok build:mm_balloon: see $out/mm_balloon.build.log" >> "$host"
	: > "$out/stdout.log"; : > "$out/console.log"
	finish --stdout "$out/stdout.log" --console "$out/console.log"
fi
echo "ok build:mm_balloon" >> "$host"
# The reproducers (harness/test-mm/repro/*.c) run in the same boot after
# both passes, with kmmscand disabled.
repros=()
mkdir -p "$out/repro"
for src in "$td"/repro/*.c; do
	[ -f "$src" ] || continue
	n=$(basename "$src" .c)
	if gcc -static -O2 -Wall -Wextra -Werror -o "$out/repro/$n" "$src" >"$out/repro/$n.build.log" 2>&1; then
		echo "ok build:repro:$n" >> "$host"
		repros+=("$n")
	else
		sed 's/^/    /' "$out/repro/$n.build.log" | head -20 >&2
		echo "not ok build:repro:$n: see $out/repro/$n.build.log" >> "$host"
	fi
done

printf 'MM_PASSES="off on"\n' > "$out/mm.conf"
printf 'cd /tmp\nexec sh /opt/prog/guest.sh\n' > "$out/job"
files=("prog=$td/guest.sh" "prog=$HARNESS/guest/lib.sh" "prog=$out/tests.list" "prog=$out/mm.conf" "prog=$out/mm_balloon")
for n in "${repros[@]}"; do files+=("repro=$out/repro/$n"); done
while read -r b; do files+=("tests=$out/tests/$b"); done < <(
	awk '{ for (i = 3; i <= NF; i++) if ($i !~ /=/ && $i !~ /^[+@]/) { print $i; break } }' "$out/tests.list" | sort -u)

# Budget: twice the sum of the per-test timeouts would be hours; the
# default is what a run needs here with room to spare, plus boot.
if [ -z "${VM_TIMEOUT:-}" ]; then
	case $MM_SET in ci) VM_TIMEOUT=1800 ;; *) VM_TIMEOUT=7200 ;; esac
fi
export VM_TIMEOUT
log "booting the VM (CPUS=$CPUS) for $(wc -l < "$out/tests.list") mm selftests x 2 passes (MM_SET=$MM_SET, budget ${VM_TIMEOUT}s)"
vstart=$(date +%s)
vmrc=0
"$HARNESS/vm-job.sh" -q "$out" "$out/job" "${files[@]}" || vmrc=$?
vm_s=$(( $(date +%s) - vstart ))
printf 'kernel_seconds %s\nvm_seconds %s\ntotal_seconds %s\n' "$kernel_s" "$vm_s" \
	"$(( $(date +%s) - start ))" > "$out/timing.txt"
log "timing: kernel ready after ${kernel_s}s, VM ${vm_s}s, total $(( $(date +%s) - start ))s"
finish --stdout "$out/stdout.log" --console "$out/console.log" --vm-rc "$vmrc" \
	--repros "$(IFS=,; echo "${repros[*]}")"
