#!/usr/bin/env bash
# config-variants.sh -- build and boot kmmscand in a configuration that
# `make test` does not: CONFIG_MEMCG=n and CONFIG_TRANSPARENT_HUGEPAGE=n
# together (no mm->owner, HPAGE_PMD_* unusable).  The kernel must build
# without a warning in kmmscand code, boot in the two-tier VM, and pass
# the boot test and the promotion, memory-policy and throttle tests.
# Not part of CI: a cold build of this configuration takes ~16 min.
source "$(dirname "$0")/lib.sh"
out=$BUILD/variants
frag=$out/nomemcg-nothp.config
mkdir -p "$out"
grep -vE '^CONFIG_(TRANSPARENT_HUGEPAGE|MEMCG|READ_ONLY_THP_FOR_FS)[_=]' \
	"$HARNESS/config/kmmscand.config" > "$frag"
printf 'CONFIG_TRANSPARENT_HUGEPAGE=n\nCONFIG_MEMCG=n\nCONFIG_READ_ONLY_THP_FOR_FS=n\n' >> "$frag"
export KOBJ=$BUILD/kbuild-nomemcg-nothp
BASE_FRAGMENT=$frag "$HARNESS/build-kernel.sh"
for o in CONFIG_MEMCG CONFIG_TRANSPARENT_HUGEPAGE; do
	grep -q "^$o=y" "$KOBJ/.config" && die "$o is still set in $KOBJ/.config"
done
grep -q '^CONFIG_KMMSCAND=y' "$KOBJ/.config" || die "CONFIG_KMMSCAND is not set in $KOBJ/.config"
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
