# shellcheck shell=bash
# Shared helpers of the library-suite tests (tests/libsuites/test_*.sh, sourced
# after tests/lib/sfs_test_lib.sh): Debian's own source of an I/O library is
# fetched at test time (`apt-get source`), only its parallel test programs are
# built, against the installed library, and each is run on stripefs and on a
# local directory (the control), as an unprivileged user, through stripefs-run.
#
# Environment (read by these scripts only):
#   SFS_LIBSUITES        quick (default): a subset, within CI's budget;
#                        full: every parallel test (HDF5 with 4 and 6
#                        processes and MPICH too; give the suite
#                        SFS_TEST_TIMEOUT=21600: hours on 2 cores);
#                        off: skip.
#   SFS_LIBSUITES_CACHE  where sources and builds are kept between runs
#                        (default $SFS_BUILD/libsuites); a second run neither
#                        fetches nor rebuilds.
#   SFS_LIBSUITES_SIDES  the stripefs names to try besides the local control:
#                        "prefixed" (stripefs:/stripefs/...) and/or "plain"
#                        (/stripefs/...), each in a directory of its own; default: both in the full pass,
#                        prefixed in the quick one.
#   SFS_LIBSUITES_ONLY   a regex: run only the tests whose name matches.
#
# Verdicts, per test (tests/libsuites/known_gaps lists the known ones):
#   pass               passes on every side
#   FAIL               fails on a stripefs side but passes locally (a failure)
#   known gap          the same, listed in known_gaps (an expected failure)
#   fails locally too  fails on the local directory as well: not stripefs's
#                      failure, listed apart (more than a quarter of them
#                      means the control itself is broken: a failure)
# The last lines are the per-test table; the test exits 1 on any FAIL, 78
# (sfs_known_bug) when the only failures are known gaps, 0 otherwise.
set -u

LS_MODE=${SFS_LIBSUITES:-quick}
case $LS_MODE in
quick | full) ;;
off) sfs_skip "SFS_LIBSUITES=off" ;;
*) sfs_fail "SFS_LIBSUITES='$LS_MODE': expected quick, full or off" ;;
esac
LS_CACHE=${SFS_LIBSUITES_CACHE:-$SFS_BUILD/libsuites}
if [ -n "${SFS_LIBSUITES_SIDES:-}" ]; then
    LS_SIDES=$SFS_LIBSUITES_SIDES
elif [ "$LS_MODE" = full ]; then
    LS_SIDES="prefixed plain"
else
    LS_SIDES="prefixed"
fi
LS_ONLY=${SFS_LIBSUITES_ONLY:-}
LS_USER=sfsalice
LS_RUN_TOOL="$SFS_BUILD/tools/stripefs-run"
LS_POSIX_LIB="$SFS_BUILD/.libs/libstripefs-posix.so"
LS_RESULTS="$SFS_TEST_TMP/libsuites-results"
# (kept after the run, next to the suite's own logs)
LS_LOGS="${SFS_TEST_LOGS:-$SFS_BUILD/test-logs}/libsuites"
LS_KNOWN="$SFS_SRC/tests/libsuites/known_gaps"
mkdir -p "$LS_LOGS" && rm -f "$LS_LOGS/$(basename "$0" .sh)".* && : >"$LS_RESULTS" || sfs_fail "cannot write in $SFS_TEST_TMP"
chmod 0777 "$LS_LOGS"

ls_log() { sfs_log "libsuites: $*"; }

# ls_need_packages PKG...: installed, or installed now through
# ci/install-deps.sh (as root); a skip with the reason otherwise.
ls_need_packages() {
    local pkg missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$pkg")
    done
    [ ${#missing[@]} = 0 ] && return 0
    [ "$(id -u)" = 0 ] || sfs_skip "packages missing (${missing[*]}): run ci/install-deps.sh as root"
    ls_log "installing ${missing[*]} through ci/install-deps.sh"
    bash "$SFS_SRC/ci/install-deps.sh" >"$SFS_TEST_TMP/install-deps.log" 2>&1 || {
        tail -n 20 "$SFS_TEST_TMP/install-deps.log"
        sfs_skip "ci/install-deps.sh could not install ${missing[*]} (no network or apt?)"
    }
}

# ls_lock: the cache is used by one test run at a time (fd 8 stays open).
ls_lock() {
    mkdir -p "$LS_CACHE" || sfs_fail "cannot make the cache $LS_CACHE"
    exec 8>"$LS_CACHE/.lock"
    flock -w 1800 8 || sfs_fail "the cache $LS_CACHE stayed locked for 30 minutes"
}

# ls_fetch PKG DIR: Debian's source package PKG (with Debian's patches, as
# the installed library was built) unpacked as $LS_CACHE/src/DIR, which
# LS_SRC is set to. Fetched once: later runs find it there. No apt or no network is a
# skip with the reason, a broken download a failure.
ls_fetch() { # pkg dir
    local pkg=$1 dir=$2 src="$LS_CACHE/src/$2" dl="$LS_CACHE/download"
    LS_SRC=$src
    [ -f "$src/.stripefs-unpacked" ] && return 0
    # shellcheck source=../../ci/deb-src.sh
    . "$SFS_SRC/ci/deb-src.sh"
    deb_src_ready "$pkg" >&2 || sfs_skip "cannot fetch Debian's source of $pkg: $deb_src_error"
    mkdir -p "$dl" "$LS_CACHE/src" || sfs_fail "mkdir $dl"
    if ! ls "$dl/${pkg}"_*.dsc >/dev/null 2>&1; then
        ls_log "apt-get source --download-only $pkg into $dl" >&2
        (cd "$dl" && apt-get source -q --download-only "$pkg") >"$dl/$pkg.apt-source.log" 2>&1 || {
            tail -n 10 "$dl/$pkg.apt-source.log" >&2
            rm -f "$dl/${pkg}"_*
            sfs_skip "apt-get source $pkg failed (no network?): see the lines above"
        }
    fi
    local dsc
    dsc=$(ls "$dl/${pkg}"_*.dsc | head -n 1)
    rm -rf "$src" "$src.tmp"
    dpkg-source --no-check -x "$dsc" "$src.tmp" >"$dl/$pkg.dpkg-source.log" 2>&1 ||
        { tail -n 20 "$dl/$pkg.dpkg-source.log" >&2; sfs_fail "dpkg-source -x $dsc failed"; }
    # (dpkg-source copies the tarballs next to the target: keep those in $dl)
    rm -f "$LS_CACHE/src/${pkg}"_*
    touch "$src.tmp/.stripefs-unpacked" && mv "$src.tmp" "$src" || sfs_fail "cannot unpack into $src"
    ls_log "$pkg source ready: $src ($(basename "$dsc"))"
}

# ls_prepare_service SUITE: a service, and the suite's directories on it,
# one per stripefs side (a test that leaves or removes a file must not meet
# the other side's), owned by the test user, under both namespace paths a
# stripefs name may have: before issue 16's item 1 the MPI-IO name
# stripefs:/stripefs/libsuites/SUITE/prefixed was the namespace path
# /stripefs/libsuites/SUITE/prefixed, while the POSIX name /stripefs/x is
# /x (the preload's prefix); since, both are /libsuites/...; the unused
# copy stays empty. Sets LS_DIR_PREFIXED, LS_DIR_PLAIN and LS_DIR_LOCAL
# (the control, on the local file system).
ls_prepare_service() { # suite
    local suite=$1 d home side
    sfs_test_users
    home=$(sfs_user_home "$LS_USER")
    sfs_start_service 3 --targets 4
    for d in /stripefs /stripefs/libsuites /stripefs/libsuites/"$suite" /libsuites /libsuites/"$suite"; do
        sfs_ctl stat "$d" >/dev/null 2>&1 || sfs_ctl mkdir "$d" >/dev/null || sfs_fail "mkdir $d"
    done
    for side in prefixed plain; do
        for d in /stripefs/libsuites/"$suite"/$side /libsuites/"$suite"/$side; do
            sfs_ctl mkdir "$d" >/dev/null || sfs_fail "mkdir $d"
            sfs_ctl chown "$LS_USER:$LS_USER" "$d" >/dev/null || sfs_fail "chown $d to $LS_USER"
        done
    done
    LS_DIR_PREFIXED="stripefs:/stripefs/libsuites/$suite/prefixed"
    LS_DIR_PLAIN="/stripefs/libsuites/$suite/plain"
    LS_DIR_LOCAL="$home/local-$suite"
    sfs_as "$LS_USER" mkdir -p "$LS_DIR_LOCAL" || sfs_fail "mkdir $LS_DIR_LOCAL as $LS_USER"
}

# ls_dir_of SIDE: the directory a side's files go to
ls_dir_of() {
    case $1 in
    local) echo "$LS_DIR_LOCAL" ;;
    prefixed) echo "$LS_DIR_PREFIXED" ;;
    plain) echo "$LS_DIR_PLAIN" ;;
    esac
}

# ls_selected NAME: 0 when SFS_LIBSUITES_ONLY lets the test NAME run
ls_selected() { [ -z "$LS_ONLY" ] || [[ $1 =~ $LS_ONLY ]]; }

# ls_run SUITE TEST SIDE LIMIT COMMAND...: run COMMAND (as the test user,
# from its scratch directory unless COMMAND changes it) within LIMIT
# seconds; records "SUITE TEST SIDE rc seconds" in $LS_RESULTS and keeps
# the output in $LS_LOGS.
ls_run() { # suite test side limit command...
    local suite=$1 test=$2 side=$3 limit=$4 rc start log
    shift 4
    log="$LS_LOGS/$(basename "$0" .sh).$(echo "$test" | tr '/[]+' '____').$side.log"
    start=$(date +%s)
    sfs_as "$LS_USER" timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1 </dev/null
    rc=$?
    echo "$suite $test $side $rc $(($(date +%s) - start))" >>"$LS_RESULTS"
    if [ $rc = 0 ]; then
        echo "  $test [$side]: pass ($(($(date +%s) - start)) s)"
    else
        echo "  $test [$side]: exit $rc ($(($(date +%s) - start)) s), log $log"
        grep -v '^\[' "$log" | grep -iE 'error|fail|mismatch|signal|abort|expect' | head -n 4 | cut -c1-200 |
            sed 's/^/      /'
    fi
}

# ls_known_gap SIDE SUITE/TEST: the reason, when known_gaps lists it
ls_known_gap() { # side name
    local side=$1 name=$2 kside kname reason
    [ -f "$LS_KNOWN" ] || return 1
    while read -r kside kname reason; do
        case $kside in '#'* | '') continue ;; esac
        # shellcheck disable=SC2053
        [[ $side == $kside ]] && [[ $name == $kname ]] && { echo "$reason"; return 0; }
    done <"$LS_KNOWN"
    return 1
}

# ls_report SUITE: the per-test table and the verdict (exits).
ls_report() { # suite
    local suite=$1 tests test side rc verdict line reason sides
    local -a fails=() gaps=() localfail=() xpass=()
    local ntests=0 npass=0
    sides="local $LS_SIDES"
    tests=$(awk -v s="$suite" '$1 == s && !seen[$2]++ {print $2}' "$LS_RESULTS")
    [ -n "$tests" ] || sfs_fail "$suite: no test ran"
    echo
    echo "=== $suite: per-test results (local = the control on a local directory;"
    echo "    prefixed = $(ls_dir_of prefixed), plain = $(ls_dir_of plain))"
    for test in $tests; do
        ntests=$((ntests + 1))
        line=$(printf '%-44s' "$test")
        local lrc="" bad=() gap=""
        for side in $sides; do
            rc=$(awk -v s="$suite" -v t="$test" -v d="$side" '$1 == s && $2 == t && $3 == d {print $4}' "$LS_RESULTS" | tail -n 1)
            [ -n "$rc" ] || { line+=$(printf ' %-10s' "$side:-"); continue; }
            [ "$side" = local ] && lrc=$rc
            if [ "$rc" = 0 ]; then
                line+=$(printf ' %-10s' "$side:ok")
            else
                line+=$(printf ' %-10s' "$side:FAIL")
                [ "$side" != local ] && bad+=("$side")
            fi
        done
        if [ -n "$lrc" ] && [ "$lrc" != 0 ]; then
            verdict="fails locally too"
            [ ${#bad[@]} = 0 ] && verdict="fails locally only"
            localfail+=("$test")
        elif [ ${#bad[@]} = 0 ]; then
            verdict=pass
            npass=$((npass + 1))
        else
            verdict=FAIL
            # known only when every failing side's failure is listed
            for side in "${bad[@]}"; do
                if reason=$(ls_known_gap "$side" "$suite/$test"); then
                    gap+="${gap:+; }$side: $reason"
                else
                    gap=""
                    break
                fi
            done
            if [ -n "$gap" ]; then
                verdict="known gap: $gap"
                gaps+=("$test")
            else
                fails+=("$test [${bad[*]}]")
            fi
        fi
        # a known gap that no longer shows: say so, so the list is trimmed
        if [ "$verdict" = pass ]; then
            for side in $LS_SIDES; do
                reason=$(ls_known_gap "$side" "$suite/$test") &&
                    xpass+=("$test [$side]: listed in known_gaps ($reason) but passes")
            done
        fi
        echo "RESULT $line -> $verdict"
    done
    echo "=== $suite: $ntests tests ($LS_MODE pass, sides: $sides): $npass pass," \
        "${#fails[@]} fail on stripefs only, ${#gaps[@]} known gaps, ${#localfail[@]} fail locally"
    [ ${#localfail[@]} -gt 0 ] && echo "fails on the local directory (not stripefs's failures): ${localfail[*]}"
    [ ${#xpass[@]} -gt 0 ] && printf 'NOTE: %s\n' "${xpass[@]}"
    if [ ${#fails[@]} -gt 0 ]; then
        sfs_fail "$suite: ${#fails[@]} tests fail on stripefs but pass locally: ${fails[*]}"
    fi
    if [ $((${#localfail[@]} * 4)) -gt "$ntests" ]; then
        sfs_fail "$suite: ${#localfail[@]} of $ntests tests fail on the local directory too: the control is broken, the comparison says nothing"
    fi
    if [ ${#gaps[@]} -gt 0 ]; then
        sfs_known_bug "$suite: ${#gaps[@]} of $ntests tests fail on stripefs on known gaps (tests/libsuites/known_gaps): ${gaps[*]}"
    fi
    echo "ok: $suite: $npass of $ntests tests pass on stripefs and locally"
}
