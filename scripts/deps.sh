#!/bin/sh
# Installs the Debian packages ptshare needs that are missing; does nothing
# when all are there.  Sourced by demo.sh and test.sh.
set -eu
# The caller may ask for more (test.sh: the PostgreSQL the tests run).
PTSHARE_PACKAGES="gcc make cmake pkg-config liburing-dev libcmocka-dev libdw-dev libiberty-dev libzstd-dev groff-base ${PTSHARE_EXTRA_PACKAGES:-}"
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
	# The servers the tests need (PostgreSQL, apache) are started by the
	# tests themselves, on 127.0.0.1: their packages must not start them
	# on every address (policy-rc.d 101: "action not allowed").
	policy=/usr/sbin/policy-rc.d
	own_policy=""
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		own_policy=1
	fi
	status=0
	apt-get install -y -q --no-install-recommends $missing </dev/null || status=$?
	[ -z "$own_policy" ] || rm -f "$policy"
	[ "$status" -eq 0 ] || exit "$status"
fi
