#!/usr/bin/env bash
# Data through the real service: striped writes of many shapes read back
# identical, holes, overlaps and truncation give the right sizes, list I/O,
# and unlink removes the chunk files from the targets. Large reads are copied
# straight into this host's clients and large writes out of them (direct
# copies); the same checks run again with them off, through UCX's shared
# memory, and with the servers refusing the writes' copies (the clients
# then send the data). Thousands of small overlapping writes read back.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
CHECK="$SFS_BUILD/tests/progs/sfs_client_check"

sfs_start_service 3 --targets 4
sfs_ctl mkdir /data || sfs_fail "mkdir"
"$CHECK" io /data/striped || sfs_fail "striped I/O"
"$CHECK" sparse /data/sparse || sfs_fail "sparse files and truncate"
"$CHECK" listio /data/list || sfs_fail "list I/O"
STRIPEFS_DIRECT_COPY=0 "$CHECK" io /data/striped-ucx || sfs_fail "striped I/O without direct copies"
STRIPEFS_DIRECT_COPY=0 "$CHECK" listio /data/list-ucx || sfs_fail "list I/O without direct copies"
echo "ok: the same data checks pass with direct copies off"
"$CHECK" overlap /data/overlap || sfs_fail "small overlapping writes"

# the striped file's chunks lie on all 4 targets, named by its entry id
id=$(sfs_ctl getentryinfo /data/striped | awk '/EntryID/ {print $2}')
chunks=$(find "$SFS_STATE"/targets/*/chunks -name "$id" | wc -l)
sfs_expect_eq "$chunks" 4 "chunk files of entry $id"

# a file copied in with ctl comes back identical
head -c 5000000 /dev/urandom >"$SFS_TEST_TMP/blob"
sfs_ctl put "$SFS_TEST_TMP/blob" /data/blob || sfs_fail "put"
sfs_ctl get /data/blob "$SFS_TEST_TMP/blob.back" || sfs_fail "get"
cmp "$SFS_TEST_TMP/blob" "$SFS_TEST_TMP/blob.back" || sfs_fail "bytes differ after put/get"
echo "ok: 5 MB put/get identical"
size=$(sfs_ctl stat /data/blob | awk '/Size:/ {print $2}')
sfs_expect_eq "$size" 5000000 "stat size"

# unlink: the name goes at once, the chunk files in the background
sfs_ctl rm /data/striped || sfs_fail "rm"
sfs_expect_fail "no such" sfs_ctl stat /data/striped
for _ in $(seq 100); do
    [ "$(find "$SFS_STATE"/targets/*/chunks -name "$id" | wc -l)" = 0 ] && break
    sleep 0.1
done
sfs_expect_eq "$(find "$SFS_STATE"/targets/*/chunks -name "$id" | wc -l)" 0 "chunk files left after unlink"
sfs_ctl df | grep -q "0 removed files awaiting" || sfs_fail "deletions still pending"
sfs_stop_service

# servers that refuse to copy write data out of clients (STRIPEFS_DIRECT_PULL=0):
# each connection is refused a few times, then sends its data itself
STRIPEFS_DIRECT_PULL=0 sfs_start_service 3 --targets 4
SFS_LOG_MASK=ucx=info "$CHECK" io /data/refused >"$SFS_TEST_TMP/refused.out" 2>&1 ||
    { cat "$SFS_TEST_TMP/refused.out"; sfs_fail "striped I/O with the writes' direct copies refused"; }
grep "refused .* direct copies of request data" "$SFS_TEST_TMP/refused.out" | head -n 2
grep -q "refused .* direct copies of request data: sending it from now on" "$SFS_TEST_TMP/refused.out" ||
    { cat "$SFS_TEST_TMP/refused.out"; sfs_fail "the client did not fall back to sending the data"; }
"$CHECK" listio /data/refused-list || sfs_fail "list I/O with the writes' direct copies refused"
echo "ok: the data checks pass when the servers refuse to copy write data"
sfs_stop_service
