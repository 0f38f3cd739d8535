#!/bin/sh
# SPDX-License-Identifier: MIT
# ptshare top on snap_subject's workload: 4 processes, each sharing 59 PTE
# tables (snapshot_workload.c) with the 3 others under mccracken-2005, so
# that each saves 59 x 3 KiB = 177 kB, its share (pss) its tables less
# that.
#   - stdout not a terminal: one table, no escape sequence, a row per
#     process, its VmPTE /proc's, its saving 177 kB;
#   - in tmux: the same rows, refreshed every second (the clock moves), the
#     4 idle processes read again from their status alone; p
#     shows the next policy, s sorts by the next column, g groups by
#     command (one group of 4), q ends it, the terminal restored and
#     nothing said on stderr; -n 2 ends by itself.
#   test_top.sh PTSHARE SNAP_SUBJECT LIB
ptshare=$1
. "$3"
. "$(dirname "$0")/subject.sh"
need tmux
start_subject "$2"
tmux_socket="ptshare-test-$$"
trap 'tmux -L "$tmux_socket" kill-server 2>/dev/null; stop_subject; rm -rf "$tmp"' EXIT

# The row of pid in a view ("PID COMMAND VMPTE MODEL PSS SAVED PCT").
row() {
	awk -v p="$1" '$1 == p && $2 == "snap_subject"' "$2"
}

check_rows() {
	for pid in $pids; do
		line=$(row "$pid" "$1")
		[ -n "$line" ] || fail "no row of $pid in: $(cat "$1")"
		set -- "$1" $line
		vmpte=$(awk '/^VmPTE:/ { print $2 }' "/proc/$pid/status")
		[ "$4" = "$vmpte" ] || fail "$pid: VmPTE $4, /proc says $vmpte"
		[ "$5" = "$vmpte" ] || fail "$pid: model $5, VmPTE $vmpte"
		[ "$7" = 177 ] || fail "$pid: saved $7 kB, not 177: $line"
		[ "$6" = $((vmpte - 177)) ] || fail "$pid: pss $6: $line"
	done
}

# One-shot: stdout a file.
"$ptshare" top --pid "$parent" --tree --policy mccracken-2005,aslr-tolerant \
	>"$tmp/once" 2>"$tmp/once.err" || fail "top: $(cat "$tmp/once.err")"
[ ! -s "$tmp/once.err" ] || fail "top said: $(cat "$tmp/once.err")"
! grep -q "$(printf '\033')" "$tmp/once" || fail "escape sequences in a file"
has "$(cat "$tmp/once")" "> mccracken-2005" || fail "policy: $(cat "$tmp/once")"
check_rows "$tmp/once"
echo "one-shot: ok"

# The live view, in a terminal of 150 x 40.
tmux -L "$tmux_socket" new-session -d -x 150 -y 40 \
	"'$ptshare' top -d 1 --pid $parent --tree \
	 --policy mccracken-2005,aslr-tolerant 2>'$tmp/live.err'; \
	 echo \$? >'$tmp/live.status'"
screen() {
	tmux -L "$tmux_socket" capture-pane -p >"$tmp/screen"
}
# Waits (up to 10 s) until the screen holds $1.
wait_for() {
	i=0
	while screen; ! grep -qF -- "$1" "$tmp/screen"; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "no '$1' on the screen: $(cat "$tmp/screen")"
		sleep 0.1
	done
}
keys() {
	tmux -L "$tmux_socket" send-keys "$1"
}
wait_for "ptshare top - "
wait_for "snap_subject"
check_rows "$tmp/screen"
first=$(grep -o 'ptshare top - [0-9:]*' "$tmp/screen")
sleep 2.2
screen
[ "$(grep -o 'ptshare top - [0-9:]*' "$tmp/screen")" != "$first" ] ||
	fail "not refreshed in 2 s: $first"
# The 4 hold still: a refresh takes their readings again from their
# status alone (docs/procfs.md, At rest), and the figures stay exact.
grep -q ", 4 idle since the last refresh," "$tmp/screen" ||
	fail "not read at rest: $(head -1 "$tmp/screen")"
check_rows "$tmp/screen"
keys p
wait_for "> aslr-tolerant"
check_rows "$tmp/screen"
keys s
wait_for "s sort (saved)"
keys g
wait_for "g group (command)"
grep -qE '^ +4 snap_subject +' "$tmp/screen" ||
	fail "no group of 4: $(cat "$tmp/screen")"
keys q
wait_file "$tmp/live.status" "q did not end it"
[ "$(cat "$tmp/live.status")" = 0 ] || fail "top exited $(cat "$tmp/live.status")"
[ ! -s "$tmp/live.err" ] || fail "top said: $(cat "$tmp/live.err")"
echo "live: ok"

# -n 2: two views, then it ends by itself.
rm -f "$tmp/live.status"
tmux -L "$tmux_socket" kill-server 2>/dev/null || true
tmux -L "$tmux_socket" new-session -d -x 150 -y 40 \
	"'$ptshare' top -d 1 -n 2 --pid $parent 2>'$tmp/live.err'; \
	 echo \$? >'$tmp/live.status'; sleep 30"
wait_file "$tmp/live.status" "-n 2 did not end it"
[ "$(cat "$tmp/live.status")" = 0 ] || fail "-n 2 exited $(cat "$tmp/live.status")"
# The shell's screen back: no view left on it.
screen
! grep -q "ptshare top - " "$tmp/screen" || fail "the view stayed: $(cat "$tmp/screen")"
echo "-n: ok"
