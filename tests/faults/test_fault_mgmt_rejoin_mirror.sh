#!/usr/bin/env bash
# test_fault_mgmt_rejoin.sh with mirror groups (101+102, 103+104) and
# sfsalice's directory mirrored: the rank that runs management and the
# metadata server is killed and rejoins while her MPI job writes mirrored
# files. The primaries' fencing leases run out while management is away
# (half the offline timeout, 1.5 s here), so mirrored writes pause until it
# is back; the job must see the pause, never an error.
MGMT_REJOIN_MIRROR=1
source "$SFS_SRC/tests/faults/test_fault_mgmt_rejoin.sh"
