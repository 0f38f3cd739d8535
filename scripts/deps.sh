#!/bin/sh
# Installs the Debian packages ptshare needs that are missing; does nothing
# when all are there.  Sourced by demo.sh and test.sh.
set -eu
# The caller may ask for more (test.sh: the PostgreSQL the tests run).
PTSHARE_PACKAGES="gcc make cmake pkg-config liburing-dev libunwind-dev libcmocka-dev libdw-dev ${PTSHARE_EXTRA_PACKAGES:-}"
missing=""
for p in $PTSHARE_PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "ptshare: missing packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
		exit 1
	fi
	echo "ptshare: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q </dev/null
	apt-get install -y -q --no-install-recommends $missing </dev/null
fi
