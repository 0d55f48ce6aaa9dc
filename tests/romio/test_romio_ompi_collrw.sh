#!/bin/bash
# (b) Open MPI: a collective write/read of one plain file by 4 ranks (two-phase
# collective buffering, nonblocking collective write, MPI_Get_count) gives the
# same bytes with and without the library, and with it really went through ROMIO.
. "$SFS_SRC/tests/romio/lib.sh"
need_ompi
cd "$SFS_TEST_TMP"
prog=$(build_prog openmpi romio_collrw)

ompi_run 4 "$prog" file-ompio 2048 8 >ompio.out 2>&1 || { cat ompio.out; fail "collrw without the library (OMPIO)"; }
cat ompio.out
expect_line ompio.out '^collrw: OK' "without the library: data and counts correct"
expect_line ompio.out '^romio_filesystem_type: NONE$' "without the library: OMPIO (no ROMIO hint)"

ompi_run 4 "$RUN_TOOL" "$prog" file-romio 2048 8 >romio.out 2>&1 || { cat romio.out; fail "collrw with the library"; }
cat romio.out
expect_line romio.out '^collrw: OK' "with the library: data, MPI_Get_count and iwrite_at_all correct"
expect_line romio.out '^romio_filesystem_type: UFS' "with the library: ROMIO handled the file"

cmp file-ompio file-romio || fail "the files written with and without the library differ"
ok "files written by OMPIO and by ROMIO are identical ($(stat -c %s file-romio) bytes)"
