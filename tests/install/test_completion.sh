#!/bin/sh
# SPDX-License-Identifier: MIT
# The bash completion, sourced in bash with the built ptshare first on
# PATH, completes commands, each command's options (every one its --help
# lists), policy names (every one ptshare --help lists, in a list too),
# --faults modes, and CMD after the options of run.
#   test_completion.sh BUILD_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
build=$1 src=$2
need bash
ptshare=$build/bin/ptshare

# The completions of the words given (the last one being typed), one a line.
complete() {
	PATH=$build/bin:$PATH bash -c '
		. "$1"
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_ptshare
		printf "%s\n" "${COMPREPLY[@]}"
	' bash "$src/dist/ptshare.bash" "$@" 2>"$tmp/err" ||
		fail "completing '$*': $(cat "$tmp/err")"
	[ ! -s "$tmp/err" ] || fail "completing '$*' says: $(cat "$tmp/err")"
}

# The completions of "$@" are exactly the lines of $want (any order).
expect() {
	got=$(complete "$@" | sort)
	[ "$got" = "$(echo "$want" | sort)" ] ||
		fail "completing '$*': got [$got], not [$want]"
}

listed() {
	"$ptshare" --help | awk -v h="$1" '
		index($0, h) == 1 { on = 1; next }
		on && /^  [^ ]/ { print $1; next }
		on { exit }'
}

commands=$(listed commands: | grep -vxE 'help|version')
policies=$(listed policies)
[ "$(echo "$commands" | wc -l)" -ge 5 ] || fail "commands: $commands"
[ "$(echo "$policies" | wc -l)" -ge 4 ] || fail "policies: $policies"

want=$(printf '%s\nhelp\nversion\n--help\n--version' "$commands")
expect ptshare ""
want=$(printf 'run\nreplay\nreport')
expect ptshare r
want=$commands
expect ptshare help ""

for cmd in $commands; do
	want=$("$ptshare" "$cmd" --help |
		grep -oE '^  (-[A-Za-z], )?--?[A-Za-z][-A-Za-z]*' |
		grep -oE -- '--?[A-Za-z][-A-Za-z]*'
		echo --help)
	expect ptshare "$cmd" -
done
want=--policy
expect ptshare run --po

want=$policies
expect ptshare snapshot --policy ""
want=$(echo "$policies" | sed 's/^/linux,/')
expect ptshare run --top 3 --policy linux,
want=linux,mccracken-2005
expect ptshare replay t --policy linux,mcc
want=$(printf 'off\ntable\nall')
expect ptshare run --faults ""

# After the options of run, CMD is a command: none of ptshare's options.
complete ptshare run --interval 2 -- bas >"$tmp/cmds"
grep -qx bash "$tmp/cmds" || fail "CMD after --: $(cat "$tmp/cmds")"
grep -qv '^bas' "$tmp/cmds" && fail "CMD after --: $(cat "$tmp/cmds")"
complete ptshare run --top 3 true --p >"$tmp/args"
grep -q -- --policy "$tmp/args" && fail "run's options offered to its CMD"
# A file where a file goes.
touch "$tmp/report-file"
want=$tmp/report-file
expect ptshare report --socket s -o "$tmp/report-f"
echo "test_completion: ok"
