#!/usr/bin/env bash
# Full targets: one target on a 16 MiB tmpfs, another with a 4 MiB capacity
# limit. Writes that reach them fail with ENOSPC (MPI_ERR_NO_SPACE through
# MPI-IO) naming the target; files on other targets keep working, and a file
# written before reads back unchanged.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
mounted=""
cleanup_mount() { [ -n "$mounted" ] && umount "$mounted" 2>/dev/null; sfs_cleanup; }
trap cleanup_mount EXIT

# first start makes the state dir and config; then shape two targets
sfs_start_service 2 --targets 4
sfs_stop_service
sed -i "s|\(- {id: 103, host: [^,]*, dir: [^}]*\)}|\1, capacity: 4M}|" "$SFS_STATE/stripefs.yaml"
grep -q "id: 103.*capacity: 4M" "$SFS_STATE/stripefs.yaml" || sfs_fail "could not set a capacity on 103"
rm -rf "$SFS_STATE/targets/104" && mkdir -p "$SFS_STATE/targets/104"
if mount -t tmpfs -o size=16m tmpfs "$SFS_STATE/targets/104" 2>"$SFS_TEST_TMP/mount.err"; then
    mounted="$SFS_STATE/targets/104"
    echo "ok: target 104 is on a 16 MiB tmpfs"
else
    echo "note: cannot mount a tmpfs here ($(cat "$SFS_TEST_TMP/mount.err")); 104 stays on disk"
fi
sfs_start_service 2 --targets 4
sfs_ctl listtargets

sfs_ctl mkdir /d /narrow || sfs_fail "mkdir"
head -c 2000000 /dev/urandom >"$SFS_TEST_TMP/small"
sfs_ctl put "$SFS_TEST_TMP/small" /d/small || sfs_fail "a 2 MB file over all targets"
echo "ok: a 2 MB file fits"

head -c 40000000 /dev/urandom >"$SFS_TEST_TMP/big"
sfs_expect_fail "target 103.*full|No space left|ENOSPC" sfs_ctl put "$SFS_TEST_TMP/big" /d/big
if [ -n "$mounted" ]; then
    sfs_ctl setpattern --numtargets 1 /narrow || sfs_fail "setpattern"
fi

# through MPI-IO the class is MPI_ERR_NO_SPACE
mpicc.openmpi -O2 -o "$SFS_TEST_TMP/writer" "$SFS_SRC/tests/mpi/mpi_fault_writer.c" || sfs_fail "compile"
"${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -np 1 "$run_tool" "$SFS_TEST_TMP/writer" stripefs:/d 30 \
    >"$SFS_TEST_TMP/writer.out" 2>&1
grep "write failed" "$SFS_TEST_TMP/writer.out" | head -n 1
grep -q "write failed.*class MPI_ERR_NO_SPACE.*target 10[34]" "$SFS_TEST_TMP/writer.out" \
    || { cat "$SFS_TEST_TMP/writer.out"; sfs_fail "MPI-IO did not report MPI_ERR_NO_SPACE naming the target"; }
echo "ok: MPI-IO reports MPI_ERR_NO_SPACE naming the full target"
if [ -n "$mounted" ]; then
    # a file striped over 104 alone fills the tmpfs: the disk's own ENOSPC
    printf 'striping_factor 1\nstart_iodevice 104\n' >"$SFS_TEST_TMP/hints"
    sfs_ctl mkdir /only104
    ROMIO_HINTS="$SFS_TEST_TMP/hints" "${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -x ROMIO_HINTS -np 1 \
        "$run_tool" "$SFS_TEST_TMP/writer" stripefs:/only104 30 >"$SFS_TEST_TMP/writer2.out" 2>&1
    grep "write failed" "$SFS_TEST_TMP/writer2.out" | head -n 1
    grep -q "write failed.*class MPI_ERR_NO_SPACE.*target 104.*No space left" "$SFS_TEST_TMP/writer2.out" \
        || { cat "$SFS_TEST_TMP/writer2.out"; sfs_fail "a full tmpfs target did not give MPI_ERR_NO_SPACE"; }
    echo "ok: the full tmpfs gives MPI_ERR_NO_SPACE naming target 104"
fi

# other targets are unaffected: a file on 101 and 102 only
sfs_ctl setpattern --numtargets 2 /narrow || sfs_fail "setpattern"
for i in 1 2 3 4 5 6 7 8; do
    echo x | sfs_ctl put - "/narrow/probe$i" >/dev/null
    targets=$(sfs_ctl getentryinfo "/narrow/probe$i" | awk '/^  \+ / {print $2}' | sort | tr '\n' ' ')
    [ "$targets" = "101 102 " ] && break
done
sfs_expect_eq "$targets" "101 102 " "targets the chooser picks while 103 and 104 are full"
head -c 30000000 /dev/urandom >"$SFS_TEST_TMP/other"
sfs_ctl put "$SFS_TEST_TMP/other" /narrow/big || sfs_fail "a file on targets with space failed"
sfs_ctl get /narrow/big "$SFS_TEST_TMP/other.back" && cmp "$SFS_TEST_TMP/other" "$SFS_TEST_TMP/other.back" \
    || sfs_fail "the file on the other targets is wrong"
sfs_ctl get /d/small "$SFS_TEST_TMP/small.back" && cmp "$SFS_TEST_TMP/small" "$SFS_TEST_TMP/small.back" \
    || sfs_fail "the earlier file changed"
echo "ok: a 30 MB file on 101+102 and the earlier 2 MB file read back unchanged"
sfs_stop_service
