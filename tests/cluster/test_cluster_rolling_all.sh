#!/usr/bin/env bash
# A rolling restart of EVERY server rank under a running job (issue 11's
# acceptance), on the four hosts of ci/cluster.sh: mirror groups 101
# (imaging-01) + 201 (imaging-02) and 301 (imaging-03) + 401 (imaging-04),
# the metadata server on imaging-01 with its mirror on imaging-02, and
# management on imaging-03 (heartbeat 500 ms, offline 3 s, RPC 6 s).
# sfsalice's job on imaging-04, one client connected once, makes, writes,
# syncs, reads back, checks, stats and removes files and makes directories
# in a mirrored directory, round after round, while each host's rank is
# killed (-9) and rejoins (--rejoin) in turn:
# - imaging-04: a storage secondary (401);
# - imaging-03: management, and the primary 301 (nothing can be promoted
#   while management is away: the job pauses until the rank is back);
# - imaging-01: the metadata server and the primary 101 (the metadata mirror
#   and 201 are promoted; the rank rejoins as the metadata mirror);
# - imaging-02: the promoted metadata server and 201 (rank 0 and 101 are
#   promoted back).
# After each rejoin both groups and the metadata mirror are good again
# before the next kill. Checked: every round of the job succeeded (pauses,
# never an error; the longest is printed), both members of each group hold
# byte-identical chunk files, and `stripefs-ctl shutdown` stops every rank,
# the rejoined ones included, with exit 0.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
source "$SFS_SRC/tests/cluster/rolling_lib.sh"
sfs_test_users
cluster_begin
job=""
rolling_cleanup() {
    [ -n "$job" ] && kill "$job" 2>/dev/null
    cluster_cleanup
}
trap rolling_cleanup EXIT
CLUSTER_MPI_ARGS="--mca orte_enable_recovery 1"
rolling_start

rejoined=()
# roll HOST RANK WANT: kill HOST's rank; wait until `mirror list` matches
# WANT (-E; "-": management's own rank, nothing answers: 2 s, in which every
# lease ends); the rank rejoins; wait until all is good again
roll() {
    local host=$1 rank=$2 want=$3 pid i
    pid=$(ctl_on imaging-04 listnodes | awk -v h="$host" '$2 == h {print $5; exit}')
    [ -n "$pid" ] || sfs_fail "no pid of $host's rank in listnodes"
    kill -9 "$pid" || sfs_fail "cannot kill $host's rank ($pid)"
    sfs_log "injected: SIGKILL to $host's rank $rank (pid $pid), $(rolling_rounds) rounds so far"
    if [ "$want" = - ]; then
        sleep 2
    else
        for i in $(seq 300); do ctl_on imaging-04 mirror list 2>/dev/null | grep -qE "$want" && break; sleep 0.1; done
        ctl_on imaging-04 mirror list | grep -qE "$want" ||
            sfs_fail "after the kill of $host, mirror list does not show '$want': $(ctl_on imaging-04 mirror list)"
        echo "ok: $host lost: $(ctl_on imaging-04 mirror list | grep -E "$want")"
    fi
    timeout --kill-after=20 900 "${SFS_SERVER_ENV[@]}" "$CLUSTER" mpirun -np 1 --host "$host" \
        "$SFS_SERVER" -c "$ROLLING_CFG" --rejoin "$rank" --ready-file "$SFS_TEST_TMP/rejoined$rank" \
        >>"$SFS_TEST_TMP/rejoin$rank.log" 2>&1 &
    rejoined+=($!)
    for i in $(seq 600); do [ -f "$SFS_TEST_TMP/rejoined$rank" ] && break; sleep 0.1; done
    [ -f "$SFS_TEST_TMP/rejoined$rank" ] ||
        sfs_fail "$host's rank did not rejoin: $(tail -n 20 "$SFS_TEST_TMP/rejoin$rank.log")"
    rm -f "$SFS_TEST_TMP/rejoined$rank"
    rolling_settled "$host's rank rejoined"
}
roll imaging-04 3 "^2 +301 @.* good .*401 @.*needs-resync"
roll imaging-03 2 -
roll imaging-01 0 "^1 +201 @.* good .*101 @.*needs-resync"
# (management's log: the rejoined rank 2's since imaging-03's roll)
grep -q "metadata failover: rank 1 on imaging-02 is the metadata server now" "$SFS_TEST_TMP/rejoin2.log" ||
    sfs_fail "the metadata mirror was not promoted when imaging-01 was lost"
roll imaging-02 1 "^1 +101 @.* good .*201 @.*needs-resync"
grep -q "metadata failover: rank 0 on imaging-01 is the metadata server now" "$SFS_TEST_TMP/rejoin2.log" ||
    sfs_fail "rank 0 was not promoted back when imaging-02 was lost"
rolling_finish "four kills and rejoins (every rank)"
rolling_stop_all "${rejoined[@]}"
