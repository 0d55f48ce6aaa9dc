# Shared helper (sourced, POSIX sh): make `apt-get source PKG` work on Debian 12.
# Used by ci/fetch-romio.sh (mpich's source, for ROMIO) and by the library
# suites (tests/libsuites: pnetcdf's and hdf5's sources).
#
#   . ci/deb-src.sh
#   deb_src_ready PKG || { echo "$deb_src_error"; ...; }
#
# deb_src_ready installs dpkg-dev (apt-get source needs dpkg-source), adds a
# deb-src entry for bookworm main (made from the first bookworm 'deb' stanza
# of /etc/apt/sources.list.d/debian.sources) unless one exists, and runs
# apt-get update when apt does not know PKG's source yet. It returns 0 when
# `apt-cache showsrc PKG` knows the package; otherwise 1 with the reason in
# $deb_src_error (no root, no apt-get, no entry to copy, apt-get failed: no
# network). It never exits: the caller decides (a fetch script dies, a test
# skips). Needs root the first time only.

DEB_SRC_FILE=/etc/apt/sources.list.d/stripefs-deb-src.sources
DEB_SRC_DEBIAN_SOURCES=/etc/apt/sources.list.d/debian.sources
deb_src_error=""

deb_src_log() { printf 'deb-src: %s\n' "$*"; }

# 0 when a deb-src entry for bookworm exists (deb822 or one-line format)
deb_src_has_entry() {
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk 'BEGIN { RS = ""; IGNORECASE = 1; found = 0 }
             /(^|\n)Types:[^\n]*deb-src/ && /(^|\n)Suites:[^\n]*[ \t]bookworm([ \t]|\n|$)/ \
                 && !/(^|\n)Enabled:[ \t]*no/ { found = 1 }
             END { exit found ? 0 : 1 }' "$f" && return 0
    done
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        grep -Eq '^[[:space:]]*deb-src[[:space:]].*[[:space:]]bookworm[[:space:]]' && return 0
    return 1
}

# 0 when apt knows PKG's source package
deb_src_known() {
    apt-cache showsrc "$1" 2>/dev/null | grep -q '^Package:'
}

deb_src_ready() { # PKG
    _pkg=$1
    deb_src_error=""
    command -v apt-get >/dev/null 2>&1 || {
        deb_src_error="apt-get not found (not Debian?)"
        return 1
    }
    if command -v dpkg-source >/dev/null 2>&1 && deb_src_has_entry && deb_src_known "$_pkg"; then
        return 0
    fi
    [ "$(id -u)" = 0 ] || {
        deb_src_error="apt-get source $_pkg needs a deb-src entry, dpkg-dev and apt-get update: run as root the first time"
        return 1
    }
    # 1. dpkg-dev provides dpkg-source, which apt-get source needs.
    if ! command -v dpkg-source >/dev/null 2>&1; then
        deb_src_log "installing dpkg-dev"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q dpkg-dev >/dev/null 2>&1 || {
            deb_src_error="apt-get install dpkg-dev failed (no network or no package lists?)"
            return 1
        }
    fi
    # 2. A deb-src entry for bookworm main, unless one exists already.
    _added=no
    if ! deb_src_has_entry; then
        [ -f "$DEB_SRC_DEBIAN_SOURCES" ] || {
            deb_src_error="$DEB_SRC_DEBIAN_SOURCES not found: add a deb-src line for bookworm main yourself"
            return 1
        }
        # URI and Signed-By of the first 'deb' stanza whose suites include bookworm.
        _stanza=$(awk 'BEGIN { RS = "" }
                       /(^|\n)Types:[^\n]*deb/ && /(^|\n)Suites:[^\n]*[ \t]bookworm([ \t]|\n|$)/ { print; exit }' \
            "$DEB_SRC_DEBIAN_SOURCES")
        _uri=$(printf '%s\n' "$_stanza" | sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' | head -n1)
        _signed=$(printf '%s\n' "$_stanza" | sed -n 's/^Signed-By:[[:space:]]*//p' | head -n1)
        [ -n "$_uri" ] || {
            deb_src_error="no bookworm 'deb' entry with URIs in $DEB_SRC_DEBIAN_SOURCES"
            return 1
        }
        deb_src_log "adding deb-src entry $DEB_SRC_FILE ($_uri bookworm main)"
        {
            echo "# Added by stripefs (ci/deb-src.sh): Debian sources (mpich for ROMIO, the library suites)."
            echo "Types: deb-src"
            echo "URIs: $_uri"
            echo "Suites: bookworm"
            echo "Components: main"
            [ -n "$_signed" ] && echo "Signed-By: $_signed"
        } >"$DEB_SRC_FILE" || {
            deb_src_error="cannot write $DEB_SRC_FILE"
            return 1
        }
        _added=yes
    fi
    # 3. apt-get update only when apt does not know the source package yet.
    if [ "$_added" = yes ] || ! deb_src_known "$_pkg"; then
        deb_src_log "apt-get update"
        apt-get update -q >/dev/null 2>&1 || {
            deb_src_error="apt-get update failed (no network?)"
            return 1
        }
    fi
    deb_src_known "$_pkg" || {
        deb_src_error="apt knows no source package $_pkg (after apt-get update)"
        return 1
    }
    return 0
}
