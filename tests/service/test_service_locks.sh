#!/usr/bin/env bash
# Byte-range locks of the metadata server (MPI atomic mode), as ordinary
# users, with tests/progs/sfs_lock_hold:
#  - no lock outlives a dead client: sfsalice holds an exclusive lock, a
#    second process of hers waits for an overlapping one; the holder is
#    killed with SIGKILL and the waiter is granted at once (not after its
#    30 s RPC timeout), and the server says it released the dead one's lock
#    (when its session is lost, or on its next tick if the kernel closed the
#    killed process's socket before the process became a zombie);
#  - a lock needs the open's access: sfsbob, who may only read her file
#    (0644), gets a shared lock but is refused an exclusive one (EACCES;
#    on ext4 a write lock through a read-only descriptor is EBADF: the
#    same refusal, told as "not open for that").
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
hold="$SFS_BUILD/tests/progs/sfs_lock_hold"
[ -x "$hold" ] || sfs_fail "tests/progs/sfs_lock_hold is not built (make check TESTS=)"
sfs_test_users
sfs_start_service 2 --targets 2
sfs_ctl mkdir /locks && sfs_ctl chmod 1777 /locks || sfs_fail "mkdir /locks (1777)"

sfs_as sfsalice "$hold" /locks/f w x 0 1048576 300 >"$SFS_TEST_TMP/holder.out" 2>&1 &
sfs_wait_for "$SFS_TEST_TMP/holder.out" "granted" 30 || { cat "$SFS_TEST_TMP/holder.out"; sfs_fail "the holder got no lock"; }
holder=$(sed -n 's/^pid \([0-9]*\) waiting/\1/p' "$SFS_TEST_TMP/holder.out")
[ -n "$holder" ] || sfs_fail "no pid from the holder"
sfs_as sfsalice "$hold" /locks/f w s 4096 10 0 >"$SFS_TEST_TMP/waiter.out" 2>&1 &
waiter_job=$!
sfs_wait_for "$SFS_TEST_TMP/waiter.out" "waiting" 30 || sfs_fail "the waiter did not start"
sleep 2
grep -q granted "$SFS_TEST_TMP/waiter.out" && sfs_fail "a shared lock inside a held exclusive one was granted"
echo "ok: an overlapping lock waits while another process holds an exclusive one"
killed_at=$(date +%s%N)
kill -9 "$holder" || sfs_fail "kill -9 the holder ($holder)"
sfs_wait_for "$SFS_TEST_TMP/waiter.out" "released" 20 || { cat "$SFS_TEST_TMP/waiter.out"; sfs_fail "the waiter was not granted after the holder was killed"; }
waited_ms=$((($(date +%s%N) - killed_at) / 1000000))
wait "$waiter_job" || sfs_fail "the waiter failed: $(cat "$SFS_TEST_TMP/waiter.out")"
[ "$waited_ms" -lt 15000 ] || sfs_fail "the waiter was granted only ${waited_ms} ms after the kill"
grep -q "byte-range lock(s) released" "$SFS_SERVICE_LOG" || sfs_fail "the server did not say it released the dead client's lock"
echo "ok: the holder killed with SIGKILL: the waiter got its lock ${waited_ms} ms later; $(grep -m1 -o '[a-z]*: [a-z ]*[0-9]* byte-range lock(s) released' "$SFS_SERVICE_LOG")"

# access: sfsbob may read /locks/f (0644), not write it
sfs_as sfsbob "$hold" /locks/f r s 0 100 0 >"$SFS_TEST_TMP/bob-shared.out" 2>&1 ||
    sfs_fail "sfsbob's shared lock on a file he may read: $(cat "$SFS_TEST_TMP/bob-shared.out")"
sfs_as sfsbob "$hold" /locks/f r x 0 100 0 >"$SFS_TEST_TMP/bob-excl.out" 2>&1
rc=$?
cat "$SFS_TEST_TMP/bob-excl.out"
sfs_expect_eq "$rc" 13 "sfsbob's exclusive lock on a file he may only read (EACCES)"
grep -q "exclusive lock of file" "$SFS_TEST_TMP/bob-excl.out" || sfs_fail "the refusal does not say what was refused"
echo "ok: a shared lock needs read access and an exclusive one write access (sfsbob refused: EACCES)"
sfs_stop_service
