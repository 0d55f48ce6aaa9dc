#!/usr/bin/env bash
# One namespace cluster at a time on a machine, and none left by a killed
# run. Network namespaces belong to the kernel, not to a checkout: the lock
# is machine-wide, so two checkouts' suites wait for each other instead of
# tearing down each other's hosts. A cluster that a test made (its state
# directory lies below a suite's /tmp/sfs-suite.*) and that is still up when
# the lock is free was left by a test that was killed (a machine restored
# from a snapshot keeps its namespaces but not its processes): it is taken
# down. A cluster that someone made by hand (any other state directory) is
# never touched here.
# Sourced by tests after sfs_test_lib.sh; needs SFS_SRC.

SFS_CLUSTER_LOCK=${SFS_CLUSTER_LOCK:-/run/lock/stripefs-cluster-tests.lock}

# sfs_cluster_lock SECONDS: hold the machine's cluster lock on fd 9 (until
# the test exits), waiting at most SECONDS; then clear a stale cluster.
sfs_cluster_lock() {
    local wait_s=$1 state
    exec 9>>"$SFS_CLUSTER_LOCK" || sfs_fail "cannot open $SFS_CLUSTER_LOCK for locking"
    flock -w "$wait_s" 9 || sfs_fail "another cluster test has held $SFS_CLUSTER_LOCK for $wait_s s"
    "$SFS_SRC/ci/cluster.sh" status >/dev/null 2>&1 || return 0
    state=$(source "$SFS_SRC/ci/cluster-agent.sh" --lib && sfs_cluster_state_dir)
    case "$state" in
    /tmp/sfs-suite.*/*)
        sfs_log "cluster: up with a test's state ($state) while no test holds the cluster lock: left by a killed run, taking it down"
        timeout 120 "$SFS_SRC/ci/cluster.sh" down || sfs_fail "ci/cluster.sh down (of a cluster left by a killed run) failed"
        ;;
    esac
    return 0
}
