#!/bin/sh
# SPDX-License-Identifier: MIT
# ptshare top keeps an idle process's reading from one refresh to the next
# (docs/top.md; docs/procfs.md, At rest) and reads again what ran: six
# processes map one 64 MiB file and write a heap, then sleep; one of them
# wakes once, reads 32 MiB more of the file and writes 32 MiB more of its
# own, and sleeps again.  Two refreshes later, top's /metrics (--listen)
# must say what a fresh `ptshare snapshot` of the same processes says, to
# the byte and to the fault (timestamps aside).
#   test_top_rest.sh PTSHARE LIB
ptshare=$1
. "$2"
. "$(dirname "$0")/subject.sh"
need curl python3
top_pid=
work_pid=
cleanup() {
	[ -z "$top_pid" ] || kill "$top_pid" 2>/dev/null || true
	[ -z "$work_pid" ] || kill "$work_pid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

truncate -s 64M "$tmp/data"
# The workload: its children say "ready" and, the one that wakes, "woke"
# (in files), then sleep until the workload is killed (PDEATHSIG).
python3 - "$tmp" <<'PY' &
import ctypes, mmap, os, sys, time
tmp = sys.argv[1]
libc = ctypes.CDLL(None)
f = open(tmp + "/data", "r+b")
for i in range(6):
    if os.fork() == 0:
        libc.prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
        m = mmap.mmap(f.fileno(), 64 << 20)
        for j in range(0, 16 << 20, 4096):
            m[j]
        b = bytearray(8 << 20)
        open(f"{tmp}/ready.{i}", "w").write("ready")
        if i == 3:
            while not os.path.exists(tmp + "/wake"):
                time.sleep(0.05)
            for j in range(16 << 20, 48 << 20, 4096):
                m[j]
            c = bytearray(32 << 20)
            open(tmp + "/woke", "w").write("woke")
        time.sleep(600)
        os._exit(0)
time.sleep(600)
PY
work_pid=$!
for i in 0 1 2 3 4 5; do wait_file "$tmp/ready.$i"; done

"$ptshare" top -d 1 --listen 127.0.0.1:0 --pid "$work_pid" --tree \
	>"$tmp/top.out" 2>"$tmp/top.err" &
top_pid=$!
url=$(top_url "$tmp/top.err")
sleep 2.5 # refreshes with every process at rest
touch "$tmp/wake"
wait_file "$tmp/woke"
sleep 2.5 # the refresh that reads it again, and one at rest

figures() {
	grep -v '^#' "$1" | grep -v -e '_seconds' -e 'timestamp' | sort
}
curl -sf "$url" >"$tmp/top.om" || fail "GET $url"
"$ptshare" snapshot --pid "$work_pid" --tree --openmetrics "$tmp/snap.om" \
	-o /dev/null || fail "snapshot failed"
figures "$tmp/top.om" >"$tmp/top.fig"
figures "$tmp/snap.om" >"$tmp/snap.fig"
has "$(cat "$tmp/top.fig")" 'ptshare_processes 7' ||
	fail "not the 7 processes: $(cat "$tmp/top.fig")"
diff "$tmp/snap.fig" "$tmp/top.fig" >"$tmp/diff" ||
	fail "top and snapshot differ: $(cat "$tmp/diff")"
echo "top after a change among idle processes: the snapshot's figures"
