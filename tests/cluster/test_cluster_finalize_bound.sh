#!/usr/bin/env bash
# A rank that never finishes MPI_Finalize does not keep the others there for
# ever (issue 11: after a partition healed, a rank aborted while stopping and
# the others waited in MPI_Finalize for ever). The service across the four
# hosts; the rank on imaging-03 is held by gdb at MPI_Finalize for 90 s; after
# stripefs-ctl shutdown, the other ranks must leave within the bound
# (stripefs-server gives MPI_Finalize 30 s), saying so, long before gdb lets
# the held rank go.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
command -v gdb >/dev/null || sfs_skip "gdb is not installed (it holds a rank at MPI_Finalize)"
cluster_begin

hold_s=90
cfg="$SFS_TEST_TMP/imaging.yaml"
cluster_write_config "$cfg"
cluster_start_service

# the server rank of this test's config on a host
rank_pid() { # host
    local p
    for p in $(ip netns pids "$1"); do
        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "^[^ ]*stripefs-server -c $cfg" && echo "$p"
    done | head -n 1
}
held=$(rank_pid imaging-03)
[ -n "$held" ] || sfs_fail "no server rank found on imaging-03"
others=$(for h in imaging-01 imaging-02 imaging-04; do rank_pid "$h"; done | paste -sd' ' -)
gdb -p "$held" -batch -nx -ex 'break PMPI_Finalize' -ex continue -ex "shell sleep $hold_s" \
    -ex kill >"$SFS_TEST_TMP/gdb.log" 2>&1 &
gdb_pid=$!
for _ in $(seq 100); do grep -q "^Breakpoint 1 at" "$SFS_TEST_TMP/gdb.log" && break; sleep 0.1; done
grep -q "^Breakpoint 1 at" "$SFS_TEST_TMP/gdb.log" || sfs_fail "gdb did not set its breakpoint: $(cat "$SFS_TEST_TMP/gdb.log")"
sfs_log "rank on imaging-03 (pid $held) held by gdb at MPI_Finalize for $hold_s s; others: $others"

t_stop=$SECONDS
ctl_on imaging-01 shutdown >/dev/null || sfs_fail "stripefs-ctl shutdown failed"
left=""
while [ $((SECONDS - t_stop)) -lt $((hold_s - 10)) ]; do
    left=""
    for p in $others; do kill -0 "$p" 2>/dev/null && left+=" $p"; done
    [ -z "$left" ] && break
    sleep 0.5
done
took=$((SECONDS - t_stop))
grep -q "hit Breakpoint 1" "$SFS_TEST_TMP/gdb.log" || sfs_fail "the held rank never reached MPI_Finalize"
[ -z "$left" ] || sfs_fail "ranks$left still there $took s after shutdown (waiting in MPI_Finalize for the held rank)"
sfs_log "the other ranks left $took s after shutdown, the held one still held"
n=$(grep -c "MPI_Finalize did not finish within 30 s" "$SFS_SERVICE_LOG")
grep "MPI_Finalize did not finish" "$SFS_SERVICE_LOG"
[ "$n" -ge 1 ] || sfs_fail "no rank said it left without MPI_Finalize"
[ "$took" -ge 25 ] || sfs_fail "the ranks left after $took s, before the 30 s bound (did MPI_Finalize wait at all?)"
echo "ok: with one rank held at MPI_Finalize, the others left after $took s ($n said why)"
# let the held rank go: gdb (and the sleep it runs) and the rank itself
pkill -9 -P "$gdb_pid" 2>/dev/null
kill -9 "$held" "$gdb_pid" 2>/dev/null
wait "$gdb_pid" 2>/dev/null
CLUSTER_JOB_RC=0
wait "$CLUSTER_JOB" || CLUSTER_JOB_RC=$?
CLUSTER_JOB=""
sfs_log "the job exited with $CLUSTER_JOB_RC (mpirun counts ranks that left without MPI_Finalize)"
