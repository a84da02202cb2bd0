#!/usr/bin/env bash
# config-variants.sh -- build and boot kmmscand in a configuration that
# `make test` does not: CONFIG_MEMCG=n and CONFIG_TRANSPARENT_HUGEPAGE=n
# together (no mm->owner, HPAGE_PMD_* unusable), with the node masks of a
# distribution kernel (CONFIG_NODES_SHIFT=10: a nodemask_t is 128 bytes).
# The kernel must build without a warning in kmmscand code, no function
# on kmmscand's hint-fault path may use more than FAULT_STACK_MAX bytes of
# stack (scripts/checkstack.pl), and it must boot in the two-tier VM and
# pass the boot test and the promotion, memory-policy and throttle tests.
# Not part of CI: a cold build of this configuration takes ~16 min.
source "$(dirname "$0")/lib.sh"
out=$BUILD/variants
frag=$out/nomemcg-nothp.config
mkdir -p "$out"
grep -vE '^CONFIG_(TRANSPARENT_HUGEPAGE|MEMCG|READ_ONLY_THP_FOR_FS|NODES_SHIFT)[_=]' \
	"$HARNESS/config/kmmscand.config" > "$frag"
printf 'CONFIG_TRANSPARENT_HUGEPAGE=n\nCONFIG_MEMCG=n\nCONFIG_READ_ONLY_THP_FOR_FS=n\nCONFIG_NODES_SHIFT=10\n' >> "$frag"
export KOBJ=$BUILD/kbuild-nomemcg-nothp
BASE_FRAGMENT=$frag "$HARNESS/build-kernel.sh"
for o in CONFIG_MEMCG CONFIG_TRANSPARENT_HUGEPAGE; do
	grep -q "^$o=y" "$KOBJ/.config" && die "$o is still set in $KOBJ/.config"
done
grep -q '^CONFIG_KMMSCAND=y' "$KOBJ/.config" || die "CONFIG_KMMSCAND is not set in $KOBJ/.config"
grep -q '^CONFIG_NODES_SHIFT=10$' "$KOBJ/.config" || die "CONFIG_NODES_SHIFT is not 10 in $KOBJ/.config"

# A hint fault runs kmmscand_record.c on the task's stack, under the page
# table lock: no function there may keep node masks (128 bytes each here)
# or other large objects on it.  checkstack.pl's figure for a function is
# twice its frame on x86_64 (it adds the sub and the add of %rsp):
# kmmscand_record_access() is 304 (a 152-byte frame, of which 56 are the
# struct kmmscand_offer it hands to the decision step), and one node mask
# more would take it to 560, past 384.
FAULT_STACK_MAX=${FAULT_STACK_MAX:-384}
stack=$(objdump -d "$KOBJ/mm/kmmscand_record.o" |
	perl "$TREE/scripts/checkstack.pl" x86_64 0 |
	awk -v max="$FAULT_STACK_MAX" '{ n = $NF; sub(/.*:/, "", n) }
		n + 0 > max { print }')
if [ -n "$stack" ]; then
	echo "$stack" | sed 's/^/    /' >&2
	echo "not ok stack: kmmscand_record.o functions over $FAULT_STACK_MAX bytes of stack"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "ok stack: no kmmscand_record.o function over $FAULT_STACK_MAX bytes of stack"
"$HARNESS/build-selftests.sh" "$out/sel" >/dev/null
tests="kmmscand_boot_test:all kmmscand_promote_test:hot_promoted_cold_stays kmmscand_mempolicy_test:all kmmscand_throttle_test:all"
cat > "$out/job.sh" <<'G'
#!/bin/sh
mount -t tracefs none /sys/kernel/tracing 2>/dev/null
for bt in $1; do
	b=${bt%%:*} t=${bt#*:}
	if [ "$t" = all ]; then /opt/prog/$b; else /opt/prog/$b -t "$t"; fi
done
G
files=""
for bt in $tests; do files="$files $out/sel/${bt%%:*}"; done
FILES="$files" "$HARNESS/vm-run.sh" "$out/job.sh" "$tests" < /dev/null | tee "$out/results.log"
# A skip here is a failure: every test listed runs in this VM.
pass=$(grep -E '^ok [0-9]+ ' "$out/results.log" | grep -vc '# SKIP' || true)
fail=$(grep -cE '^not ok [0-9]+ |^ok [0-9]+ .*# SKIP' "$out/results.log" || true)
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
