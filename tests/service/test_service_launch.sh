#!/usr/bin/env bash
# Launching from a config: a job that does not match the config, and bad
# configs, are refused with messages that name the problem; a matching job
# starts from the config and stops on SIGTERM to mpirun with exit 0.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
host=$(hostname)
port=$(sfs_free_port)
cfg="$SFS_TEST_TMP/cluster.yaml"

sfs_ctl mkconnauth "$SFS_TEST_TMP/connauth" >/dev/null || sfs_fail "mkconnauth"
sfs_ctl genconfig --hosts "$host" --storage-dir "$SFS_TEST_TMP/storage" \
    --munged-key "$SFS_TEST_TMP/munge/munge.key" --munge-socket "$SFS_TEST_TMP/munge/munge.socket" \
    --meta-dir "$SFS_TEST_TMP/meta" --connauth "$SFS_TEST_TMP/connauth" --port "$port" \
    -o "$cfg" || sfs_fail "genconfig"
cat "$cfg"

sfs_expect_fail "expects 1 server rank" "${SFS_MPIRUN[@]}" -np 2 "$SFS_SERVER" -c "$cfg"
sed "s/$host/no-such-host/g" "$cfg" >"$SFS_TEST_TMP/other.yaml"
sfs_expect_fail "does not name" "${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" -c "$SFS_TEST_TMP/other.yaml"
grep -v '^meta' "$cfg" >"$SFS_TEST_TMP/nometa.yaml"
sfs_expect_fail "nometa.yaml.*meta" "${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" -c "$SFS_TEST_TMP/nometa.yaml"
sfs_expect_fail "cannot open config" "${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" -c "$SFS_TEST_TMP/none.yaml"
sfs_expect_fail "either -c" "${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER"

"${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" -c "$cfg" --ready-file "$SFS_TEST_TMP/ready" \
    >"$SFS_SERVICE_LOG" 2>&1 &
job=$!
for _ in $(seq 300); do [ -f "$SFS_TEST_TMP/ready" ] && break; sleep 0.1; done
[ -f "$SFS_TEST_TMP/ready" ] || sfs_fail "the configured service did not start"
STRIPEFS_CONFIG="$cfg" sfs_ctl listtargets | grep -q "101 .*online" || sfs_fail "target 101 not online"
echo "ok: target 101 online from the generated config"
# SIGTERM to mpirun reaches every rank, which flushes and exits 0 (Open MPI's
# mpirun itself then reports 1: it counts a signal as an abort)
kill -TERM $job
wait $job
grep -q "stripefs service stopped cleanly" "$SFS_SERVICE_LOG" || sfs_fail "no clean stop after SIGTERM to mpirun"
echo "ok: SIGTERM to mpirun: every rank flushed and stopped"

# the launcher: ranks and hosts from the config, SIGTERM gives a clean exit 0
rm -f "$SFS_TEST_TMP/ready"
"${SFS_SERVER_ENV[@]}" "$SFS_BUILD/stripefs-service" -c "$cfg" --ready-file "$SFS_TEST_TMP/ready" >"$SFS_SERVICE_LOG" 2>&1 &
job=$!
for _ in $(seq 300); do [ -f "$SFS_TEST_TMP/ready" ] && break; sleep 0.1; done
[ -f "$SFS_TEST_TMP/ready" ] || sfs_fail "stripefs-service did not start the service"
kill -TERM $job
wait $job
rc=$?
sfs_expect_eq "$rc" 0 "exit status of stripefs-service after SIGTERM"
grep -q "stopped cleanly" "$SFS_SERVICE_LOG" || sfs_fail "no clean stop in the log"
# the same target directory cannot be taken by another target id
sed -i "s/id: 101/id: 909/" "$cfg"
sfs_expect_fail "belongs to target 101" "${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" -c "$cfg"

# --one-host on an existing state dir: a new --port is saved in its config (the
# file clients read), a different --targets is refused, nothing else changes
SFS_PORT=$(sfs_free_port)
sfs_start_service 2 --targets 2
sfs_stop_service
SFS_PORT=$(sfs_free_port)
sfs_start_service 2
grep -qw "port: $SFS_PORT" "$SFS_STATE/stripefs.yaml" || sfs_fail "the new --port $SFS_PORT is not in $SFS_STATE/stripefs.yaml"
sfs_ctl listtargets | grep -c online | grep -qx 2 || sfs_fail "not 2 targets online after the port change"
echo "ok: a new --port on an existing state dir is saved and clients find the service"
sfs_stop_service
sfs_expect_fail "already holds 2 targets" "${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" --one-host \
    --state "$SFS_STATE" --targets 4
