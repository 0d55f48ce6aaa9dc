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

log() { printf 'fetch-romio: %s\n' "$*"; }
die() { printf 'fetch-romio: error: %s\n' "$*" >&2; exit 1; }

[ -f "$ROMIO/configure.ac" ] && exit 0

[ "$(id -u)" = 0 ] || die "run as root the first time (needs apt), or unpack $PKG's source yourself into $CACHE"
command -v apt-get >/dev/null 2>&1 || die "apt-get not found: on non-Debian systems pass --with-romio-src=DIR to configure"

# 1-3. dpkg-dev, a deb-src entry for bookworm main and apt-get update, as
# needed (ci/deb-src.sh, shared with the library suites' tests).
. "$(dirname "$0")/deb-src.sh"
deb_src_ready "$PKG" || die "$deb_src_error"

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
