#!/bin/bash
# (d) Known gap: user-defined file error handlers. MPI_File_create_errhandler
# belongs to the host MPI; ROMIO's MPI_File_set_errhandler accepts only
# MPI_ERRORS_RETURN and MPI_ERRORS_ARE_FATAL (and MPI_ERRORS_ABORT where it
# exists), so a user handler is refused with MPI_ERR_UNSUPPORTED_OPERATION.
. "$SFS_SRC/tests/romio/lib.sh"
need_ompi
cd "$SFS_TEST_TMP"
prog=$(build_prog openmpi romio_gaps)

ompi_run 2 "$prog" errhandler ref-file >ompio.out 2>&1 || { cat ompio.out; fail "errhandler probe without the library"; }
expect_line ompio.out '^RESULT: accepted$' "Open MPI's OMPIO accepts a user file error handler"
ompi_run 2 "$RUN_TOOL" "$prog" errhandler lib-file >lib.out 2>&1 || { cat lib.out; fail "errhandler probe with the library"; }
cat lib.out
gap_result lib.out refused "Open MPI + library: MPI_File_set_errhandler with a user handler"

if [ -f "$LIB_MPICH" ] && command -v mpicc.mpich >/dev/null 2>&1; then
    progm=$(build_prog mpich romio_gaps)
    mpich_run 2 "$RUN_TOOL" "$progm" errhandler lib-m >libm.out 2>&1 || { cat libm.out; fail "errhandler probe, MPICH + library"; }
    cat libm.out
    gap_result libm.out refused "MPICH + library: MPI_File_set_errhandler with a user handler"
fi
