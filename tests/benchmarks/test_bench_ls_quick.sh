#!/usr/bin/env bash
# benchmarks/ls.sh in its quick mode completes and verifies on one host:
# each side (the listing's attributes, a stat per entry, the local disk)
# lists every file of the directory, both stripefs sides print the same
# lines (the script checks), and the traced runs count fewer round trips
# with the listing's attributes than with a stat per entry; the same with
# --find (find -type f -size 100c, which stats every entry by fstatat on
# the directory's descriptor). Figures are not judged here.
source "$SFS_SRC/tests/lib/sfs_test_lib.sh"

out=$SFS_TEST_TMP/out
# a short path: munged's socket goes below it (108 bytes at most)
tmp=$(mktemp -d /tmp/sfs-lsq.XXXXXX) && chmod 0755 "$tmp" || sfs_fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
quick_run() { # WHAT CSV OPTION...: ls.sh --quick OPTION..., then its checks
    local what=$1 csv=$out/$2 log=$SFS_TEST_TMP/${2%.csv}.out side with without rc
    shift 2
    ASAN_OPTIONS=${SFS_SERVER_ASAN_OPTIONS:-${ASAN_OPTIONS:-}} bash "$SFS_SRC/benchmarks/ls.sh" --quick "$@" \
        --build "$SFS_BUILD" --out "$out" --tmp "$tmp" >"$log" 2>&1
    rc=$?
    cat "$log"
    [ $rc = 0 ] || sfs_fail "ls.sh --quick $* exited with $rc"
    # side,files,rep,ms,lines,round_trips
    for side in attrs per-stat local; do
        sfs_expect_eq "$(awk -F, -v s=$side '$1 == s && $2 == 300 && $3 == 1 && $4 + 0 > 0 && $5 == 300' "$csv" | wc -l)" 1 \
            "$what runs of the $side side that listed all 300 files"
    done
    with=$(awk -F, '$1 == "attrs" && $2 == 300 && $3 == "trace" { print $6 }' "$csv")
    without=$(awk -F, '$1 == "per-stat" && $2 == 300 && $3 == "trace" { print $6 }' "$csv")
    # (fewer, not a bound: a run that stalls past 0.2 s within a page on a
    # loaded machine stats the rest of that page with round trips)
    [ -n "$with" ] && [ -n "$without" ] && [ "$with" -lt "$without" ] && [ "$without" -gt 300 ] ||
        sfs_fail "round trips of $what of 300 files: '$with' with the listing's attributes, '$without' with a stat per entry"
    echo "ok: $what of 300 files: $with round trips with the listing's attributes, $without with a stat per entry"
}
quick_run "ls -l" ls.csv
quick_run "find -type f -size 100c" find.csv --find
