#!/usr/bin/env bash
# Rebuild of a mirror member whose disk was lost (docs/mirroring.md,
# "Rebuild"): mirrored files are written, the secondaries' rank is killed,
# target 102's directory is emptied (a new disk), the rank rejoins: 102 is
# `bad` (and files read back from 101 meanwhile), a normal user's rebuild
# and a rebuild of a good member are refused, `stripefs-ctl mirror rebuild
# 102` starts copying every chunk file of 101 to it (102 is a slow disk) and
# a file is written meanwhile; the primaries' rank is killed mid-rebuild:
# 102 stays bad, is not promoted, and when the rank rejoins 101 finishes
# the rebuild by itself, after what it had copied; 102 is good and holds the same chunk files as 101;
# then the primaries' rank is killed again and every file reads back from
# the rebuilt member.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/faults/mirror_lib.sh"
sfs_test_users
user=sfsalice
mirror_service_start 3
home=$(sfs_user_home "$user")
files="a b c d e f"
for f in $files late; do head -c 2000000 /dev/urandom >"$home/$f"; done
chown "$user" "$home"/*
mirror_user_dir "$user" --numtargets 2 --chunksize 64k
for f in $files; do sfs_as "$user" "$SFS_CTL" put "$home/$f" "/m/mine/$f" || sfs_fail "put $f"; done
targets=$(sfs_ctl listtargets)
dir_of() { echo "$targets" | awk -v t=$1 '$1 == t {print $NF}'; }
lost=$(dir_of 102)
[ -d "$lost/chunks" ] || sfs_fail "no chunk directory for 102 in: $targets"
[ "$(find "$lost/chunks" -type f | wc -l)" -gt 0 ] || sfs_fail "102 holds no chunk files before the loss"

# each member tells its buddy its disk id at start: 101 knows 102's before
# the loss (a disk lost before its buddy ever heard of it is not found)
for _ in $(seq 300); do [ -s "$(dir_of 101)/mirror-buddy" ] && break; sleep 0.1; done
grep -q "target 102 disk " "$(dir_of 101)/mirror-buddy" ||
    sfs_fail "101 did not learn 102's disk id: $(cat "$(dir_of 101)/mirror-buddy" 2>&1)"
victim=$(sfs_ctl listnodes | awk '$1 == 2 {print $5}')
kill -9 "$victim"
sfs_log "injected: SIGKILL to storage rank 2 (pid $victim), then 102's directory emptied (a new disk)"
rm -rf "$lost"
mkdir "$lost"
# the new disk is slow (1 MB/s, emulated), so that the rebuild can be seen
# under way and its rank killed in the middle
sed -i -E "/id: 102[,}]/ s/\}[[:space:]]*$/, bandwidth: 1M}/" "$SFS_STATE/stripefs.yaml"
grep -E "id: 102[,}].*bandwidth: 1M" "$SFS_STATE/stripefs.yaml" >/dev/null ||
    sfs_fail "102's bandwidth not set: $(grep -n "102" "$SFS_STATE/stripefs.yaml")"
for _ in $(seq 100); do sfs_ctl listnodes | awk '$1 == 2' | grep -q offline && break; sleep 0.1; done
"${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" --one-host --state "$SFS_STATE" --port "$SFS_PORT" \
    --rejoin 2 --ready-file "$SFS_TEST_TMP/rejoined" >>"$SFS_TEST_TMP/rejoin.log" 2>&1 &
rejoin=$!
for _ in $(seq 300); do [ -f "$SFS_TEST_TMP/rejoined" ] && break; sleep 0.1; done
[ -f "$SFS_TEST_TMP/rejoined" ] || { cat "$SFS_TEST_TMP/rejoin.log"; sfs_fail "rank 2 did not rejoin"; }
# a member's state in `mirror list`: "101 @ rank 1 on HOST [online] good"
state_of() {
    sfs_ctl mirror list | grep -oE "(^| )$1 @ rank [0-9]+ on [^ ]+ \[[a-z-]+\] +[a-z-]+" |
        awk '{print $NF}'
}
for _ in $(seq 300); do [ "$(state_of 102)" = bad ] && break; sleep 0.1; done
sfs_ctl mirror list
[ "$(state_of 102)" = bad ] || sfs_fail "102 is not bad after coming back on an empty directory"
sfs_ctl listtargets | awk '$1 == 102' | grep -q "secondary bad" ||
    sfs_fail "listtargets does not show 102 bad: $(sfs_ctl listtargets)"
echo "ok: 102, back on an empty directory, is bad"
for _ in $(seq 300); do [ "$(state_of 104)" = good ] && break; sleep 0.1; done
[ "$(state_of 104)" = good ] || sfs_fail "104 (its directory kept) is not good: $(sfs_ctl mirror list)"
echo "ok: 104, its directory kept, is good"
# 102 holds nothing: a read served by it would not give the bytes back
for f in $files; do
    sfs_as "$user" "$SFS_CTL" get "/m/mine/$f" - | cmp - "$home/$f" ||
        sfs_fail "/m/mine/$f does not read back while 102 is bad"
done
echo "ok: every file reads back while 102 is bad (from 101, not from 102)"

sfs_expect_fail "administrator" sfs_as "$user" "$SFS_CTL" mirror rebuild 102
sfs_expect_fail "nothing to rebuild" sfs_ctl mirror rebuild 104
sfs_expect_fail "no target 999" sfs_ctl mirror rebuild 999
[ "$(state_of 102)" = bad ] || sfs_fail "102 is not bad after the refused rebuilds"

t0=$(date +%s.%N)
sfs_ctl mirror rebuild 102 || sfs_fail "mirror rebuild 102"
# a file written during the rebuild reaches 102 too: 101 serves alone and
# logs it; the resync after the full pass copies it
sfs_as "$user" "$SFS_CTL" put "$home/late" /m/mine/late || sfs_fail "put during the rebuild"
seen=""
for _ in $(seq 300); do
    seen=$(sfs_ctl mirror list | grep -oE "rebuilding [1-9][0-9]*/[0-9]+" | head -n 1)
    [ -n "$seen" ] && break
    sleep 0.1
done
[ -n "$seen" ] || sfs_fail "no rebuild progress seen: $(sfs_ctl mirror list)"
sfs_ctl listtargets | awk '$1 == 102' | grep -qE "secondary rebuilding [0-9]+/[0-9]+" ||
    sfs_fail "listtargets shows no rebuild progress for 102: $(sfs_ctl listtargets)"
echo "ok: the rebuild is under way: mirror list and listtargets show $seen"

# the copying member is lost mid-rebuild: 102 stays bad (not promoted), and
# 101's rank, back, finishes the rebuild by itself
victim=$(sfs_ctl listnodes | awk '$1 == 1 {print $5}')
kill -9 "$victim"
sfs_log "injected: SIGKILL to storage rank 1 (pid $victim), the primaries, mid-rebuild ($seen)"
for _ in $(seq 300); do sfs_ctl listnodes | awk '$1 == 1' | grep -q offline && break; sleep 0.1; done
for _ in $(seq 100); do [ "$(state_of 104)" = good ] && sfs_ctl mirror list | grep -qE "^2 +104 @" && break; sleep 0.1; done
sfs_ctl mirror list
sfs_ctl mirror list | grep -qE "^1 +101 @" || sfs_fail "the bad 102 was promoted: $(sfs_ctl mirror list)"
case "$(state_of 102)" in
bad | rebuilding) ;; # the last progress management heard
*) sfs_fail "102 is not bad after its rebuilder was lost" ;;
esac
echo "ok: with 101 lost mid-rebuild, 102 is still bad and not promoted (104 is, it was good)"
"${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" --one-host --state "$SFS_STATE" --port "$SFS_PORT" \
    --rejoin 1 --ready-file "$SFS_TEST_TMP/rejoined1" >>"$SFS_TEST_TMP/rejoin1.log" 2>&1 &
rejoin1=$!
for _ in $(seq 300); do [ -f "$SFS_TEST_TMP/rejoined1" ] && break; sleep 0.1; done
[ -f "$SFS_TEST_TMP/rejoined1" ] || { cat "$SFS_TEST_TMP/rejoin1.log"; sfs_fail "rank 1 did not rejoin"; }
for _ in $(seq 900); do
    [ "$(sfs_ctl mirror list | grep -cE "good +[0-9]+ @.* good$")" -eq 2 ] && break
    sleep 0.1
done
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
sfs_ctl mirror list
sfs_ctl listtargets
[ "$(state_of 102)" = good ] || sfs_fail "102 is not good after its rebuild resumed"
[ "$(sfs_ctl mirror list | grep -cE "good +[0-9]+ @.* good$")" -eq 2 ] ||
    sfs_fail "not every member is good after the rebuild and the resync of 103"
echo "ok: 101 back resumed the rebuild by itself; 102 good $took s after the command"
grep -h "rebuild of target\|resync of target 102\|buddy 102 lost" "$SFS_SERVICE_LOG" \
    "$SFS_TEST_TMP/rejoin1.log" | sed 's/^[^]]*] /rebuild: /'
grep -q "resync of target 102 from 101: [1-9]" "$SFS_TEST_TMP/rejoin1.log" ||
    sfs_fail "no change made during the rebuild was resynced after it"
resumed=$(grep -oE "rebuild of target 102 from 101: [0-9]+ of [0-9]+" "$SFS_TEST_TMP/rejoin1.log" | head -n 1)
left=$(echo "$resumed" | awk '{print $7}') all=$(echo "$resumed" | awk '{print $9}')
[ -n "$left" ] && [ "$left" -lt "$all" ] ||
    sfs_fail "the resumed rebuild did not skip what was copied before the kill: '$resumed'"
echo "ok: the resumed rebuild copied $left of $all chunk files (the rest was copied before the kill)"
[ -e "$(dir_of 101)/mirror-rebuild" ] && sfs_fail "101's rebuild flag is still there"
for g in 101:102 103:104; do
    p=$(dir_of ${g%%:*}) s=$(dir_of ${g##*:})
    diff -r "$p/chunks" "$s/chunks" || sfs_fail "chunk files of ${g%%:*} and ${g##*:} differ after the rebuild"
    echo "ok: ${g%%:*} and ${g##*:}: $(find "$p/chunks" -type f | wc -l) chunk files, byte-identical"
done

# the emulated slow disk is for the rebuild only: 102's rank restarts
# without it (a rebuilt member is no new disk: it resyncs, it is not bad)
sed -i -E "/id: 102[,}]/ s/, bandwidth: 1M\}/}/" "$SFS_STATE/stripefs.yaml"
victim=$(sfs_ctl listnodes | awk '$1 == 2 {print $5}')
kill -9 "$victim"
wait $rejoin 2>/dev/null
sfs_log "injected: SIGKILL to storage rank 2 (pid $victim), to restart it without the slow disk"
for _ in $(seq 300); do sfs_ctl listnodes | awk '$1 == 2' | grep -q offline && break; sleep 0.1; done
rm -f "$SFS_TEST_TMP/rejoined"
"${SFS_MPIRUN[@]}" -np 1 "$SFS_SERVER" --one-host --state "$SFS_STATE" --port "$SFS_PORT" \
    --rejoin 2 --ready-file "$SFS_TEST_TMP/rejoined" >>"$SFS_TEST_TMP/rejoin.log" 2>&1 &
rejoin=$!
for _ in $(seq 300); do [ -f "$SFS_TEST_TMP/rejoined" ] && break; sleep 0.1; done
[ -f "$SFS_TEST_TMP/rejoined" ] || { cat "$SFS_TEST_TMP/rejoin.log"; sfs_fail "rank 2 did not rejoin again"; }
for _ in $(seq 600); do
    [ "$(sfs_ctl mirror list | grep -cE "good +[0-9]+ @.* good$")" -eq 2 ] && break
    sleep 0.1
done
[ "$(sfs_ctl mirror list | grep -cE "good +[0-9]+ @.* good$")" -eq 2 ] ||
    sfs_fail "not every member is good after rank 2 restarted: $(sfs_ctl mirror list)"
echo "ok: rank 2 restarted: the rebuilt 102 is resynced, not bad again"

victim=$(sfs_ctl listnodes | awk '$1 == 1 {print $5}')
kill -9 "$victim"
sfs_log "injected: SIGKILL to storage rank 1 (pid $victim): the primaries of group 1"
for f in $files late; do
    sfs_as "$user" "$SFS_CTL" get "/m/mine/$f" - | cmp - "$home/$f" || {
        tail -n 30 "$SFS_TEST_TMP/rejoin.log" "$SFS_TEST_TMP/rejoin1.log"
        sfs_fail "/m/mine/$f does not read back from the rebuilt 102"
    }
done
sfs_ctl mirror list
echo "ok: every file reads back from the rebuilt member after losing the primaries"
kill -9 $rejoin $rejoin1 2>/dev/null
wait $rejoin $rejoin1 2>/dev/null
exit 0
