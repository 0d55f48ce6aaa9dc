#!/usr/bin/env bash
# kill -9 of the storage rank that holds the secondaries of both mirror
# groups (docs/mirroring.md): today a mirrored write then fails within the
# timeout with an error naming the secondary, and the primaries keep
# serving reads of mirrored files. Failover (the survivor serving alone,
# the job seeing a pause and never an error: issue 11 item 3) is not done:
# the test ends as an expected failure saying so.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
sfs_test_users
user=sfsalice
SFS_SERVICE_MPI_ARGS="--mca orte_enable_recovery 1"
sfs_start_service 3 --targets 4
sfs_stop_service
# ranks: 1 serves 101 103, 2 serves 102 104
cat >>"$SFS_STATE/stripefs.yaml" <<YAML
mirror:
  groups:
    - {primary: 101, secondary: 102}
    - {primary: 103, secondary: 104}
  same_host: true
YAML
sfs_start_service 3
home=$(sfs_user_home "$user")
head -c 4000000 /dev/urandom >"$home/blob" && chown "$user" "$home/blob"
sfs_ctl mkdir -m 0777 /m || sfs_fail "mkdir"
sfs_as "$user" "$SFS_CTL" mkdir /m/mine || sfs_fail "mkdir as $user"
sfs_as "$user" "$SFS_CTL" setpattern --mirror --numtargets 2 /m/mine >/dev/null || sfs_fail "setpattern"
sfs_as "$user" "$SFS_CTL" put "$home/blob" /m/mine/before || sfs_fail "put before the fault"

victim=$(sfs_ctl listnodes | awk '$1 == 2 {print $5}')
[ -n "$victim" ] || sfs_fail "no pid for rank 2 in listnodes"
start=$(date +%s.%N)
kill -9 "$victim"
sfs_log "injected: SIGKILL to storage rank 2 (pid $victim): the secondaries 102 and 104"

out=$(sfs_as "$user" "$SFS_CTL" put "$home/blob" /m/mine/after 2>&1)
rc=$?
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
echo "mirrored write with the secondaries down: exit $rc after $took s: $out"
# reads come from the primaries, which are alive
sfs_as "$user" "$SFS_CTL" get /m/mine/before - | cmp - "$home/blob" ||
    sfs_fail "a mirrored file written before the fault does not read back from its primaries"
echo "ok: a mirrored file reads back from its primaries with the secondaries down"
if [ $rc -ne 0 ]; then
    echo "$out" | grep -qE "target 10[24]" || sfs_fail "the failed mirrored write does not name the secondary: $out"
    awk -v t="$took" 'BEGIN {exit !(t < 20)}' || sfs_fail "the failed write took $took s"
    echo "ok: the mirrored write fails in $took s naming the secondary"
    sfs_known_bug "failover is not done (issue 11 item 3): with the secondaries' rank down a mirrored write fails ($took s) instead of going on with the primary alone"
fi
sfs_fail "the mirrored write succeeded with both secondaries down: was it on both copies?"
