# The install test of framerated's .deb, sourced by systemd-e2e.sh --deb once systemd
# runs as PID 1 of the namespace (with copy-on-write /usr and /var/lib/dpkg). Uses its
# ns, step, fail and wait_for, and $deb. Every command runs inside the namespace.
# shellcheck shell=bash

pkg_version=$(dpkg-deb -f "$deb" Version)
cp "$deb" "/proc/$init_pid/root/tmp/framerated.deb"

# --- install -----------------------------------------------------------------------
installed=$(ns timeout 120 dpkg -i /tmp/framerated.deb 2>&1) || fail "dpkg -i: $installed"
[[ $(ns dpkg-query -W -f='${Status}' framerated) == "install ok installed" ]] || fail "dpkg: framerated is not installed"
ns getent passwd framerated >/dev/null || fail "the postinst did not create the user framerated"
ns getent group framerated-admin >/dev/null || fail "the postinst did not create the group framerated-admin"
[[ $(ns systemctl is-enabled framerated.socket) == enabled ]] || fail "the postinst did not enable framerated.socket"
[[ $(ns systemctl is-active framerated.socket) == active ]] || fail "the postinst did not start framerated.socket"
[[ $(ns systemctl is-active framerated.service || true) == inactive ]] || fail "framerated.service started before any client"
step "dpkg -i framerated $pkg_version: users created, framerated.socket enabled and listening, the service not started"

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
    /usr/share/fish/vendor_completions.d/framectl.fish /usr/lib/x86_64-linux-gnu/pkgconfig/framerate.pc \
    /usr/include/framerate.h; do
    ns test -s "$file" || fail "the package did not install $file"
done
step "versions: $version; daemon $health; man framectl ($page) with its sections; completions; C library"

# --- remove, purge -------------------------------------------------------------------
removed=$(ns timeout 60 dpkg -r framerated 2>&1) || fail "dpkg -r: $removed"
[[ $(ns systemctl is-active framerated.socket || true) != active ]] || fail "framerated.socket still active after dpkg -r"
[[ $(ns systemctl is-active framerated.service || true) != active ]] || fail "framerated.service still active after dpkg -r"
for file in /usr/bin/framerated /usr/bin/framectl /usr/lib/systemd/system/framerated.socket; do
    ns test ! -e "$file" || fail "dpkg -r left $file"
done
ns test ! -e /run/framerated/framerated.sock || fail "dpkg -r left the socket /run/framerated/framerated.sock"
step "dpkg -r: the socket and the service stopped, the files removed"

purged=$(ns timeout 60 dpkg -P framerated 2>&1) || fail "dpkg -P: $purged"
left=$(ns find /etc /var/lib/systemd -name '*framerated*' 2>/dev/null || true)
[[ -z $left ]] || fail "dpkg -P left: $left"
if ns dpkg-query -W framerated >/dev/null 2>&1; then fail "dpkg still knows framerated after the purge"; fi
step "dpkg -P: no unit, enablement state or file left (the framerated user stays, as Debian keeps system users)"
