#!/bin/bash
# (d) Known gap: darray filetypes with a cyclic distribution whose last block
# is partial (the case of ROMIO's test/darray_read: 5x5 in 3x3 blocks over 2x2
# ranks) are refused by MPI_File_set_view or read wrong data in the standalone
# build, on both MPIs; the MPIs' own MPI-IO get them right. Common filetypes
# are covered by test_romio_filetypes.sh.
. "$SFS_SRC/tests/romio/lib.sh"
need_ompi
cd "$SFS_TEST_TMP"
prog=$(build_prog openmpi romio_gaps)

ompi_run 1 "$prog" darray ref-file >ompio.out 2>&1 || { cat ompio.out; fail "darray probe without the library"; }
expect_line ompio.out '^RESULT: ok$' "Open MPI's OMPIO reads the darray view correctly"
ompi_run 1 "$RUN_TOOL" "$prog" darray lib-file >lib.out 2>&1 || { cat lib.out; fail "darray probe with the library"; }
cat lib.out
gap_result lib.out setview-refused "Open MPI + library: cyclic darray with a partial last block"

if [ -f "$LIB_MPICH" ] && command -v mpicc.mpich >/dev/null 2>&1; then
    progm=$(build_prog mpich romio_gaps)
    mpich_run 1 "$progm" darray ref-m >builtin.out 2>&1 || { cat builtin.out; fail "darray probe, MPICH built-in"; }
    expect_line builtin.out '^RESULT: ok$' "MPICH's built-in ROMIO reads the darray view correctly"
    mpich_run 1 "$RUN_TOOL" "$progm" darray lib-m >libm.out 2>&1 || { cat libm.out; fail "darray probe, MPICH + library"; }
    cat libm.out
    gap_result libm.out setview-refused "MPICH + library: cyclic darray with a partial last block"
else
    echo "MPICH part not run (no MPICH library)"
fi
