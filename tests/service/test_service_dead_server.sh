#!/usr/bin/env bash
# Errors from a server that does not answer name it: a client connected to
# the one-host service (3 ranks: rank 0 management and metadata, ranks 1
# and 2 storage) makes calls while a storage rank, then the metadata rank,
# is stopped (SIGSTOP: every call to it times out). The write's error names
# the storage target and its rank and host; the lookup's names the metadata
# server and its rank and host (it used to say only "management server
# HOST:PORT: LOOKUP: ...", or for storage only the target number).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
CHECK="$SFS_BUILD/tests/progs/sfs_client_check"

sfs_start_service 3 --targets 4
host=$(hostname)
nodes=$(sfs_ctl listnodes) || sfs_fail "listnodes"
echo "$nodes"
meta_pid=$(echo "$nodes" | awk '$3 ~ /meta/ {print $5}')
storage_pid=$(echo "$nodes" | awk '$1 == 1 && $3 ~ /storage/ {print $5}')
[ -n "$meta_pid" ] && [ -n "$storage_pid" ] || sfs_fail "no metadata or rank 1 storage pid in listnodes"
trap 'kill -CONT $meta_pid $storage_pid 2>/dev/null; sfs_cleanup' EXIT

step="$SFS_TEST_TMP/step"
STRIPEFS_TIMEOUT=3 "$CHECK" probe /probe "$step" 2 >"$SFS_TEST_TMP/probe.out" 2>&1 &
probe=$!
for _ in $(seq 300); do
    grep -q ready "$SFS_TEST_TMP/probe.out" && break
    kill -0 $probe 2>/dev/null || break
    sleep 0.1
done
grep -q ready "$SFS_TEST_TMP/probe.out" || sfs_fail "the probe did not start: $(cat "$SFS_TEST_TMP/probe.out")"
run_step() { # i: let the probe make step i's calls and wait for them
    touch "$step.$1"
    for _ in $(seq 600); do
        [ -f "$step.$1.done" ] && return 0
        kill -0 $probe 2>/dev/null || break
        sleep 0.1
    done
    sfs_fail "the probe did not finish step $1: $(cat "$SFS_TEST_TMP/probe.out")"
}

kill -STOP "$storage_pid"
run_step 1
kill -CONT "$storage_pid"
kill -STOP "$meta_pid"
run_step 2
kill -CONT "$meta_pid"
wait $probe
cat "$SFS_TEST_TMP/probe.out"

line=$(grep "^step 1 write:" "$SFS_TEST_TMP/probe.out")
echo "$line" | grep -qE "^step 1 write: -[0-9]+: .*storage target 10[13] \(rank 1 on $host\)" ||
    sfs_fail "a write to a stopped storage rank does not name the target, rank and host: $line"
echo "ok: $line"
line=$(grep "^step 2 lookup:" "$SFS_TEST_TMP/probe.out")
echo "$line" | grep -qE "^step 2 lookup: -[0-9]+: metadata server \(rank 0 on $host\)" ||
    sfs_fail "a lookup with the metadata rank stopped does not name it: $line"
echo "ok: $line"
sfs_kill9_service
