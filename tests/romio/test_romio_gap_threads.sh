#!/bin/bash
# MPI_THREAD_MULTIPLE with the library (plain paths, through ROMIO's ufs
# driver): 8 threads per rank at once on 2 ranks, each workload checked
# (romio_gaps.c): MPI_File_c2f/f2c, open-view-write-read-close of a file of
# each thread's own, and collective I/O of one file per thread on
# communicators of their own (collectives of different threads at once must
# not wait on each other; the time limit catches a deadlock). Until patch 0012
# ROMIO's critical sections were empty outside MPICH: the c2f workload alone
# crashed within a second (SIGSEGV or SIGABRT in ROMIO's handle table).
# The same workloads then run on stripefs: paths against a one-host service.
. "$SFS_SRC/tests/romio/lib.sh"
need_ompi
cd "$SFS_TEST_TMP"
prog=$(build_prog openmpi romio_gaps)

ompi_run 2 "$RUN_TOOL" "$prog" threads lib-file >lib.out 2>&1
rc=$?
[ $rc -eq 0 ] || { cat lib.out; fail "Open MPI + library: the threaded workloads failed (exit $rc)"; }
cat lib.out | grep -E '^(threads|RESULT)'
expect_result lib.out "provided=MULTIPLE errors=0" "Open MPI + library: MPI-IO from 8 threads per rank at once"

if [ -f "$LIB_MPICH" ] && command -v mpicc.mpich >/dev/null 2>&1; then
    progm=$(build_prog mpich romio_gaps)
    mpich_run 2 "$RUN_TOOL" "$progm" threads lib-m >libm.out 2>&1
    rc=$?
    [ $rc -eq 0 ] || { cat libm.out; fail "MPICH + library: the threaded workloads failed (exit $rc)"; }
    expect_result libm.out "provided=MULTIPLE errors=0" "MPICH + library: MPI-IO from 8 threads per rank at once"
fi

# the same on stripefs: (the stripefs driver under ROMIO's lock)
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
sfs_start_service 3 --targets 4
sfs_ctl mkdir /threads || fail "mkdir /threads"
timeout "$MPI_TIMEOUT" "${SFS_MPIRUN[@]}" -x STRIPEFS_CONFIG -np 2 "$RUN_TOOL" "$prog" threads \
    stripefs:/threads/f >sfs.out 2>&1
rc=$?
[ $rc -eq 0 ] || { cat sfs.out; fail "Open MPI + library on stripefs: the threaded workloads failed (exit $rc)"; }
expect_result sfs.out "provided=MULTIPLE errors=0" "Open MPI + library: MPI-IO from 8 threads per rank at once on stripefs:"
sfs_stop_service
