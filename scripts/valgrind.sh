#!/bin/sh
# The whole test suite with the daemon and the tools (ptshared, ptshare)
# under valgrind's memcheck (docs/valgrind.md).  An unsanitized Debug build
# in build-valgrind, whose lib/ptshare/ptshared and bin/ptshare are wrappers
# that run the real programs (ptshared.real, ptshare.real) under valgrind.  The
# programs they trace, with the shim preloaded, run natively: valgrind
# takes its own preloads out of the environment of a program exec'd by one
# it does not follow, so they never meet the shim's.  Each process's
# errors go to a log of its own in build-valgrind/valgrind (not to its
# stderr, which tests compare); a process with an error exits 99.  Fails
# when a test fails or any log has an error.  Not part of CI: it takes far
# longer (docs/valgrind.md says how long).
set -eu
cd "$(dirname "$0")/.."
# What the suite needs, as test.sh installs it, and valgrind.
PTSHARE_EXTRA_PACKAGES="valgrind $(sed -n 's/^PTSHARE_EXTRA_PACKAGES="\(.*\)"$/\1/p' scripts/test.sh)"
. scripts/deps.sh
build=${PTSHARE_BUILD:-build-valgrind}
logs=$(pwd)/$build/valgrind
# The real programs back in place, so that the build relinks what changed.
programs="lib/ptshare/ptshared bin/ptshare"
for p in $programs; do
	if [ -f "$build/$p.real" ]; then
		mv -f "$build/$p.real" "$build/$p"
	fi
done
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DPTSHARE_SANITIZE=OFF >/dev/null
cmake --build "$build" -j"$(nproc)"
rm -rf "$logs"
# Some tests run ptshare as another user (nobody, postgres): their logs too.
mkdir -p -m 1777 "$logs"
for p in $programs; do
	mv "$build/$p" "$build/$p.real"
	# The log is opened here, on fd 900, not by valgrind (which leaves its
	# --log-file on fd 3 of the programs ptshare runs, where a test that
	# counts its fds sees it); no vgdb, whose files in TMPDIR a SIGKILL
	# would leave behind.
	cat >"$build/$p" <<EOF
#!/bin/bash
exec 900>>"$logs/${p##*/}.\$\$.log"
exec valgrind --tool=memcheck -q --error-exitcode=99 --leak-check=full \\
	--show-leak-kinds=definite --errors-for-leak-kinds=definite \\
	--child-silent-after-fork=yes --vgdb=no --log-fd=900 \\
	"$(pwd)/$build/$p.real" "\$@"
EOF
	chmod +x "$build/$p"
done
status=0
(cd "$build" && ctest --output-on-failure --timeout 3000 -j"$(nproc)") || status=1
errors=0
for log in "$logs"/*.log; do
	if [ -s "$log" ]; then
		errors=$((errors + 1))
		echo "== $log"
		cat "$log"
	fi
done
echo "valgrind: $(ls "$logs" | wc -l) processes, $errors with errors"
[ "$errors" -eq 0 ] || status=1
exit "$status"
