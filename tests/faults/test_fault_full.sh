#!/usr/bin/env bash
# Full targets: one target on a 16 MiB tmpfs, another with a 5 MiB capacity
# limit. Writes that reach them fail with ENOSPC (MPI_ERR_NO_SPACE through
# MPI-IO) naming the target; files on other targets keep working, and a file
# written before reads back unchanged. Once both are full, a file striped
# over all four targets (made while they had room) is extended by one chunk
# per target: the chunk on each full target fails with ENOSPC, the chunks on
# the others are written and read back.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
mounted=""
cleanup_mount() { [ -n "$mounted" ] && umount "$mounted" 2>/dev/null; sfs_cleanup; }
trap cleanup_mount EXIT

# first start makes the state dir and config; then shape two targets
sfs_start_service 2 --targets 4
sfs_stop_service
# 5 MiB: 1 MiB of the small and probe files, then the big put's first 4 MiB
# fill it to the last 100 KiB (a target that answered ENOSPC takes no new
# file, so nothing else fills what a refused 4 MiB write would leave)
sed -i "s|\(- {id: 103, host: [^,]*, dir: [^}]*\)}|\1, capacity: 5M}|" "$SFS_STATE/stripefs.yaml"
grep -q "id: 103.*capacity: 5M" "$SFS_STATE/stripefs.yaml" || sfs_fail "could not set a capacity on 103"
rm -rf "$SFS_STATE/targets/104" && mkdir -p "$SFS_STATE/targets/104"
mount -t tmpfs -o size=16m tmpfs "$SFS_STATE/targets/104" 2>"$SFS_TEST_TMP/mount.err" ||
    sfs_skip "cannot mount a 16 MiB tmpfs for target 104 (needs root and mount rights):" \
        "$(head -c 200 "$SFS_TEST_TMP/mount.err")"
mounted="$SFS_STATE/targets/104"
echo "ok: target 104 is on a 16 MiB tmpfs"
sfs_start_service 2 --targets 4
sfs_ctl listtargets

sfs_ctl mkdir /d /narrow /probe || sfs_fail "mkdir"
head -c 2000000 /dev/urandom >"$SFS_TEST_TMP/small"
sfs_ctl put "$SFS_TEST_TMP/small" /d/small || sfs_fail "a 2 MB file over all targets"
echo "ok: a 2 MB file fits"
# the probe file: 4 chunks of 512 KiB, one on each target, while all have room
sfs_ctl setpattern --chunksize 512K --numtargets 4 /probe || sfs_fail "setpattern /probe"
head -c $((4 * 524288)) /dev/urandom >"$SFS_TEST_TMP/probe"
sfs_ctl put "$SFS_TEST_TMP/probe" /probe/f || sfs_fail "the probe file over all targets"
probe_targets=$(sfs_ctl getentryinfo /probe/f | awk '/^  \+ / {print $2}' | tr '\n' ' ')
sfs_expect_eq "$(echo $probe_targets | tr ' ' '\n' | sort | tr '\n' ' ')" "101 102 103 104 " \
    "targets of the probe file"

head -c 40000000 /dev/urandom >"$SFS_TEST_TMP/big"
sfs_expect_fail "target 103.*full|No space left|ENOSPC" sfs_ctl put "$SFS_TEST_TMP/big" /d/big
sfs_ctl setpattern --numtargets 1 /narrow || sfs_fail "setpattern"

# through MPI-IO the class is MPI_ERR_NO_SPACE
mpicc.openmpi -O2 -o "$SFS_TEST_TMP/writer" "$SFS_SRC/tests/mpi/mpi_fault_writer.c" || sfs_fail "compile"
"${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -np 1 "$run_tool" "$SFS_TEST_TMP/writer" stripefs:/d 30 \
    >"$SFS_TEST_TMP/writer.out" 2>&1
grep "write failed" "$SFS_TEST_TMP/writer.out" | head -n 1
grep -q "write failed.*class MPI_ERR_NO_SPACE.*target 10[34]" "$SFS_TEST_TMP/writer.out" \
    || { cat "$SFS_TEST_TMP/writer.out"; sfs_fail "MPI-IO did not report MPI_ERR_NO_SPACE naming the target"; }
echo "ok: MPI-IO reports MPI_ERR_NO_SPACE naming the full target"
# a file striped over 104 alone fills the tmpfs: the disk's own ENOSPC; or,
# when the writer above already got it from 104, the start hint is refused
# naming 104 as full (a hint is honoured or refused, never moved)
printf 'striping_factor 1\nstart_iodevice 104\n' >"$SFS_TEST_TMP/hints"
sfs_ctl mkdir /only104
ROMIO_HINTS="$SFS_TEST_TMP/hints" "${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -x ROMIO_HINTS -np 1 \
    "$run_tool" "$SFS_TEST_TMP/writer" stripefs:/only104 30 >"$SFS_TEST_TMP/writer2.out" 2>&1
grep -E "write failed|cannot open" "$SFS_TEST_TMP/writer2.out" | head -n 1
if grep -q "write failed.*target 104.*No space left" "$SFS_TEST_TMP/writer.out"; then
    grep -q "cannot open stripefs:/only104/f0: .*start target 104 is full" "$SFS_TEST_TMP/writer2.out" \
        || { cat "$SFS_TEST_TMP/writer2.out"; sfs_fail "a start hint naming the full 104 was not refused"; }
    echo "ok: 104 answered ENOSPC to the first writer; a file asking to start there is refused naming it"
else
    grep -q "write failed.*class MPI_ERR_NO_SPACE.*target 104.*No space left" "$SFS_TEST_TMP/writer2.out" \
        || { cat "$SFS_TEST_TMP/writer2.out"; sfs_fail "a full tmpfs target did not give MPI_ERR_NO_SPACE"; }
    echo "ok: the full tmpfs gives MPI_ERR_NO_SPACE naming target 104"
fi

# one probe per target, chunks 4..7 of the probe file (chunk k is on target
# number k mod 4 of its list): on 103 and 104 the write fails with ENOSPC,
# on 101 and 102 it is written and reads back
chunk=0
for t in $probe_targets; do
    k=$((chunk + 4))
    head -c 524288 /dev/urandom >"$SFS_TEST_TMP/chunk$k"
    sfs_pl dd if="$SFS_TEST_TMP/chunk$k" of=/stripefs/probe/f bs=512k seek=$k count=1 conv=notrunc \
        status=none 2>"$SFS_TEST_TMP/dd$k.err"
    rc=$?
    case $t in
    103 | 104)
        [ $rc -ne 0 ] || sfs_fail "chunk $k of the probe file, on the full target $t, was written"
        grep -q "No space left on device" "$SFS_TEST_TMP/dd$k.err" ||
            sfs_fail "chunk $k on the full target $t failed without ENOSPC: $(cat "$SFS_TEST_TMP/dd$k.err")"
        echo "ok: chunk $k, on the full target $t: $(head -n 1 "$SFS_TEST_TMP/dd$k.err")" ;;
    *)
        [ $rc -eq 0 ] || sfs_fail "chunk $k, on target $t (not full), failed: $(cat "$SFS_TEST_TMP/dd$k.err")"
        sfs_pl dd if=/stripefs/probe/f bs=512k skip=$k count=1 status=none >"$SFS_TEST_TMP/chunk$k.back" &&
            cmp "$SFS_TEST_TMP/chunk$k" "$SFS_TEST_TMP/chunk$k.back" ||
            sfs_fail "chunk $k, on target $t, does not read back"
        echo "ok: chunk $k, on target $t (not full), is written and reads back" ;;
    esac
    chunk=$((chunk + 1))
done
sfs_expect_eq "$chunk" 4 "probes (one per target)"

# new files go to the targets with room
sfs_ctl setpattern --numtargets 2 /narrow || sfs_fail "setpattern"
echo x | sfs_ctl put - /narrow/probe >/dev/null || sfs_fail "a small file while 103 and 104 are full"
targets=$(sfs_ctl getentryinfo /narrow/probe | awk '/^  \+ / {print $2}' | sort | tr '\n' ' ')
sfs_expect_eq "$targets" "101 102 " "targets the chooser picks while 103 and 104 are full"
head -c 30000000 /dev/urandom >"$SFS_TEST_TMP/other"
sfs_ctl put "$SFS_TEST_TMP/other" /narrow/big || sfs_fail "a file on targets with space failed"
sfs_ctl get /narrow/big "$SFS_TEST_TMP/other.back" && cmp "$SFS_TEST_TMP/other" "$SFS_TEST_TMP/other.back" \
    || sfs_fail "the file on the other targets is wrong"
sfs_ctl get /d/small "$SFS_TEST_TMP/small.back" && cmp "$SFS_TEST_TMP/small" "$SFS_TEST_TMP/small.back" \
    || sfs_fail "the earlier file changed"
echo "ok: a 30 MB file on 101+102 and the earlier 2 MB file read back unchanged"
sfs_stop_service
