#!/usr/bin/env bash
# A byte-range lock whose holder's session is lost while the holder may be
# alive elsewhere (docs/atomic-mode.md, "The lock table"): kept for the
# offline timeout and one RPC timeout more (here 6 + 6 = 12 s), then
# released. The holder runs as sfsalice in a UTS namespace of its own named
# `elsewhere`, so the metadata server cannot tell it is on its own host and
# see that its process is gone: it is killed with SIGKILL, as a client on
# another host that died. Then:
#  - a LOCK of the same range by another of sfsalice's processes, asked 2 s
#    after the kill, is not granted: it waits until its RPC timeout (6 s)
#    and fails, before the 12 s are over (the lock went with the session
#    until 2026-12-07: granted at once);
#  - the server says it kept the lock, and 12 s after the loss that the
#    client did not come back and its lock is released;
#  - then the same LOCK is granted at once.
# The holder on the server's own host (test_service_locks.sh) still loses
# its lock at once.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
hold="$SFS_BUILD/tests/progs/sfs_lock_hold"
[ -x "$hold" ] || sfs_fail "tests/progs/sfs_lock_hold is not built (make check TESTS=)"
command -v unshare >/dev/null || sfs_skip "no unshare (util-linux) to give the holder a host name of its own"
[ "$(id -u)" = 0 ] || sfs_skip "a UTS namespace needs root"
sfs_test_users
sfs_start_service 2 --targets 2
sfs_stop_service
sfs_short_timeouts 6
sfs_start_service 2 --targets 2
sfs_ctl mkdir /locks && sfs_ctl chmod 1777 /locks || sfs_fail "mkdir /locks (1777)"

# sfs_as in a UTS namespace whose host name is `elsewhere`
export -f sfs_as sfs_user_home sfs_fail sfs_dump_service_log
export SFS_TEST_TMP SFS_SERVICE_LOG
unshare --uts bash -c 'echo elsewhere >/proc/sys/kernel/hostname && sfs_as sfsalice "$@"' bash \
    "$hold" /locks/f w x 0 1048576 300 >"$SFS_TEST_TMP/holder.out" 2>&1 &
holder_job=$!
sfs_wait_for "$SFS_TEST_TMP/holder.out" "granted" 30 || { cat "$SFS_TEST_TMP/holder.out"; sfs_fail "the holder got no lock"; }
holder=$(sed -n 's/^pid \([0-9]*\) waiting/\1/p' "$SFS_TEST_TMP/holder.out")
[ -n "$holder" ] || sfs_fail "no pid from the holder"
sfs_ctl net | grep -q "client elsewhere .*pid $holder" ||
    sfs_fail "the holder's session does not say it is on host elsewhere: $(sfs_ctl net)"
echo "ok: the holder (pid $holder) took the lock from host 'elsewhere'"
kill -9 "$holder" || sfs_fail "kill -9 the holder ($holder)"
wait "$holder_job" 2>/dev/null
sfs_wait_for "$SFS_SERVICE_LOG" "lost: its 1 byte-range lock(s) kept for 12 s" 10 ||
    sfs_fail "the server did not say it kept the lost client's lock: $(grep -i 'lock' "$SFS_SERVICE_LOG" | tail -n 3)"
lost_at=$(date +%s%N)
echo "ok: $(grep -m1 -o 'session .* lost: its 1 byte-range lock(s) kept for 12 s.*' "$SFS_SERVICE_LOG")"

sleep 2
started=$(date +%s%N)
sfs_as sfsalice "$hold" /locks/f w x 0 100 0 >"$SFS_TEST_TMP/early.out" 2>&1
rc=$?
ended=$(date +%s%N)
cat "$SFS_TEST_TMP/early.out"
grep -q "granted" "$SFS_TEST_TMP/early.out" &&
    sfs_fail "a lock of the range was granted $(((started - lost_at) / 1000000)) ms after the holder's session was lost"
[ $rc -ne 0 ] || sfs_fail "the early lock neither was granted nor failed"
grep -q "did not come back" "$SFS_SERVICE_LOG" &&
    [ "$(((ended - lost_at) / 1000000))" -lt 12000 ] &&
    sfs_fail "the lost client's lock was released before the early lock gave up"
echo "ok: a LOCK of the range $(((started - lost_at) / 1000000)) ms after the loss was not granted (it gave up $(((ended - lost_at) / 1000000)) ms after the loss)"

sfs_wait_for "$SFS_SERVICE_LOG" "did not come back within 12 s" 20 ||
    sfs_fail "the server did not release the lost client's lock: $(grep -i 'lock' "$SFS_SERVICE_LOG" | tail -n 3)"
echo "ok: $(grep -m1 -o 'the client elsewhere .*released' "$SFS_SERVICE_LOG")"
sfs_as sfsalice "$hold" /locks/f w x 0 100 0 >"$SFS_TEST_TMP/late.out" 2>&1 ||
    sfs_fail "the lock after the release: $(cat "$SFS_TEST_TMP/late.out")"
granted_ms=$(sed -n 's/^granted after \([0-9]*\) ms.*/\1/p' "$SFS_TEST_TMP/late.out")
[ -n "$granted_ms" ] && [ "$granted_ms" -lt 3000 ] || sfs_fail "the lock after the release: $(cat "$SFS_TEST_TMP/late.out")"
echo "ok: after the release the same range is granted in $granted_ms ms"
sfs_stop_service
