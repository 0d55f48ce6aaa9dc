#!/usr/bin/env bash
# Every interposed POSIX call on stripefs through libstripefs-posix.so with
# exact errno values (tests/preload/sfs_posix_check.c): among them creates
# (open, creat, openat, mkdir, mkdirat, fopen, the mkstemp family, mkdtemp)
# whose modes must equal what the kernel gives the same calls on a local
# directory under six umasks, chown to other ids as root (-1 keeps an id),
# and times set to now or left alone; and readdir of a directory of 5000
# files paging through the service.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
sfs_pl_need tests/preload/sfs_posix_check
CHECK="$SFS_BUILD/tests/preload/sfs_posix_check"

sfs_start_service 3 --targets 4
mkdir -p "$SFS_TEST_TMP/local"
sfs_pl_checked "$CHECK" all /stripefs/posix "$SFS_TEST_TMP/local" >"$SFS_TEST_TMP/check.log" 2>&1
rc=$?
grep -v '^ok:' "$SFS_TEST_TMP/check.log"
[ $rc -eq 0 ] || sfs_fail "sfs_posix_check all (exit $rc)"
echo "ok: $(grep -c '^ok:' "$SFS_TEST_TMP/check.log") POSIX checks passed"

# 5000 names, in the "stripefs:" form this time: each exactly once
sfs_pl_checked "$CHECK" readdir stripefs:/many 5000 | grep -E 'readdir|seekdir|scandir|FAILED|PASSED' ||
    sfs_fail "readdir of 5000 entries"
sfs_expect_eq "$(sfs_ctl ls /many | wc -l)" 5000 "entries per stripefs-ctl ls"
sfs_stop_service
