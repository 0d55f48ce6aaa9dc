#!/usr/bin/env bash
# Data through the real service: striped writes of many shapes read back
# identical, holes, overlaps and truncation give the right sizes, list I/O,
# and unlink removes the chunk files from the targets. Large reads are copied
# straight into this host's clients and large writes out of them (direct
# copies); the same checks run again with them off, through UCX's shared
# memory, and with the servers refusing the writes' copies (the clients
# then send the data). Chunk files are handed to same-host clients, which
# read them themselves and see every later write and truncate; servers
# that refuse that serve the reads. Thousands of small overlapping writes
# read back.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
CHECK="$SFS_BUILD/tests/progs/sfs_client_check"

sfs_start_service 3 --targets 4
sfs_ctl mkdir /data || sfs_fail "mkdir"
# the client's debug log says which chunk files it was handed to read itself
export STRIPEFS_LOG_MASK=client=debug STRIPEFS_LOG_FILE="$SFS_TEST_TMP/client.log"
"$CHECK" io /data/striped || sfs_fail "striped I/O"
"$CHECK" sparse /data/sparse || sfs_fail "sparse files and truncate"
"$CHECK" listio /data/list || sfs_fail "list I/O"
"$CHECK" coherent /data/coherent || sfs_fail "reads of handed-over chunk files"
handed=$(grep -c "reading target [0-9]*'s chunk file directly" "$SFS_TEST_TMP/client.log")
[ "$handed" -ge 4 ] || sfs_fail "the client read no chunk file directly ($handed handed over)"
echo "ok: $handed chunk files were handed over and read directly, and the checks pass"
STRIPEFS_LOG_FILE="$SFS_TEST_TMP/client-ucx.log" STRIPEFS_DIRECT_COPY=0 "$CHECK" io /data/striped-ucx ||
    sfs_fail "striped I/O without direct copies"
STRIPEFS_LOG_FILE="$SFS_TEST_TMP/client-ucx.log" STRIPEFS_DIRECT_COPY=0 "$CHECK" listio /data/list-ucx ||
    sfs_fail "list I/O without direct copies"
! grep -q "chunk file directly" "$SFS_TEST_TMP/client-ucx.log" ||
    sfs_fail "a client with direct copies off read a chunk file directly"
echo "ok: the same data checks pass with direct copies off (no chunk file handed over)"
unset STRIPEFS_LOG_MASK STRIPEFS_LOG_FILE
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
# each connection is refused a few times, then sends its data itself; and
# that hand over no chunk files (STRIPEFS_LOCAL_READ=0): reads go through them
STRIPEFS_DIRECT_PULL=0 STRIPEFS_LOCAL_READ=0 sfs_start_service 3 --targets 4
STRIPEFS_LOG_MASK=ucx=info "$CHECK" io /data/refused >"$SFS_TEST_TMP/refused.out" 2>&1 ||
    { cat "$SFS_TEST_TMP/refused.out"; sfs_fail "striped I/O with the writes' direct copies refused"; }
grep "refused .* direct copies of request data" "$SFS_TEST_TMP/refused.out" | head -n 2
grep -q "refused .* direct copies of request data: sending it from now on" "$SFS_TEST_TMP/refused.out" ||
    { cat "$SFS_TEST_TMP/refused.out"; sfs_fail "the client did not fall back to sending the data"; }
"$CHECK" listio /data/refused-list || sfs_fail "list I/O with the writes' direct copies refused"
STRIPEFS_LOG_MASK=client=debug "$CHECK" coherent /data/refused-coherent >"$SFS_TEST_TMP/refused-local.out" 2>&1 ||
    { cat "$SFS_TEST_TMP/refused-local.out"; sfs_fail "reads with no chunk file handed over"; }
grep -q "no direct reads of target [0-9]*: EOPNOTSUPP" "$SFS_TEST_TMP/refused-local.out" ||
    { cat "$SFS_TEST_TMP/refused-local.out"; sfs_fail "the client was not refused the chunk files"; }
! grep -q "chunk file directly" "$SFS_TEST_TMP/refused-local.out" ||
    sfs_fail "a server with STRIPEFS_LOCAL_READ=0 handed over a chunk file"
echo "ok: the data checks pass when the servers refuse to copy write data and to hand over files"
sfs_stop_service
