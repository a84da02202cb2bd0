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

# kmm_save KMM DIR: copy the value of every writable file of KMM (the
# kmmscand sysfs directory) into DIR, for kmm_restore.  Read-only files
# (history_bytes, queued) are left out by their mode, which root's
# writes would ignore.
kmm_save() {
	mkdir -p "$2" || return 1
	for _f in "$1"/*; do
		[ -f "$_f" ] || continue
		case $(ls -l "$_f") in
		-?w*) cat "$_f" > "$2/${_f##*/}" || return 1 ;;
		esac
	done
}

# kmm_restore KMM DIR: write back every value kmm_save put in DIR.  Two
# passes: a file whose range is bounded by another (scan_period_min_ms
# <= scan_period_max_ms, hot_threshold <= hot_history) refuses its value
# until the other one is written, so the first pass ignores refusals and
# the second writes what still differs with wr, which reports a failure.
kmm_restore() {
	for _f in "$2"/*; do
		[ -f "$_f" ] || continue
		{ cat "$_f" > "$1/${_f##*/}"; } 2>/dev/null
	done
	_rc=0
	for _f in "$2"/*; do
		[ -f "$_f" ] || continue
		[ "$(cat "$1/${_f##*/}" 2>/dev/null)" = "$(cat "$_f")" ] ||
			wr "$1/${_f##*/}" "$(cat "$_f")" || _rc=1
	done
	return $_rc
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

# kmm_nice_arg POLICY: the N of a bench policy kmm-nice<N> (a nice value,
# -20 to 19); nothing for any other name.
kmm_nice_arg() {
	v=${1#kmm-nice}
	case "$v" in ''|-|*[!0-9-]*|?*-*) return ;; esac
	[ "$v" -ge -20 ] && [ "$v" -le 19 ] && echo "$v"
}

# wakelat_summary TRACE PIDS LOST TMPFILE: from a sched_wakeup and
# sched_switch trace of the threads PIDS (any whitespace between them),
# per thread "@@WAKELAT comm waits=N wait_s=S p50_ms= p99_ms= max_ms=
# lost=LOST": how often and how long it waited for a CPU while runnable
# (from a wake-up, or a switch-out in state R, to its next switch-in).
# TMPFILE holds the waits meanwhile.
# shellcheck disable=SC2086 # $2 is split on purpose
wakelat_summary() {
	awk -v pids=" $(echo $2) " '
	function ts(   i, t) {
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $i; sub(/:$/, "", t); return t + 0 }
		return -1
	}
	function val(k,   i) {
		for (i = 1; i <= NF; i++)
			if (index($i, k "=") == 1) return substr($i, length(k) + 2)
		return ""
	}
	/ sched_wakeup: / {
		p = val("pid")
		if (index(pids, " " p " ") && !(p in since)) since[p] = ts()
		next
	}
	/ sched_switch: / {
		t = ts(); pp = val("prev_pid"); np = val("next_pid")
		# preempted while runnable: waiting for a CPU from now on
		if (index(pids, " " pp " ") && val("prev_state") ~ /^R/) since[pp] = t
		if (index(pids, " " np " ") && (np in since)) {
			print val("next_comm"), t - since[np]; delete since[np]
		}
	}' "$1" > "$4"
	for c in $(awk '{ print $1 }' "$4" | sort -u); do
		awk -v c="$c" '$1 == c { print $2 }' "$4" | sort -g | awk -v c="$c" -v lost="$3" '
		{ w[++n] = $1; s += $1 }
		END { printf "@@WAKELAT %s waits=%d wait_s=%.3f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f lost=%d\n",
			c, n, s, w[int((n + 1) / 2)] * 1000, w[int((n - 1) * 0.99) + 1] * 1000, w[n] * 1000, lost }'
	done
}
