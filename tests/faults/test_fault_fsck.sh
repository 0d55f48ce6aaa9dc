#!/usr/bin/env bash
# stripefs-fsck: a consistent file system checks clean; injected damage
# (orphaned chunk file, chunk file on a target outside its pattern, dangling
# name, orphan inode) is reported, --repair fixes it, and a second check is
# clean; the files that were not damaged read back unchanged.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
FSCK="$SFS_BUILD/stripefs-fsck"
CORRUPT="$SFS_BUILD/tests/progs/sfs_meta_corrupt"

sfs_start_service 3 --targets 4
sfs_ctl mkdir /d /two || sfs_fail "mkdir"
sfs_ctl setpattern --numtargets 2 --chunksize 64k /two || sfs_fail "setpattern"
head -c 3000000 /dev/urandom >"$SFS_TEST_TMP/keep"
for f in /d/keep /d/dangling /d/orphan /two/narrow; do
    sfs_ctl put "$SFS_TEST_TMP/keep" "$f" || sfs_fail "put $f"
done
sfs_ctl rm /d/orphan-free 2>/dev/null
"$FSCK" || sfs_fail "fsck of a consistent file system"
echo "ok: a consistent file system checks clean"

# chunk-level damage, while the service runs
narrow=$(sfs_ctl getentryinfo /two/narrow)
id=$(echo "$narrow" | awk '/EntryID/ {print $2}')
used=$(echo "$narrow" | awk '/^  \+ / {print $2}' | tr '\n' ' ')
outside=""
for t in 101 102 103 104; do case " $used " in *" $t "*) ;; *) outside=$t ;; esac; done
sub=${id: -2}
src=$(find "$SFS_STATE"/targets/*/chunks -name "$id" | head -n 1)
mkdir -p "$SFS_STATE/targets/$outside/chunks/$sub"
cp "$src" "$SFS_STATE/targets/$outside/chunks/$sub/$id"
cp "$src" "$SFS_STATE/targets/101/chunks/ee/00000000deadbeee"
sfs_log "injected: a copy of entry $id's chunk on target $outside (its pattern: $used) and an orphaned chunk file deadbeee on 101"

# metadata damage needs the service stopped
sfs_stop_service
"$CORRUPT" "$SFS_STATE/meta" drop-inode /d/dangling || sfs_fail "inject a dangling name"
"$CORRUPT" "$SFS_STATE/meta" drop-name /d/orphan || sfs_fail "inject an orphan inode"
sfs_log "injected: /d/dangling's inode removed, /d/orphan's name removed"
sfs_start_service 3 --targets 4

"$FSCK" >"$SFS_TEST_TMP/fsck1.out"
rc=$?
cat "$SFS_TEST_TMP/fsck1.out"
sfs_expect_eq "$rc" 1 "fsck exit status with damage"
grep -q "dangling entry: 'dangling'" "$SFS_TEST_TMP/fsck1.out" || sfs_fail "the dangling name is not reported"
grep -q "orphan file" "$SFS_TEST_TMP/fsck1.out" || sfs_fail "the orphan inode is not reported"
grep -q "orphaned chunk file 00000000deadbeee" "$SFS_TEST_TMP/fsck1.out" || sfs_fail "the orphaned chunk file is not reported"
grep -q "target $outside: chunk file of entry $id .*not in its pattern" "$SFS_TEST_TMP/fsck1.out" \
    || sfs_fail "the misplaced chunk file is not reported"

"$FSCK" --repair >"$SFS_TEST_TMP/fsck2.out"
rc=$?
cat "$SFS_TEST_TMP/fsck2.out"
sfs_expect_eq "$rc" 0 "fsck --repair exit status"
"$FSCK" >"$SFS_TEST_TMP/fsck3.out" || { cat "$SFS_TEST_TMP/fsck3.out"; sfs_fail "not clean after repair"; }
tail -n 1 "$SFS_TEST_TMP/fsck3.out"
[ -e "$SFS_STATE/targets/101/chunks/ee/00000000deadbeee" ] && sfs_fail "the orphaned chunk file is still there"
sfs_expect_fail "no such file" sfs_ctl stat /d/dangling
for f in /d/keep /two/narrow; do
    sfs_ctl get "$f" "$SFS_TEST_TMP/back" || sfs_fail "get $f"
    cmp "$SFS_TEST_TMP/keep" "$SFS_TEST_TMP/back" || sfs_fail "$f changed"
done
echo "ok: undamaged files read back unchanged after the repair"
sfs_stop_service
