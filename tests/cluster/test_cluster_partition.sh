#!/usr/bin/env bash
# A partition that heals, then `stripefs-ctl shutdown` (issue 11): the service
# across the four hosts of ci/cluster.sh; imaging-03 is cut off from the
# bridge for longer than the offline timeout (20 s in the test config), so
# management marks its target 301 offline and every rank's connections to it
# fail; then the link comes back and 301 must be listed online again. Then
# shutdown: the job (every rank) must exit 0 within 60 s, with no UCX
# assertion and no rank left waiting in MPI_Finalize. (Before the fix, ranks
# aborted in ucp_worker_destroy, `ucp_ep.c:382 Assertion 'req->flags &
# UCP_REQUEST_FLAG_RELEASED' failed`, and the others waited for ever.)
#
# SFS_TEST_PARTITION=link (default): the switch's end of imaging-03's veth
# goes down (imaging-03 loses carrier); =detach: the veth leaves the bridge
# (imaging-03 keeps its carrier, packets vanish: a silent partition).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
cluster_begin

mode=${SFS_TEST_PARTITION:-detach}
cut_host=imaging-03
cut_target=301
port="to-$cut_host" # its veth's end in the switch namespace (ci/cluster.sh)
switch=imaging-switch

partition_cut() {
    case $mode in
    link) ip -n "$switch" link set "$port" down ;;
    detach) ip -n "$switch" link set "$port" nomaster ;;
    *) sfs_fail "SFS_TEST_PARTITION must be link or detach, not '$mode'" ;;
    esac
}
partition_heal() {
    case $mode in
    link) ip -n "$switch" link set "$port" up ;;
    detach) ip -n "$switch" link set "$port" master br0 up ;;
    esac
}
# whatever happens, the cluster is whole again for the next test
heal_on_exit() { partition_heal 2>/dev/null; cluster_cleanup; }
trap heal_on_exit EXIT

# The state listtargets on HOST shows for the cut host's target.
target_state() { # host
    ctl_on "$1" --timeout 10 listtargets 2>/dev/null |
        awk -v t="$cut_target" '$1 == t { print $4 }'
}
# Wait up to $2 s for the target to be listed in state $1 from imaging-01.
wait_state() { # state seconds
    local end=$((SECONDS + $2)) s
    while [ $SECONDS -lt $end ]; do
        s=$(target_state imaging-01)
        [ "$s" = "$1" ] && return 0
        sleep 1
    done
    echo "target $cut_target is still '${s:-?}' after $2 s (wanted $1)"
    return 1
}

cfg="$SFS_TEST_TMP/imaging.yaml"
cluster_write_config "$cfg"
t0=$SECONDS
cluster_start_service
sfs_log "service up in $((SECONDS - t0)) s"
sfs_expect_eq "$(target_state imaging-01)" online "target $cut_target before the partition"

# the cut
t_cut=$SECONDS
partition_cut || sfs_fail "cannot cut $cut_host off ($mode)"
sfs_log "partition: $cut_host cut off from the bridge ($mode)"
ctl_on imaging-01 --timeout 5 listnodes >/dev/null 2>&1 # (traffic while it is cut)
wait_state offline 60 || sfs_fail "management did not mark target $cut_target offline within 60 s"
sfs_log "target $cut_target offline $((SECONDS - t_cut)) s after the cut"
# past the offline timeout, and long enough for the RPCs in flight to it to
# time out as well (the config's rpc timeout is 30 s)
while [ $((SECONDS - t_cut)) -lt 35 ]; do sleep 1; done
ctl_on imaging-01 --timeout 5 check-servers >/dev/null 2>&1 # (one more try at it)

# the heal
t_heal=$SECONDS
partition_heal || sfs_fail "cannot reconnect $cut_host"
sfs_log "partition healed after $((t_heal - t_cut)) s"
wait_state online 60 || sfs_fail "target $cut_target did not come back online within 60 s of the heal"
sfs_log "target $cut_target online again $((SECONDS - t_heal)) s after the heal"
targets=$(ctl_on "$cut_host" listtargets) || sfs_fail "listtargets on $cut_host after the heal"
echo "$targets"
sfs_expect_eq "$(echo "$targets" | grep -c ' online ')" 4 "online targets seen from $cut_host after the heal"
check=$(ctl_on imaging-01 check-servers) || sfs_fail "check-servers after the heal: $check"
echo "$check" | grep -q "4 server ranks checked, 0 unreachable" || sfs_fail "check-servers did not reach all 4 ranks"
echo "ok: after the heal, every rank answers"

# the stop: every rank exits 0 (the job's status), within 60 s
t_stop=$SECONDS
ctl_on imaging-01 shutdown >/dev/null || sfs_fail "stripefs-ctl shutdown failed"
for _ in $(seq 600); do
    kill -0 "$CLUSTER_JOB" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$CLUSTER_JOB" 2>/dev/null; then
    ranks=$(for h in "${CLUSTER_HOSTS[@]}"; do ip netns pids "$h"; done |
        while read -r p; do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "-c $cfg" && echo "$p"; done)
    # shellcheck disable=SC2086
    sfs_dump_stacks $ranks
    sfs_fail "the service did not stop within 60 s of stripefs-ctl shutdown (processes left: $(echo "$ranks" | paste -sd" " -))"
fi
wait "$CLUSTER_JOB"
rc=$?
CLUSTER_JOB=""
sfs_log "service stopped $((SECONDS - t_stop)) s after shutdown, job exit status $rc"
if grep -E "Assertion|Caught signal|exited on signal|aborted" "$SFS_SERVICE_LOG"; then
    sfs_fail "a rank aborted while stopping (above)"
fi
[ $rc -eq 0 ] || sfs_fail "the service job exited with $rc after the partition healed and shutdown"
grep -q 'stopped cleanly' "$SFS_SERVICE_LOG" || sfs_fail "no clean stop in the service log"
# what the ranks gave up on while stopping (closes to a peer that does not answer)
grep -E "did not finish within|without MPI_Finalize|MPI_Finalize did not finish" "$SFS_SERVICE_LOG" || true
if grep -q "exiting without MPI_Finalize" "$SFS_SERVICE_LOG"; then
    grep "exiting without MPI_Finalize" "$SFS_SERVICE_LOG"
    sfs_log "note: ranks left without MPI_Finalize (the safety net), see above"
fi
echo "ok: partition of $cut_host ($mode) for $((t_heal - t_cut)) s, healed, shutdown: the job exited 0 in $((SECONDS - t_stop)) s"
