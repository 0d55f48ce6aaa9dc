#!/usr/bin/env bash
# sfs_mdtest_lite (mdtest's phases, options and SUMMARY table, every result
# checked) through libstripefs-posix.so on 4 ranks, with the library also
# preloaded into mpirun itself: unique and shared directories, 2 iterations,
# files written and read back; then as an ordinary user with nothing but the
# config. The real mdtest, when at hand, is test_preload_mdtest.sh.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
sfs_pl_need tests/preload/sfs_mdtest_lite
LITE="$SFS_BUILD/tests/preload/sfs_mdtest_lite"
NP=${SFS_MDTEST_NP:-4}

# every phase of mdtest's SUMMARY table has a rate (Max > 0)
check_summary() { # file what
    local op
    for op in "Directory creation" "Directory stat" "Directory removal" "File creation" \
        "File stat" "File read" "File removal"; do
        awk -v op="$op" 'index($0, op) && $(NF - 3) + 0 > 0 {found = 1} END {exit !found}' "$1" ||
            sfs_fail "$2: no rate for '$op'"
    done
}

sfs_start_service 3 --targets 4
run_preloaded() { # mpirun ... with the library in every process, mpirun's included
    LD_PRELOAD="$SFS_PRELOAD" "${SFS_MPIRUN[@]}" -np "$NP" -x LD_PRELOAD -x STRIPEFS_CONFIG \
        -x STRIPEFS_PREFIX ${ASAN_OPTIONS:+-x ASAN_OPTIONS} "$@"
}

for args in "-n 200 -w 4096 -e 4096 -u -i 2" "-n 100 -w 1000 -e 1000"; do
    # shellcheck disable=SC2086
    run_preloaded "$LITE" -d /stripefs/lite $args >"$SFS_TEST_TMP/lite.out" 2>&1
    rc=$?
    cat "$SFS_TEST_TMP/lite.out"
    [ $rc -eq 0 ] || sfs_fail "sfs_mdtest_lite $args exited with $rc"
    grep -q "^PASSED: 0 errors" "$SFS_TEST_TMP/lite.out" || sfs_fail "sfs_mdtest_lite $args did not pass"
    check_summary "$SFS_TEST_TMP/lite.out" "sfs_mdtest_lite $args"
    sfs_expect_eq "$(sfs_ctl ls /lite | wc -l)" 0 "entries left by sfs_mdtest_lite $args"
done

# the same as an ordinary user, with nothing but the config (no secret): the
# servers run as root on this host, so the user's ranks reach them over TCP
if [ "$(id -u)" = 0 ]; then
    sfs_test_users
    sfs_ctl mkdir /users && sfs_ctl chmod 1777 /users || sfs_fail "mkdir /users (1777)"
    sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" "${SFS_MPIRUN[@]}" -np "$NP" -x LD_PRELOAD \
        -x STRIPEFS_CONFIG -x STRIPEFS_PREFIX ${ASAN_OPTIONS:+-x ASAN_OPTIONS} \
        "$LITE" -d /stripefs/users/lite-alice -n 100 -w 4096 -e 4096 -u | tee "$SFS_TEST_TMP/lite-alice.out" ||
        sfs_fail "sfs_mdtest_lite as sfsalice"
    grep -q "^PASSED: 0 errors" "$SFS_TEST_TMP/lite-alice.out" || sfs_fail "sfs_mdtest_lite as sfsalice did not pass"
    sfs_ctl ls -l /users
    sfs_ctl ls -l /users | grep -q "sfsalice.*lite-alice" ||
        sfs_fail "the run's directory is not sfsalice's"
    echo "ok: sfs_mdtest_lite passes as sfsalice (4 ranks, no secret, her own entries)"
fi
sfs_stop_service
