#!/usr/bin/env bash
# kill -9 of each kind of rank under an MPI job (issue 11's acceptance:
# IOR-style shared and file-per-process writes on a mirrored directory, an
# mdtest-style create storm and reads of existing files), on the four hosts
# of ci/cluster.sh, in the layout of test_cluster_rolling_all.sh (mirror
# groups 101+201 and 301+401, the metadata server on imaging-01 with its
# mirror on imaging-02, management on imaging-03). sfsalice's job,
# tests/mpi/mpi_migrate_job.c in its roll mode, runs 2 Open MPI ranks on
# imaging-04 through the MPI-IO driver: each round every rank writes its own
# 2 MiB file (1 MiB transfers), all write a shared file collectively
# (interleaved 256 KiB blocks), everything is synced, each rank creates,
# stats and deletes 16 files, and round 0's files (written before any
# kill), the last round's and this round's are read back and compared byte
# for byte; the files of two rounds ago are deleted. Meanwhile each host's
# rank is killed (-9) and rejoins (--rejoin) in turn: the secondary 401,
# management with the primary 301, the metadata server with 101 (the
# metadata mirror and 201 are promoted), then the promoted metadata server
# with 201 (promoted back). Checked: the job exits 0 and no round had an
# error (a kill is a pause: the longest round is printed), both members of
# each group hold byte-identical chunk files once the removals are done,
# and `stripefs-ctl shutdown` stops every rank with exit 0.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
source "$SFS_SRC/tests/cluster/rolling_lib.sh"
rolling_begin
CLUSTER_MPI_ARGS="--mca orte_enable_recovery 1"
ROLLING_MPI=1
ROLLING_NP=2
rolling_start

rolling_kill_each_rank
rolling_finish "four kills and rejoins (every rank) under an MPI-IO job"
rolling_stop_all "${ROLLING_REJOINED[@]}"
