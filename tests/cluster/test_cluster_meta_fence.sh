#!/usr/bin/env bash
# Fencing of the metadata server (docs/metadata-mirror.md, "Fencing"), on
# the four hosts of ci/cluster.sh: the metadata server on imaging-01, its
# mirror on imaging-02, management on imaging-03 (so that management can
# stop without the metadata server). A batch committed without the mirror
# is answered only once management has recorded that the mirror needs a
# resync; else management could promote a mirror that lacks an
# acknowledged change.
# - sfsalice's client on imaging-04 connects (it holds the map), then the
#   mirror's and management's ranks are stopped (SIGSTOP). Her mkdir waits
#   for the mirror (three heartbeats), then for management (half the RPC
#   timeout), and fails with ETIMEDOUT naming the fence: never a success
#   management does not know of.
# - Management continued: the metadata server's report reaches it (at the
#   next heartbeat) and her second mkdir succeeds; management's file says
#   needs-resync.
# - The mirror continued: it gets the batches it missed and is good again;
#   the directory of the failed mkdir exists (committed on the server, only
#   not acknowledged: the error says so).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
sfs_test_users
cluster_begin
PROG="$SFS_BUILD/tests/progs/sfs_meta_fence_client"
[ -x "$PROG" ] || sfs_fail "missing $PROG (make check builds it)"

cfg="$SFS_TEST_TMP/imaging.yaml"
cluster_meta_mirror_config "$cfg" "s|offline: 20s}|offline: 60s}|"
grep -q "offline: 60s}" "$cfg" || sfs_fail "the test config has not the long offline timeout: $(cat "$cfg")"
cluster_start_service
state_file="$SFS_TEST_TMP/meta-mirror-state" # beside the config: management is not on imaging-01

wait_good() {
    cluster_wait_meta_mirror ", good since batch " ||
        sfs_fail "the metadata mirror is not good: '$CLUSTER_MIRROR_LINE'"
    echo "ok: $CLUSTER_MIRROR_LINE"
}
wait_good
ctl_on imaging-01 mkdir /shared && ctl_on imaging-01 chmod 1777 /shared || sfs_fail "mkdir /shared"

pid_on() { ctl_on imaging-01 listnodes | awk -v h="$1" '$2 == h {print $5; exit}'; }
mirror_pid=$(pid_on imaging-02)
mgmt_pid=$(pid_on imaging-03)
[ -n "$mirror_pid" ] && [ -n "$mgmt_pid" ] ||
    sfs_fail "no pids in listnodes: $(ctl_on imaging-01 listnodes)"

out="$SFS_TEST_TMP/client.out"
cluster_as_alice imaging-04 "$PROG" /shared "$SFS_TEST_TMP/go1" "$SFS_TEST_TMP/go2" >"$out" 2>&1 &
client=$!
continue_all() { kill -CONT "$mirror_pid" "$mgmt_pid" 2>/dev/null; }
trap 'continue_all; cluster_cleanup' EXIT
cluster_wait_line "$out" connected 30 >/dev/null || sfs_fail "sfsalice's client did not connect: $(cat "$out")"

kill -STOP "$mgmt_pid" "$mirror_pid" || sfs_fail "cannot stop ranks $mgmt_pid, $mirror_pid"
sfs_log "injected: SIGSTOP to management (imaging-03, pid $mgmt_pid) and the metadata mirror (imaging-02, pid $mirror_pid)"
touch "$SFS_TEST_TMP/go1"
first=$(cluster_wait_line "$out" 'first ' 60) || { continue_all; sfs_fail "the first mkdir did not end in 60 s: $(cat "$out")"; }
echo "first mkdir: $first"
case "$first" in
"first rc=0 "*) continue_all; sfs_fail "the mkdir was acknowledged while management could not record the mirror's state" ;;
"first rc=-110 "*"not acknowledged: management has not recorded"*"fencing"*) ;;
*) continue_all; sfs_fail "the first mkdir did not fail with the fence's ETIMEDOUT: $first" ;;
esac
grep -q "fencing: the replies of metadata batch [0-9]* (committed without the mirror) wait until management" \
    "$SFS_SERVICE_LOG" || { continue_all; sfs_fail "the service log does not say that the replies wait for management"; }
echo "ok: with the mirror and management stopped, sfsalice's mkdir is not acknowledged (ETIMEDOUT after ${first#*ms=})"

kill -CONT "$mgmt_pid"
sfs_log "management continued"
for _ in $(seq 200); do grep -q '^state needs-resync batch' "$state_file" 2>/dev/null && break; sleep 0.1; done
grep -q '^state needs-resync batch' "$state_file" ||
    { continue_all; sfs_fail "$state_file does not say needs-resync: $(cat "$state_file" 2>&1)"; }
touch "$SFS_TEST_TMP/go2"
second=$(cluster_wait_line "$out" 'second ' 60)
case "$second" in
"second rc=0 "*) ;;
*) continue_all; sfs_fail "the second mkdir, management back, failed: ${second:-nothing}; $(cat "$out")" ;;
esac
echo "ok: management back ($(tail -n 1 "$state_file")), sfsalice's second mkdir is acknowledged: $second"
wait $client || sfs_fail "sfsalice's client exited with $?: $(cat "$out")"

kill -CONT "$mirror_pid"
sfs_log "the metadata mirror continued"
wait_good
ctl_on imaging-04 stat /shared/first >/dev/null ||
    sfs_fail "/shared/first, committed but not acknowledged, is not there"
echo "ok: the directory of the unacknowledged mkdir exists (committed on the server, as its error said)"
cluster_stop_service imaging-01
