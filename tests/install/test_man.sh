#!/bin/sh
# SPDX-License-Identifier: MIT
# Every man page the build made renders with man -l without a word from
# man or groff, carries the version ptshare --version says, and names
# every option its command's --help lists; ptshare(1) names every
# command, and lists in POLICIES every policy ptshare --help lists (the
# model's own list: a new policy fails here until its page has it).
#   test_man.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
build=$1
need man
ptshare=$build/bin/ptshare
ptshared=$build/lib/ptshare/ptshared
version=$("$ptshare" --version)
[ "$("$ptshared" --version)" = "ptshared ${version#ptshare }" ] ||
	fail "ptshared --version: $("$ptshared" --version), not $version's"

# A page as a reader sees it, wide enough that no option is broken.
render() {
	MANWIDTH=250 LC_ALL=C.UTF-8 man -l "$build/man/$1.gz" >"$tmp/$1.txt" \
		2>"$tmp/$1.err" || fail "man -l $1: $(cat "$tmp/$1.err")"
	[ ! -s "$tmp/$1.err" ] || fail "man -l $1 says: $(cat "$tmp/$1.err")"
	grep -q "^NAME" "$tmp/$1.txt" || fail "$1: no NAME"
	tail -n 1 "$tmp/$1.txt" | grep -q "^$version " ||
		fail "$1: its footer is not '$version': $(tail -n 1 "$tmp/$1.txt")"
}

# Every option a --help (on stdin) lists, one a line: "  --top N",
# "  -V, --version".
options() {
	grep -oE '^  (-[A-Za-z], )?--?[A-Za-z][-A-Za-z]*' |
		grep -oE -- '--?[A-Za-z][-A-Za-z]*'
}

# Every option of the help $2 at the start of an entry of page $1's
# OPTIONS ("--top N", "-V, --version").
check_options() {
	n=0
	sed -n '/^OPTIONS/,/^[A-Z]/p' "$tmp/$1.txt" >"$tmp/$1.options"
	for opt in $(echo "$2" | options); do
		grep -qE -- "^ +(-[A-Za-z], )?$opt( |,|\$)" "$tmp/$1.options" ||
			fail "$1, OPTIONS, does not describe $opt"
		n=$((n + 1))
	done
	[ "$n" -ge 3 ] || fail "$1: only $n options found in its --help"
}

# The lines under a heading of ptshare --help, the first word of each.
listed() {
	"$ptshare" --help | awk -v h="$1" '
		index($0, h) == 1 { on = 1; next }
		on && /^  [^ ]/ { print $1; next }
		on { exit }'
}

render ptshare.1
commands=$(listed commands: | grep -vxE 'help|version')
[ "$(echo "$commands" | wc -l)" -ge 5 ] || fail "commands: $commands"
for cmd in $commands; do
	render "ptshare-$cmd.1"
	grep -q "ptshare-$cmd(1)" "$tmp/ptshare.1.txt" ||
		fail "ptshare(1) does not name ptshare-$cmd(1)"
	check_options "ptshare-$cmd.1" "$("$ptshare" "$cmd" --help)"
done
for word in help version --version -V; do
	grep -qE -- "(^|[^-A-Za-z])$word([^-A-Za-z]|\$)" "$tmp/ptshare.1.txt" ||
		fail "ptshare(1) does not name $word"
done
render ptshared.8
check_options ptshared.8 "$("$ptshared" --help)"

# Each policy, at the start of an entry of POLICIES.
sed -n '/^POLICIES/,/^[A-Z]/p' "$tmp/ptshare.1.txt" >"$tmp/policies"
policies=$(listed policies)
[ -n "$policies" ] || fail "ptshare --help lists no policies"
for policy in $policies; do
	grep -qE "^ +$policy( |\$)" "$tmp/policies" ||
		fail "ptshare(1), POLICIES, has no entry for $policy"
done
# And nothing there that the model does not have.
for entry in $(sed -n '1d;s/^       \([a-z][-a-z0-9]*\)\( .*\)\{0,1\}$/\1/p' \
	"$tmp/policies"); do
	echo "$policies" | grep -qx "$entry" ||
		fail "ptshare(1), POLICIES, has $entry, which is no policy"
done
echo "test_man: ok"
