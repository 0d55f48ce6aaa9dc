#!/usr/bin/env bash
# kill -9 of the storage rank that holds the primaries of both mirror
# groups while sfsalice writes mirrored files in a loop (docs/mirroring.md,
# "Failover: a primary lost"): after the offline timeout management
# promotes each group's secondary, the map names it, and the clients send
# to it, the write in flight included. Every write ends with exit 0 (the
# job sees a pause, printed, never an error), every byte reads back from
# the survivors, and the lost primaries show needs-resync; once they rejoin
# they are resynced by the promoted members (chunk files byte-identical).
# Files removed during and after the failover leave no chunk file on
# either member.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/faults/mirror_lib.sh"
sfs_test_users
user=sfsalice
offline=3
# each 16 MB put lasts at least 1 s on 16 MB/s disks, on any build (a put
# under AddressSanitizer once ended before the kill came)
mirror_service_start "$offline" 16M
home=$(sfs_user_home "$user")
n=10
for i in $(seq $n); do
    head -c 16000000 /dev/urandom >"$home/blob$i"
done
chown "$user" "$home"/blob*
mirror_user_dir "$user" --numtargets 2 --chunksize 64k
sfs_as "$user" "$SFS_CTL" put "$home/blob1" /m/mine/before || sfs_fail "put before the fault"
# the files exist before the fault: placing new mirrored files on the
# promoted members is the metadata chooser's part (not done)
: >"$home/empty" && chown "$user" "$home/empty"
for i in $(seq $n); do
    sfs_as "$user" "$SFS_CTL" put "$home/empty" "/m/mine/f$i" || sfs_fail "create f$i"
done

victim=$(sfs_ctl listnodes | awk '$1 == 1 {print $5}')
[ -n "$victim" ] || sfs_fail "no pid for rank 1 in listnodes"
loop_log="$SFS_TEST_TMP/loop.log"
(
    for i in $(seq $n); do
        a=$(date +%s.%N)
        echo "started f$i"
        out=$(sfs_as "$user" "$SFS_CTL" put "$home/blob$i" "/m/mine/f$i" 2>&1)
        rc=$?
        echo "f$i rc=$rc start=$a end=$(date +%s.%N) $out"
    done
) >"$loop_log" 2>&1 &
loop=$!
# kill while the third put is under way: its requests in flight must go on
for _ in $(seq 1500); do grep -q "^started f3" "$loop_log" && break; sleep 0.02; done
grep -q "^started f3" "$loop_log" || { kill $loop; sfs_fail "the third put did not start in 30 s"; }
sleep 0.3
killed=$(date +%s.%N)
kill -9 "$victim"
sfs_log "injected: SIGKILL to storage rank 1 (pid $victim): the primaries 101 and 103, with $(grep -c rc= "$loop_log") of $n writes done"
for _ in $(seq 600); do kill -0 $loop 2>/dev/null || break; sleep 0.1; done
kill -0 $loop 2>/dev/null && { kill $loop; sfs_fail "the write loop still runs 60 s after the kill"; }
wait $loop
grep rc= "$loop_log"
[ "$(grep -c " rc=0 " "$loop_log")" -eq $n ] || sfs_fail "not every mirrored write succeeded"
pause=$(awk '/rc=/ {sub("start=", "", $3); sub("end=", "", $4); d = $4 - $3; if (d > m) m = d} END {printf "%.1f", m}' "$loop_log")
across=$(awk -v k="$killed" '/rc=/ {s = $3; e = $4; sub("start=", "", s); sub("end=", "", e); if (s < k && e > k) print $1}' "$loop_log")
[ -n "$across" ] || sfs_fail "no put was under way at the kill (the test did not exercise a retry in flight)"
echo "under way at the kill: $across (ended with exit 0)"
echo "the longest write across the failover: $pause s (offline timeout ${offline} s)"
awk -v p="$pause" -v o=$offline 'BEGIN {exit !(p < o + 10)}' || sfs_fail "the pause was $pause s"

sfs_ctl mirror list
sfs_ctl mirror list | grep -E "^1 +102 @.* good .*101 @.*needs-resync" >/dev/null ||
    sfs_fail "mirror list does not show 102 promoted and 101 needs-resync"
sfs_ctl mirror list | grep -E "^2 +104 @.* good .*103 @.*needs-resync" >/dev/null ||
    sfs_fail "mirror list does not show 104 promoted and 103 needs-resync"
targets=$(sfs_ctl listtargets)
echo "$targets"
for t in 102 104; do
    echo "$targets" | grep -qE "^$t .*primary good" || sfs_fail "listtargets: $t is not the primary"
done
for t in 101 103; do
    echo "$targets" | grep -qE "^$t .*secondary needs-resync" || sfs_fail "listtargets: $t is not needs-resync"
done
grep -qE "offline \(silent [0-9.]+ s; offline timeout ${offline}.0 s\)" "$SFS_SERVICE_LOG" ||
    sfs_fail "management did not say it promoted once the rank was offline"
grep "is its primary now" "$SFS_SERVICE_LOG" | sed 's/^/    /'

sfs_as "$user" "$SFS_CTL" get /m/mine/before - | cmp - "$home/blob1" ||
    sfs_fail "a file written before the fault does not read back from the survivors"
for i in $(seq $n); do
    sfs_as "$user" "$SFS_CTL" get "/m/mine/f$i" - | cmp - "$home/blob$i" ||
        sfs_fail "f$i does not read back (every byte) from the survivors"
done
echo "ok: all $((n + 1)) mirrored files read back byte for byte from the promoted members"
# a file removed while its pattern's members (101, 103) are away: the
# promoted members drop their copies now, the away ones once they are back
copies() { find "$SFS_STATE"/targets/*/chunks -name "$1" 2>/dev/null | wc -l; }
gone_id=$(sfs_ctl getentryinfo /m/mine/f2 | awk '/EntryID/ {print $2}')
[ -n "$gone_id" ] || sfs_fail "no EntryID for /m/mine/f2"
sfs_as "$user" "$SFS_CTL" rm /m/mine/f2 || sfs_fail "rm f2 during the failover"
for _ in $(seq 100); do
    [ -z "$(find "$SFS_STATE"/targets/10[24]/chunks -name "$gone_id")" ] && break
    sleep 0.1
done
[ -z "$(find "$SFS_STATE"/targets/10[24]/chunks -name "$gone_id")" ] ||
    sfs_fail "f2 removed during the failover: the promoted members 102/104 still hold its chunk files"
echo "ok: f2 removed during the failover: no copy left on the promoted members ($(copies "$gone_id") on the away ones)"
# the survivors log what changed while their buddies are away
for t in 102 104; do
    dir=$(echo "$targets" | awk -v t=$t '$1 == t {print $NF}')
    [ -s "$dir/mirror-changes" ] || sfs_fail "no change log on $t"
    echo "ok: $t's change log lists $(($(wc -l <"$dir/mirror-changes") - 1)) chunk files"
done

# the old primaries come back: the promoted members resync them, they stay
# secondaries, and both copies end byte-identical
for _ in $(seq 100); do sfs_ctl listnodes | awk '$1 == 1' | grep -q offline && break; sleep 0.1; done
"${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" --one-host --state "$SFS_STATE" --port "$SFS_PORT" \
    --rejoin 1 --ready-file "$SFS_TEST_TMP/rejoined" >>"$SFS_TEST_TMP/rejoin.log" 2>&1 &
rejoin=$!
for _ in $(seq 300); do [ -f "$SFS_TEST_TMP/rejoined" ] && break; sleep 0.1; done
[ -f "$SFS_TEST_TMP/rejoined" ] || { cat "$SFS_TEST_TMP/rejoin.log"; sfs_fail "rank 1 did not rejoin"; }
for _ in $(seq 300); do
    [ "$(sfs_ctl mirror list | grep -cE "good +[0-9]+ @.* good$")" -eq 2 ] && break
    sleep 0.1
done
sfs_ctl mirror list
sfs_ctl mirror list | grep -E "^1 +102 @.* good .*101 @.* good$" >/dev/null ||
    sfs_fail "after the rejoin, 102 is not the primary with 101 good"
sfs_ctl mirror list | grep -E "^2 +104 @.* good .*103 @.* good$" >/dev/null ||
    sfs_fail "after the rejoin, 104 is not the primary with 103 good"
# the removal of f2 waited for 101 and 103 (retried every 5 s)
for _ in $(seq 150); do [ "$(copies "$gone_id")" = 0 ] && break; sleep 0.1; done
sfs_expect_eq "$(copies "$gone_id")" 0 "chunk files of f2 (removed during the failover) once 101 and 103 are back"
for g in 102:101 104:103; do
    diff -r "$(echo "$targets" | awk -v t=${g%%:*} '$1 == t {print $NF}')/chunks" \
        "$(echo "$targets" | awk -v t=${g##*:} '$1 == t {print $NF}')/chunks" ||
        sfs_fail "chunk files of ${g%%:*} and ${g##*:} differ after the resync"
done
echo "ok: the returned old primaries are resynced secondaries, chunk files byte-identical"
sfs_as "$user" "$SFS_CTL" get /m/mine/f5 - | cmp - "$home/blob5" || sfs_fail "f5 after the resync"
# a client whose map is older than the failover asks the old primaries: they
# refuse (their copies may be behind while they resync), never serve
out=$(sfs_as "$user" env STRIPEFS_TEST_MIRROR_OLD_MAP=1 "$SFS_CTL" get /m/mine/f5 - 2>&1 >/dev/null)
rc=$?
[ $rc != 0 ] || sfs_fail "a read sent to the old primary 101 (a secondary now) was served"
echo "$out" | grep -q "which is not the primary of mirror group [12] now (target 10[24] is)" ||
    sfs_fail "the old primary's refusal does not say who is primary: $out"
echo "ok: a read sent with an old map to the old primary is refused: $(echo "$out" | tail -n 1)"
# a file whose pattern names the old primaries, removed after the failover:
# every copy goes, the promoted members' too (it was an orphan there)
gone_id=$(sfs_ctl getentryinfo /m/mine/before | awk '/EntryID/ {print $2}')
[ "$(copies "$gone_id")" = 4 ] || sfs_fail "/m/mine/before has $(copies "$gone_id") chunk files, not 4"
sfs_as "$user" "$SFS_CTL" rm /m/mine/before || sfs_fail "rm before"
for _ in $(seq 100); do [ "$(copies "$gone_id")" = 0 ] && break; sleep 0.1; done
sfs_expect_eq "$(copies "$gone_id")" 0 "chunk files of a file removed after the failover (both members)"
kill -9 $rejoin 2>/dev/null
wait $rejoin 2>/dev/null
exit 0
