#!/usr/bin/env bash
# HDF5's atomicity test (testpar/t_dset.c dataset_atomicity, as
# tests/mpi/hdf5_atomic_check.c) on stripefs, as an ordinary user, 4 ranks:
# H5Fset_mpi_atomicity(TRUE) works (it was refused before atomic mode), a
# whole-dataset write is seen whole by concurrent readers, and overlapping
# collective strided writes leave one rank's values. With HDF5's own size
# (64 x 32, one chunk) and a larger one (1024 x 512 ints: 2 MiB over all 4
# targets). A local directory (ROMIO's ufs driver) is the control.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
[ -f "$SFS_BUILD/adio/libstripefs-mpiio.so" ] || sfs_fail "the MPI-IO library is not built"
sfs_test_users
prog="$SFS_TEST_TMP/hdf5_atomic_check"
h5pcc.openmpi -O2 -o "$prog" "$SFS_SRC/tests/mpi/hdf5_atomic_check.c" 2>&1 || sfs_fail "compile"
chmod 755 "$prog"
sfs_start_service 3 --targets 4
sfs_ctl mkdir /h5 && sfs_ctl chmod 1777 /h5 || sfs_fail "mkdir /h5 (1777)"
mkdir -p "$SFS_TEST_TMP/local" && chmod 1777 "$SFS_TEST_TMP/local"
for dims in "64 32" "1024 512"; do
    name=atomic-${dims/ /x}.h5
    for target in "$SFS_TEST_TMP/local/$name" "stripefs:/h5/$name"; do
        start=$(date +%s)
        # shellcheck disable=SC2086
        sfs_as sfsalice "${SFS_MPIRUN[@]}" -np 4 -x STRIPEFS_CONFIG "$run_tool" "$prog" "$target" 4 \
            $dims >"$SFS_TEST_TMP/h5.out" 2>&1
        rc=$?
        grep -v '^\[' "$SFS_TEST_TMP/h5.out" | grep -v ORTE_ERROR_LOG | tail -5
        [ $rc = 0 ] && grep -q '^PASSED' "$SFS_TEST_TMP/h5.out" ||
            sfs_fail "HDF5 atomicity ($dims) on $target"
        echo "($target: $(($(date +%s) - start)) s)"
    done
    echo "ok: HDF5 atomicity test, $dims dataset: passes on stripefs as on a local directory"
done
sfs_stop_service
