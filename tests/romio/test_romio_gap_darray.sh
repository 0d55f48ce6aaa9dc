#!/bin/bash
# Cyclic darray filetypes whose last block is partial (the case of ROMIO's
# test/darray_read: 5x5 doubles in 3x3 blocks over 2x2 ranks) read the same
# data as MPI_Pack gives, with the library (plain paths, through ROMIO's ufs
# driver) as with the MPIs' own MPI-IO. Until patch 0010 the standalone ROMIO
# refused the views of ranks 1 and 3 in MPI_File_set_view and read wrong data
# for rank 2 (RESULT: setview-refused), on both MPIs.
. "$SFS_SRC/tests/romio/lib.sh"
need_ompi
cd "$SFS_TEST_TMP"
prog=$(build_prog openmpi romio_gaps)

ompi_run 1 "$prog" darray ref-file >ompio.out 2>&1 || { cat ompio.out; fail "darray probe without the library"; }
expect_result ompio.out ok "Open MPI's OMPIO reads the darray view correctly"
ompi_run 1 "$RUN_TOOL" "$prog" darray lib-file >lib.out 2>&1 || { cat lib.out; fail "darray probe with the library"; }
expect_result lib.out ok "Open MPI + library: cyclic darray with a partial last block"

if [ -f "$LIB_MPICH" ] && command -v mpicc.mpich >/dev/null 2>&1; then
    progm=$(build_prog mpich romio_gaps)
    mpich_run 1 "$progm" darray ref-m >builtin.out 2>&1 || { cat builtin.out; fail "darray probe, MPICH built-in"; }
    expect_result builtin.out ok "MPICH's built-in ROMIO reads the darray view correctly"
    mpich_run 1 "$RUN_TOOL" "$progm" darray lib-m >libm.out 2>&1 || { cat libm.out; fail "darray probe, MPICH + library"; }
    expect_result libm.out ok "MPICH + library: cyclic darray with a partial last block"
else
    echo "MPICH part not run (no MPICH library)"
fi
