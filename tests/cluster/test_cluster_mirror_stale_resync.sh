#!/usr/bin/env bash
# A primary cut off and replaced must not copy its older chunk file over the
# promoted member's (docs/mirroring.md, "Only the primary resyncs"), on the
# four hosts of ci/cluster.sh: mirror group 301 (imaging-03, primary) + 401
# (imaging-04), management and metadata on imaging-01, sfsalice's client on
# imaging-02. A mirrored file of 4 MiB of 'A' (one chunk file) is written;
# then imaging-03 is cut from imaging-01 and from imaging-04 (blackhole
# routes), not from the client. The client writes 1 MiB of 'B' at offset 0:
# 301 applies it, its forward to 401 fails, it logs the chunk file for a
# resync of 401 and, its lease gone, does not acknowledge; management
# promotes 401, which takes the write. The client writes 1 MiB of 'C' at
# 2 MiB: to 401 alone. Then imaging-03 reaches imaging-04 again but still not
# management, so 301's map stays the old one, naming 301 the primary and 401
# online: 301 tries to resync its copy (no 'C') to 401 again and again. 401
# refuses (its map names it the primary); before 2026-12-06 it took the copy
# and the 'C' was lost (found by the cut matrix: zeros read back from a
# synced collective write). Checked: the file reads back B A C A while 301
# tries; 301 tried and was refused (its log, delivered once its host reaches
# imaging-01 again); after the full heal 301 drops its log, is resynced from
# 401, and both copies are byte-identical; `stripefs-ctl shutdown` stops
# every rank with exit 0.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/cluster/cluster_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
source "$SFS_SRC/tests/lib/sfs_mirror_fence.sh"
sfs_test_users
cluster_begin
cfg="$SFS_TEST_TMP/imaging.yaml"
d="$SFS_TEST_TMP/hosts"
cluster_mirror_config "$cfg" 301:401
cluster_start_service

cluster_alice_mirror_dir imaging-02 1 8m
home=$(sfs_user_home sfsalice)
mib() { head -c 1048576 /dev/zero | tr '\0' "$1"; }
for p in A B C; do mib $p >"$home/$p"; done
chmod 0644 "$home"/[ABC]
{ mib A; mib A; mib A; mib A; } >"$home/AAAA"
{ mib B; mib A; mib C; mib A; } >"$home/BACA"
chmod 0644 "$home/AAAA" "$home/BACA"
cluster_as_alice imaging-02 "$SFS_CTL" put "$home/AAAA" /m/mine/f || sfs_fail "put /m/mine/f"
info=$(ctl_on imaging-01 getentryinfo /m/mine/f)
echo "$info" | grep -q "+ Mirror group 1: primary 301 (good)" || sfs_fail "the file is not on group 1 with primary 301: $info"
# dd through the POSIX preload, as sfsalice on imaging-02: 1 MiB of $1 at MiB $2
pl_dd() {
    cluster_as_alice imaging-02 env LD_PRELOAD="$SFS_PRELOAD" STRIPEFS_PREFIX=/stripefs \
        ${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} \
        dd if="$home/$1" of=/stripefs/m/mine/f bs=1M seek="$2" count=1 conv=notrunc,fsync status=none
}

cluster_cut imaging-03 imaging-01
cluster_cut imaging-03 imaging-04
sfs_log "injected: imaging-03 (301, primary) cut from imaging-01 (management) and imaging-04 (401)"
pl_dd B 0 || sfs_fail "sfsalice's write of B at 0 failed during the cut (a pause was due, not an error)"
grep -q "mirror group 1: primary 301 offline" "$SFS_SERVICE_LOG" || sfs_fail "401 was not promoted"
pl_dd C 2 || sfs_fail "sfsalice's write of C at 2 MiB failed"
sfs_log "written: B at 0 (through the failover), C at 2 MiB (to 401 alone)"

cluster_heal imaging-03 imaging-04
sfs_log "healed: imaging-03 reaches imaging-04 again, still not management"
# 301's resync starts the offline timeout and a second after its forward
# failed, then every second: a few tries
sleep 10
cluster_as_alice imaging-02 "$SFS_CTL" get /m/mine/f - | cmp - "$home/BACA" ||
    sfs_fail "the file does not read back B A C A while 301 (cut off, its map old) tries to resync 401: an acknowledged write is lost"
echo "ok: the file reads back B A C A (every acknowledged byte) while 301 tries to resync 401"

cluster_heal
healed_at=$(date +%s.%N)
sfs_log "healed: imaging-03 reaches imaging-01 again"
cluster_wait_mirror imaging-02 "^1 +401 @.* good .*301 @.* good" ||
    sfs_fail "301 is not good again within 60 s of the heal"
# 301's log lines come through mpirun on imaging-01, some seconds after the heal
refused=$(cluster_wait_line "$SFS_SERVICE_LOG" ".*resync of target 401 from 301 stopped.*which is the group's primary now" 30) ||
    sfs_fail "301 never tried to resync 401 while cut off from management (the case was not exercised): $(grep "resync of target 401" "$SFS_SERVICE_LOG" | tail -n 3)"
awk -v r="$(mirror_epoch "$(echo "$refused" | awk '{print $1}')")" -v h="$healed_at" 'BEGIN {exit !(r < h)}' ||
    sfs_fail "301's first refused resync came only after management was back (the case was not exercised): $refused"
echo "ok: 301's resync was refused by 401 while 301 was still cut off from management: ${refused#*] }"
grep -q "target 301 is not its group's primary any more (401 is" "$SFS_SERVICE_LOG" ||
    sfs_fail "301 did not drop its change log once its map said 401 is primary"
chunk=$(find "$d/imaging-04/mnt/7t_drive/stripefs/chunks" -type f -size +0 | head -n 1)
[ -n "$chunk" ] || sfs_fail "no chunk file on 401"
cmp "$chunk" "$d/imaging-03/mnt/7t_drive/stripefs/chunks/${chunk#*/chunks/}" ||
    sfs_fail "301's copy differs from 401's after the resync"
cluster_as_alice imaging-02 "$SFS_CTL" get /m/mine/f - | cmp - "$home/BACA" ||
    sfs_fail "the file does not read back B A C A after the heal"
echo "ok: 301 was resynced from 401: both copies byte-identical, the file reads back B A C A"
cluster_stop_service imaging-02
exit 0
