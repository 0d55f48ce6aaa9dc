#!/usr/bin/env bash
# MPI-IO programs against the real service through libstripefs-mpiio.so:
# collective strided I/O with stripe hints, file-per-process list I/O, error
# classes; with Open MPI (4 ranks) and MPICH (3 ranks). Checks that the
# data is striped over the targets getentryinfo names, with the asked chunk.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
[ -f "$SFS_BUILD/adio/libstripefs-mpiio.so" ] || sfs_fail "the MPI-IO library is not built"

mpicc.openmpi -O2 -o "$SFS_TEST_TMP/check_ompi" "$SFS_SRC/tests/mpi/mpi_io_check.c" || sfs_fail "compile (Open MPI)"
mpicc.mpich -O2 -o "$SFS_TEST_TMP/check_mpich" "$SFS_SRC/tests/mpi/mpi_io_check.c" || sfs_fail "compile (MPICH)"

sfs_start_service 3 --targets 4
sfs_ctl mkdir /ompi /mpich || sfs_fail "mkdir"

"${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -np 4 "$run_tool" "$SFS_TEST_TMP/check_ompi" stripefs:/ompi \
    || sfs_fail "MPI-IO checks with Open MPI"
# the collective file was striped as hinted (128 KiB chunks, 4 targets)
sfs_ctl mkdir /layout
info=$(mpirun.openmpi --oversubscribe -x STRIPEFS_CONFIG -np 2 "$run_tool" \
        "$SFS_TEST_TMP/check_ompi" stripefs:/layout >/dev/null 2>&1; sfs_ctl getentryinfo /layout/indep_0)
echo "$info"
sfs_expect_eq "$(echo "$info" | grep -c '^  + ')" 4 "targets of a file in a default directory"
id=$(echo "$info" | awk '/EntryID/ {print $2}')
with_chunks=$(find "$SFS_STATE"/targets/*/chunks -name "$id" -size +0 | wc -l)
[ "$with_chunks" -ge 1 ] || sfs_fail "no chunk file holds data of /layout/indep_0"
echo "ok: $with_chunks target(s) hold chunk data of entry $id"

mpiexec.mpich -n 3 "$run_tool" "$SFS_TEST_TMP/check_mpich" stripefs:/mpich \
    || sfs_fail "MPI-IO checks with MPICH"
sfs_stop_service
