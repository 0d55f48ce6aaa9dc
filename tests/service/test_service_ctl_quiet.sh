#!/usr/bin/env bash
# Short stripefs-ctl runs leave the servers' log clean: a client that
# connects, asks one thing and exits must not make a server warn (the
# direct-copy proof of a session the server never saw, or saw end, used to
# be "dropped a message: direct-copy proof for no session of ours").
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

sfs_start_service 3
for i in $(seq 12); do
    sfs_ctl stat / >/dev/null || sfs_fail "stat / ($i)"
done
sfs_ctl ls / >/dev/null || sfs_fail "ls /"
sfs_ctl df >/dev/null || sfs_fail "df"
sleep 1 # a late proof is read within a timer tick (20 ms)
if grep -E " (warn|error) " "$SFS_SERVICE_LOG" | grep -v "^\[" >"$SFS_TEST_TMP/warnings"; then
    cat "$SFS_TEST_TMP/warnings" >&2
    sfs_fail "short stripefs-ctl runs left warnings in the server log"
fi
echo "ok: 14 short stripefs-ctl runs left no warning in the server log"
sfs_stop_service

