#!/bin/bash
# File error handlers with the library (plain paths, through ROMIO's ufs
# driver), as MPI-IO defines them and Open MPI's OMPIO gives them: a handler
# made by MPI_File_create_errhandler, set on a file or on MPI_FILE_NULL, is
# called with the file and the code (romio_gaps.c lists the checks), and
# MPI_ERRORS_ARE_FATAL on a file aborts the job at its first error. Until
# patch 0011 the library refused every user handler (RESULT: refused).
. "$SFS_SRC/tests/romio/lib.sh"
need_ompi
cd "$SFS_TEST_TMP"
prog=$(build_prog openmpi romio_gaps)

ompi_run 2 "$prog" errhandler ref-file >ompio.out 2>&1 || { cat ompio.out; fail "errhandler probe without the library"; }
expect_result ompio.out ok "Open MPI's OMPIO: user file error handlers"
ompi_run 2 "$RUN_TOOL" "$prog" errhandler lib-file >lib.out 2>&1 || { cat lib.out; fail "errhandler probe with the library"; }
expect_result lib.out ok "Open MPI + library: user file error handlers"

# fatal: the job ends at the error (with the message), the line after it never runs
fatal_check() { # what out rc
    if [ "$3" -eq 0 ] || grep -q '^RESULT: survived' "$2"; then
        cat "$2"
        fail "$1: the job went on after an error on a file with MPI_ERRORS_ARE_FATAL (exit $3)"
    fi
    ok "$1: MPI_ERRORS_ARE_FATAL on a file aborts the job (exit $3)"
}
ompi_run 2 "$prog" fatal ref-fatal >ompio-fatal.out 2>&1
fatal_check "Open MPI's OMPIO" ompio-fatal.out $?
ompi_run 2 "$RUN_TOOL" "$prog" fatal lib-fatal >lib-fatal.out 2>&1
rc=$?
fatal_check "Open MPI + library" lib-fatal.out $rc
expect_line lib-fatal.out 'fatal error: .*MPI_MODE_RDONLY' "Open MPI + library: the abort says why"

if [ -f "$LIB_MPICH" ] && command -v mpicc.mpich >/dev/null 2>&1; then
    progm=$(build_prog mpich romio_gaps)
    mpich_run 2 "$progm" errhandler ref-m >builtin.out 2>&1 || { cat builtin.out; fail "errhandler probe, MPICH built-in"; }
    expect_result builtin.out ok "MPICH's built-in ROMIO: user file error handlers"
    mpich_run 2 "$RUN_TOOL" "$progm" errhandler lib-m >libm.out 2>&1 || { cat libm.out; fail "errhandler probe, MPICH + library"; }
    expect_result libm.out ok "MPICH + library: user file error handlers"
    mpich_run 2 "$RUN_TOOL" "$progm" fatal lib-m-fatal >libm-fatal.out 2>&1
    fatal_check "MPICH + library" libm-fatal.out $?
fi
