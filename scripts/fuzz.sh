#!/bin/sh
# Fuzzes the record decoder, the record ring's reader and the trace reader
# (docs/fuzzing.md):
#
#   scripts/fuzz.sh SECONDS [HARNESS...]
#
# builds the libFuzzer harnesses with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer into $PTSHARE_FUZZ_BUILD (default build-fuzz),
# then runs each (default: fuzz_ingest fuzz_trace fuzz_ring) for SECONDS over its seed
# corpus and kept crash inputs.  New inputs go to a corpus of the build, not
# to the tree.  Exit status 1 when a harness found something: the input is
# saved under BUILD/crashes/HARNESS/ and its path printed.
set -eu
usage() {
	echo "usage: scripts/fuzz.sh SECONDS [fuzz_ingest|fuzz_trace|fuzz_ring...]" >&2
	exit 2
}
[ $# -ge 1 ] || usage
seconds=$1
shift
case $seconds in '' | *[!0-9]*) usage ;; esac
harnesses=${*:-fuzz_ingest fuzz_trace fuzz_ring}
for h in $harnesses; do
	case $h in fuzz_ingest | fuzz_trace | fuzz_ring) ;; *) usage ;; esac
done

src=$(cd "$(dirname "$0")/.." && pwd)
build=${PTSHARE_FUZZ_BUILD:-$src/build-fuzz}
command -v clang >/dev/null || {
	echo "fuzz.sh: clang is missing: apt-get install clang libclang-rt-14-dev" >&2
	exit 1
}
# -O2 -g without NDEBUG; the sanitizers and coverage come from PTSHARE_FUZZ.
CC=clang cmake -S "$src" -B "$build" -DPTSHARE_FUZZ=ON \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g" >/dev/null
# shellcheck disable=SC2086 # one target per harness
cmake --build "$build" -j"$(nproc)" --target $harnesses

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for h in $harnesses; do
	work=$build/corpus/$h
	crashes=$build/crashes/$h
	mkdir -p "$work" "$crashes"
	echo "fuzz.sh: $h for ${seconds}s"
	# -timeout: an input that takes this long is a hang, and a finding.
	if ! "$build/tests/fuzz/$h" -max_total_time="$seconds" -timeout=20 \
		-rss_limit_mb=4096 -print_final_stats=1 \
		-dict="$src/tests/fuzz/records.dict" \
		-artifact_prefix="$crashes/" "$work" \
		"$src/tests/fuzz/corpus/$h" "$src/tests/fuzz/regressions/$h"; then
		echo "fuzz.sh: $h found something:" >&2
		ls -1 "$crashes"/* >&2 || true
		status=1
	fi
done
exit $status
