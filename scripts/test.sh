#!/bin/sh
# The whole test suite: installs what is missing, builds with AddressSanitizer
# and UndefinedBehaviorSanitizer, runs every test through ctest.  First it
# builds the tree as scripts/demo.sh does (optimised: -Werror there sees
# warnings a Debug build does not, such as format truncation), so that the
# README's first command cannot break unseen.
set -eu
cd "$(dirname "$0")/.."
# man-db: test_man; dpkg-dev and file: cpack -G DEB (test_package);
# systemd: systemd-analyze (test_systemd); prometheus: promtool check
# metrics (snapshot_workload).
PTSHARE_EXTRA_PACKAGES="postgresql acl clang libclang-rt-14-dev chromium apache2 man-db dpkg-dev file systemd prometheus python3-jsonschema debuginfod tmux curl jq"
. scripts/deps.sh
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-release -j"$(nproc)" >/dev/null
build=${PTSHARE_BUILD:-build-asan}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DPTSHARE_SANITIZE=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build"
exec ctest --output-on-failure --timeout 1200 -j"$(nproc)"
