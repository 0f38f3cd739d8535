#!/bin/sh
# SPDX-License-Identifier: MIT
# The command line as perf users expect it: ptshare help CMD is CMD's
# --help; -V, --version and version say the version, as ptshared
# --version does; a usage error is exactly two lines on stderr (what was
# wrong, prefixed with the command as the user typed it, then where the
# help is), nothing on stdout, exit status 2.
#   test_cli.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
build=$1
ptshare=$build/bin/ptshare
ptshared=$build/lib/ptshare/ptshared
# ptshare run keeps its trace in the current directory: here, in $tmp,
# which goes at exit, not in the build tree.
cd "$tmp"

# Runs the words given; its stdout, stderr and status in $tmp/{out,err},
# $status.
run() {
	status=0
	"$@" >"$tmp/out" 2>"$tmp/err" || status=$?
}

# "$@" is a usage error whose first line is $want, for the command $name.
usage_error() {
	run "$@"
	[ "$status" -eq 2 ] || fail "$*: status $status, not 2"
	[ ! -s "$tmp/out" ] || fail "$*: wrote on stdout: $(cat "$tmp/out")"
	printf '%s\nTry '\''%s --help'\'' for more information.\n' "$want" \
		"$name" >"$tmp/want"
	cmp -s "$tmp/err" "$tmp/want" ||
		fail "$*: stderr is not [$(cat "$tmp/want")] but [$(cat "$tmp/err")]"
}

version=$(sed -n 's/^project(ptshare VERSION \([0-9.]*\) .*/\1/p' \
	"$(dirname "$0")/../../CMakeLists.txt")
[ -n "$version" ] || fail "no version in CMakeLists.txt"
for v in -V --version version; do
	run "$ptshare" $v
	[ "$status" -eq 0 ] && [ "$(cat "$tmp/out")" = "ptshare $version" ] ||
		fail "ptshare $v: $status: $(cat "$tmp/out" "$tmp/err")"
done
for v in -V --version; do
	run "$ptshared" $v
	[ "$status" -eq 0 ] && [ "$(cat "$tmp/out")" = "ptshared $version" ] ||
		fail "ptshared $v: $status: $(cat "$tmp/out" "$tmp/err")"
done

for cmd in snapshot top run replay report aslr; do
	run "$ptshare" help "$cmd"
	[ "$status" -eq 0 ] || fail "ptshare help $cmd: status $status"
	"$ptshare" "$cmd" --help >"$tmp/help"
	cmp -s "$tmp/out" "$tmp/help" || fail "ptshare help $cmd is not its --help"
	head -n 1 "$tmp/out" | grep -q "^usage: ptshare $cmd " ||
		fail "ptshare help $cmd: $(head -n 1 "$tmp/out")"
done
for h in help --help -h; do
	run "$ptshare" $h
	[ "$status" -eq 0 ] && grep -q '^commands:' "$tmp/out" ||
		fail "ptshare $h: $status"
done

name=ptshare
want="ptshare: no command given (the commands: snapshot, top, run, replay, report, aslr)"
usage_error "$ptshare"
want="ptshare: unknown command 'runn' (the commands: snapshot, top, run, replay, report, aslr)"
usage_error "$ptshare" runn
want="ptshare: unknown option '--verbose' (the commands: snapshot, top, run, replay, report, aslr)"
usage_error "$ptshare" --verbose
want="ptshare: no help for 'nothing' (the commands: snapshot, top, run, replay, report, aslr)"
usage_error "$ptshare" help nothing

name="ptshare run"
want="ptshare run: no command to run"
usage_error "$ptshare" run
want="ptshare run: unknown option '--bogus'"
usage_error "$ptshare" run --bogus -- /bin/true
want="ptshare run: unknown option '-x'"
usage_error "$ptshare" run -x /bin/true
want="ptshare run: option needs an argument: '--top'"
usage_error "$ptshare" run --top
want="ptshare run: option needs an argument: '-o'"
usage_error "$ptshare" run -o
want="ptshare run: bad number 'soon'"
usage_error "$ptshare" run --interval soon -- /bin/true
want="ptshare run: --faults is off, table or all, not 'some'"
usage_error "$ptshare" run --faults some -- /bin/true
for out in "--json -" "--html /dev/stdout" "-o -"; do
	want="ptshare run: '${out#* }' is CMD's stdout too: its output and the report would mix; name a file"
	# shellcheck disable=SC2086 # the option and its argument
	usage_error "$ptshare" run $out -- /bin/echo ran
done
name="ptshare snapshot"
want="ptshare snapshot: option takes no argument: '--tree'"
usage_error "$ptshare" snapshot --tree=yes
want="ptshare snapshot: --tree needs --pid"
usage_error "$ptshare" snapshot --tree
want="ptshare snapshot: unexpected argument 'now'"
usage_error "$ptshare" snapshot now
name="ptshare replay"
want="ptshare replay: which trace?"
usage_error "$ptshare" replay
want="ptshare replay: one trace at a time"
usage_error "$ptshare" replay a b
name="ptshare report"
want="ptshare report: --socket PATH is required"
usage_error "$ptshare" report
name="ptshare aslr"
want="ptshare aslr: --record is for ptshare run: it holds one run (--json holds both)"
usage_error "$ptshare" aslr --record t -- /bin/true
name="ptshare help"
want="ptshare help: one command at a time"
usage_error "$ptshare" help run aslr
name=ptshared
want="ptshared: ambiguous option '--max'"
usage_error "$ptshared" --max 3
want="ptshared: --socket PATH is required"
usage_error "$ptshared"
# -o FILE on every command that reports, %p its pid and %% a '%'.
"$ptshare" snapshot --pid $$ -o "$tmp/snapshot.%p.%%" ||
	fail "snapshot -o: status $?"
set -- "$tmp"/snapshot.*.%
[ $# -eq 1 ] && [ -f "$1" ] || fail "snapshot -o %p: $(ls "$tmp")"
pid=${1#"$tmp"/snapshot.}
pid=${pid%.%}
case $pid in '' | *[!0-9]*) fail "snapshot -o %p: $1" ;; esac
[ "$pid" != $$ ] || fail "%p is not ptshare's own pid"
head -n 1 "$1" | grep -q '^ptshare snapshot: 1 processes modelled' ||
	fail "snapshot -o: $(cat "$1")"
[ "$(stat -c %a "$1")" = 600 ] || fail "snapshot -o: mode $(stat -c %a "$1")"
"$ptshare" run --record "$tmp/trace" -o "$tmp/run.%p" -- /bin/true ||
	fail "run -o: status $?"
set -- "$tmp"/run.*
[ $# -eq 1 ] && grep -q '^ptshare run: ' "$1" || fail "run -o %p: $(ls "$tmp")"
"$ptshare" replay "$tmp/trace" -o "$tmp/replay.%p" || fail "replay -o: $?"
set -- "$tmp"/replay.*
[ $# -eq 1 ] && grep -q '^ptshare replay: ' "$1" ||
	fail "replay -o %p: $(ls "$tmp")"
# --report-socket: the live report where the user chose, with -o and a
# stderr that is no terminal (where ptshare run says nothing of it).
"$ptshare" run --report-socket "$tmp/live.sock" -o "$tmp/final.txt" -- \
	/bin/sh -c 'while [ ! -e "$1" ]; do sleep 0.1; done' sh "$tmp/done" \
	2>"$tmp/run.err" &
running=$!
i=0
while [ ! -S "$tmp/live.sock" ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
status=0
"$ptshare" report --socket "$tmp/live.sock" --top 1 >"$tmp/live.txt" ||
	status=$?
touch "$tmp/done"
wait "$running" || fail "run --report-socket: status $?: $(cat "$tmp/run.err")"
[ "$status" -eq 0 ] || fail "report --socket: status $status"
grep -qE '^ptshare run: [0-9]+ processes modelled' "$tmp/live.txt" ||
	fail "the live report: $(cat "$tmp/live.txt")"
[ ! -e "$tmp/live.sock" ] || fail "the report socket is left behind"
[ ! -s "$tmp/run.err" ] || fail "run said on stderr: $(cat "$tmp/run.err")"
# Something at the path already: the daemon refuses it, and leaves it.
echo mine >"$tmp/taken"
status=0
"$ptshare" run --report-socket "$tmp/taken" -- /bin/true 2>"$tmp/run.err" ||
	status=$?
[ "$status" -eq 1 ] || fail "run --report-socket at a file: status $status"
[ "$(cat "$tmp/taken")" = mine ] || fail "the file at --report-socket changed"
name="ptshare run"
long=$(printf '%0120d' 0)
want="ptshare run: --report-socket is too long for a socket's path '$long'"
usage_error "$ptshare" run --report-socket "$long" -- /bin/true

# A reader gone from the report's pipe: the status is still the
# program's, and the run's directory is not left behind.
mkdir -m 0700 "$tmp/tmpdir"
{
	status=0
	TMPDIR=$tmp/tmpdir "$ptshare" run -- /bin/sh -c 'sleep 0.5; exit 3' \
		2>&1 || status=$?
	echo $status >"$tmp/status"
} | true
[ "$(cat "$tmp/status")" = 3 ] || fail "run into a closed pipe: $(cat "$tmp/status")"
[ -z "$(ls "$tmp/tmpdir")" ] || fail "run into a closed pipe left $(ls "$tmp/tmpdir")"
# And the program's own SIGPIPE is as it was: it still dies of it.
{
	status=0
	"$ptshare" run -- /bin/sh -c 'sleep 0.5; i=0
		while [ $i -lt 100000 ]; do echo y; i=$((i + 1)); done' \
		2>/dev/null || status=$?
	echo $status >"$tmp/status"
} | true
[ "$(cat "$tmp/status")" = 141 ] ||
	fail "the program's SIGPIPE: status $(cat "$tmp/status"), not 141"

name="ptshare snapshot"
want="ptshare snapshot: -o takes %p (the pid) and %%, not 'x%d'"
usage_error "$ptshare" snapshot -o x%d
name="ptshare replay"
want="ptshare replay: -o takes %p (the pid) and %%, not '%'"
usage_error "$ptshare" replay -o % "$tmp/trace"
echo "test_cli: ok"
