#!/usr/bin/env bash
# The real mdtest (IOR's) through libstripefs-posix.so, with the library also
# preloaded into mpirun itself, and sfs_mdtest_lite with the same options
# beside it: both SUMMARY tables have a rate for every phase, and nothing is
# left behind. Debian ships no IOR/mdtest package and its source cannot be
# fetched here, so without one this is a skip saying so: SFS_MDTEST=/path/to/
# mdtest, or SFS_IOR_SRC=/path/to/an/ior/source/tree to build it here (or an
# mdtest on PATH). sfs_mdtest_lite alone runs always (test_preload_mdtest_lite.sh).
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
source "$SFS_SRC/tests/preload/preload_lib.sh"
sfs_pl_need tests/preload/sfs_mdtest_lite
LITE="$SFS_BUILD/tests/preload/sfs_mdtest_lite"
NP=${SFS_MDTEST_NP:-4}

mdtest=${SFS_MDTEST:-}
if [ -z "$mdtest" ] && [ -n "${SFS_IOR_SRC:-}" ]; then
    sfs_log "building mdtest from $SFS_IOR_SRC"
    cp -a "$SFS_IOR_SRC" "$SFS_TEST_TMP/ior" || sfs_fail "copy $SFS_IOR_SRC"
    ( cd "$SFS_TEST_TMP/ior" && ./bootstrap && ./configure CC=mpicc.openmpi MPICC=mpicc.openmpi &&
      make -j"$(nproc)" -C src mdtest ) >"$SFS_TEST_TMP/ior-build.log" 2>&1 ||
        { tail -n 30 "$SFS_TEST_TMP/ior-build.log"; sfs_fail "building mdtest from $SFS_IOR_SRC"; }
    mdtest="$SFS_TEST_TMP/ior/src/mdtest"
fi
[ -n "$mdtest" ] || mdtest=$(command -v mdtest || true)
[ -n "$mdtest" ] || sfs_skip "no mdtest here (Debian 12 ships no IOR/mdtest package and its source" \
    "is not fetched): set SFS_MDTEST=/path/to/mdtest or SFS_IOR_SRC=/path/to/ior-source;" \
    "sfs_mdtest_lite runs in test_preload_mdtest_lite.sh"
[ -x "$mdtest" ] || sfs_fail "no executable mdtest at $mdtest"

# every phase of mdtest's SUMMARY table has a rate (Max > 0)
check_summary() { # file what
    local op
    for op in "Directory creation" "Directory stat" "Directory removal" "File creation" \
        "File stat" "File read" "File removal"; do
        awk -v op="$op" 'index($0, op) && $(NF - 3) + 0 > 0 {found = 1} END {exit !found}' "$1" ||
            sfs_fail "$2: no rate for '$op'"
    done
}
# "Operation: mdtest-rate lite-rate" per phase (mean column)
compare_summaries() { # mdtest.out lite.out
    local op
    for op in "Directory creation" "Directory stat" "Directory removal" "File creation" \
        "File stat" "File read" "File removal"; do
        printf '   %-20s mdtest %12s   sfs_mdtest_lite %12s ops/s\n' "$op" \
            "$(awk -v op="$op" 'index($0, op) {print $(NF - 1); exit}' "$1")" \
            "$(awk -v op="$op" 'index($0, op) {print $(NF - 1); exit}' "$2")"
    done
}

sfs_start_service 3 --targets 4
run_preloaded() { # mpirun ... with the library in every process, mpirun's included
    LD_PRELOAD="$SFS_PRELOAD" "${SFS_MPIRUN[@]}" -np "$NP" -x LD_PRELOAD -x STRIPEFS_CONFIG \
        -x STRIPEFS_PREFIX ${ASAN_OPTIONS:+-x ASAN_OPTIONS} "$@"
}
sfs_ctl mkdir /mdt /lite || sfs_fail "mkdir /mdt /lite"
for args in "-n 100 -i 1" "-n 100 -i 1 -u -w 4096 -e 4096"; do
    # shellcheck disable=SC2086
    run_preloaded "$mdtest" -a POSIX -d /stripefs/mdt $args >"$SFS_TEST_TMP/mdtest.out" 2>&1
    rc=$?
    cat "$SFS_TEST_TMP/mdtest.out"
    [ $rc -eq 0 ] || sfs_fail "mdtest $args exited with $rc"
    check_summary "$SFS_TEST_TMP/mdtest.out" "mdtest $args"
    grep -qiE "error|abort" "$SFS_TEST_TMP/mdtest.out" && sfs_fail "mdtest $args reported errors"
    # shellcheck disable=SC2086
    run_preloaded "$LITE" -d /stripefs/lite $args >"$SFS_TEST_TMP/lite.out" 2>&1 ||
        { cat "$SFS_TEST_TMP/lite.out"; sfs_fail "sfs_mdtest_lite $args"; }
    check_summary "$SFS_TEST_TMP/lite.out" "sfs_mdtest_lite $args"
    echo "ok: mdtest and sfs_mdtest_lite $args: every phase has a rate"
    compare_summaries "$SFS_TEST_TMP/mdtest.out" "$SFS_TEST_TMP/lite.out"
done
sfs_expect_eq "$(sfs_ctl ls /mdt | wc -l)" 0 "entries left by mdtest"
sfs_expect_eq "$(sfs_ctl ls /lite | wc -l)" 0 "entries left by sfs_mdtest_lite"
sfs_stop_service
