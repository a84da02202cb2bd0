#!/usr/bin/env bash
# test.sh -- `make test`: build the patched kernel, run checkpatch on the new
# kernel files, build the kselftests, boot the two-tier VM once running the
# KUnit suites (at boot) and every kselftest, and report per-test results
# ending in "N passed, N failed[, N skipped]".
source "$(dirname "$0")/lib.sh"
results_dir test

start=$(date +%s)
# The judge first: results.py and klog.py against hand-written logs.
if python3 "$HARNESS/test_results.py" > "$out/unit-results.txt" 2>&1; then
	echo "ok harness:results-unittest: $(grep -o '^Ran [0-9]* tests' "$out/unit-results.txt")" >> "$host"
else
	echo "not ok harness:results-unittest: $(grep -E '^(FAIL|ERROR):' "$out/unit-results.txt" |
		head -3 | tr '\n' ' ')" >> "$host"
fi
# need_space: a step that would fill the disk stops before it starts,
# naming the space it needs; one that fits goes on.
msg=
if (need_space "$out" 1 "a 1 MB step") 2>/dev/null &&
   ! msg=$( (need_space "$out" $((1 << 40)) "a 1 EB step") 2>&1) &&
   grep -q "a 1 EB step needs about $((1 << 40)) MB free in $out" <<<"$msg"; then
	echo "ok harness:need-space" >> "$host"
else
	echo "not ok harness:need-space: got '$msg'" >> "$host"
fi
if ! "$HARNESS/build-kernel.sh" 2>&1 | tee "$out/build.txt" >&2; then
	why=$(grep -m1 'error:' "$out/build.txt" | sed 's/^\[harness\] error: //')
	echo "not ok build:kernel: ${why:-see $out/build.txt}" >> "$host"
	finish
fi
echo "ok build:kernel" >> "$host"
log "kernel ready after $(( $(date +%s) - start ))s"
# series.py's spreading of the build lines and MAINTAINERS over the
# series (it reads the pristine tree that the build unpacked).
if python3 "$HARNESS/test_series.py" > "$out/unit-series.txt" 2>&1; then
	echo "ok harness:series-unittest: $(grep -o '^Ran [0-9]* tests' "$out/unit-series.txt")" >> "$host"
else
	echo "not ok harness:series-unittest: $(grep -E '^(FAIL|ERROR):' "$out/unit-series.txt" |
		head -3 | tr '\n' ' ')" >> "$host"
fi

# checkpatch --strict on every new kernel source file and on every patch.
cp=$TREE/scripts/checkpatch.pl
cd "$TOP"
for f in $(git ls-files 'mm/*.[ch]' 'include/*.h' 'kernel/*.[ch]' 'tools/testing/selftests/*.[ch]' 2>/dev/null) \
	 $(find mm include -name '*.[ch]' 2>/dev/null); do
	echo "$f"
done | sort -u > "$out/checkpatch.files"
while read -r f; do
	[ -f "$f" ] || continue
	ign=$(accepted_checks "$f")
	r=$(perl "$cp" --no-tree --strict --terse --show-types ${ign:+--ignore "$ign"} -f "$f" 2>&1 |
		grep -E '(ERROR|WARNING|CHECK):' || true)
	if [ -n "$r" ]; then
		echo "$r" | sed 's/^/    /' >&2
		echo "not ok checkpatch:$f: $(echo "$r" | wc -l) issue(s)" >> "$host"
	else
		echo "ok checkpatch:$f" >> "$host"
	fi
done < "$out/checkpatch.files"
for p in $(grep -v '^#' patches/series 2>/dev/null | awk 'NF {print $1}'); do
	# checked from a copy: inside the repository checkpatch takes the blank
	# context lines of a tracked .patch file for trailing whitespace.
	cp "patches/$p" "$out/cp-$p"
	ign=$(accepted_checks $(sed -n 's#^+++ b/##p' "patches/$p"))
	r=$(perl "$cp" --no-tree --strict --terse --no-signoff --ignore "FILE_PATH_CHANGES${ign:+,$ign}" \
			"$out/cp-$p" 2>&1 | grep -E '(ERROR|WARNING|CHECK):' || true)
	if [ -n "$r" ]; then
		echo "$r" | sed 's/^/    /' >&2
		echo "not ok checkpatch:patches/$p: $(echo "$r" | wc -l) issue(s)" >> "$host"
	else
		echo "ok checkpatch:patches/$p" >> "$host"
	fi
done

# The series description must cover every overlay file and patch.  A
# check that dies prints nothing to count: its exit status is the result.
rc=0
python3 "$HARNESS/series.py" verify-split >> "$host" || rc=$?
[ $rc -eq 0 ] || echo "not ok series-split: exit $rc" >> "$host"

# The host-side checks of the other parts of the repo that the Makefile
# names in HOST_CHECKS (the bench's bookkeeping, for one).
for c in ${HOST_CHECKS:-}; do
	rc=0
	"$TOP/$c" >> "$host" || rc=$?
	[ $rc -eq 0 ] || echo "not ok host-check:$c: exit $rc" >> "$host"
done

# `make help`: every target has its time from the README's table.
if help=$(make -s --no-print-directory help 2>&1) && ! grep -q 'time not measured' <<<"$help"; then
	echo "ok help:every-target-timed" >> "$host"
else
	echo "not ok help:every-target-timed: $(grep -m1 -e 'time not measured' -e rror <<<"$help")" >> "$host"
fi

# kselftests.
"$HARNESS/build-selftests.sh" "$out/tests" >> "$host"
# kmmscand_fault_test needs fault injection, which only the debug kernel
# has: it runs in `make test-debug`.  kmmscand_late_tier_test and
# kmmscand_multi_top_test need other topologies: VMs of their own, below.
tests=()
for b in "$out"/tests/*; do
	[ -f "$b" ] && [ -x "$b" ] || continue
	case "$(basename "$b")" in
	kmmscand_fault_test|kmmscand_late_tier_test|kmmscand_multi_top_test)
		continue ;;
	esac
	tests+=("$b")
done
names=()
{
	echo 'cd /tmp'
	for b in "${tests[@]}"; do
		n=$(basename "$b")
		names+=("$n")
		job_test "$n" "/opt/tests/$n"
	done
	echo 'exit 0'
} > "$out/job"
files=()
for b in "${tests[@]}"; do files+=("tests=$b"); done
log "booting the VM (TCG unless ACCEL=kvm) for KUnit + ${#tests[@]} selftest binaries"
vmrc=0
VM_TIMEOUT=${VM_TIMEOUT:-900} "$HARNESS/vm-job.sh" "$out" "$out/job" "${files[@]}" || vmrc=$?

# Selftests that need a VM of another shape, one short boot each:
# extra_vm NAME BINARY VAR=VALUE... boots harness/vm.sh with the
# variables given and runs BINARY alone.
extra_vm() {
	local name=$1 bin=$2 dir=$out/$1 rc
	shift 2
	mkdir -p "$dir"
	{
		echo 'cd /tmp'
		job_test "$bin" "/opt/tests/$bin"
		echo 'exit 0'
	} > "$dir/job"
	log "booting the $name VM ($*) for $bin"
	rc=0
	env "$@" VM_TIMEOUT="${EXTRA_TIMEOUT:-300}" "$HARNESS/vm-job.sh" "$dir" "$dir/job" \
		"tests=$out/tests/$bin" || rc=$?
	[ $rc -eq 0 ] || echo "not ok $name:vm: status $rc, see $dir/" >> "$host"
	if [ -s "$dir/klog.txt" ]; then
		echo "not ok $name:kernel-log: $(head -n 1 "$dir/klog.txt")" >> "$host"
	fi
	cat "$dir/stdout.log" >> "$out/selftests.log"
	names+=("$bin")
}
cp "$out/stdout.log" "$out/selftests.log"
# The slow tier onlined after the processes: node 1 boots without memory,
# its dimm offline, and the test onlines it.
extra_vm late-tier kmmscand_late_tier_test NODE1_MB=0 DIMM1_MB=256 \
	APPEND=memhp_default_state=offline
# Two top-tier nodes (node 2 as fast as node 0) in front of node 1.
extra_vm multi-top kmmscand_multi_top_test NODE2_MB=512 DIMM1_MB=0

# The host's userland in the guest (virtio-9p root): perf, trace-cmd,
# numactl and numastat against this kernel (harness/guest/userland-check.sh).
ul=$out/userland
mkdir -p "$ul"
need_pkgs "${USERLAND_PKGS[@]}"
"$TOP/workload/build.sh" "$ul/workload"
cp "$HARNESS/guest/userland-check.sh" "$HARNESS/guest/lib.sh" "$ul/"
echo 'exec bash /opt/prog/userland-check.sh' > "$ul/job"
log "booting the VM on the host's root filesystem for the userland checks"
ulrc=0
VM_HOSTFS=1 VM_TIMEOUT=${UL_TIMEOUT:-300} "$HARNESS/vm-job.sh" "$ul" "$ul/job" \
	"$ul/workload" "$ul/userland-check.sh" "$ul/lib.sh" || ulrc=$?
sed 's/^/    | /' "$ul/stderr.log" >&2
grep -E '^(ok|not ok|skip) userland:' "$ul/stdout.log" >> "$host"
if [ $ulrc -ne 0 ] || ! grep -q 'userland:numastat' "$ul/stdout.log"; then
	echo "not ok userland:vm: status $ulrc, see $ul/" >> "$host"
else
	echo "ok userland:vm" >> "$host"
fi
if [ -s "$ul/klog.txt" ]; then
	echo "not ok userland:kernel-log: $(head -n 1 "$ul/klog.txt")" >> "$host"
fi
kunit_suites "$out/kunit-suites" ||
	echo "not ok kunit:suites: no struct kunit_suite named in mm/tests/" >> "$host"
finish --console "$out/console.log" --stdout "$out/selftests.log" \
	--suites "$out/kunit-suites" --selftests "$(IFS=,; echo "${names[*]}")" \
	--vm-rc "$vmrc" --expected-skips "$HARNESS/expected-skips"
