#!/usr/bin/env bash
# A rolling restart of the storage hosts under a writing job, on the four
# hosts of ci/cluster.sh (docs/mirroring.md, "Failover"): Imaging's mirror
# groups 101 (imaging-01) + 201 (imaging-02) and 301 (imaging-03) + 401
# (imaging-04), management and metadata on imaging-01. While sfsalice's
# client on imaging-04 writes mirrored files one after the other and reads
# each back, the server ranks of imaging-03 (a primary), imaging-02 (a
# secondary) and imaging-04 (the promoted primary) are killed (-9) in turn;
# after each kill management promotes or marks the member, the rank rejoins
# (--rejoin), is resynced and the groups are good again before the next.
# Every write and every read back succeeds (pauses, no error), the member
# states go through needs-resync to good, and in the end both members of each
# group hold byte-identical chunk files.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
source "$SFS_SRC/tests/cluster/rolling_lib.sh"
# the writing job ($job) goes with the test, also when it fails (it holds
# the cluster lock's descriptor)
rolling_begin

ROLLING_CFG="$SFS_TEST_TMP/imaging.yaml"
cfg=$ROLLING_CFG
d="$SFS_TEST_TMP/hosts"
cluster_mirror_config "$cfg" 101:201 301:401
CLUSTER_MPI_ARGS="--mca orte_enable_recovery 1"
cluster_start_service

cluster_alice_mirror_dir imaging-04 2 64k
home=$(sfs_user_home sfsalice)
for i in 1 2 3 4; do
    head -c 3000000 /dev/urandom >"$home/blob$i" || sfs_fail "blob$i"
done
chown sfsalice "$home"/blob*

# the job: mirrored files written and read back until told to stop
stop="$SFS_TEST_TMP/stop"
log="$SFS_TEST_TMP/writer.log"
(
    n=0
    while [ ! -e "$stop" ] && [ $n -lt 1000 ]; do
        n=$((n + 1))
        b=$((n % 4 + 1))
        a=$(date +%s.%N)
        out=$(cluster_as_alice imaging-04 "$SFS_CTL" put "$home/blob$b" "/m/mine/f$n" 2>&1)
        rc=$?
        if [ $rc = 0 ]; then
            back="$SFS_TEST_TMP/back$n"
            cluster_as_alice imaging-04 "$SFS_CTL" get "/m/mine/f$n" - >"$back" 2>"$back.err"
            rc=$?
            if [ $rc = 0 ]; then
                out=$(cmp "$back" "$home/blob$b" 2>&1)
                rc=$?
            fi
            [ $rc = 0 ] && rm -f "$back" "$back.err" ||
                out="$out $(cat "$back.err"; cmp -l "$back" "$home/blob$b" | wc -l) bytes differ, first $(cmp -l "$back" "$home/blob$b" | head -n 1); $(ctl_on imaging-04 getentryinfo "/m/mine/f$n" | tr '\n' ' ')"
        fi
        echo "f$n blob$b rc=$rc seconds=$(awk -v a="$a" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') $out"
    done
) >"$log" 2>&1 &
job=$!
cluster_wait_line "$log" "f2 " 60 >/dev/null || sfs_fail "the writer did not start: $(cat "$log")"

rolling_progress() { echo "$(grep -c rc= "$log") files written"; }
# roll HOST RANK WANT: kill HOST's rank, wait for WANT in `mirror list`, let
# it rejoin, wait for both groups good
roll() {
    local host=$1
    rolling_kill "$@"
    rolling_rejoin "$1" "$2"
    for _ in $(seq 600); do rolling_groups_good && break; sleep 0.1; done
    rolling_groups_good || sfs_fail "after $host rejoined, the groups are not good: $(ctl_on imaging-04 mirror list)"
    echo "ok: $host rejoined and resynced: $(ctl_on imaging-04 mirror list | tr '\n' ';')"
}
# a primary, then a secondary, then the promoted primary
roll imaging-03 2 "^2 +401 @.* good .*301 @.*needs-resync"
roll imaging-02 1 "^1 +101 @.* good .*201 @.*needs-resync"
roll imaging-04 3 "^2 +301 @.* good .*401 @.*needs-resync"
before=$(grep -c rc= "$log")
cluster_wait_line "$log" "f$((before + 2)) " 60 >/dev/null || sfs_fail "the writer stalled after the last rejoin"
touch "$stop"
wait $job
job=""
cat "$log"
total=$(grep -c rc= "$log")
[ "$(grep -c " rc=0 " "$log")" -eq "$total" ] || sfs_fail "not every write and read back of the job succeeded"
echo "ok: $total mirrored files written and read back across three kills and rejoins, longest $(awk '{sub("seconds=", "", $4); if ($4 > m) m = $4} END {print m}' "$log") s"

rolling_copies_identical 101:201 301:401
rolling_stop_all "${ROLLING_REJOINED[@]}"
