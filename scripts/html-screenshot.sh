#!/bin/sh
# The screenshot of the HTML report in docs/html.md: a real run of the demo
# workload (build/demo/prefork-pool) under `ptshare run --html`, its page
# drawn by headless Chromium (Debian's chromium), the top of it: the run,
# what would help, the timeline, the policies' memory and savings.
#
#   scripts/html-screenshot.sh [BUILD [OUT.png]]
#
# BUILD: a build directory (default build-asan); OUT: the PNG to write
# (default docs/html-report.png).  Exit status: 0 written, 1 otherwise.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build-asan}
out=${2:-docs/html-report.png}
case $out in /*) ;; *) out=$PWD/$out ;; esac
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || { echo "$0: $chromium is missing (Debian package chromium)" >&2; exit 1; }
work=$(mktemp -d /tmp/ptshare-screenshot-XXXXXX)
trap 'rm -rf "$work"' EXIT
# Read every second: the pool's warm-up, its hold and the workers' exits.
"$build/bin/ptshare" run --interval 1 --no-record --html "$work/report.html" \
	-o "$work/report.txt" -- "$build/demo/prefork-pool" --hold 3 >/dev/null
rm -f "$out"
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir="$work/profile" --window-size=1280,1500 \
	--screenshot="$out" "file://$work/report.html" >/dev/null 2>&1
[ "$(head -c 4 "$out" 2>/dev/null | tail -c 3)" = PNG ] ||
	{ echo "$0: chromium wrote no PNG to $out" >&2; exit 1; }
echo "$out"
