#!/usr/bin/env bash
# Jobs that do not match the config's hosts are refused, across the four
# hosts of ci/cluster.sh: two ranks on imaging-03 and none on imaging-04, a
# rank missing, a host the config does not name. Each is refused with a
# message naming the host, and leaves no rank running. Then the right job
# starts and stops cleanly with stripefs-ctl shutdown (exit 0).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
cluster_begin
cfg="$SFS_TEST_TMP/imaging.yaml"
cluster_write_config "$cfg"

# refused: mpirun must fail (within 120 s) and say why; no server rank stays
refused() { # pattern --host LIST -np N
    local pattern=$1 hosts=$3 np=$5 out rc left
    out=$(timeout --kill-after=10 120 "${SFS_SERVER_ENV[@]}" "$CLUSTER" mpirun -np "$np" --host "$hosts" \
        "$SFS_SERVER" -c "$CLUSTER_CONFIG" 2>&1)
    rc=$?
    [ $rc = 0 ] && sfs_fail "a job on $hosts was not refused: $out"
    [ $rc = 124 ] || [ $rc = 137 ] && sfs_fail "a job on $hosts hung instead of being refused"
    echo "$out" | grep -qE -- "$pattern" || sfs_fail "the job on $hosts failed (exit $rc) without saying '$pattern': $out"
    left=$(for h in "${CLUSTER_HOSTS[@]}"; do ip netns pids "$h"; done | xargs -r ps -o args= -p 2>/dev/null | grep -c stripefs-server)
    sfs_expect_eq "$left" 0 "server ranks left running after the refused job on $hosts"
    echo "ok: -np $np --host $hosts refused (exit $rc): $(echo "$out" | grep -E -m1 -- "$pattern" | sed 's/^ *//')"
}

refused "host 'imaging-03': .* expects 1 server rank there, the job started 2" \
    --host imaging-01,imaging-02,imaging-03,imaging-03 -np 4
refused "host 'imaging-04': .* expects 1 server rank there, the job started 0" \
    --host imaging-01,imaging-02,imaging-03 -np 3
# a config that leaves out imaging-04, against a job that runs there
sed -e '/name: imaging-04/d' -e '/id: 401/d' "$cfg" >"$SFS_TEST_TMP/three.yaml"
CLUSTER_CONFIG="$SFS_TEST_TMP/three.yaml"
refused "runs on host 'imaging-04', which .*three.yaml does not name" --host "$CLUSTER_ALL" -np 4
CLUSTER_CONFIG=$cfg

# and the right job serves, then stops cleanly
cluster_start_service
ctl_on imaging-02 check-servers || sfs_fail "check-servers after the refused jobs"
cluster_stop_service imaging-02
