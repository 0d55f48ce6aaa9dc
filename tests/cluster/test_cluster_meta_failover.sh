#!/usr/bin/env bash
# Failover of the metadata server (docs/metadata-mirror.md, "Failover"), on
# the four hosts of ci/cluster.sh: the metadata server on imaging-01, its
# mirror on imaging-02, management on imaging-03 (so that it outlives the
# metadata server's host).
# - sfsalice's client on imaging-04 connects; her mkdir is committed on the
#   metadata server and its mirror, and the server's rank dies (SIGKILL, by
#   STRIPEFS_TEST_META_DIE_BEFORE_REPLY) before it replies. Her mkdir gets
#   no answer, waits until management has promoted the mirror (the offline
#   timeout, 20 s, and the promotion) and is sent again there, which answers
#   from the reply it kept with the mkdir (no EEXIST): a pause, not an
#   error, and the client says how long.
# - Management's log and file (meta-primary) record the promotion; the map
#   names imaging-02's rank as the metadata server (listnodes); what was
#   made before the kill is there, with its owner and mode.
# - Her second mkdir is answered at once by the promoted server.
# - Her file's shared file pointer, which lived in the old server's memory,
#   gives ESTALE saying so (never a counter restarted from 0), and so does
#   the unlock of a byte-range lock she held across it; a new lock works.
# - The old server's rank rejoins (--rejoin 0): it is the mirror now, and
#   gets a full copy into its own meta.dir; metadata is mirrored again.
# - A second failover: the promoted server's rank killed (-9) from outside,
#   the old one (good again) is promoted back; sfsalice's mkdir, sent after
#   the kill, pauses and succeeds.
# - A clean shutdown; meta-primary names the config's metadata rank, so the
#   config starts as it is; the mirror is good again and every directory is
#   there. (The refused start: test_cluster_meta_deposed.sh.)
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
sfs_test_users
cluster_begin
PROG="$SFS_BUILD/tests/progs/sfs_meta_fence_client"
[ -x "$PROG" ] || sfs_fail "missing $PROG (make check builds it)"

cfg="$SFS_TEST_TMP/imaging.yaml"
d="$SFS_TEST_TMP/hosts"
cluster_meta_mirror_config "$cfg"
# the job outlives its killed rank; a rank dies on a MKDIR while die.RANK says so
die="$SFS_TEST_TMP/die"
CLUSTER_MPI_ARGS="--mca orte_enable_recovery 1 -x STRIPEFS_TEST_META_DIE_BEFORE_REPLY=$die"
cluster_start_service
primary_file="$SFS_TEST_TMP/meta-primary" # beside the config: management is not on imaging-01

cluster_wait_meta_mirror ", good since batch " ||
    sfs_fail "the metadata mirror is not good: '$CLUSTER_MIRROR_LINE'"
echo "ok: $CLUSTER_MIRROR_LINE"
ctl_on imaging-01 mkdir /shared && ctl_on imaging-01 chmod 1777 /shared || sfs_fail "mkdir /shared"
cluster_as_alice imaging-04 "$SFS_CTL" mkdir /shared/before || sfs_fail "sfsalice's mkdir before the kill"

meta_pid=$(ctl_on imaging-04 listnodes | awk '$2 == "imaging-01" {print $5; exit}')
[ -n "$meta_pid" ] || sfs_fail "no pid of imaging-01's rank in listnodes: $(ctl_on imaging-04 listnodes)"

out="$SFS_TEST_TMP/client.out"
cluster_as_alice imaging-04 "$PROG" /shared "$SFS_TEST_TMP/go1" "$SFS_TEST_TMP/go2" /shared/sfp >"$out" 2>&1 &
client=$!
cluster_wait_line "$out" connected 30 >/dev/null || sfs_fail "sfsalice's client did not connect: $(cat "$out")"
grep -q '^counter before rc=0 value=0 ' "$out" || sfs_fail "the shared file pointer before the kill: $(cat "$out")"
grep -q '^lock before rc=0 ' "$out" || sfs_fail "the byte-range lock before the kill: $(cat "$out")"

echo MKDIR >"$die.0"
sfs_log "injected: the metadata server's rank (imaging-01, pid $meta_pid; target 101 with it) dies once a MKDIR is committed, before replying"
touch "$SFS_TEST_TMP/go1"
first=$(cluster_wait_line "$out" 'first ' 90) || sfs_fail "the first mkdir did not end in 90 s: $(cat "$out")"
rm -f "$die.0"
grep -q "testing: MKDIR /shared/first is committed; this rank dies before replying" "$SFS_SERVICE_LOG" ||
    sfs_fail "the metadata server did not die after committing the mkdir: $(grep -i 'testing' "$SFS_SERVICE_LOG")"
kill -0 "$meta_pid" 2>/dev/null && sfs_fail "the metadata server's rank (pid $meta_pid) is still running"
case "$first" in
"first rc=0 "*) ;;
*) sfs_fail "sfsalice's mkdir during the failover failed: $first; $(cat "$out")" ;;
esac
grep -q "the metadata server, rank 0, is lost or replaced (.*); rank 1 took over: sent again there, [0-9.]* s after the first try" "$out" ||
    sfs_fail "the client did not say what the pause was: $(cat "$out")"
# the shared file pointer lived in the old server's memory: an error that
# says so, never a counter restarted from 0
grep -q "^counter after rc=-116 value=0 error=.*/shared/sfp: shared file pointer: .*lost, the metadata server restarted or was replaced (a failover)" "$out" ||
    sfs_fail "the shared file pointer across the failover is not a clear ESTALE: $(grep '^counter' "$out")"
echo "ok: the shared file pointer across the failover: $(grep -o '^counter after rc=-116' "$out"), $(grep -o 'lost, the metadata server restarted or was replaced[^(]*' "$out" | head -n 1)"
# so did her byte-range lock: its unlock says it was lost; a new one works
grep -q "^unlock after rc=-116 error=/shared/sfp: unlock of lock [0-9]*: the lock was lost, the metadata server that granted it restarted or was replaced (a failover)" "$out" ||
    sfs_fail "the lock held across the failover is not a clear ESTALE: $(grep 'lock' "$out")"
grep -q "^relock after rc=0 " "$out" || sfs_fail "a lock after the failover: $(grep 'lock' "$out")"
echo "ok: the lock held across the failover: $(grep -o '^unlock after rc=-116' "$out"), the lock was lost...; a new lock works"
echo "ok: sfsalice's mkdir during the failover succeeded ($first): $(grep -o 'sent again there, [0-9.]* s after the first try' "$out")"
# it was committed before the server died: the promoted server answered
# from the reply it kept, it did not run the mkdir again (EEXIST)
kept=$(grep -o "MKDIR /shared/first of uid $(id -u sfsalice) sent again (op_tag [0-9]* of client [0-9a-f]*): answered with the reply kept [0-9.]* s ago, not run twice" "$SFS_SERVICE_LOG") ||
    sfs_fail "the promoted server did not answer the resent mkdir from its kept reply: $(grep 'MKDIR' "$SFS_SERVICE_LOG")"
echo "ok: the resent mkdir, committed before the server died: $kept"

grep -q "metadata failover: rank 1 on imaging-02 is the metadata server now" "$SFS_SERVICE_LOG" ||
    sfs_fail "management's log does not record the promotion"
grep -q "this rank (1 on imaging-02) is the metadata server now" "$SFS_SERVICE_LOG" ||
    sfs_fail "the mirror's log does not say it serves"
[ "$(sed -n 2p "$primary_file" 2>/dev/null | cut -d' ' -f1-2)" = "rank 1" ] ||
    sfs_fail "$primary_file does not record rank 1: $(cat "$primary_file" 2>&1)"
echo "ok: management promoted the mirror: $(grep -o 'metadata failover: the metadata server, rank 0.*' "$SFS_SERVICE_LOG" | head -n 1)"
echo "ok: the mirror: $(grep -o 'this rank (1 on imaging-02) is the metadata server now.*' "$SFS_SERVICE_LOG" | head -n 1)"
nodes=$(ctl_on imaging-04 listnodes)
echo "$nodes" | awk '$2 == "imaging-02"' | grep -q "meta" ||
    sfs_fail "listnodes does not show imaging-02 as the metadata server: $nodes"

touch "$SFS_TEST_TMP/go2"
second=$(cluster_wait_line "$out" 'second ' 60)
case "$second" in
"second rc=0 "*) ;;
*) sfs_fail "the second mkdir, on the promoted server, failed: ${second:-nothing}; $(cat "$out")" ;;
esac
echo "ok: the promoted server answers: $second"
wait $client || sfs_fail "sfsalice's client exited with $?: $(cat "$out")"
echo "the file opened before the failover, closed after it: $(grep '^close' "$out")"

alice=$(id -u sfsalice)
for dir in before first second; do
    st=$(ctl_on imaging-04 stat "/shared/$dir" 2>&1) || sfs_fail "/shared/$dir is missing after the failover: $st"
    echo "$st" | grep -q "Uid: ($alice/" ||
        sfs_fail "/shared/$dir is not sfsalice's ($alice): $st"
done
echo "ok: /shared/before (made before the kill), first and second are there, sfsalice's"

# the old server's rank back (--rejoin 0): the map names it the mirror now,
# so it keeps the copy, in its own meta.dir, after a full copy
rejoin_log="$SFS_TEST_TMP/rejoin0.log"
timeout --kill-after=20 600 "${SFS_SERVER_ENV[@]}" "$CLUSTER" mpirun -np 1 --host imaging-01 \
    "$SFS_SERVER" -c "$cfg" --rejoin 0 --ready-file "$SFS_TEST_TMP/rejoined0" >"$rejoin_log" 2>&1 &
rejoined=$!
for _ in $(seq 600); do
    [ -f "$SFS_TEST_TMP/rejoined0" ] && break
    kill -0 $rejoined 2>/dev/null || break
    sleep 0.1
done
[ -f "$SFS_TEST_TMP/rejoined0" ] || sfs_fail "rank 0 did not rejoin: $(tail -n 20 "$rejoin_log")"
cluster_wait_meta_mirror "rank 0 on imaging-01 [online], good since batch " ||
    sfs_fail "the rejoined old server is not a good mirror: '$CLUSTER_MIRROR_LINE'; $(tail -n 5 "$rejoin_log")"
line=$CLUSTER_MIRROR_LINE
grep -q "metadata mirror, copy in $d/imaging-01/var/lib/stripefs/meta " "$rejoin_log" ||
    sfs_fail "the rejoined rank does not keep the copy in its meta.dir: $(grep 'metadata mirror' "$rejoin_log")"
grep -q "metadata mirror in step: a full copy" "$SFS_SERVICE_LOG" ||
    sfs_fail "the rejoined mirror did not get a full copy"
cluster_as_alice imaging-04 "$SFS_CTL" mkdir /shared/third || sfs_fail "sfsalice's mkdir with the old server as mirror"
echo "ok: the old server's rank rejoined as the mirror, got a full copy into its meta.dir: $line"

# a second failover, back: the promoted server's rank (imaging-02) killed;
# the rejoined old server, good, is promoted in its turn
new_pid=$(ctl_on imaging-04 listnodes | awk '$2 == "imaging-02" {print $5; exit}')
[ -n "$new_pid" ] || sfs_fail "no pid of imaging-02's rank in listnodes"
kill -9 "$new_pid" || sfs_fail "cannot kill the promoted server's rank ($new_pid)"
sfs_log "injected: SIGKILL to the promoted metadata server's rank (imaging-02, pid $new_pid)"
start=$(date +%s%N)
cluster_as_alice imaging-04 "$SFS_CTL" mkdir /shared/fourth >"$SFS_TEST_TMP/fourth.out" 2>&1 ||
    sfs_fail "sfsalice's mkdir during the second failover: $(cat "$SFS_TEST_TMP/fourth.out")"
ms=$((($(date +%s%N) - start) / 1000000))
grep -q "metadata failover: rank 0 on imaging-01 is the metadata server now" "$SFS_SERVICE_LOG" ||
    sfs_fail "management's log does not record the promotion back"
[ "$(sed -n 2p "$primary_file" 2>/dev/null | cut -d' ' -f1-2)" = "rank 0" ] ||
    sfs_fail "$primary_file does not record rank 0: $(cat "$primary_file" 2>&1)"
grep -q "this rank (0 on imaging-01) is the metadata server now" "$rejoin_log" ||
    sfs_fail "the rejoined rank does not say it serves"
echo "ok: a second failover promotes the old server back: sfsalice's mkdir took $ms ms ($(grep -o 'sent again there, [0-9.]* s after the first try' "$SFS_TEST_TMP/fourth.out"))"

ctl_on imaging-04 shutdown >/dev/null || sfs_fail "stripefs-ctl shutdown after the failovers"
for _ in $(seq 900); do kill -0 "$CLUSTER_JOB" 2>/dev/null || kill -0 $rejoined 2>/dev/null || break; sleep 0.1; done
kill -0 "$CLUSTER_JOB" 2>/dev/null && sfs_fail "the service did not stop in 90 s after the failovers"
kill -0 $rejoined 2>/dev/null && sfs_fail "the rejoined rank did not stop in 90 s"
wait "$CLUSTER_JOB"
rc=$?
CLUSTER_JOB=""
wait $rejoined || sfs_fail "the rejoined rank exited with $?: $(tail -n 20 "$rejoin_log")"
echo "ok: the service stopped after the failovers (job exit $rc, two ranks killed; the rejoined rank exit 0)"

# meta-primary names the config's metadata rank: its meta.dir is the store,
# and the config starts as it is; the mirror on imaging-02 gets a full copy
cluster_start_service
cluster_wait_meta_mirror "rank 1 on imaging-02 [online], good since batch " ||
    sfs_fail "after the failovers the metadata mirror is not good: '$CLUSTER_MIRROR_LINE'"
line=$CLUSTER_MIRROR_LINE
for dir in before first second third fourth; do
    ctl_on imaging-04 stat "/shared/$dir" >/dev/null || sfs_fail "/shared/$dir is missing after the restart"
done
echo "ok: after the promotion back, the config starts as it is, the mirror is good ($line), and every directory is there"
cluster_stop_service imaging-04
