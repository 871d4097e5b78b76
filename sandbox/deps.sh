#!/usr/bin/env bash
# Install what building and testing mod_h2 needs -- only what is missing.
#
#  - Debian packages (when root; otherwise it lists them and fails), haproxy
#    and nghttpx among them for the front-end tests (deploy/), mod_php for
#    test/test_php_prefork.py (the system apache2's MPM is left as it was),
#    php8.2-fpm for the application-stack tests (test/phpfpm.py runs a
#    private php-fpm; the system's php8.2-fpm service is neither started
#    here nor used), what building the Debian package needs
#    (test/test_debian_package.py), and the third-party modules, apr-util
#    drivers and slapd of the module matrix (test/test_module_matrix.py;
#    the modules their packages enable in the system apache2 are disabled
#    again, slapd runs only as the test's own process)
#  - chromium (optional, for the browser tests; a failure only warns)
#  - the Python modules h2, pytest, pytest-xdist and websocket-client for $PYTHON (default: python3 on PATH,
#    which may be a pyenv interpreter that does not see Debian's packages)
#  - h2spec, via `go install`, unless already on PATH or in $(go env GOPATH)/bin
#
# Safe to run repeatedly: a complete machine only pays a few checks.
set -euo pipefail

PYTHON=${PYTHON:-python3}
export DEBIAN_FRONTEND=noninteractive
export PATH="$PATH:/usr/local/go/bin"

say() { echo "deps: $*"; }

# ------------------------------------------------------------ Debian packages
PKGS=(apache2 apache2-dev libnghttp2-dev nghttp2-client nghttp2-server curl
      openssl ca-certificates python3 python3-pytest python3-h2 python3-pip
      pkg-config autoconf automake libtool build-essential
      clang libclang-rt-14-dev valgrind apache2-doc haproxy nghttp2-proxy
      libapache2-mod-php8.2 php8.2-fpm php8.2-cli dpkg-dev debhelper fakeroot lintian git
      apache2-utils libaprutil1-dbd-sqlite3 libaprutil1-ldap slapd ldap-utils
      libapache2-mod-perl2 libapache2-mod-wsgi-py3 libapache2-mod-security2
      modsecurity-crs libapache2-mod-fcgid php8.2-cgi)
# what the postinst scripts of the module packages above enable in the
# system apache2 (a2enmod / a2enconf names)
PKG_ENABLED_MODS=(php8.2 perl wsgi security2 unique_id fcgid)
PKG_ENABLED_CONFS=(php8.2-cgi)
if ! command -v go >/dev/null 2>&1; then
    PKGS+=(golang-go)
fi

missing=()
for p in "${PKGS[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        say "missing Debian packages: ${missing[*]}"
        say "run as root, or: sudo apt-get install ${missing[*]}"
        exit 1
    fi
    say "installing ${missing[*]}"
    # Do not let package scripts start the system apache2 (it would listen
    # on port 80 of all interfaces); policy-rc.d exit 101 = "not allowed".
    policy_added=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        policy_added=1
    fi
    trap 'if [ -n "$policy_added" ]; then rm -f /usr/sbin/policy-rc.d; fi' EXIT
    mpm_before=$(a2query -M 2>/dev/null || true)
    mods_before=" $( (a2query -m 2>/dev/null || true) | cut -d' ' -f1 | tr '\n' ' ') "
    confs_before=" $( (a2query -c 2>/dev/null || true) | cut -d' ' -f1 | tr '\n' ' ') "
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
    # libapache2-mod-php8.2's postinst switches the system apache2 to
    # prefork and enables php8.2 there (mod_php is not thread-safe). The
    # tests load libphp8.2.so into an instance of their own; the system's
    # configuration (which test_install_debian.py copies, and which other
    # users of the machine have) stays as it was. Disabled by us, php8.2
    # counts as "disabled by the site administrator": upgrades leave it so.
    mpm_now=$(a2query -M 2>/dev/null || true)
    if [ "$mpm_now" = prefork ] && [ "$mpm_before" != prefork ]; then
        say "putting the system apache2 back to mpm_${mpm_before:-event} (mod_php switched it)"
        a2dismod -q php8.2 mpm_prefork >/dev/null
        a2enmod -q "mpm_${mpm_before:-event}" >/dev/null
    fi
    # the module packages enable their module (mod_security2 also
    # unique_id, php8.2-cgi its configuration) in the system apache2; the
    # tests load them into instances of their own, so what was off stays
    # off ("disabled by the site administrator" for later upgrades)
    for m in "${PKG_ENABLED_MODS[@]}"; do
        if [[ "$mods_before" != *" $m "* ]] && a2query -q -m "$m" 2>/dev/null; then
            say "disabling $m in the system apache2 (its package enabled it)"
            a2dismod -q -f "$m" >/dev/null
        fi
    done
    for c in "${PKG_ENABLED_CONFS[@]}"; do
        if [[ "$confs_before" != *" $c "* ]] && a2query -q -c "$c" 2>/dev/null; then
            say "disabling configuration $c in the system apache2 (its package enabled it)"
            a2disconf -q "$c" >/dev/null
        fi
    done
    # the tests run php-fpm themselves (test/phpfpm.py, own socket and pid
    # file): the packaged service stays off at boot too, where systemd runs
    if [[ " ${missing[*]} " == *" php8.2-fpm "* ]] && [ -d /run/systemd/system ] \
            && command -v systemctl >/dev/null 2>&1; then
        systemctl disable php8.2-fpm >/dev/null 2>&1 || true
    fi
    # the same for slapd: test/modmatrix_ldap.py runs one of its own
    if [[ " ${missing[*]} " == *" slapd "* ]] && [ -d /run/systemd/system ] \
            && command -v systemctl >/dev/null 2>&1; then
        systemctl disable slapd >/dev/null 2>&1 || true
    fi
fi

# ------------------------------------------------------------ Python modules
pip_install() {
    "$PYTHON" -m pip --version >/dev/null 2>&1 || {
        say "$PYTHON has no pip; install python3-pip or use PYTHON=/usr/bin/python3"
        exit 1
    }
    say "pip installing $* for $PYTHON"
    "$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore "$@" 2>/dev/null \
      || "$PYTHON" -m pip install -q --disable-pip-version-check --break-system-packages "$@"
}
"$PYTHON" -c 'import h2, hpack, hyperframe' >/dev/null 2>&1 || pip_install h2 hyperframe hpack
"$PYTHON" -m pytest --version >/dev/null 2>&1 || pip_install pytest
# the test command runs the suite's files on parallel workers
"$PYTHON" -c 'import xdist' >/dev/null 2>&1 || pip_install pytest-xdist
# the DevTools client of test/test_browser.py
"$PYTHON" -c 'import websocket' >/dev/null 2>&1 || pip_install websocket-client
# the WebSocket backend and client framing of test/test_websockets.py
"$PYTHON" -c 'import websockets, wsproto' >/dev/null 2>&1 || pip_install websockets wsproto

# ------------------------------------------------------------ Chromium
# Headless Chromium for test/test_browser.py. Optional: when it cannot be
# installed the browser tests skip and everything else still runs.
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        say "installing chromium (for test/test_browser.py)"
        if ! { apt-get install -y -q --no-install-recommends chromium \
               || { apt-get update -q && apt-get install -y -q --no-install-recommends chromium; }; }; then
            say "chromium could not be installed: test/test_browser.py will skip"
        fi
    else
        say "chromium missing (sudo apt-get install chromium): test/test_browser.py will skip"
    fi
fi

# ------------------------------------------------------------ h2spec
h2spec_path() {
    command -v h2spec 2>/dev/null && return 0
    local gp
    gp=$(go env GOPATH 2>/dev/null || true)
    for d in "$gp" "$HOME/go"; do
        if [ -n "$d" ] && [ -x "$d/bin/h2spec" ]; then echo "$d/bin/h2spec"; return 0; fi
    done
    return 1
}
if ! h2spec_path >/dev/null; then
    say "installing h2spec with $(go version)"
    (cd /tmp && GO111MODULE=on go install github.com/summerwind/h2spec/cmd/h2spec@latest)
    h2spec_path >/dev/null || { say "h2spec install failed"; exit 1; }
fi

say "ok ($("$PYTHON" --version 2>&1), h2spec at $(h2spec_path))"
