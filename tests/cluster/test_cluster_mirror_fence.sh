#!/usr/bin/env bash
# Fencing across hosts with a real network cut (docs/mirroring.md,
# "Fencing"), on the four hosts of ci/cluster.sh: mirror group 301
# (imaging-03, primary) + 401 (imaging-04), management and metadata on
# imaging-01. While sfsalice's client on imaging-02 writes numbered records
# to a mirrored file, the network between imaging-03 and imaging-01 is cut
# both ways (blackhole routes in both hosts' namespaces), and only there:
# imaging-03 still reaches imaging-02 (the client) and imaging-04 (its
# buddy). Its rank hears no more from management and its lease runs out
# BEFORE management promotes 401 (the log's times); it goes on on its
# buddy's word (docs/mirroring.md, "The buddy's word": each write taken by
# 401 first) until 401 knows of its promotion and refuses its copies; then
# 301 stops acknowledging mirrored writes and serving mirrored reads, and
# says so. Checked: the writer goes on
# through 401 (a pause, no error: exit 0); 20 records are acknowledged
# after the promotion; a client with the old map (STRIPEFS_TEST_MIRROR_OLD_MAP,
# which also connects to the rank that management calls offline) asking
# 301 for a read on imaging-02 is refused with the lease's reason; every
# acknowledged record is on 401's chunk file and reads back. Then the cut
# heals: 301 is resynced and good again, both copies byte-identical, and
# `stripefs-ctl shutdown` stops every rank (exit 0).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
source "$SFS_SRC/tests/lib/sfs_mirror_fence.sh"
sfs_test_users
cluster_begin
PROG="$SFS_BUILD/tests/progs/sfs_fence_writer"
[ -x "$PROG" ] || sfs_fail "missing $PROG (make check builds it)"
writer=""
fence_cleanup() {
    [ -n "$writer" ] && kill "$writer" 2>/dev/null
    cluster_cleanup
}
trap fence_cleanup EXIT

cfg="$SFS_TEST_TMP/imaging.yaml"
d="$SFS_TEST_TMP/hosts"
cluster_mirror_config "$cfg" 301:401
cluster_start_service

cluster_alice_mirror_dir imaging-02 1 8m

stop="$SFS_TEST_TMP/stop"
wlog="$SFS_TEST_TMP/writer.log"
cluster_as_alice imaging-02 "$PROG" write /m/mine/records "$stop" 20000 >"$wlog" 2>"$SFS_TEST_TMP/writer.err" &
writer=$!
for _ in $(seq 300); do [ "$(grep -c '^ack' "$wlog")" -ge 20 ] && break; sleep 0.1; done
[ "$(grep -c '^ack' "$wlog")" -ge 20 ] || sfs_fail "the writer did not start: $(cat "$SFS_TEST_TMP/writer.err")"
info=$(ctl_on imaging-01 getentryinfo /m/mine/records)
echo "$info" | grep -q "+ Mirror group 1: primary 301 (good)" || sfs_fail "the file is not on group 1 with primary 301: $info"

cluster_cut imaging-03 imaging-01
sfs_log "injected: imaging-03 (301, primary) cut from imaging-01 (management, metadata), both ways; $(grep -c '^ack' "$wlog") records acknowledged"

mirror_wait_promotion "mirror group 1: primary 301 offline"
echo "promotion: $promoted"
mirror_wait_acks_after "$wlog" $writer 20
after=$(mirror_acks_after "$wlog")
[ "$after" -ge 20 ] || sfs_fail "only $after records were acknowledged after the promotion: $(tail -n 5 "$SFS_TEST_TMP/writer.err")"
echo "ok: the writer goes on through the promoted 401 ($after records after the promotion)"

# an old map's read, from imaging-02, of 301 (which still reaches imaging-02)
out=$(cluster_as_alice imaging-02 env STRIPEFS_TEST_MIRROR_OLD_MAP=1 "$SFS_CTL" get /m/mine/records - 2>&1 >/dev/null)
rc=$?
[ $rc != 0 ] || sfs_fail "the cut-off old primary 301 served a read across hosts"
echo "$out" | grep -q "READ on target 301: its rank's lease from management expired" ||
    sfs_fail "301's refusal of a read does not give the lease's reason: $out"
echo "ok: a read sent with an old map to the cut-off 301 is refused: $(echo "$out" | tail -n 1)"

touch "$stop"
wait $writer
rc=$?
writer=""
[ $rc = 0 ] || sfs_fail "the writer failed (exit $rc): $(tail -n 5 "$SFS_TEST_TMP/writer.err")"
count=$(awk '$1 == "done" {print $2}' "$wlog")
pause=$(awk '$1 == "ack" {if (last && $3 - last > m) m = $3 - last; last = $3} END {printf "%.1f", m}' "$wlog")
echo "writer: $count records acknowledged, $after after the promotion; longest pause $pause s (offline timeout 3 s)"
chunk=$(find "$d/imaging-04/mnt/7t_drive/stripefs/chunks" -type f -size +0 | head -n 1)
[ -n "$chunk" ] || sfs_fail "no chunk file on 401"
"$PROG" check "$chunk" "$count" || sfs_fail "401's copy lacks acknowledged records"
cluster_as_alice imaging-04 "$SFS_CTL" get /m/mine/records - >"$SFS_TEST_TMP/records" || sfs_fail "get"
"$PROG" check "$SFS_TEST_TMP/records" "$count" || sfs_fail "acknowledged records do not read back"

cluster_heal
sfs_log "healed: imaging-03 reaches imaging-01 again"
# 301 rejoins as 401's buddy, is resynced, and the copies are identical
cluster_wait_mirror imaging-04 "^1 +401 @.* good .*301 @.* good" ||
    sfs_fail "301 is not good again within 60 s of the heal"
cmp "$chunk" "$d/imaging-03/mnt/7t_drive/stripefs/chunks/${chunk#*/chunks/}" ||
    sfs_fail "301's copy differs from 401's after the resync"
echo "ok: after the heal 301 is resynced: the copies are byte-identical"

# the lease ran out on 301's rank, and before the promotion: it went on on
# 401's word, until 401 refused its copies as the new primary; then it
# stopped, and said so
mirror_fenced_before_promotion "fencing: target 301 goes on as its mirror group's primary on its buddy 401's word"
echo "ok: 301's lease ran out $(awk -v f="$f_at" -v p="$p_at" 'BEGIN {printf "%.1f", p - f}') s before the promotion; it went on on 401's word"
for pattern in "fencing: target 301's buddy refused its copy as the group's primary now" \
    "fencing: target 301 acknowledges no mirrored change from now on"; do
    for _ in $(seq 300); do grep -q "$pattern" "$SFS_SERVICE_LOG" && break; sleep 0.1; done
    grep -q "$pattern" "$SFS_SERVICE_LOG" || sfs_fail "301 did not say: $pattern"
done
echo "ok: 401 refused 301's copies once promoted, and 301 stopped"
cluster_stop_service imaging-02
exit 0
