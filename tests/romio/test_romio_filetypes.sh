#!/bin/bash
# Common derived filetypes (subarray, block/cyclic darray, resized, hindexed,
# nested) read through file views match MPI_Pack, with the library on both MPIs.
. "$SFS_SRC/tests/romio/lib.sh"
need_ompi
cd "$SFS_TEST_TMP"
prog=$(build_prog openmpi romio_filetypes)
ompi_run 1 "$RUN_TOOL" "$prog" f-ompi >out 2>&1
cat out
expect_line out '^filetypes: OK$' "Open MPI + library: every filetype view reads the right data"
if [ -f "$LIB_MPICH" ] && command -v mpicc.mpich >/dev/null 2>&1; then
    progm=$(build_prog mpich romio_filetypes)
    mpich_run 1 "$RUN_TOOL" "$progm" f-mpich >outm 2>&1
    cat outm
    expect_line outm '^filetypes: OK$' "MPICH + library: every filetype view reads the right data"
fi
