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
sfs_test_users
cluster_begin
PROG="$SFS_BUILD/tests/progs/sfs_rolling_client"
[ -x "$PROG" ] || sfs_fail "missing $PROG (make check builds it)"
job=""
rolling_cleanup() {
    [ -n "$job" ] && kill "$job" 2>/dev/null
    cluster_cleanup
}
trap rolling_cleanup EXIT

cfg="$SFS_TEST_TMP/imaging.yaml"
d="$SFS_TEST_TMP/hosts"
cluster_meta_mirror_config "$cfg"
cluster_mirror_groups "$cfg" 101:201 301:401
CLUSTER_MPI_ARGS="--mca orte_enable_recovery 1"
cluster_start_service

meta_good() { # the metadata mirror's line says good, with its rank online
    cluster_wait_meta_mirror "[online], good since batch "
}
groups_good() { # both groups: both members good
    [ "$(ctl_on imaging-04 mirror list 2>/dev/null | grep -cE "good +[0-9]+ @.* good$")" -eq 2 ]
}
meta_good || sfs_fail "the metadata mirror is not good: '$CLUSTER_MIRROR_LINE'"
ctl_on imaging-04 mkdir -m 0777 /m || sfs_fail "mkdir /m"
cluster_as_alice imaging-04 "$SFS_CTL" mkdir /m/job || sfs_fail "sfsalice's mkdir"
cluster_as_alice imaging-04 "$SFS_CTL" setpattern --mirror --numtargets 2 --chunksize 64k /m/job \
    >/dev/null || sfs_fail "setpattern --mirror"

stop="$SFS_TEST_TMP/stop"
log="$SFS_TEST_TMP/job.log"
cluster_as_alice imaging-04 "$PROG" /m/job "$stop" >"$log" 2>"$SFS_TEST_TMP/job.err" &
job=$!
cluster_wait_line "$log" "round 3 " 60 >/dev/null || sfs_fail "the job did not start: $(cat "$log" "$SFS_TEST_TMP/job.err")"

rejoined=()
# roll HOST RANK WANT: kill HOST's rank; wait until `mirror list` matches
# WANT (-E; "-": management's own rank, nothing answers: 2 s, in which every
# lease ends); the rank rejoins; wait until both groups and the metadata
# mirror are good, and the job made two more rounds
roll() {
    local host=$1 rank=$2 want=$3 pid i rounds
    pid=$(ctl_on imaging-04 listnodes | awk -v h="$host" '$2 == h {print $5; exit}')
    [ -n "$pid" ] || sfs_fail "no pid of $host's rank in listnodes"
    kill -9 "$pid" || sfs_fail "cannot kill $host's rank ($pid)"
    sfs_log "injected: SIGKILL to $host's rank $rank (pid $pid), $(grep -c '^round' "$log") rounds so far"
    if [ "$want" = - ]; then
        sleep 2
    else
        for i in $(seq 300); do ctl_on imaging-04 mirror list 2>/dev/null | grep -qE "$want" && break; sleep 0.1; done
        ctl_on imaging-04 mirror list | grep -qE "$want" ||
            sfs_fail "after the kill of $host, mirror list does not show '$want': $(ctl_on imaging-04 mirror list)"
        echo "ok: $host lost: $(ctl_on imaging-04 mirror list | grep -E "$want")"
    fi
    timeout --kill-after=20 900 "${SFS_SERVER_ENV[@]}" "$CLUSTER" mpirun -np 1 --host "$host" \
        "$SFS_SERVER" -c "$cfg" --rejoin "$rank" --ready-file "$SFS_TEST_TMP/rejoined$rank" \
        >>"$SFS_TEST_TMP/rejoin$rank.log" 2>&1 &
    rejoined+=($!)
    for i in $(seq 600); do [ -f "$SFS_TEST_TMP/rejoined$rank" ] && break; sleep 0.1; done
    [ -f "$SFS_TEST_TMP/rejoined$rank" ] ||
        sfs_fail "$host's rank did not rejoin: $(tail -n 20 "$SFS_TEST_TMP/rejoin$rank.log")"
    rm -f "$SFS_TEST_TMP/rejoined$rank"
    for i in $(seq 600); do groups_good && break; sleep 0.1; done
    groups_good || sfs_fail "after $host rejoined, the groups are not good: $(ctl_on imaging-04 mirror list)"
    meta_good || sfs_fail "after $host rejoined, the metadata mirror is not good: '$CLUSTER_MIRROR_LINE'"
    rounds=$(grep -c '^round' "$log")
    cluster_wait_line "$log" "round $((rounds + 2)) " 120 >/dev/null ||
        sfs_fail "the job made no progress after $host rejoined: $(tail -n 3 "$log")"
    echo "ok: $host rejoined, groups and metadata mirror good: $(ctl_on imaging-04 mirror list | tr '\n' ';')"
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

touch "$stop"
wait "$job"
rc=$?
job=""
total=$(grep -c '^round' "$log")
failed=$(grep '^round' "$log" | grep -vc ' rc=0 ')
[ "$rc" = 0 ] && [ "$failed" = 0 ] && [ "$total" -ge 10 ] ||
    sfs_fail "the job exited $rc with $failed of $total rounds failed: $(grep -v ' rc=0 ' "$log" | head -n 5); $(tail -n 5 "$SFS_TEST_TMP/job.err")"
echo "ok: the job ran $total rounds across four kills and rejoins (every rank), none failed; longest round $(awk '{sub("seconds=", "", $4); if ($4 > m) m = $4} END {print m}' "$log") s"

# the removed files' chunk files go in the background (a member that was
# away gets its removals when back, retried every 5 s): wait for none pending
for _ in $(seq 600); do
    ctl_on imaging-04 df 2>/dev/null | grep -q " 0 removed files awaiting chunk deletion" && break
    sleep 0.1
done
ctl_on imaging-04 df | grep -q " 0 removed files awaiting chunk deletion" ||
    sfs_fail "chunk deletions still pending after 60 s: $(ctl_on imaging-04 df | tail -n 1)"
for pair in 101:201 301:401; do
    a=$(ctl_on imaging-04 listtargets | awk -v t="${pair%%:*}" '$1 == t {print $NF}')
    b=$(ctl_on imaging-04 listtargets | awk -v t="${pair##*:}" '$1 == t {print $NF}')
    [ -d "$a/chunks" ] && [ -d "$b/chunks" ] || sfs_fail "no chunk directories for $pair: '$a' '$b'"
    if ! diff -r "$a/chunks" "$b/chunks" >"$SFS_TEST_TMP/diff" 2>&1; then
        head -n 5 "$SFS_TEST_TMP/diff"
        for f in $(awk '/^Only in/ {sub(":", "", $3); print $3 "/" $4}' "$SFS_TEST_TMP/diff" | sed -n '1p;$p'); do
            stat -c '%n size=%s mtime=%y' "$f"
        done
        sfs_fail "the chunk files of ${pair%%:*} and ${pair##*:} differ ($(wc -l <"$SFS_TEST_TMP/diff") lines of diff)"
    fi
    echo "ok: ${pair%%:*} and ${pair##*:} hold byte-identical chunk files ($(find "$a/chunks" -type f | wc -l) each)"
done

ctl_on imaging-04 shutdown >/dev/null || sfs_fail "stripefs-ctl shutdown"
for _ in $(seq 900); do
    alive=0
    for p in "$CLUSTER_JOB" "${rejoined[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
done
for p in "${rejoined[@]}"; do
    kill -0 "$p" 2>/dev/null && sfs_fail "a rejoined rank did not stop in 90 s"
    wait "$p" || sfs_fail "a rejoined rank exited with $?"
done
kill -0 "$CLUSTER_JOB" 2>/dev/null && sfs_fail "the service did not stop in 90 s"
wait "$CLUSTER_JOB"
CLUSTER_JOB=""
echo "ok: the service stopped (every rank, the rejoined ones included, exit 0)"
