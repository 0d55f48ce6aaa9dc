#!/usr/bin/env bash
# An open that outlives a failover on the old primary's host
# (docs/mirroring.md, "Fencing"): sfsalice's reader opens a mirrored file
# and reads it until this host's storage rank hands it the primary's chunk
# file (same-host reads: it then reads with pread, no server involved).
# kill -9 of that rank (primaries 101, 103); management promotes 102; a
# second client writes 4 KiB into the file through the new primary. The
# reader, still open, must read that write: the descriptor of the old
# primary's chunk file (still on disk, still readable) lacks it. It is used
# only for 2/5 of the offline timeout after it was asked for, then asked
# for again, which the lost rank cannot grant. Then the promoted member's
# rank is killed too: with both members of the group away, a stat of the
# file (open for writing, so its size comes from the targets) says the
# size is unknown at once, without waiting for a failover that cannot come.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/faults/mirror_lib.sh"
READER="$SFS_BUILD/tests/progs/sfs_migrate_reader"
[ -x "$READER" ] || sfs_fail "tests/progs are not built (make check TESTS=)"
sfs_test_users
user=sfsalice
offline=3
mirror_service_start "$offline"
home=$(sfs_user_home "$user")
mirror_user_dir "$user" --numtargets 1 --chunksize 8m
head -c 3000000 /dev/urandom >"$home/before" && chown "$user" "$home/before"
sfs_as "$user" "$SFS_CTL" put "$home/before" /m/mine/held || sfs_fail "put held"
primary=$(sfs_ctl getentryinfo /m/mine/held | awk '/Mirror group/ {print $6}')
case "$primary" in 101 | 103) ;; *) sfs_fail "the file's primary is '$primary', not 101 or 103" ;; esac
# what the file will hold after the second client's write
cp "$home/before" "$home/want" && chown "$user" "$home/want"
head -c 4096 /dev/zero | tr '\0' Z |
    dd of="$home/want" bs=4096 seek=2000000 oflag=seek_bytes conv=notrunc status=none || sfs_fail "dd"

mkfifo "$SFS_TEST_TMP/held.in" && chmod 0666 "$SFS_TEST_TMP/held.in"
sfs_as "$user" env STRIPEFS_LOG_MASK="all=info,client=debug" "$READER" --read-all /m/mine/held \
    "$home/want" <"$SFS_TEST_TMP/held.in" >"$SFS_TEST_TMP/held.out" 2>&1 &
held=$!
exec 5>"$SFS_TEST_TMP/held.in"
for _ in $(seq 300); do grep -q '^opened' "$SFS_TEST_TMP/held.out" && break; sleep 0.1; done
grep -q '^opened' "$SFS_TEST_TMP/held.out" || sfs_fail "the reader did not open: $(cat "$SFS_TEST_TMP/held.out")"
grep -q "reading target $primary's chunk file directly" "$SFS_TEST_TMP/held.out" ||
    sfs_fail "the reader was not handed $primary's chunk file: $(cat "$SFS_TEST_TMP/held.out")"

victim=$(sfs_ctl listnodes | awk '$1 == 1 {print $5}')
[ -n "$victim" ] || sfs_fail "no pid for rank 1 in listnodes"
kill -9 "$victim"
sfs_log "injected: SIGKILL to storage rank 1 (pid $victim): the primaries 101 and 103"
for _ in $(seq 300); do sfs_ctl mirror list | grep -qE "^[12] +10[24] @" && break; sleep 0.1; done
sfs_ctl mirror list
promoted=$((primary + 1))
sfs_ctl mirror list | grep -qE "^[12] +$promoted @.* good" || sfs_fail "$promoted was not promoted in 30 s"
# the second client's write goes to the promoted member
sfs_as "$user" "$READER" /m/mine/held "$home/before" write 2000000 </dev/null ||
    sfs_fail "the write into the held file after the failover"
cmp -s "$home/before" "$home/want" || sfs_fail "the write's expected bytes differ from the reader's"
exec 5>&-
wait $held
rc=$?
grep -E "directly|direct reads|^opened|^same|FAILED" "$SFS_TEST_TMP/held.out"
[ $rc = 0 ] || sfs_fail "the open made before the failover did not read the write made after it (exit $rc)"
echo "ok: an open made before the failover, handed the old primary's chunk file, reads a write made after it"
sfs_as "$user" "$SFS_CTL" get /m/mine/held - | cmp - "$home/want" || sfs_fail "the file does not read back"

# both members away: a writer holds a new file open (so that a stat asks
# its targets: the metadata server does not know its size), then the rank
# of the promoted members (every primary now) is killed too
WRITER="$SFS_BUILD/tests/progs/sfs_fence_writer"
[ -x "$WRITER" ] || sfs_fail "tests/progs are not built (make check TESTS=)"
wlog="$SFS_TEST_TMP/w.log"
sfs_as "$user" "$WRITER" write /m/mine/w "$SFS_TEST_TMP/stop" 100000 >"$wlog" 2>"$SFS_TEST_TMP/w.err" &
writer=$!
for _ in $(seq 300); do [ "$(grep -c '^ack' "$wlog")" -ge 5 ] && break; sleep 0.1; done
[ "$(grep -c '^ack' "$wlog")" -ge 5 ] || sfs_fail "the writer did not start: $(cat "$SFS_TEST_TMP/w.err")"
w_primary=$(sfs_ctl getentryinfo /m/mine/w | awk '/Mirror group/ {print $6}')
case "$w_primary" in 102 | 104) ;; *) sfs_fail "the new file's primary is '$w_primary', not a promoted member" ;; esac
second=$(sfs_ctl listnodes | awk '$1 == 2 {print $5}')
[ -n "$second" ] || sfs_fail "no pid for rank 2 in listnodes"
kill -9 "$second"
sfs_log "injected: SIGKILL to storage rank 2 (pid $second): the promoted primaries, so both members of each group are away"
# offline, not probably-offline: management has given up on it (and
# promoted nothing: no buddy was good)
for _ in $(seq 300); do sfs_ctl listnodes | awk '$1 == 2' | grep -q " offline" && break; sleep 0.1; done
sfs_ctl listnodes | awk '$1 == 2' | grep -q " offline" || sfs_fail "rank 2 is not offline in 30 s: $(sfs_ctl listnodes)"
out=$(sfs_as "$user" env STRIPEFS_LOG_MASK="all=info" "$SFS_CTL" stat /m/mine/w 2>&1)
echo "$out" | grep "Size:"
echo "$out" | grep -q "Size: unknown (at least 0; storage target $w_primary did not answer)" ||
    sfs_fail "the stat with both members away does not say the size is unknown: $out"
echo "$out" | grep -q "waiting for its failover" &&
    sfs_fail "the stat waited for a failover with both members of the group away: $out"
echo "ok: with both members away a stat says the size is unknown without waiting for a failover"
kill -9 $writer 2>/dev/null
exit 0
