# shellcheck shell=bash
# Common settings for the kmmscand harness. Sourced, not executed.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HARNESS=$TOP/harness
BUILD=${BUILD:-$TOP/build}
PRISTINE=$BUILD/pristine
TREE=$BUILD/linux
KOBJ=${KOBJ:-$BUILD/kbuild}
SRC_TARBALL=/usr/src/linux-source-6.12.tar.xz
JOBS=${JOBS:-$(nproc)}
# ccache hits across checkouts: paths are rewritten relative to the build dir.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$TOP}

log()  { printf '[harness] %s\n' "$*" >&2; }
die()  { printf '[harness] error: %s\n' "$*" >&2; exit 1; }

# need_pkgs PKG... -- install Debian packages that are missing.
need_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		die "missing packages; run: sudo apt-get install -y ${missing[*]}"
	fi
	log "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y --no-install-recommends "${missing[@]}" >"$BUILD/apt.log" 2>&1; then
		apt-get update >>"$BUILD/apt.log" 2>&1 || true
		apt-get install -y --no-install-recommends "${missing[@]}" >>"$BUILD/apt.log" 2>&1 ||
			die "apt-get install ${missing[*]} failed; see $BUILD/apt.log"
	fi
}

# need_space DIR MB WHAT -- stop before WHAT when the file system of DIR
# has less than MB megabytes free: a full disk otherwise shows up halfway
# through, as a tar or compiler error about some file.
need_space() {
	local free
	free=$(df -Pm "$1" 2>/dev/null | awk 'NR == 2 { print $4 }')
	case "$free" in ''|*[!0-9]*) die "need_space: cannot read the free space of $1" ;; esac
	[ "$free" -ge "$2" ] ||
		die "$3 needs about $2 MB free in $1, and its file system has $free MB; free some space and run again"
}

BUILD_PKGS=(linux-source-6.12 gcc make bc flex bison libelf-dev libssl-dev cpio
	    ccache python3 perl xz-utils rsync)
VM_PKGS=(qemu-system-x86 busybox-static gcc libc6-dev)
# The host tools the guest runs on the host's root (vm.sh VM_HOSTFS=1).
USERLAND_PKGS=(linux-perf trace-cmd numactl)

mkdir -p "$BUILD"

# accepted_checks PATH... -- the checkpatch types accepted for these files
# (patches/checkpatch.accepted), comma-separated, for --ignore.
accepted_checks() {
	local f
	for f in "$@"; do
		awk -v f="$f" '$1 == f { print $2 }' "$TOP/patches/checkpatch.accepted"
	done | tr ',' '\n' | sort -u | paste -sd, -
}

# kunit_suites FILE: the KUnit suites that must run (and pass) at boot,
# one per line, read off the code (the .name of every struct kunit_suite
# in mm/tests/), so that no list of them can fall behind.  Fails when
# there is none.
kunit_suites() {
	sed -n 's/^[[:space:]]*\.name = "\(kmmscand[a-z_]*\)",$/\1/p' "$TOP"/mm/tests/*kunit*.[ch] > "$1"
	[ -s "$1" ]
}

# selftest_programs DIR: the kmmscand programs among DIR's kmmscand*.c
# (those with a main: TEST_HARNESS_MAIN or main()), one path per line; the
# other kmmscand*.c are the helpers linked into each.
selftest_programs() {
	grep -lE '^(TEST_HARNESS_MAIN|int main\()' "$1"/kmmscand*.c 2>/dev/null
}

# results_dir NAME: out=$BUILD/NAME, emptied, and host=$out/host.txt, empty,
# for the "ok"/"not ok" lines of the steps that run on the host.
results_dir() {
	out=$BUILD/$1
	rm -rf "$out"; mkdir -p "$out"
	host=$out/host.txt
	: > "$host"
}

# finish [results.py options]: judge $host (and the logs the options name)
# with results.py, print the results, also to $out/results.txt, and exit
# with its status.  A runner with another judge defines its own.
finish() {
	python3 "$HARNESS/results.py" --host "$host" "$@" | tee "$out/results.txt"
	exit "${PIPESTATUS[0]}"
}

# job_test NAME COMMAND: the job lines (for harness/vm-job.sh) that run
# COMMAND with its output between the markers results.py reads:
# @@KMM-BEGIN NAME@@ ... @@KMM-END NAME STATUS@@.
job_test() {
	printf "echo '@@KMM-BEGIN %s@@'\n%s 2>&1\necho \"@@KMM-END %s \$?@@\"\n" "$1" "$2" "$1"
}
