#!/bin/sh
# SPDX-License-Identifier: MIT
# ptshared.service, as cmake --install writes it into a temporary prefix:
# systemd-analyze verify finds nothing to say (its ExecStart is the
# installed ptshared, its Documentation the installed ptshared(8)); and
# its ExecStart, with /run/ptshare and /var/lib/ptshare moved into a
# temporary directory, starts a daemon that serves a traced program and
# writes its report when stopped, as `systemctl stop` does.
#   test_systemd.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
build=$1
need systemd-analyze man
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
	fail "cmake --install: $(cat "$tmp/install.log")"
unit=$prefix/lib/systemd/system/ptshared.service
MANPATH=$prefix/share/man systemd-analyze verify "$unit" >"$tmp/verify" 2>&1 ||
	fail "systemd-analyze verify: $(cat "$tmp/verify")"
[ ! -s "$tmp/verify" ] || fail "systemd-analyze verify says: $(cat "$tmp/verify")"
# A unit whose man page is not there is refused: the check can fail.
MANPATH=$tmp/nowhere systemd-analyze verify "$unit" >/dev/null 2>&1 &&
	fail "systemd-analyze verify passed a unit whose ptshared(8) is missing"

exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
case $exec_start in
"$prefix/lib/ptshare/ptshared "*"--allow-users all"*) ;;
*) fail "ExecStart=$exec_start" ;;
esac
grep -qx 'RuntimeDirectory=ptshare' "$unit" || fail "no RuntimeDirectory"
grep -qx 'RuntimeDirectoryMode=0755' "$unit" || fail "/run/ptshare not 0755"
grep -qx 'StateDirectory=ptshare' "$unit" || fail "no StateDirectory"

# What systemd would make (RuntimeDirectory 0755, StateDirectory 0700).
mkdir -m 0755 "$tmp/run"
mkdir -m 0700 "$tmp/state"
cmdline=$(echo "$exec_start" | sed "s|/run/ptshare/|$tmp/run/|g;
	s|/var/lib/ptshare/|$tmp/state/|g")
# shellcheck disable=SC2086 # the unit's words
$cmdline 2>"$tmp/daemon.err" &
daemon=$!
i=0
while [ ! -S "$tmp/run/sock" ] && [ $i -lt 200 ]; do
	kill -0 "$daemon" 2>/dev/null || break
	sleep 0.1
	i=$((i + 1))
done
[ -S "$tmp/run/sock" ] || {
	kill "$daemon" 2>/dev/null
	fail "the unit's daemon did not listen: $(cat "$tmp/daemon.err")"
}
[ "$(stat -c %a "$tmp/run/sock")" = 666 ] || fail "its socket is not 0666"
LD_PRELOAD=$prefix/lib/ptshare/libptshare.so PTSHARE_SOCKET=$tmp/run/sock \
	/bin/sh -c 'echo served' >"$tmp/out"
[ "$(cat "$tmp/out")" = served ] || fail "the traced program: $(cat "$tmp/out")"
kill -TERM "$daemon"
status=0
wait "$daemon" || status=$?
[ "$status" -eq 0 ] || fail "the daemon's status: $status: $(cat "$tmp/daemon.err")"
[ -s "$tmp/state/report.json" ] || fail "no report in the state directory"
grep -qE '"command": *"sh"' "$tmp/state/report.json" ||
	fail "report.json has not the traced sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
/usr/bin/python3 "$src/tests/support/schema_check.py" \
	"$src/docs/report.schema.json" "$tmp/state/report.json" ||
	fail "report.json is not valid against docs/report.schema.json"
has "$(cat "$tmp/daemon.err")" "processes modelled" ||
	fail "no text report for the journal: $(cat "$tmp/daemon.err")"
echo "test_systemd: ok"
