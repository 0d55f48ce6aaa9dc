#!/usr/bin/env bash
# Metadata benchmarks through libstripefs-posix.so, with the library also
# preloaded into mpirun itself: the real mdtest when one is at hand
# (SFS_MDTEST=/path/to/mdtest, or SFS_IOR_SRC=/path/to/an/ior/source/tree to
# build it here), and always sfs_mdtest_lite, an mdtest-like workload of
# our own that also checks every result.
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

sfs_start_service 3 --targets 4
run_preloaded() { # mpirun ... with the library in every process, mpirun's included
    LD_PRELOAD="$SFS_PRELOAD" "${SFS_MPIRUN[@]}" -np "$NP" -x LD_PRELOAD -x STRIPEFS_CONFIG \
        -x STRIPEFS_PREFIX ${ASAN_OPTIONS:+-x ASAN_OPTIONS} "$@"
}

run_preloaded "$LITE" -d /stripefs/lite -n 200 -w 4096 | tee "$SFS_TEST_TMP/lite.out" ||
    sfs_fail "sfs_mdtest_lite"
grep -q "^PASSED" "$SFS_TEST_TMP/lite.out" || sfs_fail "sfs_mdtest_lite did not pass"
sfs_expect_eq "$(sfs_ctl ls /lite | wc -l)" 0 "entries left by sfs_mdtest_lite"

# the same as an ordinary user, with nothing but the config (no secret): the
# servers run as root on this host, so the user's ranks reach them over TCP
if [ "$(id -u)" = 0 ]; then
    sfs_test_users
    sfs_ctl mkdir /users && sfs_ctl chmod 1777 /users || sfs_fail "mkdir /users (1777)"
    sfs_as sfsalice env LD_PRELOAD="$SFS_PRELOAD" "${SFS_MPIRUN[@]}" -np "$NP" -x LD_PRELOAD \
        -x STRIPEFS_CONFIG -x STRIPEFS_PREFIX ${ASAN_OPTIONS:+-x ASAN_OPTIONS} \
        "$LITE" -d /stripefs/users/lite-alice -n 100 -w 4096 | tee "$SFS_TEST_TMP/lite-alice.out" ||
        sfs_fail "sfs_mdtest_lite as sfsalice"
    grep -q "^PASSED" "$SFS_TEST_TMP/lite-alice.out" || sfs_fail "sfs_mdtest_lite as sfsalice did not pass"
    sfs_ctl ls -l /users
    sfs_ctl ls -l /users | grep -q "sfsalice.*lite-alice" ||
        sfs_fail "the run's directory is not sfsalice's"
    echo "ok: sfs_mdtest_lite passes as sfsalice (4 ranks, no secret, her own entries)"
fi

if [ -z "$mdtest" ]; then
    echo "note: the real mdtest was not run: set SFS_MDTEST=/path/to/mdtest or"
    echo "      SFS_IOR_SRC=/path/to/ior-source (github.com/hpc/ior) to run it too"
    sfs_stop_service
    exit 0
fi
[ -x "$mdtest" ] || sfs_fail "no mdtest at $mdtest"
sfs_ctl mkdir /mdt || sfs_fail "mkdir /mdt"
for args in "-n 100 -i 1" "-n 100 -i 1 -u -w 4096 -e 4096"; do
    # shellcheck disable=SC2086
    run_preloaded "$mdtest" -a POSIX -d /stripefs/mdt $args >"$SFS_TEST_TMP/mdtest.out" 2>&1
    rc=$?
    cat "$SFS_TEST_TMP/mdtest.out"
    [ $rc -eq 0 ] || sfs_fail "mdtest $args exited with $rc"
    for op in "Directory creation" "Directory stat" "Directory removal" "File creation" \
        "File stat" "File read" "File removal"; do
        awk -v op="$op" 'index($0, op) && $(NF - 3) + 0 > 0 {found = 1} END {exit !found}' \
            "$SFS_TEST_TMP/mdtest.out" || sfs_fail "mdtest $args: no rate for '$op'"
    done
    grep -qiE "error|abort" "$SFS_TEST_TMP/mdtest.out" && sfs_fail "mdtest $args reported errors"
    echo "ok: mdtest $args: every phase has a rate"
done
sfs_expect_eq "$(sfs_ctl ls /mdt | wc -l)" 0 "entries left by mdtest"
sfs_stop_service
