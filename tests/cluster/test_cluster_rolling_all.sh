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
rolling_begin
CLUSTER_MPI_ARGS="--mca orte_enable_recovery 1"
rolling_start

rolling_kill_each_rank
rolling_finish "four kills and rejoins (every rank)"
rolling_stop_all "${ROLLING_REJOINED[@]}"
