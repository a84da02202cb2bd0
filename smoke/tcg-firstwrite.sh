#!/bin/sh
# tcg-firstwrite.sh -- guest side of the first-write measurement (see
# smoke/README.md): tcg_firstwrite on the fast node right after boot, then
# again after host programs ran (their text is in the page cache) and
# drop_caches gave those pages back.
#   [APPEND=init_on_free=1] make smoke NAME=tcg-firstwrite
d=$(dirname "$0")
mb=${1:-640}
echo "== after boot ($(grep -o 'init_on_free=[01]' /proc/cmdline || echo init_on_free=0))"
"$d/tcg_firstwrite" "$mb" 0 || exit 1
for i in 1 2 3; do
	python3 -c 'import json, email, http.client, decimal, sqlite3' 2>/dev/null
	gcc --version >/dev/null 2>&1
	perl -e 'use POSIX; use File::Find;' 2>/dev/null
done
sync
echo 3 > /proc/sys/vm/drop_caches
echo "== after host programs ran and drop_caches"
"$d/tcg_firstwrite" "$mb" 0
