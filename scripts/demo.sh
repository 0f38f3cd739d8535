#!/bin/sh
# The main job on the bundled demo: installs what is missing, builds, and
# runs demo/prefork-pool (a parent and 8 workers over a 1 GiB shared buffer
# pool) under `ptshare run`, which reports what sharing page tables would
# save.  Extra arguments go to ptshare run (e.g. --json FILE).  The run's
# trace is kept, as every run's, in ptshare.prefork-pool.PID.trace.zst
# here, at the top of the tree (git ignores it): `ptshare replay` it.
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTSHARE_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
exec build/bin/ptshare run "$@" -- build/demo/prefork-pool --hold 1
