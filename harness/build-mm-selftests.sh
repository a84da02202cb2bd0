#!/usr/bin/env bash
# build-mm-selftests.sh OUTDIR BINARY... -- build the named upstream mm
# selftests (tools/testing/selftests/mm of the assembled tree) as static
# binaries in OUTDIR with their own Makefile, against the uapi headers of
# the built kernel ($KOBJ/hdr). The tests themselves are not changed: what
# the 6.12 tree needs to build them is given here (make variables) and
# installed with need_pkgs (liburing, libnuma, libcap static libraries).
# Prints "ok build:mm:NAME" / "not ok build:mm:NAME: why" lines.
source "$(dirname "$0")/lib.sh"
[ $# -ge 2 ] || die "usage: build-mm-selftests.sh OUTDIR BINARY..."
out=$1; shift
need_pkgs gcc make libc6-dev liburing-dev libnuma-dev libcap-dev
hdr=$KOBJ/hdr/include
[ -d "$hdr" ] || die "no uapi headers at $hdr; build the kernel first"
mm=$TREE/tools/testing/selftests/mm
[ -f "$mm/Makefile" ] || die "no $mm/Makefile; assemble the tree first"
mkdir -p "$out"
out=$(cd "$out" && pwd)
targets=()
for b in "$@"; do targets+=("$out/$b"); done
# EXTRA_CFLAGS rather than LDFLAGS: the protection_keys_64 and
# pkey_sighandler_tests_64 rules link without LDFLAGS. -DKSFT_SKIP=4: the
# khugepaged.c of Debian's 6.12 returns KSFT_SKIP without including
# kselftest.h (a stable backport); the value is kselftest.h's, so the
# other tests see an identical redefinition. Warnings are not judged here.
# check_config.sh writes local_config.{h,mk} next to the sources (in the
# assembled tree under build/, never in the repository).
set +e
make -C "$mm" -k -j"$JOBS" OUTPUT="$out" \
	KHDR_INCLUDES="-isystem $hdr" EXTRA_CFLAGS="-static -DKSFT_SKIP=4" \
	"${targets[@]}" >"$out/build.log" 2>&1
set -e
for b in "$@"; do
	if [ -x "$out/$b" ] && ! readelf -l "$out/$b" | grep -q INTERP; then
		echo "ok build:mm:$b"
	elif [ -x "$out/$b" ]; then
		echo "not ok build:mm:$b: dynamically linked ($out/build.log)"
	else
		grep -E "(^|/)$b\.c:.*error|$b\]" "$out/build.log" | head -5 | sed 's/^/    /' >&2
		echo "not ok build:mm:$b: build failed ($out/build.log)"
	fi
done
