#!/bin/bash
# ROMIO's error-code maker (patch 0006) given an invalid error class, as a
# buggy driver might pass one (MPI_UNDEFINED, -1, a code where a class
# belongs, a number above MPI_LASTUSEDCODE): it must return an MPI_ERR_IO
# code whose string keeps the driver's message, and keep valid classes
# (predefined, or made by MPI_Add_error_class). Before the guard Open MPI
# aborted the job in MPI_Add_error_code ("MPI_ERR_ARG: invalid argument of
# some other kind"). The function is internal to the library, so the probe
# links the build's libromio.a itself.
. "$SFS_SRC/tests/romio/lib.sh"
need_ompi
cd "$SFS_TEST_TMP"
romio_build=$(sed -n 's/^ROMIO_BUILD = //p' "$SFS_BUILD/Makefile" | sed "s|\$(abs_top_builddir)|$SFS_BUILD|")
[ -f "$romio_build/openmpi/libromio.a" ] || fail "no libromio.a in '$romio_build/openmpi' (ROMIO_BUILD of the build)"
prog=$(build_prog openmpi romio_errclass "$romio_build/openmpi/libromio.a")
ompi_run 1 "$prog" >out 2>&1
rc=$?
cat out
[ $rc -eq 0 ] || fail "Open MPI: invalid error classes (exit $rc)"
expect_line out '^PASSED: 0 failed$' "Open MPI: invalid error classes become MPI_ERR_IO codes with the message"

if [ -f "$romio_build/mpich/libromio.a" ] && command -v mpicc.mpich >/dev/null 2>&1; then
    progm=$(build_prog mpich romio_errclass "$romio_build/mpich/libromio.a")
    mpich_run 1 "$progm" >outm 2>&1
    rc=$?
    cat outm
    [ $rc -eq 0 ] || fail "MPICH: invalid error classes (exit $rc)"
    expect_line outm '^PASSED: 0 failed$' "MPICH: invalid error classes become MPI_ERR_IO codes with the message"
fi
