#!/bin/sh
# Fetch the ROMIO source tree (src/mpi/romio of Debian 12's mpich 4.0.2 source
# package) into ${STRIPEFS_CACHE:-/var/cache/stripefs}. configure finds it there.
#
# Idempotent: when the tree is already unpacked, it prints nothing and exits 0.
# Needs root on Debian 12 the first time (adds a deb-src entry, may run apt-get
# update, installs dpkg-dev if apt-get source is missing). Building mpich's
# build-dependencies is not needed: only the source is unpacked.
set -eu

CACHE=${STRIPEFS_CACHE:-/var/cache/stripefs}
PKG=mpich
VERSION_DIR=mpich-4.0.2
ROMIO="$CACHE/$VERSION_DIR/src/mpi/romio"
SRC_FILE=/etc/apt/sources.list.d/stripefs-deb-src.sources
DEBIAN_SOURCES=/etc/apt/sources.list.d/debian.sources

log() { printf 'fetch-romio: %s\n' "$*"; }
die() { printf 'fetch-romio: error: %s\n' "$*" >&2; exit 1; }

[ -f "$ROMIO/configure.ac" ] && exit 0

[ "$(id -u)" = 0 ] || die "run as root the first time (needs apt), or unpack $PKG's source yourself into $CACHE"
command -v apt-get >/dev/null 2>&1 || die "apt-get not found: on non-Debian systems pass --with-romio-src=DIR to configure"

# 1. dpkg-dev provides dpkg-source, which apt-get source needs.
if ! command -v dpkg-source >/dev/null 2>&1; then
    log "installing dpkg-dev"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q dpkg-dev >/dev/null \
        || die "apt-get install dpkg-dev failed"
fi

# 2. A deb-src entry for bookworm main, unless one exists already.
has_deb_src() {
    # deb822 files: a stanza whose Types include deb-src and Suites include bookworm.
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk 'BEGIN { RS = ""; IGNORECASE = 1; found = 0 }
             /(^|\n)Types:[^\n]*deb-src/ && /(^|\n)Suites:[^\n]*[ \t]bookworm([ \t]|\n|$)/ \
                 && !/(^|\n)Enabled:[ \t]*no/ { found = 1 }
             END { exit found ? 0 : 1 }' "$f" && return 0
    done
    # one-line format
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
        | grep -Eq '^[[:space:]]*deb-src[[:space:]].*[[:space:]]bookworm[[:space:]]' && return 0
    return 1
}

added_src=no
if ! has_deb_src; then
    [ -f "$DEBIAN_SOURCES" ] || die "$DEBIAN_SOURCES not found: add a deb-src line for bookworm main yourself"
    # URI and Signed-By of the first 'deb' stanza whose suites include bookworm.
    stanza=$(awk 'BEGIN { RS = "" }
                  /(^|\n)Types:[^\n]*deb/ && /(^|\n)Suites:[^\n]*[ \t]bookworm([ \t]|\n|$)/ { print; exit }' \
             "$DEBIAN_SOURCES")
    uri=$(printf '%s\n' "$stanza" | sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' | head -n1)
    signed=$(printf '%s\n' "$stanza" | sed -n 's/^Signed-By:[[:space:]]*//p' | head -n1)
    [ -n "$uri" ] || die "no bookworm 'deb' entry with URIs in $DEBIAN_SOURCES"
    log "adding deb-src entry $SRC_FILE ($uri bookworm main)"
    {
        echo "# Added by stripefs ci/fetch-romio.sh: source of mpich (for ROMIO)."
        echo "Types: deb-src"
        echo "URIs: $uri"
        echo "Suites: bookworm"
        echo "Components: main"
        [ -n "$signed" ] && echo "Signed-By: $signed"
    } >"$SRC_FILE"
    added_src=yes
fi

# 3. apt-get update only when apt does not know the source package yet.
if [ "$added_src" = yes ] || ! apt-cache showsrc "$PKG" 2>/dev/null | grep -q '^Package:'; then
    log "apt-get update"
    apt-get update -q >/dev/null || die "apt-get update failed"
fi

# 4. Download and unpack (no build-deps needed).
mkdir -p "$CACHE"
work="$CACHE/download"
mkdir -p "$work"
cd "$work"
if ! ls ${PKG}_*.dsc >/dev/null 2>&1; then
    log "apt-get source --download-only $PKG (about 22 MB) into $work"
    apt-get source -q --download-only "$PKG" >apt-source.log 2>&1 \
        || { tail -n 20 apt-source.log >&2; die "apt-get source failed (log: $work/apt-source.log)"; }
fi
dsc=$(ls ${PKG}_*.dsc | head -n1)
rm -rf "$CACHE/$VERSION_DIR.tmp"
# Unpack the upstream tree without Debian's own patches (none of them is
# needed by ROMIO; our patch series is written against upstream ROMIO).
log "unpacking $dsc"
dpkg-source --skip-patches --no-check -x "$dsc" "$CACHE/$VERSION_DIR.tmp" >dpkg-source.log 2>&1 \
    || { tail -n 20 dpkg-source.log >&2; die "dpkg-source -x failed (log: $work/dpkg-source.log)"; }
[ -f "$CACHE/$VERSION_DIR.tmp/src/mpi/romio/configure.ac" ] \
    || die "unpacked source has no src/mpi/romio/configure.ac (is $dsc mpich 4.0.2?)"
# dpkg-source copies the orig tarball next to the target directory; keep only
# the one in $work.
rm -f "$CACHE"/${PKG}_*.orig.tar.*
rm -rf "$CACHE/$VERSION_DIR"
mv "$CACHE/$VERSION_DIR.tmp" "$CACHE/$VERSION_DIR"
log "ROMIO source ready: $ROMIO"
