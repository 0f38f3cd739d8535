# SPDX-License-Identifier: MIT
# Sourced by the top tests: snap_subject's workload (a parent and 3
# workers; tests/snapshot/snapshot_workload.c says what it maps) started,
# its pids in $parent and $pids, ended at exit.  $1: snap_subject.  And
# waiting for a file to say something, and for top --listen's URL.
start_subject() {
	truncate -s 32M "$tmp/data"
	mkfifo "$tmp/in"
	"$1" workload "$tmp/data" --timeout 300 <"$tmp/in" >"$tmp/ready" &
	subject=$!
	exec 3>"$tmp/in"
	i=0
	until grep -q '^ready' "$tmp/ready"; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "snap_subject is not ready"
		sleep 0.1
	done
	set -- $(cat "$tmp/ready")
	parent=$2
	pids="$2 $4 $5 $6"
}

# Closing its stdin ends the workload.
stop_subject() {
	exec 3>&-
	wait "$subject" || true
}

# Waits (up to 30 s) until file $1 is not empty.
wait_file() {
	i=0
	until [ -s "$1" ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "${2:-nothing in $1}"
		sleep 0.1
	done
}

# The URL top --listen serves, once its stderr ($1) says it.
top_url() {
	i=0
	until grep -q 'serving http://' "$1"; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "top does not serve: $(cat "$1")"
		sleep 0.1
	done
	sed -n 's/^ptshare top: serving //p' "$1"
}
