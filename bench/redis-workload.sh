#!/bin/sh
# bench/redis-workload.sh - the redis workload of the kmmscand bench.
#
# A fresh redis-server (unix socket only, no persistence) is loaded with
# --keys keys of --value-bytes bytes.  The keys are inserted in a permuted
# order, so the ones redis-benchmark uses (key:000000000000 up to --hot-pct %
# of the keyspace, its -r option) lie scattered through the heap.  All of the
# server's memory is then moved to the slow node with migratepages(8): its
# memory policy stays the default one, so promotion is allowed.  After the
# go-file handshake of workload/workload.c (create F.ready, wait for F: the
# driver switches the policy on in between), redis-benchmark runs for --secs
# seconds in loop mode (-l, --loop-n requests per loop):
#   --mix get   GET only, --clients connections
#   --mix mix   GET and SET side by side, half of the connections each
#
# Output lines (parsed by bench/report.py; times in s from the start of the run):
#   CFG mode= keys= value_bytes= hot_keys= clients= loop_n= slow_node= fast_node=
#   LOAD secs= keys= rss_mb= on0=           after loading
#   SETUP secs= load_s= move_s= on0= anon_on0= rss_mb=   after migratepages
#   NM <t> on0= anon_on0= rss_mb=           server placement, once a second:
#                                           share of its resident pages (all /
#                                           anonymous) on the fast node, numa_maps
#   BM <t> test= rps= p50_ms= p99_ms=       one redis-benchmark loop, at its end
#   REDIS-TEST test= loops= requests= rps= rps_first= rps_last= p50_ms= p99_ms=
#   REDIS-RESULT mode= secs= on0_setup= on0_final= anon_on0_final= rss_mb=
#                server_utime= server_stime= failed=
# REDIS-TEST: rps = requests of the completed loops / their time; rps_last =
# mean of the loops that ended in the last quarter of the run; p50/p99 =
# median over the loops of each loop's percentile.
#
# Needs redis-server, redis-cli, redis-benchmark (7.x: latency percentiles in
# --csv), migratepages (numactl), stdbuf and timeout (coreutils); Debian:
# redis-server redis-tools numactl.
set -u

usage() {
	echo "usage: redis-workload.sh [--mix get|mix] [--secs S] [--keys N] [--value-bytes B]" \
		"[--hot-pct P] [--clients C] [--loop-n N] [--slow-node N] [--fast-node N]" \
		"[--go-file F]" >&2
	exit 2
}

MIX=get SECS=30 KEYS=200000 VALUE=512 HOT_PCT=10 CLIENTS=8 LOOP_N=2000
SLOW=1 FAST=0 GO=
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || usage
	case "$1" in
	--mix) MIX=$2 ;;
	--secs) SECS=$2 ;;
	--keys) KEYS=$2 ;;
	--value-bytes) VALUE=$2 ;;
	--hot-pct) HOT_PCT=$2 ;;
	--clients) CLIENTS=$2 ;;
	--loop-n) LOOP_N=$2 ;;
	--slow-node) SLOW=$2 ;;
	--fast-node) FAST=$2 ;;
	--go-file) GO=$2 ;;
	*) usage ;;
	esac
	shift 2
done
for v in "$SECS" "$KEYS" "$VALUE" "$HOT_PCT" "$CLIENTS" "$LOOP_N" "$SLOW" "$FAST"; do
	case "$v" in ''|*[!0-9]*) echo "redis-workload: '$v' is not a number" >&2; usage ;; esac
done
case "$MIX" in get|mix) ;; *) echo "redis-workload: --mix is get or mix" >&2; usage ;; esac
# key k is inserted as the j-th with k = j * PERM mod KEYS: a permutation
# when KEYS is no multiple of the prime PERM
PERM=1000003
if [ "$SECS" -lt 1 ] || [ "$KEYS" -lt 1 ] || [ $((KEYS % PERM)) -eq 0 ] ||
	[ "$VALUE" -lt 16 ] || [ "$HOT_PCT" -lt 1 ] || [ "$HOT_PCT" -gt 100 ] ||
	[ "$CLIENTS" -lt 2 ] || [ "$LOOP_N" -lt 1 ] || [ "$SLOW" = "$FAST" ]; then
	echo "redis-workload: want secs >= 1, keys >= 1 (no multiple of $PERM), value-bytes >= 16," \
		"hot-pct 1..100, clients >= 2, loop-n >= 1, two different nodes" >&2
	usage
fi
for t in redis-server redis-cli redis-benchmark migratepages stdbuf timeout; do
	command -v $t >/dev/null 2>&1 || {
		echo "redis-workload: $t not found (Debian: redis-server redis-tools numactl coreutils)" >&2
		exit 2
	}
done
for n in "$SLOW" "$FAST"; do
	[ -d "/sys/devices/system/node/node$n" ] || { echo "redis-workload: there is no node $n" >&2; exit 2; }
done
HOT_KEYS=$((KEYS * HOT_PCT / 100))
[ $HOT_KEYS -ge 1 ] || HOT_KEYS=1

DIR=$(mktemp -d /tmp/kmm-redis.XXXXXX) || exit 2
SOCK=$DIR/redis.sock
SPID='' BPIDS=''
cleanup() {
	# shellcheck disable=SC2086 # a list of pids
	[ -n "$BPIDS" ] && kill $BPIDS 2>/dev/null
	[ -n "$SPID" ] && kill -9 "$SPID" 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ms() { date +%s%3N; }
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }	# ms -> s
fail() { echo "redis-workload: $*" >&2; exit 1; }
rcli() { redis-cli -s "$SOCK" "$@"; }
# the server runs and is no zombie (kill -0 succeeds on a zombie)
alive() {
	st=$(sed 's/^.*) //' "/proc/$SPID/stat" 2>/dev/null | cut -c1)
	[ -n "$st" ] && [ "$st" != Z ]
}

# placement PID -> "on0=<f> anon_on0=<f> rss_mb=<n>": the share of the
# resident pages (of the anonymous ones) on the fast node, from numa_maps
placement() {
	awk -v fast="$FAST" '
	{
		kb = 4; anon = 0
		for (i = 3; i <= NF; i++) {
			if ($i ~ /^kernelpagesize_kB=/) kb = substr($i, 19) + 0
			else if ($i ~ /^anon=/) anon = 1
		}
		for (i = 3; i <= NF; i++) {
			if ($i !~ /^N[0-9]+=/) continue
			split(substr($i, 2), a, "=")
			b = a[2] * kb
			tot += b; if (a[1] == fast) on += b
			if (anon) { atot += b; if (a[1] == fast) aon += b }
		}
	}
	END { printf "on0=%.4f anon_on0=%.4f rss_mb=%.1f", tot ? on / tot : 0,
		atot ? aon / atot : 0, tot / 1024 }' "/proc/$1/numa_maps"
}
field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
cpu_ticks() { sed 's/^.*) //' "/proc/$SPID/stat" | awk '{ print $12, $13 }'; }

echo "CFG mode=redis-$MIX keys=$KEYS value_bytes=$VALUE hot_keys=$HOT_KEYS clients=$CLIENTS" \
	"loop_n=$LOOP_N secs=$SECS slow_node=$SLOW fast_node=$FAST"

t_setup=$(now_ms)
redis-server --port 0 --unixsocket "$SOCK" --unixsocketperm 700 --save '' \
	--appendonly no --dir "$DIR" --logfile "$DIR/redis.log" --daemonize no &
SPID=$!
deadline=$(($(now_ms) + 60000))
until [ "$(rcli ping 2>/dev/null)" = PONG ]; do
	alive || fail "redis-server exited: $(tail -n 3 "$DIR/redis.log" 2>/dev/null)"
	[ "$(now_ms)" -lt $deadline ] || fail "redis-server did not answer within 60 s"
	sleep 0.1
done

# Load in chunks of 50000 keys, one server-side script each.
LOAD='local n, p, s, e = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4]), tonumber(ARGV[5])
local pad = string.rep("v", tonumber(ARGV[3]) - 12)
for j = s, e - 1 do
	local k = (j * p) % n
	redis.call("SET", string.format("key:%012d", k), string.format("%012d", k) .. pad)
end
return e - s'
t_load=$(now_ms)
s=0
while [ "$s" -lt "$KEYS" ]; do
	e=$((s + 50000))
	[ $e -le "$KEYS" ] || e=$KEYS
	rcli eval "$LOAD" 0 "$KEYS" $PERM "$VALUE" "$s" "$e" >/dev/null || fail "loading keys $s..$e failed"
	s=$e
done
n=$(rcli dbsize)
[ "$n" = "$KEYS" ] || fail "loaded $n keys, wanted $KEYS"
load_ms=$(($(now_ms) - t_load))
echo "LOAD secs=$(secs $load_ms) keys=$n $(placement $SPID)"

# Everything to the slow node: from every other node with memory.
from=
for d in /sys/devices/system/node/node[0-9]*; do
	nid=${d##*node}
	[ "$nid" = "$SLOW" ] && continue
	from=${from:+$from,}$nid
done
t_move=$(now_ms)
migratepages "$SPID" "$from" "$SLOW" || fail "migratepages $SPID $from $SLOW failed"
move_ms=$(($(now_ms) - t_move))
p=$(placement $SPID)
on0_setup=$(field on0 "$p")
echo "SETUP secs=$(secs $(($(now_ms) - t_setup))) load_s=$(secs $load_ms) move_s=$(secs $move_ms) $p"

if [ -n "$GO" ]; then
	: > "$GO.ready" || fail "cannot create $GO.ready"
	deadline=$(($(now_ms) + 600000))
	while [ ! -e "$GO" ]; do
		[ "$(now_ms)" -lt $deadline ] || fail "no $GO within 600 s"
		sleep 0.05
	done
fi

# bench TEST CLIENTS: redis-benchmark loops for SECS seconds; every CSV
# line it prints is stamped with the time it arrived
bench() {
	timeout -k 5 "$SECS" stdbuf -oL redis-benchmark -s "$SOCK" -t "$1" -r "$HOT_KEYS" \
		-n "$LOOP_N" -c "$2" -d "$VALUE" --csv -l 2>/dev/null |
	while IFS= read -r l; do
		echo "$(now_ms) $l"
	done > "$DIR/$1.out"
}
cpu0=$(cpu_ticks)
T0=$(now_ms)
if [ "$MIX" = get ]; then
	bench get "$CLIENTS" &
	BPIDS=$!
else
	bench get $((CLIENTS / 2)) &
	BPIDS=$!
	bench set $((CLIENTS - CLIENTS / 2)) &
	BPIDS="$BPIDS $!"
fi
# the server's placement once a second until the end of the run
k=0
while alive; do
	t=$(($(now_ms) - T0))
	[ $t -lt $((SECS * 1000)) ] || break
	echo "NM $(secs $t) $(placement $SPID)"
	k=$((k + 1))
	d=$((T0 + k * 1000 - $(now_ms)))
	[ $d -le 0 ] || sleep "$(secs $d)"
done
# shellcheck disable=SC2086 # a list of pids
wait $BPIDS
BPIDS=
alive || fail "redis-server died during the run"
cpu1=$(cpu_ticks)
p=$(placement $SPID)
echo "NM $(secs $(($(now_ms) - T0))) $p"

failed=0
for test in get set; do
	[ -f "$DIR/$test.out" ] || continue
	awk -v t0="$T0" -v n="$LOOP_N" -v secs="$SECS" '
	function median(a, k,    i, j, x) {	# insertion sort, then the middle
		for (i = 2; i <= k; i++) {
			x = a[i]
			for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]
			a[j + 1] = x
		}
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	}
	{
		rest = substr($0, index($0, " ") + 1)
		gsub(/"/, "", rest)
		split(rest, f, ",")
		if (f[2] + 0 <= 0) next		# the CSV header
		t = ($1 - t0) / 1000
		k++; name = f[1]; rps[k] = f[2]; p50[k] = f[5]; p99[k] = f[7]
		busy += n / f[2]
		if (t >= 0.75 * secs) { lsum += f[2]; lk++ }
		printf "BM %.1f test=%s rps=%s p50_ms=%s p99_ms=%s\n", t, name, f[2], f[5], f[7]
	}
	END {
		if (!k) exit 1
		first = rps[1]
		printf "REDIS-TEST test=%s loops=%d requests=%d rps=%.1f rps_first=%.1f " \
			"rps_last=%.1f p50_ms=%.3f p99_ms=%.3f\n", name, k, k * n, k * n / busy,
			first, lk ? lsum / lk : rps[k], median(p50, k), median(p99, k)
	}' "$DIR/$test.out" || { echo "redis-workload: no complete $test loop" >&2; failed=1; }
done
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
# shellcheck disable=SC2086 # "utime stime" twice
set -- $cpu0 $cpu1
echo "REDIS-RESULT mode=redis-$MIX secs=$(secs $(($(now_ms) - T0))) on0_setup=$on0_setup" \
	"on0_final=$(field on0 "$p") anon_on0_final=$(field anon_on0 "$p")" \
	"rss_mb=$(field rss_mb "$p") server_utime=$(awk -v a="$1" -v b="$3" -v hz="$hz" 'BEGIN { printf "%.2f", (b - a) / hz }')" \
	"server_stime=$(awk -v a="$2" -v b="$4" -v hz="$hz" 'BEGIN { printf "%.2f", (b - a) / hz }') failed=$failed"

rcli shutdown nosave >/dev/null 2>&1
deadline=$(($(now_ms) + 30000))
while alive && [ "$(now_ms)" -lt $deadline ]; do
	sleep 0.1
done
if alive; then
	echo "redis-workload: redis-server did not shut down, killed" >&2
	kill -9 "$SPID"
fi
wait "$SPID" 2>/dev/null
SPID=
[ $failed -eq 0 ]
