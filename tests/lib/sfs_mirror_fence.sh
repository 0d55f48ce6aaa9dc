#!/usr/bin/env bash
# Helpers of the fencing tests (tests/faults/test_fault_mirror_fence.sh,
# tests/cluster/test_cluster_mirror_fence.sh): when management promoted a
# buddy, how many records sfs_fence_writer had acknowledged since, and
# whether the old primary stopped before. Times are the service log's,
# as seconds since the epoch. Sourced after sfs_test_lib.sh.

# mirror_epoch TIME: a log line's ISO time, in seconds since the epoch
mirror_epoch() { date -d "$1" +%s.%6N; }

# mirror_wait_promotion PATTERN: wait (60 s) for management's log line that
# matches PATTERN; sets `promoted` (the line) and `p_at` (its time)
mirror_wait_promotion() {
    promoted=""
    for _ in $(seq 600); do
        promoted=$(grep -m1 "$1" "$SFS_SERVICE_LOG" || true)
        [ -n "$promoted" ] && break
        sleep 0.1
    done
    [ -n "$promoted" ] || sfs_fail "management promoted no secondary within 60 s of the cut"
    p_at=$(mirror_epoch "$(echo "$promoted" | awk '{print $1}')")
}

# mirror_acks_after WLOG: the records the writer's log WLOG says were
# acknowledged after the promotion (p_at)
mirror_acks_after() { awk -v p="$p_at" '$1 == "ack" && $3 > p' "$1" | wc -l; }

# mirror_wait_acks_after WLOG WRITER N: wait (60 s) until N records were
# acknowledged after the promotion, or the writer (pid WRITER) ended
mirror_wait_acks_after() {
    for _ in $(seq 600); do
        [ "$(mirror_acks_after "$1")" -ge "$3" ] && break
        kill -0 "$2" 2>/dev/null || break
        sleep 0.1
    done
}

# mirror_fenced_before_promotion PATTERN: the old primary logged the end of
# its lease (the first line matching PATTERN, -E), and before the promotion;
# sets `fenced` (the line) and `f_at` (its time). Waited for (30 s): on the
# cluster, a rank's output goes through mpirun on imaging-01, and a host
# that was cut from it delivers what it logged meanwhile only some seconds
# after the heal (TCP's retransmission backoff; once seen under
# AddressSanitizer)
mirror_fenced_before_promotion() {
    fenced=""
    for _ in $(seq 300); do
        fenced=$(grep -m1 -E "$1" "$SFS_SERVICE_LOG" || true)
        [ -n "$fenced" ] && break
        sleep 0.1
    done
    [ -n "$fenced" ] || sfs_fail "the old primary never said its lease expired (waited 30 s)"
    echo "old primary: $fenced"
    f_at=$(mirror_epoch "$(echo "$fenced" | awk '{print $1}')")
    awk -v f="$f_at" -v p="$p_at" 'BEGIN {exit !(f < p)}' ||
        sfs_fail "the old primary stopped at $f_at, after the promotion at $p_at"
}
