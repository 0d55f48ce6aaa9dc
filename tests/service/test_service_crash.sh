#!/usr/bin/env bash
# kill -9 of the whole service during a stream of creates, then a restart:
# every create the service acknowledged exists, and the store opens cleanly.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
CHECK="$SFS_BUILD/tests/progs/sfs_client_check"

sfs_start_service 2 --targets 2
sfs_ctl mkdir /storm || sfs_fail "mkdir"
"$CHECK" creates /storm 1000000 >"$SFS_TEST_TMP/acks.log" 2>"$SFS_TEST_TMP/creates.err" &
client=$!
# let a few hundred creates be acknowledged, then pull the plug
for _ in $(seq 200); do
    [ "$(grep -c ^ACK "$SFS_TEST_TMP/acks.log")" -ge 300 ] && break
    sleep 0.05
done
acked=$(grep -c ^ACK "$SFS_TEST_TMP/acks.log")
[ "$acked" -gt 0 ] || sfs_fail "no create was acknowledged before the kill"
sfs_kill9_service
sfs_log "injected: SIGKILL to every server rank after $acked acknowledged creates"
wait $client
echo "the creating client ended with exit $? ($(tail -n 1 "$SFS_TEST_TMP/creates.err"))"
acked=$(grep -c ^ACK "$SFS_TEST_TMP/acks.log")

sfs_start_service 2 --targets 2
"$CHECK" verify /storm "$SFS_TEST_TMP/acks.log" || sfs_fail "acknowledged creates were lost"
listed=$(sfs_ctl ls /storm | wc -l)
[ "$listed" -ge "$acked" ] || sfs_fail "ls lists $listed entries, $acked were acknowledged"
echo "ok: $acked acknowledged, $listed listed after restart"
# nothing half-created: the consistency checker finds no problem
"$SFS_BUILD/stripefs-fsck" || sfs_fail "stripefs-fsck reports problems after the crash"
echo "ok: stripefs-fsck finds the file system consistent after the crash"
# the namespace still works normally after the crash
sfs_ctl mkdir /after-crash && sfs_ctl rm /after-crash || sfs_fail "namespace broken after restart"
sfs_stop_service
