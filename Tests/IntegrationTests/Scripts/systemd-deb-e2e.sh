# The install test of framerated's packages (framerated, libframerateN, libframerate-dev),
# sourced by systemd-e2e.sh --deb once systemd runs as PID 1 of the namespace (with
# copy-on-write /usr and /var/lib/dpkg). Uses its ns, step, fail and wait_for, and $debs.
# Every command runs inside the namespace.
# shellcheck shell=bash

packages=()
pkg_version=
mkdir "/proc/$init_pid/root/tmp/debs"
for deb in "${debs[@]}"; do
    package=$(dpkg-deb -f "$deb" Package)
    packages+=("$package")
    if [[ $package == framerated ]]; then pkg_version=$(dpkg-deb -f "$deb" Version); fi
    cp "$deb" "/proc/$init_pid/root/tmp/debs/"
done
[[ -n $pkg_version ]] || fail "no framerated package among ${debs[*]}"
library_package=$(printf '%s\n' "${packages[@]}" | grep -E '^libframerate[0-9]+$' || true)
[[ -n $library_package && " ${packages[*]} " == *" libframerate-dev "* ]] ||
    fail "the packages are ${packages[*]}: expected framerated, libframerateN and libframerate-dev"

# --- install -----------------------------------------------------------------------
installed=$(ns sh -c 'timeout 120 dpkg -i /tmp/debs/*.deb' 2>&1) || fail "dpkg -i: $installed"
for package in "${packages[@]}"; do
    [[ $(ns dpkg-query -W -f='${Status}' "$package") == "install ok installed" ]] || fail "dpkg: $package is not installed"
done
ns getent passwd framerated >/dev/null || fail "the postinst did not create the user framerated"
ns getent group framerated-admin >/dev/null || fail "the postinst did not create the group framerated-admin"
[[ $(ns systemctl is-enabled framerated.socket) == enabled ]] || fail "the postinst did not enable framerated.socket"
[[ $(ns systemctl is-active framerated.socket) == active ]] || fail "the postinst did not start framerated.socket"
[[ $(ns systemctl is-active framerated.service || true) == inactive ]] || fail "framerated.service started before any client"
step "dpkg -i ${packages[*]} $pkg_version: users created, framerated.socket enabled and listening, the service not started"

ns systemctl start framerated.socket
[[ $(ns systemctl is-active framerated.socket) == active ]] || fail "systemctl start framerated.socket: not active"
step "systemctl start framerated.socket: active"

# --- the binaries need nothing but Debian's libraries ------------------------------
for binary in /usr/bin/framerated /usr/bin/framectl; do
    libraries=$(ns ldd "$binary") || fail "ldd $binary: $libraries"
    foreign=$(grep -v -E '^\s*(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2) |=> /(usr/)?lib/x86_64-linux-gnu/' <<<"$libraries" || true)
    [[ -z $foreign ]] || fail "$binary links outside Debian's library directories:
$foreign"
    if ns readelf -d "$binary" | grep -q -E 'RPATH|RUNPATH'; then fail "$binary has an RPATH or RUNPATH"; fi
done
step "ldd: framerated and framectl link only $(ns ldd /usr/bin/framerated | awk '/=>/ {print $1}' | sort -u | tr '\n' ' ')"

# --- a non-root user -----------------------------------------------------------------
as_user() { ns setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
ticks=$(as_user timeout 30 /usr/bin/framectl register --min 30 --max 60 --count 5 2>&1) ||
    fail "framectl register as nobody: $ticks"
registration=$(head -n 1 <<<"$ticks")
[[ $registration == "link "*" on display 0: refresh "* ]] || fail "framectl register as nobody printed: $registration"
(($(grep -c '^tick ' <<<"$ticks" || true) == 5)) || fail "framectl register as nobody: not 5 ticks: $ticks"
status=$(as_user timeout 30 /usr/bin/framectl status 2>&1) || fail "framectl status as nobody: $status"
[[ $status == *Hz* ]] || fail "framectl status as nobody printed: $status"
[[ $(ns systemctl is-active framerated.service) == active ]] || fail "framerated.service did not start on the first connection"
step "as nobody: framectl register ($registration, 5 ticks) and status work"

# --- versions, man pages, completions ------------------------------------------------
version=$(ns /usr/bin/framectl --version)
[[ $version == "framectl $pkg_version"* ]] || fail "framectl --version: $version (the package is $pkg_version)"
health=$(as_user /usr/bin/framectl health --json) || fail "framectl health --json: $health"
[[ $health == *"\"version\":\"$pkg_version\""* ]] || fail "the daemon reports another version: $health"
page=$(ns man -w framectl) || fail "man -w framectl: no page"
manual=$(ns env MANWIDTH=100 man -P cat framectl 2>/dev/null) || fail "man framectl failed"
for section in ENVIRONMENT FILES "EXIT STATUS" EXAMPLES "SEE ALSO"; do
    grep -q "^$section" <<<"$manual" || fail "man framectl has no $section section"
done
ns man -w 8 framerated >/dev/null || fail "man -w 8 framerated: no page"
for file in /usr/share/bash-completion/completions/framectl /usr/share/zsh/vendor-completions/_framectl \
    /usr/share/fish/vendor_completions.d/framectl.fish; do
    ns test -s "$file" || fail "the package did not install $file"
done
step "versions: $version; daemon $health; man framectl ($page) with its sections; completions"

# --- the C library: each file in its package; a program built with pkg-config runs ---
owner() { ns dpkg-query -S "$1" 2>/dev/null | cut -d: -f1; }
for entry in "/usr/include/framerate.h:libframerate-dev" "/usr/lib/x86_64-linux-gnu/pkgconfig/framerate.pc:libframerate-dev" \
    "/usr/lib/x86_64-linux-gnu/libframerate.so:libframerate-dev" "/usr/lib/x86_64-linux-gnu/libframerate.a:libframerate-dev" \
    "/usr/lib/x86_64-linux-gnu/${library_package/libframerate/libframerate.so.}:$library_package" \
    "/usr/bin/framectl:framerated"; do
    file=${entry%%:*} wanted=${entry##*:}
    [[ $(owner "$file") == "$wanted" ]] || fail "$file belongs to '$(owner "$file")', not $wanted"
done
if command -v cc >/dev/null && command -v pkg-config >/dev/null; then
    cat >"/proc/$init_pid/root/tmp/health.c" <<'PROGRAM'
#include <framerate.h>
#include <stdio.h>
int main(void) {
    fr_conn *conn;
    char *result = NULL;
    int rc = fr_connect(NULL, &conn);
    if (rc != FR_OK) { fprintf(stderr, "fr_connect: %s\n", fr_connect_error()); return 1; }
    rc = fr_call(conn, "grpc.health.v1.Health/Check", NULL, &result);
    if (rc != FR_OK) { fprintf(stderr, "Health/Check: %s\n", fr_strerror(rc)); return 1; }
    printf("%s\n", result);
    fr_free(result);
    fr_close(conn);
    return 0;
}
PROGRAM
    built=$(ns sh -c 'cc -o /tmp/health /tmp/health.c $(pkg-config --cflags --libs framerate)' 2>&1) ||
        fail "cc with pkg-config framerate: $built"
    read -r soname resolved < <(ns ldd /tmp/health | awk '/libframerate/ {print $1, $3}')
    # /lib is /usr/lib on a merged-/usr system, and the loader may name either.
    [[ $soname == "${library_package/libframerate/libframerate.so.}" && $resolved =~ ^/(usr/)?lib/x86_64-linux-gnu/ ]] ||
        fail "the program links '$soname' from '$resolved', not the packaged library"
    answer=$(as_user timeout 30 /tmp/health 2>&1) || fail "the program built against libframerate-dev: $answer"
    [[ $answer == *'"status":"SERVING"'* ]] || fail "Health/Check through libframerate answered: $answer"
    step "C library: header, static library, symlink and framerate.pc in libframerate-dev, the library in $library_package; a program built with pkg-config asks Health/Check as nobody: $answer"
else
    step "C library: each file in its package (no cc or pkg-config here: the program built against it is not tried)"
fi

# --- remove, purge -------------------------------------------------------------------
# The development files go first; the library stays, and what was built against it runs.
removed=$(ns timeout 60 dpkg -r libframerate-dev 2>&1) || fail "dpkg -r libframerate-dev: $removed"
for file in /usr/include/framerate.h /usr/lib/x86_64-linux-gnu/libframerate.so /usr/lib/x86_64-linux-gnu/libframerate.a \
    /usr/lib/x86_64-linux-gnu/pkgconfig/framerate.pc; do
    ns test ! -e "$file" || fail "dpkg -r libframerate-dev left $file"
done
if [[ -e /proc/$init_pid/root/tmp/health ]]; then
    answer=$(as_user timeout 30 /tmp/health 2>&1) || fail "without libframerate-dev, the program no longer runs: $answer"
fi
step "dpkg -r libframerate-dev: the development files removed, $library_package still serves built programs"
removed=$(ns timeout 60 dpkg -r framerated "$library_package" 2>&1) || fail "dpkg -r: $removed"
[[ $(ns systemctl is-active framerated.socket || true) != active ]] || fail "framerated.socket still active after dpkg -r"
[[ $(ns systemctl is-active framerated.service || true) != active ]] || fail "framerated.service still active after dpkg -r"
for file in /usr/bin/framerated /usr/bin/framectl /usr/lib/systemd/system/framerated.socket \
    "/usr/lib/x86_64-linux-gnu/${library_package/libframerate/libframerate.so.}"; do
    ns test ! -e "$file" || fail "dpkg -r left $file"
done
ns test ! -e /run/framerated/framerated.sock || fail "dpkg -r left the socket /run/framerated/framerated.sock"
step "dpkg -r: the socket and the service stopped, the files removed"

purged=$(ns timeout 60 dpkg -P "${packages[@]}" 2>&1) || fail "dpkg -P: $purged"
left=$(ns find /etc /var/lib/systemd -name '*framerated*' 2>/dev/null || true)
[[ -z $left ]] || fail "dpkg -P left: $left"
for package in "${packages[@]}"; do
    if ns dpkg-query -W "$package" >/dev/null 2>&1; then fail "dpkg still knows $package after the purge"; fi
done
step "dpkg -P: no unit, enablement state or file left (the framerated user stays, as Debian keeps system users)"

# --- an upgrade from 0.9.0, whose framerated shipped the C library itself ---------------
# The libraries take its files over: Breaks and Replaces framerated (<< 0.10.0~). The 0.9.0
# package is rebuilt here from what it held: the library's files under framerated's name.
old_root=$(mktemp -d)
for deb in "${debs[@]}"; do
    [[ $(dpkg-deb -f "$deb" Package) == framerated ]] || dpkg-deb -x "$deb" "$old_root"
done
rm -rf "$old_root"/usr/share/doc/libframerate*
mkdir "$old_root/DEBIAN"
printf 'Package: framerated\nVersion: 0.9.0\nArchitecture: amd64\nMaintainer: framerated developers <framerated@framerated.invalid>\nDescription: framerated 0.9.0 as it shipped the C library (the install test'"'"'s stand-in)\n' \
    >"$old_root/DEBIAN/control"
mkdir "/proc/$init_pid/root/tmp/old"
dpkg-deb --root-owner-group --build "$old_root" "/proc/$init_pid/root/tmp/old/framerated_0.9.0_amd64.deb" >/dev/null
rm -rf "$old_root"
installed=$(ns timeout 60 dpkg -i /tmp/old/framerated_0.9.0_amd64.deb 2>&1) || fail "dpkg -i of the 0.9.0 stand-in: $installed"
[[ $(owner /usr/include/framerate.h) == framerated ]] || fail "the 0.9.0 stand-in does not own framerate.h"
# The libraries alone would leave framerated 0.9.0 without its files: dpkg refuses (Breaks).
if refused=$(ns sh -c 'timeout 60 dpkg -i /tmp/debs/libframerate*.deb' 2>&1); then
    fail "dpkg -i of the libraries alone over framerated 0.9.0 succeeded: $refused"
fi
[[ $refused == *"breaks framerated (<< 0.10.0~)"* ]] || fail "dpkg -i of the libraries alone failed for another reason: $refused"
[[ $(owner /usr/include/framerate.h) == framerated ]] || fail "the refused install moved framerate.h"
upgraded_to_new() {
    [[ $(owner /usr/include/framerate.h) == libframerate-dev ]] || fail "after $1 framerate.h belongs to '$(owner /usr/include/framerate.h)'"
    [[ $(owner "/usr/lib/x86_64-linux-gnu/${library_package/libframerate/libframerate.so.}") == "$library_package" ]] ||
        fail "after $1 the library belongs to another package"
    for package in "${packages[@]}"; do
        [[ $(ns dpkg-query -W -f='${Status} ${Version}' "$package") == "install ok installed $pkg_version" ]] ||
            fail "after $1 $package is $(ns dpkg-query -W -f='${Status} ${Version}' "$package")"
    done
    purged=$(ns timeout 60 dpkg -P "${packages[@]}" 2>&1) || fail "dpkg -P after $1: $purged"
}
# With the new framerated, libraries first: dpkg deconfigures 0.9.0 while the libraries
# take its files over (Replaces), then upgrades it.
upgraded=$(ns sh -c 'timeout 120 dpkg -i --auto-deconfigure /tmp/debs/libframerate*.deb /tmp/debs/framerated_*.deb' 2>&1) ||
    fail "dpkg -i over framerated 0.9.0, libraries first: $upgraded"
upgraded_to_new "the upgrade with the libraries first"
# As docs/operations.md says to upgrade: all three at once, in the shell's order (framerated first).
installed=$(ns timeout 60 dpkg -i /tmp/old/framerated_0.9.0_amd64.deb 2>&1) || fail "dpkg -i of the 0.9.0 stand-in again: $installed"
upgraded=$(ns sh -c 'timeout 120 dpkg -i /tmp/debs/*.deb' 2>&1) || fail "dpkg -i /tmp/debs/*.deb over framerated 0.9.0: $upgraded"
upgraded_to_new "dpkg -i *.deb"
step "upgrade from 0.9.0 (the C library inside framerated): the libraries alone are refused (Breaks); dpkg -i *.deb, and the libraries first with --auto-deconfigure, give the new packages the files (Replaces)"
