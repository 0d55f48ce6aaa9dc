#!/bin/bash
# (c) MPICH: the same checks with mpicc.mpich / mpiexec.mpich and
# libstripefs-mpiio-mpich.so preloaded over MPICH's built-in ROMIO.
. "$SFS_SRC/tests/romio/lib.sh"
need_mpich
cd "$SFS_TEST_TMP"
probe=$(build_prog mpich romio_probe)
collrw=$(build_prog mpich romio_collrw)

mpich_run 2 "$probe" plain-a stripefs:/x >without.out 2>&1 || { cat without.out; fail "probe without the library"; }
expect_line without.out '^open stripefs:/x: failed' "without the library, MPICH's own ROMIO refuses stripefs: paths"
if grep -q 'no stripefs service configured' without.out; then fail "the driver's message appeared without the library"; fi
unset STRIPEFS_CONFIG STRIPEFS_MGMT STRIPEFS_CONNAUTH

mpich_run 2 "$RUN_TOOL" "$probe" plain-b stripefs:/x >with.out 2>&1 || { cat with.out; fail "probe with the library"; }
cat with.out
expect_line with.out '^romio_filesystem_type: UFS' "with the library, plain paths use ROMIO's ufs driver"
expect_line with.out '^open stripefs:/x: failed: class=MPI_ERR_IO' "stripefs: open fails with MPI_ERR_IO"
expect_line with.out "^error string: stripefs:/x: no stripefs service configured" \
    "MPI_Error_string gives the driver's message (through the library's MPI_Error_string)"

mpich_run 4 "$collrw" file-builtin 2048 8 >builtin.out 2>&1 || { cat builtin.out; fail "collrw with MPICH's built-in ROMIO"; }
expect_line builtin.out '^collrw: OK' "without the library: data and counts correct"
mpich_run 4 "$RUN_TOOL" "$collrw" file-lib 2048 8 >lib.out 2>&1 || { cat lib.out; fail "collrw with the library"; }
cat lib.out
expect_line lib.out '^collrw: OK' "with the library: data, MPI_Get_count and iwrite_at_all correct"
cmp file-builtin file-lib || fail "the files written with and without the library differ"
ok "files written by MPICH's ROMIO and by the library are identical"

# MPICH's built-in ROMIO also reports romio_filesystem_type; only the
# library adds romio_standalone=true (patch 0007).
expect_line builtin.out '^romio_standalone: NONE$' "without the library: MPICH's built-in ROMIO (no romio_standalone hint)"
expect_line lib.out '^romio_standalone: true$' "with the library: the collective I/O went through the preloaded ROMIO"
