#!/usr/bin/env bash
# Turns a staged `make install DESTDIR=ROOT PREFIX=/usr` tree into framerated's .deb with
# dpkg-deb, the way debhelper would: stripped binaries, gzipped man pages and changelog,
# copyright, md5sums, Depends from dpkg-shlibdeps, the maintainer scripts of this
# directory; then lintian, whose errors fail the build (accepted warnings, with the
# reasons: docs/operations.md, "The Debian package").
#
# The maintainer address is under .invalid (RFC 2606): the project has no mailing list,
# and lintian rejects localhost.
#
# usage: build-deb.sh ROOT VERSION COMMIT OUTPUT.deb
set -euo pipefail
root=$(readlink -f "$1") version=$2 commit=${3:-unknown} output=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ -d $root/usr/bin && -n $version ]] || { echo "usage: build-deb.sh ROOT VERSION COMMIT OUTPUT.deb" >&2; exit 2; }

# The binaries: debugging symbols off (as dh_strip does), and no RUNPATH: the Swift
# runtime is linked in statically, so nothing is to be found beside the binary.
for binary in "$root"/usr/bin/*; do
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$binary"
done
for library in "$root"/usr/lib/*/libframerate.so.*.*; do
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$library"
    chmod 0644 "$library"   # Debian policy 8.1: shared libraries are not executable
done
if readelf -d "$root"/usr/bin/* | grep -E 'RPATH|RUNPATH'; then
    echo "build-deb.sh: a binary still has an RPATH/RUNPATH (see above)" >&2
    exit 1
fi

# Documentation as Debian lays it out.
doc=$root/usr/share/doc/framerated
install -D -m 0644 "$here/copyright" "$doc/copyright"
sed -e "s/@VERSION@/$version/" -e "s/@COMMIT@/$commit/" \
    -e "s/@DATE@/$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git -C "$here" log -1 --format=%ct 2>/dev/null || date +%s)}")/" \
    "$here/changelog.in" | gzip -9n >"$doc/changelog.gz"
find "$root/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9nf {} +
chmod 0644 "$doc/changelog.gz"

# Depends: the shared libraries the binaries and the C library link (libc, libsystemd,
# libstdc++, libgcc_s, libm), from dpkg-shlibdeps; then what the maintainer scripts run.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/debian"
printf 'Source: framerated\n\nPackage: framerated\nArchitecture: amd64\n' >"$scratch/debian/control"
objects=("$root"/usr/bin/* "$root"/usr/lib/*/libframerate.so.*.*)
shlibs=$(cd "$scratch" && dpkg-shlibdeps -O "${objects[@]}" | sed -n 's/^shlibs:Depends=//p')
[[ -n $shlibs ]] || { echo "build-deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
depends="$shlibs, systemd (>= 252) | systemd-sysusers, init-system-helpers (>= 1.52)"

mkdir -p "$root/DEBIAN"
sed -e "s/@VERSION@/$version/" -e "s/@INSTALLED_SIZE@/$(du -sk --exclude=DEBIAN "$root" | cut -f1)/" \
    -e "s/@DEPENDS@/$depends/" "$here/control.in" >"$root/DEBIAN/control"
install -m 0755 "$here/postinst" "$here/prerm" "$here/postrm" "$root/DEBIAN/"
# The C library is a public shared library: ldconfig must run after install and removal,
# and packages linking it get their dependency from shlibs (as dh_makeshlibs writes them).
printf 'activate-noawait ldconfig\n' >"$root/DEBIAN/triggers"
soname=$(readelf -d "$root"/usr/lib/*/libframerate.so.*.* | sed -n 's/.*Library soname: \[libframerate\.so\.\([0-9]*\)\].*/\1/p')
printf 'libframerate %s framerated (>= %s)\n' "$soname" "$version" >"$root/DEBIAN/shlibs"
chmod 0644 "$root/DEBIAN/triggers" "$root/DEBIAN/shlibs"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums" "$root/DEBIAN/control"

mkdir -p "$(dirname "$output")"
dpkg-deb --root-owner-group -Zxz --build "$root" "$output"
echo "lintian $output"
lintian --fail-on error --display-info "$output"
