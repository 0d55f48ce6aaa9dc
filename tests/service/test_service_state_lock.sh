#!/usr/bin/env bash
# One server process per directory: a second service started on a live
# service's state (--one-host on its state dir with another port, or -c its
# config) is refused before it changes anything, with a message naming the
# process that holds the directory; the live service keeps serving, and its
# config, munged and data are untouched. After the live one stops, the same
# state starts again (the kernel dropped the locks), and a rank killed with
# -9 leaves nothing held.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

sfs_start_service 3 --targets 4
sfs_ctl mkdir /keep && sfs_ctl put /etc/services /keep/services || sfs_fail "write a file"
cp "$SFS_STATE/stripefs.yaml" "$SFS_TEST_TMP/config.before"
rank0=$(pgrep -f -- "stripefs-server --one-host --state $SFS_STATE" | sort -n | head -n 1)
holder_pids=$(pgrep -f -- "stripefs-server --one-host --state $SFS_STATE" | tr '\n' '|')

# 1. --one-host on the same state dir, another port: the claim on the state
# dir is taken before the port would be saved in its config
other_port=$(sfs_free_port) || sfs_fail "no free port"
sfs_expect_fail "state dir $SFS_STATE is in use by pid (${holder_pids%|}) on " \
    timeout 60 "${SFS_MPIRUN[@]}" -np 2 "$SFS_SERVER" --one-host --state "$SFS_STATE" \
    --port "$other_port"
cmp -s "$SFS_STATE/stripefs.yaml" "$SFS_TEST_TMP/config.before" ||
    sfs_fail "the refused service changed $SFS_STATE/stripefs.yaml: $(diff "$SFS_TEST_TMP/config.before" "$SFS_STATE/stripefs.yaml")"
echo "ok: the config still names port $SFS_PORT"

# 2. -c the live config: the metadata store and the targets are claimed (its
# management port is the live one's, so use a copy on another port)
sed "s/port: $SFS_PORT/port: $other_port/" "$SFS_STATE/stripefs.yaml" >"$SFS_TEST_TMP/copy.yaml"
grep -q "port: $other_port" "$SFS_TEST_TMP/copy.yaml" || sfs_fail "could not change the port in the copy"
out=$(timeout 60 "${SFS_MPIRUN[@]}" -np 3 "$SFS_SERVER" -c "$SFS_TEST_TMP/copy.yaml" 2>&1) &&
    sfs_fail "a second service on the live config's directories started: $out"
echo "$out" | grep -qE "(metadata store|storage target 10[1-4]) $SFS_STATE/[^ ]* is in use by pid [0-9]+ on " ||
    sfs_fail "the second service's refusal does not name the holder: $out"
echo "ok: -c with the live config's directories is refused: $(echo "$out" | grep -m1 -oE '(metadata store|storage target) [^:]*in use by pid [0-9]+ on [^ ]+ \([^)]*\)')"

# the live service is unharmed: same config, munged answers, data reads back
sfs_ctl get /keep/services "$SFS_TEST_TMP/services" || sfs_fail "the live service no longer serves"
cmp -s /etc/services "$SFS_TEST_TMP/services" || sfs_fail "the file read back differs"
sfs_ctl listtargets | grep -c online | grep -qx 4 || sfs_fail "not 4 targets online after the refusals"
[ "$(pgrep -f -- "stripefs-server --one-host --state $SFS_STATE" | sort -n | head -n 1)" = "$rank0" ] ||
    sfs_fail "the live service's rank 0 changed"
echo "ok: the live service still serves its 4 targets and its data"
sfs_stop_service

# 3. the same state starts again once the holder is gone, also after a kill -9
sfs_start_service 3 --targets 4
sfs_kill9_service
sfs_start_service 3 --targets 4
sfs_ctl get /keep/services "$SFS_TEST_TMP/services2" && cmp -s /etc/services "$SFS_TEST_TMP/services2" ||
    sfs_fail "the restarted service does not serve the file"
echo "ok: after a stop and after kill -9 the state dir starts again"
sfs_stop_service
