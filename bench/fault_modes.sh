#!/bin/sh
# What each fault mode sees, and what it does to the program's mappings
# (docs/faults.md, Modes):
#
#   bench/fault_modes.sh BUILD ROUNDS "MODES" CMD [ARGS...]
#
# runs CMD plainly and under `BUILD/bin/ptshare run --faults MODE` for each
# of MODES (say "off table all"), ROUNDS rounds in rotating order, and
# prints for each run: its time; the faults seen and the first touches
# pagemap showed (linux); the model against VmPTE at the peak and at each
# process's last checkpoint; and, when CMD prints a line "ready", the VMAs
# of its processes then (lines of /proc/PID/maps, the shim's libraries
# left out: 20 lines of theirs in every traced process).  CMD should then
# hold until it is read (demo/prefork-pool --hold 2 does).
set -eu
[ $# -ge 4 ] || {
	echo 'usage: bench/fault_modes.sh BUILD ROUNDS "MODES" CMD [ARGS...]' >&2
	exit 2
}
ptshare=$(cd "$1" && pwd)/bin/ptshare
rounds=$2
modes="plain $3"
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The VMAs of every process of the workload (the session of the run,
# without ptshare and ptshared), but for the shim's libraries: how many
# processes have how many.
vmas_of() {
	pids=$(ps -eo pid=,sid=,comm= |
		awk -v s="$1" '$2 == s && $3 != "ptshare" && $3 != "ptshared" { print $1 }')
	for p in $pids; do
		grep -v 'libptshare' "/proc/$p/maps" 2>/dev/null |
			wc -l
	done | sort -n | uniq -c |
		awk '$2 { printf "%s%d x %d", (n++ ? ", " : ""), $1, $2 }'
}

# One run of a mode: its line of figures.
run() {
	mode=$1
	shift
	start=$(date +%s.%N)
	if [ "$mode" = plain ]; then
		setsid "$@" > "$tmp/out" 2>/dev/null &
	else
		setsid "$ptshare" run --no-record --faults "$mode" -o "$tmp/report" -- "$@" \
			> "$tmp/out" 2>/dev/null &
	fi
	pid=$!
	vmas=-
	while kill -0 "$pid" 2>/dev/null; do
		if grep -q '^ready' "$tmp/out" 2>/dev/null; then
			vmas=$(vmas_of "$pid")
			break
		fi
		sleep 0.05
	done
	wait "$pid"
	end=$(date +%s.%N)
	if [ "$mode" = plain ]; then
		printf '%-6s %7.3f s  VMAs (processes x lines): %s\n' "$mode" \
			"$(awk "BEGIN { print $end - $start }")" "$vmas"
		return
	fi
	faults=$(sed -n 's/^  linux: \(.*\)/\1/p' "$tmp/report")
	peak=$(sed -n 's/^model vs kernel: \([0-9]* of [0-9]*\) processes exact.*/\1/p' "$tmp/report")
	last=$(sed -n 's/^model vs kernel at each process.s last checkpoint: \(.*\) exact/\1/p' "$tmp/report")
	printf '%-6s %7.3f s  %s; exact at the peak %s, at the last checkpoint %s;' \
		"$mode" "$(awk "BEGIN { print $end - $start }")" "$faults" "$peak" "$last"
	printf ' VMAs (processes x lines): %s\n' "$vmas"
}

echo "$* under $modes; $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
n=$(echo $modes | wc -w)
r=0
while [ $r -lt "$rounds" ]; do
	i=0
	while [ $i -lt "$n" ]; do
		run "$(echo $modes | cut -d' ' -f$(((i + r) % n + 1)))" "$@"
		i=$((i + 1))
	done
	r=$((r + 1))
done
