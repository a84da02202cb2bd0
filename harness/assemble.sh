#!/usr/bin/env bash
# Produce build/linux = pristine Debian 6.12 source + overlay files + patches.
# Idempotent: only files whose content changes are rewritten, so kbuild
# rebuilds as little as possible. Refuses when a patch does not apply.
source "$(dirname "$0")/lib.sh"

need_pkgs "${BUILD_PKGS[@]}"

# The pristine and assembled trees take 1.7 GB each, a kernel build 0.3-0.5 GB.
if [ ! -f "$PRISTINE/Makefile" ]; then
	need_space "$BUILD" 4096 "unpacking $SRC_TARBALL"
	log "unpacking $SRC_TARBALL"
	rm -rf "$BUILD/pristine.tmp"
	mkdir -p "$BUILD/pristine.tmp"
	tar -C "$BUILD/pristine.tmp" -xf "$SRC_TARBALL"
	mv "$BUILD/pristine.tmp"/linux-source-6.12 "$PRISTINE"
	rmdir "$BUILD/pristine.tmp"
fi
if [ ! -f "$TREE/Makefile" ]; then
	need_space "$BUILD" 2560 "copying the pristine tree"
	log "copying pristine tree to $TREE"
	rm -rf "$TREE.tmp"
	cp -a "$PRISTINE" "$TREE.tmp"
	mv "$TREE.tmp" "$TREE"
fi

# Overlay: every tracked file under these in-tree directories.
OVERLAY_DIRS=(mm include kernel fs lib Documentation tools arch)
stage=$BUILD/assemble.stage
rm -rf "$stage"
mkdir -p "$stage"
cd "$TOP"
overlay=()
for d in "${OVERLAY_DIRS[@]}"; do
	[ -d "$d" ] || continue
	while IFS= read -r f; do overlay+=("$f"); done < <(find "$d" -type f ! -name '*.o' | sort)
done
for f in "${overlay[@]}"; do
	mkdir -p "$stage/$(dirname "$f")"
	cp "$f" "$stage/$f"
done

# Patches, in series order, applied on top of pristine+overlay copies of the
# files they touch.
patched=()
if [ -f patches/series ]; then
	while read -r p _; do
		case "$p" in ''|'#'*) continue ;; esac
		pf=patches/$p
		[ -f "$pf" ] || die "patches/series lists $p but patches/$p does not exist"
		while IFS= read -r f; do
			[ -e "$stage/$f" ] && continue
			mkdir -p "$stage/$(dirname "$f")"
			if [ -f "$PRISTINE/$f" ]; then cp "$PRISTINE/$f" "$stage/$f"; fi
			patched+=("$f")
		done < <(sed -n 's#^+++ b/\([^[:space:]]*\).*#\1#p' "$pf")
		if ! out=$(cd "$stage" && patch -p1 --forward --batch --fuzz=0 --no-backup-if-mismatch \
				-r - -s < "$TOP/$pf" 2>&1); then
			printf '%s\n' "$out" >&2
			die "patch $p does not apply to linux-source-6.12 (+ earlier patches); fix or refresh it"
		fi
	done < patches/series
fi

# Copy staged files whose content differs; restore files that an earlier
# assembly changed but this one no longer does.
manifest=$TREE/.kmmscand-assembled
changed=0
declare -A now=()
while IFS= read -r f; do
	f=${f#./}
	now[$f]=1
	if ! cmp -s "$stage/$f" "$TREE/$f"; then
		mkdir -p "$TREE/$(dirname "$f")"
		cp "$stage/$f" "$TREE/$f"
		changed=$((changed + 1))
	fi
done < <(cd "$stage" && find . -type f)
if [ -f "$manifest" ]; then
	while IFS= read -r f; do
		[ -n "${now[$f]:-}" ] && continue
		if [ -f "$PRISTINE/$f" ]; then
			cmp -s "$PRISTINE/$f" "$TREE/$f" || { cp "$PRISTINE/$f" "$TREE/$f"; changed=$((changed + 1)); }
		else
			rm -f "$TREE/$f"; changed=$((changed + 1))
		fi
	done < "$manifest"
fi
(cd "$stage" && find . -type f | sed 's#^\./##' | sort) > "$manifest"
rm -rf "$stage"
log "assembled $TREE: ${#overlay[@]} overlay files, ${#patched[@]} patched files, $changed updated"
