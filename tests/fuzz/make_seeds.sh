#!/bin/sh
# The seed corpora of the fuzz harnesses, from recordings of real runs
# (docs/fuzzing.md):
#
#   tests/fuzz/make_seeds.sh BUILD
#
# BUILD is a build of the tree (any: its bin/ptshare, the test subjects, the
# demo and fuzz_seeds are used).  Each workload below runs under `ptshare run
# --record`; its trace goes to corpus/fuzz_trace/NAME as a trace and to
# corpus/fuzz_ingest/NAME as a script of connections and packets
# (fuzz_ops.h), each checkpoint cut down to its 4 largest mappings so that
# the seeds stay small (fuzz_seeds.c).  The corpora are committed; run this
# again when the record format changes.
set -eu
[ $# -eq 1 ] || {
	echo "usage: tests/fuzz/make_seeds.sh BUILD" >&2
	exit 2
}
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
subject=$build/tests/run/run_subject
seeds=$build/tests/fuzz/fuzz_seeds
mkdir -p "$here/corpus/fuzz_trace" "$here/corpus/fuzz_ingest"

# NAME INTERVAL CMD...: the workload's recording (timer readings every
# INTERVAL seconds, 0: none), turned into both seeds.
seed_every() {
	name=$1
	interval=$2
	shift 2
	# forktree waits for a line on stdin before its workers exit.
	echo | "$build/bin/ptshare" run --interval "$interval" \
		--record "$tmp/$name" -o "$tmp/$name.txt" -- "$@" >/dev/null
	"$seeds" trace "$tmp/$name" "$here/corpus/fuzz_trace/$name" 4
	"$seeds" ops "$tmp/$name" "$here/corpus/fuzz_ingest/$name" 4
}

# NAME CMD...: the same, without a timer.
seed() {
	name=$1
	shift
	seed_every "$name" 0 "$@"
}

seed forktree "$subject" forktree
seed sysv "$subject" sysv
seed remap "$subject" remap
seed closefds "$subject" closefds
seed spawn "$subject" spawn
seed threads "$subject" threads
seed prefork_pool "$build/demo/prefork-pool" --hold 0 --pool-mib 32 --workers 3
seed own_uffd "$build/tests/faults/own_uffd_subject" nowait
seed shell sh -c 'ls -l /usr/lib | sort -r | head -3 >/dev/null'
# PTS_CK_BUILD_ID records: the program's and its libraries' build ids.
seed build_ids "$build/tests/callsite/callsite_subject"
# PTS_CK_REST and readings PTS_CK_AT_REST: a shell and its sleep, asleep
# across timer readings.
seed_every at_rest 1 sh -c 'sleep 2.5'
ls -l "$here/corpus"/*
