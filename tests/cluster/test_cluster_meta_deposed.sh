#!/usr/bin/env bash
# A metadata server that was only cut off, not dead, is deposed after its
# mirror's promotion (docs/metadata-mirror.md, "Failover"): on the four
# hosts of ci/cluster.sh, the metadata server on imaging-01, its mirror on
# imaging-02, management on imaging-03; RPC timeout 10 s, offline 12 s.
# - sfsalice's two clients on imaging-04 connect (both hold the map naming
#   imaging-01). The metadata server's rank is stopped (SIGSTOP): client A's
#   mkdir times out, waits for the promotion and is answered by imaging-02.
# - The old server continues (SIGCONT). It still believes it serves, and
#   client B still holds the old map: B's mkdir goes to it. The promoted rank
#   refuses its batch, management refuses its report (ESTALE), so it answers
#   nothing it committed (the fence) and refuses every later request; B
#   finds the new server in the map and its mkdir is answered there.
# - What both clients made is on the promoted server.
# - The deposed server, still running, ends its metadata server and keeps
#   the mirror instead (its rank is the mirror in the map): it gets a full
#   copy, `mirror list` says good, and a mkdir waits for it; a clean
#   shutdown.
# - A start with the old config is refused, naming meta-primary and what to
#   do (meta.dir on imaging-01 lacks what came after the promotion); done as
#   it says (the copy over meta.dir, meta-primary removed), the service
#   starts, the mirror is in step, and every directory is there.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
sfs_test_users
cluster_begin
PROG="$SFS_BUILD/tests/progs/sfs_meta_fence_client"
[ -x "$PROG" ] || sfs_fail "missing $PROG (make check builds it)"

d="$SFS_TEST_TMP/hosts"
cluster_meta_mirror_start
cluster_as_alice imaging-04 "$SFS_CTL" mkdir /shared/a && cluster_as_alice imaging-04 "$SFS_CTL" mkdir /shared/b ||
    sfs_fail "sfsalice's mkdirs before the fault"

old_pid=$(ctl_on imaging-04 listnodes | awk '$2 == "imaging-01" {print $5; exit}')
[ -n "$old_pid" ] || sfs_fail "no pid of imaging-01's rank in listnodes: $(ctl_on imaging-04 listnodes)"
trap 'kill -CONT "$old_pid" 2>/dev/null; cluster_cleanup' EXIT

cluster_as_alice imaging-04 "$PROG" /shared/a "$SFS_TEST_TMP/goA1" "$SFS_TEST_TMP/goA2" >"$SFS_TEST_TMP/a.out" 2>&1 &
client_a=$!
cluster_as_alice imaging-04 "$PROG" /shared/b "$SFS_TEST_TMP/goB1" "$SFS_TEST_TMP/goB2" >"$SFS_TEST_TMP/b.out" 2>&1 &
client_b=$!
for _ in $(seq 300); do
    grep -q '^connected' "$SFS_TEST_TMP/a.out" && grep -q '^connected' "$SFS_TEST_TMP/b.out" && break
    sleep 0.1
done
grep -q '^connected' "$SFS_TEST_TMP/a.out" && grep -q '^connected' "$SFS_TEST_TMP/b.out" ||
    sfs_fail "sfsalice's clients did not connect: $(cat "$SFS_TEST_TMP/a.out" "$SFS_TEST_TMP/b.out")"

kill -STOP "$old_pid" || sfs_fail "cannot stop the metadata server's rank ($old_pid)"
sfs_log "injected: SIGSTOP to the metadata server's rank (imaging-01, pid $old_pid)"
touch "$SFS_TEST_TMP/goA1"
first=$(cluster_wait_line "$SFS_TEST_TMP/a.out" 'first ' 90) || sfs_fail "client A's mkdir did not end in 90 s: $(cat "$SFS_TEST_TMP/a.out")"
case "$first" in
"first rc=0 "*) ;;
*) sfs_fail "client A's mkdir during the failover failed: $first; $(cat "$SFS_TEST_TMP/a.out")" ;;
esac
grep -q "metadata failover: rank 1 on imaging-02 is the metadata server now" "$SFS_SERVICE_LOG" ||
    sfs_fail "management's log does not record the promotion"
echo "ok: with the metadata server stopped, client A's mkdir is answered by the promoted mirror: $(grep -o 'sent again there, [0-9.]* s after the first try' "$SFS_TEST_TMP/a.out")"

kill -CONT "$old_pid"
sfs_log "the old metadata server continued"
touch "$SFS_TEST_TMP/goB1"
bfirst=$(cluster_wait_line "$SFS_TEST_TMP/b.out" 'first ' 90) || sfs_fail "client B's mkdir did not end in 90 s: $(cat "$SFS_TEST_TMP/b.out")"
case "$bfirst" in
"first rc=0 "*) ;;
*) sfs_fail "client B's mkdir after the old server continued failed: $bfirst; $(cat "$SFS_TEST_TMP/b.out")" ;;
esac
# (refused as deposed, or, before its first heartbeat's answer, for its lease)
grep -qE "the metadata server, rank 0, is lost or replaced \((.*promoted the metadata mirror|.*its lease from management expired).*\); rank 1 took over" "$SFS_TEST_TMP/b.out" ||
    sfs_fail "client B was not sent on by a deposed server: $(cat "$SFS_TEST_TMP/b.out")"
grep -q "management says this rank is no longer the metadata server" "$SFS_SERVICE_LOG" ||
    sfs_fail "the old server's log does not say it was deposed"
echo "ok: the continued old server acknowledged nothing: client B was refused there and answered by the promoted server: $(grep -o 'is lost or replaced.*' "$SFS_TEST_TMP/b.out" | head -n 1)"

touch "$SFS_TEST_TMP/goA2" "$SFS_TEST_TMP/goB2"
wait $client_a || sfs_fail "client A exited with $?: $(cat "$SFS_TEST_TMP/a.out")"
wait $client_b || sfs_fail "client B exited with $?: $(cat "$SFS_TEST_TMP/b.out")"
for f in a/first a/second b/first b/second; do
    grep -q "^${f#*/} rc=0 " "$SFS_TEST_TMP/${f%/*}.out" || sfs_fail "client ${f%/*}'s ${f#*/} failed: $(cat "$SFS_TEST_TMP/${f%/*}.out")"
    ctl_on imaging-04 stat "/shared/$f" >/dev/null || sfs_fail "/shared/$f is not on the promoted server"
done
echo "ok: every directory both clients made is on the promoted server"

# the deposed server runs on: it keeps the mirror now, without a restart
cluster_wait_meta_mirror "rank 0 on imaging-01 [online], good since batch " ||
    sfs_fail "the deposed old server is not a good mirror: '$CLUSTER_MIRROR_LINE'; $(grep 'rank 0' "$SFS_SERVICE_LOG" | tail -n 5)"
grep -q "this rank (0 on imaging-01) keeps the metadata mirror now" "$SFS_SERVICE_LOG" ||
    sfs_fail "the deposed server's log does not say it keeps the mirror"
grep -q "metadata mirror in step: a full copy" "$SFS_SERVICE_LOG" ||
    sfs_fail "the deposed server did not get a full copy"
cluster_as_alice imaging-04 "$SFS_CTL" mkdir /shared/mirrored-again || sfs_fail "sfsalice's mkdir with the deposed server as mirror"
echo "ok: the deposed old server keeps the metadata mirror now, without a restart: $CLUSTER_MIRROR_LINE; $(grep -o 'this rank (0 on imaging-01) keeps the metadata mirror now.*' "$SFS_SERVICE_LOG" | head -n 1)"
cluster_stop_service imaging-04

primary_file="$SFS_TEST_TMP/meta-primary" # beside the config: management is not on imaging-01
# the old config again: meta.dir on imaging-01 lacks the changes made after
# the promotion, so management refuses to start
rm -f "$CLUSTER_READY"
timeout --kill-after=20 120 "${SFS_SERVER_ENV[@]}" "$CLUSTER" mpirun -np 4 --host "$CLUSTER_ALL" \
    "$SFS_SERVER" -c "$CLUSTER_CONFIG" --ready-file "$CLUSTER_READY" >"$SFS_TEST_TMP/restart.log" 2>&1
rc=$?
[ $rc -ne 0 ] && [ ! -f "$CLUSTER_READY" ] || sfs_fail "a start on the old store was not refused (exit $rc)"
grep -q "meta-primary: the metadata mirror (rank 1, imaging-02:.*) was promoted to metadata server" "$SFS_TEST_TMP/restart.log" ||
    sfs_fail "the refusal does not name the promotion: $(tail -n 20 "$SFS_TEST_TMP/restart.log")"
echo "ok: a start with the old metadata store is refused (exit $rc): $(grep -o 'was promoted.*older than the copy' "$SFS_TEST_TMP/restart.log" | head -n 1)"

# what the refusal says to do: the copy over meta.dir, then meta-primary removed
meta_dir="$d/imaging-01/var/lib/stripefs/meta"
rm -rf "$meta_dir" && cp -a "$d/imaging-02/var/lib/stripefs/meta-mirror" "$meta_dir" &&
    rm "$primary_file" || sfs_fail "the copy over meta.dir"
cluster_start_service
cluster_wait_meta_mirror ", good since batch " ||
    sfs_fail "after the swap the metadata mirror is not good: '$CLUSTER_MIRROR_LINE'"
line=$CLUSTER_MIRROR_LINE
for dir in a/first a/second b/first b/second; do
    ctl_on imaging-04 stat "/shared/$dir" >/dev/null || sfs_fail "/shared/$dir is missing after the swap"
done
echo "ok: with the copy made the store as the refusal said, the service starts, the mirror is good ($line), and every directory is there"
cluster_stop_service imaging-04
