#!/usr/bin/env bash
# Short stripefs-ctl runs leave the servers' log clean: a client that
# connects, asks one thing and exits must not make a server warn (the
# direct-copy proof of a session the server never saw, or saw end, used to
# be "dropped a message: direct-copy proof for no session of ours"). And
# when nothing listens on the management port, the hint names the command
# that starts the service, stripefs-service (the README's).
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

# nothing listens now: the hint names the command from the README
out=$(STRIPEFS_TIMEOUT=3 "$SFS_CTL" stat / 2>&1) && sfs_fail "stat / succeeded with the service down"
echo "$out" | grep -q "start it with stripefs-service" ||
    sfs_fail "the connect-failure hint does not name stripefs-service: $out"
grep -q "^    stripefs-service " "$SFS_SRC/README.md" || sfs_fail "the README no longer starts the service with stripefs-service"
echo "ok: the connect-failure hint names stripefs-service: $(echo "$out" | head -n 1)"
