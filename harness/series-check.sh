#!/usr/bin/env bash
# series-check.sh -- `make series-check`: export the series, `git am` it onto
# a pristine 6.12 tree and, after every patch, build it with
# CONFIG_KMMSCAND=y and =n, boot the =y kernel in the VM (boot smoke: a
# short job, no kernel warning) and run checkpatch --strict on the patch;
# then W=1 and sparse on the new objects, kernel-doc on the new files
# (every non-static function documented), and the kselftest build.
# Prints "ok"/"not ok" per check and the usual final count.
# SERIES_BOOT=0 skips the boot smoke (SMOKE_TIMEOUT: seconds per boot).
# SERIES_BUILD=0 (`make series-lint`, a few minutes) keeps what needs no
# kernel build: git am, checkpatch of every patch, kernel-doc warnings,
# the kselftest build.
source "$(dirname "$0")/lib.sh"
SERIES_BUILD=${SERIES_BUILD:-1}
[ "$SERIES_BUILD" = 1 ] || SERIES_BOOT=0
need_pkgs "${BUILD_PKGS[@]}" "${VM_PKGS[@]}" sparse git
"$HARNESS/assemble.sh" >/dev/null
out=$BUILD/series-check
series=$BUILD/series
host=$out/host.txt
rm -rf "$host" "$out"/boot-*; mkdir -p "$out"
: > "$host"
res() { echo "$1" >> "$host"; echo "$1" >&2; }
start=$(date +%s)
python3 "$HARNESS/series.py" export "$series" >/dev/null || { res "not ok series:export"; exit 1; }
res "ok series:export"

tree=$out/linux
rm -rf "$tree"
git clone -q "$BUILD/series-git" "$tree"
git -C "$tree" checkout -q base
git -C "$tree" config user.name check; git -C "$tree" config user.email check@localhost
cc=gcc; command -v ccache >/dev/null && cc="ccache gcc"
export CCACHE_BASEDIR=$out
kobj=$out/kbuild
mkdir -p "$kobj"
frag=$HARNESS/config/kmmscand.config
configure() { # configure KOBJ [extra fragment]
	make -s -C "$tree" O="$1" tinyconfig >/dev/null
	KCONFIG_CONFIG="$1/.config" "$tree/scripts/kconfig/merge_config.sh" -m -O "$1" \
		"$1/.config" "$frag" "${@:2}" >/dev/null 2>&1
	make -s -C "$tree" O="$1" olddefconfig >/dev/null
}
# CONFIG_KMMSCAND=n: the hooks must compile out, at every step.
kobjn=$out/kbuild-n
mkdir -p "$kobjn"
printf 'CONFIG_KMMSCAND=n\n' > "$out/off.config"
build_off() { # build_off N NAME
	local t0=$SECONDS
	[ $reconf_off = 1 ] && configure "$kobjn" "$out/off.config"
	reconf_off=0
	if grep -q '^CONFIG_KMMSCAND=y' "$kobjn/.config"; then
		res "not ok series:build-off-after:$2: could not turn CONFIG_KMMSCAND off"
	elif make -s -C "$tree" O="$kobjn" CC="$cc" -j"$JOBS" bzImage >"$out/build-off-$1.log" 2>&1; then
		res "ok series:build-off-after:$2 ($((SECONDS - t0))s)"
	else
		{ grep -E 'error' "$out/build-off-$1.log" || true; } | head -10 | sed 's/^/    /' >&2
		res "not ok series:build-off-after:$2: see $out/build-off-$1.log"
	fi
	t_off=$((t_off + SECONDS - t0))
}
# Boot smoke: the kernel after each patch boots in the two-tier VM, runs a
# short job (long enough for the threads to make a few rounds) and logs no
# panic/Oops/BUG/WARNING/lockdep report and no failed KUnit test.  The
# kernels are kept and booted after all the builds, each under the VM lock
# that the other VM users of the machine take too.
smoke=$out/smoke
if [ "${SERIES_BOOT:-1}" = 1 ]; then
	mkdir -p "$smoke"
	printf '%s\n' 'cat /proc/version' 'sleep 3' \
		'grep -E "^kmmscand_(mm_scan|pte_scanned|candidate|promote_success) " /proc/vmstat' \
		'exit 0' > "$smoke/job"
fi
t_build=0 t_off=0 t_boot=0 t_lock=0
build_on() { # build_on N NAME
	local t0=$SECONDS
	[ $reconf_on = 1 ] && configure "$kobj"
	reconf_on=0
	if make -s -C "$tree" O="$kobj" CC="$cc" -j"$JOBS" bzImage >"$out/build-$1.log" 2>&1; then
		res "ok series:build-after:$2 ($((SECONDS - t0))s)"
		if [ "${SERIES_BOOT:-1}" = 1 ]; then
			mkdir -p "$out/boot-$1"
			cp "$kobj/arch/x86/boot/bzImage" "$out/boot-$1/bzImage"
			boots+=("$1:$2")
		fi
	else
		res "not ok series:build-after:$2: see $out/build-$1.log"
	fi
	t_build=$((t_build + SECONDS - t0))
}
# Files that are no input of the kernel build, and files that only a
# CONFIG_KMMSCAND=y kernel compiles (upstream files include nothing of
# kmmscand's but <linux/kmmscand.h>; checked below).
NOT_KERNEL='^(Documentation/|tools/|MAINTAINERS$)'
ONLY_ON='^(mm/kmmscand[a-z_]*\.[ch]|mm/tests/kmmscand[a-z_-]*\.[ch]|include/trace/events/kmmscand\.h)$'
last_kernel='' last_off='' reconf_on=1 reconf_off=1
boots=()
boot() { # boot N NAME
	local d=$out/boot-$1 rc t0 t1
	t0=$(date +%s)
	set +e
	flock /tmp/kmmscand-vm.lock env KERNEL="$d/bzImage" \
		VM_TIMEOUT="${SMOKE_TIMEOUT:-300}" \
		"$HARNESS/vm-job.sh" -q "$d" "$smoke/job" >"$d/vm.log" 2>&1
	rc=$?
	set -e
	t1=$(date +%s)
	t_boot=$((t_boot + $(cat "$d/seconds" 2>/dev/null || echo 0)))
	t_lock=$((t_lock + t1 - t0 - $(cat "$d/seconds" 2>/dev/null || echo 0)))
	if [ $rc -ne 0 ]; then
		res "not ok series:boot-after:$2: status $rc (see $d/console.log)"
	elif [ -s "$d/klog.txt" ]; then
		head -5 "$d/klog.txt" | sed 's/^/    /' >&2
		res "not ok series:boot-after:$2: $(head -1 "$d/klog.txt")"
	elif grep -qE '^[[:space:]]*not ok ' "$d/console.log"; then
		grep -E '^[[:space:]]*not ok ' "$d/console.log" | head -5 | sed 's/^/    /' >&2
		res "not ok series:boot-after:$2: a KUnit test failed (see $d/console.log)"
	else
		res "ok series:boot-after:$2 ($(cat "$d/seconds")s)"
	fi
}
n=0
for p in "$series"/0[0-9][0-9][0-9]-*.patch; do
	case "$(basename "$p")" in 0000-*) continue ;; esac
	n=$((n + 1))
	name=$(basename "$p")
	if ! git -C "$tree" am -q "$p" >"$out/am.log" 2>&1; then
		res "not ok series:am:$name: does not apply ($(head -1 "$out/am.log"))"
		break
	fi
	changed=$(sed -n 's#^+++ b/##p' "$p")
	# The kernel is configured again only when a Kconfig file changed.
	if grep -q '\(^\|/\)Kconfig' <<<"$changed"; then reconf_on=1 reconf_off=1; fi
	# A patch that changes no input of the kernel build (documentation,
	# selftests, MAINTAINERS) leaves the kernels of the previous patch:
	# they were built and are booted already.
	if [ "$SERIES_BUILD" != 1 ]; then
		:
	elif [ -n "$last_kernel" ] && ! grep -qvE "$NOT_KERNEL" <<<"$changed"; then
		res "ok series:build-after:$name (no kernel file changed: the kernels after $last_kernel)"
		res "ok series:build-off-after:$name (no kernel file changed: the kernels after $last_kernel)"
	else
		last_kernel=$name
		build_on "$n" "$name"
		# With CONFIG_KMMSCAND=n no file of kmmscand's own is compiled, so
		# a patch changing only those leaves the =n kernel as it was.
		if [ -n "$last_off" ] && ! grep -qvE "$NOT_KERNEL|$ONLY_ON" <<<"$changed"; then
			res "ok series:build-off-after:$name (only files compiled with CONFIG_KMMSCAND=y changed: the =n kernel after $last_off)"
		else
			last_off=$name
			build_off "$n" "$name"
		fi
	fi
	ign=$(accepted_checks $changed)
	# checkpatch asks whether MAINTAINERS needs updating whenever a patch
	# adds a file; it does not when an F: pattern already covers them all.
	new=$(git -C "$tree" diff --name-only --diff-filter=A HEAD~1 HEAD)
	if [ -n "$new" ] && ! grep -qx MAINTAINERS <<<"$changed" &&
		python3 "$HARNESS/series.py" maintained "$tree/MAINTAINERS" $new >&2; then
		ign=${ign:+$ign,}FILE_PATH_CHANGES
	fi
	r=$(perl "$tree/scripts/checkpatch.pl" --strict --terse --no-tree ${ign:+--ignore "$ign"} "$p" 2>&1 |
			grep -E '(ERROR|WARNING|CHECK):' || true)
	if [ -n "$r" ]; then
		echo "$r" | sed 's/^/    /' >&2
		res "not ok series:checkpatch:$name: $(echo "$r" | wc -l) issue(s)"
	else
		res "ok series:checkpatch:$name"
	fi
done
# What the =n shortcut above assumes: no upstream file includes a header
# of kmmscand's other than <linux/kmmscand.h>, and mm/Makefile builds
# kmmscand's objects only with CONFIG_KMMSCAND.
inc=$(cd "$tree" && git grep -nE '#include [<"](\.\./)*(trace/events/|tests/)?kmmscand' -- '*.c' '*.h' \
	':!mm/kmmscand*' ':!mm/tests/kmmscand*' ':!tools/' ':!include/trace/events/kmmscand.h' |
	grep -v '<linux/kmmscand.h>' || true)
mk=$(grep -n 'kmmscand' "$tree/mm/Makefile" | grep -vE 'obj-\$\(CONFIG_KMMSCAND(_KUNIT_TEST)?\)' || true)
if [ -n "$inc$mk" ]; then
	printf '%s\n' $inc $mk | head -5 | sed 's/^/    /' >&2
	res "not ok series:only-on-files: a file built with CONFIG_KMMSCAND=n uses kmmscand's own files"
else
	res "ok series:only-on-files"
fi
# The final tree must use the whole fragment.
configure "$kobj"
new_c=$(cd "$tree" && git diff --name-only --diff-filter=A base HEAD -- 'mm/*.c')
new_all=$(cd "$tree" && git diff --name-only --diff-filter=A base HEAD -- '*.c' '*.h' | grep -v '^tools/')
objs=$(for f in $new_c; do echo "${f%.c}.o"; done)
if [ "$SERIES_BUILD" = 1 ] && [ -n "$objs" ]; then
	for f in $new_c; do touch "$tree/$f"; done
	make -s -C "$tree" O="$kobj" CC="$cc" W=1 C=2 -j"$JOBS" $objs >"$out/w1-sparse.log" 2>&1 || true
	# Drop the sparse warnings accepted in patches/sparse.accepted.
	{ grep -E 'warning|error' "$out/w1-sparse.log" || true; } | grep -v '^make' |
		while IFS= read -r line; do
			keep=1
			while read -r f re; do
				case "$f" in ''|'#'*) continue ;; esac
				if [[ $line == *"/$f:"* ]] && [[ $line =~ $re ]]; then keep=0; fi
			done < "$TOP/patches/sparse.accepted"
			[ $keep = 1 ] && echo "$line"
		done > "$out/w1-sparse.new" || true
	if [ -s "$out/w1-sparse.new" ]; then
		head -20 "$out/w1-sparse.new" | sed 's/^/    /' >&2
		res "not ok series:W=1+sparse: $(wc -l < "$out/w1-sparse.new") warning(s) in new files"
	else
		res "ok series:W=1+sparse ($(echo $objs); accepted: $(grep -cvE '^(#|$)' "$TOP/patches/sparse.accepted"))"
	fi
fi
# Touched upstream files: W=1 warnings that mention kmmscand.
touched=$(cd "$tree" && git diff --name-only --diff-filter=M base HEAD -- '*.c' | grep -v '^tools/')
tobjs=$(for f in $touched; do echo "${f%.c}.o"; done)
if [ "$SERIES_BUILD" = 1 ] && [ -n "$tobjs" ]; then
	for f in $touched; do touch "$tree/$f"; done
	make -s -C "$tree" O="$kobj" CC="$cc" W=1 -j"$JOBS" $tobjs >"$out/w1-touched.log" 2>&1 || true
	if grep -iE 'warning' "$out/w1-touched.log" | grep -i kmmscand >/dev/null; then
		res "not ok series:W=1-touched: warnings mentioning kmmscand (see $out/w1-touched.log)"
	else
		res "ok series:W=1-touched ($(echo $tobjs))"
	fi
fi
kd=$( (cd "$tree" && perl scripts/kernel-doc -none -Wall $new_all) 2>&1 | grep -v '^$' || true)
# Every non-static function of the new files has a kernel-doc comment.
[ "$SERIES_BUILD" = 1 ] || new_c=
for f in $new_c; do
	docd=$(cd "$tree" && perl scripts/kernel-doc -rst "$f" 2>/dev/null |
		sed -n 's/^\.\. c:function:: .*[ *]\([A-Za-z0-9_]*\) (.*/\1/p')
	for sym in $(nm -g --defined-only "$kobj/${f%.c}.o" | awk '$2 ~ /^[TW]$/ && $3 ~ /^_*kmmscand/ { print $3 }'); do
		grep -qx "$sym" <<<"$docd" || kd+=${kd:+$'\n'}"$f: $sym() is not static and has no kernel-doc comment"
	done
done
if [ -n "$kd" ]; then
	echo "$kd" | head -20 | sed 's/^/    /' >&2
	res "not ok series:kernel-doc: $(echo "$kd" | wc -l) issue(s)"
else
	res "ok series:kernel-doc"
fi
# The selftests build with the kselftest Makefile (tools/testing/selftests/mm,
# its CFLAGS, the exported uapi headers), without warnings.
make -s -C "$tree" O="$kobj" headers >/dev/null 2>&1 || true
st=$out/kselftest-mm
rm -rf "$st"; mkdir -p "$st"
sts=$(selftest_programs "$tree/tools/testing/selftests/mm" | sed 's#.*/\(.*\)\.c$#'"$st"'/\1#')
if [ -z "$sts" ]; then
	res "not ok series:selftests-build: no kmmscand selftests in the series"
elif make -C "$tree/tools/testing/selftests/mm" OUTPUT="$st" \
		KHDR_INCLUDES="-isystem $kobj/usr/include" $sts >"$out/selftests.log" 2>&1 &&
		! grep -q 'warning:' "$out/selftests.log"; then
	res "ok series:selftests-build ($(echo "$sts" | wc -w) binaries)"
else
	{ grep -E 'warning|error|Stop' "$out/selftests.log" || tail -5 "$out/selftests.log"; } |
		head -10 | sed 's/^/    /' >&2
	res "not ok series:selftests-build: see $out/selftests.log"
fi
for b in "${boots[@]}"; do
	boot "${b%%:*}" "${b#*:}"
	rm -f "$out/boot-${b%%:*}/bzImage"
done
log "series-check took $(( $(date +%s) - start ))s: builds ${t_build}s (=y) + ${t_off}s (=n), boots ${t_boot}s, waiting for the VM lock ${t_lock}s"
python3 "$HARNESS/results.py" --host "$host"
