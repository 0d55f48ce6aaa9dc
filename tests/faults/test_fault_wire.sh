#!/usr/bin/env bash
# Bad input and attackers on the wire: requests without a session or with
# a forged MAC, a wrong protocol version, lengths that lie, truncated
# arguments, replayed and forged handshakes, a replayed request, a process
# that takes the name of a client's file socket or forges a file for it, a session that claims another
# process's pid to get reads copied into it. Each is refused (and logged);
# the server keeps serving honest clients; nothing crashes.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
sfs_start_service 1 --targets 1
"$SFS_BUILD/tests/progs/sfs_wire_attack" localhost "$SFS_PORT" "$SFS_STATE/connauth" \
    || sfs_fail "an attack was not refused"
for what in "authentication refused" "dropped a message" "failed its integrity check" \
    "direct copies refused" "was served before (a replay)" "file handoff refused"; do
    grep -q "$what" "$SFS_SERVICE_LOG" || sfs_fail "the service log does not say '$what'"
    echo "ok: the service logged: $(grep "$what" "$SFS_SERVICE_LOG" | head -n 1 | cut -c 28-)"
done
replays=$(grep -c "MKDIR .* dropped: its id was served before" "$SFS_SERVICE_LOG")
sfs_expect_eq "$replays" 2 "replayed MKDIRs the service logged and dropped"
sfs_ctl check-servers >/dev/null || sfs_fail "the server does not answer after the attacks"
sfs_stop_service
