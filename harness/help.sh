#!/usr/bin/env bash
# help.sh MAKEFILE... -- `make help`: every target with a "## what" comment
# in the makefiles, and the time it takes here from the README's table of
# targets (its "time here" column up to the first parenthesis), so that
# each time is written down once.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
echo "kmmscand harness targets (time here: 2 cores, TCG; details in README.md):"
awk -v readme="$top/README.md" '
BEGIN {
	FS = "|"
	while ((getline line < readme) > 0) {
		if (line !~ /^\| `make [a-z-]+/)
			continue
		n = split(line, c, "|")
		t = c[n - 1]
		sub(/ \(.*/, "", t); gsub(/^ +| +$/, "", t)
		# one row may name several targets: `make clean`, `make distclean`
		while (match(c[2], /`make [a-z-]+/)) {
			time[substr(c[2], RSTART + 6, RLENGTH - 6)] = t
			c[2] = substr(c[2], RSTART + RLENGTH)
		}
	}
	FS = ":.*## "
}
/^[a-zA-Z_-]+:.*## / {
	printf "  make %-15s %s%s\n", $1, $2, ($1 in time) ? "  [" time[$1] "]" : "  [time not measured]"
}' "$@"
