#!/usr/bin/env bash
# Assemble the tree, configure and build bzImage (+ uapi headers for tests).
source "$(dirname "$0")/lib.sh"

"$HARNESS/assemble.sh"
"$HARNESS/config.sh" "$@"
cc=gcc
command -v ccache >/dev/null && cc="ccache gcc"
need_space "$BUILD" 1024 "building the kernel"
log "building kernel in $KOBJ ($JOBS jobs)"
start=$(date +%s)
if ! make -s -C "$TREE" O="$KOBJ" CC="$cc" -j"$JOBS" bzImage >"$KOBJ/build.log" 2>&1; then
	grep -E 'error|Error' "$KOBJ/build.log" | head -40 >&2
	die "kernel build failed; full log: $KOBJ/build.log"
fi
grep -E 'warning:' "$KOBJ/build.log" | grep -E 'kmmscand' >&2 && die "warnings in kmmscand code (see $KOBJ/build.log)"
make -s -C "$TREE" O="$KOBJ" headers_install INSTALL_HDR_PATH="$KOBJ/hdr" >/dev/null
log "kernel built in $(( $(date +%s) - start ))s: $KOBJ/arch/x86/boot/bzImage"
