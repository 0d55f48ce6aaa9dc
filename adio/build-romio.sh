#!/bin/sh
# Build ROMIO (MPICH's MPI-IO) standalone, patched with adio/romio-patches,
# for one MPI flavour, into a static PIC archive that keeps an undefined
# reference to ADIO_STRIPEFS_operations (the driver is compiled and linked by
# adio/local.mk, so editing it never rebuilds ROMIO).
#
#   adio/build-romio.sh FLAVOUR ROMIO_SRC OUTDIR
#
#   FLAVOUR    openmpi | mpich
#   ROMIO_SRC  pristine src/mpi/romio of an MPICH 4.0.x source tree
#   OUTDIR     where to build; it gets:
#                src/            the patched, configured and built tree
#                libromio.a      the archive (PIC objects, MPL included)
#                driver-cflags   -I/-D flags to compile a driver file against src/
#                build.log       the build's output
#                romio.stamp     hash of the inputs; a rebuild with the same
#                                inputs does nothing
#
# Environment: MPICC_OMPI / MPICC_MPICH (compilers; default mpicc.openmpi /
# mpicc.mpich), ROMIO_MAKE_JOBS (default 2), ROMIO_CFLAGS (default "-O2 -g").
# Prints one line when it builds; on failure, the tail of the log and its path.
set -eu

die() { printf 'build-romio: error: %s\n' "$*" >&2; exit 1; }

[ $# -eq 3 ] || die "usage: build-romio.sh openmpi|mpich ROMIO_SRC OUTDIR"
flavour=$1
romio_src=$2
outdir=$3

here=$(cd "$(dirname "$0")" && pwd)
patchdir=$here/romio-patches
case $flavour in
openmpi) cc=${MPICC_OMPI:-mpicc.openmpi} ;;
mpich) cc=${MPICC_MPICH:-mpicc.mpich} ;;
*) die "unknown flavour '$flavour' (openmpi or mpich)" ;;
esac
[ -f "$romio_src/configure.ac" ] || die "$romio_src is not a ROMIO source tree (no configure.ac)"
[ -f "$patchdir/series" ] || die "no patch series in $patchdir"
command -v "$cc" >/dev/null 2>&1 || die "MPI compiler '$cc' not found"
romio_src=$(cd "$romio_src" && pwd)
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
# One build of OUTDIR at a time (build trees share one with
# --with-romio-build): a waiter then finds the stamp of the build it waited
# for below, and does nothing.
exec 9>"$outdir.lock"
flock 9

patches=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$patchdir/series")
cflags=${ROMIO_CFLAGS:--O2 -g}

# Hash of every input: ROMIO tree (path and version), patches, this script,
# flavour, compiler and flags.
stamp=$( {
    echo "romio_src=$romio_src"
    cat "$romio_src/version.m4" "$romio_src/configure.ac"
    cat "$patchdir/series"
    for p in $patches; do cat "$patchdir/$p"; done
    cat "$0"
    echo "flavour=$flavour cc=$cc cflags=$cflags"
} | sha256sum | cut -d' ' -f1 )

if [ -f "$outdir/romio.stamp" ] && [ "$(cat "$outdir/romio.stamp")" = "$stamp" ] &&
   [ -f "$outdir/libromio.a" ] && [ -f "$outdir/driver-cflags" ]; then
    exit 0
fi

log=$outdir/build.log
echo "  ROMIO    $flavour (takes minutes; log: $log)"
fail() {
    echo "build-romio: $flavour: $1 failed; last lines of $log:" >&2
    tail -n 40 "$log" >&2
    echo "build-romio: full log: $log" >&2
    exit 1
}

# Independent of a calling make: no jobserver or flags leak into ROMIO's make.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES || true

rm -f "$outdir/romio.stamp" "$outdir/libromio.a" "$outdir/driver-cflags"
rm -rf "$outdir/src"
: >"$log"
echo "== copy $romio_src" >>"$log"
cp -a "$romio_src" "$outdir/src"
chmod -R u+w "$outdir/src"

cd "$outdir/src"
for p in $patches; do
    [ -f "$patchdir/$p" ] || die "patch $p is listed in series but missing"
    echo "== apply $p" >>"$log"
    if ! patch -p1 -N --batch --no-backup-if-mismatch <"$patchdir/$p" >>"$log" 2>&1; then
        fail "patch $p (it does not apply to $romio_src)"
    fi
done

echo "== autogen.sh" >>"$log"
./autogen.sh >>"$log" 2>&1 || fail "autogen.sh"

echo "== configure CC=$cc" >>"$log"
./configure CC="$cc" CFLAGS="$cflags" \
    --disable-f77 --disable-f90 --disable-aio \
    --enable-static --disable-shared --with-pic \
    --with-mpi-impl=generic \
    --with-file-system=ufs+nfs+testfs+stripefs >>"$log" 2>&1 || fail "configure"
grep -q '^#define ROMIO_STRIPEFS 1' adio/include/romioconf.h || fail "configure (ROMIO_STRIPEFS not defined)"

echo "== make" >>"$log"
make -j"${ROMIO_MAKE_JOBS:-2}" >>"$log" 2>&1 || fail "make"
[ -f .libs/libromio.a ] || fail "make (no .libs/libromio.a)"

cp .libs/libromio.a "$outdir/libromio.a"
# Quoted includes ("adio.h", "mpio.h") must find this tree before the MPI's own
# mpio.h (MPICH installs one): -iquote is searched before any -I.
cat >"$outdir/driver-cflags" <<EOT
-DHAVE_ROMIOCONF_H -iquote $outdir/src/adio/include -iquote $outdir/src/include -iquote $outdir/src/mpi-io -isystem $outdir/src/mpl/include
EOT
echo "$stamp" >"$outdir/romio.stamp"
