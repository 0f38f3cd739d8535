# bash completion for ptshare: its commands, each command's options and
# the policy names.  They are read from ptshare's own --help (the commands
# and policies from `ptshare --help`, a command's options from `ptshare
# CMD --help`), so that they are always those of the ptshare completed.
# SPDX-License-Identifier: MIT

# The lines of `ptshare --help` under the heading that starts with $2, the
# first word of each.
_ptshare_list()
{
	"$1" --help 2>/dev/null | awk -v h="$2" '
		index($0, h) == 1 { on = 1; next }
		on && /^  [^ ]/ { print $1; next }
		on { exit }'
}

# Every option `ptshare CMD --help` lists ("  --top N", "  -V, --version").
_ptshare_options()
{
	"$1" "$2" --help 2>/dev/null |
		grep -oE '^  (-[A-Za-z], )?--?[A-Za-z][-A-Za-z]*' |
		grep -oE -- '--?[A-Za-z][-A-Za-z]*'
	echo --help
}

_ptshare_files()
{
	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen -f -- "$1")
}

# The value of option $3 of command $2, being typed as $4.
_ptshare_value()
{
	local ptshare=$1 cmd=$2 opt=$3 cur=$4 words
	case $opt in
	--policy)
		# A comma-separated list: the last name is the one completed.
		local head=""
		[[ $cur == *,* ]] && head=${cur%,*},
		words=$(_ptshare_list "$ptshare" policies)
		mapfile -t COMPREPLY < <(compgen -P "$head" -W "$words" -- "${cur##*,}")
		compopt -o nospace 2>/dev/null
		;;
	--faults | --group-by)
		# "[--faults off|table|all]" in the usage.
		words=$("$ptshare" "$cmd" --help 2>/dev/null |
			grep -oE -- "$opt [a-z|]+" | head -n1)
		words=${words#"$opt "}
		mapfile -t COMPREPLY < <(compgen -W "${words//|/ }" -- "$cur")
		;;
	--pid)
		mapfile -t COMPREPLY < <(compgen -W "$(cd /proc && echo [0-9]*)" \
			-- "$cur")
		;;
	--json | --html | --record | --text | --socket | --report-socket | -o)
		_ptshare_files "$cur"
		;;
	*)
		COMPREPLY=()
		;;
	esac
}

# Whether option $3 of command $2 takes a value: "  --top N" in its help.
_ptshare_takes_value()
{
	"$1" "$2" --help 2>/dev/null |
		grep -qE -- "^  (-[A-Za-z], )?$3 [A-Za-z]"
}

_ptshare()
{
	local cur=${COMP_WORDS[COMP_CWORD]} ptshare=${COMP_WORDS[0]}
	local cmd="" i=1 word
	COMPREPLY=()
	if ((COMP_CWORD == 1)); then
		mapfile -t COMPREPLY < <(compgen -W \
			"$(_ptshare_list "$ptshare" commands:) --help --version" \
			-- "$cur")
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	if [[ $cmd == help ]]; then
		((COMP_CWORD == 2)) && mapfile -t COMPREPLY < <(compgen -W \
			"$(_ptshare_list "$ptshare" commands: |
				grep -vxE 'help|version')" -- "$cur")
		return 0
	fi
	# Where the options end: at "--", or at CMD for run and aslr; after
	# them, CMD is completed as a command and its arguments as files.
	local args=0
	for ((i = 2; i < COMP_CWORD; i++)); do
		word=${COMP_WORDS[i]}
		if ((args)); then
			args=$((args + 1))
		elif [[ $word == -- ]]; then
			args=1
		elif [[ $word == -* ]]; then
			_ptshare_takes_value "$ptshare" "$cmd" "$word" && ((i++))
		elif [[ $cmd == run || $cmd == aslr ]]; then
			args=2
		fi
	done
	if ((args == 1)); then
		mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
		return 0
	fi
	if ((args > 1)); then
		_ptshare_files "$cur"
		return 0
	fi
	local prev=${COMP_WORDS[COMP_CWORD - 1]}
	if ((COMP_CWORD > 2)) && [[ $prev == -* ]] &&
		_ptshare_takes_value "$ptshare" "$cmd" "$prev"; then
		_ptshare_value "$ptshare" "$cmd" "$prev" "$cur"
	elif [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W \
			"$(_ptshare_options "$ptshare" "$cmd")" -- "$cur")
	elif [[ $cmd == replay ]]; then
		_ptshare_files "$cur"
	fi
	return 0
}
complete -F _ptshare ptshare
