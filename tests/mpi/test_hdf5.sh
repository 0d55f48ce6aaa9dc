#!/usr/bin/env bash
# Parallel HDF5 (Debian's libhdf5-openmpi) on stripefs: collective dataset
# write and read, verified value by value; the file is a real HDF5 file that
# h5dump can read after copying it out.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"

h5pcc.openmpi -O2 -o "$SFS_TEST_TMP/hdf5_check" "$SFS_SRC/tests/mpi/hdf5_check.c" 2>&1 \
    || sfs_fail "compile the HDF5 program"
sfs_start_service 3 --targets 4
sfs_ctl mkdir /h5 || sfs_fail "mkdir"
"${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -np 4 "$run_tool" "$SFS_TEST_TMP/hdf5_check" \
    stripefs:/h5/field.h5 || sfs_fail "parallel HDF5 write/read"
sfs_ctl get /h5/field.h5 "$SFS_TEST_TMP/field.h5" || sfs_fail "copy out"
h5dump -H "$SFS_TEST_TMP/field.h5" | grep -q 'DATASPACE  SIMPLE { ( 256, 1000 )' \
    || sfs_fail "h5dump does not see the 256 x 1000 dataset"
echo "ok: h5dump reads the file written through stripefs"
sfs_stop_service
