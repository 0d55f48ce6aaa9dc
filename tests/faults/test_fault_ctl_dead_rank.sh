#!/usr/bin/env bash
# A dead storage rank, seen from stripefs-ctl: the user gets our error, which
# names the rank or its targets, and none of UCX's own log lines (it used to
# print raw "UCX ERROR shmat(...) failed" lines, on its standard output, UCX's
# default log stream, while it tried the dead rank's shared memory).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

# survivors must live on when a rank dies (Open MPI aborts the job otherwise)
SFS_SERVICE_MPI_ARGS="--mca orte_enable_recovery 1"
sfs_start_service 3 --targets 4
head -c 3000000 /dev/urandom >"$SFS_TEST_TMP/f.dat"
sfs_ctl put "$SFS_TEST_TMP/f.dat" /f.dat || sfs_fail "put"

victim=$(sfs_ctl listnodes | awk '$1 == 2 {print $5}')
[ -n "$victim" ] || sfs_fail "no pid for rank 2 in listnodes"
kill -9 "$victim"
sfs_log "injected: SIGKILL to storage rank 2 (pid $victim), which serves targets 102 and 104"
sleep 6 # the survivors notice and let go of its shared memory (keepalive 2 s)

: >"$SFS_TEST_TMP/ctl.all"
for cmd in "get /f.dat $SFS_TEST_TMP/back.dat" "check-servers" "df" "stat /f.dat"; do
    # shellcheck disable=SC2086
    STRIPEFS_TIMEOUT=8 "$SFS_CTL" $cmd >"$SFS_TEST_TMP/ctl.out" 2>"$SFS_TEST_TMP/one.err"
    echo "stripefs-ctl $cmd: exit $?: $(head -c 300 "$SFS_TEST_TMP/one.err")"
    cat "$SFS_TEST_TMP/ctl.out" "$SFS_TEST_TMP/one.err" >>"$SFS_TEST_TMP/ctl.all"
done
if grep -E "UCX +(ERROR|WARN)" "$SFS_TEST_TMP/ctl.all" >"$SFS_TEST_TMP/ucx.lines"; then
    head -n 4 "$SFS_TEST_TMP/ucx.lines"
    sfs_fail "UCX's own log lines reached stripefs-ctl's user"
fi
echo "ok: no UCX log line in stripefs-ctl's output"
grep -Eq "rank 2|target 10[24]" "$SFS_TEST_TMP/ctl.all" ||
    sfs_fail "no error names the dead rank 2 or its targets 102/104"
echo "ok: the errors name the dead rank or its targets"
# a user who asks for UCX's messages gets them
UCX_LOG_LEVEL=warn STRIPEFS_TIMEOUT=8 "$SFS_CTL" get /f.dat "$SFS_TEST_TMP/back.dat" >"$SFS_TEST_TMP/asked.all" 2>&1
grep -qE "UCX +(ERROR|WARN)" "$SFS_TEST_TMP/asked.all" ||
    sfs_fail "with UCX_LOG_LEVEL=warn set by the user, UCX's lines are still hidden"
echo "ok: with the user's UCX_LOG_LEVEL=warn, UCX's lines are shown"
sfs_kill9_service
