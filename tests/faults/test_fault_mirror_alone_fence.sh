#!/usr/bin/env bash
# A primary that serves alone acknowledges nothing management does not know
# of (docs/mirroring.md, "Fencing"): the storage rank that holds the
# primaries (101, 103) is cut off from management only
# (STRIPEFS_TEST_DROP_HEARTBEATS) and, at the same moment, the rank of their
# secondaries (102, 104) is killed (-9) while sfsalice's client writes
# numbered records to a mirrored file. The primaries' forwards fail at once
# (the connection resets, on one host), so they serve alone, within their
# leases, but cannot tell management, whose record still says the
# secondaries are good. The secondaries' rank rejoins; management, which
# heard nothing from the primaries' rank for the offline timeout, promotes
# them, and the client writes there. Checked: every record the client had
# acknowledged is on the promoted member's chunk file and reads back (before
# the mend, records the primary had acknowledged alone were missing there:
# 'the promoted 102 lacks records the client had acknowledged', 2 of 2 runs
# on 2026-12-05).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/faults/mirror_lib.sh"
source "$SFS_SRC/tests/lib/sfs_mirror_fence.sh"
PROG="$SFS_BUILD/tests/progs/sfs_fence_writer"
[ -x "$PROG" ] || sfs_fail "missing $PROG (make check builds it)"
sfs_test_users
user=sfsalice
offline=3
cut="$SFS_TEST_TMP/cut"
export STRIPEFS_TEST_DROP_HEARTBEATS="$cut"
mirror_service_start "$offline"
grep -q "says nothing to management while $cut.1 exists" "$SFS_SERVICE_LOG" ||
    sfs_fail "the servers did not take STRIPEFS_TEST_DROP_HEARTBEATS"
mirror_user_dir "$user" --numtargets 1 --chunksize 8m

stop="$SFS_TEST_TMP/stop"
wlog="$SFS_TEST_TMP/writer.log"
sfs_as "$user" "$PROG" write /m/mine/records "$stop" 1500 >"$wlog" 2>"$SFS_TEST_TMP/writer.err" &
writer=$!
rejoin=""
alone_cleanup() {
    [ -n "$writer" ] && kill "$writer" 2>/dev/null
    [ -n "$rejoin" ] && kill -9 "$rejoin" 2>/dev/null
    sfs_cleanup
}
trap alone_cleanup EXIT
for _ in $(seq 300); do [ "$(grep -c '^ack' "$wlog")" -ge 20 ] && break; sleep 0.1; done
[ "$(grep -c '^ack' "$wlog")" -ge 20 ] || { cat "$SFS_TEST_TMP/writer.err"; sfs_fail "the writer did not start"; }
primary=$(sfs_ctl getentryinfo /m/mine/records | awk '/Mirror group/ {print $6}')
case "$primary" in 101 | 103) ;; *) sfs_fail "the file's primary is not 101 or 103: '$primary'" ;; esac
secondary=$((primary + 1))
victim=$(sfs_ctl listnodes | awk '$1 == 2 {print $5}')
[ -n "$victim" ] || sfs_fail "no pid of storage rank 2"
touch "$cut.1"
kill -9 "$victim"
sfs_log "injected: storage rank 1 (primary $primary) cut off from management, and storage rank 2 (secondary $secondary) killed; $(grep -c '^ack' "$wlog") records acknowledged"
sleep 1
"${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" --one-host --state "$SFS_STATE" --port "$SFS_PORT" \
    --rejoin 2 --ready-file "$SFS_TEST_TMP/rejoined" >>"$SFS_TEST_TMP/rejoin.log" 2>&1 &
rejoin=$!
for _ in $(seq 300); do [ -f "$SFS_TEST_TMP/rejoined" ] && break; sleep 0.1; done
[ -f "$SFS_TEST_TMP/rejoined" ] || { cat "$SFS_TEST_TMP/rejoin.log"; sfs_fail "rank 2 did not rejoin"; }

mirror_wait_promotion "is its primary now"
echo "promotion: $promoted"
mirror_wait_acks_after "$wlog" $writer 20
touch "$stop"
wait $writer
rc=$?
writer=""
[ $rc = 0 ] || sfs_fail "the writer failed (exit $rc): $(tail -n 5 "$SFS_TEST_TMP/writer.err")"
count=$(awk '$1 == "done" {print $2}' "$wlog")
after=$(mirror_acks_after "$wlog")
[ "$after" -ge 20 ] || sfs_fail "only $after records were acknowledged after the promotion"
dir=$(sfs_ctl listtargets | awk -v t="$secondary" '$1 == t {print $NF}')
chunk=$(find "$dir/chunks" -type f -size +0 | head -n 1)
[ -n "$chunk" ] || sfs_fail "no chunk file on $secondary"
"$PROG" check "$chunk" "$count" || sfs_fail "the promoted $secondary lacks records the client had acknowledged"
sfs_as "$user" "$SFS_CTL" get /m/mine/records - >"$SFS_TEST_TMP/records" || sfs_fail "get"
"$PROG" check "$SFS_TEST_TMP/records" "$count" || sfs_fail "acknowledged records do not read back"
echo "ok: $count records acknowledged ($after after the promotion), every one on the promoted $secondary"
rm -f "$cut.1"
sfs_stop_service
kill -9 "$rejoin" 2>/dev/null
wait "$rejoin" 2>/dev/null
rejoin=""
exit 0
