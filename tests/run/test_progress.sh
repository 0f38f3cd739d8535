#!/bin/sh
# SPDX-License-Identifier: MIT
# The progress line of ptshare run, in a pseudo-terminal (script(1)): the
# demo's pre-forking server (9 processes over a 1 GiB pool, held 3 s) run
# with stderr a terminal shows the line redrawn in place ("\r... now"),
# once a second or so, its processes reaching the 9 and its tables the
# peak the report gives (within a tenth), and erased ("\r" then erase to the end of the
# line) before ptshare ends; --quiet shows none, nor does a stderr that
# is a file.
#   test_progress.sh PTSHARE PREFORK_POOL LIB
ptshare=$1
pool=$2
. "$3"
need script
cd "$tmp"

# $1: ptshare run's options; the terminal's bytes into $tmp/tty.
in_pty() {
	script -qec "'$ptshare' run --no-record -o '$tmp/report' $1 -- \
		'$pool' --hold 3 >/dev/null" "$tmp/tty" >/dev/null ||
		fail "ptshare run $1: $(cat "$tmp/tty")"
}

in_pty ""
# The lines drawn, one a line: "ptshare run: 2 s, 9 processes, 26
# records, 4740 page tables (18.5 MiB) now".
tr '\r' '\n' <"$tmp/tty" | sed -n 's/^\(ptshare run: [0-9]* s, .* now\).*/\1/p' \
	>"$tmp/lines"
n=$(wc -l <"$tmp/lines")
[ "$n" -ge 3 ] || fail "$n progress lines in 3 s: $(cat -v "$tmp/tty")"
grep -q ' 9 processes, ' "$tmp/lines" || fail "never 9 processes: $(cat "$tmp/lines")"
peak=$(awk '/^linux \(today, model\)/ { print $4 }' "$tmp/report")
[ -n "$peak" ] || fail "no peak in the report: $(cat "$tmp/report")"
most=$(sed 's/.* records, \([0-9]*\) page tables.*/\1/' "$tmp/lines" | sort -n |
	tail -n 1)
# The line samples once a second, the report takes the peak at a reading
# of /proc: on a loaded machine the line may miss the last tables of the
# peak, never show more.
[ "$most" -le "$peak" ] && [ "$most" -ge $((peak - peak / 10)) ] ||
	fail "the line's most tables $most, the report's peak $peak"
# Seconds counted up, one line each.
[ "$(sed -n 1p "$tmp/lines" | cut -d' ' -f3)" -le 1 ] ||
	fail "first line: $(sed -n 1p "$tmp/lines")"
# Erased at the end: the last thing ptshare wrote after its last line.
# ("\r" is R and ESC is E here: each line is "Rptshare run: ... nowE[K".)
tr '\r\033\n' 'RE ' <"$tmp/tty" |
	grep -o 'Rptshare run: [0-9]* s, [^R]* nowE\[K\|RE\[K' >"$tmp/draws"
[ "$(tail -n 1 "$tmp/draws")" = 'RE[K' ] ||
	fail "not erased: $(tail -n 2 "$tmp/draws")"
[ "$(grep -c '^RE\[K$' "$tmp/draws")" = 1 ] || fail "erased twice"
echo "progress: $n lines, the most $most tables: ok"

in_pty --quiet
! grep -q 'page tables (' "$tmp/tty" || fail "--quiet: $(cat -v "$tmp/tty")"
"$ptshare" run --no-record -o "$tmp/report" -- "$pool" --hold 2 \
	>/dev/null 2>"$tmp/err" || fail "ptshare run: $(cat "$tmp/err")"
! grep -q 'page tables (' "$tmp/err" || fail "stderr a file: $(cat -v "$tmp/err")"
echo "quiet: ok"
