#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian package, as README says to build it: an optimised,
# unsanitized tree of the sources (no tests), then cpack -G DEB.  It holds
# what an install holds, under /usr, and nothing else; its unit names the
# packaged ptshared; its Depends names the package of every library its
# programs need (readelf's NEEDED, found with ldconfig and dpkg -S),
# versioned as dpkg-shlibdeps says, and no sanitizer runtime; and apt-get
# would install it here.
#   test_package.sh SOURCE_DIR
. "$(dirname "$0")/lib.sh"
src=$1
need cpack dpkg-deb dpkg-shlibdeps readelf apt-get
build=$tmp/build
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DPTSHARE_TESTS=OFF >"$tmp/log" 2>&1 || fail "configure: $(cat "$tmp/log")"
nice -n 10 cmake --build "$build" -j"$(nproc)" >"$tmp/log" 2>&1 ||
	fail "build: $(tail -n 30 "$tmp/log")"
(cd "$build" && cpack -G DEB) >"$tmp/log" 2>&1 || fail "cpack: $(cat "$tmp/log")"
version=$("$build/bin/ptshare" --version)
deb=$build/ptshare_${version#ptshare }_$(dpkg --print-architecture).deb
[ -f "$deb" ] || fail "no $deb: $(ls "$build")"

# Its files, but the docs/ pages, exactly (docs/html.md's screenshot too).
dpkg-deb -c "$deb" >"$tmp/contents" || fail "dpkg-deb -c"
awk '$1 !~ /^d/ { print $1, $6 }' "$tmp/contents" |
	grep -v '^-rw-r--r-- ./usr/share/doc/ptshare/docs/[a-z-]*\.md$' |
	sort >"$tmp/files"
sort >"$tmp/want" <<'LIST'
-rw-r--r-- ./usr/lib/ptshare/libptshare.so
-rw-r--r-- ./usr/lib/systemd/system/ptshared.service
-rw-r--r-- ./usr/share/bash-completion/completions/ptshare
-rw-r--r-- ./usr/share/doc/ptshare/README.md
-rw-r--r-- ./usr/share/doc/ptshare/docs/html-report.png
-rw-r--r-- ./usr/share/doc/ptshare/docs/report.schema.json
-rw-r--r-- ./usr/share/man/man1/ptshare-aslr.1.gz
-rw-r--r-- ./usr/share/man/man1/ptshare-replay.1.gz
-rw-r--r-- ./usr/share/man/man1/ptshare-report.1.gz
-rw-r--r-- ./usr/share/man/man1/ptshare-run.1.gz
-rw-r--r-- ./usr/share/man/man1/ptshare-snapshot.1.gz
-rw-r--r-- ./usr/share/man/man1/ptshare-top.1.gz
-rw-r--r-- ./usr/share/man/man1/ptshare.1.gz
-rw-r--r-- ./usr/share/man/man8/ptshared.8.gz
-rwxr-xr-x ./usr/bin/ptshare
-rwxr-xr-x ./usr/lib/ptshare/ptshared
LIST
diff "$tmp/want" "$tmp/files" >"$tmp/diff" ||
	fail "the package's files differ (- expected, + packaged): $(cat "$tmp/diff")"
grep -q '/usr/share/doc/ptshare/docs/model\.md$' "$tmp/contents" ||
	fail "no docs/model.md"

dpkg-deb -x "$deb" "$tmp/root"
grep -q '^ExecStart=/usr/lib/ptshare/ptshared ' \
	"$tmp/root/usr/lib/systemd/system/ptshared.service" ||
	fail "the packaged unit: $(grep ExecStart "$tmp/root/usr/lib/systemd/system/ptshared.service")"
[ "$(dpkg-deb -f "$deb" Package)" = ptshare ] || fail "Package"

depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
has "$depends" "libasan" && fail "a sanitizer runtime in Depends: $depends"
has "$depends" "libubsan" && fail "a sanitizer runtime in Depends: $depends"
needed=$(for f in usr/bin/ptshare usr/lib/ptshare/ptshared \
	usr/lib/ptshare/libptshare.so; do
	readelf -d "$tmp/root/$f" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'
done | sort -u)
[ "$(echo "$needed" | wc -l)" -ge 5 ] || fail "NEEDED: $needed"
for lib in $needed; do
	path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
	[ -n "$path" ] || fail "$lib: not known to ldconfig"
	owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")") ||
		fail "$lib: no package owns $path"
	pkg=${owner%%:*}
	echo "$depends" | tr ',' '\n' | grep -qE "^ *$pkg( |\$)" ||
		fail "$lib ($pkg) is needed, not in Depends: $depends"
done
for pkg in libc6 libdw1 liburing2 libzstd1; do
	echo "$depends" | tr ',' '\n' | grep -qE "^ *$pkg( |\$)" ||
		fail "$pkg not in Depends: $depends"
done

recommends=$(dpkg-deb -f "$deb" Recommends)
has "$recommends" "libdebuginfod1" ||
	fail "libdebuginfod1 (debuginfod, docs/report-json.md) not in Recommends: $recommends"

apt-get install -s "$deb" >"$tmp/apt" 2>&1 || fail "apt-get install -s: $(cat "$tmp/apt")"
grep -q '^Inst ptshare ' "$tmp/apt" || fail "apt-get would not install it: $(cat "$tmp/apt")"
echo "test_package: ok"
