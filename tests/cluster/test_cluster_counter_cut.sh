#!/usr/bin/env bash
# A shared file pointer (MPI_File_*_shared's counter) through a cut of the
# client's own link, on the four hosts of ci/cluster.sh: the metadata server
# on imaging-01, its mirror on imaging-02, management on imaging-03 (RPC
# timeout 10 s, offline 12 s), sfsalice's client on imaging-04 adding 1 to
# one open's counter, call after call. The network between imaging-04 and
# imaging-01 is cut both ways for 14 s, and only there: management still
# hears the metadata server, so nothing fails over; the call in flight gets
# no answer (its request or its reply lost), and is sent again to the same
# server once the link is back. A tagged COUNTER is answered from the answer
# the server kept when it had run it (docs/metadata-mirror.md, "Changes sent
# again are answered once"), so every answer is the last plus one: no
# offset handed out twice, no range skipped, and no error (until
# 2026-12-06 the call failed with an error naming COUNTER). Then a cut one
# way only (imaging-01 cannot send to imaging-04), so that the call in
# flight reaches the server and runs but its reply is lost: its resend must
# be answered from the kept answer (the server's log says so).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
sfs_test_users
cluster_begin
PROG="$SFS_BUILD/tests/progs/sfs_counter_check"
[ -x "$PROG" ] || sfs_fail "missing $PROG (make check builds it)"
client=""
counter_cut_cleanup() {
    [ -n "$client" ] && kill "$client" 2>/dev/null
    cluster_cleanup
}
trap counter_cut_cleanup EXIT

cluster_meta_mirror_start

out="$SFS_TEST_TMP/client.out"
stop="$SFS_TEST_TMP/stop"
cluster_as_alice imaging-04 "$PROG" through /shared/ptr "$stop" >"$out" 2>&1 &
client=$!
cluster_wait_line "$out" connected 30 >/dev/null || sfs_fail "sfsalice's client did not connect: $(cat "$out")"
sleep 1

cluster_cut imaging-04 imaging-01
sfs_log "injected: imaging-04 (the client) cut from imaging-01 (the metadata server), both ways"
sleep 14
cluster_heal
sfs_log "healed: imaging-04 reaches imaging-01 again"
for _ in $(seq 300); do
    grep -q "COUNTER: the metadata server, rank 0, cannot answer for now" "$out" && break
    sleep 0.1
done
sleep 2
kept_before=$(grep -c "a call sent again .* answered with the answer it got the first time" "$SFS_SERVICE_LOG")
cluster_cut imaging-01 imaging-04 oneway
sfs_log "injected: imaging-01 (the metadata server) cannot send to imaging-04 (the client): replies lost"
sleep 14
cluster_heal imaging-01 imaging-04
sfs_log "healed: imaging-01 sends to imaging-04 again"
for _ in $(seq 300); do
    [ "$(grep -c "a call sent again .* answered with the answer it got the first time" "$SFS_SERVICE_LOG")" -gt "$kept_before" ] && break
    sleep 0.1
done
sleep 2
touch "$stop"
rc=0
wait "$client" || rc=$?
client=""
cat "$out"
[ "$rc" = 0 ] || sfs_fail "sfsalice's counter calls failed through the cut (exit $rc)"
grep -q "COUNTER: the metadata server, rank 0, cannot answer for now" "$out" ||
    sfs_fail "the cut did not make a COUNTER call go again (the test did not exercise the resend)"
grep -q "^through: .* each answer the last plus one" "$out" || sfs_fail "no summary from the client"
if grep -q "is lost or replaced" "$out" || grep -q "metadata server now" "$SFS_SERVICE_LOG"; then
    sfs_fail "the metadata server failed over: the cut was not of the client's link alone"
fi
echo "ok: $(grep '^through: ' "$out")"
# the cut both ways: whether the call in flight had run (its reply lost)
# or not (its request lost) depends on the moment: said, not required
if [ "$kept_before" -gt 0 ]; then
    echo "the cut both ways lost a reply: the resend was answered from the answer kept"
else
    echo "the cut both ways lost a request: the server ran it once, at the resend"
fi
# the cut one way lost a reply: required
kept=$(grep "a call sent again .* answered with the answer it got the first time" "$SFS_SERVICE_LOG" | tail -n 1)
[ "$(grep -c "a call sent again .* answered with the answer it got the first time" "$SFS_SERVICE_LOG")" -gt "$kept_before" ] ||
    sfs_fail "the call whose reply the one-way cut lost was not answered from the answer kept: $(grep -i 'counter\|shared file' "$SFS_SERVICE_LOG" | tail -n 5)"
echo "ok: the reply lost one way: the resend answered from the answer kept: $kept"
cluster_stop_service imaging-04
