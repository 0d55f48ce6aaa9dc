#!/usr/bin/env bash
# An IOR-style MPI-IO job across the four hosts of ci/cluster.sh: the
# service on imaging-01..04, tests/mpi/mpi_io_check with 4 ranks, one per
# host, under stripefs-run (every client talks TCP to servers on other
# hosts; every MPI-IO check passes on every rank). Then data written on
# one host reads back identical on others: 7 MiB put on imaging-02, striped
# over the targets of all four hosts, get on imaging-04 and imaging-01.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
[ -f "$SFS_BUILD/adio/libstripefs-mpiio.so" ] || sfs_fail "the MPI-IO library is not built"
mpicc.openmpi -O2 -o "$SFS_TEST_TMP/check_ompi" "$SFS_SRC/tests/mpi/mpi_io_check.c" ||
    sfs_fail "compile tests/mpi/mpi_io_check.c with mpicc.openmpi"
cluster_begin
cfg="$SFS_TEST_TMP/imaging.yaml"
cluster_write_config "$cfg"
cluster_start_service
export STRIPEFS_CONFIG=$cfg

ctl_on imaging-01 mkdir /xhost || sfs_fail "mkdir /xhost"
sfs_log "MPI-IO checks: 4 ranks on $CLUSTER_ALL"
timeout --kill-after=20 600 "$CLUSTER" mpirun -np 4 --host "$CLUSTER_ALL" -x STRIPEFS_CONFIG \
    "$run_tool" "$SFS_TEST_TMP/check_ompi" stripefs:/xhost >"$SFS_TEST_TMP/mpi.out" 2>&1
rc=$?
cat "$SFS_TEST_TMP/mpi.out"
[ $rc = 0 ] || sfs_fail "the MPI-IO job across the hosts failed (exit $rc)"
grep -q FAILED "$SFS_TEST_TMP/mpi.out" && sfs_fail "the MPI-IO job reported failures"
echo "ok: mpi_io_check with 4 ranks on 4 hosts: $(grep -c '^ok:' "$SFS_TEST_TMP/mpi.out") checks passed"

ls_out=$(ctl_on imaging-02 ls -l /xhost) || sfs_fail "ls /xhost"
echo "$ls_out"
# a file written on imaging-02 reads back identical on imaging-04 and imaging-01
head -c $((7 * 1024 * 1024 + 12345)) /dev/urandom >"$SFS_TEST_TMP/data.in"
ctl_on imaging-02 put "$SFS_TEST_TMP/data.in" /xhost/from-02.bin || sfs_fail "put on imaging-02"
info=$(ctl_on imaging-03 getentryinfo /xhost/from-02.bin) || sfs_fail "getentryinfo"
echo "$info"
sfs_expect_eq "$(echo "$info" | grep -c '^  + ')" 4 "targets of /xhost/from-02.bin"
# its chunks lie in the target directories of all four hosts
id=$(echo "$info" | awk '/EntryID/ {print $2}')
on_hosts=0
for h in "${CLUSTER_HOSTS[@]}"; do
    chunk=$(find "$SFS_TEST_TMP/hosts/$h/mnt" -path '*/chunks/*' -name "$id" -size +0 2>/dev/null)
    echo "$h: ${chunk:-no chunk file} ($(stat -c %s "$chunk" 2>/dev/null || echo 0) bytes)"
    [ -n "$chunk" ] && on_hosts=$((on_hosts + 1))
done
sfs_expect_eq "$on_hosts" 4 "hosts holding chunk data of entry $id"
ctl_on imaging-04 get /xhost/from-02.bin "$SFS_TEST_TMP/data.04" || sfs_fail "get on imaging-04"
cmp "$SFS_TEST_TMP/data.in" "$SFS_TEST_TMP/data.04" || sfs_fail "the file read on imaging-04 differs from the one written on imaging-02"
echo "ok: 7 MiB written on imaging-02 read back identical on imaging-04"
ctl_on imaging-01 get /xhost/from-02.bin "$SFS_TEST_TMP/data.01" || sfs_fail "get on imaging-01"
cmp "$SFS_TEST_TMP/data.in" "$SFS_TEST_TMP/data.01" || sfs_fail "the file read on imaging-01 differs"
echo "ok: and identical on imaging-01"

cluster_stop_service imaging-04
