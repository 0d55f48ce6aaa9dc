#!/usr/bin/env bash
# Resync of a returning mirror member (docs/mirroring.md, "Resync"): the
# secondaries' rank is killed, mirrored files are written and overwritten
# while the primaries serve alone, the rank rejoins, and each primary
# copies the chunk files of its change log to its buddy: management shows
# the secondaries good again, the change logs are gone, and every chunk
# file is byte-identical on both members. Then the primaries' rank is
# killed: the resynced secondaries are promoted and every file reads back.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/faults/mirror_lib.sh"
sfs_test_users
user=sfsalice
mirror_service_start 3
home=$(sfs_user_home "$user")
for f in a b c d; do head -c 3000000 /dev/urandom >"$home/$f"; done
head -c 100000 /dev/urandom >"$home/short"
chown "$user" "$home"/*
mirror_user_dir "$user" --numtargets 2 --chunksize 64k
sfs_as "$user" "$SFS_CTL" put "$home/a" /m/mine/a || sfs_fail "put a"
sfs_as "$user" "$SFS_CTL" put "$home/b" /m/mine/b || sfs_fail "put b"

victim=$(sfs_ctl listnodes | awk '$1 == 2 {print $5}')
kill -9 "$victim"
sfs_log "injected: SIGKILL to storage rank 2 (pid $victim): the secondaries 102 and 104"
sfs_as "$user" "$SFS_CTL" put "$home/c" /m/mine/c || sfs_fail "put c with the secondaries down"
sfs_as "$user" "$SFS_CTL" put "$home/d" /m/mine/a || sfs_fail "overwrite a with the secondaries down"
sfs_as "$user" "$SFS_CTL" put "$home/short" /m/mine/b || sfs_fail "cut b with the secondaries down"
for _ in $(seq 50); do
    [ "$(sfs_ctl mirror list | grep -c needs-resync)" -eq 2 ] && break
    sleep 0.1
done
[ "$(sfs_ctl mirror list | grep -c needs-resync)" -eq 2 ] || sfs_fail "the secondaries are not needs-resync: $(sfs_ctl mirror list)"
targets=$(sfs_ctl listtargets)
dir_of() { echo "$targets" | awk -v t=$1 '$1 == t {print $NF}'; }
for t in 101 103; do
    echo "$t's change log: $(($(wc -l <"$(dir_of $t)/mirror-changes") - 1)) chunk files"
done
for g in 101:102 103:104; do
    diff -rq "$(dir_of ${g%%:*})/chunks" "$(dir_of ${g##*:})/chunks" >/dev/null &&
        sfs_fail "${g%%:*} and ${g##*:} hold the same chunk files before the resync: the test would prove nothing"
done
echo "ok: before the resync, the copies differ"
# wait until management has the rank offline (the primaries see it away)
for _ in $(seq 100); do sfs_ctl listnodes | awk '$1 == 2' | grep -q offline && break; sleep 0.1; done

t0=$(date +%s.%N)
"${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" --one-host --state "$SFS_STATE" --port "$SFS_PORT" \
    --rejoin 2 --ready-file "$SFS_TEST_TMP/rejoined" >>"$SFS_TEST_TMP/rejoin.log" 2>&1 &
rejoin=$!
for _ in $(seq 300); do [ -f "$SFS_TEST_TMP/rejoined" ] && break; sleep 0.1; done
[ -f "$SFS_TEST_TMP/rejoined" ] || { cat "$SFS_TEST_TMP/rejoin.log"; sfs_fail "rank 2 did not rejoin"; }
for _ in $(seq 300); do
    [ "$(sfs_ctl mirror list | grep -c needs-resync)" -eq 0 ] &&
        [ "$(sfs_ctl mirror list | grep -c resyncing)" -eq 0 ] && break
    sleep 0.1
done
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
sfs_ctl mirror list
sfs_ctl listtargets
[ "$(sfs_ctl mirror list | grep -cE "good +[0-9]+ @.* good$")" -eq 2 ] ||
    sfs_fail "both members of both groups are not good after the rejoin"
grep -h "resync of target" "$SFS_SERVICE_LOG" | sed 's/^[^]]*] /resync: /'
echo "ok: rejoin and resync of both secondaries in $took s"
for t in 101 103; do
    [ -e "$(dir_of $t)/mirror-changes" ] && sfs_fail "$t's change log is still there after the resync"
done
for g in 101:102 103:104; do
    p=$(dir_of ${g%%:*}) s=$(dir_of ${g##*:})
    diff -r "$p/chunks" "$s/chunks" || sfs_fail "chunk files of ${g%%:*} and ${g##*:} differ after the resync"
    echo "ok: ${g%%:*} and ${g##*:}: $(find "$p/chunks" -type f | wc -l) chunk files, byte-identical"
done

# the resynced secondaries can take over: lose the primaries
victim=$(sfs_ctl listnodes | awk '$1 == 1 {print $5}')
kill -9 "$victim"
sfs_log "injected: SIGKILL to storage rank 1 (pid $victim): the primaries"
for f in a:d b:short c:c; do
    sfs_as "$user" "$SFS_CTL" get "/m/mine/${f%%:*}" - | cmp - "$home/${f##*:}" ||
        sfs_fail "/m/mine/${f%%:*} does not read back from the resynced secondaries"
done
sfs_ctl mirror list
echo "ok: every file reads back from the resynced secondaries after losing the primaries"
kill -9 $rejoin 2>/dev/null
wait $rejoin 2>/dev/null
exit 0
