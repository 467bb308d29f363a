#!/usr/bin/env bash
# Turns a staged `make install DESTDIR=ROOT PREFIX=/usr` tree, with the C client library
# installed into it too, into framerated's three .debs with dpkg-deb, the way debhelper
# would split a source package:
# - framerated: the daemon, framectl, the units, man pages, completions and documentation;
# - libframerateN, N the library's soname major: the shared library (Debian policy 8.1);
# - libframerate-dev: the header, the static library, the libframerate.so link-time
#   symlink and framerate.pc (policy 8.4), depending on libframerateN of the same version.
# Each gets stripped objects, gzipped man pages and changelog, copyright, md5sums and its
# Depends from dpkg-shlibdeps; framerated its maintainer scripts, the library its shlibs
# file and ldconfig trigger; both library packages take over the files framerated shipped
# before 0.10.0 (Breaks and Replaces). Then lintian checks all three; its errors fail the
# build (its remaining informational tags, with the reasons: docs/operations.md, "Lintian").
#
# The maintainer address is under .invalid (RFC 2606): the project has no mailing list,
# and lintian rejects localhost.
#
# usage: build-deb.sh ROOT VERSION COMMIT OUTDIR
#   ROOT becomes framerated's tree (the library's files are moved out of it); the
#   packages are written to OUTDIR/PACKAGE_VERSION_amd64.deb, and their paths printed.
set -euo pipefail
root=$(readlink -f "$1") version=$2 commit=${3:-unknown} outdir=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() { echo "usage: build-deb.sh ROOT VERSION COMMIT OUTDIR" >&2; exit 2; }
[[ -d $root/usr/bin && -n $version && -n $outdir ]] || usage
mkdir -p "$outdir"
outdir=$(readlink -f "$outdir")

# --- the library and its soname -------------------------------------------------------
mapfile -t libraries < <(find "$root/usr/lib" -type f -name 'libframerate.so.*.*')
((${#libraries[@]} == 1)) || { echo "build-deb.sh: expected one libframerate.so.X.Y.Z under $root/usr/lib, found ${#libraries[@]}" >&2; exit 1; }
library=${libraries[0]}
libdir=$(dirname "${library#"$root"/}")   # usr/lib/<multiarch>
major=$(readelf -d "$library" | sed -n 's/.*Library soname: \[libframerate\.so\.\([0-9]*\)\].*/\1/p')
[[ -n $major ]] || { echo "build-deb.sh: $library has no libframerate.so.N soname" >&2; exit 1; }
libpkg=libframerate$major
devpkg=libframerate-dev

# --- split the tree: framerated keeps ROOT, the library's files move out ---------------
trees=$outdir/trees
rm -rf "$trees"
lib_root=$trees/$libpkg dev_root=$trees/$devpkg
move() {
    local to=$1 path
    shift
    for path in "$@"; do
        [[ -e $root/$path || -L $root/$path ]] || { echo "build-deb.sh: $path is not in $root" >&2; exit 1; }
        mkdir -p "$to/$(dirname "$path")"
        mv "$root/$path" "$to/$path"
    done
}
move "$lib_root" "$libdir/libframerate.so.$major" "$libdir/$(basename "$library")"
move "$dev_root" usr/include/framerate.h "$libdir/libframerate.so" "$libdir/libframerate.a" "$libdir/pkgconfig/framerate.pc"
# Nothing else of the library may stay behind: these directories must now be empty.
rmdir "$root/$libdir/pkgconfig" "$root/$libdir" "$root/usr/include"

# --- objects: debugging symbols off (as dh_strip does), no RUNPATH --------------------
# The Swift runtime is linked in statically, so nothing is to be found beside a binary.
for binary in "$root"/usr/bin/*; do
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$binary"
done
shared=$lib_root/$libdir/$(basename "$library")
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$shared"
chmod 0644 "$shared"   # Debian policy 8.1: shared libraries are not executable
strip --strip-debug --remove-section=.comment --remove-section=.note --enable-deterministic-archives \
    "$dev_root/$libdir/libframerate.a"
if readelf -d "$root"/usr/bin/* "$shared" | grep -E 'RPATH|RUNPATH'; then
    echo "build-deb.sh: an object still has an RPATH/RUNPATH (see above)" >&2
    exit 1
fi

# --- documentation as Debian lays it out: each package its copyright and changelog -----
find "$root/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9nf {} +
date=$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git -C "$here" log -1 --format=%ct 2>/dev/null || date +%s)}")
for tree in "$root:framerated" "$lib_root:$libpkg" "$dev_root:$devpkg"; do
    doc=${tree%%:*}/usr/share/doc/${tree##*:}
    install -D -m 0644 "$here/copyright" "$doc/copyright"
    sed -e "s/@VERSION@/$version/" -e "s/@COMMIT@/$commit/" -e "s/@DATE@/$date/" "$here/changelog.in" |
        gzip -9n >"$doc/changelog.gz"
    chmod 0644 "$doc/changelog.gz"
done

# --- Depends: the shared libraries each package's objects link, from dpkg-shlibdeps ----
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/debian"
printf 'Source: framerated\n\nPackage: framerated\nArchitecture: amd64\n\nPackage: %s\nArchitecture: amd64\n' "$libpkg" \
    >"$scratch/debian/control"
shlibdeps() {
    local found
    found=$(cd "$scratch" && dpkg-shlibdeps -O "$@" | sed -n 's/^shlibs:Depends=//p')
    [[ -n $found ]] || { echo "build-deb.sh: dpkg-shlibdeps found no dependencies of $*" >&2; exit 1; }
    printf '%s' "$found"
}
daemon_depends="$(shlibdeps "$root"/usr/bin/*), systemd (>= 252) | systemd-sysusers, init-system-helpers (>= 1.52)"
lib_depends=$(shlibdeps "$shared")
dev_depends="$libpkg (= $version)"

# --- control files, maintainer scripts, md5sums; then dpkg-deb -------------------------
debs=()
package() {
    local tree=$1 name=$2 template=$3 depends=$4
    mkdir -p "$tree/DEBIAN"
    sed -e "s/@VERSION@/$version/" -e "s/@LIBRARY@/$libpkg/" -e "s/@DEPENDS@/$depends/" \
        -e "s/@INSTALLED_SIZE@/$(du -sk --exclude=DEBIAN "$tree" | cut -f1)/" "$here/$template" >"$tree/DEBIAN/control"
    (cd "$tree" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$tree/DEBIAN/md5sums"
    chmod 0644 "$tree/DEBIAN/control" "$tree/DEBIAN/md5sums"
    local deb=$outdir/${name}_${version}_amd64.deb
    dpkg-deb --root-owner-group -Zxz --build "$tree" "$deb" >/dev/null
    debs+=("$deb")
}
mkdir -p "$root/DEBIAN"
install -m 0755 "$here/postinst" "$here/prerm" "$here/postrm" "$root/DEBIAN/"
package "$root" framerated framerated.control.in "$daemon_depends"
# A public shared library: ldconfig runs after install and removal, and packages linking
# it get their dependency from shlibs (as dh_makeshlibs writes them).
mkdir -p "$lib_root/DEBIAN"
printf 'activate-noawait ldconfig\n' >"$lib_root/DEBIAN/triggers"
printf 'libframerate %s %s (>= %s)\n' "$major" "$libpkg" "$version" >"$lib_root/DEBIAN/shlibs"
# The symbols file: each exported function with the version that first shipped it, checked
# against libframerate.symbols (-c4: a symbol lost or added without a line there fails).
(cd "$scratch" && dpkg-gensymbols -p"$libpkg" -v"$version" -e"$shared" -I"$here/libframerate.symbols" \
    -O"$lib_root/DEBIAN/symbols" -c4) >&2
chmod 0644 "$lib_root/DEBIAN/triggers" "$lib_root/DEBIAN/shlibs" "$lib_root/DEBIAN/symbols"
package "$lib_root" "$libpkg" libframerate.control.in "$lib_depends"
package "$dev_root" "$devpkg" libframerate-dev.control.in "$dev_depends"

printf '%s\n' "${debs[@]}"
echo "lintian ${debs[*]}" >&2
lintian --fail-on error --display-info "${debs[@]}" >&2
