#!/usr/bin/env bash
# sfs_powercut_fs itself, with coreutils: what survives a cut is exactly
# what its model (tests/powercut/README.md) says, in both names modes.
# (`sync FILE` fsyncs FILE, `sync DIR` fsyncs the directory.)
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

PCFS="$SFS_BUILD/tests/powercut/sfs_powercut_fs"
[ -x "$PCFS" ] || sfs_skip "tests/powercut/sfs_powercut_fs is not built (configure found no fuse3: install libfuse3-dev and fuse3, see ci/install-deps.sh)"
[ -c /dev/fuse ] || sfs_skip "/dev/fuse does not exist (no FUSE in this kernel or container)"
command -v fusermount3 >/dev/null || sfs_skip "fusermount3 is not installed (Debian package fuse3)"

PC_FS_PID=""
PC_MOUNT=""
pc_cleanup() {
    [ -n "$PC_MOUNT" ] && fusermount3 -uz "$PC_MOUNT" 2>/dev/null
    [ -n "$PC_FS_PID" ] && kill "$PC_FS_PID" 2>/dev/null
    return 0
}
trap pc_cleanup EXIT

pc_mount() { # backing image mountpoint [--strict]
    mkdir -p "$3"
    "$PCFS" ${4:-} "$1" "$2" "$3" >>"$SFS_TEST_TMP/fs.log" 2>&1 &
    PC_FS_PID=$! PC_MOUNT=$3
    for _ in $(seq 100); do
        mountpoint -q "$3" && return 0
        sleep 0.1
    done
    sfs_fail "sfs_powercut_fs did not mount $1 on $3: $(tail -n 3 "$SFS_TEST_TMP/fs.log")"
}
pc_umount() {
    fusermount3 -u "$PC_MOUNT" || sfs_fail "cannot unmount $PC_MOUNT"
    wait "$PC_FS_PID"
    PC_FS_PID="" PC_MOUNT=""
}

# the same operations in each mode; m is the mount point
pc_workload() {
    local m=$1
    printf hello >"$m/keep" && sync "$m/keep" && printf ' unsynced' >>"$m/keep"
    printf lost >"$m/unsynced"
    printf data >"$m/datasync" && sync --data "$m/datasync"
    mkdir "$m/d" && printf x >"$m/d/x" && sync "$m/d"
    printf tt >"$m/t" && sync "$m/t" && mv "$m/t" "$m/t2"
    rm "$m/pre"
    mkdir -p "$m/e/f" && printf y >"$m/e/f/y" && sync "$m/e/f/y"
    printf zz >"$m/g/a" && sync "$m/g/a" && mv "$m/g/a" "$m/g/b" && sync "$m/g"
}

for mode in file strict; do
    dir=$SFS_TEST_TMP/$mode
    mkdir -p "$dir/backing/g" && printf old >"$dir/backing/pre" &&
        printf orig >"$dir/backing/keep"
    pc_mount "$dir/backing" "$dir/image" "$dir/mnt" "$([ $mode = strict ] && echo --strict)"
    pc_workload "$dir/mnt" || sfs_fail "$mode: the workload failed on the live mount"
    sfs_expect_eq "$(cat "$dir/mnt/keep")" "hello unsynced" "$mode: the live file before the cut"
    echo cut >"$dir/mnt/.powercut" || sfs_fail "$mode: the cut failed"
    sfs_expect_fail "input/output error" cat "$dir/mnt/keep"
    pc_umount
    im=$dir/image
    # data: as of the last sync, in both modes
    sfs_expect_eq "$(cat "$im/keep")" hello "$mode: synced data kept, data after the sync dropped"
    [ -e "$im/unsynced" ] && sfs_fail "$mode: a file never synced (nor its directory) survived"
    # the unlink and the rename were never made durable
    sfs_expect_eq "$(cat "$im/pre")" old "$mode: an unlink without a directory fsync is undone"
    [ -e "$im/t2" ] && sfs_fail "$mode: a rename without a directory fsync survived"
    # a directory fsync makes its entries durable (x with no data), not its own name
    if [ $mode = file ]; then
        sfs_expect_eq "$(cat "$im/datasync")" data "$mode: fdatasync keeps the data and the new name"
        sfs_expect_eq "$(cat "$im/t")" tt "$mode: the name at the fsync, before the rename"
        sfs_expect_eq "$(cat "$im/e/f/y")" y "$mode: a file's fsync makes its whole path durable"
        [ -e "$im/d" ] && sfs_fail "$mode: d survived though nothing made its name durable"
    else
        for f in datasync t e; do
            [ -e "$im/$f" ] && sfs_fail "$mode: $f survived without a directory fsync"
        done
        [ -e "$im/d" ] && sfs_fail "$mode: d survived though its parent was not synced"
    fi
    # g existed at the mount; its fsync makes the rename of a to b durable
    sfs_expect_eq "$(cat "$im/g/b")" zz "$mode: a rename made durable by the directory's fsync"
    [ -e "$im/g/a" ] && sfs_fail "$mode: the old name of a durable rename survived"
    echo "ok: $mode names: $(grep 'power cut' "$SFS_TEST_TMP/fs.log" | tail -n 1)"
done
