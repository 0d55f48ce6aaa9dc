#!/usr/bin/env bash
# Management unreachable when a client starts: nothing listening, and a
# port that accepts but never answers. Tools and MPI-IO jobs fail with a
# clear error naming the address, within the connect timeout: never a hang.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
run_tool="$SFS_BUILD/tools/stripefs-run"
head -c 64 /dev/urandom >"$SFS_TEST_TMP/connauth" && chmod 0400 "$SFS_TEST_TMP/connauth"
export STRIPEFS_CONNAUTH="$SFS_TEST_TMP/connauth"
unset STRIPEFS_CONFIG

closed=$(sfs_free_port)
start=$(date +%s)
sfs_expect_fail "cannot reach the stripefs management service at localhost:$closed.*refused" \
    env STRIPEFS_MGMT="localhost:$closed" "$SFS_CTL" listtargets
echo "ok: refused at once ($(( $(date +%s) - start )) s)"

# a listener that accepts and then says nothing (a hung management host)
silent=$(sfs_free_port)
perl -MIO::Socket::INET -e '
    my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ARGV[0], Listen => 16,
                                  ReuseAddr => 1) or die "listen: $!";
    my @held; alarm 120; while (my $c = $s->accept) { push @held, $c }' "$silent" &
listener=$!
trap 'kill $listener 2>/dev/null; sfs_cleanup' EXIT
sleep 0.5
start=$(date +%s)
sfs_expect_fail "cannot reach the stripefs management service at 127.0.0.1:$silent.*timed out" \
    env STRIPEFS_MGMT="127.0.0.1:$silent" STRIPEFS_TIMEOUT=5 "$SFS_CTL" listtargets
took=$(( $(date +%s) - start ))
[ "$took" -le 15 ] || sfs_fail "the tool took $took s with a 5 s timeout"
echo "ok: a silent management port fails in $took s (timeout 5 s)"

mpicc.openmpi -O2 -o "$SFS_TEST_TMP/check" "$SFS_SRC/tests/mpi/mpi_io_check.c" || sfs_fail "compile"
# the job's first MPI error must come within a few connect timeouts (the
# program goes on with more checks after it, each failing the same way)
start=$(date +%s)
STRIPEFS_MGMT="127.0.0.1:$silent" STRIPEFS_TIMEOUT=5 timeout 300 "${SFS_MPIRUN[@]}" -x STRIPEFS_MGMT \
    -x STRIPEFS_TIMEOUT -x STRIPEFS_CONNAUTH -np 2 "$run_tool" "$SFS_TEST_TMP/check" \
    stripefs:/x >"$SFS_TEST_TMP/job.out" 2>&1 &
job=$!
first=""
while kill -0 $job 2>/dev/null; do
    if [ -z "$first" ] && grep -q "FAILED: collective open" "$SFS_TEST_TMP/job.out"; then
        first=$(( $(date +%s) - start ))
    fi
    sleep 0.2
done
wait $job
rc=$?
took=$(( $(date +%s) - start ))
[ -n "$first" ] || first=$took
grep -m1 "FAILED: collective open" "$SFS_TEST_TMP/job.out"
[ $rc -ne 0 ] || sfs_fail "the MPI job succeeded without a service"
[ $rc -ne 124 ] || sfs_fail "the MPI job hung (killed after 300 s)"
grep -q "collective open.*cannot reach the stripefs management service at 127.0.0.1:$silent" \
    "$SFS_TEST_TMP/job.out" || { cat "$SFS_TEST_TMP/job.out"; sfs_fail "the MPI error does not name the service"; }
[ "$first" -le 30 ] || sfs_fail "the MPI job's first error came after $first s (connect timeout 5 s)"
echo "ok: the MPI job gets a clear MPI error after $first s (connect timeout 5 s); all its checks ended in $took s"
