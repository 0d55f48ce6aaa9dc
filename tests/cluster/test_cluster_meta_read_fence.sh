#!/usr/bin/env bash
# The metadata server's reads are fenced (docs/metadata-mirror.md,
# "Fencing"), with a real network cut, on the four hosts of ci/cluster.sh:
# the metadata server on imaging-01, its mirror on imaging-02, management on
# imaging-03; RPC timeout 10 s, offline 12 s (a lease of 6 s).
# - sfsalice's client on imaging-04 connects (it holds the map naming
#   imaging-01's rank as the metadata server) and waits.
# - The network between imaging-01 and imaging-03 is cut both ways
#   (blackhole routes), and only there: imaging-01 still reaches the client
#   and the mirror. Its lease runs out BEFORE management decides to promote
#   the mirror (the log's times), and it goes on on its mirror's word
#   (docs/metadata-mirror.md, "The mirror's word": its probes answered by
#   the mirror) until the promotion ends the mirror role; then it says it
#   answers nothing more. The promoted server answers only once the word it
#   gave ran out.
# - A directory is made on the promoted server (stripefs-ctl on imaging-04,
#   a fresh map). Then the waiting client, with its old map, stats it and
#   lists its parent: the old server, which it still reaches, refuses
#   (EAGAIN, its lease), the client finds the promoted server in the map and
#   is answered there: the directory is found (without the fence, the old
#   server answered from its own store: ENOENT).
# - The cut heals: the old server's first heartbeat answer names another
#   metadata server, so it is deposed and keeps the mirror instead, without
#   a metadata change to learn it from; it gets a full copy and is good.
# - `stripefs-ctl shutdown`: every rank exits 0.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
source "$SFS_SRC/tests/lib/sfs_mirror_fence.sh"
sfs_test_users
cluster_begin
PROG="$SFS_BUILD/tests/progs/sfs_meta_read_client"
[ -x "$PROG" ] || sfs_fail "missing $PROG (make check builds it)"
client=""
read_fence_cleanup() {
    [ -n "$client" ] && kill "$client" 2>/dev/null
    cluster_cleanup
}
trap read_fence_cleanup EXIT

cluster_meta_mirror_start
cluster_as_alice imaging-04 "$SFS_CTL" mkdir /shared/before || sfs_fail "sfsalice's mkdir before the cut"

out="$SFS_TEST_TMP/client.out"
cluster_as_alice imaging-04 "$PROG" "$SFS_TEST_TMP/go" /shared/after /shared >"$out" 2>&1 &
client=$!
cluster_wait_line "$out" connected 30 >/dev/null || sfs_fail "sfsalice's client did not connect: $(cat "$out")"

cluster_cut imaging-01 imaging-03
sfs_log "injected: imaging-01 (the metadata server) cut from imaging-03 (management), both ways"

# (management's own lines reach the log only after the heal: mpirun's
# output of imaging-03 goes through imaging-01; the promoted rank's come now)
mirror_wait_promotion "this rank (1 on imaging-02) is the metadata server now"
echo "promoted: $promoted"

ctl_on imaging-04 mkdir /shared/after || sfs_fail "mkdir on the promoted server"
touch "$SFS_TEST_TMP/go"
st=$(cluster_wait_line "$out" 'stat ' 90) || sfs_fail "the old-map client's stat did not end in 90 s: $(cat "$out")"
ls_line=$(cluster_wait_line "$out" 'list ' 60) || sfs_fail "the old-map client's listing did not end: $(cat "$out")"
case "$st" in
"stat rc=0 "*) ;;
*) sfs_fail "the client with the old map did not find what the promoted server made: $st; $(cat "$out")" ;;
esac
case "$ls_line" in
"list rc=0 "*"names=after,before "*) ;;
*) sfs_fail "the client with the old map listed: $ls_line; $(cat "$out")" ;;
esac
grep -qE "(cannot answer for now|is lost or replaced) \(.*rank 0 on imaging-01: its lease from management expired" "$out" ||
    sfs_fail "the old server did not refuse the old-map client for its lease: $(cat "$out")"
echo "ok: the client with the old map was refused by the cut-off server and answered by the promoted one: $st; $ls_line"

cluster_heal
sfs_log "healed: imaging-01 reaches imaging-03 again"
mirror_wait_promotion "metadata failover: the metadata server, rank 0 on imaging-01, is offline"
echo "management: $promoted"
mirror_fenced_before_promotion "fencing: this metadata server's lease from management expired .*it goes on on its mirror's word"
echo "ok: the old metadata server's lease ran out $(awk -v f="$f_at" -v p="$p_at" 'BEGIN {printf "%.1f", p - f}') s before management decided to promote its mirror; it went on on the mirror's word"
grep -q "fencing: this metadata server answers no request from now on" "$SFS_SERVICE_LOG" ||
    sfs_fail "the old metadata server did not say it stopped once its mirror was promoted"
stopped=$(mirror_epoch "$(grep -m1 "fencing: this metadata server answers no request from now on" "$SFS_SERVICE_LOG" | awk '{print $1}')")
awk -v s="$stopped" -v p="$p_at" 'BEGIN {exit !(s > p)}' ||
    sfs_fail "the old metadata server stopped at $stopped, before the promotion at $p_at, although its mirror could vouch for it"
echo "ok: it stopped $(awk -v s="$stopped" -v p="$p_at" 'BEGIN {printf "%.1f", s - p}') s after the promotion (the mirror's word ran out)"
cluster_wait_meta_mirror "rank 0 on imaging-01 [online], good since batch " ||
    sfs_fail "the old server is not a good mirror after the cut healed: '$CLUSTER_MIRROR_LINE'; $(grep 'rank 0' "$SFS_SERVICE_LOG" | tail -n 5)"
grep -q "management says this rank is no longer the metadata server: management promoted the metadata mirror: its answer to this rank's heartbeat" "$SFS_SERVICE_LOG" ||
    sfs_fail "the old server was not deposed by a heartbeat's answer: $(grep -i 'deposed\|no longer' "$SFS_SERVICE_LOG" | tail -n 3)"
grep -q "this rank (0 on imaging-01) keeps the metadata mirror now" "$SFS_SERVICE_LOG" ||
    sfs_fail "the deposed server's log does not say it keeps the mirror"
cluster_as_alice imaging-04 "$SFS_CTL" mkdir /shared/mirrored-again || sfs_fail "sfsalice's mkdir with the old server as mirror"
echo "ok: after the heal the old server learnt from a heartbeat's answer that it was deposed and keeps the mirror: $CLUSTER_MIRROR_LINE"
wait "$client" || sfs_fail "the old-map client exited with $?: $(cat "$out")"
client=""
cluster_stop_service imaging-04
