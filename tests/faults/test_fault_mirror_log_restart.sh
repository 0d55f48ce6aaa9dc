#!/usr/bin/env bash
# The change log outlives its process (docs/mirroring.md, "The change
# log"): with the secondaries' rank killed, the primaries serve alone and
# log; then the primaries' rank is killed too. Management must not promote
# the needs-resync secondaries (the group is down, and says so). The
# primaries' rank rejoins and reads its change logs back (the secondaries
# still needs-resync); the secondaries' rank rejoins and is resynced from
# those logs: every chunk file byte-identical, every file readable.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/faults/mirror_lib.sh"
sfs_test_users
user=sfsalice
mirror_service_start 2
home=$(sfs_user_home "$user")
head -c 2000000 /dev/urandom >"$home/a"
head -c 2500000 /dev/urandom >"$home/b"
chown "$user" "$home/a" "$home/b"
mirror_user_dir "$user" --numtargets 2 --chunksize 64k
sfs_as "$user" "$SFS_CTL" put "$home/a" /m/mine/a || sfs_fail "put a"
targets=$(sfs_ctl listtargets)
dir_of() { echo "$targets" | awk -v t=$1 '$1 == t {print $NF}'; }
pid_of() { sfs_ctl listnodes | awk -v r=$1 '$1 == r {print $5}'; }

kill -9 "$(pid_of 2)"
sfs_log "injected: SIGKILL to storage rank 2: the secondaries"
sfs_as "$user" "$SFS_CTL" put "$home/b" /m/mine/b || sfs_fail "put b with the secondaries down"
logged=$(($(wc -l <"$(dir_of 101)/mirror-changes") - 1))
echo "101's change log: $logged chunk files"
[ "$logged" -ge 1 ] || sfs_fail "nothing logged on 101"
for _ in $(seq 100); do sfs_ctl listnodes | awk '$1 == 2' | grep -q offline && break; sleep 0.1; done

kill -9 "$(pid_of 1)"
sfs_log "injected: SIGKILL to storage rank 1: the primaries, with their buddies needs-resync"
for _ in $(seq 100); do grep -q "cannot take over" "$SFS_SERVICE_LOG" && break; sleep 0.1; done
grep "cannot take over" "$SFS_SERVICE_LOG" | sed 's/^[^]]*] /management: /'
grep -q "secondary 102 cannot take over (needs-resync" "$SFS_SERVICE_LOG" ||
    sfs_fail "management did not refuse to promote the needs-resync 102"
sfs_ctl mirror list | grep -qE "^1 +101 @" || sfs_fail "group 1's primary changed: $(sfs_ctl mirror list)"
echo "ok: a needs-resync secondary is not promoted"

rejoin() {
    "${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" --one-host --state "$SFS_STATE" --port "$SFS_PORT" \
        --rejoin $1 --ready-file "$SFS_TEST_TMP/rejoined$1" >>"$SFS_TEST_TMP/rejoin$1.log" 2>&1 &
    eval "rejoin$1=$!"
    for _ in $(seq 300); do [ -f "$SFS_TEST_TMP/rejoined$1" ] && break; sleep 0.1; done
    [ -f "$SFS_TEST_TMP/rejoined$1" ] || { cat "$SFS_TEST_TMP/rejoin$1.log"; sfs_fail "rank $1 did not rejoin"; }
}
rejoin 1
grep -h "needs a resync of" "$SFS_TEST_TMP/rejoin1.log" | sed 's/^[^]]*] /rank 1: /'
grep -q "its buddy 102 needs a resync of $logged chunk files" "$SFS_TEST_TMP/rejoin1.log" ||
    sfs_fail "the restarted 101 did not read its change log back"
sleep 1
[ "$(sfs_ctl mirror list | grep -c needs-resync)" -eq 2 ] || sfs_fail "not both secondaries needs-resync: $(sfs_ctl mirror list)"
sfs_as "$user" "$SFS_CTL" get /m/mine/b - | cmp - "$home/b" || sfs_fail "b from the restarted primaries"
echo "ok: the restarted primaries serve b and still know their buddies need a resync"

rejoin 2
for _ in $(seq 300); do
    [ "$(sfs_ctl mirror list | grep -cE "good +[0-9]+ @.* good$")" -eq 2 ] && break
    sleep 0.1
done
sfs_ctl mirror list
[ "$(sfs_ctl mirror list | grep -cE "good +[0-9]+ @.* good$")" -eq 2 ] || sfs_fail "not resynced"
for g in 101:102 103:104; do
    diff -r "$(dir_of ${g%%:*})/chunks" "$(dir_of ${g##*:})/chunks" ||
        sfs_fail "chunk files of ${g%%:*} and ${g##*:} differ after the resync"
done
echo "ok: resynced from the logs read back after the restart: chunk files byte-identical"
kill -9 $rejoin1 $rejoin2 2>/dev/null
wait $rejoin1 $rejoin2 2>/dev/null
exit 0
