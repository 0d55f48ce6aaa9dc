#!/usr/bin/env bash
# A malformed STRIPEFS_* value is an error that names the variable, not a
# silent default: the transport's (STRIPEFS_SPIN_US=abc used to be read as
# 0, STRIPEFS_DIRECT_COPY=maybe as on), the log's (a bad STRIPEFS_LOG_MASK is
# said, its valid items still apply) and the storage service's
# (STRIPEFS_LOCAL_READ). The old names SFS_SPIN_US and SFS_LOG_MASK are gone.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

sfs_start_service 3
sfs_ctl stat / >/dev/null || sfs_fail "stat /"
sfs_expect_fail "STRIPEFS_SPIN_US=abc: expected an integer" env STRIPEFS_SPIN_US=abc "$SFS_CTL" stat /
sfs_expect_fail "STRIPEFS_SPIN_US=2000000: out of range 0..1000000" env STRIPEFS_SPIN_US=2000000 "$SFS_CTL" stat /
sfs_expect_fail "STRIPEFS_DIRECT_COPY=maybe: expected 1/0" env STRIPEFS_DIRECT_COPY=maybe "$SFS_CTL" stat /
sfs_expect_fail "STRIPEFS_DIRECT_PULL=2: expected 1/0" env STRIPEFS_DIRECT_PULL=2 "$SFS_CTL" stat /
STRIPEFS_SPIN_US=0 STRIPEFS_DIRECT_COPY=off STRIPEFS_DIRECT_PULL=no sfs_ctl stat / >/dev/null ||
    sfs_fail "valid values refused"
echo "ok: valid values of the transport's tunables are taken"

out=$(STRIPEFS_LOG_MASK=loud,ucx=debug "$SFS_CTL" stat / 2>&1) || sfs_fail "stat / with a bad log mask: $out"
echo "$out" | grep -q "STRIPEFS_LOG_MASK=loud,ucx=debug: 'loud' is not LEVEL" ||
    sfs_fail "a bad STRIPEFS_LOG_MASK is not said: $out"
echo "$out" | grep -q "\[ucx\] worker" || sfs_fail "the valid item ucx=debug of the mask did not apply: $out"
echo "ok: a bad STRIPEFS_LOG_MASK item is said, the others apply"
out=$(SFS_LOG_MASK=debug "$SFS_CTL" stat / 2>&1) || sfs_fail "stat /: $out"
echo "$out" | grep -q "\[ucx\]" && sfs_fail "the old name SFS_LOG_MASK still sets levels"
out=$(STRIPEFS_LOG_MASK=ucx=debug "$SFS_CTL" stat / 2>&1) || sfs_fail "stat /: $out"
echo "$out" | grep -q "\[ucx\] worker" || sfs_fail "STRIPEFS_LOG_MASK=ucx=debug shows no debug line: $out"
STRIPEFS_LOG_FILE="$SFS_TEST_TMP/ctl.log" STRIPEFS_LOG_MASK=ucx=debug sfs_ctl stat / >/dev/null 2>&1 ||
    sfs_fail "stat / with a log file"
grep -q "\[ucx\] worker" "$SFS_TEST_TMP/ctl.log" || sfs_fail "STRIPEFS_LOG_FILE got no line"
echo "ok: STRIPEFS_LOG_MASK and STRIPEFS_LOG_FILE work, SFS_LOG_MASK no longer does"
sfs_stop_service

# a server refuses to start on a bad value, naming it
STRIPEFS_LOCAL_READ=perhaps "${SFS_MPIRUN[@]}" -np 3 "$SFS_SERVER" --one-host --state "$SFS_TEST_TMP/state2" \
    --port "$(sfs_free_port)" >"$SFS_TEST_TMP/bad.log" 2>&1 &
bad=$!
for _ in $(seq 300); do kill -0 $bad 2>/dev/null || break; sleep 0.1; done
if kill -0 $bad 2>/dev/null; then
    kill -9 $bad
    pkill -9 -f -- "stripefs-server --one-host --state $SFS_TEST_TMP/state2" 2>/dev/null
    sfs_fail "the service started with STRIPEFS_LOCAL_READ=perhaps"
fi
wait $bad && sfs_fail "the service exited 0 with STRIPEFS_LOCAL_READ=perhaps"
grep -q "STRIPEFS_LOCAL_READ=perhaps: expected 1/0" "$SFS_TEST_TMP/bad.log" ||
    { cat "$SFS_TEST_TMP/bad.log"; sfs_fail "the server's error does not name STRIPEFS_LOCAL_READ"; }
echo "ok: a server refuses STRIPEFS_LOCAL_READ=perhaps: $(grep -m1 STRIPEFS_LOCAL_READ "$SFS_TEST_TMP/bad.log")"
