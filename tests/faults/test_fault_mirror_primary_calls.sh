#!/usr/bin/env bash
# The calls that go to every target of a mirrored file, not to one block's
# (truncate: TRUNCATE; fsync: FSYNC), made first thing after kill -9 of the
# storage rank that holds both groups' primaries, by sfsalice through the
# POSIX preload: each waits for the failover (docs/mirroring.md, "Failover:
# a primary lost") and succeeds, with exit 0, and the file then holds what
# a local ext4 file holds after the same calls. Their pauses are printed
# (benchmarks/failover.sh measures them against the offline timeout). Until
# 2026-12-06 they resent to the dead primary, whose failure UCX reports
# only at its keepalive, so the promotion was seen up to 2 s late; now they
# wait, as reads and writes do, for a map that names a live primary.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
source "$SFS_SRC/tests/faults/mirror_lib.sh"
command -v python3 >/dev/null || sfs_skip "python3 is not installed (it holds a file open across the kill)"
command -v truncate >/dev/null || sfs_skip "coreutils' truncate is not installed"
sfs_test_users
user=sfsalice
offline=3
mirror_service_start "$offline"
home=$(sfs_user_home "$user")
mirror_user_dir "$user" --numtargets 2 --chunksize 64k
head -c 3000000 /dev/urandom >"$home/data"
chown "$user" "$home/data"
for f in cut synced; do
    sfs_as "$user" "$SFS_CTL" put "$home/data" "/m/mine/$f" || sfs_fail "put $f"
done

# the fsync's writer: opens FILE, writes 200 KB at 1 MB (into both groups'
# chunks), with READY and GO (fifos) says so on READY and waits for a word
# on GO (after the kill), then fsyncs, and prints how long the fsync took
write_sync='
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
os.pwrite(fd, bytes([0x5a]) * 200000, 1000000)
if len(sys.argv) > 2:
    open(sys.argv[2], "w").write("written\n")
    open(sys.argv[3]).read()
t = time.monotonic()
os.fsync(fd)
print("fsync %.2f s" % (time.monotonic() - t))
os.close(fd)
'
ctl=$SFS_TEST_TMP/ctl
mkfifo "$ctl.ready" "$ctl.go"
chmod 0666 "$ctl.ready" "$ctl.go"
sfs_as "$user" env LD_PRELOAD="$SFS_PRELOAD" python3 -c "$write_sync" /stripefs/m/mine/synced \
    "$ctl.ready" "$ctl.go" >"$SFS_TEST_TMP/fsync.out" 2>&1 &
writer=$!
word=$(timeout 60 cat "$ctl.ready")
[ "$word" = written ] || { cat "$SFS_TEST_TMP/fsync.out"; sfs_fail "the writer did not write before the kill"; }

victim=$(sfs_ctl listnodes | awk '$1 == 1 {print $5}')
[ -n "$victim" ] || sfs_fail "no pid for rank 1 in listnodes"
kill -9 "$victim"
sfs_log "injected: SIGKILL to storage rank 1 (pid $victim): the primaries 101 and 103"
echo go >"$ctl.go"
a=$(date +%s.%N)
sfs_as "$user" env LD_PRELOAD="$SFS_PRELOAD" truncate -s 1234567 /stripefs/m/mine/cut ||
    sfs_fail "truncate during the failover failed"
b=$(date +%s.%N)
wait $writer || { cat "$SFS_TEST_TMP/fsync.out"; sfs_fail "fsync during the failover failed"; }
echo "truncate: $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b - a}') s, $(cat "$SFS_TEST_TMP/fsync.out") (killed at once; offline timeout $offline s)"
grep -q "is its primary now" "$SFS_SERVICE_LOG" || sfs_fail "no member was promoted"

# the same calls on a local file give what the stripefs files must hold
cp "$home/data" "$SFS_TEST_TMP/cut.local"
truncate -s 1234567 "$SFS_TEST_TMP/cut.local"
cp "$home/data" "$SFS_TEST_TMP/synced.local"
python3 -c "$write_sync" "$SFS_TEST_TMP/synced.local" >/dev/null
for f in cut synced; do
    sfs_as "$user" "$SFS_CTL" get "/m/mine/$f" - | cmp - "$SFS_TEST_TMP/$f.local" ||
        sfs_fail "$f after the failover differs from the same calls on a local file"
    size=$(sfs_as "$user" env LD_PRELOAD="$SFS_PRELOAD" stat -c %s "/stripefs/m/mine/$f")
    [ "$size" = "$(stat -c %s "$SFS_TEST_TMP/$f.local")" ] ||
        sfs_fail "$f: stat says $size bytes, the local file has $(stat -c %s "$SFS_TEST_TMP/$f.local")"
done
echo "ok: truncated and synced across the failover: bytes and sizes as on a local file"
