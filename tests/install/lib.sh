# SPDX-License-Identifier: MIT
# Sourced by the install tests (POSIX sh): failing, skipping as
# tests/support/skip.h does (exit 77, a failure under CI=true), and a
# private temporary directory removed at exit.
set -eu

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	if [ "${CI:-}" = true ]; then
		fail "cannot run under CI: $*"
	fi
	echo "SKIP: $*" >&2
	exit 77
}

# $1 must hold the fixed string $2.
has() {
	case $1 in *"$2"*) return 0 ;; esac
	return 1
}

need() {
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 ||
			skip "$tool is missing (scripts/test.sh installs it)"
	done
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ptshare-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
