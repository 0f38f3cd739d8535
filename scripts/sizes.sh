#!/bin/sh
# The limits issue 12 set on the source (docs/architecture.md): no file over
# 800 lines, no function over 100.  Lists what is over them and fails if
# anything is; with no arguments, every .c and .h of the tree but build
# directories.  A function is counted from its "{" in column 0 to its "}"
# in column 0 (the kernel style the tree follows).
set -eu
cd "$(dirname "$0")/.."
if [ "$#" -eq 0 ]; then
	set -- $(git ls-files '*.c' '*.h')
fi
awk '
FNR == 1 { name = ""; start = 0 }
FNR == 1 && prev != "" && plines > 800 { print prev ": " plines " lines"; bad = 1 }
{ prev = FILENAME; plines = FNR }
/^[A-Za-z_].*\(/ { name = $0; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name) }
/^\{/ { start = FNR }
/^\}/ && start {
	if (FNR - start - 1 > 100) {
		print FILENAME ": " name "(): " FNR - start - 1 " lines"
		bad = 1
	}
	start = 0
}
END {
	if (plines > 800) { print prev ": " plines " lines"; bad = 1 }
	exit bad
}' "$@"
