#!/usr/bin/env bash
# build-selftests.sh OUTDIR -- build every kmmscand program of
# tools/testing/selftests/mm in the assembled tree (a kmmscand*.c with a
# main: TEST_HARNESS_MAIN or main()) as a static binary in OUTDIR, against
# the uapi headers of the built kernel and the kernel's own
# kselftest_harness.h, linked with mm/vm_util.c and the other kmmscand*.c
# (the shared helpers) as the selftests Makefile links them.
# Prints "ok build:selftest:NAME" / "not ok build:selftest:NAME: ..." lines.
source "$(dirname "$0")/lib.sh"
[ $# -eq 1 ] || die "usage: build-selftests.sh OUTDIR"
out=$1
need_pkgs gcc libc6-dev
mkdir -p "$out"
st=$TREE/tools/testing/selftests
hdr=$KOBJ/hdr/include
[ -d "$hdr" ] || die "no uapi headers at $hdr; build the kernel first"
shopt -s nullglob
mapfile -t progs < <(selftest_programs "$st/mm")
helpers=()
for src in "$st"/mm/kmmscand*.c; do
	[[ " ${progs[*]} " == *" $src "* ]] || helpers+=("$src")
done
for src in "${progs[@]}"; do
	name=$(basename "$src" .c)
	# -Wno-unused-parameter -Wno-clobbered: upstream kselftest_harness.h
	# itself trips those two under -Wextra (unused 'variant'/'ucontext',
	# 'child' across setjmp in every TEST_F wrapper).
	if gcc -static -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-clobbered \
		-Werror -D_GNU_SOURCE -isystem "$hdr" \
		-I "$st" -I "$st/mm" -o "$out/$name" "$src" "${helpers[@]}" "$st/mm/vm_util.c" -lpthread -lm \
		>"$out/$name.build.log" 2>&1; then
		echo "ok build:selftest:$name"
	else
		sed 's/^/    /' "$out/$name.build.log" | head -30 >&2
		echo "not ok build:selftest:$name: compile failed ($out/$name.build.log)"
	fi
done
