#!/bin/sh
# SPDX-License-Identifier: MIT
# cmake --install into a temporary prefix installs what docs/run.md says
# where it says, and the installed ptshare traces a program with the
# build tree out of reach: a mount namespace of its own has an empty
# tmpfs over the build and source trees, so that ptshared and
# libptshare.so can only be the installed ones, found relative to the
# installed ptshare.
#   test_install.sh BUILD_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
build=$1 src=$2
need unshare mount
# scripts/valgrind.sh's wrappers of ptshare and ptshared run the real
# programs in the build tree, which this test hides.
[ ! -e "$build/bin/ptshare.real" ] ||
	skip "the build's programs are valgrind.sh's wrappers into the build tree"
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
	fail "cmake --install: $(cat "$tmp/install.log")"

for f in bin/ptshare lib/ptshare/ptshared lib/ptshare/libptshare.so \
	share/man/man1/ptshare.1.gz share/man/man1/ptshare-run.1.gz \
	share/man/man8/ptshared.8.gz \
	share/bash-completion/completions/ptshare \
	lib/systemd/system/ptshared.service share/doc/ptshare/README.md; do
	[ -f "$prefix/$f" ] || fail "$f not installed"
done
[ -x "$prefix/lib/ptshare/ptshared" ] || fail "ptshared not executable"
# The shim, loaded into every image, needs libc alone, and its copy of
# libgcc's unwinder is its own: none of its symbols is exported, so a
# program's C++ exceptions keep going to its libgcc_s (docs/shim.md, The
# unwinder).
need readelf
shim=$prefix/lib/ptshare/libptshare.so
needed=$(readelf -d "$shim" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ "$needed" = libc.so.6 ] || fail "the shim needs $needed"
exported=$(readelf --dyn-syms -W "$shim" | awk '$7 != "UND" { print $8 }' |
	grep -E '^(_Unwind_|__register_frame|__deregister_frame|__frame_state_for)' ||
	true)
[ -z "$exported" ] || fail "the shim exports libgcc's $exported"
# Nothing beside them in bin/: the daemon and the shim are private.
[ "$(ls "$prefix/bin")" = ptshare ] || fail "bin/ holds $(ls "$prefix/bin")"
# The manifest lists what was installed, the unit written at install
# time included.
grep -qx "$prefix/lib/systemd/system/ptshared.service" \
	"$build/install_manifest.txt" || fail "the unit is not in the manifest"
grep -q "^ExecStart=$prefix/lib/ptshare/ptshared " \
	"$prefix/lib/systemd/system/ptshared.service" ||
	fail "the unit's ExecStart is not the installed ptshared"

# The run, out of reach of the trees.  unshare -m as root (CI), else in a
# user namespace of the caller's where it may mount.
ns="unshare -m"
[ "$(id -u)" -eq 0 ] || ns="unshare -rm"
$ns true 2>/dev/null || skip "no mount namespace here ($ns)"
$ns sh -c '
	mount -t tmpfs none "$1" && mount -t tmpfs none "$2" || exit 99
	[ -z "$(ls "$1")" ] || exit 98
	cd "$4"
	exec "$3/bin/ptshare" run -- /bin/sh -c "echo traced"
' sh "$build" "$src" "$prefix" "$tmp" >"$tmp/out" 2>"$tmp/err" || status=$?
case ${status:-0} in
0) ;;
99) skip "cannot mount over the build tree" ;;
*) fail "the installed ptshare run: status ${status}: $(cat "$tmp/err")" ;;
esac
[ "$(cat "$tmp/out")" = traced ] || fail "the program's output: $(cat "$tmp/out")"
has "$(cat "$tmp/err")" "ptshare run: 1 processes modelled at the peak" ||
	fail "no report: $(cat "$tmp/err")"
has "$(cat "$tmp/err")" "records: " || fail "no records line: $(cat "$tmp/err")"
# The shim was preloaded: it sent the daemon records (not only /proc).
has "$(cat "$tmp/err")" "records: 0 from the shim" &&
	fail "the shim sent nothing: $(cat "$tmp/err")"
# It kept the run's trace, compressed, in its current directory; the
# installed ptshare replays it (libzstd both ways).
set -- "$tmp"/ptshare.sh.*.trace.zst
[ $# -eq 1 ] && [ -f "$1" ] || fail "no trace kept: $(ls "$tmp")"
"$prefix/bin/ptshare" replay "$1" >"$tmp/replay" 2>&1 ||
	fail "replay of the kept trace: $(cat "$tmp/replay")"
has "$(cat "$tmp/replay")" "ptshare replay: 1 processes modelled" ||
	fail "replay of the kept trace: $(cat "$tmp/replay")"

# A ptshare whose private folder is missing says where it looked.
mkdir "$tmp/lonely"
cp "$prefix/bin/ptshare" "$tmp/lonely/"
status=0
"$tmp/lonely/ptshare" run -- /bin/true 2>"$tmp/err" || status=$?
[ "$status" -eq 1 ] || fail "a lone ptshare run: status $status"
has "$(cat "$tmp/err")" "belong in $tmp/lonely/../lib/ptshare" ||
	fail "a lone ptshare run: $(cat "$tmp/err")"
echo "test_install: ok"
