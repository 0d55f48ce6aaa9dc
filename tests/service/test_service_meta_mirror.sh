#!/usr/bin/env bash
# The metadata mirror (docs/metadata.md, "Metadata mirror") on one host:
# meta.mirror on the metadata server's own host, in a directory of its own
# (mirror.same_host: true), in a service of 3 ranks (rank 1 keeps the copy
# beside its targets).
# - At the start the mirror is brought in step with a full copy, and every
#   batch then reaches it: after sfsalice's work (directories, files written
#   and read back, chmod, rename, removals) and a clean shutdown, the two
#   stores are identical record by record (mdb_dump of every table).
# - kill -9 of the mirror's rank: sfsalice's metadata work goes on (the
#   metadata server says it goes on alone); after `--rejoin 1` the mirror is
#   brought back with the batches it missed (kept in the server's memory, no
#   full copy) and follows again: after more of her work and the shutdown,
#   the stores are identical again and hold her changes.
# - The second start finds the copy in step and sends no full copy; a copy
#   at the same batch number whose count of batches committed alone differs
#   (another history) gets one.
# - sfsalice's own session gets EPERM for META_MIRROR (a probe, a full
#   copy's first piece) and META_MIRROR_STATE (sfs_server_ops_refused).
# - Management knows the mirror's state, as sfsalice's `stripefs-ctl mirror
#   list` shows it: good while in step, needs-resync while the mirror's rank
#   is lost, good again after its rejoin; kept in the file
#   meta/meta-mirror-state, which says the same.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

command -v mdb_dump >/dev/null ||
    sfs_skip "mdb_dump is not installed (Debian's lmdb-utils; ci/install-deps.sh installs it)"
sfs_test_users
SFS_SERVICE_MPI_ARGS="--mca orte_enable_recovery 1"
sfs_start_service 3 --targets 4
sfs_stop_service
cfg=$SFS_STATE/stripefs.yaml
copy=$SFS_STATE/meta-mirror
host=$(sed -n 's/^meta: {host: \([^,}]*\).*/\1/p' "$cfg")
[ -n "$host" ] || sfs_fail "no metadata host in $cfg: $(grep '^meta' "$cfg")"
sed -i "s|^meta: {host: $host, |meta: {host: $host, mirror: $host, mirror_dir: $copy, |" "$cfg"
grep -q "^mirror:" "$cfg" && sfs_fail "$cfg has a mirror section already"
printf 'mirror:\n  same_host: true\n' >>"$cfg"
sfs_short_timeouts 3
sfs_start_service 3

# wait_log PATTERN [COUNT]: until the service log holds PATTERN COUNT times
wait_log() {
    local n=${2:-1}
    for _ in $(seq 300); do
        [ "$(grep -c -- "$1" "$SFS_SERVICE_LOG")" -ge "$n" ] && return 0
        sleep 0.1
    done
    sfs_fail "the service log does not say '$1' ($n times): $(grep -i mirror "$SFS_SERVICE_LOG")"
}
wait_log "metadata mirror in step: a full copy of the store"
wait_log "metadata mirror active at batch"
grep -q "metadata mirror, copy in $copy" "$SFS_SERVICE_LOG" || sfs_fail "rank 1 does not keep the copy"
sfs_expect_eq "$(sfs_ctl listnodes | awk '$1 == 1 {print $3}')" "storage,metamirror" "rank 1's roles"
echo "ok: the mirror is in step at the start: $(grep -o 'metadata mirror in step.*' "$SFS_SERVICE_LOG" | head -n 1)"

# wait_state STATE: until sfsalice's `mirror list` and management's file
# both say STATE (the metadata server tells management on its next tick)
state_file=$SFS_STATE/meta/meta-mirror-state
wait_state() {
    local line=""
    for _ in $(seq 100); do
        line=$(sfs_as sfsalice "$SFS_CTL" mirror list 2>&1 | grep '^Metadata mirror:')
        case "$line" in
        *", $1 since batch "*) grep -q "^state $1 batch [0-9]*$" "$state_file" 2>/dev/null && break ;;
        esac
        sleep 0.1
    done
    case "$line" in
    *", $1 since batch "*) ;;
    *) sfs_fail "mirror list does not say $1 for the metadata mirror: '$line'" ;;
    esac
    grep -q "^state $1 batch [0-9]*$" "$state_file" ||
        sfs_fail "$state_file does not say $1: $(cat "$state_file" 2>&1)"
    echo "ok: sfsalice's mirror list says: $line; $state_file: $(tail -n 1 "$state_file")"
}
wait_state good

# recorded_now STATE WHEN: management's file says STATE already (fencing: a
# batch committed without the mirror is answered only once management has
# recorded that the mirror lacks it, so no wait here)
recorded_now() {
    if ! grep -q "^state $1 batch [0-9]*$" "$state_file"; then
        echo "$state_file does not say $1 at $2: $(cat "$state_file" 2>&1)" >&2
        return 1
    fi
    if ! grep -q "fencing: management recorded that the metadata mirror needs a resync" \
        "$SFS_SERVICE_LOG"; then
        echo "the service log does not say that the fence waited" >&2
        return 1
    fi
    echo "ok: at $2, $state_file says $1 already: $(tail -n 1 "$state_file");" \
        "$(grep -o 'fencing: management recorded.*' "$SFS_SERVICE_LOG" | tail -n 1)"
}

# the mirror's server-only operations from sfsalice's own session: refused
# (EPERM) before they change anything; the copy stays in step
sfs_as sfsalice "$SFS_BUILD/tests/progs/sfs_server_ops_refused" >"$SFS_TEST_TMP/refused.out" 2>&1 ||
    sfs_fail "a server-only operation was not refused: $(cat "$SFS_TEST_TMP/refused.out")"
sed 's/^/    /' "$SFS_TEST_TMP/refused.out"

as_alice() { sfs_as sfsalice "$SFS_CTL" "$@"; }
sfs_ctl mkdir /d && sfs_ctl chmod 1777 /d || sfs_fail "mkdir /d (1777)"
src=$SFS_TEST_TMP/src back=$SFS_TEST_TMP/back
head -c $((300 * 1024 + 7)) /dev/urandom >"$src" && chmod 0644 "$src" || sfs_fail "make $src"
mkdir "$back" && chown sfsalice: "$back" || sfs_fail "mkdir $back"
work() { # DIR: sfsalice's files written, read back, changed, some removed
    as_alice mkdir "$1" || sfs_fail "mkdir $1 as sfsalice"
    for i in 1 2 3 4 5 6; do
        as_alice put "$src" "$1/f$i" || sfs_fail "put $1/f$i as sfsalice"
    done
    as_alice get "$1/f3" "$back/f3" && cmp -s "$src" "$back/f3" || sfs_fail "$1/f3 does not read back"
    rm -f "$back/f3"
    as_alice chmod 0600 "$1/f1" && as_alice mv "$1/f2" "$1/renamed" && as_alice rm "$1/f4" &&
        as_alice mkdir "$1/sub" && as_alice rm "$1/sub" || sfs_fail "chmod, mv, rm, mkdir, rm of a directory in $1"
}
work /d/one

# the stores, record by record, once the service has stopped
compare_stores() { # WHAT
    mdb_dump -a "$SFS_STATE/meta" >"$SFS_TEST_TMP/primary.dump" || sfs_fail "mdb_dump of the primary's store"
    mdb_dump -a "$copy" >"$SFS_TEST_TMP/mirror.dump" || sfs_fail "mdb_dump of the mirror's store"
    cmp -s "$SFS_TEST_TMP/primary.dump" "$SFS_TEST_TMP/mirror.dump" ||
        sfs_fail "$1: the mirror's store differs from the primary's: $(diff "$SFS_TEST_TMP/primary.dump" "$SFS_TEST_TMP/mirror.dump" | head -n 8)"
    records=$(grep -c '^ ' "$SFS_TEST_TMP/primary.dump")
    [ "$records" -ge 20 ] || sfs_fail "$1: only $records records to compare"
    echo "ok: $1: the two stores are identical ($records records)"
}
sfs_stop_service
compare_stores "after sfsalice's work"

# a second start: the copy is in step, no full copy is sent
sfs_start_service 3
wait_log "metadata mirror active at batch" 2
[ "$(grep -c "metadata mirror in step: a full copy" "$SFS_SERVICE_LOG")" = 1 ] ||
    sfs_fail "a full copy was sent although the mirror was in step"
echo "ok: a restart finds the mirror in step (no full copy)"

pid1=$(sfs_ctl listnodes | awk '$1 == 1 {print $5}')
[ -n "$pid1" ] || sfs_fail "no pid of rank 1 in listnodes: $(sfs_ctl listnodes)"
kill -9 "$pid1"
sfs_log "injected: SIGKILL to rank 1 (pid $pid1): the metadata mirror (and targets 101, 103)"
# metadata alone (her files' data is on the lost rank's targets too)
as_alice mkdir /d/two || sfs_fail "sfsalice's first mkdir while the mirror is away"
recorded_now needs-resync "the first reply of a batch committed without the mirror" ||
    sfs_fail "no fencing"
as_alice mkdir /d/two/x && as_alice mv /d/two/x /d/two/y &&
    as_alice chmod 0700 /d/two/y && as_alice rm /d/two/y && as_alice mkdir /d/two/z ||
    sfs_fail "sfsalice's metadata work while the mirror is away"
wait_log "metadata mirror dropped: a batch failed there"
wait_state needs-resync
echo "ok: with the mirror's rank killed the metadata server goes on alone: $(grep -o 'metadata mirror dropped: [^.]*' "$SFS_SERVICE_LOG" | head -n 1)"

"${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" --one-host --state "$SFS_STATE" --rejoin 1 \
    --ready-file "$SFS_TEST_TMP/rejoined1" >"$SFS_TEST_TMP/rejoin1.log" 2>&1 &
rejoined=$!
for _ in $(seq 300); do
    [ -f "$SFS_TEST_TMP/rejoined1" ] && break
    kill -0 $rejoined 2>/dev/null || break
    sleep 0.1
done
[ -f "$SFS_TEST_TMP/rejoined1" ] || { cat "$SFS_TEST_TMP/rejoin1.log"; sfs_fail "rank 1 did not rejoin"; }
wait_log "metadata mirror in step: the [0-9]* batch\(es\)\? it missed"
wait_log "metadata mirror active at batch" 3
[ "$(grep -c "metadata mirror in step: a full copy" "$SFS_SERVICE_LOG")" = 1 ] ||
    sfs_fail "the rejoined mirror got a full copy, not the batches it missed"
echo "ok: the rejoined mirror gets the batches it missed, no full copy: $(grep -o 'metadata mirror in step: the.*' "$SFS_SERVICE_LOG" | tail -n 1)"
wait_state good
work /d/three

# A mirror whose host hangs (SIGSTOP of its rank): a batch waits for it at
# most three heartbeat intervals (1.5 s here), not the RPC timeout (6 s here,
# which is also sfsalice's own: with the old wait her mkdir failed), then
# the metadata server goes on alone; continued, the mirror gets the batches
# it missed.
pid1=$(sfs_ctl listnodes | awk '$1 == 1 {print $5}')
[ -n "$pid1" ] || sfs_fail "no pid of the rejoined rank 1 in listnodes: $(sfs_ctl listnodes)"
kill -STOP "$pid1"
sfs_log "injected: SIGSTOP to rank 1 (pid $pid1), the metadata mirror"
start=$(date +%s%N)
as_alice mkdir /d/hung || { kill -CONT "$pid1"; sfs_fail "sfsalice's mkdir while the mirror hangs"; }
pause_ms=$((($(date +%s%N) - start) / 1000000))
recorded_now needs-resync "the reply to sfsalice's mkdir while the mirror hangs" ||
    { kill -CONT "$pid1"; sfs_fail "no fencing"; }
as_alice mkdir /d/hung/more || { kill -CONT "$pid1"; sfs_fail "sfsalice's second mkdir while the mirror hangs"; }
wait_log "metadata mirror dropped: a batch failed there" 2
echo "ok: with the mirror's rank stopped, sfsalice's mkdir took $pause_ms ms: $(grep -o 'metadata mirror dropped: [^.]*' "$SFS_SERVICE_LOG" | tail -n 1)"
kill -CONT "$pid1"
sfs_log "rank 1 continued"
wait_log "metadata mirror in step: the [0-9]* batch\(es\)\? it missed" 2
wait_state good
echo "ok: the continued mirror gets the batches it missed: $(grep -o 'metadata mirror in step: the.*' "$SFS_SERVICE_LOG" | tail -n 1)"

sfs_ctl shutdown >/dev/null || sfs_fail "shutdown"
for _ in $(seq 600); do kill -0 $rejoined 2>/dev/null || break; sleep 0.1; done
wait $rejoined || { cat "$SFS_TEST_TMP/rejoin1.log"; sfs_fail "the rejoined rank did not stop cleanly"; }
for _ in $(seq 600); do kill -0 "$SFS_SERVICE_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$SFS_SERVICE_PID" 2>/dev/null && sfs_fail "the original job did not stop"
wait "$SFS_SERVICE_PID"
SFS_SERVICE_PID=""
compare_stores "after the mirror's rank was lost and rejoined"
for name in two three renamed hung more; do
    grep -q "$(printf %s "$name" | od -An -tx1 | tr -d ' \n')" "$SFS_TEST_TMP/mirror.dump" ||
        sfs_fail "the mirror's store does not hold the name '$name'"
done
echo "ok: the mirror's store holds sfsalice's names from during and after the outage"
# A copy at the primary's batch number but with another history (it got a
# batch the primary lost in a crash, and the primary then committed another
# batch of that number alone): its count of batches committed alone
# (mirror_alone) differs, so the next start sends it a full copy instead of
# taking it for in step.
key=$(printf mirror_alone | od -An -tx1 | tr -d ' \n')
mdb_dump -s counters "$copy" >"$SFS_TEST_TMP/counters.dump" || sfs_fail "mdb_dump -s counters of the mirror"
awk -v k=" $key" 'hit {print " 00000000000000ff"; hit = 0; next} {print} $0 == k {hit = 1}' \
    "$SFS_TEST_TMP/counters.dump" >"$SFS_TEST_TMP/counters.changed"
grep -q '^ 00000000000000ff$' "$SFS_TEST_TMP/counters.changed" ||
    sfs_fail "no mirror_alone record in the mirror's counters (its outage had batches committed alone)"
mdb_load -s counters -f "$SFS_TEST_TMP/counters.changed" "$copy" || sfs_fail "mdb_load of the changed counter"
sfs_start_service 3
wait_log "metadata mirror in step: a full copy of the store" 2
grep -q "committed alone), this store at .*: a full copy" "$SFS_SERVICE_LOG" ||
    sfs_fail "the start does not say why it sent a full copy"
echo "ok: a copy with the primary's batch number and another history gets a full copy: $(grep -o 'metadata mirror at batch [0-9]* ([0-9]* committed alone), this store at.*' "$SFS_SERVICE_LOG" | tail -n 1)"
wait_state good
as_alice mkdir /d/four || sfs_fail "mkdir /d/four as sfsalice"
sfs_stop_service
compare_stores "after the full copy at the third start"

echo "management's log of the metadata mirror's states:"
grep "metadata mirror: [a-z-]* -> \|metadata mirror: .* (from " "$SFS_SERVICE_LOG" | sed "s/^/    /"
