#!/usr/bin/env bash
# mkinitramfs.sh OUT.cpio JOBSCRIPT [FILE...]
# Builds an uncompressed initramfs with busybox-static, harness/guest/init,
# the job script (/etc/kmm/job) and the given files (in /opt/prog).
# Files named DIR=FILE go to /opt/DIR instead.
source "$(dirname "$0")/lib.sh"
[ $# -ge 2 ] || die "usage: mkinitramfs.sh OUT.cpio JOBSCRIPT [FILE...]"
need_pkgs "${VM_PKGS[@]}"
out=$1 job=$2; shift 2
root=$(mktemp -d "$BUILD/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,etc/kmm,proc,sys,dev,tmp,opt/prog,opt/tests,root}
cp /bin/busybox "$root/bin/busybox"
cp "$HARNESS/guest/init" "$root/init"
chmod 755 "$root/init"
cp "$job" "$root/etc/kmm/job"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
for f in "$@"; do
	dir=prog
	case "$f" in *=*) dir=${f%%=*}; f=${f#*=} ;; esac
	[ -e "$f" ] || die "no such file: $f"
	mkdir -p "$root/opt/$dir"
	cp -a "$f" "$root/opt/$dir/"
done
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) > "$out.tmp"
mv "$out.tmp" "$out"
