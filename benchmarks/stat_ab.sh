#!/usr/bin/env bash
# stat_ab.sh: mdtest-style file stat and create rates of two builds, A and
# B (before and after a change), through the preload: sfs_mdtest_lite with
# 4 ranks, 500 empty files each in unique directories ("easy4"), 4 ranks,
# 250 files of 3901 bytes in one shared directory ("hard4"), and 1 rank,
# 500 empty files ("lat1": 1/rate is one stat's latency). A fresh one-host
# service (3 ranks, 4 targets, stripe count 4) and a fresh directory for
# every run; the sides alternate (A B, B A, A B). Prints one line per run.
#
#   bash benchmarks/stat_ab.sh A_BUILD B_BUILD [REPS]
#
# Run as root from the source tree (it uses tests/lib/sfs_test_lib.sh).
src=$(cd "$(dirname "$0")/.." && pwd)
a=${1:?A_BUILD} b=${2:?B_BUILD} reps=${3:-3}
scratch=$(mktemp -d /tmp/sfs-stat-ab.XXXXXX) && chmod 0755 "$scratch" || exit 1
trap 'rm -rf "$scratch"' EXIT
one() { # side build rep
    local side=$1 build=$2 rep=$3 tmp
    tmp=$(mktemp -d "$scratch/run.XXXX") && chmod 0755 "$tmp" || return 1
    (
        export SFS_BUILD=$build SFS_SRC=$src SFS_TEST_TMP=$tmp
        source "$SFS_SRC/tests/lib/sfs_test_lib.sh"
        source "$SFS_SRC/tests/preload/preload_lib.sh"
        sfs_start_service 3 --targets 4 >/dev/null
        sfs_ctl mkdir /m >/dev/null && sfs_ctl setpattern --numtargets 4 /m >/dev/null
        for shape in "easy4:4:-n 500 -u" "hard4:4:-n 250 -w 3901 -e 3901" "lat1:1:-n 500 -u"; do
            name=${shape%%:*} rest=${shape#*:}
            np=${rest%%:*} args=${rest#*:}
            # shellcheck disable=SC2086
            LD_PRELOAD="$SFS_PRELOAD" "${SFS_MPIRUN[@]}" -np "$np" -x LD_PRELOAD -x STRIPEFS_CONFIG \
                -x STRIPEFS_PREFIX "$build/tests/preload/sfs_mdtest_lite" -d /stripefs/m/$name.$rep \
                $args >"$tmp/$name.out" 2>&1
            echo "$side rep$rep $name" \
                "file_stat_ops_s=$(awk '/File stat/ {print $4; exit}' "$tmp/$name.out")" \
                "file_create_ops_s=$(awk '/File creation/ {print $4; exit}' "$tmp/$name.out")" \
                "passed=$(grep -c '^PASSED: 0 errors' "$tmp/$name.out")"
        done
        sfs_stop_service >/dev/null
    )
}
for rep in $(seq "$reps"); do
    if [ $((rep % 2)) = 1 ]; then
        one A "$a" "$rep"; one B "$b" "$rep"
    else
        one B "$b" "$rep"; one A "$a" "$rep"
    fi
done
