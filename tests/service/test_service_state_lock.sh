#!/usr/bin/env bash
# One server process per directory: a second service started on a live
# service's state (--one-host on its state dir with another port, or -c its
# config) is refused before it changes anything, with a message naming the
# process that holds the directory; the live service keeps serving, and its
# config, munged and data are untouched. After the live one stops, the same
# state starts again (the kernel dropped the locks), and a rank killed with
# -9 leaves nothing held. An ordinary user cannot start a service on root's
# live state, and one's own one-host service is locked the same way.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
sfs_test_users

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

# 3. an ordinary user on root's live state: refused, nothing changed
other_port=$(sfs_free_port) || sfs_fail "no free port"
out=$(sfs_as sfsalice timeout 60 "${SFS_MPIRUN[@]}" -np 2 "$SFS_SERVER" --one-host \
    --state "$SFS_STATE" --port "$other_port" 2>&1) &&
    sfs_fail "sfsalice started a service on root's live state dir: $out"
echo "$out" | grep -qE "$SFS_STATE[^ ]*: (Permission denied|.*in use by pid)" ||
    sfs_fail "sfsalice's refusal does not name the state dir and the reason: $out"
cmp -s "$SFS_STATE/stripefs.yaml" "$SFS_TEST_TMP/config.before" ||
    sfs_fail "sfsalice's refused service changed $SFS_STATE/stripefs.yaml"
sfs_ctl get /keep/services "$SFS_TEST_TMP/services" || sfs_fail "the live service no longer serves"
echo "ok: sfsalice on root's state is refused: $(echo "$out" | grep -m1 -oE "$SFS_STATE[^ ]*: [^(]*" | head -c 160)"
sfs_stop_service

# 4. sfsalice's own one-host service: a second one of hers on its state is
# refused naming the first (the lock files are hers, 0600). Its munged's
# socket must be reachable by every user: in her 0700 scratch directory the
# start fails, saying so.
alice_port=$(sfs_free_port) || sfs_fail "no free port"
out=$(sfs_as sfsalice timeout 60 "${SFS_MPIRUN[@]}" -np 2 "$SFS_SERVER" --one-host \
    --state "$(sfs_user_home sfsalice)/state" --port "$alice_port" 2>&1) &&
    sfs_fail "a service with its munge socket in a 0700 directory started: $out"
echo "$out" | grep -q "munged exited at start (exit 1): Socket is inaccessible: execute permissions for all required" ||
    sfs_fail "the failed munged start does not say why: $(echo "$out" | grep -m1 munged)"
echo "ok: a munge socket in a private directory is refused: $(echo "$out" | grep -m1 -o 'munged exited[^:]*: [^"]*required')"
mkdir "$SFS_TEST_TMP/alice" && chown sfsalice: "$SFS_TEST_TMP/alice" || sfs_fail "mkdir $SFS_TEST_TMP/alice"
alice_state=$SFS_TEST_TMP/alice/state
sfs_as sfsalice "${SFS_MPIRUN[@]}" -np 2 "$SFS_SERVER" --one-host --state "$alice_state" \
    --port "$alice_port" --ready-file "$alice_state.ready" >"$SFS_TEST_TMP/alice.log" 2>&1 &
alice_job=$!
for _ in $(seq 1 120); do
    [ -e "$alice_state.ready" ] && break
    kill -0 "$alice_job" 2>/dev/null || sfs_fail "sfsalice's service did not start: $(tail -n 20 "$SFS_TEST_TMP/alice.log")"
    sleep 0.5
done
[ -e "$alice_state.ready" ] || sfs_fail "sfsalice's service was not ready in 60 s"
[ "$(stat -c '%U %a' "$alice_state/.stripefs.lock")" = "sfsalice 600" ] ||
    sfs_fail "sfsalice's state lock is $(stat -c '%U %a' "$alice_state/.stripefs.lock"), not 'sfsalice 600'"
other_port=$(sfs_free_port) || sfs_fail "no free port"
out=$(sfs_as sfsalice timeout 60 "${SFS_MPIRUN[@]}" -np 2 "$SFS_SERVER" --one-host \
    --state "$alice_state" --port "$other_port" 2>&1) &&
    sfs_fail "a second service of sfsalice's on her live state started: $out"
echo "$out" | grep -q "state dir $alice_state is in use by pid " ||
    sfs_fail "the second service's refusal does not name the holder: $out"
echo "ok: sfsalice's second service on her own state is refused, naming the holder"
# the servers' own user administers her service; another user does not
out=$(STRIPEFS_CONFIG=$alice_state/stripefs.yaml sfs_as sfsbob "$SFS_CTL" shutdown 2>&1) &&
    sfs_fail "sfsbob stopped sfsalice's service: $out"
echo "$out" | grep -q "only an administrator" || sfs_fail "sfsbob's shutdown was not refused as a non-administrator: $out"
STRIPEFS_CONFIG=$alice_state/stripefs.yaml sfs_as sfsalice "$SFS_CTL" shutdown ||
    sfs_fail "sfsalice could not shut her service down"
wait "$alice_job" || sfs_fail "sfsalice's service exited $?: $(tail -n 20 "$SFS_TEST_TMP/alice.log")"

# 5. the same state starts again once the holder is gone, also after a kill -9
sfs_start_service 3 --targets 4
sfs_kill9_service
sfs_start_service 3 --targets 4
sfs_ctl get /keep/services "$SFS_TEST_TMP/services2" && cmp -s /etc/services "$SFS_TEST_TMP/services2" ||
    sfs_fail "the restarted service does not serve the file"
echo "ok: after a stop and after kill -9 the state dir starts again"
sfs_stop_service
