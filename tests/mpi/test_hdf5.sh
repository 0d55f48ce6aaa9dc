#!/usr/bin/env bash
# Parallel HDF5 (Debian's libhdf5-openmpi) on stripefs: collective dataset
# write and read, verified value by value; the file is a real HDF5 file that
# h5dump can read after copying it out. Under umask 022 and 027 the file
# H5Fcreate makes has mode 0666 & ~umask, as the same program gets on a
# local directory (ROMIO's ufs driver: the kernel decides).
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

mkdir -p "$SFS_TEST_TMP/local"
for mask in 022 027; do
    want=$(printf '%04o' $((0666 & ~0$mask)))
    for target in "stripefs:/h5/umask$mask.h5" "$SFS_TEST_TMP/local/umask$mask.h5"; do
        (umask $mask && "${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -np 2 "$run_tool" \
            "$SFS_TEST_TMP/hdf5_check" "$target") || sfs_fail "HDF5 on $target under umask $mask"
    done
    got=$(sfs_ctl stat "/h5/umask$mask.h5" | sed -n 's/.*Mode: (\([0-7]*\)\/.*/\1/p')
    kernel=$(stat -c %04a "$SFS_TEST_TMP/local/umask$mask.h5")
    sfs_expect_eq "$kernel" "$want" "mode of the local HDF5 file under umask $mask"
    sfs_expect_eq "$got" "$kernel" "mode of stripefs:/h5/umask$mask.h5 under umask $mask"
done
echo "ok: HDF5 files created on stripefs have the local file's mode under umask 022 and 027"
sfs_stop_service
