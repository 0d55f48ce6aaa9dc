#!/usr/bin/env bash
# Issue 13's acceptance for draining: a target is drained under a running
# IOR-style MPI-IO job that checks every byte it ever wrote
# (tests/mpi/mpi_migrate_job.c: 4 ranks as sfsalice, Open MPI, files of two
# targets over five, each round a file per rank in 1 MiB transfers and a
# shared file written collectively, then every byte of this and every
# earlier round read back, while the drain may be moving those files).
# 1. migrate --from 101 --wait under the job: the drain ends while the job
#    still runs, it moved files, 101 ends with no chunk file (and gets none
#    after), the job exits 0 with no error, fsck is clean.
# 2. A slowed drain of 102 under a second job, and kill -9 of the whole
#    service once it has moved files: after a restart the rerun empties
#    102, every round both jobs reported verified reads back equal (the same
#    program in its verify mode, as sfsalice), fsck is clean.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/lib/migrate_lib.sh"
RUN="$SFS_BUILD/tools/stripefs-run"
JOB="$SFS_TEST_TMP/mpi_migrate_job"
NP=4
[ -f "$SFS_BUILD/adio/libstripefs-mpiio.so" ] || sfs_fail "the MPI-IO library is not built"
sfs_test_users
mpicc.openmpi -O2 -o "$JOB" "$SFS_SRC/tests/mpi/mpi_migrate_job.c" || sfs_fail "compile tests/mpi/mpi_migrate_job.c"
chmod 0755 "$JOB"
# a failed check leaves no job behind (its ranks would wait for the killed service)
trap 'pkill -9 -f -- "$JOB stripefs:" 2>/dev/null; sfs_cleanup' EXIT

sfs_start_service 3 --targets 5
sfs_ctl mkdir /job && sfs_ctl chmod 1777 /job || sfs_fail "mkdir /job (1777)"
for d in a b; do
    sfs_as sfsalice "$SFS_CTL" mkdir "/job/$d" &&
        sfs_as sfsalice "$SFS_CTL" setpattern --chunksize 256k --numtargets 2 "/job/$d" >/dev/null ||
        sfs_fail "mkdir/setpattern /job/$d as sfsalice"
done

# job DIR MODE ARGS...: the program as sfsalice, 4 ranks, in the background (JOB_PID)
job() {
    local dir=$1 out=$2
    shift 2
    sfs_as sfsalice timeout 600 mpirun.openmpi --oversubscribe -np $NP -x STRIPEFS_CONFIG "$RUN" \
        "$JOB" "stripefs:/job/$dir" "$@" >"$out" 2>&1 &
    JOB_PID=$!
}
# wait_rounds OUT N: until the job has verified N rounds
wait_rounds() {
    for _ in $(seq 1200); do
        grep -q "^ROUND $(($2 - 1)) ok" "$1" && return 0
        grep -q "^ROUND [0-9]* errors" "$1" && { cat "$1"; sfs_fail "the job reported errors"; }
        kill -0 $JOB_PID 2>/dev/null || { cat "$1"; sfs_fail "the job ended before round $2"; }
        sleep 0.1
    done
    cat "$1"
    sfs_fail "the job did not verify $2 rounds in 120 s"
}
last_ok_round() { sed -n 's/^ROUND \([0-9]*\) ok$/\1/p' "$1" | tail -n 1; }

# --- 1. drain 101 under a running job ---
job a "$SFS_TEST_TMP/job1.out" run "$SFS_TEST_TMP/stop1" 100000
job1=$JOB_PID
wait_rounds "$SFS_TEST_TMP/job1.out" 3
[ "$(sfs_chunks_on 101)" -gt 0 ] || sfs_fail "the job put no chunk file on 101: nothing to drain"
echo "ok: the job runs; 101 holds $(sfs_chunks_on 101) chunk files"
sfs_ctl migrate --from 101 --wait 300 >"$SFS_TEST_TMP/mig1.txt" 2>&1
rc=$?
cat "$SFS_TEST_TMP/mig1.txt"
[ $rc = 0 ] || sfs_fail "migrate --from 101 --wait under the job exited $rc"
kill -0 $job1 2>/dev/null || { cat "$SFS_TEST_TMP/job1.out"; sfs_fail "the job ended before the drain did: not a drain under a running job"; }
moved=$(sed -n 's/^migrate: target 101: \([0-9]*\) moved.*/\1/p' "$SFS_TEST_TMP/mig1.txt" | tail -n 1)
[ "${moved:-0}" -gt 0 ] || sfs_fail "the drain under the job moved no file"
[ "$(sfs_chunks_on 101)" = 0 ] || sfs_fail "101 holds $(sfs_chunks_on 101) chunk files after the drain"
echo "ok: the drain ended while the job ran: $moved files moved, 101 empty"
at_drain=$(last_ok_round "$SFS_TEST_TMP/job1.out")
wait_rounds "$SFS_TEST_TMP/job1.out" $((at_drain + 3))
touch "$SFS_TEST_TMP/stop1"
wait $job1
rc=$?
tail -n 3 "$SFS_TEST_TMP/job1.out"
[ $rc = 0 ] || { cat "$SFS_TEST_TMP/job1.out"; sfs_fail "the job under the drain exited $rc"; }
rounds1=$(sed -n 's/^RESULT rounds=\([0-9]*\) errors=0$/\1/p' "$SFS_TEST_TMP/job1.out")
[ -n "$rounds1" ] || { cat "$SFS_TEST_TMP/job1.out"; sfs_fail "the job did not end with 'errors=0'"; }
[ "$(sfs_chunks_on 101)" = 0 ] || sfs_fail "the draining 101 got $(sfs_chunks_on 101) new chunk files"
echo "ok: the job passed: $rounds1 rounds, every byte of every round verified in every later round"
sfs_fsck_after_move "after the drain under the job"

# --- 2. kill -9 of the service in the middle of a drain under a job ---
job b "$SFS_TEST_TMP/job2.out" run "$SFS_TEST_TMP/stop2" 100000
job2=$JOB_PID
wait_rounds "$SFS_TEST_TMP/job2.out" 3
STRIPEFS_TEST_MIGRATE_DELAY_MS=300 sfs_ctl migrate --from 102 --wait 300 >"$SFS_TEST_TMP/mig2.txt" 2>&1 &
mp=$!
sfs_wait_line "$SFS_TEST_TMP/mig2.txt" "^migrate: target 102: ([2-9]|[1-9][0-9]+)/[0-9]+ files moved" $mp 60
sfs_kill9_service
wait $mp
cat "$SFS_TEST_TMP/mig2.txt"
left=$(sfs_chunks_on 102)
[ "$left" -gt 0 ] || sfs_fail "the drain of 102 ended before the kill: nothing tested"
grep -Eq "^migrate: target 102: ([2-9]|[1-9][0-9]+)/[0-9]+ files moved" "$SFS_TEST_TMP/mig2.txt" ||
    sfs_fail "killed before the drain of 102 moved 2 files"
echo "ok: killed the service in the middle of the drain ($left chunk files left on 102)"
# the job lost its servers: stop it
touch "$SFS_TEST_TMP/stop2"
pkill -9 -f -- "$JOB stripefs:/job/b" 2>/dev/null
wait $job2
verified2=$(last_ok_round "$SFS_TEST_TMP/job2.out")
[ -n "$verified2" ] || sfs_fail "the second job verified no round"
verified2=$((verified2 + 1))

sfs_start_service 3 --targets 5
sfs_ctl migrate --from 102 --wait 120 >"$SFS_TEST_TMP/mig3.txt" 2>&1
rc=$?
cat "$SFS_TEST_TMP/mig3.txt"
[ $rc = 0 ] || sfs_fail "the rerun of the drain of 102 after the restart exited $rc"
[ "$(sfs_chunks_on 102)" = 0 ] || sfs_fail "102 holds $(sfs_chunks_on 102) chunk files after the rerun"
echo "ok: after kill -9 and a restart the rerun emptied 102"
verify_jobs() {
    sfs_as sfsalice timeout 300 mpirun.openmpi --oversubscribe -np $NP -x STRIPEFS_CONFIG "$RUN" \
        "$JOB" stripefs:/job/a verify "$rounds1" >"$SFS_TEST_TMP/verify1.out" 2>&1 ||
        { cat "$SFS_TEST_TMP/verify1.out"; return 1; }
    sfs_as sfsalice timeout 300 mpirun.openmpi --oversubscribe -np $NP -x STRIPEFS_CONFIG "$RUN" \
        "$JOB" stripefs:/job/b verify "$verified2" >"$SFS_TEST_TMP/verify2.out" 2>&1 ||
        { cat "$SFS_TEST_TMP/verify2.out"; return 1; }
}
verify_jobs || sfs_fail "the files of the verified rounds do not read back equal after the restart"
echo "ok: every verified round reads back equal: $rounds1 rounds of the first job, $verified2 of the killed one"
sfs_fsck_after_move "after the killed and rerun drain" verify_jobs
sfs_stop_service
