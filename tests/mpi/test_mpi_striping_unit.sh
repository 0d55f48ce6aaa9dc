#!/usr/bin/env bash
# A chunk size the metadata server refuses is refused for the right reason,
# from stripefs-ctl setpattern and from an MPI-IO create with a
# striping_unit hint (IOR and HDF5 users set 4096): "too small (minimum 64
# KiB)", "too large", "not a power of two". (Before, 4096 was "not a power
# of two in 64 KiB..4 GiB".)
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
[ -f "$SFS_BUILD/adio/libstripefs-mpiio.so" ] || sfs_fail "the MPI-IO library is not built"
mpicc.openmpi -O2 -o "$SFS_TEST_TMP/writer" "$SFS_SRC/tests/mpi/mpi_fault_writer.c" || sfs_fail "compile"

sfs_start_service 1 --targets 2
sfs_ctl mkdir /d || sfs_fail "mkdir"

out=$(sfs_ctl setpattern --chunksize 4K /d 2>&1) && sfs_fail "setpattern --chunksize 4K succeeded"
echo "$out"
echo "$out" | grep -q "'/d': chunk size 4096 is too small (minimum 64 KiB)" ||
    sfs_fail "a 4 KiB chunk size is not refused as too small: $out"
echo "$out" | grep -q "power of two" && sfs_fail "a 4 KiB chunk size is called not a power of two: $out"
sfs_expect_fail "chunk size 8589934592 is too large \(maximum 4 GiB\)" sfs_ctl setpattern --chunksize 8G /d
sfs_expect_fail "chunk size 102400 is not a power of two" sfs_ctl setpattern --chunksize 100K /d
sfs_ctl setpattern --chunksize 64K /d || sfs_fail "setpattern --chunksize 64K"

# MPI-IO: ROMIO passes striping_unit as the new file's chunk size
# (mpi_fault_writer creates DIR/f<rank>)
for case in "4096:too small \(minimum 64 KiB\)" "98304:not a power of two"; do
    unit=${case%%:*} why=${case#*:}
    printf 'striping_unit %s\n' "$unit" >"$SFS_TEST_TMP/hints"
    sfs_ctl mkdir "/d/u$unit" || sfs_fail "mkdir"
    ROMIO_HINTS="$SFS_TEST_TMP/hints" "${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -x ROMIO_HINTS -np 1 \
        "$run_tool" "$SFS_TEST_TMP/writer" "stripefs:/d/u$unit" 1 >"$SFS_TEST_TMP/writer.out" 2>&1
    line=$(grep "cannot open" "$SFS_TEST_TMP/writer.out" | head -n 1)
    [ -n "$line" ] || { cat "$SFS_TEST_TMP/writer.out"; sfs_fail "striping_unit=$unit: the open did not fail"; }
    echo "$line"
    echo "$line" | grep -qE "chunk size $unit is $why" ||
        sfs_fail "striping_unit=$unit is not refused with '$why': $line"
    echo "ok: striping_unit=$unit is refused: $why"
done
sfs_expect_fail "no such file" sfs_ctl stat /d/u4096/f0
sfs_stop_service
