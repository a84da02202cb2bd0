# shellcheck shell=sh
# lib.sh -- helpers of the jobs that run in the two-tier VM, sourced by
# bench/run-in-vm.sh, harness/test-mm/guest.sh and
# harness/guest/userland-check.sh (shipped next to them in /opt/prog), and
# by bench/test-report.sh on the host, which tests the pure ones.  POSIX
# sh: the guest may have only busybox.

# wr FILE VALUE: write VALUE to FILE.  On failure calls
# wr_failed FILE VALUE WHY and returns 1.
wr() {
	if ! { echo "$2" > "$1"; } 2>/dev/null; then
		wr_failed "$1" "$2" "write failed"
		return 1
	fi
}

# wr_check FILE VALUE: wr, then FILE must read back VALUE.
wr_check() {
	wr "$1" "$2" || return 1
	_wr_got=$(cat "$1" 2>/dev/null)
	if [ "$_wr_got" != "$2" ]; then
		wr_failed "$1" "$2" "reads '$_wr_got' after the write"
		return 1
	fi
}

# wr_failed FILE VALUE WHY: how a failed wr is reported.  A job that
# reports it its own way (a marker line, a fatal error) defines its own
# after sourcing this file.
wr_failed() {
	echo "cannot write '$2' to $1: $3" >&2
}

# vmstat_snap ERE: the /proc/vmstat counters whose names match ERE, on one
# line: "name=value name=value ...".
vmstat_snap() {
	awk -v re="$1" '$1 ~ re { printf "%s=%s ", $1, $2 }' /proc/vmstat
}

# vmstat_delta BEFORE AFTER: from two vmstat_snap lines, "name=delta ..."
# for every counter of AFTER (one missing from BEFORE counts from 0).
vmstat_delta() {
	echo "$1 | $2" | awk '{
		for (i = 1; i <= NF; i++) {
			if ($i == "|") { after = 1; continue }
			split($i, kv, "=")
			if (after)
				printf "%s=%d ", kv[1], kv[2] - b[kv[1]]
			else
				b[kv[1]] = kv[2]
		}
	}'
}

# vm_stalls UPTIME_AT_START [LINES_AT_START]: the guest's CPU stalls since
# the start of a run (soft lockup, RCU stall, hung task), at most three,
# as "@@VMSTALL <kernel line>".  Lines stamped "[ seconds]" count from
# UPTIME_AT_START on; a dmesg that prints no stamps (a kernel without
# CONFIG_PRINTK_TIME and busybox dmesg) counts the lines after the
# LINES_AT_START it printed at the start.
vm_stalls() {
	dmesg 2>/dev/null | awk -v t0="$1" -v n0="${2:-0}" '
	/^\[ *[0-9]+\.[0-9]+\]/ { s = $0; sub(/^\[ */, "", s); if (s + 0 < t0 + 0) next }
	!/^\[ *[0-9]+\.[0-9]+\]/ && NR <= n0 + 0 { next }
	/soft lockup|rcu_sched self-detected stall|rcu_sched detected stalls|blocked for more than/ {
		sub(/^\[[^]]*\] */, ""); print "@@VMSTALL " $0; if (++n == 3) exit }'
}

# shuffled WORDS...: the words, one per line, in a random order drawn from
# the seed $oseed (host and guest awk may differ: callers print the order
# they used).
# shellcheck disable=SC2154 # oseed is the caller's
shuffled() {
	printf '%s\n' "$@" | awk -v s="$oseed" 'BEGIN { srand(s) } { printf "%.9f %s\n", rand(), $0 }' |
		sort -k1,1n | cut -d' ' -f2
}
