#!/usr/bin/env bash
# Management's host cut off, and the metadata server's host cut off one
# second after management's link is back (issue 11's cut matrix found this
# window once: docs/faults.md). On the four hosts of ci/cluster.sh in the
# layout of tests/cluster/rolling_lib.sh (management on imaging-03, the
# metadata server on imaging-01 with its mirror on imaging-02, mirror groups
# 101+201 and 301+401; offline 3 s), under sfsalice's connected job on
# imaging-04. A management that heard no other rank for the offline time
# takes the silence for its own host's cut and keeps the ranks still silent
# probably-offline, not offline, until they have had time to be heard again
# (sfs_mgmt_heard). Before, it named them offline for up to a heartbeat
# after its heal; the metadata server read that map and dropped its mirror,
# and the cut of its own host a moment later found no mirror to promote.
# The metadata server also dropped its mirror when the map named it
# probably-offline, which management still does for a moment after its own
# cut (1 run in 4 on 2026-12-06): a batch to a mirror in step is now sent
# then too, and such a drop fails the test. A drop for another reason (a
# batch timed out) is reported as the known bug it is (docs/faults.md).
# Checked: the metadata mirror is promoted during imaging-01's cut, every
# round of the job succeeds (pauses, never an error), the groups and the
# metadata mirror are good again afterwards, the copies byte-identical, and
# `stripefs-ctl shutdown` stops every rank with exit 0. The UCX crash after
# a heal (docs/faults.md) is reported as a known bug only where peers connect
# by worker address (STRIPEFS_UCX_LISTENER=0); through listeners it fails.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
source "$SFS_SRC/tests/cluster/rolling_lib.sh"
rolling_begin
rolling_start

ROLLING_ON_FAIL=rolling_ucx_crash
link() { # HOST down|up
    cluster_link "$1" "$2"
    sfs_log "$1's link $2, $(rolling_rounds) rounds so far"
}

since=$(date +%s.%N)
link imaging-03 down
sleep 8
link imaging-03 up
sleep 1
link imaging-01 down
sleep 8
link imaging-01 up
rolling_settled "imaging-03's cut, then imaging-01's a second after its heal"
# a mirror in step gets its batches while the map names it probably-offline,
# which is what management names the ranks it has not heard again yet
# (sfs_meta_mirror_link_post); rolling_promoted fails on such a drop
rolling_promoted 1 imaging-02 "$since" "imaging-01's cut"
echo "ok: the metadata mirror was promoted during imaging-01's cut: $(grep -m 1 "this rank (1 on imaging-02) is the metadata server now" "$SFS_SERVICE_LOG" | sed 's/^.*\] //')"
# (management's own words about its cut reach the log through mpirun, from
# imaging-03 by way of imaging-01: said when there, not required)
grep -m 1 "management heard no other rank for" "$SFS_SERVICE_LOG" | sed 's/^.*\] warn /management: /'
rolling_finish "management's cut, then the metadata server's a second after"
