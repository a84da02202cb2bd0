#!/usr/bin/env bash
# Generate $KOBJ/.config = tinyconfig + harness/config/kmmscand.config
# (+ any extra fragments given as arguments), verify every requested symbol,
# and replace the existing .config only when it changed.
source "$(dirname "$0")/lib.sh"

# BASE_FRAGMENT replaces harness/config/kmmscand.config (smoke/fork-cost.sh
# builds a CONFIG_KMMSCAND=n kernel with it).
frags=("${BASE_FRAGMENT:-$HARNESS/config/kmmscand.config}" "$@")
# Skip the regeneration when nothing that feeds it changed.
stamp=$( (cat "${frags[@]}"; cd "$TOP" && cat patches/series patches/*.patch 2>/dev/null;
	  cat "$PRISTINE/Makefile"; find . \( -path ./build -o -path ./.git -o -path ./bench-results \) -prune -o \
	  -type f -name "Kconfig*" -path "./[a-z]*" -print | LC_ALL=C sort | xargs -r cat) | sha1sum | cut -d' ' -f1)
if [ -f "$KOBJ/.config" ] && [ "$(cat "$KOBJ/.config.stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
tmp=$BUILD/config.tmp
rm -rf "$tmp"; mkdir -p "$tmp" "$KOBJ"
make -s -C "$TREE" O="$tmp" tinyconfig >/dev/null
KCONFIG_CONFIG="$tmp/.config" "$TREE/scripts/kconfig/merge_config.sh" \
	-m -O "$tmp" "$tmp/.config" "${frags[@]}" >"$tmp/merge.log" 2>&1 ||
	{ cat "$tmp/merge.log" >&2; die "merge_config failed"; }
make -s -C "$TREE" O="$tmp" olddefconfig >/dev/null

bad=0
for f in "${frags[@]}"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=n)
			sym=${line%%=*}
			if grep -q "^$sym=" "$tmp/.config"; then
				log "config: $sym requested off but is $(grep "^$sym=" "$tmp/.config")"
				bad=1
			fi ;;
		CONFIG_*=*)
			if ! grep -qx "$line" "$tmp/.config"; then
				sym=${line%%=*}
				log "config: requested $line, got: $(grep -E "^(# )?$sym[= ]" "$tmp/.config" || echo 'absent (unmet dependency?)')"
				bad=1
			fi ;;
		esac
	done < "$f"
done
[ $bad -eq 0 ] || die "kernel config is missing requested symbols (see above)"
if ! cmp -s "$tmp/.config" "$KOBJ/.config"; then
	cp "$tmp/.config" "$KOBJ/.config"
	log "config updated: $KOBJ/.config"
fi
rm -rf "$tmp"
echo "$stamp" > "$KOBJ/.config.stamp"
