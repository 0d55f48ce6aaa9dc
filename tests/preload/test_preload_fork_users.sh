#!/usr/bin/env bash
# Forks of connected clients, as root and as an unprivileged user: a process
# that uses stripefs through libstripefs-posix.so forks 300 children that
# each make one stripefs call (tests/progs/sfs_fork_clients.c). No child may
# hang and the service must stay up (found 2026-12-01: as nobody, rank 0
# aborted in UCX after about 150 such children, "ucp_request.c:684 Assertion
# ... got REP message"; about 1 child in 600 hung in ucp_worker_create).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
sfs_pl_need tests/progs/sfs_fork_clients
FORKS="$SFS_BUILD/tests/progs/sfs_fork_clients"
N=${SFS_FORK_CLIENTS:-300}
sfs_test_users

sfs_start_service 2 --targets 2
failures=0
for user in root sfsalice; do
    out=$(LD_PRELOAD="$SFS_PRELOAD" sfs_as "$user" timeout 600 "$FORKS" /stripefs/ "$N" 2>&1)
    rc=$?
    echo "$user: $(echo "$out" | tail -n 1)"
    if [ $rc -ne 0 ]; then
        echo "$out" | head -n 8
        failures=$((failures + 1))
    fi
    if grep -qE 'Assertion|Process received signal' "$SFS_SERVICE_LOG" ||
        ! sfs_ctl listnodes >/dev/null 2>&1; then
        grep -m 3 -E 'Assertion|Signal:' "$SFS_SERVICE_LOG"
        # not fixed yet (docs/posix-preload.md): short-lived clients over TCP
        # can make a server rank abort in UCX's wireup
        sfs_known_bug "the service died while $user's process forked clients:" \
            "$(grep -m 1 -oE 'ucp_[a-z_]+\.c:[0-9]+ +Assertion' "$SFS_SERVICE_LOG" || echo 'no assertion logged')"
    fi
done
sfs_stop_service
# not fixed yet (docs/posix-preload.md): a forked child that reconnects
# sometimes hangs creating its UCX worker; the service must survive it
[ $failures -eq 0 ] || sfs_known_bug "children of a connected client hung or failed" \
    "($failures of 2 users): a forked child sometimes hangs in ucp_worker_create"
echo "ok: $N forks each as root and as sfsalice, the service up"
