#!/bin/sh
# The main job on the bundled demo: installs what is missing, builds, starts
# demo/prefork-pool (a parent and 8 workers over a 1 GiB shared buffer pool)
# and reports with `ptshare snapshot` what sharing page tables would save.
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTSHARE_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
out=$(mktemp)
build/demo/prefork-pool --hold 120 >"$out" &
demo=$!
trap 'kill $demo 2>/dev/null; wait $demo 2>/dev/null; rm -f "$out"' EXIT INT TERM
until grep -q ready "$out"; do
	kill -0 $demo 2>/dev/null || { echo "demo workload failed" >&2; exit 1; }
	sleep 0.1
done
build/tools/ptshare snapshot --pid $demo --tree "$@"
