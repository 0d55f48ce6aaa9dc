# Shared by tests/faults/test_fault_mirror_*.sh (source it after
# sfs_test_lib.sh): a one-host service of 3 ranks and 4 targets whose mirror
# groups are 101+102 and 103+104, so rank 1 holds the primaries (101, 103)
# and rank 2 the secondaries (102, 104), with short timeouts so that a lost
# member is found quickly. Rank recovery is on, so a killed rank can rejoin.

# mirror_service_start OFFLINE_SECONDS [BANDWIDTH]: configure and start it;
# BANDWIDTH (for example 16M) caps every target's emulated disk, so that a
# write lasts long enough to be caught in flight on a fast or a slow build.
mirror_service_start() {
    local offline=$1 bandwidth=${2:-}
    SFS_SERVICE_MPI_ARGS="--mca orte_enable_recovery 1"
    sfs_start_service 3 --targets 4
    sfs_stop_service
    cat >>"$SFS_STATE/stripefs.yaml" <<YAML
mirror:
  groups:
    - {primary: 101, secondary: 102}
    - {primary: 103, secondary: 104}
  same_host: true
YAML
    # a forward to a lost buddy is given up after min(rpc / 2, offline)
    sfs_short_timeouts "$offline"
    if [ -n "$bandwidth" ]; then
        sed -i -E "/id: 10[1-4][,}]/ s/\}[[:space:]]*$/, bandwidth: $bandwidth}/" "$SFS_STATE/stripefs.yaml"
        [ "$(grep -cE "id: 10[1-4][,}].*bandwidth: $bandwidth" "$SFS_STATE/stripefs.yaml")" -eq 4 ] ||
            sfs_fail "bandwidth not set on the 4 targets: $(grep -n "id: 10" "$SFS_STATE/stripefs.yaml")"
    fi
    sfs_start_service 3
}

# mirror_user_dir USER SETPATTERN-ARGS...: /m (0777, root's) and /m/mine,
# made by USER, whose new files are mirrored with SETPATTERN-ARGS
mirror_user_dir() {
    local user=$1
    shift
    sfs_ctl mkdir -m 0777 /m || sfs_fail "mkdir"
    sfs_as "$user" "$SFS_CTL" mkdir /m/mine || sfs_fail "mkdir as $user"
    sfs_as "$user" "$SFS_CTL" setpattern --mirror "$@" /m/mine >/dev/null ||
        sfs_fail "setpattern"
}
