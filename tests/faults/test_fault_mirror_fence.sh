#!/usr/bin/env bash
# Fencing (docs/mirroring.md, "Fencing"): the storage rank that holds the
# primaries (101, 103) is cut off from management only
# (STRIPEFS_TEST_DROP_HEARTBEATS: it sends management nothing and goes on
# serving clients), while sfsalice's client writes numbered records to a
# mirrored file through the map it started with. The rank's lease (half the
# offline timeout, from the last answered heartbeat's sending) runs out
# before management promotes the buddies; the primaries go on on their
# buddies' word (docs/mirroring.md, "The buddy's word": each change is
# taken by the secondary first) until management promoted the secondary
# and the secondary's map says so: it refuses the old primary's copies,
# which then answers the mirrored writes ESTALE; the client refreshes its
# map and writes to the new primary, which serves once the word it gave
# ran out. Checked: the old primary said it went on on its buddy's word
# (BEFORE the promotion), and that its buddy refused it; no write was
# acknowledged by the old primary after the new primary's first (their own
# logs of acknowledgements, storage debug level: two primaries never
# acknowledge at once); a second writer that never leaves the old
# primary (the old side of the cut) is refused from then on, and every
# record acknowledged to it reads back; writes went on through the new primary; every acknowledged
# record is on the new primary's chunk file, byte for byte, and reads back;
# a read sent to the old primary with an old map is refused (reads fenced),
# and an open made before the cut, which this host's old primary had
# handed its chunk file (same-host reads), reads another client's write
# made after the promotion (the old descriptor is dropped in time: the new
# primary's copy is read).
# A new mirrored file goes to the groups' current primaries (the chooser
# follows the map). The cut heals while the old primaries' rank keeps its
# old map: its lease is renewed, but it refuses a write sent with an old
# map (ESTALE, saying why) and creates no chunk file until a map asked for
# since the renewal is in. Then the service restarts: management read the promotions back from its
# state (docs/mirroring.md, "Management restarts"), the map names them.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/faults/mirror_lib.sh"
source "$SFS_SRC/tests/lib/sfs_mirror_fence.sh"
PROG="$SFS_BUILD/tests/progs/sfs_fence_writer"
sfs_test_users
user=sfsalice
offline=3
cut="$SFS_TEST_TMP/cut"
export STRIPEFS_TEST_DROP_HEARTBEATS="$cut"
export STRIPEFS_LOG_MASK="all=info,storage=debug"
mirror_service_start "$offline"
unset STRIPEFS_LOG_MASK
grep -q "says nothing to management while $cut.1 exists" "$SFS_SERVICE_LOG" ||
    sfs_fail "the servers did not take STRIPEFS_TEST_DROP_HEARTBEATS"
home=$(sfs_user_home "$user")
mirror_user_dir "$user" --numtargets 1 --chunksize 8m

# the open that outlives the promotion: it reads all 3 MB first (past the
# 1 MiB after which this host's storage rank hands it 101's chunk file),
# then waits for its input to end; it then expects the file as it will be
# after another client's write of 4 KiB of 'Z' at 2000000 (after the
# promotion, below)
READER="$SFS_BUILD/tests/progs/sfs_migrate_reader"
[ -x "$READER" ] || sfs_fail "tests/progs are not built (make check TESTS=)"
head -c 3000000 /dev/urandom >"$home/held-before" && chown "$user" "$home/held-before"
sfs_as "$user" "$SFS_CTL" put "$home/held-before" /m/mine/held || sfs_fail "put held"
cp "$home/held-before" "$home/held-want" && chown "$user" "$home/held-want"
head -c 4096 /dev/zero | tr '\0' Z | dd of="$home/held-want" bs=4096 seek=2000000 oflag=seek_bytes conv=notrunc status=none ||
    sfs_fail "dd"
mkfifo "$SFS_TEST_TMP/held.in" && chmod 0666 "$SFS_TEST_TMP/held.in"
sfs_as "$user" env STRIPEFS_LOG_MASK="all=info,client=debug" "$READER" --read-all \
    --stat /m/mine/records /m/mine/held "$home/held-want" <"$SFS_TEST_TMP/held.in" >"$SFS_TEST_TMP/held.out" 2>&1 &
held=$!
exec 5>"$SFS_TEST_TMP/held.in"
for _ in $(seq 300); do grep -q '^opened' "$SFS_TEST_TMP/held.out" && break; sleep 0.1; done
grep -q '^opened' "$SFS_TEST_TMP/held.out" || sfs_fail "the held reader did not open: $(cat "$SFS_TEST_TMP/held.out")"
held_primary=$(sfs_ctl getentryinfo /m/mine/held | awk '/Mirror group/ {print $6}')
grep -q "reading target $held_primary's chunk file directly" "$SFS_TEST_TMP/held.out" ||
    sfs_fail "the held reader was not handed $held_primary's chunk file: $(cat "$SFS_TEST_TMP/held.out")"

stop="$SFS_TEST_TMP/stop"
wlog="$SFS_TEST_TMP/writer.log"
# (5>&-: not a writer of the held reader's input, which must end when
# the test closes it)
sfs_as "$user" "$PROG" write /m/mine/records "$stop" 1500 >"$wlog" 2>"$SFS_TEST_TMP/writer.err" 5>&- &
writer=$!
# the writer on the old side of the cut: its map never changes
# (STRIPEFS_TEST_MIRROR_OLD_MAP: it writes to the config's primaries only),
# and it tries each refused record again until the end
olog="$SFS_TEST_TMP/oldside.log"
sfs_as "$user" env STRIPEFS_TEST_MIRROR_OLD_MAP=1 "$PROG" write-on /m/mine/oldside "$stop" 1500 \
    >"$olog" 2>"$SFS_TEST_TMP/oldside.err" 5>&- &
oldside=$!
for _ in $(seq 300); do [ "$(grep -c '^ack' "$wlog")" -ge 20 ] && [ "$(grep -c '^ack' "$olog")" -ge 20 ] && break; sleep 0.1; done
[ "$(grep -c '^ack' "$wlog")" -ge 20 ] || { cat "$SFS_TEST_TMP/writer.err"; sfs_fail "the writer did not start"; }
[ "$(grep -c '^ack' "$olog")" -ge 20 ] || { cat "$SFS_TEST_TMP/oldside.err"; sfs_fail "the old-side writer did not start"; }
touch "$cut.1"
sfs_log "injected: storage rank 1 (primaries 101, 103) cut off from management; $(grep -c '^ack' "$wlog") records acknowledged"

mirror_wait_promotion "is its primary now"
# writes go on through the new primary: 20 more acknowledgements after it
mirror_wait_acks_after "$wlog" $writer 20
# another client writes 4 KiB of 'Z' into the held file (through the new
# primary); the open made before the cut must read them (the old primary's
# chunk file, still handed to it, lacks them), and then its stat of the
# records file, which the writer has open for writing (so its size comes
# from the targets' CHUNK_STAT), must see the new primary's length: the
# old primary's lacks every record since the cut
sfs_as "$user" "$READER" /m/mine/held "$home/held-before" write 2000000 </dev/null ||
    sfs_fail "the write into the held file after the promotion"
cmp -s "$home/held-before" "$home/held-want" || sfs_fail "the write's expected bytes differ from the held reader's"
acked=$(grep -c '^ack' "$wlog")
exec 5>&-
wait $held || sfs_fail "the open made before the cut did not read another client's write made after the promotion: $(cat "$SFS_TEST_TMP/held.out")"
grep -E "directly|direct reads|^opened|^same|^stat" "$SFS_TEST_TMP/held.out"
seen=$(awk '$1 == "stat" {print $4}' "$SFS_TEST_TMP/held.out")
[ -n "$seen" ] && [ "$seen" -ge $((acked * 4096)) ] ||
    sfs_fail "the held reader's stat of /m/mine/records says ${seen:-nothing} bytes; $acked records (of 4096 bytes) were acknowledged before it"
echo "ok: an open made before the cut reads another client's write made after the promotion, and its stat of a file open for writing says $seen bytes ($acked records acknowledged before it)"
touch "$stop"
wait $oldside || { cat "$SFS_TEST_TMP/oldside.err"; sfs_fail "the old-side writer failed (exit $?)"; }
wait $writer
rc=$?
[ $rc -eq 0 ] || { cat "$SFS_TEST_TMP/writer.err"; sfs_fail "the writer failed (exit $rc)"; }
count=$(awk '$1 == "done" {print $2}' "$wlog")
after=$(mirror_acks_after "$wlog")
echo "promotion: $promoted"
[ "$after" -ge 20 ] || sfs_fail "only $after records were acknowledged after the promotion"
pause=$(awk '$1 == "ack" {if (last && $3 - last > m) m = $3 - last; last = $3} END {printf "%.1f", m}' "$wlog")
echo "writer: $count records acknowledged, $after after the promotion; longest pause $pause s (offline timeout $offline s)"

# no acknowledgement by an old primary after the new primary's first
# (the old one goes on on its buddy's word after its lease, until its buddy
# knows it was promoted; the buddy then waits out that word first)
acks() { # target: times of its acknowledgements as primary
    grep -E "mirror: target $1 acknowledges WRITE" "$SFS_SERVICE_LOG" | awk '{print $1}' |
        while read -r t; do mirror_epoch "$t"; done
}
old_acks=$( (acks 101; acks 103) | sort -n)
[ -n "$old_acks" ] || sfs_fail "no acknowledgement of the old primary was logged (storage=debug)"
last_old=$(echo "$old_acks" | tail -n 1)
first_new=$( (acks 102; acks 104) | sort -n | head -n 1)
[ -n "$first_new" ] || sfs_fail "no acknowledgement of the new primary was logged (storage=debug)"
echo "last acknowledgement by the old primary: $last_old; first by the new one: $first_new; promotion: $p_at"
awk -v l="$last_old" -v f="$first_new" 'BEGIN {exit !(l < f)}' ||
    sfs_fail "the old primary acknowledged $(echo "$old_acks" | awk -v f="$first_new" '$1 > f' | wc -l) writes after the new primary's first (two primaries)"
new_acks=$( (acks 102; acks 104) | awk -v p="$p_at" '$1 > p' | wc -l)
[ "$new_acks" -ge 20 ] || sfs_fail "only $new_acks writes acknowledged by the new primary after the promotion"
echo "ok: no write acknowledged by the old primary after the new primary's first; $new_acks by the new one"
# the old side: the writer that never left the old primary was refused
# from some point on, and every record acknowledged to it is on the new
# primary's copy (the buddy took it before the old primary's answer)
o_count=$(awk '$1 == "done" {print $2}' "$olog")
o_last=$(awk '$1 == "ack" {t = $3} END {print t}' "$olog")
o_refused=$(grep -c '^refused' "$olog")
echo "old-side writer: $o_count records acknowledged, the last at $o_last; $o_refused refusals, the first: $(grep -m1 '^refused' "$olog" | cut -c1-200)"
[ "$o_refused" -gt 0 ] || sfs_fail "the old-side writer was never refused"
awk -v l="$o_last" -v f="$first_new" 'BEGIN {exit !(l < f)}' ||
    sfs_fail "the old-side writer had a record acknowledged at $o_last, after the new primary's first acknowledgement at $first_new"
sfs_as "$user" "$SFS_CTL" get /m/mine/oldside "$home/oldside" || sfs_fail "get the old side's file"
"$PROG" check "$home/oldside" "$o_count" || sfs_fail "records acknowledged to the old-side writer do not read back"
echo "ok: the old side of the cut was refused once the new primary acted, and its $o_count acknowledged records read back"

# the old primary went on on its buddy's word once its lease ran out
# (before the promotion), until its buddy refused its copies as the
# primary; then it stopped, and said why
mirror_fenced_before_promotion "fencing: target 10[13] goes on as its mirror group's primary on its buddy 10[24]'s word"
grep -qE "fencing: target 10[13]'s buddy refused its copy as the group's primary now" "$SFS_SERVICE_LOG" ||
    sfs_fail "the old primary did not say that its buddy refused its copies as the new primary"
grep -qE "fencing: target 10[13] acknowledges no mirrored change from now on" "$SFS_SERVICE_LOG" ||
    sfs_fail "the old primary did not say that it stopped"
grep -E "refused: [A-Z_]+ on target 10[24]: it is its mirror group's primary now, but it gave its buddy" "$SFS_SERVICE_LOG" | head -n 1

# every acknowledged record is on the new primary's copy, and reads back
targets=$(sfs_ctl listtargets)
chunk=""
entry=$(sfs_ctl getentryinfo /m/mine/records | awk '$1 == "EntryID:" {print $2}')
[ -n "$entry" ] || sfs_fail "no entry id for /m/mine/records: $(sfs_ctl getentryinfo /m/mine/records)"
for t in 102 104; do
    dir=$(echo "$targets" | awk -v t=$t '$1 == t {print $NF}')
    f=$(find "$dir/chunks" -type f -name "$entry" -size +0 2>/dev/null | head -n 1)
    [ -n "$f" ] && chunk=$f
done
[ -n "$chunk" ] || sfs_fail "no chunk file on the new primaries"
"$PROG" check "$chunk" "$count" || sfs_fail "the new primary's copy lacks acknowledged records"
sfs_as "$user" "$SFS_CTL" get /m/mine/records "$home/records" || sfs_fail "get"
"$PROG" check "$home/records" "$count" || sfs_fail "acknowledged records do not read back"
# reads are fenced too: a client whose map is older than the promotion asks
# the cut-off old primary, whose own map still names it primary; its copy
# lacks every record written after the promotion, so it must refuse, not serve
out=$(sfs_as "$user" env STRIPEFS_TEST_MIRROR_OLD_MAP=1 "$SFS_CTL" get /m/mine/records - 2>&1 >"$home/old-read")
rc=$?
[ $rc != 0 ] || sfs_fail "the cut-off old primary served a read ($(stat -c %s "$home/old-read") bytes; $count records were acknowledged)"
echo "$out" | grep -qE "READ on target 10[13]: its rank's lease from management expired" ||
    sfs_fail "the old primary's refusal of a read does not give the lease's reason: $out"
echo "ok: a read sent with an old map to the cut-off old primary is refused: $(echo "$out" | tail -n 1)"


# a new mirrored file over both groups goes to their current primaries
# (the promoted 102 and 104: the config's 101 and 103 are cut off)
sfs_as "$user" "$SFS_CTL" setpattern --mirror --numtargets 2 /m/mine >/dev/null || sfs_fail "setpattern 2"
head -c 3000000 /dev/urandom >"$home/blob" && chown "$user" "$home/blob"
sfs_as "$user" "$SFS_CTL" put "$home/blob" /m/mine/new || sfs_fail "a new mirrored file after the promotion"
info=$(sfs_as "$user" "$SFS_CTL" getentryinfo /m/mine/new)
echo "$info" | grep -E "targets|Mirror group"
sfs_expect_eq "$(echo "$info" | awk '/Number of storage targets/ {print $6}')" 2 "groups of a mirrored file created after the promotion"
for g in "1: primary 102" "2: primary 104"; do
    echo "$info" | grep -q "+ Mirror group $g (good)" || sfs_fail "the new file is not on mirror group $g"
done
sfs_as "$user" "$SFS_CTL" get /m/mine/new - | cmp - "$home/blob" || sfs_fail "the new file does not read back"
echo "ok: a new mirrored file is placed on both groups' current primaries"

# management restarts (here with the whole service; test_fault_mgmt_rejoin.sh
# has it rejoin alone):
# the promotions were saved in its state (meta dir), so the map still names
# the promoted primaries, not the config's
# the cut heals while rank 1 still holds the map from before the promotion
# ($cut.1.map: it installs no new map, as a slow refresh after a real cut):
# management's answers renew its lease, and its map still names 101 and 103
# primary. Until a map asked for since is in, it must acknowledge nothing
# and create nothing: a late write admitted in that window made a chunk
# file of a removed file on the cut member only (the cut matrix, once)
old_dir=$(echo "$targets" | awk '$1 == 101 {print $NF}')
old_sums() { (cd "$old_dir/chunks" && find . -type f -exec md5sum {} + | sort); }
sums_before=$(old_sums)
touch "$cut.1.map"
rm -f "$cut.1"
for _ in $(seq 300); do grep -q "fencing: management answers this rank again after its lease had lapsed" "$SFS_SERVICE_LOG" && break; sleep 0.1; done
grep -q "fencing: management answers this rank again after its lease had lapsed" "$SFS_SERVICE_LOG" ||
    sfs_fail "the old primary's rank did not say its lease came back after a lapse"
reason="lease came back after it had lapsed and no cluster map asked for since is in yet"
out=$(sfs_as "$user" env STRIPEFS_TEST_MIRROR_OLD_MAP=1 "$SFS_CTL" get /m/mine/records - 2>&1 >"$home/old-read")
rc=$?
[ $rc != 0 ] || sfs_fail "the old primary, its lease back but its map from before the promotion, served a read ($(stat -c %s "$home/old-read") bytes; $count records were acknowledged)"
echo "$out" | grep -q "$reason" || sfs_fail "the old primary's refusal of a read with its lease back and an old map does not give that reason: $out"
head -c 100000 /dev/urandom >"$home/late" && chown "$user" "$home/late"
out=$(sfs_as "$user" env STRIPEFS_TEST_MIRROR_OLD_MAP=1 "$SFS_CTL" put "$home/late" /m/mine/held 2>&1)
rc=$?
[ $rc != 0 ] || sfs_fail "the old primary, its lease back but its map from before the promotion, acknowledged a write"
echo "$out" | grep -q "$reason" || sfs_fail "the old primary's refusal of a write with its lease back and an old map does not give that reason: $out"
[ "$(old_sums)" = "$sums_before" ] || sfs_fail "the old primary's chunk files changed while it held an old map: $(diff <(echo "$sums_before") <(old_sums) | head -n 4)"
echo "ok: back from the cut with an old map, the old primary refuses a read and a write and changes no chunk file: $(echo "$out" | tail -n 1)"
rm -f "$cut.1.map"
for _ in $(seq 300); do sfs_ctl listnodes | awk '$1 == 1' | grep -q online && break; sleep 0.1; done
[ -s "$SFS_STATE/meta/mirror-state" ] || sfs_fail "management saved no mirror state in $SFS_STATE/meta"
cat "$SFS_STATE/meta/mirror-state"
sfs_stop_service
sfs_start_service 3
sfs_ctl mirror list
sfs_ctl mirror list | grep -qE "^1 +102 @.* good .*101 @.*(needs-resync|resyncing|good)" ||
    sfs_fail "after management's restart, group 1's primary is not the promoted 102"
sfs_ctl mirror list | grep -qE "^2 +104 @.* good .*103 @" ||
    sfs_fail "after management's restart, group 2's primary is not the promoted 104"
grep -q "mirror group 1 (from $SFS_STATE/meta/mirror-state): primary 102" "$SFS_SERVICE_LOG" ||
    sfs_fail "management did not say it read the promotions back"
sfs_as "$user" "$SFS_CTL" get /m/mine/records "$home/records2" || sfs_fail "get after the restart"
"$PROG" check "$home/records2" "$count" || sfs_fail "acknowledged records after the restart"
echo "ok: after management's restart the map names the promoted primaries"
exit 0
